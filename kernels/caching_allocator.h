// The CPU caching allocator: keeps freed tensor memory for reuse, so that a
// small operator does not pay malloc/free and a large one does not map and
// page-fault a fresh block on every call.
//
//   CachingCPUAllocator* a = getCachingCPUAllocator();  // already registered
//   DataPtr p = a->allocate(4);        // a 64-byte block from this thread's list
//   p.clear();                         // back on this thread's list
//   a->stats().cache_hits;             // how many allocations were reused
//   a->emptyCache();                   // give every cached block back
//
// Linking //kernels:caching_allocator (every CPU kernel library does) makes
// it the allocator getAllocator(DeviceType::CPU) returns, at load time; a
// user can still install another with setAllocator. Memory it hands out is
// 64-byte aligned (kCPUAlignment) like the default allocator's.
//
// Two caches, chosen by size:
//   - small blocks (at most kMaxSmallBlock bytes): power-of-two size
//     classes, one free list per class per thread, no lock and no atomic
//     read-modify-write. A block freed on another thread joins that
//     thread's lists. At most kMaxBlocksPerClass blocks per class per thread
//     are kept; the rest go back to the system.
//   - large blocks: one process-wide cache (best fit by size, behind a
//     mutex, taken only on this slow path), at most maxCachedBytes() bytes.
//
// Thread safety: every member may be called from any thread. emptyCache()
// frees the process-wide cache and the calling thread's lists at once;
// other threads free their lists on their next allocation or free (a
// generation counter they check), and when they exit.
#ifndef TURNOUT_KERNELS_CACHING_ALLOCATOR_H_
#define TURNOUT_KERNELS_CACHING_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>

#include "dispatcher/core/allocator.h"

namespace turnout {

/// Counters of the caching allocator, summed over all threads. Byte counts
/// are block capacities (a request rounded up to its size class).
struct CachingAllocatorStats {
  int64_t allocations = 0;         // allocate() calls that returned memory
  int64_t cache_hits = 0;          // ... served from a cache
  int64_t system_allocations = 0;  // blocks taken from the system
  int64_t system_frees = 0;        // blocks given back to the system
  int64_t bytes_in_use = 0;        // handed out and not yet freed
  int64_t bytes_cached = 0;        // held for reuse (small and large)
};

class CachingCPUAllocator final : public Allocator {
 public:
  /// Largest request served by the per-thread size classes.
  static constexpr size_t kMaxSmallBlock = 32 * 1024;
  /// Blocks kept per size class per thread.
  static constexpr int kMaxBlocksPerClass = 64;
  /// Default bound of the large-block cache.
  static constexpr size_t kDefaultMaxCachedBytes = size_t{1} << 30;

  /// `nbytes` bytes, 64-byte aligned; no data for 0. Throws Error
  /// (InvalidArgument) "CPU allocator: out of memory ..." when the system
  /// has none, after giving back every cached large block and trying again.
  DataPtr allocate(size_t nbytes) override;

  /// Frees every cached block of the process-wide cache and of the calling
  /// thread now; other threads' per-thread lists at their next call.
  void emptyCache();

  /// Bounds the large-block cache to `bytes` (0: cache no large block),
  /// freeing cached blocks down to it.
  void setMaxCachedBytes(size_t bytes);
  size_t maxCachedBytes() const;

  /// The counters, summed over live and exited threads. A snapshot: other
  /// threads may be allocating while it is taken.
  CachingAllocatorStats stats() const;
};

/// The process's caching allocator (never destroyed).
CachingCPUAllocator* getCachingCPUAllocator();

}  // namespace turnout

#endif  // TURNOUT_KERNELS_CACHING_ALLOCATOR_H_
