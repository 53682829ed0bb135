// Test helpers for the reduction, softmax and linear-algebra tests: build
// tensors from values, read them back in row-major order, and make
// non-contiguous copies and transposed views.
//
//   Tensor a = tensorOf({1, 2, 3, 4}, {2, 2});            // Float
//   Tensor b = stridedCopy(a);                             // same values,
//   strides x2 EXPECT_EQ(valuesOf(transposed(a, 0, 1)), (std::vector<double>{1,
//   3, 2, 4}));
#ifndef TURNOUT_TESTS_KERNELS_REDUCE_TESTING_H_
#define TURNOUT_TESTS_KERNELS_REDUCE_TESTING_H_

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "dispatcher/tensor.h"
#include "kernels/reduce_utils.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace testing {

inline Device cpu() { return Device(DeviceType::CPU); }
inline Device meta() { return Device(DeviceType::Meta); }

/// A contiguous CPU tensor of `sizes` holding `values` (row-major),
/// converted to `dtype`.
inline Tensor tensorOf(const std::vector<double>& values, IntArrayRef sizes,
                       ScalarType dtype = ScalarType::Float) {
  Tensor t = emptyTensor(sizes, dtype, cpu());
  reduce_internal::dispatchDtype(dtype, "tensorOf", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* d = static_cast<T*>(t.data_ptr());
    for (size_t i = 0; i < values.size(); ++i) {
      d[i] = reduce_internal::convertValue<T>(values[i]);
    }
  });
  return t;
}

/// A 1-D tensor 0, 1, ..., n-1 scaled by `scale` and shifted by `shift`.
inline Tensor rangeOf(IntArrayRef sizes, ScalarType dtype = ScalarType::Float,
                      double scale = 1.0, double shift = 0.0) {
  std::vector<double> v(static_cast<size_t>(numelOf(sizes)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = shift + scale * i;
  return tensorOf(v, sizes, dtype);
}

/// The elements in row-major order, as double.
inline std::vector<double> valuesOf(const Tensor& t) {
  std::vector<double> out;
  out.reserve(t.numel());
  if (t.numel() == 0) return out;
  reduce_internal::dispatchDtype(t.scalar_type(), "valuesOf", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* d = static_cast<const T*>(t.data_ptr());
    reduce_internal::forEachOffset(
        t.sizes(), t.strides(), t.strides(), [&](int64_t o, int64_t) {
          out.push_back(reduce_internal::convertValue<double>(d[o]));
        });
  });
  return out;
}

/// The same values in a non-contiguous tensor: every element is two apart
/// in a storage twice as large (the gaps hold NaN or 99).
inline Tensor stridedCopy(const Tensor& t) {
  DimVector big(t.sizes().begin(), t.sizes().end());
  big.push_back(2);
  Tensor storage = emptyTensor(big, t.scalar_type(), cpu());
  reduce_internal::dispatchDtype(t.scalar_type(), "stridedCopy", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* d = static_cast<T*>(storage.data_ptr());
    for (int64_t i = 0; i < storage.numel(); ++i) {
      d[i] = reduce_internal::convertValue<T>(
          std::is_integral_v<T> ? 99.0 : std::nan(""));
    }
  });
  DimVector strides = contiguousStrides(t.sizes());
  for (auto& s : strides) s *= 2;
  Tensor view = makeView(storage, t.sizes(), strides, 0);
  reduce_internal::copyConvert(t, view);
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

/// A contiguous tensor holding `t` with dimensions d0 and d1 swapped, viewed
/// back: same values as `t`, transposed memory layout.
inline Tensor columnMajor(const Tensor& t, int64_t d0, int64_t d1) {
  Tensor tt = transposed(t, d0, d1);
  Tensor c = emptyTensor(tt.sizes(), t.scalar_type(), cpu());
  reduce_internal::copyConvert(tt, c);
  return transposed(c, d0, d1);
}

inline Tensor metaTensor(IntArrayRef sizes,
                         ScalarType dtype = ScalarType::Float) {
  return emptyTensor(sizes, dtype, meta());
}

inline std::vector<int64_t> sizesOf(const Tensor& t) {
  return std::vector<int64_t>(t.sizes().begin(), t.sizes().end());
}

}  // namespace testing
}  // namespace turnout

#endif  // TURNOUT_TESTS_KERNELS_REDUCE_TESTING_H_
