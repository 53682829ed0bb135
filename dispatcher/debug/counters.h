// Counters: process-wide named event counters (plans built, cache hits,
// backend fallbacks taken), cheap enough to bump from hot-ish code.
//
//   static Counter& plans_built = counter("jit.plans_built");
//   plans_built.add();                    // one relaxed atomic add
//
//   for (const auto& [name, n] : counterValues()) std::cout << name << n;
//
// A name reads "category.event" (the first '.' splits them): Python's
// turnout.utils.counters shows counters["jit"]["plans_built"].
//
// Thread safety: counter() takes a lock (the first time for a name it also
// allocates); keep the returned reference and bump it with no lock. Counters
// are never freed, so references stay valid for the life of the process.
#ifndef TURNOUT_DISPATCHER_DEBUG_COUNTERS_H_
#define TURNOUT_DISPATCHER_DEBUG_COUNTERS_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace turnout {

/// One named counter. Obtain it with counter(name).
class Counter {
 public:
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  /// Adds `n` (may be negative). Lock-free, allocation-free.
  void add(int64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  int64_t value() const { return value_.load(std::memory_order_relaxed); }
  const std::string& name() const { return name_; }

  // Implementation details: made by counter() only.
  explicit Counter(std::string name) : name_(std::move(name)) {}
  void reset() { value_.store(0, std::memory_order_relaxed); }

 private:
  const std::string name_;
  std::atomic<int64_t> value_{0};
};

/// The counter called `name`, created at zero on first use. Throws
/// InvalidArgument for an empty name or one with an empty category or event
/// ("jit.", ".x"); a name without a '.' is put in category "misc".
Counter& counter(std::string_view name);

/// Every counter's full name and value, sorted by name (zeros included).
std::vector<std::pair<std::string, int64_t>> counterValues();

/// Sets every counter to zero (the counters themselves stay).
void resetCounters();

/// Names the C++ side bumps.
inline constexpr const char* kCounterBackendFallbacks =
    "dispatch.backend_fallbacks";  // counted while a dispatch trace is on

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_DEBUG_COUNTERS_H_
