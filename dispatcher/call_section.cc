#include "dispatcher/call_section.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

namespace turnout {
namespace detail {

TURNOUT_THREAD_LOCAL ThreadReader thread_reader = {0, 0, nullptr};

namespace {

// Retired bytes that trigger a reclamation pass: large enough that the
// membarrier(2) call is amortised over hundreds of registrations.
constexpr size_t kReclaimThresholdBytes = 256 * 1024;

// Set once this thread's RecordOwner has been destroyed. Trivial, so it may
// be read at any point of thread exit.
thread_local bool owner_destroyed = false;

// Gives a thread's record back when the thread exits.
struct RecordOwner {
  ReaderRecord* record = nullptr;
  ~RecordOwner() {
    owner_destroyed = true;
    if (record == nullptr) return;
    thread_reader.record = nullptr;
    Reclaimer::global().releaseRecord(record);
  }
};

long membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0); }

bool setUpMembarrier() {
#if defined(TURNOUT_TSAN)
  return true;  // readers use seq_cst operations; no barrier needed
#else
  long supported = membarrier(MEMBARRIER_CMD_QUERY);
  if (supported < 0) return false;
  if (!(supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
  return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
#endif
}

// Every running thread of this process executes a full memory barrier before
// this returns: any reader whose section-entry store we cannot see yet will
// see everything we published before the call.
void barrierAllThreads() {
#if !defined(TURNOUT_TSAN)
  membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace

ReaderRecord* registerReaderThread() {
  ThreadReader& reader = thread_reader;
  if (owner_destroyed) {
    // Called during thread exit after the owner is gone: take a record that
    // is never given back (rare; costs one small allocation per such thread).
    reader.record = Reclaimer::global().acquireRecord();
    return reader.record;
  }
  thread_local RecordOwner owner;
  owner.record = Reclaimer::global().acquireRecord();
  reader.record = owner.record;
  return reader.record;
}

ReaderRecord* hazardGuardSlowEnter() {
  ThreadReader& reader = thread_reader;
  if (reader.record == nullptr) registerReaderThread();
  if (reader.hazard_depth < kHazardSlots) return reader.record;
  // Nested past the last slot: a CallSection keeps this guard's object (and
  // everything retired while it is open) alive instead.
  ++reader.hazard_depth;
  CallSection::enter();
  return nullptr;
}

void hazardGuardSlowLeave() {
  CallSection::leave();
  --thread_reader.hazard_depth;
}

Reclaimer& Reclaimer::global() {
  // Never destroyed: threads may still call during static destruction.
  static Reclaimer* const instance = new Reclaimer();
  return *instance;
}

Reclaimer::Reclaimer() : reclaims_(setUpMembarrier()) {}

ReaderRecord* Reclaimer::acquireRecord() {
  std::lock_guard<std::mutex> lock(mu_);
  for (ReaderRecord* r : records_) {
    if (!r->in_use) {
      r->in_use = true;
      return r;
    }
  }
  auto* r = new ReaderRecord();
  r->in_use = true;
  records_.push_back(r);
  return r;
}

void Reclaimer::releaseRecord(ReaderRecord* record) {
  std::lock_guard<std::mutex> lock(mu_);
  // The thread is outside every section (its state is even, its slots
  // null), so a new owner may take the record over with its counter where
  // it is.
  record->in_use = false;
}

void Reclaimer::retire(void* object, Deleter deleter, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  open_.objects.push_back({object, deleter, bytes});
  ++pending_count_;
  pending_bytes_ += bytes;
  retired_since_pass_.store(
      retired_since_pass_.load(std::memory_order_relaxed) + bytes,
      std::memory_order_relaxed);
}

void Reclaimer::reclaimIfWorthIt() {
  // A relaxed read is enough: a stale value only delays or hastens a pass.
  if (retired_since_pass_.load(std::memory_order_relaxed) <
      kReclaimThresholdBytes) {
    return;
  }
  reclaim();
}

void Reclaimer::sealLocked() {
  if (open_.objects.empty()) return;
  barrierAllThreads();
  Batch batch = std::move(open_);
  open_ = Batch();
  for (ReaderRecord* r : records_) {
    uint64_t s = r->state.load(std::memory_order_acquire);
    if (s & 1) batch.busy_readers.emplace_back(r, s);
  }
  sealed_.push_back(std::move(batch));
}

bool Reclaimer::batchIsFreeLocked(const Batch& batch) const {
  for (const auto& [record, state] : batch.busy_readers) {
    if (record->state.load(std::memory_order_acquire) == state) return false;
  }
  return true;
}

void Reclaimer::reclaim() {
  if (!reclaims_) return;
  std::vector<Retired> to_free;
  {
    std::lock_guard<std::mutex> lock(mu_);
    retired_since_pass_.store(0, std::memory_order_relaxed);
    // Every object below was unpublished before a barrier that has run (the
    // seal's, now or in an earlier pass): a guard that loaded one either
    // shows it in its slot now, or saw the newer pointer and let it go.
    sealLocked();
    std::vector<Retired> candidates = std::move(guarded_);
    guarded_.clear();
    size_t kept = 0;
    for (size_t i = 0; i < sealed_.size(); ++i) {
      if (batchIsFreeLocked(sealed_[i])) {
        for (Retired& r : sealed_[i].objects) candidates.push_back(r);
      } else {
        if (kept != i) sealed_[kept] = std::move(sealed_[i]);
        ++kept;
      }
    }
    sealed_.resize(kept);
    if (!candidates.empty()) {
      // The guarded objects now: few (one per open guard of every thread).
      std::vector<const void*> guarded;
      for (ReaderRecord* r : records_) {
        for (const std::atomic<const void*>& slot : r->hazards) {
          // Acquire: a slot cleared after the reads through its guard makes
          // those reads happen before the free below.
          const void* p = slot.load(std::memory_order_acquire);
          if (p != nullptr) guarded.push_back(p);
        }
      }
      std::sort(guarded.begin(), guarded.end());
      for (const Retired& r : candidates) {
        if (std::binary_search(guarded.begin(), guarded.end(),
                               static_cast<const void*>(r.object))) {
          guarded_.push_back(r);
        } else {
          to_free.push_back(r);
        }
      }
    }
    size_t freed_bytes = 0;
    for (const Retired& r : to_free) freed_bytes += r.bytes;
    pending_count_ -= to_free.size();
    pending_bytes_ -= freed_bytes;
  }
  // Outside the lock: a deleter may release a kernel functor whose
  // destructor retires or registers something in turn.
  for (const Retired& r : to_free) r.deleter(r.object);
}

size_t Reclaimer::pendingCount() {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_count_;
}

size_t Reclaimer::pendingBytes() {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_bytes_;
}

}  // namespace detail
}  // namespace turnout
