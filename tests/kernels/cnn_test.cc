// Convolution, pooling and batch norm kernels (kernels/conv.h, pool.h,
// batch_norm.h) through the C++ front end: the forward against a direct
// loop, each backward through its adjoint identity (<f(x), g> = <x, f'(g)>
// for the parts linear in x), batch norm's statistics and running-stat
// update, and errors. Values against torch 1.13 are in
// tests/python/test_ops_cnn_torch.py and op_db; this test runs under ASan.
#include <cmath>
#include <numeric>
#include <vector>

#include "dispatcher/core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/batch_norm.h"
#include "kernels/conv.h"
#include "kernels/onednn_conv.h"
#include "kernels/pool.h"
#include "kernels/reduce.h"
#include "tests/error_of.h"
#include "tests/kernels/autograd/autograd_testing.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using testing::errorOf;
using testing::stridedCopy;
using testing::tensorOf;
using testing::valuesOf;

// Deterministic values in [-1, 1).
Tensor pseudoRandom(IntArrayRef sizes, int seed,
                    ScalarType dtype = ScalarType::Double) {
  std::vector<double> v(static_cast<size_t>(numelOf(sizes)));
  uint32_t s = 2654435761u * static_cast<uint32_t>(seed + 1);
  for (double& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<double>(s >> 8) / static_cast<double>(1u << 23) - 1.0;
  }
  return tensorOf(v, sizes, dtype);
}

double dot(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = valuesOf(a), y = valuesOf(b);
  return std::inner_product(x.begin(), x.end(), y.begin(), 0.0);
}

struct ConvCase {
  const char* name;
  std::vector<int64_t> input, weight;
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups;
};

// out[n][o][y][x] = b[o] + sum w[o][c][i][j] * in[n][g*cg + c][y*s - p + i*d][...]
std::vector<double> directConv2d(const ConvCase& k, const Tensor& x,
                                 const Tensor& w, const Tensor& b,
                                 IntArrayRef out_sizes) {
  const std::vector<double> xv = valuesOf(x), wv = valuesOf(w), bv = valuesOf(b);
  const int64_t N = k.input[0], C = k.input[1], H = k.input[2], W = k.input[3];
  const int64_t O = k.weight[0], CG = k.weight[1], KH = k.weight[2],
                KW = k.weight[3];
  const int64_t OH = out_sizes[2], OW = out_sizes[3], OG = O / k.groups;
  std::vector<double> out(static_cast<size_t>(N * O * OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t y = 0; y < OH; ++y)
        for (int64_t xx = 0; xx < OW; ++xx) {
          double acc = bv[o];
          const int64_t g = o / OG;
          for (int64_t c = 0; c < CG; ++c)
            for (int64_t i = 0; i < KH; ++i)
              for (int64_t j = 0; j < KW; ++j) {
                const int64_t iy = y * k.stride[0] - k.padding[0] + i * k.dilation[0];
                const int64_t ix = xx * k.stride[1] - k.padding[1] + j * k.dilation[1];
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                acc += wv[((o * CG + c) * KH + i) * KW + j] *
                       xv[((n * C + g * CG + c) * H + iy) * W + ix];
              }
          out[((n * O + o) * OH + y) * OW + xx] = acc;
        }
  return out;
}

TEST(Conv, ForwardMatchesDirectLoopAndBackwardIsItsAdjoint) {
  const std::vector<ConvCase> cases = {
      {"plain", {2, 3, 6, 5}, {4, 3, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1},
      {"stride, padding", {1, 3, 7, 7}, {2, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 1},
      {"dilation, uneven", {1, 2, 8, 7}, {3, 2, 3, 2}, {1, 2}, {2, 1}, {2, 1}, 1},
      {"groups", {2, 4, 5, 5}, {6, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 2},
      {"1x1", {2, 4, 3, 3}, {5, 4, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1},
      {"1x1 strided", {1, 2, 5, 5}, {3, 2, 1, 1}, {2, 2}, {0, 0}, {1, 1}, 1},
  };
  for (const ConvCase& k : cases) {
    SCOPED_TRACE(k.name);
    const Tensor x = pseudoRandom(k.input, 1), w = pseudoRandom(k.weight, 2);
    const Tensor b = pseudoRandom({k.weight[0]}, 3);
    // A non-contiguous input gives the same result.
    for (const Tensor& in : {x, stridedCopy(x)}) {
      const Tensor y = conv2d(in, w, b, k.stride, k.padding, k.dilation, k.groups);
      const std::vector<double> want = directConv2d(k, x, w, b, y.sizes());
      const std::vector<double> got = valuesOf(y);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12);
    }
    // Backward: conv is linear in x (bias apart) and in w.
    const Tensor y0 = conv2d(x, w, std::nullopt, k.stride, k.padding, k.dilation,
                             k.groups);
    const Tensor g = pseudoRandom(y0.sizes(), 4);
    auto [gi, gw, gb] = convolution_backward(
        g, x, w, std::vector<int64_t>{k.weight[0]}, k.stride, k.padding,
        k.dilation, false, {0, 0}, k.groups, {true, true, true});
    EXPECT_NEAR(dot(y0, g), dot(x, gi), 1e-10);
    EXPECT_NEAR(dot(y0, g), dot(w, gw), 1e-10);
    const std::vector<double> gv = valuesOf(g), gbv = valuesOf(gb);
    const int64_t per = y0.numel() / y0.size(0) / y0.size(1);
    for (int64_t o = 0; o < k.weight[0]; ++o) {
      double total = 0;
      for (int64_t n = 0; n < y0.size(0); ++n)
        for (int64_t i = 0; i < per; ++i) total += gv[(n * k.weight[0] + o) * per + i];
      EXPECT_NEAR(gbv[o], total, 1e-12);
    }
    // The mask leaves the others undefined.
    auto [gi2, gw2, gb2] = convolution_backward(
        g, x, w, std::nullopt, k.stride, k.padding, k.dilation, false, {0, 0},
        k.groups, {false, true, false});
    EXPECT_FALSE(gi2.defined());
    EXPECT_FALSE(gb2.defined());
    EXPECT_EQ(valuesOf(gw2), valuesOf(gw));
  }
}

// A transposed convolution is the adjoint of the ordinary one with the same
// weight: <conv(x), y> = <x, conv_transpose(y)>, and its gradients follow.
TEST(Conv, TransposedIsTheAdjoint) {
  const Tensor x = pseudoRandom({2, 4, 7, 6}, 11);
  const Tensor w = pseudoRandom({6, 2, 3, 3}, 12);  // groups 2
  const std::vector<int64_t> stride{2, 1}, padding{1, 0}, dilation{1, 2};
  const Tensor y0 = conv2d(x, w, std::nullopt, stride, padding, dilation, 2);
  const Tensor y = pseudoRandom(y0.sizes(), 13);
  const Tensor xt = conv_transpose2d(y, w, std::nullopt, stride, padding,
                                     {0, 0}, 2, dilation);
  ASSERT_EQ(xt.sizes(), x.sizes());
  EXPECT_NEAR(dot(y0, y), dot(x, xt), 1e-10);
  // Its backward: grad_input is the ordinary convolution of grad_output;
  // the output is linear in the weight; grad_bias sums grad_output.
  const Tensor gy = pseudoRandom(xt.sizes(), 14);
  auto [gi, gw, gb] = convolution_backward(
      gy, y, w, std::vector<int64_t>{4}, stride, padding, dilation, true,
      {0, 0}, 2, {true, true, true});
  const std::vector<double> want =
      valuesOf(conv2d(gy, w, std::nullopt, stride, padding, dilation, 2));
  const std::vector<double> got = valuesOf(gi);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12);
  EXPECT_NEAR(dot(xt, gy), dot(w, gw), 1e-10);
  EXPECT_EQ(gb.sizes(), IntArrayRef({4}));
  const std::vector<double> gyv = valuesOf(gy), gbv = valuesOf(gb);
  const int64_t per = 7 * 6;
  for (int64_t c = 0; c < 4; ++c) {
    double total = 0;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t i = 0; i < per; ++i) total += gyv[(n * 4 + c) * per + i];
    EXPECT_NEAR(gbv[c], total, 1e-12);
  }
  // The bias is added per output channel.
  const Tensor b = pseudoRandom({4}, 15);
  const std::vector<double> with_bias = valuesOf(conv_transpose2d(
      y, w, b, stride, padding, {0, 0}, 2, dilation));
  const std::vector<double> plain = valuesOf(xt), bv = valuesOf(b);
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_NEAR(with_bias[i], plain[i] + bv[(i / per) % 4], 1e-12);
  }
}

// float32 convolutions of at least 2^16 multiply-adds run through oneDNN
// (kernels/onednn_conv.h): uneven sizes with strides (oneDNN's far-side
// padding), dilation, groups, a 1x1 kernel, with and without bias, against
// the direct loop in double. Smaller ones and double take the im2col path
// the test above checks.
TEST(Conv, LargeFloatMatchesDirectLoop) {
  const std::vector<ConvCase> cases = {
      {"plain", {2, 16, 16, 16}, {32, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
      {"strided, uneven", {1, 16, 23, 18}, {24, 16, 3, 3}, {2, 3}, {1, 0}, {1, 1}, 1},
      {"dilation", {1, 16, 20, 21}, {16, 16, 3, 2}, {1, 1}, {2, 1}, {2, 3}, 1},
      {"groups", {2, 16, 14, 14}, {32, 4, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 4},
      {"depthwise", {1, 32, 16, 16}, {32, 1, 5, 5}, {1, 1}, {2, 2}, {1, 1}, 32},
      {"1x1", {1, 64, 12, 12}, {64, 64, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1},
  };
  for (const ConvCase& k : cases) {
    SCOPED_TRACE(k.name);
    const Tensor x = pseudoRandom(k.input, 21, ScalarType::Float);
    const Tensor w = pseudoRandom(k.weight, 22, ScalarType::Float);
    const Tensor b = pseudoRandom({k.weight[0]}, 23, ScalarType::Float);
    const Tensor zero = tensorOf(std::vector<double>(k.weight[0], 0.0),
                                 {k.weight[0]}, ScalarType::Float);
    for (bool with_bias : {true, false}) {
      SCOPED_TRACE(with_bias ? "bias" : "no bias");
      const Tensor y = conv2d(x, w, with_bias ? std::optional<Tensor>(b)
                                              : std::nullopt,
                              k.stride, k.padding, k.dilation, k.groups);
      EXPECT_EQ(y.scalar_type(), ScalarType::Float);
      const std::vector<double> want =
          directConv2d(k, x, w, with_bias ? b : zero, y.sizes());
      const std::vector<double> got = valuesOf(y);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 1e-4) << "element " << i;
      }
      // oneDNN itself ran it (conv2d would fall back quietly).
      if (!onednn::available()) continue;  // ThreadSanitizer builds
      onednn::Conv2dShape shape;
      shape.batch = k.input[0], shape.in_channels = k.input[1];
      shape.ih = k.input[2], shape.iw = k.input[3];
      shape.out_channels = k.weight[0], shape.groups = k.groups;
      shape.kh = k.weight[2], shape.kw = k.weight[3];
      shape.oh = y.size(2), shape.ow = y.size(3);
      shape.sh = k.stride[0], shape.sw = k.stride[1];
      shape.ph = k.padding[0], shape.pw = k.padding[1];
      shape.dh = k.dilation[0], shape.dw = k.dilation[1];
      std::vector<float> direct(static_cast<size_t>(y.numel()));
      ASSERT_TRUE(onednn::convForward(
          shape, static_cast<const float*>(x.data_ptr()),
          static_cast<const float*>(w.data_ptr()),
          with_bias ? static_cast<const float*>(b.data_ptr()) : nullptr,
          direct.data()));
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(direct[i], static_cast<float>(got[i])) << "element " << i;
      }
    }
  }
}

TEST(Conv, Conv1dAndFloat) {
  const Tensor x = pseudoRandom({2, 3, 9}, 5, ScalarType::Float);
  const Tensor w = pseudoRandom({4, 3, 3}, 6, ScalarType::Float);
  const Tensor y = conv1d(x, w, std::nullopt, {2}, {1}, {1}, 1);
  EXPECT_EQ(y.sizes(), IntArrayRef({2, 4, 5}));
  // As a 2-d convolution of height 1.
  const Tensor y2 = conv2d(unsqueeze(x, 2), unsqueeze(w, 2), std::nullopt,
                           {1, 2}, {0, 1}, {1, 1}, 1);
  const std::vector<double> a = valuesOf(y), b2 = valuesOf(y2);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b2[i], 1e-5);
}

TEST(Conv, Errors) {
  const Tensor x = pseudoRandom({1, 3, 6, 6}, 7), w = pseudoRandom({4, 3, 3, 3}, 8);
  EXPECT_THAT(errorOf([&] { conv2d(x, pseudoRandom({4, 2, 3, 3}, 1)); }),
              HasSubstr("expected input[1, 3, 6, 6] to have 2 channels"));
  EXPECT_THAT(errorOf([&] { conv2d(pseudoRandom({1, 3, 2, 2}, 1), w); }),
              HasSubstr("Kernel size can't be greater than actual input size"));
  EXPECT_THAT(errorOf([&] { conv2d(x, w, std::nullopt, {0, 1}); }),
              HasSubstr("non-positive stride is not supported"));
  EXPECT_THAT(errorOf([&] { convolution(x, pseudoRandom({4, 3}, 1), std::nullopt,
                                        {1}, {0}, {1}, false, {0}, 1); }),
              HasSubstr("expected weight to have 3 (1-d) or 4 (2-d) dimensions"));
  EXPECT_THAT(errorOf([&] { convolution(pseudoRandom({1, 4, 6, 6}, 1), w,
                                        std::nullopt, {1}, {0}, {1}, true,
                                        {1}, 1); }),
              HasSubstr("output padding must be smaller than either stride or "
                        "dilation"));
  EXPECT_THAT(errorOf([&] { conv_transpose2d(x, w); }),
              HasSubstr("Given transposed=1, weight of size [4, 3, 3, 3], "
                        "expected input[1, 3, 6, 6] to have 4 channels"));
  EXPECT_THAT(errorOf([&] { convolution(pseudoRandom({1, 3, 4, 4, 4}, 1),
                                        pseudoRandom({2, 3, 2, 2, 2}, 1),
                                        std::nullopt, {1}, {0}, {1}, false,
                                        {0}, 1); }),
              HasSubstr("only 1-d and 2-d convolutions"));
  EXPECT_THAT(errorOf([&] {
                convolution_backward(pseudoRandom({1, 4, 3, 3}, 1), x, w, {{4}},
                                     {1}, {0}, {1}, false, {0}, 1,
                                     {true, true, true});
              }),
              HasSubstr("expected grad_output of size [1, 4, 4, 4]"));
}

TEST(Pool, BackwardsAreAdjoints) {
  const Tensor x = pseudoRandom({2, 3, 7, 6}, 9);
  {
    SCOPED_TRACE("avg_pool2d");
    for (bool include_pad : {true, false}) {
      const Tensor y = avg_pool2d(x, {3, 2}, {2, 1}, {1, 1}, true, include_pad);
      const Tensor g = pseudoRandom(y.sizes(), 10);
      const Tensor gi = avg_pool2d_backward(g, x, {3, 2}, {2, 1}, {1, 1}, true,
                                            include_pad, std::nullopt);
      EXPECT_NEAR(dot(y, g), dot(x, gi), 1e-10);
    }
  }
  {
    SCOPED_TRACE("adaptive_avg_pool2d");
    const Tensor y = _adaptive_avg_pool2d(x, {4, 4});
    const Tensor g = pseudoRandom(y.sizes(), 11);
    EXPECT_NEAR(dot(y, g), dot(x, _adaptive_avg_pool2d_backward(g, x)), 1e-10);
  }
  {
    SCOPED_TRACE("max_pool2d");
    auto [y, idx] = max_pool2d_with_indices(x, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true);
    const Tensor g = pseudoRandom(y.sizes(), 12);
    const Tensor gi = max_pool2d_with_indices_backward(g, x, {3, 3}, {2, 2}, {1, 1},
                                                       {1, 1}, true, idx);
    // Piecewise linear: the picked elements carry the gradient.
    EXPECT_NEAR(dot(y, g), dot(x, gi), 1e-10);
  }
}

TEST(Pool, MaxPoolSameInEveryLayoutAndDtype) {
  // Contiguous float and double inputs are pooled in their own dtype, a
  // strided one through double: the same values and indices, NaN included.
  std::vector<double> v = valuesOf(pseudoRandom({2, 3, 7, 6}, 18));
  v[5] = std::nan("");
  const Tensor ref = tensorOf(v, {2, 3, 7, 6}, ScalarType::Double);
  auto [want, want_idx] =
      max_pool2d_with_indices(stridedCopy(ref), {3, 3}, {2, 2}, {1, 1}, {1, 2}, true);
  for (ScalarType dtype : {ScalarType::Float, ScalarType::Double}) {
    const Tensor x = tensorOf(v, {2, 3, 7, 6}, dtype);
    for (const Tensor& in : {x, stridedCopy(x)}) {
      SCOPED_TRACE(::testing::Message()
                   << dtype << (in.is_contiguous() ? " contiguous" : " strided"));
      auto [y, idx] =
          max_pool2d_with_indices(in, {3, 3}, {2, 2}, {1, 1}, {1, 2}, true);
      EXPECT_EQ(y.scalar_type(), dtype);
      EXPECT_EQ(valuesOf(idx), valuesOf(want_idx));
      const std::vector<double> got = valuesOf(y), exp = valuesOf(want);
      ASSERT_EQ(got.size(), exp.size());
      for (size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(exp[i])) {
          EXPECT_TRUE(std::isnan(got[i])) << i;
        } else {
          EXPECT_EQ(got[i], static_cast<double>(
                                dtype == ScalarType::Float
                                    ? static_cast<double>(static_cast<float>(exp[i]))
                                    : exp[i]))
              << i;
        }
      }
    }
  }
}

TEST(Pool, Errors) {
  const Tensor x = pseudoRandom({1, 2, 4, 4}, 13);
  EXPECT_THAT(errorOf([&] { max_pool2d(x, {5, 5}); }),
              HasSubstr("Output size is too small"));
  EXPECT_THAT(errorOf([&] { avg_pool2d(x, {2, 2}, {}, {0}, false, true, 0); }),
              HasSubstr("divisor must be not zero"));
  EXPECT_THAT(errorOf([&] { adaptive_avg_pool2d(x, {2}); }),
              HasSubstr("output_size must be 2"));
  // Indices that max_pool2d_with_indices could not have produced.
  auto [y, idx] = max_pool2d_with_indices(x, {2, 2});
  const Tensor bad = tensorOf(std::vector<double>(8, 16.0), idx.sizes(),
                              ScalarType::Long);
  EXPECT_THAT(errorOf([&] {
                max_pool2d_with_indices_backward(y, x, {2, 2}, {2, 2}, {0, 0},
                                                 {1, 1}, false, bad);
              }),
              HasSubstr("index 16 is out of bounds for a plane of 16 elements"));
}

TEST(BatchNorm, TrainingNormalisesAndUpdatesRunningStats) {
  const Tensor x = pseudoRandom({4, 3, 5}, 14);
  Tensor rm = tensorOf({0, 0, 0}, {3}, ScalarType::Double);
  Tensor rv = tensorOf({1, 1, 1}, {3}, ScalarType::Double);
  auto [y, mean, invstd] =
      native_batch_norm(x, std::nullopt, std::nullopt, rm, rv, true, 0.5, 0.0);
  const std::vector<double> xv = valuesOf(x), yv = valuesOf(y),
                            mv = valuesOf(mean), rmv = valuesOf(rm),
                            rvv = valuesOf(rv);
  for (int64_t c = 0; c < 3; ++c) {
    double s = 0, sq = 0, xs = 0, xsq = 0;
    for (int64_t n = 0; n < 4; ++n)
      for (int64_t k = 0; k < 5; ++k) {
        const size_t i = static_cast<size_t>((n * 3 + c) * 5 + k);
        s += yv[i];
        sq += yv[i] * yv[i];
        xs += xv[i];
        xsq += xv[i] * xv[i];
      }
    EXPECT_NEAR(s / 20, 0, 1e-12);
    EXPECT_NEAR(sq / 20, 1, 1e-9);
    const double m = xs / 20, var = xsq / 20 - m * m;
    EXPECT_NEAR(mv[c], m, 1e-12);
    EXPECT_NEAR(rmv[c], 0.5 * m, 1e-12);
    EXPECT_NEAR(rvv[c], 0.5 + 0.5 * var * 20 / 19, 1e-12);
  }
  // Backward in training: each channel's input gradient sums to zero.
  const Tensor g = pseudoRandom(x.sizes(), 15);
  auto [gi, gw, gb] = native_batch_norm_backward(
      g, x, std::nullopt, std::nullopt, std::nullopt, mean, invstd, true, 0.0,
      {true, true, true});
  const std::vector<double> giv = valuesOf(gi);
  for (int64_t c = 0; c < 3; ++c) {
    double s = 0;
    for (int64_t n = 0; n < 4; ++n)
      for (int64_t k = 0; k < 5; ++k) s += giv[(n * 3 + c) * 5 + k];
    EXPECT_NEAR(s, 0, 1e-10);
  }
  // gw is sum(g * xhat) per channel, and y is xhat here (no weight, bias).
  const std::vector<double> gwv = valuesOf(gw);
  EXPECT_NEAR(gwv[0] + gwv[1] + gwv[2], dot(g, y), 1e-10);
}

TEST(BatchNorm, EvalUsesRunningStatsInEveryLayoutAndDtype) {
  // Contiguous float and double inputs take their own loop; a strided one
  // goes through double. Each is checked against the formula.
  for (ScalarType dtype : {ScalarType::Float, ScalarType::Double}) {
    const Tensor x = pseudoRandom({2, 3, 4}, 17, dtype);
    const Tensor w = tensorOf({0.5, -1.0, 2.0}, {3}, dtype);
    const Tensor bias = tensorOf({0.1, 0.2, -0.3}, {3}, dtype);
    const Tensor rm = tensorOf({0.25, -0.5, 1.0}, {3}, dtype);
    const Tensor rv = tensorOf({0.5, 1.5, 2.0}, {3}, dtype);
    for (const Tensor& in : {x, stridedCopy(x)}) {
      SCOPED_TRACE(::testing::Message()
                   << dtype << (in.is_contiguous() ? " contiguous" : " strided"));
      auto [y, mean, invstd] =
          native_batch_norm(in, w, bias, rm, rv, false, 0.1, 1e-3);
      EXPECT_EQ(y.scalar_type(), dtype);
      EXPECT_EQ(testing::sizesOf(y), (std::vector<int64_t>{2, 3, 4}));
      EXPECT_EQ(mean.numel(), 0);
      EXPECT_EQ(invstd.numel(), 0);
      const std::vector<double> xv = valuesOf(x), yv = valuesOf(y),
                                wv = valuesOf(w), bv = valuesOf(bias),
                                mv = valuesOf(rm), vv = valuesOf(rv);
      for (size_t i = 0; i < xv.size(); ++i) {
        const size_t c = (i / 4) % 3;
        const double want =
            (xv[i] - mv[c]) / std::sqrt(vv[c] + 1e-3) * wv[c] + bv[c];
        EXPECT_NEAR(yv[i], want, 1e-5 * (1 + std::abs(want))) << i;
      }
      // The running statistics are left alone in eval mode.
      EXPECT_EQ(valuesOf(rm), (std::vector<double>{0.25, -0.5, 1.0}));
    }
  }
}

// What the nodes keep, by torch 1.13's names (values against torch itself:
// tests/python/test_autograd_saved_torch.py).
TEST(CnnAutograd, NodesKeepTheirSavedValuesUntilBackward) {
  Tensor x = testing::rangeOf({1, 2, 4, 4}, ScalarType::Double);
  x.requires_grad_(true);
  Tensor w = testing::rangeOf({3, 2, 3, 3}, ScalarType::Double);
  w.requires_grad_(true);
  using Sizes = std::vector<int64_t>;
  // conv2d's None bias reaches convolution undefined: torch shows (0,).
  const Tensor y = conv2d(x, w);
  EXPECT_EQ(testing::fnName(y), "ConvolutionBackward0");
  EXPECT_EQ(testing::savedOf(y, "bias_sym_sizes_opt")->value.toIntListRef(),
            (Sizes{0}));
  // _convolution has its own node; a None bias stays None.
  const Tensor z = _convolution(x, w, std::nullopt, {2, 1}, {0, 1}, {1, 1},
                                false, {0, 0}, 1, false, false, true, true);
  EXPECT_EQ(testing::fnName(z), "ConvolutionBackward1");
  EXPECT_EQ(testing::savedNames(z),
            (std::vector<std::string>{"bias_sizes_opt", "dilation", "groups",
                                      "input", "output_padding", "padding",
                                      "stride", "transposed", "weight"}));
  EXPECT_TRUE(testing::savedOf(z, "bias_sizes_opt")->value.isNone());
  EXPECT_EQ(testing::savedOf(z, "stride")->value.toIntListRef(), (Sizes{2, 1}));
  const autograd::Node::Saved* input = testing::savedOf(z, "input");
  ASSERT_NE(input, nullptr);
  EXPECT_FALSE(input->tensor.released());
  sum(z).backward();
  EXPECT_TRUE(input->tensor.released());

  // max_pool2d keeps its stride as given ([] for the default).
  const Tensor p = max_pool2d(x, {2, 2});
  EXPECT_EQ(testing::fnName(p), "MaxPool2DWithIndicesBackward0");
  EXPECT_EQ(testing::savedOf(p, "stride")->value.toIntListRef(), Sizes{});
  EXPECT_EQ(testing::savedOf(p, "result1")
                ->tensor.unpack(autograd::gradFn(p).get())
                .scalar_type(),
            ScalarType::Long);
}

TEST(BatchNorm, Errors) {
  const Tensor x = pseudoRandom({4, 3}, 16);
  EXPECT_THAT(errorOf([&] {
                native_batch_norm(x, std::nullopt, std::nullopt, std::nullopt,
                                  std::nullopt, false, 0.1, 1e-5);
              }),
              HasSubstr("must be given when training=False"));
  EXPECT_THAT(errorOf([&] {
                native_batch_norm(x, pseudoRandom({4}, 1), std::nullopt,
                                  std::nullopt, std::nullopt, true, 0.1, 1e-5);
              }),
              HasSubstr("weight should contain 3 elements not 4"));
  EXPECT_THAT(errorOf([&] {
                batch_norm(pseudoRandom({3}, 1), std::nullopt, std::nullopt,
                           std::nullopt, std::nullopt, true, 0.1, 1e-5, false);
              }),
              HasSubstr("Dimension out of range"));
}

}  // namespace
}  // namespace turnout
