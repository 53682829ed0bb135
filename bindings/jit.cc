// turnout._C._jit: the graph layer from Python -- Graph (parse, print,
// nodes), running a graph with the interpreter, trace(), and fork / wait
// with Future. turnout.jit wraps it.
//
//   >>> g = _C._jit.Graph.parse(text)
//   >>> _C._jit.run(g, x, y)               # one output, or a tuple
//   >>> ex = _C._jit.GraphExecutor(g); ex(x, y)   # plans per input spec
//   >>> _C._jit.passes.eliminate_dead_code(g)     # in place; changed?
//   >>> g = _C._jit.trace(fn, (x,), ["x"])
//   >>> f = _C._jit.fork(fn, x); f.wait()
//
// Threads and the GIL: running a graph and waiting on a future release the
// GIL, so that forked work (which takes it to call Python) can progress.
// Python callables held by forked work or by then() callbacks are released
// with the GIL held, on whichever thread drops them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bindings/bindings.h"
#include "bindings/gil.h"
#include "bindings/ivalue.h"
#include "bindings/python_error.h"
#include "bindings/python_kernel.h"
#include "bindings/tensor.h"
#include "dispatcher/core/error.h"
#include "jit/ir/compilation_unit.h"
#include "jit/ir/ir.h"
#include "jit/ir/parser.h"
#include "jit/passes/common_subexpression_elimination.h"
#include "jit/passes/constant_propagation.h"
#include "jit/passes/dead_code_elimination.h"
#include "jit/passes/inline.h"
#include "jit/passes/inline_constant_branches.h"
#include "jit/passes/lower_graph.h"
#include "jit/passes/peephole.h"
#include "jit/passes/shape_propagation.h"
#include "jit/runtime/future.h"
#include "jit/runtime/graph_executor.h"
#include "jit/runtime/interpreter.h"
#include "jit/tracer/tracer.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {
namespace {

using jit::Graph;
using jit::Node;
using jit::Value;

// Throws when a pass has freed part of `g` since a wrapper took a pointer
// into it (at `freed`, the graph's numFreed() then): the pointer may
// dangle.
void checkNotFreed(const Graph& g, uint64_t freed, const char* what) {
  TURNOUT_CHECK(
      g.numFreed() == freed, ErrorKind::InvalidArgument, "this ", what,
      " was taken from a graph that a pass has changed since "
      "(it removed nodes or values); take the ",
      what, " again from the graph (graph.nodes(), node.inputs(), ...)");
}

// A node or value of a graph, keeping the graph alive.
struct PyNode {
  std::shared_ptr<Graph> graph;
  Node* node_;
  uint64_t freed;
  PyNode(std::shared_ptr<Graph> g, Node* n)
      : graph(std::move(g)), node_(n), freed(graph->numFreed()) {}
  Node* node() const {
    checkNotFreed(*graph, freed, "Node");
    return node_;
  }
};
struct PyValue {
  std::shared_ptr<Graph> graph;
  Value* value_;
  uint64_t freed;
  PyValue(std::shared_ptr<Graph> g, Value* v)
      : graph(std::move(g)), value_(v), freed(graph->numFreed()) {}
  Value* value() const {
    checkNotFreed(*graph, freed, "Value");
    return value_;
  }
};

std::vector<PyValue> wrapValues(const std::shared_ptr<Graph>& g,
                                const std::vector<Value*>& values) {
  std::vector<PyValue> out;
  out.reserve(values.size());
  for (Value* v : values) out.emplace_back(g, v);
  return out;
}

// A Python object that may be dropped on any thread, never waiting for the
// GIL there (releasePyObject: an inter-op thread dropping the last copy
// while the interpreter shuts down must not be ended inside a destructor).
using SharedPyObject = std::shared_ptr<py::object>;
SharedPyObject share(py::object obj) {
  return SharedPyObject(new py::object(std::move(obj)), [](py::object* p) {
    releasePyObject(p->release().ptr());
    delete p;
  });
}

// Calls `f` with the GIL held, turning a Python exception into a
// PythonError (python_error.h), which a future raises again at every wait()
// and value().
template <class F>
IValue callPython(F&& f) {
  GilAcquire gil;
  try {
    return f();
  } catch (py::error_already_set& e) {
    throw PythonError(e);
  }
}

// fn(*args) through callOrPark (gil.h): a pool thread still calling when
// the interpreter shuts down parks instead of being unwound.
// Precondition: the GIL is held; `args` is a tuple.
py::object callParking(const py::object& fn, const py::object& args) {
  PyObject* r = callOrPark(fn.ptr(), args.ptr(), nullptr);
  if (r == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(r);
}

// Runs `f`, raising a PythonError again as the Python exception it holds.
// Precondition: the GIL is held.
template <class F>
auto reraisingPython(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const PythonError& e) {
    e.raise();
  }
}

IValue anyToIValue(py::handle obj, const char* what) {
  IValue v;
  bool converted;
  try {
    converted = tryToIValue(obj, *SchemaType::get(SchemaType::Kind::Any),
                            std::nullopt, &v, "result");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Type) throw;
    throw e.withPrefix(std::string(what) + " returned a " +
                       describePyType(obj) + ": ");
  }
  if (!converted) {
    throw Error(ErrorKind::Type,
                std::string(what) + " returned a " + describePyType(obj) +
                    ", which a graph value cannot hold (tensors, numbers, "
                    "bools, str, None, devices, dtypes, and lists and tuples "
                    "of them can)");
  }
  return v;
}

// The graph's outputs as Python: the one output, or a tuple.
py::object outputsToPython(Stack& stack) {
  if (stack.size() == 1) return toPyObject(stack[0]);
  py::tuple out(stack.size());
  for (size_t i = 0; i < stack.size(); ++i) out[i] = toPyObject(stack[i]);
  return std::move(out);
}

// A graph's inputs as Python sees them: converts call arguments to a
// Stack, or says which argument does not fit.
struct GraphInputs {
  std::vector<jit::Type> types;
  std::vector<std::string> names;

  explicit GraphInputs(const Graph& g) {
    for (const Value* v : g.inputs()) {
      types.push_back(v->type());
      names.push_back(v->debugName());
    }
  }

  // Appends `args` to `stack`, each converted to its input's type.
  // `where` names the caller in errors ("run()").
  void toStack(const py::args& args, const char* where, Stack& stack) const {
    const size_t n = args.size();
    TURNOUT_CHECK(n == types.size(), ErrorKind::InvalidArgument, where,
                  ": the graph takes ", types.size(), " inputs but got ", n);
    for (size_t i = 0; i < n; ++i) {
      PyObject* arg = PyTuple_GET_ITEM(args.ptr(), i);
      IValue v;
      bool converted;
      try {
        converted = tryToIValue(arg, *types[i].schemaType(), std::nullopt, &v,
                                "%" + names[i]);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::Type) throw;
        throw e.withPrefix(std::string(where) + ": input " +
                           std::to_string(i) + ": ");
      }
      if (!converted) {
        throw Error(ErrorKind::Type,
                    std::string(where) + ": input " + std::to_string(i) +
                        " (%" + names[i] + " : " + types[i].toString() +
                        ") must be " + types[i].unrefined().toString() +
                        ", but got " + describePyType(arg) +
                        (types[i].isClass()
                             ? " (turnout holds no module objects: lower the "
                               "graph first with "
                               "turnout.jit.passes.lower_graph(graph, "
                               "module))"
                             : ""));
      }
      stack.push_back(std::move(v));
    }
  }
};

// The value of a complete future as Python: a list of Future objects for a
// collect_all() result, else the converted IValue. Rethrows its error.
py::object futureValueToPython(const jit::Future& f) {
  if (f.holdsFutures()) return py::cast(f.futures());
  return toPyObject(f.value());
}

// A compiled graph, callable with Python values.
struct PyCode {
  std::shared_ptr<const jit::Code> code;
  GraphInputs inputs;

  explicit PyCode(const Graph& g)
      : code(std::make_shared<const jit::Code>(g)), inputs(g) {}

  py::object run(const py::args& args) const {
    Stack stack;
    stack.reserve(args.size());
    inputs.toStack(args, "run()", stack);
    withoutGil([&] { code->run(stack); });
    return outputsToPython(stack);
  }
};

// Each thread's spare Stack for GraphExecutor calls, kept between calls so
// that a call allocates no stack once the capacity is there. A call takes
// it (leaving an empty one: a graph whose Python kernel calls another
// executor on this thread gets a fresh stack) and gives it back cleared.
thread_local Stack tls_spare_stack;

// A GraphExecutor callable with Python values.
struct PyGraphExecutor {
  jit::GraphExecutor executor;
  GraphInputs inputs;

  PyGraphExecutor(const Graph& g, jit::GraphExecutorOptions options)
      : executor(g, options), inputs(executor.graph()) {}

  py::object call(const py::args& args) {
    Stack stack = std::move(tls_spare_stack);
    stack.clear();
    struct GiveBack {
      Stack& stack;
      ~GiveBack() {
        stack.clear();  // with the GIL held: outputs may be Python-owned
        tls_spare_stack = std::move(stack);
      }
    } give_back{stack};
    inputs.toStack(args, "GraphExecutor()", stack);
    withoutGil([&] { executor.run(stack); });
    return outputsToPython(stack);
  }
};

// Sets the Python error for the C++ exception being handled, as pybind11's
// own dispatcher does (through the registered translators).
// Precondition: called from a catch block, with the GIL held.
void setPythonErrorFromCurrentException() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (...) {
    if (py::detail::apply_exception_translators(
            py::detail::get_local_internals()
                .registered_exception_translators) ||
        py::detail::apply_exception_translators(
            py::detail::get_internals().registered_exception_translators)) {
      return;
    }
    PyErr_SetString(PyExc_SystemError,
                    "GraphExecutor(): an unknown C++ exception escaped");
  }
}

// GraphExecutor's tp_call, in place of pybind11's __call__ dispatch (which
// copies the arguments into a new tuple and resolves overloads: ~100 ns
// of the ~300 ns an empty graph's call cost from Python).
PyObject* graphExecutorCall(PyObject* self, PyObject* args, PyObject* kwargs) {
  if (kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0) {
    PyErr_SetString(PyExc_TypeError,
                    "GraphExecutor(): pass the graph's inputs positionally, "
                    "not as keyword arguments");
    return nullptr;
  }
  try {
    auto* inst = reinterpret_cast<py::detail::instance*>(self);
    auto* executor = inst->get_value_and_holder().value_ptr<PyGraphExecutor>();
    if (executor == nullptr) {
      PyErr_SetString(PyExc_TypeError,
                      "GraphExecutor(): this executor was not initialised "
                      "(its __init__ did not run)");
      return nullptr;
    }
    return executor->call(py::reinterpret_borrow<py::args>(args))
        .release()
        .ptr();
  } catch (...) {
    setPythonErrorFromCurrentException();
    return nullptr;
  }
}

// A graph of the executor's, as a Python Graph: a copy, so that Python can
// neither change a plan's graph nor keep a const one it could mutate.
py::object graphOrNone(const std::shared_ptr<const Graph>& g) {
  if (g == nullptr) return py::none();
  return py::cast(std::shared_ptr<Graph>(g->copy()));
}

}  // namespace

void initJit(py::module_& m) {
  py::module_ jit = m.def_submodule(
      "_jit", "The graph layer: IR, interpreter, tracer, fork/wait.");

  py::class_<PyValue>(jit, "Value", "A value of a graph (SSA).")
      .def("debug_name",
           [](const PyValue& v) { return v.value()->debugName(); })
      .def("type",
           [](const PyValue& v) { return v.value()->type().toString(); })
      .def("node",
           [](const PyValue& v) { return PyNode(v.graph, v.value()->node()); })
      .def("__repr__", [](const PyValue& v) {
        return "%" + v.value()->debugName() + " : " +
               v.value()->type().toString();
      });

  py::class_<PyNode>(jit, "Node", "A node of a graph.")
      .def("kind", [](const PyNode& n) { return n.node()->kind(); })
      .def("inputs",
           [](const PyNode& n) {
             return wrapValues(n.graph, n.node()->inputs());
           })
      .def("outputs",
           [](const PyNode& n) {
             return wrapValues(n.graph, n.node()->outputs());
           })
      .def("schema",
           [](const PyNode& n) -> py::object {
             const FunctionSchema* s = n.node()->maybeSchema();
             if (s == nullptr) return py::none();
             return py::str(toString(*s));
           })
      .def("source_location",
           [](const PyNode& n) { return n.node()->sourceLocation(); })
      .def("num_blocks",
           [](const PyNode& n) { return n.node()->blocks().size(); })
      .def("__str__", [](const PyNode& n) { return n.node()->toString(); })
      .def("__repr__", [](const PyNode& n) { return n.node()->toString(); });

  py::class_<Graph, std::shared_ptr<Graph>>(jit, "Graph",
                                            "A graph in TorchScript's form.")
      .def_static(
          "parse",
          [](const std::string& text, bool allow_unresolved,
             const std::shared_ptr<jit::CompilationUnit>& unit) {
            jit::ParseOptions options;
            options.allow_unresolved = allow_unresolved;
            options.compilation_unit = unit;
            return std::shared_ptr<Graph>(jit::parseIR(text, options));
          },
          py::arg("text"), py::arg("allow_unresolved") = false,
          py::arg("compilation_unit") = nullptr)
      .def("nodes",
           [](const std::shared_ptr<Graph>& g) {
             std::vector<PyNode> out;
             for (Node* n : g->block()->nodes()) out.emplace_back(g, n);
             return out;
           })
      .def("inputs",
           [](const std::shared_ptr<Graph>& g) {
             return wrapValues(g, g->inputs());
           })
      .def("outputs",
           [](const std::shared_ptr<Graph>& g) {
             return wrapValues(g, g->outputs());
           })
      .def("copy",
           [](const Graph& g) { return std::shared_ptr<Graph>(g.copy()); })
      .def("lint", &Graph::lint)
      .def("__str__", &Graph::toString);

  py::class_<jit::CompilationUnit, std::shared_ptr<jit::CompilationUnit>>(
      jit, "CompilationUnit",
      "Graph functions by name, for prim::CallFunction.")
      .def(py::init([] { return jit::CompilationUnit::create(); }))
      .def(
          "define",
          [](jit::CompilationUnit& cu, const std::string& name,
             const std::string& text) {
            return std::shared_ptr<Graph>(cu.define(name, text)->copy());
          },
          py::arg("name"), py::arg("text"))
      .def(
          "define_graph",
          [](jit::CompilationUnit& cu, const std::string& name,
             const Graph& g) {
            return std::shared_ptr<Graph>(cu.define(name, g.copy())->copy());
          },
          py::arg("name"), py::arg("graph"))
      .def(
          "graph",
          [](const jit::CompilationUnit& cu, const std::string& name)
              -> std::shared_ptr<Graph> {
            std::shared_ptr<const Graph> g = cu.find(name);
            if (g == nullptr) return nullptr;
            return std::shared_ptr<Graph>(g->copy());
          },
          py::arg("name"))
      .def("function_names", &jit::CompilationUnit::functionNames)
      .def(
          "run",
          [](const jit::CompilationUnit& cu, const std::string& name,
             const py::args& args) {
            std::shared_ptr<const Graph> g = cu.find(name);
            TURNOUT_CHECK(g != nullptr, ErrorKind::InvalidArgument,
                          "CompilationUnit.run(): no function named '", name,
                          "'; define it first");
            return PyCode(*g).run(args);
          },
          py::arg("name"));

  py::class_<PyCode>(jit, "Code", "A graph compiled for the interpreter.")
      .def(py::init([](const Graph& g) { return PyCode(g); }), py::arg("graph"))
      .def("__call__", &PyCode::run)
      .def("dump", [](const PyCode& c) { return c.code->dump(); });

  jit.def(
      "run",
      [](const Graph& g, const py::args& args) { return PyCode(g).run(args); },
      py::arg("graph"));

  py::class_<jit::GraphExecutorState::Plan>(
      jit, "ExecutionPlanState", "One plan of a GraphExecutor's debug state.")
      .def_property_readonly("spec",
                             [](const jit::GraphExecutorState::Plan& p) {
                               return p.spec.toString();
                             })
      .def_property_readonly("optimized",
                             [](const jit::GraphExecutorState::Plan& p) {
                               return p.spec.optimize();
                             })
      .def_property_readonly("graph",
                             [](const jit::GraphExecutorState::Plan& p) {
                               return graphOrNone(p.graph);
                             })
      .def_readonly("code", &jit::GraphExecutorState::Plan::code)
      .def("__repr__", [](const jit::GraphExecutorState::Plan& p) {
        return "<ExecutionPlanState " + p.spec.toString() + ">";
      });

  py::class_<jit::GraphExecutorState>(jit, "GraphExecutorState",
                                      "The plans of a GraphExecutor.")
      .def_property_readonly(
          "graph",
          [](const jit::GraphExecutorState& s) { return graphOrNone(s.graph); })
      .def_readonly("plans", &jit::GraphExecutorState::plans)
      .def("__str__", &jit::GraphExecutorState::toString);

  py::class_<PyGraphExecutor> executor(
      jit, "GraphExecutor", "Runs a graph with plans per input spec.",
      py::is_final());
  executor
      .def(py::init([](py::handle graph, bool optimize, bool specialize_sizes) {
             if (!py::isinstance<Graph>(graph)) {
               throw py::type_error(
                   "GraphExecutor(graph): expected graph to be a "
                   "turnout.jit.Graph, got " +
                   describePyType(graph));
             }
             jit::GraphExecutorOptions options;
             options.optimize = optimize;
             options.specialize_sizes = specialize_sizes;
             return std::make_unique<PyGraphExecutor>(
                 graph.cast<const Graph&>(), options);
           }),
           py::arg("graph"), py::arg("optimize") = true,
           py::arg("specialize_sizes") = false)
      // For introspection; calls go through graphExecutorCall (below).
      .def("__call__", &PyGraphExecutor::call)
      .def_property_readonly(
          "graph",
          [](const PyGraphExecutor& e) {
            return std::shared_ptr<Graph>(e.executor.graph().copy());
          })
      .def_property_readonly("optimize",
                             [](const PyGraphExecutor& e) {
                               return e.executor.options().optimize;
                             })
      .def_property_readonly("specialize_sizes",
                             [](const PyGraphExecutor& e) {
                               return e.executor.options().specialize_sizes;
                             })
      .def(
          "get_debug_state",
          [](const PyGraphExecutor& e) { return e.executor.getDebugState(); },
          "The plans made so far, in the order they were made: "
          "state.plans (each with spec, optimized, graph and code), "
          "state.graph, and str(state).")
      .def(
          "last_executed_optimized_graph",
          [](const PyGraphExecutor& e) {
            return graphOrNone(e.executor.lastExecutedOptimizedGraph());
          },
          "A copy of the graph of the plan that ran last (from any thread); "
          "None before the first call.");
  // Defining __call__ made the type's tp_call pybind11's generic slot;
  // point it at the direct entry. (A Python subclass would get the generic
  // slot back: GraphExecutor is final.)
  auto* executor_type = reinterpret_cast<PyTypeObject*>(executor.ptr());
  executor_type->tp_call = &graphExecutorCall;
  PyType_Modified(executor_type);

  jit.def("set_graph_executor_optimize", &jit::setGraphExecutorOptimize,
          py::arg("optimize"));
  jit.def("get_graph_executor_optimize", &jit::getGraphExecutorOptimize);

  py::module_ passes = jit.def_submodule(
      "passes",
      "Graph passes; each changes a graph in place and returns "
      "whether it changed it.");
  passes.def("eliminate_dead_code", &jit::eliminateDeadCode, py::arg("graph"));
  passes.def("propagate_constants", &jit::propagateConstants, py::arg("graph"));
  passes.def("eliminate_common_subexpressions",
             &jit::eliminateCommonSubexpressions, py::arg("graph"));
  passes.def("peephole_optimize", &jit::peepholeOptimize, py::arg("graph"));
  passes.def("inline_constant_branches", &jit::inlineConstantBranches,
             py::arg("graph"));
  passes.def("propagate_shapes", &jit::propagateShapes, py::arg("graph"));
  passes.def("inline_calls", &jit::inlineCalls, py::arg("graph"));
  passes.def("erase_shape_information", &jit::eraseShapeInformation,
             py::arg("graph"));
  passes.def(
      "optimize_graph", [](Graph& g) { jit::optimizeGraph(g); },
      py::arg("graph"));
  passes.def(
      "lower_graph",
      [](const Graph& g, py::object self) {
        // Conversion only: each path's Python value, classified; the
        // tensors' own objects are returned (torch returns its Parameters).
        std::map<std::vector<std::string>, py::object> found;
        jit::AttributeResolver resolve =
            [&](const std::vector<std::string>& path)
            -> std::optional<jit::ModuleAttribute> {
          py::object obj = self;
          const py::object missing = py::module_::import("builtins")
                                         .attr("object")();
          for (const std::string& name : path) {
            obj = py::getattr(obj, name.c_str(), missing);
            if (obj.is(missing)) return std::nullopt;
          }
          jit::ModuleAttribute a;
          PyObject* p = obj.ptr();
          a.description = std::string("a ") + Py_TYPE(p)->tp_name;
          if (isTensor(p)) {
            a.kind = jit::ModuleAttribute::Kind::Tensor;
            a.value = IValue(unpackTensor(p));
          } else if (obj.is_none() || PyBool_Check(p) ||
                     PyLong_CheckExact(p) || PyFloat_CheckExact(p) ||
                     PyUnicode_CheckExact(p)) {
            a.kind = jit::ModuleAttribute::Kind::Constant;
            a.value = obj.is_none()      ? IValue()
                      : PyBool_Check(p)  ? IValue(obj.cast<bool>())
                      : PyLong_Check(p)  ? IValue(obj.cast<int64_t>())
                      : PyFloat_Check(p) ? IValue(obj.cast<double>())
                                         : IValue(obj.cast<std::string>());
          } else {
            a.kind = jit::ModuleAttribute::Kind::Object;
          }
          found[path] = obj;
          return a;
        };
        jit::LoweredGraph r = jit::lowerGraph(g, resolve);
        py::list values;
        for (const std::string& name : r.names) {
          std::vector<std::string> path;
          size_t start = 0;
          for (;;) {
            size_t dot = name.find('.', start);
            path.push_back(name.substr(start, dot - start));
            if (dot == std::string::npos) break;
            start = dot + 1;
          }
          values.append(found.at(path));
        }
        return py::make_tuple(r.graph, values, r.names);
      },
      py::arg("graph"), py::arg("self"));

  jit.def(
      "trace",
      [](py::function fn, const py::sequence& example_inputs,
         std::vector<std::string> input_names) {
        std::vector<IValue> inputs;
        for (size_t i = 0; i < py::len(example_inputs); ++i) {
          py::object x = example_inputs[i];
          TURNOUT_CHECK(isTensor(x.ptr()), ErrorKind::Type,
                        "trace(fn, example_inputs): example input ", i,
                        " must be a Tensor, got ", describePyType(x),
                        "; capture other values in fn instead");
          inputs.emplace_back(unpackTensor(x.ptr()));
        }
        jit::TraceOptions options;
        options.input_names = std::move(input_names);
        jit::TracedFunction traced = [&fn](const std::vector<IValue>& in) {
          py::tuple args(in.size());
          for (size_t i = 0; i < in.size(); ++i) args[i] = toPyObject(in[i]);
          py::object result = fn(*args);
          std::vector<IValue> out;
          if (PyTuple_Check(result.ptr())) {
            for (py::handle e : result) {
              out.push_back(anyToIValue(e, "trace(): the traced function"));
            }
          } else {
            out.push_back(anyToIValue(result, "trace(): the traced function"));
          }
          return out;
        };
        return std::shared_ptr<Graph>(jit::trace(traced, inputs, options));
      },
      py::arg("fn"), py::arg("example_inputs"),
      py::arg("input_names") = std::vector<std::string>{});

  py::class_<jit::Future, std::shared_ptr<jit::Future>>(
      jit, "Future", "The result of forked work, available later.")
      .def(py::init<>())
      .def(
          "wait",
          [](jit::Future& f) {
            return reraisingPython([&] {
              withoutGil([&] { f.wait(); });
              return futureValueToPython(f);
            });
          },
          "Blocks until complete; returns the value or raises the error.")
      .def(
          "value",
          [](const jit::Future& f) {
            return reraisingPython([&] { return futureValueToPython(f); });
          },
          "The value; raises when not complete or when the work failed.")
      .def("done", &jit::Future::completed)
      .def("has_error", &jit::Future::hasError)
      .def(
          "set_result",
          [](jit::Future& f, py::handle v) {
            f.markCompleted(anyToIValue(v, "set_result(): the value"));
          },
          py::arg("result"))
      .def(
          "then",
          [](jit::Future& f, py::function callback) {
            SharedPyObject cb = share(std::move(callback));
            return f.then([cb](jit::Future& done) {
              return callPython([&] {
                py::tuple args = py::make_tuple(done.shared_from_this());
                return anyToIValue(callParking(*cb, args),
                                   "then(): the callback");
              });
            });
          },
          py::arg("callback"));

  jit.def(
      "fork",
      [](py::function fn, const py::args& args) {
        SharedPyObject f = share(std::move(fn));
        SharedPyObject a = share(args);
        return jit::fork([f, a]() -> IValue {
          return callPython([&] {
            return anyToIValue(callParking(*f, *a),
                               "fork(): the forked function");
          });
        });
      },
      py::arg("fn"));

  jit.def(
      "collect_all",
      [](const std::vector<std::shared_ptr<jit::Future>>& futures) {
        return jit::collectAll(futures);
      },
      py::arg("futures"));
  jit.def("get_num_interop_threads", &jit::getNumInteropThreads);
  jit.def("set_num_interop_threads", &jit::setNumInteropThreads, py::arg("n"));
  jit.def("is_tracing", &jit::isTracing);
}

}  // namespace bindings
}  // namespace turnout
