// ScalarType: the element type (dtype) of a tensor, with c10's names and
// numbering, and the 16-bit floating-point storage types Half and BFloat16.
//
//   elementSize(ScalarType::Float);                     // 4
//   promoteTypes(ScalarType::Byte, ScalarType::Char);   // Short
//   toString(ScalarType::BFloat16);                     // "BFloat16"
//   Half h(1.0f / 3);  float back = h;                  // 0.333251953125f
//   CppTypeToScalarType<int64_t>::value;                // ScalarType::Long
//
// Everything here is a pure function or a value type: thread-safe.
#ifndef TURNOUT_DISPATCHER_CORE_SCALAR_TYPE_H_
#define TURNOUT_DISPATCHER_CORE_SCALAR_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ostream>

namespace turnout {

/// A dtype. The values are c10's, so serialized dtypes and Python-side
/// integers mean the same thing; the gaps are c10's complex (8-10) and
/// quantized (12-14) types, which turnout does not have yet.
enum class ScalarType : int8_t {
  Byte = 0,       // uint8_t
  Char = 1,       // int8_t
  Short = 2,      // int16_t
  Int = 3,        // int32_t
  Long = 4,       // int64_t
  Half = 5,       // turnout::Half
  Float = 6,      // float
  Double = 7,     // double
  Bool = 11,      // bool
  BFloat16 = 15,  // turnout::BFloat16
  Undefined = 16,
};

/// The dtypes turnout supports, in enumerator order (Undefined excluded).
inline constexpr ScalarType kAllScalarTypes[] = {
    ScalarType::Byte,    ScalarType::Char,   ScalarType::Short,
    ScalarType::Int,     ScalarType::Long,   ScalarType::Half,
    ScalarType::Float,   ScalarType::Double, ScalarType::Bool,
    ScalarType::BFloat16};

// c10's short spellings.
constexpr ScalarType kByte = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;

// ---- Queries
// ------------------------------------------------------------------

/// True for the enumerators above, Undefined included. Use it before casting
/// an integer (from an IValue, from Python) to ScalarType.
bool isValidScalarType(int64_t value);

/// Bytes per element: Float -> 4. Throws Error(InvalidArgument) for
/// Undefined or an invalid value. Inline: every new tensor asks.
inline size_t elementSize(ScalarType t);

/// Half, Float, Double, BFloat16.
constexpr bool isFloatingType(ScalarType t) {
  return t == ScalarType::Half || t == ScalarType::Float ||
         t == ScalarType::Double || t == ScalarType::BFloat16;
}

/// Byte, Char, Short, Int, Long; and Bool when `include_bool`.
constexpr bool isIntegralType(ScalarType t, bool include_bool) {
  return t == ScalarType::Byte || t == ScalarType::Char ||
         t == ScalarType::Short || t == ScalarType::Int ||
         t == ScalarType::Long || (include_bool && t == ScalarType::Bool);
}

/// The dtype PyTorch computes for an operation on tensors of dtypes `a` and
/// `b`: Bool yields to anything; integers widen (Byte with a signed type
/// gives the smallest signed type holding both, so Byte + Char = Short);
/// an integer with a floating type gives the floating type; Half with
/// BFloat16 gives Float; otherwise the wider one. Undefined with anything is
/// Undefined, as in c10.
ScalarType promoteTypes(ScalarType a, ScalarType b);

// ---- Names
// --------------------------------------------------------------------

/// c10's name: "Float", "Long", "BFloat16", "Undefined"; "InvalidScalarType"
/// for a value that is not an enumerator.
const char* toString(ScalarType t);
/// The Python spelling without "torch.": "float32", "int64", "bfloat16",
/// "bool"; "undefined" for Undefined.
const char* dtypeName(ScalarType t);
std::ostream& operator<<(std::ostream& out, ScalarType t);

// ---- 16-bit floating-point storage
// ----------------------------------------------

/// IEEE 754 binary16. Converts to and from float; float -> Half rounds to
/// nearest, ties to even, overflows to infinity and keeps NaN a NaN.
struct Half {
  struct FromBits {};

  uint16_t x = 0;

  Half() = default;
  /// The Half whose bit pattern is `bits`.
  constexpr Half(uint16_t bits, FromBits) : x(bits) {}
  Half(float value);       // NOLINT: implicit, as c10::Half
  operator float() const;  // NOLINT
};

/// bfloat16: the upper half of a float. Converts to and from float; float ->
/// BFloat16 rounds to nearest, ties to even, and keeps NaN a NaN.
struct BFloat16 {
  struct FromBits {};

  uint16_t x = 0;

  BFloat16() = default;
  /// The BFloat16 whose bit pattern is `bits`.
  constexpr BFloat16(uint16_t bits, FromBits) : x(bits) {}
  BFloat16(float value);   // NOLINT: implicit, as c10::BFloat16
  operator float() const;  // NOLINT
};

std::ostream& operator<<(std::ostream& out, Half h);
std::ostream& operator<<(std::ostream& out, BFloat16 b);

// ---- C++ type <-> ScalarType
// ------------------------------------------------------

/// CppTypeToScalarType<float>::value == ScalarType::Float. Undefined for a
/// type without a dtype (so a check against it names the mismatch rather
/// than failing to compile where the type is generic).
template <class T>
struct CppTypeToScalarType {
  static constexpr ScalarType value = ScalarType::Undefined;
};

// Implementation details.
namespace detail {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

inline float floatFromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// binary32 -> binary16, round to nearest even.
inline uint16_t floatToHalfBits(float value) {
  uint32_t bits = floatBits(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  bits &= 0x7fffffffu;
  if (bits >= 0x7f800000u) {  // infinity, or NaN (forced quiet)
    return static_cast<uint16_t>(sign | 0x7c00u |
                                 (bits > 0x7f800000u ? 0x0200u : 0u));
  }
  if (bits >= 0x477ff000u) {  // >= 65520: rounds to infinity
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (bits < 0x38800000u) {  // below 2^-14: a binary16 subnormal or zero
    // Adding 0.5 puts the value where one float ulp (2^-24) is one binary16
    // subnormal ulp, so the FPU's own round-to-nearest-even does the
    // rounding; the low bits are then the binary16 pattern.
    float shifted = floatFromBits(bits) + 0.5f;
    return static_cast<uint16_t>(sign | (floatBits(shifted) - 0x3f000000u));
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped bits to
  // nearest even: add 0xfff, plus one more when the kept lsb is odd.
  const uint32_t odd = (bits >> 13) & 1u;
  bits += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + odd;
  return static_cast<uint16_t>(sign | (bits >> 13));
}

inline float halfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return floatFromBits(sign | floatBits(magnitude));
  }
  if (exponent == 0x1f) {  // infinity or NaN
    return floatFromBits(sign | 0x7f800000u | (mantissa << 13));
  }
  return floatFromBits(sign | ((exponent + (127 - 15)) << 23) |
                       (mantissa << 13));
}

inline uint16_t floatToBFloat16Bits(float value) {
  uint32_t bits = floatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    // NaN: truncation could clear every mantissa bit and make infinity.
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  }
  // Round the dropped 16 bits to nearest even. Cannot carry past infinity:
  // the largest finite float rounds up to exactly infinity, as it should.
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

inline float bfloat16BitsToFloat(uint16_t b) {
  return floatFromBits(static_cast<uint32_t>(b) << 16);
}

}  // namespace detail

inline Half::Half(float value) : x(detail::floatToHalfBits(value)) {}
inline Half::operator float() const { return detail::halfBitsToFloat(x); }
inline BFloat16::BFloat16(float value)
    : x(detail::floatToBFloat16Bits(value)) {}
inline BFloat16::operator float() const {
  return detail::bfloat16BitsToFloat(x);
}

#define TURNOUT_CPP_TYPE_TO_SCALAR_TYPE(cpp_type, scalar_type)   \
  template <>                                                    \
  struct CppTypeToScalarType<cpp_type> {                         \
    static constexpr ScalarType value = ScalarType::scalar_type; \
  };
TURNOUT_CPP_TYPE_TO_SCALAR_TYPE(uint8_t, Byte)
TURNOUT_CPP_TYPE_TO_SCALAR_TYPE(int8_t, Char)
TURNOUT_CPP_TYPE_TO_SCALAR_TYPE(int16_t, Short)
TURNOUT_CPP_TYPE_TO_SCALAR_TYPE(int32_t, Int)
TURNOUT_CPP_TYPE_TO_SCALAR_TYPE(int64_t, Long)
TURNOUT_CPP_TYPE_TO_SCALAR_TYPE(Half, Half)
TURNOUT_CPP_TYPE_TO_SCALAR_TYPE(float, Float)
TURNOUT_CPP_TYPE_TO_SCALAR_TYPE(double, Double)
TURNOUT_CPP_TYPE_TO_SCALAR_TYPE(bool, Bool)
TURNOUT_CPP_TYPE_TO_SCALAR_TYPE(BFloat16, BFloat16)
#undef TURNOUT_CPP_TYPE_TO_SCALAR_TYPE

namespace detail {
// Bytes per element, indexed by the enumerator; 0 where it names no dtype.
inline constexpr uint8_t kElementSizes[] = {1, 1, 2, 4, 8, 2, 4, 8, 0,
                                            0, 0, 1, 0, 0, 0, 2, 0};
[[noreturn]] void throwNoElementSize(ScalarType t);
}  // namespace detail

inline size_t elementSize(ScalarType t) {
  // Through uint8_t: a negative value indexes past the table's end.
  const auto i = static_cast<uint8_t>(t);
  if (__builtin_expect(
          i < sizeof(detail::kElementSizes) && detail::kElementSizes[i] != 0,
          1)) {
    return detail::kElementSizes[i];
  }
  detail::throwNoElementSize(t);
}

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CORE_SCALAR_TYPE_H_
