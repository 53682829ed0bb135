// turnout._C._jit: the graph layer from Python -- Graph (parse, print,
// nodes), running a graph with the interpreter, trace(), and fork / wait
// with Future. turnout.jit wraps it.
//
//   >>> g = _C._jit.Graph.parse(text)
//   >>> _C._jit.run(g, x, y)               # one output, or a tuple
//   >>> g = _C._jit.trace(fn, (x,), ["x"])
//   >>> f = _C._jit.fork(fn, x); f.wait()
//
// Threads and the GIL: running a graph and waiting on a future release the
// GIL, so that forked work (which takes it to call Python) can progress.
// Python callables held by forked work or by then() callbacks are released
// with the GIL held, on whichever thread drops them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

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
#include "dispatcher/error.h"
#include "jit/ir/ir.h"
#include "jit/ir/parser.h"
#include "jit/runtime/future.h"
#include "jit/runtime/interpreter.h"
#include "jit/tracer/tracer.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {
namespace {

using jit::Graph;
using jit::Node;
using jit::Value;

// A node or value of a graph, keeping the graph alive.
struct PyNode {
  std::shared_ptr<Graph> graph;
  Node* node;
};
struct PyValue {
  std::shared_ptr<Graph> graph;
  Value* value;
};

std::vector<PyValue> wrapValues(const std::shared_ptr<Graph>& g,
                                const std::vector<Value*>& values) {
  std::vector<PyValue> out;
  out.reserve(values.size());
  for (Value* v : values) out.push_back({g, v});
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
  if (!tryToIValue(obj, *SchemaType::get(SchemaType::Kind::Any), std::nullopt,
                   &v)) {
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

// A compiled graph, callable with Python values.
struct PyCode {
  std::shared_ptr<const jit::Code> code;
  std::vector<jit::Type> input_types;
  std::vector<std::string> input_names;

  explicit PyCode(const Graph& g)
      : code(std::make_shared<const jit::Code>(g)) {
    for (const Value* v : g.inputs()) {
      input_types.push_back(v->type());
      input_names.push_back(v->debugName());
    }
  }

  py::object run(const py::args& args) const {
    TURNOUT_CHECK(args.size() == input_types.size(), ErrorKind::InvalidArgument,
                  "run(): the graph takes ", input_types.size(),
                  " inputs but got ", args.size());
    Stack stack;
    stack.reserve(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      IValue v;
      if (!tryToIValue(args[i], *input_types[i].schemaType(), std::nullopt,
                       &v)) {
        throw Error(ErrorKind::Type,
                    "run(): input " + std::to_string(i) + " (%" +
                        input_names[i] + " : " + input_types[i].toString() +
                        ") must be " + input_types[i].unrefined().toString() +
                        ", but got " + describePyType(args[i]));
      }
      stack.push_back(std::move(v));
    }
    withoutGil([&] { code->run(stack); });
    return outputsToPython(stack);
  }
};

}  // namespace

void initJit(py::module_& m) {
  py::module_ jit = m.def_submodule(
      "_jit", "The graph layer: IR, interpreter, tracer, fork/wait.");

  py::class_<PyValue>(jit, "Value", "A value of a graph (SSA).")
      .def("debug_name", [](const PyValue& v) { return v.value->debugName(); })
      .def("type", [](const PyValue& v) { return v.value->type().toString(); })
      .def("node",
           [](const PyValue& v) { return PyNode{v.graph, v.value->node()}; })
      .def("__repr__", [](const PyValue& v) {
        return "%" + v.value->debugName() + " : " +
               v.value->type().toString();
      });

  py::class_<PyNode>(jit, "Node", "A node of a graph.")
      .def("kind", [](const PyNode& n) { return n.node->kind(); })
      .def("inputs",
           [](const PyNode& n) { return wrapValues(n.graph, n.node->inputs()); })
      .def("outputs",
           [](const PyNode& n) {
             return wrapValues(n.graph, n.node->outputs());
           })
      .def("schema",
           [](const PyNode& n) -> py::object {
             const FunctionSchema* s = n.node->maybeSchema();
             if (s == nullptr) return py::none();
             return py::str(toString(*s));
           })
      .def("source_location",
           [](const PyNode& n) { return n.node->sourceLocation(); })
      .def("num_blocks",
           [](const PyNode& n) { return n.node->blocks().size(); })
      .def("__str__", [](const PyNode& n) { return n.node->toString(); })
      .def("__repr__", [](const PyNode& n) { return n.node->toString(); });

  py::class_<Graph, std::shared_ptr<Graph>>(jit, "Graph",
                                            "A graph in TorchScript's form.")
      .def_static(
          "parse",
          [](const std::string& text, bool allow_unresolved) {
            jit::ParseOptions options;
            options.allow_unresolved = allow_unresolved;
            return std::shared_ptr<Graph>(jit::parseIR(text, options));
          },
          py::arg("text"), py::arg("allow_unresolved") = false)
      .def("nodes",
           [](const std::shared_ptr<Graph>& g) {
             std::vector<PyNode> out;
             for (Node* n : g->block()->nodes()) out.push_back({g, n});
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

  py::class_<PyCode>(jit, "Code", "A graph compiled for the interpreter.")
      .def(py::init([](const Graph& g) { return PyCode(g); }),
           py::arg("graph"))
      .def("__call__", &PyCode::run)
      .def("dump", [](const PyCode& c) { return c.code->dump(); });

  jit.def(
      "run",
      [](const Graph& g, const py::args& args) { return PyCode(g).run(args); },
      py::arg("graph"));

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
              return toPyObject(f.value());
            });
          },
          "Blocks until complete; returns the value or raises the error.")
      .def(
          "value",
          [](const jit::Future& f) {
            return reraisingPython([&] { return toPyObject(f.value()); });
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
  jit.def("set_num_interop_threads", &jit::setNumInteropThreads,
          py::arg("n"));
  jit.def("is_tracing", &jit::isTracing);
}

}  // namespace bindings
}  // namespace turnout
