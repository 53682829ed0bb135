// Device: where a tensor's data lives, a device type and an optional index,
// with c10's numbering, parsing and printing.
//
//   Device d("cuda:1");
//   d.type();        // DeviceType::CUDA
//   d.index();       // 1
//   d.str();         // "cuda:1"
//   Device("cpu") == Device(DeviceType::CPU);      // true
//   toBackendComponent(DeviceType::Meta);          // BackendComponent::MetaBit
//
// A value type (two bytes, trivially copyable) with pure functions:
// thread-safe.
#ifndef TURNOUT_DISPATCHER_CORE_DEVICE_H_
#define TURNOUT_DISPATCHER_CORE_DEVICE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include "dispatcher/core/dispatch_key.h"
#include "dispatcher/core/error.h"

namespace turnout {

/// A device family. The values are c10's; the gaps are c10's device types
/// that turnout does not have (MKLDNN, OpenGL, ..., Vulkan, Metal).
enum class DeviceType : int8_t {
  CPU = 0,
  CUDA = 1,
  HIP = 6,
  XLA = 9,
  XPU = 12,
  MPS = 13,
  Meta = 14,  // tensors with sizes and dtype but no data
  HPU = 15,
  VE = 16,
  Lazy = 17,
  IPU = 18,
  MTIA = 19,
  PrivateUse1 = 20,  // for an out-of-tree backend
};

/// One more than the largest DeviceType value: the size of a table indexed
/// by device type.
constexpr int kCompileTimeMaxDeviceTypes = 21;

/// The device types turnout supports, in enumerator order.
inline constexpr DeviceType kAllDeviceTypes[] = {
    DeviceType::CPU,        DeviceType::CUDA, DeviceType::HIP,
    DeviceType::XLA,        DeviceType::XPU,  DeviceType::MPS,
    DeviceType::Meta,       DeviceType::HPU,  DeviceType::VE,
    DeviceType::Lazy,       DeviceType::IPU,  DeviceType::MTIA,
    DeviceType::PrivateUse1};

// c10's short spellings.
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
constexpr DeviceType kMeta = DeviceType::Meta;
constexpr DeviceType kPrivateUse1 = DeviceType::PrivateUse1;

/// An index within a device type; -1 means "none" (the current device).
using DeviceIndex = int8_t;

/// True for the enumerators above. Use it before casting an integer to
/// DeviceType.
bool isValidDeviceType(int64_t value);

/// The enumerator's spelling: "CPU", "CUDA", "Meta", "PrivateUse1";
/// "InvalidDeviceType" for a value that is not an enumerator.
const char* toString(DeviceType type);
/// The name in device strings: "cpu", "cuda", "meta", "privateuseone".
const char* deviceTypeName(DeviceType type);
std::ostream& operator<<(std::ostream& out, DeviceType type);

/// The backend component of a device type's dispatch keys: CUDA -> CUDABit.
BackendComponent toBackendComponent(DeviceType type);

/// A device type and an index. Invariants (checked at construction): the
/// index is -1 or non-negative, and a CPU index is -1 or 0.
class Device {
 public:
  /// Throws Error(InvalidArgument) when the invariants do not hold.
  constexpr Device(DeviceType type, DeviceIndex index = -1)  // NOLINT
      : type_(type), index_(index) {
    if (index < -1 || (type == DeviceType::CPU && index > 0)) {
      throwInvalidIndex(type, index);
    }
  }
  /// Parses "cpu", "cuda", "cuda:1", "meta", ...: a device type name as
  /// deviceTypeName prints it, then optionally ':' and an index without
  /// leading zeros. Throws Error(InvalidArgument) "Invalid device string:
  /// 'cuda:x'; expected e.g. 'cpu', 'cuda', 'cuda:1', 'meta'" otherwise.
  Device(const std::string& device_string);  // NOLINT: implicit, as c10
  Device(const char* device_string);         // NOLINT
  explicit Device(std::string_view device_string);

  constexpr DeviceType type() const noexcept { return type_; }
  constexpr DeviceIndex index() const noexcept { return index_; }
  constexpr bool has_index() const noexcept { return index_ != -1; }
  /// Precondition: as for the constructor.
  void set_index(DeviceIndex index) { *this = Device(type_, index); }

  constexpr bool is_cpu() const noexcept { return type_ == DeviceType::CPU; }
  constexpr bool is_cuda() const noexcept { return type_ == DeviceType::CUDA; }
  constexpr bool is_meta() const noexcept { return type_ == DeviceType::Meta; }
  constexpr bool is_privateuseone() const noexcept {
    return type_ == DeviceType::PrivateUse1;
  }

  /// "cpu", "cuda:0", "meta": the form PyTorch prints and the parser reads.
  std::string str() const;

  constexpr bool operator==(const Device& other) const noexcept {
    return type_ == other.type_ && index_ == other.index_;
  }
  constexpr bool operator!=(const Device& other) const noexcept {
    return !(*this == other);
  }

 private:
  [[noreturn]] static void throwInvalidIndex(DeviceType type,
                                             DeviceIndex index);

  DeviceType type_;
  DeviceIndex index_;
};

std::ostream& operator<<(std::ostream& out, const Device& device);

}  // namespace turnout

namespace std {
template <>
struct hash<turnout::Device> {
  size_t operator()(const turnout::Device& d) const noexcept {
    return (static_cast<size_t>(static_cast<uint8_t>(d.type())) << 8) |
           static_cast<uint8_t>(d.index());
  }
};
}  // namespace std

#endif  // TURNOUT_DISPATCHER_CORE_DEVICE_H_
