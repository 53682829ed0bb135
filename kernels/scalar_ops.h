// The scalar and list operators TorchScript graphs use for shapes and
// control flow (aten::add.int, aten::lt.float, aten::__getitem__.t,
// aten::len.t, aten::Int.Tensor, aten::size, prim::NumToTensor.Scalar, ...),
// and item(), the one of them with a C++ front end.
//
//   Tensor x = full({}, 2.5);
//   Scalar s = item(x);             // 2.5 (Double)
//   double d = item<double>(x);
//
//   Stack stack{IValue(std::vector<int64_t>{4, 5}), IValue(-1)};
//   Dispatcher::singleton().findSchemaOrThrow("aten::__getitem__", "t")
//       .callBoxed(stack);          // stack == {5}
//
// All are registered at CompositeExplicitAutograd: an operator without
// tensor arguments dispatches to the Undefined entry, which that alias
// fills, and the ones that read a tensor serve every backend. The list
// operators over `t[]` are boxed kernels (any list: int, float, bool,
// Tensor or generic). Integer arithmetic wraps around on overflow, as
// TorchScript's int64; floordiv.int by zero raises, true division by zero gives
// IEEE's inf or nan, as torch 1.13's.
#ifndef TURNOUT_KERNELS_SCALAR_OPS_H_
#define TURNOUT_KERNELS_SCALAR_OPS_H_

#include "dispatcher/core/scalar.h"
#include "dispatcher/core/tensor.h"

namespace turnout {

/// aten::item: the value of a one-element tensor, as an integral, floating
/// or boolean Scalar by its dtype. Throws InvalidArgument "a Tensor with 6
/// elements cannot be converted to Scalar", and for a meta tensor.
Scalar item(const Tensor& self);

/// item() converted to T (int64_t, double, bool, float, ...).
template <class T>
T item(const Tensor& self) {
  return item(self).to<T>();
}

}  // namespace turnout

#endif  // TURNOUT_KERNELS_SCALAR_OPS_H_
