// IValue: one boxed value of any type an operator takes or returns (a
// Tensor, an int, a list, ...), as c10::IValue. Boxed calls pass a Stack of
// them.
//
//   IValue a = tensor;                     // shares the tensor: +1 count
//   IValue b = 3;                          // Int, no allocation
//   IValue c = std::vector<int64_t>{2, 3}; // IntList
//   b.toInt();                             // 3
//   c.toIntListRef();                      // const std::vector<int64_t>&
//   b.toTensor();                          // throws "Expected Tensor but got
//   Int"
//
// Layout: an 8-byte payload (int64_t, double, bool, Device, a Tensor, or a
// counted pointer) and a tag; 16 bytes. None, Tensor, Int, Double, Bool and
// Device values never allocate; String, lists and Tuple hold one counted
// object that copies share (copying an IValue is one atomic increment at
// most, moving one is free). Scalar is stored as Int, Double or Bool, and
// ScalarType, Layout and MemoryFormat as Int, as in c10.
//
// Thread safety: like a Tensor. Distinct IValues sharing a payload may be
// used from any threads; one IValue must not be mutated from two threads.
// Strings and Tuples are immutable; a list or dict object's elements may be
// changed only by a single owner (use_count() == 1) or under the caller's
// lock.
//
// Dict: an ordered map shared by reference (as c10::Dict and Python's dict):
// insertion order, keys of one kind each (str, int, float, bool, or Tensor
// by identity), a mutation seen through every IValue holding it.
//   auto d = ivalue::DictImpl::create(IValue::Tag::GenericList,
//                                     IValue::Tag::IntList);
//   d->insertOrAssign("a", 1);
//   IValue v(d);  v.toDictRef().find(IValue("a"))->toInt();  // 1
// Future: a counted handle to a jit::Future (jit/runtime/future.h, which
// has the helpers); this layer only stores it.
#ifndef TURNOUT_DISPATCHER_CORE_IVALUE_H_
#define TURNOUT_DISPATCHER_CORE_IVALUE_H_

#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dispatcher/core/device.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/intrusive_ptr.h"
#include "dispatcher/core/layout.h"
#include "dispatcher/core/memory_format.h"
#include "dispatcher/core/scalar.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"

namespace turnout {

class IValue;

namespace ivalue {
class ConstantString;
class Tuple;
template <class T>
class ListImpl;
class DictImpl;
class FutureHandle;
}  // namespace ivalue

namespace jit {
class Future;  // jit/runtime/future.h: stored here, used only above.
}  // namespace jit

namespace detail {
template <class T>
struct IValueTo;
}  // namespace detail

class IValue {
 public:
  /// What an IValue holds. tagKind() spells it.
  enum class Tag : uint8_t {
    None,
    Tensor,
    Double,
    Int,
    Bool,
    String,
    Device,
    IntList,
    DoubleList,
    BoolList,
    TensorList,
    GenericList,
    Tuple,
    Dict,
    Future,
  };

  // ---- None
  // ------------------------------------------------------------------
  /// None.
  IValue() noexcept : tag_(Tag::None) {}
  IValue(std::nullopt_t) noexcept : IValue() {}  // NOLINT
  bool isNone() const noexcept { return tag_ == Tag::None; }

  IValue(const IValue& other);
  IValue(IValue&& other) noexcept;
  IValue& operator=(const IValue& other);
  IValue& operator=(IValue&& other) noexcept;
  ~IValue() { destroy(); }

  // ---- Tensor
  // ----------------------------------------------------------------
  /// Holds `t` (an undefined Tensor too: it is still a Tensor, not None).
  IValue(Tensor t) noexcept : tag_(Tag::Tensor) {  // NOLINT
    new (&payload_.as_tensor) Tensor(std::move(t));
  }
  bool isTensor() const noexcept { return tag_ == Tag::Tensor; }
  /// The held Tensor, without a new reference.
  const Tensor& toTensor() const& {
    if (__builtin_expect(tag_ != Tag::Tensor, 0)) throwWrongTag("Tensor");
    return payload_.as_tensor;
  }
  Tensor& toTensor() & {
    if (__builtin_expect(tag_ != Tag::Tensor, 0)) throwWrongTag("Tensor");
    return payload_.as_tensor;
  }
  /// Moves the Tensor out; this becomes None.
  Tensor toTensor() &&;

  // ---- Int, Double, Bool
  // -------------------------------------------------------
  /// Any integral type but bool.
  template <class T, std::enable_if_t<std::is_integral<T>::value &&
                                          !std::is_same<T, bool>::value,
                                      int> = 0>
  IValue(T value) noexcept : tag_(Tag::Int) {  // NOLINT
    payload_.u.as_int = static_cast<int64_t>(value);
  }
  /// float or double.
  template <class T,
            std::enable_if_t<std::is_floating_point<T>::value, int> = 0>
  IValue(T value) noexcept : tag_(Tag::Double) {  // NOLINT
    payload_.u.as_double = static_cast<double>(value);
  }
  IValue(bool value) noexcept : tag_(Tag::Bool) {  // NOLINT
    payload_.u.as_bool = value;
  }
  bool isInt() const noexcept { return tag_ == Tag::Int; }
  bool isDouble() const noexcept { return tag_ == Tag::Double; }
  bool isBool() const noexcept { return tag_ == Tag::Bool; }
  int64_t toInt() const {
    if (__builtin_expect(tag_ != Tag::Int, 0)) throwWrongTag("Int");
    return payload_.u.as_int;
  }
  double toDouble() const {
    if (__builtin_expect(tag_ != Tag::Double, 0)) throwWrongTag("Double");
    return payload_.u.as_double;
  }
  bool toBool() const {
    if (__builtin_expect(tag_ != Tag::Bool, 0)) throwWrongTag("Bool");
    return payload_.u.as_bool;
  }

  // ---- Scalar (stored as Int, Double or Bool)
  // ----------------------------------
  IValue(const Scalar& s) noexcept;  // NOLINT
  /// Int, Double or Bool.
  bool isScalar() const noexcept {
    return tag_ == Tag::Int || tag_ == Tag::Double || tag_ == Tag::Bool;
  }
  Scalar toScalar() const;

  // ---- Enums (stored as Int)
  // ---------------------------------------------------
  IValue(ScalarType t) noexcept : IValue(static_cast<int64_t>(t)) {}  // NOLINT
  IValue(Layout l) noexcept : IValue(static_cast<int64_t>(l)) {}      // NOLINT
  IValue(MemoryFormat m) noexcept                                     // NOLINT
      : IValue(static_cast<int64_t>(m)) {}
  /// Throw Error(Type) unless Int, Error(InvalidArgument) unless the value is
  /// one of the enum's.
  ScalarType toScalarType() const;
  Layout toLayout() const;
  MemoryFormat toMemoryFormat() const;

  // ---- Device (inline, no allocation)
  // ------------------------------------------
  IValue(Device d) noexcept : tag_(Tag::Device) {  // NOLINT
    payload_.u.as_device.type = d.type();
    payload_.u.as_device.index = d.index();
  }
  bool isDevice() const noexcept { return tag_ == Tag::Device; }
  Device toDevice() const {
    if (__builtin_expect(tag_ != Tag::Device, 0)) throwWrongTag("Device");
    return Device(payload_.u.as_device.type, payload_.u.as_device.index);
  }

  // ---- String (immutable, shared)
  // ----------------------------------------------
  IValue(std::string s);                            // NOLINT
  IValue(std::string_view s);                       // NOLINT
  IValue(const char* s);                            // NOLINT
  IValue(intrusive_ptr<ivalue::ConstantString> s);  // NOLINT
  bool isString() const noexcept { return tag_ == Tag::String; }
  const std::string& toStringRef() const;
  std::string_view toStringView() const { return toStringRef(); }
  /// A new reference to the shared string object.
  intrusive_ptr<ivalue::ConstantString> toString() const;

  // ---- Lists
  // ---------------------------------------------------------------------
  IValue(std::vector<int64_t> v);  // NOLINT
  IValue(IntArrayRef v);           // NOLINT: copies into an IntList
  IValue(std::vector<double> v);   // NOLINT
  IValue(std::vector<bool> v);     // NOLINT
  IValue(std::vector<Tensor> v);   // NOLINT
  IValue(std::vector<IValue> v);   // NOLINT: a GenericList
  /// A vector of any other type: an IntList for integral elements, a
  /// DoubleList for floating ones, else a GenericList of IValue(element).
  template <class T>
  IValue(std::vector<T> v);                               // NOLINT
  IValue(intrusive_ptr<ivalue::ListImpl<int64_t>> list);  // NOLINT
  IValue(intrusive_ptr<ivalue::ListImpl<double>> list);   // NOLINT
  IValue(intrusive_ptr<ivalue::ListImpl<bool>> list);     // NOLINT
  IValue(intrusive_ptr<ivalue::ListImpl<Tensor>> list);   // NOLINT
  IValue(intrusive_ptr<ivalue::ListImpl<IValue>> list);   // NOLINT

  bool isIntList() const noexcept { return tag_ == Tag::IntList; }
  bool isDoubleList() const noexcept { return tag_ == Tag::DoubleList; }
  bool isBoolList() const noexcept { return tag_ == Tag::BoolList; }
  bool isTensorList() const noexcept { return tag_ == Tag::TensorList; }
  bool isGenericList() const noexcept { return tag_ == Tag::GenericList; }
  /// Any of the five list tags.
  bool isList() const noexcept {
    return tag_ >= Tag::IntList && tag_ <= Tag::GenericList;
  }
  /// The list kind that holds values like `element`: IntList for an Int,
  /// DoubleList, BoolList, TensorList likewise, else GenericList.
  static Tag listTagOf(const IValue& element);
  /// A list of kind `tag` (a list tag) holding `elements`; throws
  /// Error(Type) for an element that does not fit the kind.
  static IValue makeList(Tag tag, std::vector<IValue> elements);

  /// The elements, without a copy. Valid while this IValue (or another
  /// reference to the same list) lives.
  const std::vector<int64_t>& toIntListRef() const;
  const std::vector<double>& toDoubleListRef() const;
  const std::vector<bool>& toBoolListRef() const;
  const std::vector<Tensor>& toTensorListRef() const;
  const std::vector<IValue>& toListRef() const;  // GenericList only
  /// Copies of the elements.
  std::vector<int64_t> toIntVector() const { return toIntListRef(); }
  std::vector<double> toDoubleVector() const { return toDoubleListRef(); }
  std::vector<bool> toBoolVector() const { return toBoolListRef(); }
  std::vector<Tensor> toTensorVector() const { return toTensorListRef(); }
  /// Any list, each element boxed: [1, 2] of an IntList gives two Ints.
  std::vector<IValue> toList() const;
  /// New references to the shared list objects.
  intrusive_ptr<ivalue::ListImpl<int64_t>> toIntList() const;
  intrusive_ptr<ivalue::ListImpl<double>> toDoubleList() const;
  intrusive_ptr<ivalue::ListImpl<bool>> toBoolList() const;
  intrusive_ptr<ivalue::ListImpl<Tensor>> toTensorList() const;
  intrusive_ptr<ivalue::ListImpl<IValue>> toGenericList() const;

  // ---- Tuple (immutable, shared)
  // ---------------------------------------------------
  static IValue makeTuple(std::vector<IValue> elements);
  IValue(intrusive_ptr<ivalue::Tuple> tuple);  // NOLINT
  bool isTuple() const noexcept { return tag_ == Tag::Tuple; }
  const ivalue::Tuple& toTupleRef() const;
  intrusive_ptr<ivalue::Tuple> toTuple() const;

  // ---- Dict (shared, mutable, ordered)
  // --------------------------------------------------------
  IValue(intrusive_ptr<ivalue::DictImpl> dict);  // NOLINT
  bool isDict() const noexcept { return tag_ == Tag::Dict; }
  const ivalue::DictImpl& toDictRef() const;
  /// A new reference to the shared dict object (mutable: see thread safety).
  intrusive_ptr<ivalue::DictImpl> toDict() const;

  // ---- Future (a shared handle to a jit::Future)
  // ---------------------------------------------
  /// Throws Error(InvalidArgument) for a null future.
  explicit IValue(std::shared_ptr<jit::Future> future);
  bool isFuture() const noexcept { return tag_ == Tag::Future; }
  /// The held future (shared).
  const std::shared_ptr<jit::Future>& toFuture() const;

  // ---- Optional
  // ---------------------------------------------------------------------
  /// None, or IValue(*value).
  template <class T>
  IValue(std::optional<T> value) : IValue() {  // NOLINT
    if (value.has_value()) *this = IValue(std::move(*value));
  }

  // ---- Generic access
  // -----------------------------------------------------------------
  /// The value as T, for every type an IValue can be made from: Tensor,
  /// int64_t, double, bool, Scalar, ScalarType, Layout, MemoryFormat, Device,
  /// std::string, std::vector<...> of those, intrusive_ptr<ivalue::Tuple>,
  /// IValue, and std::optional<T> (None -> nullopt). Throws as toX().
  template <class T>
  T to() const&;
  /// The same; moves a held Tensor or IValue out (this becomes None).
  template <class T>
  T to() &&;
  /// nullopt for None, else to<T>().
  template <class T>
  std::optional<T> toOptional() const {
    if (isNone()) return std::nullopt;
    return to<T>();
  }

  // ---- Inspection
  // ---------------------------------------------------------------------
  Tag tag() const noexcept { return tag_; }
  /// "None", "Tensor", "Int", "IntList", "GenericList", "Tuple", ...
  const char* tagKind() const noexcept { return tagName(tag_); }
  static const char* tagName(Tag tag) noexcept;
  /// Holds a counted reference (a defined Tensor, a string, list or tuple).
  bool isIntrusivePtr() const noexcept {
    return tag_ == Tag::Tensor ? payload_.as_tensor.defined()
                               : isCountedTag(tag_);
  }
  /// References to the held object; 0 for values without one.
  uint64_t use_count() const noexcept;

  /// c10's identity: None is None; Int, Double, Bool, Device and String
  /// compare by value; Tensors by impl (an undefined Tensor is None);
  /// lists, tuples, dicts and futures by object.
  bool isSameIdentity(const IValue& other) const;

  void swap(IValue& other) noexcept {
    IValue tmp(std::move(other));
    other = std::move(*this);
    *this = std::move(tmp);
  }

 private:
  union Payload {
    union TriviallyCopyable {
      int64_t as_int;
      double as_double;
      bool as_bool;
      IntrusivePtrTarget* as_intrusive_ptr;
      struct {
        DeviceType type;
        DeviceIndex index;
      } as_device;
    } u;
    Tensor as_tensor;

    Payload() noexcept : u{0} {}
    ~Payload() {}  // IValue destroys the active member.
  };

  // Tags whose payload is u.as_intrusive_ptr (never null).
  static constexpr bool isCountedTag(Tag tag) noexcept {
    return tag >= Tag::String && tag != Tag::Device;
  }
  // Takes over one reference to `target` (not null).
  IValue(Tag tag, IntrusivePtrTarget* target) noexcept : tag_(tag) {
    payload_.u.as_intrusive_ptr = target;
  }

  void destroy() noexcept {
    if (tag_ == Tag::Tensor) {
      payload_.as_tensor.~Tensor();
    } else if (isCountedTag(tag_)) {
      detail::decref(payload_.u.as_intrusive_ptr);
    }
  }
  // Precondition: this holds nothing (destroyed or freshly made). Leaves
  // `other` None.
  void moveFrom(IValue& other) noexcept {
    tag_ = other.tag_;
    if (tag_ == Tag::Tensor) {
      new (&payload_.as_tensor) Tensor(std::move(other.payload_.as_tensor));
      other.payload_.as_tensor.~Tensor();
    } else {
      payload_.u = other.payload_.u;
    }
    other.tag_ = Tag::None;
    other.payload_.u.as_int = 0;
  }
  template <class Object>
  const Object& counted(Tag tag, const char* expected) const {
    if (__builtin_expect(tag_ != tag, 0)) throwWrongTag(expected);
    return *static_cast<const Object*>(payload_.u.as_intrusive_ptr);
  }
  template <class Object>
  intrusive_ptr<Object> countedPtr(Tag tag, const char* expected) const {
    if (__builtin_expect(tag_ != tag, 0)) throwWrongTag(expected);
    return intrusive_ptr<Object>::reclaim_copy(
        static_cast<Object*>(payload_.u.as_intrusive_ptr));
  }
  [[noreturn]] void throwWrongTag(const char* expected) const;

  Payload payload_;
  Tag tag_;
};

static_assert(sizeof(IValue) == 16, "an IValue is a payload and a tag");

/// Strict equality: the same tag and an equal value. Numbers compare by
/// value within a tag (IValue(1) != IValue(1.0); NaN != NaN); strings,
/// devices, lists and tuples by contents; dicts by contents whatever their
/// order (as Python's); Tensors and futures by identity (there are no
/// operators to compare elements here).
bool operator==(const IValue& a, const IValue& b);
inline bool operator!=(const IValue& a, const IValue& b) { return !(a == b); }

/// A readable form: None, 3, 1.5, True, "text" (quoted, escaped), cuda:0,
/// [1, 2], (1, "a"), (1,), {"a": 1, "b": 2}, Future,
/// Tensor(sizes=[2], dtype=Float, device=cpu).
std::ostream& operator<<(std::ostream& out, const IValue& v);
std::ostream& operator<<(std::ostream& out, IValue::Tag tag);

namespace ivalue {

/// An immutable string shared by IValues.
class ConstantString final : public IntrusivePtrTarget {
 public:
  explicit ConstantString(std::string s) : str_(std::move(s)) {}
  static intrusive_ptr<ConstantString> create(std::string s) {
    return make_intrusive<ConstantString>(std::move(s));
  }
  const std::string& string() const { return str_; }
  std::string_view string_view() const { return str_; }

 private:
  const std::string str_;
};

/// The object behind an IntList (T = int64_t), DoubleList, BoolList,
/// TensorList or GenericList (T = IValue).
template <class T>
class ListImpl final : public IntrusivePtrTarget {
 public:
  explicit ListImpl(std::vector<T> elements) : elements_(std::move(elements)) {}
  const std::vector<T>& elements() const { return elements_; }
  /// Mutable access. Precondition: no other thread reads the list (the
  /// list is unshared, or the caller synchronizes).
  std::vector<T>& elements() { return elements_; }
  size_t size() const { return elements_.size(); }

 private:
  std::vector<T> elements_;
};

/// An immutable fixed-size sequence of IValues.
class Tuple final : public IntrusivePtrTarget {
 public:
  explicit Tuple(std::vector<IValue> elements)
      : elements_(std::move(elements)) {}
  static intrusive_ptr<Tuple> create(std::vector<IValue> elements) {
    return make_intrusive<Tuple>(std::move(elements));
  }
  const std::vector<IValue>& elements() const { return elements_; }
  size_t size() const { return elements_.size(); }

 private:
  const std::vector<IValue> elements_;
};

/// The object behind a Dict: entries in insertion order and an index from
/// key to position. Keys are Str, Int, Double, Bool or Tensor IValues
/// (isKey), compared as torch's dict keys: by value, Tensors by identity.
/// key_list_tag / value_list_tag say which list kind keys() and values()
/// make (IntList for int keys, ...) so that an empty dict's lists are typed
/// too.
///
/// Invariant: index_ maps each key of entries_ to its position, and no two
/// entries have equal keys.
class DictImpl final : public IntrusivePtrTarget {
 public:
  using Entry = std::pair<IValue, IValue>;

  DictImpl(IValue::Tag key_list_tag, IValue::Tag value_list_tag)
      : key_list_tag_(key_list_tag), value_list_tag_(value_list_tag) {}
  static intrusive_ptr<DictImpl> create(IValue::Tag key_list_tag,
                                        IValue::Tag value_list_tag) {
    return make_intrusive<DictImpl>(key_list_tag, value_list_tag);
  }

  /// Whether `key` may be a dict key (str, int, float, bool, Tensor).
  static bool isKey(const IValue& key) noexcept;

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  /// The entries in insertion order.
  const std::vector<Entry>& entries() const { return entries_; }
  IValue::Tag keyListTag() const { return key_list_tag_; }
  IValue::Tag valueListTag() const { return value_list_tag_; }

  /// The value of `key`, or null. Error(Type) when `key` cannot be a key.
  const IValue* find(const IValue& key) const;
  bool contains(const IValue& key) const { return find(key) != nullptr; }

  // Mutation. Precondition: no other thread reads the dict.
  /// d[key] = value: a new key goes last, an existing one keeps its place.
  void insertOrAssign(IValue key, IValue value);
  /// d.setdefault(key, value): inserts when absent; the value now held.
  IValue setDefault(IValue key, IValue value);
  /// Removes `key`; its value, or nullopt when absent. The others keep
  /// their order.
  std::optional<IValue> erase(const IValue& key);
  void clear();
  /// A new dict with the same entries (the values shared, not copied).
  intrusive_ptr<DictImpl> copy() const;

  /// Asserts the invariant (tests).
  void checkInvariants() const;

 private:
  struct KeyHash {
    size_t operator()(const IValue& key) const noexcept;
  };
  struct KeyEqual {
    bool operator()(const IValue& a, const IValue& b) const noexcept;
  };
  void reindex();

  std::vector<Entry> entries_;
  std::unordered_map<IValue, size_t, KeyHash, KeyEqual> index_;
  IValue::Tag key_list_tag_;
  IValue::Tag value_list_tag_;
};

/// The object behind a Future IValue: one shared reference to the future.
class FutureHandle final : public IntrusivePtrTarget {
 public:
  explicit FutureHandle(std::shared_ptr<jit::Future> future)
      : future_(std::move(future)) {}
  const std::shared_ptr<jit::Future>& future() const { return future_; }

 private:
  const std::shared_ptr<jit::Future> future_;
};

}  // namespace ivalue

// Implementation details.

inline IValue::IValue(const IValue& other) : tag_(other.tag_) {
  if (tag_ == Tag::Tensor) {
    new (&payload_.as_tensor) Tensor(other.payload_.as_tensor);
  } else {
    payload_.u = other.payload_.u;
    if (isCountedTag(tag_)) detail::incref(payload_.u.as_intrusive_ptr);
  }
}

inline IValue::IValue(IValue&& other) noexcept { moveFrom(other); }

inline IValue& IValue::operator=(IValue&& other) noexcept {
  // Steal first: `other` may live inside what this IValue holds.
  IValue tmp(std::move(other));
  destroy();
  moveFrom(tmp);
  return *this;
}

inline IValue& IValue::operator=(const IValue& other) {
  IValue tmp(other);
  destroy();
  moveFrom(tmp);
  return *this;
}

inline Tensor IValue::toTensor() && {
  if (__builtin_expect(tag_ != Tag::Tensor, 0)) throwWrongTag("Tensor");
  Tensor result(std::move(payload_.as_tensor));
  destroy();
  tag_ = Tag::None;
  payload_.u.as_int = 0;
  return result;
}

inline IValue::IValue(const Scalar& s) noexcept {
  if (s.isFloatingPoint()) {
    tag_ = Tag::Double;
    payload_.u.as_double = s.toDouble();
  } else if (s.isBoolean()) {
    tag_ = Tag::Bool;
    payload_.u.as_bool = s.toBool();
  } else {
    tag_ = Tag::Int;
    payload_.u.as_int = s.toLong();
  }
}

template <class T>
IValue::IValue(std::vector<T> v) : IValue() {
  if constexpr (std::is_integral<T>::value && !std::is_same<T, bool>::value) {
    *this = IValue(std::vector<int64_t>(v.begin(), v.end()));
  } else if constexpr (std::is_floating_point<T>::value) {
    *this = IValue(std::vector<double>(v.begin(), v.end()));
  } else {
    std::vector<IValue> boxed;
    boxed.reserve(v.size());
    for (T& element : v) boxed.emplace_back(std::move(element));
    *this = IValue(std::move(boxed));
  }
}

namespace detail {

// to<T>(): one specialization per type.
template <class T>
struct IValueTo {
  static_assert(sizeof(T) == 0,
                "IValue::to<T>(): T is not a type an IValue can hold");
};

#define TURNOUT_IVALUE_TO(type, expr)                 \
  template <>                                         \
  struct IValueTo<type> {                             \
    static type get(const IValue& v) { return expr; } \
    static type take(IValue&& v) { return get(v); }   \
  };
TURNOUT_IVALUE_TO(int64_t, v.toInt())
TURNOUT_IVALUE_TO(double, v.toDouble())
TURNOUT_IVALUE_TO(bool, v.toBool())
TURNOUT_IVALUE_TO(Scalar, v.toScalar())
TURNOUT_IVALUE_TO(ScalarType, v.toScalarType())
TURNOUT_IVALUE_TO(Layout, v.toLayout())
TURNOUT_IVALUE_TO(MemoryFormat, v.toMemoryFormat())
TURNOUT_IVALUE_TO(Device, v.toDevice())
TURNOUT_IVALUE_TO(std::string, v.toStringRef())
TURNOUT_IVALUE_TO(std::vector<int64_t>, v.toIntVector())
TURNOUT_IVALUE_TO(std::vector<double>, v.toDoubleVector())
TURNOUT_IVALUE_TO(std::vector<bool>, v.toBoolVector())
TURNOUT_IVALUE_TO(std::vector<Tensor>, v.toTensorVector())
TURNOUT_IVALUE_TO(std::vector<IValue>, v.toList())
TURNOUT_IVALUE_TO(intrusive_ptr<ivalue::Tuple>, v.toTuple())
#undef TURNOUT_IVALUE_TO

template <>
struct IValueTo<Tensor> {
  static Tensor get(const IValue& v) { return v.toTensor(); }
  static Tensor take(IValue&& v) { return std::move(v).toTensor(); }
};

template <>
struct IValueTo<IValue> {
  static IValue get(const IValue& v) { return v; }
  static IValue take(IValue&& v) { return std::move(v); }
};

template <class T>
struct IValueTo<std::optional<T>> {
  static std::optional<T> get(const IValue& v) {
    if (v.isNone()) return std::nullopt;
    return IValueTo<T>::get(v);
  }
  static std::optional<T> take(IValue&& v) {
    if (v.isNone()) return std::nullopt;
    return IValueTo<T>::take(std::move(v));
  }
};

template <class T>
struct IValueTo<std::vector<T>> {
  static std::vector<T> get(const IValue& v) {
    const std::vector<IValue>& elements = v.toListRef();
    std::vector<T> result;
    result.reserve(elements.size());
    for (const IValue& e : elements) result.push_back(IValueTo<T>::get(e));
    return result;
  }
  static std::vector<T> take(IValue&& v) { return get(v); }
};

}  // namespace detail

template <class T>
T IValue::to() const& {
  return detail::IValueTo<T>::get(*this);
}

template <class T>
T IValue::to() && {
  return detail::IValueTo<T>::take(std::move(*this));
}

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CORE_IVALUE_H_
