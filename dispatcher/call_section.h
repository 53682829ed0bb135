// Safe memory reclamation for the dispatcher's lock-free readers.
//
// Calls read dispatch tables, kernel functors and the operator index with no
// lock. Registration replaces them by publishing a new object and *retiring*
// the old one: the old one is freed only once every thread that might still
// be using it has left its outermost CallSection.
//
//   // Reader (the call path): brackets every use of published objects.
//   detail::CallSection section;
//   const DispatchTable* table = entry.table_.load(std::memory_order_acquire);
//   ... use table and the kernels it points to ...
//
//   // Writer (holding the registry lock): publish, then retire.
//   entry.table_.store(new_table, std::memory_order_release);
//   detail::Reclaimer::global().retire(old_table, &deleteTable, sizeof(*old_table));
//   // ... after releasing the lock:
//   detail::Reclaimer::global().reclaimIfWorthIt();
//
// Reader cost: a thread-local depth counter and, for the outermost section
// only, one store to a per-thread word. No fence, no read-modify-write: the
// writer side pays instead, with membarrier(2), which makes every running
// thread execute a full barrier (the "userspace RCU" construction). Under
// ThreadSanitizer the reader uses sequentially consistent operations instead,
// which TSan understands.
//
// Reclamation never blocks a writer: retired objects are freed later, by
// reclaimIfWorthIt() or reclaim(), once each reader that was inside a section when
// they were retired has left it. A thread stuck inside a kernel therefore
// delays frees, never registration. Where membarrier(2) is unavailable nothing
// is freed (safe, and bounded by the number of registrations).
#ifndef TURNOUT_DISPATCHER_CALL_SECTION_H_
#define TURNOUT_DISPATCHER_CALL_SECTION_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "dispatcher/core/thread_local.h"

namespace turnout {
namespace detail {

#if defined(TURNOUT_TSAN)
inline constexpr std::memory_order kPublishOrder = std::memory_order_seq_cst;
inline constexpr std::memory_order kReadOrder = std::memory_order_seq_cst;
#else
inline constexpr std::memory_order kPublishOrder = std::memory_order_release;
inline constexpr std::memory_order kReadOrder = std::memory_order_acquire;
#endif

// One per thread that has ever called, owned by the Reclaimer. `state` is odd
// while the thread is inside its outermost CallSection, even otherwise, and
// only its thread writes it.
struct ReaderRecord {
  std::atomic<uint64_t> state{0};
  bool in_use = false;  // guarded by Reclaimer::mu_
};

// The calling thread's view: trivially constructible, so the hot path needs
// no thread_local guard variable.
struct ThreadReader {
  uint32_t depth;
  ReaderRecord* record;
};
extern TURNOUT_THREAD_LOCAL ThreadReader thread_reader;

/// Attaches the calling thread to a ReaderRecord (slow path, once a thread).
ReaderRecord* registerReaderThread();

/// RAII: marks the calling thread as reading published objects.
/// Nests; only the outermost section touches shared memory.
class CallSection {
 public:
  CallSection() {
    ThreadReader& reader = thread_reader;
    if (reader.depth++ == 0) {
      ReaderRecord* record = reader.record;
      if (__builtin_expect(record == nullptr, 0)) {
        record = registerReaderThread();
      }
      uint64_t s = record->state.load(std::memory_order_relaxed);
#if defined(TURNOUT_TSAN)
      record->state.store(s + 1, std::memory_order_seq_cst);
#else
      // membarrier(2) on the writer side orders this store before the
      // loads that follow; the compiler must not move them above it.
      record->state.store(s + 1, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
    }
  }
  ~CallSection() {
    ThreadReader& reader = thread_reader;
    if (--reader.depth == 0) {
      ReaderRecord* record = reader.record;
      uint64_t s = record->state.load(std::memory_order_relaxed);
      // Release: every read made inside the section happens before a writer
      // that sees the new state frees what those reads reached.
      record->state.store(s + 1, std::memory_order_release);
    }
  }
  CallSection(const CallSection&) = delete;
  CallSection& operator=(const CallSection&) = delete;
};

/// Holds retired objects until no reader can reach them, then frees them.
/// Thread safety: every member may be called from any thread.
class Reclaimer {
 public:
  using Deleter = void (*)(void*);

  static Reclaimer& global();

  /// Queues `object` to be freed with `deleter` once every thread now inside
  /// a CallSection has left it. Precondition: `object` is no longer reachable
  /// through any published pointer. Frees nothing itself, so it is safe
  /// under the caller's locks.
  void retire(void* object, Deleter deleter, size_t bytes);

  /// reclaim() when enough bytes are pending to be worth a membarrier(2).
  /// Call it holding no lock: deleters run here and may run user code
  /// (a kernel functor's destructor).
  void reclaimIfWorthIt();

  /// Frees every retired object that no reader can reach any more. Never
  /// blocks on readers. Call it holding no lock (see reclaimIfWorthIt).
  void reclaim();

  /// Objects retired and not yet freed (for tests and memory accounting).
  size_t pendingCount();
  size_t pendingBytes();

  /// Whether objects are ever freed here (membarrier(2) available, or a
  /// TSan build).
  bool reclaims() const { return reclaims_; }

  // Used by the per-thread record owner.
  ReaderRecord* acquireRecord();
  void releaseRecord(ReaderRecord* record);

 private:
  Reclaimer();

  struct Retired {
    void* object;
    Deleter deleter;
    size_t bytes;
  };
  // A batch of retired objects and, once sealed, the reader states seen
  // right after it was sealed: the batch is free when every reader that was
  // inside (odd) has moved on.
  struct Batch {
    std::vector<Retired> objects;
    std::vector<std::pair<ReaderRecord*, uint64_t>> busy_readers;
  };

  void sealLocked();
  bool batchIsFreeLocked(const Batch& batch) const;

  std::mutex mu_;
  bool reclaims_;
  std::vector<ReaderRecord*> records_;  // never freed: readers keep pointers
  Batch open_;                          // retired since the last seal
  std::vector<Batch> sealed_;
  size_t pending_count_ = 0;
  // Written under mu_; read without it by reclaimIfWorthIt.
  std::atomic<size_t> pending_bytes_{0};
};

}  // namespace detail
}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CALL_SECTION_H_
