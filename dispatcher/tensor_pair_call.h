// The unboxed call of an aten operator shaped like `a + b`:
// `(Tensor, Tensor[, Scalar]) -> Tensor`, through its typed handle, for the
// front ends that see such calls by the thousand (the Python bindings'
// OpOverload, the graph interpreter's CallUnboxed) and would otherwise box
// every argument.
//
//   std::optional<TensorPairCall> call = TensorPairCall::make(op);
//   if (call) out = call->call(a, b, alpha);  // or call(a, b) for 2 args
//
// make() says no (nullopt) for any other schema, and for an operator whose
// kernels were registered with another C++ signature (the typed handle's
// check): those calls stay boxed.
//
// Thread safety: a TensorPairCall is immutable; calls are as the typed
// handle's.
#ifndef TURNOUT_DISPATCHER_TENSOR_PAIR_CALL_H_
#define TURNOUT_DISPATCHER_TENSOR_PAIR_CALL_H_

#include <optional>

#include "dispatcher/core/scalar.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/operator_handle.h"

namespace turnout {

class TensorPairCall {
 public:
  using TensorTensorFn = Tensor(const Tensor&, const Tensor&);
  using TensorTensorScalarFn = Tensor(const Tensor&, const Tensor&,
                                      const Scalar&);

  /// The call for `op` when its schema is an aten operator's
  /// `(Tensor a, Tensor b[, Scalar s]) -> Tensor` (a and b positional, no
  /// alias annotations, no varargs) and its kernels take that C++
  /// signature; nullopt otherwise.
  static std::optional<TensorPairCall> make(const OperatorHandle& op);

  /// 2 or 3: whether the schema has the Scalar.
  int num_arguments() const { return tensor_tensor_ ? 2 : 3; }
  /// Precondition: num_arguments() == 2.
  Tensor call(const Tensor& a, const Tensor& b) const {
    return tensor_tensor_->call(a, b);
  }
  /// Precondition: num_arguments() == 3.
  Tensor call(const Tensor& a, const Tensor& b, const Scalar& s) const {
    return tensor_tensor_scalar_->call(a, b, s);
  }

 private:
  TensorPairCall() = default;
  std::optional<TypedOperatorHandle<TensorTensorFn>> tensor_tensor_;
  std::optional<TypedOperatorHandle<TensorTensorScalarFn>> tensor_tensor_scalar_;
};

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_TENSOR_PAIR_CALL_H_
