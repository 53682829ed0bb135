// Device-side element types and conversions shared by the .cu files: the
// C++ type of each dtype (Half as __half, BFloat16 as __nv_bfloat16), the
// conversion a cast to a tensor dtype performs (as convertElement on the
// CPU: anything -> bool is "!= 0", Half and BFloat16 go through float), and
// a load / store of an element whose dtype is known only at run time.
#ifndef TURNOUT_KERNELS_CUDA_DEVICE_TYPES_CUH_
#define TURNOUT_KERNELS_CUDA_DEVICE_TYPES_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace turnout {
namespace cuda {

// ScalarType's enumerator values.
enum Dtype : int {
  kDtypeByte = 0,
  kDtypeChar = 1,
  kDtypeShort = 2,
  kDtypeInt = 3,
  kDtypeLong = 4,
  kDtypeHalf = 5,
  kDtypeFloat = 6,
  kDtypeDouble = 7,
  kDtypeBool = 11,
  kDtypeBFloat16 = 15,
};

template <class T>
constexpr bool kIsReduced =
    std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

template <class T>
constexpr bool kIsFloating = kIsReduced<T> || std::is_floating_point_v<T>;

/// The type arithmetic on T is done in (c10's opmath_type).
template <class T>
using MathType = std::conditional_t<kIsReduced<T>, float, T>;

/// `v` converted as a cast to the dtype of `To` converts.
template <class To, class From>
__device__ __forceinline__ To convertTo(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, __half>) {
    return convertTo<To>(__half2float(v));
  } else if constexpr (std::is_same_v<From, __nv_bfloat16>) {
    return convertTo<To>(__bfloat162float(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_same_v<To, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}

/// Calls f(T{}) with T the device type of `dtype`, in device code.
template <class F>
__device__ __forceinline__ void visitDeviceDtype(int dtype, F&& f) {
  switch (dtype) {
    case kDtypeByte: f(uint8_t{}); break;
    case kDtypeChar: f(int8_t{}); break;
    case kDtypeShort: f(int16_t{}); break;
    case kDtypeInt: f(int32_t{}); break;
    case kDtypeLong: f(int64_t{}); break;
    case kDtypeHalf: f(__half{}); break;
    case kDtypeFloat: f(float{}); break;
    case kDtypeDouble: f(double{}); break;
    case kDtypeBool: f(bool{}); break;
    case kDtypeBFloat16: f(__nv_bfloat16{}); break;
    default: break;
  }
}

/// The same in host code (the launchers).
template <class F>
inline void visitHostDtype(int dtype, F&& f) {
  switch (dtype) {
    case kDtypeByte: f(uint8_t{}); break;
    case kDtypeChar: f(int8_t{}); break;
    case kDtypeShort: f(int16_t{}); break;
    case kDtypeInt: f(int32_t{}); break;
    case kDtypeLong: f(int64_t{}); break;
    case kDtypeHalf: f(__half{}); break;
    case kDtypeFloat: f(float{}); break;
    case kDtypeDouble: f(double{}); break;
    case kDtypeBool: f(bool{}); break;
    case kDtypeBFloat16: f(__nv_bfloat16{}); break;
    default: break;
  }
}

/// The element at `p` (of run-time dtype `dtype`) converted to T.
template <class T>
__device__ __forceinline__ T loadAs(const void* p, int dtype) {
  T result{};
  visitDeviceDtype(dtype, [&](auto tag) {
    using S = decltype(tag);
    result = convertTo<T>(*static_cast<const S*>(p));
  });
  return result;
}

/// Stores `v` converted to the run-time dtype `dtype` at `p`.
template <class T>
__device__ __forceinline__ void storeAs(void* p, int dtype, T v) {
  visitDeviceDtype(dtype, [&](auto tag) {
    using S = decltype(tag);
    *static_cast<S*>(p) = convertTo<S>(v);
  });
}

/// Bytes per element of `dtype`.
__device__ __forceinline__ int dtypeSize(int dtype) {
  int size = 0;
  visitDeviceDtype(dtype, [&](auto tag) { size = sizeof(tag); });
  return size;
}

}  // namespace cuda
}  // namespace turnout

#endif  // TURNOUT_KERNELS_CUDA_DEVICE_TYPES_CUH_
