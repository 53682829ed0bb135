// The CUDA caching allocator: registered for DeviceType::CUDA in
// dispatcher/core/allocator.h's registry when this library is linked. Freed
// blocks go back to a free list keyed by device, stream and rounded size and
// are handed out again without cudaMalloc/cudaFree (which synchronise the
// device and cost tens of microseconds each).
//
//   Tensor t = empty({1024}, TensorOptions(kFloat).device("cuda"));
//   t = Tensor();                          // the block is cached, not freed
//   cuda::CachingAllocatorStats s = cuda::cachingAllocatorStats();
//   cuda::emptyCache();                    // cudaFree every cached block
//
// Streams, as torch's allocator: a block belongs to the stream that was
// current when it was allocated, and a freed block is handed out again only
// for that stream, where every later use is ordered after the kernels that
// used it before. A tensor used on another stream must say so with
// recordStream(): when freed, its block then waits for an event recorded on
// each such stream before it is reused.
//
// Thread safety: allocate, free, recordStream, emptyCache and the stats take
// one mutex; any thread may call them. The allocator is never destroyed
// (tensors may be freed during static destruction).
#ifndef TURNOUT_KERNELS_CUDA_ALLOCATOR_H_
#define TURNOUT_KERNELS_CUDA_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>

#include "dispatcher/core/allocator.h"
#include "kernels/cuda/stream.h"

namespace turnout {
namespace cuda {

/// Counters over all devices.
struct CachingAllocatorStats {
  size_t allocated_bytes = 0;  // in blocks that tensors hold
  size_t cached_bytes = 0;     // in free blocks kept for reuse
  int64_t num_device_allocs = 0;  // cudaMalloc calls so far
  int64_t num_cache_hits = 0;     // allocations served from a free list
  size_t pending_bytes = 0;  // freed, waiting for events of other streams
};

/// The registered CUDA allocator (the same object getAllocator(kCUDA)
/// returns while nobody replaced it).
Allocator* cachingAllocator();

/// Frees every cached (unused) block with cudaFree. Blocks tensors hold
/// are not touched.
void emptyCache();

CachingAllocatorStats cachingAllocatorStats();

/// Marks the block of `data` (a DataPtr this allocator returned, e.g. a
/// CUDA tensor's storage) as used on `stream`: when it is freed, it is not
/// reused until the work queued on `stream` by then has finished. Throws
/// InvalidArgument for memory this allocator did not allocate. As torch's
/// Tensor.record_stream.
void recordStream(const DataPtr& data, CUDAStream stream);

/// The stream a block of this allocator belongs to (the current stream
/// when it was allocated). Precondition: `data` came from this allocator.
CUDAStream blockStream(const DataPtr& data);

/// The size a request of `nbytes` is rounded up to (the free lists' key):
/// a multiple of 512 bytes below 1 MiB, of 2 MiB above.
size_t roundAllocationSize(size_t nbytes);

}  // namespace cuda
}  // namespace turnout

#endif  // TURNOUT_KERNELS_CUDA_ALLOCATOR_H_
