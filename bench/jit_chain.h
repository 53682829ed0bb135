// The graph jit_bench and jit_torch_bench time, and the loop that runs it:
// a chain of kChain operators (add, mul, sub, div, repeated) on two
// 1-element Float tensors x and y, as TorchScript text that both turnout's
// parser and torch::jit::parseIR read.
//
//   double ns = bench::nsPerChainRun<Stack>(state, x, y,
//                                           [&](Stack& s) { code.run(s); });
#ifndef TURNOUT_BENCH_JIT_CHAIN_H_
#define TURNOUT_BENCH_JIT_CHAIN_H_

#include <string>

#include "bench/bench_util.h"
#include "benchmark/benchmark.h"

namespace turnout {
namespace bench {

constexpr int kChain = 100;

/// add, mul, sub, div by y: with y = 1 the values stay finite however long
/// it runs.
inline std::string chainGraph() {
  std::string text =
      "graph(%x : Tensor,\n      %y : Tensor):\n"
      "  %one : int = prim::Constant[value=1]()\n";
  std::string prev = "x";
  for (int i = 1; i <= kChain; ++i) {
    const std::string v = "v" + std::to_string(i);
    const std::string lhs = "  %" + v + " : Tensor = ";
    switch (i % 4) {
      case 1:
        text += lhs + "aten::add(%" + prev + ", %y, %one)\n";
        break;
      case 2:
        text += lhs + "aten::mul(%" + prev + ", %y)\n";
        break;
      case 3:
        text += lhs + "aten::sub(%" + prev + ", %y, %one)\n";
        break;
      case 0:
        text += lhs + "aten::div(%" + prev + ", %y)\n";
        break;
    }
    prev = v;
  }
  text += "  return (%" + prev + ")\n";
  return text;
}

/// Times `run(stack)` with the stack holding x and y, as a graph runner
/// (an interpreter, an executor; turnout's or TorchScript's) takes them;
/// wall-clock ns per run. The stack keeps its capacity between runs.
template <class Stack, class Tensor, class Run>
double nsPerChainRun(benchmark::State& state, const Tensor& x, const Tensor& y,
                     Run run) {
  Stack stack;
  stack.reserve(8);
  return nsPerIteration(state, [&] {
    stack.emplace_back(x);
    stack.emplace_back(y);
    run(stack);
    benchmark::DoNotOptimize(stack.back());
    stack.clear();
  });
}

}  // namespace bench
}  // namespace turnout

#endif  // TURNOUT_BENCH_JIT_CHAIN_H_
