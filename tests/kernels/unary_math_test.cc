// Tests of the unary math operators (kernels/unary_math.h) through the C++
// front end: values against <cmath>, dtypes, in-place and out= forms,
// non-contiguous, 0-dim and empty inputs, Meta shapes, errors, and the
// gradients of a few through the autograd kernels.
#include "kernels/unary_math.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "dispatcher/core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/engine.h"
#include "kernels/elementwise.h"
#include "kernels/reduce.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using namespace ::turnout::testing;  // NOLINT

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> fn;
  std::function<const Tensor&(const Tensor&)> inplace;
  std::function<const Tensor&(const Tensor&, const Tensor&)> out;
  double (*ref)(double);
};

const std::vector<UnaryCase>& floatCases() {
  static const std::vector<UnaryCase> cases = {
      {"sin", [](const Tensor& x) { return sin(x); }, sin_, sin_out,
       [](double x) { return std::sin(x); }},
      {"cos", [](const Tensor& x) { return cos(x); }, cos_, cos_out,
       [](double x) { return std::cos(x); }},
      {"atan", [](const Tensor& x) { return atan(x); }, atan_, atan_out,
       [](double x) { return std::atan(x); }},
      {"expm1", [](const Tensor& x) { return expm1(x); }, expm1_, expm1_out,
       [](double x) { return std::expm1(x); }},
      {"log1p", [](const Tensor& x) { return log1p(x); }, log1p_, log1p_out,
       [](double x) { return std::log1p(x); }},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x); }, rsqrt_, rsqrt_out,
       [](double x) { return 1.0 / std::sqrt(x); }},
      {"erf", [](const Tensor& x) { return erf(x); }, erf_, erf_out,
       [](double x) { return std::erf(x); }},
      {"asinh", [](const Tensor& x) { return asinh(x); }, asinh_, asinh_out,
       [](double x) { return std::asinh(x); }},
      {"erfc", [](const Tensor& x) { return erfc(x); }, erfc_, erfc_out,
       [](double x) { return std::erfc(x); }},
      {"lgamma", [](const Tensor& x) { return lgamma(x); }, lgamma_,
       lgamma_out, [](double x) { return std::lgamma(x); }},
      {"exp_", [](const Tensor& x) { return exp(x); }, exp_, exp_out,
       [](double x) { return std::exp(x); }},
  };
  return cases;
}

TEST(UnaryMath, ValuesDtypesAndLayouts) {
  for (const UnaryCase& c : floatCases()) {
    SCOPED_TRACE(c.name);
    const Tensor x = rangeOf({2, 3}, ScalarType::Double, 0.25, 0.5);
    std::vector<double> expected;
    for (double v : valuesOf(x)) expected.push_back(c.ref(v));
    for (const Tensor& in : {x, stridedCopy(x)}) {
      const std::vector<double> got = valuesOf(c.fn(in));
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i], expected[i], 1e-12);
      }
    }
    // Integral inputs compute in Float.
    const Tensor l = tensorOf({1, 2}, {2}, ScalarType::Long);
    EXPECT_EQ(c.fn(l).scalar_type(), ScalarType::Float);
    EXPECT_NEAR(valuesOf(c.fn(l))[1], c.ref(2.0), 1e-6);
    // 0-dim and empty.
    EXPECT_EQ(c.fn(tensorOf({1.0}, {})).dim(), 0);
    EXPECT_EQ(sizesOf(c.fn(emptyTensor({0, 4}, ScalarType::Float, cpu()))),
              (std::vector<int64_t>{0, 4}));
    // In place on a transposed view keeps the view's strides.
    Tensor t = columnMajor(x, 0, 1);
    const std::vector<int64_t> strides = vec(t.strides());
    c.inplace(t);
    EXPECT_EQ(vec(t.strides()), strides);
    const std::vector<double> got = valuesOf(t);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-12);
    // out= resizes an empty out and casts into a wider dtype.
    Tensor out = emptyTensor({0}, ScalarType::Double, cpu());
    c.out(out, to(x, ScalarType::Float));
    EXPECT_EQ(sizesOf(out), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(out.scalar_type(), ScalarType::Double);
    EXPECT_NEAR(valuesOf(out)[5], expected[5], 1e-6);
    // Meta: the shape and dtype only.
    const Tensor m = c.fn(metaTensor({4, 5}, ScalarType::Int));
    EXPECT_EQ(m.device(), meta());
    EXPECT_EQ(m.scalar_type(), ScalarType::Float);
    EXPECT_EQ(sizesOf(m), (std::vector<int64_t>{4, 5}));
  }
}

TEST(UnaryMath, InverseHyperbolicGammaAndAngle) {
  // acosh and atanh outside their domains give NaN, at its edge +-inf.
  const std::vector<double> a =
      valuesOf(acosh(tensorOf({1, 2, 0.5}, {3}, ScalarType::Double)));
  EXPECT_EQ(a[0], 0);
  EXPECT_NEAR(a[1], std::log(2 + std::sqrt(3.0)), 1e-15);
  EXPECT_TRUE(std::isnan(a[2]));
  const std::vector<double> t =
      valuesOf(atanh(tensorOf({0.5, 1, -1, 2}, {4}, ScalarType::Double)));
  EXPECT_NEAR(t[0], 0.5 * std::log(3.0), 1e-15);
  EXPECT_EQ(t[1], INFINITY);
  EXPECT_EQ(t[2], -INFINITY);
  EXPECT_TRUE(std::isnan(t[3]));
  // digamma: psi(1) = -gamma, psi(1/2) = -gamma - 2 ln 2, the reflection
  // for x < 0, -inf at 0 and +inf at -0, NaN at the negative integers.
  const double euler = 0.57721566490153286;
  const std::vector<double> d = valuesOf(digamma(tensorOf(
      {1, 0.5, -0.5, 0, -0.0, -2, 20}, {7}, ScalarType::Double)));
  EXPECT_NEAR(d[0], -euler, 1e-15);
  EXPECT_NEAR(d[1], -euler - 2 * std::log(2.0), 1e-14);
  EXPECT_NEAR(d[2], -euler - 2 * std::log(2.0) + 2, 1e-14);
  EXPECT_EQ(d[3], -INFINITY);
  EXPECT_EQ(d[4], INFINITY);
  EXPECT_TRUE(std::isnan(d[5]));
  // psi(20) = H_19 - gamma.
  double h19 = 0;
  for (int k = 1; k < 20; ++k) h19 += 1.0 / k;
  EXPECT_NEAR(d[6], h19 - euler, 1e-14);
  Tensor di = tensorOf({1, 0.5}, {2});
  digamma_(di);
  EXPECT_NEAR(valuesOf(di)[0], -euler, 1e-6);
  // angle: 0 or pi in the default float dtype for integers and Bool, NaN
  // kept; no in-place form; out= casts into a wider out.
  const Tensor l = tensorOf({-2, 0, 3}, {3}, ScalarType::Long);
  EXPECT_EQ(angle(l).scalar_type(), ScalarType::Float);
  EXPECT_EQ(valuesOf(angle(l)),
            (std::vector<double>{static_cast<float>(M_PI), 0, 0}));
  EXPECT_EQ(angle(tensorOf({1, 0}, {2}, ScalarType::Bool)).scalar_type(),
            ScalarType::Float);
  const std::vector<double> an = valuesOf(
      angle(tensorOf({-0.0, -1, std::nan("")}, {3}, ScalarType::Double)));
  EXPECT_EQ(an[0], 0);
  EXPECT_EQ(an[1], M_PI);
  EXPECT_TRUE(std::isnan(an[2]));
  Tensor out = emptyTensor({0}, ScalarType::Double, cpu());
  angle_out(out, tensorOf({-1, 1}, {2}));
  EXPECT_EQ(valuesOf(out),  // computed in Float, then cast
            (std::vector<double>{static_cast<float>(M_PI), 0}));
  EXPECT_THAT(errorOf([&] {
                Tensor o = emptyTensor({2}, ScalarType::Long, cpu());
                angle_out(o, tensorOf({-1, 1}, {2}));
              }),
              HasSubstr("can't be cast to the desired output type Long"));
}

TEST(UnaryMath, Polygamma) {
  // Known values: psi1(1) = pi^2 / 6, psi1(1/2) = pi^2 / 2,
  // psi2(1) = -2 zeta(3), psi3(1/2) = pi^4, psi4(1) = -24 zeta(5); n = 0
  // is digamma; the Hurwitz zeta's direct sum for a negative x:
  // psi2(-1/2) = psi2(1/2) + 2 / (1/2)^3 (the recurrence downwards).
  const double zeta3 = 1.2020569031595942, zeta5 = 1.0369277551433699;
  const Tensor x = tensorOf({1, 0.5, -0.5, 30}, {4}, ScalarType::Double);
  const std::vector<double> p0 = valuesOf(polygamma(0, x));
  const std::vector<double> d = valuesOf(digamma(x));
  for (size_t i = 0; i < d.size(); ++i) EXPECT_EQ(p0[i], d[i]);
  // trigamma is torch 1.13's short series, good to ~1e-9 (so are
  // torch's values: 1.6449340676383375 at 1).
  const std::vector<double> p1 = valuesOf(polygamma(1, x));
  EXPECT_NEAR(p1[0], M_PI * M_PI / 6, 2e-9);
  EXPECT_NEAR(p1[1], M_PI * M_PI / 2, 2e-9);
  const std::vector<double> p2 = valuesOf(polygamma(2, x));
  EXPECT_NEAR(p2[0], -2 * zeta3, 1e-14);
  EXPECT_NEAR(p2[1], -14 * zeta3, 1e-13);  // -2 (2^3 - 1) zeta(3)
  EXPECT_NEAR(p2[2], -14 * zeta3 + 16, 1e-13);
  const std::vector<double> p3 = valuesOf(polygamma(3, x));
  EXPECT_NEAR(p3[1], std::pow(M_PI, 4), 1e-11);
  EXPECT_NEAR(valuesOf(polygamma(4, x))[0], -24 * zeta5, 1e-13);
  // Poles: psi2 at 0 and the negative integers is -inf (the zeta's +inf,
  // times -2), psi3 +inf; psi1 at 0 is +inf.
  const Tensor poles = tensorOf({0, -1, -2}, {3}, ScalarType::Double);
  for (double v : valuesOf(polygamma(2, poles))) EXPECT_EQ(v, -INFINITY);
  for (double v : valuesOf(polygamma(3, poles))) EXPECT_EQ(v, INFINITY);
  EXPECT_EQ(valuesOf(polygamma(1, poles))[0], INFINITY);
  // Integers compute in Float; in place and out=.
  const Tensor l = tensorOf({1, 2}, {2}, ScalarType::Long);
  EXPECT_EQ(polygamma(1, l).scalar_type(), ScalarType::Float);
  Tensor f = tensorOf({1, 0.5}, {2});
  polygamma_(f, 1);
  EXPECT_NEAR(valuesOf(f)[0], M_PI * M_PI / 6, 1e-6);
  Tensor out = emptyTensor({0}, ScalarType::Double, cpu());
  polygamma_out(out, 2, x);
  EXPECT_EQ(valuesOf(out), p2);
  // Errors: n < 0 (CPU and Meta), Half on CPU (under torch's names), a
  // Float result into a Long self.
  EXPECT_THAT(errorOf([&] { polygamma(-1, x); }),
              HasSubstr("polygamma(n, x) does not support negative n."));
  const Tensor m = emptyTensor({2}, ScalarType::Half, Device(DeviceType::Meta));
  EXPECT_THAT(errorOf([&] { polygamma(-1, m); }), HasSubstr("negative n"));
  EXPECT_EQ(polygamma(2, m).scalar_type(), ScalarType::Half);
  const Tensor h = emptyTensor({2}, ScalarType::Half, cpu());
  EXPECT_THAT(errorOf([&] { polygamma(0, h); }),
              HasSubstr("\"digamma\" not implemented for 'Half'"));
  EXPECT_THAT(errorOf([&] { polygamma(1, h); }),
              HasSubstr("\"trigamma\" not implemented for 'Half'"));
  EXPECT_THAT(errorOf([&] { polygamma(3, h); }),
              HasSubstr("\"polygamma\" not implemented for 'Half'"));
  EXPECT_THAT(errorOf([&] { polygamma_(l, 1); }), HasSubstr("can't be cast"));
  EXPECT_EQ(valuesOf(l), (std::vector<double>{1, 2}));
}

TEST(UnaryMath, DtypeKeepingOperators) {
  const Tensor x = tensorOf({-2.5, -0.5, 0.5, 1.5, 2.5, -0.0}, {6});
  EXPECT_EQ(valuesOf(floor(x)), (std::vector<double>{-3, -1, 0, 1, 2, -0.0}));
  EXPECT_EQ(valuesOf(ceil(x)), (std::vector<double>{-2, -0.0, 1, 2, 3, -0.0}));
  // Half to even.
  EXPECT_EQ(valuesOf(round(x)), (std::vector<double>{-2, -0.0, 0, 2, 2, -0.0}));
  EXPECT_EQ(valuesOf(trunc(x)), (std::vector<double>{-2, -0.0, 0, 1, 2, -0.0}));
  EXPECT_EQ(valuesOf(sign(x)), (std::vector<double>{-1, -1, 1, 1, 1, 0}));
  EXPECT_EQ(valuesOf(round(tensorOf({1.2345, 1250}, {2}), 2))[0],
            static_cast<double>(1.23f));
  EXPECT_EQ(valuesOf(round(tensorOf({1250, 1350}, {2}), -2)),
            (std::vector<double>{1200, 1400}));
  // Integers: copies, same dtype.
  const Tensor l = tensorOf({-3, 4}, {2}, ScalarType::Long);
  EXPECT_EQ(floor(l).scalar_type(), ScalarType::Long);
  EXPECT_EQ(valuesOf(floor(l)), (std::vector<double>{-3, 4}));
  EXPECT_EQ(valuesOf(sign(l)), (std::vector<double>{-1, 1}));
  // The minimum int8 stays itself under abs, as two's complement wraps.
  EXPECT_EQ(valuesOf(abs_(tensorOf({-128}, {1}, ScalarType::Char))),
            (std::vector<double>{-128}));
  EXPECT_EQ(valuesOf(neg_(tensorOf({1}, {1}, ScalarType::Byte))),
            (std::vector<double>{255}));
  // relu_ keeps NaN and the dtype; relu.out casts into a wider out.
  Tensor r = tensorOf({-1, 2, std::nan("")}, {3});
  relu_(r);
  EXPECT_EQ(valuesOf(r)[0], 0);
  EXPECT_EQ(valuesOf(r)[1], 2);
  EXPECT_TRUE(std::isnan(valuesOf(r)[2]));
  Tensor wide = emptyTensor({3}, ScalarType::Double, cpu());
  relu_out(wide, tensorOf({-1, 2, 3}, {3}));
  EXPECT_EQ(valuesOf(wide), (std::vector<double>{0, 2, 3}));
  // bitwise_not: ~x for integers, !x for Bool, floating refused.
  EXPECT_EQ(valuesOf(bitwise_not(tensorOf({0, 5, -1}, {3}, ScalarType::Long))),
            (std::vector<double>{-1, -6, 0}));
  EXPECT_EQ(valuesOf(bitwise_not(tensorOf({1, 0}, {2}, ScalarType::Bool))),
            (std::vector<double>{0, 1}));
  EXPECT_THAT(errorOf([] { bitwise_not(tensorOf({1}, {1})); }),
              HasSubstr("\"bitwise_not_cpu\" not implemented for 'Float'"));
}

TEST(UnaryMath, Errors) {
  const Tensor b = tensorOf({1, 0}, {2}, ScalarType::Bool);
  EXPECT_THAT(errorOf([&] { floor(b); }), HasSubstr("not implemented for 'Bool'"));
  EXPECT_THAT(errorOf([&] { neg_(b); }), HasSubstr("Negation"));
  EXPECT_THAT(errorOf([&] { round(tensorOf({1}, {1}, ScalarType::Long), 1); }),
              HasSubstr("not implemented for 'Long'"));
  // A Float result into a Long tensor.
  const Tensor l = tensorOf({1, 2}, {2}, ScalarType::Long);
  EXPECT_THAT(errorOf([&] { sin_(l); }),
              HasSubstr("result type Float can't be cast to the desired output "
                        "type Long"));
  EXPECT_THAT(errorOf([&] { sin_out(l, tensorOf({1, 2}, {2})); }),
              HasSubstr("can't be cast"));
  // The dtype-keeping operators write their own dtype only.
  EXPECT_THAT(errorOf([&] {
                floor_out(emptyTensor({2}, ScalarType::Double, cpu()),
                          tensorOf({1, 2}, {2}));
              }),
              HasSubstr("Found dtype Double but expected Float"));
  // An expanded tensor written in place; a partially overlapping out.
  EXPECT_THAT(errorOf([&] { cos_(expand(tensorOf({1}, {1}), {3})); }),
              HasSubstr("more than one element"));
  const Tensor base = rangeOf({6});
  EXPECT_THAT(errorOf([&] {
                sin_out(slice(base, 0, 2, 6), slice(base, 0, 0, 4));
              }),
              HasSubstr("single memory location"));
  // A failed in-place call leaves the tensor as it was.
  EXPECT_EQ(valuesOf(l), (std::vector<double>{1, 2}));
  // Undefined input.
  EXPECT_THAT(errorOf([&] { sin(Tensor()); }), HasSubstr("Undefined"));
}

TEST(UnaryMath, Gradients) {
  const Tensor x = rangeOf({4}, ScalarType::Double, 0.2, 0.1);
  x.requires_grad_(true);
  sum(add(add(sin(x), log1p(x)), rsqrt(x))).backward();
  const std::vector<double> g = valuesOf(x.grad());
  const std::vector<double> v = valuesOf(x);
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_NEAR(g[i],
                std::cos(v[i]) + 1 / (1 + v[i]) - 0.5 * std::pow(v[i], -1.5),
                1e-12);
  }
  // In place on a non-leaf: the gradient goes through the old value.
  const Tensor y = rangeOf({3}, ScalarType::Double, 0.3, 0.2);
  y.requires_grad_(true);
  Tensor z = mul(y, 2.0);
  sin_(z);
  sum(z).backward();
  const std::vector<double> gy = valuesOf(y.grad());
  const std::vector<double> vy = valuesOf(y);
  for (size_t i = 0; i < vy.size(); ++i) {
    EXPECT_NEAR(gy[i], 2 * std::cos(2 * vy[i]), 1e-12);
  }
  // acosh' = 1 / sqrt(x^2 - 1), atanh' = 1 / (1 - x^2), erfc' = -erf',
  // lgamma' = digamma, angle' = 0.
  const Tensor w = rangeOf({3}, ScalarType::Double, 0.5, 1.5);  // 1.5 .. 2.5
  w.requires_grad_(true);
  const Tensor half = mul(w, 0.25);
  sum(add(add(add(acosh(w), atanh(half)), erfc(w)), add(lgamma(w), angle(w))))
      .backward();
  const std::vector<double> gw = valuesOf(w.grad());
  const std::vector<double> vw = valuesOf(w);
  const std::vector<double> psi = valuesOf(digamma(w));
  for (size_t i = 0; i < vw.size(); ++i) {
    const double v = vw[i];
    EXPECT_NEAR(gw[i],
                1 / std::sqrt(v * v - 1) + 0.25 / (1 - v * v / 16) -
                    2 / std::sqrt(M_PI) * std::exp(-v * v) + psi[i],
                1e-12);
  }
  // digamma' = polygamma(1, x), polygamma(n, x)' = polygamma(n + 1, x).
  const Tensor p = rangeOf({3}, ScalarType::Double, 0.5, 1.5);
  p.requires_grad_(true);
  sum(add(digamma(p), polygamma(2, p))).backward();
  const std::vector<double> gp = valuesOf(p.grad());
  const std::vector<double> t1 = valuesOf(polygamma(1, p));
  const std::vector<double> t3 = valuesOf(polygamma(3, p));
  for (size_t i = 0; i < gp.size(); ++i) {
    EXPECT_NEAR(gp[i], t1[i] + t3[i], 1e-12);
  }
  // On a leaf that requires grad: refused.
  EXPECT_THAT(errorOf([&] { exp_(y); }), HasSubstr("leaf"));
}

}  // namespace
}  // namespace turnout
