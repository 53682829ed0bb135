// CUDA kernels of the pointwise operators of issues 18 and 20, registered
// at the CUDA key: the unary math operators (sin ... erf, acosh, asinh,
// atanh, erfc, lgamma, digamma, sign, floor, ceil, round, round.decimals,
// trunc, bitwise_not, polygamma: functional, in-place and out=; angle:
// functional and out=), the in-place and out= overloads of exp, log, sqrt,
// tanh, sigmoid, neg, abs and relu (their functional forms are in
// elementwise.cc), maximum, minimum, fmod.Tensor, remainder.Tensor,
// pow.Tensor_Tensor, floor_divide, bitwise_xor.Tensor (with their in-place
// forms), tanh_backward, sigmoid_backward, remainder.Tensor_out, pow.Tensor_Tensor_out, pow.Tensor_Scalar_out,
// logical_not (logical_not_), masked_fill_ (.Scalar, .Tensor), where.self_out,
// and addcmul, addcdiv, lerp (.Scalar, .Tensor) with their in-place and out=
// overloads.
//
// As elementwise.cc's: each kernel redispatches to the operator's Meta
// kernel on meta stand-ins for sizes, dtype and every check, then runs
// elementwise.cu (cuda_loops.h's runElementwise) in the dtype the
// functional Meta kernel gives. The activations (gelu, silu, elu,
// leaky_relu, hardtanh, softplus and their backward operators), clamp_,
// masked_fill, the Scalar overloads of fmod, remainder, pow, floor_divide
// and bitwise_xor (remainder's and pow's out= ones too), logsumexp, norm, var
// and std are composite kernels over these and elementwise.cc's, so they run on
// CUDA through them.
//
// One difference from the CPU kernels: an integer fmod, remainder or
// floor_divide by zero gives 0 instead of raising ZeroDivisionError (device
// code cannot throw, and torch's CUDA kernels do not raise either).
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/cuda/cuda_loops.h"
#include "kernels/factory.h"
#include "kernels/mem_overlap.h"
#include "kernels/tensor_utils.h"
#include "kernels/type_promotion.h"

namespace turnout {
namespace cuda {
namespace {

using Scalars = std::initializer_list<std::optional<ScalarArg>>;

// The end of an out= kernel whose Meta kernel accepted the call on the
// stand-in `meta_out`: computes straight into `out` when its shape stays,
// else into a new tensor that finishOut copies into the resized out.
Tensor& computeOut(std::string_view op, ElementwiseOp kind, ScalarType compute,
                   const Tensor& meta_out, Tensor& out,
                   std::initializer_list<Tensor> inputs, Scalars scalars = {},
                   int scalar_input = -1) {
  if (out.sizes() == meta_out.sizes()) {
    int k = 0;
    for (const Tensor& in : inputs) {
      if (k++ != scalar_input && !isCpuScalar(in)) {
        checkNoPartialOverlap(out, in, op);
      }
    }
    runElementwise(op, kind, compute, out, inputs, scalars, scalar_input);
    return out;
  }
  const Tensor result = emptyLikeMeta(meta_out, compute, out.device());
  runElementwise(op, kind, compute, result, inputs, scalars, scalar_input);
  return finishOut(op, meta_out, result, out);
}

// ---- Unary operators ---------------------------------------------------------

// One unary operator: its schema names and its element operation.
#define TURNOUT_CUDA_UNARY_SPEC(name, Kind)                      \
  struct Kind##Spec {                                            \
    static constexpr const char* kOp = "aten::" #name;           \
    static constexpr const char* kInplaceOp = "aten::" #name "_"; \
    static constexpr const char* kName = #name;                  \
    static constexpr const char* kInplaceName = #name "_";       \
    static constexpr const char* kOutName = #name ".out";        \
    static constexpr ElementwiseOp kKind = ElementwiseOp::Kind;  \
  };

// Those whose functional form is registered here, then those whose
// functional form is elementwise.cc's.
#define TURNOUT_CUDA_UNARY_NEW(X)                                          \
  X(sin, Sin) X(cos, Cos) X(tan, Tan) X(asin, Asin) X(acos, Acos)          \
  X(atan, Atan) X(sinh, Sinh) X(cosh, Cosh) X(expm1, Expm1) X(log2, Log2)  \
  X(log10, Log10) X(log1p, Log1p) X(rsqrt, Rsqrt)                          \
  X(reciprocal, Reciprocal) X(erf, Erf) X(sign, Sign) X(floor, Floor)      \
  X(ceil, Ceil) X(round, Round) X(trunc, Trunc) X(bitwise_not, BitwiseNot) \
  X(acosh, Acosh) X(asinh, Asinh) X(atanh, Atanh) X(erfc, Erfc)            \
  X(lgamma, Lgamma) X(digamma, Digamma)
#define TURNOUT_CUDA_UNARY_OLD(X)                                          \
  X(exp, Exp) X(log, Log) X(sqrt, Sqrt) X(tanh, Tanh) X(sigmoid, Sigmoid)  \
  X(neg, Neg) X(abs, Abs) X(relu, Relu)

TURNOUT_CUDA_UNARY_NEW(TURNOUT_CUDA_UNARY_SPEC)
TURNOUT_CUDA_UNARY_OLD(TURNOUT_CUDA_UNARY_SPEC)
TURNOUT_CUDA_UNARY_SPEC(angle, Angle)  // no in-place form
#undef TURNOUT_CUDA_UNARY_SPEC

// The dtype the operator computes in: its functional Meta kernel's result
// (the default float dtype for integral inputs of the floating operators).
template <class S>
ScalarType unaryCompute(const Tensor& self) {
  static const auto op = typedOp<Tensor(const Tensor&)>(S::kOp, "");
  return op.redispatch(metaKeys(), metaLike(self)).scalar_type();
}

template <class S>
Tensor unaryFunctional(const Tensor& self) {
  static const auto op = typedOp<Tensor(const Tensor&)>(S::kOp, "");
  const Device device = checkCudaDevices(S::kName, {&self});
  const Tensor m = op.redispatch(metaKeys(), metaLike(self));
  Tensor out = emptyLikeMeta(m, m.scalar_type(), device);
  runElementwise(S::kName, S::kKind, m.scalar_type(), out, {self});
  return out;
}

template <class S>
Tensor& unaryInplace(Tensor& self) {
  static const auto op = typedOp<Tensor&(Tensor&)>(S::kInplaceOp, "");
  checkCudaDevices(S::kInplaceName, {}, &self);
  Tensor ms = metaLike(self);
  op.redispatch(metaKeys(), ms);  // castability and internal overlap
  runElementwise(S::kInplaceName, S::kKind, unaryCompute<S>(self), self,
                 {self});
  return self;
}

template <class S>
Tensor& unaryOut(const Tensor& self, Tensor& out) {
  static const auto op =
      typedOp<Tensor&(const Tensor&, Tensor&)>(S::kOp, "out");
  checkCudaDevices(S::kOutName, {&self}, &out);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), metaLike(self), mo);
  return computeOut(S::kOutName, S::kKind, unaryCompute<S>(self), mo, out,
                    {self});
}

// round.decimals: x * 10^d rounded half to even, divided back (d < 0:
// divided by 10^-d, rounded, multiplied back), as the CPU kernel.
ScalarArg roundDecimalsArg(int64_t decimals) {
  ScalarArg arg;
  arg.f = std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals
                                                          : decimals));
  arg.i = decimals < 0 ? 1 : 0;
  return arg;
}

Tensor roundDecimals(const Tensor& self, int64_t decimals) {
  static const auto op =
      typedOp<Tensor(const Tensor&, int64_t)>("aten::round", "decimals");
  const Device device = checkCudaDevices("round", {&self});
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), decimals);
  Tensor out = emptyLikeMeta(m, m.scalar_type(), device);
  runElementwise("round", ElementwiseOp::RoundDecimals, m.scalar_type(), out,
                 {self}, {roundDecimalsArg(decimals)});
  return out;
}

Tensor& roundDecimalsInplace(Tensor& self, int64_t decimals) {
  static const auto op =
      typedOp<Tensor&(Tensor&, int64_t)>("aten::round_", "decimals");
  checkCudaDevices("round_", {}, &self);
  Tensor ms = metaLike(self);
  op.redispatch(metaKeys(), ms, decimals);
  runElementwise("round_", ElementwiseOp::RoundDecimals, self.scalar_type(),
                 self, {self}, {roundDecimalsArg(decimals)});
  return self;
}

Tensor& roundDecimalsOut(const Tensor& self, int64_t decimals, Tensor& out) {
  static const auto op = typedOp<Tensor&(const Tensor&, int64_t, Tensor&)>(
      "aten::round", "decimals_out");
  checkCudaDevices("round.decimals_out", {&self}, &out);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), metaLike(self), decimals, mo);
  return computeOut("round.decimals_out", ElementwiseOp::RoundDecimals,
                    self.scalar_type(), mo, out, {self},
                    {roundDecimalsArg(decimals)});
}

// polygamma(n, x): n in scalar0.i; the Meta kernels check n and the
// dtypes, the functional one gives the compute dtype.
ScalarArg polygammaArg(int64_t n) {
  ScalarArg arg;
  arg.i = n;
  return arg;
}

ScalarType polygammaCompute(int64_t n, const Tensor& self) {
  static const auto op =
      typedOp<Tensor(int64_t, const Tensor&)>("aten::polygamma", "");
  return op.redispatch(metaKeys(), n, metaLike(self)).scalar_type();
}

Tensor polygammaFunctional(int64_t n, const Tensor& self) {
  const Device device = checkCudaDevices("polygamma", {&self});
  static const auto op =
      typedOp<Tensor(int64_t, const Tensor&)>("aten::polygamma", "");
  const Tensor m = op.redispatch(metaKeys(), n, metaLike(self));
  Tensor out = emptyLikeMeta(m, m.scalar_type(), device);
  runElementwise("polygamma", ElementwiseOp::Polygamma, m.scalar_type(), out,
                 {self}, {polygammaArg(n)});
  return out;
}

Tensor& polygammaInplace(Tensor& self, int64_t n) {
  static const auto op =
      typedOp<Tensor&(Tensor&, int64_t)>("aten::polygamma_", "");
  checkCudaDevices("polygamma_", {}, &self);
  Tensor ms = metaLike(self);
  op.redispatch(metaKeys(), ms, n);  // n, castability and internal overlap
  runElementwise("polygamma_", ElementwiseOp::Polygamma,
                 polygammaCompute(n, self), self, {self}, {polygammaArg(n)});
  return self;
}

Tensor& polygammaOut(int64_t n, const Tensor& self, Tensor& out) {
  static const auto op = typedOp<Tensor&(int64_t, const Tensor&, Tensor&)>(
      "aten::polygamma", "out");
  checkCudaDevices("polygamma.out", {&self}, &out);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), n, metaLike(self), mo);
  return computeOut("polygamma.out", ElementwiseOp::Polygamma,
                    polygammaCompute(n, self), mo, out, {self},
                    {polygammaArg(n)});
}

// ---- Binary operators ------------------------------------------------------------

// One binary operator: its functional overload and, where it has one, its
// in-place overload (both take (self, Tensor other)).
#define TURNOUT_CUDA_BINARY_SPEC(name, overload, Kind)             \
  struct Kind##Spec {                                              \
    static constexpr const char* kOp = "aten::" #name;             \
    static constexpr const char* kOverload = overload;             \
    static constexpr const char* kInplaceOp = "aten::" #name "_";  \
    static constexpr const char* kName = #name;                    \
    static constexpr const char* kInplaceName = #name "_";         \
    static constexpr ElementwiseOp kKind = ElementwiseOp::Kind;    \
  };
TURNOUT_CUDA_BINARY_SPEC(maximum, "", Maximum)
TURNOUT_CUDA_BINARY_SPEC(minimum, "", Minimum)
TURNOUT_CUDA_BINARY_SPEC(fmod, "Tensor", Fmod)
TURNOUT_CUDA_BINARY_SPEC(remainder, "Tensor", Remainder)
TURNOUT_CUDA_BINARY_SPEC(pow, "Tensor_Tensor", PowTensor)
TURNOUT_CUDA_BINARY_SPEC(floor_divide, "", FloorDivide)
TURNOUT_CUDA_BINARY_SPEC(bitwise_xor, "Tensor", BitwiseXor)
#undef TURNOUT_CUDA_BINARY_SPEC

template <class S>
Tensor binaryFunctional(const Tensor& self, const Tensor& other) {
  static const auto op =
      typedOp<Tensor(const Tensor&, const Tensor&)>(S::kOp, S::kOverload);
  const Device device = checkCudaDevices(S::kName, {&self, &other});
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), metaLike(other));
  Tensor out = emptyLikeMeta(m, m.scalar_type(), device);
  runElementwise(S::kName, S::kKind, m.scalar_type(), out, {self, other});
  return out;
}

// The in-place forms compute in the promoted dtype of self and other, as
// the functional ones, and write self's dtype (the Meta kernel checked
// that it holds the result). An `other` that overlaps self in another
// layout is read from a copy (runElementwise), as the CPU kernels compute
// aside.
template <class S>
Tensor& binaryInplace(Tensor& self, const Tensor& other) {
  static const auto op =
      typedOp<Tensor&(Tensor&, const Tensor&)>(S::kInplaceOp, "Tensor");
  checkCudaDevices(S::kInplaceName, {&other}, &self);
  Tensor ms = metaLike(self);
  op.redispatch(metaKeys(), ms, metaLike(other));
  runElementwise(S::kInplaceName, S::kKind, resultType(self, other), self,
                 {self, other});
  return self;
}

// remainder.Tensor_out and pow.Tensor_Tensor_out: the out= overload's Meta
// kernel checks the call (out's dtype must hold the promoted one, no
// partial overlap) and resizes the stand-in; computed in the functional
// Meta kernel's dtype, as the functional kernel.
template <class S>
struct OutOf;
template <>
struct OutOf<RemainderSpec> {
  static constexpr const char* kOverload = "Tensor_out";
  static constexpr const char* kName = "remainder.Tensor_out";
};
template <>
struct OutOf<PowTensorSpec> {
  static constexpr const char* kOverload = "Tensor_Tensor_out";
  static constexpr const char* kName = "pow.Tensor_Tensor_out";
};

template <class S>
Tensor& binaryOut(const Tensor& self, const Tensor& other, Tensor& out) {
  static const auto op =
      typedOp<Tensor&(const Tensor&, const Tensor&, Tensor&)>(
          S::kOp, OutOf<S>::kOverload);
  static const auto fn =
      typedOp<Tensor(const Tensor&, const Tensor&)>(S::kOp, S::kOverload);
  checkCudaDevices(OutOf<S>::kName, {&self, &other}, &out);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), metaLike(self), metaLike(other), mo);
  const ScalarType compute =
      fn.redispatch(metaKeys(), metaLike(self), metaLike(other)).scalar_type();
  return computeOut(OutOf<S>::kName, S::kKind, compute, mo, out,
                    {self, other});
}

// pow.Tensor_Scalar_out: out has the functional result's dtype exactly (the
// Meta kernel checks it), and the exponent is read as elementwise.cc's
// pow.Tensor_Scalar reads it.
Tensor& powTensorScalarOut(const Tensor& self, const Scalar& exponent,
                           Tensor& out) {
  static const auto op =
      typedOp<Tensor&(const Tensor&, const Scalar&, Tensor&)>(
          "aten::pow", "Tensor_Scalar_out");
  checkCudaDevices("pow.Tensor_Scalar_out", {&self}, &out);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), metaLike(self), exponent, mo);
  const ScalarType compute = mo.scalar_type();
  ScalarArg e;
  e.f = exponent.toDouble();
  e.i = isFloatingType(compute) ? 0 : exponent.toLong();
  return computeOut("pow.Tensor_Scalar_out", ElementwiseOp::Pow, compute, mo,
                    out, {self}, {e});
}

// ---- logical_not, masked_fill_, where.self_out -----------------------------------

// logical_not reads its input in the input's own dtype (x == 0), so a NaN
// is true and its negation false, as the CPU kernel's cast to Bool.
Tensor logicalNot(const Tensor& self) {
  static const auto op =
      typedOp<Tensor(const Tensor&)>("aten::logical_not", "");
  const Device device = checkCudaDevices("logical_not", {&self});
  const Tensor m = op.redispatch(metaKeys(), metaLike(self));
  Tensor out = emptyLikeMeta(m, m.scalar_type(), device);
  runElementwise("logical_not", ElementwiseOp::LogicalNot, self.scalar_type(),
                 out, {self});
  return out;
}

Tensor& logicalNotInplace(Tensor& self) {
  static const auto op = typedOp<Tensor&(Tensor&)>("aten::logical_not_", "");
  checkCudaDevices("logical_not_", {}, &self);
  Tensor ms = metaLike(self);
  op.redispatch(metaKeys(), ms);
  runElementwise("logical_not_", ElementwiseOp::LogicalNot, self.scalar_type(),
                 self, {self});
  return self;
}

// self = mask ? value : self. The value is first converted to self's dtype
// as the CPU kernel converts it (through a 0-dim tensor of that dtype, which
// also range-checks it), then passed exactly.
Tensor& maskedFillScalar(Tensor& self, const Tensor& mask, const Scalar& value) {
  static const auto op =
      typedOp<Tensor&(Tensor&, const Tensor&, const Scalar&)>(
          "aten::masked_fill_", "Scalar");
  checkCudaDevices("masked_fill_", {&mask}, &self);
  Tensor ms = metaLike(self);
  op.redispatch(metaKeys(), ms, metaLike(mask), value);
  const ScalarType dtype = self.scalar_type();
  const Scalar exact = full({}, value, TensorOptions(dtype)).item();
  runElementwise("masked_fill_", ElementwiseOp::Where, dtype, self,
                 {mask, self, self},
                 {std::nullopt, scalarArg(exact, dtype, "masked_fill_")},
                 /*scalar_input=*/1);
  return self;
}

Tensor& maskedFillTensor(Tensor& self, const Tensor& mask, const Tensor& value) {
  static const auto op =
      typedOp<Tensor&(Tensor&, const Tensor&, const Tensor&)>(
          "aten::masked_fill_", "Tensor");
  checkCudaDevices("masked_fill_", {&mask, &value}, &self);
  Tensor ms = metaLike(self);
  op.redispatch(metaKeys(), ms, metaLike(mask), metaLike(value));
  runElementwise("masked_fill_", ElementwiseOp::Where, self.scalar_type(),
                 self, {mask, value, self});
  return self;
}

Tensor& whereSelfOut(const Tensor& condition, const Tensor& self,
                     const Tensor& other, Tensor& out) {
  static const auto op =
      typedOp<Tensor&(const Tensor&, const Tensor&, const Tensor&, Tensor&)>(
          "aten::where", "self_out");
  static const auto fn =
      typedOp<Tensor(const Tensor&, const Tensor&, const Tensor&)>(
          "aten::where", "self");
  checkCudaDevices("where.self_out", {&condition, &self, &other}, &out);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), metaLike(condition), metaLike(self),
                metaLike(other), mo);
  const ScalarType compute =
      fn.redispatch(metaKeys(), metaLike(condition), metaLike(self),
                    metaLike(other))
          .scalar_type();
  return computeOut("where.self_out", ElementwiseOp::Where, compute, mo, out,
                    {condition, self, other});
}

// ---- addcmul, addcdiv, lerp -----------------------------------------------------

// The dtypes torch 1.13's CUDA kernels take (the Meta kernels accept any).
void checkCudaDtype(const char* kernel, ScalarType compute,
                    bool floating_only) {
  const bool ok = floating_only ? isFloatingType(compute)
                                : compute != ScalarType::Bool;
  TURNOUT_CHECK(ok, ErrorKind::NotImplemented, "\"", kernel,
                "\" not implemented for '", toString(compute), "'");
}

using AddcSig = Tensor(const Tensor&, const Tensor&, const Tensor&,
                       const Scalar&);
using AddcInplaceSig = Tensor&(Tensor&, const Tensor&, const Tensor&,
                               const Scalar&);
using AddcOutSig = Tensor&(const Tensor&, const Tensor&, const Tensor&,
                           const Scalar&, Tensor&);

template <bool kMul>
struct AddcNames {
  static constexpr const char* kOp = kMul ? "aten::addcmul" : "aten::addcdiv";
  static constexpr const char* kInplaceOp =
      kMul ? "aten::addcmul_" : "aten::addcdiv_";
  static constexpr const char* kName = kMul ? "addcmul" : "addcdiv";
  static constexpr const char* kInplaceName = kMul ? "addcmul_" : "addcdiv_";
  static constexpr const char* kOutName = kMul ? "addcmul.out" : "addcdiv.out";
  static constexpr const char* kKernel =
      kMul ? "addcmul_cuda" : "addcdiv_cuda";
  static constexpr ElementwiseOp kKind =
      kMul ? ElementwiseOp::Addcmul : ElementwiseOp::Addcdiv;
};

template <bool kMul>
Tensor addcFunctional(const Tensor& self, const Tensor& t1, const Tensor& t2,
                      const Scalar& value) {
  using N = AddcNames<kMul>;
  static const auto op = typedOp<AddcSig>(N::kOp, "");
  const Device device = checkCudaDevices(N::kName, {&self, &t1, &t2});
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), metaLike(t1),
                                 metaLike(t2), value);
  const ScalarType compute = m.scalar_type();
  checkCudaDtype(N::kKernel, compute, /*floating_only=*/false);
  Tensor out = emptyLikeMeta(m, compute, device);
  runElementwise(N::kName, N::kKind, compute, out, {self, t1, t2},
                 {scalarArg(value, compute, N::kName)});
  return out;
}

// The Meta kernels of the in-place and out= forms require self (out) to
// have the promoted dtype: it is the compute dtype.
template <bool kMul>
Tensor& addcInplace(Tensor& self, const Tensor& t1, const Tensor& t2,
                    const Scalar& value) {
  using N = AddcNames<kMul>;
  static const auto op = typedOp<AddcInplaceSig>(N::kInplaceOp, "");
  checkCudaDevices(N::kInplaceName, {&t1, &t2}, &self);
  Tensor ms = metaLike(self);
  op.redispatch(metaKeys(), ms, metaLike(t1), metaLike(t2), value);
  const ScalarType compute = self.scalar_type();
  checkCudaDtype(N::kKernel, compute, /*floating_only=*/false);
  runElementwise(N::kInplaceName, N::kKind, compute, self, {self, t1, t2},
                 {scalarArg(value, compute, N::kInplaceName)});
  return self;
}

template <bool kMul>
Tensor& addcOut(const Tensor& self, const Tensor& t1, const Tensor& t2,
                const Scalar& value, Tensor& out) {
  using N = AddcNames<kMul>;
  static const auto op = typedOp<AddcOutSig>(N::kOp, "out");
  checkCudaDevices(N::kOutName, {&self, &t1, &t2}, &out);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), metaLike(self), metaLike(t1), metaLike(t2), value,
                mo);
  const ScalarType compute = mo.scalar_type();
  checkCudaDtype(N::kKernel, compute, /*floating_only=*/false);
  return computeOut(N::kOutName, N::kKind, compute, mo, out, {self, t1, t2},
                    {scalarArg(value, compute, N::kOutName)});
}

// lerp: self, end (and a Tensor weight) have one dtype (the Meta kernels
// check it), which is the compute dtype; a Scalar weight is scalar 0.
Tensor lerpScalar(const Tensor& self, const Tensor& end, const Scalar& w) {
  static const auto op =
      typedOp<Tensor(const Tensor&, const Tensor&, const Scalar&)>(
          "aten::lerp", "Scalar");
  const Device device = checkCudaDevices("lerp", {&self, &end});
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), metaLike(end), w);
  const ScalarType compute = m.scalar_type();
  checkCudaDtype("lerp_cuda", compute, /*floating_only=*/true);
  Tensor out = emptyLikeMeta(m, compute, device);
  runElementwise("lerp", ElementwiseOp::Lerp, compute, out, {self, end},
                 {scalarArg(w, compute, "lerp")});
  return out;
}

Tensor lerpTensor(const Tensor& self, const Tensor& end, const Tensor& w) {
  static const auto op =
      typedOp<Tensor(const Tensor&, const Tensor&, const Tensor&)>(
          "aten::lerp", "Tensor");
  const Device device = checkCudaDevices("lerp", {&self, &end, &w});
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), metaLike(end),
                                 metaLike(w));
  const ScalarType compute = m.scalar_type();
  checkCudaDtype("lerp_cuda", compute, /*floating_only=*/true);
  Tensor out = emptyLikeMeta(m, compute, device);
  runElementwise("lerp", ElementwiseOp::Lerp, compute, out, {self, end, w});
  return out;
}

Tensor& lerpScalarInplace(Tensor& self, const Tensor& end, const Scalar& w) {
  static const auto op =
      typedOp<Tensor&(Tensor&, const Tensor&, const Scalar&)>("aten::lerp_",
                                                              "Scalar");
  checkCudaDevices("lerp_", {&end}, &self);
  Tensor ms = metaLike(self);
  op.redispatch(metaKeys(), ms, metaLike(end), w);
  const ScalarType compute = self.scalar_type();
  checkCudaDtype("lerp_cuda", compute, /*floating_only=*/true);
  runElementwise("lerp_", ElementwiseOp::Lerp, compute, self, {self, end},
                 {scalarArg(w, compute, "lerp_")});
  return self;
}

Tensor& lerpTensorInplace(Tensor& self, const Tensor& end, const Tensor& w) {
  static const auto op =
      typedOp<Tensor&(Tensor&, const Tensor&, const Tensor&)>("aten::lerp_",
                                                              "Tensor");
  checkCudaDevices("lerp_", {&end, &w}, &self);
  Tensor ms = metaLike(self);
  op.redispatch(metaKeys(), ms, metaLike(end), metaLike(w));
  const ScalarType compute = self.scalar_type();
  checkCudaDtype("lerp_cuda", compute, /*floating_only=*/true);
  runElementwise("lerp_", ElementwiseOp::Lerp, compute, self, {self, end, w});
  return self;
}

Tensor& lerpScalarOut(const Tensor& self, const Tensor& end, const Scalar& w,
                      Tensor& out) {
  static const auto op =
      typedOp<Tensor&(const Tensor&, const Tensor&, const Scalar&, Tensor&)>(
          "aten::lerp", "Scalar_out");
  checkCudaDevices("lerp.Scalar_out", {&self, &end}, &out);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), metaLike(self), metaLike(end), w, mo);
  const ScalarType compute = self.scalar_type();  // out may be wider
  checkCudaDtype("lerp_cuda", compute, /*floating_only=*/true);
  return computeOut("lerp.Scalar_out", ElementwiseOp::Lerp, compute, mo, out,
                    {self, end}, {scalarArg(w, compute, "lerp.Scalar_out")});
}

Tensor& lerpTensorOut(const Tensor& self, const Tensor& end, const Tensor& w,
                      Tensor& out) {
  static const auto op =
      typedOp<Tensor&(const Tensor&, const Tensor&, const Tensor&, Tensor&)>(
          "aten::lerp", "Tensor_out");
  checkCudaDevices("lerp.Tensor_out", {&self, &end, &w}, &out);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), metaLike(self), metaLike(end), metaLike(w), mo);
  const ScalarType compute = self.scalar_type();
  checkCudaDtype("lerp_cuda", compute, /*floating_only=*/true);
  return computeOut("lerp.Tensor_out", ElementwiseOp::Lerp, compute, mo, out,
                    {self, end, w});
}

// ---- tanh_backward, sigmoid_backward -----------------------------------------------

// grad_output * (1 - output^2), grad_output * (1 - output) * output, in the
// result type the Meta kernel gives; floating dtypes only, as torch 1.13's
// CUDA kernels ("tanh_backward_cuda" not implemented for 'Long').
template <ElementwiseOp kKind>
Tensor outputGrad(const Tensor& grad_output, const Tensor& output) {
  constexpr bool kTanh = kKind == ElementwiseOp::TanhBackward;
  static const auto op = typedOp<Tensor(const Tensor&, const Tensor&)>(
      kTanh ? "aten::tanh_backward" : "aten::sigmoid_backward", "");
  const char* name = kTanh ? "tanh_backward" : "sigmoid_backward";
  const Device device = checkCudaDevices(name, {&grad_output, &output});
  const Tensor m =
      op.redispatch(metaKeys(), metaLike(grad_output), metaLike(output));
  checkCudaDtype(kTanh ? "tanh_backward_cuda" : "sigmoid_backward_cuda",
                 m.scalar_type(), /*floating_only=*/true);
  Tensor out = emptyLikeMeta(m, m.scalar_type(), device);
  runElementwise(name, kKind, m.scalar_type(), out, {grad_output, output});
  return out;
}

}  // namespace
}  // namespace cuda
}  // namespace turnout

#define TURNOUT_CUDA_IMPL_FN(name, Kind) \
  m.impl(#name, TURNOUT_FN(unaryFunctional<Kind##Spec>));
#define TURNOUT_CUDA_IMPL_INPLACE_OUT(name, Kind)              \
  m.impl(#name "_", TURNOUT_FN(unaryInplace<Kind##Spec>));      \
  m.impl(#name ".out", TURNOUT_FN(unaryOut<Kind##Spec>));

TURNOUT_LIBRARY_IMPL(aten, CUDA, m) {
  using namespace ::turnout::cuda;
  TURNOUT_CUDA_UNARY_NEW(TURNOUT_CUDA_IMPL_FN)
  TURNOUT_CUDA_UNARY_NEW(TURNOUT_CUDA_IMPL_INPLACE_OUT)
  TURNOUT_CUDA_UNARY_OLD(TURNOUT_CUDA_IMPL_INPLACE_OUT)
  m.impl("angle", TURNOUT_FN(unaryFunctional<AngleSpec>));
  m.impl("angle.out", TURNOUT_FN(unaryOut<AngleSpec>));
  m.impl("polygamma", TURNOUT_FN(polygammaFunctional));
  m.impl("polygamma_", TURNOUT_FN(polygammaInplace));
  m.impl("polygamma.out", TURNOUT_FN(polygammaOut));
  m.impl("round.decimals", TURNOUT_FN(roundDecimals));
  m.impl("round_.decimals", TURNOUT_FN(roundDecimalsInplace));
  m.impl("round.decimals_out", TURNOUT_FN(roundDecimalsOut));
  m.impl("tanh_backward",
         TURNOUT_FN(outputGrad<ElementwiseOp::TanhBackward>));
  m.impl("sigmoid_backward",
         TURNOUT_FN(outputGrad<ElementwiseOp::SigmoidBackward>));
  m.impl("maximum", TURNOUT_FN(binaryFunctional<MaximumSpec>));
  m.impl("minimum", TURNOUT_FN(binaryFunctional<MinimumSpec>));
  m.impl("fmod.Tensor", TURNOUT_FN(binaryFunctional<FmodSpec>));
  m.impl("fmod_.Tensor", TURNOUT_FN(binaryInplace<FmodSpec>));
  m.impl("remainder.Tensor", TURNOUT_FN(binaryFunctional<RemainderSpec>));
  m.impl("remainder_.Tensor", TURNOUT_FN(binaryInplace<RemainderSpec>));
  m.impl("pow.Tensor_Tensor", TURNOUT_FN(binaryFunctional<PowTensorSpec>));
  m.impl("pow_.Tensor", TURNOUT_FN(binaryInplace<PowTensorSpec>));
  m.impl("remainder.Tensor_out", TURNOUT_FN(binaryOut<RemainderSpec>));
  m.impl("pow.Tensor_Tensor_out", TURNOUT_FN(binaryOut<PowTensorSpec>));
  m.impl("pow.Tensor_Scalar_out", TURNOUT_FN(powTensorScalarOut));
  m.impl("floor_divide", TURNOUT_FN(binaryFunctional<FloorDivideSpec>));
  m.impl("floor_divide_.Tensor", TURNOUT_FN(binaryInplace<FloorDivideSpec>));
  m.impl("bitwise_xor.Tensor", TURNOUT_FN(binaryFunctional<BitwiseXorSpec>));
  m.impl("bitwise_xor_.Tensor", TURNOUT_FN(binaryInplace<BitwiseXorSpec>));
  m.impl("logical_not", TURNOUT_FN(logicalNot));
  m.impl("logical_not_", TURNOUT_FN(logicalNotInplace));
  m.impl("masked_fill_.Scalar", TURNOUT_FN(maskedFillScalar));
  m.impl("masked_fill_.Tensor", TURNOUT_FN(maskedFillTensor));
  m.impl("where.self_out", TURNOUT_FN(whereSelfOut));
  m.impl("addcmul", TURNOUT_FN(addcFunctional<true>));
  m.impl("addcmul_", TURNOUT_FN(addcInplace<true>));
  m.impl("addcmul.out", TURNOUT_FN(addcOut<true>));
  m.impl("addcdiv", TURNOUT_FN(addcFunctional<false>));
  m.impl("addcdiv_", TURNOUT_FN(addcInplace<false>));
  m.impl("addcdiv.out", TURNOUT_FN(addcOut<false>));
  m.impl("lerp.Scalar", TURNOUT_FN(lerpScalar));
  m.impl("lerp.Tensor", TURNOUT_FN(lerpTensor));
  m.impl("lerp_.Scalar", TURNOUT_FN(lerpScalarInplace));
  m.impl("lerp_.Tensor", TURNOUT_FN(lerpTensorInplace));
  m.impl("lerp.Scalar_out", TURNOUT_FN(lerpScalarOut));
  m.impl("lerp.Tensor_out", TURNOUT_FN(lerpTensorOut));
}
#undef TURNOUT_CUDA_IMPL_FN
#undef TURNOUT_CUDA_IMPL_INPLACE_OUT
#undef TURNOUT_CUDA_UNARY_NEW
#undef TURNOUT_CUDA_UNARY_OLD
