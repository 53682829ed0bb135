// Test helpers for the factory, shape and copy tests: tensors from values
// and values back out, through the operators under test.
#ifndef TURNOUT_TESTS_KERNELS_FACTORY_TESTING_H_
#define TURNOUT_TESTS_KERNELS_FACTORY_TESTING_H_

#include <vector>

#include "dispatcher/tensor.h"
#include "kernels/copy.h"
#include "kernels/copy_loops.h"
#include "kernels/factory.h"
#include "kernels/shape.h"

namespace turnout {
namespace testing {

/// A contiguous CPU tensor of `sizes` holding `values` converted to `dtype`.
inline Tensor tensorOf(const std::vector<double>& values, IntArrayRef sizes,
                       ScalarType dtype = kFloat) {
  Tensor t = empty(sizes, dtype);
  dispatchAllTypes(dtype, "tensorOf", [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(t.data_ptr());
    for (size_t i = 0; i < values.size(); ++i)
      p[i] = convertElement<T>(values[i]);
  });
  return t;
}

/// The elements of a CPU tensor in row-major order, as doubles.
inline std::vector<double> valuesOf(const Tensor& t) {
  Tensor d = contiguous(to(t, kDouble));
  const double* p = static_cast<const double*>(d.data_ptr());
  return std::vector<double>(p, p + d.numel());
}

inline std::vector<int64_t> vec(IntArrayRef a) {
  return std::vector<int64_t>(a.begin(), a.end());
}

}  // namespace testing
}  // namespace turnout

#endif  // TURNOUT_TESTS_KERNELS_FACTORY_TESTING_H_
