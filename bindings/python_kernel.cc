#include "bindings/python_kernel.h"

#include <Python.h>
#include <cxxabi.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "bindings/bindings.h"
#include "bindings/gil.h"
#include "bindings/ivalue.h"
#include "bindings/python_error.h"
#include "bindings/python_nesting.h"
#include "bindings/tensor.h"
#include "dispatcher/core/error.h"
#include "dispatcher/dispatch_observer.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/operator_handle.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/autograd_fallback.h"
#include "kernels/autograd/function_node.h"
#include "kernels/autograd/node.h"
#include "kernels/copy.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {
namespace {

// ---- Releasing Python references from any thread -----------------------------

// References whose owners died on a thread without the GIL. Leaked on
// purpose (never destroyed): functors may die during static destruction.
std::mutex& pendingMutex() {
  static auto* mu = new std::mutex;  // a leaf lock: nothing is called under it
  return *mu;
}
std::vector<PyObject*>& pendingObjects() {
  static auto* v = new std::vector<PyObject*>;  // guarded by pendingMutex()
  return *v;
}
// A hint read without the lock by the callers that drain: relaxed is enough,
// a missed drain happens at the next call.
std::atomic<bool> g_pending_nonempty{false};

int drainPendingCall(void*) {
  releasePendingPyObjects();
  return 0;
}

bool interpreterAlive() { return Py_IsInitialized() && !_Py_IsFinalizing(); }

}  // namespace

void releasePyObject(PyObject* obj) {
  if (obj == nullptr || !interpreterAlive()) return;
  if (PyGILState_Check()) {
    Py_DECREF(obj);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(pendingMutex());
    pendingObjects().push_back(obj);
  }
  g_pending_nonempty.store(true, std::memory_order_relaxed);
  // Asks the main thread to drain soon; when the queue of pending calls is
  // full this fails, and the next kernel call or registration drains.
  Py_AddPendingCall(&drainPendingCall, nullptr);
}

namespace {

// ---- Schemas, cached per kernel ----------------------------------------------

// Bumped on every def and undef of any operator (under the registry lock),
// so a kernel's cached copy of a schema is known stale without a lock.
std::atomic<uint64_t> g_schema_generation{1};

class SchemaGenerationListener final : public OpRegistrationListener {
 public:
  void onOperatorRegistered(const OperatorHandle&) override { bump(); }
  void onOperatorDeregistered(const OperatorHandle&) override { bump(); }

 private:
  // release: pairs with the acquire load in schemaFor, which then refetches.
  static void bump() { g_schema_generation.fetch_add(1, std::memory_order_release); }
};

std::string opName(const FunctionSchema& schema) {
  return schema.overload_name().empty()
             ? schema.name()
             : schema.name() + "." + schema.overload_name();
}

std::string withArticle(const std::string& type) {
  const char c = type.empty() ? 'x' : type[0];
  const bool vowel = c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' ||
                     c == 'A' || c == 'E' || c == 'I' || c == 'O' || c == 'U';
  return (vowel ? "an " : "a ") + type;
}

std::string returnTypes(const FunctionSchema& schema) {
  std::string out = "(";
  for (size_t i = 0; i < schema.returns().size(); ++i) {
    if (i > 0) out += ", ";
    out += schema.returns()[i].type()->toString();
  }
  return out + ")";
}

// tryToIValue for one of a kernel's results; a result nested too deep (or
// containing itself) says whose it is.
bool convertReturn(py::handle value, const Argument& ret,
                   const FunctionSchema& schema, IValue* out) {
  try {
    return tryToIValue(value, *ret.type(), ret.N(), out, "result");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Type) throw;
    throw e.withPrefix("the kernel for " + opName(schema) + " returned " +
                       describePyType(value) + ": ");
  }
}

// Converts what a kernel returned and pushes it by the schema's returns.
void pushReturns(py::handle result, const FunctionSchema& schema, Stack* stack) {
  const auto& returns = schema.returns();
  if (returns.empty()) {
    TURNOUT_CHECK(result.is_none(), ErrorKind::Type, "expected the kernel for ",
                  opName(schema), " to return None (its schema has no returns), got ",
                  describePyType(result));
    return;
  }
  if (returns.size() == 1) {
    const Argument& r = returns[0];
    IValue v;
    TURNOUT_CHECK(convertReturn(result, r, schema, &v), ErrorKind::Type,
                  "expected the kernel for ", opName(schema), " to return ",
                  withArticle(r.type()->toString()), ", got ",
                  describePyType(result));
    stack->push_back(std::move(v));
    return;
  }
  PyObject* p = result.ptr();
  const bool sequence = PyTuple_Check(p) || PyList_Check(p);
  TURNOUT_CHECK(sequence && static_cast<size_t>(PySequence_Size(p)) == returns.size(),
                ErrorKind::Type, "expected the kernel for ", opName(schema),
                " to return a tuple of ", returns.size(), " values ",
                returnTypes(schema), ", got ", describePyType(result));
  const size_t first = stack->size();
  for (size_t i = 0; i < returns.size(); ++i) {
    py::handle item = PyTuple_Check(p) ? PyTuple_GET_ITEM(p, i) : PyList_GET_ITEM(p, i);
    IValue v;
    if (!convertReturn(item, returns[i], schema, &v)) {
      stack->resize(first);
      TURNOUT_CHECK(false, ErrorKind::Type, "expected the kernel for ",
                    opName(schema), " to return ", returnTypes(schema),
                    ", but element ", i, " is ", describePyType(item));
    }
    stack->push_back(std::move(v));
  }
}

// turnout.ops.<ns>.<name>.<overload> for `schema`, the object a fallback
// receives first (as torch.library's fallbacks do).
py::object findPyOverload(const FunctionSchema& schema) {
  const std::string& qualname = schema.name();
  const size_t sep = qualname.find("::");
  py::object ops = py::module_::import("turnout._ops").attr("ops");
  py::object packet = ops.attr(qualname.substr(0, sep).c_str())
                          .attr(qualname.substr(sep + 2).c_str());
  const std::string& overload = schema.overload_name();
  return packet.attr(overload.empty() ? "default" : overload.c_str());
}

// ---- The kernel ------------------------------------------------------------------

// The boxed entry point of PythonKernel, known once the first one is made
// (pythonKernelBoxedFunction).
std::atomic<BoxedKernelFn> g_python_kernel_boxed_fn{nullptr};

// Invariant: fn_ holds one strong reference, dropped by releasePyObject.
// The cache fields are read and written with the GIL held only.
class PythonKernel final : public OperatorKernel {
 public:
  PythonKernel(py::object fn, bool with_keyset, bool with_op)
      : fn_(fn.release().ptr()), with_keyset_(with_keyset), with_op_(with_op) {}
  ~PythonKernel() override {
    releasePyObject(fn_);
    for (auto& entry : cache_) releasePyObject(entry.second.op);
  }

  void operator()(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
    GilAcquire gil;
    try {
      callWithGil(op, ks, stack);
    } catch (const py::error_already_set& e) {
      throw PythonError(e);  // raisable again, droppable without the GIL
    }
  }

 private:
  // Precondition: the GIL is held.
  void callWithGil(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
    PythonNestingGuard nesting(PythonNestingGuard::Kind::Kernel, [&] {
      return describePythonCallable(py::handle(fn_)) + " for " +
             opName(op.schema());
    });
    if (g_pending_nonempty.load(std::memory_order_relaxed)) {
      releasePendingPyObjects();
    }
    // A copy: the callable may re-enter this kernel (a fallback seeing the
    // operators its own code calls), which may rehash the cache.
    const Cached c = schemaFor(op);
    const auto& args = c.schema->arguments();
    const size_t n = args.size();
    TURNOUT_INTERNAL_ASSERT(stack->size() >= n, "the Python kernel for ",
                            opName(*c.schema), " was called with ", stack->size(),
                            " values on the stack for ", n, " arguments");
    const size_t first = stack->size() - n;
    const size_t offset = (with_op_ ? 1 : 0) + (with_keyset_ ? 1 : 0);
    py::tuple pargs(offset + c.num_positional);
    if (with_op_) {
      Py_INCREF(c.op);
      PyTuple_SET_ITEM(pargs.ptr(), 0, c.op);
    }
    if (with_keyset_) {
      PyTuple_SET_ITEM(pargs.ptr(), with_op_ ? 1 : 0, py::cast(ks).release().ptr());
    }
    py::object kwargs;
    size_t pos = offset;
    for (size_t i = 0; i < n; ++i) {
      py::object v = toPyObject((*stack)[first + i], args[i].type().get());
      if (args[i].kwarg_only()) {
        if (!kwargs) kwargs = py::dict();
        PyDict_SetItemString(kwargs.ptr(), args[i].name().c_str(), v.ptr());
      } else {
        PyTuple_SET_ITEM(pargs.ptr(), pos++, v.release().ptr());
      }
    }
    stack->resize(first);
    PyObject* out;
    {
      detail::PythonTimeScope python_time;  // the profiler's Python column
      out = callOrPark(fn_, pargs.ptr(), kwargs ? kwargs.ptr() : nullptr);
    }
    // The exception (type, value, traceback) rides through the dispatcher's
    // frames as a PythonError (operator() converts it) and is restored where
    // the call entered C++.
    if (out == nullptr) throw py::error_already_set();
    py::object result = py::reinterpret_steal<py::object>(out);
    pushReturns(result, *c.schema, stack);
  }

  struct Cached {
    uint64_t generation = 0;
    std::shared_ptr<const FunctionSchema> schema;
    size_t num_positional = 0;
    // With with_op_: turnout.ops.<ns>.<name>.<overload>, one reference.
    PyObject* op = nullptr;
  };

  // The operator's schema, fetched (under the registry lock) only when this
  // kernel first sees the operator or some def/undef happened since.
  const Cached& schemaFor(const OperatorHandle& op) {
    const uint64_t gen = g_schema_generation.load(std::memory_order_acquire);
    const OperatorEntry* entry = op.entry();
    if (last_entry_ == entry && last_->generation == gen) return *last_;
    Cached& c = cache_[entry];
    if (c.generation != gen || !c.schema) {
      auto schema = std::make_shared<const FunctionSchema>(op.schema());
      c.num_positional = 0;
      for (const Argument& a : schema->arguments()) {
        if (!a.kwarg_only()) ++c.num_positional;
      }
      if (with_op_) {
        py::object overload = findPyOverload(*schema);
        releasePyObject(c.op);
        c.op = overload.release().ptr();
      }
      c.schema = std::move(schema);
      c.generation = gen;
    }
    last_entry_ = entry;
    last_ = &c;
    return c;
  }

  PyObject* fn_;
  bool with_keyset_;
  bool with_op_;
  // Guarded by the GIL. flat_hash_map moves its values on rehash, so last_
  // is refreshed on every miss (and only a miss inserts).
  const OperatorEntry* last_entry_ = nullptr;
  Cached* last_ = nullptr;
  absl::flat_hash_map<const OperatorEntry*, Cached> cache_;
};

// ---- Autograd: a backward Node written in Python ---------------------------------

// Invariant: backward_ holds one strong reference, and release_ one or is
// null; each dropped by releasePyObject.
class PythonFunctionNode final : public autograd::Node {
 public:
  PythonFunctionNode(std::string name, const std::vector<Tensor>& inputs,
                     PyObject* backward, PyObject* release)
      : name_(std::move(name)), backward_(backward), release_(release) {
    std::vector<autograd::Edge> edges;
    edges.reserve(inputs.size());
    for (const Tensor& t : inputs) {
      edges.push_back(t.defined() ? autograd::gradientEdge(t) : autograd::Edge{});
      if (t.defined()) {
        inputs_.push_back({DimVector(t.sizes().begin(), t.sizes().end()),
                           t.scalar_type(), true});
      } else {
        inputs_.push_back({DimVector(), ScalarType::Float, false});
      }
    }
    set_next_edges(std::move(edges));
  }
  ~PythonFunctionNode() override {
    releasePyObject(backward_);
    if (release_ != nullptr) releasePyObject(release_);
  }

  // Calls release() (turnout.autograd.Function: frees ctx's saved tensors,
  // so that a later saved_tensors raises torch's error).
  void releaseVariables() override {
    autograd::Node::releaseVariables();
    if (release_ == nullptr) return;
    GilAcquire gil;
    PyObject* res = PyObject_CallNoArgs(release_);
    if (res == nullptr) throw PythonError(py::error_already_set());
    Py_DECREF(res);
  }

  std::string name() const override { return name_; }

  autograd::variable_list apply(autograd::variable_list&& grads) override {
    autograd::variable_list out(inputs_.size());
    {
      GilAcquire gil;
      PythonNestingGuard nesting(PythonNestingGuard::Kind::Backward, [&] {
        return "the Python backward function of " + name_;
      });
      py::tuple args(grads.size());
      for (size_t i = 0; i < grads.size(); ++i) {
        PyTuple_SET_ITEM(args.ptr(), i, wrapTensor(grads[i]).release().ptr());
      }
      PyObject* res;
      {
        detail::PythonTimeScope python_time;  // the profiler's Python column
        res = callOrPark(backward_, args.ptr(), nullptr);
      }
      if (res == nullptr) throw py::error_already_set();
      py::object result = py::reinterpret_steal<py::object>(res);
      py::tuple items;
      if (PyTuple_Check(res) || PyList_Check(res)) {
        items = py::tuple(result);
      } else {
        items = py::make_tuple(result);
      }
      TURNOUT_CHECK(items.size() == inputs_.size(), ErrorKind::Type, name_,
                    ": the backward function returned ", items.size(),
                    " gradient", items.size() == 1 ? "" : "s", " for ",
                    inputs_.size(), " input", inputs_.size() == 1 ? "" : "s",
                    " (", describePyType(result),
                    "); return one Tensor or None per tensor input, in order");
      for (size_t i = 0; i < inputs_.size(); ++i) {
        py::handle g = items[i];
        if (g.is_none()) continue;
        TURNOUT_CHECK(isTensor(g.ptr()), ErrorKind::Type, name_,
                      ": the backward function returned ", describePyType(g),
                      " as the gradient of input ", i,
                      "; expected a Tensor or None");
        out[i] = unpackTensor(g.ptr());
      }
    }
    for (size_t i = 0; i < out.size(); ++i) {
      Tensor& g = out[i];
      if (!g.defined() || !needsGrad(i) || !inputs_[i].defined) {
        g = Tensor();
        continue;
      }
      g = autograd::sumToSize(g, inputs_[i].sizes);
      if (g.scalar_type() != inputs_[i].dtype) g = to(g, inputs_[i].dtype);
    }
    return out;
  }

  bool needsGrad(size_t i) const { return next_edges()[i].isValid(); }

 private:
  struct InputInfo {
    DimVector sizes;
    ScalarType dtype;
    bool defined;
  };
  std::string name_;
  std::vector<InputInfo> inputs_;
  PyObject* backward_;
  PyObject* release_;
};

// Makes a PythonFunctionNode the grad_fn of `outputs`. None inputs take no
// gradient. An output may be an input only when it is in `dirty` (modified
// in place by the forward: turnout.autograd.Function's mark_dirty); its
// history is then rebased onto the node.
void recordPythonNode(const std::string& name, const py::list& inputs,
                      const py::list& outputs, const py::object& backward,
                      const py::list& dirty, const py::object& release) {
  TURNOUT_CHECK(PyCallable_Check(backward.ptr()), ErrorKind::Type, name,
                ": the backward function must be callable, got ",
                describePyType(backward));
  TURNOUT_CHECK(release.is_none() || PyCallable_Check(release.ptr()),
                ErrorKind::Type, name,
                ": release must be callable or None, got ",
                describePyType(release));
  std::vector<Tensor> ins;
  for (py::handle h : inputs) {
    if (h.is_none()) {
      ins.emplace_back();
      continue;
    }
    TURNOUT_CHECK(isTensor(h.ptr()), ErrorKind::Type, name,
                  ": inputs must be Tensors or None, got ", describePyType(h));
    ins.push_back(unpackTensor(h.ptr()));
  }
  std::vector<const TensorImpl*> dirty_impls;
  for (py::handle h : dirty) {
    TURNOUT_CHECK(isTensor(h.ptr()), ErrorKind::Type, name,
                  ": dirty tensors must be Tensors, got ", describePyType(h));
    dirty_impls.push_back(unpackTensor(h.ptr()).unsafeGetTensorImpl());
  }
  auto isDirty = [&dirty_impls](const Tensor& t) {
    for (const TensorImpl* d : dirty_impls) {
      if (d == t.unsafeGetTensorImpl()) return true;
    }
    return false;
  };
  std::vector<Tensor> outs;
  for (py::handle h : outputs) {
    TURNOUT_CHECK(isTensor(h.ptr()), ErrorKind::Type, name,
                  ": outputs must be Tensors, got ", describePyType(h));
    const Tensor& t = unpackTensor(h.ptr());
    if (isDirty(t)) {
      // Checked before any history changes.
      autograd::detail::checkInplaceAllowed(t, /*recording=*/true, name.c_str());
      outs.push_back(t);
      continue;
    }
    for (const Tensor& in : ins) {
      TURNOUT_CHECK(!in.defined() ||
                        in.unsafeGetTensorImpl() != t.unsafeGetTensorImpl(),
                    ErrorKind::InvalidArgument, name,
                    ": the operator returned one of its inputs; an operator "
                    "with a Python autograd formula must return new tensors "
                    "(return x.clone() instead of x)");
    }
    outs.push_back(t);
  }
  auto node = std::make_shared<PythonFunctionNode>(
      name, ins, backward.inc_ref().ptr(),
      release.is_none() ? nullptr : release.inc_ref().ptr());
  for (const Tensor& t : outs) autograd::setHistory(t, node);
}

}  // namespace

void releasePendingPyObjects() {
  std::vector<PyObject*> todo;
  {
    std::lock_guard<std::mutex> lock(pendingMutex());
    todo.swap(pendingObjects());
    g_pending_nonempty.store(false, std::memory_order_relaxed);
  }
  for (PyObject* obj : todo) Py_DECREF(obj);
}

KernelFunction makePythonKernel(py::object fn, bool with_keyset, bool with_op) {
  KernelFunction k = KernelFunction::makeFromBoxedFunctor(
      std::make_unique<PythonKernel>(std::move(fn), with_keyset, with_op));
  // Every PythonKernel has the same boxed entry point. Relaxed: the value
  // never changes once set, and a table holding such a kernel is published
  // (with release) after this store.
  g_python_kernel_boxed_fn.store(k.boxedFunction(), std::memory_order_relaxed);
  return k;
}

BoxedKernelFn pythonKernelBoxedFunction() {
  return g_python_kernel_boxed_fn.load(std::memory_order_relaxed);
}

std::string describePythonCallable(py::handle fn) {
  std::string name;
  py::object qualname = py::getattr(fn, "__qualname__", py::none());
  if (py::isinstance<py::str>(qualname)) {
    name = qualname.cast<std::string>();
  } else {
    name = py::str(py::repr(fn)).cast<std::string>();
  }
  std::string site;
  py::object code = py::getattr(fn, "__code__", py::none());
  if (!code.is_none()) {
    py::object file = py::getattr(code, "co_filename", py::none());
    py::object line = py::getattr(code, "co_firstlineno", py::none());
    if (py::isinstance<py::str>(file) && py::isinstance<py::int_>(line)) {
      site = " (" + file.cast<std::string>() + ":" +
             std::to_string(line.cast<long>()) + ")";
    }
  }
  return "python kernel " + name + site;
}

void initPythonKernel(py::module_& m) {
  // Never destroyed: the listener must outlive every kernel.
  static auto* listener = new RegistrationHandleRAII(
      Dispatcher::singleton().addRegistrationListener(
          std::make_unique<SchemaGenerationListener>()));
  (void)listener;

  m.def("_autograd_record_python_node", &recordPythonNode, py::arg("name"),
        py::arg("inputs"), py::arg("outputs"), py::arg("backward"),
        py::arg("dirty") = py::list(), py::arg("release") = py::none(),
        "Makes a backward Node calling `backward(*grads)` the grad_fn of "
        "`outputs`; it returns one gradient (or None) per entry of `inputs`. "
        "Outputs in `dirty` may be inputs (modified in place): their history "
        "is rebased onto the node. `release()`, when given, is called when "
        "backward frees the node's saved values (no retain_graph). Used by "
        "turnout.library's register_autograd and turnout.autograd.Function.");
  m.def(
      "_bump_version",
      [](const Tensor& t) { t.unsafeGetTensorImpl()->bump_version(); },
      py::arg("tensor"),
      "Bumps the version counter of `tensor`, as an in-place operation does "
      "(turnout.autograd.Function's mark_dirty).");
  // The autograd fallback's warning ("... has no autograd kernel") as a
  // Python UserWarning at the call; a warnings filter set to "error" makes
  // the call raise it. The fallback runs outside any turnout lock, so taking
  // the GIL there is safe.
  autograd::setAutogradFallbackWarningHandler(&warnAsUserWarning);
  m.def(
      "_set_autograd_fallback_mode",
      [](const std::string& mode) {
        if (mode == "warn") {
          autograd::setAutogradFallbackMode(autograd::AutogradFallbackMode::Warn);
        } else if (mode == "nothing") {
          autograd::setAutogradFallbackMode(
              autograd::AutogradFallbackMode::Nothing);
        } else {
          TURNOUT_CHECK(false, ErrorKind::InvalidArgument,
                        "_set_autograd_fallback_mode: expected \"warn\" or "
                        "\"nothing\", got \"", mode, "\"");
        }
      },
      py::arg("mode"),
      "What calls of operators with no autograd kernel do at the autograd "
      "keys: \"warn\" (the default, as torch 2.x: a UserWarning once per "
      "operator when grad mode is on, an input requires grad and an output "
      "is floating-point) or \"nothing\" (fall through, as torch 1.13's "
      "tables). TURNOUT_AUTOGRAD_FALLBACK_MODE sets the default at load.");
  m.def("_get_autograd_fallback_mode", [] {
    return autograd::autogradFallbackMode() ==
                   autograd::AutogradFallbackMode::Warn
               ? "warn"
               : "nothing";
  });
  m.def("_reset_autograd_fallback_warnings",
        &autograd::resetAutogradFallbackWarnings,
        "Forgets which operators have warned (tests).");
  m.def("_release_pending_pyobjects", &releasePendingPyObjects,
        "Drops Python references queued by threads without the GIL (tests).");
}

}  // namespace bindings
}  // namespace turnout
