// The Python key's fallback, the dispatch mode stack, tensor subclasses and
// the preservation of their Python objects. See python_mode.h.
#include "bindings/python_mode.h"

#include <pybind11/eval.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings/bindings.h"
#include "bindings/gil.h"
#include "bindings/ivalue.h"
#include "bindings/python_error.h"
#include "bindings/python_nesting.h"
#include "bindings/tensor.h"
#include "bindings/types.h"
#include "dispatcher/core/dispatch_key_set.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/tensor_impl.h"
#include "dispatcher/debug/dispatch_trace.h"
#include "dispatcher/dispatch_observer.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "dispatcher/operator_handle.h"
#include "dispatcher/schema/default_ivalue.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/saved_variable.h"
#include "kernels/shape.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {
namespace {

constexpr const char* kHandlerName = "__turnout_dispatch__";

// ---- The mode stack --------------------------------------------------------

// The calling thread's active modes, innermost last, each one strong
// reference. Touched only with the GIL held. A thread that ends with modes
// still pushed (a mode entered and never left) leaks them rather than
// touching Python from a thread-exit destructor.
thread_local std::vector<PyObject*> tls_modes;

// Keeps `Python` in the thread's include set exactly while a mode is active.
// PythonTLSSnapshot goes with it, as in c10: it records the thread's key
// sets at the call's entry for _RestorePythonTLSSnapshot.
void syncPythonKey() {
  tls_set_dispatch_key_included(DispatchKey::Python, !tls_modes.empty());
  tls_set_dispatch_key_included(DispatchKey::PythonTLSSnapshot,
                                !tls_modes.empty());
}

// ---- The thread's key sets at the entry of the outermost call ----------------

// Set by the PythonTLSSnapshot fallback of the outermost call that involves
// the Python key (a mode active, or a tensor subclass with a handler among
// the arguments), before autograd and the other keys above Python change
// the thread's key sets; read by _RestorePythonTLSSnapshot, which is how a
// handler runs autograd (torch's enable_reentrant_dispatch).
thread_local bool tls_snapshot_set = false;
thread_local LocalDispatchKeySet tls_snapshot;

void pythonTLSSnapshotFallback(const OperatorHandle& op, DispatchKeySet ks,
                               Stack* stack) {
  const DispatchKeySet below(DispatchKeySet::FULL_AFTER,
                             DispatchKey::PythonTLSSnapshot);
  if (tls_snapshot_set) {  // a call made under _RestorePythonTLSSnapshot
    op.redispatchBoxed(ks & below, stack);
    return;
  }
  tls_snapshot = tls_local_dispatch_key_set();
  tls_snapshot_set = true;
  struct Reset {
    ~Reset() { tls_snapshot_set = false; }
  } reset;
  // The calls made inside this one (autograd's, the handlers') keep this
  // snapshot and skip the key.
  ExcludeDispatchKeyGuard skip(DispatchKeySet(DispatchKey::PythonTLSSnapshot));
  op.redispatchBoxed(ks & below, stack);
}

// _C._RestorePythonTLSSnapshot(): while alive (or inside its `with` block),
// the thread's key sets are the ones recorded at the entry of the call
// being handled, so that a handler's own calls go through autograd again.
class RestoreSnapshotGuard {
 public:
  RestoreSnapshotGuard() {
    TURNOUT_CHECK(tls_snapshot_set, ErrorKind::InvalidArgument,
                  "_RestorePythonTLSSnapshot(): no call is being handled on "
                  "this thread; use it (or turnout.utils."
                  "enable_reentrant_dispatch()) inside a __turnout_dispatch__ "
                  "handler, to run autograd in the calls the handler makes");
    saved_ = tls_local_dispatch_key_set();
    _force_tls_local_dispatch_key_set(tls_snapshot);
  }
  ~RestoreSnapshotGuard() { _force_tls_local_dispatch_key_set(saved_); }
  RestoreSnapshotGuard(const RestoreSnapshotGuard&) = delete;
  RestoreSnapshotGuard& operator=(const RestoreSnapshotGuard&) = delete;

 private:
  LocalDispatchKeySet saved_;
};

void pushMode(py::handle mode) {
  TURNOUT_CHECK(
      py::hasattr(mode, kHandlerName), ErrorKind::Type,
      "_push_dispatch_mode(mode): ", describePyType(mode),
      " has no __turnout_dispatch__ method; subclass "
      "turnout._mode.DispatchMode and define __turnout_dispatch__(self, func, "
      "types, args=(), kwargs=None)", torchDispatchHint(mode));
  tls_modes.push_back(mode.inc_ref().ptr());
  syncPythonKey();
}

py::object popMode() {
  TURNOUT_CHECK(!tls_modes.empty(), ErrorKind::InvalidArgument,
                "_pop_dispatch_mode(): no dispatch mode is active on this "
                "thread (a mode is popped by leaving its `with` block)");
  PyObject* mode = tls_modes.back();
  tls_modes.pop_back();
  syncPythonKey();
  return py::reinterpret_steal<py::object>(mode);
}

// Pops the innermost mode while its handler runs and pushes it back on every
// path out, so that calls the handler makes reach the modes below it.
class PoppedModeGuard {
 public:
  PoppedModeGuard() : mode_(popMode()) {}
  ~PoppedModeGuard() {
    tls_modes.push_back(mode_.release().ptr());
    syncPythonKey();
  }
  PoppedModeGuard(const PoppedModeGuard&) = delete;
  PoppedModeGuard& operator=(const PoppedModeGuard&) = delete;
  const py::object& mode() const { return mode_; }

 private:
  py::object mode_;
};

// ---- Preserved Python objects ----------------------------------------------

// A tensor's object lives in its TensorImpl's PyObjectSlot
// (dispatcher/core/py_object_slot.h), with PyTorch's ownership flip:
//   - while Python references the object, the object owns the tensor (its
//     cdata) and the slot only points at it;
//   - when its last Python reference goes while C++ still uses the tensor
//     (a stack, a Future, a saved value), finalizePythonTensor resurrects it:
//     the slot takes one reference to the object and the object lets go of
//     the tensor, so the object lives exactly as long as the TensorImpl;
//   - reclaimPythonTensor (wrapTensor) flips it back when C++ hands the
//     tensor to Python again; the TensorImpl's destructor releases it.
// So the object, with its class and attributes, is freed as soon as neither
// Python nor C++ uses it, and never earlier. Chose this over a table swept
// now and then: nothing lingers, and the only cost outside Python-key
// tensors is one pointer and one flag per TensorImpl.

// CPython calls tp_finalize at most once per object, and records that it has
// in bit 0 of PyGC_Head::_gc_prev, the word just before a GC object
// (CPython 3.8 to 3.13, Include/internal/pycore_gc.h). A preserved object is
// finalized each time its last Python reference goes, so reclaiming clears
// the bit. g_can_rearm says whether a probe at import found that layout; when
// not, objects are never handed to C++ and a tensor that outlives its
// object comes back as a plain turnout.Tensor.
bool g_can_rearm = false;

constexpr uintptr_t kFinalizedBit = 1;

uintptr_t* gcPrevWord(PyObject* obj) {
  return reinterpret_cast<uintptr_t*>(obj) - 1;
}

void rearmFinalizer(PyObject* obj) {
  if (PyType_IS_GC(Py_TYPE(obj)) && PyObject_GC_IsFinalized(obj)) {
    *gcPrevWord(obj) &= ~kFinalizedBit;
  }
}

// Finalizes a throwaway object the way CPython does, then checks that
// rearmFinalizer undoes exactly that; restores the word when not.
bool probeRearm() {
  py::dict ns;
  py::exec(
      "class Probe:\n    def __del__(self):\n        pass\nobj = Probe()\n",
      ns);
  PyObject* obj = py::handle(ns["obj"]).ptr();
  if (!PyType_IS_GC(Py_TYPE(obj)) || PyObject_GC_IsFinalized(obj)) return false;
  uintptr_t before = *gcPrevWord(obj);
  PyObject_CallFinalizer(obj);
  if (!PyObject_GC_IsFinalized(obj) ||
      *gcPrevWord(obj) != (before | kFinalizedBit)) {
    return false;
  }
  rearmFinalizer(obj);
  if (PyObject_GC_IsFinalized(obj) || *gcPrevWord(obj) != before) {
    *gcPrevWord(obj) |= kFinalizedBit;
    return false;
  }
  return true;
}

// The PyObjectSlot releaser: drops the slot's reference on the thread that
// destroys the TensorImpl. After interpreter shutdown it leaks instead.
void releasePythonTensor(void* obj) {
  if (!Py_IsInitialized()) return;
  GilAcquire gil;  // parks, rather than being ended, at shutdown
  Py_DECREF(static_cast<PyObject*>(obj));
}

// tp_finalize of the tensor subclasses with a handler: runs when the
// object's last Python reference goes (or the cycle collector finds it).
void finalizePythonTensor(PyObject* self) {
  Tensor& cdata = reinterpret_cast<PyTensor*>(self)->cdata;
  TensorImpl* impl = cdata.unsafeGetTensorImpl();
  if (!g_can_rearm || impl->pyobj_slot().get() != self ||
      cdata.use_count() <= 1) {
    return;  // the object and, unless C++ holds it, the tensor go now
  }
  // C++ still uses the tensor: it takes the object (see above).
  impl->pyobj_slot().set(self, /*owned=*/true);
  Py_INCREF(self);
  // If C++ let go meanwhile, this is the last reference: the TensorImpl's
  // destructor releases self again, and the object dies after all.
  Tensor dropped = std::move(cdata);
}

// The subclasses get the finalizer above (a class that defines __del__
// keeps its own, and its objects die with their last Python reference): it
// runs before CPython clears an object's __dict__ and __slots__, so a
// preserved object keeps all of its state.
void preserveInstancesOf(PyTypeObject* type) {
  if (type->tp_finalize == nullptr && PyType_IS_GC(type)) {
    type->tp_finalize = &finalizePythonTensor;
  }
}

// The class wrapTensor instantiates (turnout.Tensor) flips without a
// finalizer, as torch's tensor dealloc does: a finalizer sends every
// deallocation down CPython's finalizer path (about 10 ns on `a + b`,
// bench/README.md). Its tp_dealloc is tensorClassDealloc, which either
// hands the object to C++ or deallocates it as an instance of g_shadow_class,
// a class of the same layout (a subclass of TensorBase with nothing of its
// own) whose tp_dealloc is CPython's: so CPython clears the __dict__ and
// weak references as for any instance, and TensorBase's dealloc runs last.
// A subclass of turnout.Tensor reaches tensorClassDealloc too, as CPython's
// "nearest base with another dealloc", after its own level is cleared; its
// finalizer has decided already.
PyTypeObject* g_fast_class = nullptr;    // one reference
PyTypeObject* g_shadow_class = nullptr;  // one reference
destructor g_subtype_dealloc = nullptr;  // CPython's, g_shadow_class's

void tensorClassDealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  if (type == g_fast_class) {
    Tensor& cdata = reinterpret_cast<PyTensor*>(self)->cdata;
    PyObjectSlot& slot = cdata.unsafeGetTensorImpl()->pyobj_slot();
    if (__builtin_expect(slot.get() == self && cdata.use_count() > 1, 0)) {
      // C++ still uses the tensor: it takes the object, from zero
      // references to the slot's one (still tracked by the collector).
      Py_SET_REFCNT(self, 1);
      slot.set(self, /*owned=*/true);
      // If C++ let go meanwhile, this is the last reference: the
      // TensorImpl's destructor releases self, and the object dies after
      // all (through this function again, with an undefined tensor).
      Tensor dropped = std::move(cdata);
      return;
    }
  }
  Py_INCREF(g_shadow_class);
  Py_SET_TYPE(self, g_shadow_class);
  Py_DECREF(type);  // the instance's reference, now g_shadow_class's
  g_subtype_dealloc(self);
}

// The collector clears an unreachable object before freeing it; one whose
// tensor C++ still uses is not freed (tensorClassDealloc hands it to C++),
// so it keeps its attributes. Others are cleared as g_shadow_class's
// instances (see tensorClassDealloc for why).
int tensorClassClear(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  if (type == g_fast_class) {
    const Tensor& cdata = unpackTensor(self);
    if (cdata.unsafeGetTensorImpl()->pyobj_slot().get() == self &&
        cdata.use_count() > 1) {
      return 0;
    }
  }
  Py_SET_TYPE(self, g_shadow_class);
  int result = g_shadow_class->tp_clear(self);
  Py_SET_TYPE(self, type);
  return result;
}

// As torch's: an object whose tensor C++ still uses does not show the
// collector what it references, so that a cycle through it (its __dict__
// referring back to it) stays reachable, attributes and all, for as long
// as C++ holds the tensor. Others are traversed by CPython's subtype
// traverse (its slot put back for the call: it stops at the first class
// whose traverse is not its own). A subclass's instance gets here as that
// first class's, after its own level: what is left is its type.
traverseproc g_subtype_traverse = nullptr;

int tensorClassTraverse(PyObject* self, visitproc visit, void* arg) {
  PyTypeObject* type = Py_TYPE(self);
  if (type != g_fast_class) {
    Py_VISIT(type);
    return 0;
  }
  const Tensor& cdata = unpackTensor(self);
  if (cdata.unsafeGetTensorImpl()->pyobj_slot().get() == self &&
      cdata.use_count() > 1) {
    return 0;
  }
  type->tp_traverse = g_subtype_traverse;
  int result = g_subtype_traverse(self, visit, arg);
  type->tp_traverse = &tensorClassTraverse;
  return result;
}

// True when `type` has the layout of a plain Python subclass of TensorBase.
bool sameLayoutAsShadow(PyTypeObject* type) {
  PyTypeObject* shadow = g_shadow_class;
  return type->tp_base == tensorBaseType() &&
         type->tp_dealloc == shadow->tp_dealloc &&
         type->tp_clear == shadow->tp_clear &&
         type->tp_traverse == shadow->tp_traverse &&
         type->tp_basicsize == shadow->tp_basicsize &&
         type->tp_itemsize == shadow->tp_itemsize &&
         type->tp_dictoffset == shadow->tp_dictoffset &&
         type->tp_weaklistoffset == shadow->tp_weaklistoffset &&
         type->tp_flags == shadow->tp_flags && type->tp_finalize == nullptr &&
         type->tp_del == nullptr;
}

}  // namespace

void preserveTensorClass(PyTypeObject* type) {
  if (g_shadow_class == nullptr) {
    py::dict ns;
    ns["TensorBase"] = py::handle(reinterpret_cast<PyObject*>(tensorBaseType()));
    py::exec("class Tensor(TensorBase):\n    pass\n", ns);
    g_shadow_class = reinterpret_cast<PyTypeObject*>(
        py::object(ns["Tensor"]).release().ptr());
    g_subtype_dealloc = g_shadow_class->tp_dealloc;
    g_subtype_traverse = g_shadow_class->tp_traverse;
  }
  if (g_fast_class == nullptr && sameLayoutAsShadow(type)) {
    Py_INCREF(type);
    g_fast_class = type;
    type->tp_dealloc = &tensorClassDealloc;
    type->tp_clear = &tensorClassClear;
    type->tp_traverse = &tensorClassTraverse;
    return;
  }
  preserveInstancesOf(type);
}

void recordPythonTensor(PyObject* obj) {
  PyTypeObject* type = Py_TYPE(obj);
  if (type != g_fast_class) preserveInstancesOf(type);
  unpackTensor(obj).unsafeGetTensorImpl()->pyobj_slot().set(obj,
                                                            /*owned=*/false);
}

namespace {

// turnout.Tensor's own __turnout_dispatch__ (the function under its
// classmethod), which runs calls below the Python key: a class whose
// handler is that one has no handler of its own. One reference; null until
// _set_tensor_class gives a class that defines one.
PyObject* g_default_handler = nullptr;

// True when `cls` (a tensor class) defines a __turnout_dispatch__ of its
// own, as torch checks `cls.__torch_dispatch__` against torch.Tensor's.
bool hasHandler(py::handle cls) {
  PyObject* found = PyObject_GetAttrString(cls.ptr(), kHandlerName);
  if (found == nullptr) {
    PyErr_Clear();
    return false;
  }
  py::object handler = py::reinterpret_steal<py::object>(found);
  if (g_default_handler == nullptr) return true;
  py::object fn = py::getattr(handler, "__func__", handler);
  return !fn.is(py::handle(g_default_handler));
}

}  // namespace

void setDefaultTensorHandler(py::handle fn) {
  PyObject* next = fn.is_none() ? nullptr : fn.inc_ref().ptr();
  Py_XSETREF(g_default_handler, next);
}

namespace {

// True when `value` is the schema default of `arg` (an argument without a
// default never is). A default turnout cannot build is taken as different.
bool equalsDefault(const IValue& value, const Argument& arg) {
  if (!arg.default_value().has_value()) return false;
  if (arg.default_value()->isNone()) return value.isNone();
  try {
    return value == defaultToIValue(arg);
  } catch (const Error&) {
    return false;
  }
}

// An instance of `cls` (a subclass of turnout._C.TensorBase) holding `t`.
py::object makeInstance(py::handle cls, Tensor t, const char* caller) {
  TURNOUT_CHECK(PyType_Check(cls.ptr()) &&
                    PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()),
                                     tensorBaseType()),
                ErrorKind::Type, caller,
                "(cls, ...): cls must be a subclass of turnout.Tensor, got ",
                std::string(py::repr(cls)));
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  PyObject* obj = type->tp_alloc(type, 0);
  if (obj == nullptr) throw py::error_already_set();
  new (&reinterpret_cast<PyTensor*>(obj)->cdata) Tensor(std::move(t));
  auto out = py::reinterpret_steal<py::object>(obj);
  recordPythonTensor(obj);
  return out;
}

// The TensorImpl::python_custom mask for torch's dispatch_sizes_strides_policy
// ("sizes" covers strides too), dispatch_device and dispatch_layout.
uint8_t customMask(const char* caller, py::handle cls,
                   const std::optional<std::string>& policy,
                   bool dispatch_device, bool dispatch_layout) {
  uint8_t mask = 0;
  if (policy.has_value()) {
    if (*policy == "sizes") {
      mask |= TensorImpl::kCustomSizes | TensorImpl::kCustomStrides;
    } else if (*policy == "strides") {
      mask |= TensorImpl::kCustomStrides;
    } else {
      TURNOUT_CHECK(false, ErrorKind::InvalidArgument,
                    "Unknown sizes_strides_policy: ", *policy,
                    "; expected 'strides' or 'sizes' (", caller,
                    "'s dispatch_sizes_strides_policy=)");
    }
  }
  if (dispatch_device) mask |= TensorImpl::kCustomDevice;
  if (dispatch_layout) mask |= TensorImpl::kCustomLayout;
  TURNOUT_CHECK(mask == 0 || hasHandler(cls), ErrorKind::Type, caller,
                "(cls, ...): dispatch_sizes_strides_policy, dispatch_device "
                "and dispatch_layout ask cls.__turnout_dispatch__ for the "
                "tensor's metadata, but ",
                std::string(py::repr(cls)),
                " has no __turnout_dispatch__ of its own; define one, or "
                "leave those arguments out",
                torchDispatchHint(cls));
  return mask;
}

// cls._make_subclass(data): a tensor of class `cls` sharing `data`'s memory,
// shape and version counter (a new TensorImpl, so `data` itself keeps
// dispatching as before). `Python` joins its keys when cls has a handler.
py::object makeSubclass(py::handle cls, const Tensor& data,
                        bool requires_grad,
                        const std::optional<std::string>& policy,
                        bool dispatch_device, bool dispatch_layout) {
  TURNOUT_CHECK(data.defined(), ErrorKind::InvalidArgument,
                "_make_subclass(cls, data): data is an undefined tensor");
  const uint8_t mask = customMask("_make_subclass", cls, policy,
                                  dispatch_device, dispatch_layout);
  DispatchKeySet keys = data.key_set();
  if (hasHandler(cls)) {
    keys = keys.add(DispatchKey::Python).add(DispatchKey::PythonTLSSnapshot);
  }
  const TensorImpl& src = *data.unsafeGetTensorImpl();
  auto impl = make_intrusive<TensorImpl, UndefinedTensorImpl>(
      src.storage(), src.dtype(), src.device(), src.layout(), keys);
  if (src.layout() == Layout::Strided) {
    impl->set_sizes_and_strides(src.sizes(), src.strides());
    impl->set_storage_offset(src.storage_offset());
  } else {
    impl->set_sizes_contiguous(src.sizes());
  }
  impl->set_version_counter(src.version_counter());
  impl->set_python_custom(mask);
  Tensor t(std::move(impl));
  if (requires_grad) autograd::setRequiresGrad(t, true);
  return makeInstance(cls, std::move(t), "_make_subclass");
}

// The legacy constructor cls(data), as torch 1.13's: data.alias() (a view
// of data, with AliasBackward0 history when data requires grad) as an
// instance of `cls`; `Python` joins its keys when cls has a handler.
py::object aliasSubclass(py::handle cls, const Tensor& data) {
  TURNOUT_CHECK(data.defined(), ErrorKind::InvalidArgument,
                "_alias_subclass(cls, data): data is an undefined tensor");
  Tensor t = alias(data);
  if (hasHandler(cls)) {
    t.unsafeGetTensorImpl()->add_key(DispatchKey::Python);
    t.unsafeGetTensorImpl()->add_key(DispatchKey::PythonTLSSnapshot);
  }
  return makeInstance(cls, std::move(t), "Tensor");
}

// cls._make_wrapper_subclass(size, ...): a tensor of class `cls` with the
// given metadata and no memory, for subclasses that hold their data
// elsewhere (an inner tensor). Its dispatch keys are its device's, as torch
// 1.13's: a kernel reached below the Python key by mistake gets an error
// when it reads the data the tensor does not have (TensorImpl::data()).
py::object makeWrapperSubclass(py::handle cls, const std::vector<int64_t>& size,
                               std::optional<std::vector<int64_t>> strides,
                               std::optional<int64_t> storage_offset,
                               ScalarType dtype, Layout layout, Device device,
                               bool requires_grad,
                               const std::optional<std::string>& policy,
                               bool dispatch_device, bool dispatch_layout) {
  TURNOUT_CHECK(
      hasHandler(cls), ErrorKind::Type,
      "_make_wrapper_subclass(cls, ...): ", std::string(py::repr(cls)),
      " has no __turnout_dispatch__ classmethod; a wrapper holds no data, so "
      "every operator on it must go to that handler", torchDispatchHint(cls));
  const uint8_t mask = customMask("_make_wrapper_subclass", cls, policy,
                                  dispatch_device, dispatch_layout);
  DispatchKeySet keys = TensorImpl::computeKeySet(dtype, Layout::Strided,
                                                  device)
                            .add(DispatchKey::Python)
                            .add(DispatchKey::PythonTLSSnapshot);
  auto impl = make_intrusive<TensorImpl, UndefinedTensorImpl>(
      Storage(), dtype, device, layout, keys);
  if (strides.has_value()) {
    TURNOUT_CHECK(strides->size() == size.size(), ErrorKind::InvalidArgument,
                  "_make_wrapper_subclass(): ", size.size(), " sizes but ",
                  strides->size(), " strides; give one stride per dimension");
    impl->set_sizes_and_strides(size, *strides);
  } else {
    // Contiguous: torch 1.13 takes memory_format= and does not use it.
    impl->set_sizes_contiguous(size);
  }
  if (storage_offset.has_value()) impl->set_storage_offset(*storage_offset);
  impl->set_python_custom(mask);
  Tensor t(std::move(impl));
  if (requires_grad) autograd::setRequiresGrad(t, true);
  return makeInstance(cls, std::move(t), "_make_wrapper_subclass");
}

// ---- The fallback ----------------------------------------------------------

std::string qualifiedName(const FunctionSchema& schema) {
  const std::string& overload = schema.overload_name();
  return schema.name() + (overload.empty() ? "" : "." + overload);
}

// The turnout.ops overload object of `schema`'s operator.
// Precondition: the GIL is held.
py::object opOverloadObject(const FunctionSchema& schema) {
  // Not a function-local static: its guard would be held across an import,
  // which may release the GIL to a thread that then waits on the guard.
  static PyObject* ops = nullptr;  // one reference, never released
  if (ops == nullptr) {
    py::object found = py::module_::import("turnout._ops").attr("ops");
    if (ops == nullptr) ops = found.release().ptr();
  }
  const std::string& name = schema.name();
  size_t sep = name.find("::");
  TURNOUT_INTERNAL_ASSERT(sep != std::string::npos, "operator name '", name,
                          "' has no namespace");
  const std::string& overload = schema.overload_name();
  return py::handle(ops)
      .attr(py::str(name.substr(0, sep)))
      .attr(py::str(name.substr(sep + 2)))
      .attr(py::str(overload.empty() ? "default" : overload));
}

// Adds the class of `t`'s Python object to `types` when it has a handler and
// is new, placing a subclass before its base classes (Python's rule for
// binary operators).
void addOverloadedType(const Tensor& t, std::vector<py::object>* types) {
  if (!t.defined() || !t.key_set().has(DispatchKey::Python)) return;
  PyObject* obj = preservedPythonTensor(t);
  if (obj == nullptr) return;
  py::object cls = py::reinterpret_borrow<py::object>(
      reinterpret_cast<PyObject*>(Py_TYPE(obj)));
  if (!hasHandler(cls)) return;
  size_t insert_at = types->size();
  for (size_t i = 0; i < types->size(); ++i) {
    if ((*types)[i].is(cls)) return;
    if (insert_at == types->size() &&
        PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()),
                         reinterpret_cast<PyTypeObject*>((*types)[i].ptr()))) {
      insert_at = i;
    }
  }
  types->insert(types->begin() + insert_at, std::move(cls));
}

std::vector<py::object> overloadedTypes(const Stack& stack, size_t first) {
  std::vector<py::object> types;
  for (size_t i = first; i < stack.size(); ++i) {
    const IValue& v = stack[i];
    if (v.isTensor()) {
      addOverloadedType(v.toTensor(), &types);
    } else if (v.isTensorList()) {
      for (const Tensor& t : v.toTensorListRef()) addOverloadedType(t, &types);
    } else if (v.isGenericList()) {
      for (const IValue& e : v.toListRef()) {
        if (e.isTensor()) addOverloadedType(e.toTensor(), &types);
      }
    }
  }
  return types;
}

// Converts `value` (a handler's result for one return) or says why not.
// `position` is "" for a single return, " as value 2 of 3" for several.
IValue returnToIValue(py::handle value, const Argument& ret,
                      const std::string& who, const std::string& op,
                      const std::string& position) {
  IValue v;
  bool converted;
  try {
    converted = tryToIValue(value, *ret.type(), ret.N(), &v, "result");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Type) throw;
    throw e.withPrefix(who + " for " + op + " returned " +
                       describePyType(value) + position + ": ");
  }
  TURNOUT_CHECK(converted, ErrorKind::Type,
                who, " for ", op, " returned ", describePyType(value), position,
                " where the schema returns ", ret.type()->toString(),
                ret.name().empty() ? "" : " " + ret.name(),
                "; return what the operator returns (e.g. func(*args, "
                "**kwargs))");
  return v;
}

// As torch's ADInplaceOrView kernels: a view a handler returns (a return
// that aliases a tensor argument without writing it: detach, view, t, ...)
// shares that argument's version counter, so that `w.detach().add_(2)`
// bumps `w._version` for a wrapper subclass too.
void shareViewVersionCounters(const FunctionSchema& schema, const Stack& stack,
                              size_t first, const std::vector<IValue>& out) {
  const std::vector<Argument>& returns = schema.returns();
  const std::vector<Argument>& params = schema.arguments();
  for (size_t r = 0; r < out.size() && r < returns.size(); ++r) {
    const std::optional<AliasInfo>& ra = returns[r].alias_info();
    if (!ra.has_value() || ra->isWrite() || !out[r].isTensor()) continue;
    const Tensor& view = out[r].toTensor();
    if (!view.defined()) continue;
    for (size_t i = 0; i < params.size(); ++i) {
      const std::optional<AliasInfo>& pa = params[i].alias_info();
      const IValue& arg = stack[first + i];
      if (!pa.has_value() || pa->beforeSets() != ra->beforeSets() ||
          !arg.isTensor() || !arg.toTensor().defined()) {
        continue;
      }
      TensorImpl* base = arg.toTensor().unsafeGetTensorImpl();
      TensorImpl* impl = view.unsafeGetTensorImpl();
      if (impl != base && impl->version_counter() != base->version_counter()) {
        impl->set_version_counter(base->version_counter());
      }
      break;
    }
  }
}

// Replaces the arguments on `stack` by the handler's `result`, checked
// against the schema's returns.
void pushReturns(py::handle result, const FunctionSchema& schema,
                 const std::string& who, size_t first, Stack* stack) {
  const std::string op = qualifiedName(schema);
  const std::vector<Argument>& returns = schema.returns();
  std::vector<IValue> out;
  if (returns.empty()) {
    TURNOUT_CHECK(result.is_none(), ErrorKind::Type, who, " for ", op,
                  " returned ", describePyType(result),
                  "; the operator returns nothing, so return None");
  } else if (returns.size() == 1) {
    out.push_back(returnToIValue(result, returns[0], who, op, ""));
  } else {
    TURNOUT_CHECK((py::isinstance<py::tuple>(result) ||
                   py::isinstance<py::list>(result)) &&
                      py::len(result) == returns.size(),
                  ErrorKind::Type, who, " for ", op, " returned ",
                  describePyType(result), "; the operator returns ",
                  returns.size(), " values, so return a tuple of ",
                  returns.size());
    py::sequence seq = py::reinterpret_borrow<py::sequence>(result);
    for (size_t i = 0; i < returns.size(); ++i) {
      out.push_back(returnToIValue(seq[i], returns[i], who, op,
                                   " as value " + std::to_string(i + 1) +
                                       " of " +
                                       std::to_string(returns.size())));
    }
  }
  shareViewVersionCounters(schema, *stack, first, out);
  stack->erase(stack->begin() + first, stack->end());
  for (IValue& v : out) stack->push_back(std::move(v));
}

std::string typeName(py::handle obj) {
  return py::str(py::getattr(obj, "__qualname__",
                             py::str(obj.get_type().attr("__name__"))));
}

// For the dispatch trace: "mode LoggingMode (examples/logging_mode.py:55)",
// naming the class and where its __turnout_dispatch__ is defined (relative
// to the working directory when under it).
std::string describeHandler(const char* what, py::handle cls) {
  std::string out =
      std::string(what) + " " +
      py::str(py::getattr(cls, "__name__", py::repr(cls))).cast<std::string>();
  py::object fn = py::getattr(cls, kHandlerName, py::none());
  fn = py::getattr(fn, "__func__", fn);  // a classmethod, bound
  py::object code = py::getattr(fn, "__code__", py::none());
  if (code.is_none()) return out;
  py::object file = py::getattr(code, "co_filename", py::none());
  py::object line = py::getattr(code, "co_firstlineno", py::none());
  if (!py::isinstance<py::str>(file) || !py::isinstance<py::int_>(line)) {
    return out;
  }
  std::string path = file.cast<std::string>();
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) != nullptr) {
    const std::string prefix = std::string(cwd) + "/";
    if (path.compare(0, prefix.size(), prefix) == 0) {
      path = path.substr(prefix.size());
    }
  }
  return out + " (" + path + ":" + std::to_string(line.cast<long>()) + ")";
}

// Writes the trace's handler line. Dispatches write theirs with the GIL
// released (ops.cc releases it around calls), so a sink that takes the GIL
// could deadlock against one that holds it: release it here too.
void traceHandlerLine(const OperatorHandle& op, const std::string& handler) {
  withoutGil([&] { traceHandler(op, DispatchKey::Python, handler); });
}

void handleWithGil(const OperatorHandle& op, DispatchKeySet ks, Stack* stack,
                   size_t first);

// The arguments of the call on `stack` (from `first`) as a handler gets
// them, as torch's: positional arguments positionally, up to the last one
// that differs from its default; keyword-only ones only when they differ
// from theirs (`add.Tensor(a, b)`, not `alpha=1`). Precondition: the GIL is
// held.
void handlerArguments(const FunctionSchema& schema, const Stack& stack,
                      size_t first, py::tuple* args, py::dict* kwargs) {
  const std::vector<Argument>& params = schema.arguments();
  size_t n_positional = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].kwarg_only() &&
        !equalsDefault(stack[first + i], params[i])) {
      n_positional = i + 1;
    }
  }
  *args = py::tuple(n_positional);
  for (size_t i = 0; i < params.size(); ++i) {
    const IValue& value = stack[first + i];
    if (params[i].kwarg_only()) {
      if (equalsDefault(value, params[i])) continue;
      (*kwargs)[py::str(params[i].name())] =
          toPyObject(value, params[i].type().get());
    } else if (i < n_positional) {
      (*args)[i] = toPyObject(value, params[i].type().get());
    }
  }
}

// ---- The Python dispatcher ---------------------------------------------------

// The PythonDispatcher key's fallback, reached only while
// _C._EnablePythonDispatcher is active on the thread: the kernel for the
// key the call goes to next is chosen in Python, by the OpOverload's
// _get_dispatch(key) (turnout._python_dispatcher.resolve_key over the
// dispatcher's registrations and the overload's py_impl kernels). None runs
// the C++ table's kernel; a Python kernel is called with the handler
// arguments and its result checked against the schema.
void pythonDispatcherFallback(const OperatorHandle& op, DispatchKeySet ks,
                              Stack* stack) {
  TURNOUT_CHECK(Py_IsInitialized(), ErrorKind::Internal,
                "a call reached the PythonDispatcher key after the Python "
                "interpreter shut down; the operator was ",
                toString(op.operator_name()));
  const DispatchKeySet rest =
      ks & DispatchKeySet(DispatchKeySet::FULL_AFTER,
                          DispatchKey::PythonDispatcher);
  const FunctionSchema& schema = op.schema();
  const size_t first = stack->size() - schema.arguments().size();
  GilAcquire gil;
  try {
    py::object func = opOverloadObject(schema);
    py::object kernel =
        func.attr("_get_dispatch")(py::cast(rest.highestPriorityTypeId()));
    if (kernel.is_none()) {
      withoutGil([&] { op.redispatchBoxed(rest, stack); });
      return;
    }
    PythonNestingGuard nesting(PythonNestingGuard::Kind::Kernel, [&] {
      return "the Python dispatcher's kernel for " + qualifiedName(schema);
    });
    py::tuple args;
    py::dict kwargs;
    handlerArguments(schema, *stack, first, &args, &kwargs);
    py::object result = kernel(*args, **kwargs);
    pushReturns(result, schema,
                "the Python dispatcher's kernel " +
                    py::repr(kernel).cast<std::string>(),
                first, stack);
  } catch (const py::error_already_set& e) {
    throw PythonError(e);
  }
}

// _C._EnablePythonDispatcher() / _C._DisablePythonDispatcher(): while alive
// (or inside their `with` block), the thread's calls do / do not go through
// the PythonDispatcher key. RAII as torch 1.13's, and context managers.
class PythonDispatcherGuard {
 public:
  explicit PythonDispatcherGuard(bool enable)
      : saved_(tls_local_dispatch_key_set()) {
    tls_set_dispatch_key_included(DispatchKey::PythonDispatcher, enable);
    tls_set_dispatch_key_excluded(DispatchKey::PythonDispatcher, !enable);
  }
  ~PythonDispatcherGuard() { _force_tls_local_dispatch_key_set(saved_); }
  PythonDispatcherGuard(const PythonDispatcherGuard&) = delete;
  PythonDispatcherGuard& operator=(const PythonDispatcherGuard&) = delete;

 private:
  LocalDispatchKeySet saved_;
};
struct EnablePythonDispatcher : PythonDispatcherGuard {
  EnablePythonDispatcher() : PythonDispatcherGuard(true) {}
};
struct DisablePythonDispatcher : PythonDispatcherGuard {
  DisablePythonDispatcher() : PythonDispatcherGuard(false) {}
};

const OperatorHandle& detachOp() {
  static const OperatorHandle op =
      Dispatcher::singleton().findSchemaOrThrow("aten::detach", "");
  return op;
}

void pythonFallback(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  TURNOUT_CHECK(Py_IsInitialized(), ErrorKind::Internal,
                "a call reached the Python key after the Python interpreter "
                "shut down; the operator was ",
                toString(op.operator_name()));
  const FunctionSchema& schema = op.schema();
  const std::vector<Argument>& params = schema.arguments();
  TURNOUT_INTERNAL_ASSERT(stack->size() >= params.size(), "the stack holds ",
                          stack->size(), " values for the ", params.size(),
                          " arguments of ", qualifiedName(schema));
  const size_t first = stack->size() - params.size();

  GilAcquire gil;
  try {
    if (op != detachOp()) {
      handleWithGil(op, ks, stack, first);
      return;
    }
    // As torch's detach: the kernel's result is shallow-copied by the layer
    // above the Python key, with the autograd keys excluded while the
    // handlers run (so the detach a handler calls makes no copy) and no
    // longer when the copy is made. Under Python dispatch the handlers make
    // that copy too: a second detach they see.
    if (tls_is_dispatch_keyset_excluded(autograd_dispatch_keyset)) {
      handleWithGil(op, ks, stack, first);
      return;
    }
    {
      AutoDispatchBelowAutograd below;
      handleWithGil(op, ks, stack, first);
    }
    if (stack->back().isTensor() &&
        pythonMakesShallowCopy(stack->back().toTensor())) {
      IValue once = std::move(stack->back());
      stack->back() = IValue(shallowCopyThroughPython(once.toTensor()));
    }
  } catch (const py::error_already_set& e) {
    // Raisable again, and droppable without the GIL (a graph's Future).
    throw PythonError(e);
  }
}

// The handler's answer for the call on `stack` (from `first`): the
// innermost mode's, else (when it returns NotImplemented, as torch 1.13)
// the first subclass handler's that does not return NotImplemented. Null
// when no mode is active and no argument's subclass has a handler: the call
// goes on as if the Python key were absent. `*who` names the handler that
// answered. Throws Error(Type) when every handler returned NotImplemented.
// Precondition: the GIL is held.
py::object callHandlers(const OperatorHandle& op, const Stack& stack,
                        size_t first, std::string* who) {
  const FunctionSchema& schema = op.schema();
  std::vector<py::object> types = overloadedTypes(stack, first);
  if (tls_modes.empty() && types.empty()) return py::object();

  PythonNestingGuard nesting(tls_modes.empty()
                                 ? PythonNestingGuard::Kind::Subclass
                                 : PythonNestingGuard::Kind::Mode,
                             [&] {
    return (tls_modes.empty()
                ? typeName(types.front()) + ".__turnout_dispatch__"
                : "dispatch mode " + typeName(py::handle(tls_modes.back())
                                                  .get_type()) +
                      ".__turnout_dispatch__") +
           " for " + qualifiedName(schema);
  });
  py::object func = opOverloadObject(schema);
  py::tuple args_tuple;
  py::dict kwargs;
  handlerArguments(schema, stack, first, &args_tuple, &kwargs);
  py::tuple types_tuple(types.size());
  for (size_t i = 0; i < types.size(); ++i) types_tuple[i] = types[i];

  std::string mode_repr;  // the mode that returned NotImplemented, if any
  if (!tls_modes.empty()) {
    py::object result;
    {
      PoppedModeGuard popped;
      *who = typeName(popped.mode().get_type()) + ".__turnout_dispatch__";
      if (isDispatchTraceEnabled()) {
        traceHandlerLine(op, describeHandler("mode", popped.mode().get_type()));
      }
      detail::PythonTimeScope python_time;  // the profiler's Python column
      result = callHandler(popped.mode(), popped.mode().get_type(), func,
                           types_tuple, args_tuple, kwargs);
      if (result.is(py::handle(Py_NotImplemented))) {
        mode_repr = py::repr(popped.mode()).cast<std::string>();
      }
    }
    if (mode_repr.empty()) return result;
    // As torch 1.13: a mode that returns NotImplemented defers to the
    // subclasses' handlers, which run with the mode still active.
  }

  for (const py::object& cls : types) {
    if (isDispatchTraceEnabled()) {
      traceHandlerLine(op, describeHandler("subclass", cls));
    }
    py::object result;
    {
      detail::PythonTimeScope python_time;  // the profiler's Python column
      result = callHandler(cls, cls, func, types_tuple, args_tuple, kwargs);
    }
    if (result.is(py::handle(Py_NotImplemented))) continue;
    *who = typeName(cls) + ".__turnout_dispatch__";
    return result;
  }
  std::string names;
  for (const py::object& cls : types) {
    names += (names.empty() ? "" : ", ") + typeName(cls);
  }
  TURNOUT_CHECK(false, ErrorKind::Type, "no implementation found for '",
                qualifiedName(schema),
                "' on types that implement "
                "__turnout_dispatch__: [",
                names, "]",
                mode_repr.empty()
                    ? std::string("; every one returned NotImplemented")
                    : " nor was it found on the currently active mode " +
                          mode_repr +
                          " (it returned NotImplemented; return "
                          "func(*args, **kwargs) to run the call unchanged)");
  return py::object();
}

const OperatorHandle& metadataOp(PythonMetadata what);

// True for the operators a dispatch_sizes_strides_policy handler answers
// (aten.sym_size, ...): None from the handler means "the stored value", as
// torch 1.13's.
bool isPolicyMetadataOp(const OperatorHandle& op) {
  for (int i = 0; i <= static_cast<int>(PythonMetadata::kStorageOffset); ++i) {
    if (op == metadataOp(static_cast<PythonMetadata>(i))) return true;
  }
  return false;
}

// pythonFallback's work: the modes, else the subclasses' handlers.
// Precondition: the GIL is held.
void handleWithGil(const OperatorHandle& op, DispatchKeySet ks, Stack* stack,
                   size_t first) {
  std::string who;
  py::object result = callHandlers(op, *stack, first, &who);
  if (!result || (result.is_none() && isPolicyMetadataOp(op))) {
    // Nothing here wants the call (Python was included by a captured key set
    // on another thread, or the tensor's subclass has no handler), or a
    // policy handler answered None (the stored value, which the kernel
    // below reads): go on as if the key were absent.
    withoutGil([&] {
      op.redispatchBoxed(
          ks & DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::Python),
          stack);
    });
    return;
  }
  pushReturns(result, op.schema(), who, first, stack);
}

// ---- C++ readers of a python_custom tensor's metadata ----------------------

// The operator torch 1.13 calls for a C++ reader of `what`.
const OperatorHandle& metadataOp(PythonMetadata what) {
  static const OperatorHandle ops[] = {
      Dispatcher::singleton().findSchemaOrThrow("aten::sym_size", ""),
      Dispatcher::singleton().findSchemaOrThrow("aten::sym_stride", ""),
      Dispatcher::singleton().findSchemaOrThrow("aten::dim", ""),
      Dispatcher::singleton().findSchemaOrThrow("aten::sym_numel", ""),
      Dispatcher::singleton().findSchemaOrThrow("aten::is_contiguous", ""),
      Dispatcher::singleton().findSchemaOrThrow("aten::sym_storage_offset", ""),
  };
  return ops[static_cast<int>(what)];
}

// TensorImpl's metadata hook (setPythonMetadataHook): a C++ reader of a
// python_custom tensor asks the innermost mode, else the subclass's
// handler, with the operator torch 1.13 calls. Below the Python key (Python
// excluded on this thread: a handler's own calls on the inner tensor, the
// kernels under it) and when the handler answers None, the stored value
// stays (torch 1.13 recurses forever in the first case). A handler's
// exception propagates to the reader's caller as a PythonError. Any thread,
// GIL held or not.
bool answerMetadata(const TensorImpl& self, PythonMetadata what,
                    DimVector* out) {
  if (tls_is_dispatch_key_excluded(DispatchKey::Python) ||
      !Py_IsInitialized()) {
    return false;
  }
  const OperatorHandle& op = metadataOp(what);
  Tensor t(intrusive_ptr<TensorImpl, UndefinedTensorImpl>::reclaim_copy(
      const_cast<TensorImpl*>(&self)));
  GilAcquire gil;
  try {
    Stack stack{IValue(t)};
    std::string who;
    py::object result = callHandlers(op, stack, 0, &who);
    if (!result || result.is_none()) return false;
    IValue v = returnToIValue(result, op.schema().returns()[0], who,
                              qualifiedName(op.schema()), "");
    out->clear();
    if (v.isIntList()) {
      const std::vector<int64_t>& l = v.toIntListRef();
      out->assign(l.begin(), l.end());
    } else if (v.isBool()) {
      out->push_back(v.toBool() ? 1 : 0);
    } else {
      out->push_back(v.toInt());
    }
    return true;
  } catch (const py::error_already_set& e) {
    throw PythonError(e);
  }
}

}  // namespace

bool pythonMakesShallowCopy(const Tensor& t) {
  if (tls_is_dispatch_key_excluded(DispatchKey::Python)) return false;
  return !tls_modes.empty() || t.key_set().has(DispatchKey::Python);
}

Tensor shallowCopyThroughPython(const Tensor& t) {
  Stack stack{IValue(t)};
  const DispatchKeySet ks = t.key_set().add(DispatchKey::Python);
  try {
    handleWithGil(detachOp(), ks, &stack, 0);
  } catch (const py::error_already_set& e) {
    throw PythonError(e);
  }
  return stack.back().toTensor();
}

namespace {
// autograd's SavedVariable, saving or unpacking an output (any thread, GIL
// held or not).
Tensor autogradShallowCopy(const Tensor& t) {
  if (!pythonMakesShallowCopy(t)) return Tensor();
  GilAcquire gil;
  return shallowCopyThroughPython(t);
}
}  // namespace

PyObject* preservedPythonTensor(const Tensor& t) {
  return static_cast<PyObject*>(t.unsafeGetTensorImpl()->pyobj_slot().get());
}

PyObject* takeBackPythonTensor(const Tensor& t, PyObject* obj) {
  // Python takes the object back from C++ (see "Preserved Python objects").
  reinterpret_cast<PyTensor*>(obj)->cdata = t;
  t.unsafeGetTensorImpl()->pyobj_slot().set(obj, /*owned=*/false);
  rearmFinalizer(obj);
  return obj;  // the slot's reference, now the caller's
}

void initPythonMode(py::module_& m) {
  autograd::setPythonShallowCopyHook(&autogradShallowCopy);
  setPythonMetadataHook(&answerMetadata);
  m.def("_push_dispatch_mode", &pushMode, py::arg("mode"),
        "Makes `mode` the innermost dispatch mode of this thread "
        "(DispatchMode.__enter__ calls this).");
  m.def("_pop_dispatch_mode", &popMode,
        "Removes and returns the innermost dispatch mode of this thread.");
  m.def(
      "_dispatch_mode_stack",
      [] {
        py::list out;
        for (PyObject* mode : tls_modes) out.append(py::handle(mode));
        return out;
      },
      "This thread's active dispatch modes, innermost last.");
  m.def("_alias_subclass", &aliasSubclass, py::arg("cls"), py::arg("data"),
        "cls(data) of the legacy constructor: data.alias() (a view with "
        "AliasBackward0 history when data requires grad) as a `cls`.");
  m.def("_make_subclass", &makeSubclass, py::arg("cls"), py::arg("data"),
        py::arg("require_grad") = false,
        py::arg("dispatch_sizes_strides_policy") = py::none(),
        py::arg("dispatch_device") = false, py::arg("dispatch_layout") = false,
        "A tensor of class `cls` sharing `data`'s memory; operators on it go "
        "to cls.__turnout_dispatch__ when cls defines one. With "
        "dispatch_sizes_strides_policy ('sizes' or 'strides'), "
        "dispatch_device or dispatch_layout, that handler answers the "
        "tensor's sizes / strides / device / layout (aten.sym_size, "
        "aten.sym_stride, aten.dim, aten.is_contiguous, aten.sym_numel, "
        "aten.sym_storage_offset, prim.device, prim.layout), as torch's.");
  m.def(
      "_make_wrapper_subclass",
      [](py::handle cls, const std::vector<int64_t>& size,
         std::optional<std::vector<int64_t>> strides,
         std::optional<int64_t> storage_offset, py::handle memory_format,
         py::handle dtype, py::handle layout, py::handle device,
         bool /*pin_memory: no memory to pin*/, bool requires_grad,
         std::optional<std::string> policy, bool dispatch_device,
         bool dispatch_layout) {
        std::optional<ScalarType> st =
            dtype.is_none() ? ScalarType::Float : toScalarType(dtype);
        TURNOUT_CHECK(st.has_value(), ErrorKind::Type,
                      "_make_wrapper_subclass(): dtype must be a turnout.dtype "
                      "(e.g. turnout.float32), got ",
                      describePyType(dtype));
        std::optional<Device> where =
            device.is_none() ? Device(DeviceType::CPU) : toDevice(device);
        TURNOUT_CHECK(where.has_value(), ErrorKind::Type,
                      "_make_wrapper_subclass(): device must be a "
                      "turnout.device or a string like 'cpu', got ",
                      describePyType(device));
        std::optional<Layout> lay =
            layout.is_none() ? Layout::Strided : toLayout(layout);
        TURNOUT_CHECK(lay.has_value(), ErrorKind::Type,
                      "_make_wrapper_subclass(): layout must be a "
                      "turnout.layout (e.g. turnout.strided), got ",
                      describePyType(layout));
        if (!memory_format.is_none()) {
          TURNOUT_CHECK(toMemoryFormat(memory_format).has_value(),
                        ErrorKind::Type,
                        "_make_wrapper_subclass(): memory_format must be a "
                        "turnout.memory_format (e.g. "
                        "turnout.channels_last), got ",
                        describePyType(memory_format));
        }
        return makeWrapperSubclass(cls, size, std::move(strides),
                                   storage_offset, *st, *lay, *where,
                                   requires_grad, policy, dispatch_device,
                                   dispatch_layout);
      },
      // Positional as well, in torch's order (its SymInt overload).
      py::arg("cls"), py::arg("size"), py::arg("strides") = py::none(), py::arg("storage_offset") = py::none(),
      py::arg("memory_format") = py::none(), py::arg("dtype") = py::none(),
      py::arg("layout") = py::none(), py::arg("device") = py::none(),
      py::arg("pin_memory") = false, py::arg("requires_grad") = false,
      py::arg("dispatch_sizes_strides_policy") = py::none(),
      py::arg("dispatch_device") = false, py::arg("dispatch_layout") = false,
      "A tensor of class `cls` with this metadata and no memory, for "
      "subclasses that hold an inner tensor (torch's arguments; the "
      "dispatch_* ones as _make_subclass's).");
  py::class_<EnablePythonDispatcher>(
      m, "_EnablePythonDispatcher",
      "While alive (or in its `with` block): this thread's calls choose "
      "their kernel in Python, by turnout._python_dispatcher.resolve_key "
      "over the registrations and the OpOverloads' py_impl kernels "
      "(torch's _EnablePythonDispatcher).")
      .def(py::init<>())
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](EnablePythonDispatcher&, py::args) { return false; });
  py::class_<DisablePythonDispatcher>(
      m, "_DisablePythonDispatcher",
      "While alive (or in its `with` block): this thread's calls skip the "
      "Python dispatcher (torch's _DisablePythonDispatcher).")
      .def(py::init<>())
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](DisablePythonDispatcher&, py::args) { return false; });
  py::class_<RestoreSnapshotGuard>(
      m, "_RestorePythonTLSSnapshot",
      "Inside a __turnout_dispatch__ handler: the thread's dispatch key sets "
      "as they were when the call being handled was made, so that the "
      "handler's own calls run autograd (torch's _RestorePythonTLSSnapshot; "
      "turnout.utils.enable_reentrant_dispatch() wraps it). Use it in a "
      "`with` block.")
      .def(py::init<>())
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](RestoreSnapshotGuard&, py::args) { return false; });
  m.def(
      "_tensor_class_has_handler",
      [](py::handle cls) { return PyType_Check(cls.ptr()) && hasHandler(cls); },
      py::arg("cls"),
      "True when the tensor class `cls` defines a __turnout_dispatch__ of its "
      "own (not turnout.Tensor's, which runs calls below the Python key).");
  m.def(
      "_dispatch_isTensorSubclassLike",
      [](const Tensor& t) {
        // As torch 1.13's isTensorSubclassLike: a tensor whose kernels may
        // not be plain strided-memory ones (a Python subclass with a
        // handler, sparse, batched, or meta).
        DispatchKeySet ks = t.key_set();
        return ks.has(DispatchKey::Python) ||
               ks.has_any(DispatchKeySet(DispatchKey::Batched)) ||
               ks.has_any(DispatchKeySet(DispatchKey::FuncTorchBatched)) ||
               ks.has_any(DispatchKeySet(DispatchKey::SparseCsrCPU)) ||
               ks.has_any(DispatchKeySet(DispatchKey::SparseCsrCUDA)) ||
               t.layout() != Layout::Strided || t.is_meta();
      },
      py::arg("tensor"),
      "True for tensors that are not plain strided tensors with memory: "
      "Python subclasses with __turnout_dispatch__, sparse, batched and meta "
      "tensors (torch's isTensorSubclassLike).");
  m.def(
      "_python_tensor_is_held_by_cpp",
      [](py::handle obj) {
        TURNOUT_CHECK(isTensor(obj.ptr()), ErrorKind::Type,
                      "_python_tensor_is_held_by_cpp(obj): expected a "
                      "turnout.Tensor, got ",
                      describePyType(obj));
        return unpackTensor(obj.ptr()).use_count() > 1;
      },
      "True when C++ holds the tensor of `obj` too (so its object would be "
      "preserved if Python let go of it now).");
  g_can_rearm = probeRearm();
  PyObjectSlot::setReleaser(&releasePythonTensor);
  m.attr("_python_tensor_preservation") = g_can_rearm;
}

}  // namespace bindings
}  // namespace turnout

// The Python key's fallback, for every operator.
TURNOUT_LIBRARY_IMPL(_, Python, m) {
  m.fallback(turnout::CppFunction::makeFromBoxedFunction(
      &turnout::bindings::pythonFallback));
}

// PythonDispatcher's: the kernel chosen in Python (_EnablePythonDispatcher).
TURNOUT_LIBRARY_IMPL(_, PythonDispatcher, m) {
  m.fallback(turnout::CppFunction::makeFromBoxedFunction(
      &turnout::bindings::pythonDispatcherFallback));
}

// PythonTLSSnapshot's: records the thread's key sets, then goes on below.
TURNOUT_LIBRARY_IMPL(_, PythonTLSSnapshot, m) {
  m.fallback(turnout::CppFunction::makeFromBoxedFunction(
      &turnout::bindings::pythonTLSSnapshotFallback));
}

// ---- Rules and hints (declared in python_mode.h) ---------------------------

namespace turnout {
namespace bindings {
namespace {

// A class's own rules from turnout.library.register_torch_dispatch,
// {"ns::name.overload": fn}, in its __dict__: never inherited, as torch
// applies a rule to exactly the class it was registered for.
constexpr const char* kRulesName = "_turnout_dispatch_rules";

}  // namespace

py::object callHandler(py::handle handler, py::handle cls, py::handle func,
                       py::handle types, py::handle args, py::handle kwargs) {
  PyObject* dict = reinterpret_cast<PyTypeObject*>(cls.ptr())->tp_dict;
  PyObject* rules =
      dict == nullptr ? nullptr : PyDict_GetItemString(dict, kRulesName);
  if (rules != nullptr && PyDict_Check(rules) && PyDict_Size(rules) > 0) {
    std::string op = py::str(func.attr("name")()).cast<std::string>();
    PyObject* found = PyDict_GetItemString(rules, op.c_str());  // borrowed
    if (found != nullptr) {
      // Owned before the call: the rule may deregister itself.
      py::object rule = py::reinterpret_borrow<py::object>(found);
      return rule(handler, func, types, args, kwargs);
    }
  }
  return handler.attr(kHandlerName)(func, types, args, kwargs);
}

std::string torchDispatchHint(py::handle obj) {
  if (!py::hasattr(obj, "__torch_dispatch__")) return "";
  return "; it defines __torch_dispatch__, which turnout never calls: define "
         "__turnout_dispatch__ (same arguments) instead";
}

}  // namespace bindings
}  // namespace turnout
