// TensorImpl: the object behind a Tensor: its storage, dtype, sizes, strides,
// storage offset, device, layout, and the DispatchKeySet that the dispatcher
// reads on every call.
//
//   Storage s = Storage::allocate(24, getAllocator(DeviceType::CPU));
//   auto impl = make_intrusive<TensorImpl, UndefinedTensorImpl>(
//       s, ScalarType::Float, Device(DeviceType::CPU));
//   impl->set_sizes_contiguous({2, 3});   // strides [3, 1]
//   impl->key_set();   // {CPU, ADInplaceOrView, AutogradCPU}
//
// Thread safety: reading a TensorImpl is safe from any thread. The mutators
// (set_sizes_*, set_storage_offset, set_key_set, add_key, ...) are not
// synchronized: call them while one thread owns the tensor, before it is
// shared.
#ifndef TURNOUT_DISPATCHER_CORE_TENSOR_IMPL_H_
#define TURNOUT_DISPATCHER_CORE_TENSOR_IMPL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "dispatcher/core/autograd_meta_interface.h"
#include "dispatcher/core/device.h"
#include "dispatcher/core/dispatch_key_set.h"
#include "dispatcher/core/intrusive_ptr.h"
#include "dispatcher/core/layout.h"
#include "dispatcher/core/py_object_slot.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/storage.h"

namespace turnout {

/// A read-only view of sizes or strides (c10's IntArrayRef).
using IntArrayRef = absl::Span<const int64_t>;
/// Sizes or strides; five dimensions fit without an allocation.
using DimVector = absl::InlinedVector<int64_t, 5>;

/// Sizes or strides as messages print them: "[2, 3]".
std::string shapeString(IntArrayRef values);

/// Invariants, checked by checkInvariants():
///   - sizes are non-negative and numel_ is their product, which fits int64
///     (formed left to right, as size_arithmetic.h says);
///   - a Strided tensor has one stride per size, and is_contiguous_ says
///     whether the strides are the contiguous ones for the sizes (size-1
///     dimensions may have any stride); another layout has no strides and
///     is_contiguous_ is false;
///   - storage_offset_ >= 0, and a Strided tensor with a storage fits in
///     it: every element lies within the storage's nbytes;
///   - a storage, when present, is on device_'s device type.
class TensorImpl : public IntrusivePtrTarget {
 public:
  /// A tensor of sizes [0] (strides [1] for Strided) on `device`, with the
  /// key set c10 gives it: computeDispatchKey(dtype, layout, device) plus
  /// getAutogradRelatedKeySetFromBackend of that key's backend, so a CPU
  /// tensor has {CPU, ADInplaceOrView, AutogradCPU}. `storage` may be
  /// undefined (layouts other than Strided have none). Throws
  /// Error(NotImplemented) for a layout unsupported on the device.
  TensorImpl(Storage storage, ScalarType dtype, Device device,
             Layout layout = Layout::Strided);
  /// The same, with exactly `key_set` (nothing added).
  TensorImpl(Storage storage, ScalarType dtype, Device device, Layout layout,
             DispatchKeySet key_set);
  /// A new tensor of `sizes`, contiguous (strides only for Strided), over
  /// `storage` from offset 0, with exactly `key_set`: what the previous
  /// constructor and set_sizes_contiguous(sizes) make, in one step with no
  /// undo copies (the path of every new kernel result). Throws as
  /// set_sizes_contiguous does for negative sizes, an overflowing element
  /// count, or a storage too small for the elements. `version_counter`, when
  /// given, is the tensor's (else a new one).
  TensorImpl(Storage storage, ScalarType dtype, Device device, Layout layout,
             DispatchKeySet key_set, IntArrayRef sizes,
             intrusive_ptr<VersionCounter> version_counter = {});

  /// The key set the first constructor gives a tensor of this kind.
  static DispatchKeySet computeKeySet(ScalarType dtype, Layout layout,
                                      Device device);

  // ---- Dispatch
  // --------------------------------------------------------------
  /// The keys the dispatcher sees for this tensor. One load.
  DispatchKeySet key_set() const { return key_set_; }
  void set_key_set(DispatchKeySet key_set) {
    checkMutable("set_key_set");
    key_set_ = key_set;
  }
  /// Adds `k`, e.g. DispatchKey::Python for a tensor subclass.
  void add_key(DispatchKey k) {
    checkMutable("add_key");
    key_set_ = key_set_.add(k);
  }
  /// Removes `k`'s functionality bit (backend bits stay, as in c10).
  void remove_key(DispatchKey k) {
    checkMutable("remove_key");
    key_set_ = key_set_.remove(k);
  }

  // ---- Shape
  // -----------------------------------------------------------------
  // A tensor whose Python subclass answers its sizes or strides
  // (python_custom() below) asks its handler here, through the hook the
  // bindings install (setPythonMetadataHook); every other tensor pays one
  // byte's test. The *_default() readers skip that: the stored values.
  IntArrayRef sizes() const {
    if (__builtin_expect(python_custom_ & kCustomSizes, 0)) {
      return customSizes();
    }
    return sizes_;
  }
  /// Throws Error(NotImplemented) for a layout other than Strided.
  IntArrayRef strides() const;
  int64_t dim() const {
    if (__builtin_expect(python_custom_ & kCustomSizes, 0)) return customDim();
    return static_cast<int64_t>(sizes_.size());
  }
  /// The size of dimension `d`; negative `d` counts from the end. Throws
  /// Error(Index) when out of range.
  int64_t size(int64_t d) const;
  /// The stride of dimension `d`, as size().
  int64_t stride(int64_t d) const;
  /// Throws Error(NotImplemented), naming `caller`, unless the layout is
  /// Strided: only a strided tensor has strides.
  void checkStrided(const char* caller) const {
    if (__builtin_expect(layout_ != Layout::Strided, 0)) {
      throwNotStrided(caller);
    }
  }
  int64_t numel() const {
    if (__builtin_expect(python_custom_ & kCustomSizes, 0)) {
      return customNumel();
    }
    return numel_;
  }
  bool is_contiguous() const {
    if (__builtin_expect(python_custom_ & kCustomStrides, 0)) {
      return customIsContiguous();
    }
    return is_contiguous_;
  }
  /// The stored values, never asking a Python subclass (c10's
  /// sizes_default() and friends): for code that made the tensor itself, or
  /// runs below the Python key.
  IntArrayRef sizes_default() const { return sizes_; }
  IntArrayRef strides_default() const { return strides_; }
  int64_t dim_default() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel_default() const { return numel_; }
  bool is_contiguous_default() const { return is_contiguous_; }
  int64_t storage_offset_default() const { return storage_offset_; }

  // ---- Element type, placement, memory
  // ---------------------------------------
  ScalarType dtype() const { return dtype_; }
  size_t itemsize() const { return itemsize_; }
  Device device() const { return device_; }
  Layout layout() const { return layout_; }
  const Storage& storage() const { return storage_; }
  bool has_storage() const { return storage_.defined(); }
  int64_t storage_offset() const {
    if (__builtin_expect(python_custom_ & kCustomSizes, 0)) {
      return customStorageOffset();
    }
    return storage_offset_;
  }
  /// The address of the first element: the storage's data plus the offset.
  /// Null when there is no data (Meta) or no element. Throws
  /// Error(InvalidArgument) for a tensor with elements but no storage (a
  /// wrapper subclass's, whose data its Python object holds): a kernel
  /// reading it would read through a null pointer.
  void* data() const;

  // ---- Mutation (not synchronized; see the file comment)
  // ----------------------
  /// Sets sizes and the contiguous strides for them. Throws
  /// Error(InvalidArgument) for a negative size, when the number of elements
  /// overflows int64, or when the tensor would not fit in its storage.
  void set_sizes_contiguous(IntArrayRef sizes);
  /// Sets sizes and strides (a view). Throws Error(InvalidArgument) when
  /// their lengths differ, a size or stride is negative, the number of
  /// elements or of storage bytes overflows int64, or the view would not fit
  /// in the storage.
  void set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides);
  /// Throws Error(InvalidArgument) when negative or when the tensor would not
  /// fit in its storage.
  void set_storage_offset(int64_t storage_offset);

  // ---- Autograd hooks (see autograd_meta_interface.h) ---------------------
  /// The autograd state, or null for a tensor autograd never touched.
  AutogradMetaInterface* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaInterface> meta);
  /// The version counter; shared with views. Null only for the undefined
  /// tensor.
  const intrusive_ptr<VersionCounter>& version_counter() const {
    return version_counter_;
  }
  void set_version_counter(intrusive_ptr<VersionCounter> counter);
  uint32_t version() const { return version_counter_->current(); }
  void bump_version() { version_counter_->bump(); }

  /// Takes `src`'s storage, dtype, device, layout, sizes, strides, storage
  /// offset, wrapped-number flag and key set (c10's shallow_copy_from, what
  /// `Tensor.data = src` does), keeping this tensor's version counter,
  /// autograd state, Python object and its Python keys (Python,
  /// PythonTLSSnapshot: a subclass stays one). All or nothing: copies are
  /// made before anything changes. The caller checks that the swap makes
  /// sense (autograd's setData does).
  void shallow_copy_from(const TensorImpl& src);

  // ---- A language binding's object (see py_object_slot.h) ------------------
  /// Where turnout's Python bindings keep a tensor subclass instance made
  /// for this tensor. Precondition for changing it: the GIL is held.
  PyObjectSlot& pyobj_slot() { return pyobj_slot_; }
  const PyObjectSlot& pyobj_slot() const { return pyobj_slot_; }

  /// The metadata a Python tensor subclass answers in its handler rather
  /// than this TensorImpl (torch's dispatch_sizes_strides_policy,
  /// dispatch_device, dispatch_layout): a mask of PythonCustom bits, 0 for
  /// every other tensor. The shape readers above ask the hook that
  /// setPythonMetadataHook installs for the kCustomStrides / kCustomSizes
  /// bits (C++ readers too, as torch 1.13's sizes_custom()); device and
  /// layout are asked by the bindings' Python methods only.
  enum PythonCustom : uint8_t {
    kCustomStrides = 1,  // strides, is_contiguous
    kCustomSizes = 2,    // and sizes, dim, numel, storage_offset
    kCustomDevice = 4,
    kCustomLayout = 8,
  };
  uint8_t python_custom() const { return python_custom_; }
  void set_python_custom(uint8_t mask) {
    checkMutable("set_python_custom()");
    python_custom_ = mask;
  }

  /// A wrapped number (c10's is_wrapped_number): a 0-dim CPU tensor the
  /// Python bindings made from a Python number given for a Tensor argument
  /// (`x * 4` calls mul.Tensor(x, <4>)). Type promotion (resultType) counts
  /// it as a number, not as a tensor, and the bindings give it to a Python
  /// handler as the number again. One byte in existing padding; read only
  /// by the promotion and the bindings, never by the call path.
  bool is_wrapped_number() const { return is_wrapped_number_; }
  /// Precondition (checked): a 0-dim tensor.
  void set_wrapped_number(bool value);

  /// Throws Error(Internal) when an invariant above does not hold.
  void checkInvariants() const;

  /// Releases the answers cache of a python_custom tensor (none for every
  /// other tensor: one null test).
  ~TensorImpl() override {
    if (__builtin_expect(custom_cache_ != nullptr, 0)) freeCustomCache();
  }
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;

 protected:
  struct UndefinedTag {};
  /// The undefined tensor: no storage, no sizes, empty key set.
  explicit TensorImpl(UndefinedTag);

 private:
  // Every mutator starts here: the undefined tensor is shared by all, so it
  // must never change. Throws Error(InvalidArgument).
  void checkMutable(const char* caller) const;
  // The constructors' checks of the layout and the storage's device; the
  // message building out of line, off every new tensor's path.
  void checkLayoutAndStorageDevice() const;
  [[noreturn]] __attribute__((noinline, cold)) void
  throwBadLayoutOrStorageDevice() const;
  // The python_custom() readers: ask the metadata hook, keep the stored
  // value when there is none, when Python dispatch is excluded on this
  // thread or when the handler answers None. Out of line and cold: the
  // inline readers stay one test and one load for every other tensor.
  struct CustomCache;
  __attribute__((noinline, cold)) IntArrayRef customSizes() const;
  __attribute__((noinline, cold)) IntArrayRef customStrides() const;
  __attribute__((noinline, cold)) int64_t customDim() const;
  __attribute__((noinline, cold)) int64_t customNumel() const;
  __attribute__((noinline, cold)) bool customIsContiguous() const;
  __attribute__((noinline, cold)) int64_t customStorageOffset() const;
  __attribute__((noinline, cold)) void freeCustomCache();
  // size(d) (strides false) or stride(d) of a python_custom tensor.
  __attribute__((noinline, cold)) int64_t customSizeOrStride(bool strides,
                                                             int64_t d) const;
  [[noreturn]] __attribute__((noinline, cold)) void throwNotStrided(
      const char* caller) const;
  // data() without a storage: null for no elements, else throws.
  __attribute__((noinline, cold)) void* dataWithoutStorage() const;
  // Keeps `answer` in the cache's sizes (strides false) or strides vector
  // (one per tensor, so the IntArrayRef readers hand out lives as long as
  // the tensor) and returns it. Throws Error(InvalidArgument) when an
  // earlier answer had another length: references to it may still be held.
  IntArrayRef keepAnswer(bool strides, const DimVector& answer) const;
  // strides_ (already one per size): the contiguous strides for sizes_.
  void fillContiguousStrides();
  void refreshNumelAndContiguity();
  int64_t computeNumel() const;
  bool computeContiguous() const;
  // Bytes from the storage's start to the end of the last element (0 when
  // there are no elements or no strides); false when that overflows int64.
  bool storageBytesNeeded(uint64_t* bytes) const;
  // Throws unless every element lies within the storage (when there is one).
  void checkFitsInStorage(const char* caller) const;

  // Read on every call: first after the vtable pointer and the count.
  DispatchKeySet key_set_;
  Storage storage_;
  DimVector sizes_;
  DimVector strides_;
  int64_t storage_offset_ = 0;
  int64_t numel_ = 0;
  size_t itemsize_ = 0;
  ScalarType dtype_;
  Device device_;
  Layout layout_;
  bool is_contiguous_ = true;
  uint8_t python_custom_ = 0;  // in is_contiguous_'s padding
  bool is_wrapped_number_ = false;  // likewise
  intrusive_ptr<VersionCounter> version_counter_;
  std::unique_ptr<AutogradMetaInterface> autograd_meta_;
  // The python_custom() answers handed out as IntArrayRef; null until the
  // first one (always null for a plain tensor). A raw pointer, freed out of
  // line: a std::unique_ptr would take the destructor out of line.
  mutable CustomCache* custom_cache_ = nullptr;
  // Last, so destroyed first: an owned binding object is released while the
  // rest of the tensor is still intact.
  PyObjectSlot pyobj_slot_;
};

/// The one TensorImpl of every undefined Tensor: intrusive_ptr's null value
/// for TensorImpl, so Tensor::key_set() reads an empty set with no null test.
/// Its count is never touched and it is never deleted.
class UndefinedTensorImpl final : public TensorImpl {
 public:
  /// The null value of intrusive_ptr<TensorImpl, UndefinedTensorImpl>.
  static constexpr TensorImpl* singleton() noexcept { return &instance_; }

 private:
  UndefinedTensorImpl() : TensorImpl(UndefinedTag{}) {}
  static UndefinedTensorImpl instance_;
};

/// The metadata a python_custom() tensor's reader asks for (torch 1.13's
/// operator for it in brackets).
enum class PythonMetadata : uint8_t {
  kSizes,          // aten::sym_size
  kStrides,        // aten::sym_stride
  kDim,            // aten::dim
  kNumel,          // aten::sym_numel
  kIsContiguous,   // aten::is_contiguous
  kStorageOffset,  // aten::sym_storage_offset
};

/// Answers `what` for `self` (a python_custom() tensor) into `*out` (the
/// values for kSizes / kStrides, else one value; is_contiguous as 0 / 1) and
/// returns true, or returns false to keep the stored value (no Python
/// dispatch on this thread, or the handler answered None). May throw: the
/// handler's exception reaches the reader's caller.
using PythonMetadataHook = bool (*)(const TensorImpl& self,
                                    PythonMetadata what, DimVector* out);

/// Installs the hook (the Python bindings do, on import); null uninstalls
/// it, and the readers keep the stored values. Precondition: set before any
/// python_custom() tensor exists, never changed while one is being read.
void setPythonMetadataHook(PythonMetadataHook hook);

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CORE_TENSOR_IMPL_H_
