#include "jit/runtime/future.h"

#include <cstdlib>
#include <deque>
#include <string>
#include <thread>
#include <utility>

#include "dispatcher/core/error.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "kernels/autograd/grad_mode.h"

namespace turnout {
namespace jit {
namespace {

// The inter-op pool: a fixed set of threads taking tasks from one queue.
// Never destroyed, so that work still queued at exit finds it alive; its
// threads are never joined (the process ends with them blocked).
//
// A pool thread that waits on a future does not block: it keeps running
// queued tasks until the future completes (helpUntil). Without that, work
// that forks and waits on its own children would deadlock once every pool
// thread waits.
class InterOpPool {
 public:
  explicit InterOpPool(int num_threads) : num_threads_(num_threads) {
    for (int i = 0; i < num_threads; ++i) {
      std::thread([this] { workerLoop(); }).detach();
    }
  }

  int numThreads() const { return num_threads_; }

  // Precondition: `task` does not throw.
  void submit(std::function<void()> task) {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
    work_cv_.notify_one();
    if (helpers_ > 0) help_cv_.notify_all();
  }

  // Runs queued tasks until `f` completes. Only on pool threads.
  void helpUntil(const Future& f) {
    std::unique_lock<std::mutex> lock(mu_);
    ++helpers_;
    for (;;) {
      help_cv_.wait(lock, [&] { return f.completed() || !queue_.empty(); });
      if (f.completed()) break;
      std::function<void()> task = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      task();
      task = nullptr;  // drop its captures before taking the lock again
      lock.lock();
    }
    --helpers_;
  }

  // Wakes the pool threads that wait in helpUntil: called after a future
  // completes. Taking mu_ after the future's completed flag was set means a
  // helper either saw the flag or is waiting and gets this notification.
  void notifyHelpers() {
    std::lock_guard<std::mutex> lock(mu_);
    if (helpers_ > 0) help_cv_.notify_all();
  }

  static bool onPoolThread() { return on_pool_thread_; }

 private:
  void workerLoop() {
    on_pool_thread_ = true;
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [&] { return !queue_.empty(); });
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
    }
  }

  const int num_threads_;
  std::mutex mu_;
  std::condition_variable work_cv_;  // idle threads wait for tasks
  std::condition_variable help_cv_;  // waiting pool threads: task or done
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  int helpers_ = 0;                          // guarded by mu_
  static thread_local bool on_pool_thread_;
};

thread_local bool InterOpPool::on_pool_thread_ = false;

std::mutex& configMutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}
int requested_threads = 0;               // guarded by configMutex()
std::atomic<InterOpPool*> pool{nullptr};  // set once, under configMutex()

int defaultThreads() {
  if (const char* env = std::getenv("TURNOUT_NUM_INTEROP_THREADS")) {
    char* end = nullptr;
    long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n >= 1 && n <= 1024) {
      return static_cast<int>(n);
    }
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw < 2 ? 2 : static_cast<int>(hw);
}

InterOpPool& getPool() {
  InterOpPool* p = pool.load(std::memory_order_acquire);
  if (p != nullptr) return *p;
  std::lock_guard<std::mutex> lock(configMutex());
  p = pool.load(std::memory_order_relaxed);
  if (p == nullptr) {
    p = new InterOpPool(requested_threads > 0 ? requested_threads
                                              : defaultThreads());
    // Release: a thread that loads the pointer sees a constructed pool.
    pool.store(p, std::memory_order_release);
  }
  return *p;
}

}  // namespace

// ---- Future

void Future::markCompleted(IValue value) { finish(std::move(value), nullptr); }

void Future::setError(std::exception_ptr error) {
  TURNOUT_CHECK(error != nullptr, ErrorKind::InvalidArgument,
                "Future::setError(): the error is null");
  finish(IValue(), std::move(error));
}

void Future::finish(IValue value, std::exception_ptr error, bool with_futures) {
  std::vector<std::function<void(Future&)>> callbacks;
  std::vector<std::shared_ptr<Future>> dropped;  // freed outside the lock
  {
    std::lock_guard<std::mutex> lock(mu_);
    TURNOUT_CHECK(!completed_.load(std::memory_order_relaxed),
                  ErrorKind::InvalidArgument,
                  "Future: ", error ? "setError()" : "markCompleted()",
                  " on a future that is already complete; a future is "
                  "completed exactly once");
    value_ = std::move(value);
    error_ = std::move(error);
    holds_futures_ = with_futures;
    // A failed collectAll() result holds no futures: no value to read.
    if (!with_futures) dropped.swap(futures_);
    // Release: whoever sees completed_ true sees value_ and error_.
    completed_.store(true, std::memory_order_release);
    callbacks.swap(callbacks_);
  }
  cv_.notify_all();
  if (InterOpPool* p = pool.load(std::memory_order_acquire)) {
    p->notifyHelpers();
  }
  for (auto& callback : callbacks) callback(*this);
}

bool Future::hasError() const { return completed() && error_ != nullptr; }

std::exception_ptr Future::error() const {
  return completed() ? error_ : nullptr;
}

std::string Future::errorMessage() const {
  std::exception_ptr e = error();
  if (e == nullptr) return "";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

void Future::wait() {
  if (!completed()) {
    if (InterOpPool::onPoolThread()) {
      getPool().helpUntil(*this);
    } else {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return completed(); });
    }
  }
  if (error_) std::rethrow_exception(error_);
}

void Future::checkReadable(const char* what) const {
  TURNOUT_CHECK(completed(), ErrorKind::InvalidArgument, "Future::", what,
                "(): the future is not complete yet; call wait() first, or "
                "chain with then()");
  if (error_) std::rethrow_exception(error_);
}

const IValue& Future::value() const {
  checkReadable("value");
  TURNOUT_CHECK(!holds_futures_, ErrorKind::Type,
                "Future::value(): this future's value is a list of futures "
                "(a collectAll() result), which an IValue cannot hold; read "
                "it with futures()");
  return value_;
}

bool Future::holdsFutures() const {
  return completed() && error_ == nullptr && holds_futures_;
}

const std::vector<std::shared_ptr<Future>>& Future::futures() const {
  checkReadable("futures");
  TURNOUT_CHECK(holds_futures_, ErrorKind::Type,
                "Future::futures(): this future holds a value, not a list of "
                "futures (only collectAll() makes those); read it with "
                "value()");
  return futures_;
}

void Future::addCallback(std::function<void(Future&)> callback) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!completed_.load(std::memory_order_relaxed)) {
      callbacks_.push_back(std::move(callback));
      return;
    }
  }
  callback(*this);
}

std::shared_ptr<Future> Future::then(std::function<IValue(Future&)> fn) {
  TURNOUT_CHECK(fn != nullptr, ErrorKind::InvalidArgument,
                "Future::then(): the callback is empty");
  auto child = std::make_shared<Future>();
  addCallback([child, fn = std::move(fn)](Future& parent) {
    IValue v;
    std::exception_ptr error;
    try {
      v = fn(parent);
    } catch (...) {
      error = std::current_exception();
    }
    if (error) {
      child->setError(std::move(error));
    } else {
      child->markCompleted(std::move(v));
    }
  });
  return child;
}

// ---- fork, collectAll

std::shared_ptr<Future> fork(std::function<IValue()> fn) {
  TURNOUT_CHECK(fn != nullptr, ErrorKind::InvalidArgument,
                "fork(): the function is empty");
  auto future = std::make_shared<Future>();
  const LocalDispatchKeySet tls = tls_local_dispatch_key_set();
  const bool grad_enabled = autograd::GradMode::is_enabled();
  getPool().submit([future, tls, grad_enabled, fn = std::move(fn)]() mutable {
    IValue v;
    std::exception_ptr error;
    {
      ForceDispatchKeyGuard guard(tls);
      autograd::AutoGradMode grad_mode(grad_enabled);
      try {
        v = fn();
      } catch (...) {
        error = std::current_exception();
      }
    }
    fn = nullptr;  // release what it captured before waking the waiters
    if (error) {
      future->setError(std::move(error));
    } else {
      future->markCompleted(std::move(v));
    }
  });
  return future;
}

namespace {

// Runs `complete`, unless someone else (the user, through markCompleted)
// completed `f` first: then theirs stands. A callback must not throw.
template <class F>
void completeUnlessDone(Future& f, F&& complete) {
  if (f.completed()) return;
  try {
    complete();
  } catch (const Error&) {
    // Completed by another thread between the check and the call.
  }
}

}  // namespace

std::shared_ptr<Future> collectAll(
    const std::vector<std::shared_ptr<Future>>& futures) {
  for (size_t i = 0; i < futures.size(); ++i) {
    TURNOUT_CHECK(futures[i] != nullptr, ErrorKind::InvalidArgument,
                  "collectAll(): future ", i, " is null");
  }
  auto result = std::make_shared<Future>();
  // Not shared yet: no other thread can read futures_.
  result->futures_ = futures;
  if (futures.empty()) {
    result->finish(IValue(), nullptr, /*with_futures=*/true);
    return result;
  }
  struct State {
    std::atomic<size_t> remaining;
    // Set by whichever callback completes the result (the last success, or
    // the first failure); the others then leave it alone.
    std::atomic<bool> done{false};
    // Weak: the inputs' callbacks must not keep the result (which holds
    // the inputs) alive -- that would be a cycle through an input that
    // never completes.
    std::weak_ptr<Future> result;
  };
  auto state = std::make_shared<State>();
  state->remaining.store(futures.size(), std::memory_order_relaxed);
  state->result = result;
  for (const auto& f : futures) {
    f->addCallback([state](Future& done) {
      if (std::exception_ptr e = done.error()) {
        if (state->done.exchange(true, std::memory_order_acq_rel)) return;
        if (std::shared_ptr<Future> r = state->result.lock()) {
          completeUnlessDone(*r, [&] { r->setError(e); });
        }
        return;
      }
      // acq_rel: the last one sees every other future's completion.
      if (state->remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) {
        return;
      }
      if (state->done.exchange(true, std::memory_order_acq_rel)) return;
      if (std::shared_ptr<Future> r = state->result.lock()) {
        completeUnlessDone(
            *r, [&] { r->finish(IValue(), nullptr, /*with_futures=*/true); });
      }
    });
  }
  return result;
}

int getNumInteropThreads() {
  if (InterOpPool* p = pool.load(std::memory_order_acquire)) {
    return p->numThreads();
  }
  std::lock_guard<std::mutex> lock(configMutex());
  return requested_threads > 0 ? requested_threads : defaultThreads();
}

void setNumInteropThreads(int n) {
  TURNOUT_CHECK(n >= 1, ErrorKind::InvalidArgument,
                "setNumInteropThreads(", n, "): the number of threads must "
                "be at least 1");
  std::lock_guard<std::mutex> lock(configMutex());
  TURNOUT_CHECK(pool.load(std::memory_order_relaxed) == nullptr,
                ErrorKind::InvalidArgument,
                "setNumInteropThreads(", n, "): the inter-op pool has "
                "already started (work was forked); set the number of "
                "threads before the first fork");
  requested_threads = n;
}

}  // namespace jit
}  // namespace turnout
