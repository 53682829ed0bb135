#include "kernels/copy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_join.h"
#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/aten_tags.h"
#include "kernels/factory_utils.h"
#include "kernels/loops.h"
#include "kernels/mem_overlap.h"
#include "kernels/shape_utils.h"
#include "kernels/strided_walk.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace {

// ---- Checks shared by the CPU and Meta kernels ------------------------------

void checkStrided(const Tensor& t, const char* op, const char* what) {
  TURNOUT_CHECK(t.defined(), ErrorKind::InvalidArgument, op, "(): ", what,
                " is an undefined tensor");
  TURNOUT_CHECK(t.layout() == Layout::Strided, ErrorKind::NotImplemented, op,
                "(): ", what, " has layout ", t.layout(),
                "; only strided tensors are supported");
}

// Throws PyTorch's broadcasting messages unless `src` broadcasts to
// `self`'s shape.
void checkSrcBroadcasts(const Tensor& self, const Tensor& src, const char* op) {
  DimVector shape = inferBroadcastSize(self.sizes(), src.sizes());
  TURNOUT_CHECK(
      IntArrayRef(shape) == self.sizes(), ErrorKind::InvalidArgument, op,
      "(): output with shape [", absl::StrJoin(self.sizes(), ", "),
      "] doesn't match the broadcast shape [", absl::StrJoin(shape, ", "), "]");
}

// The fill value as T, or PyTorch's overflow message.
template <class T>
T fillValue(const Scalar& value, ScalarType dtype) {
  TURNOUT_CHECK(!(std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                  value.isFloatingPoint() && !std::isfinite(value.toDouble())),
                ErrorKind::InvalidArgument, "fill_(): value ", value.str(),
                " cannot be converted to type ", dtype, " without overflow");
  if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
    // As torch 1.13: a negative integer down to -max wraps (-1 fills a
    // uint8 tensor with 255); a negative fraction is refused below.
    if (value.isIntegral(/*include_bool=*/false) && value.toLong() < 0 &&
        value.toLong() >=
            -static_cast<int64_t>(std::numeric_limits<T>::max())) {
      return static_cast<T>(value.toLong());
    }
  }
  try {
    return value.to<T>();
  } catch (const Error&) {
    TURNOUT_CHECK(false, ErrorKind::InvalidArgument, "fill_(): value ",
                  value.str(), " cannot be converted to type ", dtype,
                  " without overflow");
  }
  __builtin_unreachable();
}

// ---- Kernels
// ------------------------------------------------------------------

Tensor& copy_cpu(Tensor& self, const Tensor& src, bool non_blocking) {
  checkStrided(self, "copy_", "self");
  checkStrided(src, "copy_", "src");
  TURNOUT_CHECK(self.device().is_cpu() && src.device().is_cpu(),
                ErrorKind::NotImplemented,
                "copy_(): the CPU kernel copies "
                "between CPU tensors only, got a copy from ",
                src.device(), " to ", self.device(),
                "; register a copy_ kernel for the other backend");
  checkSrcBroadcasts(self, src, "copy_");
  if (self.numel() == 0 || self.is_same(src)) return self;
  checkNoInternalOverlap(self, "copy_");
  switch (memOverlap(self, src)) {
    case MemOverlap::None:
      break;
    case MemOverlap::Full:
      if (self.scalar_type() == src.scalar_type()) return self;  // the same
      break;
    case MemOverlap::Partial:
      checkNoPartialOverlap(self, src, "copy_");  // throws, as PyTorch
      break;
    case MemOverlap::TooHard: {
      if (self.storage_offset() == src.storage_offset() &&
          self.sizes() == src.sizes() && self.strides() == src.strides() &&
          self.scalar_type() == src.scalar_type()) {
        return self;  // the same elements
      }
      // Shared memory in layouts with gaps: go through a temporary, so that
      // no element is overwritten before it is read.
      Tensor tmp = emptyTensor(src.sizes(), src.scalar_type(), src.device());
      copyCast(tmp, src);
      copyCast(self, tmp);
      return self;
    }
  }
  copyCast(self, src);
  return self;
}

Tensor& copy_meta(Tensor& self, const Tensor& src, bool non_blocking) {
  checkStrided(self, "copy_", "self");
  checkStrided(src, "copy_", "src");
  TURNOUT_CHECK(self.is_meta() || !src.is_meta(), ErrorKind::NotImplemented,
                "copy_(): Cannot copy out of meta tensor; no data! (to a ",
                self.device(), " tensor)");
  checkSrcBroadcasts(self, src, "copy_");
  if (self.numel() != 0 && !self.is_same(src)) {
    checkNoInternalOverlap(self, "copy_");
    checkNoPartialOverlap(self, src, "copy_");
  }
  return self;
}

Tensor& fill_cpu(Tensor& self, const Scalar& value) {
  checkStrided(self, "fill_", "self");
  visitDtype(self.scalar_type(), "fill_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = fillValue<T>(value, self.scalar_type());
    if (self.numel() == 0) return;
    T* data = static_cast<T*>(self.data_ptr());
    if (self.is_contiguous()) {
      std::fill_n(data, self.numel(), v);
    } else {
      forEachOffset(self.sizes(), self.strides(), self.strides(),
                    [&](int64_t o, int64_t) { data[o] = v; });
    }
  });
  return self;
}

Tensor& fill_meta(Tensor& self, const Scalar& value) {
  checkStrided(self, "fill_", "self");
  visitDtype(self.scalar_type(), "fill_", [&](auto tag) {
    fillValue<typename decltype(tag)::type>(value, self.scalar_type());
  });
  return self;
}

// CompositeExplicitAutograd: allocate on self's device, then copy_.
Tensor clone_composite(const Tensor& self,
                       std::optional<MemoryFormat> memory_format) {
  checkStrided(self, "clone", "self");
  Tensor out = emptyStridedTensor(self.sizes(),
                                  stridesLike(self, memory_format, "clone"),
                                  self.scalar_type(), self.device(), "clone");
  copy_(out, self);
  return out;
}

TypedOperatorHandle<Tensor(const Tensor&, std::optional<Device>)>
pinMemoryOp() {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::_pin_memory", "")
          .typed<Tensor(const Tensor&, std::optional<Device>)>();
  return op;
}

Tensor to_copy_composite(const Tensor& self, std::optional<ScalarType> dtype,
                         std::optional<Layout> layout,
                         std::optional<Device> device,
                         std::optional<bool> pin_memory, bool non_blocking,
                         std::optional<MemoryFormat> memory_format) {
  checkStrided(self, "_to_copy", "self");
  TURNOUT_CHECK(layout.value_or(Layout::Strided) == Layout::Strided,
                ErrorKind::NotImplemented, "_to_copy(): conversion to layout ",
                *layout, " is not supported; only strided tensors are");
  const Device to_device = device.value_or(self.device());
  TURNOUT_CHECK(!pin_memory.value_or(false) || to_device.is_cpu(),
                ErrorKind::InvalidArgument,
                "_to_copy(): pin_memory=True applies to CPU results only, got "
                "device ",
                to_device);
  Tensor out = emptyStridedTensor(
      self.sizes(), stridesLike(self, memory_format, "_to_copy"),
      dtype.value_or(self.scalar_type()), to_device, "_to_copy");
  if (pin_memory.value_or(false)) out = pinMemoryOp().call(out, std::nullopt);
  copy_(out, self, non_blocking);
  return out;
}

// ---- Pinned (page-locked) host memory
// -----------------------------------------------------------------
// is_pinned and _pin_memory reach the kernel of the accelerator named by
// `device` (default CUDA) through BackendSelect, as in c10: a CPU tensor's
// own keys say nothing about which accelerator pinned it. The CUDA kernels
// are in kernels/cuda/copy.cc; without them, is_pinned is false and
// _pin_memory fails naming the missing CUDA kernel.

DispatchKeySet pinnedBackendKeys(std::optional<Device> device) {
  return backendSelectKeySet(kFloat, Layout::Strided,
                             device.value_or(Device(DeviceType::CUDA)));
}

TypedOperatorHandle<bool(const Tensor&, std::optional<Device>)> isPinnedOp() {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::is_pinned", "")
          .typed<bool(const Tensor&, std::optional<Device>)>();
  return op;
}

bool is_pinned_bs(DispatchKeySet, const Tensor& self,
                  std::optional<Device> device) {
  return isPinnedOp().redispatch(pinnedBackendKeys(device), self, device);
}

Tensor pin_memory_bs(DispatchKeySet, const Tensor& self,
                     std::optional<Device> device) {
  return pinMemoryOp().redispatch(pinnedBackendKeys(device), self, device);
}

// Memory no accelerator's kernel claims is not pinned.
bool is_pinned_default(const Tensor& self, std::optional<Device> device) {
  return false;
}

Tensor pin_memory_composite(const Tensor& self, std::optional<Device> device) {
  if (isPinnedOp().call(self, device)) return self;
  return pinMemoryOp().call(self, device);
}

bool hasMemoryFormat(const Tensor& self,
                     std::optional<MemoryFormat> memory_format) {
  return !memory_format.has_value() ||
         *memory_format == MemoryFormat::Preserve ||
         isContiguousAs(self, *memory_format);
}

// CompositeImplicitAutograd: `self` itself when nothing would change.
Tensor to_dtype(const Tensor& self, ScalarType dtype, bool non_blocking,
                bool copy, std::optional<MemoryFormat> memory_format) {
  if (!copy && self.scalar_type() == dtype &&
      hasMemoryFormat(self, memory_format)) {
    return self;
  }
  return _to_copy(self, dtype, std::nullopt, std::nullopt, std::nullopt,
                  non_blocking, memory_format);
}

Tensor to_device(const Tensor& self, Device device, ScalarType dtype,
                 bool non_blocking, bool copy,
                 std::optional<MemoryFormat> memory_format) {
  const Device current = self.device();
  const bool same_device =
      current.type() == device.type() &&
      (!device.has_index() || !current.has_index() || current == device);
  if (!copy && same_device && self.scalar_type() == dtype &&
      hasMemoryFormat(self, memory_format)) {
    return self;
  }
  return _to_copy(self, dtype, std::nullopt, device, std::nullopt, non_blocking,
                  memory_format);
}

}  // namespace

// ---- Front end
// ------------------------------------------------------------------

Tensor& copy_(Tensor& self, const Tensor& src, bool non_blocking) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::copy_", "")
                             .typed<Tensor&(Tensor&, const Tensor&, bool)>();
  return op.call(self, src, non_blocking);
}

Tensor copy_(const Tensor& self, const Tensor& src, bool non_blocking) {
  Tensor handle = self;
  copy_(handle, src, non_blocking);
  return handle;
}

Tensor& fill_(Tensor& self, const Scalar& value) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::fill_", "Scalar")
                             .typed<Tensor&(Tensor&, const Scalar&)>();
  return op.call(self, value);
}

Tensor fill_(const Tensor& self, const Scalar& value) {
  Tensor handle = self;
  fill_(handle, value);
  return handle;
}

Tensor clone(const Tensor& self, std::optional<MemoryFormat> memory_format) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::clone", "")
          .typed<Tensor(const Tensor&, std::optional<MemoryFormat>)>();
  return op.call(self, memory_format);
}

Tensor _to_copy(const Tensor& self, std::optional<ScalarType> dtype,
                std::optional<Layout> layout, std::optional<Device> device,
                std::optional<bool> pin_memory, bool non_blocking,
                std::optional<MemoryFormat> memory_format) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::_to_copy", "")
          .typed<Tensor(const Tensor&, std::optional<ScalarType>,
                        std::optional<Layout>, std::optional<Device>,
                        std::optional<bool>, bool,
                        std::optional<MemoryFormat>)>();
  return op.call(self, dtype, layout, device, pin_memory, non_blocking,
                 memory_format);
}

Tensor to(const Tensor& self, ScalarType dtype, bool non_blocking, bool copy,
          std::optional<MemoryFormat> memory_format) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::to", "dtype")
          .typed<Tensor(const Tensor&, ScalarType, bool, bool,
                        std::optional<MemoryFormat>)>();
  return op.call(self, dtype, non_blocking, copy, memory_format);
}

Tensor to(const Tensor& self, Device device, ScalarType dtype,
          bool non_blocking, bool copy,
          std::optional<MemoryFormat> memory_format) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::to", "device")
          .typed<Tensor(const Tensor&, Device, ScalarType, bool, bool,
                        std::optional<MemoryFormat>)>();
  return op.call(self, device, dtype, non_blocking, copy, memory_format);
}

Tensor to(const Tensor& self, Device device, bool non_blocking, bool copy) {
  return to(self, device, self.scalar_type(), non_blocking, copy);
}

}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);  // torch's tags (kernels/aten_tags.h)
  m.def(
      "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> "
      "Tensor(a!)");
  m.def("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)");
  m.def("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor");
  m.def(
      "_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? "
      "layout=None, Device? device=None, bool? pin_memory=None, bool "
      "non_blocking=False, MemoryFormat? memory_format=None) -> Tensor");
  m.def("is_pinned(Tensor self, Device? device=None) -> bool");
  m.def("_pin_memory(Tensor self, Device? device=None) -> Tensor");
  m.def("pin_memory(Tensor(a) self, Device? device=None) -> Tensor(a)");
  m.def(
      "to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, "
      "bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)");
  m.def(
      "to.device(Tensor(a) self, Device device, ScalarType dtype, bool "
      "non_blocking=False, bool copy=False, MemoryFormat? "
      "memory_format=None) -> Tensor(a)");
}

TURNOUT_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("copy_", TURNOUT_FN(turnout::copy_cpu));
  m.impl("fill_.Scalar", TURNOUT_FN(turnout::fill_cpu));
}

TURNOUT_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("copy_", TURNOUT_FN(turnout::copy_meta));
  m.impl("fill_.Scalar", TURNOUT_FN(turnout::fill_meta));
}

TURNOUT_LIBRARY_IMPL(aten, BackendSelect, m) {
  m.impl("is_pinned", TURNOUT_FN(turnout::is_pinned_bs));
  m.impl("_pin_memory", TURNOUT_FN(turnout::pin_memory_bs));
}

TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("clone", TURNOUT_FN(turnout::clone_composite));
  m.impl("is_pinned", TURNOUT_FN(turnout::is_pinned_default));
  m.impl("_to_copy", TURNOUT_FN(turnout::to_copy_composite));
}

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  m.impl("to.dtype", TURNOUT_FN(turnout::to_dtype));
  m.impl("pin_memory", TURNOUT_FN(turnout::pin_memory_composite));
  m.impl("to.device", TURNOUT_FN(turnout::to_device));
}
