// The dispatcher's hot paths, each beside a baseline measured in the same run.
//
//   bazel run -c opt //bench:dispatch_bench
//
// Each BM_X reports ns per operation; where the issue's figure is "X minus a
// direct call", the counters `overhead_ns` (X - baseline) and `ratio`
// (X / baseline) compare it with the baseline benchmark that ran just before
// it in the same process.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "benchmark/benchmark.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/debug/profiler.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/local_dispatch_key_set.h"

namespace turnout {
namespace {

using bench::nsPerIteration;

void recordBaseline(benchmark::State& state, const char* name, double ns) {
  bench::record(state, "ns", name, ns);
}

// Reports `ns` with its ratio to, and its overhead over, the baseline.
void compareWith(benchmark::State& state, const char* baseline, double ns) {
  double base = bench::record(state, "ns", "", ns, baseline);
  if (base > 0) state.counters["overhead_ns"] = ns - base;
}

__attribute__((noinline)) Tensor kernelIdentity(const Tensor& x) {
  benchmark::DoNotOptimize(x);
  return x;
}

__attribute__((noinline)) int64_t kernelAddInt(int64_t a, int64_t b) {
  benchmark::DoNotOptimize(a);
  return a + b;
}

// The libraries the benchmarks call, registered once.
struct BenchOps {
  BenchOps() : lib(Library::FRAGMENT, "bench", std::nullopt, __FILE__, __LINE__) {
    lib.def("identity(Tensor x) -> Tensor");
    lib.impl("identity", dispatch(DispatchKey::CPU, TURNOUT_FN(kernelIdentity)));
    lib.def("identity2(Tensor x) -> Tensor");
    lib.impl("identity2", dispatch(DispatchKey::CPU, TURNOUT_FN(kernelIdentity)));
    lib.def("add_int(int a, int b) -> int");
    lib.impl("add_int", dispatch(DispatchKey::CompositeExplicitAutograd,
                                 TURNOUT_FN(kernelAddInt)));
  }
  Library lib;
};

BenchOps& benchOps() {
  static BenchOps* ops = new BenchOps();
  return *ops;
}

Tensor cpuTensor() { return detail::makeEmptyTensor({1}, ScalarType::Float, Device("cpu")); }

void BM_DirectCallTensor(benchmark::State& state) {
  Tensor x = cpuTensor();
  Tensor (*volatile fn)(const Tensor&) = &kernelIdentity;
  double ns = nsPerIteration(state, [&] {
    Tensor r = fn(x);
    benchmark::DoNotOptimize(r);
  });
  recordBaseline(state, "direct_tensor", ns);
}
BENCHMARK(BM_DirectCallTensor);


void BM_DirectCallInt(benchmark::State& state) {
  int64_t (*volatile fn)(int64_t, int64_t) = &kernelAddInt;
  int64_t a = 1;
  double ns = nsPerIteration(state, [&] {
    int64_t r = fn(a, 2);
    benchmark::DoNotOptimize(r);
  });
  recordBaseline(state, "direct_int", ns);
}
BENCHMARK(BM_DirectCallInt);

void BM_UnboxedCallInt(benchmark::State& state) {
  benchOps();
  auto op = Dispatcher::singleton()
                .findSchemaOrThrow("bench::add_int", "")
                .typed<int64_t(int64_t, int64_t)>();
  int64_t a = 1;
  double ns = nsPerIteration(state, [&] {
    int64_t r = op.call(a, 2);
    benchmark::DoNotOptimize(r);
  });
  compareWith(state, "direct_int", ns);
}
BENCHMARK(BM_UnboxedCallInt);

// The calls of bench::identity, unboxed and boxed, each either plain (the
// dispatch hook off: compare with direct_tensor for the call's overhead) or
// with a Profiler recording (compare with the plain figure for the
// profiler's cost per call). One body per call form; the loop differs.
enum class Observed { Off, Profiled };

// A fresh Profiler every 2^16 calls bounds the memory the recorded spans
// take; its start and stop are not timed.
template <class Call>
double profiledLoop(benchmark::State& state, Call call) {
  constexpr int64_t kBatch = 1 << 16;
  auto prof = std::make_unique<Profiler>();
  int64_t in_batch = 0;
  double total_ns = 0;
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    call();
    if (++in_batch == kBatch) {
      auto stop = std::chrono::steady_clock::now();
      total_ns += std::chrono::duration<double, std::nano>(stop - start).count();
      state.PauseTiming();
      prof.reset();
      prof = std::make_unique<Profiler>();
      state.ResumeTiming();
      in_batch = 0;
      start = std::chrono::steady_clock::now();
    }
  }
  auto stop = std::chrono::steady_clock::now();
  total_ns += std::chrono::duration<double, std::nano>(stop - start).count();
  return total_ns / static_cast<double>(state.iterations());
}

// Times `call` as `observed` says and reports it against direct_tensor;
// the plain figure is also kept under `name` for the profiled one's ratio.
template <class Call>
void reportCalls(benchmark::State& state, Observed observed, const char* name,
                 Call call) {
  if (observed == Observed::Off) {
    const double ns = nsPerIteration(state, call);
    compareWith(state, "direct_tensor", ns);
    bench::figures()[name] = ns;
  } else {
    const double ns = profiledLoop(state, call);
    compareWith(state, "direct_tensor", ns);
    const double plain = bench::figures()[name];
    if (plain > 0) state.counters["profiler_ns"] = ns - plain;
  }
}

void BM_UnboxedCallTensor(benchmark::State& state, Observed observed) {
  benchOps();
  auto op = Dispatcher::singleton()
                .findSchemaOrThrow("bench::identity", "")
                .typed<Tensor(const Tensor&)>();
  Tensor x = cpuTensor();
  reportCalls(state, observed, "unboxed_tensor", [&] {
    Tensor r = op.call(x);
    benchmark::DoNotOptimize(r);
  });
}
BENCHMARK_CAPTURE(BM_UnboxedCallTensor, off, Observed::Off);
BENCHMARK_CAPTURE(BM_UnboxedCallTensor, profiled, Observed::Profiled);

void BM_BoxedCallTensor(benchmark::State& state, Observed observed) {
  benchOps();
  OperatorHandle op =
      Dispatcher::singleton().findSchemaOrThrow("bench::identity", "");
  Tensor x = cpuTensor();
  Stack stack;
  stack.reserve(4);
  // As an interpreter does: the argument is moved onto the stack and the
  // result moved off it, so the only reference counting is the kernel's own
  // (it returns a new reference to its argument, as the direct call does).
  reportCalls(state, observed, "boxed_tensor", [&] {
    stack.emplace_back(std::move(x));
    op.callBoxed(stack);
    x = std::move(stack.back()).toTensor();
    stack.pop_back();
    benchmark::DoNotOptimize(x);
  });
}
BENCHMARK_CAPTURE(BM_BoxedCallTensor, off, Observed::Off);
BENCHMARK_CAPTURE(BM_BoxedCallTensor, profiled, Observed::Profiled);

void BM_IncludeExcludeGuard(benchmark::State& state) {
  double ns = nsPerIteration(state, [&] {
    IncludeDispatchKeyGuard include(DispatchKey::Tracer);
    ExcludeDispatchKeyGuard exclude(DispatchKey::AutogradCPU);
    benchmark::ClobberMemory();
  });
  state.counters["ns_per_guard"] = ns / 2;
}
BENCHMARK(BM_IncludeExcludeGuard);

void BM_FindSchemaOrThrow(benchmark::State& state) {
  benchOps();
  double ns = nsPerIteration(state, [&] {
    OperatorHandle op =
        Dispatcher::singleton().findSchemaOrThrow("bench::identity", "");
    benchmark::DoNotOptimize(op);
  });
  state.counters["ns"] = ns;
}
BENCHMARK(BM_FindSchemaOrThrow);

// def + impl of 1000 operators in a row, then their deregistration; the
// names are reused across iterations, as a re-run notebook cell would.
void BM_DefImpl1000(benchmark::State& state) {
  std::vector<std::string> schemas;
  for (int i = 0; i < 1000; ++i) {
    schemas.push_back("op" + std::to_string(i) + "(Tensor x) -> Tensor");
  }
  std::vector<std::string> names;
  for (int i = 0; i < 1000; ++i) names.push_back("op" + std::to_string(i));
  double register_ns = 0;
  double deregister_ns = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    {
      Library lib(Library::FRAGMENT, "benchreg", std::nullopt, __FILE__, __LINE__);
      for (int i = 0; i < 1000; ++i) {
        lib.def(schemas[i]);
        lib.impl(names[i], dispatch(DispatchKey::CPU, TURNOUT_FN(kernelIdentity)));
      }
      auto t1 = std::chrono::steady_clock::now();
      register_ns += std::chrono::duration<double, std::nano>(t1 - t0).count();
      t0 = t1;
    }
    auto t2 = std::chrono::steady_clock::now();
    deregister_ns += std::chrono::duration<double, std::nano>(t2 - t0).count();
  }
  state.counters["def_impl_us_per_op"] = register_ns / state.iterations() / 1000 / 1000;
  state.counters["deregister_us_per_op"] =
      deregister_ns / state.iterations() / 1000 / 1000;
}
BENCHMARK(BM_DefImpl1000)->Unit(benchmark::kMillisecond);

// Thread scaling (issue 17 item 5): unboxed calls from each benchmark thread,
// on one shared operator or one operator per thread, with or without a
// thread that defines and removes another library every millisecond (a rate
// a loading service might see; a registrar spinning flat out would take one
// of the machine's two cores from the callers). Reports calls per second of
// all threads; c10_dispatch_bench.cc's BM_C10CallsThreads is the same on c10.
enum class Target { Same, Different };

void BM_CallsThreads(benchmark::State& state, Target target, bool churn) {
  benchOps();
  const bool second = target == Target::Different && state.thread_index() % 2 == 1;
  auto op = Dispatcher::singleton()
                .findSchemaOrThrow(second ? "bench::identity2" : "bench::identity", "")
                .typed<Tensor(const Tensor&)>();
  Tensor x = cpuTensor();
  std::atomic<bool> stop{false};
  std::thread registrar;
  if (churn && state.thread_index() == 0) {
    registrar = std::thread([&stop] {
      while (!stop.load(std::memory_order_relaxed)) {
        Library lib(Library::FRAGMENT, "benchchurn", std::nullopt, __FILE__, __LINE__);
        lib.def("churn(Tensor x) -> Tensor");
        lib.impl("churn", dispatch(DispatchKey::CPU, TURNOUT_FN(kernelIdentity)));
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  for (auto _ : state) {
    Tensor r = op.call(x);
    benchmark::DoNotOptimize(r);
  }
  if (registrar.joinable()) {
    stop.store(true);
    registrar.join();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_CallsThreads, same, Target::Same, false)
    ->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK_CAPTURE(BM_CallsThreads, different, Target::Different, false)
    ->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK_CAPTURE(BM_CallsThreads, same_churn, Target::Same, true)
    ->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK_CAPTURE(BM_CallsThreads, different_churn, Target::Different, true)
    ->Threads(1)->Threads(2)->UseRealTime();

void BM_DumpComputedTable(benchmark::State& state) {
  benchOps();
  OperatorHandle op = Dispatcher::singleton().findSchemaOrThrow("bench::identity", "");
  double ns = nsPerIteration(state, [&] {
    std::string s = op.dumpComputedTable();
    benchmark::DoNotOptimize(s);
  });
  state.counters["us"] = ns / 1000;
}
BENCHMARK(BM_DumpComputedTable);

}  // namespace
}  // namespace turnout

BENCHMARK_MAIN();
