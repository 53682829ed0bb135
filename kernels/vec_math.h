// Vectorised float math for the CPU kernels' contiguous fast paths: GELU
// (erf and tanh forms) and the shifted exp of softmax, eight floats at a time
// on a CPU with AVX2 and FMA (vec_math_avx2.cc), four otherwise, with exp
// from SLEEF (Debian's libsleef, 1.0 ULP). glibc's scalar erff alone made turnout's
// GELU three times slower than ATen's (bench/README.md, "transformer
// block").
//
// Every function takes contiguous arrays of n elements; y may be x. exp is
// within 1.0 ULP; erf within 1.5e-7 absolute (a rational-polynomial form,
// as ATen's vectorised GELU); tanh through exp. NaN propagates, infinities
// give the scalar formulas' limits. The n % 4 tail takes the scalar
// formulas. The lanes' results differ from each other's and the scalar
// formulas' by rounding only (FMA in the eight-lane form). Thread safety: pure functions.
#ifndef TURNOUT_KERNELS_VEC_MATH_H_
#define TURNOUT_KERNELS_VEC_MATH_H_

#include <cstdint>

namespace turnout::vec_math {

/// y[i] = x[i] / 2 * (1 + erf(x[i] / sqrt 2)): GELU, approximate="none".
void geluErf(const float* x, float* y, int64_t n);

/// y[i] = x[i] / 2 * (1 + tanh(sqrt(2/pi) (x[i] + 0.044715 x[i]^3))):
/// GELU, approximate="tanh".
void geluTanh(const float* x, float* y, int64_t n);

/// y[i] = exp(x[i] - shift); returns the sum of the y[i], accumulated in
/// double (softmax's denominator).
double expShiftedSum(const float* x, float* y, int64_t n, float shift);

}  // namespace turnout::vec_math

#endif  // TURNOUT_KERNELS_VEC_MATH_H_
