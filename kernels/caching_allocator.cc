#include "kernels/caching_allocator.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include <sanitizer/asan_interface.h>  // no-op macros without ASan

#include "dispatcher/core/error.h"
#include "dispatcher/core/thread_local.h"

namespace turnout {
namespace {

// Every block starts with a header of one alignment unit; the caller's data
// follows it, so it is 64-byte aligned too. The DataPtr's context is the
// header, which the deleter reads to find the block's cache.
struct BlockHeader {
  size_t capacity;     // data bytes after the header
  int32_t size_class;  // index of the per-thread list, or kLargeClass
  BlockHeader* next;   // next cached block (only while cached)
};
constexpr size_t kHeaderBytes = kCPUAlignment;
static_assert(sizeof(BlockHeader) <= kHeaderBytes, "header fits its unit");

constexpr int32_t kLargeClass = -1;
constexpr size_t kMinSmallBlock = 64;
// Classes 64, 128, ..., kMaxSmallBlock bytes.
constexpr int kNumClasses = 10;
static_assert((kMinSmallBlock << (kNumClasses - 1)) ==
                  CachingCPUAllocator::kMaxSmallBlock,
              "the last class is kMaxSmallBlock");
// Large requests are rounded up to pages, and a cached block up to 1.25
// times the rounded request may serve it (blocks are never split).
constexpr size_t kLargeRounding = 4096;

inline int sizeClassOf(size_t nbytes) {  // 1 <= nbytes <= kMaxSmallBlock
  if (nbytes <= kMinSmallBlock) return 0;
  return 64 - __builtin_clzll(static_cast<unsigned long long>(nbytes - 1)) - 6;
}

// Counters one thread writes (relaxed load + store: no read-modify-write on
// the fast path) and stats() reads from any thread.
struct Counters {
  std::atomic<int64_t> allocations{0};
  std::atomic<int64_t> cache_hits{0};
  std::atomic<int64_t> system_allocations{0};
  std::atomic<int64_t> system_frees{0};
  std::atomic<int64_t> bytes_in_use{0};
  std::atomic<int64_t> bytes_cached{0};
};

inline void ownerAdd(std::atomic<int64_t>& counter, int64_t delta) {
  counter.store(counter.load(std::memory_order_relaxed) + delta,
                std::memory_order_relaxed);
}
inline void sharedAdd(std::atomic<int64_t>& counter, int64_t delta) {
  counter.fetch_add(delta, std::memory_order_relaxed);
}

enum class CacheState : uint8_t { kUnused, kAlive, kDead };

// One thread's lists. Invariant: counts[k] blocks of class k are linked
// from heads[k]; only the owning thread touches heads and counts.
struct ThreadCache {
  BlockHeader* heads[kNumClasses] = {};
  int32_t counts[kNumClasses] = {};
  uint64_t generation = 0;  // g_generation when the lists were last valid
  CacheState state = CacheState::kUnused;
  Counters counters;
};

// Constant-initialized with a trivial destructor: reaching it costs a TLS
// offset, no init guard. ThreadCacheReaper frees it when the thread exits.
TURNOUT_THREAD_LOCAL ThreadCache t_cache;

// Bumped by emptyCache(): a thread whose generation differs drops its lists.
std::atomic<uint64_t> g_generation{0};

// Process-wide state; heap-allocated and never destroyed, so that tensors
// freed by static destructors still find it.
struct Global {
  std::mutex large_mu;
  std::multimap<size_t, BlockHeader*> large;  // guarded by large_mu
  size_t large_bytes = 0;                     // guarded by large_mu
  size_t max_cached_bytes = CachingCPUAllocator::kDefaultMaxCachedBytes;

  std::mutex threads_mu;
  std::vector<ThreadCache*> threads;  // live registered caches; threads_mu
  Counters exited;  // counters of exited threads and of the shared paths
};

Global& global() {
  static Global* g = new Global;
  return *g;
}

BlockHeader* systemAllocate(size_t capacity, int32_t size_class) {
  if (capacity > SIZE_MAX - kHeaderBytes) return nullptr;
  void* base = std::aligned_alloc(kCPUAlignment, kHeaderBytes + capacity);
  if (base == nullptr) return nullptr;
  auto* h = static_cast<BlockHeader*>(base);
  h->capacity = capacity;
  h->size_class = size_class;
  h->next = nullptr;
  return h;
}

void freeBlock(void* context);

// Under ASan, a cached block's data is poisoned until it is handed out
// again, so that a use after free (of tensor data, or of the TensorImpl a
// block may hold: dispatcher/core/tensor.cc) is reported, not silently
// served from the cache. Nothing outside the requested blocks is touched.
inline void poisonCached(BlockHeader* h) {
  ASAN_POISON_MEMORY_REGION(reinterpret_cast<char*>(h) + kHeaderBytes,
                            h->capacity);
}
inline void unpoisonReused(BlockHeader* h) {
  ASAN_UNPOISON_MEMORY_REGION(reinterpret_cast<char*>(h) + kHeaderBytes,
                              h->capacity);
}

DataPtr makeDataPtr(BlockHeader* h) {
  return DataPtr(reinterpret_cast<char*>(h) + kHeaderBytes, h, &freeBlock,
                 Device(DeviceType::CPU));
}

// Frees every block on c's lists (the owning thread only).
void flushThread(ThreadCache& c) {
  for (int k = 0; k < kNumClasses; ++k) {
    while (BlockHeader* h = c.heads[k]) {
      c.heads[k] = h->next;
      ownerAdd(c.counters.bytes_cached, -static_cast<int64_t>(h->capacity));
      ownerAdd(c.counters.system_frees, 1);
      unpoisonReused(h);
      std::free(h);
    }
    c.counts[k] = 0;
  }
}

struct ThreadCacheReaper {
  ~ThreadCacheReaper() {
    ThreadCache& c = t_cache;
    flushThread(c);
    c.state = CacheState::kDead;
    Global& g = global();
    std::lock_guard<std::mutex> lock(g.threads_mu);
    // Fold this thread's counters into `exited` and drop it, in one step
    // for stats().
    auto fold = [](std::atomic<int64_t>& to, const std::atomic<int64_t>& from) {
      to.fetch_add(from.load(std::memory_order_relaxed),
                   std::memory_order_relaxed);
    };
    fold(g.exited.allocations, c.counters.allocations);
    fold(g.exited.cache_hits, c.counters.cache_hits);
    fold(g.exited.system_allocations, c.counters.system_allocations);
    fold(g.exited.system_frees, c.counters.system_frees);
    fold(g.exited.bytes_in_use, c.counters.bytes_in_use);
    fold(g.exited.bytes_cached, c.counters.bytes_cached);
    g.threads.erase(std::find(g.threads.begin(), g.threads.end(), &c));
  }
};

// The slow path of readyCache(): registers the thread on first use, drops
// stale lists after an emptyCache(). Null once the thread is exiting.
__attribute__((noinline)) ThreadCache* prepareCache() {
  ThreadCache& c = t_cache;
  if (c.state == CacheState::kDead) return nullptr;
  if (c.state == CacheState::kUnused) {
    {
      Global& g = global();
      std::lock_guard<std::mutex> lock(g.threads_mu);
      g.threads.push_back(&c);
    }
    // Constructed here, once per thread: its destructor runs at thread exit.
    static thread_local ThreadCacheReaper reaper;
    (void)reaper;
    c.state = CacheState::kAlive;
  } else {
    flushThread(c);
  }
  c.generation = g_generation.load(std::memory_order_acquire);
  return &c;
}

// The calling thread's cache, ready for use; null while the thread exits.
inline ThreadCache* readyCache() {
  ThreadCache& c = t_cache;
  if (__builtin_expect(
          c.state == CacheState::kAlive &&
              c.generation == g_generation.load(std::memory_order_relaxed),
          1)) {
    return &c;
  }
  return prepareCache();
}

// Takes every cached large block out under the lock and frees them outside.
void releaseLarge(size_t keep_bytes) {
  Global& g = global();
  std::vector<BlockHeader*> victims;
  {
    std::lock_guard<std::mutex> lock(g.large_mu);
    // Largest first: the fewest frees to get under the bound.
    while (g.large_bytes > keep_bytes && !g.large.empty()) {
      auto it = std::prev(g.large.end());
      g.large_bytes -= it->first;
      victims.push_back(it->second);
      g.large.erase(it);
    }
  }
  for (BlockHeader* h : victims) {
    sharedAdd(g.exited.bytes_cached, -static_cast<int64_t>(h->capacity));
    sharedAdd(g.exited.system_frees, 1);
    unpoisonReused(h);
    std::free(h);
  }
}

void freeBlock(void* context) {
  auto* h = static_cast<BlockHeader*>(context);
  const int64_t capacity = static_cast<int64_t>(h->capacity);
  if (h->size_class != kLargeClass) {
    ThreadCache* c = readyCache();
    if (c != nullptr) {
      ownerAdd(c->counters.bytes_in_use, -capacity);
      const int k = h->size_class;
      if (c->counts[k] < CachingCPUAllocator::kMaxBlocksPerClass) {
        h->next = c->heads[k];
        c->heads[k] = h;
        ++c->counts[k];
        ownerAdd(c->counters.bytes_cached, capacity);
        poisonCached(h);  // the list's link is in the header, not poisoned
        return;
      }
      ownerAdd(c->counters.system_frees, 1);
    } else {
      sharedAdd(global().exited.bytes_in_use, -capacity);
      sharedAdd(global().exited.system_frees, 1);
    }
    std::free(h);
    return;
  }
  Global& g = global();
  sharedAdd(g.exited.bytes_in_use, -capacity);
  {
    std::lock_guard<std::mutex> lock(g.large_mu);
    if (g.large_bytes + h->capacity <= g.max_cached_bytes) {
      poisonCached(h);  // before another thread can take it
      g.large.emplace(h->capacity, h);
      g.large_bytes += h->capacity;
      sharedAdd(g.exited.bytes_cached, capacity);
      return;
    }
  }
  sharedAdd(g.exited.system_frees, 1);
  std::free(h);
}

[[noreturn]] void throwOutOfMemory(size_t nbytes) {
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument,
                "CPU allocator: out of memory: tried to allocate ", nbytes,
                " bytes (after freeing every cached block); free some "
                "tensors or lower the work size");
  __builtin_unreachable();
}

DataPtr allocateLarge(size_t nbytes) {
  Global& g = global();
  if (nbytes > SIZE_MAX - kLargeRounding - kHeaderBytes) {
    throwOutOfMemory(nbytes);
  }
  const size_t rounded =
      (nbytes + kLargeRounding - 1) / kLargeRounding * kLargeRounding;
  BlockHeader* h = nullptr;
  {
    std::lock_guard<std::mutex> lock(g.large_mu);
    auto it = g.large.lower_bound(rounded);
    if (it != g.large.end() && it->first - rounded <= rounded / 4) {
      h = it->second;
      g.large_bytes -= it->first;
      g.large.erase(it);
    }
  }
  const int64_t capacity_of_hit = h ? static_cast<int64_t>(h->capacity) : 0;
  sharedAdd(g.exited.allocations, 1);
  if (h != nullptr) {
    unpoisonReused(h);
    sharedAdd(g.exited.cache_hits, 1);
    sharedAdd(g.exited.bytes_cached, -capacity_of_hit);
    sharedAdd(g.exited.bytes_in_use, capacity_of_hit);
    return makeDataPtr(h);
  }
  h = systemAllocate(rounded, kLargeClass);
  if (h == nullptr) {
    releaseLarge(0);
    h = systemAllocate(rounded, kLargeClass);
    if (h == nullptr) {
      sharedAdd(g.exited.allocations, -1);
      throwOutOfMemory(nbytes);
    }
  }
  sharedAdd(g.exited.system_allocations, 1);
  sharedAdd(g.exited.bytes_in_use, static_cast<int64_t>(rounded));
  return makeDataPtr(h);
}

}  // namespace

DataPtr CachingCPUAllocator::allocate(size_t nbytes) {
  if (nbytes == 0) return DataPtr(nullptr, Device(DeviceType::CPU));
  if (nbytes > kMaxSmallBlock) return allocateLarge(nbytes);
  const int k = sizeClassOf(nbytes);
  const size_t capacity = kMinSmallBlock << k;
  ThreadCache* c = readyCache();
  if (c != nullptr) {
    ownerAdd(c->counters.allocations, 1);
    ownerAdd(c->counters.bytes_in_use, static_cast<int64_t>(capacity));
    if (BlockHeader* h = c->heads[k]) {
      c->heads[k] = h->next;
      --c->counts[k];
      ownerAdd(c->counters.cache_hits, 1);
      ownerAdd(c->counters.bytes_cached, -static_cast<int64_t>(capacity));
      unpoisonReused(h);
      return makeDataPtr(h);
    }
  }
  BlockHeader* h = systemAllocate(capacity, k);
  if (h == nullptr) {
    releaseLarge(0);
    h = systemAllocate(capacity, k);
  }
  if (h == nullptr) {
    if (c != nullptr) {
      ownerAdd(c->counters.allocations, -1);
      ownerAdd(c->counters.bytes_in_use, -static_cast<int64_t>(capacity));
    }
    throwOutOfMemory(nbytes);
  }
  if (c != nullptr) {
    ownerAdd(c->counters.system_allocations, 1);
  } else {
    Global& g = global();
    sharedAdd(g.exited.allocations, 1);
    sharedAdd(g.exited.system_allocations, 1);
    sharedAdd(g.exited.bytes_in_use, static_cast<int64_t>(capacity));
  }
  return makeDataPtr(h);
}

void CachingCPUAllocator::emptyCache() {
  // Release: a thread that sees the new generation drops its lists.
  g_generation.fetch_add(1, std::memory_order_release);
  readyCache();  // drops this thread's lists now
  releaseLarge(0);
}

void CachingCPUAllocator::setMaxCachedBytes(size_t bytes) {
  {
    Global& g = global();
    std::lock_guard<std::mutex> lock(g.large_mu);
    g.max_cached_bytes = bytes;
  }
  releaseLarge(bytes);
}

size_t CachingCPUAllocator::maxCachedBytes() const {
  Global& g = global();
  std::lock_guard<std::mutex> lock(g.large_mu);
  return g.max_cached_bytes;
}

CachingAllocatorStats CachingCPUAllocator::stats() const {
  Global& g = global();
  CachingAllocatorStats s;
  auto add = [](int64_t& to, const Counters& from,
                std::atomic<int64_t> Counters::*field) {
    to += (from.*field).load(std::memory_order_relaxed);
  };
  auto addAll = [&](const Counters& from) {
    add(s.allocations, from, &Counters::allocations);
    add(s.cache_hits, from, &Counters::cache_hits);
    add(s.system_allocations, from, &Counters::system_allocations);
    add(s.system_frees, from, &Counters::system_frees);
    add(s.bytes_in_use, from, &Counters::bytes_in_use);
    add(s.bytes_cached, from, &Counters::bytes_cached);
  };
  std::lock_guard<std::mutex> lock(g.threads_mu);
  addAll(g.exited);
  for (const ThreadCache* c : g.threads) addAll(c->counters);
  return s;
}

CachingCPUAllocator* getCachingCPUAllocator() {
  static CachingCPUAllocator* allocator = new CachingCPUAllocator;
  return allocator;
}

namespace {

// Installs the caching allocator as the CPU allocator when this library is
// loaded, unless a user's static initializer installed one first.
const bool g_registered = [] {
  Allocator* previous =
      setAllocator(DeviceType::CPU, getCachingCPUAllocator());
  if (previous != nullptr) setAllocator(DeviceType::CPU, previous);
  return true;
}();

}  // namespace
}  // namespace turnout
