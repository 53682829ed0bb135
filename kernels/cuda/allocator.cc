#include "kernels/cuda/allocator.h"

#include <cuda_runtime_api.h>

#include <mutex>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "dispatcher/core/error.h"
#include "kernels/cuda/cuda_utils.h"

namespace turnout {
namespace cuda {
namespace {

struct Block {
  void* ptr;
  size_t size;  // rounded
  int device;
  cudaStream_t stream;  // the stream it was allocated for
  // Other streams it was used on (recordStream), cleared when it is freed.
  absl::flat_hash_set<cudaStream_t> stream_uses;
};

// A free list: blocks of one rounded size for one stream of one device.
struct FreeListKey {
  int device;
  cudaStream_t stream;
  size_t size;
  bool operator==(const FreeListKey& o) const {
    return device == o.device && stream == o.stream && size == o.size;
  }
  template <typename H>
  friend H AbslHashValue(H h, const FreeListKey& k) {
    return H::combine(std::move(h), k.device, k.stream, k.size);
  }
};

// A freed block that other streams used: free once every event completed.
struct PendingFree {
  Block* block;
  std::vector<cudaEvent_t> events;
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
    TURNOUT_CHECK(device < kMaxDevices, ErrorKind::NotImplemented,
                  "CUDA allocator: device index ", device,
                  " is above turnout's limit of ", kMaxDevices);
    const FreeListKey k{device, currentStreamHandle(device), size};
    Block* block = takeCached(k);
    if (block == nullptr) block = allocateNew(k);
    return DataPtr(block->ptr, block, &CUDACachingAllocator::freeBlock,
                   Device(DeviceType::CUDA, device));
  }

  void recordStream(const DataPtr& data, CUDAStream stream) {
    if (!data) return;  // no memory: nothing to protect
    TURNOUT_CHECK(data.get_deleter() == &CUDACachingAllocator::freeBlock,
                  ErrorKind::InvalidArgument,
                  "record_stream: the tensor's memory was not allocated by "
                  "turnout's CUDA caching allocator");
    auto* b = static_cast<Block*>(data.get_context());
    std::lock_guard<std::mutex> lock(mutex_);
    if (stream.stream() != b->stream) b->stream_uses.insert(stream.stream());
  }

  void emptyCache() {
    std::vector<Block*> blocks;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // Blocks waiting for other streams: wait for them, then free them too.
      for (PendingFree& p : pending_) {
        for (cudaEvent_t e : p.events) {
          cudaEventSynchronize(e);
          cudaEventDestroy(e);
        }
        stats_.pending_bytes -= p.block->size;
        stats_.cached_bytes += p.block->size;
        blocks.push_back(p.block);
      }
      pending_.clear();
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
  // Precondition: mutex_ is held. Moves pending blocks whose events have all
  // completed to their free lists.
  void processPending() {
    auto done = [](PendingFree& p) {
      for (cudaEvent_t e : p.events) {
        const cudaError_t status = cudaEventQuery(e);
        if (status == cudaErrorNotReady) {
          cudaGetLastError();
          return false;
        }
      }
      return true;
    };
    for (size_t i = 0; i < pending_.size();) {
      if (!done(pending_[i])) {
        ++i;
        continue;
      }
      for (cudaEvent_t e : pending_[i].events) cudaEventDestroy(e);
      Block* b = pending_[i].block;
      free_[{b->device, b->stream, b->size}].push_back(b);
      stats_.pending_bytes -= b->size;
      stats_.cached_bytes += b->size;
      pending_[i] = pending_.back();
      pending_.pop_back();
    }
  }

  Block* takeCached(const FreeListKey& k) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!pending_.empty()) processPending();
    auto it = free_.find(k);
    if (it == free_.end() || it->second.empty()) return nullptr;
    Block* b = it->second.back();
    it->second.pop_back();
    stats_.cached_bytes -= b->size;
    stats_.allocated_bytes += b->size;
    ++stats_.num_cache_hits;
    return b;
  }

  Block* allocateNew(const FreeListKey& k) {
    void* ptr = nullptr;
    cudaError_t error = cudaMalloc(&ptr, k.size);
    if (error == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      emptyCache();  // give the cached blocks back and try once more
      error = cudaMalloc(&ptr, k.size);
    }
    if (error != cudaSuccess) {
      cudaGetLastError();
      TURNOUT_CHECK(error != cudaErrorMemoryAllocation,
                    ErrorKind::InvalidArgument,
                    "CUDA out of memory: tried to allocate ", k.size,
                    " bytes on cuda:", k.device, " (",
                    stats().allocated_bytes, " bytes held by tensors)");
      checkCuda(error, "CUDA allocator: cudaMalloc");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.allocated_bytes += k.size;
    ++stats_.num_device_allocs;
    return new Block{ptr, k.size, k.device, k.stream, {}};
  }

  // The DataPtr deleter: back to the free list, or, when other streams
  // used the block, to the pending list behind one event per such stream.
  static void freeBlock(void* context) {
    auto* self = static_cast<CUDACachingAllocator*>(cachingAllocator());
    auto* b = static_cast<Block*>(context);
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->stats_.allocated_bytes -= b->size;
    if (b->stream_uses.empty()) {
      self->free_[{b->device, b->stream, b->size}].push_back(b);
      self->stats_.cached_bytes += b->size;
      return;
    }
    PendingFree p{b, {}};
    // Raw calls, no guard: a deleter must not throw.
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
    if (previous != b->device) cudaSetDevice(b->device);
    for (cudaStream_t s : b->stream_uses) {
      cudaEvent_t e = nullptr;
      if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess ||
          cudaEventRecord(e, s) != cudaSuccess) {
        // No event (the context is going away): wait for the stream here.
        cudaGetLastError();
        if (e != nullptr) cudaEventDestroy(e);
        cudaStreamSynchronize(s);
        continue;
      }
      p.events.push_back(e);
    }
    if (previous >= 0 && previous != b->device) cudaSetDevice(previous);
    cudaGetLastError();
    b->stream_uses.clear();
    self->pending_.push_back(std::move(p));
    self->stats_.pending_bytes += b->size;
  }

  std::mutex mutex_;
  // Guarded by mutex_.
  absl::flat_hash_map<FreeListKey, std::vector<Block*>> free_;
  std::vector<PendingFree> pending_;
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

void recordStream(const DataPtr& data, CUDAStream stream) {
  instance()->recordStream(data, stream);
}

CUDAStream blockStream(const DataPtr& data) {
  TURNOUT_INTERNAL_ASSERT(data.get_context() != nullptr,
                          "blockStream: memory without a block");
  const auto* b = static_cast<const Block*>(data.get_context());
  return CUDAStream(b->stream, b->device);
}

size_t roundAllocationSize(size_t nbytes) {
  constexpr size_t kSmall = 512;
  constexpr size_t kLarge = 2 << 20;
  const size_t unit = nbytes < (1 << 20) ? kSmall : kLarge;
  return (nbytes + unit - 1) / unit * unit;
}

}  // namespace cuda
}  // namespace turnout
