// Tests of the operators along one dimension (kernels/dim_ops.h) through the
// C++ front end: cumsum/cumprod, max/min, sort, topk, var/std: values,
// dtypes, NaN and ties, non-contiguous and 0-dim inputs, Meta shapes,
// errors, and gradients.
#include "kernels/dim_ops.h"

#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "dispatcher/core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/elementwise.h"
#include "kernels/reduce.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using namespace ::turnout::testing;  // NOLINT
using V = std::vector<double>;
const double kNan = std::numeric_limits<double>::quiet_NaN();

TEST(DimOps, Cumulative) {
  const Tensor x = tensorOf({1, 2, 3, 4, 5, 6}, {2, 3}, ScalarType::Int);
  EXPECT_EQ(cumsum(x, 1).scalar_type(), ScalarType::Long);
  EXPECT_EQ(valuesOf(cumsum(x, 1)), (V{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(valuesOf(cumsum(x, 0)), (V{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(valuesOf(cumprod(transposed(x, 0, 1), 0)), (V{1, 4, 2, 20, 6, 120}));
  EXPECT_EQ(cumsum(x, -1, ScalarType::Double).scalar_type(), ScalarType::Double);
  EXPECT_EQ(valuesOf(cumsum(stridedCopy(x), 1)), (V{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(valuesOf(cumsum(tensorOf({7}, {}), 0)), (V{7}));
  Tensor y = tensorOf({1, 2, 3}, {3});
  cumprod_(y, 0);
  EXPECT_EQ(valuesOf(y), (V{1, 2, 6}));
  EXPECT_THAT(errorOf([&] { cumsum_(y, 0, ScalarType::Double); }),
              HasSubstr("Bad in-place call"));
  EXPECT_THAT(errorOf([&] { cumsum(y, 1); }), HasSubstr("Dimension out of range"));
  EXPECT_EQ(sizesOf(cumsum(metaTensor({2, 3}), 1)), (std::vector<int64_t>{2, 3}));
}

TEST(DimOps, MaxMin) {
  const Tensor x = tensorOf({1, 3, 3, kNan, 2, 2, -1, -1}, {2, 4});
  Tensor v, i;
  std::tie(v, i) = max(x, 1);
  EXPECT_TRUE(std::isnan(valuesOf(v)[0]));
  EXPECT_EQ(valuesOf(i), (V{3, 0}));  // the first NaN; the first of ties
  std::tie(v, i) = min(x, 1, /*keepdim=*/true);
  EXPECT_EQ(sizesOf(v), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(valuesOf(i)[1], 2);
  EXPECT_EQ(valuesOf(max(tensorOf({1, 5, 2}, {3}, ScalarType::Long))), (V{5}));
  EXPECT_EQ(valuesOf(min(transposed(tensorOf({4, 3, 2, 1}, {2, 2}), 0, 1))),
            (V{1}));
  EXPECT_THAT(errorOf([] { max(emptyTensor({0}, ScalarType::Float, cpu())); }),
              HasSubstr("Expected reduction dim to be specified"));
  EXPECT_THAT(errorOf([] { max(emptyTensor({0, 3}, ScalarType::Float, cpu()), 0); }),
              HasSubstr("Expected reduction dim 0 to have non-zero size"));
  std::tie(v, i) = max(metaTensor({3, 4}), 0);
  EXPECT_EQ(v.device(), meta());
  EXPECT_EQ(i.scalar_type(), ScalarType::Long);
}

TEST(DimOps, SortAndTopk) {
  const Tensor x = tensorOf({3, kNan, 1, 2, 1}, {5});
  Tensor v, i;
  std::tie(v, i) = sort(x);
  EXPECT_EQ(valuesOf(i), (V{2, 4, 3, 0, 1}));  // stable; NaN last
  std::tie(v, i) = sort(x, 0, /*descending=*/true);
  EXPECT_EQ(valuesOf(i), (V{1, 0, 3, 2, 4}));  // NaN first
  std::tie(v, i) = topk(tensorOf({5, 9, 1, 7}, {2, 2}), 1, 0);
  EXPECT_EQ(valuesOf(v), (V{5, 9}));
  std::tie(v, i) = topk(tensorOf({5, 9, 1, 7}, {4}), 2, -1, /*largest=*/false);
  EXPECT_EQ(valuesOf(v), (V{1, 5}));
  EXPECT_EQ(valuesOf(i), (V{2, 0}));
  EXPECT_THAT(errorOf([] { topk(tensorOf({1, 2}, {2}), 3); }),
              HasSubstr("selected index k out of range"));
}

TEST(DimOps, VarStd) {
  const Tensor x = tensorOf({1, 2, 3, 5}, {2, 2}, ScalarType::Double);
  EXPECT_EQ(valuesOf(var(x, {1}, 0)), (V{0.25, 1.0}));
  EXPECT_NEAR(valuesOf(std(x, {}))[0], std::sqrt(8.75 / 3), 1e-12);
  EXPECT_TRUE(std::isnan(valuesOf(var(tensorOf({1}, {1}), {}))[0]));
  EXPECT_THAT(errorOf([] { var(tensorOf({1, 2}, {2}, ScalarType::Long), {}); }),
              HasSubstr("std and var only support floating point"));
}

TEST(DimOps, Gradients) {
  const Tensor x = tensorOf({2, 0, 3, 1, 4, 5}, {2, 3}, ScalarType::Double);
  x.requires_grad_(true);
  Tensor v, i;
  std::tie(v, i) = max(x, 1);
  add(sum(cumprod(x, 1)), sum(v)).backward();
  // cumprod rows [2, 0, 3] and [1, 4, 5]: d/dx_k of sum_j prod_{i<=j}.
  EXPECT_EQ(valuesOf(x.grad()), (V{1, 2 + 6, 0 + 1, 1 + 4 + 20, 1 + 5, 4 + 1}));
  // (max adds 1 at each row's maximum, the last column)
}

}  // namespace
}  // namespace turnout
