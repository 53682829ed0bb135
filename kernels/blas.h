// One strided matrix product for the linear-algebra kernels:
//
//   C = beta * C + alpha * A @ B      (A: m x k, B: k x n, C: m x n)
//
// with every matrix given by a pointer and its row and column strides (in
// elements), so transposed and sliced operands need no copy.
//
//   blas_internal::gemm<float>(m, n, k, 1.0f, a, k, 1, b, 1, k, 0.0f,
//                              c, n, 1);   // C = A @ B^T-stored B
//
// Float and Double go through OpenBLAS's CBLAS (cblas_sgemm/cblas_dgemm),
// the transposes chosen from the strides; an operand CBLAS cannot describe
// (neither stride is 1) is copied first. Other types run a plain loop
// (accumulating Half/BFloat16 in float). OpenBLAS runs its own threads.
// Process exit waits for the calls inside OpenBLAS to return, calls made
// after exit began take the plain loop, and OpenBLAS's exit handler is kept
// from joining its workers, which could hang (see blas.cc).
//
// Thread safety: reentrant.
#ifndef TURNOUT_KERNELS_BLAS_H_
#define TURNOUT_KERNELS_BLAS_H_

#include <cstdint>

namespace turnout {
namespace blas_internal {

/// C = beta * C + alpha * A @ B. When beta is 0, C is not read (NaN in C
/// does not leak into the result), as BLAS defines. For Half/BFloat16,
/// alpha and beta are float; otherwise they have the element type.
/// Precondition: m, n, k >= 0; the pointers cover the described elements.
template <class T, class S>
void gemm(int64_t m, int64_t n, int64_t k, S alpha, const T* a, int64_t a_rs,
          int64_t a_cs, const T* b, int64_t b_rs, int64_t b_cs, S beta, T* c,
          int64_t c_rs, int64_t c_cs);

}  // namespace blas_internal
}  // namespace turnout

#endif  // TURNOUT_KERNELS_BLAS_H_
