#include "kernels/caching_allocator.h"

#include <cstdint>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "dispatcher/core/allocator.h"
#include "gtest/gtest.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace {

CachingCPUAllocator& allocator() { return *getCachingCPUAllocator(); }

// Every test starts from empty caches and the default bound.
class CachingAllocator : public ::testing::Test {
 protected:
  void SetUp() override {
    allocator().setMaxCachedBytes(CachingCPUAllocator::kDefaultMaxCachedBytes);
    allocator().emptyCache();
  }
  void TearDown() override {
    allocator().setMaxCachedBytes(CachingCPUAllocator::kDefaultMaxCachedBytes);
    allocator().emptyCache();
  }
};

TEST_F(CachingAllocator, IsTheRegisteredCpuAllocator) {
  EXPECT_EQ(getAllocator(DeviceType::CPU), getCachingCPUAllocator());
  const CachingAllocatorStats before = allocator().stats();
  Tensor t = emptyTensor({3}, ScalarType::Float, Device(DeviceType::CPU));
  EXPECT_EQ(allocator().stats().allocations, before.allocations + 1);
}

TEST_F(CachingAllocator, AlignedUsableMemoryOfEverySize) {
  const size_t sizes[] = {1, 3, 63, 64, 65, 100, 4096, 32767, 32768, 32769,
                          100000, size_t{3} << 20};
  for (size_t n : sizes) {
    SCOPED_TRACE(::testing::Message() << n << " bytes");
    DataPtr p = allocator().allocate(n);
    ASSERT_NE(p.get(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % kCPUAlignment, 0u);
    EXPECT_EQ(p.device(), Device(DeviceType::CPU));
    std::memset(p.get(), 0xab, n);  // asan checks the whole range is ours
  }
}

TEST_F(CachingAllocator, ZeroBytesGivesNoData) {
  const CachingAllocatorStats before = allocator().stats();
  DataPtr p = allocator().allocate(0);
  EXPECT_EQ(p.get(), nullptr);
  EXPECT_EQ(allocator().stats().allocations, before.allocations);
}

TEST_F(CachingAllocator, SmallBlockIsReusedBySameClass) {
  void* first;
  {
    DataPtr p = allocator().allocate(40);
    first = p.get();
  }
  const CachingAllocatorStats before = allocator().stats();
  EXPECT_EQ(before.bytes_cached, 64);
  DataPtr q = allocator().allocate(64);  // same class (64 bytes)
  EXPECT_EQ(q.get(), first);
  const CachingAllocatorStats after = allocator().stats();
  EXPECT_EQ(after.cache_hits, before.cache_hits + 1);
  EXPECT_EQ(after.system_allocations, before.system_allocations);
  EXPECT_EQ(after.bytes_cached, 0);
  DataPtr r = allocator().allocate(65);  // next class: a new block
  EXPECT_NE(r.get(), first);
  EXPECT_EQ(allocator().stats().system_allocations,
            after.system_allocations + 1);
}

TEST_F(CachingAllocator, LargeBlockIsReusedAndBytesAreCounted) {
  const size_t n = size_t{64} << 20;  // a 16M-float tensor
  const CachingAllocatorStats start = allocator().stats();
  void* first;
  {
    DataPtr p = allocator().allocate(n);
    first = p.get();
    EXPECT_EQ(allocator().stats().bytes_in_use,
              start.bytes_in_use + static_cast<int64_t>(n));
  }
  EXPECT_EQ(allocator().stats().bytes_cached, static_cast<int64_t>(n));
  DataPtr q = allocator().allocate(n - 100);  // rounds to the same block
  EXPECT_EQ(q.get(), first);
  const CachingAllocatorStats s = allocator().stats();
  EXPECT_EQ(s.cache_hits, start.cache_hits + 1);
  EXPECT_EQ(s.system_allocations, start.system_allocations + 1);
  EXPECT_EQ(s.bytes_cached, 0);
}

TEST_F(CachingAllocator, LargeBlockTooBigForRequestIsNotUsed) {
  void* big;
  {
    DataPtr p = allocator().allocate(size_t{1} << 20);
    big = p.get();
  }
  // A block more than 1.25 times the request stays cached.
  DataPtr q = allocator().allocate(size_t{1} << 18);
  EXPECT_NE(q.get(), big);
  EXPECT_EQ(allocator().stats().bytes_cached, int64_t{1} << 20);
}

TEST_F(CachingAllocator, EmptyCacheFreesEveryCachedBlock) {
  { DataPtr a = allocator().allocate(10), b = allocator().allocate(1 << 20); }
  EXPECT_EQ(allocator().stats().bytes_cached, 64 + (1 << 20));
  const int64_t frees = allocator().stats().system_frees;
  allocator().emptyCache();
  const CachingAllocatorStats s = allocator().stats();
  EXPECT_EQ(s.bytes_cached, 0);
  EXPECT_EQ(s.system_frees, frees + 2);
}

TEST_F(CachingAllocator, BoundLimitsLargeCache) {
  allocator().setMaxCachedBytes(size_t{1} << 20);
  EXPECT_EQ(allocator().maxCachedBytes(), size_t{1} << 20);
  {
    DataPtr a = allocator().allocate(size_t{3} << 19);  // 1.5 MiB: not kept
    DataPtr b = allocator().allocate(size_t{1} << 19);  // kept
  }
  EXPECT_EQ(allocator().stats().bytes_cached, int64_t{1} << 19);
  allocator().setMaxCachedBytes(0);  // frees down to the new bound
  EXPECT_EQ(allocator().stats().bytes_cached, 0);
}

TEST_F(CachingAllocator, SmallListsAreBoundedPerClass) {
  const int n = CachingCPUAllocator::kMaxBlocksPerClass + 10;
  {
    std::vector<DataPtr> blocks;
    for (int i = 0; i < n; ++i) blocks.push_back(allocator().allocate(8));
  }
  EXPECT_EQ(allocator().stats().bytes_cached,
            64 * CachingCPUAllocator::kMaxBlocksPerClass);
}

TEST_F(CachingAllocator, OutOfMemoryIsAClearError) {
  const CachingAllocatorStats before = allocator().stats();
  try {
    allocator().allocate(SIZE_MAX - 10);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CPU allocator: out of memory"),
              std::string::npos)
        << e.what();
  }
  // Nothing is left counted.
  const CachingAllocatorStats after = allocator().stats();
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(after.allocations, before.allocations);
}

TEST_F(CachingAllocator, BlocksMoveBetweenThreads) {
  // Allocated on workers, freed here and the reverse, concurrently: tsan
  // checks the lists and counters; the totals must balance.
  constexpr int kThreads = 4;
  constexpr int kRounds = 2000;
  std::vector<std::vector<DataPtr>> made(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        DataPtr p = allocator().allocate(static_cast<size_t>(1 + (i * 37) % 5000));
        static_cast<char*>(p.get())[0] = static_cast<char>(i);
        if (i % 3 == 0) made[t].push_back(std::move(p));
        if (i % 500 == 0) {
          DataPtr big = allocator().allocate(size_t{1} << 16);
          static_cast<char*>(big.get())[100] = 1;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (auto& list : made) list.clear();  // freed on this thread
  const CachingAllocatorStats s = allocator().stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  allocator().emptyCache();
  const CachingAllocatorStats e = allocator().stats();
  EXPECT_EQ(e.bytes_cached, 0);
  // Every block taken from the system was given back.
  EXPECT_EQ(e.system_allocations - e.system_frees, 0);
}

TEST_F(CachingAllocator, EmptyCacheReachesOtherThreadsOnTheirNextCall) {
  std::promise<void> cached, emptied, done, checked;
  std::thread worker([&] {
    { DataPtr p = allocator().allocate(100); }  // cached on this thread
    cached.set_value();
    emptied.get_future().wait();
    DataPtr q = allocator().allocate(5000);  // drops the stale list first
    done.set_value();
    checked.get_future().wait();  // q stays in use until the check
  });
  cached.get_future().wait();
  EXPECT_EQ(allocator().stats().bytes_cached, 128);
  allocator().emptyCache();
  emptied.set_value();
  done.get_future().wait();
  EXPECT_EQ(allocator().stats().bytes_cached, 0);
  checked.set_value();
  worker.join();
}

TEST_F(CachingAllocator, ExitingThreadFreesItsLists) {
  std::thread worker([] { DataPtr p = allocator().allocate(100); });
  worker.join();
  EXPECT_EQ(allocator().stats().bytes_cached, 0);
}

// A new CPU tensor's block (its TensorImpl, storage, and up to 64 data
// bytes) comes from this allocator: tensors made on one thread and dropped
// on another put their blocks on the second thread's lists, which then
// reuses them for its own tensors (TSan checks the hand-overs).
TEST_F(CachingAllocator, TensorsMadeOnOneThreadAndDroppedOnAnother) {
  constexpr int kTensors = 200;
  std::vector<Tensor> made;
  std::thread maker([&] {
    for (int i = 0; i < kTensors; ++i) {
      const int64_t n = i % 2 == 0 ? 3 : 100;  // inline data, and not
      Tensor t = emptyTensor({n}, ScalarType::Float, Device(DeviceType::CPU));
      for (int64_t j = 0; j < n; ++j) t.data_ptr<float>()[j] = float(i + j);
      made.push_back(std::move(t));
    }
  });
  maker.join();
  std::thread dropper([&] {
    float sum = 0;
    for (int i = 0; i < kTensors; ++i) {
      sum += made[i].data_ptr<float>()[2];
      made[i] = Tensor();
    }
    EXPECT_EQ(sum, float(kTensors * (kTensors - 1) / 2 + 2 * kTensors));
    const int64_t hits = allocator().stats().cache_hits;
    for (int i = 0; i < 10; ++i) {
      Tensor t = emptyTensor({3}, ScalarType::Float, Device(DeviceType::CPU));
      t.data_ptr<float>()[2] = 1.0f;
    }
    EXPECT_GE(allocator().stats().cache_hits, hits + 10);
  });
  dropper.join();
}

}  // namespace
}  // namespace turnout
