// turnout._C without the CUDA toolkit (bindings/cuda.cc when it is found):
// turnout.cuda reports that CUDA is not built and raises a clear error for
// anything that needs it (python/turnout/cuda.py).
#include <pybind11/pybind11.h>

#include "bindings/bindings.h"

namespace turnout {
namespace bindings {

void initCuda(pybind11::module_& m) {
  m.attr("_cuda_isBuilt") = false;
  m.def("_cuda_getDeviceCount", [] { return 0; });
}

}  // namespace bindings
}  // namespace turnout
