#include "bindings/python_error.h"

#include <Python.h>
#include <frameobject.h>

#include <string>

#include "bindings/gil.h"
#include "bindings/python_kernel.h"
#include "dispatcher/core/error.h"

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

namespace {

// `obj` (a str) as UTF-8, invalid code points replaced; "" when not a str.
std::string utf8(PyObject* obj) {
  if (obj == nullptr || !PyUnicode_Check(obj)) return "";
  PyObject* bytes = PyUnicode_AsEncodedString(obj, "utf-8", "replace");
  if (bytes == nullptr) {
    PyErr_Clear();
    return "";
  }
  std::string out(PyBytes_AS_STRING(bytes), PyBytes_GET_SIZE(bytes));
  Py_DECREF(bytes);
  return out;
}

// "TypeError: message" and the traceback's frames, innermost last, built
// without pybind11's error_already_set::what(): that one formats by calling
// Python, and at Python's recursion limit a failure to format is formatted
// again, without end (pybind11 2.10: a C stack overflow). Here the message
// comes from str(value) or, when even that fails, from the exception's own
// single str argument, and the frames are read from the traceback objects.
// Precondition: the GIL is held; no Python error is set.
std::string describe(PyObject* type, PyObject* value, PyObject* trace) {
  std::string out = type != nullptr && PyType_Check(type)
                        ? reinterpret_cast<PyTypeObject*>(type)->tp_name
                        : "exception";
  std::string message;
  if (value != nullptr) {
    PyObject* str = PyObject_Str(value);
    if (str != nullptr) {
      message = utf8(str);
      Py_DECREF(str);
    } else {
      PyErr_Clear();
      if (PyExceptionInstance_Check(value)) {
        PyObject* args = reinterpret_cast<PyBaseExceptionObject*>(value)->args;
        if (args != nullptr && PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 1) {
          message = utf8(PyTuple_GET_ITEM(args, 0));
        }
      }
    }
  }
  if (!message.empty()) out += ": " + message;
  if (trace != nullptr && PyTraceBack_Check(trace)) {
    out += "\n\nAt:\n";
    int frames = 0;
    for (auto* tb = reinterpret_cast<PyTracebackObject*>(trace); tb != nullptr;
         tb = tb->tb_next) {
      if (++frames > 64) {  // a recursion's traceback: the first 64 frames
        out += "  ...\n";
        break;
      }
      PyCodeObject* code = PyFrame_GetCode(tb->tb_frame);
      out += "  " + utf8(code->co_filename) + "(" +
             std::to_string(tb->tb_lineno) + "): " + utf8(code->co_name) +
             "\n";
      Py_DECREF(code);
    }
  }
  return out;
}

}  // namespace

PythonError::PythonError(const py::error_already_set& e)
    : held_(std::make_shared<const Held>(e.type(), e.value(), e.trace())),
      what_(describe(e.type().ptr(), e.value().ptr(), e.trace().ptr())) {}

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

void warnAsUserWarning(const std::string& text) {
  if (!Py_IsInitialized()) {
    turnout::warn(text);
    return;
  }
  GilAcquire gil;
  if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) != 0) {
    py::error_already_set e;
    throw PythonError(e);
  }
}

void deferWarning(const std::string& text) {
  if (tls_deferred_warnings == nullptr) {
    tls_deferred_warnings = new std::vector<std::string>();  // per thread
  }
  tls_deferred_warnings->push_back(text);
}

void issueDeferredWarnings() {
  std::vector<std::string> warnings;
  warnings.swap(*tls_deferred_warnings);
  for (const std::string& text : warnings) {
    if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) != 0) {
      py::error_already_set e;
      throw PythonError(e);
    }
  }
}

}  // namespace bindings
}  // namespace turnout
