// Runs everywhere: with turnout's CUDA kernels linked and no GPU, creating
// or copying to a CUDA tensor fails with an error that says there is no
// device; without the CUDA kernels (no nvcc), it fails in the dispatcher or
// the allocator registry naming CUDA. Never a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dispatcher/core/error.h"
#include "kernels/ops.h"
#include "tests/error_of.h"

#ifdef TURNOUT_TEST_CUDA_LINKED
#include "kernels/cuda/cuda_utils.h"
#endif

namespace turnout {
namespace {

using ::testing::HasSubstr;
using testing::errorOf;

bool haveDevice() {
#ifdef TURNOUT_TEST_CUDA_LINKED
  return cuda::cudaDeviceCount() > 0;
#else
  return false;
#endif
}

TEST(CudaNoDevice, EmptyOnCudaSaysWhy) {
  if (haveDevice()) GTEST_SKIP() << "a CUDA device is present";
  const std::string error = errorOf(
      [] { empty({2, 3}, TensorOptions(kFloat).device(Device("cuda"))); });
#ifdef TURNOUT_TEST_CUDA_LINKED
  EXPECT_THAT(error, HasSubstr("no CUDA device is available"));
  EXPECT_THAT(error, HasSubstr("Create the tensor on the CPU instead"));
#else
  EXPECT_THAT(error, HasSubstr("CUDA"));
#endif
}

TEST(CudaNoDevice, ToCudaSaysWhyAndLeavesTheSourceAlone) {
  if (haveDevice()) GTEST_SKIP() << "a CUDA device is present";
  Tensor x = ones({4});
  const std::string error = errorOf([&] { to(x, Device("cuda:0")); });
#ifdef TURNOUT_TEST_CUDA_LINKED
  EXPECT_THAT(error, HasSubstr("no CUDA device is available"));
#else
  EXPECT_THAT(error, HasSubstr("CUDA"));
#endif
  EXPECT_EQ(sum(x).item<float>(), 4.0f);
}

TEST(CudaNoDevice, ZerosOnCudaSaysWhy) {
  if (haveDevice()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_THAT(errorOf([] { zeros({3}, Device("cuda")); }), HasSubstr("CUDA"));
}

#ifdef TURNOUT_TEST_CUDA_LINKED
TEST(CudaNoDevice, DeviceCountNeverThrows) {
  EXPECT_GE(cuda::cudaDeviceCount(), 0);
}
#endif

}  // namespace
}  // namespace turnout
