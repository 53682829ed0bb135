// The autograd kernels' per-call cost for a plain C++ caller (no Python
// loaded): recording an operator whose backward saves its output (exp),
// one that saves nothing (neg), views (which remember their base, for
// Tensor._base), and a small backward that unpacks a saved output.
//
//   bazel run -c opt //bench:autograd_bench
//
// `ratio` compares a figure with the baseline that ran just before it.
#include "bench/bench_util.h"
#include "benchmark/benchmark.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/engine.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/reduce.h"
#include "kernels/shape.h"

namespace turnout {
namespace {

using bench::nsPerIteration;

Tensor leaf(bool requires_grad) {
  Tensor x = full({4}, 0.5, TensorOptions(ScalarType::Float));
  if (requires_grad) autograd::setRequiresGrad(x, true);
  return x;
}

void BM_NegRecorded(benchmark::State& state) {
  Tensor x = leaf(true);
  double ns = nsPerIteration(state, [&] {
    Tensor y = neg(x);
    benchmark::DoNotOptimize(y);
  });
  bench::record(state, "ns", "neg", ns);
}
BENCHMARK(BM_NegRecorded);

void BM_ExpRecorded(benchmark::State& state) {
  Tensor x = leaf(true);
  double ns = nsPerIteration(state, [&] {
    Tensor y = exp(x);
    benchmark::DoNotOptimize(y);
  });
  bench::record(state, "ns", "exp", ns, "neg");
}
BENCHMARK(BM_ExpRecorded);

void BM_ExpRecordedBackward(benchmark::State& state) {
  Tensor x = leaf(true);
  double ns = nsPerIteration(state, [&] {
    Tensor y = sum(exp(x));
    autograd::backward({y});
    benchmark::DoNotOptimize(y);
  });
  bench::record(state, "ns", "exp_backward", ns);
}
BENCHMARK(BM_ExpRecordedBackward);

void BM_ViewPlain(benchmark::State& state) {
  Tensor x = leaf(false);
  const int64_t sizes[] = {2, 2};
  double ns = nsPerIteration(state, [&] {
    Tensor v = view(x, sizes);
    benchmark::DoNotOptimize(v);
  });
  bench::record(state, "ns", "view_plain", ns);
}
BENCHMARK(BM_ViewPlain);

void BM_ViewRecorded(benchmark::State& state) {
  Tensor x = leaf(true);
  const int64_t sizes[] = {2, 2};
  double ns = nsPerIteration(state, [&] {
    Tensor v = view(x, sizes);
    benchmark::DoNotOptimize(v);
  });
  bench::record(state, "ns", "view_recorded", ns, "view_plain");
}
BENCHMARK(BM_ViewRecorded);

}  // namespace
}  // namespace turnout

BENCHMARK_MAIN();
