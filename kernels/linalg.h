// Linear algebra operators (aten::mm, bmm, matmul, addmm, linear and their
// out= variants): the C++ front end. Each function calls through the
// dispatcher, so it runs the kernel of its arguments' device (CPU, Meta).
//
//   Tensor y = turnout::matmul(x, w);           // any of PyTorch's cases
//   Tensor z = turnout::addmm(bias, a, b, /*beta=*/1, /*alpha=*/2);
//   Tensor h = turnout::linear(x, weight, bias);  // x @ weight^T + bias
//
// The *_out functions take `out` first, as ATen's C++ API does:
// mm_out(out, a, b).
//
// Float and Double run on OpenBLAS's CBLAS; the other dtypes (except Bool)
// on a plain loop. Errors are PyTorch's: "mm(): mat1 and mat2 shapes cannot
// be multiplied (2x3 and 4x5)".
//
// Thread safety: as the dispatcher; the functions are reentrant.
#ifndef TURNOUT_KERNELS_LINALG_H_
#define TURNOUT_KERNELS_LINALG_H_

#include <optional>

#include "dispatcher/core/scalar.h"
#include "dispatcher/core/tensor.h"

namespace turnout {

/// aten::mm: self (n x m) @ mat2 (m x p) -> n x p.
Tensor mm(const Tensor& self, const Tensor& mat2);
/// aten::mm.out.
Tensor& mm_out(Tensor& out, const Tensor& self, const Tensor& mat2);

/// aten::bmm: self (b x n x m) @ mat2 (b x m x p) -> b x n x p.
Tensor bmm(const Tensor& self, const Tensor& mat2);
/// aten::bmm.out.
Tensor& bmm_out(Tensor& out, const Tensor& self, const Tensor& mat2);

/// aten::matmul: torch.matmul's rules (dot, matrix-vector, matrix-matrix,
/// and batched products with broadcast batch dimensions).
Tensor matmul(const Tensor& self, const Tensor& other);
/// aten::matmul.out.
Tensor& matmul_out(Tensor& out, const Tensor& self, const Tensor& other);

/// aten::addmm: beta * self + alpha * (mat1 @ mat2); self broadcasts to the
/// product's shape. With beta == 0, self is ignored (NaN in it does not
/// propagate).
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2,
             const Scalar& beta = 1, const Scalar& alpha = 1);
/// aten::addmm.out.
Tensor& addmm_out(Tensor& out, const Tensor& self, const Tensor& mat1,
                  const Tensor& mat2, const Scalar& beta, const Scalar& alpha);

/// aten::linear: input @ weight^T (+ bias). input is (*, in), weight is
/// (out, in), bias (out) or anything broadcasting to the result.
Tensor linear(const Tensor& input, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt);
/// aten::linear.out.
Tensor& linear_out(Tensor& out, const Tensor& input, const Tensor& weight,
                   const std::optional<Tensor>& bias);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_LINALG_H_
