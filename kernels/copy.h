// Copy and conversion operators of namespace aten, and their C++ front end:
// copy_, fill_.Scalar, clone, _to_copy, to.dtype, to.device.
//
//   Tensor x = zeros({2, 3});
//   fill_(x, 1.5);
//   Tensor y = to(x, kLong);                 // a converted copy
//   Tensor m = to(x, Device("meta"));        // sizes and dtype, no data
//   copy_(x, y.t().t());                     // converts, broadcasts, strided
//
// Dispatch, as in PyTorch: copy_ and fill_ have CPU and Meta kernels;
// clone and _to_copy are CompositeExplicitAutograd (allocate on the target
// device, then copy_), so they work on any backend that has copy_; to.dtype
// and to.device are CompositeImplicitAutograd and return `self` itself when
// nothing would change and `copy` is false.
//
// copy_ converts between dtypes, broadcasts `src` to `self`, handles strided
// and overlapping operands, and copies CPU to CPU; a copy out of a meta
// tensor fails ("no data"), and a device without a copy_ kernel fails in the
// dispatcher, naming the operator and the key.
#ifndef TURNOUT_KERNELS_COPY_H_
#define TURNOUT_KERNELS_COPY_H_

#include <optional>

#include "dispatcher/core/device.h"
#include "dispatcher/core/layout.h"
#include "dispatcher/core/memory_format.h"
#include "dispatcher/core/scalar.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"

namespace turnout {

/// aten::copy_: copies `src` (broadcast to self's shape, converted to
/// self's dtype) into `self`; returns `self`.
Tensor& copy_(Tensor& self, const Tensor& src, bool non_blocking = false);
/// The same for a `self` that is a temporary or const handle (e.g. a view):
/// returns a handle to it.
Tensor copy_(const Tensor& self, const Tensor& src, bool non_blocking = false);

/// aten::fill_.Scalar: every element of `self` becomes `value`. Throws
/// InvalidArgument when `value` does not fit self's dtype.
Tensor& fill_(Tensor& self, const Scalar& value);
Tensor fill_(const Tensor& self, const Scalar& value);

/// aten::clone: a new tensor with self's values; memory_format nullopt or
/// Preserve keeps self's strides when they are dense.
Tensor clone(const Tensor& self,
             std::optional<MemoryFormat> memory_format = std::nullopt);

/// aten::_to_copy: always a new tensor, with the given dtype / device.
Tensor _to_copy(const Tensor& self, std::optional<ScalarType> dtype = {},
                std::optional<Layout> layout = {},
                std::optional<Device> device = {},
                std::optional<bool> pin_memory = {}, bool non_blocking = false,
                std::optional<MemoryFormat> memory_format = {});

/// aten::to.dtype.
Tensor to(const Tensor& self, ScalarType dtype, bool non_blocking = false,
          bool copy = false,
          std::optional<MemoryFormat> memory_format = std::nullopt);
/// aten::to.device.
Tensor to(const Tensor& self, Device device, ScalarType dtype,
          bool non_blocking = false, bool copy = false,
          std::optional<MemoryFormat> memory_format = std::nullopt);
/// aten::to.device keeping self's dtype.
Tensor to(const Tensor& self, Device device, bool non_blocking = false,
          bool copy = false);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_COPY_H_
