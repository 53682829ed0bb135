// turnout._C_cuda: turnout.cuda's functions (cuda.cc) in an extension module
// of their own, built where the CUDA toolkit was found. It links
// libturnout_cuda.so, the CUDA kernels with cudart and cuBLAS, so that
// `import turnout` loads those only where they can be used: the package
// imports this module when a CUDA driver is present, or when TURNOUT_CUDA=1
// (python/turnout/_cuda_loader.py). Importing it registers the CUDA kernels
// (libturnout_cuda's static initialisers) into the process's one runtime,
// libturnout.so, which turnout._C loaded first.
#include <Python.h>
#include <pybind11/pybind11.h>

#include "bindings/bindings.h"
#include "bindings/tensor.h"

namespace turnout {
namespace bindings {
namespace {

// _C's TensorBase, set once at import.
PyTypeObject* g_tensor_base = nullptr;

}  // namespace

// The Tensor type caster (tensor.h) asks for TensorBase: here it is _C's,
// which this module's functions take tensors of.
PyTypeObject* tensorBaseType() { return g_tensor_base; }

}  // namespace bindings
}  // namespace turnout

PYBIND11_MODULE(_C_cuda, m) {
  m.doc() = "turnout's CUDA kernels and turnout.cuda's functions";
  // _C first: it owns TensorBase, and registers the translators (errors.cc)
  // that turn the turnout::Error this module's functions throw into Python
  // exceptions. The reference is kept for the life of the process.
  pybind11::object base =
      pybind11::module_::import("turnout._C").attr("TensorBase");
  turnout::bindings::g_tensor_base =
      reinterpret_cast<PyTypeObject*>(base.release().ptr());
  turnout::bindings::initCuda(m);
}
