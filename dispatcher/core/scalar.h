// Scalar: a number that is not a tensor (an `alpha`, a fill value), holding an
// int64_t, a double or a bool, as c10::Scalar.
//
//   Scalar a = 2;            // integral: type() == ScalarType::Long
//   Scalar b = 0.5;          // floating: type() == ScalarType::Double
//   a.toDouble();            // 2.0
//   b.to<int64_t>();         // 0 (truncates, as static_cast)
//   Scalar(300).to<int8_t>();  // throws: 300 does not fit in Char
//
// A value type (16 bytes): thread-safe to share, not to mutate concurrently.
#ifndef TURNOUT_DISPATCHER_CORE_SCALAR_H_
#define TURNOUT_DISPATCHER_CORE_SCALAR_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <type_traits>

#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar_type.h"

namespace turnout {

class Scalar {
 public:
  /// Integral 0.
  Scalar() : Scalar(int64_t{0}) {}

  /// Any integral type but bool: integral. Throws Error(InvalidArgument)
  /// for an unsigned value above INT64_MAX.
  template <class T, std::enable_if_t<std::is_integral<T>::value &&
                                          !std::is_same<T, bool>::value,
                                      int> = 0>
  Scalar(T value) : tag_(Tag::Int) {  // NOLINT: implicit, as c10
    if constexpr (std::is_unsigned<T>::value && sizeof(T) >= sizeof(int64_t)) {
      TURNOUT_CHECK(
          value <= static_cast<T>(std::numeric_limits<int64_t>::max()),
          ErrorKind::InvalidArgument, "Scalar(): ", value,
          " does not fit in int64_t");
    }
    v_.i = static_cast<int64_t>(value);
  }
  /// float or double: floating.
  template <class T,
            std::enable_if_t<std::is_floating_point<T>::value, int> = 0>
  Scalar(T value) : tag_(Tag::Double) {  // NOLINT
    v_.d = static_cast<double>(value);
  }
  Scalar(Half value) : Scalar(static_cast<float>(value)) {}      // NOLINT
  Scalar(BFloat16 value) : Scalar(static_cast<float>(value)) {}  // NOLINT
  /// Boolean.
  Scalar(bool value) : tag_(Tag::Bool) { v_.b = value; }  // NOLINT

  // ---- What it holds
  // ------------------------------------------------------------
  /// Holds an int64_t (or, with `include_bool`, a bool).
  bool isIntegral(bool include_bool) const {
    return tag_ == Tag::Int || (include_bool && tag_ == Tag::Bool);
  }
  bool isFloatingPoint() const { return tag_ == Tag::Double; }
  bool isBoolean() const { return tag_ == Tag::Bool; }
  /// Long, Double or Bool.
  ScalarType type() const;

  // ---- Conversion
  // -----------------------------------------------------------------
  /// The value as T, for any T with a ScalarType (uint8_t, int8_t, ...,
  /// int64_t, Half, float, double, bool, BFloat16). Floating -> integral
  /// truncates toward zero; anything -> bool is "!= 0". Throws
  /// Error(InvalidArgument) when the value does not fit in T: an integer out
  /// of range, a NaN or infinity to an integer, a finite value that
  /// overflows a floating T.
  template <class T>
  T to() const;

  int64_t toLong() const { return to<int64_t>(); }
  double toDouble() const { return to<double>(); }
  bool toBool() const { return to<bool>(); }
  uint8_t toByte() const { return to<uint8_t>(); }
  int8_t toChar() const { return to<int8_t>(); }
  int16_t toShort() const { return to<int16_t>(); }
  int32_t toInt() const { return to<int32_t>(); }
  float toFloat() const { return to<float>(); }
  Half toHalf() const { return to<Half>(); }
  BFloat16 toBFloat16() const { return to<BFloat16>(); }

  /// Same kind and same value: Scalar(1) != Scalar(1.0), and NaN != NaN.
  bool operator==(const Scalar& other) const;
  bool operator!=(const Scalar& other) const { return !(*this == other); }

  /// As Python prints the number: "3", "1.5", "1.0", "inf", "True".
  std::string str() const;

 private:
  enum class Tag : uint8_t { Int, Double, Bool };
  union Value {
    int64_t i;
    double d;
    bool b;
  };

  [[noreturn]] void throwOverflow(ScalarType target) const;

  Tag tag_;
  Value v_;
};

std::ostream& operator<<(std::ostream& out, const Scalar& s);

// Implementation details.
namespace detail {

/// Python's repr of a float: shortest text that reads back the same value,
/// with ".0" on integral values; "inf", "-inf", "nan".
std::string formatDouble(double value);

}  // namespace detail

template <class T>
T Scalar::to() const {
  constexpr ScalarType kTarget = CppTypeToScalarType<T>::value;
  static_assert(kTarget != ScalarType::Undefined,
                "Scalar::to<T>(): T must be a type with a ScalarType");
  if constexpr (std::is_same<T, bool>::value) {
    switch (tag_) {
      case Tag::Int:
        return v_.i != 0;
      case Tag::Double:
        return v_.d != 0;
      case Tag::Bool:
        return v_.b;
    }
  } else if constexpr (std::is_integral<T>::value) {
    using Limits = std::numeric_limits<T>;
    switch (tag_) {
      case Tag::Int:
        if (v_.i < static_cast<int64_t>(Limits::min()) ||
            (Limits::max() < std::numeric_limits<int64_t>::max() &&
             v_.i > static_cast<int64_t>(Limits::max()))) {
          throwOverflow(kTarget);
        }
        return static_cast<T>(v_.i);
      case Tag::Double: {
        // Truncation fits when min - 1 < value < max + 1. Both bounds are
        // exact in double except min - 1 for int64_t, which rounds to min:
        // hence the extra "== lo" (no double lies strictly between them).
        const double lo = static_cast<double>(Limits::min());
        const double hi = static_cast<double>(Limits::max()) + 1.0;
        if (!((v_.d > lo - 1.0 || v_.d == lo) && v_.d < hi)) {
          throwOverflow(kTarget);  // NaN lands here too
        }
        return static_cast<T>(v_.d);
      }
      case Tag::Bool:
        return static_cast<T>(v_.b);
    }
  } else {
    // float, double, Half, BFloat16: through double (through float for the
    // 16-bit types, as c10 converts).
    const double value = tag_ == Tag::Int    ? static_cast<double>(v_.i)
                         : tag_ == Tag::Bool ? (v_.b ? 1.0 : 0.0)
                                             : v_.d;
    T result = static_cast<T>(value);
    double back;
    if constexpr (std::is_same<T, double>::value) {
      back = result;
    } else {
      back = static_cast<float>(result);
    }
    if (std::isfinite(value) && !std::isfinite(back)) throwOverflow(kTarget);
    return result;
  }
  __builtin_unreachable();
}

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CORE_SCALAR_H_
