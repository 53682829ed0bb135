// Row reductions, softmax and its backward: one block per output row
// reduces one contiguous row of `inner` elements (the host permutes the
// reduced dimensions innermost and makes the input contiguous first).
// Floating dtypes accumulate in double and integral ones in int64, as the
// CPU kernels do.
#include <cuda_runtime.h>

#include <cmath>
#include <limits>

#include "kernels/cuda/device_types.cuh"
#include "kernels/cuda/launch.h"

namespace turnout {
namespace cuda {
namespace {

constexpr int kThreads = 256;

template <class T>
using AccType = std::conditional_t<kIsFloating<T>, double, int64_t>;

// Folds (value, index) pairs. For ArgMax a NaN beats everything and the
// lower index wins a tie; Max and Min propagate NaN.
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
    default: {  // ArgMax; index -1 is "nothing seen"
      if (x.index < 0) return y;
      if (y.index < 0) return x;
      const bool xn = isNan(x.value), yn = isNan(y.value);
      if (xn || yn) {
        if (xn && yn) return x.index < y.index ? x : y;
        return xn ? x : y;
      }
      if (x.value != y.value) return x.value > y.value ? x : y;
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
      return {A(0), -1};
    default:
      return {A(0), 0};
  }
}

template <class T>
__global__ void reduceRowsKernel(ReduceOp op, const T* in, void* out,
                                 int64_t inner) {
  using A = AccType<T>;
  __shared__ A values[kThreads];
  __shared__ int64_t indices[kThreads];
  const int64_t row = blockIdx.x;
  const T* p = in + row * inner;
  Partial<A> acc = identity<A>(op);
  for (int64_t i = threadIdx.x; i < inner; i += blockDim.x) {
    acc = combine<A>(op, acc, Partial<A>{convertTo<A>(p[i]), i});
  }
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
  if (threadIdx.x != 0) return;
  if (op == ReduceOp::ArgMax) {
    static_cast<int64_t*>(out)[row] = indices[0] < 0 ? 0 : indices[0];
  } else if (op == ReduceOp::Mean) {
    static_cast<T*>(out)[row] =
        convertTo<T>(static_cast<double>(values[0]) / static_cast<double>(inner));
  } else {
    static_cast<T*>(out)[row] = convertTo<T>(values[0]);
  }
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

int launchReduce(ReduceOp op, const void* in, void* out, int dtype,
                 int64_t outer, int64_t inner, cudaStream_t stream) {
  if (outer == 0) return cudaSuccess;
  if (outer > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  bool launched = false;
  visitHostDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    reduceRowsKernel<T><<<static_cast<unsigned>(outer), kThreads, 0, stream>>>(
        op, static_cast<const T*>(in), out, inner);
    launched = true;
  });
  if (!launched) return cudaErrorInvalidValue;
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace turnout
