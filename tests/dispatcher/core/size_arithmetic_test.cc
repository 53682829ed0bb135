#include "dispatcher/core/size_arithmetic.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "dispatcher/core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using Dims = std::vector<int64_t>;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t k31 = int64_t{1} << 31;
constexpr int64_t k62 = int64_t{1} << 62;

TEST(SizeArithmetic, NumelFitsOrOverflowsAsPyTorchDecides) {
  struct Case {
    Dims sizes;
    bool fits;
    int64_t numel;
  };
  const std::vector<Case> cases = {
      {{}, true, 1},
      {{2, 3}, true, 6},
      {{k31, k31}, true, k62},
      {{kMax}, true, kMax},
      {{k31, k31, k31}, false, 0},
      {{k62, 2}, false, 0},  // 2^63 does not fit int64
      {{k62, 4}, false, 0},
      // A zero first keeps every partial product at 0; a zero last comes
      // too late (torch.empty(2**62, 2**62, 0) fails too).
      {{0, k62, k62}, true, 0},
      {{k62, k62, 0}, false, 0},
      {{kMax, 0}, true, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.sizes));
    int64_t numel = -1;
    EXPECT_EQ(tryNumel(c.sizes, &numel), c.fits);
    if (c.fits) {
      EXPECT_EQ(numel, c.numel);
      EXPECT_EQ(checkedNumel(c.sizes, "op"), c.numel);
    } else {
      try {
        checkedNumel(c.sizes, "empty");
        ADD_FAILURE() << "no error";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
        EXPECT_THAT(e.message(),
                    HasSubstr("empty(): the number of elements of sizes ["));
        EXPECT_THAT(e.message(), HasSubstr("] overflows int64"));
      }
    }
  }
}

TEST(SizeArithmetic, StorageBytes) {
  struct Case {
    Dims sizes;
    Dims strides;
    int64_t offset;
    size_t itemsize;
    bool fits;
    int64_t bytes;
  };
  const std::vector<Case> cases = {
      {{2, 3}, {3, 1}, 0, 4, true, 24},
      {{2, 3}, {3, 1}, 5, 4, true, 44},
      {{2, 3}, {0, 0}, 0, 8, true, 8},  // expanded: one element
      {{}, {}, 0, 4, true, 4},
      {{0, 5}, {kMax, kMax}, 0, 4, true, 0},  // no element
      {{3}, {k62}, 0, 1, false, 0},           // torch: overflowed
      {{k62}, {1}, 0, 4, false, 0},
      {{k62}, {1}, 0, 1, true, k62},
      {{2}, {1}, kMax, 1, false, 0},  // the offset
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.sizes) + " " +
                 ::testing::PrintToString(c.strides));
    int64_t bytes = -1;
    EXPECT_EQ(tryStorageBytes(c.sizes, c.strides, c.offset, c.itemsize, &bytes),
              c.fits);
    if (c.fits) {
      EXPECT_EQ(bytes, c.bytes);
    } else {
      try {
        checkedStorageBytes(c.sizes, c.strides, c.offset, c.itemsize,
                            "empty_strided");
        ADD_FAILURE() << "no error";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
        EXPECT_THAT(e.message(), HasSubstr("empty_strided(): the storage for "
                                           "sizes ["));
        EXPECT_THAT(e.message(), HasSubstr("overflows int64 bytes"));
      }
    }
  }
}

TEST(SizeArithmetic, SaturatingMul) {
  EXPECT_EQ(saturatingMul(3, 4), 12);
  EXPECT_EQ(saturatingMul(k62, 2), kMax);
  EXPECT_EQ(saturatingMul(k62, k62), kMax);
  EXPECT_EQ(saturatingMul(0, kMax), 0);
}

}  // namespace
}  // namespace turnout
