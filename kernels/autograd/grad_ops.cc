#include "kernels/autograd/grad_ops.h"

#include "dispatcher/dispatcher.h"

namespace turnout {
namespace autograd {
namespace detail {

Tensor addGrads(const Tensor& a, const Tensor& b) {
  static const OperatorHandle op =
      Dispatcher::singleton().findSchemaOrThrow("aten::add", "Tensor");
  Stack stack{IValue(a), IValue(b), IValue(Scalar(int64_t{1}))};
  op.callBoxed(stack);
  return std::move(stack.back()).toTensor();
}

Tensor onesLike(const Tensor& t) {
  static const OperatorHandle op =
      Dispatcher::singleton().findSchemaOrThrow("aten::ones_like", "");
  // ones_like(Tensor self, *, ScalarType? dtype, Layout? layout,
  //           Device? device, bool? pin_memory, MemoryFormat? memory_format)
  Stack stack{IValue(t), IValue(), IValue(), IValue(), IValue(), IValue()};
  op.callBoxed(stack);
  return std::move(stack.back()).toTensor();
}

bool obeysLayout(const Tensor& grad, const Tensor& variable) {
  return grad.strides() == variable.strides() ||
         grad.sizes() != variable.sizes();
}

Tensor cloneObeyingLayout(const Tensor& grad, const Tensor& variable) {
  static const OperatorHandle empty_like =
      Dispatcher::singleton().findSchemaOrThrow("aten::empty_like", "");
  static const OperatorHandle copy =
      Dispatcher::singleton().findSchemaOrThrow("aten::copy_", "");
  // Sizes that differ are not ours to fix: laid out as grad is.
  const Tensor& like = grad.sizes() == variable.sizes() ? variable : grad;
  Stack stack{IValue(like), IValue(grad.scalar_type()), IValue(),
              IValue(grad.device()), IValue(), IValue()};
  empty_like.callBoxed(stack);
  Tensor out = std::move(stack.back()).toTensor();
  stack = Stack{IValue(out), IValue(grad), IValue(false)};
  copy.callBoxed(stack);
  return out;
}

Tensor detachGrad(const Tensor& t) {
  static const OperatorHandle op =
      Dispatcher::singleton().findSchemaOrThrow("aten::detach", "");
  Stack stack{IValue(t)};
  op.callBoxed(stack);
  return std::move(stack.back()).toTensor();
}

void addGradsInplace(const Tensor& a, const Tensor& b) {
  static const OperatorHandle op =
      Dispatcher::singleton().findSchemaOrThrow("aten::add_", "Tensor");
  Stack stack{IValue(a), IValue(b), IValue(Scalar(int64_t{1}))};
  op.callBoxed(stack);
}

Tensor obeyLayout(Tensor grad, const Tensor& variable) {
  if (obeysLayout(grad, variable)) {
    return grad;  // the common case; sizes that differ are not ours to fix
  }
  static const OperatorHandle empty_like =
      Dispatcher::singleton().findSchemaOrThrow("aten::empty_like", "");
  static const OperatorHandle copy =
      Dispatcher::singleton().findSchemaOrThrow("aten::copy_", "");
  // empty_like(self, *, dtype, layout, device, pin_memory, memory_format):
  // preserve_format gives the variable's strides when it is non-overlapping
  // and dense, else contiguous ones. dtype and device are the gradient's.
  Stack stack{IValue(variable), IValue(grad.scalar_type()), IValue(),
              IValue(grad.device()), IValue(), IValue()};
  empty_like.callBoxed(stack);
  Tensor out = std::move(stack.back()).toTensor();
  if (out.strides() == grad.strides()) return grad;
  stack = Stack{IValue(out), IValue(grad), IValue(false)};
  copy.callBoxed(stack);
  return out;
}

}  // namespace detail
}  // namespace autograd
}  // namespace turnout
