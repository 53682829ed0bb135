// CUDA kernels of aten::softmax.int, log_softmax.int (and their int_out
// overloads), _softmax and _log_softmax. The Meta kernel gives the result's dtype and runs every
// check; `dim` is permuted innermost, the input made contiguous in the
// result's dtype (softmax(x, dtype=d) is softmax(x.to(d)), as on the CPU),
// and reduce.cu's softmax kernel does each row in double.
#include <optional>

#include "dispatcher/dispatcher.h"
#include "dispatcher/error.h"
#include "dispatcher/library.h"
#include "kernels/cuda/cuda_loops.h"
#include "kernels/cuda/cuda_utils.h"
#include "kernels/cuda/stream.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace cuda {
namespace {

using Dt = std::optional<ScalarType>;

template <class Sig>
TypedOperatorHandle<Sig> typedOp(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

// t's sizes and strides with `dim` moved last (nothing moves for dim < 0).
void moveLast(const Tensor& t, int64_t dim, DimVector* sizes,
              DimVector* strides) {
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (i == dim) continue;
    sizes->push_back(t.size(i));
    strides->push_back(t.stride(i));
  }
  if (dim >= 0) {
    sizes->push_back(t.size(dim));
    strides->push_back(t.stride(dim));
  }
}

Tensor softmaxCuda(const char* op, const Tensor& self, int64_t dim,
                   const Tensor& meta, bool log) {
  const Device device = checkCudaDevices(op, {&self});
  const ScalarType dtype = meta.scalar_type();
  Tensor out = emptyTensor(meta.sizes(), dtype, device);
  if (out.numel() == 0) return out;
  const int64_t d = self.dim() > 0 ? maybeWrapDim(dim, self.dim()) : -1;
  const int64_t n = d >= 0 ? self.size(d) : 1;
  DimVector sizes, in_strides, out_sizes, out_strides;
  moveLast(self, d, &sizes, &in_strides);
  moveLast(out, d, &out_sizes, &out_strides);
  const Tensor rows = contiguousAs(
      makeView(self, sizes, in_strides, self.storage_offset()), dtype, device);
  const Tensor out_rows = makeView(out, out_sizes, out_strides, 0);
  // The result goes straight to out when dim is already innermost.
  const Tensor target = out_rows.is_contiguous()
                            ? out_rows
                            : emptyTensor(out_sizes, dtype, device);
  {
    CUDADeviceGuard guard(device);
    checkCuda(launchSoftmax(rows.data_ptr(), target.data_ptr(),
                            static_cast<int>(dtype), out.numel() / n, n, log,
                            currentStreamHandle()),
              op);
  }
  if (!target.is_same(out_rows)) {
    runElementwise(op, ElementwiseOp::Copy, dtype, out_rows, {target});
  }
  return out;
}

Tensor softmaxKernel(const Tensor& self, int64_t dim, Dt dtype) {
  static const auto op = typedOp<Tensor(const Tensor&, int64_t, Dt)>(
      "aten::softmax", "int");
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), dim, dtype);
  return softmaxCuda("softmax()", self, dim, m, false);
}

Tensor logSoftmaxKernel(const Tensor& self, int64_t dim, Dt dtype) {
  static const auto op = typedOp<Tensor(const Tensor&, int64_t, Dt)>(
      "aten::log_softmax", "int");
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), dim, dtype);
  return softmaxCuda("log_softmax()", self, dim, m, true);
}

Tensor internalSoftmaxKernel(const Tensor& self, int64_t dim,
                             bool half_to_float) {
  static const auto op = typedOp<Tensor(const Tensor&, int64_t, bool)>(
      "aten::_softmax", "");
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), dim, half_to_float);
  return softmaxCuda("_softmax()", self, dim, m, false);
}

Tensor internalLogSoftmaxKernel(const Tensor& self, int64_t dim,
                                bool half_to_float) {
  static const auto op = typedOp<Tensor(const Tensor&, int64_t, bool)>(
      "aten::_log_softmax", "");
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), dim, half_to_float);
  return softmaxCuda("_log_softmax()", self, dim, m, true);
}

#define TURNOUT_CUDA_SOFTMAX_OUT(name, kernel)                              \
  Tensor& name##Out(const Tensor& self, int64_t dim, Dt dtype, Tensor& out) { \
    static const auto op =                                                  \
        typedOp<Tensor&(const Tensor&, int64_t, Dt, Tensor&)>(              \
            "aten::" #name, "int_out");                                     \
    checkCudaDevices(#name ".int_out()", {&self}, &out);                    \
    Tensor mo = metaLike(out);                                              \
    op.redispatch(metaKeys(), metaLike(self), dim, dtype, mo);              \
    return finishOut(#name ".int_out()", mo, kernel(self, dim, dtype), out); \
  }
TURNOUT_CUDA_SOFTMAX_OUT(softmax, softmaxKernel)
TURNOUT_CUDA_SOFTMAX_OUT(log_softmax, logSoftmaxKernel)
#undef TURNOUT_CUDA_SOFTMAX_OUT

}  // namespace
}  // namespace cuda
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, CUDA, m) {
  using namespace ::turnout::cuda;
  m.impl("softmax.int", TURNOUT_FN(softmaxKernel));
  m.impl("log_softmax.int", TURNOUT_FN(logSoftmaxKernel));
  m.impl("_softmax", TURNOUT_FN(internalSoftmaxKernel));
  m.impl("_log_softmax", TURNOUT_FN(internalLogSoftmaxKernel));
  m.impl("softmax.int_out", TURNOUT_FN(softmaxOut));
  m.impl("log_softmax.int_out", TURNOUT_FN(log_softmaxOut));
}
