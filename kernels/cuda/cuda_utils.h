// Host-side helpers of the CUDA kernels: error checks that throw
// turnout::Error, the device count, and a guard that makes a device current.
//
//   checkCuda(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost), "copy_");
//   CUDADeviceGuard guard(Device("cuda:1"));   // current until scope end
//   if (cudaDeviceCount() == 0) ...            // never throws
//
// Thread safety: all functions may be called from any thread; the guard
// changes the calling thread's current device only.
#ifndef TURNOUT_KERNELS_CUDA_CUDA_UTILS_H_
#define TURNOUT_KERNELS_CUDA_CUDA_UTILS_H_

#include <string_view>

#include "dispatcher/core/device.h"

namespace turnout {
namespace cuda {

/// The number of CUDA devices the runtime sees; 0 when there is none or
/// the driver cannot be loaded (never throws).
int cudaDeviceCount();

/// Throws Error(NotImplemented) "<op>: no CUDA device is available
/// (cudaGetDeviceCount: <reason>); ..." unless at least one device is.
void checkDeviceAvailable(std::string_view op);

/// Throws Error for a CUDA runtime error code (an int so that callers need
/// not include CUDA headers): "<op>: CUDA error <name>: <description>".
/// cudaErrorMemoryAllocation becomes an InvalidArgument "out of memory"
/// error, the others Internal.
void checkCuda(int error, std::string_view op);

/// The calling thread's current device index.
int currentDevice();

/// Makes `device`'s index current for the scope (no-op without an index),
/// and restores the previous one.
class CUDADeviceGuard {
 public:
  explicit CUDADeviceGuard(Device device);
  ~CUDADeviceGuard();
  CUDADeviceGuard(const CUDADeviceGuard&) = delete;
  CUDADeviceGuard& operator=(const CUDADeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace cuda
}  // namespace turnout

#endif  // TURNOUT_KERNELS_CUDA_CUDA_UTILS_H_
