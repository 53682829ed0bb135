// Calling operators from Python: turnout._C._OpOverload (one overload, the
// base of turnout._ops.OpOverload) and turnout._C._OpPacket (every overload
// of a name, resolved per call from the argument types), plus the
// FunctionSchema objects behind `_schema` and parse_schema().
//
//   >>> add = turnout._C._OpOverload("aten::add", "Tensor")
//   >>> add(a, b, alpha=2)
//
// A call binds (*args, **kwargs) to the schema (defaults filled in,
// keyword-only arguments enforced), converts them (ivalue.h), releases the
// GIL for the boxed call, and converts the returns back.
//
// The overload, packet and guard types are plain CPython types rather than
// pybind11 classes: a pybind11 method call costs ~120 ns of argument
// dispatch, more than the rest of a call (bench/README.md, "Python").
// Calls use vectorcall; the guards' __enter__ / __exit__ are METH_NOARGS /
// METH_FASTCALL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bindings/bindings.h"
#include "bindings/gil.h"
#include "bindings/ivalue.h"
#include "bindings/python_error.h"
#include "bindings/python_kernel.h"
#include "bindings/tensor.h"
#include "dispatcher/call_section.h"
#include "dispatcher/core/error.h"
#include "dispatcher/dispatch_table.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/fallback_filter.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "dispatcher/operator_entry.h"
#include "dispatcher/schema/default_ivalue.h"
#include "dispatcher/schema/schema_parser.h"
#include "dispatcher/tensor_pair_call.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {
namespace {

std::string qualifiedName(const OperatorName& name) {
  return name.overload_name.empty() ? name.name
                                    : name.name + "." + name.overload_name;
}

// The overload names of `qualname` with a schema: the default ("") first,
// then the others sorted.
std::vector<std::string> listOverloadNames(const std::string& qualname) {
  std::vector<std::string> out;
  for (const OperatorName& op : Dispatcher::singleton().getAllOpNames()) {
    if (op.name == qualname) out.push_back(op.overload_name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string joinOverloads(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ", ";
    out += n.empty() ? "default" : n;
  }
  return out.empty() ? "(none)" : out;
}

OperatorHandle findOverload(const std::string& qualname,
                            const std::string& overload) {
  std::string name = overload == "default" ? "" : overload;
  std::optional<OperatorHandle> op =
      Dispatcher::singleton().findSchema(OperatorName{qualname, name});
  TURNOUT_CHECK(op.has_value(), ErrorKind::InvalidArgument, "no operator ",
                qualname, name.empty() ? "" : ".", name,
                " has a schema; the overloads of ", qualname,
                " are: ", joinOverloads(listOverloadNames(qualname)));
  return *op;
}

// One overload, ready to call: the handle, a copy of the schema, and the
// defaults converted once.
class OpOverload {
 public:
  OpOverload(const std::string& qualname, const std::string& overload)
      : op_(findOverload(qualname, overload)), schema_(op_.schema()) {
    const auto& args = schema_.arguments();
    defaults_.resize(args.size());
    has_default_.resize(args.size(), false);
    max_positional_ = 0;
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].kwarg_only()) max_positional_ = i + 1;
      if (args[i].default_value().has_value()) {
        defaults_[i] = defaultToIValue(args[i]);
        has_default_[i] = true;
      }
    }
    name_ = qualifiedName(schema_.operator_name());
    numbers_as_tensors_ = allowsNumbersAsTensors(schema_.name());
    aten_ = schema_.name().rfind("aten::", 0) == 0;
    initTensorPair();
    arg_names_.reserve(args.size());
    for (const Argument& a : args) {
      PyObject* n = PyUnicode_InternFromString(a.name().c_str());
      if (n == nullptr) throw py::error_already_set();
      arg_names_.push_back(py::reinterpret_steal<py::object>(n));
    }
  }

  const OperatorHandle& handle() const { return op_; }
  const FunctionSchema& schema() const { return schema_; }
  const std::string& name() const { return name_; }

  // Builds the arguments on `stack` from a vectorcall argument vector:
  // `nargs` positional values in args[0..nargs), then one value per name in
  // `kwnames` (a tuple of str, or null). On a mismatch returns false and,
  // when `why` is not null, says why.
  bool bind(PyObject* const* args, size_t nargs, PyObject* kwnames,
            Stack* stack, std::string* why) const {
    const auto& params = schema_.arguments();
    if (nargs > max_positional_) {
      if (why) {
        *why = name_ + "() takes " + std::to_string(max_positional_) +
               " positional argument" + (max_positional_ == 1 ? "" : "s") +
               " but " + std::to_string(nargs) + " were given" +
               (max_positional_ < params.size()
                    ? "; the arguments after '*' are keyword-only"
                    : "");
      }
      return false;
    }
    const size_t nkwargs = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    size_t used_kwargs = 0;
    stack->reserve(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      const Argument& arg = params[i];
      PyObject* obj = nullptr;
      if (i < nargs) {
        obj = args[i];
        if (nkwargs > 0 && findKeyword(kwnames, i) >= 0) {
          if (why) {
            *why = name_ + "() got multiple values for argument '" +
                   arg.name() + "'";
          }
          return false;
        }
      } else if (nkwargs > 0) {
        const Py_ssize_t k = findKeyword(kwnames, i);
        if (k >= 0) {
          obj = args[nargs + k];
          ++used_kwargs;
        }
      }
      if (obj == nullptr) {
        if (!has_default_[i]) {
          if (why) {
            *why = name_ + "() missing required argument '" + arg.name() +
                   "' (position " + std::to_string(i + 1) + ")";
          }
          return false;
        }
        stack->push_back(defaults_[i]);
        continue;
      }
      IValue v;
      bool converted;
      try {
        converted = tryToIValue(obj, *arg.type(), arg.N(), &v, arg.name());
      } catch (const Error& e) {
        // Nested too deep or containing itself: no overload can take it.
        if (e.kind() != ErrorKind::Type) throw;
        throw e.withPrefix(name_ + "(): argument '" + arg.name() +
                           "' (position " + std::to_string(i + 1) + "): ");
      }
      if (!converted && numbers_as_tensors_ &&
          arg.type()->kind() == SchemaType::Kind::Tensor) {
        // Off the tensor-tensor path: reached only when obj is no tensor.
        Tensor wrapped = wrapNumber(obj);
        if (wrapped.defined()) {
          v = IValue(std::move(wrapped));
          converted = true;
        }
      }
      if (!converted) {
        if (why) {
          *why = name_ + "(): argument '" + arg.name() + "' (position " +
                 std::to_string(i + 1) + ") must be " + arg.type()->toString() +
                 ", but got " + describePyType(obj);
        }
        return false;
      }
      stack->push_back(std::move(v));
    }
    if (used_kwargs < nkwargs) {
      if (why) {
        for (Py_ssize_t k = 0; k < static_cast<Py_ssize_t>(nkwargs); ++k) {
          std::string key = py::str(PyTuple_GET_ITEM(kwnames, k));
          if (!schema_.argumentIndexWithName(key).has_value()) {
            *why =
                name_ + "() got an unexpected keyword argument '" + key + "'";
            return false;
          }
        }
        *why = name_ + "(): a keyword argument repeats a positional one";
      }
      return false;
    }
    return true;
  }

  py::object callBound(Stack& stack) const {
    if (isSmallAtenCall(stack) || dispatchesToPythonKernel(stack)) {
      op_.callBoxed(stack);
    } else {
      withoutGil([&] { op_.callBoxed(stack); });
    }
    return returnsToPython(stack, schema_);
  }

  py::object call(PyObject* const* args, size_t nargs,
                  PyObject* kwnames) const {
    if (pair_ && nargs == 2 && kwnames == nullptr &&
        isTensor(args[0]) && isTensor(args[1])) {
      return callTensorPair(unpackTensor(args[0]), unpackTensor(args[1]));
    }
    Stack stack;
    std::string why;
    TURNOUT_CHECK(bind(args, nargs, kwnames, &stack, &why), ErrorKind::Type,
                  why);
    return callBound(stack);
  }

  py::object redispatch(DispatchKeySet ks, PyObject* const* args, size_t nargs,
                        PyObject* kwnames) const {
    Stack stack;
    std::string why;
    TURNOUT_CHECK(bind(args, nargs, kwnames, &stack, &why), ErrorKind::Type,
                  why);
    withoutGil([&] { op_.redispatchBoxed(ks, &stack); });
    return returnsToPython(stack, schema_);
  }

 private:
  // The unboxed path for `a + b`, `a * b`, `ops.aten.mul(a, b)`, ...: an
  // aten operator `(Tensor, Tensor[, *, Scalar=default]) -> Tensor` called
  // with two tensors. The arguments stay borrowed from their Python objects
  // (no stack, no reference counting: a locked instruction each on these
  // VMs), the result comes back by value. Calls with anything else (numbers,
  // keywords, other schemas) bind a stack as usual. The dispatch and the
  // kernels are the same; a dispatch trace shows the call as `call`.
  void initTensorPair() {
    if (!aten_) return;
    pair_ = TensorPairCall::make(op_);
    // Called with two tensors: the Scalar must have a default.
    if (pair_ && pair_->num_arguments() == 3) {
      if (!has_default_[2] || !defaults_[2].isScalar()) {
        pair_.reset();
      } else {
        default_scalar_ = defaults_[2].toScalar();
      }
    }
  }

  Tensor callTensorPairUnboxed(const Tensor& a, const Tensor& b) const {
    return pair_->num_arguments() == 2 ? pair_->call(a, b)
                                       : pair_->call(a, b, default_scalar_);
  }

  py::object callTensorPair(const Tensor& a, const Tensor& b) const {
    Tensor out;
    if (isSmallCpu(a) && isSmallCpu(b)) {
      out = callTensorPairUnboxed(a, b);
    } else {
      withoutGil([&] { out = callTensorPairUnboxed(a, b); });
    }
    return wrapTensor(std::move(out));
  }

  // At most this many elements per tensor make a call small.
  static constexpr int64_t kSmallNumel = 1024;

  static bool isSmallCpu(const Tensor& t) {
    return !t.defined() || (t.is_cpu() && t.layout() == Layout::Strided &&
                            t.unsafeGetTensorImpl()->numel_default() <=
                                kSmallNumel);
  }

  // True for an aten operator whose tensor arguments are all strided CPU
  // tensors of at most kSmallNumel elements (and no lists): such a call
  // keeps the GIL, since handing it over and taking it back (two mutex
  // hand-overs, ~30-40 ns) costs more than the work, which holds the GIL for
  // a few microseconds at most, as a CPython builtin would. Anything else
  // (other namespaces' kernels may block or wait on other threads; large or
  // non-CPU tensors) runs without the GIL, as torch's calls do.
  bool isSmallAtenCall(const Stack& stack) const {
    if (!aten_) return false;
    for (const IValue& v : stack) {
      if (v.isTensor()) {
        if (!isSmallCpu(v.toTensor())) return false;
      } else if (v.isTensorList() || v.isList()) {
        return false;
      }
    }
    return true;
  }

  // True when the call with `stack` will go to a Python kernel first: the
  // kernel takes the GIL itself, so releasing it just to have it taken
  // back costs two hand-overs for nothing. Looks up the same table entry
  // callBoxed will (a registration in between only means one call releases
  // the GIL or keeps it needlessly; the kernel is correct either way).
  bool dispatchesToPythonKernel(const Stack& stack) const {
    const BoxedKernelFn python = pythonKernelBoxedFunction();
    if (python == nullptr) return false;  // no Python kernel exists
    detail::CallSection section;
    const DispatchTable& table = op_.entry()->table();
    if (stack.size() < table.num_arguments) return false;  // callBoxed says
    const DispatchKeySet ks =
        table.computeDispatchKeySet(table.extractFromStack(stack));
    // Past the autograd fallback's filter (Warn mode) when it passes the
    // call on: a custom operator's Python kernel, reached from plain tensors.
    const KernelFunction& kernel =
        detail::kernelCalledFor(table.lookup(ks), table, ks, stack);
    return kernel.boxedFunction() == python;
  }

  // The index in `kwnames` of the name of argument `i`, or -1. Names are
  // interned, so the identity test nearly always decides.
  Py_ssize_t findKeyword(PyObject* kwnames, size_t i) const {
    PyObject* name = arg_names_[i].ptr();
    const Py_ssize_t n = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < n; ++k) {
      if (PyTuple_GET_ITEM(kwnames, k) == name) return k;
    }
    for (Py_ssize_t k = 0; k < n; ++k) {
      if (PyUnicode_Compare(PyTuple_GET_ITEM(kwnames, k), name) == 0) return k;
    }
    return -1;
  }

  OperatorHandle op_;
  FunctionSchema schema_;
  std::vector<IValue> defaults_;
  std::vector<bool> has_default_;
  size_t max_positional_;
  std::string name_;
  std::vector<py::object> arg_names_;  // interned str, one per argument
  bool numbers_as_tensors_ = false;    // allowsNumbersAsTensors(name)
  bool aten_ = false;                  // an aten:: operator
  std::optional<TensorPairCall> pair_;  // initTensorPair
  Scalar default_scalar_;
};

// Every overload of one name.
class OpPacket {
 public:
  explicit OpPacket(const std::string& qualname) : qualname_(qualname) {
    for (const std::string& o : listOverloadNames(qualname)) {
      overloads_.push_back(std::make_unique<OpOverload>(qualname, o));
    }
    for (const auto& o : overloads_) try_order_.push_back(o.get());
    if (allowsNumbersAsTensors(qualname)) {
      // torch 1.13 tries these in its registration order, the Tensor
      // overloads before the Scalar ones: mul(x, 4) is mul.Tensor(x, <4>).
      std::stable_partition(
          try_order_.begin(), try_order_.end(), [](const OpOverload* o) {
            return o->schema().overload_name().find("Scalar") ==
                   std::string::npos;
          });
    }
    for (const auto& o : overloads_) {
      int outs = 0;
      for (const Argument& a : o->schema().arguments()) outs += a.is_out();
      several_outs_ |= outs >= 2;
    }
    TURNOUT_CHECK(!overloads_.empty(), ErrorKind::InvalidArgument,
                  "no operator named ", qualname,
                  " has a schema; check the namespace and the name (e.g. "
                  "aten::add)");
  }

  py::object call(PyObject* const* args, size_t nargs,
                  PyObject* kwnames) const {
    if (several_outs_ && kwnames != nullptr) {
      if (std::optional<py::object> r = callWithOutTuple(args, nargs, kwnames)) {
        return *r;
      }
    }
    if (overloads_.size() == 1)
      return overloads_[0]->call(args, nargs, kwnames);
    Stack stack;
    const OpOverload* chosen = nullptr;
    {
      // First without reading a tensor as a number, so that a tensor goes
      // to the overload that takes it as a Tensor (pow(torch.tensor(2), x)
      // is pow.Tensor_Tensor, not pow.Scalar); released before the call.
      TensorsAreNotNumbers strict;
      for (const OpOverload* o : try_order_) {
        stack.clear();
        if (o->bind(args, nargs, kwnames, &stack, nullptr)) {
          chosen = o;
          break;
        }
      }
    }
    for (size_t i = 0; chosen == nullptr && i < try_order_.size(); ++i) {
      stack.clear();
      if (try_order_[i]->bind(args, nargs, kwnames, &stack, nullptr)) {
        chosen = try_order_[i];
      }
    }
    if (chosen != nullptr) return chosen->callBound(stack);
    std::string types;
    for (size_t i = 0; i < nargs; ++i) {
      if (!types.empty()) types += ", ";
      types += describePyType(args[i]);
    }
    const Py_ssize_t nkwargs = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkwargs; ++k) {
      if (!types.empty()) types += ", ";
      types += std::string(py::str(PyTuple_GET_ITEM(kwnames, k))) + "=" +
               describePyType(args[nargs + k]);
    }
    std::string msg = qualname_ + "(): no overload matches the arguments (" +
                      types + "). Tried:";
    for (const OpOverload* o : try_order_) {
      std::string why;
      stack.clear();
      o->bind(args, nargs, kwnames, &stack, &why);
      msg += "\n  " + toString(o->schema()) + "\n    " + why;
    }
    TURNOUT_CHECK(false, ErrorKind::Type, msg);
    return py::none();
  }

  // As torch's functions: `out=` takes a tuple (or list) of tensors for the
  // overloads that write several (sort(x, out=(values, indices)) is
  // sort.values with values= and indices=). The call of the first overload
  // whose out= arguments are as many and which binds; nullopt when `out` is
  // not a sequence or nothing binds (the usual matching and its error
  // follow).
  std::optional<py::object> callWithOutTuple(PyObject* const* args,
                                             size_t nargs,
                                             PyObject* kwnames) const {
    const Py_ssize_t nkwargs = PyTuple_GET_SIZE(kwnames);
    Py_ssize_t at = -1;
    for (Py_ssize_t k = 0; k < nkwargs && at < 0; ++k) {
      if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k),
                                           "out") == 0) {
        at = k;
      }
    }
    if (at < 0) return std::nullopt;
    PyObject* out = args[nargs + at];
    if (!PyTuple_Check(out) && !PyList_Check(out)) return std::nullopt;
    py::sequence outs = py::reinterpret_borrow<py::sequence>(out);
    for (const OpOverload* o : try_order_) {
      std::vector<std::string> names;
      for (const Argument& a : o->schema().arguments()) {
        if (a.is_out()) names.push_back(a.name());
      }
      if (names.size() < 2 || names.size() != outs.size()) continue;
      // The same call with out=(a, b) spelled name_a=a, name_b=b.
      std::vector<PyObject*> spread(args, args + nargs);
      py::list keys;
      for (Py_ssize_t k = 0; k < nkwargs; ++k) {
        if (k == at) continue;
        spread.push_back(args[nargs + k]);
        keys.append(PyTuple_GET_ITEM(kwnames, k));
      }
      for (size_t i = 0; i < names.size(); ++i) {
        spread.push_back(outs[i].ptr());
        keys.append(py::str(names[i]));
      }
      py::tuple spread_names(keys);
      Stack stack;
      if (o->bind(spread.data(), nargs, spread_names.ptr(), &stack, nullptr)) {
        return o->callBound(stack);
      }
    }
    return std::nullopt;
  }

  std::vector<std::string> overloadNames() const {
    std::vector<std::string> out;
    for (const auto& o : overloads_) {
      const std::string& n = o->schema().overload_name();
      out.push_back(n.empty() ? "default" : n);
    }
    return out;
  }

 private:
  std::string qualname_;
  std::vector<std::unique_ptr<OpOverload>> overloads_;  // default, sorted
  std::vector<const OpOverload*> try_order_;  // the order call() binds in
  bool several_outs_ = false;  // an overload writes several out= tensors
};

// ---- Raising a C++ exception as a Python one
// -----------------------------------

// Call inside a catch block: sets the Python error the way pybind11's
// functions would (through the translators registered in errors.cc).
void setPythonError() {
  auto& local =
      py::detail::get_local_internals().registered_exception_translators;
  if (py::detail::apply_exception_translators(local)) return;
  auto& global = py::detail::get_internals().registered_exception_translators;
  if (py::detail::apply_exception_translators(global)) return;
  PyErr_SetString(PyExc_SystemError,
                  "turnout: an unknown C++ exception escaped (a turnout bug)");
}

// How a Python value's type reads in a constructor's error.
std::string typeName(PyObject* obj) { return Py_TYPE(obj)->tp_name; }

// ---- turnout._C._OpOverload and _OpPacket: plain CPython types
// ------------------
//
// Calls take the vectorcall protocol: no argument tuple, no dict, no
// pybind11 overload resolution. Python subclasses (turnout._ops.OpOverload)
// keep it: CPython 3.11 does not pass Py_TPFLAGS_HAVE_VECTORCALL on to
// mutable subclasses, so tp_new sets it on a subclass that does not define
// __call__ itself. (Assigning __call__ on such a class afterwards would be
// ignored; turnout's classes never do.)

template <class Impl>
struct PyCallable {
  PyObject_HEAD vectorcallfunc vectorcall;  // at tp_vectorcall_offset
  Impl* impl;                               // owned; null until __init__
};
using PyOpOverload = PyCallable<OpOverload>;
using PyOpPacket = PyCallable<OpPacket>;

PyTypeObject g_overload_type;
PyTypeObject g_packet_type;

template <class Impl>
const char* uninitializedMessage();
template <>
const char* uninitializedMessage<OpOverload>() {
  return "_OpOverload was not initialized; make it with "
         "_C._OpOverload(qualified_name, overload_name)";
}
template <>
const char* uninitializedMessage<OpPacket>() {
  return "_OpPacket was not initialized; make it with "
         "_C._OpPacket(qualified_name)";
}

template <class Impl>
Impl* implOf(PyObject* self) {
  Impl* impl = reinterpret_cast<PyCallable<Impl>*>(self)->impl;
  if (impl == nullptr)
    PyErr_SetString(PyExc_TypeError, uninitializedMessage<Impl>());
  return impl;
}

template <class Impl>
PyObject* callableVectorcall(PyObject* self, PyObject* const* args,
                             size_t nargsf, PyObject* kwnames) {
  Impl* impl = implOf<Impl>(self);
  if (impl == nullptr) return nullptr;
  try {
    py::object result = impl->call(args, PyVectorcall_NARGS(nargsf), kwnames);
    flushWarnings();
    return result.release().ptr();
  } catch (...) {
    try {
      flushWarnings();  // given before the error, as torch's
    } catch (...) {
      // a warning turned into an error: the call's own error wins
    }
    setPythonError();
    return nullptr;
  }
}

template <class Impl>
PyObject* callableNew(PyTypeObject* type, PyObject*, PyObject*) {
  if (type->tp_call == &PyVectorcall_Call &&
      !PyType_HasFeature(type, Py_TPFLAGS_HAVE_VECTORCALL) &&
      type->tp_vectorcall_offset == offsetof(PyCallable<Impl>, vectorcall)) {
    type->tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL;
  }
  PyObject* self = type->tp_alloc(type, 0);
  if (self == nullptr) return nullptr;
  auto* obj = reinterpret_cast<PyCallable<Impl>*>(self);
  obj->vectorcall = &callableVectorcall<Impl>;
  obj->impl = nullptr;
  return self;
}

template <class Impl>
void callableDealloc(PyObject* self) {
  delete reinterpret_cast<PyCallable<Impl>*>(self)->impl;
  Py_TYPE(self)->tp_free(self);
}

// Replaces the implementation; on an error leaves the old one.
template <class Impl>
int setImpl(PyObject* self, std::unique_ptr<Impl> impl) {
  auto* obj = reinterpret_cast<PyCallable<Impl>*>(self);
  delete obj->impl;
  obj->impl = impl.release();
  return 0;
}

int overloadInit(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* kwlist[] = {"qualified_name", "overload_name", nullptr};
  const char* qualname = nullptr;
  const char* overload = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "ss:_OpOverload",
                                   const_cast<char**>(kwlist), &qualname,
                                   &overload)) {
    return -1;
  }
  try {
    return setImpl(self, std::make_unique<OpOverload>(qualname, overload));
  } catch (...) {
    setPythonError();
    return -1;
  }
}

int packetInit(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* kwlist[] = {"qualified_name", nullptr};
  const char* qualname = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s:_OpPacket",
                                   const_cast<char**>(kwlist), &qualname)) {
    return -1;
  }
  try {
    return setImpl(self, std::make_unique<OpPacket>(qualname));
  } catch (...) {
    setPythonError();
    return -1;
  }
}

// _OpOverload.redispatch(keyset, *args, **kwargs)
PyObject* overloadRedispatch(PyObject* self, PyObject* const* args,
                             Py_ssize_t nargs, PyObject* kwnames) {
  OpOverload* op = implOf<OpOverload>(self);
  if (op == nullptr) return nullptr;
  try {
    DispatchKeySet ks;
    TURNOUT_CHECK(nargs >= 1 && py::isinstance<DispatchKeySet>(args[0]),
                  ErrorKind::Type, op->name(),
                  ".redispatch(keyset, *args, **kwargs): expected a "
                  "DispatchKeySet first, got ",
                  nargs >= 1 ? typeName(args[0]) : "no arguments");
    ks = py::cast<DispatchKeySet>(args[0]);
    return op->redispatch(ks, args + 1, nargs - 1, kwnames).release().ptr();
  } catch (...) {
    setPythonError();
    return nullptr;
  }
}

PyObject* overloadHasKernel(PyObject* self, PyObject* key) {
  OpOverload* op = implOf<OpOverload>(self);
  if (op == nullptr) return nullptr;
  try {
    TURNOUT_CHECK(py::isinstance<DispatchKey>(key), ErrorKind::Type, op->name(),
                  ".has_kernel_for_dispatch_key(key): expected a "
                  "DispatchKey, got ",
                  typeName(key));
    return PyBool_FromLong(
        op->handle().hasKernelForDispatchKey(py::cast<DispatchKey>(key)));
  } catch (...) {
    setPythonError();
    return nullptr;
  }
}

PyObject* overloadName(PyObject* self, PyObject*) {
  OpOverload* op = implOf<OpOverload>(self);
  if (op == nullptr) return nullptr;
  return PyUnicode_FromStringAndSize(op->name().data(), op->name().size());
}

PyObject* overloadSchema(PyObject* self, void*) {
  OpOverload* op = implOf<OpOverload>(self);
  if (op == nullptr) return nullptr;
  try {
    return py::cast(op->schema()).release().ptr();
  } catch (...) {
    setPythonError();
    return nullptr;
  }
}

PyObject* packetOverloads(PyObject* self, PyObject*) {
  OpPacket* packet = implOf<OpPacket>(self);
  if (packet == nullptr) return nullptr;
  try {
    return py::cast(packet->overloadNames()).release().ptr();
  } catch (...) {
    setPythonError();
    return nullptr;
  }
}

PyMethodDef g_overload_methods[] = {
    {"redispatch",
     reinterpret_cast<PyCFunction>(
         reinterpret_cast<void (*)()>(&overloadRedispatch)),
     METH_FASTCALL | METH_KEYWORDS,
     "redispatch(keyset, *args, **kwargs)\n\nCalls with `keyset` as the "
     "dispatch key set, skipping the thread-local sets: what a kernel does "
     "to pass a call below its own key."},
    {"has_kernel_for_dispatch_key", &overloadHasKernel, METH_O,
     "True when a kernel is registered directly at `key`."},
    {"name", &overloadName, METH_NOARGS,
     "The qualified name, 'aten::add.Tensor'."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef g_overload_getset[] = {
    {"_schema", &overloadSchema, nullptr, "The operator's FunctionSchema.",
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMethodDef g_packet_methods[] = {
    {"overloads", &packetOverloads, METH_NOARGS,
     "The overload names, 'default' for the unnamed one."},
    {nullptr, nullptr, 0, nullptr}};

template <class Impl>
void readyCallableType(PyTypeObject* type, const char* name, const char* doc,
                       initproc init, PyMethodDef* methods,
                       PyGetSetDef* getset) {
  type->tp_name = name;
  type->tp_doc = doc;
  type->tp_basicsize = sizeof(PyCallable<Impl>);
  type->tp_flags =
      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_VECTORCALL;
  type->tp_vectorcall_offset = offsetof(PyCallable<Impl>, vectorcall);
  type->tp_call = &PyVectorcall_Call;
  type->tp_new = &callableNew<Impl>;
  type->tp_init = init;
  type->tp_dealloc = &callableDealloc<Impl>;
  type->tp_methods = methods;
  type->tp_getset = getset;
  if (PyType_Ready(type) < 0) throw py::error_already_set();
}

// ---- The key guards: plain CPython context managers
// ------------------------------
//
// `with _C._AutoDispatchBelowAutograd():` costs one allocation and three
// C calls. The C++ guard lives inside the Python object from __enter__ to
// __exit__.

template <class Guard>
struct PyGuard {
  PyObject_HEAD DispatchKeySet keys;
  bool entered;
  alignas(Guard) unsigned char storage[sizeof(Guard)];

  Guard* guard() { return reinterpret_cast<Guard*>(storage); }
};

// Reads a value of a pybind11-bound type T (DispatchKey, DispatchKeySet)
// from `obj`; false when `obj` is not one. An instance of exactly T's
// Python type is read straight from the pybind11 instance (the caster's
// type-registry look-up costs ~30 ns, a guard's whole budget); anything
// else goes through the caster.
template <class T>
bool loadBound(PyObject* obj, T* out) {
  static PyTypeObject* const exact =
      reinterpret_cast<PyTypeObject*>(py::type::of<T>().ptr());
  if (Py_TYPE(obj) == exact) {
    auto* inst = reinterpret_cast<py::detail::instance*>(obj);
    void* value = inst->get_value_and_holder().value_ptr();
    if (value == nullptr) return false;  // __init__ has not run
    *out = *static_cast<const T*>(value);
    return true;
  }
  if (!py::isinstance<T>(obj)) return false;
  *out = py::cast<T>(py::handle(obj));
  return true;
}

// The three Python types, and what each constructor takes.
struct BelowAutogradTag {};
struct ExcludeTag {};
struct IncludeTag {};
template <class Tag>
struct GuardTraits;
template <>
struct GuardTraits<BelowAutogradTag> {
  using Guard = ExcludeDispatchKeyGuard;
  static PyTypeObject type;
  // No argument: the autograd keys.
  static bool parse(PyObject* const*, Py_ssize_t nargs, DispatchKeySet* out) {
    TURNOUT_CHECK(nargs == 0, ErrorKind::Type,
                  "_AutoDispatchBelowAutograd() takes no arguments (", nargs,
                  " given)");
    *out = autograd_dispatch_keyset;
    return true;
  }
};
template <>
struct GuardTraits<ExcludeTag> {
  using Guard = ExcludeDispatchKeyGuard;
  static PyTypeObject type;
  static bool parse(PyObject* const* args, Py_ssize_t nargs,
                    DispatchKeySet* out) {
    TURNOUT_CHECK(
        nargs == 1 && loadBound(args[0], out), ErrorKind::Type,
        "_ExcludeDispatchKeyGuard(keyset): expected one DispatchKeySet, "
        "got ",
        nargs == 1 ? typeName(args[0]) : std::to_string(nargs) + " arguments",
        "; e.g. _ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.Tracer))");
    return true;
  }
};
template <>
struct GuardTraits<IncludeTag> {
  using Guard = IncludeDispatchKeyGuard;
  static PyTypeObject type;
  static bool parse(PyObject* const* args, Py_ssize_t nargs,
                    DispatchKeySet* out) {
    DispatchKey key;
    TURNOUT_CHECK(
        nargs == 1 && loadBound(args[0], &key), ErrorKind::Type,
        "_IncludeDispatchKeyGuard(key): expected one DispatchKey, got ",
        nargs == 1 ? typeName(args[0]) : std::to_string(nargs) + " arguments",
        "; e.g. _IncludeDispatchKeyGuard(DispatchKey.Tracer)");
    *out = DispatchKeySet(key);
    return true;
  }
};
PyTypeObject GuardTraits<BelowAutogradTag>::type;
PyTypeObject GuardTraits<ExcludeTag>::type;
PyTypeObject GuardTraits<IncludeTag>::type;

// "_AutoDispatchBelowAutograd" for turnout._C._AutoDispatchBelowAutograd.
const char* shortName(PyTypeObject* type) {
  const char* dot = std::strrchr(type->tp_name, '.');
  return dot == nullptr ? type->tp_name : dot + 1;
}

template <class Tag>
PyObject* guardVectorNew(PyObject* type, PyObject* const* args, size_t nargsf,
                         PyObject* kwnames) {
  using Traits = GuardTraits<Tag>;
  using Obj = PyGuard<typename Traits::Guard>;
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  DispatchKeySet keys;
  try {
    TURNOUT_CHECK(kwnames == nullptr || PyTuple_GET_SIZE(kwnames) == 0,
                  ErrorKind::Type,
                  shortName(reinterpret_cast<PyTypeObject*>(type)),
                  "() takes no keyword arguments");
    Traits::parse(args, nargs, &keys);
  } catch (...) {
    setPythonError();
    return nullptr;
  }
  Obj* self = PyObject_New(Obj, reinterpret_cast<PyTypeObject*>(type));
  if (self == nullptr) return nullptr;
  self->keys = keys;
  self->entered = false;
  return reinterpret_cast<PyObject*>(self);
}

// tp_new for the rare call that does not go through vectorcall
// (type.__call__, a call with a dict of keywords).
template <class Tag>
PyObject* guardNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* kwnames = nullptr;
  if (kwargs != nullptr && PyDict_GET_SIZE(kwargs) > 0) {
    PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments",
                 shortName(type));
    return nullptr;
  }
  return guardVectorNew<Tag>(reinterpret_cast<PyObject*>(type),
                             &PyTuple_GET_ITEM(args, 0), PyTuple_GET_SIZE(args),
                             kwnames);
}

template <class Tag>
void guardDealloc(PyObject* self) {
  using Guard = typename GuardTraits<Tag>::Guard;
  auto* g = reinterpret_cast<PyGuard<Guard>*>(self);
  // A guard dropped inside its block (never exited) restores on the way out.
  if (g->entered) g->guard()->~Guard();
  PyObject_Free(self);
}

template <class Tag>
PyObject* guardEnter(PyObject* self, PyObject*) {
  using Guard = typename GuardTraits<Tag>::Guard;
  auto* g = reinterpret_cast<PyGuard<Guard>*>(self);
  if (g->entered) {
    PyErr_SetString(PyExc_ValueError,
                    "this guard is already entered; make a new one");
    return nullptr;
  }
  new (g->guard()) Guard(g->keys);
  g->entered = true;
  Py_RETURN_NONE;
}

template <class Tag>
PyObject* guardExit(PyObject* self, PyObject* const*, Py_ssize_t) {
  using Guard = typename GuardTraits<Tag>::Guard;
  auto* g = reinterpret_cast<PyGuard<Guard>*>(self);
  if (g->entered) {
    g->guard()->~Guard();
    g->entered = false;
  }
  Py_RETURN_FALSE;
}

template <class Tag>
void readyGuardType(py::module_& m, const char* name, const char* doc) {
  using Obj = PyGuard<typename GuardTraits<Tag>::Guard>;
  static PyMethodDef methods[] = {
      {"__enter__", &guardEnter<Tag>, METH_NOARGS, "Enters the guard."},
      {"__exit__",
       reinterpret_cast<PyCFunction>(
           reinterpret_cast<void (*)()>(&guardExit<Tag>)),
       METH_FASTCALL, "Leaves the guard, restoring the thread's key sets."},
      {nullptr, nullptr, 0, nullptr}};
  PyTypeObject* type = &GuardTraits<Tag>::type;
  type->tp_name = name;
  type->tp_doc = doc;
  type->tp_basicsize = sizeof(Obj);
  type->tp_flags = Py_TPFLAGS_DEFAULT;
  type->tp_new = &guardNew<Tag>;
  type->tp_dealloc = &guardDealloc<Tag>;
  type->tp_methods = methods;
  // Calling the type takes the vectorcall path: no argument tuple.
  type->tp_vectorcall = &guardVectorNew<Tag>;
  if (PyType_Ready(type) < 0) throw py::error_already_set();
  Py_INCREF(type);
  m.add_object(
      name + std::strlen("turnout._C."),
      py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(type)));
}

}  // namespace

void initOps(py::module_& m) {
  py::class_<AliasInfo>(m, "_AliasInfo",
                        "An argument's alias annotation, e.g. (a!): as "
                        "torch._C._AliasInfo.")
      .def_property_readonly("is_write", &AliasInfo::isWrite)
      .def_property_readonly("before_set",
                             [](const AliasInfo& a) {
                               return std::set<std::string>(a.beforeSets().begin(),
                                                            a.beforeSets().end());
                             })
      .def_property_readonly("after_set",
                             [](const AliasInfo& a) {
                               return std::set<std::string>(a.afterSets().begin(),
                                                            a.afterSets().end());
                             })
      .def("__str__", [](const AliasInfo& a) { return a.toString(); })
      .def("__repr__",
           [](const AliasInfo& a) { return "_AliasInfo(" + a.toString() + ")"; });

  py::class_<Argument>(m, "Argument", "One argument or return of a schema.")
      .def_property_readonly("name", &Argument::name)
      .def_property_readonly(
          "type", [](const Argument& a) { return a.type()->toString(); })
      .def_property_readonly("N", &Argument::N)
      .def_property_readonly("default_value",
                             [](const Argument& a) -> py::object {
                               if (!a.default_value()) return py::none();
                               return toPyObject(defaultToIValue(a),
                                                 a.type().get());
                             })
      .def_property_readonly(
          "has_default_value",
          [](const Argument& a) { return a.default_value().has_value(); })
      .def_property_readonly("kwarg_only", &Argument::kwarg_only)
      .def_property_readonly("is_out", &Argument::is_out)
      .def_property_readonly("alias_info",
                             [](const Argument& a) -> py::object {
                               if (!a.alias_info()) return py::none();
                               return py::cast(*a.alias_info());
                             })
      .def("__str__", [](const Argument& a) { return toString(a); })
      .def("__repr__",
           [](const Argument& a) { return "Argument(" + toString(a) + ")"; });

  py::class_<FunctionSchema>(m, "FunctionSchema", "An operator's schema.")
      .def_property_readonly("name", &FunctionSchema::name)
      .def_property_readonly("overload_name", &FunctionSchema::overload_name)
      .def_property_readonly("arguments", &FunctionSchema::arguments)
      .def_property_readonly("returns", &FunctionSchema::returns)
      .def_property_readonly("is_mutable", &FunctionSchema::is_mutable)
      .def("__str__", [](const FunctionSchema& s) { return toString(s); })
      .def("__repr__",
           [](const FunctionSchema& s) {
             return "FunctionSchema(\"" + toString(s) + "\")";
           })
      .def("__eq__", [](const FunctionSchema& a, const FunctionSchema& b) {
        return a == b;
      });
  m.def("_allows_numbers_as_tensors", &allowsNumbersAsTensors,
        py::arg("qualname"),
        "Whether the Tensor arguments of operator `qualname` (\"aten::mul\") "
        "take Python numbers, as wrapped numbers (torch 1.13's list).");
  m.def(
      "parse_schema", [](const std::string& text) { return parseSchema(text); },
      py::arg("schema"),
      "Parses a schema; str() of the result is c10's canonical form.");

  readyCallableType<OpOverload>(
      &g_overload_type, "turnout._C._OpOverload",
      "_OpOverload(qualified_name, overload_name)\n\nOne overload of an "
      "operator; see turnout.ops.",
      &overloadInit, g_overload_methods, g_overload_getset);
  Py_INCREF(&g_overload_type);
  m.add_object("_OpOverload",
               py::reinterpret_steal<py::object>(
                   reinterpret_cast<PyObject*>(&g_overload_type)));
  readyCallableType<OpPacket>(
      &g_packet_type, "turnout._C._OpPacket",
      "_OpPacket(qualified_name)\n\nEvery overload of an operator name; see "
      "turnout.ops.",
      &packetInit, g_packet_methods, nullptr);
  Py_INCREF(&g_packet_type);
  m.add_object("_OpPacket", py::reinterpret_steal<py::object>(
                                reinterpret_cast<PyObject*>(&g_packet_type)));

  readyGuardType<BelowAutogradTag>(
      m, "turnout._C._AutoDispatchBelowAutograd",
      "Excludes the autograd keys inside a `with` block.");
  readyGuardType<ExcludeTag>(
      m, "turnout._C._ExcludeDispatchKeyGuard",
      "_ExcludeDispatchKeyGuard(keyset)\n\nAdds keys to this thread's "
      "excluded set inside a `with` block.");
  readyGuardType<IncludeTag>(
      m, "turnout._C._IncludeDispatchKeyGuard",
      "_IncludeDispatchKeyGuard(key)\n\nAdds a key to this thread's included "
      "set inside a `with` block.");
}

}  // namespace bindings
}  // namespace turnout
