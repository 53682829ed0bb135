// Safe memory reclamation for the dispatcher's lock-free readers.
//
// Calls read dispatch tables (and, through them, kernel functors) with no
// lock. Registration replaces a table by publishing a new one and *retiring*
// the old one: the old one is freed only once no reader can still be using
// it. Readers say what they use in one of two ways:
//
//   // The call path: protects the one table it loaded, for the whole call
//   // (the kernel's functor lives as long as the table).
//   detail::HazardGuard<DispatchTable> table(entry.publishedTable());
//   table->lookup(ks).call(...);
//
//   // Short reads of several published objects (the name index, a lookup
//   // that does not call a kernel): everything published stays alive until
//   // the section ends.
//   detail::CallSection section;
//   const Index* index = index_.load(detail::kReadOrder);
//
//   // Writer (holding the registry lock): publish, then retire.
//   entry.table_.store(new_table, detail::kPublishOrder);
//   detail::Reclaimer::global().retire(old_table, &deleteTable, sizeof(*old_table));
//   // ... after releasing the lock:
//   detail::Reclaimer::global().reclaimIfWorthIt();
//
// The scheme: hazard pointers for calls, epochs for short sections.
// - A HazardGuard publishes the table it loaded in a per-thread slot, one
//   slot per nesting level (a kernel that calls or redispatches opens the
//   next one), re-reads the published pointer and retries if it changed.
//   A reclamation pass frees every retired object that no slot names. A
//   thread parked inside a kernel (a Python kernel waiting on an event)
//   therefore pins only the tables of the calls it is inside, a few KB,
//   instead of everything retired while it waits (issue 17: 656 MB per
//   100,000 define/remove cycles with the epoch scheme alone).
// - A CallSection marks the thread as "inside" (odd state word); a batch of
//   retired objects waits until every thread that was inside when the batch
//   was sealed has left. Cheap for a short read of several objects (the name
//   index and its nodes), but a section must never span a kernel call.
// - A HazardGuard nested deeper than kHazardSlots (recursion through the
//   dispatcher) falls back to a CallSection: correct, and it pins like one.
// Chosen over per-operator reader counts (a read-modify-write on a shared
// line per call: slower, and contended when threads call the same operator)
// and over epochs alone (one slow call freezes all reclamation).
//
// Reader cost: no fence, no read-modify-write. A HazardGuard is a
// thread-local depth and record load, a store to the slot, a second load of
// the published pointer, and a store to clear the slot; the writer side pays
// instead, with membarrier(2), which makes every running thread execute a
// full barrier (the asymmetric-fence construction of userspace RCU and of
// Folly's hazard pointers). Under ThreadSanitizer the reader uses
// sequentially consistent operations instead, which TSan understands.
//
// Reclamation never blocks a writer: retired objects are freed later, by
// reclaimIfWorthIt() or reclaim(), once no slot names them and every
// CallSection that was open when they were retired has ended. Where
// membarrier(2) is unavailable nothing is freed (safe, and bounded by the
// number of registrations).
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

/// HazardGuards a thread may nest before the deeper ones fall back to a
/// CallSection. Dispatcher calls nest a few levels (autograd, a mode, the
/// backend); a Python kernel that calls operators adds a few more.
inline constexpr uint32_t kHazardSlots = 64;

// One per thread that has ever called, owned by the Reclaimer and never
// freed (writers scan it while its thread may exit); a thread that exits
// gives it back for the next new thread. Only its thread writes it, on
// every call: aligned to a cache line (and so sized in whole lines) so that
// two threads' records never share one and calls from different threads do
// not contend for it (false sharing).
struct alignas(64) ReaderRecord {
  // The object each open HazardGuard protects, by nesting level; null when
  // none is open at that level.
  std::atomic<const void*> hazards[kHazardSlots] = {};
  // Odd while the thread is inside its outermost CallSection.
  std::atomic<uint64_t> state{0};
  bool in_use = false;  // guarded by Reclaimer::mu_
};

// The calling thread's view: trivially constructible, so the hot path needs
// no thread_local guard variable.
struct ThreadReader {
  uint32_t depth;         // open CallSections
  uint32_t hazard_depth;  // open HazardGuards
  ReaderRecord* record;
};
extern TURNOUT_THREAD_LOCAL ThreadReader thread_reader;

/// Attaches the calling thread to a ReaderRecord (slow path, once a thread).
ReaderRecord* registerReaderThread();

/// RAII: marks the calling thread as reading published objects; nothing
/// retired while it is open is freed before it ends. Nests; only the
/// outermost section touches shared memory. For short reads only: a section
/// open across a kernel call would hold back every free while it runs.
class CallSection {
 public:
  CallSection() { enter(); }
  ~CallSection() { leave(); }
  CallSection(const CallSection&) = delete;
  CallSection& operator=(const CallSection&) = delete;

  // What the constructor and destructor do (HazardGuard's fallback, too).
  static void enter() {
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
  static void leave() {
    ThreadReader& reader = thread_reader;
    if (--reader.depth == 0) {
      ReaderRecord* record = reader.record;
      uint64_t s = record->state.load(std::memory_order_relaxed);
      // Release: every read made inside the section happens before a writer
      // that sees the new state frees what those reads reached.
      record->state.store(s + 1, std::memory_order_release);
    }
  }
};

// HazardGuard's slow paths: the thread's first guard (registers the thread
// and returns its record), or a guard nested past kHazardSlots (enters a
// CallSection in a slot's stead and returns null).
ReaderRecord* hazardGuardSlowEnter();
void hazardGuardSlowLeave();

/// RAII: loads the object `published` points to and keeps it from being
/// freed until the guard ends, however long that is and whatever is retired
/// meanwhile. Precondition: every object ever stored in `published` is
/// retired (never deleted directly) once replaced, and `published` itself
/// outlives the guard. No lock, no allocation (past the thread's first
/// call), no fence.
template <class T>
class HazardGuard {
 public:
  explicit HazardGuard(const std::atomic<const T*>& published) {
    ThreadReader& reader = thread_reader;
    const uint32_t d = reader.hazard_depth;
    ReaderRecord* record = reader.record;
    if (__builtin_expect(record == nullptr || d >= kHazardSlots, 0)) {
      record = hazardGuardSlowEnter();
      if (record == nullptr) {  // nested too deep: a CallSection protects it
        slot_ = nullptr;
        object_ = published.load(kReadOrder);
        return;
      }
    }
    reader.hazard_depth = d + 1;
    std::atomic<const void*>* slot = &record->hazards[d];
    const T* p = published.load(std::memory_order_relaxed);
    for (;;) {
#if defined(TURNOUT_TSAN)
      slot->store(p, std::memory_order_seq_cst);
      const T* again = published.load(std::memory_order_seq_cst);
#else
      // membarrier(2) on the writer side orders the slot store before the
      // second load: either the writer's scan sees the slot, or this load
      // sees the writer's newer pointer and the loop protects that one.
      slot->store(p, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      const T* again = published.load(std::memory_order_acquire);
#endif
      if (__builtin_expect(again == p, 1)) break;
      p = again;
    }
    object_ = p;
    slot_ = slot;
  }
  ~HazardGuard() {
    if (__builtin_expect(slot_ != nullptr, 1)) {
      // Release: every read through the guard happens before a writer that
      // sees the cleared slot frees the object.
      slot_->store(nullptr, std::memory_order_release);
      --thread_reader.hazard_depth;
    } else {
      hazardGuardSlowLeave();
    }
  }
  HazardGuard(const HazardGuard&) = delete;
  HazardGuard& operator=(const HazardGuard&) = delete;

  const T* get() const { return object_; }
  const T& operator*() const { return *object_; }
  const T* operator->() const { return object_; }

 private:
  const T* object_;
  std::atomic<const void*>* slot_;
};

/// Holds retired objects until no reader can reach them, then frees them.
/// Thread safety: every member may be called from any thread.
class Reclaimer {
 public:
  using Deleter = void (*)(void*);

  static Reclaimer& global();

  /// Queues `object` to be freed with `deleter` once no HazardGuard protects
  /// it and every thread now inside a CallSection has left it. `object` is
  /// the address readers load (a guard compares it). Precondition: `object`
  /// is no longer reachable through any published pointer. Frees nothing
  /// itself, so it is safe under the caller's locks.
  void retire(void* object, Deleter deleter, size_t bytes);

  /// reclaim() once enough bytes were retired since the last pass to be
  /// worth a membarrier(2). Call it holding no lock: deleters run here and
  /// may run user code (a kernel functor's destructor).
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
  // A batch of retired objects and, once sealed, the CallSection states seen
  // right after it was sealed: the batch is past every section when every
  // reader that was inside (odd) has moved on.
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
  std::vector<Batch> sealed_;           // waiting for CallSections
  // Past every CallSection, but named by a HazardGuard at the last pass.
  std::vector<Retired> guarded_;
  size_t pending_count_ = 0;
  size_t pending_bytes_ = 0;
  // Bytes retired since the last pass. Written under mu_; read without it
  // by reclaimIfWorthIt. Objects a parked reader keeps do not count twice,
  // so a parked reader does not make every registration pay for a pass.
  std::atomic<size_t> retired_since_pass_{0};
};

}  // namespace detail
}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CALL_SECTION_H_
