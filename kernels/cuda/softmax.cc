// CUDA kernels of aten::softmax.int, log_softmax.int (and their int_out
// overloads), _softmax, _log_softmax, _softmax_backward_data and
// _log_softmax_backward_data. The Meta kernel gives the result's dtype and
// runs every check; `dim` is permuted innermost, the inputs made contiguous
// (forward: in the result's dtype, as softmax(x, dtype=d) is
// softmax(x.to(d)) on the CPU), and reduce.cu's kernels do each row in
// double.
#include <optional>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/cuda/cuda_loops.h"
#include "kernels/cuda/cuda_utils.h"
#include "kernels/cuda/stream.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace cuda {
namespace {

using Dt = std::optional<ScalarType>;

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

// t with `dim` moved last (see moveLast), contiguous in `dtype` on
// `device`: its rows are the slices along dim.
Tensor rowsOf(const Tensor& t, int64_t dim, ScalarType dtype, Device device) {
  DimVector sizes, strides;
  moveLast(t, dim, &sizes, &strides);
  return contiguousAs(makeView(t, sizes, strides, t.storage_offset()), dtype,
                      device);
}

// Runs `launch(target)`, which writes out's rows (dim moved last) into the
// contiguous `target`: out's own memory when dim is already innermost, else
// a temporary copied into out afterwards.
template <class Launch>
void writeRows(const char* op, const Tensor& out, int64_t dim,
               const Launch& launch) {
  DimVector sizes, strides;
  moveLast(out, dim, &sizes, &strides);
  const Tensor out_rows = makeView(out, sizes, strides, 0);
  const Tensor target =
      out_rows.is_contiguous()
          ? out_rows
          : emptyTensor(sizes, out.scalar_type(), out.device());
  {
    CUDADeviceGuard guard(out.device());
    checkCuda(launch(target), op);
  }
  if (!target.is_same(out_rows)) {
    runElementwise(op, ElementwiseOp::Copy, out.scalar_type(), out_rows,
                   {target});
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
  const Tensor rows = rowsOf(self, d, dtype, device);
  writeRows(op, out, d, [&](const Tensor& target) {
    return launchSoftmax(rows.data_ptr(), target.data_ptr(),
                         static_cast<int>(dtype), out.numel() / n, n, log,
                         currentStreamHandle());
  });
  return out;
}

// The backward of softmax (log_softmax with `log`): `meta` is the Meta
// kernel's result (input_dtype, output's sizes). grad_output and output are
// read in their dtype when they share a floating one, else both in Double:
// either way each value reaches the kernel's double arithmetic exactly, as
// the CPU kernel's cast to Double does.
Tensor softmaxBackwardCuda(const char* op, const Tensor& grad_output,
                           const Tensor& output, int64_t dim,
                           const Tensor& meta, bool log) {
  const Device device = checkCudaDevices(op, {&grad_output, &output});
  const ScalarType dtype = meta.scalar_type();
  Tensor grad_input = emptyTensor(meta.sizes(), dtype, device);
  if (grad_input.numel() == 0) return grad_input;
  const int64_t d = output.dim() > 0 ? maybeWrapDim(dim, output.dim()) : -1;
  const int64_t n = d >= 0 ? output.size(d) : 1;
  const ScalarType read = grad_output.scalar_type() == output.scalar_type() &&
                                  isFloatingType(output.scalar_type())
                              ? output.scalar_type()
                              : ScalarType::Double;
  const Tensor g = rowsOf(grad_output, d, read, device);
  const Tensor y = rowsOf(output, d, read, device);
  writeRows(op, grad_input, d, [&](const Tensor& target) {
    return launchSoftmaxBackward(
        g.data_ptr(), y.data_ptr(), target.data_ptr(), static_cast<int>(read),
        static_cast<int>(dtype), grad_input.numel() / n, n, log,
        currentStreamHandle());
  });
  return grad_input;
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

using BackwardSig = Tensor(const Tensor&, const Tensor&, int64_t, ScalarType);

Tensor softmaxBackwardKernel(const Tensor& grad_output, const Tensor& output,
                             int64_t dim, ScalarType input_dtype) {
  static const auto op =
      typedOp<BackwardSig>("aten::_softmax_backward_data", "");
  const Tensor m = op.redispatch(metaKeys(), metaLike(grad_output),
                                 metaLike(output), dim, input_dtype);
  return softmaxBackwardCuda("_softmax_backward_data()", grad_output, output,
                             dim, m, false);
}

Tensor logSoftmaxBackwardKernel(const Tensor& grad_output, const Tensor& output,
                                int64_t dim, ScalarType input_dtype) {
  static const auto op =
      typedOp<BackwardSig>("aten::_log_softmax_backward_data", "");
  const Tensor m = op.redispatch(metaKeys(), metaLike(grad_output),
                                 metaLike(output), dim, input_dtype);
  return softmaxBackwardCuda("_log_softmax_backward_data()", grad_output,
                             output, dim, m, true);
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
  // No softmax.int / log_softmax.int: they are composite-implicit over
  // _softmax / _log_softmax (kernels/softmax.cc), and a CUDA kernel of their
  // own would keep that composite from serving AutogradCUDA.
  m.impl("_softmax", TURNOUT_FN(internalSoftmaxKernel));
  m.impl("_log_softmax", TURNOUT_FN(internalLogSoftmaxKernel));
  m.impl("softmax.int_out", TURNOUT_FN(softmaxOut));
  m.impl("log_softmax.int_out", TURNOUT_FN(log_softmaxOut));
  m.impl("_softmax_backward_data", TURNOUT_FN(softmaxBackwardKernel));
  m.impl("_log_softmax_backward_data", TURNOUT_FN(logSoftmaxBackwardKernel));
}
