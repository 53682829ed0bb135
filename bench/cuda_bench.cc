// The CUDA kernels' hot paths against baselines measured in the same run
// (issue "CUDA on a real GPU"): bandwidth of add and sum against a
// device-to-device cudaMemcpy, mm against cuBLAS called directly with the
// same types, and the host cost of a tiny add through the dispatcher
// against a bare kernel launch.
//
//   bazel run --config=opt //bench:cuda_bench
//   turnout-gpu/run.sh bench        # from tools/gpu/bundle.sh's bundle
//
// Large operations are timed on the GPU: CUDA events around each run on the
// current stream, after warm-up runs; that time is the benchmark's (manual)
// time, so `bytes_per_second` and `GB_per_s` are the device's rate, not the
// host's enqueue rate. The launch benchmarks are timed by the wall clock,
// with a stream synchronisation every kLaunchesPerSync calls, because the
// host's cost per call is what they measure. `ratio` compares a figure with
// the baseline that ran just before it (bench_util.h); without a device
// every benchmark skips itself with an error.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "bench/bench_util.h"
#include "bench/cuda_bench_kernels.h"
#include "benchmark/benchmark.h"
#include "kernels/cuda/cuda_utils.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/stream.h"
#include "kernels/ops.h"

namespace turnout {
namespace {

// 256 MiB of floats per buffer: far above the H100's 50 MiB L2, so every
// byte comes from and goes to HBM.
constexpr int64_t kBigBytes = int64_t{256} << 20;
constexpr int64_t kBigNumel = kBigBytes / sizeof(float);
constexpr int kWarmupRuns = 3;
constexpr int64_t kGemmSize = 4096;
constexpr int kLaunchesPerSync = 256;

Device cudaDevice() { return Device(DeviceType::CUDA, 0); }

// False (and the benchmark marked skipped with an error) without a GPU.
bool haveDevice(benchmark::State& state) {
  if (cuda::cudaDeviceCount() > 0) return true;
  state.SkipWithError("no CUDA device: cuda_bench needs a GPU");
  return false;
}

void check(cudaError_t e, const char* what) {
  cuda::checkCuda(static_cast<int>(e), what);
}

Tensor filled(IntArrayRef sizes, double v,
              ScalarType dtype = ScalarType::Float) {
  return full(sizes, v, TensorOptions(dtype).device(cudaDevice()));
}

// Runs `body` warm-up times, then once per benchmark iteration between two
// CUDA events on the current stream, and makes the events' elapsed time the
// iteration's time (register with ->UseManualTime()). Returns GPU ns per
// run. Each iteration waits for its run, so the host never runs ahead.
template <class Body>
double gpuNsPerRun(benchmark::State& state, Body body) {
  for (int i = 0; i < kWarmupRuns; ++i) body();
  cuda::deviceSynchronize();
  const cuda::CUDAStream stream = cuda::getCurrentCUDAStream();
  cuda::CUDAEvent start(/*enable_timing=*/true), stop(/*enable_timing=*/true);
  double total_ms = 0;
  for (auto _ : state) {
    start.record(stream);
    body();
    stop.record(stream);
    stop.synchronize();
    const double ms = start.elapsedTime(stop);
    state.SetIterationTime(ms / 1e3);
    total_ms += ms;
  }
  return total_ms * 1e6 / static_cast<double>(state.iterations());
}

// Reports `bytes` moved per run: `bytes_per_second` (a rate over the
// manual time) and `GB_per_s` under `name`, with `ratio` to `baseline`.
void reportBandwidth(benchmark::State& state, const std::string& name,
                     const std::string& baseline, double bytes, double ns) {
  state.counters["bytes_per_second"] = benchmark::Counter(
      bytes * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate, benchmark::Counter::kIs1024);
  bench::record(state, "GB_per_s", name, bytes / ns, baseline);
}

// ---- Bandwidth: memcpy (baseline), add, sum --------------------------------

// Counts read + write: 2 * 256 MiB per copy.
void BM_CudaMemcpyD2D(benchmark::State& state) {
  if (!haveDevice(state)) return;
  Tensor src = filled({kBigNumel}, 1.0), dst = filled({kBigNumel}, 0.0);
  const double ns = gpuNsPerRun(state, [&] {
    check(
        cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), kBigBytes,
                        cudaMemcpyDeviceToDevice, cuda::currentStreamHandle()),
        "cudaMemcpyAsync");
  });
  reportBandwidth(state, "memcpy", "", 2.0 * kBigBytes, ns);
}
BENCHMARK(BM_CudaMemcpyD2D)->UseManualTime()->Unit(benchmark::kMicrosecond);

// add reads two inputs and writes one: 3 * N * 4 bytes; target ratio to
// memcpy >= 0.85. A new output per call (from the caching allocator).
void BM_CudaAdd(benchmark::State& state) {
  if (!haveDevice(state)) return;
  Tensor a = filled({kBigNumel}, 1.0), b = filled({kBigNumel}, 2.0);
  const double ns = gpuNsPerRun(state, [&] {
    Tensor c = add(a, b);
    benchmark::DoNotOptimize(c);
  });
  reportBandwidth(state, "add", "memcpy", 3.0 * kBigBytes, ns);
}
BENCHMARK(BM_CudaAdd)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_CudaAddOut(benchmark::State& state) {
  if (!haveDevice(state)) return;
  Tensor a = filled({kBigNumel}, 1.0), b = filled({kBigNumel}, 2.0);
  Tensor out = filled({kBigNumel}, 0.0);
  const double ns = gpuNsPerRun(state, [&] { add_out(out, a, b); });
  reportBandwidth(state, "add_out", "memcpy", 3.0 * kBigBytes, ns);
}
BENCHMARK(BM_CudaAddOut)->UseManualTime()->Unit(benchmark::kMicrosecond);

// a += b: reads a and b, writes a (3 * N * 4 bytes).
void BM_CudaAddInplace(benchmark::State& state) {
  if (!haveDevice(state)) return;
  Tensor a = filled({kBigNumel}, 1.0), b = filled({kBigNumel}, 0.5);
  const double ns = gpuNsPerRun(state, [&] { add_(a, b); });
  reportBandwidth(state, "add_", "memcpy", 3.0 * kBigBytes, ns);
}
BENCHMARK(BM_CudaAddInplace)->UseManualTime()->Unit(benchmark::kMicrosecond);

// sum of every element reads N * 4 bytes and writes nothing to speak of.
// Its ratio compares that read bandwidth with memcpy's read + write
// bandwidth (HBM's total traffic either way); target >= 0.85.
void BM_CudaSum(benchmark::State& state) {
  if (!haveDevice(state)) return;
  Tensor a = filled({kBigNumel}, 1.0);
  const double ns = gpuNsPerRun(state, [&] {
    Tensor s = sum(a);
    benchmark::DoNotOptimize(s);
  });
  reportBandwidth(state, "sum", "memcpy", 1.0 * kBigBytes, ns);
}
BENCHMARK(BM_CudaSum)->UseManualTime()->Unit(benchmark::kMicrosecond);

// ---- mm against cuBLAS ----------------------------------------------------

// What turnout's mm asks cuBLAS for (kernels/cuda/linalg.cc): Float in full
// float (CUBLAS_COMPUTE_32F, no TF32), Half and BFloat16 accumulating in
// float.
struct GemmCase {
  ScalarType dtype;
  cudaDataType_t data;
  cublasComputeType_t compute;
  const char* name;  // of the figures: "cublas_<name>", "mm_<name>"
};

constexpr GemmCase kGemmFloat{ScalarType::Float, CUDA_R_32F, CUBLAS_COMPUTE_32F,
                              "float"};
constexpr GemmCase kGemmHalf{ScalarType::Half, CUDA_R_16F, CUBLAS_COMPUTE_32F,
                             "half"};
constexpr GemmCase kGemmBFloat16{ScalarType::BFloat16, CUDA_R_16BF,
                                 CUBLAS_COMPUTE_32F, "bfloat16"};

// Random [4096, 4096] operands (0, 1, 2: a, b, out), made once per dtype:
// randn draws on the CPU, and Google Benchmark calls a benchmark function
// several times while it sizes the iteration count.
const Tensor& gemmOperand(ScalarType dtype, int which) {
  static auto* cache = new std::map<std::pair<ScalarType, int>, Tensor>();
  Tensor& t = (*cache)[{dtype, which}];
  if (!t.defined()) {
    t = randn({kGemmSize, kGemmSize},
              TensorOptions(dtype).device(cudaDevice()));
  }
  return t;
}

double gflops(double ns) {
  return 2.0 * kGemmSize * kGemmSize * kGemmSize / ns;
}

// The baseline: cublasGemmEx on one handle of its own, on the current
// stream, into a preallocated C. Row-major C = A B is column-major
// C^T = B^T A^T, as linalg.cc computes it.
void cublasGemm(benchmark::State& state, const GemmCase& c) {
  if (!haveDevice(state)) return;
  static cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) h = nullptr;
    return h;  // never destroyed: it may outlive the CUDA context at exit
  }();
  if (handle == nullptr) {
    state.SkipWithError("cublasCreate failed");
    return;
  }
  const Tensor& a = gemmOperand(c.dtype, 0);
  const Tensor& b = gemmOperand(c.dtype, 1);
  const Tensor& out = gemmOperand(c.dtype, 2);
  const int n = static_cast<int>(kGemmSize);
  const float alpha = 1.0f, beta = 0.0f;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  const double ns = gpuNsPerRun(state, [&] {
    cublasSetStream(handle, cuda::currentStreamHandle());
    const cublasStatus_t s =
        cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha,
                     b.data_ptr(), c.data, n, a.data_ptr(), c.data, n, &beta,
                     out.data_ptr(), c.data, n, c.compute, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) status = s;
  });
  if (status != CUBLAS_STATUS_SUCCESS) {
    state.SkipWithError(cublasGetStatusString(status));
    return;
  }
  bench::record(state, "GFLOP_per_s", std::string("cublas_") + c.name,
                gflops(ns));
}

// turnout's mm through the dispatcher (a new output per call); target ratio
// to the cuBLAS call >= 0.97.
void turnoutMm(benchmark::State& state, const GemmCase& c) {
  if (!haveDevice(state)) return;
  const Tensor& a = gemmOperand(c.dtype, 0);
  const Tensor& b = gemmOperand(c.dtype, 1);
  const double ns = gpuNsPerRun(state, [&] {
    Tensor out = mm(a, b);
    benchmark::DoNotOptimize(out);
  });
  bench::record(state, "GFLOP_per_s", std::string("mm_") + c.name, gflops(ns),
                std::string("cublas_") + c.name);
}

void BM_CublasGemmFloat(benchmark::State& state) {
  cublasGemm(state, kGemmFloat);
}
void BM_CudaMmFloat(benchmark::State& state) { turnoutMm(state, kGemmFloat); }
void BM_CublasGemmHalf(benchmark::State& state) {
  cublasGemm(state, kGemmHalf);
}
void BM_CudaMmHalf(benchmark::State& state) { turnoutMm(state, kGemmHalf); }
void BM_CublasGemmBFloat16(benchmark::State& state) {
  cublasGemm(state, kGemmBFloat16);
}
void BM_CudaMmBFloat16(benchmark::State& state) {
  turnoutMm(state, kGemmBFloat16);
}
BENCHMARK(BM_CublasGemmFloat)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CudaMmFloat)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CublasGemmHalf)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CudaMmHalf)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CublasGemmBFloat16)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CudaMmBFloat16)->UseManualTime()->Unit(benchmark::kMillisecond);

// ---- Per-call cost: a bare launch (baseline) and a 1-element add ------------

// Wall-clock ns per call of `body`, with the current stream synchronised
// every kLaunchesPerSync calls (and at the end), so that the queue of
// launches stays short and the time is the host's cost per call (or the
// GPU's, if it were slower).
template <class Body>
double wallNsPerCall(benchmark::State& state, Body body) {
  cudaStream_t stream = cuda::currentStreamHandle();
  for (int i = 0; i < kLaunchesPerSync; ++i) body();
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  int since_sync = 0;
  const double ns = bench::nsPerIteration(state, [&] {
    body();
    if (++since_sync == kLaunchesPerSync) {
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      since_sync = 0;
    }
  });
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return ns;
}

void BM_CudaLaunchEmpty(benchmark::State& state) {
  if (!haveDevice(state)) return;
  cuda::deviceSynchronize();  // the context exists before the timing
  cudaStream_t stream = cuda::currentStreamHandle();
  const double ns =
      wallNsPerCall(state, [&] { bench::launchEmptyKernel(stream); });
  check(cudaGetLastError(), "empty kernel launch");
  bench::record(state, "us_per_call", "launch", ns / 1e3);
}
BENCHMARK(BM_CudaLaunchEmpty)->UseRealTime()->Unit(benchmark::kMicrosecond);

// turnout's elementwise kernel itself, launched as runElementwise would for
// a 1-element float add, without the dispatcher, the Meta checks or the
// output's allocation: the launch cost of the kernel's larger argument
// block. `overhead_us` is its cost over the empty launch.
void BM_CudaLaunchAddKernel(benchmark::State& state) {
  if (!haveDevice(state)) return;
  Tensor a = filled({1}, 1.0), b = filled({1}, 2.0), c = filled({1}, 0.0);
  cuda::ElementwiseArgs args;
  args.op = cuda::ElementwiseOp::Add;
  args.ndim = 1;
  args.num_inputs = 2;
  args.numel = 1;
  args.sizes[0] = 1;
  args.out.data = c.data_ptr();
  args.in[0].data = a.data_ptr();
  args.in[1].data = b.data_ptr();
  for (cuda::Operand* o : {&args.out, &args.in[0], &args.in[1]}) {
    o->dtype = static_cast<int>(ScalarType::Float);
    o->strides[0] = 1;
  }
  args.scalar[0].f = 1.0;
  args.has_scalar[0] = true;
  cudaStream_t stream = cuda::currentStreamHandle();
  const double ns = wallNsPerCall(state, [&] {
    cuda::launchElementwise(args, static_cast<int>(ScalarType::Float), stream);
  });
  check(cudaGetLastError(), "elementwise kernel launch");
  const double launch_us =
      bench::record(state, "us_per_call", "add_kernel", ns / 1e3, "launch");
  if (launch_us > 0) state.counters["overhead_us"] = ns / 1e3 - launch_us;
}
BENCHMARK(BM_CudaLaunchAddKernel)->UseRealTime()->Unit(benchmark::kMicrosecond);

// The parts of a small CUDA add's host side, to explain BM_CudaAddSmall:
// the output's allocation (and its return to the cache), and the Meta
// kernel's checks on meta stand-ins.
void BM_CudaEmptySmall(benchmark::State& state) {
  if (!haveDevice(state)) return;
  const TensorOptions options = TensorOptions(kFloat).device(Device("cuda"));
  const double ns = wallNsPerCall(state, [&] {
    Tensor c = empty({1}, options);
    benchmark::DoNotOptimize(c);
  });
  bench::record(state, "us_per_call", "empty_small", ns / 1e3);
}
BENCHMARK(BM_CudaEmptySmall)->UseRealTime()->Unit(benchmark::kMicrosecond);

// One cudaGetDevice: the runtime query behind "which device is current".
void BM_CudaGetDevice(benchmark::State& state) {
  if (!haveDevice(state)) return;
  int device = 0;
  const double ns = bench::nsPerIteration(
      state, [&] { benchmark::DoNotOptimize(cudaGetDevice(&device)); });
  bench::record(state, "us_per_call", "get_device", ns / 1e3);
}
BENCHMARK(BM_CudaGetDevice)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_MetaAddSmall(benchmark::State& state) {
  if (!haveDevice(state)) return;
  const TensorOptions options = TensorOptions(kFloat).device(Device("meta"));
  Tensor a = empty({1}, options), b = empty({1}, options);
  const double ns = wallNsPerCall(state, [&] {
    Tensor c = add(a, b);
    benchmark::DoNotOptimize(c);
  });
  bench::record(state, "us_per_call", "meta_add_small", ns / 1e3);
}
BENCHMARK(BM_MetaAddSmall)->UseRealTime()->Unit(benchmark::kMicrosecond);

// add of two 1-element CUDA tensors from C++, whole call (dispatch, the
// Meta kernel's checks, the output's allocation, the launch). `overhead_us`
// is what turnout adds to the bare launch.
void BM_CudaAddSmall(benchmark::State& state) {
  if (!haveDevice(state)) return;
  Tensor a = filled({1}, 1.0), b = filled({1}, 2.0);
  const double ns = wallNsPerCall(state, [&] {
    Tensor c = add(a, b);
    benchmark::DoNotOptimize(c);
  });
  const double launch_us =
      bench::record(state, "us_per_call", "add_small", ns / 1e3, "launch");
  if (launch_us > 0) state.counters["overhead_us"] = ns / 1e3 - launch_us;
  // What the dispatcher, the Meta checks and the allocation add to
  // launching the same kernel directly.
  const auto kernel = bench::figures().find("add_kernel");
  if (kernel != bench::figures().end()) {
    state.counters["over_kernel_us"] = ns / 1e3 - kernel->second;
  }
}
BENCHMARK(BM_CudaAddSmall)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace turnout

BENCHMARK_MAIN();
