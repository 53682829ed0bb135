#include "dispatcher/core/scalar_type.h"

#include "dispatcher/core/error.h"

namespace turnout {

bool isValidScalarType(int64_t value) {
  switch (value) {
    case static_cast<int64_t>(ScalarType::Byte):
    case static_cast<int64_t>(ScalarType::Char):
    case static_cast<int64_t>(ScalarType::Short):
    case static_cast<int64_t>(ScalarType::Int):
    case static_cast<int64_t>(ScalarType::Long):
    case static_cast<int64_t>(ScalarType::Half):
    case static_cast<int64_t>(ScalarType::Float):
    case static_cast<int64_t>(ScalarType::Double):
    case static_cast<int64_t>(ScalarType::Bool):
    case static_cast<int64_t>(ScalarType::BFloat16):
    case static_cast<int64_t>(ScalarType::Undefined):
      return true;
    default:
      return false;
  }
}

namespace detail {

void throwNoElementSize(ScalarType t) {
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument,
                "elementSize(): ", toString(t), " (", static_cast<int>(t),
                ") has no element size; pass a defined dtype");
  __builtin_unreachable();
}

}  // namespace detail

namespace {

// Rank of a floating type by range and precision; Half and BFloat16 share a
// rank because neither holds the other.
int floatRank(ScalarType t) {
  switch (t) {
    case ScalarType::Half:
    case ScalarType::BFloat16:
      return 1;
    case ScalarType::Float:
      return 2;
    default:
      return 3;  // Double
  }
}

}  // namespace

ScalarType promoteTypes(ScalarType a, ScalarType b) {
  TURNOUT_CHECK(isValidScalarType(static_cast<int64_t>(a)) &&
                    isValidScalarType(static_cast<int64_t>(b)),
                ErrorKind::InvalidArgument, "promoteTypes(): invalid dtype (",
                static_cast<int>(a), ", ", static_cast<int>(b), ")");
  if (a == b) return a;
  if (a == ScalarType::Undefined || b == ScalarType::Undefined) {
    return ScalarType::Undefined;
  }
  if (a == ScalarType::Bool) return b;
  if (b == ScalarType::Bool) return a;

  const bool a_float = isFloatingType(a);
  const bool b_float = isFloatingType(b);
  if (a_float && b_float) {
    int ra = floatRank(a);
    int rb = floatRank(b);
    if (ra == rb) return ScalarType::Float;  // Half with BFloat16
    return ra > rb ? a : b;
  }
  if (a_float) return a;
  if (b_float) return b;

  // Both integers, neither Bool. Byte is the only unsigned one: with Char it
  // needs Short to hold both ranges; with a wider signed type that type.
  if (a == ScalarType::Byte || b == ScalarType::Byte) {
    ScalarType other = a == ScalarType::Byte ? b : a;
    return other == ScalarType::Char ? ScalarType::Short : other;
  }
  // Char < Short < Int < Long, in enumerator order.
  return a > b ? a : b;
}

const char* toString(ScalarType t) {
  switch (t) {
    case ScalarType::Byte:
      return "Byte";
    case ScalarType::Char:
      return "Char";
    case ScalarType::Short:
      return "Short";
    case ScalarType::Int:
      return "Int";
    case ScalarType::Long:
      return "Long";
    case ScalarType::Half:
      return "Half";
    case ScalarType::Float:
      return "Float";
    case ScalarType::Double:
      return "Double";
    case ScalarType::Bool:
      return "Bool";
    case ScalarType::BFloat16:
      return "BFloat16";
    case ScalarType::Undefined:
      return "Undefined";
  }
  return "InvalidScalarType";
}

const char* dtypeName(ScalarType t) {
  switch (t) {
    case ScalarType::Byte:
      return "uint8";
    case ScalarType::Char:
      return "int8";
    case ScalarType::Short:
      return "int16";
    case ScalarType::Int:
      return "int32";
    case ScalarType::Long:
      return "int64";
    case ScalarType::Half:
      return "float16";
    case ScalarType::Float:
      return "float32";
    case ScalarType::Double:
      return "float64";
    case ScalarType::Bool:
      return "bool";
    case ScalarType::BFloat16:
      return "bfloat16";
    case ScalarType::Undefined:
      return "undefined";
  }
  return "invalid";
}

std::ostream& operator<<(std::ostream& out, ScalarType t) {
  return out << toString(t);
}

std::ostream& operator<<(std::ostream& out, Half h) {
  return out << static_cast<float>(h);
}

std::ostream& operator<<(std::ostream& out, BFloat16 b) {
  return out << static_cast<float>(b);
}

}  // namespace turnout
