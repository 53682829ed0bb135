// The digamma function psi = Gamma' / Gamma as torch 1.13 computes it at
// its edges, for the CPU kernel of aten::digamma (unary_math.cc) and the
// CUDA one (cuda/elementwise.cu, which includes this header too: host and
// device). Header-only; <math.h> only.
//
//   double y = digamma_internal::digamma(0.5);   // -1.9635...
#ifndef TURNOUT_KERNELS_DIGAMMA_H_
#define TURNOUT_KERNELS_DIGAMMA_H_

#include <math.h>

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
    // pi / tan(pi x), with x reduced to (-1, 0] first to keep pi x exact.
    const double frac = x - ::floor(x);
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

}  // namespace digamma_internal
}  // namespace turnout

#endif  // TURNOUT_KERNELS_DIGAMMA_H_
