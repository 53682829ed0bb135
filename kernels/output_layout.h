// The layout of a tensor made from others: the strides an elementwise
// operator gives its new result (and an out= tensor it resizes), and the
// strides empty_like / clone give a copy of a tensor with gaps. The rules
// are torch 1.13's, so that strides, and what follows from them
// (is_contiguous, the layout of every later result), agree with torch.
//
//   Tensor out = emptyElementwiseOutput(sizes, dtype, device, {&self, &other});
//   // x.t() + x.t(): x.t()'s strides; two contiguous inputs: contiguous
//   Tensor r = emptyElementwiseOutput(self.sizes(), dtype, device,
//                                     {&self, nullptr});  // self + 2
//
// The elementwise rule, for an output of `sizes` computed from inputs in
// the operator's order (self first; a Scalar argument, which torch wraps as
// a 0-dim tensor, is an input of no dimensions):
//  1. When every input has exactly `sizes`: all contiguous gives a
//     contiguous output; else all channels-last (4-d) gives channels-last
//     strides; else all non-overlapping and dense with the same strides
//     gives those very strides.
//  2. Otherwise the output's dimensions are ordered from fastest to slowest
//     by the inputs' strides. An input's stride in a dimension is 0 where it
//     lacks or broadcasts that dimension, else its own (a size-1 dimension
//     of the output keeps the input's stride). Two dimensions are compared
//     by the inputs in order, and the first input that tells them apart
//     decides: an input with stride 0 in either abstains; the smaller
//     stride is the faster dimension; equal strides put the smaller size
//     faster when the one currently faster is larger, else the next input
//     is asked. The order starts natural (the last dimension fastest) and
//     each dimension, from the second fastest out, is moved towards the
//     fast end past those that should be slower than it, skipping over
//     pairs no input decides (torch's insertion sort: a later decision can
//     move it past several).
//  3. The natural order gives contiguous strides; any other order gives
//     dense strides in that order, each the product of the sizes of the
//     faster dimensions (so a size-0 dimension can give stride 0).
// A Scalar input thus never orders anything, but it does rule out step 1
// unless everything is 0-dim. An out= tensor that keeps its sizes keeps its
// strides; one that is resized gets the new output's.
//
// Contiguous inputs of the output's shape, and contiguous inputs whose
// output has no dimension of size 0 or 1, always give a contiguous output:
// elementwiseOutputIsContiguous says so from flags and sizes, inline, and
// only the other calls compute the order.
//
// Thread safety: pure functions.
#ifndef TURNOUT_KERNELS_OUTPUT_LAYOUT_H_
#define TURNOUT_KERNELS_OUTPUT_LAYOUT_H_

#include <initializer_list>

#include "absl/types/span.h"
#include "dispatcher/core/device.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"
#include "kernels/tensor_utils.h"

namespace turnout {

/// True when the rule above gives a new output of `sizes` over `inputs`
/// (nullptr: a Scalar argument) contiguous strides, decided from the
/// inputs' contiguity flags and the sizes alone; false when the strides
/// must be computed (they may still turn out contiguous). Precondition:
/// every non-null input is defined and broadcasts to `sizes`.
inline bool elementwiseOutputIsContiguous(
    IntArrayRef sizes, std::initializer_list<const Tensor*> inputs);

/// The strides of a new elementwise output of `sizes` over `inputs`, in
/// the operator's order (nullptr: a Scalar argument), by the rule above.
/// Preconditions as elementwiseOutputIsContiguous's.
DimVector elementwiseOutputStrides(IntArrayRef sizes,
                                   absl::Span<const Tensor* const> inputs);

/// A new tensor of `sizes` laid out by the rule above (uninitialized; no
/// data on Meta): emptyTensor's when elementwiseOutputIsContiguous, else
/// with elementwiseOutputStrides. Preconditions as above.
inline Tensor emptyElementwiseOutput(
    IntArrayRef sizes, ScalarType dtype, Device device,
    std::initializer_list<const Tensor*> inputs);

/// Dense strides (no gaps, no overlap) for `sizes` that visit the
/// dimensions in the order of `strides`, the smallest fastest, as
/// empty_like and clone (memory_format=preserve) lay out a copy of a tensor
/// that is not non-overlapping and dense: the rule's steps 2 and 3 with one
/// input, except that dimensions of size 0 or 1 do not multiply the
/// strides of slower ones. Precondition: sizes.size() == strides.size().
DimVector denseStridesInOrder(IntArrayRef sizes, IntArrayRef strides);

// Implementation details.
namespace detail {

Tensor emptyElementwiseOutputSlow(IntArrayRef sizes, ScalarType dtype,
                                  Device device,
                                  absl::Span<const Tensor* const> inputs);

inline bool sameSizesAs(IntArrayRef a, IntArrayRef b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace detail

inline bool elementwiseOutputIsContiguous(
    IntArrayRef sizes, std::initializer_list<const Tensor*> inputs) {
  // 0 or 1 dimensions: there is one order.
  if (sizes.size() <= 1) return true;
  bool same_shape = true;
  for (const Tensor* t : inputs) {
    if (t == nullptr) {  // a Scalar: a 0-dim input, so not `sizes`
      same_shape = false;
      continue;
    }
    // The stored values, as allContiguousLike (kernels/loops.h) says why.
    const TensorImpl* impl = t->unsafeGetTensorImpl();
    if (!impl->is_contiguous_default()) return false;
    same_shape = same_shape && detail::sameSizesAs(impl->sizes_default(), sizes);
  }
  if (same_shape) return true;  // step 1
  // Step 2 with contiguous inputs: without size-0 and size-1 dimensions in
  // the output, each input's strides fall strictly from the first
  // dimension to the last wherever it does not broadcast, so no input
  // ever asks for a swap. Size-1 dimensions may have any stride, and
  // size-0 ones tie: those take the full rule.
  for (const int64_t s : sizes) {
    if (s <= 1) return false;
  }
  return true;
}

inline Tensor emptyElementwiseOutput(
    IntArrayRef sizes, ScalarType dtype, Device device,
    std::initializer_list<const Tensor*> inputs) {
  if (elementwiseOutputIsContiguous(sizes, inputs)) {
    return emptyTensor(sizes, dtype, device);
  }
  return detail::emptyElementwiseOutputSlow(
      sizes, dtype, device, absl::MakeConstSpan(inputs.begin(), inputs.size()));
}

}  // namespace turnout

#endif  // TURNOUT_KERNELS_OUTPUT_LAYOUT_H_
