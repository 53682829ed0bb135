#include "kernels/vec_math.h"

#include <cmath>

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

void geluErf(const float* x, float* y, int64_t n) {
  const __m128 half = _mm_set1_ps(0.5f), one = _mm_set1_ps(1.0f),
               scale = _mm_set1_ps(kSqrtHalf);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m128 v = _mm_loadu_ps(x + i);
    const __m128 e = Sleef_erff4_u10(_mm_mul_ps(v, scale));
    _mm_storeu_ps(y + i, _mm_mul_ps(_mm_mul_ps(half, v), _mm_add_ps(one, e)));
  }
  for (; i < n; ++i) y[i] = geluErfScalar(x[i]);
}

void geluTanh(const float* x, float* y, int64_t n) {
  const __m128 half = _mm_set1_ps(0.5f), one = _mm_set1_ps(1.0f),
               k = _mm_set1_ps(kSqrt2OverPi), c = _mm_set1_ps(kGeluTanhCoeff);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m128 v = _mm_loadu_ps(x + i);
    const __m128 cube = _mm_mul_ps(_mm_mul_ps(v, v), v);
    const __m128 inner = _mm_mul_ps(k, _mm_add_ps(v, _mm_mul_ps(c, cube)));
    const __m128 t = Sleef_tanhf4_u10(inner);
    _mm_storeu_ps(y + i, _mm_mul_ps(_mm_mul_ps(half, v), _mm_add_ps(one, t)));
  }
  for (; i < n; ++i) y[i] = geluTanhScalar(x[i]);
}

double expShiftedSum(const float* x, float* y, int64_t n, float shift) {
  const __m128 s = _mm_set1_ps(shift);
  // Two double accumulators: the low and high pairs of each vector.
  __m128d lo = _mm_setzero_pd(), hi = _mm_setzero_pd();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m128 e = Sleef_expf4_u10(_mm_sub_ps(_mm_loadu_ps(x + i), s));
    _mm_storeu_ps(y + i, e);
    lo = _mm_add_pd(lo, _mm_cvtps_pd(e));
    hi = _mm_add_pd(hi, _mm_cvtps_pd(_mm_movehl_ps(e, e)));
  }
  double parts[2];
  _mm_storeu_pd(parts, _mm_add_pd(lo, hi));
  double total = parts[0] + parts[1];
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
