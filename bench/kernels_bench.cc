// The reference operators' hot paths against baselines measured in the same
// run (issue 3's table).
//
//   bazel run --config=opt //bench:kernels_bench
//
// Bandwidth figures count the bytes an operation must move: memcpy reads and
// writes n bytes (2n), add reads two inputs and writes one (3n), sum reads
// one (n). `ratio` compares a figure with the baseline that ran just before
// it.
#include <cblas.h>

#include <cstring>
#include <vector>

#include "bench/bench_util.h"
#include "benchmark/benchmark.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/linalg.h"
#include "kernels/reduce.h"
#include "kernels/shape.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace {

constexpr int64_t kBig = 16 * 1024 * 1024;  // 16M floats

using bench::nsPerIteration;

// Records GB/s for `bytes` moved per iteration; compares with `baseline`.
void reportBandwidth(benchmark::State& state, const char* name,
                     const char* baseline, double bytes, double ns) {
  bench::record(state, "GB_per_s", name, bytes / ns,
                baseline != nullptr ? baseline : "");
}

Tensor filled(IntArrayRef sizes, float v) {
  return full(sizes, v, TensorOptions(ScalarType::Float));
}

void BM_AddOneElement(benchmark::State& state) {
  Tensor a = filled({1}, 1.0f), b = filled({1}, 2.0f);
  double ns = nsPerIteration(state, [&] {
    Tensor c = add(a, b);
    benchmark::DoNotOptimize(c);
  });
  state.counters["ns"] = ns;
}
BENCHMARK(BM_AddOneElement);

// The steps of the 1-element add, to see where its time goes: allocating
// the output tensor, and the call into a given output (dispatch, checks,
// type promotion, broadcasting, the loop).
void BM_AddOneElementStepEmpty(benchmark::State& state) {
  const int64_t sizes[] = {1};
  double ns = nsPerIteration(state, [&] {
    Tensor c = emptyTensor(sizes, ScalarType::Float, Device(DeviceType::CPU));
    benchmark::DoNotOptimize(c);
  });
  state.counters["ns"] = ns;
}
BENCHMARK(BM_AddOneElementStepEmpty);

void BM_AddOneElementStepOut(benchmark::State& state) {
  Tensor a = filled({1}, 1.0f), b = filled({1}, 2.0f), c = filled({1}, 0.0f);
  double ns = nsPerIteration(state, [&] {
    add_out(c, a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  });
  state.counters["ns"] = ns;
}
BENCHMARK(BM_AddOneElementStepOut);

// The elementwise paths that lay out a new result (kernels/output_layout.h):
// contiguous inputs take an inline check, then the same allocation as
// before; a permuted input's result follows its order and the loop walks
// both in memory order.
void BM_AddScalar2x2(benchmark::State& state) {
  Tensor a = filled({2, 2}, 1.0f);
  double ns = nsPerIteration(state, [&] {
    Tensor c = add(a, 2.0);
    benchmark::DoNotOptimize(c);
  });
  state.counters["ns"] = ns;
}
BENCHMARK(BM_AddScalar2x2);

void BM_AddBroadcast2x3(benchmark::State& state) {
  Tensor a = filled({2, 3}, 1.0f), b = filled({3}, 2.0f);
  double ns = nsPerIteration(state, [&] {
    Tensor c = add(a, b);
    benchmark::DoNotOptimize(c);
  });
  state.counters["ns"] = ns;
}
BENCHMARK(BM_AddBroadcast2x3);

void BM_Exp2x2(benchmark::State& state) {
  Tensor a = filled({2, 2}, 1.0f);
  double ns = nsPerIteration(state, [&] {
    Tensor c = exp(a);
    benchmark::DoNotOptimize(c);
  });
  state.counters["ns"] = ns;
}
BENCHMARK(BM_Exp2x2);

void BM_AddTransposed512(benchmark::State& state) {
  Tensor a = t(filled({512, 512}, 1.0f)), b = t(filled({512, 512}, 2.0f));
  double ns = nsPerIteration(state, [&] {
    Tensor c = add(a, b);
    benchmark::DoNotOptimize(c);
  });
  state.counters["ns"] = ns;
}
BENCHMARK(BM_AddTransposed512)->Unit(benchmark::kMicrosecond);

void BM_Memcpy16M(benchmark::State& state) {
  std::vector<float> src(kBig, 1.0f), dst(kBig);
  double ns = nsPerIteration(state, [&] {
    std::memcpy(dst.data(), src.data(), kBig * sizeof(float));
    benchmark::DoNotOptimize(dst.data());
  });
  reportBandwidth(state, "memcpy", nullptr, 2.0 * kBig * sizeof(float), ns);
}
BENCHMARK(BM_Memcpy16M)->Unit(benchmark::kMillisecond);

void BM_Add16MOut(benchmark::State& state) {
  Tensor a = filled({kBig}, 1.0f), b = filled({kBig}, 2.0f);
  Tensor out = filled({kBig}, 0.0f);
  double ns = nsPerIteration(state, [&] {
    add_out(out, a, b);
    benchmark::DoNotOptimize(out.data_ptr());
  });
  reportBandwidth(state, "add_out", "memcpy", 3.0 * kBig * sizeof(float), ns);
}
BENCHMARK(BM_Add16MOut)->Unit(benchmark::kMillisecond);

void BM_Add16M(benchmark::State& state) {
  Tensor a = filled({kBig}, 1.0f), b = filled({kBig}, 2.0f);
  double ns = nsPerIteration(state, [&] {
    Tensor c = add(a, b);
    benchmark::DoNotOptimize(c);
  });
  reportBandwidth(state, "add", "memcpy", 3.0 * kBig * sizeof(float), ns);
}
BENCHMARK(BM_Add16M)->Unit(benchmark::kMillisecond);

void BM_Sum16M(benchmark::State& state) {
  Tensor a = filled({kBig}, 1.0f);
  double ns = nsPerIteration(state, [&] {
    Tensor s = sum(a);
    benchmark::DoNotOptimize(s);
  });
  reportBandwidth(state, "sum", "memcpy", 1.0 * kBig * sizeof(float), ns);
}
BENCHMARK(BM_Sum16M)->Unit(benchmark::kMillisecond);

void BM_SgemmDirect1024(benchmark::State& state) {
  const int n = 1024;
  std::vector<float> a(n * n, 1.0f), b(n * n, 2.0f), c(n * n);
  double ns = nsPerIteration(state, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f,
                a.data(), n, b.data(), n, 0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  });
  bench::record(state, "GFLOPS", "sgemm", 2.0 * n * n * n / ns);
}
BENCHMARK(BM_SgemmDirect1024)->Unit(benchmark::kMillisecond);

void BM_Mm1024(benchmark::State& state) {
  const int n = 1024;
  Tensor a = filled({n, n}, 1.0f), b = filled({n, n}, 2.0f);
  double ns = nsPerIteration(state, [&] {
    Tensor c = mm(a, b);
    benchmark::DoNotOptimize(c);
  });
  bench::record(state, "GFLOPS", "mm", 2.0 * n * n * n / ns, "sgemm");
}
BENCHMARK(BM_Mm1024)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace turnout

BENCHMARK_MAIN();
