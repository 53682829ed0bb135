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
/// True when `grad` may become `variable`'s .grad as it is: obeyLayout
/// would return it unchanged (its strides are the variable's, or the sizes
/// differ, which are not ours to fix).
bool obeysLayout(const Tensor& grad, const Tensor& variable);
/// A new tensor with `grad`'s values laid out as obeyLayout lays it out
/// (aten::empty_like + aten::copy_, a copy even where `grad` obeys): what
/// a leaf's first .grad is when `grad` may not be kept (PyTorch's
/// clone_obey_contract). Recorded by autograd when grad mode is on.
Tensor cloneObeyingLayout(const Tensor& grad, const Tensor& variable);
/// aten::detach.
Tensor detachGrad(const Tensor& t);
/// a += b in place (aten::add_.Tensor); returns a.
void addGradsInplace(const Tensor& a, const Tensor& b);

}  // namespace detail
}  // namespace autograd
}  // namespace turnout

#endif  // TURNOUT_KERNELS_AUTOGRAD_GRAD_OPS_H_
