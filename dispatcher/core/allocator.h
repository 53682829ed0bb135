// Allocator: how a device type allocates tensor memory, DataPtr: the owning
// pointer an allocation returns, and the per-device-type registry.
//
//   DataPtr p = getAllocator(DeviceType::CPU)->allocate(256);  // 64-aligned
//   static_cast<float*>(p.get())[0] = 1.0f;
//   // p frees the memory when it goes out of scope.
//   MyCudaAllocator cuda;
//   setAllocator(DeviceType::CUDA, &cuda);   // now getAllocator(kCUDA) works
//
// Thread safety: setAllocator and getAllocator may race with each other from
// any threads; a lookup sees either the old or the new allocator, never a
// torn one. The registry does not own allocators: one passed to setAllocator
// must stay alive while any thread may still look it up or free its memory
// (in practice, a static). A DataPtr is a move-only value, not shared.
#ifndef TURNOUT_DISPATCHER_CORE_ALLOCATOR_H_
#define TURNOUT_DISPATCHER_CORE_ALLOCATOR_H_

#include <cstddef>
#include <utility>

#include "dispatcher/core/device.h"

namespace turnout {

/// Frees a context.
using DeleterFnPtr = void (*)(void* context);

/// Owns one allocation: the data pointer, an opaque context the deleter
/// receives (often the same pointer), the deleter, and the device the data
/// lives on. Move-only. The deleter runs once, with the context, when the
/// DataPtr is destroyed or cleared; a null deleter means "not owned".
class DataPtr {
 public:
  /// No data, on the CPU.
  DataPtr() : DataPtr(nullptr, Device(DeviceType::CPU)) {}
  /// Data that is not owned (nothing is freed).
  DataPtr(void* data, Device device)
      : data_(data), context_(nullptr), deleter_(nullptr), device_(device) {}
  /// Data owned through `context`: `deleter(context)` frees it.
  DataPtr(void* data, void* context, DeleterFnPtr deleter, Device device)
      : data_(data), context_(context), deleter_(deleter), device_(device) {}

  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  DataPtr(DataPtr&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        context_(std::exchange(other.context_, nullptr)),
        deleter_(std::exchange(other.deleter_, nullptr)),
        device_(other.device_) {}
  DataPtr& operator=(DataPtr&& other) noexcept {
    if (this != &other) {
      clear();
      data_ = std::exchange(other.data_, nullptr);
      context_ = std::exchange(other.context_, nullptr);
      deleter_ = std::exchange(other.deleter_, nullptr);
      device_ = other.device_;
    }
    return *this;
  }
  ~DataPtr() { clear(); }

  void* get() const { return data_; }
  void* get_context() const { return context_; }
  DeleterFnPtr get_deleter() const { return deleter_; }
  Device device() const { return device_; }
  explicit operator bool() const { return data_ != nullptr; }

  /// Frees the allocation now (if owned) and leaves no data.
  void clear() {
    if (deleter_ != nullptr) deleter_(context_);
    data_ = nullptr;
    context_ = nullptr;
    deleter_ = nullptr;
  }
  /// Gives up ownership: returns the context, which the caller must now free
  /// with the deleter it read first. Leaves no data.
  void* release_context() {
    void* context = context_;
    data_ = nullptr;
    context_ = nullptr;
    deleter_ = nullptr;
    return context;
  }
  /// Changes the recorded device (the memory does not move).
  void unsafe_set_device(Device device) { device_ = device; }

 private:
  void* data_;
  void* context_;
  DeleterFnPtr deleter_;
  Device device_;
};

/// Allocates memory for one device type. Implementations must be
/// thread-safe: any thread may allocate at any time.
class Allocator {
 public:
  virtual ~Allocator() = default;
  /// `nbytes` bytes on this allocator's device (0 may give no data). Throws
  /// turnout::Error when the memory cannot be had.
  virtual DataPtr allocate(size_t nbytes) = 0;
};

/// Makes `allocator` the one getAllocator(type) returns, and returns the
/// previous registration (nullptr if none). A null `allocator` removes the
/// registration; for CPU and Meta that restores the default.
Allocator* setAllocator(DeviceType type, Allocator* allocator);

/// The allocator registered for `type`; for CPU and Meta the default when
/// none is. Throws Error(NotImplemented) "no allocator is registered for
/// device type CUDA: link turnout's CUDA kernels, or call
/// setAllocator(DeviceType::CUDA, ...)" when there is none.
Allocator* getAllocator(DeviceType type);

/// The default CPU allocator: 64-byte aligned memory, freed with free().
Allocator* getDefaultCPUAllocator();
/// The default Meta allocator: allocates nothing (null data, device meta),
/// whatever the size.
Allocator* getDefaultMetaAllocator();

/// Alignment of the default CPU allocator's memory, in bytes.
constexpr size_t kCPUAlignment = 64;

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CORE_ALLOCATOR_H_
