#include "kernels/cuda/allocator.h"

#include <cuda_runtime_api.h>

#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "dispatcher/error.h"
#include "kernels/cuda/cuda_utils.h"

namespace turnout {
namespace cuda {
namespace {

struct Block {
  void* ptr;
  size_t size;  // rounded
  int device;
};

class CUDACachingAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    checkDeviceAvailable("CUDA allocator");
    const int device = currentDevice();
    if (nbytes == 0) return DataPtr(nullptr, Device(DeviceType::CUDA, device));
    const size_t size = roundAllocationSize(nbytes);
    TURNOUT_CHECK(size >= nbytes, ErrorKind::InvalidArgument,
                  "CUDA allocator: ", nbytes, " bytes cannot be allocated");
    Block* block = takeCached(device, size);
    if (block == nullptr) block = allocateNew(device, size);
    return DataPtr(block->ptr, block, &CUDACachingAllocator::freeBlock,
                   Device(DeviceType::CUDA, device));
  }

  void emptyCache() {
    std::vector<Block*> blocks;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto& [key, list] : free_) {
        blocks.insert(blocks.end(), list.begin(), list.end());
      }
      free_.clear();
      stats_.cached_bytes = 0;
    }
    for (Block* b : blocks) {
      CUDADeviceGuard guard(Device(DeviceType::CUDA, b->device));
      cudaFree(b->ptr);
      delete b;
    }
  }

  CachingAllocatorStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }

 private:
  // (device, rounded size): device in the top 8 bits, which size never
  // reaches (sizes are below 2^56 bytes).
  static uint64_t key(int device, size_t size) {
    return (static_cast<uint64_t>(device) << 56) | size;
  }

  Block* takeCached(int device, size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(key(device, size));
    if (it == free_.end() || it->second.empty()) return nullptr;
    Block* b = it->second.back();
    it->second.pop_back();
    stats_.cached_bytes -= b->size;
    stats_.allocated_bytes += b->size;
    ++stats_.num_cache_hits;
    return b;
  }

  Block* allocateNew(int device, size_t size) {
    void* ptr = nullptr;
    cudaError_t error = cudaMalloc(&ptr, size);
    if (error == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      emptyCache();  // give the cached blocks back and try once more
      error = cudaMalloc(&ptr, size);
    }
    if (error != cudaSuccess) {
      cudaGetLastError();
      TURNOUT_CHECK(error != cudaErrorMemoryAllocation,
                    ErrorKind::InvalidArgument,
                    "CUDA out of memory: tried to allocate ", size,
                    " bytes on cuda:", device, " (",
                    stats().allocated_bytes, " bytes held by tensors)");
      checkCuda(error, "CUDA allocator: cudaMalloc");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.allocated_bytes += size;
    ++stats_.num_device_allocs;
    return new Block{ptr, size, device};
  }

  // The DataPtr deleter: back to the free list.
  static void freeBlock(void* context) {
    auto* self = static_cast<CUDACachingAllocator*>(cachingAllocator());
    auto* b = static_cast<Block*>(context);
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->free_[key(b->device, b->size)].push_back(b);
    self->stats_.allocated_bytes -= b->size;
    self->stats_.cached_bytes += b->size;
  }

  std::mutex mutex_;
  // Guarded by mutex_.
  absl::flat_hash_map<uint64_t, std::vector<Block*>> free_;
  CachingAllocatorStats stats_;
};

CUDACachingAllocator* instance() {
  // Never destroyed: tensors may be freed during static destruction.
  static auto* allocator = new CUDACachingAllocator();
  return allocator;
}

// Registers the allocator when the library is loaded.
const bool kRegistered = [] {
  setAllocator(DeviceType::CUDA, instance());
  return true;
}();

}  // namespace

Allocator* cachingAllocator() { return instance(); }

void emptyCache() { instance()->emptyCache(); }

CachingAllocatorStats cachingAllocatorStats() { return instance()->stats(); }

size_t roundAllocationSize(size_t nbytes) {
  constexpr size_t kSmall = 512;
  constexpr size_t kLarge = 2 << 20;
  const size_t unit = nbytes < (1 << 20) ? kSmall : kLarge;
  return (nbytes + unit - 1) / unit * unit;
}

}  // namespace cuda
}  // namespace turnout
