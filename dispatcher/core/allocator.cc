#include "dispatcher/core/allocator.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>

#include "dispatcher/core/error.h"

namespace turnout {
namespace {

class DefaultCPUAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) return DataPtr(nullptr, Device(DeviceType::CPU));
    TURNOUT_CHECK(nbytes <= SIZE_MAX - kCPUAlignment,
                  ErrorKind::InvalidArgument, "CPU allocator: cannot allocate ",
                  nbytes, " bytes");
    // aligned_alloc wants a size that is a multiple of the alignment.
    const size_t rounded =
        (nbytes + kCPUAlignment - 1) / kCPUAlignment * kCPUAlignment;
    void* data = std::aligned_alloc(kCPUAlignment, rounded);
    TURNOUT_CHECK(data != nullptr, ErrorKind::InvalidArgument,
                  "CPU allocator: out of memory: tried to allocate ", nbytes,
                  " bytes");
    return DataPtr(data, data, &std::free, Device(DeviceType::CPU));
  }
};

class DefaultMetaAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t) override {
    return DataPtr(nullptr, Device(DeviceType::Meta));
  }
};

// Zero-initialized before any dynamic initialization, so lookups from other
// static initializers are safe.
std::atomic<Allocator*> g_allocators[kCompileTimeMaxDeviceTypes];

std::atomic<Allocator*>& slot(DeviceType type, const char* caller) {
  TURNOUT_CHECK(isValidDeviceType(static_cast<int64_t>(type)),
                ErrorKind::InvalidArgument, caller, "(): invalid device type ",
                static_cast<int>(type));
  return g_allocators[static_cast<int>(type)];
}

}  // namespace

// Never destroyed: threads may still allocate while the process exits, and
// a destroyed allocator's virtual call would reach the abstract base's
// "pure virtual method called".
Allocator* getDefaultCPUAllocator() {
  static Allocator* const allocator = new DefaultCPUAllocator();
  return allocator;
}

Allocator* getDefaultMetaAllocator() {
  static Allocator* const allocator = new DefaultMetaAllocator();
  return allocator;
}

Allocator* setAllocator(DeviceType type, Allocator* allocator) {
  // Release: a thread that loads the new pointer sees the allocator fully
  // constructed. Acquire: the same for the previous one we hand back.
  return slot(type, "setAllocator")
      .exchange(allocator, std::memory_order_acq_rel);
}

Allocator* getAllocator(DeviceType type) {
  // Every new CPU tensor asks: CPU is a valid type, so its slot is read
  // without slot()'s scan of the device types. Acquire pairs with the
  // release in setAllocator.
  if (type == DeviceType::CPU) {
    Allocator* cpu = g_allocators[static_cast<int>(DeviceType::CPU)].load(
        std::memory_order_acquire);
    return cpu != nullptr ? cpu : getDefaultCPUAllocator();
  }
  Allocator* allocator =
      slot(type, "getAllocator").load(std::memory_order_acquire);
  if (allocator != nullptr) return allocator;
  if (type == DeviceType::CPU) return getDefaultCPUAllocator();
  if (type == DeviceType::Meta) return getDefaultMetaAllocator();
  TURNOUT_CHECK(false, ErrorKind::NotImplemented,
                "no allocator is registered for device type ", toString(type),
                ": link turnout's ", toString(type),
                " kernels, or call setAllocator(DeviceType::", toString(type),
                ", ...)");
  return nullptr;
}

}  // namespace turnout
