// What every benchmark in bench/ shares: timing the benchmark loop by the
// wall clock, and comparing a figure with a baseline measured earlier in
// the same run (so that a figure is a ratio against this machine, now).
//
//   double ns = bench::nsPerIteration(state, [&] { direct(x); });
//   bench::record(state, "ns", "direct", ns);             // a baseline
//   double ns2 = bench::nsPerIteration(state, [&] { op.call(x); });
//   bench::record(state, "ns", "call", ns2, "direct");    // and ratio
#ifndef TURNOUT_BENCH_BENCH_UTIL_H_
#define TURNOUT_BENCH_BENCH_UTIL_H_

#include <chrono>
#include <map>
#include <string>

#include "benchmark/benchmark.h"

namespace turnout {
namespace bench {

/// Runs `body` in the benchmark loop; returns wall-clock ns per iteration
/// (multi-threaded kernels make CPU time the wrong measure).
template <class Body>
double nsPerIteration(benchmark::State& state, Body body) {
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) body();
  auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(stop - start).count() /
         static_cast<double>(state.iterations());
}

/// Figures recorded so far in this run, by name.
inline std::map<std::string, double>& figures() {
  static std::map<std::string, double> m;
  return m;
}

/// Reports `value` as the counter `counter` and keeps it under `name`.
/// With a `baseline` recorded earlier, also reports `ratio` (value /
/// baseline) and returns the baseline's value; returns 0 otherwise.
inline double record(benchmark::State& state, const char* counter,
                     const std::string& name, double value,
                     const std::string& baseline = "") {
  state.counters[counter] = value;
  figures()[name] = value;
  if (baseline.empty()) return 0;
  auto it = figures().find(baseline);
  if (it == figures().end()) return 0;
  state.counters["ratio"] = value / it->second;
  return it->second;
}

}  // namespace bench
}  // namespace turnout

#endif  // TURNOUT_BENCH_BENCH_UTIL_H_
