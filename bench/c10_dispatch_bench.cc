// dispatch_bench's figures measured on PyTorch 1.13's c10 dispatcher (Debian's
// libtorch-dev), linked into the same binary as turnout's so that both sides
// run in one process, on one machine, at one time:
//
//   bazel run --config=opt //bench:dispatch_c10_bench
//
// Each BM_C10X here does what dispatch_bench.cc's BM_X does, through c10's
// API: the same identity kernel (returns a new reference to its argument),
// the same call forms, the same guard pair and registration loop. The
// ratios turnout / c10 are formed by tools/bench.sh from the JSON output.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "benchmark/benchmark.h"

namespace {

using turnout::bench::nsPerIteration;

__attribute__((noinline)) at::Tensor c10Identity(const at::Tensor& x) {
  benchmark::DoNotOptimize(x);
  return x;
}

torch::Library& c10Ops() {
  static torch::Library* lib = [] {
    auto* l = new torch::Library(torch::Library::FRAGMENT, "c10bench",
                                 c10::nullopt, __FILE__, __LINE__);
    l->def("identity(Tensor x) -> Tensor");
    l->def("identity2(Tensor x) -> Tensor");
    l->impl("identity", torch::dispatch(c10::DispatchKey::CPU, TORCH_FN(c10Identity)));
    l->impl("identity2", torch::dispatch(c10::DispatchKey::CPU, TORCH_FN(c10Identity)));
    return l;
  }();
  return *lib;
}

void BM_C10DirectCallTensor(benchmark::State& state) {
  at::Tensor x = at::empty({1});
  at::Tensor (*volatile fn)(const at::Tensor&) = &c10Identity;
  state.counters["ns"] = nsPerIteration(state, [&] {
    at::Tensor r = fn(x);
    benchmark::DoNotOptimize(r);
  });
}
BENCHMARK(BM_C10DirectCallTensor);

void BM_C10UnboxedCallTensor(benchmark::State& state) {
  c10Ops();
  auto op = c10::Dispatcher::singleton()
                .findSchemaOrThrow("c10bench::identity", "")
                .typed<at::Tensor(const at::Tensor&)>();
  at::Tensor x = at::empty({1});
  state.counters["ns"] = nsPerIteration(state, [&] {
    at::Tensor r = op.call(x);
    benchmark::DoNotOptimize(r);
  });
}
BENCHMARK(BM_C10UnboxedCallTensor);

void BM_C10BoxedCallTensor(benchmark::State& state) {
  c10Ops();
  c10::OperatorHandle op =
      c10::Dispatcher::singleton().findSchemaOrThrow("c10bench::identity", "");
  at::Tensor x = at::empty({1});
  torch::jit::Stack stack;
  stack.reserve(4);
  state.counters["ns"] = nsPerIteration(state, [&] {
    stack.emplace_back(std::move(x));
    op.callBoxed(&stack);
    x = std::move(stack.back()).toTensor();
    stack.pop_back();
    benchmark::DoNotOptimize(x);
  });
}
BENCHMARK(BM_C10BoxedCallTensor);

void BM_C10IncludeExcludeGuard(benchmark::State& state) {
  double ns = nsPerIteration(state, [&] {
    c10::impl::IncludeDispatchKeyGuard include(c10::DispatchKey::Tracer);
    c10::impl::ExcludeDispatchKeyGuard exclude(c10::DispatchKey::AutogradCPU);
    benchmark::ClobberMemory();
  });
  state.counters["ns_per_guard"] = ns / 2;
}
BENCHMARK(BM_C10IncludeExcludeGuard);

void BM_C10FindSchemaOrThrow(benchmark::State& state) {
  c10Ops();
  state.counters["ns"] = nsPerIteration(state, [&] {
    c10::OperatorHandle op =
        c10::Dispatcher::singleton().findSchemaOrThrow("c10bench::identity", "");
    benchmark::DoNotOptimize(op);
  });
}
BENCHMARK(BM_C10FindSchemaOrThrow);

// As BM_DefImpl1000: 1000 operators defined and implemented in a row, then
// removed with their library; names reused across iterations.
void BM_C10DefImpl1000(benchmark::State& state) {
  std::vector<std::string> schemas, names;
  for (int i = 0; i < 1000; ++i) {
    schemas.push_back("op" + std::to_string(i) + "(Tensor x) -> Tensor");
    names.push_back("op" + std::to_string(i));
  }
  double register_ns = 0, deregister_ns = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    {
      torch::Library lib(torch::Library::FRAGMENT, "c10benchreg", c10::nullopt,
                         __FILE__, __LINE__);
      for (int i = 0; i < 1000; ++i) {
        lib.def(schemas[i].c_str());
        lib.impl(names[i].c_str(),
                 torch::dispatch(c10::DispatchKey::CPU, TORCH_FN(c10Identity)));
      }
      auto t1 = std::chrono::steady_clock::now();
      register_ns += std::chrono::duration<double, std::nano>(t1 - t0).count();
      t0 = t1;
    }
    auto t2 = std::chrono::steady_clock::now();
    deregister_ns += std::chrono::duration<double, std::nano>(t2 - t0).count();
  }
  state.counters["def_impl_us_per_op"] = register_ns / state.iterations() / 1e6;
  state.counters["deregister_us_per_op"] = deregister_ns / state.iterations() / 1e6;
}
BENCHMARK(BM_C10DefImpl1000)->Unit(benchmark::kMillisecond);

// Thread scaling (issue 17 item 5), as BM_CallsThreads in dispatch_bench.cc:
// unboxed calls from each benchmark thread, on one shared operator or one
// operator per thread, with or without a thread that defines and removes
// another library every millisecond (a registration rate a loading service
// might see; a registrar spinning flat out would take one of the machine's
// cores from the callers). Reports calls per second (all threads).
enum class Target { Same, Different };

void BM_C10CallsThreads(benchmark::State& state, Target target, bool churn) {
  c10Ops();
  const bool second = target == Target::Different && state.thread_index() % 2 == 1;
  auto op = c10::Dispatcher::singleton()
                .findSchemaOrThrow(second ? "c10bench::identity2" : "c10bench::identity", "")
                .typed<at::Tensor(const at::Tensor&)>();
  at::Tensor x = at::empty({1});
  std::atomic<bool> stop{false};
  std::thread registrar;
  if (churn && state.thread_index() == 0) {
    registrar = std::thread([&stop] {
      while (!stop.load(std::memory_order_relaxed)) {
        torch::Library lib(torch::Library::FRAGMENT, "c10benchchurn", c10::nullopt,
                           __FILE__, __LINE__);
        lib.def("churn(Tensor x) -> Tensor");
        lib.impl("churn", torch::dispatch(c10::DispatchKey::CPU, TORCH_FN(c10Identity)));
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  for (auto _ : state) {
    at::Tensor r = op.call(x);
    benchmark::DoNotOptimize(r);
  }
  if (registrar.joinable()) {
    stop.store(true);
    registrar.join();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_C10CallsThreads, same, Target::Same, false)
    ->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK_CAPTURE(BM_C10CallsThreads, different, Target::Different, false)
    ->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK_CAPTURE(BM_C10CallsThreads, same_churn, Target::Same, true)
    ->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK_CAPTURE(BM_C10CallsThreads, different_churn, Target::Different, true)
    ->Threads(1)->Threads(2)->UseRealTime();

}  // namespace
