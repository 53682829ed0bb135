// The profiler: per (operator, key) call counts, total and self time, and a
// Chrome trace of every dispatch with redispatches nested inside the call
// that made them.
//
//   Profiler prof;                       // starts recording, every thread
//   model_step();
//   {
//     RecordScope phase("jit::run_passes");   // a span of your own
//     run_passes();
//   }
//   prof.stop();
//   std::cout << prof.table("self", 10);      // the 10 rows with most self time
//   prof.exportChromeTrace("/tmp/step.json"); // open in Perfetto
//
// Self time is a span's time minus that of the recorded spans nested in it
// (redispatches, operators its kernel called, RecordScopes). Python time is
// the part of self time spent inside Python code that the kernel called (a
// Python kernel, a dispatch mode's or tensor subclass's handler): see
// detail::PythonTimeScope. The rest of self time is the dispatcher's and the
// C++ kernel's.
//
// Thread safety: one Profiler runs at a time, process-wide; while it runs,
// every thread's dispatches are recorded into a buffer of that thread's own
// (no lock per call), and stop() merges the buffers. A call still running
// when stop() is called is not recorded (its finished inner calls are).
// A Profiler object itself is not for concurrent use.
//
// Cost: off, one relaxed load and one predictable branch per call
// (dispatch_observer.h); on, two clock reads and one buffer append per
// dispatch (bench/README.md, "The dispatch hook and the profiler").
#ifndef TURNOUT_DISPATCHER_DEBUG_PROFILER_H_
#define TURNOUT_DISPATCHER_DEBUG_PROFILER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dispatcher/core/dispatch_key.h"
#include "dispatcher/dispatch_observer.h"

namespace turnout {

/// One recorded span.
struct ProfileEvent {
  std::string name;       // "ns::op.overload", or a RecordScope's name
  DispatchKey key;        // the key dispatched to (Undefined for a scope)
  detail::CallKind call;  // how it was entered (UserScope for a RecordScope)
  uint32_t thread;        // 0, 1, ... in the order threads first recorded
  uint32_t depth;         // 0 for an outermost span
  int64_t start_ns;       // from the profiler's start
  int64_t end_ns;
  int64_t self_ns;        // end - start minus recorded spans nested inside
  int64_t python_ns;      // the part of self_ns spent in Python code
};

/// Totals for one (name, key) pair.
struct ProfileStats {
  std::string name;
  DispatchKey key;  // Undefined for a RecordScope
  bool is_scope;
  int64_t calls = 0;
  int64_t total_ns = 0;
  int64_t self_ns = 0;
  int64_t python_ns = 0;  // the part of self_ns spent in Python code
  uint32_t min_depth = 0;
  uint32_t max_depth = 0;
};

class Profiler {
 public:
  /// Starts recording. Throws InvalidArgument when another Profiler is
  /// running (they would share every thread's calls).
  Profiler();
  /// Stops, when still running.
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  /// Stops recording and merges the threads' buffers. Idempotent.
  void stop();
  bool running() const { return session_ != 0; }

  // ---- Results (after stop(); InvalidArgument while running) ---------------
  /// Every span, ordered by thread, then start time (outer before inner).
  const std::vector<ProfileEvent>& events() const;
  /// One row per (name, key), sorted by `sort_by`: "total" (time, the
  /// default), "self", "calls", "avg" (total / calls), "name"; PyTorch's
  /// "cpu_time_total", "self_cpu_time_total" and "count" are accepted too.
  /// Throws InvalidArgument for another value, naming the accepted ones.
  std::vector<ProfileStats> stats(std::string_view sort_by = "total") const;
  /// stats() as an aligned text table; `row_limit` < 0 means every row.
  std::string table(std::string_view sort_by = "total",
                    int row_limit = -1) const;
  /// The Chrome trace JSON (complete "X" events, one per line; times in
  /// microseconds, exact to the nanosecond) that exportChromeTrace writes.
  std::string chromeTrace() const;
  /// Writes chromeTrace() to `path`. Throws InvalidArgument naming the path
  /// and the system's reason when it cannot be written.
  void exportChromeTrace(const std::string& path) const;

 private:
  void checkStopped(const char* what) const;
  uint32_t session_ = 0;
  int64_t start_ns_ = 0;
  std::vector<ProfileEvent> events_;
};

/// A span of the caller's own (a compile phase, a pass), recorded by the
/// running profiler and shown by the dispatch trace. When neither is on it
/// costs a relaxed load and two thread-local pointer writes.
///
///   { RecordScope scope("jit::build_plan"); buildPlan(); }
class RecordScope : public detail::ObservedScope {
 public:
  explicit RecordScope(std::string_view name);
  ~RecordScope();

 private:
  std::string name_;  // empty when nothing observes
};


}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_DEBUG_PROFILER_H_
