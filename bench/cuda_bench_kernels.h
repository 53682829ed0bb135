// What cuda_bench needs compiled by nvcc: an empty kernel, the floor under
// every launch. Plain C++ interface, as kernels/cuda/launch.h: no CUDA
// header here.
//
//   launchEmptyKernel(stream);   // one <<<1, 1>>> launch, nothing checked
#ifndef TURNOUT_BENCH_CUDA_BENCH_KERNELS_H_
#define TURNOUT_BENCH_CUDA_BENCH_KERNELS_H_

// cudaStream_t, declared without a CUDA header (see launch.h).
struct CUstream_st;

namespace turnout {
namespace bench {

/// Queues one launch of a kernel that does nothing (one block of one
/// thread) on `stream`. Errors are left for cudaGetLastError, so that the
/// call is the bare launch.
void launchEmptyKernel(CUstream_st* stream);

}  // namespace bench
}  // namespace turnout

#endif  // TURNOUT_BENCH_CUDA_BENCH_KERNELS_H_
