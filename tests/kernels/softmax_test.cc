#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "gtest/gtest.h"
#include "kernels/parallel.h"
#include "kernels/reduce.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using testing::columnMajor;
using testing::metaTensor;
using testing::rangeOf;
using testing::sizesOf;
using testing::stridedCopy;
using testing::tensorOf;
using testing::valuesOf;

const double kInf = std::numeric_limits<double>::infinity();

using testing::errorOf;

void expectNearAll(const std::vector<double>& got,
                   const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol) << i;
}

// (log_)softmax of row-major `x` along `dim`, in double.
std::vector<double> referenceSoftmax(const std::vector<double>& x,
                                     const std::vector<int64_t>& sizes,
                                     int64_t dim, bool log) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  if (nd == 0) return {log ? 0.0 : 1.0};
  dim = (dim + nd) % nd;
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < nd; ++d) inner *= sizes[d];
  const int64_t n = sizes[dim];
  const int64_t outer =
      static_cast<int64_t>(x.size()) / std::max<int64_t>(n * inner, 1);
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return o * n * inner + k * inner + i; };
      double mx = -kInf;
      for (int64_t k = 0; k < n; ++k) mx = std::max(mx, x[at(k)]);
      double total = 0;
      for (int64_t k = 0; k < n; ++k) total += std::exp(x[at(k)] - mx);
      for (int64_t k = 0; k < n; ++k) {
        y[at(k)] = log ? x[at(k)] - mx - std::log(total)
                       : std::exp(x[at(k)] - mx) / total;
      }
    }
  }
  return y;
}

TEST(Softmax, MatchesReferenceForDimsDtypesAndLayouts) {
  struct Case {
    std::vector<int64_t> sizes;
    int64_t dim;
  };
  const Case cases[] = {{{5}, 0},       {{5}, -1},      {{3, 4}, 1},
                        {{3, 4}, 0},    {{2, 3, 4}, 1}, {{2, 3, 4}, -1},
                        {{2, 3, 4}, 0}, {{}, 0},        {{4, 1}, 1}};
  for (bool log : {false, true}) {
    for (ScalarType dtype : {ScalarType::Float, ScalarType::Double,
                             ScalarType::Half, ScalarType::BFloat16}) {
      for (const Case& c : cases) {
        for (int layout = 0; layout < 3; ++layout) {
          SCOPED_TRACE(::testing::Message()
                       << (log ? "log_softmax " : "softmax ") << dtype
                       << ::testing::PrintToString(c.sizes) << " dim " << c.dim
                       << " layout " << layout);
          Tensor x = rangeOf(c.sizes, dtype, 0.37, -2.0);
          Tensor in = layout == 0    ? x
                      : layout == 1  ? stridedCopy(x)
                      : x.dim() >= 2 ? columnMajor(x, 0, x.dim() - 1)
                                     : stridedCopy(x);
          Tensor y = log ? log_softmax(in, c.dim) : softmax(in, c.dim);
          EXPECT_EQ(y.scalar_type(), dtype);
          EXPECT_EQ(sizesOf(y), c.sizes);
          const std::vector<double> want =
              referenceSoftmax(valuesOf(x), c.sizes, c.dim, log);
          const std::vector<double> got = valuesOf(y);
          const double tol = dtype == ScalarType::Float    ? 1e-6
                             : dtype == ScalarType::Double ? 1e-12
                             : dtype == ScalarType::Half   ? 4e-3
                                                           : 3e-2;
          ASSERT_EQ(got.size(), want.size());
          for (size_t i = 0; i < got.size(); ++i) {
            EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i])));
          }
          Tensor m = log ? log_softmax(metaTensor(c.sizes, dtype), c.dim)
                         : softmax(metaTensor(c.sizes, dtype), c.dim);
          EXPECT_TRUE(m.is_meta());
          EXPECT_EQ(sizesOf(m), c.sizes);
          EXPECT_EQ(m.scalar_type(), dtype);
        }
      }
    }
  }
}

TEST(Softmax, LargeLogitsInfinitiesAndDtype) {
  // exp(1000) overflows; subtracting the maximum first does not.
  EXPECT_EQ(valuesOf(softmax(tensorOf({1000, 1000}, {2}), 0)),
            (std::vector<double>{0.5, 0.5}));
  std::vector<double> ls = valuesOf(log_softmax(tensorOf({1000, 0}, {2}), 0));
  EXPECT_DOUBLE_EQ(ls[0], 0.0);
  EXPECT_NEAR(ls[1], -1000.0, 1e-3);
  // -inf gets probability 0; a row of only -inf is NaN, as in PyTorch.
  std::vector<double> p =
      valuesOf(softmax(tensorOf({0, -kInf, -kInf, -kInf}, {2, 2}), 1));
  EXPECT_EQ(p[0], 1.0);
  EXPECT_EQ(p[1], 0.0);
  EXPECT_TRUE(std::isnan(p[2]) && std::isnan(p[3]));
  // A NaN makes its own slice NaN and no other (the contiguous float and
  // double slices have their own loop: both dtypes, both dims).
  const double kNan = std::numeric_limits<double>::quiet_NaN();
  for (ScalarType dtype : {ScalarType::Float, ScalarType::Double}) {
    for (bool log : {false, true}) {
      SCOPED_TRACE(::testing::Message() << dtype << " log " << log);
      Tensor x = tensorOf({0, kNan, 1000, 1000}, {2, 2}, dtype);
      std::vector<double> y = valuesOf(log ? log_softmax(x, 1) : softmax(x, 1));
      EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]));
      EXPECT_NEAR(y[2], log ? -std::log(2.0) : 0.5, 1e-6);
      EXPECT_NEAR(y[3], log ? -std::log(2.0) : 0.5, 1e-6);
    }
  }
  // dtype converts the input first: an integer input works with a float dtype.
  Tensor y = softmax(tensorOf({0, 0, 0, 0}, {4}, ScalarType::Long), 0,
                     ScalarType::Double);
  EXPECT_EQ(y.scalar_type(), ScalarType::Double);
  EXPECT_EQ(valuesOf(y), (std::vector<double>{0.25, 0.25, 0.25, 0.25}));
  EXPECT_EQ(softmax(rangeOf({3}, ScalarType::Half), 0, ScalarType::Float)
                .scalar_type(),
            ScalarType::Float);
  EXPECT_EQ(sizesOf(softmax(rangeOf({0, 3}), 0)), (std::vector<int64_t>{0, 3}));
}

TEST(Softmax, ThreadedSlicesMatchReference) {
  const int old_threads = get_num_threads();
  set_num_threads(4);
  for (int64_t dim : {0, 1}) {
    for (bool log : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "dim " << dim << " log " << log);
      Tensor x = rangeOf({700, 60}, ScalarType::Float, 0.001, -20.0);
      const std::vector<double> want =
          referenceSoftmax(valuesOf(x), {700, 60}, dim, log);
      // Strided, and contiguous (whose dim-1 slices take the float loop).
      for (const Tensor& in : {stridedCopy(x), x}) {
        Tensor y = log ? log_softmax(in, dim) : softmax(in, dim);
        const std::vector<double> got = valuesOf(y);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) {
          ASSERT_NEAR(got[i], want[i], 1e-6 * (1 + std::abs(want[i]))) << i;
        }
      }
    }
  }
  set_num_threads(old_threads);
}

// sum(w * f(x)) in double, for the finite differences below.
double weightedSum(const Tensor& x, const Tensor& w, int64_t dim, bool log) {
  const std::vector<double> y =
      valuesOf(log ? log_softmax(x, dim) : softmax(x, dim));
  const std::vector<double> wv = valuesOf(w);
  double total = 0;
  for (size_t i = 0; i < y.size(); ++i) total += wv[i] * y[i];
  return total;
}

TEST(SoftmaxBackward, MatchesFiniteDifferences) {
  const std::vector<int64_t> sizes = {3, 4};
  for (bool log : {false, true}) {
    for (int64_t dim : {0, 1, -1}) {
      SCOPED_TRACE(::testing::Message()
                   << (log ? "log_softmax" : "softmax") << " dim " << dim);
      Tensor x = rangeOf(sizes, ScalarType::Double, 0.31, -1.7);
      Tensor w = tensorOf({0.5, -1, 2, 0.25, 1, 1, -0.5, 3, 0, 0.75, -2, 1.5},
                          sizes, ScalarType::Double);
      Tensor y = log ? log_softmax(x, dim) : softmax(x, dim);
      Tensor g = log ? _log_softmax_backward_data(stridedCopy(w), y, dim,
                                                  ScalarType::Double)
                     : _softmax_backward_data(stridedCopy(w), y, dim,
                                              ScalarType::Double);
      EXPECT_EQ(sizesOf(g), sizes);
      const std::vector<double> got = valuesOf(g);
      const double h = 1e-6;
      for (int64_t i = 0; i < x.numel(); ++i) {
        Tensor xp = tensorOf(valuesOf(x), sizes, ScalarType::Double);
        Tensor xm = tensorOf(valuesOf(x), sizes, ScalarType::Double);
        xp.data_ptr<double>()[i] += h;
        xm.data_ptr<double>()[i] -= h;
        const double fd =
            (weightedSum(xp, w, dim, log) - weightedSum(xm, w, dim, log)) /
            (2 * h);
        EXPECT_NEAR(got[i], fd, 1e-7) << "element " << i;
      }
    }
  }
}

TEST(SoftmaxBackward, DtypesMetaAndErrors) {
  Tensor y = softmax(rangeOf({2, 3}), 1);
  Tensor g = _softmax_backward_data(tensorOf({1, 1, 1, 1, 1, 1}, {2, 3}), y, 1,
                                    ScalarType::Half);
  EXPECT_EQ(g.scalar_type(), ScalarType::Half);
  for (double v : valuesOf(g)) EXPECT_NEAR(v, 0.0, 1e-3);  // sum(y) is constant
  Tensor m = _log_softmax_backward_data(metaTensor({2, 5}), metaTensor({2, 5}),
                                        0, ScalarType::Float);
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(sizesOf(m), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(errorOf([] {
              _softmax_backward_data(metaTensor({2, 5}), metaTensor({2, 4}), 0,
                                     ScalarType::Float);
            }),
            "_softmax_backward_data(): grad_output and output must have the "
            "same shape, but got [2, 5] and [2, 4]");
  // _softmax: half_to_float turns a Half input into a Float result.
  Tensor hf = _softmax(rangeOf({4}, ScalarType::Half), 0, true);
  EXPECT_EQ(hf.scalar_type(), ScalarType::Float);
  expectNearAll(valuesOf(hf), referenceSoftmax({0, 1, 2, 3}, {4}, 0, false),
                1e-6);
  EXPECT_EQ(_log_softmax(rangeOf({4}, ScalarType::Double), 0).scalar_type(),
            ScalarType::Double);
  EXPECT_EQ(
      errorOf([] { _softmax(rangeOf({4}), 0, true); }),
      "_softmax(): conversion is supported for Half type only, got Float");
}

TEST(Softmax, ErrorsAndOut) {
  EXPECT_EQ(errorOf([] { softmax(rangeOf({3}, ScalarType::Long), 0); }),
            "softmax(): not implemented for 'Long'; pass a floating dtype "
            "(e.g. dtype=Float)");
  EXPECT_EQ(errorOf([] {
              log_softmax(metaTensor({2, 3}), 2);
            }),
            "Dimension out of range (expected to be in range of [-2, 1], but "
            "got 2)");
  Tensor x = tensorOf({0, 0}, {2});
  Tensor out = emptyTensor({0}, ScalarType::Float, testing::cpu());
  Tensor& r = softmax_out(out, x, 0, std::nullopt);
  EXPECT_TRUE(r.is_same(out));
  EXPECT_EQ(valuesOf(out), (std::vector<double>{0.5, 0.5}));
  log_softmax_out(out, x, 0, std::nullopt);
  EXPECT_NEAR(valuesOf(out)[0], -std::log(2.0), 1e-6);
  Tensor wrong = emptyTensor({2}, ScalarType::Double, testing::cpu());
  EXPECT_EQ(errorOf([&] { softmax_out(wrong, x, 0, std::nullopt); }),
            "softmax.int_out(): Expected out tensor to have dtype Float, but "
            "got Double instead");
  // Boxed, with the dtype left to its default.
  auto op = Dispatcher::singleton().findSchemaOrThrow("aten::softmax", "int");
  Stack stack{IValue(x), IValue(int64_t{-1}), IValue()};
  op.callBoxed(stack);
  EXPECT_EQ(valuesOf(stack[0].toTensor()), (std::vector<double>{0.5, 0.5}));
}

}  // namespace
}  // namespace turnout
