// Host-side plumbing shared by the CUDA operator kernels: device checks,
// meta stand-ins, and the elementwise launcher over Tensors.
//
// Every CUDA kernel here computes its result's sizes and dtype, and runs
// every argument check, by redispatching the same operator to its Meta
// kernel with meta stand-ins of its tensors (metaLike). The shape,
// promotion and error logic therefore lives once, in the CPU/Meta kernels'
// files, and the CUDA kernels only add what is about devices.
//
//   const Device device = checkCudaDevices("add", {&self, &other});
//   Tensor m = add_op.redispatch(kMetaKeys, metaLike(self), metaLike(other), a);
//   Tensor out = emptyTensor(m.sizes(), m.scalar_type(), device);
//   runElementwise("add", ElementwiseOp::Add, compute, out, {self, other},
//                  {scalarArg(alpha, compute, "add")});
//
// Thread safety: pure functions over their arguments.
#ifndef TURNOUT_KERNELS_CUDA_CUDA_LOOPS_H_
#define TURNOUT_KERNELS_CUDA_CUDA_LOOPS_H_

#include <initializer_list>
#include <optional>
#include <string_view>

#include "dispatcher/core/device.h"
#include "dispatcher/core/dispatch_key_set.h"
#include "dispatcher/core/scalar.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "kernels/cuda/launch.h"

namespace turnout {
namespace cuda {

/// The typed handle of operator `name` (e.g. "aten::add") and `overload`,
/// for a kernel's redispatch. Throws when the operator has no schema.
template <class Sig>
TypedOperatorHandle<Sig> typedOp(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

/// The key set that reaches an operator's Meta kernel.
inline DispatchKeySet metaKeys() { return DispatchKeySet(DispatchKey::Meta); }

/// A CPU tensor with 0 dims goes with CUDA tensors, as a number would.
bool isCpuScalar(const Tensor& t);

/// The CUDA device of a call: every defined tensor that is not a CPU
/// scalar must be on one CUDA device. Throws InvalidArgument "Expected all
/// tensors to be on the same device, but found at least two devices, cuda:0
/// and cpu!" otherwise. `written` (in-place self, out=) must be on CUDA.
Device checkCudaDevices(std::string_view op,
                        std::initializer_list<const Tensor*> tensors,
                        const Tensor* written = nullptr);

/// A meta tensor with t's sizes, strides and dtype; a CPU scalar and an
/// undefined tensor are returned as they are.
Tensor metaLike(const Tensor& t);

/// A Scalar as the compute dtype's math type reads it (floating: double;
/// integral and Bool: int64 after the range check of Scalar::to, which
/// throws InvalidArgument when the value does not fit).
ScalarArg scalarArg(const Scalar& s, ScalarType compute, std::string_view op);

/// out[i] = op(inputs[i]...) with each input broadcast to out's sizes and
/// converted to `compute`, the result converted to out's dtype. Inputs may
/// be CPU scalars (copied to the device first) or on out's CUDA device; an
/// input that shares memory with out in another layout is copied first.
/// With `scalar_input` >= 0, that input is the second scalar instead (its
/// tensor is not read; pass any). Precondition: the shapes broadcast (the
/// Meta kernel checked them).
void runElementwise(std::string_view op, ElementwiseOp kind,
                    ScalarType compute, const Tensor& out,
                    std::initializer_list<Tensor> inputs,
                    std::initializer_list<std::optional<ScalarArg>> scalars = {},
                    int scalar_input = -1);

/// A contiguous CUDA tensor of t's values in `dtype` (t itself when it is
/// already one). Precondition: t is on CUDA or a CPU scalar.
Tensor contiguousAs(const Tensor& t, ScalarType dtype, Device device);

/// A new tensor on `device` with the sizes and strides of `meta`, a Meta
/// kernel's result (the layout the CPU kernel would give: for elementwise
/// operators, torch 1.13's, kernels/output_layout.h), in `dtype`.
Tensor emptyLikeMeta(const Tensor& meta, ScalarType dtype, Device device);

/// Gives `out` the sizes `sizes` that an out= kernel's Meta kernel gave its
/// stand-in (nothing when they already match). Growing an out tensor that
/// already holds device memory is refused with InvalidArgument (pass one
/// with zero elements or the right shape).
void resizeOut(std::string_view op, Tensor& out, IntArrayRef sizes);

/// As above, and a resized `out` gets `strides` (the stand-in's: an
/// elementwise out= tensor is laid out as a new output would be).
void resizeOut(std::string_view op, Tensor& out, IntArrayRef sizes,
               IntArrayRef strides);

/// The end of an out= kernel whose Meta kernel accepted the call on the
/// stand-in `meta_out` (and resized it when out= may be resized): gives
/// `out` the stand-in's sizes (and, when resized, its strides), then copies `result` (same sizes) into it,
/// converting to out's dtype. Growing an out tensor that already holds
/// device memory is refused with InvalidArgument (pass one with zero
/// elements or the right shape). Returns out.
Tensor& finishOut(std::string_view op, const Tensor& meta_out,
                  const Tensor& result, Tensor& out);

}  // namespace cuda
}  // namespace turnout

#endif  // TURNOUT_KERNELS_CUDA_CUDA_LOOPS_H_
