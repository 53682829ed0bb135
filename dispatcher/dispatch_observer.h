// The one hook on the call path, and the interface through which the tools
// that watch calls (dispatcher/debug/: the dispatch trace, the profiler)
// attach to it. The call path names no tool: a tool installs its
// DispatchObserver and then sets its bit of dispatch_observers.
//
//   // In every call / redispatch / callBoxed, after the table lookup:
//   if (__builtin_expect(detail::dispatchObserved(), 0)) {
//     detail::ObservedDispatch scope(op, ks, detail::CallKind::Call);
//     return kernel.call(...);        // traced and timed
//   }
//   return kernel.call(...);          // the usual path
//
// When neither a trace nor a profiler is on, a call pays one relaxed load of
// a process-wide word and one predictable branch. Everything else lives out
// of line, on the "on" side.
//
// ObservedScope objects live on the calling thread's stack and link to the
// one they are nested in (a thread-local pointer), which gives the
// redispatch depth for the trace and the self time for the profiler with no
// allocation and no lookup.
//
// Thread safety: the flag is read with relaxed loads; a trace or profiler
// switched on while a call is running sees that call's nested calls only.
#ifndef TURNOUT_DISPATCHER_DISPATCH_OBSERVER_H_
#define TURNOUT_DISPATCHER_DISPATCH_OBSERVER_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "dispatcher/core/dispatch_key_set.h"

namespace turnout {

class OperatorHandle;

namespace detail {

/// Bits of dispatch_observers.
inline constexpr uint32_t kTraceOn = 1;
inline constexpr uint32_t kProfilerOn = 2;

/// Nonzero while a dispatch trace or a profiler is active anywhere in the
/// process: the bits of the observers that want calls now.
extern std::atomic<uint32_t> dispatch_observers;

/// The call path's test: one relaxed load.
inline bool dispatchObserved() {
  return dispatch_observers.load(std::memory_order_relaxed) != 0;
}

/// Monotonic nanoseconds: the clock of every span.
int64_t observerNow();

/// How a dispatch was entered (shown by the trace, kept by the profiler).
enum class CallKind : uint8_t {
  Call,             // TypedOperatorHandle::call
  Redispatch,       // TypedOperatorHandle::redispatch
  CallBoxed,        // OperatorHandle::callBoxed
  RedispatchBoxed,  // OperatorHandle::redispatchBoxed
  CallForKey,       // OperatorHandle::callBoxedForDispatchKey
  UserScope,        // RecordScope (profiler.h)
  Handler,          // who a kernel hands the call to (traceHandler; trace only)
};
/// "call", "redispatch", "callBoxed", "redispatchBoxed",
/// "callBoxedForDispatchKey", "scope", "handler".
const char* toString(CallKind kind);

/// What a tool that watches calls implements. The call path calls the
/// observer installed for a bit only while that bit of dispatch_observers is
/// set, on the calling thread, inside the dispatch it reports.
class DispatchObserver {
 public:
  virtual ~DispatchObserver() = default;

  /// kTraceOn's observer: a dispatch is entered, before its kernel runs.
  /// `ks` is the key set the kernel receives, `key` the key chosen, `depth`
  /// the number of open scopes it is nested in on this thread.
  virtual void onDispatch(const OperatorHandle& op, DispatchKeySet ks,
                          DispatchKey key, CallKind kind, uint32_t depth) {}

  /// kProfilerOn's observer: the span-recording session now running, or 0.
  /// Asked as each scope opens; a scope opened under a session reports to
  /// onSpan when it closes.
  virtual uint32_t session() { return 0; }
  /// A span opened under `session` closed: times in observerNow()'s clock;
  /// `self_ns` excludes nested recorded spans, `python_ns` is the time in
  /// Python code (PythonTimeScope). `user_name` is null for a dispatch.
  virtual void onSpan(uint32_t session, const void* op_entry, DispatchKey key,
                      CallKind kind, const std::string* user_name,
                      uint32_t depth, int64_t start_ns, int64_t end_ns,
                      int64_t self_ns, int64_t python_ns) {}
};

/// Makes `observer` the one called for `bit` (kTraceOn or kProfilerOn). A
/// tool installs it before setting the bit. Observers are never removed, so
/// `observer` must live until the process exits; installing again replaces
/// it (for calls that start afterwards).
void installDispatchObserver(uint32_t bit, DispatchObserver* observer);

/// One open span on the calling thread: a dispatch or a RecordScope.
/// Never copied or moved: nested scopes point at it.
class ObservedScope {
 public:
  ObservedScope(const ObservedScope&) = delete;
  ObservedScope& operator=(const ObservedScope&) = delete;

  /// The scope this one is nested in on this thread, or null.
  const ObservedScope* parent() const { return parent_; }
  /// 0 for an outermost scope.
  uint32_t depth() const { return depth_; }
  /// The innermost open scope of the calling thread, or null.
  static const ObservedScope* current();

 protected:
  // Links the scope in; starts the profiler's clock when one is running.
  ObservedScope();
  ~ObservedScope();
  // Called by subclasses' destructors: records the span when a profiler was
  // running at construction and is still the same session.
  void finish(const void* op_entry, DispatchKey key, CallKind kind,
              const std::string* user_name);

  ObservedScope* parent_;
  uint32_t depth_;
  uint32_t session_ = 0;  // profiler session at entry, 0 if none
  int64_t start_ns_ = 0;
  int64_t child_ns_ = 0;   // time spent in nested recorded scopes
  int64_t python_ns_ = 0;  // time in Python code, less nested scopes

  friend class PythonTimeScope;
};

/// The scope the call path opens around an observed dispatch.
class ObservedDispatch : public ObservedScope {
 public:
  /// `ks` is the key set the kernel receives (fallthrough keys removed).
  ObservedDispatch(const OperatorHandle& op, DispatchKeySet ks, CallKind kind);
  ~ObservedDispatch();

 private:
  const void* entry_;
  DispatchKey key_;
  CallKind kind_;
};

/// Brackets a kernel's call into Python code (a Python kernel's callable, a
/// dispatch mode's or a tensor subclass's __turnout_dispatch__; bindings/
/// places it). While a profiler runs, the time inside, less that of the
/// recorded spans nested in it (operators the Python code calls), is added
/// to the innermost open span: the profiler's "Python" column, a part of its
/// self time. Off, it costs one relaxed load and one predictable branch.
///
///   {
///     detail::PythonTimeScope python_time;
///     out = PyObject_Call(fn, args, kwargs);
///   }
///
/// Precondition: lives on the stack of the thread whose span it measures,
/// inside that span (a kernel's body is, by construction).
class PythonTimeScope {
 public:
  PythonTimeScope() {
    if (__builtin_expect(
            dispatch_observers.load(std::memory_order_relaxed) & kProfilerOn,
            0)) {
      begin();
    }
  }
  ~PythonTimeScope() {
    if (__builtin_expect(span_ != nullptr, 0)) end();
  }
  PythonTimeScope(const PythonTimeScope&) = delete;
  PythonTimeScope& operator=(const PythonTimeScope&) = delete;

 private:
  void begin();
  void end();

  ObservedScope* span_ = nullptr;  // the span charged, when profiling
  int64_t start_ns_ = 0;
  int64_t child_ns_at_start_ = 0;
};

}  // namespace detail
}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_DISPATCH_OBSERVER_H_
