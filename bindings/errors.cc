#include <pybind11/pybind11.h>

#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

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

// `text` as a Python string literal in double quotes.
std::string pyQuoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Appends `lines` (one or more, '\n'-separated) under the label, which is
// padded to one width so that every line's code starts in one column:
//   "  from Python:  lib = ...\n                lib.impl(...)\n".
void appendLabelled(std::string* out, std::string_view label,
                    std::string_view lines) {
  constexpr std::size_t kWidth = 14;  // "from Python:  "
  std::string pad(kWidth - label.size(), ' ');
  bool first = true;
  while (!lines.empty()) {
    std::size_t end = lines.find('\n');
    *out += "  ";
    *out += first ? std::string(label) + pad : std::string(kWidth, ' ');
    *out += lines.substr(0, end);
    *out += "\n";
    first = false;
    lines = end == std::string_view::npos ? std::string_view()
                                          : lines.substr(end + 1);
  }
}

// The fix in Python, as turnout.library spells it.
std::string pythonSpelling(const FixIt& fix) {
  const std::string ns = pyQuoted(fix.ns);
  switch (fix.action) {
    case FixIt::Action::RegisterKernel: {
      std::string code = "lib = turnout.library.Library(" + ns +
                         ", \"IMPL\")\nlib.impl(" + pyQuoted(fix.op) +
                         ", kernel, " + pyQuoted(fix.key) + ")";
      if (fix.key == "Meta") {
        code +=
            "\nor, for an operator made by turnout.library.custom_op: "
            "op.register_fake(kernel)";
      }
      return code;
    }
    case FixIt::Action::DefineOperator:
      return "lib = turnout.library.Library(" + ns +
             ", \"FRAGMENT\")\nlib.define(" + pyQuoted(fix.schema) + ")";
    case FixIt::Action::UseFragmentOrImpl: {
      std::string code = "lib = turnout.library.Library(" + ns +
                         ", \"FRAGMENT\")      # more definitions\n";
      code += "lib = turnout.library.Library(" + ns +
              ", \"IMPL\", \"CPU\")  # kernels\n";
      code +=
          "(a DEF Library's registrations last until it is dropped or its "
          "_destroy() is called)";
      return code;
    }
  }
  return "";
}

// The message as Python users read it: an error's fix-it is spelled in
// Python first, then in C++ (the operator may live in a C++ library).
std::string pythonMessage(const Error& e) {
  if (!e.fixIt()) return e.message();
  std::string section;
  appendLabelled(&section, "from Python:", pythonSpelling(*e.fixIt()));
  appendLabelled(&section, "from C++:", e.fixIt()->cpp);
  return e.messageWithFixIt(section);
}

// PyErr_SetString's job, but a message that is not valid UTF-8 (an excerpt
// of a user's text cut inside a character, bytes from a C library) is
// decoded with U+FFFD for the bad bytes: PyErr_SetString would raise the
// exception with no message at all.
void setError(PyObject* type, const std::string& message) {
  PyObject* text =
      PyUnicode_DecodeUTF8(message.data(),
                           static_cast<Py_ssize_t>(message.size()), "replace");
  if (text == nullptr) {  // out of memory: that error stands
    return;
  }
  PyErr_SetObject(type, text);
  Py_DECREF(text);
}

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
      const std::string message = pythonMessage(e);
      switch (e.kind()) {
        case ErrorKind::InvalidArgument:
          setError(g_invalid_argument_error, message);
          return;
        case ErrorKind::Type:
          setError(PyExc_TypeError, message);
          return;
        case ErrorKind::Index:
          setError(PyExc_IndexError, message);
          return;
        case ErrorKind::NotImplemented:
          setError(PyExc_NotImplementedError, message);
          return;
        case ErrorKind::Internal:
          setError(PyExc_RuntimeError, message);
          return;
        case ErrorKind::Load:
          setError(PyExc_OSError, e.what());
          return;
      }
      setError(PyExc_RuntimeError, message);
    }
  });
  // Standard exceptions thrown by this module's own functions: pybind11's
  // mapping, with the message decoded leniently (a C++ library's what() may
  // hold any bytes). A local translator: a global one would also take every
  // other pybind11 module's exceptions (torch's c10::Error, whose message
  // would then carry its C++ backtrace).
  py::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const PythonError&) {
      throw;  // the global translator above
    } catch (const Error&) {
      throw;
    } catch (const py::builtin_exception&) {
      throw;  // pybind11's own, with their Python types
    } catch (const py::error_already_set&) {
      throw;
    } catch (const std::bad_alloc&) {
      PyErr_NoMemory();
    } catch (const std::exception& e) {
      PyObject* type = PyExc_RuntimeError;
      if (dynamic_cast<const std::out_of_range*>(&e)) {
        type = PyExc_IndexError;
      } else if (dynamic_cast<const std::overflow_error*>(&e)) {
        type = PyExc_OverflowError;
      } else if (dynamic_cast<const std::domain_error*>(&e) ||
                 dynamic_cast<const std::invalid_argument*>(&e) ||
                 dynamic_cast<const std::length_error*>(&e) ||
                 dynamic_cast<const std::range_error*>(&e)) {
        type = PyExc_ValueError;
      }
      setError(type, e.what());
    }
  });
}

}  // namespace bindings
}  // namespace turnout
