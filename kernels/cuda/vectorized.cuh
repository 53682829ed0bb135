// What the memory-bound kernels (elementwise.cu's flat path, reduce.cu)
// share: 16-byte vectors of elements, the split of a flat range into an
// unaligned head, a vectorized body and a tail, and the device's SM count
// that sizes their grid-stride loops.
//
//   const VectorSplit s =
//       splitForVectors(reinterpret_cast<uintptr_t>(p), sizeof(float), n);
//   for (int64_t v = tid; v < s.num_vecs; v += nthreads)
//     Vec<float> x = loadVec(p + s.head + v * kVecSize<float>);
//   // elements [0, s.head) and [s.bodyEnd(kVecSize<float>), n) one by one
//
//   const int sms = multiProcessorCount();                  // on the host
//
// Thread safety: multiProcessorCount may be called from any thread.
#ifndef TURNOUT_KERNELS_CUDA_VECTORIZED_CUH_
#define TURNOUT_KERNELS_CUDA_VECTORIZED_CUH_

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

namespace turnout {
namespace cuda {

/// Bytes per vector access: one 128-bit load or store per thread.
constexpr int kVecBytes = 16;

/// Elements of T per vector (16 for 1-byte types ... 2 for 8-byte ones).
template <class T>
constexpr int kVecSize = kVecBytes / static_cast<int>(sizeof(T));

/// kVecSize<T> elements of T, aligned so that a copy is one 128-bit access.
/// Precondition of loadVec / storeVec: the address is 16-byte aligned.
template <class T>
struct alignas(kVecBytes) Vec {
  T val[kVecSize<T>];
};

template <class T>
__device__ __forceinline__ Vec<T> loadVec(const T* p) {
  return *reinterpret_cast<const Vec<T>*>(p);
}

template <class T>
__device__ __forceinline__ void storeVec(T* p, const Vec<T>& v) {
  *reinterpret_cast<Vec<T>*>(p) = v;
}

/// How n elements starting at `p` split for 16-byte accesses: `head`
/// elements one at a time until p + head is 16-byte aligned, `num_vecs`
/// vectors, then the tail (fewer than kVecSize<T>) one at a time.
struct VectorSplit {
  int64_t head;
  int64_t num_vecs;
  __host__ __device__ int64_t bodyEnd(int vec_size) const {
    return head + num_vecs * vec_size;
  }
};

/// The split of n elements at `address` (of elements of `elem_size` bytes).
/// An address that is not a multiple of elem_size (never for a tensor's
/// data) gets no vectors.
__host__ __device__ __forceinline__ VectorSplit
splitForVectors(uintptr_t address, int elem_size, int64_t n) {
  if (address % static_cast<uintptr_t>(elem_size) != 0) return {n, 0};
  const int64_t misaligned = static_cast<int64_t>(address % kVecBytes);
  int64_t head = ((kVecBytes - misaligned) % kVecBytes) / elem_size;
  if (head > n) head = n;
  return {head, (n - head) / (kVecBytes / elem_size)};
}

/// The number of SMs of the calling thread's current device, read once per
/// device (cudaDeviceGetAttribute: a cheaper query than
/// cudaGetDeviceProperties, which fills the whole struct). 1 when the device
/// cannot be queried (the launch that follows reports the error).
inline int multiProcessorCount() {
  constexpr int kMaxCachedDevices = 64;
  // 0: not read yet. Relaxed: every thread that reads the count stores the
  // same value, so a racing reader at worst queries it again.
  static std::atomic<int> counts[kMaxCachedDevices];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 1;
  if (device >= 0 && device < kMaxCachedDevices) {
    const int cached = counts[device].load(std::memory_order_relaxed);
    if (cached > 0) return cached;
  }
  int count = 0;
  if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) !=
          cudaSuccess ||
      count <= 0) {
    return 1;
  }
  if (device >= 0 && device < kMaxCachedDevices) {
    counts[device].store(count, std::memory_order_relaxed);
  }
  return count;
}

}  // namespace cuda
}  // namespace turnout

#endif  // TURNOUT_KERNELS_CUDA_VECTORIZED_CUH_
