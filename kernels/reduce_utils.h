// Helpers shared by the reduction, softmax and linear-algebra kernels for
// their out= variants and argument checks. (The dtype switch and element
// conversion live in kernels/dtype_dispatch.h, the strided walk in
// kernels/strided_walk.h, the converting copy in kernels/loops.h.)
//
//   resizeOutput(out, {2, 3}, "sum.IntList_out");
//   return copyToOut("sum.IntList_out", result, out);
//
// Everything here works on CPU tensors (Meta tensors where said;
// resizeOutput on every device); thread safety: pure functions over their
// arguments.
#ifndef TURNOUT_KERNELS_REDUCE_UTILS_H_
#define TURNOUT_KERNELS_REDUCE_UTILS_H_

#include <initializer_list>
#include <optional>
#include <string>

#include "dispatcher/core/memory_format.h"
#include "dispatcher/core/tensor.h"

namespace turnout {
namespace reduce_internal {

/// Gives `out` the sizes `sizes` (contiguous strides), as PyTorch's out=
/// variants do: nothing when they already match; otherwise warns when `out`
/// had elements, and grows its storage when needed. Growing keeps the old
/// bytes at the start of the new storage (as resize_ does, for whatever
/// else views that storage), copied by the device's own copy_ kernel, so a
/// CUDA (or any backend's) out tensor works on any device. Throws
/// InvalidArgument when the storage cannot be resized, and whatever the
/// allocator or the copy throws; `out` and its storage are then unchanged.
void resizeOutput(const Tensor& out, IntArrayRef sizes, const char* op);

/// Tensor.resize_ (aten::resize_ on every device): gives `self` `sizes`,
/// with contiguous strides or those of `memory_format` (ChannelsLast for a
/// 4-d size), growing its storage (keeping its bytes) when it is too small,
/// never shrinking it; no warning. Same sizes and no memory format: nothing
/// changes. Throws InvalidArgument for a negative size, a Preserve format
/// and a storage that cannot grow; `self` is then unchanged.
void resizeTensor(const Tensor& self, IntArrayRef sizes,
                  std::optional<MemoryFormat> memory_format);

/// As resizeOutput, but a resized `out` gets `strides` (one per size; the
/// storage grows to reach their furthest element). An `out` that already
/// has `sizes` keeps its own strides.
void resizeOutput(const Tensor& out, IntArrayRef sizes, IntArrayRef strides,
                  const char* op);

/// The out= tensor of an elementwise operator over `inputs` (in the
/// operator's order; nullptr: a Scalar argument): resized as resizeOutput
/// does, to the layout a new output would have (kernels/output_layout.h),
/// as torch 1.13 resizes it; an `out` that already has `sizes` keeps its
/// strides. Preconditions: as emptyElementwiseOutput's.
void resizeElementwiseOutput(const Tensor& out, IntArrayRef sizes,
                             std::initializer_list<const Tensor*> inputs,
                             const char* op);

/// Writes a freshly computed `result` into a caller's out= tensor: checks
/// the device and that `out` has `result`'s dtype ("`op`: Expected out
/// tensor to have dtype Float, but got Double instead"), resizes `out` as
/// resizeOutput does and copies. Returns `out`.
Tensor& copyToOut(const char* op, const Tensor& result, Tensor& out);

/// Throws InvalidArgument "`op`: Expected all tensors to be on the same
/// device, but found at least two devices, cpu and meta!" unless every
/// defined tensor is on `a`'s device.
void checkSameDevice(const char* op, const Tensor& a, const Tensor& b);

/// "[2, 3]".
std::string sizesToString(IntArrayRef sizes);

}  // namespace reduce_internal
}  // namespace turnout

#endif  // TURNOUT_KERNELS_REDUCE_UTILS_H_
