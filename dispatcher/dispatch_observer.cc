#include "dispatcher/dispatch_observer.h"

#include <cstdlib>
#include <cstring>

#include "dispatcher/dispatch_trace.h"
#include "dispatcher/operator_handle.h"
#include "dispatcher/profiler.h"

namespace turnout {
namespace detail {
namespace {

uint32_t observersFromEnvironment() {
  const char* v = std::getenv("TURNOUT_DISPATCH_TRACE");
  return (v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0) ? kTraceOn
                                                                     : 0;
}

// The innermost open scope of the calling thread. A plain pointer: no
// thread_local guard variable.
thread_local ObservedScope* current_scope = nullptr;

}  // namespace

std::atomic<uint32_t> dispatch_observers{observersFromEnvironment()};

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
    session_ = activeProfilerSession();
    if (session_ != 0) start_ns_ = profilerNow();
  }
}

ObservedScope::~ObservedScope() { current_scope = parent_; }

const ObservedScope* ObservedScope::current() { return current_scope; }

void ObservedScope::finish(const void* op_entry, DispatchKey key,
                           CallKind kind, const std::string* user_name) {
  if (session_ == 0) return;
  const int64_t end_ns = profilerNow();
  const int64_t duration = end_ns - start_ns_;
  if (parent_ != nullptr && parent_->session_ == session_) {
    parent_->child_ns_ += duration;
  }
  recordProfiledSpan(session_, op_entry, key, kind, user_name, depth_,
                     start_ns_, end_ns, duration - child_ns_, python_ns_);
}

void PythonTimeScope::begin() {
  ObservedScope* span = current_scope;
  // No span, or one opened before this profiler started: nothing to charge.
  if (span == nullptr || span->session_ == 0) return;
  span_ = span;
  start_ns_ = profilerNow();
  child_ns_at_start_ = span->child_ns_;
}

void PythonTimeScope::end() {
  const int64_t inside = profilerNow() - start_ns_;
  span_->python_ns_ += inside - (span_->child_ns_ - child_ns_at_start_);
}

ObservedDispatch::ObservedDispatch(const OperatorHandle& op, DispatchKeySet ks,
                                   CallKind kind)
    : entry_(op.entry()), key_(ks.highestPriorityTypeId()), kind_(kind) {
  if (dispatch_observers.load(std::memory_order_relaxed) & kTraceOn) {
    traceDispatch(op, ks, key_, kind, depth_);
  }
}

ObservedDispatch::~ObservedDispatch() {
  finish(entry_, key_, kind_, nullptr);
}

}  // namespace detail
}  // namespace turnout
