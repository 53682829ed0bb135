// From a runtime ScalarType to a C++ element type, and conversion between
// element types with PyTorch's rules: the one dtype switch every CPU kernel
// uses (c10's AT_DISPATCH_* and c10::convert).
//
//   visitDtype(t.scalar_type(), "neg", [&](auto tag) {
//     using T = typename decltype(tag)::type;
//     T* p = static_cast<T*>(t.data_ptr());
//     p[0] = convertElement<T>(Half(1.5f));   // through float
//   });
//
// Thread safety: pure functions.
#ifndef TURNOUT_KERNELS_DTYPE_DISPATCH_H_
#define TURNOUT_KERNELS_DTYPE_DISPATCH_H_

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "dispatcher/core/scalar_type.h"

namespace turnout {

// ---- Dtype switch -----------------------------------------------------------

/// A C++ type carried as a value, for generic lambdas:
/// `using T = typename decltype(tag)::type;`.
template <class T>
struct TypeTag {
  using type = T;
};

/// Calls f(TypeTag<T>{}) with T the C++ type of `dtype` (uint8_t, int8_t,
/// int16_t, int32_t, int64_t, Half, float, double, bool, BFloat16) and
/// returns what it returns. Throws Error(NotImplemented) "\"op\" not
/// implemented for 'Undefined'" otherwise.
template <class F>
decltype(auto) visitDtype(ScalarType dtype, std::string_view op, F&& f);

/// The same for the floating dtypes only (Half, Float, Double, BFloat16):
/// what a kernel that computes in floating point instantiates. Others throw
/// NotImplemented "\"op\" not implemented for 'Long'".
template <class F>
decltype(auto) visitFloatingDtype(ScalarType dtype, std::string_view op, F&& f);

// ---- Element types and conversion -------------------------------------------

/// True for Half and BFloat16: stored in 16 bits, computed in float.
template <class T>
inline constexpr bool kIsReducedFloat =
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

/// The type a kernel computes in for elements of type T: float for the
/// 16-bit floating types, T otherwise (c10's opmath_type).
template <class T>
using OpMathType = std::conditional_t<kIsReducedFloat<T>, float, T>;

/// `value` as a `To`, as a cast to the tensor dtype converts: anything ->
/// bool is "!= 0"; Half and BFloat16 go through float; the rest is
/// static_cast (floating -> integral truncates toward zero).
template <class To, class From>
To convertElement(From value);

// Implementation details.
namespace detail {

[[noreturn]] void throwNotImplementedForDtype(std::string_view op,
                                              ScalarType dtype);

}  // namespace detail

template <class F>
decltype(auto) visitDtype(ScalarType dtype, std::string_view op, F&& f) {
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
    case ScalarType::Undefined:
      break;
  }
  detail::throwNotImplementedForDtype(op, dtype);
}

template <class F>
decltype(auto) visitFloatingDtype(ScalarType dtype, std::string_view op,
                                  F&& f) {
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
  detail::throwNotImplementedForDtype(op, dtype);
}

template <class To, class From>
inline To convertElement(From value) {
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else if constexpr (kIsReducedFloat<From>) {
    return convertElement<To>(static_cast<float>(value));
  } else if constexpr (std::is_same_v<To, bool>) {
    return value != From(0);
  } else if constexpr (kIsReducedFloat<To>) {
    return To(static_cast<float>(value));
  } else {
    return static_cast<To>(value);
  }
}

}  // namespace turnout

#endif  // TURNOUT_KERNELS_DTYPE_DISPATCH_H_
