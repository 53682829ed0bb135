// Memory of registration churn (issue 17, items 3 and 4): what a removed
// operator leaves behind, and what define/remove cycles retain while one
// thread is parked inside a call.
//
//   bazel run --config=opt //bench:registry_memory_bench
//
// Figures are allocator bytes in use (mallinfo2: uordblks + hblkhd) and the
// resident set (/proc/self/statm), measured before and after in the same
// process, after a reclamation pass; the baseline is the same churn with no
// parked reader. Each benchmark runs once (the counts are the workload).
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "benchmark/benchmark.h"
#include "dispatcher/call_section.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"

namespace turnout {
namespace {

constexpr int kOperators = 100000;
constexpr int kCycles = 100000;

double allocatedBytes() {
  struct mallinfo2 m = mallinfo2();
  return static_cast<double>(m.uordblks + m.hblkhd);
}

double residentBytes() {
  long pages = 0;
  long resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * sysconf(_SC_PAGESIZE);
}

void reclaimAll() {
  detail::Reclaimer::global().reclaim();
  detail::Reclaimer::global().reclaim();
}

__attribute__((noinline)) Tensor kernelIdentity(const Tensor& x) {
  benchmark::DoNotOptimize(x);
  return x;
}

// A distinct namespace prefix per run, so that repeated runs (or
// --benchmark_repetitions) never reuse a name.
std::string freshPrefix() {
  static int run = 0;
  return "op" + std::to_string(run++) + "_";
}

// def + CPU impl of `name` in `lib`.
void defineWithKernel(Library& lib, const std::string& name) {
  lib.def(name + "(Tensor x) -> Tensor");
  lib.impl(name, dispatch(DispatchKey::CPU, TURNOUT_FN(kernelIdentity)));
}

// Bytes in use per live operator (def + CPU impl), then per operator once
// they are all removed: what a name costs forever.
void BM_RemovedOperatorBytes(benchmark::State& state) {
  for (auto _ : state) {
    const std::string prefix = freshPrefix();
    reclaimAll();
    const double before = allocatedBytes();
    double live = 0;
    {
      Library lib(Library::FRAGMENT, "memb", std::nullopt, __FILE__, __LINE__);
      for (int i = 0; i < kOperators; ++i) {
        defineWithKernel(lib, prefix + std::to_string(i));
      }
      reclaimAll();
      live = allocatedBytes() - before;
    }
    reclaimAll();
    const double left = allocatedBytes() - before;
    state.counters["live_bytes_per_op"] = live / kOperators;
    state.counters["left_bytes_per_op"] = left / kOperators;
  }
}
BENCHMARK(BM_RemovedOperatorBytes)->Iterations(1)->Unit(benchmark::kMillisecond);

// The same, each operator in a library of its own that is removed at once
// (a service loading and unloading generated kernels).
void BM_RemovedOperatorBytesOneByOne(benchmark::State& state) {
  for (auto _ : state) {
    const std::string prefix = freshPrefix();
    reclaimAll();
    const double before = allocatedBytes();
    for (int i = 0; i < kOperators; ++i) {
      Library lib(Library::FRAGMENT, "memb", std::nullopt, __FILE__, __LINE__);
      defineWithKernel(lib, prefix + std::to_string(i));
    }
    reclaimAll();
    state.counters["left_bytes_per_op"] =
        (allocatedBytes() - before) / kOperators;
  }
}
BENCHMARK(BM_RemovedOperatorBytesOneByOne)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// range(1) define/remove cycles of one library (def + CPU impl of the same
// name, and a kernel added to and removed from an operator that another
// thread is calling), with or without a thread parked inside a call
// meanwhile. Reports the peak growth of bytes in use and of the resident
// set, what is still pending at the end, and what stays once the parked
// thread has left and a pass has run.
void BM_ChurnWithParkedReader(benchmark::State& state) {
  const bool parked_reader = state.range(0) != 0;
  const int cycles = static_cast<int>(state.range(1));
  for (auto _ : state) {
    std::atomic<bool> inside{false};
    std::atomic<bool> leave{false};
    Library lib(Library::FRAGMENT, "membpark", std::nullopt, __FILE__, __LINE__);
    lib.def("park(Tensor x) -> Tensor");
    lib.impl("park", dispatch(DispatchKey::CPU, [&](const Tensor& x) {
               inside = true;
               while (!leave.load()) {
                 std::this_thread::sleep_for(std::chrono::microseconds(100));
               }
               return x;
             }));
    defineWithKernel(lib, "busy");
    auto park = Dispatcher::singleton()
                    .findSchemaOrThrow("membpark::park", "")
                    .typed<Tensor(const Tensor&)>();
    Tensor x = detail::makeTensorWithKeySet(DispatchKeySet(DispatchKey::CPU));
    std::thread parked;
    if (parked_reader) {
      parked = std::thread([&] { benchmark::DoNotOptimize(park.call(x)); });
      while (!inside.load()) std::this_thread::yield();
    }
    reclaimAll();
    const double before = allocatedBytes();
    const double rss_before = residentBytes();
    double peak = 0;
    double rss_peak = 0;
    for (int i = 0; i < cycles; ++i) {
      {
        Library churn(Library::FRAGMENT, "membpark", std::nullopt, __FILE__,
                      __LINE__);
        defineWithKernel(churn, "churn");
        churn.impl("busy", dispatch(DispatchKey::AutogradCPU,
                                    TURNOUT_FN(kernelIdentity)));
      }
      if (i % 1024 == 0) {
        peak = std::max(peak, allocatedBytes() - before);
        rss_peak = std::max(rss_peak, residentBytes() - rss_before);
      }
    }
    peak = std::max(peak, allocatedBytes() - before);
    rss_peak = std::max(rss_peak, residentBytes() - rss_before);
    const double pending =
        static_cast<double>(detail::Reclaimer::global().pendingBytes());
    leave = true;
    if (parked.joinable()) parked.join();
    reclaimAll();
    state.counters["peak_growth_MB"] = peak / 1e6;
    state.counters["peak_rss_growth_MB"] = rss_peak / 1e6;
    state.counters["pending_MB"] = pending / 1e6;
    state.counters["left_after_leave_MB"] = (allocatedBytes() - before) / 1e6;
    state.counters["rss_left_after_leave_MB"] =
        (residentBytes() - rss_before) / 1e6;
  }
}
// 100,000 cycles is the workload; 10,000 lets the epoch-only
// scheme (before issue 17) finish: there, with a parked reader, every
// registration past 256 KB pending ran a pass over all the batches held
// back, so the churn itself became quadratic.
BENCHMARK(BM_ChurnWithParkedReader)
    ->ArgNames({"parked", "cycles"})
    ->Args({0, 10000})
    ->Args({1, 10000})
    ->Args({0, kCycles})
    ->Args({1, kCycles})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace turnout

BENCHMARK_MAIN();
