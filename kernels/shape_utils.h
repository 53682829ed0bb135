// Shape arithmetic for the view operators, with PyTorch's error messages:
// -1 inference, view strides over an existing layout, and expansion
// (broadcast) strides.
//
//   DimVector s = inferSize({2, -1}, 6);                       // [2, 3]
//   auto st = computeViewStrides({2, 3}, {3, 1}, {3, 2});      // [2, 1]
//   computeViewStrides({2, 3}, {1, 2}, {6});                   // nullopt
//   ExpandedGeometry g = expandGeometry(x, {4, 2, 3});         // stride 0
//
// Thread safety: pure functions.
#ifndef TURNOUT_KERNELS_SHAPE_UTILS_H_
#define TURNOUT_KERNELS_SHAPE_UTILS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "dispatcher/core/tensor.h"

namespace turnout {

/// `shape` with its one -1 replaced so that the product is `numel`. Throws
/// InvalidArgument "shape '[2, 5]' is invalid for input of size 6", "only
/// one dimension can be inferred", "invalid shape dimension -2", and the
/// ambiguous case of a -1 with 0 elements.
DimVector inferSize(IntArrayRef shape, int64_t numel);

/// The strides that let a tensor of `old_sizes` / `old_strides` be viewed as
/// `new_sizes` (same numel) without copying, or nullopt when some new
/// dimension would span two non-contiguous runs of the old layout.
std::optional<DimVector> computeViewStrides(IntArrayRef old_sizes,
                                            IntArrayRef old_strides,
                                            IntArrayRef new_sizes);

/// Sizes and strides of `self` expanded to `target` (-1 keeps a size; new
/// leading dimensions and expanded size-1 dimensions get stride 0).
struct ExpandedGeometry {
  DimVector sizes;
  DimVector strides;
  int64_t numel = 0;  // of sizes
};
/// Throws InvalidArgument with PyTorch's expand() messages, and when the
/// number of elements of the result overflows int64.
ExpandedGeometry expandGeometry(const Tensor& self, IntArrayRef target);

/// "torch.FloatTensor{[2, 3]}": how PyTorch names a tensor in messages.
std::string tensorTypeString(const Tensor& t);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_SHAPE_UTILS_H_
