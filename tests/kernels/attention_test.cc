// Tests of the operators of kernels/attention.cc (issue 20 item 4), called
// through the dispatcher as graphs call them: rounding division on floats
// and integers (negative operands, division by zero, unknown modes),
// logical_or's broadcasting and Meta shapes, constant_pad_nd's negative
// pads, baddbmm's broadcasting, _native_multi_head_attention's shapes and
// masks, and the zero gradients of a rounded quotient. Values are compared
// with torch 1.13 by tests/python/test_op_db_torch.py; under ASan this is
// their memory-safety test.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "dispatcher/dispatcher.h"
#include "dispatcher/operator_handle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/autograd/engine.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/reduce.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using namespace ::turnout::testing;  // NOLINT
using V = std::vector<double>;
using Mode = std::optional<std::string>;

template <class Sig>
TypedOperatorHandle<Sig> op(const char* name, const char* overload = "") {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}
using DivMode = Tensor(const Tensor&, const Tensor&, const Mode&);
using DivScalarMode = Tensor(const Tensor&, const Scalar&, const Mode&);
using Binary = Tensor(const Tensor&, const Tensor&);
using Pad = Tensor(const Tensor&, IntArrayRef, const Scalar&);
using Baddbmm = Tensor(const Tensor&, const Tensor&, const Tensor&,
                       const Scalar&, const Scalar&);
using Mha = std::tuple<Tensor, Tensor>(
    const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t,
    const Tensor&, const Tensor&, const Tensor&, const Tensor&,
    const std::optional<Tensor>&, bool, bool, std::optional<int64_t>);

TEST(Attention, DivRoundingModes) {
  const auto div = op<DivMode>("aten::div", "Tensor_mode");
  const Tensor a = tensorOf({7, -7, 7, -7, 1}, {5});
  const Tensor b = tensorOf({2, 2, -2, -2, 0.1}, {5});
  EXPECT_EQ(valuesOf(div.call(a, b, "trunc")), (V{3, -3, -3, 3, 10}));
  EXPECT_EQ(valuesOf(div.call(a, b, "floor")), (V{3, -4, -4, 3, 9}));
  const V plain = valuesOf(div.call(a, b, std::nullopt));
  EXPECT_FLOAT_EQ(plain[1], -3.5f);
  const Tensor i = tensorOf({7, -7, 7, -7}, {4}, ScalarType::Long);
  const Tensor j = tensorOf({2, 2, -2, -2}, {4}, ScalarType::Long);
  const Tensor t = div.call(i, j, "trunc");
  EXPECT_EQ(t.scalar_type(), ScalarType::Long);
  EXPECT_EQ(valuesOf(t), (V{3, -3, -3, 3}));
  EXPECT_EQ(valuesOf(div.call(i, j, "floor")), (V{3, -4, -4, 3}));
  EXPECT_EQ(div.call(i, j, std::nullopt).scalar_type(), ScalarType::Float);
  EXPECT_EQ(valuesOf(op<DivScalarMode>("aten::div", "Scalar_mode")
                         .call(i, Scalar(int64_t{-3}), "trunc")),
            (V{-2, 2, -2, 2}));
  const Tensor zero = tensorOf({0, 1, 1, 1}, {4}, ScalarType::Long);
  EXPECT_THAT(errorOf([&] { div.call(i, zero, "trunc"); }),
              HasSubstr("ZeroDivisionError"));
  EXPECT_THAT(errorOf([&] { div.call(a, b, "round"); }),
              HasSubstr("div expected rounding_mode to be one of None, "
                        "'trunc', or 'floor' but found 'round'"));
  // Meta: shapes and dtypes only.
  const Tensor m = div.call(empty({2, 3}, TensorOptions(meta())),
                            empty({3}, TensorOptions(meta())), "trunc");
  EXPECT_EQ(m.sizes(), IntArrayRef({2, 3}));
  EXPECT_TRUE(m.is_meta());
}

TEST(Attention, RoundedQuotientHasZeroGradients) {
  Tensor a = tensorOf({1.5, -2.5}, {2});
  Tensor b = tensorOf({0.5, 0.75}, {2});
  a.requires_grad_();
  b.requires_grad_();
  for (const char* mode : {"trunc", "floor"}) {
    SCOPED_TRACE(mode);
    const Tensor q = op<DivMode>("aten::div", "Tensor_mode").call(a, b, mode);
    EXPECT_TRUE(q.requires_grad());
    const autograd::variable_list grads =
        autograd::grad({sum(q)}, {Tensor()}, {a, b});
    EXPECT_EQ(valuesOf(grads[0]), (V{0, 0}));
    EXPECT_EQ(valuesOf(grads[1]), (V{0, 0}));
  }
}

TEST(Attention, LogicalOr) {
  const auto lor = op<Binary>("aten::logical_or");
  const Tensor a = tensorOf({0, 2, 0, 0, -1, 0}, {2, 3});
  const Tensor b = tensorOf({0, 1, 0}, {3}, ScalarType::Long);
  const Tensor r = lor.call(transposed(a.view({3, 2}), 0, 1), b);
  EXPECT_EQ(r.scalar_type(), ScalarType::Bool);
  EXPECT_EQ(valuesOf(r), (V{0, 1, 1, 1, 1, 0}));
  EXPECT_EQ(valuesOf(lor.call(stridedCopy(a), b)), (V{0, 1, 0, 0, 1, 0}));
  Tensor self = tensorOf({0, 0, 3}, {3}, ScalarType::Long);
  op<Tensor&(Tensor&, const Tensor&)>("aten::logical_or_").call(self, b);
  EXPECT_EQ(self.scalar_type(), ScalarType::Long);
  EXPECT_EQ(valuesOf(self), (V{0, 1, 1}));
  EXPECT_THAT(errorOf([&] { lor.call(a, tensorOf({1, 2}, {2})); }),
              HasSubstr("must match the size"));
  const Tensor m = lor.call(empty({4, 1}, TensorOptions(meta())),
                            empty({3}, TensorOptions(meta())));
  EXPECT_EQ(m.sizes(), IntArrayRef({4, 3}));
}

TEST(Attention, ConstantPadNd) {
  const auto pad = op<Pad>("aten::constant_pad_nd");
  const Tensor x = rangeOf({2, 3});  // [[0, 1, 2], [3, 4, 5]]
  EXPECT_EQ(valuesOf(pad.call(x, {1, -1}, 9)), (V{9, 0, 1, 9, 3, 4}));
  const Tensor y = pad.call(transposed(x, 0, 1), {-1, 0, 1, 0}, 7);
  EXPECT_EQ(y.sizes(), IntArrayRef({4, 1}));
  EXPECT_EQ(valuesOf(y), (V{7, 3, 4, 5}));
  const Tensor same = pad.call(x, {0, 0}, 1);
  EXPECT_FALSE(same.is_same(x));
  EXPECT_THAT(errorOf([&] { pad.call(x, {1}, 0); }),
              HasSubstr("Length of pad must be even but instead it equals 1"));
  EXPECT_THAT(errorOf([&] { pad.call(x, {1, 1, 1, 1, 1, 1}, 0); }),
              HasSubstr("Pad length is 6 while the input has 2 dimensions"));
  EXPECT_THAT(errorOf([&] { pad.call(x, {-2, -2}, 0); }),
              HasSubstr("resulted in a negative output size"));
  using PadFn = Tensor(const Tensor&, IntArrayRef, std::string_view,
                       std::optional<double>);
  EXPECT_THAT(errorOf([&] { op<PadFn>("aten::pad").call(x, {1, 1}, "reflect", std::nullopt); }),
              HasSubstr("mode \"reflect\" is not implemented by turnout"));
}

TEST(Attention, Baddbmm) {
  const auto baddbmm = op<Baddbmm>("aten::baddbmm");
  const Tensor b1 = rangeOf({2, 1, 2});        // [[0, 1]], [[2, 3]]
  const Tensor b2 = rangeOf({2, 2, 1}, ScalarType::Float, 1, 1);  // [[1], [2]], [[3], [4]]
  const Tensor self = tensorOf({10}, {1});
  EXPECT_EQ(valuesOf(baddbmm.call(self, b1, b2, 1, 1)), (V{12, 28}));
  EXPECT_EQ(valuesOf(baddbmm.call(self, b1, b2, 0.5, 2)), (V{9, 41}));
  const Tensor nan_self = tensorOf({std::nan("")}, {1});
  EXPECT_EQ(valuesOf(baddbmm.call(nan_self, b1, b2, 0, 1)), (V{2, 18}));
  EXPECT_THAT(errorOf([&] { baddbmm.call(rangeOf({3, 1, 1}), b1, b2, 1, 1); }),
              HasSubstr("cannot be broadcast to the shape of batch1 @ batch2"));
}

TEST(Attention, NativeMultiHeadAttention) {
  const auto mha = op<Mha>("aten::_native_multi_head_attention");
  const Tensor x = rangeOf({2, 3, 4}, ScalarType::Float, 0.1);
  const Tensor w = rangeOf({12, 4}, ScalarType::Float, 0.01, -0.2);
  const Tensor bias = rangeOf({12}, ScalarType::Float, 0.02);
  const Tensor pw = rangeOf({4, 4}, ScalarType::Float, 0.03, -0.1);
  const Tensor pb = rangeOf({4});
  auto [out, weights] = mha.call(x, x, x, 4, 2, w, bias, pw, pb, std::nullopt,
                                 true, true, std::nullopt);
  EXPECT_EQ(out.sizes(), IntArrayRef({2, 3, 4}));
  EXPECT_EQ(weights.sizes(), IntArrayRef({2, 3, 3}));
  const int64_t last[] = {2};
  for (double s : valuesOf(sum(weights, last))) EXPECT_NEAR(s, 1.0, 1e-5);
  // A key padding mask: masked keys get no weight; a fully masked row NaN.
  const Tensor kpm = tensorOf({0, 0, 1, 1, 1, 1}, {2, 3}, ScalarType::Bool);
  auto [out2, per_head] = mha.call(x, x, x, 4, 2, w, bias, pw, pb, kpm, true,
                                   false, 1);
  EXPECT_EQ(per_head.sizes(), IntArrayRef({2, 2, 3, 3}));
  const V ph = valuesOf(per_head);
  EXPECT_EQ(ph[2], 0.0);
  EXPECT_TRUE(std::isnan(ph[18]));
  auto [out3, none] = mha.call(x, x, x, 4, 2, w, bias, pw, pb, std::nullopt,
                               false, true, std::nullopt);
  EXPECT_FALSE(none.defined());
  EXPECT_EQ(valuesOf(out3), valuesOf(out));
  EXPECT_THAT(errorOf([&] {
                mha.call(x, x, x, 5, 2, w, bias, pw, pb, std::nullopt, true,
                         true, std::nullopt);
              }),
              HasSubstr("passed-in embed_dim 5 didn't match last dim of query 4"));
  EXPECT_THAT(errorOf([&] {
                mha.call(x, x, x, 4, 3, w, bias, pw, pb, std::nullopt, true,
                         true, std::nullopt);
              }),
              HasSubstr("must divide evenly by `num_heads`"));
  EXPECT_THAT(errorOf([&] {
                mha.call(x, x, x, 4, 2, w, bias, pw, pb, kpm, true, true,
                         std::nullopt);
              }),
              HasSubstr("Mask Type should be defined"));
  EXPECT_THAT(errorOf([&] {
                mha.call(x, x, x, 4, 2, w, bias, pw, pb, kpm, true, true, 0);
              }),
              HasSubstr("mask_type 0 is not implemented by turnout"));
  EXPECT_THAT(errorOf([&] {
                mha.call(x, rangeOf({2, 2, 4}), rangeOf({2, 2, 4}), 4, 2, w,
                         bias, pw, pb, std::nullopt, true, true, std::nullopt);
              }),
              HasSubstr("expected `query`/`key`/`value` shapes to match"));
}

}  // namespace
}  // namespace turnout
