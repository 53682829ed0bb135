// Shape helpers shared by the reference kernels: broadcasting, strides, dim
// wrapping, and output allocation, with PyTorch's error messages.
//
//   DimVector out = inferBroadcastSize(a.sizes(), b.sizes());
//   int64_t d = maybeWrapDim(-1, x.dim());
//   Tensor y = emptyTensor(out, ScalarType::Float, a.device());
//
// Thread safety: pure functions.
#ifndef TURNOUT_KERNELS_TENSOR_UTILS_H_
#define TURNOUT_KERNELS_TENSOR_UTILS_H_

#include <cstdint>

#include "dispatcher/core/device.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"

namespace turnout {

/// The broadcast shape of two shapes. Throws InvalidArgument "The size of
/// tensor a (3) must match the size of tensor b (4) at non-singleton
/// dimension 1" when they do not broadcast.
DimVector inferBroadcastSize(IntArrayRef a, IntArrayRef b);

/// Row-major strides of a contiguous tensor of `sizes` (a size-0 or size-1
/// dimension gets the stride the next dimension would need, as PyTorch does;
/// saturated at INT64_MAX where that overflows, which only a shape with no
/// elements can use).
DimVector contiguousStrides(IntArrayRef sizes);

/// The product of `sizes` (1 for a 0-dim shape). Throws InvalidArgument
/// when it overflows int64 (see dispatcher/core/size_arithmetic.h).
int64_t numelOf(IntArrayRef sizes);

/// `dim` in [0, ndim), accepting negative dims from the end. Throws Index
/// "Dimension out of range (expected to be in range of [-2, 1], but got 2)".
/// A 0-dim tensor accepts dims -1 and 0, as in PyTorch.
int64_t maybeWrapDim(int64_t dim, int64_t ndim);

/// A new contiguous tensor (no data on Meta).
Tensor emptyTensor(IntArrayRef sizes, ScalarType dtype, Device device);

/// The wrapped number of `s` (c10's wrapped_scalar_tensor): a 0-dim CPU
/// tensor of Bool, Long or Double that type promotion counts as the Scalar
/// (TensorImpl::is_wrapped_number). Made outside the dispatcher.
Tensor wrappedScalarTensor(const Scalar& s);

/// A view of `base`'s storage with other sizes, strides and offset: shares
/// the memory (writes through one are seen through the other) and the
/// version counter. Checks that the view fits the storage.
Tensor makeView(const Tensor& base, IntArrayRef sizes, IntArrayRef strides,
                int64_t storage_offset);

/// The name torch's dtype checks give a dtype (caffe2's TypeMeta names:
/// "float", "long int", "c10::Half", ...), for messages that match torch's.
const char* typeMetaName(ScalarType t);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_TENSOR_UTILS_H_
