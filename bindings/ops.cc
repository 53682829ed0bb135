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
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bindings/bindings.h"
#include "bindings/ivalue.h"
#include "bindings/python_kernel.h"
#include "bindings/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/error.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "dispatcher/schema_parser.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {
namespace {

// Runs `f` with the GIL released. Unlike py::gil_scoped_release, it takes
// the GIL back outside any destructor, and a daemon thread still calling
// at interpreter shutdown waits for the process to end instead of being
// unwound by CPython's pthread_exit (see parkIfFinalizing).
template <class F>
void withoutGil(F&& f) {
  PyThreadState* state = PyEval_SaveThread();
  try {
    f();
  } catch (...) {
    parkIfFinalizing();
    PyEval_RestoreThread(state);
    throw;
  }
  parkIfFinalizing();
  PyEval_RestoreThread(state);
}

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
                " has a schema; the overloads of ", qualname, " are: ",
                joinOverloads(listOverloadNames(qualname)));
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
  }

  const OperatorHandle& handle() const { return op_; }
  const FunctionSchema& schema() const { return schema_; }
  const std::string& name() const { return name_; }

  // Builds the arguments on `stack`. On a mismatch returns false and, when
  // `why` is not null, says why.
  bool bind(const py::args& args, const py::kwargs& kwargs, Stack* stack,
            std::string* why) const {
    const auto& params = schema_.arguments();
    const size_t nargs = args.size();
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
    const size_t nkwargs = kwargs ? kwargs.size() : 0;
    size_t used_kwargs = 0;
    stack->reserve(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      const Argument& arg = params[i];
      py::handle obj;
      if (i < nargs) {
        obj = args[i];
        if (nkwargs > 0 && kwargs.contains(py::str(arg.name()))) {
          if (why) {
            *why = name_ + "() got multiple values for argument '" +
                   arg.name() + "'";
          }
          return false;
        }
      } else if (nkwargs > 0) {
        PyObject* found = PyDict_GetItemString(kwargs.ptr(), arg.name().c_str());
        if (found != nullptr) {
          obj = found;
          ++used_kwargs;
        }
      }
      if (!obj) {
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
      if (!tryToIValue(obj, *arg.type(), arg.N(), &v)) {
        if (why) {
          *why = name_ + "(): argument '" + arg.name() + "' (position " +
                 std::to_string(i + 1) + ") must be " +
                 arg.type()->toString() + ", but got " + describePyType(obj);
        }
        return false;
      }
      stack->push_back(std::move(v));
    }
    if (used_kwargs < nkwargs) {
      if (why) {
        for (auto item : kwargs) {
          std::string key = py::str(item.first);
          if (!schema_.argumentIndexWithName(key).has_value()) {
            *why = name_ + "() got an unexpected keyword argument '" + key + "'";
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
    withoutGil([&] { op_.callBoxed(stack); });
    return returnsToPython(stack, schema_);
  }

  py::object call(const py::args& args, const py::kwargs& kwargs) const {
    Stack stack;
    std::string why;
    TURNOUT_CHECK(bind(args, kwargs, &stack, &why), ErrorKind::Type, why);
    return callBound(stack);
  }

  py::object redispatch(DispatchKeySet ks, const py::args& args,
                        const py::kwargs& kwargs) const {
    Stack stack;
    std::string why;
    TURNOUT_CHECK(bind(args, kwargs, &stack, &why), ErrorKind::Type, why);
    withoutGil([&] { op_.redispatchBoxed(ks, &stack); });
    return returnsToPython(stack, schema_);
  }

 private:
  OperatorHandle op_;
  FunctionSchema schema_;
  std::vector<IValue> defaults_;
  std::vector<bool> has_default_;
  size_t max_positional_;
  std::string name_;
};

// Every overload of one name.
class OpPacket {
 public:
  explicit OpPacket(const std::string& qualname) : qualname_(qualname) {
    for (const std::string& o : listOverloadNames(qualname)) {
      overloads_.push_back(std::make_shared<OpOverload>(qualname, o));
    }
    TURNOUT_CHECK(!overloads_.empty(), ErrorKind::InvalidArgument,
                  "no operator named ", qualname,
                  " has a schema; check the namespace and the name (e.g. "
                  "aten::add)");
  }

  py::object call(const py::args& args, const py::kwargs& kwargs) const {
    if (overloads_.size() == 1) return overloads_[0]->call(args, kwargs);
    Stack stack;
    for (const auto& o : overloads_) {
      stack.clear();
      if (o->bind(args, kwargs, &stack, nullptr)) return o->callBound(stack);
    }
    std::string types;
    for (size_t i = 0; i < args.size(); ++i) {
      if (!types.empty()) types += ", ";
      types += describePyType(args[i]);
    }
    if (kwargs) {
      for (auto item : kwargs) {
        if (!types.empty()) types += ", ";
        types += py::str(item.first).cast<std::string>() + "=" +
                 describePyType(item.second);
      }
    }
    std::string msg = qualname_ + "(): no overload matches the arguments (" +
                      types + "). Tried:";
    for (const auto& o : overloads_) {
      std::string why;
      stack.clear();
      o->bind(args, kwargs, &stack, &why);
      msg += "\n  " + toString(o->schema()) + "\n    " + why;
    }
    TURNOUT_CHECK(false, ErrorKind::Type, msg);
    return py::none();
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
  std::vector<std::shared_ptr<OpOverload>> overloads_;
};

// A context manager around a guard made on __enter__.
template <class Guard, class Arg>
struct GuardContext {
  explicit GuardContext(Arg a) : arg(a) {}
  Arg arg;
  std::optional<Guard> guard;
};

template <class Guard, class Arg>
void bindGuard(py::module_& m, const char* name, const char* doc) {
  using Ctx = GuardContext<Guard, Arg>;
  py::class_<Ctx>(m, name, doc)
      .def(py::init<Arg>())
      .def("__enter__",
           [](Ctx& c) {
             TURNOUT_CHECK(!c.guard.has_value(), ErrorKind::InvalidArgument,
                           "this guard is already entered; make a new one");
             c.guard.emplace(c.arg);
           })
      .def("__exit__", [](Ctx& c, py::handle, py::handle, py::handle) {
        c.guard.reset();
        return false;
      });
}

struct BelowAutogradContext {
  std::optional<AutoDispatchBelowAutograd> guard;
};

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
      .def_property_readonly("type",
                             [](const Argument& a) { return a.type()->toString(); })
      .def_property_readonly("N", &Argument::N)
      .def_property_readonly("default_value",
                             [](const Argument& a) -> py::object {
                               if (!a.default_value()) return py::none();
                               return toPyObject(defaultToIValue(a), a.type().get());
                             })
      .def_property_readonly("has_default_value",
                             [](const Argument& a) { return a.default_value().has_value(); })
      .def_property_readonly("kwarg_only", &Argument::kwarg_only)
      .def_property_readonly("is_out", &Argument::is_out)
      .def_property_readonly("alias_info",
                             [](const Argument& a) -> py::object {
                               if (!a.alias_info()) return py::none();
                               return py::cast(*a.alias_info());
                             })
      .def("__str__", [](const Argument& a) { return toString(a); })
      .def("__repr__", [](const Argument& a) { return "Argument(" + toString(a) + ")"; });

  py::class_<FunctionSchema>(m, "FunctionSchema", "An operator's schema.")
      .def_property_readonly("name", &FunctionSchema::name)
      .def_property_readonly("overload_name", &FunctionSchema::overload_name)
      .def_property_readonly("arguments", &FunctionSchema::arguments)
      .def_property_readonly("returns", &FunctionSchema::returns)
      .def_property_readonly("is_mutable", &FunctionSchema::is_mutable)
      .def("__str__", [](const FunctionSchema& s) { return toString(s); })
      .def("__repr__", [](const FunctionSchema& s) {
        return "FunctionSchema(\"" + toString(s) + "\")";
      })
      .def("__eq__", [](const FunctionSchema& a, const FunctionSchema& b) {
        return a == b;
      });
  m.def("parse_schema", [](const std::string& text) { return parseSchema(text); },
        py::arg("schema"),
        "Parses a schema; str() of the result is c10's canonical form.");

  py::class_<OpOverload, std::shared_ptr<OpOverload>>(
      m, "_OpOverload", "One overload of an operator; see turnout.ops.")
      .def(py::init<const std::string&, const std::string&>(),
           py::arg("qualified_name"), py::arg("overload_name"))
      .def("__call__", &OpOverload::call)
      .def("redispatch", &OpOverload::redispatch,
           "Calls with `keyset` as the dispatch key set, skipping the "
           "thread-local sets: what a kernel does to pass a call below its "
           "own key.")
      .def("has_kernel_for_dispatch_key",
           [](const OpOverload& o, DispatchKey k) {
             return o.handle().hasKernelForDispatchKey(k);
           })
      .def("name", &OpOverload::name, "The qualified name, 'aten::add.Tensor'.")
      .def_property_readonly("_schema", &OpOverload::schema);

  py::class_<OpPacket, std::shared_ptr<OpPacket>>(
      m, "_OpPacket", "Every overload of an operator name; see turnout.ops.")
      .def(py::init<const std::string&>(), py::arg("qualified_name"))
      .def("__call__", &OpPacket::call)
      .def("overloads", &OpPacket::overloadNames,
           "The overload names, 'default' for the unnamed one.");

  bindGuard<ExcludeDispatchKeyGuard, DispatchKeySet>(
      m, "_ExcludeDispatchKeyGuard",
      "Adds keys to this thread's excluded set inside a `with` block.");
  bindGuard<IncludeDispatchKeyGuard, DispatchKey>(
      m, "_IncludeDispatchKeyGuard",
      "Adds a key to this thread's included set inside a `with` block.");
  py::class_<BelowAutogradContext>(
      m, "_AutoDispatchBelowAutograd",
      "Excludes the autograd keys inside a `with` block.")
      .def(py::init<>())
      .def("__enter__",
           [](BelowAutogradContext& c) {
             TURNOUT_CHECK(!c.guard.has_value(), ErrorKind::InvalidArgument,
                           "this guard is already entered; make a new one");
             c.guard.emplace();
           })
      .def("__exit__",
           [](BelowAutogradContext& c, py::handle, py::handle, py::handle) {
             c.guard.reset();
             return false;
           });
}

}  // namespace bindings
}  // namespace turnout
