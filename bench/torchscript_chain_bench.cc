// TorchScript 1.13's side of jit_bench (linked into //bench:jit_torch_bench
// with jit_bench.cc): the same chain graph, parsed by torch::jit::parseIR,
// run by TorchScript's interpreter and by its GraphExecutor (the profiling
// executor, warmed up first), both with a stack as turnout's are.
//
// Each reports `ns_per_op` and, when BM_ExecutorChain100 ran before it,
// `ratio` = TorchScript / turnout executor (above 1: turnout is faster).
#include <torch/csrc/jit/ir/irparser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/torch.h>

#include <memory>

#include "bench/bench_util.h"
#include "bench/jit_chain.h"
#include "benchmark/benchmark.h"

namespace {

using turnout::bench::kChain;

std::shared_ptr<torch::jit::Graph> chain() {
  auto g = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(turnout::bench::chainGraph(), g.get());
  return g;
}

at::Tensor one() { return at::full({1}, 1.0f); }

void report(benchmark::State& state, double ns) {
  turnout::bench::record(state, "ns_per_op", "torchscript", ns / kChain,
                         "executor_per_op");
}

void BM_TorchScriptInterpreterChain100(benchmark::State& state) {
  torch::jit::Code code(chain(), "chain");
  report(state, turnout::bench::nsPerChainRun<torch::jit::Stack>(
                    state, one(), one(), [&](torch::jit::Stack& s) {
                      torch::jit::InterpreterState(code).run(s);
                    }));
}
BENCHMARK(BM_TorchScriptInterpreterChain100);

void BM_TorchScriptExecutorChain100(benchmark::State& state) {
  torch::jit::GraphExecutor executor(chain(), "chain");
  at::Tensor x = one(), y = one();
  for (int i = 0; i < 10; ++i) {  // profiling runs, then the optimised plan
    torch::jit::Stack warm{x, y};
    executor.run(warm);
  }
  report(state,
         turnout::bench::nsPerChainRun<torch::jit::Stack>(
             state, x, y, [&](torch::jit::Stack& s) { executor.run(s); }));
}
BENCHMARK(BM_TorchScriptExecutorChain100);

}  // namespace
