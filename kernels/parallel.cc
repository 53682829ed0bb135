#include "kernels/parallel.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/core/thread_local.h"

namespace turnout {
namespace {

// A fixed set of worker threads draining one FIFO queue. The destructor lets
// the workers finish what is queued, then joins them.
class ThreadPool {
 public:
  explicit ThreadPool(int num_workers) {
    workers_.reserve(num_workers);
    for (int i = 0; i < num_workers; ++i) {
      workers_.emplace_back([this] { workerLoop(); });
    }
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int numWorkers() const { return static_cast<int>(workers_.size()); }

  void submit(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

 private:
  void workerLoop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stop_ and nothing left
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();  // never throws: parallel_for's tasks catch everything
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  bool stop_ = false;                        // guarded by mu_
  std::vector<std::thread> workers_;
};

int defaultNumThreads() {
  if (const char* env = std::getenv("TURNOUT_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n >= 1) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// The process-wide pool. Leaked on purpose: joining workers from a static
// destructor at exit races with other static destructors.
struct PoolState {
  std::mutex mu;
  int num_threads = defaultNumThreads();  // guarded by mu
  // Created on first use with num_threads - 1 workers; replaced (not
  // resized) by set_num_threads. A parallel_for holds its own reference, so
  // a replaced pool lives until its last chunk is done.
  std::shared_ptr<ThreadPool> pool;  // guarded by mu
};

PoolState& poolState() {
  static PoolState* state = new PoolState;
  return *state;
}

TURNOUT_THREAD_LOCAL bool t_in_parallel = false;

// Sets t_in_parallel for the life of a chunk, restoring the previous value.
class ParallelRegionGuard {
 public:
  ParallelRegionGuard() : previous_(t_in_parallel) { t_in_parallel = true; }
  ~ParallelRegionGuard() { t_in_parallel = previous_; }

 private:
  bool previous_;
};

// What the chunks of one parallel_for share. Lives on the caller's stack: a
// worker touches it last while holding mu (the decrement and the notify), so
// the caller, which waits on mu for remaining == 0, never frees it early.
struct CallState {
  std::mutex mu;
  std::condition_variable done;
  int64_t remaining = 0;           // guarded by mu
  std::exception_ptr first_error;  // guarded by mu
};

void runChunk(const std::function<void(int64_t, int64_t)>& fn, int64_t begin,
              int64_t end, CallState& call) {
  std::exception_ptr error;
  try {
    ParallelRegionGuard guard;
    fn(begin, end);
  } catch (...) {
    error = std::current_exception();
  }
  std::lock_guard<std::mutex> lock(call.mu);
  if (error && !call.first_error) call.first_error = error;
  if (--call.remaining == 0) call.done.notify_all();
}

}  // namespace

void parallel_for(int64_t begin, int64_t end, int64_t grain_size,
                  const std::function<void(int64_t, int64_t)>& fn) {
  if (begin >= end) return;
  grain_size = std::max<int64_t>(grain_size, 1);
  const int64_t range = end - begin;
  if (range <= grain_size || t_in_parallel) {
    ParallelRegionGuard guard;
    fn(begin, end);
    return;
  }

  std::shared_ptr<ThreadPool> pool;
  int num_threads;
  {
    PoolState& state = poolState();
    std::lock_guard<std::mutex> lock(state.mu);
    num_threads = state.num_threads;
    if (num_threads > 1 && !state.pool) {
      state.pool = std::make_shared<ThreadPool>(num_threads - 1);
    }
    pool = state.pool;
  }
  const int64_t num_chunks =
      std::min<int64_t>(num_threads, (range + grain_size - 1) / grain_size);
  if (num_chunks <= 1 || !pool) {
    ParallelRegionGuard guard;
    fn(begin, end);
    return;
  }

  const int64_t chunk = (range + num_chunks - 1) / num_chunks;
  CallState call;
  call.remaining = num_chunks;
  for (int64_t c = 1; c < num_chunks; ++c) {
    const int64_t b = begin + c * chunk;
    const int64_t e = std::min(end, b + chunk);
    pool->submit([&fn, b, e, &call] { runChunk(fn, b, e, call); });
  }
  runChunk(fn, begin, std::min(end, begin + chunk), call);

  std::unique_lock<std::mutex> lock(call.mu);
  call.done.wait(lock, [&call] { return call.remaining == 0; });
  if (call.first_error) std::rethrow_exception(call.first_error);
}

void set_num_threads(int n) {
  TURNOUT_CHECK(n >= 1, ErrorKind::InvalidArgument,
                "set_num_threads(): expected a positive number of threads, "
                "but got ",
                n);
  std::shared_ptr<ThreadPool> old;
  {
    PoolState& state = poolState();
    std::lock_guard<std::mutex> lock(state.mu);
    if (state.num_threads == n) return;
    state.num_threads = n;
    old = std::move(state.pool);  // the next parallel_for makes a new one
  }
  // `old` is released here, outside the lock: joining its workers waits for
  // any chunks still queued on it.
}

int get_num_threads() {
  PoolState& state = poolState();
  std::lock_guard<std::mutex> lock(state.mu);
  return state.num_threads;
}

bool in_parallel_region() { return t_in_parallel; }

}  // namespace turnout
