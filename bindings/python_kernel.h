// Python kernels: boxed kernels that hold a Python callable, registered from
// Python with _dispatch_library(...).impl(name, key, fn) or .fallback(key, fn)
// (library.cc), and the backward Node of an operator whose autograd formula
// is written in Python (turnout.library.custom_op(...).register_autograd).
//
//   KernelFunction k = makePythonKernel(py::reinterpret_borrow<py::object>(fn),
//                                       /*with_keyset=*/false);
//   lib.impl("myop", dispatch(DispatchKey::CPU,
//            CppFunction::fromKernelFunction(std::move(k), std::nullopt)));
//
// A call takes the GIL (the caller in ops.cc released it), turns the stack
// into (*args, **kwargs) by the operator's schema (keyword-only arguments as
// keywords; with_keyset puts the DispatchKeySet the kernel was called with
// first), calls, and pushes the result back by the schema's returns after
// checking it: "expected the kernel for ns::op to return a Tensor, got int".
// An exception raised by the callable travels through the dispatcher as a
// PythonError (python_error.h: type, value and traceback, raisable again
// and droppable on any thread, e.g. by a graph's Future) and is raised
// again, unchanged, at the Python boundary; the thread-local key sets are
// restored on the way by the dispatcher's guards.
//
// Lifetime: the dispatcher frees kernel functors late, on whatever thread
// reclaims them, with or without the GIL, possibly after the interpreter is
// gone. The callable is therefore released only with the GIL held by the
// releasing thread; otherwise it is queued and released by the next Python
// kernel call or registration (or by a pending call the interpreter runs
// soon), and after interpreter shutdown it is leaked rather than touched.
//
// Thread safety: a Python kernel may be called from any thread; it
// serialises on the GIL. Its per-operator schema cache is guarded by the GIL.
#ifndef TURNOUT_BINDINGS_PYTHON_KERNEL_H_
#define TURNOUT_BINDINGS_PYTHON_KERNEL_H_

#include <pybind11/pybind11.h>

#include <string>

#include "dispatcher/kernel_function.h"

namespace turnout {
namespace bindings {

/// A boxed kernel calling `fn(*args, **kwarg_only_args)`. With
/// `with_keyset`, the DispatchKeySet of the call comes first, to redispatch
/// below the kernel's own key; with `with_op` (fallbacks, which serve every
/// operator) the operator's turnout.ops OpOverload comes before that.
/// Precondition: the GIL is held; `fn` is callable (checked by the caller).
KernelFunction makePythonKernel(pybind11::object fn, bool with_keyset,
                                bool with_op);

/// The boxed entry point shared by every kernel makePythonKernel made
/// (`k.boxedFunction() == pythonKernelBoxedFunction()`), or null while none
/// has been made. Such a kernel takes the GIL itself; ops.cc calls it
/// without releasing the GIL first, which saves two GIL hand-overs a call.
BoxedKernelFn pythonKernelBoxedFunction();

/// A name for dumps: "python kernel my_relu (file.py:12)".
std::string describePythonCallable(pybind11::handle fn);

/// Releases queued references to Python objects whose owners died on a
/// thread without the GIL. Precondition: the GIL is held.
void releasePendingPyObjects();

/// Drops one strong reference to `obj` (null is ignored) from any thread,
/// never blocking on the GIL: at once when this thread holds the GIL,
/// otherwise queued for releasePendingPyObjects, and leaked once the
/// interpreter shuts down.
void releasePyObject(PyObject* obj);

/// `_C._autograd_record_python_node` and the schema-cache listener.
void initPythonKernel(pybind11::module_& m);

}  // namespace bindings
}  // namespace turnout

#endif  // TURNOUT_BINDINGS_PYTHON_KERNEL_H_
