// The Python dispatch key: dispatch modes and tensor subclasses.
//
// A boxed backend fallback registered for DispatchKey::Python hands every
// call that reaches that key to Python, as c10's Python fallback does:
//   - to the innermost active dispatch mode (turnout._mode.DispatchMode)
//     when one is active on this thread: entering a mode pushes it on a
//     thread-local stack and includes `Python` in the thread's key set;
//   - else to the `__turnout_dispatch__` classmethod of the Python tensor
//     subclasses among the arguments: a tensor made by _make_subclass or
//     _make_wrapper_subclass for such a class carries `Python` in its key set.
//
//   >>> class Log(turnout._mode.DispatchMode):
//   ...     def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
//   ...         print(func)
//   ...         return func(*args, **(kwargs or {}))
//   >>> with Log():
//   ...     turnout.ones(2) + 1
//
// The handler is called as handler.__turnout_dispatch__(func, types, args,
// kwargs), with `func` the turnout.ops overload object of the operator, the
// arguments converted by the schema (keyword-only ones in kwargs), and the
// mode popped for the duration, so that `func(*args)` goes on to the mode
// below it or the real kernel. Its result goes back by the schema's returns,
// checked. A Python exception reaches the caller with its type; the mode
// stack and the thread's key sets are restored on every path.
//
// Every tensor keeps its one Python object (a turnout.Tensor, or the
// subclass instance with its attributes) for as long as either Python or
// C++ uses it, and no longer, so that a call that goes through C++ (a mode,
// a subclass handler, a Python kernel, a graph, autograd) hands the same
// object back, and an object nothing uses is freed at once: see "Preserved
// Python objects" in python_mode.cc (PyTorch's PyObject preservation, over
// the TensorImpl's PyObjectSlot).
//
// Thread safety: the mode stack is per thread. Everything here runs with the
// GIL held, except the fallback itself, which takes it.
#ifndef TURNOUT_BINDINGS_PYTHON_MODE_H_
#define TURNOUT_BINDINGS_PYTHON_MODE_H_

#include <Python.h>
#include <pybind11/pybind11.h>

#include <string>

#include "bindings/tensor.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/core/tensor_impl.h"

namespace turnout {
namespace bindings {

/// The Python object of `t` (made by wrapTensor, _make_subclass or
/// _make_wrapper_subclass), borrowed; null when there is none. Precondition:
/// the GIL is held.
PyObject* preservedPythonTensor(const Tensor& t);
/// Python takes back an object that C++ held alone (see python_mode.cc).
PyObject* takeBackPythonTensor(const Tensor& t, PyObject* obj);
/// The object of `t` as a new reference, for handing `t` to Python (null
/// when it has none): when C++ held the object (its last Python reference
/// had gone), Python owns it again. Inline: wrapTensor runs it for every
/// tensor, and for one without an object it is one load and one compare.
/// Precondition: the GIL is held.
inline PyObject* reclaimPythonTensor(const Tensor& t) {
  PyObjectSlot& slot = t.unsafeGetTensorImpl()->pyobj_slot();
  auto* obj = static_cast<PyObject*>(slot.get());
  if (obj == nullptr) return nullptr;
  if (__builtin_expect(slot.owned(), 0)) return takeBackPythonTensor(t, obj);
  Py_INCREF(obj);
  return obj;
}
/// Records `obj` (a new isTensor object, the first for its tensor) as its
/// tensor's object, and gives its class the finalizer that hands the object
/// to C++ when its last Python reference goes while C++ still uses the
/// tensor. Precondition: the GIL is held; the tensor has no object yet.
void recordPythonTensor(PyObject* obj);
/// Makes `type` (the class wrapTensor instantiates) preserve its instances
/// before the first one is made, so that wrapTensor needs only set the
/// slot. Precondition: the GIL is held.
void preserveTensorClass(PyTypeObject* type);
/// Called by TensorBase's dealloc: `obj` (an isTensor object) is going, so
/// its tensor must stop pointing at it. Inline: every tensor's dealloc runs
/// it: one load, one compare and two stores.
/// Precondition: the GIL is held.
inline void forgetPythonTensor(PyObject* obj) {
  PyObjectSlot& slot = unpackTensor(obj).unsafeGetTensorImpl()->pyobj_slot();
  if (__builtin_expect(slot.get() == obj, 0)) slot.clear();
}
/// Makes `fn` (or nothing, for None) turnout.Tensor's own handler: a tensor
/// class whose __turnout_dispatch__ is that function has no handler of its
/// own (its tensors do not get the Python key). Precondition: the GIL is
/// held.
void setDefaultTensorHandler(pybind11::handle fn);
/// Calls `handler.__turnout_dispatch__(func, types, args, kwargs)`, or,
/// when turnout.library.register_torch_dispatch gave class `cls` (the mode's
/// class, or the subclass itself) a rule for `func`'s operator, that rule
/// as rule(handler, func, types, args, kwargs). Precondition: the GIL is
/// held.
pybind11::object callHandler(pybind11::handle handler, pybind11::handle cls,
                             pybind11::handle func, pybind11::handle types,
                             pybind11::handle args, pybind11::handle kwargs);
/// Whether a shallow copy of `t` (what detach() returns, `.data`) is made by
/// the Python handlers: a dispatch mode is active or `t` is a subclass with a
/// handler, and the thread has not excluded the Python key.
bool pythonMakesShallowCopy(const Tensor& t);
/// The shallow copy of `t` made by the handlers, as torch makes it under
/// Python dispatch: one aten::detach call that the innermost mode, else the
/// subclass's handler, sees. Precondition: pythonMakesShallowCopy(t); the
/// GIL is held.
Tensor shallowCopyThroughPython(const Tensor& t);
/// "" or, when `obj` has torch's __torch_dispatch__, the end of a message
/// saying to define __turnout_dispatch__ instead.
std::string torchDispatchHint(pybind11::handle obj);

}  // namespace bindings
}  // namespace turnout

#endif  // TURNOUT_BINDINGS_PYTHON_MODE_H_
