// The eight-lane (AVX2 + FMA) bodies of kernels/vec_math.h, over SLEEF's
// AVX2 exp. This file alone is compiled with -mavx2 -mfma
// (kernels/BUILD.bazel), and vec_math.cc calls it only on a CPU that has
// both. It holds nothing but these loops and includes no header with
// inline functions of its own: an inline function compiled here could be
// the copy the linker keeps for the whole program, and run AVX2
// instructions on a CPU without them.
#include "kernels/vec_math_avx2.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#include <sleef.h>

namespace turnout::vec_math::avx2 {
namespace {

// erf(z) = sign(z) (1 - q(t) exp(-z^2)), t = 1 / (1 + p |z|): the same
// Abramowitz and Stegun 7.1.26 form as vec_math.cc's four-lane erf.
__m256 erf8(__m256 z) {
  const __m256 sign_mask = _mm256_set1_ps(-0.0f);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 az = _mm256_andnot_ps(sign_mask, z);
  const __m256 t = _mm256_div_ps(
      one, _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), az, one));
  __m256 q = _mm256_set1_ps(1.061405429f);
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-1.453152027f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(1.421413741f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-0.284496736f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(0.254829592f));
  q = _mm256_mul_ps(q, t);
  const __m256 e =
      Sleef_expf8_u10avx2(_mm256_xor_ps(sign_mask, _mm256_mul_ps(az, az)));
  const __m256 r = _mm256_fnmadd_ps(q, e, one);
  return _mm256_or_ps(r, _mm256_and_ps(sign_mask, z));
}

}  // namespace

int64_t geluErf(const float* x, float* y, int64_t n) {
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f),
               scale = _mm256_set1_ps(0.70710678118654752440f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 e = erf8(_mm256_mul_ps(v, scale));
    _mm256_storeu_ps(y + i,
                     _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, e)));
  }
  return i;
}

int64_t geluTanh(const float* x, float* y, int64_t n) {
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f),
               two = _mm256_set1_ps(2.0f),
               k = _mm256_set1_ps(0.79788456080286535588f),
               c = _mm256_set1_ps(0.044715f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 cube = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
    const __m256 inner = _mm256_mul_ps(k, _mm256_fmadd_ps(c, cube, v));
    // tanh(u) = 1 - 2 / (exp(2u) + 1), as the four-lane form.
    const __m256 e = Sleef_expf8_u10avx2(_mm256_add_ps(inner, inner));
    const __m256 t = _mm256_sub_ps(one, _mm256_div_ps(two, _mm256_add_ps(e, one)));
    _mm256_storeu_ps(y + i,
                     _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, t)));
  }
  return i;
}

int64_t expShiftedSum(const float* x, float* y, int64_t n, float shift,
                      double* sum) {
  const __m256 s = _mm256_set1_ps(shift);
  __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
    _mm256_storeu_ps(y + i, e);
    lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
    hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
  }
  double parts[4];
  _mm256_storeu_pd(parts, _mm256_add_pd(lo, hi));
  *sum = (parts[0] + parts[1]) + (parts[2] + parts[3]);
  return i;
}

}  // namespace turnout::vec_math::avx2

#else  // a compiler or target without AVX2: nothing done here

namespace turnout::vec_math::avx2 {
int64_t geluErf(const float*, float*, int64_t) { return 0; }
int64_t geluTanh(const float*, float*, int64_t) { return 0; }
int64_t expShiftedSum(const float*, float*, int64_t, float, double* sum) {
  *sum = 0;
  return 0;
}
}  // namespace turnout::vec_math::avx2

#endif
