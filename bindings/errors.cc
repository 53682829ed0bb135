#include <pybind11/pybind11.h>

#include "bindings/bindings.h"
#include "bindings/python_error.h"
#include "dispatcher/error.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {

void initErrors(py::module_& m) {
  (void)m;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const PythonError& e) {
      // A Python exception carried through C++: raised again, unchanged.
      e.restore();
    } catch (const Error& e) {
      switch (e.kind()) {
        case ErrorKind::InvalidArgument:
          PyErr_SetString(PyExc_ValueError, e.what());
          return;
        case ErrorKind::Type:
          PyErr_SetString(PyExc_TypeError, e.what());
          return;
        case ErrorKind::Index:
          PyErr_SetString(PyExc_IndexError, e.what());
          return;
        case ErrorKind::NotImplemented:
          PyErr_SetString(PyExc_NotImplementedError, e.what());
          return;
        case ErrorKind::Internal:
          PyErr_SetString(PyExc_RuntimeError, e.what());
          return;
      }
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace bindings
}  // namespace turnout
