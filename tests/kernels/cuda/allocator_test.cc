// The CUDA caching allocator: size rounding (runs everywhere), and on a
// device, reuse of freed blocks, emptyCache and the statistics.
#include "kernels/cuda/allocator.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "dispatcher/core/allocator.h"
#include "kernels/cuda/cuda_utils.h"
#include "kernels/ops.h"

namespace turnout {
namespace {

TEST(CudaCachingAllocator, RoundsSmallTo512AndLargeTo2MiB) {
  EXPECT_EQ(cuda::roundAllocationSize(1), 512u);
  EXPECT_EQ(cuda::roundAllocationSize(512), 512u);
  EXPECT_EQ(cuda::roundAllocationSize(513), 1024u);
  EXPECT_EQ(cuda::roundAllocationSize((1 << 20) - 1), size_t{1} << 20);
  EXPECT_EQ(cuda::roundAllocationSize((1 << 20) + 1), size_t{2} << 20);
  EXPECT_EQ(cuda::roundAllocationSize((5 << 20) + 1), size_t{6} << 20);
}

TEST(CudaCachingAllocator, IsTheRegisteredCudaAllocator) {
  EXPECT_EQ(getAllocator(DeviceType::CUDA), cuda::cachingAllocator());
}

class CudaCachingAllocatorOnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda::cudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
    cuda::emptyCache();
  }
};

TEST_F(CudaCachingAllocatorOnDevice, ReusesAFreedBlockOfTheSameSize) {
  Allocator* a = cuda::cachingAllocator();
  void* first;
  {
    DataPtr p = a->allocate(1000);
    ASSERT_NE(p.get(), nullptr);
    EXPECT_TRUE(p.device().is_cuda());
    EXPECT_TRUE(p.device().has_index());
    first = p.get();
  }
  const cuda::CachingAllocatorStats before = cuda::cachingAllocatorStats();
  EXPECT_EQ(before.cached_bytes, 1024u);
  DataPtr again = a->allocate(1024);  // the same rounded size
  EXPECT_EQ(again.get(), first);
  const cuda::CachingAllocatorStats after = cuda::cachingAllocatorStats();
  EXPECT_EQ(after.num_device_allocs, before.num_device_allocs);
  EXPECT_EQ(after.num_cache_hits, before.num_cache_hits + 1);
  EXPECT_EQ(after.cached_bytes, 0u);
}

TEST_F(CudaCachingAllocatorOnDevice, EmptyCacheFreesOnlyUnusedBlocks) {
  Allocator* a = cuda::cachingAllocator();
  DataPtr held = a->allocate(4096);
  { DataPtr freed = a->allocate(8192); }
  EXPECT_EQ(cuda::cachingAllocatorStats().cached_bytes, 8192u);
  cuda::emptyCache();
  const cuda::CachingAllocatorStats s = cuda::cachingAllocatorStats();
  EXPECT_EQ(s.cached_bytes, 0u);
  EXPECT_GE(s.allocated_bytes, 4096u);
}

TEST_F(CudaCachingAllocatorOnDevice, ZeroBytesGiveNoData) {
  DataPtr p = cuda::cachingAllocator()->allocate(0);
  EXPECT_EQ(p.get(), nullptr);
  EXPECT_TRUE(p.device().is_cuda());
}

TEST_F(CudaCachingAllocatorOnDevice, ManyThreadsAllocateAndFree) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 200; ++i) {
        DataPtr p = cuda::cachingAllocator()->allocate(512 * (1 + i % 7));
        ASSERT_NE(p.get(), nullptr);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(cuda::cachingAllocatorStats().allocated_bytes, 0u);
}

TEST_F(CudaCachingAllocatorOnDevice, TensorsUseIt) {
  const int64_t before = cuda::cachingAllocatorStats().num_cache_hits;
  for (int i = 0; i < 3; ++i) {
    Tensor t = empty({256}, TensorOptions(kFloat).device(Device("cuda")));
    EXPECT_TRUE(t.is_cuda());
  }
  EXPECT_GE(cuda::cachingAllocatorStats().num_cache_hits, before + 2);
}

}  // namespace
}  // namespace turnout
