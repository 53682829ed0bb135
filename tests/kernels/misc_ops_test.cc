// Tests of the general operators of kernels/misc_ops.cc (issue 20 item 3),
// called through the dispatcher as the graph executor calls them: values
// over non-contiguous, 0-dim and empty inputs, integer edge cases (division
// by zero, INT_MIN / -1), index bounds, Meta shapes, errors, and a few
// gradients. Under ASan this is the memory-safety test of the index walks
// (gather, scatter_add) and the reduction rows (all, any, prod); the values
// are compared with torch 1.13 by tests/python/test_op_db_torch.py.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/operator_handle.h"
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
using Sizes = std::vector<int64_t>;
const double kNan = std::numeric_limits<double>::quiet_NaN();
double kInf() { return std::numeric_limits<double>::infinity(); }

template <class Sig>
TypedOperatorHandle<Sig> op(const char* name, const char* overload = "") {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}
using Binary = Tensor(const Tensor&, const Tensor&);
using Inplace = Tensor&(Tensor&, const Tensor&);
using Unary = Tensor(const Tensor&);
using DimReduce = Tensor(const Tensor&, int64_t, bool);
using Gather = Tensor(const Tensor&, int64_t, const Tensor&, bool);
using ScatterAdd = Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&);
using Prod = Tensor(const Tensor&, std::optional<ScalarType>);
using ProdDim = Tensor(const Tensor&, int64_t, bool, std::optional<ScalarType>);

TEST(MiscOps, MaximumMinimumPropagateNan) {
  const Tensor a = tensorOf({1, kNan, 3, -2}, {2, 2});
  const Tensor b = tensorOf({2, 0}, {2});
  const V mx = valuesOf(op<Binary>("aten::maximum").call(a, b));
  EXPECT_EQ(mx[0], 2);
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_EQ(mx[2], 3);
  EXPECT_EQ(mx[3], 0);
  const Tensor i = tensorOf({5, -7}, {2}, ScalarType::Long);
  const Tensor mn = op<Binary>("aten::minimum").call(i, transposed(
      tensorOf({1, 2, 3, 4}, {2, 2}, ScalarType::Int), 0, 1));
  EXPECT_EQ(mn.scalar_type(), ScalarType::Long);
  EXPECT_EQ(valuesOf(mn), (V{1, -7, 2, -7}));
  EXPECT_THAT(errorOf([&] { op<Binary>("aten::maximum").call(a, tensorOf({1, 2, 3}, {3})); }),
              HasSubstr("must match the size"));
  EXPECT_EQ(sizesOf(op<Binary>("aten::maximum").call(metaTensor({2, 1}), metaTensor({3}))),
            (Sizes{2, 3}));
}

TEST(MiscOps, IntegerDivisionEdgeCases) {
  const auto fmod = op<Binary>("aten::fmod", "Tensor");
  const auto floordiv = op<Binary>("aten::floor_divide");
  const Tensor a = tensorOf({7, -7, 7, -7}, {4}, ScalarType::Long);
  const Tensor b = tensorOf({2, 2, -2, -2}, {4}, ScalarType::Long);
  EXPECT_EQ(valuesOf(fmod.call(a, b)), (V{1, -1, 1, -1}));       // C's %
  EXPECT_EQ(valuesOf(floordiv.call(a, b)), (V{3, -4, -4, 3}));   // Python's //
  const Tensor zero = tensorOf({1, 0, 1, 1}, {4}, ScalarType::Long);
  EXPECT_THAT(errorOf([&] { fmod.call(a, zero); }), HasSubstr("ZeroDivisionError"));
  EXPECT_THAT(errorOf([&] { floordiv.call(a, zero); }), HasSubstr("ZeroDivisionError"));
  // INT_MIN / -1 and INT_MIN % -1 wrap instead of trapping.
  const Tensor m = tensorOf({-2147483648.0}, {1}, ScalarType::Int);
  const Tensor neg1 = tensorOf({-1}, {1}, ScalarType::Int);
  EXPECT_EQ(valuesOf(floordiv.call(m, neg1)), (V{-2147483648.0}));
  EXPECT_EQ(valuesOf(fmod.call(m, neg1)), (V{0}));
  // Floats: floor of the quotient; by zero gives infinities, not an error.
  const V f = valuesOf(floordiv.call(tensorOf({7.5, -7.5, 1}, {3}), tensorOf({2, 2, 0}, {3})));
  EXPECT_EQ(f[0], 3);
  EXPECT_EQ(f[1], -4);
  EXPECT_TRUE(std::isinf(f[2]));
  EXPECT_THAT(errorOf([&] {
                op<Binary>("aten::fmod", "Tensor").call(tensorOf({1}, {1}, ScalarType::Bool),
                                                        tensorOf({1}, {1}, ScalarType::Bool));
              }),
              HasSubstr("\"fmod_cpu\" not implemented for 'Bool'"));
  // In place: a float result cannot go into an integer self, and the
  // refused call leaves self as it was.
  Tensor self = tensorOf({5, 6}, {2}, ScalarType::Long);
  EXPECT_THAT(errorOf([&] {
                op<Inplace>("aten::fmod_", "Tensor").call(self, tensorOf({1.5, 2}, {2}));
              }),
              HasSubstr("can't be cast to the desired output type Long"));
  EXPECT_EQ(valuesOf(self), (V{5, 6}));
}

TEST(MiscOps, RemainderTakesTheDivisorsSign) {
  const auto rem = op<Binary>("aten::remainder", "Tensor");
  const Tensor a = tensorOf({7, -7, 7, -7, 6}, {5}, ScalarType::Long);
  const Tensor b = tensorOf({2, 2, -2, -2, -3}, {5}, ScalarType::Long);
  EXPECT_EQ(valuesOf(rem.call(a, b)), (V{1, 1, -1, -1, 0}));  // Python's %
  const V f = valuesOf(rem.call(tensorOf({7.5, -7.5, 1, 5}, {4}),
                                tensorOf({2, 2, 0, -kInf()}, {4})));
  EXPECT_EQ(f[0], 1.5);
  EXPECT_EQ(f[1], 0.5);
  EXPECT_TRUE(std::isnan(f[2]));  // a float by zero: nan, no error
  EXPECT_EQ(f[3], -kInf());       // x % -inf, x > 0: the divisor's sign
  EXPECT_THAT(errorOf([&] { rem.call(a, tensorOf({1, 0, 1, 1, 1}, {5}, ScalarType::Long)); }),
              HasSubstr("ZeroDivisionError"));
  // INT_MIN % -1 is 0, not a trap; a uint8 tensor % -2 divides by 254 (the
  // wrapped number converts as a cast, as torch's).
  const Tensor m = tensorOf({-2147483648.0}, {1}, ScalarType::Int);
  EXPECT_EQ(valuesOf(rem.call(m, tensorOf({-1}, {1}, ScalarType::Int))), (V{0}));
  using ScalarOp = Tensor(const Tensor&, const Scalar&);
  const Tensor u = tensorOf({1, 255}, {2}, ScalarType::Byte);
  const Tensor ur = op<ScalarOp>("aten::remainder", "Scalar").call(u, Scalar(-2));
  EXPECT_EQ(ur.scalar_type(), ScalarType::Byte);
  EXPECT_EQ(valuesOf(ur), (V{1, 1}));
  EXPECT_THAT(errorOf([&] {
                rem.call(tensorOf({1}, {1}, ScalarType::Bool), tensorOf({1}, {1}, ScalarType::Bool));
              }),
              HasSubstr("\"remainder_cpu\" not implemented for 'Bool'"));
  EXPECT_EQ(sizesOf(rem.call(metaTensor({2, 1}), metaTensor({3}))), (Sizes{2, 3}));
  // `4 % x`: the Scalar promotes as a wrapped number.
  using ScalarTensor = Tensor(const Scalar&, const Tensor&);
  const Tensor r = op<ScalarTensor>("aten::remainder", "Scalar_Tensor")
                       .call(Scalar(4.5), tensorOf({2, -4}, {2}, ScalarType::Long));
  EXPECT_EQ(r.scalar_type(), ScalarType::Float);
  EXPECT_EQ(valuesOf(r), (V{0.5, -3.5}));
}

// The out= overloads of remainder and pow: a refused call leaves out as it
// was (sizes and values), an accepted one resizes it and casts into it.
TEST(MiscOps, RemainderAndPowOutCheckBeforeTheyWrite) {
  using Out = Tensor&(const Tensor&, const Tensor&, Tensor&);
  using ScalarOut = Tensor&(const Tensor&, const Scalar&, Tensor&);
  using ScalarTensorOut = Tensor&(const Scalar&, const Tensor&, Tensor&);
  const auto rem = op<Out>("aten::remainder", "Tensor_out");
  const auto pow_tt = op<Out>("aten::pow", "Tensor_Tensor_out");
  const auto pow_ts = op<ScalarOut>("aten::pow", "Tensor_Scalar_out");
  const auto pow_s = op<ScalarTensorOut>("aten::pow", "Scalar_out");
  const auto rem_st = op<ScalarTensorOut>("aten::remainder", "Scalar_Tensor_out");
  const Tensor a = tensorOf({7, -7, 5}, {3}, ScalarType::Long);
  const Tensor zero = tensorOf({2, 0, 1}, {3}, ScalarType::Long);
  Tensor out = tensorOf({1, 2}, {2}, ScalarType::Long);
  struct Refused {
    const char* what;
    std::function<void()> call;
    const char* message;
  };
  const std::vector<Refused> refused = {
      {"int by zero", [&] { rem.call(a, zero, out); }, "ZeroDivisionError"},
      {"float into int", [&] { rem.call(tensorOf({1.5}, {1}), a, out); },
       "can't be cast to the desired output type Long"},
      {"pow dtype", [&] { pow_ts.call(a, Scalar(0.5), out); },
       "Found dtype Long but expected Float"},
      {"negative int power", [&] { pow_ts.call(a, Scalar(-1), out); },
       "Integers to negative integer powers are not allowed."},
      {"pow float into int", [&] { pow_s.call(Scalar(2.5), a, out); },
       "can't be cast to the desired output type Long"},
      {"scalar by zero", [&] { rem_st.call(Scalar(3), zero, out); },
       "ZeroDivisionError"},
      {"shapes", [&] { pow_tt.call(a, tensorOf({1, 2}, {2}, ScalarType::Long), out); },
       "must match"},
  };
  for (const Refused& r : refused) {
    SCOPED_TRACE(r.what);
    EXPECT_THAT(errorOf(r.call), HasSubstr(r.message));
    EXPECT_EQ(sizesOf(out), (Sizes{2}));
    EXPECT_EQ(valuesOf(out), (V{1, 2}));
  }
  Tensor empty = tensorOf({}, {0}, ScalarType::Double);
  rem.call(a, tensorOf({2}, {1}, ScalarType::Long), empty);
  EXPECT_EQ(sizesOf(empty), (Sizes{3}));
  EXPECT_EQ(valuesOf(empty), (V{1, 1, 1}));  // into a Double out
  Tensor f = tensorOf({0, 0, 0}, {3});
  pow_ts.call(tensorOf({1, 2, 3}, {3}), Scalar(2), f);
  EXPECT_EQ(valuesOf(f), (V{1, 4, 9}));
  pow_ts.call(f, Scalar(0.5), f);  // out is self
  EXPECT_EQ(valuesOf(f), (V{1, 2, 3}));
  Tensor ones = tensorOf({}, {0}, ScalarType::Long);
  pow_s.call(Scalar(1), tensorOf({kNan, 2}, {2}), ones);  // base 1: any out
  EXPECT_EQ(valuesOf(ones), (V{1, 1}));
  Tensor m = metaTensor({0});
  pow_tt.call(metaTensor({2, 1}), metaTensor({3}), m);
  EXPECT_EQ(sizesOf(m), (Sizes{2, 3}));
}

TEST(MiscOps, PowOfIntegersAsTorchs) {
  const auto pow = op<Binary>("aten::pow", "Tensor_Tensor");
  // A negative exponent gives 0 but for a base of 1 or -1; overflow wraps.
  const Tensor a = tensorOf({-2, -1, -1, 0, 1, 3}, {6}, ScalarType::Long);
  const Tensor e = tensorOf({-3, -3, -2, -1, -5, 2}, {6}, ScalarType::Long);
  EXPECT_EQ(valuesOf(pow.call(a, e)), (V{0, -1, 1, 0, 1, 9}));
  const Tensor c = tensorOf({2, 3}, {2}, ScalarType::Char);
  EXPECT_EQ(valuesOf(pow.call(c, tensorOf({7, 7}, {2}, ScalarType::Char))), (V{-128, -117}));
  const Tensor big = tensorOf({3}, {1}, ScalarType::Long);
  EXPECT_EQ(valuesOf(pow.call(big, tensorOf({40}, {1}, ScalarType::Long))),
            (V{static_cast<double>(static_cast<int64_t>(12157665459056928801ull))}));
  EXPECT_THAT(errorOf([&] {
                pow.call(tensorOf({1}, {1}, ScalarType::Bool), tensorOf({1}, {1}, ScalarType::Bool));
              }),
              HasSubstr("\"pow\" not implemented for 'Bool'"));
  // pow_.Scalar: pow.Tensor_Scalar's checks, and self's dtype kept.
  using ScalarInplace = Tensor&(Tensor&, const Scalar&);
  const auto pow_scalar = op<ScalarInplace>("aten::pow_", "Scalar");
  Tensor self = tensorOf({2, 3}, {2}, ScalarType::Byte);
  EXPECT_THAT(errorOf([&] { pow_scalar.call(self, Scalar(int64_t{300})); }),
              HasSubstr("value cannot be converted to type uint8_t without overflow"));
  EXPECT_THAT(errorOf([&] { pow_scalar.call(self, Scalar(int64_t{-1})); }),
              HasSubstr("Integers to negative integer powers are not allowed."));
  EXPECT_THAT(errorOf([&] { pow_scalar.call(self, Scalar(0.5)); }),
              HasSubstr("Found dtype Byte but expected Float"));
  EXPECT_EQ(valuesOf(self), (V{2, 3}));
  pow_scalar.call(self, Scalar(int64_t{2}));
  EXPECT_EQ(valuesOf(self), (V{4, 9}));
}

TEST(MiscOps, BitwiseXorAndLogicalNot) {
  const Tensor a = tensorOf({5, 3, 0}, {3}, ScalarType::Long);
  const Tensor b = tensorOf({1, 3, -1}, {3}, ScalarType::Long);
  EXPECT_EQ(valuesOf(op<Binary>("aten::bitwise_xor", "Tensor").call(a, b)), (V{4, 0, -1}));
  EXPECT_EQ(valuesOf(op<Binary>("aten::__xor__", "Tensor").call(a, b)), (V{4, 0, -1}));
  EXPECT_THAT(errorOf([&] {
                op<Binary>("aten::bitwise_xor", "Tensor").call(tensorOf({1}, {1}), b);
              }),
              HasSubstr("\"bitwise_xor_cpu\" not implemented for 'Float'"));
  const Tensor n = op<Unary>("aten::logical_not").call(stridedCopy(tensorOf({0, 2, -1}, {3})));
  EXPECT_EQ(n.scalar_type(), ScalarType::Bool);
  EXPECT_EQ(valuesOf(n), (V{1, 0, 0}));
}

TEST(MiscOps, AllAnyProdRows) {
  const Tensor x = transposed(tensorOf({1, 0, 2, 3, 4, 5}, {2, 3}), 0, 1);  // [3, 2]
  const auto all_dim = op<DimReduce>("aten::all", "dim");
  const auto any_dim = op<DimReduce>("aten::any", "dim");
  EXPECT_EQ(valuesOf(all_dim.call(x, 1, false)), (V{1, 0, 1}));
  EXPECT_EQ(valuesOf(any_dim.call(x, 0, true)), (V{1, 1}));
  EXPECT_EQ(valuesOf(op<Unary>("aten::all").call(x)), (V{0}));
  EXPECT_EQ(op<Unary>("aten::any").call(tensorOf({1}, {1}, ScalarType::Byte)).scalar_type(),
            ScalarType::Byte);
  // No elements: all is true, any false, prod 1.
  const Tensor empty = emptyTensor({0, 3}, ScalarType::Float, cpu());
  EXPECT_EQ(valuesOf(all_dim.call(empty, 0, false)), (V{1, 1, 1}));
  EXPECT_EQ(valuesOf(any_dim.call(empty, 0, false)), (V{0, 0, 0}));
  EXPECT_EQ(sizesOf(any_dim.call(empty, 1, false)), (Sizes{0}));
  const auto prod_dim = op<ProdDim>("aten::prod", "dim_int");
  EXPECT_EQ(valuesOf(prod_dim.call(x, 0, false, std::nullopt)), (V{0, 60}));
  EXPECT_EQ(valuesOf(prod_dim.call(empty, 0, false, std::nullopt)), (V{1, 1, 1}));
  const Tensor p = op<Prod>("aten::prod").call(tensorOf({2, 3}, {2}, ScalarType::Int),
                                               std::nullopt);
  EXPECT_EQ(p.scalar_type(), ScalarType::Long);
  EXPECT_EQ(valuesOf(p), (V{6}));
  EXPECT_EQ(valuesOf(prod_dim.call(tensorOf({4}, {}), 0, false, std::nullopt)), (V{4}));
  EXPECT_THAT(errorOf([&] { prod_dim.call(x, 2, false, std::nullopt); }),
              HasSubstr("Dimension out of range"));
  EXPECT_EQ(sizesOf(prod_dim.call(metaTensor({2, 3, 4}), 1, true, std::nullopt)),
            (Sizes{2, 1, 4}));
}

TEST(MiscOps, GatherAndScatterAddStayInBounds) {
  const Tensor x = rangeOf({3, 4});
  const auto gather = op<Gather>("aten::gather");
  const Tensor idx = tensorOf({3, 0, 1, 1, 2, 0}, {3, 2}, ScalarType::Long);
  EXPECT_EQ(valuesOf(gather.call(x, 1, idx, false)), (V{3, 0, 5, 5, 10, 8}));
  // A transposed self: xt[i][j] = x[j][i] = 4 * j + i.
  EXPECT_EQ(valuesOf(gather.call(transposed(x, 0, 1), 0,
                                 tensorOf({3, 0, 1}, {1, 3}, ScalarType::Long), false)),
            (V{3, 4, 9}));
  for (double bad : {4.0, -1.0, 1e12}) {
    SCOPED_TRACE(bad);
    EXPECT_THAT(errorOf([&] {
                  gather.call(x, 1, tensorOf({0, bad}, {1, 2}, ScalarType::Long), false);
                }),
                HasSubstr("is out of bounds for dimension 1 with size 4"));
  }
  EXPECT_THAT(errorOf([&] { gather.call(x, 1, tensorOf({0, 1}, {2}, ScalarType::Long), false); }),
              HasSubstr("same number of dimensions"));
  EXPECT_THAT(errorOf([&] {
                gather.call(x, 1, tensorOf({0, 0, 0, 0}, {4, 1}, ScalarType::Long), false);
              }),
              HasSubstr("Size does not match at dimension 0"));
  EXPECT_THAT(errorOf([&] { gather.call(x, 1, tensorOf({0}, {1, 1}), false); }),
              HasSubstr("Expected dtype int64 for index"));
  EXPECT_EQ(sizesOf(gather.call(metaTensor({3, 4}),
                                1, metaTensor({3, 7}, ScalarType::Long), false)),
            (Sizes{3, 7}));
  const auto scatter_add = op<ScatterAdd>("aten::scatter_add");
  const Tensor s = scatter_add.call(emptyTensor({2, 3}, ScalarType::Float, cpu()).fill_(0), 1,
                                    tensorOf({0, 0, 2, 1}, {2, 2}, ScalarType::Long),
                                    tensorOf({1, 2, 3, 4, 5, 6}, {2, 3}));
  EXPECT_EQ(valuesOf(s), (V{3, 0, 0, 0, 5, 4}));
  EXPECT_THAT(errorOf([&] {
                scatter_add.call(x, 1, tensorOf({9}, {1, 1}, ScalarType::Long),
                                 tensorOf({1}, {1, 1}));
              }),
              HasSubstr("out of bounds"));
}

TEST(MiscOps, GradientsOfGatherAndProd) {
  Tensor x = tensorOf({2, 0, 3, 4}, {2, 2}).requires_grad_(true);
  const Tensor p = op<Prod>("aten::prod").call(x, std::nullopt);
  const Tensor g = op<Gather>("aten::gather")
                       .call(x, 1, tensorOf({1, 1, 0, 1}, {2, 2}, ScalarType::Long), false);
  add(mul(p, 2), sum(g)).backward();
  // prod' = product of the others (0 except at the zero: 2 * 3 * 4 = 24),
  // doubled; gather' counts how often each element was picked.
  EXPECT_EQ(valuesOf(x.grad()), (V{0, 48 + 2, 1, 1}));
}

}  // namespace
}  // namespace turnout
