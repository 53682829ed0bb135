#include "kernels/parallel.h"

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "dispatcher/core/error.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

// Restores the thread count a test changed.
class ThreadCountGuard {
 public:
  ThreadCountGuard() : saved_(get_num_threads()) {}
  ~ThreadCountGuard() { set_num_threads(saved_); }

 private:
  int saved_;
};

TEST(Parallel, CoversEveryIndexOnce) {
  ThreadCountGuard guard;
  struct Case {
    int threads;
    int64_t begin, end, grain;
  };
  const Case cases[] = {
      {1, 0, 100, 10},   {2, 0, 100, 10},     {4, 5, 1000, 7},
      {3, 0, 1, 1},      {4, 0, 0, 1},        {4, 10, 5, 1},
      {8, 0, 100000, 32768}, {2, -50, 50, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "threads " << c.threads << " range ["
                                    << c.begin << ", " << c.end << ") grain "
                                    << c.grain);
    set_num_threads(c.threads);
    const int64_t n = std::max<int64_t>(c.end - c.begin, 0);
    std::vector<std::atomic<int>> hits(n);
    std::atomic<int> chunks{0};
    parallel_for(c.begin, c.end, c.grain, [&](int64_t b, int64_t e) {
      EXPECT_LT(b, e);
      EXPECT_TRUE(in_parallel_region());
      chunks.fetch_add(1);
      for (int64_t i = b; i < e; ++i) hits[i - c.begin].fetch_add(1);
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << i;
    EXPECT_LE(chunks.load(), c.threads);
    EXPECT_FALSE(in_parallel_region());
  }
}

TEST(Parallel, UsesOtherThreads) {
  ThreadCountGuard guard;
  set_num_threads(2);
  std::atomic<int> others{0};
  const std::thread::id caller = std::this_thread::get_id();
  parallel_for(0, 2, 1, [&](int64_t, int64_t) {
    if (std::this_thread::get_id() != caller) others.fetch_add(1);
  });
  EXPECT_EQ(others.load(), 1);
}

TEST(Parallel, NestedCallsRunInline) {
  ThreadCountGuard guard;
  set_num_threads(4);
  std::atomic<int64_t> sum{0};
  parallel_for(0, 4, 1, [&](int64_t b, int64_t e) {
    const std::thread::id outer = std::this_thread::get_id();
    parallel_for(0, 100, 1, [&](int64_t ib, int64_t ie) {
      EXPECT_EQ(std::this_thread::get_id(), outer);
      EXPECT_EQ(ib, 0);
      EXPECT_EQ(ie, 100);
      sum.fetch_add((e - b) * (ie - ib));
    });
  });
  EXPECT_EQ(sum.load(), 400);
}

TEST(Parallel, RethrowsTheChunksException) {
  ThreadCountGuard guard;
  set_num_threads(4);
  std::atomic<int> ran{0};
  EXPECT_THROW(parallel_for(0, 4, 1,
                            [&](int64_t b, int64_t) {
                              ran.fetch_add(1);
                              if (b == 2) throw std::runtime_error("chunk 2");
                            }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 4);  // the other chunks still ran
  // The pool still works afterwards.
  std::atomic<int> after{0};
  parallel_for(0, 4, 1, [&](int64_t, int64_t) { after.fetch_add(1); });
  EXPECT_EQ(after.load(), 4);
}

TEST(Parallel, SetNumThreads) {
  ThreadCountGuard guard;
  set_num_threads(3);
  EXPECT_EQ(get_num_threads(), 3);
  set_num_threads(1);
  EXPECT_EQ(get_num_threads(), 1);
  try {
    set_num_threads(0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_EQ(e.message(),
              "set_num_threads(): expected a positive number of threads, but "
              "got 0");
  }
  EXPECT_EQ(get_num_threads(), 1);
}

// Callers on several threads while another changes the thread count: each
// parallel_for finishes on the pool it started with.
TEST(Parallel, ConcurrentCallersAndResizes) {
  ThreadCountGuard guard;
  std::atomic<bool> failed{false};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t) {
    callers.emplace_back([&] {
      for (int round = 0; round < 50; ++round) {
        std::atomic<int64_t> sum{0};
        parallel_for(0, 1000, 10, [&](int64_t b, int64_t e) {
          int64_t local = 0;
          for (int64_t i = b; i < e; ++i) local += i;
          sum.fetch_add(local);
        });
        if (sum.load() != 999 * 1000 / 2) failed = true;
      }
    });
  }
  for (int round = 0; round < 20; ++round) set_num_threads(1 + round % 4);
  for (std::thread& t : callers) t.join();
  EXPECT_FALSE(failed.load());
}

}  // namespace
}  // namespace turnout
