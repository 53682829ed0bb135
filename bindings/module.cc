// turnout._C: the extension module behind the `turnout` Python package.
#include <pybind11/pybind11.h>

#include "bindings/bindings.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "turnout's C++ core: dispatch keys and the dispatcher";
  turnout::bindings::initErrors(m);
  turnout::bindings::initDispatchKeys(m);
  turnout::bindings::initDispatcher(m);
  turnout::bindings::initTypes(m);
  turnout::bindings::initTensor(m);
  turnout::bindings::initOps(m);
  turnout::bindings::initLibrary(m);
  turnout::bindings::initJit(m);
  turnout::bindings::initDebug(m);
  turnout::bindings::initPythonKernel(m);
  turnout::bindings::initPythonMode(m);
  turnout::bindings::initCuda(m);
}
