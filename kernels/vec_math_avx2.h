// The AVX2 + FMA bodies of kernels/vec_math.h (vec_math_avx2.cc, the one
// file compiled with -mavx2 -mfma). Each processes the first n - n % 8
// elements, eight at a time, and returns how many it did; the caller does
// the rest. Call only where the CPU has AVX2 and FMA (vec_math.cc checks).
#ifndef TURNOUT_KERNELS_VEC_MATH_AVX2_H_
#define TURNOUT_KERNELS_VEC_MATH_AVX2_H_

#include <cstdint>

namespace turnout::vec_math::avx2 {

int64_t geluErf(const float* x, float* y, int64_t n);
int64_t geluTanh(const float* x, float* y, int64_t n);
/// Also sets *sum to the sum of the y[i] it wrote, in double.
int64_t expShiftedSum(const float* x, float* y, int64_t n, float shift,
                      double* sum);

}  // namespace turnout::vec_math::avx2

#endif  // TURNOUT_KERNELS_VEC_MATH_AVX2_H_
