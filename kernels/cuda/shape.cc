// CUDA kernels of the shape operators that have backend kernels rather than
// composite ones: aten::view (a view of the same device memory with the
// sizes and strides the Meta kernel computes) and aten::cat (the Meta
// kernel's result, filled by one converting copy per input).
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/cuda/cuda_loops.h"
#include "kernels/reduce_utils.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace cuda {
namespace {

Tensor viewKernel(const Tensor& self, IntArrayRef size) {
  static const auto op =
      typedOp<Tensor(const Tensor&, IntArrayRef)>("aten::view", "");
  // The stand-in starts at offset 0, so the view's offset is relative.
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), size);
  return makeView(self, m.sizes(), m.strides(),
                  self.storage_offset() + m.storage_offset());
}

Tensor catKernel(absl::Span<const Tensor> tensors, int64_t dim) {
  static const auto op =
      typedOp<Tensor(absl::Span<const Tensor>, int64_t)>("aten::cat", "");
  std::vector<Tensor> meta;
  meta.reserve(tensors.size());
  for (const Tensor& t : tensors) meta.push_back(metaLike(t));
  // Emptiness, dimension and size checks, and the promoted dtype.
  const Tensor m = op.redispatch(metaKeys(), absl::MakeConstSpan(meta), dim);
  const Device device = tensors[0].device();
  for (const Tensor& t : tensors) {
    TURNOUT_CHECK(t.device() == device && device.is_cuda(),
                  ErrorKind::InvalidArgument,
                  "Expected all tensors to be on the same device, but found "
                  "at least two devices, ",
                  device, " and ", t.device(), "! (in cat)");
  }
  Tensor out = emptyTensor(m.sizes(), m.scalar_type(), device);
  if (out.numel() == 0) return out;
  const int64_t d = maybeWrapDim(dim, out.dim());
  int64_t at = 0;
  for (const Tensor& t : tensors) {
    // PyTorch 1.13 still skips 1-d tensors of size [0] whatever `dim` is.
    if (t.dim() == 1 && t.size(0) == 0) continue;
    const Tensor part =
        makeView(out, t.sizes(), out.strides(), at * out.stride(d));
    runElementwise("cat", ElementwiseOp::Copy, out.scalar_type(), part, {t});
    at += t.size(d);
  }
  return out;
}

// resize_: the device-independent resize (its storage grows through the
// CUDA copy_).
Tensor& resizeKernel(Tensor& self, IntArrayRef size,
                     std::optional<MemoryFormat> memory_format) {
  reduce_internal::resizeTensor(self, size, memory_format);
  return self;
}

}  // namespace
}  // namespace cuda
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("resize_", TURNOUT_FN(::turnout::cuda::resizeKernel));
  m.impl("view", TURNOUT_FN(::turnout::cuda::viewKernel));
  m.impl("cat", TURNOUT_FN(::turnout::cuda::catKernel));
}
