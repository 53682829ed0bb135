// Tests of the neural-network operators (kernels/nn.h) through the C++ front
// end: values against formulas computed here, Meta shapes, the errors of bad
// input, and gradients through the autograd kernels (the Python test
// test_ops_nn_torch.py and op_db compare the same operators with torch).
#include "kernels/nn.h"

#include <cmath>
#include <tuple>
#include <vector>

#include "dispatcher/core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/engine.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/random.h"
#include "kernels/reduce.h"
#include "tests/error_of.h"
#include "tests/kernels/autograd/autograd_testing.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using namespace ::turnout::testing;  // NOLINT

void expectNear(const std::vector<double>& got,
                const std::vector<double>& want, double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
  }
}

TEST(NnActivation, ValuesAgainstFormulas) {
  const std::vector<double> xs = {-2.0, -0.5, 0.0, 0.7, 3.0};
  const Tensor x = tensorOf(xs, {5}, ScalarType::Double);
  std::vector<double> gelu_ref, tanh_ref, silu_ref, elu_ref, leaky_ref,
      hardtanh_ref, softplus_ref;
  for (double v : xs) {
    gelu_ref.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
    tanh_ref.push_back(0.5 * v *
                       (1 + std::tanh(std::sqrt(2 / M_PI) *
                                      (v + 0.044715 * v * v * v))));
    silu_ref.push_back(v / (1 + std::exp(-v)));
    elu_ref.push_back(v > 0 ? 2 * v : 2 * 0.5 * (std::exp(1.5 * v) - 1));
    leaky_ref.push_back(v > 0 ? v : 0.2 * v);
    hardtanh_ref.push_back(std::min(1.0, std::max(-1.0, v)));
    softplus_ref.push_back(v * 2 > 3 ? v : std::log1p(std::exp(2 * v)) / 2);
  }
  expectNear(valuesOf(gelu(x)), gelu_ref);
  expectNear(valuesOf(gelu(x, "tanh")), tanh_ref);
  expectNear(valuesOf(silu(x)), silu_ref);
  expectNear(valuesOf(elu(x, 0.5, 2, 1.5)), elu_ref);
  expectNear(valuesOf(leaky_relu(x, 0.2)), leaky_ref);
  expectNear(valuesOf(hardtanh(x)), hardtanh_ref);
  expectNear(valuesOf(softplus(x, 2, 3)), softplus_ref);
  // In place, on a strided view.
  Tensor y = stridedCopy(x);
  silu_(y);
  expectNear(valuesOf(y), silu_ref);
  Tensor z = stridedCopy(x);
  clamp_(z, -0.5, 0.5);
  expectNear(valuesOf(z), {-0.5, -0.5, 0.0, 0.5, 0.5});
}

TEST(NnActivation, Errors) {
  const Tensor ints = tensorOf({1, 2}, {2}, ScalarType::Long);
  EXPECT_THAT(errorOf([&] { gelu(ints); }),
              HasSubstr("\"GeluKernelImpl\" not implemented for 'Long'"));
  EXPECT_THAT(errorOf([&] { gelu(tensorOf({1}, {1}), "erf"); }),
              HasSubstr("approximate argument must be either none or tanh"));
  EXPECT_THAT(errorOf([&] { hardtanh(tensorOf({1}, {1}, ScalarType::Bool)); }),
              HasSubstr("Bool inputs not supported for hardtanh"));
  EXPECT_THAT(errorOf([&] { dropout(tensorOf({1}, {1}), 1.5, true); }),
              HasSubstr("dropout probability has to be between 0 and 1"));
  // clamp_ of an integer tensor with float bounds: the result cannot be
  // written back, and self is left as it was.
  const Tensor i = tensorOf({-3, 3}, {2}, ScalarType::Long);
  EXPECT_THAT(errorOf([&] { clamp_(i, -0.5, 0.5); }),
              HasSubstr("can't be cast to the desired output type Long"));
  EXPECT_EQ(valuesOf(i), (std::vector<double>{-3, 3}));
}

TEST(NnActivation, GradientsThroughTheBackwardOperators) {
  const std::vector<double> xs = {-1.5, -0.2, 0.4, 2.0};
  Tensor x = tensorOf(xs, {4}, ScalarType::Double);
  x.requires_grad_(true);
  sum(add(add(gelu(x, "tanh"), elu(x)), leaky_relu(x, 0.1))).backward();
  std::vector<double> want;
  for (double v : xs) {
    const double u = std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v);
    const double du = std::sqrt(2 / M_PI) * (1 + 3 * 0.044715 * v * v);
    const double t = std::tanh(u);
    const double dgelu = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * du;
    const double delu = v > 0 ? 1 : std::exp(v);
    const double dleaky = v > 0 ? 1 : 0.1;
    want.push_back(dgelu + delu + dleaky);
  }
  expectNear(valuesOf(x.grad()), want, 1e-9);
}

TEST(NnActivation, ThresholdBackwardMasksPromotesAndRunsOnMeta) {
  const Tensor g = tensorOf({1, 2, 3, 4}, {4});
  const Tensor x = tensorOf({-1, 0.5, NAN, 0.25}, {4}, ScalarType::Double);
  // Zero where self <= threshold; a NaN self passes the gradient.
  const Tensor y = threshold_backward(g, x, 0.25);
  EXPECT_EQ(y.scalar_type(), ScalarType::Double);
  EXPECT_EQ(valuesOf(y), (std::vector<double>{0, 2, 3, 0}));
  // Integral: the threshold truncated, -0.5 -> 0 (0 is masked).
  const Tensor i = tensorOf({-1, 0, 1}, {3}, ScalarType::Long);
  const Tensor yi = threshold_backward(tensorOf({5, 6, 7}, {3}, ScalarType::Long),
                                       i, -0.5);
  EXPECT_EQ(yi.scalar_type(), ScalarType::Long);
  EXPECT_EQ(valuesOf(yi), (std::vector<double>{0, 0, 7}));
  const Tensor b = tensorOf({1}, {1}, ScalarType::Bool);
  EXPECT_THAT(errorOf([&] { threshold_backward(b, b, 0); }),
              HasSubstr("\"threshold_cpu\" not implemented for 'Bool'"));
  const Tensor m = threshold_backward(metaTensor({2, 3}), metaTensor({3}), 0);
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.sizes(), (IntArrayRef{2, 3}));
}

TEST(NnActivation, ReluGradientIsThresholdBackwardUnderCreateGraph) {
  Tensor x = tensorOf({-1.5, 0.5, 2.0}, {3}, ScalarType::Double);
  x.requires_grad_(true);
  Tensor v = tensorOf({1, 1, 1}, {3}, ScalarType::Double);
  v.requires_grad_(true);
  const Tensor y = relu(x);
  const autograd::variable_list grads =
      autograd::grad({y}, {v}, {x}, /*create_graph=*/true);
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_EQ(fnName(grads[0]), "ThresholdBackwardBackward0");
  EXPECT_EQ(valuesOf(grads[0]), (std::vector<double>{0, 1, 1}));
}

TEST(NnDropout, TrainingKeepsAboutOneMinusP) {
  manual_seed_op(5);
  const Tensor x = full({100000}, 1.0, TensorOptions(ScalarType::Float));
  const std::vector<double> v = valuesOf(dropout(x, 0.25, true));
  int64_t kept = 0;
  for (double e : v) {
    if (e != 0) {
      ++kept;
      EXPECT_NEAR(e, 1 / 0.75, 1e-6);
    }
  }
  EXPECT_NEAR(static_cast<double>(kept) / v.size(), 0.75, 0.01);
  EXPECT_TRUE(dropout(x, 0.25, false).is_same(x));
}

TEST(NnLayerNorm, ValuesStatisticsAndMeta) {
  const Tensor x = tensorOf({1, 2, 3, 4, 4, 4}, {2, 3});
  const Tensor w = tensorOf({1, 2, 3}, {3});
  const Tensor b = tensorOf({0, 1, 0}, {3});
  auto [out, mean, rstd] = native_layer_norm(x, {3}, w, b, 1e-5);
  EXPECT_EQ(mean.sizes(), (IntArrayRef{2, 1}));
  expectNear(valuesOf(mean), {2, 4});
  const double r = 1 / std::sqrt(2.0 / 3 + 1e-5);
  expectNear(valuesOf(rstd), {r, 1 / std::sqrt(1e-5)}, 1e-2);
  expectNear(valuesOf(out), {-r, 1, 3 * r, 0, 1, 0}, 1e-4);
  expectNear(valuesOf(layer_norm(x, {3}, w, b)), valuesOf(out));

  const Tensor m = empty({4, 5, 6}, TensorOptions(ScalarType::Float).device(meta()));
  auto [mo, mm, mr] = native_layer_norm(m, {5, 6}, std::nullopt, std::nullopt, 1e-5);
  EXPECT_TRUE(mo.is_meta());
  EXPECT_EQ(mo.sizes(), (IntArrayRef{4, 5, 6}));
  EXPECT_EQ(mm.sizes(), (IntArrayRef{4, 1, 1}));
  EXPECT_EQ(mr.sizes(), (IntArrayRef{4, 1, 1}));
}

TEST(NnLayerNorm, Errors) {
  const Tensor x = tensorOf({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_THAT(errorOf([&] { layer_norm(x, {4}); }),
              HasSubstr("Given normalized_shape=[4], expected input with shape "
                        "[*, 4], but got input of size[2, 3]"));
  EXPECT_THAT(errorOf([&] { layer_norm(x, {}); }),
              HasSubstr("Expected normalized_shape to be at least "
                        "1-dimensional"));
  EXPECT_THAT(errorOf([&] { layer_norm(x, {3}, tensorOf({1, 1}, {2})); }),
              HasSubstr("Expected weight to be of same shape as "
                        "normalized_shape, but got weight of shape [2]"));
  auto [out, mean, rstd] =
      native_layer_norm(x, {3}, std::nullopt, std::nullopt, 1e-5);
  EXPECT_THAT(errorOf([&] {
                native_layer_norm_backward(x, x, {3}, mean, rstd, std::nullopt,
                                           std::nullopt, {true, true, false});
              }),
              HasSubstr("output_mask[1] asks for the gradient of weight, but "
                        "weight is None"));
}

TEST(NnLayerNorm, GradientSumsToZeroPerRow) {
  // d/dx of sum(layer_norm(x) * c) for a constant c: each row's gradient
  // sums to 0 (the mean is subtracted) and is orthogonal to xhat.
  Tensor x = tensorOf({0.3, -1.2, 2.0, 0.5, 0.1, 0.9}, {2, 3}, ScalarType::Double);
  x.requires_grad_(true);
  const Tensor c = tensorOf({1, 2, 3, -1, 0, 4}, {2, 3}, ScalarType::Double);
  sum(mul(layer_norm(x, {3}), c)).backward();
  const std::vector<double> g = valuesOf(x.grad());
  EXPECT_NEAR(g[0] + g[1] + g[2], 0, 1e-9);
  EXPECT_NEAR(g[3] + g[4] + g[5], 0, 1e-9);
}

// What the nodes keep, by torch 1.13's names (values against torch itself:
// tests/python/test_autograd_saved_torch.py).
TEST(NnAutograd, NodesKeepTheirSavedValuesUntilBackward) {
  Tensor x = tensorOf({-2, 0.5, 3}, {3}, ScalarType::Double);
  x.requires_grad_(true);
  // hardtanh_ keeps the input before the write, as torch's.
  Tensor y = clone(x);
  hardtanh_(y, -1, 1);
  EXPECT_EQ(fnName(y), "HardtanhBackward0");
  EXPECT_EQ(savedNames(y),
            (std::vector<std::string>{"self", "max_val", "min_val"}));
  const autograd::Node* node = autograd::gradFn(y).get();
  const autograd::Node::Saved* self = savedOf(y, "self");
  ASSERT_NE(self, nullptr);
  expectNear(valuesOf(self->tensor.unpack(node)), {-2, 0.5, 3});
  EXPECT_EQ(savedOf(y, "min_val")->value.toScalar().toDouble(), -1);
  sum(y).backward();
  expectNear(valuesOf(x.grad()), {0, 1, 0});
  EXPECT_TRUE(self->tensor.released());
  EXPECT_THAT(errorOf([&] { self->tensor.unpack(node); }),
              HasSubstr("backward through the graph a second time"));

  // native_layer_norm: an absent bias is kept as undefined, the shape as
  // given.
  Tensor w = tensorOf({1, 2, 3}, {3}, ScalarType::Double);
  w.requires_grad_(true);
  const Tensor z =
      std::get<0>(native_layer_norm(x, {3}, w, std::nullopt, 1e-5));
  EXPECT_EQ(fnName(z), "NativeLayerNormBackward0");
  EXPECT_EQ(savedNames(z),
            (std::vector<std::string>{"bias", "input", "normalized_shape",
                                      "result1", "result2", "weight"}));
  EXPECT_FALSE(savedOf(z, "bias")->tensor.defined());
  EXPECT_EQ(savedOf(z, "normalized_shape")->value.toIntListRef(),
            (std::vector<int64_t>{3}));
}

TEST(NnEmbedding, ForwardAndBackwardWithPadding) {
  Tensor w = rangeOf({4, 2}, ScalarType::Double);
  w.requires_grad_(true);
  const Tensor idx = tensorOf({3, 1, 1, 0}, {2, 2}, ScalarType::Long);
  const Tensor out = embedding(w, idx, /*padding_idx=*/0);
  EXPECT_EQ(out.sizes(), (IntArrayRef{2, 2, 2}));
  expectNear(valuesOf(out), {6, 7, 2, 3, 2, 3, 0, 1});
  sum(out).backward();
  // Row 1 twice, row 3 once, row 0 (padding) none.
  expectNear(valuesOf(w.grad()), {0, 0, 2, 2, 0, 0, 1, 1});
  expectNear(valuesOf(embedding_backward(ones({4, 2}, TensorOptions(ScalarType::Double)),
                                         tensorOf({1, 1, 2, 2}, {4}, ScalarType::Long),
                                         3, -1, /*scale_grad_by_freq=*/true, false)),
             {0, 0, 1, 1, 1, 1});
  EXPECT_THAT(errorOf([&] { embedding(w, tensorOf({4}, {1}, ScalarType::Long)); }),
              HasSubstr("index out of range"));
  EXPECT_THAT(
      errorOf([&] { embedding_backward(out, idx, 4, -1, false, true); }),
      HasSubstr("sparse=True"));
}

TEST(NnLoss, NllValuesReductionsAndErrors) {
  // Log-probabilities of 3 samples over 4 classes.
  const Tensor x = tensorOf({-1, -2, -3, -4, -0.5, -1.5, -2.5, -3.5, -2, -1,
                             -0.1, -5},
                            {3, 4});
  const Tensor t = tensorOf({0, 3, 2}, {3}, ScalarType::Long);
  auto [none, tw0] = nll_loss_forward(x, t, std::nullopt, 0, -100);
  expectNear(valuesOf(none), {1, 3.5, 0.1});
  expectNear(valuesOf(tw0), {0});
  auto [mean, tw1] = nll_loss_forward(x, t, std::nullopt, 1, -100);
  expectNear(valuesOf(mean), {4.6 / 3});
  expectNear(valuesOf(tw1), {3});
  const Tensor wt = tensorOf({2, 1, 1, 0.5}, {4});
  const Tensor ignored = tensorOf({0, -100, 2}, {3}, ScalarType::Long);
  auto [wmean, tw2] = nll_loss_forward(x, ignored, wt, 1, -100);
  expectNear(valuesOf(wmean), {(2 * 1 + 0.1) / 3});
  expectNear(valuesOf(tw2), {3});

  EXPECT_THAT(errorOf([&] {
                nll_loss_forward(x, tensorOf({0, 4, 1}, {3}, ScalarType::Long),
                                 std::nullopt, 1, -100);
              }),
              HasSubstr("Target 4 is out of bounds."));
  EXPECT_THAT(errorOf([&] {
                nll_loss_forward(x, tensorOf({0, 1}, {2}, ScalarType::Long),
                                 std::nullopt, 1, -100);
              }),
              HasSubstr("size mismatch (got input: [3, 4], target: [2])"));
  EXPECT_THAT(errorOf([&] {
                nll_loss_forward(x, t, tensorOf({1, 1}, {2}), 1, -100);
              }),
              HasSubstr("weight tensor should be defined either for all 4 "
                        "classes or no classes"));
  EXPECT_THAT(errorOf([&] { nll_loss_forward(x, to(t, ScalarType::Int), std::nullopt, 1, -100); }),
              HasSubstr("expected scalar type Long but found Int"));
}

TEST(NnLoss, CrossEntropyGradientIsSoftmaxMinusOneHot) {
  Tensor x = tensorOf({1, 2, 3, 0.5, 0.5, 0.5}, {2, 3}, ScalarType::Double);
  x.requires_grad_(true);
  const Tensor t = tensorOf({2, 0}, {2}, ScalarType::Long);
  cross_entropy_loss(x, t).backward();
  const double e1 = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0);
  const double s = e1 + e2 + e3;
  expectNear(valuesOf(x.grad()),
             {e1 / s / 2, e2 / s / 2, (e3 / s - 1) / 2, (1.0 / 3 - 1) / 2,
              1.0 / 6, 1.0 / 6},
             1e-9);
}

TEST(NnLoss, Nll2dOnMetaAndCpuAgree) {
  const Tensor x = rangeOf({2, 3, 2, 2}, ScalarType::Float, -0.1);
  const Tensor t = tensorOf({0, 1, 2, 0, 2, 2, 1, 0}, {2, 2, 2}, ScalarType::Long);
  auto [out, total] = nll_loss2d_forward(x, t, std::nullopt, 0, -100);
  EXPECT_EQ(out.sizes(), (IntArrayRef{2, 2, 2}));
  // out[n, h, w] = -x[n, t, h, w].
  const std::vector<double> xv = valuesOf(x), tv = valuesOf(t);
  std::vector<double> want;
  for (int n = 0; n < 2; ++n) {
    for (int p = 0; p < 4; ++p) {
      const int c = static_cast<int>(tv[n * 4 + p]);
      want.push_back(-xv[n * 12 + c * 4 + p]);
    }
  }
  expectNear(valuesOf(out), want);
  const TensorOptions on_meta = TensorOptions(ScalarType::Float).device(meta());
  auto [mo, mt] = nll_loss2d_forward(
      empty({2, 3, 2, 2}, on_meta),
      empty({2, 2, 2}, TensorOptions(ScalarType::Long).device(meta())),
      std::nullopt, 1, -100);
  EXPECT_TRUE(mo.is_meta());
  EXPECT_EQ(mo.dim(), 0);
}

}  // namespace
}  // namespace turnout
