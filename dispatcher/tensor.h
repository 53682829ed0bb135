// Tensor: a counted handle to a TensorImpl, the value that flows through
// operator calls. Copying one is one atomic increment; moving one is free.
//
//   Tensor t = detail::makeEmptyTensor({2, 3}, ScalarType::Float,
//                                      Device(DeviceType::CPU));
//   t.sizes();       // [2, 3]
//   t.key_set();     // {CPU, ADInplaceOrView, AutogradCPU}
//   t.data_ptr<float>()[0] = 1.0f;
//   std::cout << t;  // Tensor(sizes=[2, 3], dtype=Float, device=cpu)
//
// An undefined Tensor (default-constructed) points at the shared
// UndefinedTensorImpl: key_set() is empty and defined() is false; the other
// accessors throw Error(InvalidArgument).
//
// There are no operators here; the operator library (kernels/) comes later.
//
// Thread safety: as intrusive_ptr (distinct Tensor objects sharing an impl
// may be used from any threads) and as TensorImpl (its mutators are not
// synchronized).
#ifndef TURNOUT_DISPATCHER_TENSOR_H_
#define TURNOUT_DISPATCHER_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>

#include "dispatcher/device.h"
#include "dispatcher/dispatch_key_set.h"
#include "dispatcher/error.h"
#include "dispatcher/intrusive_ptr.h"
#include "dispatcher/layout.h"
#include "dispatcher/scalar_type.h"
#include "dispatcher/storage.h"
#include "dispatcher/tensor_impl.h"

namespace turnout {

class Tensor {
 public:
  using ImplPtr = intrusive_ptr<TensorImpl, UndefinedTensorImpl>;

  /// Undefined.
  Tensor() = default;
  /// Takes `impl` (a null ImplPtr gives an undefined Tensor).
  explicit Tensor(ImplPtr impl) noexcept : impl_(std::move(impl)) {}
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(const Tensor&) = default;
  Tensor& operator=(Tensor&&) noexcept = default;

  // ---- Identity and ownership
  // -------------------------------------------------
  bool defined() const noexcept { return impl_.defined(); }
  /// Makes this undefined.
  void reset() noexcept { impl_.reset(); }
  /// Number of Tensors (and IValues) sharing the impl; 0 if undefined.
  uint64_t use_count() const noexcept { return impl_.use_count(); }
  /// True when both share one impl (two undefined Tensors are the same).
  bool is_same(const Tensor& other) const noexcept {
    return impl_ == other.impl_;
  }
  /// The impl, without a new reference (UndefinedTensorImpl::singleton() if
  /// undefined).
  TensorImpl* unsafeGetTensorImpl() const noexcept { return impl_.get(); }
  /// Gives up this Tensor's reference as a raw pointer; take it back with
  /// unsafeReclaimFromRaw. Leaves this undefined.
  TensorImpl* unsafeReleaseTensorImpl() noexcept { return impl_.release(); }
  /// The inverse of unsafeReleaseTensorImpl (no increment).
  static Tensor unsafeReclaimFromRaw(TensorImpl* owning) noexcept {
    return Tensor(ImplPtr::reclaim(owning));
  }
  const ImplPtr& getIntrusivePtr() const noexcept { return impl_; }

  // ---- Dispatch
  // ----------------------------------------------------------------
  /// The keys the dispatcher sees; empty when undefined. One load, no branch.
  DispatchKeySet key_set() const noexcept { return impl_->key_set(); }

  // ---- Shape
  // -------------------------------------------------------------------
  IntArrayRef sizes() const { return impl("sizes").sizes(); }
  /// Throws Error(NotImplemented) for a layout other than Strided.
  IntArrayRef strides() const { return impl("strides").strides(); }
  /// Negative `d` counts from the end; Error(Index) when out of range.
  int64_t size(int64_t d) const { return impl("size").size(d); }
  int64_t stride(int64_t d) const { return impl("stride").stride(d); }
  int64_t dim() const { return impl("dim").dim(); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return impl("numel").numel(); }
  bool is_contiguous() const { return impl("is_contiguous").is_contiguous(); }

  // ---- Element type, placement
  // -------------------------------------------------
  ScalarType scalar_type() const { return impl("scalar_type").dtype(); }
  ScalarType dtype() const { return impl("dtype").dtype(); }
  size_t itemsize() const { return impl("itemsize").itemsize(); }
  size_t element_size() const { return itemsize(); }
  Device device() const { return impl("device").device(); }
  Layout layout() const { return impl("layout").layout(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_meta() const { return device().is_meta(); }
  bool is_sparse() const { return layout() == Layout::Sparse; }

  // ---- Memory
  // ------------------------------------------------------------------
  /// Undefined for layouts without storage.
  const Storage& storage() const { return impl("storage").storage(); }
  bool has_storage() const { return impl("has_storage").has_storage(); }
  int64_t storage_offset() const {
    return impl("storage_offset").storage_offset();
  }
  /// The first element's address; null without data (Meta, no storage).
  void* data_ptr() const { return impl("data_ptr").data(); }
  /// The same, typed. Throws Error(Type) unless T is the dtype's C++ type
  /// (float for Float, int64_t for Long, Half for Half, ...).
  template <class T>
  T* data_ptr() const;

  /// "Tensor(sizes=[2, 3], dtype=Float, device=cpu)"; a layout other than
  /// Strided is added as ", layout=Sparse"; "Tensor(undefined)".
  std::string toString() const;

 private:
  // The impl, checked to be defined: every accessor but key_set() goes here.
  const TensorImpl& impl(const char* caller) const {
    if (__builtin_expect(!defined(), 0)) throwUndefined(caller);
    return *impl_;
  }
  [[noreturn]] static void throwUndefined(const char* caller);
  [[noreturn]] void throwDataPtrType(ScalarType requested) const;

  ImplPtr impl_;
};

static_assert(sizeof(Tensor) == sizeof(void*), "a Tensor is one pointer");

std::ostream& operator<<(std::ostream& out, const Tensor& t);

namespace detail {

/// A new tensor of `sizes` with contiguous strides, uninitialized memory
/// from getAllocator(device.type()) (no memory for a layout other than
/// Strided), and the key set TensorImpl computes. The low-level factory
/// until the operator library provides empty(). Throws Error for a negative
/// size, an Undefined dtype, a layout unsupported on the device, or a device
/// type without an allocator.
Tensor makeEmptyTensor(IntArrayRef sizes, ScalarType dtype, Device device,
                       Layout layout = Layout::Strided);

/// A tensor without storage whose key set is exactly `key_set`: for tests
/// of dispatch that need arguments with chosen keys and no memory.
Tensor makeTensorWithKeySet(DispatchKeySet key_set, IntArrayRef sizes = {},
                            ScalarType dtype = ScalarType::Float,
                            Device device = Device(DeviceType::CPU));

}  // namespace detail

// Implementation details.

template <class T>
T* Tensor::data_ptr() const {
  constexpr ScalarType kRequested =
      CppTypeToScalarType<std::remove_const_t<T>>::value;
  if (__builtin_expect(impl("data_ptr").dtype() != kRequested, 0)) {
    throwDataPtrType(kRequested);
  }
  return static_cast<T*>(impl_->data());
}

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_TENSOR_H_
