// The CUDA kernel of the aten operators that have no CUDA implementation
// yet: one boxed kernel that runs the CPU kernel on host copies of the
// arguments and brings the results back to the device (as PyTorch's MPS
// fallback does), so that every operator works on CUDA tensors with the
// CPU kernel's semantics, at the price of two copies and a synchronisation.
//
// Per call: CUDA tensors (alone, in lists, in optional lists) become CPU
// copies and CUDA Device arguments the CPU; the call is redispatched to the
// CPU key; each argument the schema marks written (in place, out=) gets the
// CPU result copied back (an out= tensor the CPU kernel resized is resized
// first; batch norm's running statistics too, which the schema does not
// mark), and a return that aliases such an argument is that argument
// itself; every other returned tensor is copied to the device of the
// call's first CUDA tensor (or Device argument).
//
// Only for operators whose returns are new tensors or written arguments:
// a view's aliasing cannot survive the copy. Dumps show these entries as
// "registered at kernels/cuda/cpu_round_trip.cc"; each is replaced by a
// real CUDA kernel by registering one (kCpuRoundTripOps lists what is
// left).
#include <optional>
#include <string>
#include <vector>

#include "dispatcher/core/device.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/ivalue.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/stack.h"
#include "kernels/cuda/cuda_loops.h"

namespace turnout {
namespace cuda {
namespace {

const Device kCpu(DeviceType::CPU);

// `v` with its CUDA tensors copied to the CPU; `device` becomes the first
// CUDA device seen.
IValue toHost(const IValue& v, std::optional<Device>* device) {
  auto host = [&](const Tensor& t) -> Tensor {
    if (!t.defined() || !t.is_cuda()) return t;
    if (!device->has_value()) *device = t.device();
    return t.to(kCpu);
  };
  if (v.isTensor()) return IValue(host(v.toTensor()));
  if (v.isTensorList()) {
    std::vector<Tensor> ts = v.toTensorVector();
    for (Tensor& t : ts) t = host(t);
    return IValue(std::move(ts));
  }
  if (v.isGenericList()) {  // Tensor?[]
    std::vector<IValue> items = v.toListRef();
    for (IValue& item : items) item = toHost(item, device);
    return IValue::makeList(IValue::Tag::GenericList, std::move(items));
  }
  if (v.isDevice() && v.toDevice().is_cuda()) {
    if (!device->has_value()) *device = v.toDevice();
    return IValue(kCpu);
  }
  return v;
}

// A written argument: the caller's device tensor, its host copy and the
// copy's geometry before the CPU kernel ran.
struct Written {
  Tensor arg;
  Tensor host;
  DimVector sizes;
  DimVector strides;
};

Written written(const Tensor& arg, const Tensor& host) {
  return {arg, host, DimVector(host.sizes().begin(), host.sizes().end()),
          DimVector(host.strides().begin(), host.strides().end())};
}

// Writes the CPU kernel's result into the caller's device tensor. Where
// the kernel resized or restrided its copy (as out= may: nonzero's out is
// column-major, as torch's), the caller's tensor is given the copy's
// sizes and strides first; otherwise it keeps its own layout.
void writeBack(const std::string& op, const Written& w) {
  Tensor arg = w.arg;
  const Tensor& host = w.host;
  const bool reshaped = host.sizes() != IntArrayRef(w.sizes) ||
                        host.strides() != IntArrayRef(w.strides);
  if (reshaped) {
    resizeOut(op, arg, host.sizes());
    if (arg.strides() != host.strides() && host.numel() > 0) {
      int64_t span = 1;  // elements the host strides reach
      for (int64_t d = 0; d < host.dim(); ++d) {
        span += (host.size(d) - 1) * host.stride(d);
      }
      TURNOUT_CHECK(
          static_cast<size_t>(span + arg.storage_offset()) * arg.itemsize() <=
              arg.storage().nbytes(),
          ErrorKind::InvalidArgument, op, ": cannot give the CUDA out tensor "
          "the strides its CPU kernel chose; pass an out tensor with zero "
          "elements");
      arg.unsafeGetTensorImpl()->set_sizes_and_strides(host.sizes(),
                                                       host.strides());
    }
  }
  arg.copy_(host);
}

// Arguments written although the schema does not mark them (as in torch's
// schema): batch norm's running statistics.
bool isWritten(const Argument& a) {
  return a.isWrite() || a.name() == "running_mean" || a.name() == "running_var";
}

void cpuRoundTrip(const OperatorHandle& op, DispatchKeySet, Stack* stack) {
  const FunctionSchema& schema = op.schema();
  const std::string name = toString(schema.operator_name());
  const size_t n = schema.arguments().size();
  TURNOUT_INTERNAL_ASSERT(stack->size() >= n, name, ": stack too short");
  const size_t first = stack->size() - n;
  std::vector<IValue> args(stack->begin() + first, stack->end());
  std::optional<Device> device;
  for (size_t i = 0; i < n; ++i) {
    (*stack)[first + i] = toHost(args[i], &device);
  }
  std::vector<IValue> host_args(stack->begin() + first, stack->end());
  std::vector<Written> writes;  // the caller's CUDA tensors to write
  auto note = [&](const Tensor& arg, const Tensor& host) {
    if (arg.defined() && arg.is_cuda()) writes.push_back(written(arg, host));
  };
  for (size_t i = 0; i < n; ++i) {
    if (!isWritten(schema.arguments()[i])) continue;
    if (args[i].isTensor()) {
      note(args[i].toTensor(), host_args[i].toTensor());
    } else if (args[i].isTensorList()) {
      const std::vector<Tensor>& dst = args[i].toTensorListRef();
      const std::vector<Tensor>& src = host_args[i].toTensorListRef();
      for (size_t k = 0; k < dst.size(); ++k) note(dst[k], src[k]);
    }
  }
  op.redispatchBoxed(DispatchKeySet(DispatchKey::CPU), stack);
  for (const Written& w : writes) writeBack(name, w);

  const size_t r = schema.returns().size();
  for (size_t j = 0; j < r; ++j) {
    IValue& ret = (*stack)[stack->size() - r + j];
    if (!ret.isTensor() || !ret.toTensor().defined() || !device.has_value()) {
      continue;  // an undefined Tensor: a gradient not asked for
    }
    // A return that is a written argument: the caller's tensor.
    bool aliased = false;
    for (size_t i = 0; i < n && !aliased; ++i) {
      if (schema.arguments()[i].isWrite() && args[i].isTensor() &&
          host_args[i].isTensor() &&
          host_args[i].toTensor().is_same(ret.toTensor())) {
        ret = args[i];
        aliased = true;
      }
    }
    if (!aliased) ret = IValue(ret.toTensor().to(*device));
  }
}

// The aten operators with a CPU kernel and no CUDA one (nor a composite
// one): each goes through cpuRoundTrip until it has its own kernel.
constexpr const char* kCpuRoundTripOps[] = {
    "_adaptive_avg_pool2d",
    "_adaptive_avg_pool2d.out",
    "_adaptive_avg_pool2d_backward",
    "_adaptive_avg_pool2d_backward.out",
    "avg_pool2d",
    "avg_pool2d.out",
    "avg_pool2d_backward",
    "avg_pool2d_backward.grad_input",
    "bernoulli_.float",
    "cat.out",
    "convolution",
    "convolution.out",
    "convolution_backward",
    "cumprod",
    "cumprod.out",
    "cumprod_",
    "cumsum",
    "cumsum.out",
    "cumsum_",
    "equal",
    "gather",
    "index.Tensor",
    "index.Tensor_out",
    "index_put_",
    "index_select",
    "index_select.out",
    "linspace",
    "linspace.out",
    "masked_select",
    "masked_select.out",
    "max_pool2d_with_indices",
    "max_pool2d_with_indices.out",
    "max_pool2d_with_indices_backward",
    "max_pool2d_with_indices_backward.grad_input",
    "native_batch_norm",
    "native_batch_norm_backward",
    "nonzero",
    "nonzero.out",
    "normal_",
    "randint",
    "randint.low",
    "randperm",
    "roll",
    "scatter_add",
    "sort",
    "sort.stable",
    "sort.values",
    "sort.values_stable",
    "topk",
    "topk.values",
    "tril",
    "tril.out",
    "tril_",
    "triu",
    "triu.out",
    "triu_",
    "uniform_",
};

}  // namespace
}  // namespace cuda
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, CUDA, m) {
  for (const char* name : ::turnout::cuda::kCpuRoundTripOps) {
    m.impl(name, ::turnout::CppFunction::makeFromBoxedFunction(
                     &::turnout::cuda::cpuRoundTrip));
  }
}
