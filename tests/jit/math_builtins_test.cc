// TorchScript's math functions of numbers (jit/runtime/math_builtins.cc) run
// from graphs as torch 1.13 prints them. The values are torch's (checked
// against torch itself by tests/python/test_jit_script_corpus.py).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/parser.h"
#include "jit/runtime/interpreter.h"
#include "tests/error_of.h"

namespace turnout {
namespace jit {
namespace {

using ::testing::HasSubstr;
using turnout::testing::errorOf;

// Runs `aten::<op>(%a)` on one input of type `type` ("int" or "float").
IValue call(const std::string& op, const std::string& type,
            const std::string& result_type, IValue a) {
  Code code(*parseIR("graph(%a : " + type + "):\n  %r : " + result_type +
                     " = aten::" + op + "(%a)\n  return (%r)\n"));
  Stack s{std::move(a)};
  code.run(s);
  return s[0];
}

double ofFloat(const std::string& op, double x) {
  return call(op, "float", "float", IValue(x)).toDouble();
}
double ofInt(const std::string& op, int64_t n) {
  return call(op, "int", "float", IValue(n)).toDouble();
}

TEST(MathBuiltins, FloatAndIntOverloadsAgree) {
  const char* ops[] = {"acos",  "asin", "atan", "cos",   "erf",  "erfc",
                       "exp",   "fabs", "sin",  "tan",   "tanh", "sinh",
                       "cosh",  "asinh", "log1p", "expm1", "lgamma",
                       "radians", "degrees", "round", "angle"};
  for (const char* op : ops) {
    SCOPED_TRACE(op);
    for (int64_t n : {0, 1}) {
      EXPECT_DOUBLE_EQ(ofInt(op, n), ofFloat(op, static_cast<double>(n)));
    }
  }
}

TEST(MathBuiltins, ValuesAreCs) {
  EXPECT_DOUBLE_EQ(ofFloat("sqrt", 2.25), 1.5);
  EXPECT_DOUBLE_EQ(ofInt("sqrt", 16), 4.0);
  EXPECT_DOUBLE_EQ(ofInt("log10", 1000), 3.0);
  EXPECT_DOUBLE_EQ(ofFloat("gamma", 5.0), 24.0);
  EXPECT_DOUBLE_EQ(ofInt("degrees", 1), 180.0 / M_PI);
  // Domain errors are nan or inf, not exceptions.
  EXPECT_TRUE(std::isnan(ofFloat("sqrt", -1.0)));
  EXPECT_EQ(ofFloat("log", 0.0), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(ofFloat("acos", 2.0)));
}

TEST(MathBuiltins, RoundHalfToEvenAndAngleBySignBit) {
  EXPECT_EQ(ofFloat("round", 2.5), 2.0);
  EXPECT_EQ(ofFloat("round", -2.5), -2.0);
  EXPECT_EQ(ofFloat("round", 3.5), 4.0);
  EXPECT_TRUE(std::signbit(ofFloat("round", -0.5)));
  EXPECT_EQ(ofFloat("angle", -0.0), M_PI);
  EXPECT_EQ(ofFloat("angle", 0.0), 0.0);
  EXPECT_EQ(ofFloat("angle", std::nan("")), 0.0);
  EXPECT_EQ(ofInt("angle", -3), M_PI);
}

TEST(MathBuiltins, Predicates) {
  const double inf = std::numeric_limits<double>::infinity();
  auto pred = [](const char* op, double x) {
    return call(op, "float", "bool", IValue(x)).toBool();
  };
  EXPECT_TRUE(pred("isnan", std::nan("")));
  EXPECT_FALSE(pred("isnan", inf));
  EXPECT_TRUE(pred("isinf", -inf));
  EXPECT_FALSE(pred("isfinite", inf));
  EXPECT_TRUE(pred("isfinite", 1.0));
}

TEST(MathBuiltins, Factorial) {
  auto factorial = [](int64_t n) {
    return call("factorial", "int", "int", IValue(n)).toInt();
  };
  EXPECT_EQ(factorial(0), 1);
  EXPECT_EQ(factorial(20), 2432902008176640000);
  EXPECT_EQ(factorial(21), -4249290049419214848);  // wraps, as torch's
  EXPECT_THAT(errorOf([&] { factorial(-3); }),
              HasSubstr("factorial() not defined for negative values (got -3)"));
}

}  // namespace
}  // namespace jit
}  // namespace turnout
