#include "dispatcher/core/device.h"

#include <limits>

namespace turnout {

bool isValidDeviceType(int64_t value) {
  for (DeviceType t : kAllDeviceTypes) {
    if (static_cast<int64_t>(t) == value) return true;
  }
  return false;
}

const char* toString(DeviceType type) {
  switch (type) {
    case DeviceType::CPU:
      return "CPU";
    case DeviceType::CUDA:
      return "CUDA";
    case DeviceType::HIP:
      return "HIP";
    case DeviceType::XLA:
      return "XLA";
    case DeviceType::XPU:
      return "XPU";
    case DeviceType::MPS:
      return "MPS";
    case DeviceType::Meta:
      return "Meta";
    case DeviceType::HPU:
      return "HPU";
    case DeviceType::VE:
      return "VE";
    case DeviceType::Lazy:
      return "Lazy";
    case DeviceType::IPU:
      return "IPU";
    case DeviceType::MTIA:
      return "MTIA";
    case DeviceType::PrivateUse1:
      return "PrivateUse1";
  }
  return "InvalidDeviceType";
}

const char* deviceTypeName(DeviceType type) {
  switch (type) {
    case DeviceType::CPU:
      return "cpu";
    case DeviceType::CUDA:
      return "cuda";
    case DeviceType::HIP:
      return "hip";
    case DeviceType::XLA:
      return "xla";
    case DeviceType::XPU:
      return "xpu";
    case DeviceType::MPS:
      return "mps";
    case DeviceType::Meta:
      return "meta";
    case DeviceType::HPU:
      return "hpu";
    case DeviceType::VE:
      return "ve";
    case DeviceType::Lazy:
      return "lazy";
    case DeviceType::IPU:
      return "ipu";
    case DeviceType::MTIA:
      return "mtia";
    case DeviceType::PrivateUse1:
      return "privateuseone";
  }
  return "invalid";
}

std::ostream& operator<<(std::ostream& out, DeviceType type) {
  return out << toString(type);
}

BackendComponent toBackendComponent(DeviceType type) {
  switch (type) {
    case DeviceType::CPU:
      return BackendComponent::CPUBit;
    case DeviceType::CUDA:
      return BackendComponent::CUDABit;
    case DeviceType::HIP:
      return BackendComponent::HIPBit;
    case DeviceType::XLA:
      return BackendComponent::XLABit;
    case DeviceType::XPU:
      return BackendComponent::XPUBit;
    case DeviceType::MPS:
      return BackendComponent::MPSBit;
    case DeviceType::Meta:
      return BackendComponent::MetaBit;
    case DeviceType::HPU:
      return BackendComponent::HPUBit;
    case DeviceType::VE:
      return BackendComponent::VEBit;
    case DeviceType::Lazy:
      return BackendComponent::LazyBit;
    case DeviceType::IPU:
      return BackendComponent::IPUBit;
    case DeviceType::MTIA:
      return BackendComponent::MTIABit;
    case DeviceType::PrivateUse1:
      return BackendComponent::PrivateUse1Bit;
  }
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument,
                "toBackendComponent(): invalid device type ",
                static_cast<int>(type));
  return BackendComponent::InvalidBit;
}

void Device::throwInvalidIndex(DeviceType type, DeviceIndex index) {
  if (type == DeviceType::CPU && index > 0) {
    TURNOUT_CHECK(false, ErrorKind::InvalidArgument,
                  "Device(): a CPU device index must be -1 or 0, got ",
                  static_cast<int>(index));
  }
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument, "Device(): the index of a ",
                deviceTypeName(type),
                " device must be -1 (none) or non-negative, got ",
                static_cast<int>(index));
  __builtin_unreachable();
}

namespace {

[[noreturn]] void throwInvalidDeviceString(std::string_view s,
                                           std::string_view reason) {
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument, "Invalid device string: '",
                s, "'; expected e.g. 'cpu', 'cuda', 'cuda:1', 'meta'", reason);
  __builtin_unreachable();
}

std::string knownDeviceTypes() {
  std::string names;
  for (DeviceType t : kAllDeviceTypes) {
    if (!names.empty()) names += ", ";
    names += deviceTypeName(t);
  }
  return names;
}

Device parseDevice(std::string_view s) {
  const size_t colon = s.find(':');
  const std::string_view name = s.substr(0, colon);
  DeviceType type = DeviceType::CPU;
  bool found = false;
  for (DeviceType t : kAllDeviceTypes) {
    if (name == deviceTypeName(t)) {
      type = t;
      found = true;
      break;
    }
  }
  if (!found) {
    throwInvalidDeviceString(
        s, "; '" + std::string(name) +
               "' is not a device type (known: " + knownDeviceTypes() + ")");
  }
  if (colon == std::string_view::npos) return Device(type);

  const std::string_view digits = s.substr(colon + 1);
  if (digits.empty()) throwInvalidDeviceString(s, "");
  int64_t index = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') throwInvalidDeviceString(s, "");
    index = index * 10 + (c - '0');
    if (index > std::numeric_limits<DeviceIndex>::max()) {
      throwInvalidDeviceString(s, "; the index is too large");
    }
  }
  if (digits.size() > 1 && digits[0] == '0') {
    throwInvalidDeviceString(s, "; the index must not have leading zeros");
  }
  if (type == DeviceType::CPU && index != 0) {
    throwInvalidDeviceString(s, "; a CPU device index must be 0");
  }
  return Device(type, static_cast<DeviceIndex>(index));
}

}  // namespace

Device::Device(std::string_view device_string)
    : Device(parseDevice(device_string)) {}
Device::Device(const std::string& device_string)
    : Device(std::string_view(device_string)) {}
Device::Device(const char* device_string)
    : Device(std::string_view(device_string)) {}

std::string Device::str() const {
  std::string s = deviceTypeName(type_);
  if (has_index()) {
    s += ':';
    s += std::to_string(static_cast<int>(index_));
  }
  return s;
}

std::ostream& operator<<(std::ostream& out, const Device& device) {
  return out << device.str();
}

}  // namespace turnout
