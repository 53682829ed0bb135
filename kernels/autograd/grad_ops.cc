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

}  // namespace detail
}  // namespace autograd
}  // namespace turnout
