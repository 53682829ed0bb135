// Helpers shared by the reduction, softmax and linear-algebra kernels: a
// dtype switch, element conversion, a strided converting copy, out= resizing
// and argument checks.
//
//   return dispatchDtype(t.scalar_type(), "sum", [&](auto tag) {
//     using T = typename decltype(tag)::type;
//     return sumImpl<T>(t);
//   });
//   Tensor as_long = convertTo(t, ScalarType::Long);   // contiguous copy
//   resizeOutput(out, {2, 3}, "sum.IntList_out");
//
// Everything here works on CPU tensors (Meta tensors where said); thread
// safety: pure functions over their arguments.
#ifndef TURNOUT_KERNELS_REDUCE_UTILS_H_
#define TURNOUT_KERNELS_REDUCE_UTILS_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "dispatcher/error.h"
#include "dispatcher/scalar_type.h"
#include "dispatcher/tensor.h"
#include "kernels/parallel.h"

namespace turnout {
namespace reduce_internal {

/// Names a C++ element type: `typename decltype(tag)::type`.
template <class T>
struct TypeTag {
  using type = T;
};

/// Calls `f(TypeTag<T>{})` with T the C++ type of `dtype`. Throws
/// NotImplemented "`op`: not implemented for 'Undefined'" otherwise.
template <class F>
decltype(auto) dispatchDtype(ScalarType dtype, const char* op, F&& f) {
  switch (dtype) {
    case ScalarType::Byte:
      return f(TypeTag<uint8_t>{});
    case ScalarType::Char:
      return f(TypeTag<int8_t>{});
    case ScalarType::Short:
      return f(TypeTag<int16_t>{});
    case ScalarType::Int:
      return f(TypeTag<int32_t>{});
    case ScalarType::Long:
      return f(TypeTag<int64_t>{});
    case ScalarType::Half:
      return f(TypeTag<Half>{});
    case ScalarType::Float:
      return f(TypeTag<float>{});
    case ScalarType::Double:
      return f(TypeTag<double>{});
    case ScalarType::Bool:
      return f(TypeTag<bool>{});
    case ScalarType::BFloat16:
      return f(TypeTag<BFloat16>{});
    default:
      break;
  }
  TURNOUT_CHECK(false, ErrorKind::NotImplemented, op, ": not implemented for '",
                dtype, "'");
  return f(TypeTag<float>{});  // unreachable
}

/// The same for the floating dtypes only (Half, BFloat16, Float, Double);
/// others throw NotImplemented "`op`: not implemented for 'Long'".
template <class F>
decltype(auto) dispatchFloatingDtype(ScalarType dtype, const char* op, F&& f) {
  switch (dtype) {
    case ScalarType::Half:
      return f(TypeTag<Half>{});
    case ScalarType::Float:
      return f(TypeTag<float>{});
    case ScalarType::Double:
      return f(TypeTag<double>{});
    case ScalarType::BFloat16:
      return f(TypeTag<BFloat16>{});
    default:
      break;
  }
  TURNOUT_CHECK(false, ErrorKind::NotImplemented, op, ": not implemented for '",
                dtype, "'");
  return f(TypeTag<float>{});  // unreachable
}

/// True for Half and BFloat16: stored in 16 bits, computed in float.
template <class T>
inline constexpr bool kIsReducedFloat =
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

/// The type arithmetic on T is done in: float for Half/BFloat16, else T.
template <class T>
using OpMathType = std::conditional_t<kIsReducedFloat<T>, float, T>;

/// `v` as To, as PyTorch converts between dtypes: anything -> bool is "!= 0";
/// the 16-bit floats go through float.
template <class To, class From>
inline To convertValue(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (kIsReducedFloat<From>) {
      return static_cast<float>(v) != 0.0f;
    } else {
      return v != From(0);
    }
  } else if constexpr (kIsReducedFloat<From>) {
    return convertValue<To>(static_cast<float>(v));
  } else if constexpr (kIsReducedFloat<To>) {
    return To(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}

/// Calls `f(src_offset, dst_offset)` (in elements) for every element of a
/// tensor of `sizes`, in row-major order, walking two stride sets at once.
template <class F>
void forEachOffset(IntArrayRef sizes, IntArrayRef src_strides,
                   IntArrayRef dst_strides, F&& f) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  for (int64_t s : sizes) {
    if (s == 0) return;
  }
  if (nd == 0) {
    f(int64_t{0}, int64_t{0});
    return;
  }
  DimVector index(nd, 0);
  int64_t src = 0;
  int64_t dst = 0;
  const int64_t inner = sizes[nd - 1];
  const int64_t inner_src = src_strides[nd - 1];
  const int64_t inner_dst = dst_strides[nd - 1];
  while (true) {
    for (int64_t i = 0; i < inner; ++i) {
      f(src + i * inner_src, dst + i * inner_dst);
    }
    // Advance the outer dimensions like an odometer.
    int64_t d = nd - 2;
    for (; d >= 0; --d) {
      src += src_strides[d];
      dst += dst_strides[d];
      if (++index[d] < sizes[d]) break;
      src -= src_strides[d] * sizes[d];
      dst -= dst_strides[d] * sizes[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

/// forEachOffset, split over parallel_for's threads along the largest
/// dimension when the tensor has at least kGrainSize elements' worth of work
/// (`work_per_element` says how much each call of `f` does). `f` runs
/// concurrently on disjoint elements, so it must only write what its
/// offsets name. Elements within a chunk come in row-major order.
template <class F>
void parallelForEachOffset(IntArrayRef sizes, IntArrayRef src_strides,
                           IntArrayRef dst_strides, int64_t work_per_element,
                           F&& f);

/// Copies `src` into `dst` element by element, converting the dtype.
/// Precondition: same sizes (src may be an expanded view with zero
/// strides), both on the CPU.
void copyConvert(const Tensor& src, const Tensor& dst);

/// A new contiguous tensor holding `src` converted to `dtype` (a Meta
/// tensor of that dtype on Meta). Returns `src` itself when it is already
/// contiguous and of `dtype`.
Tensor convertTo(const Tensor& src, ScalarType dtype);

/// Gives `out` the sizes `sizes` (contiguous strides), as PyTorch's out=
/// variants do: nothing when they already match; otherwise warns when `out`
/// had elements, and grows its storage when needed (throws InvalidArgument
/// when the storage cannot be resized).
void resizeOutput(const Tensor& out, IntArrayRef sizes, const char* op);

/// Writes a freshly computed `result` into a caller's out= tensor: checks
/// the device and that `out` has `result`'s dtype ("`op`: Expected out
/// tensor to have dtype Float, but got Double instead"), resizes `out` as
/// resizeOutput does and copies. Returns `out`.
Tensor& copyToOut(const char* op, const Tensor& result, Tensor& out);

/// Throws InvalidArgument "`op`: Expected all tensors to be on the same
/// device, but found at least two devices, cpu and meta!" unless every
/// defined tensor is on `a`'s device.
void checkSameDevice(const char* op, const Tensor& a, const Tensor& b);

/// "[2, 3]".
std::string sizesToString(IntArrayRef sizes);

// Implementation details.

template <class F>
void parallelForEachOffset(IntArrayRef sizes, IntArrayRef src_strides,
                           IntArrayRef dst_strides, int64_t work_per_element,
                           F&& f) {
  int64_t numel = 1;
  size_t split = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    numel *= sizes[d];
    if (sizes[d] > sizes[split]) split = d;
  }
  const int64_t work = numel * std::max<int64_t>(work_per_element, 1);
  if (sizes.empty() || numel == 0 || work < 2 * kGrainSize ||
      get_num_threads() <= 1 || in_parallel_region() || sizes[split] < 2) {
    forEachOffset(sizes, src_strides, dst_strides, f);
    return;
  }
  const int64_t per_unit = work / sizes[split];
  const int64_t grain =
      std::max<int64_t>(kGrainSize / std::max<int64_t>(per_unit, 1), 1);
  parallel_for(0, sizes[split], grain, [&](int64_t begin, int64_t end) {
    DimVector sub(sizes.begin(), sizes.end());
    sub[split] = end - begin;
    const int64_t src0 = begin * src_strides[split];
    const int64_t dst0 = begin * dst_strides[split];
    forEachOffset(sub, src_strides, dst_strides,
                  [&](int64_t so, int64_t dof) { f(src0 + so, dst0 + dof); });
  });
}

}  // namespace reduce_internal
}  // namespace turnout

#endif  // TURNOUT_KERNELS_REDUCE_UTILS_H_
