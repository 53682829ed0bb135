#include <pybind11/pybind11.h>

#include "bindings/bindings.h"
#include "bindings/python_error.h"
#include "dispatcher/core/error.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {
namespace {

// turnout._C.InvalidArgumentError: what an Error of kind InvalidArgument
// becomes. A ValueError, and a RuntimeError too, because PyTorch raises
// RuntimeError for the same registration and dispatch mistakes and code
// written for it catches that (issue 4). Set once by initErrors; one
// reference held for the life of the process.
PyObject* g_invalid_argument_error = nullptr;

}  // namespace

void initErrors(py::module_& m) {
  py::tuple bases = py::make_tuple(py::handle(PyExc_ValueError),
                                   py::handle(PyExc_RuntimeError));
  g_invalid_argument_error = PyErr_NewExceptionWithDoc(
      "turnout._C.InvalidArgumentError",
      "A turnout error of kind InvalidArgument (a bad name, schema, key or "
      "registration): both a ValueError and, as PyTorch raises for the same "
      "mistakes, a RuntimeError.",
      bases.ptr(), nullptr);
  if (g_invalid_argument_error == nullptr) throw py::error_already_set();
  m.add_object("InvalidArgumentError",
               py::reinterpret_borrow<py::object>(g_invalid_argument_error));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const PythonError& e) {
      // A Python exception carried through C++: raised again, unchanged.
      e.restore();
    } catch (const Error& e) {
      switch (e.kind()) {
        case ErrorKind::InvalidArgument:
          PyErr_SetString(g_invalid_argument_error, e.what());
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
        case ErrorKind::Load:
          PyErr_SetString(PyExc_OSError, e.what());
          return;
      }
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace bindings
}  // namespace turnout
