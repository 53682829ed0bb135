#include "dispatcher/core/scalar.h"

#include <cmath>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace turnout {
namespace {

TEST(Scalar, KindsAndTypes) {
  struct Case {
    Scalar s;
    ScalarType type;
    bool integral;
    bool integral_with_bool;
    bool floating;
    bool boolean;
  };
  const std::vector<Case> cases = {
      {Scalar(3), kLong, true, true, false, false},
      {Scalar(int64_t{-7}), kLong, true, true, false, false},
      {Scalar(uint8_t{200}), kLong, true, true, false, false},
      {Scalar(2.5), kDouble, false, false, true, false},
      {Scalar(2.5f), kDouble, false, false, true, false},
      {Scalar(Half(1.5f)), kDouble, false, false, true, false},
      {Scalar(true), kBool, false, true, false, true},
      {Scalar(), kLong, true, true, false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.s.str());
    EXPECT_EQ(c.s.type(), c.type);
    EXPECT_EQ(c.s.isIntegral(false), c.integral);
    EXPECT_EQ(c.s.isIntegral(true), c.integral_with_bool);
    EXPECT_EQ(c.s.isFloatingPoint(), c.floating);
    EXPECT_EQ(c.s.isBoolean(), c.boolean);
  }
}

TEST(Scalar, Conversions) {
  struct Case {
    Scalar s;
    int64_t as_long;
    double as_double;
    bool as_bool;
  };
  const std::vector<Case> cases = {
      {Scalar(3), 3, 3.0, true},        {Scalar(0), 0, 0.0, false},
      {Scalar(-2), -2, -2.0, true},     {Scalar(2.75), 2, 2.75, true},
      {Scalar(-2.75), -2, -2.75, true},  // truncates toward zero
      {Scalar(0.0), 0, 0.0, false},     {Scalar(true), 1, 1.0, true},
      {Scalar(false), 0, 0.0, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.s.str());
    EXPECT_EQ(c.s.toLong(), c.as_long);
    EXPECT_EQ(c.s.to<int64_t>(), c.as_long);
    EXPECT_EQ(c.s.toDouble(), c.as_double);
    EXPECT_EQ(c.s.to<double>(), c.as_double);
    EXPECT_EQ(c.s.toBool(), c.as_bool);
    EXPECT_EQ(c.s.to<bool>(), c.as_bool);
  }
  EXPECT_EQ(Scalar(100).toByte(), 100);
  EXPECT_EQ(Scalar(-100).toChar(), -100);
  EXPECT_EQ(Scalar(30000).toShort(), 30000);
  EXPECT_EQ(Scalar(-128.9).toChar(), -128);
  EXPECT_EQ(Scalar(255.9).toByte(), 255);
  EXPECT_EQ(Scalar(-0.5).toByte(), 0);
  EXPECT_EQ(Scalar(1 << 30).toInt(), 1 << 30);
  EXPECT_EQ(Scalar(0.1).toFloat(), 0.1f);
  EXPECT_EQ(static_cast<float>(Scalar(1.5).toHalf()), 1.5f);
  EXPECT_EQ(static_cast<float>(Scalar(3).toBFloat16()), 3.0f);
  EXPECT_EQ(Scalar(-9.2233720368547758e18).toLong(),
            std::numeric_limits<int64_t>::min());
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Scalar(inf).toFloat(), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(Scalar(std::nan("")).toHalf()));
}

TEST(Scalar, OverflowIsAnError) {
  struct Case {
    const char* what;
    std::function<void()> convert;
    std::string message;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<Case> cases = {
      {"300 -> Char", [] { Scalar(300).toChar(); },
       "Scalar: value 300 cannot be converted to Char without overflow"},
      {"-1 -> Byte", [] { Scalar(-1).toByte(); },
       "Scalar: value -1 cannot be converted to Byte without overflow"},
      {"256.0 -> Byte", [] { Scalar(256.0).toByte(); },
       "Scalar: value 256.0 cannot be converted to Byte without overflow"},
      {"-129.0 -> Char", [] { Scalar(-129.0).toChar(); },
       "Scalar: value -129.0 cannot be converted to Char without overflow"},
      {"inf -> Long", [=] { Scalar(inf).toLong(); },
       "Scalar: value inf cannot be converted to Long without overflow"},
      {"nan -> Int", [] { Scalar(std::nan("")).toInt(); },
       "Scalar: value nan cannot be converted to Int without overflow"},
      {"9.3e18 -> Long", [] { Scalar(9.3e18).toLong(); },
       "Scalar: value 9.3e+18 cannot be converted to Long without overflow"},
      {"1e300 -> Float", [] { Scalar(1e300).toFloat(); },
       "Scalar: value 1e+300 cannot be converted to Float without overflow"},
      {"70000 -> Half", [] { Scalar(70000).toHalf(); },
       "Scalar: value 70000 cannot be converted to Half without overflow"},
      {"1 << 40 -> Int", [] { Scalar(int64_t{1} << 40).toInt(); },
       "Scalar: value 1099511627776 cannot be converted to Int without "
       "overflow"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    try {
      c.convert();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_EQ(e.message(), c.message);
    }
  }
  EXPECT_THROW(Scalar(std::numeric_limits<uint64_t>::max()), Error);
}

TEST(Scalar, PrintsLikePython) {
  struct Case {
    Scalar s;
    const char* text;
  };
  const std::vector<Case> cases = {
      {Scalar(3), "3"},
      {Scalar(-3), "-3"},
      {Scalar(1.5), "1.5"},
      {Scalar(1.0), "1.0"},
      {Scalar(0.1), "0.1"},
      {Scalar(1e-5), "1e-05"},
      {Scalar(true), "True"},
      {Scalar(false), "False"},
      {Scalar(-std::numeric_limits<double>::infinity()), "-inf"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(c.s.str(), c.text);
    std::ostringstream out;
    out << c.s;
    EXPECT_EQ(out.str(), c.text);
  }
}

TEST(Scalar, EqualityIsStrict) {
  EXPECT_EQ(Scalar(1), Scalar(int64_t{1}));
  EXPECT_EQ(Scalar(1.5), Scalar(1.5f));
  EXPECT_EQ(Scalar(true), Scalar(true));
  EXPECT_NE(Scalar(1), Scalar(1.0));
  EXPECT_NE(Scalar(1), Scalar(true));
  EXPECT_NE(Scalar(1), Scalar(2));
  EXPECT_NE(Scalar(std::nan("")), Scalar(std::nan("")));
}

}  // namespace
}  // namespace turnout
