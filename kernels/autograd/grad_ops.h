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

}  // namespace detail
}  // namespace autograd
}  // namespace turnout

#endif  // TURNOUT_KERNELS_AUTOGRAD_GRAD_OPS_H_
