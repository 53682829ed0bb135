// turnout._C: the extension module behind the `turnout` Python package.
#include <pybind11/pybind11.h>

#include "bindings/bindings.h"
#include "dispatcher/core/build_info.h"

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
  turnout::bindings::initTesting(m);

  m.def(
      "_build_info",
      [] {
        turnout::BuildInfo info = turnout::buildInfo();
        pybind11::dict d;
        d["version"] = info.version;
        d["soname"] = info.soname;
        d["optimized"] = info.optimized;
        d["assertions"] = info.assertions;
#ifdef __OPTIMIZE__
        d["extension_optimized"] = true;
#else
        d["extension_optimized"] = false;
#endif
        return d;
      },
      "The runtime's version and build: {'version', 'soname', 'optimized', "
      "'assertions', 'extension_optimized'} (the last for _C itself).");
}
