// The few operators autograd itself needs (summing gradients, seeding
// backward with ones), called boxed through the dispatcher so that any
// backend that implements aten::add.Tensor and aten::ones_like works.
//
// Thread safety: stateless.
#ifndef TURNOUT_KERNELS_AUTOGRAD_GRAD_OPS_H_
#define TURNOUT_KERNELS_AUTOGRAD_GRAD_OPS_H_

#include "dispatcher/core/tensor.h"

namespace turnout {
namespace autograd {
namespace detail {

/// a + b (aten::add.Tensor).
Tensor addGrads(const Tensor& a, const Tensor& b);
/// ones with t's sizes, dtype and device (aten::ones_like).
Tensor onesLike(const Tensor& t);
/// `grad` as a leaf's .grad keeps it, as PyTorch's: with `variable`'s strides
/// where the variable is non-overlapping and dense, else contiguous
/// (aten::empty_like + aten::copy_ where `grad`'s strides differ). So a
/// .grad is never an expanded or gapped view and can be updated in place.
Tensor obeyLayout(Tensor grad, const Tensor& variable);

}  // namespace detail
}  // namespace autograd
}  // namespace turnout

#endif  // TURNOUT_KERNELS_AUTOGRAD_GRAD_OPS_H_
