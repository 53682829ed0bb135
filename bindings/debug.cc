// turnout._C's debugging entry points, behind turnout.debug, turnout.profiler
// and turnout.utils: explain, the dispatch trace, the profiler and its
// RecordScope, registry snapshots and diffs, and the counters.
//
//   >>> e = _C._debug_explain("aten::mul", "Tensor", (x, y), {})
//   >>> print(e)                         # DispatchExplanation::toString()
//   >>> t = _C._DispatchTrace(None, True) # to stderr, as it happens
//   >>> p = _C._Profiler(); ...; p.stop(); print(p.table("self", 10))
//
// Bindings convert and delegate: the logic is in dispatcher/debug/explain.h,
// dispatch_trace.h, profiler.h, registry_snapshot.h and counters.h.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings/bindings.h"
#include "bindings/ivalue.h"
#include "bindings/tensor.h"
#include "dispatcher/core/error.h"
#include "dispatcher/debug/counters.h"
#include "dispatcher/debug/dispatch_trace.h"
#include "dispatcher/debug/explain.h"
#include "dispatcher/debug/profiler.h"
#include "dispatcher/debug/registry_snapshot.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/schema/default_ivalue.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {

// Declared in ivalue.h (opcheck binds its arguments the same way).
Stack bindArguments(const OperatorHandle& op, const py::tuple& args,
                    const py::dict& kwargs) {
  const FunctionSchema& schema = op.schema();
  const std::string name = toString(op.operator_name());
  const auto& params = schema.arguments();
  size_t max_positional = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].kwarg_only()) max_positional = i + 1;
  }
  TURNOUT_CHECK(args.size() <= max_positional, ErrorKind::Type, name,
                "() takes ", max_positional, " positional argument(s) but ",
                args.size(), " were given");
  size_t used = 0;
  Stack stack;
  const bool numbers_as_tensors = allowsNumbersAsTensors(schema.name());
  for (size_t i = 0; i < params.size(); ++i) {
    const Argument& arg = params[i];
    py::object obj;
    const bool in_kwargs = kwargs.contains(py::str(arg.name()));
    if (i < args.size()) {
      TURNOUT_CHECK(!in_kwargs, ErrorKind::Type, name,
                    "() got multiple values for argument '", arg.name(), "'");
      obj = args[i];
    } else if (in_kwargs) {
      obj = kwargs[py::str(arg.name())];
      ++used;
    }
    if (!obj) {
      TURNOUT_CHECK(arg.default_value().has_value(), ErrorKind::Type, name,
                    "() missing required argument '", arg.name(),
                    "' (position ", i + 1, ")");
      stack.push_back(defaultToIValue(arg));
      continue;
    }
    if (numbers_as_tensors && arg.type()->kind() == SchemaType::Kind::Tensor &&
        !isTensor(obj.ptr())) {
      Tensor wrapped = wrapNumber(obj.ptr());  // as a call binds it
      if (wrapped.defined()) {
        stack.push_back(IValue(std::move(wrapped)));
        continue;
      }
    }
    stack.push_back(toIValue(obj, schema, arg, i));  // 0-based: it adds 1
  }
  if (used < kwargs.size()) {
    for (auto item : kwargs) {
      const std::string key = py::str(item.first);
      TURNOUT_CHECK(schema.argumentIndexWithName(key).has_value(),
                    ErrorKind::Type, name,
                    "() got an unexpected keyword argument '", key, "'");
    }
  }
  return stack;
}

namespace {

OperatorHandle findOverload(const std::string& qualname,
                            const std::string& overload) {
  const std::string o = overload == "default" ? "" : overload;
  std::optional<OperatorHandle> op =
      Dispatcher::singleton().findSchema(OperatorName{qualname, o});
  TURNOUT_CHECK(
      op.has_value(), ErrorKind::InvalidArgument, "explain: no operator ",
      qualname, o.empty() ? "" : ".", o,
      " has a schema; check the name, e.g. turnout.ops.aten.add.Tensor "
      "or 'aten::add.Tensor'");
  return *op;
}

// The dispatch trace as a context manager: every line goes to the file
// given (opened here) or stderr, as it happens, and is also kept, with its
// structured event, for Python to read after the block.
class PyDispatchTrace {
 public:
  PyDispatchTrace(std::optional<std::string> path, bool to_stderr)
      : path_(std::move(path)), to_stderr_(to_stderr) {}
  ~PyDispatchTrace() { close(); }

  void enter() {
    TURNOUT_CHECK(
        !guard_, ErrorKind::InvalidArgument,
        "dispatch_trace: this trace is already active; make a new one");
    if (path_) {
      file_ = std::fopen(path_->c_str(), "w");
      TURNOUT_CHECK(file_ != nullptr, ErrorKind::InvalidArgument,
                    "dispatch_trace(file='", *path_,
                    "'): cannot open the file for writing");
    } else if (to_stderr_) {
      file_ = stderr;
    }
    auto state = state_;
    std::FILE* file = file_;
    guard_ = std::make_unique<DispatchTraceGuard>(
        [state, file](const DispatchTraceEvent& event,
                      const std::string& line) {
          if (file != nullptr) {
            std::fwrite(line.data(), 1, line.size(), file);
            std::fputc('\n', file);
            std::fflush(file);
          }
          std::lock_guard<std::mutex> lock(state->mu);
          state->events.push_back(event);
          state->lines.push_back(line);
        });
  }

  void close() {
    guard_.reset();
    if (file_ != nullptr && file_ != stderr) std::fclose(file_);
    file_ = nullptr;
  }

  std::vector<std::string> lines() const {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->lines;
  }
  std::vector<DispatchTraceEvent> events() const {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->events;
  }

 private:
  struct State {
    std::mutex mu;
    std::vector<DispatchTraceEvent> events;
    std::vector<std::string> lines;
  };
  std::optional<std::string> path_;
  bool to_stderr_;
  std::FILE* file_ = nullptr;
  std::shared_ptr<State> state_ = std::make_shared<State>();
  std::unique_ptr<DispatchTraceGuard> guard_;
};

struct PyRecordScope {
  explicit PyRecordScope(std::string n) : name(std::move(n)) {}
  std::string name;
  std::optional<RecordScope> scope;
};

py::dict statsToDict(const ProfileStats& s) {
  py::dict d;
  d["name"] = s.name;
  d["key"] = s.key;
  d["is_scope"] = s.is_scope;
  d["calls"] = s.calls;
  d["total_ns"] = s.total_ns;
  d["self_ns"] = s.self_ns;
  d["python_ns"] = s.python_ns;
  d["min_depth"] = s.min_depth;
  d["max_depth"] = s.max_depth;
  return d;
}

py::dict eventToDict(const ProfileEvent& e) {
  py::dict d;
  d["name"] = e.name;
  d["key"] = e.key;
  d["call"] = detail::toString(e.call);
  d["thread"] = e.thread;
  d["depth"] = e.depth;
  d["start_ns"] = e.start_ns;
  d["end_ns"] = e.end_ns;
  d["self_ns"] = e.self_ns;
  d["python_ns"] = e.python_ns;
  return d;
}

}  // namespace

void initDebug(py::module_& m) {
  // ---- explain -------------------------------------------------------------
  py::class_<ExplainedArgument>(m, "_ExplainedArgument",
                                "One argument the dispatcher reads keys from.")
      .def_readonly("index", &ExplainedArgument::index)
      .def_readonly("name", &ExplainedArgument::name)
      .def_readonly("type", &ExplainedArgument::type)
      .def_readonly("value", &ExplainedArgument::value)
      .def_readonly("key_set", &ExplainedArgument::key_set)
      .def("__repr__", [](const ExplainedArgument& a) {
        return "ExplainedArgument(" + std::to_string(a.index) + ", '" + a.name +
               "', " + a.type + ", " + toString(a.key_set) + ")";
      });
  py::class_<ExplainedEntry>(m, "_ExplainedEntry", "One computed table entry.")
      .def_readonly("key", &ExplainedEntry::key)
      .def_property_readonly(
          "kind", [](const ExplainedEntry& e) { return toString(e.kind); })
      .def_readonly("site", &ExplainedEntry::site)
      .def_readonly("fallthrough", &ExplainedEntry::fallthrough)
      .def("__repr__", [](const ExplainedEntry& e) {
        return std::string("ExplainedEntry(") + toString(e.key) + ", '" +
               toString(e.kind) + "', '" + e.site + "')";
      });
  py::class_<DispatchExplanation>(m, "_DispatchExplanation",
                                  "Why a call goes where it goes (explain.h).")
      .def_readonly("op", &DispatchExplanation::op)
      .def_readonly("schema", &DispatchExplanation::schema)
      .def_readonly("arguments", &DispatchExplanation::arguments)
      .def_readonly("argument_keys", &DispatchExplanation::argument_keys)
      .def_readonly("tls_included", &DispatchExplanation::tls_included)
      .def_readonly("tls_excluded", &DispatchExplanation::tls_excluded)
      .def_readonly("fallthrough_keys", &DispatchExplanation::fallthrough_keys)
      .def_readonly("before_mask", &DispatchExplanation::before_mask)
      .def_readonly("skipped", &DispatchExplanation::skipped)
      .def_readonly("dispatch_key_set", &DispatchExplanation::dispatch_key_set)
      .def_readonly("entry", &DispatchExplanation::entry)
      .def_readonly("redispatch_chain", &DispatchExplanation::redispatch_chain)
      .def("__str__", &DispatchExplanation::toString);
  m.def(
      "_debug_explain",
      [](const std::string& qualname, const std::string& overload,
         const py::tuple& args, const py::dict& kwargs) {
        OperatorHandle op = findOverload(qualname, overload);
        Stack stack = bindArguments(op, args, kwargs);
        return explain(op, stack);
      },
      py::arg("qualname"), py::arg("overload"), py::arg("args"),
      py::arg("kwargs"),
      "OperatorHandle::explain for a call with these Python arguments.");

  // ---- dispatch trace ------------------------------------------------------
  py::class_<PyDispatchTrace>(
      m, "_DispatchTrace", "A dispatch trace active between enter and close.")
      .def(py::init<std::optional<std::string>, bool>(), py::arg("path"),
           py::arg("to_stderr"))
      .def("enter", &PyDispatchTrace::enter)
      .def("close", &PyDispatchTrace::close)
      .def("lines", &PyDispatchTrace::lines)
      .def("events", [](const PyDispatchTrace& t) {
        py::list out;
        for (const DispatchTraceEvent& e : t.events()) {
          py::dict d;
          d["op"] = e.op;
          d["call"] = detail::toString(e.call);
          d["key_set"] = e.key_set;
          d["key"] = e.key;
          d["entry_kind"] = e.entry_kind;
          d["site"] = e.site;
          d["depth"] = e.depth;
          d["thread"] = e.thread;
          out.append(d);
        }
        return out;
      });
  m.def("_dispatch_trace_enabled", &isDispatchTraceEnabled);

  // ---- profiler -------------------------------------------------------------
  py::class_<Profiler>(m, "_Profiler", "The C++ profiler (profiler.h).")
      .def(py::init<>())
      .def("stop", &Profiler::stop)
      .def_property_readonly("running", &Profiler::running)
      .def("table", &Profiler::table, py::arg("sort_by") = "total",
           py::arg("row_limit") = -1)
      .def("chrome_trace", &Profiler::chromeTrace)
      .def("export_chrome_trace", &Profiler::exportChromeTrace, py::arg("path"))
      .def(
          "stats",
          [](const Profiler& p, const std::string& sort_by) {
            py::list out;
            for (const ProfileStats& s : p.stats(sort_by))
              out.append(statsToDict(s));
            return out;
          },
          py::arg("sort_by") = "total")
      .def("events", [](const Profiler& p) {
        py::list out;
        for (const ProfileEvent& e : p.events()) out.append(eventToDict(e));
        return out;
      });
  py::class_<PyRecordScope>(m, "_RecordScope",
                            "A named span for the profiler and the trace.")
      .def(py::init([](const std::string& name) {
             TURNOUT_CHECK(!name.empty(), ErrorKind::InvalidArgument,
                           "record scope: the name is empty; name the phase, "
                           "e.g. 'jit::run_passes'");
             return std::make_unique<PyRecordScope>(name);
           }),
           py::arg("name"))
      .def("__enter__",
           [](PyRecordScope& s) {
             TURNOUT_CHECK(!s.scope.has_value(), ErrorKind::InvalidArgument,
                           "record scope '", s.name,
                           "' is already entered; make a new one");
             s.scope.emplace(s.name);
           })
      .def("__exit__",
           [](PyRecordScope& s, py::handle, py::handle, py::handle) {
             s.scope.reset();
             return false;
           });

  // ---- registry snapshots
  // -----------------------------------------------------
  m.def(
      "_registry_snapshot_json", [] { return takeRegistrySnapshot().toJson(); },
      "The registry as JSON (registry_snapshot.h).");
  m.def(
      "_registry_snapshot_check",
      [](const std::string& json, const std::string& origin) {
        return RegistrySnapshot::fromJson(json, origin).toJson();
      },
      py::arg("json"), py::arg("origin") = "<string>",
      "Parses a snapshot (ValueError saying where it is malformed) and "
      "returns it re-serialised.");
  m.def(
      "_registry_diff",
      [](const std::string& before, const std::string& after) {
        RegistryDiff d =
            diffSnapshots(RegistrySnapshot::fromJson(before, "before"),
                          RegistrySnapshot::fromJson(after, "after"));
        return std::make_pair(d.toString(), d.toJson());
      },
      py::arg("before"), py::arg("after"),
      "(text, json) of the changes from one snapshot to another.");

  // ---- counters
  // ------------------------------------------------------------------
  m.def(
      "_counter_add",
      [](const std::string& name, int64_t n) { counter(name).add(n); },
      py::arg("name"), py::arg("n") = 1);
  m.def("_counter_values", &counterValues,
        "[(\"category.event\", value), ...] sorted by name.");
  m.def("_counter_reset", &resetCounters);
}

}  // namespace bindings
}  // namespace turnout
