// Loops for the copy and fill kernels, reusable by any CPU kernel: a switch
// from a runtime ScalarType to a C++ element type, element conversion with
// PyTorch's rules, and a strided walk over two tensors of one shape.
//
//   dispatchAllTypes(t.scalar_type(), "fill_", [&](auto tag) {
//     using T = decltype(tag);
//     T* p = t.data_ptr<T>();
//     ...
//   });
//   T v = convertElement<T>(Half(1.5f));    // through float for Half/BFloat16
//   forEachOffset2(sizes, dst_strides, src_strides,
//                  [&](int64_t d, int64_t s) { dst[d] = src[s]; });
//
// Thread safety: pure functions.
#ifndef TURNOUT_KERNELS_COPY_LOOPS_H_
#define TURNOUT_KERNELS_COPY_LOOPS_H_

#include <cstdint>
#include <type_traits>

#include "dispatcher/error.h"
#include "dispatcher/scalar_type.h"
#include "dispatcher/tensor_impl.h"

namespace turnout {

/// Calls `f(T{})` with T the C++ element type of `t` (uint8_t, int8_t,
/// int16_t, int32_t, int64_t, Half, float, double, bool, BFloat16). Throws
/// Type "<op>: unsupported dtype Undefined" for anything else.
template <class F>
decltype(auto) dispatchAllTypes(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case ScalarType::Byte:
      return f(uint8_t{});
    case ScalarType::Char:
      return f(int8_t{});
    case ScalarType::Short:
      return f(int16_t{});
    case ScalarType::Int:
      return f(int32_t{});
    case ScalarType::Long:
      return f(int64_t{});
    case ScalarType::Half:
      return f(Half{});
    case ScalarType::Float:
      return f(float{});
    case ScalarType::Double:
      return f(double{});
    case ScalarType::Bool:
      return f(bool{});
    case ScalarType::BFloat16:
      return f(BFloat16{});
    case ScalarType::Undefined:
      break;
  }
  TURNOUT_CHECK(false, ErrorKind::Type, op, ": unsupported dtype ", t);
  __builtin_unreachable();
}

/// True for the 16-bit storage types, which compute through float.
template <class T>
inline constexpr bool kIsReducedFloat =
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

/// `v` as a `To`, as PyTorch's copy converts: anything -> bool is "!= 0";
/// Half and BFloat16 go through float; the rest is static_cast (floating ->
/// integral truncates toward zero).
template <class To, class From>
inline To convertElement(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (kIsReducedFloat<From>) {
    return convertElement<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (kIsReducedFloat<To>) {
    return To(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}

/// Calls `body(a_offset, b_offset)` for every index of `sizes` in row-major
/// order, the offsets (in elements) being the index dotted with `a_strides`
/// and `b_strides`. The innermost dimension is a plain loop.
/// Precondition: all three have the same length.
template <class Body>
void forEachOffset2(IntArrayRef sizes, IntArrayRef a_strides,
                    IntArrayRef b_strides, Body&& body) {
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  for (int64_t s : sizes) {
    if (s == 0) return;
  }
  if (ndim == 0) {
    body(int64_t{0}, int64_t{0});
    return;
  }
  const int64_t inner = sizes[ndim - 1];
  const int64_t a_inner = a_strides[ndim - 1];
  const int64_t b_inner = b_strides[ndim - 1];
  DimVector index(ndim - 1, 0);
  int64_t a = 0;
  int64_t b = 0;
  while (true) {
    for (int64_t i = 0; i < inner; ++i) body(a + i * a_inner, b + i * b_inner);
    // Advance the outer index like an odometer, keeping the offsets current.
    int64_t d = ndim - 2;
    for (; d >= 0; --d) {
      if (++index[d] < sizes[d]) {
        a += a_strides[d];
        b += b_strides[d];
        break;
      }
      a -= (sizes[d] - 1) * a_strides[d];
      b -= (sizes[d] - 1) * b_strides[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace turnout

#endif  // TURNOUT_KERNELS_COPY_LOOPS_H_
