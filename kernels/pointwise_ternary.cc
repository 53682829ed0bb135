// The pointwise operators of three operands that optimisers are written
// with (issue 18): addcmul, addcdiv and lerp (.Scalar, .Tensor), each with
// its in-place and out= overloads, torch 1.13's schemas, CPU and Meta
// kernels (their gradients: kernels/autograd/select_pointwise_autograd.cc;
// CUDA: kernels/cuda/pointwise.cc).
//
//   addcmul(self, t1, t2, value=v)  = self + v * t1 * t2
//   addcdiv(self, t1, t2, value=v)  = self + v * t1 / t2
//   lerp(self, end, w)              = self + w * (end - self), computed
//       as torch's: end - (end - self) * (1 - w) where w >= 0.5
//
// torch 1.13's rules, which the Meta kernels check (so the CUDA kernels,
// which redispatch to them, check the same):
// - addcmul/addcdiv broadcast and promote their three tensors as add's;
//   addcdiv refuses two integral (or Bool) divisor operands ("Integer
//   division with addcdiv is no longer supported, ..."). `value` is
//   converted to the computation's dtype first (2.7 is 2 for Long).
// - lerp wants `end` (and a Tensor `weight`) of self's dtype exactly
//   ("expected dtype float for `end` but got dtype double").
// - In place, self must have the broadcast shape; out= is resized (with
//   torch's deprecation warning when it had elements). addcmul/addcdiv's
//   in-place self and out take the promoted dtype (torch 1.13 raises an
//   internal assert for a castable other one: turnout a clear error);
//   lerp.Scalar_out casts into any out the result casts to, lerp.Tensor_out
//   wants out of self's dtype ("Found dtype Double but expected Float").
// The CPU kernels' dtypes are torch's CPU kernels': addcmul and addcdiv
// all but Bool and Half; lerp Float, Double and BFloat16 (others:
// "\"lerp_kernel_scalar\" not implemented for 'Long'").
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/core/tensor_impl.h"
#include "dispatcher/library.h"
#include "kernels/aten_tags.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/loops.h"
#include "kernels/mem_overlap.h"
#include "kernels/output_layout.h"
#include "kernels/parallel.h"
#include "kernels/reduce_utils.h"
#include "kernels/tensor_utils.h"
#include "kernels/type_promotion.h"

namespace turnout {
namespace {

void checkDefined(const char* op, const Tensor& t, const char* arg) {
  TURNOUT_CHECK(t.defined(), ErrorKind::InvalidArgument, op, ": expected `",
                arg, "` to be a defined tensor, but got an undefined one");
}

bool isCpuScalar(const Tensor& t) { return t.dim() == 0 && t.is_cpu(); }

// The device of a pointwise call: that of the first operand that is not a
// 0-dim CPU tensor (which goes with any device, as a number would).
Device commonDevice(const char* op, std::initializer_list<const Tensor*> ts) {
  const Tensor* first = nullptr;
  for (const Tensor* t : ts) {
    if (!isCpuScalar(*t)) {
      first = t;
      break;
    }
  }
  if (first == nullptr) return (*ts.begin())->device();
  for (const Tensor* t : ts) {
    TURNOUT_CHECK(t->device() == first->device() || isCpuScalar(*t),
                  ErrorKind::InvalidArgument, op,
                  ": Expected all tensors to be on the same device, but found "
                  "at least two devices, ",
                  first->device(), " and ", t->device(), "!");
  }
  return first->device();
}

struct Plan {
  ScalarType common = ScalarType::Undefined;
  DimVector sizes;
  Device device{DeviceType::CPU};
};

// ---- Wrapping integer arithmetic (torch's integers wrap) -------------------

template <class T>
using Unsigned = std::make_unsigned_t<
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, T>>;

template <class T>
T wrapMulAdd(T a, T v, T b, T c) {  // a + v * b * c
  using U = Unsigned<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(v) *
                                                static_cast<U>(b) *
                                                static_cast<U>(c));
}

// ---- Contiguous fused multiply-add loops ------------------------------------------
//
// addcmul and lerp round as torch's FMA-contracted loops (std::fma). Built
// for the baseline x86-64 target, std::fma is a library call per element,
// about three times the cost of the unfused loop (4M floats: 17 ms against
// 5.7 ms at -O2); so Float and Double operands that are all contiguous with
// the output's sizes take these loops, compiled a second time for AVX2 +
// FMA and chosen once by the CPU's features, whose std::fma is one
// instruction the compiler vectorises. Same bits either way.

// The loop bodies, inlined into both variants below.
template <class T>
struct FmaLoops {
  // y = fma(v * b, c, a)
  __attribute__((always_inline)) static inline void addcmul(
      const T* a, const T* b, const T* c, T v, T* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = std::fma(v * b[i], c[i], a[i]);
  }
  // y = lerp(s, e, w) as lerpValue below; w per element when wv is set.
  __attribute__((always_inline)) static inline void lerp(
      const T* s, const T* e, const T* wv, T w, T* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const T wi = wv != nullptr ? wv[i] : w;
      const T d = e[i] - s[i];
      y[i] = wi < T(0.5) ? std::fma(wi, d, s[i])
                         : std::fma(-d, T(1) - wi, e[i]);
    }
  }
};

template <class T>
void addcmulBaseline(const T* a, const T* b, const T* c, T v, T* y,
                     int64_t n) {
  FmaLoops<T>::addcmul(a, b, c, v, y, n);
}
template <class T>
void lerpBaseline(const T* s, const T* e, const T* wv, T w, T* y, int64_t n) {
  FmaLoops<T>::lerp(s, e, wv, w, y, n);
}

#if defined(__x86_64__) && defined(__GNUC__)
template <class T>
__attribute__((target("avx2,fma"))) void addcmulAvx2(const T* a, const T* b,
                                                     const T* c, T v, T* y,
                                                     int64_t n) {
  FmaLoops<T>::addcmul(a, b, c, v, y, n);
}
template <class T>
__attribute__((target("avx2,fma"))) void lerpAvx2(const T* s, const T* e,
                                                  const T* wv, T w, T* y,
                                                  int64_t n) {
  FmaLoops<T>::lerp(s, e, wv, w, y, n);
}
bool haveAvx2Fma() {
  static const bool have =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return have;
}
#else
template <class T>
void addcmulAvx2(const T* a, const T* b, const T* c, T v, T* y, int64_t n) {
  addcmulBaseline(a, b, c, v, y, n);
}
template <class T>
void lerpAvx2(const T* s, const T* e, const T* wv, T w, T* y, int64_t n) {
  lerpBaseline(s, e, wv, w, y, n);
}
bool haveAvx2Fma() { return false; }
#endif

// True when dst and every defined input are contiguous CPU tensors of
// dst's sizes and dtype `T` (the flat loops above apply).
template <class T>
bool flatOperands(const Tensor& dst, std::initializer_list<const Tensor*> in,
                  ScalarType dtype) {
  if (!dst.is_cpu() || !dst.is_contiguous() || dst.scalar_type() != dtype) {
    return false;
  }
  for (const Tensor* t : in) {
    if (t == nullptr) continue;
    if (!t->is_cpu() || !t->is_contiguous() || t->scalar_type() != dtype ||
        t->sizes() != dst.sizes()) {
      return false;
    }
  }
  return true;
}

template <class T>
const T* dataOf(const Tensor& t) {
  return static_cast<const T*>(t.data_ptr());
}

// ---- addcmul, addcdiv ----------------------------------------------------------

enum class Addc { Mul, Div };

const char* addcName(Addc k) { return k == Addc::Mul ? "addcmul" : "addcdiv"; }

Plan planAddc(Addc k, const char* op, const Tensor& self, const Tensor& t1,
              const Tensor& t2) {
  checkDefined(op, self, "self");
  checkDefined(op, t1, "tensor1");
  checkDefined(op, t2, "tensor2");
  if (k == Addc::Div) {
    TURNOUT_CHECK(
        !(isIntegralType(t1.scalar_type(), /*include_bool=*/true) &&
          isIntegralType(t2.scalar_type(), /*include_bool=*/true)),
        ErrorKind::InvalidArgument,
        "Integer division with addcdiv is no longer supported, and in a "
        "future  release addcdiv will perform a true division of tensor1 and "
        "tensor2. The historic addcdiv behavior can be implemented as (input "
        "+ value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
        "integer inputs and as (input + value * tensor1 / tensor2) for float "
        "inputs. The future addcdiv behavior is just the latter "
        "implementation: (input + value * tensor1 / tensor2), for all "
        "dtypes.");
  }
  Plan p;
  p.sizes = inferBroadcastSize(
      inferBroadcastSize(self.sizes(), t1.sizes()), t2.sizes());
  p.common = resultType({self, t1, t2});
  p.device = commonDevice(op, {&self, &t1, &t2});
  return p;
}

// dst (p.common, p.sizes, CPU) = the operator's result.
template <Addc kKind>
void computeAddc(const Tensor& dst, const Tensor& self, const Tensor& t1,
                 const Tensor& t2, const Scalar& value, ScalarType common) {
  const char* kernel =
      kKind == Addc::Mul ? "addcmul_cpu_out" : "addcdiv_cpu_out";
  TURNOUT_CHECK(common != ScalarType::Bool && common != ScalarType::Half,
                ErrorKind::NotImplemented, "\"", kernel,
                "\" not implemented for '", toString(common), "'");
  visitDtype(common, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = OpMathType<T>;
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, Half>) {
      TURNOUT_INTERNAL_ASSERT(false, kernel, " reached with ",
                              toString(common));
    } else if constexpr (std::is_integral_v<T>) {
      // Only addcmul: addcdiv refused integral divisors.
      TURNOUT_INTERNAL_ASSERT(kKind == Addc::Mul, "integral addcdiv");
      const T v = value.to<T>();
      if (dst.numel() == 0) return;
      cpuKernel(dst, castTo(self, common), castTo(t1, common),
                castTo(t2, common),
                [v](T a, T b, T c) -> T { return wrapMulAdd<T>(a, v, b, c); });
    } else {
      // As torch 1.13's CPU kernel rounds: addcmul's last multiply-add
      // fused (its vectorised loop is contracted to an FMA); Float and
      // Double take `value` in their dtype, the 16-bit types compute in
      // float with `value` as a float, rounding once at the end.
      const M v = kIsReducedFloat<T> ? static_cast<M>(value.to<float>())
                                     : static_cast<M>(value.to<T>());
      if (dst.numel() == 0) return;
      if constexpr (kKind == Addc::Mul && std::is_floating_point_v<T>) {
        if (flatOperands<T>(dst, {&self, &t1, &t2}, common)) {
          const T *a = dataOf<T>(self), *b = dataOf<T>(t1), *c = dataOf<T>(t2);
          T* y = static_cast<T*>(dst.data_ptr());
          const bool avx2 = haveAvx2Fma();
          parallel_for(0, dst.numel(), kGrainSize, [&](int64_t lo, int64_t hi) {
            if (avx2) {
              addcmulAvx2<T>(a + lo, b + lo, c + lo, v, y + lo, hi - lo);
            } else {
              addcmulBaseline<T>(a + lo, b + lo, c + lo, v, y + lo, hi - lo);
            }
          });
          return;
        }
      }
      cpuKernel(dst, castTo(self, common), castTo(t1, common),
                castTo(t2, common), [v](T a, T b, T c) -> T {
                  if constexpr (kKind == Addc::Div) {
                    return T(M(a) + v * M(b) / M(c));
                  } else {
                    return T(std::fma(v * M(b), M(c), M(a)));
                  }
                });
    }
  });
}

// torch 1.13 computes into self or out only in the promoted dtype.
// An out= tensor's checks common to every overload here: defined, on the
// inputs' device, no internal overlap, no partial overlap with an input.
void checkOut(const char* op, Device device, const Tensor& out,
              std::initializer_list<const Tensor*> inputs) {
  checkDefined(op, out, "out");
  TURNOUT_CHECK(out.device() == device, ErrorKind::InvalidArgument, op,
                ": expected the out tensor on ", device,
                ", the inputs' device, but it is on ", out.device());
  checkNoInternalOverlap(out, op);
  for (const Tensor* t : inputs) checkNoPartialOverlap(out, *t, op);
}

void checkWrittenDtype(const char* op, ScalarType common, ScalarType written,
                       const char* what) {
  TURNOUT_CHECK(canCast(common, written), ErrorKind::InvalidArgument,
                "result type ", toString(common),
                " can't be cast to the desired output type ",
                toString(written));
  TURNOUT_CHECK(common == written, ErrorKind::InvalidArgument, op,
                ": the result has dtype ", toString(common), " but ", what,
                " has dtype ", toString(written),
                "; torch 1.13 computes this operator only into a tensor of "
                "the result's dtype: cast the inputs or pass a ",
                toString(common), " tensor");
}

template <bool kCpu, Addc kKind>
Tensor addcFunctional(const Tensor& self, const Tensor& t1, const Tensor& t2,
                      const Scalar& value) {
  const Plan p = planAddc(kKind, addcName(kKind), self, t1, t2);
  Tensor out =
      emptyElementwiseOutput(p.sizes, p.common, p.device, {&self, &t1, &t2});
  if constexpr (kCpu) computeAddc<kKind>(out, self, t1, t2, value, p.common);
  return out;
}

template <bool kCpu, Addc kKind>
Tensor& addcInplace(Tensor& self, const Tensor& t1, const Tensor& t2,
                    const Scalar& value) {
  const std::string op = std::string(addcName(kKind)) + "_";
  const Plan p = planAddc(kKind, op.c_str(), self, t1, t2);
  checkNoInternalOverlap(self, op);
  checkNoPartialOverlap(self, t1, op);
  checkNoPartialOverlap(self, t2, op);
  TURNOUT_CHECK(self.sizes() == IntArrayRef(p.sizes),
                ErrorKind::InvalidArgument, "output with shape ",
                shapeString(self.sizes()),
                " doesn't match the broadcast shape ", shapeString(p.sizes));
  checkWrittenDtype(op.c_str(), p.common, self.scalar_type(), "self");
  if constexpr (kCpu) {
    // Computed aside: t1 or t2 may be self.
    Tensor result = emptyTensor(p.sizes, p.common, self.device());
    computeAddc<kKind>(result, self, t1, t2, value, p.common);
    copyCast(self, result);
  }
  return self;
}

template <bool kCpu, Addc kKind>
Tensor& addcOut(const Tensor& self, const Tensor& t1, const Tensor& t2,
                const Scalar& value, Tensor& out) {
  const std::string op = std::string(addcName(kKind)) + ".out";
  const Plan p = planAddc(kKind, op.c_str(), self, t1, t2);
  checkOut(op.c_str(), p.device, out, {&self, &t1, &t2});
  checkWrittenDtype(op.c_str(), p.common, out.scalar_type(), "out");
  if constexpr (kCpu) {
    Tensor result = emptyElementwiseOutput(p.sizes, p.common, out.device(),
                                           {&self, &t1, &t2});
    computeAddc<kKind>(result, self, t1, t2, value, p.common);
    reduce_internal::resizeElementwiseOutput(out, p.sizes, {&self, &t1, &t2},
                                             op.c_str());
    copyCast(out, result);
  } else {
    reduce_internal::resizeElementwiseOutput(out, p.sizes, {&self, &t1, &t2},
                                             op.c_str());
  }
  return out;
}

// ---- lerp --------------------------------------------------------------------------

// `weight` null: lerp.Scalar.
Plan planLerp(const char* op, const Tensor& self, const Tensor& end,
              const Tensor* weight) {
  checkDefined(op, self, "self");
  checkDefined(op, end, "end");
  TURNOUT_CHECK(self.scalar_type() == end.scalar_type(),
                ErrorKind::InvalidArgument, "expected dtype ",
                typeMetaName(self.scalar_type()), " for `end` but got dtype ",
                typeMetaName(end.scalar_type()));
  Plan p;
  p.common = self.scalar_type();
  p.sizes = inferBroadcastSize(self.sizes(), end.sizes());
  if (weight != nullptr) {
    checkDefined(op, *weight, "weight");
    TURNOUT_CHECK(self.scalar_type() == weight->scalar_type(),
                  ErrorKind::InvalidArgument, "expected dtype ",
                  typeMetaName(self.scalar_type()),
                  " for `weight` but got dtype ",
                  typeMetaName(weight->scalar_type()));
    p.sizes = inferBroadcastSize(p.sizes, weight->sizes());
    p.device = commonDevice(op, {&self, &end, weight});
  } else {
    p.device = commonDevice(op, {&self, &end});
  }
  return p;
}

// torch 1.13's CPU kernel, to the last bit: exact at both ends (w = 0
// gives self, w = 1 gives end), each branch one fused multiply-add, and
// the branch chosen by w < 0.5 (not |w| < 0.5: its vectorised loops
// compare the signed weight, so w = -0.8 takes the first form too).
template <class M>
inline M lerpValue(M s, M e, M w) {
  const M d = e - s;
  return w < M(0.5) ? std::fma(w, d, s) : std::fma(-d, M(1) - w, e);
}

// dst (p.common, p.sizes, CPU) = lerp; `weight` null: the Scalar `w`.
void computeLerp(const Tensor& dst, const Tensor& self, const Tensor& end,
                 const Tensor* weight, const Scalar& w, ScalarType common) {
  const char* kernel =
      weight == nullptr ? "lerp_kernel_scalar" : "lerp_kernel_tensor";
  TURNOUT_CHECK(common == ScalarType::Float || common == ScalarType::Double ||
                    common == ScalarType::BFloat16,
                ErrorKind::NotImplemented, "\"", kernel,
                "\" not implemented for '", toString(common), "'");
  visitFloatingDtype(common, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = OpMathType<T>;
    if constexpr (std::is_floating_point_v<T>) {
      if (dst.numel() > 0 && flatOperands<T>(dst, {&self, &end, weight}, common)) {
        const T *s = dataOf<T>(self), *e = dataOf<T>(end);
        const T* wv = weight != nullptr ? dataOf<T>(*weight) : nullptr;
        const T wc = weight != nullptr ? T(0) : w.to<T>();
        T* y = static_cast<T*>(dst.data_ptr());
        const bool avx2 = haveAvx2Fma();
        parallel_for(0, dst.numel(), kGrainSize, [&](int64_t lo, int64_t hi) {
          const T* wl = wv != nullptr ? wv + lo : nullptr;
          if (avx2) {
            lerpAvx2<T>(s + lo, e + lo, wl, wc, y + lo, hi - lo);
          } else {
            lerpBaseline<T>(s + lo, e + lo, wl, wc, y + lo, hi - lo);
          }
        });
        return;
      }
    }
    if (weight == nullptr) {
      const M wv = w.to<M>();
      if (dst.numel() == 0) return;
      cpuKernel(dst, self, end, [wv](T a, T b) -> T {
        return T(lerpValue<M>(M(a), M(b), wv));
      });
    } else {
      if (dst.numel() == 0) return;
      cpuKernel(dst, self, end, *weight, [](T a, T b, T c) -> T {
        return T(lerpValue<M>(M(a), M(b), M(c)));
      });
    }
  });
}

template <bool kCpu>
Tensor lerpScalar(const Tensor& self, const Tensor& end, const Scalar& w) {
  const Plan p = planLerp("lerp", self, end, nullptr);
  Tensor out =
      emptyElementwiseOutput(p.sizes, p.common, p.device, {&self, &end});
  if constexpr (kCpu) computeLerp(out, self, end, nullptr, w, p.common);
  return out;
}

template <bool kCpu>
Tensor lerpTensor(const Tensor& self, const Tensor& end,
                  const Tensor& weight) {
  const Plan p = planLerp("lerp", self, end, &weight);
  Tensor out = emptyElementwiseOutput(p.sizes, p.common, p.device,
                                      {&self, &end, &weight});
  if constexpr (kCpu) computeLerp(out, self, end, &weight, Scalar(0), p.common);
  return out;
}

template <bool kCpu>
Tensor& lerpInplaceImpl(Tensor& self, const Tensor& end, const Tensor* weight,
                        const Scalar& w) {
  const char* op = "lerp_";
  const Plan p = planLerp(op, self, end, weight);
  checkNoInternalOverlap(self, op);
  checkNoPartialOverlap(self, end, op);
  if (weight != nullptr) checkNoPartialOverlap(self, *weight, op);
  TURNOUT_CHECK(self.sizes() == IntArrayRef(p.sizes),
                ErrorKind::InvalidArgument, "output with shape ",
                shapeString(self.sizes()),
                " doesn't match the broadcast shape ", shapeString(p.sizes));
  if constexpr (kCpu) {
    Tensor result = emptyTensor(p.sizes, p.common, self.device());
    computeLerp(result, self, end, weight, w, p.common);
    copyCast(self, result);
  }
  return self;
}

template <bool kCpu>
Tensor& lerpScalarInplace(Tensor& self, const Tensor& end, const Scalar& w) {
  return lerpInplaceImpl<kCpu>(self, end, nullptr, w);
}

template <bool kCpu>
Tensor& lerpTensorInplace(Tensor& self, const Tensor& end,
                          const Tensor& weight) {
  return lerpInplaceImpl<kCpu>(self, end, &weight, Scalar(0));
}

void resizeLerpOut(const Tensor& out, IntArrayRef sizes, const Tensor& self,
                   const Tensor& end, const Tensor* weight, const char* op) {
  if (weight == nullptr) {
    reduce_internal::resizeElementwiseOutput(out, sizes, {&self, &end}, op);
  } else {
    reduce_internal::resizeElementwiseOutput(out, sizes, {&self, &end, weight},
                                             op);
  }
}

template <bool kCpu>
Tensor& lerpOutImpl(const Tensor& self, const Tensor& end,
                    const Tensor* weight, const Scalar& w, Tensor& out) {
  const char* op = weight == nullptr ? "lerp.Scalar_out" : "lerp.Tensor_out";
  const Plan p = planLerp(op, self, end, weight);
  if (weight != nullptr) {
    checkOut(op, p.device, out, {&self, &end, weight});
    // TensorIterator without type promotion: every operand of one dtype.
    TURNOUT_CHECK(out.scalar_type() == p.common, ErrorKind::InvalidArgument,
                  "Found dtype ", toString(out.scalar_type()),
                  " but expected ", toString(p.common));
  } else {
    checkOut(op, p.device, out, {&self, &end});
    TURNOUT_CHECK(canCast(p.common, out.scalar_type()),
                  ErrorKind::InvalidArgument, "result type ",
                  toString(p.common),
                  " can't be cast to the desired output type ",
                  toString(out.scalar_type()));
  }
  if constexpr (kCpu) {
    Tensor result =
        weight == nullptr
            ? emptyElementwiseOutput(p.sizes, p.common, out.device(),
                                     {&self, &end})
            : emptyElementwiseOutput(p.sizes, p.common, out.device(),
                                     {&self, &end, weight});
    computeLerp(result, self, end, weight, w, p.common);
    resizeLerpOut(out, p.sizes, self, end, weight, op);
    copyCast(out, result);
  } else {
    resizeLerpOut(out, p.sizes, self, end, weight, op);
  }
  return out;
}

template <bool kCpu>
Tensor& lerpScalarOut(const Tensor& self, const Tensor& end, const Scalar& w,
                      Tensor& out) {
  return lerpOutImpl<kCpu>(self, end, nullptr, w, out);
}

template <bool kCpu>
Tensor& lerpTensorOut(const Tensor& self, const Tensor& end,
                      const Tensor& weight, Tensor& out) {
  return lerpOutImpl<kCpu>(self, end, &weight, Scalar(0), out);
}

template <bool kCpu>
void registerPointwiseTernary(Library& m) {
  m.impl("addcmul", TURNOUT_FN((addcFunctional<kCpu, Addc::Mul>)));
  m.impl("addcmul_", TURNOUT_FN((addcInplace<kCpu, Addc::Mul>)));
  m.impl("addcmul.out", TURNOUT_FN((addcOut<kCpu, Addc::Mul>)));
  m.impl("addcdiv", TURNOUT_FN((addcFunctional<kCpu, Addc::Div>)));
  m.impl("addcdiv_", TURNOUT_FN((addcInplace<kCpu, Addc::Div>)));
  m.impl("addcdiv.out", TURNOUT_FN((addcOut<kCpu, Addc::Div>)));
  m.impl("lerp.Scalar", TURNOUT_FN(lerpScalar<kCpu>));
  m.impl("lerp.Tensor", TURNOUT_FN(lerpTensor<kCpu>));
  m.impl("lerp_.Scalar", TURNOUT_FN(lerpScalarInplace<kCpu>));
  m.impl("lerp_.Tensor", TURNOUT_FN(lerpTensorInplace<kCpu>));
  m.impl("lerp.Scalar_out", TURNOUT_FN(lerpScalarOut<kCpu>));
  m.impl("lerp.Tensor_out", TURNOUT_FN(lerpTensorOut<kCpu>));
}

}  // namespace
}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);
  // torch 1.13's schemas.
  m.def("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor");
  m.def("addcmul_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)");
  m.def("addcmul.out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor(a!) out) -> Tensor(a!)");
  m.def("addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor");
  m.def("addcdiv_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)");
  m.def("addcdiv.out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor(a!) out) -> Tensor(a!)");
  m.def("lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor");
  m.def("lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor");
  m.def("lerp_.Scalar(Tensor(a!) self, Tensor end, Scalar weight) -> Tensor(a!)");
  m.def("lerp_.Tensor(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)");
  m.def("lerp.Scalar_out(Tensor self, Tensor end, Scalar weight, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("lerp.Tensor_out(Tensor self, Tensor end, Tensor weight, *, Tensor(a!) out) -> Tensor(a!)");
}

TURNOUT_LIBRARY_IMPL(aten, CPU, m) {
  turnout::registerPointwiseTernary<true>(m);
}
TURNOUT_LIBRARY_IMPL(aten, Meta, m) {
  turnout::registerPointwiseTernary<false>(m);
}
