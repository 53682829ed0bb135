// Allocation helpers shared by the factory, copy and shape kernels: a tensor
// with given strides, the strides of a memory format, and the strides that
// empty_like/clone give a copy of a tensor (memory_format=preserve).
//
//   Tensor t = emptyStridedTensor({2, 3}, {1, 2}, kFloat, Device("cpu"));
//   DimVector s = stridesForMemoryFormat({8, 3, 4, 4},
//                                        MemoryFormat::ChannelsLast, "empty");
//   // s == [48, 1, 12, 3]
//   DimVector like = stridesLike(x.t(), std::nullopt, "clone");  // x.t()'s
//
// Thread safety: pure functions.
#ifndef TURNOUT_KERNELS_FACTORY_UTILS_H_
#define TURNOUT_KERNELS_FACTORY_UTILS_H_

#include <cstdint>
#include <optional>

#include "dispatcher/core/device.h"
#include "dispatcher/core/dispatch_key_set.h"
#include "dispatcher/core/layout.h"
#include "dispatcher/core/memory_format.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"

namespace turnout {

/// The keys a BackendSelect kernel redispatches with: the backend key of
/// (dtype, layout, device), plus the thread's included keys below
/// BackendSelect, minus its excluded keys, as c10's generated BackendSelect
/// kernels compute them.
DispatchKeySet backendSelectKeySet(ScalarType dtype, Layout layout,
                                   Device device);

/// A new tensor of `sizes` and `strides` whose storage reaches its furthest
/// element (uninitialized; no data on Meta). Throws InvalidArgument when the
/// lengths differ, a size or stride is negative, or the number of elements
/// or of storage bytes overflows int64, naming `op`.
Tensor emptyStridedTensor(IntArrayRef sizes, IntArrayRef strides,
                          ScalarType dtype, Device device,
                          const char* op = "empty_strided");

/// The dense strides of `sizes` in `memory_format`: Contiguous (row-major)
/// or ChannelsLast (NHWC, 4-d only). Throws InvalidArgument for a
/// ChannelsLast tensor of another rank, and for Preserve, which needs a
/// tensor to preserve; NotImplemented for ChannelsLast3d.
DimVector stridesForMemoryFormat(IntArrayRef sizes, MemoryFormat memory_format,
                                 const char* op);

/// True when the strides of `t` are a permutation of dense strides: every
/// element has its own memory location and there are no gaps.
bool isNonOverlappingAndDense(const Tensor& t);

/// The strides a new tensor "like" `self` gets: with nullopt or Preserve,
/// `self`'s strides when it is non-overlapping and dense, else dense
/// strides in the order of self's (denseStridesInOrder, as torch 1.13:
/// x[:, ::2].t() gives a column-major copy); otherwise the memory format's
/// strides.
DimVector stridesLike(const Tensor& self,
                      std::optional<MemoryFormat> memory_format,
                      const char* op);

/// True when `t`'s strides are the dense strides of `memory_format`
/// (Contiguous or ChannelsLast), ignoring size-1 dimensions.
bool isContiguousAs(const Tensor& t, MemoryFormat memory_format);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_FACTORY_UTILS_H_
