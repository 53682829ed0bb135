// turnout against ATen 1.13 (Debian's libtorch-dev) side by side, in one
// run: the 1-element add (whole call), forward + backward of a 2-layer
// MLP, and conv2d forward. Needs libtorch-dev on the machine, so the target is manual:
//
//   bazel run --config=opt //bench:aten_bench -- --benchmark_min_time=0.5
//
// Each turnout figure runs right after its ATen baseline and reports
// `ratio` = turnout time / ATen time (below 1: turnout is faster).
#include <torch/torch.h>

#include <string>


#include "bench/bench_util.h"
#include "benchmark/benchmark.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/engine.h"
#include "kernels/conv.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/linalg.h"
#include "kernels/reduce.h"
#include "kernels/shape.h"

namespace {

using turnout::bench::nsPerIteration;

void report(benchmark::State& state, const char* name, const char* baseline,
            double ns) {
  turnout::bench::record(state, "ns", name, ns,
                         baseline != nullptr ? baseline : "");
}

// ---- add of two 1-element tensors, whole call -------------------------------

void BM_AtenAddOneElement(benchmark::State& state) {
  at::Tensor a = at::full({1}, 1.0f), b = at::full({1}, 2.0f);
  report(state, "aten_add", nullptr, nsPerIteration(state, [&] {
           at::Tensor c = at::add(a, b);
           benchmark::DoNotOptimize(c);
         }));
}
BENCHMARK(BM_AtenAddOneElement);

void BM_TurnoutAddOneElement(benchmark::State& state) {
  using namespace turnout;
  Tensor a = full({1}, 1.0f, TensorOptions(ScalarType::Float));
  Tensor b = full({1}, 2.0f, TensorOptions(ScalarType::Float));
  report(state, "turnout_add", "aten_add", nsPerIteration(state, [&] {
           Tensor c = add(a, b);
           benchmark::DoNotOptimize(c);
         }));
}
BENCHMARK(BM_TurnoutAddOneElement);

// ---- 2-layer MLP, batch 64: 784 -> 256 (relu) -> 10, loss = sum ----------------
//
// One iteration: forward (addmm, relu, addmm, sum), backward, and the
// gradients dropped (PyTorch's zero_grad(set_to_none=True)). Both sides use
// the same shapes and random data.

constexpr int64_t kBatch = 64, kIn = 784, kHidden = 256, kOut = 10;

void BM_AtenMlpForwardBackward(benchmark::State& state) {
  torch::manual_seed(0);
  at::Tensor x = torch::randn({kBatch, kIn});
  at::Tensor w1 = (torch::randn({kHidden, kIn}) * 0.05).requires_grad_();
  at::Tensor b1 = torch::zeros({kHidden}).requires_grad_();
  at::Tensor w2 = (torch::randn({kOut, kHidden}) * 0.05).requires_grad_();
  at::Tensor b2 = torch::zeros({kOut}).requires_grad_();
  report(state, "aten_mlp", nullptr, nsPerIteration(state, [&] {
           at::Tensor h = at::relu(at::addmm(b1, x, w1.t()));
           at::Tensor loss = at::addmm(b2, h, w2.t()).sum();
           loss.backward();
           benchmark::DoNotOptimize(w1.grad().data_ptr());
           for (at::Tensor* p : {&w1, &b1, &w2, &b2}) p->mutable_grad().reset();
         }));
}
BENCHMARK(BM_AtenMlpForwardBackward)->Unit(benchmark::kMicrosecond);

void BM_TurnoutMlpForwardBackward(benchmark::State& state) {
  using namespace turnout;
  const TensorOptions f32(ScalarType::Float);
  Tensor x = randn({kBatch, kIn}, f32);
  Tensor w1 = mul(randn({kHidden, kIn}, f32), 0.05);
  Tensor b1 = zeros({kHidden}, f32);
  Tensor w2 = mul(randn({kOut, kHidden}, f32), 0.05);
  Tensor b2 = zeros({kOut}, f32);
  for (const Tensor* p : {&w1, &b1, &w2, &b2}) {
    autograd::setRequiresGrad(*p, true);
  }
  report(state, "turnout_mlp", "aten_mlp", nsPerIteration(state, [&] {
           Tensor h = relu(addmm(b1, x, t(w1)));
           Tensor loss = sum(addmm(b2, h, t(w2)));
           autograd::backward({loss});
           benchmark::DoNotOptimize(autograd::grad(w1).data_ptr());
           for (const Tensor* p : {&w1, &b1, &w2, &b2}) {
             autograd::setGrad(*p, Tensor());
           }
         }));
}
BENCHMARK(BM_TurnoutMlpForwardBackward)->Unit(benchmark::kMicrosecond);

// Forward only, both sides, without recording a graph.
void BM_AtenMlpForward(benchmark::State& state) {
  torch::NoGradGuard no_grad;
  at::Tensor x = torch::randn({kBatch, kIn});
  at::Tensor w1 = torch::randn({kHidden, kIn}) * 0.05, b1 = torch::zeros({kHidden});
  at::Tensor w2 = torch::randn({kOut, kHidden}) * 0.05, b2 = torch::zeros({kOut});
  report(state, "aten_mlp_fwd", nullptr, nsPerIteration(state, [&] {
           at::Tensor h = at::relu(at::addmm(b1, x, w1.t()));
           at::Tensor loss = at::addmm(b2, h, w2.t()).sum();
           benchmark::DoNotOptimize(loss);
         }));
}
BENCHMARK(BM_AtenMlpForward)->Unit(benchmark::kMicrosecond);

void BM_TurnoutMlpForward(benchmark::State& state) {
  using namespace turnout;
  const TensorOptions f32(ScalarType::Float);
  Tensor x = randn({kBatch, kIn}, f32);
  Tensor w1 = mul(randn({kHidden, kIn}, f32), 0.05);
  Tensor b1 = zeros({kHidden}, f32);
  Tensor w2 = mul(randn({kOut, kHidden}, f32), 0.05);
  Tensor b2 = zeros({kOut}, f32);
  report(state, "turnout_mlp_fwd", "aten_mlp_fwd", nsPerIteration(state, [&] {
           Tensor h = relu(addmm(b1, x, t(w1)));
           Tensor loss = sum(addmm(b2, h, t(w2)));
           benchmark::DoNotOptimize(loss);
         }));
}
BENCHMARK(BM_TurnoutMlpForward)->Unit(benchmark::kMicrosecond);

// ---- conv2d forward (issue 20): im2col + sgemm against ATen's CPU conv ------
//
// Args: batch, in channels, out channels, height = width; 3x3 kernel,
// stride 1, padding 1, with bias. The small shape is one CNN block at
// batch 1 (overhead and im2col dominate), the larger one a batch of 8
// 64 -> 64 channel images (the matrix product dominates).

// "aten_conv2d_1x16x32x32": one baseline per shape.
std::string convName(const char* side, const benchmark::State& state) {
  return std::string(side) + "_conv2d_" + std::to_string(state.range(0)) + "x" +
         std::to_string(state.range(1)) + "x" + std::to_string(state.range(2)) +
         "x" + std::to_string(state.range(3));
}

void BM_AtenConv2d(benchmark::State& state) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(0);
  const int64_t n = state.range(0), c = state.range(1), o = state.range(2),
                hw = state.range(3);
  at::Tensor x = torch::randn({n, c, hw, hw});
  at::Tensor w = torch::randn({o, c, 3, 3}) * 0.1;
  at::Tensor b = torch::randn({o});
  report(state, convName("aten", state).c_str(), nullptr,
         nsPerIteration(state, [&] {
           at::Tensor y = at::conv2d(x, w, b, {1, 1}, {1, 1});
           benchmark::DoNotOptimize(y.data_ptr());
         }));
}

void BM_TurnoutConv2d(benchmark::State& state) {
  using namespace turnout;
  const TensorOptions f32(ScalarType::Float);
  const int64_t n = state.range(0), c = state.range(1), o = state.range(2),
                hw = state.range(3);
  Tensor x = randn({n, c, hw, hw}, f32);
  Tensor w = mul(randn({o, c, 3, 3}, f32), 0.1);
  Tensor b = randn({o}, f32);
  report(state, convName("turnout", state).c_str(),
         convName("aten", state).c_str(), nsPerIteration(state, [&] {
           Tensor y = conv2d(x, w, b, {1, 1}, {1, 1});
           benchmark::DoNotOptimize(y.data_ptr());
         }));
}

// Each turnout shape right after its ATen baseline.
BENCHMARK(BM_AtenConv2d)->Args({1, 16, 32, 32})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TurnoutConv2d)->Args({1, 16, 32, 32})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AtenConv2d)->Args({8, 64, 64, 56})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TurnoutConv2d)->Args({8, 64, 64, 56})->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
