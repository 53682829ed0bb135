// Shape and memory operators of namespace aten, and their C++ front end:
// view, reshape, t, transpose.int, permute, expand, squeeze.dim, unsqueeze,
// slice.Tensor, select.int, cat, stack, contiguous, detach.
//
//   Tensor x = arange(6).view({2, 3});
//   Tensor y = transpose(x, 0, 1);        // a view: shares x's storage
//   fill_(select(y, 0, 1), 7);            // x[:, 1] is now 7
//   Tensor z = reshape(y, {6});           // y is not viewable: a copy
//   Tensor c = cat({x, x}, 1);            // [2, 6]
//
// The view operators (view, t, transpose, permute, expand, squeeze,
// unsqueeze, slice, select, detach) return tensors sharing `self`'s storage:
// writes through a view are seen by its base. A view of a meta tensor is a
// meta tensor. reshape returns a view when the layout allows it, else a
// contiguous copy; contiguous returns `self` itself when it already is.
//
// Dispatch, as in PyTorch: view and cat have CPU and Meta kernels; the other
// views and stack are CompositeExplicitAutograd (backend-independent);
// reshape and contiguous are CompositeImplicitAutograd.
#ifndef TURNOUT_KERNELS_SHAPE_H_
#define TURNOUT_KERNELS_SHAPE_H_

#include <cstdint>
#include <optional>

#include "absl/types/span.h"
#include "dispatcher/core/memory_format.h"
#include "dispatcher/core/tensor.h"

namespace turnout {

/// aten::view: `self` with sizes `size` (one may be -1), sharing storage.
/// Throws when the strides do not allow it ("... Use .reshape(...)
/// instead.") or the numel differs ("shape '[2, 5]' is invalid for input of
/// size 6").
Tensor view(const Tensor& self, IntArrayRef size);
/// aten::reshape: a view when possible, else a contiguous copy.
Tensor reshape(const Tensor& self, IntArrayRef shape);
/// aten::t: transposes a 2-d tensor; 0-d and 1-d tensors come back as is.
Tensor t(const Tensor& self);
/// aten::transpose.int.
Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1);
/// aten::permute.
Tensor permute(const Tensor& self, IntArrayRef dims);
/// aten::expand: size-1 (and new leading) dimensions broadcast with stride
/// 0; -1 keeps a size.
Tensor expand(const Tensor& self, IntArrayRef size, bool implicit = false);
/// aten::squeeze.dim: removes `dim` if its size is 1.
Tensor squeeze(const Tensor& self, int64_t dim);
/// aten::unsqueeze: inserts a size-1 dimension at `dim`.
Tensor unsqueeze(const Tensor& self, int64_t dim);
/// aten::slice.Tensor: self[start:end:step] along `dim` (Python rules for
/// negative and out-of-range bounds; step > 0).
Tensor slice(const Tensor& self, int64_t dim = 0,
             std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, int64_t step = 1);
/// aten::select.int: self[..., index, ...] with `dim` removed.
Tensor select(const Tensor& self, int64_t dim, int64_t index);
/// aten::cat: concatenation along `dim`, with type promotion; 1-d empty
/// tensors are skipped, as in PyTorch 1.13.
Tensor cat(absl::Span<const Tensor> tensors, int64_t dim = 0);
/// aten::stack: the tensors (all of one shape) along a new dimension `dim`.
Tensor stack(absl::Span<const Tensor> tensors, int64_t dim = 0);
/// aten::contiguous: `self` when it is contiguous in `memory_format`, else a
/// copy that is.
Tensor contiguous(const Tensor& self,
                  MemoryFormat memory_format = MemoryFormat::Contiguous);
/// aten::detach: a view of `self` (the autograd kernel cuts the history).
Tensor detach(const Tensor& self);
/// aten::alias: a view of all of `self`, with history (AliasBackward0) when
/// `self` requires grad: what the legacy constructor `Sub(t)` returns.
Tensor alias(const Tensor& self);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_SHAPE_H_
