#include "dispatcher/core/compute_dispatch_key.h"

#include "dispatcher/core/error.h"

namespace turnout {
namespace {

[[noreturn]] void throwUnsupported(Layout layout, Device device,
                                   const char* supported) {
  TURNOUT_CHECK(false, ErrorKind::NotImplemented,
                "computeDispatchKey(): layout ", toString(layout),
                " is not supported on device type ", toString(device.type()),
                " (device '", device.str(), "')", supported);
  __builtin_unreachable();
}

}  // namespace

DispatchKey computeDispatchKey(ScalarType dtype, Layout layout, Device device) {
  (void)dtype;
  const DeviceType type = device.type();
  switch (layout) {
    case Layout::Strided:
      return toDenseKey(toBackendComponent(type));
    case Layout::Sparse:
      switch (type) {
        case DeviceType::CPU:
        case DeviceType::CUDA:
        case DeviceType::HIP:
        case DeviceType::XPU:
        case DeviceType::VE:
        case DeviceType::MPS:
        case DeviceType::Meta:
        case DeviceType::PrivateUse1:
          return toRuntimePerBackendFunctionalityKey(DispatchKey::Sparse,
                                                     toBackendComponent(type));
        default:
          throwUnsupported(layout, device,
                           "; Sparse is supported on CPU, CUDA, HIP, XPU, VE, "
                           "MPS, Meta and PrivateUse1");
      }
    case Layout::SparseCsr:
    case Layout::SparseCsc:
    case Layout::SparseBsr:
    case Layout::SparseBsc:
      if (type == DeviceType::CPU) return DispatchKey::SparseCsrCPU;
      if (type == DeviceType::CUDA) return DispatchKey::SparseCsrCUDA;
      throwUnsupported(layout, device, "; it is supported on CPU and CUDA");
    case Layout::Mkldnn:
      if (type == DeviceType::CPU) return DispatchKey::MkldnnCPU;
      throwUnsupported(layout, device, "; it is supported on CPU only");
    case Layout::Jagged:
    case Layout::NumOptions:
      break;
  }
  throwUnsupported(layout, device,
                   "; turnout has no dispatch key for this layout");
}

}  // namespace turnout
