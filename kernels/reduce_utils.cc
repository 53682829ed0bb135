#include "kernels/reduce_utils.h"

#include <algorithm>
#include <sstream>

#include "dispatcher/core/allocator.h"
#include "dispatcher/core/compute_dispatch_key.h"
#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/core/size_arithmetic.h"
#include "kernels/factory_utils.h"
#include "kernels/loops.h"
#include "kernels/output_layout.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace reduce_internal {

std::string sizesToString(IntArrayRef sizes) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < sizes.size(); ++i) s << (i ? ", " : "") << sizes[i];
  s << "]";
  return s.str();
}

namespace {

// A 1-D Byte tensor over `nbytes` of memory it does not own on `device`.
Tensor bytesAt(void* data, size_t nbytes, Device device) {
  Storage storage(make_intrusive<StorageImpl>(nbytes, DataPtr(data, device),
                                              /*allocator=*/nullptr,
                                              /*resizable=*/false));
  Tensor t(make_intrusive<TensorImpl, UndefinedTensorImpl>(
      std::move(storage), ScalarType::Byte, device));
  t.unsafeGetTensorImpl()->set_sizes_contiguous({static_cast<int64_t>(nbytes)});
  return t;
}

// Copies `nbytes` from `src` to `dst`, both on `device`, with the device's
// copy_ kernel (memcpy is right for host memory only: a CUDA storage lives
// in device memory). The call goes straight to the backend kernel, below
// autograd, tracing and Python modes: moving a storage's bytes is not an
// operation of the program.
void copyBytes(void* dst, const void* src, size_t nbytes, Device device) {
  static const auto copy = Dispatcher::singleton()
                               .findSchemaOrThrow("aten::copy_", "")
                               .typed<Tensor&(Tensor&, const Tensor&, bool)>();
  Tensor to = bytesAt(dst, nbytes, device);
  Tensor from = bytesAt(const_cast<void*>(src), nbytes, device);
  copy.redispatch(DispatchKeySet(computeDispatchKey(ScalarType::Byte,
                                                    Layout::Strided, device)),
                  to, from, /*non_blocking=*/false);
}

}  // namespace

namespace {

// Gives `out` `sizes` and `strides` (empty: contiguous ones), growing its
// storage when needed; all checks first, so a throw leaves `out` as it was.
void regrow(const Tensor& out, IntArrayRef sizes, IntArrayRef strides,
            const char* op);

// resizeOutput's body; `strides` empty: contiguous ones.
void resizeTo(const Tensor& out, IntArrayRef sizes, IntArrayRef strides,
              const char* op) {
  if (out.sizes() == sizes) return;
  TURNOUT_INTERNAL_ASSERT(strides.empty() || strides.size() == sizes.size(),
                          op, ": resizeOutput was given ", sizes.size(),
                          " sizes but ", strides.size(), " strides");
  if (out.numel() != 0) {
    TURNOUT_WARN(op,
                 ": An output with one or more elements was resized "
                 "since it had shape ",
                 sizesToString(out.sizes()),
                 ", which does not match the required output shape ",
                 sizesToString(sizes),
                 ". This behavior is deprecated; "
                 "reuse an out tensor only when it already has the right "
                 "shape, or pass one with zero elements.");
  }
  regrow(out, sizes, strides, op);
}

void regrow(const Tensor& out, IntArrayRef sizes, IntArrayRef strides,
            const char* op) {
  TensorImpl* impl = out.unsafeGetTensorImpl();
  const Storage& storage = out.storage();
  TURNOUT_CHECK(storage.defined(), ErrorKind::InvalidArgument, op,
                ": cannot resize an out tensor without storage");
  // Dense strides reach exactly numel elements; any others, up to one past
  // their furthest element.
  const size_t needed =
      strides.empty()
          ? static_cast<size_t>(numelOf(sizes) + out.storage_offset()) *
                out.itemsize()
          : static_cast<size_t>(checkedStorageBytes(
                sizes, strides, out.storage_offset(), out.itemsize(), op));
  if (needed > storage.nbytes()) {
    TURNOUT_CHECK(storage.resizable() && storage.allocator() != nullptr,
                  ErrorKind::InvalidArgument, op,
                  ": Trying to resize storage that is not resizable (out "
                  "has shape ",
                  sizesToString(out.sizes()), ", needs ", sizesToString(sizes),
                  ")");
    StorageImpl* s = storage.unsafeGetStorageImpl();
    DataPtr fresh = s->allocator()->allocate(needed);
    if (s->data() != nullptr && fresh.get() != nullptr && s->nbytes() > 0) {
      copyBytes(fresh.get(), s->data(), s->nbytes(), storage.device());
    }
    // Only now, the copy done: a copy that throws leaves `out` as it was.
    s->set_data_ptr(std::move(fresh));
    s->set_nbytes(needed);
  }
  if (strides.empty()) {
    impl->set_sizes_contiguous(sizes);
  } else {
    impl->set_sizes_and_strides(sizes, strides);
  }
}

}  // namespace

void resizeTensor(const Tensor& self, IntArrayRef sizes,
                  std::optional<MemoryFormat> memory_format) {
  constexpr const char* kOp = "resize_";
  TURNOUT_CHECK(self.defined(), ErrorKind::InvalidArgument,
                "resize_(): expected a defined tensor");
  for (int64_t s : sizes) {
    TURNOUT_CHECK(s >= 0, ErrorKind::InvalidArgument,
                  "resize_(): negative size ", s, " in ",
                  sizesToString(sizes), "; sizes must be >= 0");
  }
  TURNOUT_CHECK(memory_format != MemoryFormat::Preserve,
                ErrorKind::InvalidArgument,
                "resize_(): memory_format=preserve_format is not supported "
                "(there is no other tensor to preserve the layout of); pass "
                "contiguous_format or channels_last");
  if (!memory_format && self.sizes() == sizes) return;
  const DimVector strides =
      memory_format && *memory_format != MemoryFormat::Contiguous
          ? stridesForMemoryFormat(sizes, *memory_format, kOp)
          : DimVector();
  regrow(self, sizes, strides, kOp);
}

void resizeOutput(const Tensor& out, IntArrayRef sizes, const char* op) {
  resizeTo(out, sizes, {}, op);
}

void resizeOutput(const Tensor& out, IntArrayRef sizes, IntArrayRef strides,
                  const char* op) {
  resizeTo(out, sizes, strides, op);
}

void resizeElementwiseOutput(const Tensor& out, IntArrayRef sizes,
                             std::initializer_list<const Tensor*> inputs,
                             const char* op) {
  if (out.sizes() == sizes) return;  // keeps its own strides
  if (elementwiseOutputIsContiguous(sizes, inputs)) {
    resizeTo(out, sizes, {}, op);
    return;
  }
  const DimVector strides = elementwiseOutputStrides(
      sizes, absl::MakeConstSpan(inputs.begin(), inputs.size()));
  resizeTo(out, sizes, strides, op);
}

void checkSameDevice(const char* op, const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) return;
  TURNOUT_CHECK(a.device() == b.device(), ErrorKind::InvalidArgument, op,
                ": Expected all tensors to be on the same device, but found "
                "at least two devices, ",
                a.device(), " and ", b.device(), "!");
}

Tensor& copyToOut(const char* op, const Tensor& result, Tensor& out) {
  checkSameDevice(op, result, out);
  TURNOUT_CHECK(out.scalar_type() == result.scalar_type(),
                ErrorKind::InvalidArgument, op,
                ": Expected out tensor to have dtype ", result.scalar_type(),
                ", but got ", out.scalar_type(), " instead");
  resizeOutput(out, result.sizes(), op);
  copyCast(out, result);
  return out;
}

}  // namespace reduce_internal
}  // namespace turnout
