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
// The operator methods (x.add(y), x.sum(), x.mm(w), x.backward(), ...) are
// declared here and defined in kernels/tensor_methods.cc: link //kernels:ops
// to call them.
//
// Thread safety: as intrusive_ptr (distinct Tensor objects sharing an impl
// may be used from any threads) and as TensorImpl (its mutators are not
// synchronized).
#ifndef TURNOUT_DISPATCHER_CORE_TENSOR_H_
#define TURNOUT_DISPATCHER_CORE_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>

#include "dispatcher/core/device.h"
#include "dispatcher/core/dispatch_key_set.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/intrusive_ptr.h"
#include "dispatcher/core/layout.h"
#include "dispatcher/core/memory_format.h"
#include "dispatcher/core/scalar.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/storage.h"
#include "dispatcher/core/tensor_impl.h"

namespace turnout {

namespace autograd {
// Defined in kernels/autograd/node.h; named here only as grad_fn()'s type.
class Node;
}  // namespace autograd

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

  // ---- Operator methods
  // --------------------------------------------------------
  // PyTorch's Tensor methods for the reference operators (namespace aten):
  //
  //   Tensor y = x.mm(w).add(b).relu();
  //   Tensor s = y.sum({1}, /*keepdim=*/true);
  //   x.add_(y, /*alpha=*/2);
  //   w.requires_grad_();  y.sum().backward();  w.grad();
  //
  // Each forwards to the free function of the same name in kernels/ (see
  // kernels/ops.h for the semantics, defaults and errors), so it calls
  // through the dispatcher with a cached typed handle. They are defined in
  // kernels/tensor_methods.cc: a binary that calls them must link
  // //kernels:ops (dispatcher/ knows no operator; an unlinked call fails at
  // link time, naming the method). In-place methods return *this.

  // Arithmetic (aten::add, sub, mul, div and their in-place variants).
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(const Scalar& other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(const Scalar& other) const;
  const Tensor& add_(const Tensor& other, const Scalar& alpha = 1) const;
  const Tensor& add_(const Scalar& other, const Scalar& alpha = 1) const;
  const Tensor& sub_(const Tensor& other, const Scalar& alpha = 1) const;
  const Tensor& sub_(const Scalar& other, const Scalar& alpha = 1) const;
  const Tensor& mul_(const Tensor& other) const;
  const Tensor& mul_(const Scalar& other) const;
  const Tensor& div_(const Tensor& other) const;
  const Tensor& div_(const Scalar& other) const;

  // Unary (aten::neg, abs, exp, ..., pow.Tensor_Scalar, clamp).
  Tensor neg() const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor pow(const Scalar& exponent) const;
  Tensor clamp(const std::optional<Scalar>& min,
               const std::optional<Scalar>& max = std::nullopt) const;

  // Comparison (aten::eq.Tensor, eq.Scalar, ...): Bool tensors.
  Tensor eq(const Tensor& other) const;
  Tensor eq(const Scalar& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor ne(const Scalar& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor lt(const Scalar& other) const;
  Tensor le(const Tensor& other) const;
  Tensor le(const Scalar& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor gt(const Scalar& other) const;
  Tensor ge(const Tensor& other) const;
  Tensor ge(const Scalar& other) const;

  // Reductions and softmax (aten::sum, sum.dim_IntList, mean, mean.dim,
  // amax, amin, argmax, softmax.int, log_softmax.int). An empty dim list
  // reduces every dimension; the braced-list overloads keep `x.sum({})`
  // unambiguous.
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dim, bool keepdim = false,
             std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(std::initializer_list<int64_t> dim, bool keepdim = false,
             std::optional<ScalarType> dtype = std::nullopt) const {
    return sum(IntArrayRef(dim), keepdim, dtype);
  }
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dim, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::initializer_list<int64_t> dim, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt) const {
    return mean(IntArrayRef(dim), keepdim, dtype);
  }
  Tensor amax(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt,
                bool keepdim = false) const;
  Tensor softmax(int64_t dim,
                 std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim,
                     std::optional<ScalarType> dtype = std::nullopt) const;

  // Linear algebra (aten::mm, bmm, matmul).
  Tensor mm(const Tensor& mat2) const;
  Tensor bmm(const Tensor& mat2) const;
  Tensor matmul(const Tensor& other) const;

  // Shape and memory. view, t, transpose, permute, expand, squeeze,
  // unsqueeze, slice, select and detach return views sharing storage.
  Tensor view(IntArrayRef size) const;
  Tensor reshape(IntArrayRef shape) const;
  Tensor t() const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor expand(IntArrayRef size, bool implicit = false) const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt,
               int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor contiguous(MemoryFormat memory_format = MemoryFormat::Contiguous) const;
  Tensor clone(std::optional<MemoryFormat> memory_format = std::nullopt) const;
  const Tensor& copy_(const Tensor& src, bool non_blocking = false) const;
  const Tensor& fill_(const Scalar& value) const;
  /// aten::to.dtype, to.device: `*this` itself when nothing would change and
  /// `copy` is false.
  Tensor to(ScalarType dtype, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(Device device, ScalarType dtype, bool non_blocking = false,
            bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(Device device, bool non_blocking = false, bool copy = false) const;
  Tensor detach() const;
  /// aten::item: the value of a one-element tensor.
  Scalar item() const;
  template <class T>
  T item() const {
    return item().to<T>();
  }

  // Autograd (kernels/autograd/autograd_meta.h, engine.h).
  /// True for a leaf that requires grad and for the output of a recorded
  /// operation.
  bool requires_grad() const;
  /// Makes this leaf require (or not) gradients. Throws InvalidArgument for
  /// a non-floating dtype or a non-leaf. Returns *this.
  const Tensor& requires_grad_(bool flag = true) const;
  /// The gradient accumulated by backward(); undefined before any.
  Tensor grad() const;
  /// True when no recorded operation made this tensor.
  bool is_leaf() const;
  /// The backward node that made this tensor, or null for a leaf (its type
  /// is complete in kernels/autograd/node.h).
  std::shared_ptr<autograd::Node> grad_fn() const;
  /// Accumulates d(this)/d(leaf) into every leaf's grad(). Without
  /// `gradient`, this must have one element.
  void backward(const Tensor& gradient = Tensor()) const;

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

/// A new contiguous Strided tensor of `sizes` (checked: non-negative, with
/// nbytes = numel * elementSize(dtype)) over a resizable storage of `nbytes`
/// from `allocator`, on `device` (the allocator's), with exactly `key_set`;
/// its TensorImpl, StorageImpl and VersionCounter in one block (each still
/// destroyed with its last reference; the block freed with the last of
/// them). On the CPU the block itself comes from `allocator`, and data of
/// at most 64 bytes lives in it (64-byte aligned) until the storage grows,
/// when it moves to memory from `allocator`. The path of every new kernel
/// result on the CPU.
Tensor makeContiguousTensor(IntArrayRef sizes, size_t nbytes,
                            Allocator* allocator, ScalarType dtype,
                            Device device, DispatchKeySet key_set);

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

#endif  // TURNOUT_DISPATCHER_CORE_TENSOR_H_
