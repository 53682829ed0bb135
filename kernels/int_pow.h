// Integer power as torch 1.13 computes it, for the CPU kernel of pow
// (misc_ops.cc) and the CUDA one (cuda/elementwise.cu), which includes this
// header too (host and device): a negative exponent gives 0 except for a
// base of 1 or -1; overflow wraps (computed unsigned, where wrapping is
// defined). Header-only, no dependencies beyond <type_traits>.
#ifndef TURNOUT_KERNELS_INT_POW_H_
#define TURNOUT_KERNELS_INT_POW_H_

#include <type_traits>

#if defined(__CUDACC__)
#define TURNOUT_HOST_DEVICE __host__ __device__
#else
#define TURNOUT_HOST_DEVICE
#endif

namespace turnout {
namespace int_pow_internal {

/// a ** b for an integer type M (not bool).
template <class M>
TURNOUT_HOST_DEVICE inline M intPow(M a, M b) {
  static_assert(std::is_integral_v<M> && !std::is_same_v<M, bool>);
  if constexpr (std::is_signed_v<M>) {
    if (b < 0) {
      if (a == M(1)) return M(1);
      if (a == M(-1)) return (b & 1) ? M(-1) : M(1);
      return M(0);
    }
  }
  using U = std::make_unsigned_t<
      std::conditional_t<(sizeof(M) < sizeof(int)), int, M>>;
  U result = 1;
  U base = static_cast<U>(a);
  for (M e = b; e > 0; e = static_cast<M>(e >> 1)) {
    if (e & 1) result = static_cast<U>(result * base);
    base = static_cast<U>(base * base);
  }
  return static_cast<M>(result);
}

}  // namespace int_pow_internal
}  // namespace turnout

#endif  // TURNOUT_KERNELS_INT_POW_H_
