#include "kernels/cuda/cuda_loops.h"

#include <cuda_runtime_api.h>

#include <string>
#include <type_traits>

#include "absl/strings/str_join.h"

#include "dispatcher/core/error.h"
#include "dispatcher/core/size_arithmetic.h"
#include "kernels/copy.h"
#include "kernels/cuda/cuda_utils.h"
#include "kernels/cuda/stream.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/factory_utils.h"
#include "kernels/reduce_utils.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace cuda {

bool isCpuScalar(const Tensor& t) {
  return t.defined() && t.dim() == 0 && t.is_cpu();
}

Device checkCudaDevices(std::string_view op,
                        std::initializer_list<const Tensor*> tensors,
                        const Tensor* written) {
  std::optional<Device> device;
  auto visit = [&](const Tensor& t) {
    if (!t.defined() || (&t != written && isCpuScalar(t))) return;
    const Device d = t.device();
    if (!device) {
      device = d;
      return;
    }
    TURNOUT_CHECK(*device == d, ErrorKind::InvalidArgument,
                  "Expected all tensors to be on the same device, but found "
                  "at least two devices, ",
                  *device, " and ", d, "! (in ", op, ")");
  };
  if (written != nullptr) visit(*written);
  for (const Tensor* t : tensors) visit(*t);
  TURNOUT_CHECK(device && device->is_cuda(), ErrorKind::InvalidArgument, op,
                ": the CUDA kernel needs its tensors on a CUDA device, got ",
                device ? device->str() : std::string("no tensor"),
                "; move them with .to(\"cuda\") first");
  return *device;
}

Tensor metaLike(const Tensor& t) {
  if (!t.defined() || isCpuScalar(t)) return t;
  return emptyStridedTensor(t.sizes(), t.strides(), t.scalar_type(),
                            Device(DeviceType::Meta), "metaLike");
}

ScalarArg scalarArg(const Scalar& s, ScalarType compute, std::string_view op) {
  ScalarArg arg;
  visitDtype(compute, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = OpMathType<T>;
    if constexpr (std::is_floating_point_v<M>) {
      arg.f = s.toDouble();
    } else {
      arg.i = static_cast<int64_t>(s.to<M>());
    }
  });
  return arg;
}

namespace {

bool sharesStorage(const Tensor& a, const Tensor& b) {
  return a.has_storage() && b.has_storage() &&
         a.storage().is_alias_of(b.storage());
}

bool sameLayout(const Tensor& a, const Tensor& b) {
  return a.data_ptr() == b.data_ptr() && a.sizes() == b.sizes() &&
         a.strides() == b.strides();
}

// Fills a CUDA operand for `t` broadcast to `sizes` (ndim dims).
Operand operandOf(const Tensor& t, IntArrayRef sizes) {
  Operand o;
  o.data = t.data_ptr();
  o.dtype = static_cast<int>(t.scalar_type());
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  const int64_t lead = ndim - t.dim();
  TURNOUT_INTERNAL_ASSERT(lead >= 0, "operand has more dims than the output");
  for (int64_t d = 0; d < ndim; ++d) {
    if (d < lead) continue;  // broadcast: stride 0
    const int64_t size = t.size(d - lead);
    TURNOUT_INTERNAL_ASSERT(size == sizes[d] || size == 1,
                            "operand does not broadcast to the output");
    o.strides[d] = size == 1 ? 0 : t.stride(d - lead);
  }
  return o;
}

}  // namespace

void runElementwise(std::string_view op, ElementwiseOp kind,
                    ScalarType compute, const Tensor& out,
                    std::initializer_list<Tensor> inputs,
                    std::initializer_list<std::optional<ScalarArg>> scalars,
                    int scalar_input) {
  TURNOUT_INTERNAL_ASSERT(out.is_cuda(), op, ": output is not on CUDA");
  TURNOUT_INTERNAL_ASSERT(inputs.size() <= kMaxInputs && scalars.size() <= 2);
  TURNOUT_CHECK(out.dim() <= kMaxDims, ErrorKind::NotImplemented, op,
                ": the CUDA kernels support tensors of up to ", kMaxDims,
                " dimensions, got ", out.dim());
  if (out.numel() == 0) return;
  CUDADeviceGuard guard(out.device());
  // Keeps the device copies of CPU scalars and of overlapping inputs alive
  // until the launch is queued (the allocator orders reuse after it).
  Tensor keep[kMaxInputs];
  ElementwiseArgs args;
  args.op = kind;
  args.ndim = static_cast<int>(out.dim());
  args.numel = out.numel();
  for (int64_t d = 0; d < out.dim(); ++d) args.sizes[d] = out.size(d);
  args.out = operandOf(out, out.sizes());
  int k = 0;
  for (const Tensor& in : inputs) {
    Tensor t = in;
    if (k == scalar_input) {
      t = out;  // a placeholder: the kernel reads scalar[1] instead
    } else if (isCpuScalar(t)) {
      t = to(t, out.device());
    } else if (sharesStorage(t, out) && !sameLayout(t, out)) {
      t = clone(t);
    }
    TURNOUT_INTERNAL_ASSERT(t.device() == out.device(), op,
                            ": input on ", t.device(), ", output on ",
                            out.device());
    keep[k] = t;
    args.in[k] = operandOf(t, out.sizes());
    ++k;
  }
  args.num_inputs = k;
  args.scalar_input = scalar_input;
  int s = 0;
  for (const std::optional<ScalarArg>& arg : scalars) {
    if (arg) {
      args.scalar[s] = *arg;
      args.has_scalar[s] = true;
    }
    ++s;
  }
  checkCuda(launchElementwise(args, static_cast<int>(compute),
                              currentStreamHandle(out.device().index())), op);
}

Tensor contiguousAs(const Tensor& t, ScalarType dtype, Device device) {
  if (t.device() == device && t.scalar_type() == dtype && t.is_contiguous()) {
    return t;
  }
  Tensor out = emptyTensor(t.sizes(), dtype, device);
  runElementwise("contiguous", ElementwiseOp::Copy, dtype, out, {t});
  return out;
}

Tensor emptyLikeMeta(const Tensor& meta, ScalarType dtype, Device device) {
  if (meta.is_contiguous()) return emptyTensor(meta.sizes(), dtype, device);
  return emptyStridedTensor(meta.sizes(), meta.strides(), dtype, device,
                            "emptyLikeMeta");
}

namespace {

// resizeOut's body; `strides` empty: contiguous ones.
void resizeOutTo(std::string_view op, Tensor& out, IntArrayRef sizes,
                 IntArrayRef strides) {
  if (out.sizes() == sizes) return;
  const std::string name(op);
  const size_t needed =
      strides.empty()
          ? static_cast<size_t>(numelOf(sizes) + out.storage_offset()) *
                out.itemsize()
          : static_cast<size_t>(checkedStorageBytes(
                sizes, strides, out.storage_offset(), out.itemsize(), name));
  // Growing keeps the old bytes: only an out tensor whose storage is empty
  // or large enough is resized.
  TURNOUT_CHECK(!out.has_storage() || out.storage().nbytes() == 0 ||
                    needed <= out.storage().nbytes(),
                ErrorKind::InvalidArgument, name,
                ": cannot grow a CUDA out tensor of shape [",
                absl::StrJoin(out.sizes(), ", "), "] that holds data to [",
                absl::StrJoin(sizes, ", "),
                "]; pass an out tensor with zero elements or the right "
                "shape");
  if (strides.empty()) {
    reduce_internal::resizeOutput(out, sizes, name.c_str());
  } else {
    reduce_internal::resizeOutput(out, sizes, strides, name.c_str());
  }
}

}  // namespace

void resizeOut(std::string_view op, Tensor& out, IntArrayRef sizes) {
  resizeOutTo(op, out, sizes, {});
}

void resizeOut(std::string_view op, Tensor& out, IntArrayRef sizes,
               IntArrayRef strides) {
  resizeOutTo(op, out, sizes, strides);
}

Tensor& finishOut(std::string_view op, const Tensor& meta_out,
                  const Tensor& result, Tensor& out) {
  if (meta_out.is_contiguous()) {
    resizeOut(op, out, meta_out.sizes());
  } else {
    resizeOut(op, out, meta_out.sizes(), meta_out.strides());
  }
  runElementwise(op, ElementwiseOp::Copy, out.scalar_type(), out, {result});
  return out;
}

}  // namespace cuda
}  // namespace turnout
