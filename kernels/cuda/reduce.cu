// Row reductions, softmax and its backward over contiguous rows of `inner`
// elements (the host permutes the reduced dimensions innermost and makes the
// input contiguous first). Floating dtypes accumulate in double and integral
// ones in int64, as the CPU kernels do. Many rows: one block per row. Few
// long rows (a full reduction is one row): two passes, many blocks per row
// folding into partials in a scratch buffer the caller provides
// (reduceScratchBytes), then one block per row folding those. Rows are
// read with 16-byte loads where their alignment allows.
#include <cuda_runtime.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/cuda/device_types.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/vectorized.cuh"

namespace turnout {
namespace cuda {
namespace {

constexpr int kThreads = 256;

template <class T>
using AccType = std::conditional_t<kIsFloating<T>, double, int64_t>;

// Folds (value, index) pairs. For ArgMax and ArgMin a NaN beats everything
// and the lower index wins a tie; Max and Min propagate NaN.
template <class A>
struct Partial {
  A value;
  int64_t index;
};

template <class A>
__device__ __forceinline__ bool isNan(A v) {
  if constexpr (std::is_floating_point_v<A>) {
    return isnan(v);
  } else {
    return false;
  }
}

template <class A>
__device__ __forceinline__ Partial<A> combine(ReduceOp op, Partial<A> x,
                                              Partial<A> y) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
      return {x.value + y.value, 0};
    case ReduceOp::Max:
      if (isNan(x.value) || isNan(y.value)) return {x.value + y.value, 0};
      return {x.value < y.value ? y.value : x.value, 0};
    case ReduceOp::Min:
      if (isNan(x.value) || isNan(y.value)) return {x.value + y.value, 0};
      return {y.value < x.value ? y.value : x.value, 0};
    case ReduceOp::Prod:
      if constexpr (std::is_integral_v<A>) {  // wraps, as the CPU kernel's
        using U = std::make_unsigned_t<A>;
        return {static_cast<A>(static_cast<U>(x.value) *
                               static_cast<U>(y.value)),
                0};
      } else {
        return {x.value * y.value, 0};
      }
    default: {  // ArgMax, ArgMin; index -1 is "nothing seen"
      if (x.index < 0) return y;
      if (y.index < 0) return x;
      const bool xn = isNan(x.value), yn = isNan(y.value);
      if (xn || yn) {
        if (xn && yn) return x.index < y.index ? x : y;
        return xn ? x : y;
      }
      if (x.value != y.value) {
        if (op == ReduceOp::ArgMin) return x.value < y.value ? x : y;
        return x.value > y.value ? x : y;
      }
      return x.index < y.index ? x : y;
    }
  }
}

template <class A>
__device__ __forceinline__ Partial<A> identity(ReduceOp op) {
  switch (op) {
    case ReduceOp::Max:
      if constexpr (std::is_floating_point_v<A>) {
        return {-INFINITY, 0};
      } else {
        return {static_cast<A>(0x8000000000000000ULL), 0};
      }
    case ReduceOp::Min:
      if constexpr (std::is_floating_point_v<A>) {
        return {INFINITY, 0};
      } else {
        return {static_cast<A>(0x7fffffffffffffffULL), 0};
      }
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      return {A(0), -1};
    case ReduceOp::Prod:
      return {A(1), 0};
    default:
      return {A(0), 0};
  }
}

// The partial of the elements of row `p` (`inner` elements) that thread
// `g` of `num_threads` covers: 16-byte vectors where the row's address
// allows, the unaligned head and the tail one element at a time. An
// element's index is its position in the row (for ArgMax). kOp is a
// template argument so that combine's switch folds away in the loop.
template <ReduceOp kOp, class T>
__device__ __forceinline__ Partial<AccType<T>> foldSlice(const T* p,
                                                          int64_t inner,
                                                          int64_t g,
                                                          int64_t num_threads) {
  using A = AccType<T>;
  constexpr int kVec = kVecSize<T>;
  Partial<A> acc = identity<A>(kOp);
  auto add = [&](T v, int64_t i) {
    acc = combine<A>(kOp, acc, Partial<A>{convertTo<A>(v), i});
  };
  const VectorSplit split =
      splitForVectors(reinterpret_cast<uintptr_t>(p), sizeof(T), inner);
  for (int64_t i = g; i < split.head; i += num_threads) add(p[i], i);
  // Two vectors per step, both loaded before either is folded: twice the
  // bytes in flight per thread, which a read-only kernel needs to reach
  // the memory's bandwidth.
  int64_t v = g;
  for (; v + num_threads < split.num_vecs; v += 2 * num_threads) {
    const int64_t base0 = split.head + v * kVec;
    const int64_t base1 = base0 + num_threads * kVec;
    const Vec<T> x0 = loadVec(p + base0);
    const Vec<T> x1 = loadVec(p + base1);
#pragma unroll
    for (int j = 0; j < kVec; ++j) add(x0.val[j], base0 + j);
#pragma unroll
    for (int j = 0; j < kVec; ++j) add(x1.val[j], base1 + j);
  }
  if (v < split.num_vecs) {
    const int64_t base = split.head + v * kVec;
    const Vec<T> x = loadVec(p + base);
#pragma unroll
    for (int j = 0; j < kVec; ++j) add(x.val[j], base + j);
  }
  for (int64_t i = split.bodyEnd(kVec) + g; i < inner; i += num_threads) {
    add(p[i], i);
  }
  return acc;
}

// Folds one partial per thread across the block; every thread gets the
// result. Precondition: blockDim.x == kThreads, and every thread calls it.
template <class A>
__device__ Partial<A> blockCombine(ReduceOp op, Partial<A> acc) {
  __shared__ A values[kThreads];
  __shared__ int64_t indices[kThreads];
  values[threadIdx.x] = acc.value;
  indices[threadIdx.x] = acc.index;
  __syncthreads();
  for (int width = blockDim.x / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) {
      const Partial<A> other{values[threadIdx.x + width],
                             indices[threadIdx.x + width]};
      const Partial<A> mine{values[threadIdx.x], indices[threadIdx.x]};
      const Partial<A> r = combine<A>(op, mine, other);
      values[threadIdx.x] = r.value;
      indices[threadIdx.x] = r.index;
    }
    __syncthreads();
  }
  return Partial<A>{values[0], indices[0]};
}

// Writes row `row`'s result: the index for ArgMax and ArgMin (0 for an
// empty row), the sum divided by `inner` for Mean, the value in T
// otherwise.
template <class T>
__device__ __forceinline__ void writeResult(ReduceOp op, void* out,
                                            int64_t row,
                                            Partial<AccType<T>> r,
                                            int64_t inner) {
  if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin) {
    static_cast<int64_t*>(out)[row] = r.index < 0 ? 0 : r.index;
  } else if (op == ReduceOp::Mean) {
    static_cast<T*>(out)[row] =
        convertTo<T>(static_cast<double>(r.value) / static_cast<double>(inner));
  } else {
    static_cast<T*>(out)[row] = convertTo<T>(r.value);
  }
}

// One block per row (many rows). kFold is the fold (Sum for Mean too); `op`
// says what to write.
template <ReduceOp kFold, class T>
__global__ void reduceRowsKernel(ReduceOp op, const T* in, void* out,
                                 int64_t inner) {
  const int64_t row = blockIdx.x;
  const auto acc =
      foldSlice<kFold>(in + row * inner, inner, threadIdx.x, blockDim.x);
  const auto r = blockCombine(kFold, acc);
  if (threadIdx.x == 0) writeResult<T>(op, out, row, r, inner);
}

// Two passes (few long rows): gridDim.x blocks per row (blockIdx.y) each
// fold a share of the row into one partial, at values/indices[row *
// gridDim.x + blockIdx.x]; reduceFinishKernel folds each row's partials.
// combine selects by a total order for Max, Min, ArgMax and ArgMin (NaN
// first, then the lower index on ties) and adds for Sum (multiplies for
// Prod), so the grouping changes no result but a sum's or product's
// rounding.
template <ReduceOp kFold, class T>
__global__ void reducePartialsKernel(const T* in, int64_t inner,
                                     AccType<T>* values, int64_t* indices) {
  const int64_t row = blockIdx.y;
  const int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t num_threads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const auto acc = foldSlice<kFold>(in + row * inner, inner, g, num_threads);
  const auto r = blockCombine(kFold, acc);
  if (threadIdx.x == 0) {
    const int64_t slot = row * gridDim.x + blockIdx.x;
    values[slot] = r.value;
    indices[slot] = r.index;
  }
}

template <ReduceOp kFold, class T>
__global__ void reduceFinishKernel(ReduceOp op, const AccType<T>* values,
                                   const int64_t* indices, int64_t slices,
                                   void* out, int64_t inner) {
  using A = AccType<T>;
  const int64_t row = blockIdx.x;
  Partial<A> acc = identity<A>(kFold);
  for (int64_t j = threadIdx.x; j < slices; j += blockDim.x) {
    acc = combine<A>(kFold, acc,
                     Partial<A>{values[row * slices + j],
                                indices[row * slices + j]});
  }
  const auto r = blockCombine(kFold, acc);
  if (threadIdx.x == 0) writeResult<T>(op, out, row, r, inner);
}

// Block-wide fold of one double per thread (all threads take part).
template <bool kMax>
__device__ double blockFold(double v, double* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int width = blockDim.x / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) {
      const double a = scratch[threadIdx.x];
      const double b = scratch[threadIdx.x + width];
      if constexpr (kMax) {
        scratch[threadIdx.x] = (isnan(a) || isnan(b)) ? a + b : (a < b ? b : a);
      } else {
        scratch[threadIdx.x] = a + b;
      }
    }
    __syncthreads();
  }
  const double result = scratch[0];
  __syncthreads();  // scratch is reused by the next fold
  return result;
}

template <class T>
__global__ void softmaxRowsKernel(const T* in, T* out, int64_t inner,
                                  bool log) {
  __shared__ double scratch[kThreads];
  const T* x = in + static_cast<int64_t>(blockIdx.x) * inner;
  T* y = out + static_cast<int64_t>(blockIdx.x) * inner;
  double max = -INFINITY;
  for (int64_t i = threadIdx.x; i < inner; i += blockDim.x) {
    const double v = convertTo<double>(x[i]);
    max = (isnan(max) || isnan(v)) ? max + v : (max < v ? v : max);
  }
  max = blockFold<true>(max, scratch);
  double sum = 0;
  for (int64_t i = threadIdx.x; i < inner; i += blockDim.x) {
    sum += exp(convertTo<double>(x[i]) - max);
  }
  sum = blockFold<false>(sum, scratch);
  const double log_sum = ::log(sum);
  for (int64_t i = threadIdx.x; i < inner; i += blockDim.x) {
    const double shifted = convertTo<double>(x[i]) - max;
    y[i] = convertTo<T>(log ? shifted - log_sum : exp(shifted) / sum);
  }
}

// One row of softmax's (log: log_softmax's) backward: the sum over the row
// (g * y, or g for log), then every element from it. Reads g and y as T,
// writes U (the input's dtype), computes in double as the CPU kernel does.
template <class T, class U>
__global__ void softmaxBackwardRowsKernel(const T* grad, const T* output,
                                          U* grad_input, int64_t inner,
                                          bool log) {
  __shared__ double scratch[kThreads];
  const int64_t offset = static_cast<int64_t>(blockIdx.x) * inner;
  const T* g = grad + offset;
  const T* y = output + offset;
  U* gi = grad_input + offset;
  double sum = 0;
  for (int64_t i = threadIdx.x; i < inner; i += blockDim.x) {
    const double gv = convertTo<double>(g[i]);
    sum += log ? gv : gv * convertTo<double>(y[i]);
  }
  sum = blockFold<false>(sum, scratch);  // every thread reaches it
  for (int64_t i = threadIdx.x; i < inner; i += blockDim.x) {
    const double gv = convertTo<double>(g[i]);
    const double yv = convertTo<double>(y[i]);
    gi[i] = convertTo<U>(log ? gv - exp(yv) * sum : yv * (gv - sum));
  }
}

}  // namespace

int launchSoftmaxBackward(const void* grad, const void* output,
                          void* grad_input, int dtype, int grad_input_dtype,
                          int64_t outer, int64_t inner, bool log,
                          cudaStream_t stream) {
  if (outer == 0 || inner == 0) return cudaSuccess;
  if (outer > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  bool launched = false;
  visitHostDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    visitHostDtype(grad_input_dtype, [&](auto out_tag) {
      using U = decltype(out_tag);
      if constexpr (kIsFloating<T> && kIsFloating<U>) {
        softmaxBackwardRowsKernel<T, U>
            <<<static_cast<unsigned>(outer), kThreads, 0, stream>>>(
                static_cast<const T*>(grad), static_cast<const T*>(output),
                static_cast<U*>(grad_input), inner, log);
        launched = true;
      }
    });
  });
  if (!launched) return cudaErrorInvalidValue;
  return cudaGetLastError();
}

int launchSoftmax(const void* in, void* out, int dtype, int64_t outer,
                  int64_t inner, bool log, cudaStream_t stream) {
  if (outer == 0 || inner == 0) return cudaSuccess;
  if (outer > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  bool launched = false;
  visitHostDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloating<T>) {
      softmaxRowsKernel<T><<<static_cast<unsigned>(outer), kThreads, 0, stream>>>(
          static_cast<const T*>(in), static_cast<T*>(out), inner, log);
      launched = true;
    }
  });
  if (!launched) return cudaErrorInvalidValue;
  return cudaGetLastError();
}

namespace {

// Blocks per SM the two-pass reduction aims for: 8 x 256 threads fill an
// SM on sm_80 and sm_90 (each block takes 4 KiB of shared memory).
constexpr int64_t kReduceBlocksPerSm = 8;
// A block of a split row folds at least this many elements per thread, so
// that the second pass and its launch stay small against the first.
constexpr int64_t kMinElementsPerThread = 64;

// How many blocks share each row: 1 (one pass, one block per row) when the
// rows alone fill the device or are short; else enough to fill it, each
// block folding at least kThreads * kMinElementsPerThread elements.
int64_t slicesPerRow(int64_t outer, int64_t inner) {
  int64_t slices = inner / (kThreads * kMinElementsPerThread);
  if (slices < 2 || outer > 65535) return 1;  // 65535: the most gridDim.y
  const int64_t room = multiProcessorCount() * kReduceBlocksPerSm / outer;
  if (slices > room) slices = room;
  return slices < 2 ? 1 : slices;
}

// Calls f(std::integral_constant<ReduceOp, fold>) with the fold of `op`
// (Mean folds as Sum).
template <class F>
void visitFold(ReduceOp op, F&& f) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
      f(std::integral_constant<ReduceOp, ReduceOp::Sum>{});
      break;
    case ReduceOp::Max:
      f(std::integral_constant<ReduceOp, ReduceOp::Max>{});
      break;
    case ReduceOp::Min:
      f(std::integral_constant<ReduceOp, ReduceOp::Min>{});
      break;
    case ReduceOp::ArgMax:
      f(std::integral_constant<ReduceOp, ReduceOp::ArgMax>{});
      break;
    case ReduceOp::Prod:
      f(std::integral_constant<ReduceOp, ReduceOp::Prod>{});
      break;
    case ReduceOp::ArgMin:
      f(std::integral_constant<ReduceOp, ReduceOp::ArgMin>{});
      break;
  }
}

// Bytes of one partial (value and index) of dtype's accumulation type.
int64_t partialBytes(int dtype) {
  int64_t bytes = 0;
  visitHostDtype(dtype, [&](auto tag) {
    bytes = sizeof(AccType<decltype(tag)>) + sizeof(int64_t);
  });
  return bytes;
}

}  // namespace

int64_t reduceScratchBytes(int dtype, int64_t outer, int64_t inner) {
  if (outer == 0) return 0;
  const int64_t slices = slicesPerRow(outer, inner);
  return slices == 1 ? 0 : outer * slices * partialBytes(dtype);
}

int launchReduce(ReduceOp op, const void* in, void* out, int dtype,
                 int64_t outer, int64_t inner, void* scratch,
                 cudaStream_t stream) {
  if (outer == 0) return cudaSuccess;
  if (outer > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  const int64_t slices = slicesPerRow(outer, inner);
  if (slices > 1 && scratch == nullptr) return cudaErrorInvalidValue;
  bool launched = false;
  visitHostDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = AccType<T>;
    const T* rows = static_cast<const T*>(in);
    visitFold(op, [&](auto fold) {
      constexpr ReduceOp kFold = decltype(fold)::value;
      if (slices == 1) {
        reduceRowsKernel<kFold, T>
            <<<static_cast<unsigned>(outer), kThreads, 0, stream>>>(op, rows,
                                                                    out, inner);
      } else {
        // The values first (8-byte aligned: the scratch is), then the
        // indices.
        A* values = static_cast<A*>(scratch);
        int64_t* indices = reinterpret_cast<int64_t*>(values + outer * slices);
        const dim3 grid(static_cast<unsigned>(slices),
                        static_cast<unsigned>(outer));
        reducePartialsKernel<kFold, T>
            <<<grid, kThreads, 0, stream>>>(rows, inner, values, indices);
        reduceFinishKernel<kFold, T>
            <<<static_cast<unsigned>(outer), kThreads, 0, stream>>>(
                op, values, indices, slices, out, inner);
      }
      launched = true;
    });
  });
  if (!launched) return cudaErrorInvalidValue;
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace turnout
