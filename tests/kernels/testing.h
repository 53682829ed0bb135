// Test helpers for the operator tests: tensors from values, values back out,
// non-contiguous copies and transposed views. Built on the front end
// (full, to, copy_, contiguous) and makeView only, so one helper serves every
// area and no test depends on a kernel library's internals.
//
//   Tensor a = tensorOf({1, 2, 3, 4}, {2, 2});          // Float
//   Tensor b = stridedCopy(a);                           // same values, strides x2
//   EXPECT_EQ(valuesOf(transposed(a, 0, 1)), (std::vector<double>{1, 3, 2, 4}));
#ifndef TURNOUT_TESTS_KERNELS_TESTING_H_
#define TURNOUT_TESTS_KERNELS_TESTING_H_

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "dispatcher/core/tensor.h"
#include "kernels/copy.h"
#include "kernels/factory.h"
#include "kernels/shape.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace testing {

inline Device cpu() { return Device(DeviceType::CPU); }
inline Device meta() { return Device(DeviceType::Meta); }

/// A contiguous CPU tensor of `sizes` holding `values` (row-major),
/// converted to `dtype` by the copy operator.
inline Tensor tensorOf(const std::vector<double>& values, IntArrayRef sizes,
                       ScalarType dtype = ScalarType::Float) {
  Tensor d = emptyTensor(sizes, ScalarType::Double, cpu());
  for (size_t i = 0; i < values.size(); ++i) d.data_ptr<double>()[i] = values[i];
  return dtype == ScalarType::Double ? d : to(d, dtype);
}

/// A tensor of `sizes` holding shift, shift + scale, shift + 2 scale, ...
inline Tensor rangeOf(IntArrayRef sizes, ScalarType dtype = ScalarType::Float,
                      double scale = 1.0, double shift = 0.0) {
  std::vector<double> v(static_cast<size_t>(numelOf(sizes)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = shift + scale * i;
  return tensorOf(v, sizes, dtype);
}

/// The elements of a CPU tensor in row-major order, as double.
inline std::vector<double> valuesOf(const Tensor& t) {
  Tensor d = contiguous(to(t, ScalarType::Double));
  const double* p = d.numel() ? d.data_ptr<double>() : nullptr;
  return std::vector<double>(p, p + d.numel());
}

/// The same values in a non-contiguous tensor: every element is two apart
/// in a storage twice as large (the gaps hold NaN, or 99 for integers).
inline Tensor stridedCopy(const Tensor& t) {
  DimVector big(t.sizes().begin(), t.sizes().end());
  big.push_back(2);
  const bool integral = isIntegralType(t.scalar_type(), /*include_bool=*/true);
  Tensor storage = full(big, integral ? Scalar(int64_t{99}) : Scalar(std::nan("")),
                        TensorOptions(t.scalar_type()));
  DimVector strides = contiguousStrides(t.sizes());
  for (int64_t& s : strides) s *= 2;
  Tensor view = makeView(storage, t.sizes(), strides, 0);
  copy_(view, t);
  return view;
}

/// A view with dimensions d0 and d1 swapped.
inline Tensor transposed(const Tensor& t, int64_t d0, int64_t d1) {
  DimVector sizes(t.sizes().begin(), t.sizes().end());
  DimVector strides(t.strides().begin(), t.strides().end());
  std::swap(sizes[d0], sizes[d1]);
  std::swap(strides[d0], strides[d1]);
  return makeView(t, sizes, strides, t.storage_offset());
}

/// The values of `t` stored with dimensions d0 and d1 swapped in memory:
/// a transposed view of a contiguous copy of the transpose.
inline Tensor columnMajor(const Tensor& t, int64_t d0, int64_t d1) {
  return transposed(contiguous(transposed(t, d0, d1)), d0, d1);
}

inline Tensor metaTensor(IntArrayRef sizes, ScalarType dtype = ScalarType::Float) {
  return emptyTensor(sizes, dtype, meta());
}

inline std::vector<int64_t> vec(IntArrayRef a) {
  return std::vector<int64_t>(a.begin(), a.end());
}

inline std::vector<int64_t> sizesOf(const Tensor& t) { return vec(t.sizes()); }

}  // namespace testing
}  // namespace turnout

#endif  // TURNOUT_TESTS_KERNELS_TESTING_H_
