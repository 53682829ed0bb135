// The elementwise kernel: one thread per output element, over any strides
// and broadcasts, converting each input to the compute dtype and the result
// to the output's dtype (see launch.h). The operation is a run-time switch
// (uniform across a launch, so it costs no divergence), which keeps the
// number of instantiations at one per compute dtype.
#include <cuda_runtime.h>

#include <cmath>

#include "kernels/cuda/device_types.cuh"
#include "kernels/cuda/launch.h"

namespace turnout {
namespace cuda {
namespace {

// Integer arithmetic that wraps as PyTorch's does (no signed overflow).
template <class M>
__device__ __forceinline__ M wrapAdd(M a, M b) {
  if constexpr (std::is_same_v<M, bool>) {
    return a || b;
  } else if constexpr (std::is_integral_v<M>) {
    using U = std::make_unsigned_t<std::conditional_t<(sizeof(M) < 4), int, M>>;
    return static_cast<M>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <class M>
__device__ __forceinline__ M wrapSub(M a, M b) {
  if constexpr (std::is_same_v<M, bool>) {
    return a != b;  // never reached: sub of Bool is rejected on the host
  } else if constexpr (std::is_integral_v<M>) {
    using U = std::make_unsigned_t<std::conditional_t<(sizeof(M) < 4), int, M>>;
    return static_cast<M>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <class M>
__device__ __forceinline__ M wrapMul(M a, M b) {
  if constexpr (std::is_same_v<M, bool>) {
    return a && b;
  } else if constexpr (std::is_integral_v<M>) {
    using U = std::make_unsigned_t<std::conditional_t<(sizeof(M) < 4), int, M>>;
    return static_cast<M>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}
template <class M>
__device__ __forceinline__ M wrapNeg(M a) {
  if constexpr (std::is_same_v<M, bool>) {
    return a;  // never reached: neg of Bool is rejected on the host
  } else if constexpr (std::is_integral_v<M>) {
    return wrapSub<M>(M(0), a);
  } else {
    return -a;
  }
}

template <class M>
__device__ __forceinline__ M integerPow(M base, int64_t e) {
  if constexpr (std::is_same_v<M, bool>) {
    return e == 0 ? true : base;
  } else {
    M result = 1;
    while (e > 0) {
      if (e & 1) result = wrapMul<M>(result, base);
      base = wrapMul<M>(base, base);
      e >>= 1;
    }
    return result;
  }
}

template <class M>
__device__ __forceinline__ M maxNan(M a, M b) {
  if constexpr (std::is_floating_point_v<M>) {
    if (isnan(a) || isnan(b)) return a + b;
  }
  return a < b ? b : a;
}
template <class M>
__device__ __forceinline__ M minNan(M a, M b) {
  if constexpr (std::is_floating_point_v<M>) {
    if (isnan(a) || isnan(b)) return a + b;
  }
  return b < a ? b : a;
}

template <class M>
__device__ __forceinline__ M scalarAs(const ScalarArg& s) {
  if constexpr (std::is_floating_point_v<M>) {
    return static_cast<M>(s.f);
  } else {
    return static_cast<M>(s.i);
  }
}

// The floating functions on a non-floating M are never reached (the host
// computes them in a floating dtype); they compile through double.
template <class M>
__device__ __forceinline__ M floatingFn(ElementwiseOp op, M x) {
  using F = std::conditional_t<std::is_floating_point_v<M>, M, double>;
  const F v = static_cast<F>(x);
  switch (op) {
    case ElementwiseOp::Exp: return static_cast<M>(exp(v));
    case ElementwiseOp::Log: return static_cast<M>(log(v));
    case ElementwiseOp::Sqrt: return static_cast<M>(sqrt(v));
    case ElementwiseOp::Tanh: return static_cast<M>(tanh(v));
    default: return static_cast<M>(F(1) / (F(1) + exp(-v)));  // Sigmoid
  }
}

template <class T>
__global__ void elementwiseKernel(ElementwiseArgs a) {
  using M = MathType<T>;
  const int64_t index =
      static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= a.numel) return;

  // Element offsets of every operand, from the row-major index.
  int64_t out_offset = 0;
  int64_t in_offset[kMaxInputs] = {0, 0, 0};
  int64_t rest = index;
  for (int d = a.ndim - 1; d >= 0; --d) {
    const int64_t i = rest % a.sizes[d];
    rest /= a.sizes[d];
    out_offset += i * a.out.strides[d];
    for (int k = 0; k < a.num_inputs; ++k) in_offset[k] += i * a.in[k].strides[d];
  }
  auto input = [&](int k) -> M {
    if (k == a.scalar_input) return scalarAs<M>(a.scalar[1]);
    const char* p = static_cast<const char*>(a.in[k].data) +
                    in_offset[k] * dtypeSize(a.in[k].dtype);
    return static_cast<M>(loadAs<T>(p, a.in[k].dtype));
  };
  void* out = static_cast<char*>(a.out.data) + out_offset * dtypeSize(a.out.dtype);
  auto store = [&](M v) { storeAs<T>(out, a.out.dtype, convertTo<T>(v)); };
  auto storeBool = [&](bool v) { storeAs<bool>(out, a.out.dtype, v); };

  switch (a.op) {
    case ElementwiseOp::Copy: store(input(0)); break;
    case ElementwiseOp::Fill: store(scalarAs<M>(a.scalar[0])); break;
    case ElementwiseOp::Add:
      store(wrapAdd<M>(input(0), wrapMul<M>(scalarAs<M>(a.scalar[0]), input(1))));
      break;
    case ElementwiseOp::Sub:
      store(wrapSub<M>(input(0), wrapMul<M>(scalarAs<M>(a.scalar[0]), input(1))));
      break;
    case ElementwiseOp::Mul: store(wrapMul<M>(input(0), input(1))); break;
    case ElementwiseOp::Div:
      if constexpr (std::is_floating_point_v<M>) store(input(0) / input(1));
      break;
    case ElementwiseOp::Eq: storeBool(input(0) == input(1)); break;
    case ElementwiseOp::Ne: storeBool(input(0) != input(1)); break;
    case ElementwiseOp::Lt: storeBool(input(0) < input(1)); break;
    case ElementwiseOp::Le: storeBool(input(0) <= input(1)); break;
    case ElementwiseOp::Gt: storeBool(input(0) > input(1)); break;
    case ElementwiseOp::Ge: storeBool(input(0) >= input(1)); break;
    case ElementwiseOp::Neg: store(wrapNeg<M>(input(0))); break;
    case ElementwiseOp::Abs: {
      const M x = input(0);
      if constexpr (std::is_floating_point_v<M>) {
        store(fabs(x));
      } else if constexpr (std::is_signed_v<M>) {
        store(x < 0 ? wrapNeg<M>(x) : x);
      } else {
        store(x);
      }
      break;
    }
    case ElementwiseOp::Exp:
    case ElementwiseOp::Log:
    case ElementwiseOp::Sqrt:
    case ElementwiseOp::Tanh:
    case ElementwiseOp::Sigmoid:
      store(floatingFn<M>(a.op, input(0)));
      break;
    case ElementwiseOp::Relu: {
      const M x = input(0);
      if constexpr (std::is_signed_v<M> || std::is_floating_point_v<M>) {
        store(x < M(0) ? M(0) : x);  // NaN stays NaN
      } else {
        store(x);
      }
      break;
    }
    case ElementwiseOp::Pow: {
      const M x = input(0);
      if constexpr (std::is_floating_point_v<M>) {
        const M e = scalarAs<M>(a.scalar[0]);
        if (e == M(2)) {
          store(x * x);
        } else if (e == M(0.5)) {
          store(sqrt(x));
        } else if (e == M(1)) {
          store(x);
        } else {
          store(pow(x, e));
        }
      } else {
        store(integerPow<M>(x, a.scalar[0].i));
      }
      break;
    }
    case ElementwiseOp::Clamp: {
      M x = input(0);
      if (a.has_scalar[0]) x = maxNan<M>(x, scalarAs<M>(a.scalar[0]));
      if (a.has_scalar[1]) x = minNan<M>(x, scalarAs<M>(a.scalar[1]));
      store(x);
      break;
    }
    case ElementwiseOp::Where: {
      const char* c = static_cast<const char*>(a.in[0].data) +
                      in_offset[0] * dtypeSize(a.in[0].dtype);
      store(loadAs<bool>(c, a.in[0].dtype) ? input(1) : input(2));
      break;
    }
  }
}

}  // namespace

int launchElementwise(const ElementwiseArgs& args, int compute_dtype,
                      cudaStream_t stream) {
  if (args.numel == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const int64_t blocks = (args.numel + kThreads - 1) / kThreads;
  if (blocks > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  bool launched = false;
  visitHostDtype(compute_dtype, [&](auto tag) {
    using T = decltype(tag);
    elementwiseKernel<T>
        <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(args);
    launched = true;
  });
  if (!launched) return cudaErrorInvalidValue;
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace turnout
