#include "dispatcher/core/scalar_type.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "dispatcher/core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

TEST(ScalarType, C10NumberingSizesAndNames) {
  struct Case {
    ScalarType type;
    int value;
    size_t size;
    const char* name;
    const char* dtype;
  };
  const std::vector<Case> cases = {
      {ScalarType::Byte, 0, 1, "Byte", "uint8"},
      {ScalarType::Char, 1, 1, "Char", "int8"},
      {ScalarType::Short, 2, 2, "Short", "int16"},
      {ScalarType::Int, 3, 4, "Int", "int32"},
      {ScalarType::Long, 4, 8, "Long", "int64"},
      {ScalarType::Half, 5, 2, "Half", "float16"},
      {ScalarType::Float, 6, 4, "Float", "float32"},
      {ScalarType::Double, 7, 8, "Double", "float64"},
      {ScalarType::Bool, 11, 1, "Bool", "bool"},
      {ScalarType::BFloat16, 15, 2, "BFloat16", "bfloat16"},
  };
  ASSERT_EQ(cases.size(), std::size(kAllScalarTypes));
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(c.name);
    EXPECT_EQ(kAllScalarTypes[i], c.type);
    EXPECT_EQ(static_cast<int>(c.type), c.value);
    EXPECT_EQ(elementSize(c.type), c.size);
    EXPECT_STREQ(toString(c.type), c.name);
    EXPECT_STREQ(dtypeName(c.type), c.dtype);
    EXPECT_TRUE(isValidScalarType(c.value));
    std::ostringstream out;
    out << c.type;
    EXPECT_EQ(out.str(), c.name);
  }
  EXPECT_STREQ(toString(ScalarType::Undefined), "Undefined");
  EXPECT_TRUE(isValidScalarType(static_cast<int>(ScalarType::Undefined)));
  for (int gap : {-1, 8, 9, 10, 12, 13, 14, 17, 100}) {
    SCOPED_TRACE(gap);
    EXPECT_FALSE(isValidScalarType(gap));
  }
  EXPECT_STREQ(toString(static_cast<ScalarType>(9)), "InvalidScalarType");
}

TEST(ScalarType, ElementSizeOfUndefinedIsAnError) {
  try {
    elementSize(ScalarType::Undefined);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_EQ(e.message(),
              "elementSize(): Undefined (16) has no element size; pass a "
              "defined dtype");
  }
}

TEST(ScalarType, ElementSizeOfAnInvalidValueIsAnError) {
  for (int value : {8, 9, 10, 12, 14, 17, 100, -1, -128}) {
    SCOPED_TRACE(value);
    try {
      elementSize(static_cast<ScalarType>(value));
      ADD_FAILURE() << "expected an error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_THAT(e.message(), ::testing::HasSubstr("has no element size"));
    }
  }
}

TEST(ScalarType, Categories) {
  struct Case {
    ScalarType type;
    bool floating;
    bool integral;
    bool integral_with_bool;
  };
  const std::vector<Case> cases = {
      {kByte, false, true, true},
      {kChar, false, true, true},
      {kShort, false, true, true},
      {kInt, false, true, true},
      {kLong, false, true, true},
      {kHalf, true, false, false},
      {kFloat, true, false, false},
      {kDouble, true, false, false},
      {kBool, false, false, true},
      {kBFloat16, true, false, false},
      {ScalarType::Undefined, false, false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(toString(c.type));
    EXPECT_EQ(isFloatingType(c.type), c.floating);
    EXPECT_EQ(isIntegralType(c.type, false), c.integral);
    EXPECT_EQ(isIntegralType(c.type, true), c.integral_with_bool);
  }
}

TEST(ScalarType, PromotionMatchesPyTorch) {
  // torch.promote_types for every pair, rows and columns in the order
  // u1 i1 i2 i4 i8 f2 f4 f8 b1 bf.
  const ScalarType order[] = {kByte, kChar,  kShort,  kInt,  kLong,
                              kHalf, kFloat, kDouble, kBool, kBFloat16};
  const char* table[] = {
      /* u1 */ "u1 i2 i2 i4 i8 f2 f4 f8 u1 bf",
      /* i1 */ "i2 i1 i2 i4 i8 f2 f4 f8 i1 bf",
      /* i2 */ "i2 i2 i2 i4 i8 f2 f4 f8 i2 bf",
      /* i4 */ "i4 i4 i4 i4 i8 f2 f4 f8 i4 bf",
      /* i8 */ "i8 i8 i8 i8 i8 f2 f4 f8 i8 bf",
      /* f2 */ "f2 f2 f2 f2 f2 f2 f4 f8 f2 f4",
      /* f4 */ "f4 f4 f4 f4 f4 f4 f4 f8 f4 f4",
      /* f8 */ "f8 f8 f8 f8 f8 f8 f8 f8 f8 f8",
      /* b1 */ "u1 i1 i2 i4 i8 f2 f4 f8 b1 bf",
      /* bf */ "bf bf bf bf bf f4 f4 f8 bf bf",
  };
  auto parse = [](const std::string& code) {
    const char* codes[] = {"u1", "i1", "i2", "i4", "i8",
                           "f2", "f4", "f8", "b1", "bf"};
    const ScalarType types[] = {kByte, kChar,  kShort,  kInt,  kLong,
                                kHalf, kFloat, kDouble, kBool, kBFloat16};
    for (int i = 0; i < 10; ++i) {
      if (code == codes[i]) return types[i];
    }
    return ScalarType::Undefined;
  };
  for (int row = 0; row < 10; ++row) {
    std::istringstream cells(table[row]);
    for (int col = 0; col < 10; ++col) {
      std::string code;
      cells >> code;
      ScalarType a = order[row];
      ScalarType b = order[col];
      SCOPED_TRACE(std::string(toString(a)) + " + " + toString(b));
      EXPECT_EQ(promoteTypes(a, b), parse(code));
      EXPECT_EQ(promoteTypes(a, b), promoteTypes(b, a));
    }
  }
  EXPECT_EQ(promoteTypes(kFloat, ScalarType::Undefined), ScalarType::Undefined);
  EXPECT_THROW(promoteTypes(kFloat, static_cast<ScalarType>(9)), Error);
}

TEST(ScalarType, CppTypeToScalarType) {
  EXPECT_EQ(CppTypeToScalarType<uint8_t>::value, kByte);
  EXPECT_EQ(CppTypeToScalarType<int8_t>::value, kChar);
  EXPECT_EQ(CppTypeToScalarType<int16_t>::value, kShort);
  EXPECT_EQ(CppTypeToScalarType<int32_t>::value, kInt);
  EXPECT_EQ(CppTypeToScalarType<int64_t>::value, kLong);
  EXPECT_EQ(CppTypeToScalarType<Half>::value, kHalf);
  EXPECT_EQ(CppTypeToScalarType<float>::value, kFloat);
  EXPECT_EQ(CppTypeToScalarType<double>::value, kDouble);
  EXPECT_EQ(CppTypeToScalarType<bool>::value, kBool);
  EXPECT_EQ(CppTypeToScalarType<BFloat16>::value, kBFloat16);
  EXPECT_EQ(CppTypeToScalarType<std::string>::value, ScalarType::Undefined);
}

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(Half, EveryBitPatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    Half h(static_cast<uint16_t>(bits), Half::FromBits{});
    float f = h;
    Half back(f);
    if (std::isnan(f)) {
      // NaNs stay NaN; the payload's top bits survive, the quiet bit is set.
      EXPECT_TRUE(std::isnan(static_cast<float>(back))) << bits;
      EXPECT_EQ(back.x & 0x8000, bits & 0x8000) << bits;
    } else {
      ASSERT_EQ(back.x, bits) << "bits " << bits << " float " << f;
    }
  }
}

TEST(Half, RoundsToNearestEven) {
  struct Case {
    float value;
    uint16_t bits;
  };
  const float ulp_at_one = std::ldexp(1.0f, -10);
  const float min_subnormal = std::ldexp(1.0f, -24);
  const std::vector<Case> cases = {
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f, 0x3c00},
      {-2.0f, 0xc000},
      {0.5f, 0x3800},
      {65504.0f, 0x7bff},  // largest finite
      {65519.0f, 0x7bff},  // below the halfway point
      {65520.0f, 0x7c00},  // halfway to 65536: ties to even = inf
      {1e6f, 0x7c00},      // overflow
      {-1e6f, 0xfc00},
      {1.0f + ulp_at_one / 2, 0x3c00},     // tie: 1.0 is even
      {1.0f + ulp_at_one * 1.5f, 0x3c02},  // tie: rounds up to even
      {1.0f + ulp_at_one * 0.51f, 0x3c01},
      {std::ldexp(1.0f, -14), 0x0400},  // smallest normal
      {min_subnormal, 0x0001},
      {min_subnormal / 2, 0x0000},     // tie: 0 is even
      {min_subnormal * 1.5f, 0x0002},  // tie: rounds up to even
      {min_subnormal * 0.75f, 0x0001},
      {std::ldexp(1.0f, -14) - min_subnormal / 2, 0x0400},  // tie into normal
      {std::numeric_limits<float>::infinity(), 0x7c00},
      {-std::numeric_limits<float>::infinity(), 0xfc00},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.value);
    EXPECT_EQ(Half(c.value).x, c.bits);
  }
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(std::nanf("")))));
  EXPECT_FLOAT_EQ(Half(1.0f / 3), 0.333251953125f);
}

TEST(BFloat16, EveryBitPatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    BFloat16 b(static_cast<uint16_t>(bits), BFloat16::FromBits{});
    float f = b;
    EXPECT_EQ(bitsOf(f), bits << 16);
    BFloat16 back(f);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(back))) << bits;
    } else {
      ASSERT_EQ(back.x, bits) << bits;
    }
  }
}

TEST(BFloat16, RoundsToNearestEven) {
  struct Case {
    uint32_t float_bits;
    uint16_t bits;
  };
  const std::vector<Case> cases = {
      {0x3f800000, 0x3f80},  // 1.0
      {0x3f808000, 0x3f80},  // tie, 1.0 is even
      {0x3f818000, 0x3f82},  // tie, rounds up to even
      {0x3f808001, 0x3f81},  // above the tie
      {0x3f807fff, 0x3f80},  // below the tie
      {0x7f7fffff, 0x7f80},  // largest float rounds to infinity
      {0xff800000, 0xff80},  // -inf
      {0x7f800001, 0x7fc0},  // NaN with a low payload stays NaN
      {0x00000001, 0x0000},  // tiny subnormal
  };
  for (const Case& c : cases) {
    float f;
    std::memcpy(&f, &c.float_bits, 4);
    SCOPED_TRACE(c.float_bits);
    EXPECT_EQ(BFloat16(f).x, c.bits);
  }
}

TEST(Half, PrintsItsValue) {
  std::ostringstream out;
  out << Half(1.5f) << " " << BFloat16(-2.0f);
  EXPECT_EQ(out.str(), "1.5 -2");
}

}  // namespace
}  // namespace turnout
