#include "bindings/python_error.h"

#include "bindings/python_kernel.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {

// One strong reference to each object (trace may be null), dropped with
// releasePyObject: at once with the GIL, queued without it, leaked after
// interpreter shutdown.
struct PythonError::Held {
  // Takes one new reference to each.
  Held(py::handle t, py::handle v, py::handle tb)
      : type(t.inc_ref().ptr()),
        value(v.inc_ref().ptr()),
        trace(tb.inc_ref().ptr()) {}
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  ~Held() {
    releasePyObject(trace);
    releasePyObject(value);
    releasePyObject(type);
  }

  PyObject* const type;
  PyObject* const value;
  PyObject* const trace;
};

PythonError::PythonError(const py::error_already_set& e)
    : held_(std::make_shared<const Held>(e.type(), e.value(), e.trace())),
      what_(e.what()) {}

void PythonError::restore() const {
  // PyErr_Restore steals one reference to each.
  Py_XINCREF(held_->type);
  Py_XINCREF(held_->value);
  Py_XINCREF(held_->trace);
  PyErr_Restore(held_->type, held_->value, held_->trace);
}

void PythonError::raise() const {
  restore();
  throw py::error_already_set();
}

}  // namespace bindings
}  // namespace turnout
