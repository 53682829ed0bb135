// intrusive_ptr<T>: a shared pointer whose reference count lives in the object
// (an IntrusivePtrTarget), as c10::intrusive_ptr. One word wide, so a Tensor is
// one pointer and an IValue can hold any refcounted payload as a raw pointer.
//
//   struct Node : IntrusivePtrTarget { int value = 0; };
//   intrusive_ptr<Node> a = make_intrusive<Node>();
//   intrusive_ptr<Node> b = a;          // one atomic increment
//   Node* raw = b.release();            // b is null; raw owns one reference
//   auto c = intrusive_ptr<Node>::reclaim(raw);  // and c owns it again
//
// Thread safety: the count is atomic, so distinct intrusive_ptr objects that
// share a target may be copied and destroyed from any thread. One
// intrusive_ptr object is not safe to mutate from two threads at once (as for
// std::shared_ptr). The target's own state is the target's business.
//
// The null value of intrusive_ptr<T, NullType> is NullType::singleton(). It is
// nullptr by default; TensorImpl uses a static UndefinedTensorImpl so that an
// undefined Tensor still points at an object whose key set is empty, and key
// extraction on the call path needs no null test. The null value's count is
// never touched. There are no weak references.
#ifndef TURNOUT_DISPATCHER_CORE_INTRUSIVE_PTR_H_
#define TURNOUT_DISPATCHER_CORE_INTRUSIVE_PTR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

namespace turnout {

template <class T, class NullType>
class intrusive_ptr;
class IntrusivePtrTarget;

namespace detail {
/// Adds one reference to `target` (not null, not a NullType singleton). For
/// owners of raw pointers, such as IValue.
void incref(IntrusivePtrTarget* target) noexcept;
/// Drops one reference to `target` and deletes it when that was the last.
void decref(IntrusivePtrTarget* target) noexcept;
template <class T, class NullType, class... Args>
intrusive_ptr<T, NullType> makeIntrusive(Args&&... args);
}  // namespace detail

/// Base class of every object an intrusive_ptr can own. The count starts at 0;
/// make_intrusive sets it to 1. Copying a target does not copy its count.
class IntrusivePtrTarget {
 public:
  /// The number of intrusive_ptr (and released raw) references. A snapshot:
  /// other threads may change it at any time.
  uint64_t refcount() const noexcept {
    return refcount_.load(std::memory_order_relaxed);
  }

 protected:
  IntrusivePtrTarget() noexcept = default;
  IntrusivePtrTarget(const IntrusivePtrTarget&) noexcept : refcount_(0) {}
  IntrusivePtrTarget& operator=(const IntrusivePtrTarget&) noexcept {
    return *this;  // the count belongs to this object, not to the value
  }
  virtual ~IntrusivePtrTarget() = default;

 private:
  template <class T, class NullType>
  friend class intrusive_ptr;
  template <class T, class NullType, class... Args>
  friend intrusive_ptr<T, NullType> detail::makeIntrusive(Args&&... args);
  friend void detail::incref(IntrusivePtrTarget* target) noexcept;
  friend void detail::decref(IntrusivePtrTarget* target) noexcept;

  mutable std::atomic<uint64_t> refcount_{0};
};

namespace detail {

/// The default null value: nullptr.
template <class T>
struct DefaultNullType {
  static constexpr T* singleton() noexcept { return nullptr; }
};

inline void incref(IntrusivePtrTarget* target) noexcept {
  // Relaxed: a new reference can only be made from an existing one, which
  // already keeps the object alive; nothing else is published by the count.
  target->refcount_.fetch_add(1, std::memory_order_relaxed);
}

inline void decref(IntrusivePtrTarget* target) noexcept {
  // The last reference deletes without a read-modify-write: there are no
  // weak references and a reference is only ever made from another one, so
  // a holder that sees a count of 1 holds the only reference, and nobody
  // can add one while it looks. The acquire load reads the value the last
  // decrement wrote, and so synchronises with every earlier decrement (a
  // release sequence), as the fetch_sub's acquire half would. A temporary
  // is nearly always the last reference when it goes, and a locked
  // instruction costs ~6 ns on the project's VMs (bench/README.md).
  // Otherwise acq_rel: the release half orders this thread's writes to the
  // object before the decrement; the acquire half, on the thread that
  // reaches zero, makes every other thread's writes visible before the
  // destructor runs.
  if (target->refcount_.load(std::memory_order_acquire) == 1 ||
      target->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    delete target;
  }
}

}  // namespace detail

/// A counted reference to a T (derived from IntrusivePtrTarget), or null.
template <class T, class NullType = detail::DefaultNullType<T>>
class intrusive_ptr {
 public:
  using element_type = T;
  using null_type = NullType;

  /// Null.
  constexpr intrusive_ptr() noexcept : target_(NullType::singleton()) {}
  constexpr intrusive_ptr(std::nullptr_t) noexcept  // NOLINT
      : target_(NullType::singleton()) {}

  intrusive_ptr(const intrusive_ptr& other) noexcept : target_(other.target_) {
    retain();
  }
  intrusive_ptr(intrusive_ptr&& other) noexcept : target_(other.target_) {
    other.target_ = NullType::singleton();
  }
  /// From an intrusive_ptr to a derived type, sharing its reference (its
  /// null value becomes ours).
  template <class U, class N,
            class = std::enable_if_t<std::is_convertible<U*, T*>::value>>
  intrusive_ptr(const intrusive_ptr<U, N>& other) noexcept  // NOLINT
      : target_(fromOther<U, N>(other.target_)) {
    retain();
  }
  template <class U, class N,
            class = std::enable_if_t<std::is_convertible<U*, T*>::value>>
  intrusive_ptr(intrusive_ptr<U, N>&& other) noexcept  // NOLINT
      : target_(fromOther<U, N>(other.target_)) {
    other.target_ = N::singleton();
  }

  ~intrusive_ptr() {
    // Here rather than in the class body, so that intrusive_ptr<T> may be
    // named while T is incomplete.
    static_assert(std::is_base_of<IntrusivePtrTarget, T>::value,
                  "intrusive_ptr<T>: T must derive from IntrusivePtrTarget");
    reset_();
  }

  intrusive_ptr& operator=(const intrusive_ptr& other) noexcept {
    intrusive_ptr tmp(other);
    swap(tmp);
    return *this;
  }
  intrusive_ptr& operator=(intrusive_ptr&& other) noexcept {
    intrusive_ptr tmp(std::move(other));
    swap(tmp);
    return *this;
  }

  // ---- Access ---------------------------------------------------------------
  T* get() const noexcept { return target_; }
  T& operator*() const noexcept { return *target_; }
  T* operator->() const noexcept { return target_; }
  /// True unless null.
  bool defined() const noexcept { return target_ != NullType::singleton(); }
  explicit operator bool() const noexcept { return defined(); }
  /// Number of references to the target; 0 when null.
  uint64_t use_count() const noexcept {
    return defined() ? target_->refcount() : 0;
  }
  /// True when this is the only reference.
  bool unique() const noexcept { return use_count() == 1; }

  // ---- Ownership transfer
  // ----------------------------------------------------
  void reset() noexcept {
    reset_();
    target_ = NullType::singleton();
  }
  void swap(intrusive_ptr& other) noexcept {
    std::swap(target_, other.target_);
  }

  /// Gives up ownership without touching the count: the caller now owns one
  /// reference through the returned pointer and must hand it back with
  /// reclaim(). Leaves this null.
  T* release() noexcept {
    T* result = target_;
    target_ = NullType::singleton();
    return result;
  }
  /// Takes over the reference that release() gave out (no increment).
  /// Precondition: `owning` came from release() (or is the null value).
  static intrusive_ptr reclaim(T* owning) noexcept {
    return intrusive_ptr(owning, AdoptTag{});
  }
  /// A new reference to `target`, which someone else owns (one increment).
  static intrusive_ptr reclaim_copy(T* target) noexcept {
    intrusive_ptr result(target, AdoptTag{});
    result.retain();
    return result;
  }

  friend bool operator==(const intrusive_ptr& a, const intrusive_ptr& b) {
    return a.target_ == b.target_;
  }
  friend bool operator!=(const intrusive_ptr& a, const intrusive_ptr& b) {
    return a.target_ != b.target_;
  }

 private:
  template <class U, class N>
  friend class intrusive_ptr;
  template <class U, class N, class... Args>
  friend intrusive_ptr<U, N> detail::makeIntrusive(Args&&... args);

  struct AdoptTag {};
  intrusive_ptr(T* target, AdoptTag) noexcept : target_(target) {}

  template <class U, class N>
  static T* fromOther(U* p) {
    // The other type's null may be a singleton of its own; map it to ours.
    return p == N::singleton() ? NullType::singleton() : static_cast<T*>(p);
  }
  void retain() noexcept {
    if (target_ != NullType::singleton()) detail::incref(target_);
  }
  void reset_() noexcept {
    if (target_ != NullType::singleton()) detail::decref(target_);
  }

  T* target_;
};

namespace detail {

template <class T, class NullType, class... Args>
intrusive_ptr<T, NullType> makeIntrusive(Args&&... args) {
  T* target = new T(std::forward<Args>(args)...);
  // Relaxed: the object is not shared yet.
  target->refcount_.store(1, std::memory_order_relaxed);
  return intrusive_ptr<T, NullType>(
      target, typename intrusive_ptr<T, NullType>::AdoptTag{});
}

}  // namespace detail

/// Allocates a T with `args` and returns the only reference to it.
template <class T, class NullType = detail::DefaultNullType<T>, class... Args>
intrusive_ptr<T, NullType> make_intrusive(Args&&... args) {
  return detail::makeIntrusive<T, NullType>(std::forward<Args>(args)...);
}

/// static_cast between intrusive_ptrs, sharing the reference count.
template <class To, class ToNull = detail::DefaultNullType<To>, class From,
          class FromNull>
intrusive_ptr<To, ToNull> static_intrusive_pointer_cast(
    intrusive_ptr<From, FromNull> p) {
  From* raw = p.release();
  return intrusive_ptr<To, ToNull>::reclaim(raw == FromNull::singleton()
                                                ? ToNull::singleton()
                                                : static_cast<To*>(raw));
}

}  // namespace turnout

namespace std {
template <class T, class N>
struct hash<turnout::intrusive_ptr<T, N>> {
  size_t operator()(const turnout::intrusive_ptr<T, N>& p) const noexcept {
    return std::hash<T*>()(p.get());
  }
};
}  // namespace std

#endif  // TURNOUT_DISPATCHER_CORE_INTRUSIVE_PTR_H_
