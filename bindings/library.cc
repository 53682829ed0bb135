// turnout._C._dispatch_library: a Library made at run time from Python, for
// as c10's: def_ / define declare schemas, def_name_t_t and impl_t_t register
// an identity kernel `(Tensor) -> Tensor` (for tests and benchmarks),
// impl and fallback register Python callables as kernels (python_kernel.h),
// fallback_fallthrough a fallthrough fallback. Dropping the returned object
// deregisters everything it registered. turnout.library.Library is the
// documented face of this.
//
//   >>> lib = _C._dispatch_library("DEF", "myns", "")
//   >>> _ = lib.def_name_t_t("identity")   # returns lib, as torch's
//   >>> turnout.ops.myns.identity(t) is t   # same tensor (new wrapper)
//   >>> lib.define("twice(Tensor x) -> Tensor")
//   >>> lib.impl("twice", "CPU", lambda x: x + x)
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bindings/bindings.h"
#include "bindings/gil.h"
#include "bindings/ivalue.h"
#include "bindings/python_error.h"
#include "bindings/python_kernel.h"
#include "dispatcher/core/error.h"
#include "dispatcher/library.h"
#include "dispatcher/load_library.h"
#include "dispatcher/schema/schema_parser.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {
namespace {

Tensor identityKernel(const Tensor& t) { return t; }
Tensor firstKernel(const Tensor& a, const Tensor& b) { return a; }

// The warnings of the registration running on this thread under
// warningsToPython, or null.
thread_local std::vector<std::string>* pending_warnings = nullptr;

// turnout's warning handler while turnout._C is loaded: keeps the warnings
// of a registration under warningsToPython, passes the others on.
void installWarningHandler() {
  gil_internal::flush_warnings = &flushWarnings;
  static WarningHandler* const previous = new WarningHandler;
  *previous = setWarningHandler([](const std::string& message) {
    if (pending_warnings != nullptr) {
      pending_warnings->push_back(message);
    } else if (gil_internal::tls_without_gil > 0 ||
               (Py_IsInitialized() && PyGILState_Check())) {
      // A call from Python: issued when it returns there (flushWarnings).
      deferWarning(message);
    } else if (*previous) {
      (*previous)(message);
    } else {
      printWarning(message);
    }
  });
}

// Issues `warnings` as Python UserWarnings (the GIL is held: the registering
// bindings never release it). A warnings filter set to "error" raises the
// first one.
void issueWarnings(const std::vector<std::string>& warnings) {
  for (const std::string& text : warnings) {
    if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) != 0) {
      py::error_already_set e;
      throw PythonError(e);
    }
  }
}

// Runs `f`, a registration, and issues its warnings (a kernel overriding
// another) as Python UserWarnings once it has returned, as torch's
// _DispatchModule.impl does: the registration holds turnout's lock, under
// which no Python code (a warnings filter, showwarning) may run. A warning
// turned into an error is raised after the registration took effect, as in
// torch.
template <typename F>
void warningsToPython(F&& f) {
  std::vector<std::string> warnings;
  std::vector<std::string>* const outer = pending_warnings;
  pending_warnings = &warnings;
  try {
    f();
  } catch (...) {
    pending_warnings = outer;
    issueWarnings(warnings);
    throw;
  }
  pending_warnings = outer;
  issueWarnings(warnings);
}

// Runs `f`. An error with a hint is reported without it: this is the
// torch-named API, whose errors keep the shape of torch's (Error::withHint).
template <typename F>
void torchShaped(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    if (!e.hasHint()) throw;
    throw e.withoutHint();
  }
}

// The file name outlives the Library, which keeps a pointer to it.
struct PyLibrary {
  std::string file;
  std::unique_ptr<Library> lib;

  Library& get() {
    TURNOUT_CHECK(lib != nullptr, ErrorKind::InvalidArgument,
                  "this library was destroyed (_destroy()); make a new one");
    return *lib;
  }
};

std::optional<DispatchKey> parseKey(const std::string& key) {
  if (key.empty()) return std::nullopt;
  return parseDispatchKey(key);
}

Library::Kind parseKind(const std::string& kind) {
  if (kind == "DEF") return Library::DEF;
  if (kind == "IMPL") return Library::IMPL;
  if (kind == "FRAGMENT") return Library::FRAGMENT;
  // "could not parse KIND", as torch's, with the kinds that parse.
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument, "could not parse ", kind,
                ": _dispatch_library(kind, ...) takes kind 'DEF', 'IMPL' or "
                "'FRAGMENT'");
  return Library::DEF;
}

AliasAnalysisKind parseAlias(const std::string& alias) {
  if (alias.empty() || alias == "FROM_SCHEMA") return AliasAnalysisKind::FROM_SCHEMA;
  if (alias == "CONSERVATIVE") return AliasAnalysisKind::CONSERVATIVE;
  if (alias == "PURE_FUNCTION") return AliasAnalysisKind::PURE_FUNCTION;
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument, "could not parse ", alias,
                ": def_(schema, alias) takes alias '', 'FROM_SCHEMA', "
                "'CONSERVATIVE' or 'PURE_FUNCTION'");
  return AliasAnalysisKind::FROM_SCHEMA;
}

CppFunction withKey(CppFunction f, const std::string& dispatch_key,
                    const std::string& debug) {
  std::optional<DispatchKey> k = parseKey(dispatch_key);
  if (k) f = dispatch(*k, std::move(f));
  return std::move(f).debug(debug);
}

CppFunction identity(const std::string& dispatch_key, const std::string& debug) {
  return withKey(CppFunction(&identityKernel), dispatch_key, debug);
}

// A Python callable as a CppFunction, for `key` (or the library's key).
CppFunction pythonKernel(const std::string& what, const std::string& key,
                         const py::object& func, bool with_keyset, bool with_op) {
  TURNOUT_CHECK(PyCallable_Check(func.ptr()), ErrorKind::Type, what,
                ": the kernel must be a callable, but found type ",
                py::str(py::type::of(func)).cast<std::string>());
  releasePendingPyObjects();
  std::string debug = describePythonCallable(func);
  CppFunction f = CppFunction::fromKernelFunction(
      makePythonKernel(func, with_keyset, with_op), std::nullopt);
  std::optional<DispatchKey> k = parseKey(key);
  if (k) f = dispatch(*k, std::move(f));
  return std::move(f).debug(std::move(debug));
}

// The tags of define(schema, alias_analysis, tags): a tuple or list of str
// (torch.library passes torch.Tag values, which turnout spells as strings).
// Their form is checked by the dispatcher (checkOperatorTags).
std::vector<std::string> parseTags(const py::handle& tags) {
  std::vector<std::string> out;
  if (tags.is_none()) return out;
  TURNOUT_CHECK(PyTuple_Check(tags.ptr()) || PyList_Check(tags.ptr()),
                ErrorKind::Type,
                "define(schema, alias_analysis, tags): expected tags to be a "
                "tuple or list of str, got ", describePyType(tags));
  for (py::handle t : tags) {
    TURNOUT_CHECK(py::isinstance<py::str>(t), ErrorKind::Type,
                  "define(schema, alias_analysis, tags): expected every tag to "
                  "be a str, got ", describePyType(t), " (tag ", out.size(),
                  "); write tags as strings, e.g. tags=(\"pointwise\",)");
    out.push_back(t.cast<std::string>());
  }
  return out;
}

}  // namespace

void initLibrary(py::module_& m) {
  installWarningHandler();
  m.def("_load_library", &loadLibrary, py::arg("path"),
        "dlopens a shared library of operators, all or nothing (see "
        "turnout.ops.load_library); False when it was already loaded.");
  m.def("_loaded_libraries", &loadedLibraries,
        "The canonical paths _load_library loaded, in order.");
  py::class_<PyLibrary>(m, "_DispatchModule",
                        "A Library made by _dispatch_library.")
      // As torch's, the registering methods return the module (chaining).
      .def("def_",
           [](py::object self, const std::string& schema, const std::string& alias) {
             torchShaped([&] {
               self.cast<PyLibrary&>().get().def(schema, parseAlias(alias));
             });
             return self;
           },
           py::arg("schema"), py::arg("alias") = "")
      .def("def_name_t_t",
           [](py::object self, const std::string& name, const std::string& key,
              const std::string& debug) {
             torchShaped([&] {
               self.cast<PyLibrary&>().get().def(name, identity(key, debug));
             });
             return self;
           },
           py::arg("name"), py::arg("dispatch") = "",
           py::arg("debug") = "default_def_name_t_t")
      .def("def_schema_t_t",
           [](py::object self, const std::string& schema, const std::string& key,
              const std::string& alias, const std::string& debug) {
             torchShaped([&] {
               self.cast<PyLibrary&>().get().def(schema, parseAlias(alias),
                                                 identity(key, debug));
             });
             return self;
           },
           py::arg("name"), py::arg("dispatch") = "", py::arg("alias") = "",
           py::arg("debug") = "default_def_schema_t_t",
           "Declares an operator by its schema with an identity kernel "
           "(Tensor) -> Tensor for `dispatch`.")
      .def("impl_t_t",
           [](py::object self, const std::string& name, const std::string& key,
              const std::string& debug) {
             torchShaped([&] {
               self.cast<PyLibrary&>().get().impl(name, identity(key, debug));
             });
             return self;
           },
           py::arg("name"), py::arg("dispatch") = "", py::arg("debug") = "impl_t_t")
      .def("impl_tt_t",
           [](py::object self, const std::string& name, const std::string& key,
              const std::string& debug) {
             torchShaped([&] {
               self.cast<PyLibrary&>().get().impl(
                   name, withKey(CppFunction(&firstKernel), key, debug));
             });
             return self;
           },
           py::arg("name"), py::arg("dispatch") = "", py::arg("debug") = "",
           "Registers a kernel (Tensor, Tensor) -> Tensor returning its first "
           "argument (debug '': the library's site).")
      .def("define",
           [](PyLibrary& self, const std::string& schema,
              const std::string& alias, const py::object& tags) {
             torchShaped([&] {
               self.get().def(schema, parseAlias(alias), parseTags(tags));
             });
             // As torch's: the operator's name as the schema spells it.
             return parseSchema(schema).operator_name().name;
           },
           py::arg("schema"), py::arg("alias_analysis") = "",
           py::arg("tags") = py::tuple(),
           "Declares an operator by its schema (def_ with torch.library's "
           "argument names); `tags` (str) are kept with it: "
           "_dispatch_get_tags, OpOverload.tags.")
      .def("impl",
           [](PyLibrary& self, const std::string& name, const std::string& key,
              const py::object& func, bool with_keyset) {
             torchShaped([&] {
               warningsToPython([&] {
                 Library& lib = self.get();
                 lib.impl(name, pythonKernel("impl(" + name + ")", key, func,
                                             with_keyset, /*with_op=*/false));
               });
             });
           },
           py::arg("name"), py::arg("dispatch"), py::arg("func"),
           py::arg("with_keyset") = false,
           "Registers the Python callable `func` as the kernel of operator "
           "`name` for key `dispatch` ('' for the library's key, or "
           "CompositeImplicitAutograd).")
      .def("fallback",
           [](PyLibrary& self, const std::string& key, const py::object& func,
              bool with_keyset) {
             torchShaped([&] {
               Library& lib = self.get();
               lib.fallback(pythonKernel("fallback(" + key + ")", key, func,
                                         with_keyset, /*with_op=*/true));
             });
           },
           py::arg("dispatch"), py::arg("func"), py::arg("with_keyset") = false,
           "Registers the Python callable `func` as the backend fallback for "
           "`dispatch` ('' for the library's key): it runs for every operator "
           "without a kernel of its own at that key, called as "
           "func(op, [keyset,] *args, **kwargs) with op the turnout.ops "
           "OpOverload.")
      .def("impl_fallthrough",
           [](PyLibrary& self, const std::string& name, const std::string& key) {
             torchShaped([&] {
               std::optional<DispatchKey> k = parseKey(key);
               CppFunction f = CppFunction::makeFallthrough();
               if (k) f = dispatch(*k, std::move(f));
               self.get().impl(name, std::move(f));
             });
           },
           py::arg("name"), py::arg("dispatch") = "",
           "Makes the dispatcher skip `dispatch` for operator `name`.")
      .def("fallback_fallthrough",
           [](py::object self, const std::string& key) {
             torchShaped([&] {
               std::optional<DispatchKey> k = parseKey(key);
               CppFunction f = CppFunction::makeFallthrough();
               if (k) f = dispatch(*k, std::move(f));
               self.cast<PyLibrary&>().get().fallback(std::move(f));
             });
             return self;
           },
           py::arg("dispatch") = "")
      .def("_destroy", [](PyLibrary& self) { self.lib.reset(); },
           "Deregisters everything now (otherwise done when the object goes).");

  m.def(
      "_dispatch_library",
      [](const std::string& kind, const std::string& ns, const std::string& key,
         const std::string& file, uint32_t linenum) {
        auto out = std::make_unique<PyLibrary>();
        out->file = file;
        torchShaped([&] {
          out->lib = std::make_unique<Library>(parseKind(kind), ns,
                                               parseKey(key), out->file.c_str(),
                                               linenum);
        });
        return out;
      },
      // Argument names as torch's (the namespace is `name`).
      py::arg("kind"), py::arg("name"), py::arg("dispatch"),
      py::arg("file") = "/dev/null", py::arg("linenum") = 0,
      "A Library for C++ kernels, as torch._C._dispatch_library.");
}

}  // namespace bindings
}  // namespace turnout
