#include "dispatcher/dispatch_observer.h"

#include <chrono>

#include "dispatcher/core/error.h"
#include "dispatcher/core/thread_local.h"
#include "dispatcher/operator_handle.h"

namespace turnout {
namespace detail {
namespace {

// The observers installed for kTraceOn and kProfilerOn. Acquire loads pair
// with the release store in installDispatchObserver: a thread that sees the
// pointer sees the observer constructed.
std::atomic<DispatchObserver*> trace_observer{nullptr};
std::atomic<DispatchObserver*> profiler_observer{nullptr};

DispatchObserver* profilerObserver() {
  return profiler_observer.load(std::memory_order_acquire);
}

// The innermost open scope of the calling thread. A plain pointer: no
// thread_local guard variable.
TURNOUT_THREAD_LOCAL ObservedScope* current_scope = nullptr;

}  // namespace

std::atomic<uint32_t> dispatch_observers{0};

int64_t observerNow() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void installDispatchObserver(uint32_t bit, DispatchObserver* observer) {
  TURNOUT_CHECK(observer != nullptr, ErrorKind::InvalidArgument,
                "installDispatchObserver: the observer is null; pass one that "
                "lives until the process exits");
  TURNOUT_CHECK(bit == kTraceOn || bit == kProfilerOn,
                ErrorKind::InvalidArgument, "installDispatchObserver: bit ",
                bit, " is neither kTraceOn (", kTraceOn, ") nor kProfilerOn (",
                kProfilerOn, ")");
  (bit == kTraceOn ? trace_observer : profiler_observer)
      .store(observer, std::memory_order_release);
}

const char* toString(CallKind kind) {
  switch (kind) {
    case CallKind::Call:
      return "call";
    case CallKind::Redispatch:
      return "redispatch";
    case CallKind::CallBoxed:
      return "callBoxed";
    case CallKind::RedispatchBoxed:
      return "redispatchBoxed";
    case CallKind::CallForKey:
      return "callBoxedForDispatchKey";
    case CallKind::UserScope:
      return "scope";
    case CallKind::Handler:
      return "handler";
  }
  return "unknown";
}

ObservedScope::ObservedScope() : parent_(current_scope) {
  depth_ = parent_ != nullptr ? parent_->depth_ + 1 : 0;
  current_scope = this;
  if (dispatch_observers.load(std::memory_order_relaxed) & kProfilerOn) {
    if (DispatchObserver* profiler = profilerObserver()) {
      session_ = profiler->session();
      if (session_ != 0) start_ns_ = observerNow();
    }
  }
}

ObservedScope::~ObservedScope() { current_scope = parent_; }

const ObservedScope* ObservedScope::current() { return current_scope; }

void ObservedScope::finish(const void* op_entry, DispatchKey key,
                           CallKind kind, const std::string* user_name) {
  if (session_ == 0) return;
  const int64_t end_ns = observerNow();
  const int64_t duration = end_ns - start_ns_;
  if (parent_ != nullptr && parent_->session_ == session_) {
    parent_->child_ns_ += duration;
  }
  // session_ != 0 only when an observer was installed for kProfilerOn.
  profilerObserver()->onSpan(session_, op_entry, key, kind, user_name, depth_,
                             start_ns_, end_ns, duration - child_ns_,
                             python_ns_);
}

void PythonTimeScope::begin() {
  ObservedScope* span = current_scope;
  // No span, or one opened before this profiler started: nothing to charge.
  if (span == nullptr || span->session_ == 0) return;
  span_ = span;
  start_ns_ = observerNow();
  child_ns_at_start_ = span->child_ns_;
}

void PythonTimeScope::end() {
  const int64_t inside = observerNow() - start_ns_;
  span_->python_ns_ += inside - (span_->child_ns_ - child_ns_at_start_);
}

ObservedDispatch::ObservedDispatch(const OperatorHandle& op, DispatchKeySet ks,
                                   CallKind kind)
    : entry_(op.entry()), key_(ks.highestPriorityTypeId()), kind_(kind) {
  if (dispatch_observers.load(std::memory_order_relaxed) & kTraceOn) {
    if (DispatchObserver* trace =
            trace_observer.load(std::memory_order_acquire)) {
      trace->onDispatch(op, ks, key_, kind, depth_);
    }
  }
}

ObservedDispatch::~ObservedDispatch() {
  finish(entry_, key_, kind_, nullptr);
}

}  // namespace detail
}  // namespace turnout
