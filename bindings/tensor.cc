// turnout._C.TensorBase and the tensor functions that are not operators:
// metadata, autograd state, and zero-copy exchange with NumPy and DLPack.
#include "bindings/tensor.h"

#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <initializer_list>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings/bindings.h"
#include "bindings/gil.h"
#include "bindings/ivalue.h"
#include "bindings/python_error.h"
#include "bindings/python_kernel.h"
#include "bindings/python_mode.h"
#include "bindings/types.h"
#include "dispatcher/core/allocator.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/storage.h"
#include "dispatcher/core/tensor_impl.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/engine.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/autograd/node.h"
#include "kernels/tensor_utils.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {
namespace {

PyTypeObject* g_tensor_base = nullptr;
// The class wrapTensor instantiates: TensorBase or a subclass (one
// reference held).
PyTypeObject* g_tensor_class = nullptr;

// DLPack 0.6 (Debian's libdlpack-dev) predates kDLBool; the value is the
// one later versions and NumPy >= 1.25 use.
constexpr uint8_t kDLBoolCode = 6;

void tensorDealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  forgetPythonTensor(self);
  reinterpret_cast<PyTensor*>(self)->cdata.~Tensor();
  type->tp_free(self);
  // A heap type's instances own a reference to it (see subtype_dealloc).
  Py_DECREF(type);
}

PyObject* tensorNew(PyTypeObject* type, PyObject*, PyObject*) {
  PyErr_Format(PyExc_TypeError,
               "%s cannot be constructed directly; make tensors with "
               "turnout.tensor(data), turnout.empty(size), turnout.zeros(size), "
               "turnout.from_numpy(array), ...",
               type->tp_name);
  return nullptr;
}

// ---- Tensors over foreign memory ---------------------------------------------

// A tensor over `data` (not copied) whose storage calls deleter(context)
// when the last tensor using it goes. Strides are in elements, non-negative.
// On an exception the deleter has run.
Tensor tensorFromBlob(void* data, const std::vector<int64_t>& sizes,
                      const std::vector<int64_t>& strides, ScalarType dtype,
                      Device device, void* context, DeleterFnPtr deleter) {
  DataPtr data_ptr(data, context, deleter, device);
  uint64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) {
      extent = 0;
      break;
    }
    extent += static_cast<uint64_t>(sizes[i] - 1) * strides[i];
  }
  Storage storage(make_intrusive<StorageImpl>(extent * elementSize(dtype),
                                              std::move(data_ptr), nullptr,
                                              /*resizable=*/false));
  auto impl = make_intrusive<TensorImpl, UndefinedTensorImpl>(
      std::move(storage), dtype, device);
  impl->set_sizes_and_strides(sizes, strides);
  return Tensor(std::move(impl));
}

// Drops the reference a storage holds on a Python object. May run on any
// thread, with or without the GIL (releasePyObject queues it for a thread
// that holds the GIL); after interpreter shutdown it leaks instead of
// touching a dead interpreter.
void decrefPyObject(void* obj) {
  releasePyObject(static_cast<PyObject*>(obj));
}

// ---- NumPy ----------------------------------------------------------------------

std::optional<ScalarType> scalarTypeFromNumpy(const py::dtype& dt) {
  if (dt.byteorder() == '>') return std::nullopt;  // not native
  switch (dt.kind()) {
    case 'f':
      if (dt.itemsize() == 2) return ScalarType::Half;
      if (dt.itemsize() == 4) return ScalarType::Float;
      if (dt.itemsize() == 8) return ScalarType::Double;
      break;
    case 'i':
      if (dt.itemsize() == 1) return ScalarType::Char;
      if (dt.itemsize() == 2) return ScalarType::Short;
      if (dt.itemsize() == 4) return ScalarType::Int;
      if (dt.itemsize() == 8) return ScalarType::Long;
      break;
    case 'u':
      if (dt.itemsize() == 1) return ScalarType::Byte;
      break;
    case 'b':
      return ScalarType::Bool;
  }
  return std::nullopt;
}

const char* numpyDtypeName(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return "uint8";
    case ScalarType::Char: return "int8";
    case ScalarType::Short: return "int16";
    case ScalarType::Int: return "int32";
    case ScalarType::Long: return "int64";
    case ScalarType::Half: return "float16";
    case ScalarType::Float: return "float32";
    case ScalarType::Double: return "float64";
    case ScalarType::Bool: return "bool";
    default: return nullptr;
  }
}

py::object toNumpy(py::handle self) {
  const Tensor& t = unpackTensor(self.ptr());
  // As torch's: the data of a subclass with a handler may not be its
  // memory (a wrapper's is none).
  TURNOUT_CHECK(!t.key_set().has(DispatchKey::Python),
                ErrorKind::InvalidArgument,
                ".numpy() is not supported for tensor subclasses (",
                std::string(py::str(self.get_type().attr("__name__"))),
                " defines __turnout_dispatch__, so its data may not be its "
                "memory); unwrap the tensor it holds first");
  TURNOUT_CHECK(t.device().is_cpu(), ErrorKind::Type,
                "Tensor.numpy(): the tensor is on ", t.device().str(),
                "; NumPy arrays live in CPU memory. Use tensor.cpu().numpy() "
                "to copy it first");
  TURNOUT_CHECK(!autograd::requiresGrad(t), ErrorKind::InvalidArgument,
                "Tensor.numpy(): can't call numpy() on a tensor that requires "
                "grad; use tensor.detach().numpy() instead");
  TURNOUT_CHECK(t.layout() == Layout::Strided, ErrorKind::Type,
                "Tensor.numpy(): only strided tensors have a NumPy view, this "
                "one has layout ", toString(t.layout()));
  const char* name = numpyDtypeName(t.dtype());
  TURNOUT_CHECK(name != nullptr, ErrorKind::Type, "Tensor.numpy(): NumPy has no ",
                dtypeName(t.dtype()), " type; convert first, e.g. "
                "tensor.to(turnout.float32).numpy()");
  // As torch's numpy(), which detaches: a dispatch mode sees that detach.
  if (pythonMakesShallowCopy(t)) t.detach();
  std::vector<py::ssize_t> shape(t.sizes().begin(), t.sizes().end());
  std::vector<py::ssize_t> strides;
  for (int64_t s : t.strides()) {
    strides.push_back(s * static_cast<py::ssize_t>(t.itemsize()));
  }
  // The array's base is the Python tensor: it keeps the storage alive.
  return py::array(py::dtype(name), shape, strides, t.data_ptr(), self);
}

Tensor fromNumpy(py::handle obj) {
  TURNOUT_CHECK(py::isinstance<py::array>(obj), ErrorKind::Type,
                "turnout.from_numpy(array): expected a numpy.ndarray, got ",
                std::string(py::str(obj.get_type().attr("__name__"))));
  auto arr = py::reinterpret_borrow<py::array>(obj);
  std::optional<ScalarType> dtype = scalarTypeFromNumpy(arr.dtype());
  TURNOUT_CHECK(dtype.has_value(), ErrorKind::Type,
                "turnout.from_numpy(array): can't convert an array of dtype ",
                std::string(py::str(arr.dtype())),
                "; the supported ones are float64, float32, float16, int64, "
                "int32, int16, int8, uint8 and bool (native byte order)");
  std::vector<int64_t> sizes, strides;
  auto itemsize = static_cast<int64_t>(elementSize(*dtype));
  for (py::ssize_t i = 0; i < arr.ndim(); ++i) {
    sizes.push_back(arr.shape(i));
    int64_t stride = arr.strides(i);
    TURNOUT_CHECK(stride >= 0 && stride % itemsize == 0,
                  ErrorKind::InvalidArgument,
                  "turnout.from_numpy(array): dimension ", i, " has a stride of ",
                  stride, " bytes; turnout needs non-negative multiples of the "
                  "element size (", itemsize, "). Pass array.copy() instead");
    strides.push_back(stride / itemsize);
  }
  PyObject* owner = obj.ptr();
  Py_INCREF(owner);  // released by the storage's deleter
  return tensorFromBlob(const_cast<void*>(arr.data()), sizes, strides, *dtype,
                        Device(DeviceType::CPU), owner, &decrefPyObject);
}

// ---- DLPack ---------------------------------------------------------------------

struct DLPackExport {
  Tensor tensor;  // keeps the memory alive
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLManagedTensor managed;
};

void deleteDLPackExport(DLManagedTensor* self) {
  delete static_cast<DLPackExport*>(self->manager_ctx);
}

void dlpackCapsuleDestructor(PyObject* capsule) {
  // A consumer renames the capsule "used_dltensor" and takes over; only an
  // unconsumed one is ours to free.
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  auto* managed =
      static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (managed->deleter != nullptr) managed->deleter(managed);
}

DLDataType toDLDataType(ScalarType t) {
  DLDataType out;
  out.lanes = 1;
  out.bits = static_cast<uint8_t>(elementSize(t) * 8);
  switch (t) {
    case ScalarType::Byte:
      out.code = kDLUInt;
      break;
    case ScalarType::Char:
    case ScalarType::Short:
    case ScalarType::Int:
    case ScalarType::Long:
      out.code = kDLInt;
      break;
    case ScalarType::Half:
    case ScalarType::Float:
    case ScalarType::Double:
      out.code = kDLFloat;
      break;
    case ScalarType::BFloat16:
      out.code = kDLBfloat;
      break;
    case ScalarType::Bool:
      out.code = kDLBoolCode;
      break;
    default:
      TURNOUT_CHECK(false, ErrorKind::Type, "Tensor.__dlpack__(): DLPack has no ",
                    dtypeName(t), " type");
  }
  return out;
}

std::optional<ScalarType> fromDLDataType(DLDataType dt) {
  if (dt.lanes != 1) return std::nullopt;
  switch (dt.code) {
    case kDLUInt:
      if (dt.bits == 8) return ScalarType::Byte;
      break;
    case kDLInt:
      if (dt.bits == 8) return ScalarType::Char;
      if (dt.bits == 16) return ScalarType::Short;
      if (dt.bits == 32) return ScalarType::Int;
      if (dt.bits == 64) return ScalarType::Long;
      break;
    case kDLFloat:
      if (dt.bits == 16) return ScalarType::Half;
      if (dt.bits == 32) return ScalarType::Float;
      if (dt.bits == 64) return ScalarType::Double;
      break;
    case kDLBfloat:
      if (dt.bits == 16) return ScalarType::BFloat16;
      break;
    case kDLBoolCode:
      if (dt.bits == 8) return ScalarType::Bool;
      break;
  }
  return std::nullopt;
}

DLDevice toDLDevice(Device d) {
  switch (d.type()) {
    case DeviceType::CPU:
      return DLDevice{kDLCPU, 0};
    case DeviceType::CUDA:
      return DLDevice{kDLCUDA, d.has_index() ? d.index() : 0};
    default:
      TURNOUT_CHECK(false, ErrorKind::Type, "DLPack: tensors on ", d.str(),
                    " can't be exported; DLPack here covers cpu and cuda");
  }
  return DLDevice{kDLCPU, 0};
}

py::object toDLPack(const Tensor& t) {
  TURNOUT_CHECK(!autograd::requiresGrad(t), ErrorKind::InvalidArgument,
                "Tensor.__dlpack__(): can't export a tensor that requires "
                "grad; use tensor.detach()");
  TURNOUT_CHECK(t.layout() == Layout::Strided, ErrorKind::Type,
                "Tensor.__dlpack__(): only strided tensors can be exported, "
                "this one has layout ", toString(t.layout()));
  auto ctx = std::make_unique<DLPackExport>();
  ctx->tensor = t;
  ctx->shape.assign(t.sizes().begin(), t.sizes().end());
  ctx->strides.assign(t.strides().begin(), t.strides().end());
  DLTensor& dl = ctx->managed.dl_tensor;
  dl.data = t.data_ptr();
  dl.device = toDLDevice(t.device());
  dl.ndim = static_cast<int>(t.dim());
  dl.dtype = toDLDataType(t.dtype());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = 0;
  ctx->managed.manager_ctx = ctx.get();
  ctx->managed.deleter = &deleteDLPackExport;
  PyObject* capsule =
      PyCapsule_New(&ctx->managed, "dltensor", &dlpackCapsuleDestructor);
  if (capsule == nullptr) throw py::error_already_set();
  ctx.release();  // owned by the capsule now
  return py::reinterpret_steal<py::object>(capsule);
}

void callDLPackDeleter(void* managed) {
  auto* m = static_cast<DLManagedTensor*>(managed);
  if (m->deleter != nullptr) m->deleter(m);
}

py::object fromDLPack(py::handle obj) {
  if (isTensor(obj.ptr())) return py::reinterpret_borrow<py::object>(obj);
  py::object capsule;
  if (py::hasattr(obj, "__dlpack__")) {
    capsule = obj.attr("__dlpack__")();
  } else if (PyCapsule_CheckExact(obj.ptr())) {
    capsule = py::reinterpret_borrow<py::object>(obj);
  } else {
    TURNOUT_CHECK(false, ErrorKind::Type,
                  "turnout.from_dlpack(x): expected an object with __dlpack__ "
                  "(a NumPy >= 1.22 array, a torch tensor, ...) or a DLPack "
                  "capsule, got ",
                  std::string(py::str(obj.get_type().attr("__name__"))));
  }
  TURNOUT_CHECK(PyCapsule_IsValid(capsule.ptr(), "dltensor"),
                ErrorKind::InvalidArgument,
                "turnout.from_dlpack(x): the DLPack capsule was already "
                "consumed (a capsule can be imported only once); call "
                "x.__dlpack__() again for a fresh one");
  auto* managed = static_cast<DLManagedTensor*>(
      PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  const DLTensor& dl = managed->dl_tensor;
  std::optional<ScalarType> dtype = fromDLDataType(dl.dtype);
  TURNOUT_CHECK(dtype.has_value(), ErrorKind::Type,
                "turnout.from_dlpack(x): unsupported DLPack dtype (code ",
                int(dl.dtype.code), ", bits ", int(dl.dtype.bits), ", lanes ",
                dl.dtype.lanes, ")");
  std::optional<Device> device;
  if (dl.device.device_type == kDLCPU) device = Device(DeviceType::CPU);
  if (dl.device.device_type == kDLCUDA) {
    device = Device(DeviceType::CUDA, static_cast<DeviceIndex>(dl.device.device_id));
  }
  TURNOUT_CHECK(device.has_value(), ErrorKind::Type,
                "turnout.from_dlpack(x): unsupported DLPack device type ",
                int(dl.device.device_type), "; turnout takes cpu (1) and cuda (2)");
  std::vector<int64_t> sizes(dl.shape, dl.shape + dl.ndim);
  std::vector<int64_t> strides(dl.ndim);
  if (dl.strides != nullptr) {
    strides.assign(dl.strides, dl.strides + dl.ndim);
    for (int i = 0; i < dl.ndim; ++i) {
      TURNOUT_CHECK(strides[i] >= 0, ErrorKind::InvalidArgument,
                    "turnout.from_dlpack(x): dimension ", i,
                    " has a negative stride (", strides[i],
                    "); turnout tensors need non-negative strides");
    }
  } else {
    int64_t s = 1;
    for (int i = dl.ndim - 1; i >= 0; --i) {
      strides[i] = s;
      s *= sizes[i];
    }
  }
  // From here on the tensor owns the DLManagedTensor.
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  return wrapTensor(tensorFromBlob(data, sizes, strides, *dtype, *device,
                                   managed, &callDLPackDeleter));
}

// ---- Arithmetic operators --------------------------------------------------
//
// `a + b`, `a - b`, `a * b`, `a / b` and `a // b` as number slots of
// TensorBase: one C call straight into the operator's vectorcall, no
// Python frame. As torch 1.13, a Python number operand goes to the Tensor
// overload, which takes it as a wrapped number (wrapNumber): `x * 4` and
// `4 * x` are mul.Tensor(x, 4), `4 // x` is floor_divide(4, x). The
// overloads (and the Python functions for the reflected `x - t` and
// `x / t`, which torch computes as rsub and reciprocal-then-mul) come from
// turnout._tensor through _set_tensor_operators; until then the slots
// answer NotImplemented.

enum BinaryOp {
  kAdd,
  kSub,
  kRSub,  // rsub(tensor, other): other - tensor
  kMul,
  kDiv,
  kRDiv,  // rtruediv(tensor, other): other / tensor
  kFloorDivide,
  // Basic indexing (tensorSubscript, below): the views it makes, and the
  // Python function that indexes with any other key.
  kSelectInt,
  kSliceTensor,
  kUnsqueeze,
  kAlias,
  kFillScalar,
  kGetitem,
  kSetitem,
  kNumBinaryOps
};
const char* const kBinaryOpNames[kNumBinaryOps] = {
    "add_Tensor", "sub_Tensor",   "rsub",      "mul_Tensor", "div_Tensor",
    "rtruediv",   "floor_divide", "select_int", "slice_Tensor", "unsqueeze",
    "alias",      "fill_Scalar",  "getitem",    "setitem"};
// One strong reference each, or null. Read and written with the GIL held.
PyObject* g_binary_ops[kNumBinaryOps] = {};

PyObject* callBinary(BinaryOp which, PyObject* self, PyObject* other) {
  PyObject* fn = g_binary_ops[which];
  if (fn == nullptr) Py_RETURN_NOTIMPLEMENTED;
  PyObject* args[2] = {self, other};
  return PyObject_Vectorcall(fn, args, 2, nullptr);
}

// A commutative operator: `tensor op other` and `other op tensor` are the
// same call with the tensor first.
template <BinaryOp kOp>
PyObject* commutativeSlot(PyObject* a, PyObject* b) {
  return isTensor(a) ? callBinary(kOp, a, b) : callBinary(kOp, b, a);
}

template <BinaryOp kOp, BinaryOp kReflected>
PyObject* nonCommutativeSlot(PyObject* a, PyObject* b) {
  return isTensor(a) ? callBinary(kOp, a, b) : callBinary(kReflected, b, a);
}

// An operator whose Tensor overload takes a number on either side.
template <BinaryOp kOp>
PyObject* inOrderSlot(PyObject* a, PyObject* b) {
  return callBinary(kOp, a, b);
}

std::string knownOperatorNames() {
  std::string names;
  for (const char* name : kBinaryOpNames) {
    if (!names.empty()) names += ", ";
    names += name;
  }
  return names;
}

// ---- Basic indexing ---------------------------------------------------------------
//
// `x[key]` for the keys of basic indexing (ints, slices of ints or None,
// None, ...; alone or in a tuple) as TensorBase's mp_subscript: the calls
// turnout._tensor's _apply_index makes (select.int, slice.Tensor,
// unsqueeze, alias), in its order, vectorcalled, without a Python frame.
// Any other key (tensors, lists, bools, objects with __index__), a bad one
// included, and a tensor whose subclass answers its own sizes, go to
// turnout._tensor's _getitem (kGetitem), which raises the errors.
// Assignment (mp_ass_subscript) likewise, with _setitem.

enum IndexPart { kPartInt, kPartSlice, kPartNone, kPartEllipsis, kPartOther };

inline bool intOrNone(PyObject* v) {
  return v == Py_None || PyLong_CheckExact(v);
}

IndexPart indexPart(PyObject* k) {
  if (k == Py_None) return kPartNone;
  if (k == Py_Ellipsis) return kPartEllipsis;
  if (PyLong_CheckExact(k)) return kPartInt;  // not bool: a subclass
  if (PySlice_Check(k)) {
    auto* s = reinterpret_cast<PySliceObject*>(k);
    if (intOrNone(s->start) && intOrNone(s->stop) && intOrNone(s->step)) {
      return kPartSlice;
    }
  }
  return kPartOther;
}

// A slice bound as _slice_bound reads it: None gives `dflt`, an int is
// clamped to int64's range.
int64_t sliceBound(PyObject* v, int64_t dflt) {
  if (v == Py_None) return dflt;
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (overflow > 0) return std::numeric_limits<int64_t>::max();
  if (overflow < 0) return std::numeric_limits<int64_t>::min();
  return x;
}

// Calls g_binary_ops[op] on `tensor` (a new reference, stolen) and the
// ints `ints`; returns a new reference or null with an exception set.
PyObject* callView(BinaryOp op, PyObject* tensor,
                   std::initializer_list<int64_t> ints) {
  PyObject* args[5] = {tensor};
  size_t n = 1;
  for (int64_t v : ints) {
    args[n] = PyLong_FromLongLong(v);
    if (args[n] == nullptr) break;
    ++n;
  }
  PyObject* out = n == ints.size() + 1
                      ? PyObject_Vectorcall(g_binary_ops[op], args, n, nullptr)
                      : nullptr;
  for (size_t i = 0; i < n; ++i) Py_DECREF(args[i]);
  return out;
}

// Sets *equal to whether `view`'s size at `dim` is `size`: read from the
// TensorImpl, or as `view.shape[dim]` for a tensor whose subclass answers
// its sizes (or an object a handler returned in a tensor's place). -1 with
// an exception set when that fails.
int dimSize(PyObject* view, int64_t dim, bool* equal, int64_t size) {
  if (isTensor(view)) {
    const Tensor& r = unpackTensor(view);
    if (r.unsafeGetTensorImpl()->python_custom() == 0 && dim < r.dim()) {
      *equal = r.size(dim) == size;
      return 0;
    }
  }
  PyObject* shape = PyObject_GetAttrString(view, "shape");
  if (shape == nullptr) return -1;
  PyObject* got = PySequence_GetItem(shape, static_cast<Py_ssize_t>(dim));
  Py_DECREF(shape);
  if (got == nullptr) return -1;
  PyObject* want = PyLong_FromLongLong(size);
  const int eq = want == nullptr ? -1 : PyObject_RichCompareBool(got, want, Py_EQ);
  Py_DECREF(got);
  Py_XDECREF(want);
  if (eq < 0) return -1;
  *equal = eq == 1;
  return 0;
}

// What basicView returns for a key that is not basic indexing's (or a
// tensor whose subclass answers its sizes): Python indexes with it.
PyObject* const kNotBasic = Py_NotImplemented;

// The view of `self` that a basic key makes (a new reference), null with an
// exception set, or kNotBasic (borrowed). As _apply_index: a whole
// dimension's slice is skipped inside a tuple or for assignment, and a
// read that changes nothing is alias(self).
PyObject* basicView(PyObject* self, PyObject* key, bool for_setitem) {
  const bool alone = !PyTuple_Check(key);
  PyObject* const* parts = alone ? &key : &PyTuple_GET_ITEM(key, 0);
  const Py_ssize_t n = alone ? 1 : PyTuple_GET_SIZE(key);
  const Tensor& t = unpackTensor(self);
  if (t.unsafeGetTensorImpl()->python_custom() != 0) return kNotBasic;
  int64_t consumed = 0;
  int ellipses = 0;
  for (Py_ssize_t i = 0; i < n; ++i) {
    switch (indexPart(parts[i])) {
      case kPartInt:
      case kPartSlice: ++consumed; break;
      case kPartEllipsis: ++ellipses; break;
      case kPartNone: break;
      case kPartOther: return kNotBasic;
    }
  }
  // Python raises these errors.
  if (ellipses > 1 || consumed > t.dim()) return kNotBasic;
  Py_INCREF(self);
  PyObject* result = self;
  int64_t dim = 0;
  for (Py_ssize_t i = 0; i < n && result != nullptr; ++i) {
    PyObject* k = parts[i];
    switch (indexPart(k)) {
      case kPartNone:
        result = callView(kUnsqueeze, result, {dim});
        ++dim;
        break;
      case kPartEllipsis: dim += t.dim() - consumed; break;
      case kPartInt: {
        if (isTensor(result)) {
          // As torch's: an index out of range is refused before select.
          const Tensor& r = unpackTensor(result);
          int overflow = 0;
          const long long index = PyLong_AsLongLongAndOverflow(k, &overflow);
          if (overflow == 0 && r.unsafeGetTensorImpl()->python_custom() == 0 &&
              dim < r.dim() && (index < -r.size(dim) || index >= r.size(dim))) {
            PyErr_Format(PyExc_IndexError,
                         "index %lld is out of bounds for dimension %lld with "
                         "size %lld",
                         index, static_cast<long long>(dim),
                         static_cast<long long>(r.size(dim)));
            Py_DECREF(result);
            return nullptr;
          }
        }
        PyObject* args[3] = {result, nullptr, k};
        args[1] = PyLong_FromLongLong(dim);
        PyObject* out = args[1] == nullptr
                            ? nullptr
                            : PyObject_Vectorcall(g_binary_ops[kSelectInt],
                                                  args, 3, nullptr);
        Py_XDECREF(args[1]);
        Py_DECREF(result);
        result = out;
        break;
      }
      case kPartSlice: {
        auto* s = reinterpret_cast<PySliceObject*>(k);
        const int64_t step = sliceBound(s->step, 1);
        if (step <= 0) {
          PyErr_Format(PyExc_ValueError, "slice step must be positive, got %lld",
                       static_cast<long long>(step));
          Py_DECREF(result);
          return nullptr;
        }
        const int64_t start = sliceBound(s->start, 0);
        const int64_t stop =
            sliceBound(s->stop, std::numeric_limits<int64_t>::max());
        // As torch's: a whole dimension is not sliced inside a tuple.
        bool whole = false;
        if ((for_setitem || !alone) && start == 0 && step == 1) {
          if (dimSize(result, dim, &whole, stop) < 0) {
            Py_DECREF(result);
            return nullptr;
          }
        }
        if (!whole) {
          result = callView(kSliceTensor, result, {dim, start, stop, step});
        }
        ++dim;
        break;
      }
      case kPartOther: break;  // not reached: checked above
    }
  }
  if (result == self && !for_setitem) {
    // Nothing changed the view: x[...], x[()].
    PyObject* args[1] = {self};
    PyObject* out = PyObject_Vectorcall(g_binary_ops[kAlias], args, 1, nullptr);
    Py_DECREF(result);
    result = out;
  }
  return result;
}

bool indexingReady() {
  if (g_binary_ops[kGetitem] != nullptr && g_binary_ops[kSetitem] != nullptr) {
    return true;
  }
  PyErr_SetString(PyExc_TypeError,
                  "turnout._C.TensorBase cannot be indexed before "
                  "turnout._tensor is imported; use turnout.Tensor");
  return false;
}

PyObject* tensorSubscript(PyObject* self, PyObject* key) {
  if (!indexingReady()) return nullptr;
  PyObject* view = basicView(self, key, /*for_setitem=*/false);
  if (view != kNotBasic) return view;
  PyObject* args[2] = {self, key};
  return PyObject_Vectorcall(g_binary_ops[kGetitem], args, 2, nullptr);
}

// `x[key] = value`. A Python number into a plain turnout.Tensor with no
// mode active and a basic key (what nothing in Python can watch) is
// fill_.Scalar on the view, as _setitem's own shortcut; everything else is
// _setitem (kSetitem), which makes torch's calls.
int tensorAssSubscript(PyObject* self, PyObject* key, PyObject* value) {
  if (value == nullptr) {
    PyErr_SetString(PyExc_TypeError,
                    "tensors do not support item deletion (del x[key]); "
                    "index the part to keep instead");
    return -1;
  }
  if (!indexingReady()) return -1;
  if ((PyFloat_CheckExact(value) || PyLong_CheckExact(value) ||
       PyBool_Check(value)) &&
      Py_TYPE(self) == g_tensor_class &&
      !tls_is_dispatch_key_included(DispatchKey::Python)) {
    PyObject* view = basicView(self, key, /*for_setitem=*/true);
    if (view == nullptr) return -1;
    if (view != kNotBasic) {
      PyObject* args[2] = {view, value};
      PyObject* out =
          PyObject_Vectorcall(g_binary_ops[kFillScalar], args, 2, nullptr);
      Py_DECREF(view);
      if (out == nullptr) return -1;
      Py_DECREF(out);
      return 0;
    }
  }
  PyObject* args[3] = {self, key, value};
  PyObject* out = PyObject_Vectorcall(g_binary_ops[kSetitem], args, 3, nullptr);
  if (out == nullptr) return -1;
  Py_DECREF(out);
  return 0;
}

// Checks every keyword before changing anything: a bad call leaves the
// operators as they were.
void setTensorOperators(py::kwargs ops) {
  PyObject* next[kNumBinaryOps] = {};
  for (auto item : ops) {
    std::string name = py::str(item.first);
    int i = 0;
    while (i < kNumBinaryOps && name != kBinaryOpNames[i]) ++i;
    TURNOUT_CHECK(i < kNumBinaryOps, ErrorKind::Type,
                  "_set_tensor_operators(): unknown operator '", name,
                  "'; expected keywords among ", knownOperatorNames());
    TURNOUT_CHECK(
        PyCallable_Check(item.second.ptr()), ErrorKind::Type,
        "_set_tensor_operators(): '", name, "' must be callable, got ",
        std::string(py::str(item.second.get_type().attr("__name__"))));
    next[i] = item.second.ptr();
  }
  for (int i = 0; i < kNumBinaryOps; ++i) {
    if (next[i] == nullptr) continue;
    Py_INCREF(next[i]);
    Py_XSETREF(g_binary_ops[i], next[i]);
  }
}

// ---- Binding helpers --------------------------------------------------------------

// True when `t`'s Python subclass answers one of the `mask` metadata (see
// TensorImpl::python_custom).
inline bool custom(const Tensor& t, uint8_t mask) {
  return __builtin_expect((t.unsafeGetTensorImpl()->python_custom() & mask) != 0,
                          0);
}

// The answer of `t`'s handler to ns::op.default(t): the operator call torch
// 1.13 makes for a subclass's Python-answered metadata.
py::object askHandler(const Tensor& t, const char* ns, const char* op) {
  return py::module_::import("turnout._ops")
      .attr("ops")
      .attr(ns)
      .attr(op)
      .attr("default")(wrapTensor(t));
}

template <class F, class... Extra>
void method(py::handle type, const char* name, F&& f, const Extra&... extra) {
  py::cpp_function fn(std::forward<F>(f), py::name(name), py::is_method(type),
                      py::sibling(py::getattr(type, name, py::none())),
                      extra...);
  py::setattr(type, name, fn);
}

template <class Get>
void property(py::handle type, const char* name, Get&& get, const char* doc) {
  py::cpp_function getter(std::forward<Get>(get), py::is_method(type));
  py::setattr(type, name,
              py::module_::import("builtins")
                  .attr("property")(getter, py::none(), py::none(), doc));
}

template <class Get, class Set>
void property(py::handle type, const char* name, Get&& get, Set&& set,
              const char* doc) {
  py::cpp_function getter(std::forward<Get>(get), py::is_method(type));
  py::cpp_function setter(std::forward<Set>(set), py::is_method(type));
  py::setattr(type, name,
              py::module_::import("builtins")
                  .attr("property")(getter, setter, py::none(), doc));
}

}  // namespace

// A node's saved non-tensor value as torch shows it: sizes as tuples.
static py::object savedValueObject(const IValue& v) {
  if (v.isIntList()) {
    const std::vector<int64_t>& l = v.toIntListRef();
    py::tuple out(l.size());
    for (size_t i = 0; i < l.size(); ++i) out[i] = py::int_(l[i]);
    return out;
  }
  if (v.isBool()) return py::bool_(v.toBool());
  if (v.isInt()) return py::int_(v.toInt());
  if (v.isDouble()) return py::float_(v.toDouble());
  if (v.isString()) return py::str(v.toStringRef());
  return py::none();
}

// Runs a Python hook of node `name` (Node::PostHook). Precondition: the
// GIL is held.
autograd::variable_list runNodeHook(PyObject* hook, const std::string& name,
                                    const autograd::variable_list& grad_inputs,
                                    const autograd::variable_list& grad_outputs) {
  auto toTuple = [](const autograd::variable_list& ts) {
    py::tuple out(ts.size());
    for (size_t i = 0; i < ts.size(); ++i) out[i] = wrapTensor(ts[i]);
    return out;
  };
  py::object result = py::handle(hook)(toTuple(grad_inputs),
                                        toTuple(grad_outputs));
  if (result.is_none()) return grad_inputs;
  TURNOUT_CHECK((py::isinstance<py::tuple>(result) ||
                 py::isinstance<py::list>(result)) &&
                    py::len(result) == grad_inputs.size(),
                ErrorKind::Type, "a hook registered on ", name, " returned ",
                describePyType(result), "; return None or a tuple of ",
                grad_inputs.size(), " gradients (Tensors or None)");
  autograd::variable_list out;
  for (py::handle g : result) {
    TURNOUT_CHECK(g.is_none() || isTensor(g.ptr()), ErrorKind::Type,
                  "a hook registered on ", name, " returned ",
                  describePyType(g), " among its gradients; give Tensors or "
                  "None");
    out.push_back(g.is_none() ? Tensor() : unpackTensor(g.ptr()));
  }
  return out;
}

PyTypeObject* tensorBaseType() { return g_tensor_base; }

py::object wrapTensor(Tensor t) {
  if (!t.defined()) return py::none();
  // A tensor that has a Python object comes back as that object, whatever
  // its class (PyObject preservation, python_mode.h).
  if (PyObject* kept = reclaimPythonTensor(t)) {
    return py::reinterpret_steal<py::object>(kept);
  }
  PyTypeObject* cls = g_tensor_class;
  PyObject* obj = cls->tp_alloc(cls, 0);
  if (obj == nullptr) throw py::error_already_set();
  auto* self = reinterpret_cast<PyTensor*>(obj);
  new (&self->cdata) Tensor(std::move(t));
  // The class's instances are preserved (_set_tensor_class): record only.
  self->cdata.unsafeGetTensorImpl()->pyobj_slot().set(obj, /*owned=*/false);
  return py::reinterpret_steal<py::object>(obj);
}

Tensor wrapNumber(PyObject* obj) {
  Scalar s;
  if (!numberToScalar(obj, &s)) return Tensor();
  return wrappedScalarTensor(s);
}

py::object unwrapNumber(const Tensor& t) {
  const void* data = t.data_ptr();
  switch (t.scalar_type()) {
    case ScalarType::Bool: return py::bool_(*static_cast<const bool*>(data));
    case ScalarType::Long: return py::int_(*static_cast<const int64_t*>(data));
    case ScalarType::Double:
      return py::float_(*static_cast<const double*>(data));
    default:
      TURNOUT_INTERNAL_ASSERT(false, "a wrapped number of dtype ",
                              dtypeName(t.scalar_type()),
                              "; wrapNumber makes bool, int64 and float64 ones");
  }
  return py::none();
}

// pybind11 loads NumPy's C API on first use into a function-local static,
// and importing NumPy lets go of the GIL: two threads making their first
// array at once would deadlock (one holds the GIL and waits on the static,
// the other holds the static and waits on the GIL). Load it here, once,
// while the module import holds the GIL. Without NumPy this does nothing and
// numpy() raises its ImportError when called.
void loadNumpyApi() {
  try {
    py::dtype("float32");
  } catch (py::error_already_set&) {
    // No NumPy: numpy() and from_numpy() raise its ImportError when called.
  }
}

void initTensor(py::module_& m) {
  loadNumpyApi();
  static PyType_Slot slots[] = {
      {Py_tp_dealloc, reinterpret_cast<void*>(&tensorDealloc)},
      {Py_tp_new, reinterpret_cast<void*>(&tensorNew)},
      {Py_nb_add, reinterpret_cast<void*>(&commutativeSlot<kAdd>)},
      {Py_nb_multiply, reinterpret_cast<void*>(&commutativeSlot<kMul>)},
      {Py_nb_subtract,
       reinterpret_cast<void*>(&nonCommutativeSlot<kSub, kRSub>)},
      {Py_nb_true_divide,
       reinterpret_cast<void*>(&nonCommutativeSlot<kDiv, kRDiv>)},
      {Py_nb_floor_divide,
       reinterpret_cast<void*>(&inOrderSlot<kFloorDivide>)},
      {Py_mp_subscript, reinterpret_cast<void*>(&tensorSubscript)},
      {Py_mp_ass_subscript, reinterpret_cast<void*>(&tensorAssSubscript)},
      {Py_tp_doc, const_cast<char*>(
                      "The C++ tensor behind turnout.Tensor; use turnout.Tensor.")},
      {0, nullptr}};
  static PyType_Spec spec = {"turnout._C.TensorBase", sizeof(PyTensor), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};
  PyObject* type = PyType_FromSpec(&spec);
  if (type == nullptr) throw py::error_already_set();
  g_tensor_base = reinterpret_cast<PyTypeObject*>(type);
  Py_INCREF(type);
  g_tensor_class = g_tensor_base;
  m.add_object("TensorBase", py::reinterpret_steal<py::object>(type));
  py::handle base(type);

  m.def(
      "_set_tensor_class",
      [](py::handle cls) {
        TURNOUT_CHECK(PyType_Check(cls.ptr()) &&
                          PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()),
                                           g_tensor_base),
                      ErrorKind::Type,
                      "_set_tensor_class(cls): expected a subclass of "
                      "turnout._C.TensorBase, got ", std::string(py::repr(cls)));
        // Its own __turnout_dispatch__ (a classmethod) runs calls below the
        // Python key; a subclass that keeps it has no handler of its own.
        py::object own = py::reinterpret_borrow<py::dict>(
                             reinterpret_cast<PyTypeObject*>(cls.ptr())->tp_dict)
                             .attr("get")("__turnout_dispatch__");
        setDefaultTensorHandler(py::getattr(own, "__func__", py::none()));
        preserveTensorClass(reinterpret_cast<PyTypeObject*>(cls.ptr()));
        Py_INCREF(cls.ptr());
        Py_DECREF(g_tensor_class);
        g_tensor_class = reinterpret_cast<PyTypeObject*>(cls.ptr());
      },
      "Makes `cls` the class of the tensors that turnout returns.");

  m.def("_set_tensor_operators", &setTensorOperators,
        "Sets the callables behind TensorBase's +, -, *, / and // "
        "(keywords add_Tensor, sub_Tensor, rsub, mul_Tensor, div_Tensor, "
        "rtruediv, floor_divide) and its indexing (select_int, "
        "slice_Tensor, unsqueeze, alias: the views of basic indexing; "
        "fill_Scalar: assigning a number; getitem (tensor, key) and "
        "setitem (tensor, key, value): Python functions for the rest); "
        "turnout._tensor passes the aten overloads.");

  // Metadata. A tensor whose Python subclass answers some of it
  // (TensorImpl::python_custom, set by _make_wrapper_subclass /
  // _make_subclass's dispatch_* arguments) asks its handler through the
  // operator torch 1.13 calls; every other tensor pays one byte's test.
  method(base, "dim", [](const Tensor& t) -> py::object {
    if (custom(t, TensorImpl::kCustomSizes)) return askHandler(t, "aten", "dim");
    return py::int_(t.dim());
  });
  method(base, "ndimension", [](const Tensor& t) -> py::object {
    if (custom(t, TensorImpl::kCustomSizes)) return askHandler(t, "aten", "dim");
    return py::int_(t.dim());
  });
  method(base, "numel", [](const Tensor& t) -> py::object {
    if (custom(t, TensorImpl::kCustomSizes)) {
      return askHandler(t, "aten", "sym_numel");
    }
    return py::int_(t.numel());
  });
  method(base, "_sizes", [](const Tensor& t) -> py::object {
    if (custom(t, TensorImpl::kCustomSizes)) {
      return askHandler(t, "aten", "sym_size");
    }
    return py::cast(std::vector<int64_t>(t.sizes().begin(), t.sizes().end()));
  });
  method(base, "_strides", [](const Tensor& t) -> py::object {
    if (custom(t, TensorImpl::kCustomStrides | TensorImpl::kCustomSizes)) {
      return askHandler(t, "aten", "sym_stride");
    }
    return py::cast(
        std::vector<int64_t>(t.strides().begin(), t.strides().end()));
  });
  method(base, "storage_offset", [](const Tensor& t) -> py::object {
    if (custom(t, TensorImpl::kCustomSizes)) {
      return askHandler(t, "aten", "sym_storage_offset");
    }
    return py::int_(t.storage_offset());
  });
  method(base, "is_contiguous", [](const Tensor& t) -> py::object {
    if (custom(t, TensorImpl::kCustomStrides | TensorImpl::kCustomSizes)) {
      return askHandler(t, "aten", "is_contiguous");
    }
    return py::bool_(t.is_contiguous());
  });
  method(base, "element_size", [](const Tensor& t) { return t.itemsize(); });
  method(base, "data_ptr", [](const Tensor& t) {
    // 0 for a tensor without storage (a wrapper subclass), as torch 1.13.
    return t.has_storage() ? reinterpret_cast<uintptr_t>(t.data_ptr()) : 0;
  });
  method(base, "_is_same", [](const Tensor& a, const Tensor& b) { return a.is_same(b); });
  method(base, "_shares_storage", [](const Tensor& a, const Tensor& b) {
    return a.has_storage() && b.has_storage() && a.storage().is_alias_of(b.storage());
  });
  property(base, "dtype", [](const Tensor& t) { return dtypeObject(t.dtype()); },
           "The element type, e.g. turnout.float32.");
  property(base, "device", [](const Tensor& t) -> py::object {
    if (custom(t, TensorImpl::kCustomDevice)) return askHandler(t, "prim", "device");
    return deviceObject(t.device());
  }, "Where the data lives, e.g. device(type='cpu').");
  property(base, "layout", [](const Tensor& t) -> py::object {
    if (custom(t, TensorImpl::kCustomLayout)) return askHandler(t, "prim", "layout");
    return py::reinterpret_borrow<py::object>(layoutObject(t.layout()));
  }, "The memory layout, e.g. turnout.strided.");
  property(base, "is_cuda", [](const Tensor& t) -> py::object {
    if (custom(t, TensorImpl::kCustomDevice)) {
      return askHandler(t, "prim", "device").attr("type").attr("__eq__")(
          py::str("cuda"));
    }
    return py::bool_(t.is_cuda());
  }, "On a CUDA device.");
  property(base, "is_cpu", [](const Tensor& t) -> py::object {
    if (custom(t, TensorImpl::kCustomDevice)) {
      return askHandler(t, "prim", "device").attr("type").attr("__eq__")(
          py::str("cpu"));
    }
    return py::bool_(t.is_cpu());
  }, "In CPU memory.");
  property(base, "is_meta", [](const Tensor& t) -> py::object {
    if (custom(t, TensorImpl::kCustomDevice)) {
      return askHandler(t, "prim", "device").attr("type").attr("__eq__")(
          py::str("meta"));
    }
    return py::bool_(t.is_meta());
  }, "On the meta device (sizes, no data).");
  property(base, "_version", [](const Tensor& t) {
    return t.unsafeGetTensorImpl()->version();
  }, "The version counter, bumped by in-place operations.");

  // Autograd state.
  property(
      base, "requires_grad", [](const Tensor& t) { return autograd::requiresGrad(t); },
      [](const Tensor& t, bool flag) { autograd::setRequiresGrad(t, flag); },
      "Whether gradients flow to this tensor; set it on leaves only.");
  property(
      base, "grad", [](const Tensor& t) { return autograd::grad(t); },
      [](const Tensor& t, py::handle g) {
        if (g.is_none()) {
          autograd::setGrad(t, Tensor());
          return;
        }
        TURNOUT_CHECK(isTensor(g.ptr()), ErrorKind::Type,
                      "Tensor.grad: assigned value must be a Tensor or None, got ",
                      std::string(py::str(g.get_type().attr("__name__"))));
        autograd::setGrad(t, unpackTensor(g.ptr()));
      },
      "The gradient accumulated by backward(); None before.");
  property(
      base, "data",
      [](const Tensor& t) {
        Tensor data = pythonMakesShallowCopy(t) ? shallowCopyThroughPython(t)
                                                : t.detach();
        // As torch's: in-place changes through .data are hidden from
        // autograd (a version counter of its own).
        if (data.unsafeGetTensorImpl() != t.unsafeGetTensorImpl()) {
          data.unsafeGetTensorImpl()->set_version_counter(
              make_intrusive<VersionCounter>());
        }
        return data;
      },
      [](const Tensor& t, py::handle value) {
        TURNOUT_CHECK(isTensor(value.ptr()), ErrorKind::Type,
                      "Variable data has to be a tensor, but got ",
                      std::string(py::str(value.get_type().attr("__name__"))),
                      " (Tensor.data = value takes a Tensor)");
        autograd::setData(t, unpackTensor(value.ptr()));
      },
      "This tensor's memory as a tensor outside autograd: no grad_fn, "
      "requires_grad False, a version counter of its own. Assigning a "
      "tensor (torch's set_data) makes this tensor use that tensor's "
      "memory, dtype, device, sizes and strides, keeping its own identity: "
      "the same Python object, grad, requires_grad, grad_fn, hooks and "
      "version counter.");
  method(
      base, "register_hook",
      [](const Tensor& t, py::object fn) {
        TURNOUT_CHECK(PyCallable_Check(fn.ptr()), ErrorKind::Type,
                      "register_hook(hook): expected a callable hook(grad), "
                      "got ", describePyType(fn));
        if (!autograd::requiresGrad(t)) {  // RuntimeError, as torch's
          throw std::runtime_error(
              "cannot register a hook on a tensor that doesn't require "
              "gradient (call requires_grad_() on the leaf first)");
        }
        // Released from whichever thread drops the hook.
        std::shared_ptr<PyObject> held(
            fn.release().ptr(), [](PyObject* o) { releasePyObject(o); });
        std::function<void()> remove = autograd::registerHook(
            t, [held](const Tensor& grad) -> Tensor {
              GilAcquire gil;
              try {
                py::object r = py::reinterpret_borrow<py::object>(held.get())(
                    wrapTensor(grad));
                if (r.is_none()) return Tensor();
                TURNOUT_CHECK(isTensor(r.ptr()), ErrorKind::Type,
                              "a tensor hook must return None or a Tensor, "
                              "got ", describePyType(r));
                return unpackTensor(r.ptr());
              } catch (const py::error_already_set& e) {
                throw PythonError(e);
              }
            });
        return py::module_::import("types").attr("SimpleNamespace")(
            py::arg("remove") = py::cpp_function(std::move(remove)));
      },
      py::doc("Calls hook(grad) with each gradient computed for this tensor "
              "in backward (before a leaf accumulates it); a Tensor it "
              "returns replaces the gradient, None keeps it. Returns a handle "
              "whose remove() takes the hook away."));
  method(base, "retain_grad",
         [](const Tensor& t) {
           if (!autograd::requiresGrad(t)) {  // RuntimeError, as torch's
             throw std::runtime_error(
                 "can't retain_grad on a tensor that has requires_grad=False");
           }
           autograd::retainGrad(t);
         },
         py::doc("Makes a non-leaf keep its gradient in .grad after "
                 "backward (a leaf does anyway)."));
  property(base, "retains_grad",
           [](const Tensor& t) { return autograd::retainsGrad(t); },
           "Whether retain_grad() was called on this non-leaf.");
  method(base, "_is_view", [](const Tensor& t) {
    return autograd::viewBase(t).defined();
  }, "True when a view operator made this tensor from another (torch's "
     "_is_view(); detach() and .data are not views).");
  property(base, "_base", [](const Tensor& t) { return autograd::viewBase(t); }, "The tensor this view was taken of (the first one of a chain of views), "
     "or None when this tensor is not a view.");
  property(base, "is_leaf", [](const Tensor& t) { return autograd::isLeaf(t); },
           "True when the tensor was not made by a recorded operation.");
  property(base, "_grad_fn_name", [](const Tensor& t) -> py::object {
    std::shared_ptr<autograd::Node> fn = autograd::gradFn(t);
    if (!fn) return py::none();
    return py::str(fn->name());
  }, "The name of the node that made this tensor (\"AddBackward0\"), or None.");
  // Tensor.grad_fn: the node itself, one Python object per node while it is
  // referenced (pybind11 finds the live instance of a shared_ptr).
  py::class_<autograd::Node, std::shared_ptr<autograd::Node>>(
      m, "_FunctionNode",
      "A node of the backward graph (Tensor.grad_fn): name(), "
      "next_functions.")
      .def("name", &autograd::Node::name,
           "The node's name, e.g. \"MulBackward0\", as torch's.")
      .def_property_readonly(
          "next_functions",
          [](const autograd::Node& node) {
            const std::vector<autograd::Edge>& edges = node.next_edges();
            py::tuple out(edges.size());
            for (size_t i = 0; i < edges.size(); ++i) {
              py::object fn = edges[i].function ? py::cast(edges[i].function)
                                                : py::none();
              out[i] = py::make_tuple(fn, edges[i].input_nr);
            }
            return out;
          },
          "One (node, input_nr) pair per input of the forward operator: "
          "where its gradient goes (None where it needs none), as torch's.")
      .def(
          "register_hook",
          [](const std::shared_ptr<autograd::Node>& node, py::object fn) {
            TURNOUT_CHECK(PyCallable_Check(fn.ptr()), ErrorKind::Type,
                          "register_hook(hook): expected a callable "
                          "hook(grad_inputs, grad_outputs), got ",
                          describePyType(fn));
            // Released from whichever thread drops the node.
            std::shared_ptr<PyObject> held(
                fn.release().ptr(), [](PyObject* o) { releasePyObject(o); });
            const std::string name = node->name();
            uint64_t key = node->addPostHook(
                [held, name](const autograd::variable_list& grad_inputs,
                             const autograd::variable_list& grad_outputs) {
                  GilAcquire gil;
                  try {
                    return runNodeHook(held.get(), name, grad_inputs,
                                       grad_outputs);
                  } catch (const py::error_already_set& e) {
                    throw PythonError(e);
                  }
                });
            std::weak_ptr<autograd::Node> weak = node;
            py::cpp_function remove([weak, key] {
              if (auto n = weak.lock()) n->removePostHook(key);
            });
            return py::module_::import("types").attr("SimpleNamespace")(
                py::arg("remove") = remove);
          },
          py::arg("hook"),
          "Calls hook(grad_inputs, grad_outputs) after the node runs in "
          "backward, as torch's: tuples of the gradients it computed and of "
          "those it received (None where undefined); a tuple it returns "
          "replaces grad_inputs. Returns a handle whose remove() takes the "
          "hook away.")
      .def(
          "__getattr__",
          [](const std::shared_ptr<autograd::Node>& node,
             const std::string& attr) -> py::object {
            for (const autograd::Node::Saved& s : node->saved()) {
              if (attr.size() != 7 + s.name.size() ||
                  attr.compare(0, 7, "_saved_") != 0 ||
                  attr.compare(7, std::string::npos, s.name) != 0) {
                continue;
              }
              if (s.is_tensor_list) {  // a tuple, None for a None entry
                py::tuple out(s.tensors.size());
                for (size_t i = 0; i < s.tensors.size(); ++i) {
                  Tensor t = s.tensors[i].unpack(node.get());
                  out[i] = t.defined() ? wrapTensor(std::move(t)) : py::none();
                }
                return out;
              }
              if (!s.is_tensor) return savedValueObject(s.value);
              Tensor t = s.tensor.unpack(node.get());  // raises once freed
              return t.defined() ? wrapTensor(std::move(t)) : py::none();
            }
            throw py::attribute_error("'" + node->name() +
                                      "' object has no attribute '" + attr +
                                      "'");
          },
          py::arg("name"),
          "grad_fn._saved_<name>: a value the node keeps for backward, by "
          "torch's names (_saved_self, _saved_other, _saved_alpha, "
          "_saved_result, ...); None for a tensor it did not need. Raises "
          "torch's error once backward freed it (retain_graph=False).")
      .def("__dir__",
           [](py::handle self) {
             py::list out = py::module_::import("builtins")
                                .attr("object")
                                .attr("__dir__")(self);
             for (const autograd::Node::Saved& s :
                  self.cast<const autograd::Node&>().saved()) {
               out.append(py::str("_saved_" + s.name));
             }
             return out;
           })
      .def("__repr__", [](py::handle self) {
        return "<" + self.cast<const autograd::Node&>().name() +
               " object at " +
               py::str(py::module_::import("builtins").attr("hex")(
                           reinterpret_cast<uintptr_t>(self.ptr())))
                   .cast<std::string>() +
               ">";
      });
  property(base, "_grad_fn", [](const Tensor& t) { return autograd::gradFn(t); },
           "The node that made this tensor, or None.");
  // backward(create_graph=True)'s reference-cycle warning as a Python
  // UserWarning at the call (the engine runs without the GIL and holds no
  // lock while it warns); a warnings filter set to "error" makes backward()
  // raise it before any .grad changes.
  autograd::setBackwardWarningHandler(&warnAsUserWarning);
  m.def("_reset_create_graph_warning", &autograd::resetCreateGraphWarning,
        "Lets the next backward(create_graph=True) warn again (tests).");
  m.def(
      "_backward",
      [](std::vector<Tensor> roots, std::vector<Tensor> grads,
         bool retain_graph, bool create_graph, std::vector<Tensor> inputs) {
        withoutGil([&] {
          autograd::backward(roots, grads, retain_graph, create_graph, inputs);
        });
      },
      py::arg("roots"), py::arg("grad_roots"), py::arg("retain_graph") = false,
      py::arg("create_graph") = false,
      py::arg("inputs") = std::vector<Tensor>());
  m.def(
      "_autograd_grad",
      [](std::vector<Tensor> outputs, py::sequence grad_outputs,
         std::vector<Tensor> inputs, bool create_graph, bool retain_graph) {
        std::vector<Tensor> grads;
        for (py::handle g : grad_outputs) {
          TURNOUT_CHECK(g.is_none() || isTensor(g.ptr()), ErrorKind::Type,
                        "grad(): grad_outputs must hold Tensors or None, got ",
                        describePyType(g));
          grads.push_back(g.is_none() ? Tensor() : unpackTensor(g.ptr()));
        }
        autograd::variable_list result;
        withoutGil([&] {
          result = autograd::grad(outputs, grads, inputs, create_graph,
                                  retain_graph);
        });
        py::list out;
        for (Tensor& t : result) out.append(wrapTensor(std::move(t)));
        return out;
      },
      py::arg("outputs"), py::arg("grad_outputs"), py::arg("inputs"),
      py::arg("create_graph"), py::arg("retain_graph"),
      "The gradients of outputs with respect to inputs (None where none "
      "reaches an input); no leaf's .grad changes. turnout.autograd.grad "
      "wraps it.");
  m.def("_set_grad_enabled", &autograd::GradMode::set_enabled, py::arg("enabled"));
  m.def("is_grad_enabled", &autograd::GradMode::is_enabled,
        "True when operators record autograd history on this thread.");
  m.def("_dispatch_keys", [](const Tensor& t) { return t.key_set(); },
        "The key set of a tensor.");

  m.def("_has_storage", [](const Tensor& t) { return t.has_storage(); },
        py::arg("tensor"),
        "False for a tensor without memory (a wrapper subclass's).");
  m.def(
      "_storage_as_tensor",
      [](const Tensor& t) {
        TURNOUT_CHECK(t.has_storage(), ErrorKind::NotImplemented,
                      "Tensor.storage(): the tensor has no memory (a wrapper "
                      "subclass's)");
        const Storage& s = t.storage();
        auto impl = make_intrusive<TensorImpl, UndefinedTensorImpl>(
            s, t.dtype(), t.device());
        impl->set_sizes_contiguous(
            {static_cast<int64_t>(s.nbytes() / t.itemsize())});
        impl->set_version_counter(t.unsafeGetTensorImpl()->version_counter());
        return wrapTensor(Tensor(std::move(impl)));
      },
      py::arg("tensor"),
      "A 1-d tensor of `tensor`'s dtype over all of its memory, from its "
      "start (behind Tensor.storage()).");

  // Zero-copy exchange.
  method(base, "numpy", &toNumpy,
         py::doc("A NumPy array sharing this CPU tensor's memory."));
  method(base, "__dlpack__",
         [](const Tensor& t, py::handle stream) { return toDLPack(t); },
         py::arg("stream") = py::none(),
         py::doc("A DLPack capsule sharing this tensor's memory."));
  method(base, "__dlpack_device__", [](const Tensor& t) {
    DLDevice d = toDLDevice(t.device());
    return py::make_tuple(static_cast<int>(d.device_type), d.device_id);
  });
  m.def("from_numpy", [](py::handle a) { return wrapTensor(fromNumpy(a)); },
        py::arg("ndarray"),
        "A tensor sharing the memory of a NumPy array (kept alive by it).");
  m.def("from_dlpack", &fromDLPack, py::arg("ext_tensor"),
        "A tensor sharing the memory of any object with __dlpack__, or of a "
        "DLPack capsule.");
}

}  // namespace bindings
}  // namespace turnout
