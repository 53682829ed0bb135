// TorchScript's `math` functions of one number: the aten:: operators scripted
// code prints for math.sqrt(x), math.exp(n), math.isnan(x), round(x),
// math.factorial(n), torch.angle(x), ... when x is a float and n an int
// (aten::sqrt.float(float a) -> float, aten::sqrt.int(int a) -> float, ...),
// with torch 1.13's schemas and results:
//   - C's semantics, not Python's: a domain error gives nan or inf
//     (math.sqrt(-1.0) is nan, math.log(0.0) is -inf), never an exception;
//   - round() rounds half to even, as Python's;
//   - angle() is pi for a number with its sign bit set (-0.0 too), else 0;
//   - factorial() of a negative number raises; one past 20 wraps around
//     int64, as torch's does.
// Registered at CompositeExplicitAutograd, as script_builtins.cc's.
//
//   graph(%x : float):
//     %r : float = aten::sqrt(%x)
//     return (%r)
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "dispatcher/core/error.h"
#include "dispatcher/library.h"

namespace turnout {
namespace {

constexpr double kPi = 3.14159265358979323846;

// One function of a double, and the name of its two overloads
// (<name>.int and <name>.float, both returning float).
struct MathFunction {
  const char* name;
  double (*fn)(double);
};

// Captureless lambdas: the std:: functions are overloaded, so their
// addresses cannot be taken directly.
constexpr MathFunction kMathFunctions[] = {
    {"acos", [](double x) { return std::acos(x); }},
    {"acosh", [](double x) { return std::acosh(x); }},
    {"angle", [](double x) { return std::signbit(x) ? kPi : 0.0; }},
    {"asin", [](double x) { return std::asin(x); }},
    {"asinh", [](double x) { return std::asinh(x); }},
    {"atan", [](double x) { return std::atan(x); }},
    {"atanh", [](double x) { return std::atanh(x); }},
    {"cos", [](double x) { return std::cos(x); }},
    {"cosh", [](double x) { return std::cosh(x); }},
    {"degrees", [](double x) { return x * (180.0 / kPi); }},
    {"erf", [](double x) { return std::erf(x); }},
    {"erfc", [](double x) { return std::erfc(x); }},
    {"exp", [](double x) { return std::exp(x); }},
    {"expm1", [](double x) { return std::expm1(x); }},
    {"fabs", [](double x) { return std::fabs(x); }},
    {"gamma", [](double x) { return std::tgamma(x); }},
    {"lgamma", [](double x) { return std::lgamma(x); }},
    {"log", [](double x) { return std::log(x); }},
    {"log10", [](double x) { return std::log10(x); }},
    {"log1p", [](double x) { return std::log1p(x); }},
    {"radians", [](double x) { return x * (kPi / 180.0); }},
    // Half to even: nearbyint under the default rounding mode.
    {"round", [](double x) { return std::nearbyint(x); }},
    {"sin", [](double x) { return std::sin(x); }},
    {"sinh", [](double x) { return std::sinh(x); }},
    {"sqrt", [](double x) { return std::sqrt(x); }},
    {"tan", [](double x) { return std::tan(x); }},
    {"tanh", [](double x) { return std::tanh(x); }},
};
constexpr size_t kNumMathFunctions =
    sizeof(kMathFunctions) / sizeof(kMathFunctions[0]);

// One unboxed kernel per table row and argument type (a template argument,
// so the call is direct: no lookup by name at call time).
template <size_t I>
double ofFloat(double a) {
  return kMathFunctions[I].fn(a);
}
template <size_t I>
double ofInt(int64_t a) {
  return kMathFunctions[I].fn(static_cast<double>(a));
}

void defineAll(Library& m) {
  for (const MathFunction& f : kMathFunctions) {
    m.def(std::string(f.name) + ".int(int a) -> float");
    m.def(std::string(f.name) + ".float(float a) -> float");
  }
}

template <size_t... I>
void implementAll(Library& m, std::index_sequence<I...>) {
  (m.impl(std::string(kMathFunctions[I].name) + ".int", TURNOUT_FN(ofInt<I>)),
   ...);
  (m.impl(std::string(kMathFunctions[I].name) + ".float",
          TURNOUT_FN(ofFloat<I>)),
   ...);
}

bool isnanFloat(double a) { return std::isnan(a); }
bool isinfFloat(double a) { return std::isinf(a); }
bool isfiniteFloat(double a) { return std::isfinite(a); }

int64_t factorialInt(int64_t a) {
  TURNOUT_CHECK(a >= 0, ErrorKind::InvalidArgument,
                "aten::factorial.int: factorial() not defined for negative "
                "values (got ",
                a, ")");
  // Unsigned, so that n > 20 wraps around as torch's int64 product does
  // (signed overflow would be undefined).
  uint64_t r = 1;
  for (int64_t i = 2; i <= a; ++i) r *= static_cast<uint64_t>(i);
  return static_cast<int64_t>(r);
}

}  // namespace
}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  turnout::defineAll(m);
  m.def("isnan.float(float a) -> bool");
  m.def("isinf.float(float a) -> bool");
  m.def("isfinite.float(float a) -> bool");
  m.def("factorial.int(int a) -> int");
}

TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  turnout::implementAll(m,
                        std::make_index_sequence<turnout::kNumMathFunctions>());
  m.impl("isnan.float", TURNOUT_FN(turnout::isnanFloat));
  m.impl("isinf.float", TURNOUT_FN(turnout::isinfFloat));
  m.impl("isfinite.float", TURNOUT_FN(turnout::isfiniteFloat));
  m.impl("factorial.int", TURNOUT_FN(turnout::factorialInt));
}
