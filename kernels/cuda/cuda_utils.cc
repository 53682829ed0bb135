#include "kernels/cuda/cuda_utils.h"

#include <cuda_runtime_api.h>

#include <atomic>

#include "dispatcher/core/error.h"

namespace turnout {
namespace cuda {

namespace {
// The device count once a query found devices: it cannot change while the
// process runs (CUDA_VISIBLE_DEVICES is read once), and every allocation
// asks. Zero until then, so a failed query is retried.
std::atomic<int> g_device_count{0};
}  // namespace

int cudaDeviceCount() {
  const int cached = g_device_count.load(std::memory_order_relaxed);
  if (cached > 0) return cached;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error for later calls
    return 0;
  }
  g_device_count.store(count, std::memory_order_relaxed);
  return count;
}

void checkDeviceAvailable(std::string_view op) {
  if (g_device_count.load(std::memory_order_relaxed) > 0) return;
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) cudaGetLastError();
  TURNOUT_CHECK(error == cudaSuccess && count > 0, ErrorKind::NotImplemented,
                op, ": no CUDA device is available (cudaGetDeviceCount: ",
                error == cudaSuccess ? "0 devices" : cudaGetErrorString(error),
                "); turnout's CUDA kernels are linked, but CUDA tensors need "
                "a GPU and its driver. Create the tensor on the CPU instead.");
  g_device_count.store(count, std::memory_order_relaxed);
}

void checkCuda(int error, std::string_view op) {
  if (error == cudaSuccess) return;
  const auto e = static_cast<cudaError_t>(error);
  cudaGetLastError();  // clear non-sticky errors
  TURNOUT_CHECK(e != cudaErrorMemoryAllocation, ErrorKind::InvalidArgument, op,
                ": CUDA out of memory (", cudaGetErrorString(e),
                "); free tensors or call turnout::cuda::emptyCache()");
  TURNOUT_CHECK(e != cudaErrorNoDevice && e != cudaErrorInsufficientDriver,
                ErrorKind::NotImplemented, op, ": CUDA error ",
                cudaGetErrorName(e), ": ", cudaGetErrorString(e),
                "; CUDA tensors need a GPU and its driver");
  TURNOUT_CHECK(false, ErrorKind::Internal, op, ": CUDA error ",
                cudaGetErrorName(e), ": ", cudaGetErrorString(e));
}

int currentDevice() {
  int device = 0;
  checkCuda(cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

CUDADeviceGuard::CUDADeviceGuard(Device device) {
  if (!device.has_index()) return;
  const int current = currentDevice();
  if (current == device.index()) return;
  checkCuda(cudaSetDevice(device.index()), "cudaSetDevice");
  previous_ = current;
}

CUDADeviceGuard::~CUDADeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

}  // namespace cuda
}  // namespace turnout
