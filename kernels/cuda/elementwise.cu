// The elementwise kernels: a general one, one thread per output element,
// over any strides and broadcasts, converting each input to the compute
// dtype and the result to the output's dtype (see launch.h); and a flat one
// for the common case of contiguous operands all of the compute dtype,
// which moves 16 bytes per access in a grid-stride loop sized to the
// device. Both compute through one applyOp. The operation is a run-time
// switch (uniform across a launch, so it costs no divergence), which keeps
// the number of instantiations at two per compute dtype.
#include <cuda_runtime.h>
#include <math_constants.h>

#include <cmath>

#include "kernels/cuda/device_types.cuh"
#include "kernels/digamma.h"
#include "kernels/int_pow.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/vectorized.cuh"

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
    case ElementwiseOp::Sin: return static_cast<M>(sin(v));
    case ElementwiseOp::Cos: return static_cast<M>(cos(v));
    case ElementwiseOp::Tan: return static_cast<M>(tan(v));
    case ElementwiseOp::Asin: return static_cast<M>(asin(v));
    case ElementwiseOp::Acos: return static_cast<M>(acos(v));
    case ElementwiseOp::Atan: return static_cast<M>(atan(v));
    case ElementwiseOp::Sinh: return static_cast<M>(sinh(v));
    case ElementwiseOp::Cosh: return static_cast<M>(cosh(v));
    case ElementwiseOp::Expm1: return static_cast<M>(expm1(v));
    case ElementwiseOp::Log2: return static_cast<M>(log2(v));
    case ElementwiseOp::Log10: return static_cast<M>(log10(v));
    case ElementwiseOp::Log1p: return static_cast<M>(log1p(v));
    // As the CPU kernels: 1 / sqrt(x), 1 / x (not rsqrt's approximation).
    case ElementwiseOp::Rsqrt: return static_cast<M>(F(1) / sqrt(v));
    case ElementwiseOp::Reciprocal: return static_cast<M>(F(1) / v);
    case ElementwiseOp::Erf: return static_cast<M>(erf(v));
    case ElementwiseOp::Acosh: return static_cast<M>(acosh(v));
    case ElementwiseOp::Asinh: return static_cast<M>(asinh(v));
    case ElementwiseOp::Atanh: return static_cast<M>(atanh(v));
    case ElementwiseOp::Erfc: return static_cast<M>(erfc(v));
    case ElementwiseOp::Lgamma: return static_cast<M>(lgamma(v));
    case ElementwiseOp::Digamma:
      return static_cast<M>(digamma_internal::digamma(static_cast<double>(v)));
    // angle of a real number: NaN stays, pi below 0, else 0.
    case ElementwiseOp::Angle:
      return isnan(v) ? x : static_cast<M>(v < F(0) ? F(CUDART_PI) : F(0));
    default: return static_cast<M>(F(1) / (F(1) + exp(-v)));  // Sigmoid
  }
}

// polygamma(n, x) as the CPU kernel (kernels/digamma.h): digamma and
// the n >= 2 functions in double, trigamma in the compute type.
template <class M>
__device__ __forceinline__ M polygammaFn(int64_t n, M x) {
  if constexpr (std::is_floating_point_v<M>) {
    if (n == 0) {
      return static_cast<M>(digamma_internal::digamma(static_cast<double>(x)));
    }
    if (n == 1) return digamma_internal::trigamma<M>(x);
    return static_cast<M>(
        digamma_internal::polygammaHigh<M>(n, static_cast<double>(x)));
  } else {
    return x;  // not reached: the host computes integers in float
  }
}

// sign, floor, ceil, round (half to even), trunc, round.decimals in the
// input's dtype: integers are whole already, and sign is 0 for NaN and for
// signed zeros.
template <class M>
__device__ __forceinline__ M roundingFn(const ElementwiseArgs& a, M x) {
  if constexpr (std::is_floating_point_v<M>) {
    switch (a.op) {
      case ElementwiseOp::Floor: return floor(x);
      case ElementwiseOp::Ceil: return ceil(x);
      case ElementwiseOp::Round: return rint(x);
      case ElementwiseOp::Trunc: return trunc(x);
      case ElementwiseOp::RoundDecimals: {
        const M ten_pow = static_cast<M>(a.scalar[0].f);
        return a.scalar[0].i != 0 ? rint(x / ten_pow) * ten_pow
                                  : rint(x * ten_pow) / ten_pow;
      }
      default:  // Sign
        return static_cast<M>(int(M(0) < x) - int(x < M(0)));
    }
  } else if constexpr (std::is_same_v<M, bool>) {
    return x;  // sign of Bool; the others are refused on the host
  } else if constexpr (std::is_unsigned_v<M>) {
    return a.op == ElementwiseOp::Sign ? (x > 0 ? M(1) : M(0)) : x;
  } else {
    return a.op == ElementwiseOp::Sign
               ? static_cast<M>(int(M(0) < x) - int(x < M(0)))
               : x;
  }
}

// maximum, minimum, fmod, remainder, floor_divide, bitwise_xor on compute
// values. Device code cannot raise the CPU kernels' ZeroDivisionError for
// an integer divisor of 0: fmod, remainder and floor_divide give 0 there.
template <class M>
__device__ __forceinline__ M binaryFn(ElementwiseOp op, M a, M b) {
  switch (op) {
    case ElementwiseOp::Maximum:
    case ElementwiseOp::Minimum:
      if constexpr (std::is_floating_point_v<M>) {
        if (isnan(a)) return a;
        if (isnan(b)) return b;
      }
      if (op == ElementwiseOp::Maximum) return a < b ? b : a;
      return b < a ? b : a;
    case ElementwiseOp::Fmod:
      if constexpr (std::is_floating_point_v<M>) {
        return fmod(a, b);
      } else if constexpr (std::is_same_v<M, bool>) {
        return a;  // refused on the host
      } else {
        if (b == 0) return M(0);
        if constexpr (std::is_signed_v<M>) {
          if (b == M(-1)) return M(0);  // INT_MIN % -1 overflows
        }
        return static_cast<M>(a % b);
      }
    case ElementwiseOp::PowTensor:
      if constexpr (std::is_floating_point_v<M>) {
        return pow(a, b);
      } else if constexpr (std::is_same_v<M, bool>) {
        return a;  // refused on the host
      } else {
        return int_pow_internal::intPow(a, b);  // the CPU kernel's rules
      }
    case ElementwiseOp::Remainder:
      if constexpr (std::is_floating_point_v<M>) {
        // The CPU kernel's formula: fmod moved by one divisor when the
        // signs differ, so that the result takes the divisor's sign.
        M mod = fmod(a, b);
        if (mod != M(0) && ((b < M(0)) != (mod < M(0)))) mod += b;
        return mod;
      } else if constexpr (std::is_same_v<M, bool>) {
        return a;  // refused on the host
      } else {
        if (b == 0) return M(0);
        if constexpr (std::is_signed_v<M>) {
          if (b == M(-1)) return M(0);  // INT_MIN % -1 overflows
          M r = static_cast<M>(a % b);
          if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<M>(r + b);
          return r;
        } else {
          return static_cast<M>(a % b);
        }
      }
    case ElementwiseOp::FloorDivide:
      if constexpr (std::is_floating_point_v<M>) {
        // The CPU kernel's formula, so that both round alike.
        if (b == M(0)) return a / b;
        const M mod = fmod(a, b);
        M div = (a - mod) / b;
        if (mod != M(0) && ((b < M(0)) != (mod < M(0)))) div -= M(1);
        if (div != M(0)) {
          M floordiv = floor(div);
          if (div - floordiv > M(0.5)) floordiv += M(1);
          return floordiv;
        }
        return copysign(M(0), a / b);
      } else if constexpr (std::is_same_v<M, bool>) {
        return a;  // refused on the host
      } else {
        if (b == 0) return M(0);
        if constexpr (std::is_signed_v<M>) {
          if (b == M(-1)) return wrapNeg<M>(a);
          M q = static_cast<M>(a / b);
          const M r = static_cast<M>(a % b);
          if (r != 0 && ((r < 0) != (b < 0))) --q;
          return q;
        } else {
          return static_cast<M>(a / b);
        }
      }
    default:  // BitwiseXor
      if constexpr (std::is_same_v<M, bool>) {
        return a != b;
      } else if constexpr (std::is_integral_v<M>) {
        return static_cast<M>(a ^ b);
      } else {
        return a;  // refused on the host
      }
  }
}

// Computes `a.op` on one element: `input(k)` is input k in the math type,
// `cond()` where's condition; the result goes to store(M), or for the
// comparisons to storeBool(bool). Both kernels below call it, so the
// strided and the flat paths compute exactly the same thing.
template <class T, class Input, class Cond, class Store, class StoreBool>
__device__ __forceinline__ void applyOp(const ElementwiseArgs& a, Input&& input,
                                        Cond&& cond, Store&& store,
                                        StoreBool&& storeBool) {
  using M = MathType<T>;
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
    case ElementwiseOp::Where:
      store(cond() ? input(1) : input(2));
      break;
    case ElementwiseOp::Sin:
    case ElementwiseOp::Cos:
    case ElementwiseOp::Tan:
    case ElementwiseOp::Asin:
    case ElementwiseOp::Acos:
    case ElementwiseOp::Atan:
    case ElementwiseOp::Sinh:
    case ElementwiseOp::Cosh:
    case ElementwiseOp::Expm1:
    case ElementwiseOp::Log2:
    case ElementwiseOp::Log10:
    case ElementwiseOp::Log1p:
    case ElementwiseOp::Rsqrt:
    case ElementwiseOp::Reciprocal:
    case ElementwiseOp::Erf:
    case ElementwiseOp::Acosh:
    case ElementwiseOp::Asinh:
    case ElementwiseOp::Atanh:
    case ElementwiseOp::Erfc:
    case ElementwiseOp::Lgamma:
    case ElementwiseOp::Digamma:
    case ElementwiseOp::Angle:
      store(floatingFn<M>(a.op, input(0)));
      break;
    case ElementwiseOp::Sign:
    case ElementwiseOp::Floor:
    case ElementwiseOp::Ceil:
    case ElementwiseOp::Round:
    case ElementwiseOp::Trunc:
    case ElementwiseOp::RoundDecimals:
      store(roundingFn<M>(a, input(0)));
      break;
    case ElementwiseOp::Polygamma:
      store(polygammaFn<M>(a.scalar[0].i, input(0)));
      break;
    case ElementwiseOp::BitwiseNot: {
      const M x = input(0);
      if constexpr (std::is_same_v<M, bool>) {
        store(!x);
      } else if constexpr (std::is_integral_v<M>) {
        store(static_cast<M>(~x));
      } else {
        store(x);  // refused on the host
      }
      break;
    }
    case ElementwiseOp::LogicalNot:
      storeBool(input(0) == M(0));
      break;
    case ElementwiseOp::Maximum:
    case ElementwiseOp::Minimum:
    case ElementwiseOp::Fmod:
    case ElementwiseOp::Remainder:
    case ElementwiseOp::FloorDivide:
    case ElementwiseOp::BitwiseXor:
    case ElementwiseOp::PowTensor:
      store(binaryFn<M>(a.op, input(0), input(1)));
      break;
    case ElementwiseOp::TanhBackward:
    case ElementwiseOp::SigmoidBackward:
      if constexpr (std::is_floating_point_v<M>) {
        const M g = input(0);
        const M y = input(1);
        store(a.op == ElementwiseOp::TanhBackward ? g * (M(1) - y * y)
                                                  : g * (M(1) - y) * y);
      } else {
        store(input(0));  // refused on the host
      }
      break;
    case ElementwiseOp::Addcmul:
      store(wrapAdd<M>(input(0),
                       wrapMul<M>(wrapMul<M>(scalarAs<M>(a.scalar[0]), input(1)),
                                  input(2))));
      break;
    case ElementwiseOp::Addcdiv:
      if constexpr (std::is_floating_point_v<M>) {
        store(input(0) + scalarAs<M>(a.scalar[0]) * input(1) / input(2));
      } else {
        store(input(0));  // refused on the host (integer division)
      }
      break;
    case ElementwiseOp::Lerp:
      if constexpr (std::is_floating_point_v<M>) {
        const M s = input(0);
        const M e = input(1);
        const M w = a.has_scalar[0] ? scalarAs<M>(a.scalar[0]) : input(2);
        // Exact at both ends; the CPU kernel's branches (w < 0.5, as
        // torch 1.13's CPU kernel chooses them).
        store(w < M(0.5) ? s + w * (e - s) : e - (e - s) * (M(1) - w));
      } else {
        store(input(0));  // refused on the host
      }
      break;
  }
}

// The general kernel: one thread per output element, any strides and
// broadcasts, each operand in its own dtype.
template <class T>
__global__ void elementwiseKernel(ElementwiseArgs a) {
  using M = MathType<T>;
  const int64_t index =
      static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= a.numel) return;

  // Element offsets of every operand, from the row-major index. The
  // outermost dimension needs no division: what is left of the index is
  // below its size.
  int64_t out_offset = 0;
  int64_t in_offset[kMaxInputs] = {0, 0, 0};
  int64_t rest = index;
  for (int d = a.ndim - 1; d >= 0; --d) {
    int64_t i = rest;
    if (d > 0) {
      i = rest % a.sizes[d];
      rest /= a.sizes[d];
    }
    out_offset += i * a.out.strides[d];
    for (int k = 0; k < a.num_inputs; ++k) in_offset[k] += i * a.in[k].strides[d];
  }
  auto input = [&](int k) -> M {
    if (k == a.scalar_input) return scalarAs<M>(a.scalar[1]);
    const char* p = static_cast<const char*>(a.in[k].data) +
                    in_offset[k] * dtypeSize(a.in[k].dtype);
    return static_cast<M>(loadAs<T>(p, a.in[k].dtype));
  };
  auto cond = [&]() -> bool {
    const char* c = static_cast<const char*>(a.in[0].data) +
                    in_offset[0] * dtypeSize(a.in[0].dtype);
    return loadAs<bool>(c, a.in[0].dtype);
  };
  void* out = static_cast<char*>(a.out.data) + out_offset * dtypeSize(a.out.dtype);
  auto store = [&](M v) { storeAs<T>(out, a.out.dtype, convertTo<T>(v)); };
  auto storeBool = [&](bool v) { storeAs<bool>(out, a.out.dtype, v); };
  applyOp<T>(a, input, cond, store, storeBool);
}

// One element of the flat kernel: x[k] is input k (dtype T, as every
// operand of the flat kernel; unused for inputs not read from memory).
// Returns what the general kernel would store: its store(v) writes
// convertTo<T>(v) to an output of dtype T, its storeBool(b) convertTo<T>(b).
template <class T>
__device__ __forceinline__ T flatElement(const ElementwiseArgs& a, T x0, T x1,
                                         T x2) {
  using M = MathType<T>;
  T result{};
  auto input = [&](int k) -> M {
    if (k == a.scalar_input) return scalarAs<M>(a.scalar[1]);
    return static_cast<M>(k == 0 ? x0 : (k == 1 ? x1 : x2));
  };
  auto cond = [&]() -> bool { return convertTo<bool>(x0); };
  auto store = [&](M v) { result = convertTo<T>(v); };
  auto storeBool = [&](bool v) { result = convertTo<T>(v); };
  applyOp<T>(a, input, cond, store, storeBool);
  return result;
}

// The flat kernel: every operand read from memory, and the output, is
// contiguous over the output's sizes (so element i of each is at offset i)
// and of dtype T, and all their addresses are equally misaligned to 16
// bytes. The first `split.head` elements, and the tail after the vectors,
// go one at a time to the first block's threads; the vectors go, one per
// thread per step, to a grid-stride loop.
//
// Input k may be the output itself (in place): each thread reads an element
// before writing it, and no thread touches another's elements.
template <class T>
__global__ void flatVectorKernel(ElementwiseArgs a, VectorSplit split) {
  constexpr int kVec = kVecSize<T>;
  T* out = static_cast<T*>(a.out.data);
  // Unrolled loops over kMaxInputs keep `in` and `x` in registers.
  const T* in[kMaxInputs];
#pragma unroll
  for (int k = 0; k < kMaxInputs; ++k) {
    in[k] = k < a.num_inputs && k != a.scalar_input
                ? static_cast<const T*>(a.in[k].data)
                : nullptr;
  }
  const int64_t body_end = split.bodyEnd(kVec);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       v < split.num_vecs; v += stride) {
    const int64_t base = split.head + v * kVec;
    Vec<T> x[kMaxInputs] = {};
#pragma unroll
    for (int k = 0; k < kMaxInputs; ++k) {
      if (in[k] != nullptr) x[k] = loadVec(in[k] + base);
    }
    Vec<T> r;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      r.val[j] = flatElement<T>(a, x[0].val[j], x[1].val[j], x[2].val[j]);
    }
    storeVec(out + base, r);
  }
  if (blockIdx.x != 0) return;
  // Head and tail: fewer than kVec (<= 16 < blockDim.x) elements each.
  auto one = [&](int64_t i) {
    T x[kMaxInputs] = {};
#pragma unroll
    for (int k = 0; k < kMaxInputs; ++k) {
      if (in[k] != nullptr) x[k] = in[k][i];
    }
    out[i] = flatElement<T>(a, x[0], x[1], x[2]);
  };
  const int64_t t = threadIdx.x;
  if (t < split.head) one(t);
  if (body_end + t < a.numel) one(body_end + t);
}

constexpr int kThreads = 256;
// Blocks per SM of the flat kernel's grid: 8 x 256 threads fill an SM
// (2048 resident threads on sm_80 and sm_90) when registers allow; with
// fewer resident, the extra blocks run in a second wave.
constexpr int kFlatBlocksPerSm = 8;

// True when `o`'s strides over `sizes` are those of a contiguous tensor, so
// that element i (row-major) is at offset i. Dimensions of size 1 do not
// matter.
bool isFlat(const Operand& o, const int64_t* sizes, int ndim) {
  int64_t expected = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (o.strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

// The operands read from memory: the output, then every input but the
// scalar one. Calls f(const Operand&) on each.
template <class F>
void forMemoryOperands(const ElementwiseArgs& a, F&& f) {
  f(a.out);
  for (int k = 0; k < a.num_inputs; ++k) {
    if (k != a.scalar_input) f(a.in[k]);
  }
}

template <class T>
int launchStrided(const ElementwiseArgs& args, cudaStream_t stream) {
  const int64_t blocks = (args.numel + kThreads - 1) / kThreads;
  if (blocks > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  elementwiseKernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      args);
  return cudaSuccess;
}

// Picks the kernel (see launch.h's launchElementwise):
// - every memory operand flat, of dtype T, equally misaligned: the
//   vectorized flat kernel;
// - every memory operand flat otherwise (conversions, different
//   alignments): the general kernel on one dimension, where finding an
//   element's offsets costs no division;
// - else the general kernel as it is.
template <class T>
int launchTyped(const ElementwiseArgs& args, int compute_dtype,
                cudaStream_t stream) {
  bool flat = true;
  bool same_dtype = true;
  bool same_misalignment = true;
  const uintptr_t misalignment =
      reinterpret_cast<uintptr_t>(args.out.data) % kVecBytes;
  forMemoryOperands(args, [&](const Operand& o) {
    flat = flat && isFlat(o, args.sizes, args.ndim);
    same_dtype = same_dtype && o.dtype == compute_dtype;
    same_misalignment = same_misalignment &&
                        reinterpret_cast<uintptr_t>(o.data) % kVecBytes ==
                            misalignment;
  });
  if (!flat) return launchStrided<T>(args, stream);
  if (same_dtype && same_misalignment && misalignment % sizeof(T) == 0) {
    const VectorSplit split = splitForVectors(
        reinterpret_cast<uintptr_t>(args.out.data), sizeof(T), args.numel);
    // Vectors of the same dtype and misalignment start at the same element
    // in every operand, so out's split is everyone's.
    int64_t blocks = (split.num_vecs + kThreads - 1) / kThreads;
    if (blocks > kFlatBlocksPerSm) {  // below, no device has fewer blocks
      const int64_t max_blocks =
          static_cast<int64_t>(multiProcessorCount()) * kFlatBlocksPerSm;
      if (blocks > max_blocks) blocks = max_blocks;
    }
    if (blocks < 1) blocks = 1;  // the head and tail
    flatVectorKernel<T>
        <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(args, split);
    return cudaSuccess;
  }
  ElementwiseArgs flat_args = args;
  flat_args.ndim = 1;
  flat_args.sizes[0] = args.numel;
  flat_args.out.strides[0] = 1;
  for (int k = 0; k < args.num_inputs; ++k) flat_args.in[k].strides[0] = 1;
  return launchStrided<T>(flat_args, stream);
}

}  // namespace

int launchElementwise(const ElementwiseArgs& args, int compute_dtype,
                      cudaStream_t stream) {
  if (args.numel == 0) return cudaSuccess;
  int status = cudaErrorInvalidValue;
  visitHostDtype(compute_dtype, [&](auto tag) {
    status = launchTyped<decltype(tag)>(args, compute_dtype, stream);
  });
  if (status != cudaSuccess) return status;
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace turnout
