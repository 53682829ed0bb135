// The digamma function psi = Gamma' / Gamma and its derivatives, the
// polygamma functions psi^(n), as torch 1.13 computes them at their edges,
// for the CPU kernels of aten::digamma and aten::polygamma (unary_math.cc)
// and the CUDA ones (cuda/elementwise.cu, which includes this header too:
// host and device). Header-only; <math.h> only.
//
//   double y = digamma_internal::digamma(0.5);        // -1.9635...
//   float t = digamma_internal::trigamma(0.5f);       // 4.9348...
//   double p = digamma_internal::polygammaHigh<double>(2, 0.5);  // -16.83
#ifndef TURNOUT_KERNELS_DIGAMMA_H_
#define TURNOUT_KERNELS_DIGAMMA_H_

#include <math.h>
#include <stdint.h>

#ifndef TURNOUT_HOST_DEVICE
#if defined(__CUDACC__)
#define TURNOUT_HOST_DEVICE __host__ __device__
#else
#define TURNOUT_HOST_DEVICE
#endif
#endif

namespace turnout {
namespace digamma_internal {

/// psi(x) in double: -inf at 0, +inf at -0 (as torch 1.13), NaN at the
/// negative integers and for NaN; x < 0 by the reflection
/// psi(x) = psi(1 - x) - pi / tan(pi x); small x raised by
/// psi(x) = psi(x + 1) - 1 / x to x >= 10, where the asymptotic series
/// ln x - 1 / (2x) - sum B_2k / (2k x^2k) is good to double precision.
TURNOUT_HOST_DEVICE inline double digamma(double x) {
  if (x != x) return x;           // NaN
  if (x == 0) return -1.0 / x;    // -inf at +0, +inf at -0
  double result = 0;
  if (x < 0) {
    if (x == ::floor(x)) return (x - x) / (x - x);  // NaN at the poles
    // pi / tan(pi x), with x's fractional part r = x - trunc(x) in (-1, 0)
    // (exact, as torch 1.13's modf): pi r keeps its precision next to 0,
    // where x - floor(x) would round 1 - |x| (psi(-1e-8) off by ~1).
    const double frac = x - ::trunc(x);
    result = -M_PI / ::tan(M_PI * frac);
    x = 1 - x;
  }
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  const double inv2 = 1 / (x * x);
  // B_2k / (2k): 1/12, -1/120, 1/252, -1/240, 1/132, -691/32760, 1/12.
  const double series =
      inv2 * (1.0 / 12 -
              inv2 * (1.0 / 120 -
                      inv2 * (1.0 / 252 -
                              inv2 * (1.0 / 240 -
                                      inv2 * (1.0 / 132 -
                                              inv2 * (691.0 / 32760 -
                                                      inv2 / 12))))));
  return result + ::log(x) - 0.5 / x - series;
}

/// psi^(1)(x), the trigamma function, computed in T (float or double):
/// torch 1.13 computes it in the input's floating type, so a float input
/// near a pole gets float's rounding of pi x (psi1(-1.0f) is about 1.3e15,
/// not infinity). x < 1/2 by the reflection psi1(x) = pi^2 / sin^2(pi x) -
/// psi1(1 - x); then six steps of psi1(x) = psi1(x + 1) + 1 / x^2 and the
/// asymptotic series 1/x + 1/(2x^2) + 1/(6x^3) - 1/(30x^5) + 1/(42x^7).
template <class T>
TURNOUT_HOST_DEVICE inline T trigamma(T x) {
  const T pi = static_cast<T>(M_PI);
  T reflected = 0;
  const bool reflect = x < T(0.5);
  if (reflect) {
    const T s = ::sin(pi * x);
    reflected = pi * pi / (s * s);
    x = T(1) - x;
  }
  T sum = 0;
  for (int i = 0; i < 6; ++i) {
    sum += T(1) / (x * x);
    x += T(1);
  }
  const T inv2 = T(1) / (x * x);
  sum +=
      (T(1) + T(1) / (T(2) * x) +
       inv2 * (T(1) / T(6) - inv2 * (T(1) / T(30) - inv2 * (T(1) / T(42))))) /
      x;
  return reflect ? reflected - sum : sum;
}

/// The Hurwitz zeta function zeta(s, q) = sum over k >= 0 of (q + k)^-s,
/// for an integer s >= 2, in double: +inf at q = 0 and the negative
/// integers (and -inf); NaN for NaN and for q = +inf. The first terms are
/// summed directly until q + k > 9 (at least ten of them); the rest by
/// the Euler-Maclaurin formula, integral + correction terms in the
/// Bernoulli numbers B_2j / (2j)!, stopping once a term no longer changes
/// the sum.
TURNOUT_HOST_DEVICE inline double hurwitzZeta(double s, double q) {
  const double eps = 1.11022302462515654042e-16;   // 2^-53
  if (q <= 0 && q == ::floor(q)) return HUGE_VAL;  // a pole
  double sum = ::pow(q, -s);
  double a = q;
  double term = 0;
  for (int k = 0; k < 9 || a <= 9.0;) {
    ++k;
    a += 1;
    term = ::pow(a, -s);
    sum += term;
    if (::fabs(term / sum) < eps) return sum;
  }
  // The tail sum over j >= 1 of (a + j)^-s: a^(1-s) / (s - 1) - a^-s / 2
  // plus, for j = 1, 2, ..., B_2j / (2j)! * s (s+1) ... (s+2j-2) *
  // a^-(s+2j-1).
  const double bernoulli[12] = {
      1.0 / 6,       -1.0 / 30,       1.0 / 42,       -1.0 / 30,
      5.0 / 66,      -691.0 / 2730,   7.0 / 6,        -3617.0 / 510,
      43867.0 / 798, -174611.0 / 330, 854513.0 / 138, -236364091.0 / 2730};
  sum += term * a / (s - 1);
  sum -= 0.5 * term;
  double rising = s;        // s (s+1) ... (s+2j-2)
  double power = term / a;  // a^-(s+2j-1)
  double factorial = 2;     // (2j)!
  for (int j = 1; j <= 12; ++j) {
    const double t = bernoulli[j - 1] / factorial * rising * power;
    sum += t;
    if (::fabs(t / sum) < eps) return sum;
    rising *= (s + 2 * j - 1) * (s + 2 * j);
    power /= a * a;
    factorial *= (2.0 * j + 1) * (2.0 * j + 2);
  }
  return sum;
}

/// psi^(n)(x) for n >= 2: (-1)^(n+1) n! zeta(n + 1, x) in double, with n!
/// as exp(lgamma(n + 1)) (infinite from n = 171 on) and the zeta rounded
/// to T (the compute type) first, as torch 1.13's: a float zeta that
/// underflows to 0 gives -0 (or NaN times an infinite n!), not an
/// infinity.
template <class T>
TURNOUT_HOST_DEVICE inline double polygammaHigh(int64_t n, double x) {
  const double sign = (n % 2 != 0) ? 1.0 : -1.0;
  const T zeta = static_cast<T>(hurwitzZeta(static_cast<double>(n + 1), x));
  return sign * ::exp(::lgamma(static_cast<double>(n) + 1.0)) *
         static_cast<double>(zeta);
}

}  // namespace digamma_internal
}  // namespace turnout

#endif  // TURNOUT_KERNELS_DIGAMMA_H_
