// The areas of the turnout._C extension. Each bindings file defines one
// init function; module.cc calls them all (but initCuda: cuda_module.cc,
// turnout._C_cuda). Bindings convert and delegate: no logic that is not
// about Python lives here.
#ifndef TURNOUT_BINDINGS_BINDINGS_H_
#define TURNOUT_BINDINGS_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace turnout {
namespace bindings {

/// turnout::Error -> ValueError / TypeError / IndexError /
/// NotImplementedError / RuntimeError, by kind; an error's fix-it (FixIt)
/// is spelled in Python as well as in C++.
void initErrors(pybind11::module_& m);
/// DispatchKey, DispatchKeySet.
void initDispatchKeys(pybind11::module_& m);
/// The `_dispatch_*` inspection functions and the thread-local key sets.
void initDispatcher(pybind11::module_& m);
/// dtype, layout, memory_format and device objects (types.cc).
void initTypes(pybind11::module_& m);
/// TensorBase, NumPy and DLPack exchange, autograd state (tensor.cc).
void initTensor(pybind11::module_& m);
/// Operator overloads and packets, FunctionSchema, key guards (ops.cc).
void initOps(pybind11::module_& m);
/// _dispatch_library for C++ kernels (library.cc).
void initLibrary(pybind11::module_& m);
/// turnout._C._jit: Graph, the interpreter, trace, fork/wait (jit.cc).
void initJit(pybind11::module_& m);
/// explain, the dispatch trace, the profiler, registry snapshots and
/// counters, behind turnout.debug / profiler / utils (debug.cc).
void initDebug(pybind11::module_& m);
/// Python kernels' helpers: the autograd node (python_kernel.cc).
void initPythonKernel(pybind11::module_& m);
/// Dispatch modes and tensor subclasses: the Python key (python_mode.cc).
void initPythonMode(pybind11::module_& m);
/// opcheck and gradcheck, behind turnout.library.opcheck and
/// turnout.autograd.gradcheck (testing.cc).
void initTesting(pybind11::module_& m);
/// turnout.cuda: devices, streams, events, the caching allocator
/// (cuda.cc). Not part of _C: the module turnout._C_cuda (cuda_module.cc),
/// built where the CUDA toolkit was found.
void initCuda(pybind11::module_& m);

}  // namespace bindings
}  // namespace turnout

#endif  // TURNOUT_BINDINGS_BINDINGS_H_
