// Streams and events (kernels/cuda/stream.h) and the caching allocator's
// per-stream blocks: on a device only.
#include "kernels/cuda/stream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "dispatcher/core/error.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/cuda_utils.h"
#include "kernels/ops.h"
#include "tests/error_of.h"

namespace turnout {
namespace {

using testing::errorOf;

class CudaStreams : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda::cudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

Tensor onesOnCuda(int64_t n) {
  return ones({n}, TensorOptions(kFloat).device(Device("cuda")));
}

// Dependent kernels over a large tensor: milliseconds of device work that
// the host queues in far less time.
Tensor slowChain(Tensor x, int n) {
  for (int i = 0; i < n; ++i) x = mul(x, 1.0001);
  return x;
}

TEST_F(CudaStreams, CurrentIsDefaultUntilAGuardChangesIt) {
  const cuda::CUDAStream def = cuda::getDefaultCUDAStream();
  EXPECT_TRUE(def.isDefault());
  EXPECT_EQ(cuda::getCurrentCUDAStream(), def);
  const cuda::CUDAStream s = cuda::getStreamFromPool();
  EXPECT_FALSE(s.isDefault());
  {
    cuda::CUDAStreamGuard guard(s);
    EXPECT_EQ(cuda::getCurrentCUDAStream(), s);
    EXPECT_EQ(cuda::currentStreamHandle(), s.stream());
    EXPECT_EQ(guard.originalStream(), def);
  }
  EXPECT_EQ(cuda::getCurrentCUDAStream(), def);
}

TEST_F(CudaStreams, PoolHandsOutDistinctStreamsRoundRobin) {
  const cuda::CUDAStream first = cuda::getStreamFromPool();
  int same = 0;
  for (int i = 0; i < 31; ++i) same += cuda::getStreamFromPool() == first;
  EXPECT_EQ(same, 0);
  EXPECT_LT(cuda::getStreamFromPool(true).priority(), first.priority() + 1);
}

TEST_F(CudaStreams, CurrentStreamIsPerThread) {
  const cuda::CUDAStream s = cuda::getStreamFromPool();
  cuda::CUDAStreamGuard guard(s);
  cuda::CUDAStream seen = s;
  std::thread([&] { seen = cuda::getCurrentCUDAStream(); }).join();
  EXPECT_TRUE(seen.isDefault());
}

TEST_F(CudaStreams, KernelsRunOnTheCurrentStream) {
  const cuda::CUDAStream s = cuda::getStreamFromPool();
  Tensor x = onesOnCuda(1 << 24);
  cuda::deviceSynchronize();
  Tensor y;
  {
    cuda::CUDAStreamGuard guard(s);
    y = slowChain(x, 400);
  }
  // On the default stream only, s would be idle and the default busy.
  EXPECT_FALSE(s.query());
  EXPECT_TRUE(cuda::getDefaultCUDAStream().query());
  s.synchronize();
  EXPECT_TRUE(s.query());
}

TEST_F(CudaStreams, EventOrdersTwoStreams) {
  const cuda::CUDAStream s1 = cuda::getStreamFromPool();
  const cuda::CUDAStream s2 = cuda::getStreamFromPool();
  const int64_t n = 1 << 22;
  Tensor x = zeros({n}, TensorOptions(kFloat).device(Device("cuda")));
  cuda::deviceSynchronize();
  cuda::CUDAEvent done;
  EXPECT_TRUE(done.query());  // nothing recorded yet
  Tensor chained, total;
  {
    cuda::CUDAStreamGuard guard(s1);
    chained = slowChain(add(x, 1.0), 200);
    done.record(s1);
  }
  {
    cuda::CUDAStreamGuard guard(s2);
    done.block(s2);
    total = sum(chained);
  }
  s2.synchronize();
  EXPECT_NEAR(item(to(total, Device("cpu"))).toDouble(),
              n * std::pow(1.0001, 200), n * 1e-3);
}

// cuBLAS on two streams at once: each stream has its own workspace, so
// concurrent products do not overwrite each other's.
TEST_F(CudaStreams, MatrixProductsOnTwoStreamsAtOnce) {
  const TensorOptions cpu = TensorOptions(kFloat);
  Tensor a = rand({512, 512}, cpu), b = rand({512, 512}, cpu);
  const Tensor want = mm(a, b);
  Tensor da = to(a, Device("cuda")), db = to(b, Device("cuda"));
  cuda::deviceSynchronize();
  Tensor got[2];
  const cuda::CUDAStream streams[2] = {cuda::getStreamFromPool(),
                                       cuda::getStreamFromPool()};
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 2; ++i) {
      cuda::CUDAStreamGuard guard(streams[i]);
      got[i] = mm(da, db);
    }
  }
  for (int i = 0; i < 2; ++i) {
    streams[i].synchronize();
    const Tensor diff = sub(to(got[i], Device("cpu")), want);
    EXPECT_LT(item(amax(abs(diff))).toDouble(), 1e-3) << "stream " << i;
  }
}

TEST_F(CudaStreams, EventTimingNeedsEnableTiming) {
  const cuda::CUDAStream s = cuda::getCurrentCUDAStream();
  cuda::CUDAEvent a(/*enable_timing=*/true), b(/*enable_timing=*/true);
  cuda::CUDAEvent untimed;
  a.record(s);
  slowChain(onesOnCuda(1 << 20), 20);
  b.record(s);
  untimed.record(s);
  b.synchronize();
  EXPECT_GT(a.elapsedTime(b), 0.0f);
  EXPECT_THAT(errorOf([&] { untimed.elapsedTime(b); }),
              ::testing::HasSubstr("enable_timing=True"));
  cuda::CUDAEvent moved = std::move(a);
  EXPECT_TRUE(moved.wasRecorded());
  EXPECT_FALSE(a.isCreated());  // NOLINT(bugprone-use-after-move)
}

TEST_F(CudaStreams, FreedBlocksAreReusedOnlyOnTheirStream) {
  cuda::emptyCache();
  const cuda::CUDAStream s = cuda::getStreamFromPool();
  void* on_s;
  {
    cuda::CUDAStreamGuard guard(s);
    DataPtr p = cuda::cachingAllocator()->allocate(1 << 16);
    on_s = p.get();
    EXPECT_EQ(cuda::blockStream(p), s);
  }
  DataPtr other = cuda::cachingAllocator()->allocate(1 << 16);  // default
  EXPECT_NE(other.get(), on_s);
  cuda::CUDAStreamGuard guard(s);
  DataPtr again = cuda::cachingAllocator()->allocate(1 << 16);
  EXPECT_EQ(again.get(), on_s);
}

TEST_F(CudaStreams, RecordStreamDefersReuseUntilTheStreamIsDone) {
  cuda::emptyCache();
  const cuda::CUDAStream s = cuda::getStreamFromPool();
  Tensor big = onesOnCuda(1 << 24);
  void* freed;
  {
    Tensor x = onesOnCuda(1 << 18);  // 1 MiB of the default stream
    freed = x.data_ptr();
    cuda::deviceSynchronize();
    {
      cuda::CUDAStreamGuard guard(s);
      add(x, 1.0);
      slowChain(big, 300);
    }
    cuda::recordStream(x.storage().unsafeGetStorageImpl()->data_ptr(), s);
  }
  EXPECT_EQ(cuda::cachingAllocatorStats().pending_bytes,
            cuda::roundAllocationSize(size_t{1} << 20));
  s.synchronize();
  Tensor y = onesOnCuda(1 << 18);
  EXPECT_EQ(y.data_ptr(), freed);
  EXPECT_EQ(cuda::cachingAllocatorStats().pending_bytes, 0u);
}

TEST_F(CudaStreams, RecordStreamRefusesForeignMemory) {
  DataPtr foreign(reinterpret_cast<void*>(0x1000), Device("cuda:0"));
  EXPECT_THAT(
      errorOf([&] { cuda::recordStream(foreign, cuda::getStreamFromPool()); }),
      ::testing::HasSubstr("not allocated by turnout's CUDA caching"));
}

}  // namespace
}  // namespace turnout
