// The kernels cuda_bench launches directly (see cuda_bench_kernels.h).
#include <cuda_runtime.h>

#include "bench/cuda_bench_kernels.h"

namespace turnout {
namespace bench {
namespace {

__global__ void emptyKernel() {}

}  // namespace

void launchEmptyKernel(cudaStream_t stream) {
  emptyKernel<<<1, 1, 0, stream>>>();
}

}  // namespace bench
}  // namespace turnout
