// Future: a value that forked work delivers later, and fork(), which runs
// work on the inter-op thread pool with the caller's thread-local dispatch
// state.
//
//   std::shared_ptr<Future> f = fork([&] { return IValue(add(x, y)); });
//   std::shared_ptr<Future> g = f->then([](Future& done) {
//     return IValue(mul(done.value().toTensor(), 2));
//   });
//   g->wait();                       // rethrows what fn or the callback threw
//   Tensor r = g->value().toTensor();
//
// Errors: an exception thrown by forked work (or by a then() callback) is
// kept as it was thrown and rethrown by wait() and value(), on whichever
// thread calls them.
//
// Thread-local state: fork() captures the caller's LocalDispatchKeySet (the
// include and exclude sets) and installs it on the pool thread for the
// duration of the work, so that work forked under, say, an
// AutoDispatchBelowAutograd guard dispatches as it would have inline. The
// grad mode (kernels/autograd/grad_mode.h) is carried the same way.
//
// Thread safety: every method may be called from any thread. A Future is
// completed exactly once (markCompleted or setError); completing it twice
// is an Error(InvalidArgument) that leaves the first result in place.
#ifndef TURNOUT_JIT_RUNTIME_FUTURE_H_
#define TURNOUT_JIT_RUNTIME_FUTURE_H_

#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dispatcher/core/ivalue.h"

namespace turnout {
namespace jit {

class Future : public std::enable_shared_from_this<Future> {
 public:
  Future() = default;
  Future(const Future&) = delete;
  Future& operator=(const Future&) = delete;

  // ---- Completing --------------------------------------------------------
  /// Stores the value, wakes every waiter and runs the callbacks (on this
  /// thread, in the order they were added). Throws Error(InvalidArgument)
  /// when the future is already complete.
  void markCompleted(IValue value);
  /// The same with an error: wait() and value() will rethrow `error`.
  /// Precondition: `error` is not null.
  void setError(std::exception_ptr error);

  // ---- Reading -------------------------------------------------------------
  /// True once markCompleted or setError has run.
  bool completed() const { return completed_.load(std::memory_order_acquire); }
  /// True when completed with an error.
  bool hasError() const;
  /// The error's message (what() of a std::exception), or "" when the
  /// future holds no error.
  std::string errorMessage() const;
  /// The error as thrown, or null (also while not yet complete).
  std::exception_ptr error() const;

  /// Blocks until the future is complete, then rethrows its error if it
  /// has one. On an inter-op pool thread, runs other queued work while it
  /// waits, so that work forked from forked work cannot deadlock the pool.
  void wait();
  /// The value. Throws Error(InvalidArgument) when not yet complete (call
  /// wait() first), rethrows the error of a failed future, and throws
  /// Error(Type) for a future of futures (holdsFutures()).
  const IValue& value() const;
  /// True when complete, without error, with a list of futures as its value
  /// (a collectAll() result): read it with futures(), not value(). An
  /// IValue cannot hold a future, so such a value is kept apart.
  bool holdsFutures() const;
  /// The futures of a collectAll() result, each complete. Throws as value()
  /// does, and Error(Type) for a future that holds an IValue.
  const std::vector<std::shared_ptr<Future>>& futures() const;

  // ---- Chaining ------------------------------------------------------------
  /// A future completed with `fn(*this)` once this one completes: `fn` runs
  /// on the thread that completes this future, or right here when it
  /// already is complete. An exception thrown by `fn` (value() of a failed
  /// future included) completes the result with that error.
  std::shared_ptr<Future> then(std::function<IValue(Future&)> fn);
  /// Runs `callback(*this)` once this future completes (at once when it
  /// is). A callback must not throw; it is for code that completes other
  /// futures. Prefer then().
  void addCallback(std::function<void(Future&)> callback);

 private:
  friend std::shared_ptr<Future> collectAll(
      const std::vector<std::shared_ptr<Future>>& futures);
  // Completes the future with `value` or `error`, or, with `with_futures`,
  // with futures_ (set before, by collectAll) as its value.
  void finish(IValue value, std::exception_ptr error,
              bool with_futures = false);
  void checkReadable(const char* what) const;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  // Set (release) after value_ / error_ are written, read (acquire) by
  // completed(): a reader that sees true may read value_ and error_
  // without the lock, since they never change again.
  std::atomic<bool> completed_{false};
  IValue value_;
  std::exception_ptr error_;
  // A collectAll() result's futures: set once, before the future is
  // shared; its value once holds_futures_ is (written before completed_).
  std::vector<std::shared_ptr<Future>> futures_;
  bool holds_futures_ = false;
  std::vector<std::function<void(Future&)>> callbacks_;  // guarded by mu_
};

/// Runs `fn` on the inter-op pool, with the caller's LocalDispatchKeySet
/// and grad mode installed there, and returns the future of its result. An exception
/// thrown by `fn` completes the future with that error.
std::shared_ptr<Future> fork(std::function<IValue()> fn);

/// As c10::collectAll: a future completed, once every one of `futures` is
/// complete, with the list of those futures as its value (futures(); each
/// one's value or error is read from it). When one of them fails, the
/// result fails at once with that error (the first to arrive), without
/// waiting for the others. An empty list gives a completed future holding
/// no futures. Throws Error(InvalidArgument) for a null future.
///
/// The result keeps the futures alive; they keep only a weak reference to
/// the result, so an input future that never completes leaks nothing once
/// the result is dropped.
std::shared_ptr<Future> collectAll(
    const std::vector<std::shared_ptr<Future>>& futures);

/// The number of inter-op pool threads. The default is the number of
/// hardware threads (at least 2), or TURNOUT_NUM_INTEROP_THREADS when set.
int getNumInteropThreads();
/// Sets it. Throws Error(InvalidArgument) unless n >= 1, or once the pool
/// has started (the first fork()), as torch.set_num_interop_threads.
void setNumInteropThreads(int n);

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_RUNTIME_FUTURE_H_
