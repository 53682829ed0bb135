// The CUDA caching allocator: registered for DeviceType::CUDA in
// dispatcher/allocator.h's registry when this library is linked. Freed
// blocks go back to a per-device free list keyed by their rounded size and
// are handed out again without cudaMalloc/cudaFree (which synchronise the
// device and cost tens of microseconds each).
//
//   Tensor t = empty({1024}, TensorOptions(kFloat).device("cuda"));
//   t = Tensor();                          // the block is cached, not freed
//   cuda::CachingAllocatorStats s = cuda::cachingAllocatorStats();
//   cuda::emptyCache();                    // cudaFree every cached block
//
// Only the default stream is used by turnout's CUDA kernels, so a block
// freed on the host may be reused at once: every later use of it is ordered
// after the kernels that used it before.
//
// Thread safety: allocate, free, emptyCache and the stats take one mutex;
// any thread may call them. The allocator is never destroyed (tensors may be
// freed during static destruction).
#ifndef TURNOUT_KERNELS_CUDA_ALLOCATOR_H_
#define TURNOUT_KERNELS_CUDA_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>

#include "dispatcher/allocator.h"

namespace turnout {
namespace cuda {

/// Counters over all devices.
struct CachingAllocatorStats {
  size_t allocated_bytes = 0;  // in blocks that tensors hold
  size_t cached_bytes = 0;     // in free blocks kept for reuse
  int64_t num_device_allocs = 0;  // cudaMalloc calls so far
  int64_t num_cache_hits = 0;     // allocations served from a free list
};

/// The registered CUDA allocator (the same object getAllocator(kCUDA)
/// returns while nobody replaced it).
Allocator* cachingAllocator();

/// Frees every cached (unused) block with cudaFree. Blocks tensors hold
/// are not touched.
void emptyCache();

CachingAllocatorStats cachingAllocatorStats();

/// The size a request of `nbytes` is rounded up to (the free lists' key):
/// a multiple of 512 bytes below 1 MiB, of 2 MiB above.
size_t roundAllocationSize(size_t nbytes);

}  // namespace cuda
}  // namespace turnout

#endif  // TURNOUT_KERNELS_CUDA_ALLOCATOR_H_
