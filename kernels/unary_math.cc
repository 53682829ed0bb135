// CPU and Meta kernels of the unary math operators (see unary_math.h), their
// schemas, and their C++ front end.
//
// Every operator is a small description (its name, whether it computes in
// floating point, its dtype check, and its function of one element); one
// set of templates turns a description into the functional, in-place and
// out= kernels, for CPU (kCpu = true) and Meta (the same checks and
// shapes, no computation). exp, log, sqrt, tanh, sigmoid, neg and abs keep
// their functional kernels in elementwise_kernels.cc; their in-place and
// out= overloads are here.
#include "kernels/unary_math.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/operator_handle.h"
#include "kernels/aten_tags.h"
#include "kernels/digamma.h"
#include "kernels/loops.h"
#include "kernels/mem_overlap.h"
#include "kernels/output_layout.h"
#include "kernels/reduce_utils.h"
#include "kernels/tensor_utils.h"
#include "kernels/type_promotion.h"

namespace turnout {
namespace {

// ---- Operator descriptions ---------------------------------------------------
// kFloat: integral and Bool inputs compute in the default float dtype.
// check(self): the dtype errors. make<M>(param): the element function over
// M (an OpMathType); `param` is round's decimals (0 for the others).

void rejectBool(const Tensor& self, const char* op) {
  TURNOUT_CHECK(self.scalar_type() != ScalarType::Bool,
                ErrorKind::NotImplemented, "\"", op,
                "\" not implemented for 'Bool'");
}

template <class M>
M wrappingNeg(M x) {
  if constexpr (std::is_floating_point_v<M>) {
    return -x;
  } else if constexpr (std::is_same_v<M, bool>) {
    return x;
  } else {
    using U = std::make_unsigned_t<
        std::conditional_t<(sizeof(M) < sizeof(int)), int, M>>;
    return static_cast<M>(U(0) - static_cast<U>(x));
  }
}

// psi in double, torch 1.13's edge values (kernels/digamma.h, shared with
// the CUDA kernel).
template <class M>
double digammaOf(M in) {
  return digamma_internal::digamma(static_cast<double>(in));
}

#define TURNOUT_FLOAT_OP(Name, op_name, expr)              \
  struct Name {                                            \
    static constexpr const char* kName = op_name;          \
    static constexpr bool kFloat = true;                   \
    static void check(const Tensor&) {}                    \
    template <class M>                                     \
    static auto make(int64_t) {                            \
      return [](M x) -> M { return (expr); };              \
    }                                                      \
  };
TURNOUT_FLOAT_OP(SinOp, "sin", std::sin(x))
TURNOUT_FLOAT_OP(CosOp, "cos", std::cos(x))
TURNOUT_FLOAT_OP(TanOp, "tan", std::tan(x))
TURNOUT_FLOAT_OP(AsinOp, "asin", std::asin(x))
TURNOUT_FLOAT_OP(AcosOp, "acos", std::acos(x))
TURNOUT_FLOAT_OP(AtanOp, "atan", std::atan(x))
TURNOUT_FLOAT_OP(SinhOp, "sinh", std::sinh(x))
TURNOUT_FLOAT_OP(CoshOp, "cosh", std::cosh(x))
TURNOUT_FLOAT_OP(ExpOp, "exp", std::exp(x))
TURNOUT_FLOAT_OP(Expm1Op, "expm1", std::expm1(x))
TURNOUT_FLOAT_OP(LogOp, "log", std::log(x))
TURNOUT_FLOAT_OP(Log2Op, "log2", std::log2(x))
TURNOUT_FLOAT_OP(Log10Op, "log10", std::log10(x))
TURNOUT_FLOAT_OP(Log1pOp, "log1p", std::log1p(x))
TURNOUT_FLOAT_OP(TanhOp, "tanh", std::tanh(x))
TURNOUT_FLOAT_OP(SigmoidOp, "sigmoid", M(1) / (M(1) + std::exp(-x)))
TURNOUT_FLOAT_OP(SqrtOp, "sqrt", std::sqrt(x))
TURNOUT_FLOAT_OP(RsqrtOp, "rsqrt", M(1) / std::sqrt(x))
TURNOUT_FLOAT_OP(ReciprocalOp, "reciprocal", M(1) / x)
TURNOUT_FLOAT_OP(ErfOp, "erf", std::erf(x))
TURNOUT_FLOAT_OP(AcoshOp, "acosh", std::acosh(x))
TURNOUT_FLOAT_OP(AsinhOp, "asinh", std::asinh(x))
TURNOUT_FLOAT_OP(AtanhOp, "atanh", std::atanh(x))
TURNOUT_FLOAT_OP(ErfcOp, "erfc", std::erfc(x))
TURNOUT_FLOAT_OP(LgammaOp, "lgamma", std::lgamma(x))
TURNOUT_FLOAT_OP(DigammaOp, "digamma", static_cast<M>(digammaOf(x)))
// polygamma: psi^(n), n >= 0 (checked by the kernels, checkPolygammaOrder).
// As torch 1.13: digamma (n = 0) and the n >= 2 functions in double, the
// trigamma function (n = 1) in the compute type (float for the 32- and
// 16-bit types), which decides its values next to the poles.
struct PolygammaOp {
  static constexpr const char* kName = "polygamma";
  static constexpr bool kFloat = true;
  static void check(const Tensor&) {}
  template <class M>
  static auto make(int64_t n) {
    return [n](M x) -> M {
      if (n == 0) return static_cast<M>(digammaOf(x));
      if (n == 1) return digamma_internal::trigamma<M>(x);
      return static_cast<M>(
          digamma_internal::polygammaHigh<M>(n, static_cast<double>(x)));
    };
  }
};

// angle of a real number: 0 for x >= 0 (and -0), pi for x < 0, NaN for NaN.
TURNOUT_FLOAT_OP(AngleOp, "angle",
                 std::isnan(x) ? x : (x < M(0) ? static_cast<M>(M_PI) : M(0)))
#undef TURNOUT_FLOAT_OP

struct NegOp {
  static constexpr const char* kName = "neg";
  static constexpr bool kFloat = false;
  static void check(const Tensor& self) {
    TURNOUT_CHECK(self.scalar_type() != ScalarType::Bool,
                  ErrorKind::InvalidArgument,
                  "Negation, the `-` operator, on a bool tensor is not "
                  "supported. If you are trying to invert a mask, use the `~` "
                  "or `logical_not()` operator instead.");
  }
  template <class M>
  static auto make(int64_t) {
    return [](M x) -> M { return wrappingNeg<M>(x); };
  }
};

struct AbsOp {
  static constexpr const char* kName = "abs";
  static constexpr bool kFloat = false;
  static void check(const Tensor& self) { rejectBool(self, "abs_cpu"); }
  template <class M>
  static auto make(int64_t) {
    return [](M x) -> M {
      if constexpr (std::is_floating_point_v<M>) {
        return std::abs(x);
      } else if constexpr (std::is_signed_v<M>) {
        return x < 0 ? wrappingNeg<M>(x) : x;  // the minimum stays itself
      } else {
        return x;
      }
    };
  }
};

struct ReluOp {
  static constexpr const char* kName = "relu";
  static constexpr bool kFloat = false;
  static void check(const Tensor& self) {
    TURNOUT_CHECK(self.scalar_type() != ScalarType::Bool,
                  ErrorKind::InvalidArgument,
                  "Boolean inputs not supported for relu");
  }
  template <class M>
  static auto make(int64_t) {
    // NaN stays NaN (x < 0 is false for it).
    return [](M x) -> M {
      if constexpr (std::is_signed_v<M> || std::is_floating_point_v<M>) {
        return x < M(0) ? M(0) : x;
      } else {
        return x;
      }
    };
  }
};

// bitwise_not: ~x for integers, !x for Bool; floating types refused.
struct BitwiseNotOp {
  static constexpr const char* kName = "bitwise_not";
  static constexpr bool kFloat = false;
  static void check(const Tensor& self) {
    TURNOUT_CHECK(isIntegralType(self.scalar_type(), /*include_bool=*/true),
                  ErrorKind::NotImplemented,
                  "\"bitwise_not_cpu\" not implemented for '",
                  toString(self.scalar_type()), "'");
  }
  template <class M>
  static auto make(int64_t) {
    return [](M x) -> M {
      if constexpr (std::is_same_v<M, bool>) {
        return !x;
      } else if constexpr (std::is_integral_v<M>) {
        return static_cast<M>(~x);
      } else {
        return x;  // not reached: check() refuses floating types
      }
    };
  }
};

struct SignOp {
  static constexpr const char* kName = "sign";
  static constexpr bool kFloat = false;
  static void check(const Tensor&) {}
  template <class M>
  static auto make(int64_t) {
    return [](M x) -> M {
      if constexpr (std::is_same_v<M, bool>) {
        return x;
      } else if constexpr (std::is_unsigned_v<M>) {
        return x > 0 ? M(1) : M(0);
      } else {
        // 0 for NaN and for signed zeros (both comparisons are false).
        return static_cast<M>(int(M(0) < x) - int(x < M(0)));
      }
    };
  }
};

// floor, ceil, round, trunc: integers are already whole (a copy); Bool is
// refused, as PyTorch does.
#define TURNOUT_ROUNDING_OP(Name, op_name, expr)                         \
  struct Name {                                                          \
    static constexpr const char* kName = op_name;                        \
    static constexpr bool kFloat = false;                                \
    static void check(const Tensor& self) { rejectBool(self, op_name); } \
    template <class M>                                                   \
    static auto make(int64_t) {                                          \
      return [](M x) -> M {                                              \
        if constexpr (std::is_floating_point_v<M>) {                     \
          return (expr);                                                 \
        } else {                                                         \
          return x;                                                      \
        }                                                                \
      };                                                                 \
    }                                                                    \
  };
TURNOUT_ROUNDING_OP(FloorOp, "floor", std::floor(x))
TURNOUT_ROUNDING_OP(CeilOp, "ceil", std::ceil(x))
TURNOUT_ROUNDING_OP(RoundOp, "round", std::nearbyint(x))
TURNOUT_ROUNDING_OP(TruncOp, "trunc", std::trunc(x))
#undef TURNOUT_ROUNDING_OP

// round.decimals: floating inputs only; x * 10^d rounded half to even, then
// divided back (for d < 0: divided by 10^-d, rounded, multiplied back).
struct RoundDecimalsOp {
  static constexpr const char* kName = "round";
  static constexpr bool kFloat = false;
  static void check(const Tensor& self) {
    TURNOUT_CHECK(isFloatingType(self.scalar_type()), ErrorKind::NotImplemented,
                  "\"round_cpu\" not implemented for '",
                  toString(self.scalar_type()), "'");
  }
  template <class M>
  static auto make(int64_t decimals) {
    const bool negative = decimals < 0;
    const M ten_pow =
        std::is_floating_point_v<M>
            ? static_cast<M>(std::pow(10.0, static_cast<double>(
                                                negative ? -decimals : decimals)))
            : M(1);
    return [negative, ten_pow](M x) -> M {
      if constexpr (std::is_floating_point_v<M>) {
        return negative ? std::nearbyint(x / ten_pow) * ten_pow
                        : std::nearbyint(x * ten_pow) / ten_pow;
      } else {
        return x;
      }
    };
  }
};

// ---- Kernels -----------------------------------------------------------------

template <class Op>
ScalarType resultTypeOf(const char* op, const Tensor& self) {
  TURNOUT_CHECK(self.defined(), ErrorKind::InvalidArgument, op,
                ": expected a defined tensor, but got an undefined one");
  Op::check(self);
  return Op::kFloat ? toFloatingType(self.scalar_type()) : self.scalar_type();
}

// dst (dtype `compute`, self's sizes, CPU) = op(self).
template <class Op>
void computeInto(const Tensor& dst, const Tensor& self, ScalarType compute,
                 int64_t param) {
  if (dst.numel() == 0) return;
  auto body = [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = OpMathType<T>;
    const auto fn = Op::template make<M>(param);
    cpuKernel(dst, castTo(self, compute),
              [fn](T x) -> T { return T(fn(M(x))); });
  };
  if constexpr (Op::kFloat) {
    visitFloatingDtype(compute, Op::kName, body);
  } else {
    visitDtype(compute, Op::kName, body);
  }
}

template <bool kCpu, class Op>
Tensor functional(const Tensor& self, int64_t param) {
  const ScalarType result = resultTypeOf<Op>(Op::kName, self);
  // torch 1.13's layout: self's when it is dense (kernels/output_layout.h).
  Tensor out = emptyElementwiseOutput(self.sizes(), result, self.device(),
                                      {&self});
  if constexpr (kCpu) computeInto<Op>(out, self, result, param);
  return out;
}

// InvalidArgument (RuntimeError in Python), as torch 1.13 raises it.
void checkCastable(ScalarType result, const Tensor& written) {
  TURNOUT_CHECK(canCast(result, written.scalar_type()),
                ErrorKind::InvalidArgument,
                "result type ", toString(result),
                " can't be cast to the desired output type ",
                toString(written.scalar_type()));
}

template <bool kCpu, class Op>
Tensor& inplace(Tensor& self, int64_t param) {
  const std::string op = std::string(Op::kName) + "_";
  const ScalarType result = resultTypeOf<Op>(op.c_str(), self);
  checkCastable(result, self);
  checkNoInternalOverlap(self, op);
  if constexpr (kCpu) {
    if (self.scalar_type() == result) {
      // The same memory with the same strides: fine for cpuKernel.
      computeInto<Op>(self, self, result, param);
    } else {
      copyCast(self, functional<true, Op>(self, param));
    }
  }
  return self;
}

template <bool kCpu, class Op>
Tensor& outKernel(const Tensor& self, Tensor& out, int64_t param) {
  const std::string op = std::string(Op::kName) + ".out";
  const ScalarType result = resultTypeOf<Op>(op.c_str(), self);
  TURNOUT_CHECK(out.defined(), ErrorKind::InvalidArgument, op,
                ": expected a defined out tensor");
  if constexpr (Op::kFloat || std::is_same_v<Op, ReluOp>) {
    // relu.out is generated from relu in PyTorch: it casts into out too.
    checkCastable(result, out);
  } else {
    // As PyTorch: the dtype-keeping operators write only their own dtype.
    TURNOUT_CHECK(out.scalar_type() == result, ErrorKind::Type, "Found dtype ",
                  toString(out.scalar_type()), " but expected ",
                  toString(result));
  }
  reduce_internal::checkSameDevice(op.c_str(), self, out);
  reduce_internal::resizeElementwiseOutput(out, self.sizes(), {&self},
                                           op.c_str());
  checkNoInternalOverlap(out, op);
  if constexpr (kCpu) {
    const MemOverlap overlap = memOverlap(out, self);
    if (overlap == MemOverlap::Partial) checkNoPartialOverlap(out, self, op);
    if (out.scalar_type() == result && overlap != MemOverlap::TooHard) {
      computeInto<Op>(out, self, result, param);
    } else {
      // A cast on the way, or memory shared in a layout whose overlap is not
      // computed: compute aside, then copy.
      copyCast(out, functional<true, Op>(self, param));
    }
  }
  return out;
}

// The kernels with the schemas' signatures.
template <bool kCpu, class Op>
Tensor fnKernel(const Tensor& self) {
  return functional<kCpu, Op>(self, 0);
}
template <bool kCpu, class Op>
Tensor& inplaceKernel(Tensor& self) {
  return inplace<kCpu, Op>(self, 0);
}
template <bool kCpu, class Op>
Tensor& outOnlyKernel(const Tensor& self, Tensor& out) {
  return outKernel<kCpu, Op>(self, out, 0);
}
template <bool kCpu>
Tensor roundDecimals(const Tensor& self, int64_t decimals) {
  return functional<kCpu, RoundDecimalsOp>(self, decimals);
}
template <bool kCpu>
Tensor& roundDecimalsInplace(Tensor& self, int64_t decimals) {
  return inplace<kCpu, RoundDecimalsOp>(self, decimals);
}
template <bool kCpu>
Tensor& roundDecimalsOut(const Tensor& self, int64_t decimals, Tensor& out) {
  return outKernel<kCpu, RoundDecimalsOp>(self, out, decimals);
}

// polygamma's kernels: n checked first (Meta too), then, on CPU, Half
// refused under the name of the function torch 1.13 would compute (its
// digamma, trigamma and polygamma kernels have no Half form).
void checkPolygammaOrder(int64_t n) {
  TURNOUT_CHECK(n >= 0, ErrorKind::InvalidArgument,
                "polygamma(n, x) does not support negative n.");
}
template <bool kCpu>
void checkPolygammaDtype(int64_t n, const Tensor& self) {
  if constexpr (kCpu) {
    if (self.defined() &&
        toFloatingType(self.scalar_type()) == ScalarType::Half) {
      detail::throwNotImplementedForDtype(
          n == 0 ? "digamma" : (n == 1 ? "trigamma" : "polygamma"),
          ScalarType::Half);
    }
  }
}
template <bool kCpu>
Tensor polygammaKernel(int64_t n, const Tensor& self) {
  checkPolygammaOrder(n);
  checkPolygammaDtype<kCpu>(n, self);
  return functional<kCpu, PolygammaOp>(self, n);
}
template <bool kCpu>
Tensor& polygammaInplaceKernel(Tensor& self, int64_t n) {
  checkPolygammaOrder(n);
  checkPolygammaDtype<kCpu>(n, self);
  return inplace<kCpu, PolygammaOp>(self, n);
}
template <bool kCpu>
Tensor& polygammaOutKernel(int64_t n, const Tensor& self, Tensor& out) {
  checkPolygammaOrder(n);
  checkPolygammaDtype<kCpu>(n, self);
  return outKernel<kCpu, PolygammaOp>(self, out, n);
}

// ---- Front end ------------------------------------------------------------------

template <class Sig>
TypedOperatorHandle<Sig> lookup(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}
Tensor& mut(const Tensor& t) { return const_cast<Tensor&>(t); }

}  // namespace

#define TURNOUT_FRONT_INPLACE_OUT(name)                                        \
  const Tensor& name##_(const Tensor& self) {                                  \
    static const auto op = lookup<Tensor&(Tensor&)>("aten::" #name "_", "");   \
    return op.call(mut(self));                                                 \
  }                                                                            \
  const Tensor& name##_out(const Tensor& out, const Tensor& self) {            \
    static const auto op =                                                     \
        lookup<Tensor&(const Tensor&, Tensor&)>("aten::" #name, "out");        \
    return op.call(self, mut(out));                                            \
  }
#define TURNOUT_FRONT_ALL(name)                                                \
  Tensor name(const Tensor& self) {                                            \
    static const auto op = lookup<Tensor(const Tensor&)>("aten::" #name, "");  \
    return op.call(self);                                                      \
  }                                                                            \
  TURNOUT_FRONT_INPLACE_OUT(name)

TURNOUT_FRONT_INPLACE_OUT(exp)
TURNOUT_FRONT_INPLACE_OUT(log)
TURNOUT_FRONT_INPLACE_OUT(sqrt)
TURNOUT_FRONT_INPLACE_OUT(tanh)
TURNOUT_FRONT_INPLACE_OUT(sigmoid)
TURNOUT_FRONT_INPLACE_OUT(neg)
TURNOUT_FRONT_INPLACE_OUT(abs)
TURNOUT_FRONT_INPLACE_OUT(relu)
TURNOUT_FRONT_ALL(sin)
TURNOUT_FRONT_ALL(cos)
TURNOUT_FRONT_ALL(tan)
TURNOUT_FRONT_ALL(asin)
TURNOUT_FRONT_ALL(acos)
TURNOUT_FRONT_ALL(atan)
TURNOUT_FRONT_ALL(sinh)
TURNOUT_FRONT_ALL(cosh)
TURNOUT_FRONT_ALL(expm1)
TURNOUT_FRONT_ALL(log2)
TURNOUT_FRONT_ALL(log10)
TURNOUT_FRONT_ALL(log1p)
TURNOUT_FRONT_ALL(rsqrt)
TURNOUT_FRONT_ALL(reciprocal)
TURNOUT_FRONT_ALL(erf)
TURNOUT_FRONT_ALL(acosh)
TURNOUT_FRONT_ALL(asinh)
TURNOUT_FRONT_ALL(atanh)
TURNOUT_FRONT_ALL(erfc)
TURNOUT_FRONT_ALL(lgamma)
TURNOUT_FRONT_ALL(digamma)
TURNOUT_FRONT_ALL(sign)
TURNOUT_FRONT_ALL(floor)
TURNOUT_FRONT_ALL(ceil)
TURNOUT_FRONT_ALL(round)
TURNOUT_FRONT_ALL(trunc)
TURNOUT_FRONT_ALL(bitwise_not)
#undef TURNOUT_FRONT_ALL
#undef TURNOUT_FRONT_INPLACE_OUT

Tensor angle(const Tensor& self) {
  static const auto op = lookup<Tensor(const Tensor&)>("aten::angle", "");
  return op.call(self);
}

const Tensor& angle_out(const Tensor& out, const Tensor& self) {
  static const auto op =
      lookup<Tensor&(const Tensor&, Tensor&)>("aten::angle", "out");
  return op.call(self, mut(out));
}

Tensor polygamma(int64_t n, const Tensor& self) {
  static const auto op =
      lookup<Tensor(int64_t, const Tensor&)>("aten::polygamma", "");
  return op.call(n, self);
}

const Tensor& polygamma_(const Tensor& self, int64_t n) {
  static const auto op =
      lookup<Tensor&(Tensor&, int64_t)>("aten::polygamma_", "");
  return op.call(mut(self), n);
}

const Tensor& polygamma_out(const Tensor& out, int64_t n, const Tensor& self) {
  static const auto op = lookup<Tensor&(int64_t, const Tensor&, Tensor&)>(
      "aten::polygamma", "out");
  return op.call(n, self, mut(out));
}

Tensor round(const Tensor& self, int64_t decimals) {
  static const auto op =
      lookup<Tensor(const Tensor&, int64_t)>("aten::round", "decimals");
  return op.call(self, decimals);
}

const Tensor& round_(const Tensor& self, int64_t decimals) {
  static const auto op =
      lookup<Tensor&(Tensor&, int64_t)>("aten::round_", "decimals");
  return op.call(mut(self), decimals);
}

}  // namespace turnout

// ---- Registration ------------------------------------------------------------------

// The operators whose functional form is defined here.
#define TURNOUT_UNARY_MATH_NEW(X)                                          \
  X(sin, SinOp) X(cos, CosOp) X(tan, TanOp) X(asin, AsinOp) X(acos, AcosOp) \
  X(atan, AtanOp) X(sinh, SinhOp) X(cosh, CoshOp) X(expm1, Expm1Op)        \
  X(log2, Log2Op) X(log10, Log10Op) X(log1p, Log1pOp) X(rsqrt, RsqrtOp)    \
  X(reciprocal, ReciprocalOp) X(erf, ErfOp) X(sign, SignOp)                \
  X(floor, FloorOp) X(ceil, CeilOp) X(round, RoundOp) X(trunc, TruncOp)     \
  X(bitwise_not, BitwiseNotOp) X(acosh, AcoshOp) X(asinh, AsinhOp)           \
  X(atanh, AtanhOp) X(erfc, ErfcOp) X(lgamma, LgammaOp) X(digamma, DigammaOp)
// Those whose functional form is in elementwise_kernels.cc.
#define TURNOUT_UNARY_MATH_OLD(X)                                     \
  X(exp, ExpOp) X(log, LogOp) X(sqrt, SqrtOp) X(tanh, TanhOp)         \
  X(sigmoid, SigmoidOp) X(neg, NegOp) X(abs, AbsOp) X(relu, ReluOp)

#define TURNOUT_DEF_FN(name, Op) m.def(#name "(Tensor self) -> Tensor");
#define TURNOUT_DEF_INPLACE_OUT(name, Op)                                 \
  m.def(#name "_(Tensor(a!) self) -> Tensor(a!)");                         \
  m.def(#name ".out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);
  TURNOUT_UNARY_MATH_NEW(TURNOUT_DEF_FN)
  TURNOUT_UNARY_MATH_NEW(TURNOUT_DEF_INPLACE_OUT)
  TURNOUT_UNARY_MATH_OLD(TURNOUT_DEF_INPLACE_OUT)
  // angle has no in-place form (a complex input's angle is real).
  m.def("angle(Tensor self) -> Tensor");
  m.def("angle.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("polygamma(int n, Tensor self) -> Tensor");
  m.def("polygamma_(Tensor(a!) self, int n) -> Tensor(a!)");
  m.def("polygamma.out(int n, Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("round.decimals(Tensor self, *, int decimals) -> Tensor");
  m.def("round_.decimals(Tensor(a!) self, *, int decimals) -> Tensor(a!)");
  m.def(
      "round.decimals_out(Tensor self, *, int decimals, Tensor(a!) out) -> "
      "Tensor(a!)");
}
#undef TURNOUT_DEF_FN
#undef TURNOUT_DEF_INPLACE_OUT

#define TURNOUT_IMPL_FN(name, Op) \
  m.impl(#name, TURNOUT_FN((fnKernel<kCpu, Op>)));
#define TURNOUT_IMPL_INPLACE_OUT(name, Op)                    \
  m.impl(#name "_", TURNOUT_FN((inplaceKernel<kCpu, Op>)));    \
  m.impl(#name ".out", TURNOUT_FN((outOnlyKernel<kCpu, Op>)));

namespace turnout {
namespace {
template <bool kCpu>
void registerUnaryMath(Library& m) {
  TURNOUT_UNARY_MATH_NEW(TURNOUT_IMPL_FN)
  TURNOUT_UNARY_MATH_NEW(TURNOUT_IMPL_INPLACE_OUT)
  TURNOUT_UNARY_MATH_OLD(TURNOUT_IMPL_INPLACE_OUT)
  m.impl("angle", TURNOUT_FN((fnKernel<kCpu, AngleOp>)));
  m.impl("angle.out", TURNOUT_FN((outOnlyKernel<kCpu, AngleOp>)));
  m.impl("polygamma", TURNOUT_FN(polygammaKernel<kCpu>));
  m.impl("polygamma_", TURNOUT_FN(polygammaInplaceKernel<kCpu>));
  m.impl("polygamma.out", TURNOUT_FN(polygammaOutKernel<kCpu>));
  m.impl("round.decimals", TURNOUT_FN(roundDecimals<kCpu>));
  m.impl("round_.decimals", TURNOUT_FN(roundDecimalsInplace<kCpu>));
  m.impl("round.decimals_out", TURNOUT_FN(roundDecimalsOut<kCpu>));
}
}  // namespace
}  // namespace turnout
#undef TURNOUT_IMPL_FN
#undef TURNOUT_IMPL_INPLACE_OUT

TURNOUT_LIBRARY_IMPL(aten, CPU, m) { turnout::registerUnaryMath<true>(m); }
TURNOUT_LIBRARY_IMPL(aten, Meta, m) { turnout::registerUnaryMath<false>(m); }
