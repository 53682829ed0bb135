#include "kernels/vec_math.h"

#include <cmath>

#include "kernels/vec_math_avx2.h"

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#include <sleef.h>
#define TURNOUT_VEC_MATH_SLEEF 1
#endif

namespace turnout::vec_math {
namespace {

constexpr float kSqrtHalf = 0.70710678118654752440f;   // 1 / sqrt 2
constexpr float kSqrt2OverPi = 0.79788456080286535588f;  // sqrt(2 / pi)
constexpr float kGeluTanhCoeff = 0.044715f;

// The scalar formulas: the tail of each array (n % 4 elements), and every
// element where SLEEF is not built in.
inline float geluErfScalar(float v) {
  return 0.5f * v * (1.0f + std::erf(v * kSqrtHalf));
}
inline float geluTanhScalar(float v) {
  const float inner = kSqrt2OverPi * (v + kGeluTanhCoeff * v * v * v);
  return 0.5f * v * (1.0f + std::tanh(inner));
}

}  // namespace

#if TURNOUT_VEC_MATH_SLEEF

namespace {
// Eight lanes (vec_math_avx2.cc) where the CPU has AVX2 and FMA, as ATen's
// CPU capability AVX2; then four for the rest of a multiple of 4.
bool haveAvx2Fma() {
  static const bool have =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return have;
}
}  // namespace

// erf(z) = sign(z) (1 - q(t) exp(-z^2)), t = 1 / (1 + p |z|), q a
// degree-5 polynomial with q(0) = 0 (Abramowitz and Stegun 7.1.26;
// absolute error below 1.5e-7, the accuracy of ATen's vectorised GELU).
// SLEEF's own erff is 1.0-ULP but about eight times slower; only exp is
// taken from SLEEF.
namespace {
__m128 erfFast(__m128 z) {
  const __m128 sign_mask = _mm_set1_ps(-0.0f);
  const __m128 one = _mm_set1_ps(1.0f);
  const __m128 az = _mm_andnot_ps(sign_mask, z);
  const __m128 t =
      _mm_div_ps(one, _mm_add_ps(one, _mm_mul_ps(_mm_set1_ps(0.3275911f), az)));
  __m128 q = _mm_set1_ps(1.061405429f);
  q = _mm_add_ps(_mm_mul_ps(q, t), _mm_set1_ps(-1.453152027f));
  q = _mm_add_ps(_mm_mul_ps(q, t), _mm_set1_ps(1.421413741f));
  q = _mm_add_ps(_mm_mul_ps(q, t), _mm_set1_ps(-0.284496736f));
  q = _mm_add_ps(_mm_mul_ps(q, t), _mm_set1_ps(0.254829592f));
  q = _mm_mul_ps(q, t);
  const __m128 e = Sleef_expf4_u10(_mm_xor_ps(sign_mask, _mm_mul_ps(az, az)));
  const __m128 r = _mm_sub_ps(one, _mm_mul_ps(q, e));
  return _mm_or_ps(r, _mm_and_ps(sign_mask, z));  // z's sign; NaN stays NaN
}
}  // namespace

void geluErf(const float* x, float* y, int64_t n) {
  const __m128 half = _mm_set1_ps(0.5f), one = _mm_set1_ps(1.0f),
               scale = _mm_set1_ps(kSqrtHalf);
  int64_t i = haveAvx2Fma() ? avx2::geluErf(x, y, n) : 0;
  for (; i + 4 <= n; i += 4) {
    const __m128 v = _mm_loadu_ps(x + i);
    const __m128 e = erfFast(_mm_mul_ps(v, scale));
    _mm_storeu_ps(y + i, _mm_mul_ps(_mm_mul_ps(half, v), _mm_add_ps(one, e)));
  }
  for (; i < n; ++i) y[i] = geluErfScalar(x[i]);
}

void geluTanh(const float* x, float* y, int64_t n) {
  const __m128 half = _mm_set1_ps(0.5f), one = _mm_set1_ps(1.0f),
               k = _mm_set1_ps(kSqrt2OverPi), c = _mm_set1_ps(kGeluTanhCoeff);
  int64_t i = haveAvx2Fma() ? avx2::geluTanh(x, y, n) : 0;
  for (; i + 4 <= n; i += 4) {
    const __m128 v = _mm_loadu_ps(x + i);
    const __m128 cube = _mm_mul_ps(_mm_mul_ps(v, v), v);
    const __m128 inner = _mm_mul_ps(k, _mm_add_ps(v, _mm_mul_ps(c, cube)));
    // tanh(u) = 1 - 2 / (exp(2u) + 1): exp is SLEEF's fast one (its tanhf
    // is three times slower); exp's overflow gives 1, its underflow -1.
    const __m128 e = Sleef_expf4_u10(_mm_add_ps(inner, inner));
    const __m128 t = _mm_sub_ps(
        one, _mm_div_ps(_mm_set1_ps(2.0f), _mm_add_ps(e, one)));
    _mm_storeu_ps(y + i, _mm_mul_ps(_mm_mul_ps(half, v), _mm_add_ps(one, t)));
  }
  for (; i < n; ++i) y[i] = geluTanhScalar(x[i]);
}

double expShiftedSum(const float* x, float* y, int64_t n, float shift) {
  const __m128 s = _mm_set1_ps(shift);
  // Two double accumulators: the low and high pairs of each vector.
  __m128d lo = _mm_setzero_pd(), hi = _mm_setzero_pd();
  double wide_sum = 0;
  int64_t i = haveAvx2Fma() ? avx2::expShiftedSum(x, y, n, shift, &wide_sum) : 0;
  for (; i + 4 <= n; i += 4) {
    const __m128 e = Sleef_expf4_u10(_mm_sub_ps(_mm_loadu_ps(x + i), s));
    _mm_storeu_ps(y + i, e);
    lo = _mm_add_pd(lo, _mm_cvtps_pd(e));
    hi = _mm_add_pd(hi, _mm_cvtps_pd(_mm_movehl_ps(e, e)));
  }
  double parts[2];
  _mm_storeu_pd(parts, _mm_add_pd(lo, hi));
  double total = wide_sum + (parts[0] + parts[1]);
  for (; i < n; ++i) {
    y[i] = std::exp(x[i] - shift);
    total += y[i];
  }
  return total;
}

#else  // no SLEEF: the scalar formulas

void geluErf(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = geluErfScalar(x[i]);
}

void geluTanh(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = geluTanhScalar(x[i]);
}

double expShiftedSum(const float* x, float* y, int64_t n, float shift) {
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::exp(x[i] - shift);
    total += y[i];
  }
  return total;
}

#endif

}  // namespace turnout::vec_math
