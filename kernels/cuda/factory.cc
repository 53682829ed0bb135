// CUDA kernels of the factory operators, reached from their BackendSelect
// kernels when the device argument is a CUDA device: empty.memory_format
// and empty_strided allocate with the CUDA caching allocator; zeros, ones
// and full take their sizes, dtype and checks from the Meta kernel and fill
// on the device; arange, rand and randn run the CPU kernel (the same values
// and the same generator draws as on the CPU) and copy to the device.
#include <optional>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/copy.h"
#include "kernels/cuda/cuda_loops.h"
#include "kernels/cuda/cuda_utils.h"
#include "kernels/factory_utils.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace cuda {
namespace {

using Dt = std::optional<ScalarType>;
using Lo = std::optional<Layout>;
using Dv = std::optional<Device>;
using Pin = std::optional<bool>;
using Mf = std::optional<MemoryFormat>;
using SizeSig = Tensor(IntArrayRef, Dt, Lo, Dv, Pin);

void checkOptions(const char* op, Lo layout, Pin pin) {
  TURNOUT_CHECK(layout.value_or(Layout::Strided) == Layout::Strided,
                ErrorKind::NotImplemented, op, "(): layout ", *layout,
                " is not supported on CUDA; only strided tensors are");
  TURNOUT_CHECK(!pin.value_or(false), ErrorKind::NotImplemented, op,
                "(): pin_memory=True is not supported yet");
}

Device cudaDevice(Dv device) { return device.value_or(Device(DeviceType::CUDA)); }

Tensor allocate(const char* op, IntArrayRef sizes, IntArrayRef strides,
                ScalarType dtype, Device device) {
  checkDeviceAvailable(op);
  CUDADeviceGuard guard(device);
  return emptyStridedTensor(sizes, strides, dtype, device, op);
}

Tensor emptyKernel(IntArrayRef size, Dt dtype, Lo layout, Dv device, Pin pin,
                   Mf mf) {
  checkOptions("empty", layout, pin);
  const DimVector strides = stridesForMemoryFormat(
      size, mf.value_or(MemoryFormat::Contiguous), "empty");
  return allocate("empty", size, strides, dtype.value_or(kFloat),
                  cudaDevice(device));
}

Tensor emptyStridedKernel(IntArrayRef size, IntArrayRef stride, Dt dtype,
                          Lo layout, Dv device, Pin pin) {
  checkOptions("empty_strided", layout, pin);
  return allocate("empty_strided", size, stride, dtype.value_or(kFloat),
                  cudaDevice(device));
}

const Dv kMetaDevice = Device(DeviceType::Meta);

// The Meta kernel's result, then filled with `value` on the device.
Tensor filledLike(const char* op, const Tensor& meta, const Scalar& value,
                  Dv device) {
  Tensor out = allocate(op, meta.sizes(), meta.strides(), meta.scalar_type(),
                        cudaDevice(device));
  fill_(out, value);
  return out;
}

Tensor zerosKernel(IntArrayRef size, Dt dtype, Lo layout, Dv device, Pin pin) {
  static const auto op = typedOp<SizeSig>("aten::zeros", "");
  const Tensor m = op.redispatch(metaKeys(), size, dtype, layout, kMetaDevice, pin);
  return filledLike("zeros", m, 0, device);
}

Tensor onesKernel(IntArrayRef size, Dt dtype, Lo layout, Dv device, Pin pin) {
  static const auto op = typedOp<SizeSig>("aten::ones", "");
  const Tensor m = op.redispatch(metaKeys(), size, dtype, layout, kMetaDevice, pin);
  return filledLike("ones", m, 1, device);
}

Tensor fullKernel(IntArrayRef size, const Scalar& value, Dt dtype, Lo layout,
                  Dv device, Pin pin) {
  static const auto op =
      typedOp<Tensor(IntArrayRef, const Scalar&, Dt, Lo, Dv, Pin)>("aten::full",
                                                                   "");
  const Tensor m =
      op.redispatch(metaKeys(), size, value, dtype, layout, kMetaDevice, pin);
  return filledLike("full", m, value, device);
}

DispatchKeySet cpuKeys() { return DispatchKeySet(DispatchKey::CPU); }
const Dv kCpuDevice = Device(DeviceType::CPU);

Tensor toCuda(const Tensor& host, Dv device) {
  return to(host, cudaDevice(device));
}

Tensor arangeKernel(const Scalar& end, Dt dtype, Lo layout, Dv device,
                    Pin pin) {
  static const auto op =
      typedOp<Tensor(const Scalar&, Dt, Lo, Dv, Pin)>("aten::arange", "");
  return toCuda(op.redispatch(cpuKeys(), end, dtype, layout, kCpuDevice, pin),
                device);
}

Tensor arangeStartKernel(const Scalar& start, const Scalar& end, Dt dtype,
                         Lo layout, Dv device, Pin pin) {
  static const auto op =
      typedOp<Tensor(const Scalar&, const Scalar&, Dt, Lo, Dv, Pin)>(
          "aten::arange", "start");
  return toCuda(
      op.redispatch(cpuKeys(), start, end, dtype, layout, kCpuDevice, pin),
      device);
}

Tensor arangeStartStepKernel(const Scalar& start, const Scalar& end,
                             const Scalar& step, Dt dtype, Lo layout,
                             Dv device, Pin pin) {
  static const auto op = typedOp<Tensor(const Scalar&, const Scalar&,
                                        const Scalar&, Dt, Lo, Dv, Pin)>(
      "aten::arange", "start_step");
  return toCuda(op.redispatch(cpuKeys(), start, end, step, dtype, layout,
                              kCpuDevice, pin),
                device);
}

Tensor randKernel(IntArrayRef size, Dt dtype, Lo layout, Dv device, Pin pin) {
  static const auto op = typedOp<SizeSig>("aten::rand", "");
  return toCuda(op.redispatch(cpuKeys(), size, dtype, layout, kCpuDevice, pin),
                device);
}

Tensor randnKernel(IntArrayRef size, Dt dtype, Lo layout, Dv device, Pin pin) {
  static const auto op = typedOp<SizeSig>("aten::randn", "");
  return toCuda(op.redispatch(cpuKeys(), size, dtype, layout, kCpuDevice, pin),
                device);
}

}  // namespace
}  // namespace cuda
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, CUDA, m) {
  using namespace ::turnout::cuda;
  m.impl("empty.memory_format", TURNOUT_FN(emptyKernel));
  m.impl("empty_strided", TURNOUT_FN(emptyStridedKernel));
  m.impl("zeros", TURNOUT_FN(zerosKernel));
  m.impl("ones", TURNOUT_FN(onesKernel));
  m.impl("full", TURNOUT_FN(fullKernel));
  m.impl("arange", TURNOUT_FN(arangeKernel));
  m.impl("arange.start", TURNOUT_FN(arangeStartKernel));
  m.impl("arange.start_step", TURNOUT_FN(arangeStartStepKernel));
  m.impl("rand", TURNOUT_FN(randKernel));
  m.impl("randn", TURNOUT_FN(randnKernel));
}
