// The graph interpreter's hot path against baselines measured in the same
// run (issue 5's table, the C++ rows).
//
//   bazel run --config=opt //bench:jit_bench
//
// One chain of 100 operators (add, mul, sub, div, repeated) on 1-element
// Float tensors, run three ways:
//   BM_UnboxedChain100   the same operators through TypedOperatorHandle::call
//                        (the baseline: the kernels, unboxed, through the
//                        dispatcher);
//   BM_BoxedChain100     through OperatorHandle::callBoxed with a hand-built
//                        stack (what a perfect interpreter would cost);
//   BM_GraphChain100     the parsed graph run by Code::run;
//   BM_ExecutorChain100  the same graph run by GraphExecutor::run (the
//                        ArgumentSpec, the plan lookup, then Code::run).
// Each reports `ns_per_op` (time per iteration / 100); the graph and boxed
// runs also report `overhead_ns_per_op` over the unboxed baseline and
// `ratio` to it. jit_torch_bench is this binary plus TorchScript's
// interpreter and executor on the same graph (torchscript_chain_bench.cc).
#include <string>

#include "bench/bench_util.h"
#include "bench/jit_chain.h"
#include "benchmark/benchmark.h"
#include "dispatcher/dispatcher.h"
#include "jit/ir/parser.h"
#include "jit/runtime/graph_executor.h"
#include "jit/runtime/interpreter.h"
#include "kernels/factory.h"

namespace turnout {
namespace {

using bench::kChain;

double& unboxedBaseline() {
  static double ns = 0;
  return ns;
}

using bench::nsPerIteration;

void report(benchmark::State& state, double ns_per_iteration) {
  const double per_op = ns_per_iteration / kChain;
  state.counters["ns_per_op"] = per_op;
  if (unboxedBaseline() > 0) {
    state.counters["overhead_ns_per_op"] = per_op - unboxedBaseline();
    state.counters["ratio"] = per_op / unboxedBaseline();
  }
}

Tensor one() { return full({1}, 1.0f, TensorOptions(ScalarType::Float)); }

void BM_UnboxedChain100(benchmark::State& state) {
  Dispatcher& d = Dispatcher::singleton();
  auto add = d.findSchemaOrThrow("aten::add", "Tensor")
                 .typed<Tensor(const Tensor&, const Tensor&, const Scalar&)>();
  auto sub = d.findSchemaOrThrow("aten::sub", "Tensor")
                 .typed<Tensor(const Tensor&, const Tensor&, const Scalar&)>();
  auto mul = d.findSchemaOrThrow("aten::mul", "Tensor")
                 .typed<Tensor(const Tensor&, const Tensor&)>();
  auto div = d.findSchemaOrThrow("aten::div", "Tensor")
                 .typed<Tensor(const Tensor&, const Tensor&)>();
  Tensor x = one(), y = one();
  double ns = nsPerIteration(state, [&] {
    Tensor v = x;
    for (int i = 1; i <= kChain; i += 4) {
      v = add.call(v, y, 1);
      v = mul.call(v, y);
      v = sub.call(v, y, 1);
      v = div.call(v, y);
    }
    benchmark::DoNotOptimize(v);
  });
  unboxedBaseline() = ns / kChain;
  report(state, ns);
}
BENCHMARK(BM_UnboxedChain100);

void BM_BoxedChain100(benchmark::State& state) {
  Dispatcher& d = Dispatcher::singleton();
  OperatorHandle add = d.findSchemaOrThrow("aten::add", "Tensor");
  OperatorHandle sub = d.findSchemaOrThrow("aten::sub", "Tensor");
  OperatorHandle mul = d.findSchemaOrThrow("aten::mul", "Tensor");
  OperatorHandle div = d.findSchemaOrThrow("aten::div", "Tensor");
  Tensor x = one(), y = one();
  Stack stack;
  stack.reserve(8);
  double ns = nsPerIteration(state, [&] {
    stack.emplace_back(x);
    for (int i = 1; i <= kChain; i += 4) {
      stack.emplace_back(y);
      stack.emplace_back(int64_t{1});
      add.callBoxed(stack);
      stack.emplace_back(y);
      mul.callBoxed(stack);
      stack.emplace_back(y);
      stack.emplace_back(int64_t{1});
      sub.callBoxed(stack);
      stack.emplace_back(y);
      div.callBoxed(stack);
    }
    benchmark::DoNotOptimize(stack.back());
    stack.clear();
  });
  report(state, ns);
}
BENCHMARK(BM_BoxedChain100);

void BM_GraphChain100(benchmark::State& state) {
  jit::Code code(*jit::parseIR(bench::chainGraph()));
  report(state, bench::nsPerChainRun<Stack>(state, one(), one(),
                                            [&](Stack& s) { code.run(s); }));
}
BENCHMARK(BM_GraphChain100);

void BM_ExecutorChain100(benchmark::State& state) {
  jit::GraphExecutor executor(*jit::parseIR(bench::chainGraph()));
  const double ns = bench::nsPerChainRun<Stack>(
      state, one(), one(), [&](Stack& s) { executor.run(s); });
  report(state, ns);
  // jit_torch_bench's TorchScript rows report their ratio to this.
  bench::figures()["executor_per_op"] = ns / kChain;
}
BENCHMARK(BM_ExecutorChain100);

}  // namespace
}  // namespace turnout

BENCHMARK_MAIN();
