// The Python tensor object: turnout._C.TensorBase, a CPython type holding one
// turnout::Tensor, subclassed by the Python class turnout.Tensor (and later
// by users' tensor subclasses). A pybind11 type caster lets every binding
// take and return turnout::Tensor directly.
//
//   Tensor t = unpackTensor(obj);           // precondition: isTensor(obj)
//   py::object o = wrapTensor(std::move(t)); // an instance of turnout.Tensor
//
// wrapTensor makes instances of the class registered by
// _C._set_tensor_class (turnout.Tensor once the package is imported;
// TensorBase before that). An undefined Tensor wraps as None.
//
// Thread safety: call with the GIL held.
#ifndef TURNOUT_BINDINGS_TENSOR_H_
#define TURNOUT_BINDINGS_TENSOR_H_

#include <Python.h>
#include <pybind11/pybind11.h>

#include "dispatcher/core/tensor.h"

namespace turnout {
namespace bindings {

/// The layout of a TensorBase instance (and of its subclasses' instances,
/// which append to it).
struct PyTensor {
  PyObject_HEAD
  Tensor cdata;
};

/// turnout._C.TensorBase. Precondition: initTensor has run.
PyTypeObject* tensorBaseType();

/// True for TensorBase and its subclasses' instances.
inline bool isTensor(PyObject* obj) {
  return PyObject_TypeCheck(obj, tensorBaseType());
}
/// Precondition: isTensor(obj).
inline const Tensor& unpackTensor(PyObject* obj) {
  return reinterpret_cast<PyTensor*>(obj)->cdata;
}
/// A new Python tensor holding `t`; None when `t` is undefined.
pybind11::object wrapTensor(Tensor t);

/// The wrapped number (TensorImpl::is_wrapped_number) torch 1.13 makes of a
/// Python number given for a Tensor argument (`x * 4`, mul.Tensor(x, 4)): a
/// 0-dim CPU tensor of dtype bool for a bool, int64 for an int (or an
/// object with __index__), float64 for a float (kernels' wrappedScalarTensor).
/// Made outside the dispatcher, so a mode sees no call. An undefined Tensor for any other object (and
/// for an int outside int64).
Tensor wrapNumber(PyObject* obj);
/// The Python number `t` holds, as torch hands a wrapped number to a Python
/// handler. Precondition: t.unsafeGetTensorImpl()->is_wrapped_number().
pybind11::object unwrapNumber(const Tensor& t);

}  // namespace bindings
}  // namespace turnout

namespace pybind11 {
namespace detail {

template <>
struct type_caster<turnout::Tensor> {
 public:
  PYBIND11_TYPE_CASTER(turnout::Tensor, const_name("Tensor"));

  bool load(handle src, bool /*convert*/) {
    if (!turnout::bindings::isTensor(src.ptr())) return false;
    value = turnout::bindings::unpackTensor(src.ptr());
    return true;
  }
  static handle cast(const turnout::Tensor& t, return_value_policy, handle) {
    return turnout::bindings::wrapTensor(t).release();
  }
};

}  // namespace detail
}  // namespace pybind11

#endif  // TURNOUT_BINDINGS_TENSOR_H_
