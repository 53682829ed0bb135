// Helpers of the CUDA kernel tests: the same call run on CPU inputs and on
// CUDA copies of them must give the same sizes, dtype and values (NaN
// matching NaN, an infinity the same infinity; floating results within a
// tolerance for reassociated sums and libm differences), and a fixture that
// skips every test of its suite when no CUDA device is present.
//
//   class MyCudaTest : public testing::CudaTest {};
//   TEST_F(MyCudaTest, SinMatchesCpu) {
//     const Tensor x = mixed(kFloat, {3, 4});
//     expectSame("sin", [&](Device d) { return sin(on(d, x)); });
//   }
#ifndef TURNOUT_TESTS_KERNELS_CUDA_COMPARE_H_
#define TURNOUT_TESTS_KERNELS_CUDA_COMPARE_H_

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "kernels/cuda/cuda_utils.h"
#include "kernels/ops.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace testing {

/// A function of the device its inputs are built on.
using OnDevice = std::function<Tensor(Device)>;

inline Device cpuDevice() { return Device(DeviceType::CPU); }
inline Device cudaDevice() { return Device(DeviceType::CUDA, 0); }

/// Skips the test when no CUDA device is present.
class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda::cudaDeviceCount() == 0) {
      GTEST_SKIP() << "no CUDA device: the CUDA kernels are compiled and "
                      "linked but cannot run here";
    }
  }
};

/// The typed handle of operator `name` and `overload`, for the operators
/// that have no C++ front end: op<Tensor(const Tensor&)>("aten::erf").
template <class Sig>
TypedOperatorHandle<Sig> op(const char* name, const char* overload = "") {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

/// Runs `f` on the CPU and on CUDA and compares the results.
inline void expectSame(const std::string& name, const OnDevice& f,
                       double rtol = 1e-5, double atol = 1e-6) {
  SCOPED_TRACE(name);
  const Tensor expected = f(cpuDevice());
  const Tensor got = f(cudaDevice());
  ASSERT_TRUE(got.is_cuda()) << "result on " << got.device();
  EXPECT_EQ(got.sizes(), expected.sizes());
  EXPECT_EQ(got.scalar_type(), expected.scalar_type());
  const std::vector<double> want = valuesOf(expected);
  const std::vector<double> have = valuesOf(to(got, cpuDevice()));
  ASSERT_EQ(have.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(have[i])) << "element " << i;
    } else if (std::isinf(want[i])) {  // EXPECT_NEAR(inf, inf) fails
      EXPECT_EQ(have[i], want[i]) << "element " << i;
    } else {
      EXPECT_NEAR(have[i], want[i], atol + rtol * std::abs(want[i]))
          << "element " << i;
    }
  }
}

/// Inputs: a CPU tensor moved to the device, or a copy of it on the CPU, so
/// that an in-place case on the CPU does not change the CUDA case's input.
inline Tensor on(Device d, const Tensor& cpu_tensor) {
  return d.is_cpu() ? clone(cpu_tensor) : to(cpu_tensor, d);
}

/// t's values on `d` in a non-contiguous tensor: every other element of a
/// buffer twice as large, whose gaps hold NaN (t floating).
inline Tensor stridedOn(Device d, const Tensor& t) {
  DimVector big(t.sizes().begin(), t.sizes().end());
  big.push_back(2);
  const Tensor buffer =
      full(big, std::nan(""), TensorOptions(t.scalar_type()).device(d));
  DimVector strides = contiguousStrides(t.sizes());
  for (int64_t& s : strides) s *= 2;
  Tensor view = makeView(buffer, t.sizes(), strides, 0);
  copy_(view, on(d, t));
  return view;
}

/// Values of both signs (only non-negative ones for Byte, which cannot hold
/// the others).
inline Tensor mixed(ScalarType dtype, IntArrayRef sizes, double scale = 0.37,
                    double shift = -2.0) {
  return rangeOf(sizes, dtype, scale, dtype == kByte ? 0.0 : shift);
}

/// Half or BFloat16: results compared at their precision.
inline bool isReduced(ScalarType dt) {
  return dt == kHalf || dt == kBFloat16;
}

}  // namespace testing
}  // namespace turnout

#endif  // TURNOUT_TESTS_KERNELS_CUDA_COMPARE_H_
