// The dispatch trace: one line per dispatch, as it happens, indented by
// nesting depth (a kernel's redispatch, or an operator it calls, is one
// level deeper than the call that ran it).
//
//   {
//     DispatchTraceGuard trace(std::cerr);   // or a FILE*, or a callback
//     op.call(x);
//   }
//   // t::f call DispatchKeySet(CPU, AutogradCPU) -> AutogradCPU [autograd kernel] registered at f.cc:12
//   //   t::f redispatch DispatchKeySet(CPU) -> CPU [kernel] registered at f.cc:9
//
// Setting TURNOUT_DISPATCH_TRACE=1 in the environment turns the trace on
// from the start of the process, writing to stderr.
//
// Unboxed and boxed calls and redispatches are all traced. Each line names
// the operator, how it was entered (call, redispatch, callBoxed, ...), the
// key set the kernel receives (fallthrough keys already removed), the key
// chosen, the table entry's kind and its registration site. A RecordScope
// (profiler.h) shows as "scope NAME". A kernel that hands the call on to
// code chosen at run time (the Python key's fallback, to a dispatch mode or a
// tensor subclass) says to whom, one level below its dispatch line:
//   // aten::add.Tensor callBoxed DispatchKeySet(CPU, Python) -> Python [backend fallback] registered at ...
//   //   [Python] aten::add.Tensor -> mode LoggingMode (examples/logging_mode.py:55)
//   //   aten::add.Tensor callBoxed DispatchKeySet(CPU) -> CPU [kernel] registered at ...
//
// Thread safety: the trace is process-wide: while it is on, every thread's
// dispatches are written. Each line is written whole (lines of different
// threads never mix); each thread's depth is its own. Dispatches made by a
// callback sink itself are not traced. Guards must nest (destroy in reverse
// order of construction), like the key-set guards.
//
// Cost: off, one relaxed load and one predictable branch per call
// (dispatch_observer.h). On, each dispatch takes the registry lock briefly to
// name its kernel, formats a line and takes the sink's lock to write it: a
// debugging aid, not something to leave on in production. Do not trace
// calls made while the same thread holds the registry lock (from inside an
// OpRegistrationListener).
#ifndef TURNOUT_DISPATCHER_DEBUG_DISPATCH_TRACE_H_
#define TURNOUT_DISPATCHER_DEBUG_DISPATCH_TRACE_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include "dispatcher/core/dispatch_key_set.h"
#include "dispatcher/dispatch_observer.h"

namespace turnout {

class OperatorHandle;

/// One traced dispatch, as a callback sink receives it.
struct DispatchTraceEvent {
  std::string op;            // "ns::name.overload", or a RecordScope's name
  detail::CallKind call;     // how the dispatch was entered
  DispatchKeySet key_set;    // what the kernel receives
  DispatchKey key;           // the key chosen (Undefined for a scope)
  std::string entry_kind;    // "kernel", "autograd kernel", ... ("" for a scope)
  std::string site;          // "registered at f.cc:12", a kernel name, or ""
  uint32_t depth;            // 0 for an outermost dispatch
  uint32_t thread;           // 0, 1, ... in the order threads first traced
};

/// Receives each event and its formatted line (without a newline).
using DispatchTraceCallback =
    std::function<void(const DispatchTraceEvent& event, const std::string& line)>;

/// Turns the trace on or off for the whole process.
void setDispatchTraceEnabled(bool on);
bool isDispatchTraceEnabled();

/// Where lines go (default: stderr). A FILE* or stream must outlive its use
/// as the sink. Lines are flushed one by one for a FILE*.
void setDispatchTraceSink(std::FILE* file);
void setDispatchTraceSink(std::ostream& out);
/// A null callback is an InvalidArgument error.
void setDispatchTraceSink(DispatchTraceCallback callback);

/// The line the trace writes for `event`: two spaces per depth level, then
/// "OP CALL KEYSET -> KEY [ENTRY KIND] SITE"; for a handler event,
/// "[KEY] OP -> SITE" (SITE names the handler).
std::string formatDispatchTraceLine(const DispatchTraceEvent& event);

/// Turns the trace on, with the given sink, for its lifetime; restores the
/// previous state and sink on exit.
class DispatchTraceGuard {
 public:
  /// Keeps the current sink (stderr unless set).
  DispatchTraceGuard();
  explicit DispatchTraceGuard(std::FILE* file);
  explicit DispatchTraceGuard(std::ostream& out);
  explicit DispatchTraceGuard(DispatchTraceCallback callback);
  ~DispatchTraceGuard();
  DispatchTraceGuard(const DispatchTraceGuard&) = delete;
  DispatchTraceGuard& operator=(const DispatchTraceGuard&) = delete;

 private:
  struct Saved;
  Saved* saved_;
};

// Implementation details, for RecordScope (profiler.cc).
namespace detail {
void traceScope(const std::string& name, uint32_t depth);
}  // namespace detail

/// For a kernel that hands its call to code chosen at run time: when the
/// trace is on, writes "[KEY] OP -> HANDLER" one level below the innermost
/// open dispatch of this thread (the kernel's own). `handler` says what runs
/// and where it is defined, e.g. "mode LoggingMode (logging_mode.py:55)".
/// Off, one relaxed load. Test isDispatchTraceEnabled() first when making
/// `handler` costs something.
void traceHandler(const OperatorHandle& op, DispatchKey key,
                  std::string_view handler);

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_DEBUG_DISPATCH_TRACE_H_
