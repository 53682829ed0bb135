// Tests of the random operators (kernels/random.h) and of linspace and
// addmv (kernels/linspace_addmv.h): the same seed gives the same values,
// ranges and permutations, the in-place samplers' checks, Meta shapes.
#include "kernels/random.h"

#include <algorithm>
#include <vector>

#include "dispatcher/core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/generator.h"
#include "kernels/linspace_addmv.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using namespace ::turnout::testing;  // NOLINT
using V = std::vector<double>;

TEST(Random, SameSeedSameValues) {
  auto draw = [] {
    Tensor x = emptyTensor({5}, ScalarType::Float, cpu());
    normal_(x, 1.0, 2.0);
    V all = valuesOf(randint(-3, 4, {6}));
    for (double v : valuesOf(randperm(7))) all.push_back(v);
    for (double v : valuesOf(x)) all.push_back(v);
    uniform_(x, -1.0, 0.0);
    for (double v : valuesOf(x)) all.push_back(v);
    bernoulli_(x, 0.5);
    for (double v : valuesOf(x)) all.push_back(v);
    return all;
  };
  manual_seed_op(99);
  const V first = draw();
  manual_seed_op(99);
  EXPECT_EQ(draw(), first);
  manual_seed(99);  // generator.h's, the same generator
  EXPECT_EQ(draw(), first);
  manual_seed_op(100);
  EXPECT_NE(draw(), first);
}

TEST(Random, RangesAndPermutations) {
  manual_seed_op(1);
  const V ints = valuesOf(randint(-2, 3, {1000}));
  EXPECT_EQ(*std::min_element(ints.begin(), ints.end()), -2);
  EXPECT_EQ(*std::max_element(ints.begin(), ints.end()), 2);
  V perm = valuesOf(randperm(50));
  std::sort(perm.begin(), perm.end());
  for (int i = 0; i < 50; ++i) EXPECT_EQ(perm[i], i);
  EXPECT_EQ(randperm(0).numel(), 0);
  Tensor x = emptyTensor({4, 6}, ScalarType::Double, cpu());
  uniform_(slice(x, 1, 0, 6, 2), 3.0, 4.0);  // a strided view
  const V u = valuesOf(x);
  for (size_t i = 0; i < u.size(); i += 2) {
    EXPECT_GE(u[i], 3.0);
    EXPECT_LT(u[i], 4.0);
  }
  EXPECT_EQ(randint(0, 2, {2, 3}, TensorOptions().device(meta())).device(),
            meta());
}

TEST(Random, Errors) {
  Tensor x = emptyTensor({2}, ScalarType::Float, cpu());
  EXPECT_THAT(errorOf([] { randint(3, 3, {2}); }),
              HasSubstr("random_ expects 'from' to be less than 'to'"));
  EXPECT_THAT(errorOf([] { randperm(-1); }),
              HasSubstr("negative dimension -1"));
  EXPECT_THAT(errorOf([&] { normal_(x, 0.0, -1.0); }),
              HasSubstr("normal expects std >= 0.0"));
  EXPECT_THAT(errorOf([&] { uniform_(x, 2.0, 1.0); }),
              HasSubstr("uniform_ expects to return a [from, to) range"));
  EXPECT_THAT(errorOf([&] { bernoulli_(x, 2.0); }),
              HasSubstr("bernoulli_ expects p to be in [0, 1]"));
  EXPECT_THAT(
      errorOf([] { normal_(emptyTensor({2}, ScalarType::Long, cpu())); }),
      HasSubstr("not implemented for 'Long'"));
}

TEST(Random, LikeFactories) {
  // A transposed self: the result takes its strides (preserve_format), or
  // the memory format's; the values follow manual_seed.
  const Tensor x = t(emptyTensor({2, 3}, ScalarType::Double, cpu()));
  manual_seed_op(5);
  const Tensor r = rand_like(x);
  EXPECT_EQ(r.scalar_type(), ScalarType::Double);
  EXPECT_EQ(vec(r.strides()), (std::vector<int64_t>{1, 3}));
  for (double v : valuesOf(r)) {
    EXPECT_GE(v, 0.0);
    EXPECT_LT(v, 1.0);
  }
  manual_seed_op(5);
  EXPECT_EQ(valuesOf(rand_like(x)), valuesOf(r));
  const Tensor n = randn_like(x, ScalarType::Float, MemoryFormat::Contiguous);
  EXPECT_EQ(n.scalar_type(), ScalarType::Float);
  EXPECT_EQ(vec(n.strides()), (std::vector<int64_t>{2, 1}));
  const Tensor i = randint_like(x, -2, 3, ScalarType::Char);
  EXPECT_EQ(i.scalar_type(), ScalarType::Char);
  EXPECT_EQ(vec(i.strides()), (std::vector<int64_t>{1, 3}));
  for (double v : valuesOf(i)) {
    EXPECT_GE(v, -2);
    EXPECT_LE(v, 2);
  }
  const Tensor cl = randint_like(emptyTensor({2, 3, 4, 5}, ScalarType::Float,
                                             cpu()),
                                 0, 2, ScalarType::Bool,
                                 MemoryFormat::ChannelsLast);
  EXPECT_EQ(vec(cl.strides()), (std::vector<int64_t>{60, 1, 15, 3}));
  EXPECT_EQ(rand_like(x, meta()).device(), meta());
}

TEST(Random, LikeFactoryErrors) {
  const Tensor l = emptyTensor({2}, ScalarType::Long, cpu());
  EXPECT_THAT(errorOf([&] { rand_like(l); }),
              HasSubstr("\"check_uniform_bounds\" not implemented for 'Long'"));
  EXPECT_THAT(errorOf([&] { randn_like(l, ScalarType::Bool); }),
              HasSubstr("\"normal_kernel_cpu\" not implemented for 'Bool'"));
  EXPECT_THAT(errorOf([&] { randint_like(l, 5, 5); }),
              HasSubstr("random_ expects 'from' to be less than 'to', but got "
                        "from=5 >= to=5"));
  EXPECT_THAT(errorOf([&] { randint_like(l, 0, 300, ScalarType::Byte); }),
              HasSubstr("to - 1 is out of bounds for unsigned char"));
  EXPECT_THAT(errorOf([&] { randint_like(l, -1, 1, ScalarType::Bool); }),
              HasSubstr("from is out of bounds for bool"));
  EXPECT_THAT(errorOf([&] { randint_like(l, 0, 70000, ScalarType::Half); }),
              HasSubstr("to - 1 is out of bounds for c10::Half"));
  EXPECT_THAT(errorOf([&] {
                randint_like(emptyTensor({3, 4}, ScalarType::Float, cpu()), 0,
                             2, {}, MemoryFormat::ChannelsLast);
              }),
              HasSubstr("channels"));
}

TEST(Linspace, ValuesAndErrors) {
  EXPECT_EQ(valuesOf(linspace(0, 1, 5)), (V{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(valuesOf(linspace(3, -1, 5, TensorOptions(ScalarType::Int))),
            (V{3, 2, 1, 0, -1}));
  EXPECT_EQ(valuesOf(linspace(2, 9, 1)), (V{2}));
  EXPECT_EQ(linspace(0, 1, 0).numel(), 0);
  EXPECT_THAT(errorOf([] { linspace(0, 1, -1); }),
              HasSubstr("number of steps must be non-negative"));
}

TEST(Addmv, ValuesAndErrors) {
  const Tensor mat = tensorOf({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor vec = tensorOf({1, 0, -1}, {3});
  EXPECT_EQ(valuesOf(addmv(tensorOf({10, 20}, {2}), mat, vec, 0.5, 2)),
            (V{5 - 4, 10 - 4}));
  EXPECT_EQ(valuesOf(addmv(tensorOf({1}, {}), columnMajor(mat, 0, 1), vec)),
            (V{-1, -1}));
  EXPECT_THAT(errorOf([&] { addmv(vec, vec, vec); }),
              HasSubstr("vector + matrix @ vector expected, got 1, 1, 1"));
  EXPECT_THAT(errorOf([&] { addmv(tensorOf({1, 2, 3}, {3}), mat, vec); }),
              HasSubstr("size mismatch, got 3, 2x3,3"));
}

}  // namespace
}  // namespace turnout
