#include "dispatcher/core/scalar.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace turnout {

ScalarType Scalar::type() const {
  switch (tag_) {
    case Tag::Int:
      return ScalarType::Long;
    case Tag::Double:
      return ScalarType::Double;
    case Tag::Bool:
      return ScalarType::Bool;
  }
  TURNOUT_INTERNAL_ASSERT(false, "Scalar with tag ", static_cast<int>(tag_));
}

bool Scalar::operator==(const Scalar& other) const {
  if (tag_ != other.tag_) return false;
  switch (tag_) {
    case Tag::Int:
      return v_.i == other.v_.i;
    case Tag::Double:
      return v_.d == other.v_.d;
    case Tag::Bool:
      return v_.b == other.v_.b;
  }
  return false;
}

std::string Scalar::str() const {
  switch (tag_) {
    case Tag::Int:
      return std::to_string(v_.i);
    case Tag::Double:
      return detail::formatDouble(v_.d);
    case Tag::Bool:
      return v_.b ? "True" : "False";
  }
  return "?";
}

void Scalar::throwOverflow(ScalarType target) const {
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument, "Scalar: value ", str(),
                " cannot be converted to ", toString(target),
                " without overflow");
  __builtin_unreachable();
}

std::ostream& operator<<(std::ostream& out, const Scalar& s) {
  return out << s.str();
}

namespace detail {

std::string formatDouble(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // The shortest of %.15g .. %.17g that reads back exactly.
  char buffer[32];
  for (int precision = 15; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  std::string text = buffer;
  // Python writes 1e+16 as "1e+16" and 3 as "3.0": add ".0" only when the
  // text has neither a point nor an exponent.
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

}  // namespace detail
}  // namespace turnout
