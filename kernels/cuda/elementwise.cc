// CUDA kernels of the elementwise operators (aten::add, sub, mul, div and
// their Scalar, in-place and out= overloads, neg, abs, exp, log, sqrt, tanh,
// sigmoid, relu, pow.Tensor_Scalar, clamp, where.self, eq/ne/lt/le/gt/ge),
// registered at the CUDA key. Each kernel redispatches to the operator's
// Meta kernel for the result's sizes and dtype and every check (see
// cuda_loops.h), then runs elementwise.cu in the compute dtype that
// kernels/type_promotion.h gives, as the CPU kernel does.
#include <optional>
#include <string_view>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/cuda/cuda_loops.h"
#include "kernels/mem_overlap.h"
#include "kernels/tensor_utils.h"
#include "kernels/type_promotion.h"

namespace turnout {
namespace cuda {
namespace {

constexpr bool isComparison(ElementwiseOp k) {
  return k >= ElementwiseOp::Eq && k <= ElementwiseOp::Ge;
}

// The dtype the binary operator computes in (the inputs are cast to it).
template <ElementwiseOp kOp>
ScalarType binaryCompute(const Tensor& self, const Tensor* other,
                         const Scalar* other_scalar) {
  const ScalarType common =
      other ? resultType(self, *other) : resultType(self, *other_scalar);
  return kOp == ElementwiseOp::Div ? toFloatingType(common) : common;
}

// Runs a binary operator into `out` (already checked by the Meta kernel).
template <ElementwiseOp kOp>
void runBinary(std::string_view op, const Tensor& out, const Tensor& self,
               const Tensor* other, const Scalar* other_scalar,
               const Scalar* alpha) {
  // PyTorch's partial-overlap error for in-place and out= calls (the Meta
  // kernel checked internal overlap, but its stand-ins share no memory).
  checkNoPartialOverlap(out, self, op);
  if (other) checkNoPartialOverlap(out, *other, op);
  const ScalarType compute = binaryCompute<kOp>(self, other, other_scalar);
  std::optional<ScalarArg> alpha_arg;
  if (alpha) alpha_arg = scalarArg(*alpha, compute, op);
  if (other) {
    runElementwise(op, kOp, compute, out, {self, *other}, {alpha_arg});
    return;
  }
  // A Scalar operand is read in the math type without rounding to the
  // compute dtype, as the CPU kernel does (it matters for Half: 0.1).
  runElementwise(op, kOp, compute, out, {self, self},
                 {alpha_arg, scalarArg(*other_scalar, compute, op)},
                 /*scalar_input=*/1);
}

using TensorTensorAlpha = Tensor(const Tensor&, const Tensor&, const Scalar&);
using TensorScalarAlpha = Tensor(const Tensor&, const Scalar&, const Scalar&);
using InplaceTensorAlpha = Tensor&(Tensor&, const Tensor&, const Scalar&);
using InplaceScalarAlpha = Tensor&(Tensor&, const Scalar&, const Scalar&);
using OutAlpha = Tensor&(const Tensor&, const Tensor&, const Scalar&, Tensor&);
using TensorTensor = Tensor(const Tensor&, const Tensor&);
using TensorScalar = Tensor(const Tensor&, const Scalar&);
using InplaceTensor = Tensor&(Tensor&, const Tensor&);
using InplaceScalar = Tensor&(Tensor&, const Scalar&);
using Out = Tensor&(const Tensor&, const Tensor&, Tensor&);

// add, sub: alpha in every overload.
#define TURNOUT_CUDA_ALPHA_KERNELS(name, Kind)                                 \
  Tensor name##Tensor(const Tensor& self, const Tensor& other,                 \
                      const Scalar& alpha) {                                   \
    static const auto op = typedOp<TensorTensorAlpha>("aten::" #name, "Tensor"); \
    const Device device = checkCudaDevices(#name, {&self, &other});            \
    const Tensor m = op.redispatch(metaKeys(), metaLike(self),                 \
                                   metaLike(other), alpha);                    \
    Tensor out = emptyLikeMeta(m, m.scalar_type(), device);              \
    runBinary<ElementwiseOp::Kind>(#name, out, self, &other, nullptr, &alpha); \
    return out;                                                                \
  }                                                                            \
  Tensor name##Scalar(const Tensor& self, const Scalar& other,                 \
                      const Scalar& alpha) {                                   \
    static const auto op = typedOp<TensorScalarAlpha>("aten::" #name, "Scalar"); \
    const Device device = checkCudaDevices(#name, {&self});                    \
    const Tensor m = op.redispatch(metaKeys(), metaLike(self), other, alpha);  \
    Tensor out = emptyLikeMeta(m, m.scalar_type(), device);              \
    runBinary<ElementwiseOp::Kind>(#name, out, self, nullptr, &other, &alpha); \
    return out;                                                                \
  }                                                                            \
  Tensor& name##InplaceTensor(Tensor& self, const Tensor& other,               \
                              const Scalar& alpha) {                           \
    static const auto op =                                                     \
        typedOp<InplaceTensorAlpha>("aten::" #name "_", "Tensor");             \
    checkCudaDevices(#name "_", {&other}, &self);                              \
    Tensor ms = metaLike(self);                                                \
    op.redispatch(metaKeys(), ms, metaLike(other), alpha);                     \
    runBinary<ElementwiseOp::Kind>(#name "_", self, self, &other, nullptr,     \
                                   &alpha);                                    \
    return self;                                                               \
  }                                                                            \
  Tensor& name##InplaceScalar(Tensor& self, const Scalar& other,               \
                              const Scalar& alpha) {                           \
    static const auto op =                                                     \
        typedOp<InplaceScalarAlpha>("aten::" #name "_", "Scalar");             \
    checkCudaDevices(#name "_", {}, &self);                                    \
    Tensor ms = metaLike(self);                                                \
    op.redispatch(metaKeys(), ms, other, alpha);                               \
    runBinary<ElementwiseOp::Kind>(#name "_", self, self, nullptr, &other,     \
                                   &alpha);                                    \
    return self;                                                               \
  }                                                                            \
  Tensor& name##Out(const Tensor& self, const Tensor& other,                   \
                    const Scalar& alpha, Tensor& out) {                        \
    static const auto op = typedOp<OutAlpha>("aten::" #name, "out");           \
    checkCudaDevices(#name ".out", {&self, &other}, &out);                     \
    Tensor mo = metaLike(out);                                                 \
    op.redispatch(metaKeys(), metaLike(self), metaLike(other), alpha, mo);     \
    resizeOut(#name ".out", out, mo.sizes(), mo.strides());                    \
    runBinary<ElementwiseOp::Kind>(#name ".out", out, self, &other, nullptr,   \
                                   &alpha);                                    \
    return out;                                                                \
  }

// mul, div: no alpha; comparisons: Tensor and Scalar overloads only.
#define TURNOUT_CUDA_BINARY_KERNELS(name, Kind)                                \
  Tensor name##Tensor(const Tensor& self, const Tensor& other) {               \
    static const auto op = typedOp<TensorTensor>("aten::" #name, "Tensor");    \
    const Device device = checkCudaDevices(#name, {&self, &other});            \
    const Tensor m =                                                           \
        op.redispatch(metaKeys(), metaLike(self), metaLike(other));            \
    Tensor out = emptyLikeMeta(m, m.scalar_type(), device);              \
    runBinary<ElementwiseOp::Kind>(#name, out, self, &other, nullptr, nullptr); \
    return out;                                                                \
  }                                                                            \
  Tensor name##Scalar(const Tensor& self, const Scalar& other) {               \
    static const auto op = typedOp<TensorScalar>("aten::" #name, "Scalar");    \
    const Device device = checkCudaDevices(#name, {&self});                    \
    const Tensor m = op.redispatch(metaKeys(), metaLike(self), other);         \
    Tensor out = emptyLikeMeta(m, m.scalar_type(), device);              \
    runBinary<ElementwiseOp::Kind>(#name, out, self, nullptr, &other, nullptr); \
    return out;                                                                \
  }

#define TURNOUT_CUDA_NO_ALPHA_KERNELS(name, Kind)                              \
  TURNOUT_CUDA_BINARY_KERNELS(name, Kind)                                      \
  Tensor& name##InplaceTensor(Tensor& self, const Tensor& other) {             \
    static const auto op = typedOp<InplaceTensor>("aten::" #name "_", "Tensor"); \
    checkCudaDevices(#name "_", {&other}, &self);                              \
    Tensor ms = metaLike(self);                                                \
    op.redispatch(metaKeys(), ms, metaLike(other));                            \
    runBinary<ElementwiseOp::Kind>(#name "_", self, self, &other, nullptr,     \
                                   nullptr);                                   \
    return self;                                                               \
  }                                                                            \
  Tensor& name##InplaceScalar(Tensor& self, const Scalar& other) {             \
    static const auto op = typedOp<InplaceScalar>("aten::" #name "_", "Scalar"); \
    checkCudaDevices(#name "_", {}, &self);                                    \
    Tensor ms = metaLike(self);                                                \
    op.redispatch(metaKeys(), ms, other);                                      \
    runBinary<ElementwiseOp::Kind>(#name "_", self, self, nullptr, &other,     \
                                   nullptr);                                   \
    return self;                                                               \
  }                                                                            \
  Tensor& name##Out(const Tensor& self, const Tensor& other, Tensor& out) {    \
    static const auto op = typedOp<Out>("aten::" #name, "out");                \
    checkCudaDevices(#name ".out", {&self, &other}, &out);                     \
    Tensor mo = metaLike(out);                                                 \
    op.redispatch(metaKeys(), metaLike(self), metaLike(other), mo);            \
    resizeOut(#name ".out", out, mo.sizes(), mo.strides());                    \
    runBinary<ElementwiseOp::Kind>(#name ".out", out, self, &other, nullptr,   \
                                   nullptr);                                   \
    return out;                                                                \
  }

TURNOUT_CUDA_ALPHA_KERNELS(add, Add)
TURNOUT_CUDA_ALPHA_KERNELS(sub, Sub)
TURNOUT_CUDA_NO_ALPHA_KERNELS(mul, Mul)
TURNOUT_CUDA_NO_ALPHA_KERNELS(div, Div)
TURNOUT_CUDA_BINARY_KERNELS(eq, Eq)
TURNOUT_CUDA_BINARY_KERNELS(ne, Ne)
TURNOUT_CUDA_BINARY_KERNELS(lt, Lt)
TURNOUT_CUDA_BINARY_KERNELS(le, Le)
TURNOUT_CUDA_BINARY_KERNELS(gt, Gt)
TURNOUT_CUDA_BINARY_KERNELS(ge, Ge)
#undef TURNOUT_CUDA_ALPHA_KERNELS
#undef TURNOUT_CUDA_NO_ALPHA_KERNELS
#undef TURNOUT_CUDA_BINARY_KERNELS

// Unary operators compute in their result's dtype (the Meta kernel's).
#define TURNOUT_CUDA_UNARY_KERNEL(name, Kind)                                  \
  Tensor name##Kernel(const Tensor& self) {                                    \
    static const auto op = typedOp<Tensor(const Tensor&)>("aten::" #name, ""); \
    const Device device = checkCudaDevices(#name, {&self});                    \
    const Tensor m = op.redispatch(metaKeys(), metaLike(self));                \
    Tensor out = emptyLikeMeta(m, m.scalar_type(), device);              \
    runElementwise(#name, ElementwiseOp::Kind, m.scalar_type(), out, {self});  \
    return out;                                                                \
  }
TURNOUT_CUDA_UNARY_KERNEL(neg, Neg)
TURNOUT_CUDA_UNARY_KERNEL(abs, Abs)
TURNOUT_CUDA_UNARY_KERNEL(exp, Exp)
TURNOUT_CUDA_UNARY_KERNEL(log, Log)
TURNOUT_CUDA_UNARY_KERNEL(sqrt, Sqrt)
TURNOUT_CUDA_UNARY_KERNEL(tanh, Tanh)
TURNOUT_CUDA_UNARY_KERNEL(sigmoid, Sigmoid)
TURNOUT_CUDA_UNARY_KERNEL(relu, Relu)
#undef TURNOUT_CUDA_UNARY_KERNEL

Tensor powTensorScalar(const Tensor& self, const Scalar& exponent) {
  static const auto op = typedOp<TensorScalar>("aten::pow", "Tensor_Scalar");
  const Device device = checkCudaDevices("pow", {&self});
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), exponent);
  Tensor out = emptyLikeMeta(m, m.scalar_type(), device);
  // The CPU kernel reads an integral exponent as int64 and a floating one
  // in the math type.
  ScalarArg e;
  e.f = exponent.toDouble();
  e.i = isFloatingType(m.scalar_type()) ? 0 : exponent.toLong();
  runElementwise("pow", ElementwiseOp::Pow, m.scalar_type(), out, {self}, {e});
  return out;
}

Tensor clampKernel(const Tensor& self, const std::optional<Scalar>& min,
                   const std::optional<Scalar>& max) {
  static const auto op =
      typedOp<Tensor(const Tensor&, const std::optional<Scalar>&,
                     const std::optional<Scalar>&)>("aten::clamp", "");
  const Device device = checkCudaDevices("clamp", {&self});
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), min, max);
  const ScalarType compute = m.scalar_type();
  Tensor out = emptyLikeMeta(m, compute, device);
  std::optional<ScalarArg> lo, hi;
  if (min) lo = scalarArg(*min, compute, "clamp");
  if (max) hi = scalarArg(*max, compute, "clamp");
  runElementwise("clamp", ElementwiseOp::Clamp, compute, out, {self}, {lo, hi});
  return out;
}

Tensor whereSelf(const Tensor& condition, const Tensor& self,
                 const Tensor& other) {
  static const auto op =
      typedOp<Tensor(const Tensor&, const Tensor&, const Tensor&)>(
          "aten::where", "self");
  const Device device = checkCudaDevices("where", {&condition, &self, &other});
  const Tensor m = op.redispatch(metaKeys(), metaLike(condition),
                                 metaLike(self), metaLike(other));
  Tensor out = emptyLikeMeta(m, m.scalar_type(), device);
  runElementwise("where", ElementwiseOp::Where, m.scalar_type(), out,
                 {condition, self, other});
  return out;
}

}  // namespace
}  // namespace cuda
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, CUDA, m) {
  using namespace ::turnout::cuda;
  m.impl("add.Tensor", TURNOUT_FN(addTensor));
  m.impl("add.Scalar", TURNOUT_FN(addScalar));
  m.impl("add_.Tensor", TURNOUT_FN(addInplaceTensor));
  m.impl("add_.Scalar", TURNOUT_FN(addInplaceScalar));
  m.impl("add.out", TURNOUT_FN(addOut));
  m.impl("sub.Tensor", TURNOUT_FN(subTensor));
  m.impl("sub.Scalar", TURNOUT_FN(subScalar));
  m.impl("sub_.Tensor", TURNOUT_FN(subInplaceTensor));
  m.impl("sub_.Scalar", TURNOUT_FN(subInplaceScalar));
  m.impl("sub.out", TURNOUT_FN(subOut));
  m.impl("mul.Tensor", TURNOUT_FN(mulTensor));
  m.impl("mul.Scalar", TURNOUT_FN(mulScalar));
  m.impl("mul_.Tensor", TURNOUT_FN(mulInplaceTensor));
  m.impl("mul_.Scalar", TURNOUT_FN(mulInplaceScalar));
  m.impl("mul.out", TURNOUT_FN(mulOut));
  m.impl("div.Tensor", TURNOUT_FN(divTensor));
  m.impl("div.Scalar", TURNOUT_FN(divScalar));
  m.impl("div_.Tensor", TURNOUT_FN(divInplaceTensor));
  m.impl("div_.Scalar", TURNOUT_FN(divInplaceScalar));
  m.impl("div.out", TURNOUT_FN(divOut));
  m.impl("neg", TURNOUT_FN(negKernel));
  m.impl("abs", TURNOUT_FN(absKernel));
  m.impl("exp", TURNOUT_FN(expKernel));
  m.impl("log", TURNOUT_FN(logKernel));
  m.impl("sqrt", TURNOUT_FN(sqrtKernel));
  m.impl("tanh", TURNOUT_FN(tanhKernel));
  m.impl("sigmoid", TURNOUT_FN(sigmoidKernel));
  m.impl("relu", TURNOUT_FN(reluKernel));
  m.impl("pow.Tensor_Scalar", TURNOUT_FN(powTensorScalar));
  m.impl("clamp", TURNOUT_FN(clampKernel));
  m.impl("where.self", TURNOUT_FN(whereSelf));
  m.impl("eq.Tensor", TURNOUT_FN(eqTensor));
  m.impl("eq.Scalar", TURNOUT_FN(eqScalar));
  m.impl("ne.Tensor", TURNOUT_FN(neTensor));
  m.impl("ne.Scalar", TURNOUT_FN(neScalar));
  m.impl("lt.Tensor", TURNOUT_FN(ltTensor));
  m.impl("lt.Scalar", TURNOUT_FN(ltScalar));
  m.impl("le.Tensor", TURNOUT_FN(leTensor));
  m.impl("le.Scalar", TURNOUT_FN(leScalar));
  m.impl("gt.Tensor", TURNOUT_FN(gtTensor));
  m.impl("gt.Scalar", TURNOUT_FN(gtScalar));
  m.impl("ge.Tensor", TURNOUT_FN(geTensor));
  m.impl("ge.Scalar", TURNOUT_FN(geScalar));
}
