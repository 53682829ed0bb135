// The Autograd kernels of the operators of kernels/misc_ops.cc that have
// CPU/Meta or CompositeExplicitAutograd kernels (the composite-implicit
// ones get their gradients from the operators they call). Formulas as torch
// 1.13's (derivatives.yaml), written over turnout's operators so that they
// are differentiable again:
//   maximum / minimum: the gradient goes to the larger (smaller) input, half
//     to each on ties;
//   fmod.Tensor: self: g; other: -g * trunc(self / other);
//   remainder.Tensor (RemainderBackward1): self: g; other:
//     -g * div(self, other, rounding_mode="floor") (a quotient with zero
//     gradients); remainder.Scalar (RemainderBackward0):
//     self: g; remainder.Scalar_Tensor: recorded, and its backward fails as
//     torch's does ("derivative for aten::remainder is not implemented");
//   pow.Tensor_Tensor, pow_.Tensor (PowBackward1): self: 0 where
//     exponent == 0, else g * exponent * self^(exponent - 1); exponent:
//     0 where self == 0 and exponent >= 0, else g * result * log(self);
//   pow.Scalar (PowBackward2): the exponent's half of PowBackward1;
//   pow_.Scalar (PowBackward0, as pow.Tensor_Scalar's): g * e * self^(e-1);
//   floor_divide: recorded, and its backward fails as torch's does
//     ("derivative for aten::floor_divide is not implemented");
//   prod: g * (the product of the other elements), exact with zeros
//     (exclusive cumulative products from both sides);
//   gather: scatter_add of g into zeros; scatter_add: self: g, src:
//     gather(g);
//   logsumexp: g * exp(self - result);
//   norm (.Scalar, .ScalarOpt_dim and the dtype= forms: NormBackward0-3):
//     torch's norm_backward for p = 0, 1, 2, inf, other p;
//   flip (FlipBackward0): flip(g, dims); repeat (RepeatBackward0): g summed
//     over the copies; squeeze() (SqueezeBackward0, a view): g reshaped to
//     self's sizes; dot (DotBackward0): self: g * tensor, tensor: g * self;
//     mv (MvBackward0): self: outer(g, vec), vec: mv(self^T, g);
//   zero_ (ZeroBackward0): zeros; fill_.Tensor (FillBackward3): self:
//     zeros, value: sum(g); fmod.Scalar, fmod_.Scalar (FmodBackward0): g;
//   addmv, addmv_ (kernels/linspace_addmv.cc; AddmvBackward0): self:
//     beta * g; mat: alpha * outer(g, vec); vec: alpha * mv(mat^T, g).
//     addmv.out has no Autograd kernel (the autograd fallback's, as the
//     other out= forms).
// all, any, logical_not, bitwise_xor, eye, new_zeros, isnan and isinf are
// not differentiable (fallthrough).
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/operator_handle.h"
#include "kernels/autograd/function_node.h"
#include "kernels/autograd/saved_variable.h"
#include "kernels/copy.h"
#include "kernels/dim_ops.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/indexing.h"
#include "kernels/reduce.h"
#include "kernels/shape.h"
#include "kernels/shape_ops.h"
#include "kernels/tensor_utils.h"
#include "kernels/unary_math.h"

namespace turnout {
namespace autograd {
namespace {

using detail::belowAutograd;
using detail::checkInplaceAllowed;
using detail::record;
using detail::shouldRecord;
using F = FunctionNode;

template <class Sig>
TypedOperatorHandle<Sig> lookup(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

using BinarySig = Tensor(const Tensor&, const Tensor&);
using InplaceSig = Tensor&(Tensor&, const Tensor&);

const TypedOperatorHandle<BinarySig>& maximumOp() {
  static const auto op = lookup<BinarySig>("aten::maximum", "");
  return op;
}
const TypedOperatorHandle<BinarySig>& minimumOp() {
  static const auto op = lookup<BinarySig>("aten::minimum", "");
  return op;
}
const TypedOperatorHandle<BinarySig>& fmodOp() {
  static const auto op = lookup<BinarySig>("aten::fmod", "Tensor");
  return op;
}
const TypedOperatorHandle<InplaceSig>& fmodInplaceOp() {
  static const auto op = lookup<InplaceSig>("aten::fmod_", "Tensor");
  return op;
}
const TypedOperatorHandle<BinarySig>& remainderOp() {
  static const auto op = lookup<BinarySig>("aten::remainder", "Tensor");
  return op;
}
const TypedOperatorHandle<InplaceSig>& remainderInplaceOp() {
  static const auto op = lookup<InplaceSig>("aten::remainder_", "Tensor");
  return op;
}
using ScalarSig = Tensor(const Tensor&, const Scalar&);
using ScalarInplaceSig = Tensor&(Tensor&, const Scalar&);
const TypedOperatorHandle<ScalarSig>& remainderScalarOp() {
  static const auto op = lookup<ScalarSig>("aten::remainder", "Scalar");
  return op;
}
const TypedOperatorHandle<ScalarInplaceSig>& remainderScalarInplaceOp() {
  static const auto op = lookup<ScalarInplaceSig>("aten::remainder_", "Scalar");
  return op;
}
using ScalarTensorSig = Tensor(const Scalar&, const Tensor&);
const TypedOperatorHandle<ScalarTensorSig>& remainderScalarTensorOp() {
  static const auto op =
      lookup<ScalarTensorSig>("aten::remainder", "Scalar_Tensor");
  return op;
}
const TypedOperatorHandle<BinarySig>& powOp() {
  static const auto op = lookup<BinarySig>("aten::pow", "Tensor_Tensor");
  return op;
}
const TypedOperatorHandle<InplaceSig>& powInplaceOp() {
  static const auto op = lookup<InplaceSig>("aten::pow_", "Tensor");
  return op;
}
const TypedOperatorHandle<ScalarTensorSig>& powScalarOp() {
  static const auto op = lookup<ScalarTensorSig>("aten::pow", "Scalar");
  return op;
}
const TypedOperatorHandle<ScalarInplaceSig>& powScalarInplaceOp() {
  static const auto op = lookup<ScalarInplaceSig>("aten::pow_", "Scalar");
  return op;
}
const TypedOperatorHandle<BinarySig>& floorDivideOp() {
  static const auto op = lookup<BinarySig>("aten::floor_divide", "");
  return op;
}
const TypedOperatorHandle<InplaceSig>& floorDivideInplaceOp() {
  static const auto op = lookup<InplaceSig>("aten::floor_divide_", "Tensor");
  return op;
}
using GatherSig = Tensor(const Tensor&, int64_t, const Tensor&, bool);
const TypedOperatorHandle<GatherSig>& gatherOp() {
  static const auto op = lookup<GatherSig>("aten::gather", "");
  return op;
}
using ScatterAddSig = Tensor(const Tensor&, int64_t, const Tensor&,
                             const Tensor&);
const TypedOperatorHandle<ScatterAddSig>& scatterAddOp() {
  static const auto op = lookup<ScatterAddSig>("aten::scatter_add", "");
  return op;
}
using ProdSig = Tensor(const Tensor&, std::optional<ScalarType>);
const TypedOperatorHandle<ProdSig>& prodOp() {
  static const auto op = lookup<ProdSig>("aten::prod", "");
  return op;
}
using ProdDimSig = Tensor(const Tensor&, int64_t, bool,
                          std::optional<ScalarType>);
const TypedOperatorHandle<ProdDimSig>& prodDimOp() {
  static const auto op = lookup<ProdDimSig>("aten::prod", "dim_int");
  return op;
}
using LogsumexpSig = Tensor(const Tensor&, IntArrayRef, bool);
const TypedOperatorHandle<LogsumexpSig>& logsumexpOp() {
  static const auto op = lookup<LogsumexpSig>("aten::logsumexp", "");
  return op;
}
using NormScalarSig = Tensor(const Tensor&, const Scalar&);
const TypedOperatorHandle<NormScalarSig>& normScalarOp() {
  static const auto op = lookup<NormScalarSig>("aten::norm", "Scalar");
  return op;
}
using NormDimSig = Tensor(const Tensor&, const std::optional<Scalar>&,
                          IntArrayRef, bool);
const TypedOperatorHandle<NormDimSig>& normDimOp() {
  static const auto op = lookup<NormDimSig>("aten::norm", "ScalarOpt_dim");
  return op;
}

using NormDtypeSig = Tensor(const Tensor&, const std::optional<Scalar>&,
                            ScalarType);
const TypedOperatorHandle<NormDtypeSig>& normDtypeOp() {
  static const auto op = lookup<NormDtypeSig>("aten::norm", "ScalarOpt_dtype");
  return op;
}
using NormDimDtypeSig = Tensor(const Tensor&, const std::optional<Scalar>&,
                               IntArrayRef, bool, ScalarType);
const TypedOperatorHandle<NormDimDtypeSig>& normDimDtypeOp() {
  static const auto op =
      lookup<NormDimDtypeSig>("aten::norm", "ScalarOpt_dim_dtype");
  return op;
}

using UnarySig = Tensor(const Tensor&);
using DimsSig = Tensor(const Tensor&, IntArrayRef);
const TypedOperatorHandle<DimsSig>& flipOp() {
  static const auto op = lookup<DimsSig>("aten::flip", "");
  return op;
}
const TypedOperatorHandle<DimsSig>& repeatOp() {
  static const auto op = lookup<DimsSig>("aten::repeat", "");
  return op;
}
const TypedOperatorHandle<UnarySig>& squeezeOp() {
  static const auto op = lookup<UnarySig>("aten::squeeze", "");
  return op;
}
const TypedOperatorHandle<BinarySig>& dotOp() {
  static const auto op = lookup<BinarySig>("aten::dot", "");
  return op;
}
const TypedOperatorHandle<BinarySig>& mvOp() {
  static const auto op = lookup<BinarySig>("aten::mv", "");
  return op;
}
using ZeroSig = Tensor&(Tensor&);
const TypedOperatorHandle<ZeroSig>& zeroOp() {
  static const auto op = lookup<ZeroSig>("aten::zero_", "");
  return op;
}
const TypedOperatorHandle<InplaceSig>& fillTensorOp() {
  static const auto op = lookup<InplaceSig>("aten::fill_", "Tensor");
  return op;
}
const TypedOperatorHandle<ScalarSig>& fmodScalarOp() {
  static const auto op = lookup<ScalarSig>("aten::fmod", "Scalar");
  return op;
}
const TypedOperatorHandle<ScalarInplaceSig>& fmodScalarInplaceOp() {
  static const auto op = lookup<ScalarInplaceSig>("aten::fmod_", "Scalar");
  return op;
}
using AddmvSig = Tensor(const Tensor&, const Tensor&, const Tensor&,
                       const Scalar&, const Scalar&);
using AddmvInplaceSig = Tensor&(Tensor&, const Tensor&, const Tensor&,
                                const Scalar&, const Scalar&);
const TypedOperatorHandle<AddmvSig>& addmvOp() {
  static const auto op = lookup<AddmvSig>("aten::addmv", "");
  return op;
}
const TypedOperatorHandle<AddmvInplaceSig>& addmvInplaceOp() {
  static const auto op = lookup<AddmvInplaceSig>("aten::addmv_", "");
  return op;
}

// ---- maximum, minimum ---------------------------------------------------------------

template <bool kMax>
Tensor maxMinKernel(const Tensor& self, const Tensor& other) {
  const char* op = kMax ? "maximum" : "minimum";
  const bool rec = shouldRecord(op, self, other);
  Tensor out = belowAutograd([&] {
    return kMax ? maximumOp().call(self, other) : minimumOp().call(self, other);
  });
  if (rec) {
    SavedVariable a(self);
    SavedVariable b(other);
    Node* node =
        record(kMax ? "MaximumBackward0" : "MinimumBackward0", {self, other},
               out, [a, b](const F& n, const Tensor& g) {
                 const Tensor x = a.unpack(&n);
                 const Tensor y = b.unpack(&n);
                 const Tensor shared = where(eq(x, y), div(g, 2), g);
                 // self loses where it is the smaller (larger) one.
                 const Tensor self_loses = kMax ? lt(x, y) : gt(x, y);
                 const Tensor other_loses = kMax ? gt(x, y) : lt(x, y);
                 return variable_list{masked_fill(shared, self_loses, 0),
                                      masked_fill(shared, other_loses, 0)};
               });
    if (node != nullptr) {
      node->addSaved("other", b);
      node->addSaved("self", a);
    }
  }
  return out;
}

// ---- fmod, floor_divide ---------------------------------------------------------------

// aten::div.Tensor_mode: a rounded quotient, whose gradients are zeros.
const TypedOperatorHandle<Tensor(const Tensor&, const Tensor&,
                                 const std::optional<std::string>&)>&
divModeOp() {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::div", "Tensor_mode")
          .typed<Tensor(const Tensor&, const Tensor&,
                        const std::optional<std::string>&)>();
  return op;
}

variable_list fmodGrad(const F& n, const Tensor& g, const Tensor& x,
                       const Tensor& y) {
  Tensor gy;
  if (n.needsGrad(1)) {
    // -g * div(x, y, rounding_mode="trunc"), negated first (MulBackward0
    // under create_graph), as torch 1.13's; the quotient's gradients are
    // zeros.
    gy = mul(neg(g), divModeOp().call(x, y, std::string("trunc")));
  }
  return variable_list{g, gy};
}

// torch's FmodBackward1 shows self and other only where other's gradient
// needs them (None otherwise).
void addFmodSaved(Node* node, const Tensor& other, const SavedVariable& a,
                  const SavedVariable& b) {
  if (node == nullptr) return;
  const bool shown = requiresGrad(other);
  node->addSaved("other", shown ? b : SavedVariable());
  node->addSaved("self", shown ? a : SavedVariable());
}

Tensor fmodKernel(const Tensor& self, const Tensor& other) {
  const bool rec = shouldRecord("fmod", self, other);
  Tensor out = belowAutograd([&] { return fmodOp().call(self, other); });
  if (rec) {
    SavedVariable a(self);
    SavedVariable b(other);
    Node* node = record("FmodBackward1", {self, other}, out,
                        [a, b](const F& n, const Tensor& g) {
                          return fmodGrad(n, g, a.unpack(&n), b.unpack(&n));
                        });
    addFmodSaved(node, other, a, b);
  }
  return out;
}

Tensor& fmodInplace(Tensor& self, const Tensor& other) {
  const bool rec = shouldRecord("fmod_", self, other);
  checkInplaceAllowed(self, rec, "fmod_");
  Tensor original;
  if (rec) original = detail::cloneWithHistory(self);
  belowAutograd([&] { fmodInplaceOp().call(self, other); });
  self.unsafeGetTensorImpl()->bump_version();
  if (rec) {
    SavedVariable a(original);
    SavedVariable b(other);
    Node* node = record("FmodBackward1", {self, other}, self,
                        [a, b](const F& n, const Tensor& g) {
                          return fmodGrad(n, g, a.unpack(&n), b.unpack(&n));
                        });
    addFmodSaved(node, other, a, b);
  }
  return self;
}

// ---- remainder ------------------------------------------------------------

variable_list remainderGrad(const F& n, const Tensor& g, const Tensor& x,
                            const Tensor& y) {
  Tensor gy;
  if (n.needsGrad(1)) {
    // torch's -g * div(x, y, rounding_mode="floor"): the quotient is
    // piecewise constant, with zero gradients (DivBackward2), where
    // floor_divide refuses a derivative (as torch's does).
    gy = mul(neg(g), divModeOp().call(x, y, std::string("floor")));
  }
  return variable_list{g, gy};
}

// The formula of RemainderBackward1 (remainder.Tensor and remainder_.Tensor);
// `self_value` is self before the operator wrote it.
void recordRemainder(const Tensor& self, const Tensor& self_value,
                     const Tensor& other, const Tensor& out) {
  SavedVariable a(self_value);
  SavedVariable b(other);
  Node* node = record("RemainderBackward1", {self, other}, out,
                      [a, b](const F& n, const Tensor& g) {
                        return remainderGrad(n, g, a.unpack(&n), b.unpack(&n));
                      });
  addFmodSaved(node, other, a, b);  // torch shows them as FmodBackward1's
}

Tensor remainderKernel(const Tensor& self, const Tensor& other) {
  const bool rec = shouldRecord("remainder", self, other);
  Tensor out = belowAutograd([&] { return remainderOp().call(self, other); });
  if (rec) recordRemainder(self, self, other, out);
  return out;
}

Tensor& remainderInplace(Tensor& self, const Tensor& other) {
  const bool rec = shouldRecord("remainder_", self, other);
  checkInplaceAllowed(self, rec, "remainder_");
  Tensor original;
  if (rec) original = detail::cloneWithHistory(self);
  belowAutograd([&] { remainderInplaceOp().call(self, other); });
  self.unsafeGetTensorImpl()->bump_version();
  if (rec) recordRemainder(self, original, other, self);
  return self;
}

variable_list passGrad(const F&, const Tensor& g) { return variable_list{g}; }

// remainder.Scalar (`x % 4`): RemainderBackward0, the gradient to self.
Tensor remainderScalarKernel(const Tensor& self, const Scalar& other) {
  const bool rec = shouldRecord("remainder", self);
  Tensor out =
      belowAutograd([&] { return remainderScalarOp().call(self, other); });
  if (rec) record("RemainderBackward0", {self}, out, passGrad);
  return out;
}

Tensor& remainderScalarInplace(Tensor& self, const Scalar& other) {
  const bool rec = shouldRecord("remainder_", self);
  detail::writeInplace(self, rec, "remainder_",
                       [&] { remainderScalarInplaceOp().call(self, other); });
  if (rec) record("RemainderBackward0", {self}, self, passGrad);
  return self;
}

variable_list remainderScalarTensorGrad(const F&, const Tensor&) {
  TURNOUT_CHECK(false, ErrorKind::NotImplemented,
                "derivative for aten::remainder is not implemented");
  return {};
}

// ---- pow ------------------------------------------------------------------

// g * result * log(base), with result * log(base) taken as 0 where
// base == 0 and exponent >= 0 (0^e has no slope in e there, and log(0)
// would make it nan): masked before g multiplies it (MulBackward0 under
// create_graph), as torch 1.13's pow_backward_exponent.
Tensor powExponentGrad(const Tensor& g, const Tensor& base,
                       const Tensor& exponent, const Tensor& result) {
  const Tensor slope = mul(result, turnout::log(base));
  return mul(g, where(eq(base, 0), where(ge(exponent, 0), Scalar(0), slope),
                      slope));
}

// The same for a Scalar base (pow.Scalar): log(base) is a number, and only
// a zero base needs the mask.
Tensor powScalarExponentGrad(const Tensor& g, const Scalar& base,
                             const Tensor& exponent, const Tensor& result) {
  const double b = base.toDouble();
  const Tensor slope = mul(result, Scalar(std::log(b)));
  if (b != 0.0) return mul(g, slope);
  return mul(g, where(ge(exponent, 0), Scalar(0), slope));
}

variable_list powGrad(const F& n, const Tensor& g, const Tensor& x,
                      const Tensor& e, const Tensor& r) {
  Tensor gx;
  Tensor ge;
  if (n.needsGrad(0)) {
    const Tensor slope = mul(e, powOp().call(x, sub(e, Scalar(1))));
    gx = where(eq(e, 0), Scalar(0), mul(g, slope));
  }
  if (n.needsGrad(1)) ge = powExponentGrad(g, x, e, r);
  return variable_list{gx, ge};
}

// PowBackward1 of pow.Tensor_Tensor and pow_.Tensor; `self_value` is self
// before the operator wrote it, `out` the result.
void recordPow(const Tensor& self, const Tensor& self_value,
               const Tensor& exponent, const Tensor& out) {
  SavedVariable a(self_value);
  SavedVariable b(exponent);
  SavedVariable r(out, /*is_output=*/true);
  Node* node =
      record("PowBackward1", {self, exponent}, out,
             [a, b, r](const F& n, const Tensor& g) {
               return powGrad(n, g, a.unpack(&n), b.unpack(&n), r.unpack(&n));
             });
  if (node != nullptr) {
    node->addSaved("exponent", b);
    node->addSaved("result", r);
    node->addSaved("self", a);
  }
}

Tensor powKernel(const Tensor& self, const Tensor& exponent) {
  const bool rec = shouldRecord("pow", self, exponent);
  Tensor out = belowAutograd([&] { return powOp().call(self, exponent); });
  if (rec) recordPow(self, self, exponent, out);
  return out;
}

Tensor& powInplace(Tensor& self, const Tensor& exponent) {
  const bool rec = shouldRecord("pow_", self, exponent);
  checkInplaceAllowed(self, rec, "pow_");
  Tensor original;
  if (rec) original = detail::cloneWithHistory(self);
  belowAutograd([&] { powInplaceOp().call(self, exponent); });
  self.unsafeGetTensorImpl()->bump_version();
  if (rec) recordPow(self, original, exponent, self);
  return self;
}

// torch.pow(2, x): PowBackward2, the gradient to the exponent only.
Tensor powScalarKernel(const Scalar& self, const Tensor& exponent) {
  const bool rec = shouldRecord("pow", exponent);
  Tensor out =
      belowAutograd([&] { return powScalarOp().call(self, exponent); });
  if (rec) {
    SavedVariable b(exponent);
    SavedVariable r(out, /*is_output=*/true);
    Node* node = record(
        "PowBackward2", {exponent}, out,
        [self, b, r](const F& n, const Tensor& g) {
          return variable_list{
              powScalarExponentGrad(g, self, b.unpack(&n), r.unpack(&n))};
        });
    if (node != nullptr) {
      node->addSaved("exponent", b);
      node->addSaved("result", r);
      node->addSaved("self", IValue(self));
    }
  }
  return out;
}

// x.pow_(2): PowBackward0 as pow.Tensor_Scalar's, over self before the write.
Tensor& powScalarInplace(Tensor& self, const Scalar& exponent) {
  const bool rec = shouldRecord("pow_", self);
  checkInplaceAllowed(self, rec, "pow_");
  Tensor original;
  if (rec) original = detail::cloneWithHistory(self);
  belowAutograd([&] { powScalarInplaceOp().call(self, exponent); });
  self.unsafeGetTensorImpl()->bump_version();
  if (rec) {
    const bool zero = exponent.isIntegral(true) ? exponent.toLong() == 0
                                                : exponent.toDouble() == 0.0;
    SavedVariable a(original);
    Node* node =
        record("PowBackward0", {self}, self,
               [a, exponent, zero](const F& n, const Tensor& g) {
                 if (zero) return variable_list{zeros_like(g)};
                 const Scalar e1 = exponent.isIntegral(true)
                                       ? Scalar(exponent.toLong() - 1)
                                       : Scalar(exponent.toDouble() - 1.0);
                 return variable_list{
                     mul(mul(g, exponent), turnout::pow(a.unpack(&n), e1))};
               });
    if (node != nullptr) {
      node->addSaved("exponent", IValue(exponent));
      node->addSaved("self", a);
    }
  }
  return self;
}

// torch 1.13's name for the node of an operator without a derivative.
constexpr const char* kNotImplementedNode = "torch::autograd::NotImplemented";

// torch 1.13's NotImplemented node has an edge for each input that
// requires grad, and none for the others: x // 4 has one.
Node* recordNotImplemented(const Tensor& self, const Tensor& other,
                           const Tensor& output, F::Formula formula) {
  std::vector<Tensor> inputs;
  for (const Tensor* t : {&self, &other}) {
    if (requiresGrad(*t)) inputs.push_back(*t);
  }
  return record(kNotImplementedNode, inputs, output, std::move(formula));
}

variable_list floorDivideGrad(const F&, const Tensor&) {
  TURNOUT_CHECK(false, ErrorKind::NotImplemented,
                "derivative for aten::floor_divide is not implemented");
  return {};
}

// remainder.Scalar_Tensor (`4 % x`): not differentiable in torch 1.13.
Tensor remainderScalarTensorKernel(const Scalar& self, const Tensor& other) {
  const bool rec = shouldRecord("remainder", other);
  Tensor out = belowAutograd(
      [&] { return remainderScalarTensorOp().call(self, other); });
  if (rec) record(kNotImplementedNode, {other}, out, remainderScalarTensorGrad);
  return out;
}

Tensor floorDivideKernel(const Tensor& self, const Tensor& other) {
  const bool rec = shouldRecord("floor_divide", self, other);
  Tensor out = belowAutograd([&] { return floorDivideOp().call(self, other); });
  if (rec) recordNotImplemented(self, other, out, floorDivideGrad);
  return out;
}

Tensor& floorDivideInplace(Tensor& self, const Tensor& other) {
  const bool rec = shouldRecord("floor_divide_", self, other);
  detail::writeInplace(self, rec, "floor_divide_",
                       [&] { floorDivideInplaceOp().call(self, other); });
  if (rec) recordNotImplemented(self, other, self, floorDivideGrad);
  return self;
}

// ---- prod ------------------------------------------------------------------------------

Tensor flipDim(const Tensor& t, int64_t d) {
  static const auto op =
      lookup<Tensor(const Tensor&, IntArrayRef)>("aten::flip", "");
  const int64_t dims[] = {d};
  return op.call(t, dims);
}

// The product of every element of x along d but the one at each position:
// exclusive cumulative products from the left and from the right, so zeros
// need no division.
Tensor prodOthers(const Tensor& x, int64_t d) {
  const int64_t size = x.sizes()[d];
  if (size == 0) return x;
  const Tensor one = ones_like(slice(x, d, 0, 1, 1));
  const Tensor left = cumprod(cat({one, slice(x, d, 0, size - 1, 1)}, d), d);
  const Tensor right_rev =
      cumprod(cat({one, flipDim(slice(x, d, 1, size, 1), d)}, d), d);
  return mul(left, flipDim(right_rev, d));
}

Tensor prodDimBackward(const Tensor& g, const Tensor& x, int64_t d,
                       bool keepdim) {
  if (x.dim() == 0) return g;
  const Tensor grad = keepdim ? g : turnout::unsqueeze(g, d);
  return mul(grad, prodOthers(x, d));
}

Tensor prodAllKernel(const Tensor& self, std::optional<ScalarType> dtype) {
  const bool rec = shouldRecord("prod", self);
  Tensor out = belowAutograd([&] { return prodOp().call(self, dtype); });
  if (rec) {
    SavedVariable s(self);
    Node* node =
        record("ProdBackward0", {self}, out, [s](const F& n, const Tensor& g) {
          const Tensor x = s.unpack(&n);
          if (x.dim() == 0) return variable_list{g};
          const Tensor flat = reshape(x, {-1});
          const Tensor others = prodOthers(flat, 0);
          return variable_list{reshape(mul(g, others), x.sizes())};
        });
    if (node != nullptr) {
      node->addSaved("result", SavedVariable(out, /*is_output=*/true));
      node->addSaved("self", s);
    }
  }
  return out;
}

Tensor prodDimKernel(const Tensor& self, int64_t dim, bool keepdim,
                     std::optional<ScalarType> dtype) {
  const bool rec = shouldRecord("prod", self);
  Tensor out =
      belowAutograd([&] { return prodDimOp().call(self, dim, keepdim, dtype); });
  if (rec) {
    const int64_t d = maybeWrapDim(dim, self.dim());
    SavedVariable s(self);
    Node* node = record(
        "ProdBackward1", {self}, out,
        [s, d, keepdim](const F& n, const Tensor& g) {
          return variable_list{prodDimBackward(g, s.unpack(&n), d, keepdim)};
        });
    if (node != nullptr) {
      node->addSaved("dim", IValue(dim));
      node->addSaved("keepdim", IValue(keepdim));
      node->addSaved("result", SavedVariable(out, /*is_output=*/true));
      node->addSaved("self", s);
    }
  }
  return out;
}

// ---- gather, scatter_add ------------------------------------------------------------

Tensor gatherKernel(const Tensor& self, int64_t dim, const Tensor& index,
                    bool sparse_grad) {
  const bool rec = shouldRecord("gather", self);
  Tensor out = belowAutograd(
      [&] { return gatherOp().call(self, dim, index, sparse_grad); });
  if (rec) {
    const int64_t d = maybeWrapDim(dim, self.dim());
    const DimVector sizes(self.sizes().begin(), self.sizes().end());
    const ScalarType dtype = self.scalar_type();
    SavedVariable ix(index);
    Node* node =
        record("GatherBackward0", {self, index}, out,
               [ix, d, sizes, dtype](const F& n, const Tensor& g) {
                 const Tensor zero = zeros(
                     sizes, TensorOptions(g.scalar_type()).device(g.device()));
                 (void)dtype;
                 return variable_list{
                     scatterAddOp().call(zero, d, ix.unpack(&n), g), Tensor()};
               });
    if (node != nullptr) {
      node->addSaved("dim", IValue(dim));
      node->addSaved("index", ix);
      node->addSaved("self", SavedVariable(self));
      node->addSaved("sparse_grad", IValue(sparse_grad));
    }
  }
  return out;
}

Tensor scatterAddKernel(const Tensor& self, int64_t dim, const Tensor& index,
                        const Tensor& src) {
  const bool rec = shouldRecord("scatter_add", self, src);
  Tensor out = belowAutograd(
      [&] { return scatterAddOp().call(self, dim, index, src); });
  if (rec) {
    const int64_t d = maybeWrapDim(dim, self.dim());
    SavedVariable ix(index);
    Node* node = record("ScatterAddBackward0", {self, index, src}, out,
                        [ix, d](const F& n, const Tensor& g) {
                          Tensor gsrc;
                          if (n.needsGrad(2))
                            gsrc = gatherOp().call(g, d, ix.unpack(&n), false);
                          return variable_list{g, Tensor(), gsrc};
                        });
    if (node != nullptr) {
      // torch shows the index only where src's gradient needs it.
      node->addSaved("dim", IValue(dim));
      node->addSaved("index", requiresGrad(src) ? ix : SavedVariable());
    }
  }
  return out;
}

// ---- logsumexp, norm ---------------------------------------------------------------

// g and r (reduced over `dims`, keepdim or not) with the reduced dimensions
// back as size 1, so that they broadcast against the input.
Tensor unsqueezeReduced(const Tensor& t, const DimVector& dims, int64_t ndim,
                        bool keepdim) {
  if (keepdim || ndim == 0) return t;
  DimVector sorted = dims;
  if (sorted.empty()) {
    for (int64_t i = 0; i < ndim; ++i) sorted.push_back(i);
  }
  std::sort(sorted.begin(), sorted.end());
  Tensor out = t;
  for (int64_t d : sorted) out = turnout::unsqueeze(out, d);
  return out;
}

DimVector wrapAll(IntArrayRef dims, int64_t ndim) {
  DimVector out;
  for (int64_t d : dims) out.push_back(maybeWrapDim(d, ndim));
  return out;
}

Tensor logsumexpKernel(const Tensor& self, IntArrayRef dim, bool keepdim) {
  const bool rec = shouldRecord("logsumexp", self);
  Tensor out =
      belowAutograd([&] { return logsumexpOp().call(self, dim, keepdim); });
  if (rec) {
    const DimVector dims = wrapAll(dim, self.dim());
    const int64_t ndim = self.dim();
    SavedVariable s(self);
    SavedVariable r(out, /*is_output=*/true);
    Node* node = record(
        "LogsumexpBackward0", {self}, out,
        [s, r, dims, ndim, keepdim](const F& n, const Tensor& g) {
          const Tensor gu = unsqueezeReduced(g, dims, ndim, keepdim);
          const Tensor ru = unsqueezeReduced(r.unpack(&n), dims, ndim, keepdim);
          return variable_list{mul(gu, turnout::exp(sub(s.unpack(&n), ru)))};
        });
    if (node != nullptr) {
      node->addSaved("dim", IValue(dim));
      node->addSaved("keepdim", IValue(keepdim));
      node->addSaved("result", r);
      node->addSaved("self", s);
    }
  }
  return out;
}

// torch 1.13's norm_backward.
Tensor normBackward(const Tensor& g_in, const Tensor& x, const Tensor& norm_in,
                    double p, const DimVector& dims, bool keepdim) {
  const int64_t ndim = x.dim();
  const Tensor g = unsqueezeReduced(g_in, dims, ndim, keepdim);
  const Tensor norm = unsqueezeReduced(norm_in, dims, ndim, keepdim);
  const Tensor zero_norm = eq(norm, 0);
  if (p == 0) return Tensor();  // torch 1.13: no gradient at all
  if (p == 1) return mul(turnout::sign(x), g);
  if (p == 2) return mul(x, masked_fill(div(g, norm), zero_norm, 0));
  if (std::isinf(p)) {
    const Tensor a = turnout::abs(x);
    const Tensor mask = to(eq(a, norm), x.scalar_type());
    const DimVector all = dims.empty() ? [&] {
      DimVector v;
      for (int64_t i = 0; i < ndim; ++i) v.push_back(i);
      return v;
    }() : dims;
    const Tensor count = turnout::sum(mask, all, /*keepdim=*/true);
    return mul(turnout::sign(x), mul(div(g, count), mask));
  }
  const Tensor a = turnout::abs(x);
  Tensor self_scaled;
  if (p < 2) {
    self_scaled = mul(turnout::sign(x), pow(a, p - 1));
  } else {
    self_scaled = mul(x, pow(a, p - 2));
  }
  const Tensor scale = masked_fill(div(g, pow(norm, p - 1)), zero_norm, 0);
  return mul(self_scaled, scale);
}

// `name`: torch's, NormBackward0 for norm.Scalar, NormBackward1 for
// norm.ScalarOpt_dim. Returns the node (null when none was made) for the
// caller's saved values besides self and result.
Node* recordNorm(const char* name, const Tensor& self, const Tensor& out,
                 double p, DimVector dims, bool keepdim) {
  SavedVariable s(self);
  SavedVariable r(out, /*is_output=*/true);
  Node* node = record(
      name, {self}, out, [s, r, p, dims, keepdim](const F& n, const Tensor& g) {
        return variable_list{
            normBackward(g, s.unpack(&n), r.unpack(&n), p, dims, keepdim)};
      });
  if (node != nullptr) {
    node->addSaved("result", r);
    node->addSaved("self", s);
  }
  return node;
}

Tensor normScalarKernel(const Tensor& self, const Scalar& p) {
  const bool rec = shouldRecord("norm", self);
  Tensor out = belowAutograd([&] { return normScalarOp().call(self, p); });
  if (rec) {
    Node* node =
        recordNorm("NormBackward0", self, out, p.toDouble(), {}, false);
    if (node != nullptr) node->addSaved("p", IValue(p));
  }
  return out;
}

// The node of a norm over `dim` (NormBackward1; NormBackward3 for the
// dtype= form), with torch's saved values.
void recordNormDim(const char* name, const Tensor& self, const Tensor& out,
                   const std::optional<Scalar>& p, IntArrayRef dim,
                   bool keepdim) {
  Node* node = recordNorm(name, self, out, p ? p->toDouble() : 2.0,
                          wrapAll(dim, self.dim()), keepdim);
  if (node != nullptr) {
    node->addSaved("dim", IValue(dim));  // as given
    node->addSaved("keepdim", IValue(keepdim));
    node->addSaved("p", p ? IValue(*p) : IValue());
  }
}

Tensor normDimKernel(const Tensor& self, const std::optional<Scalar>& p,
                     IntArrayRef dim, bool keepdim) {
  const bool rec = shouldRecord("norm", self);
  Tensor out =
      belowAutograd([&] { return normDimOp().call(self, p, dim, keepdim); });
  if (rec) recordNormDim("NormBackward1", self, out, p, dim, keepdim);
  return out;
}

// norm's dtype= overloads: norm's formula over self (in its own dtype) and
// the result (in dtype), as torch 1.13's NormBackward2 / NormBackward3; the
// engine gives the gradient self's dtype (function_node.cc).
Tensor normDtypeKernel(const Tensor& self, const std::optional<Scalar>& p,
                       ScalarType dtype) {
  const bool rec = shouldRecord("norm", self);
  Tensor out =
      belowAutograd([&] { return normDtypeOp().call(self, p, dtype); });
  if (rec) {
    Node* node = recordNorm("NormBackward2", self, out, p ? p->toDouble() : 2.0,
                            {}, false);
    if (node != nullptr) node->addSaved("p", p ? IValue(*p) : IValue());
  }
  return out;
}

Tensor normDimDtypeKernel(const Tensor& self, const std::optional<Scalar>& p,
                          IntArrayRef dim, bool keepdim, ScalarType dtype) {
  const bool rec = shouldRecord("norm", self);
  Tensor out = belowAutograd(
      [&] { return normDimDtypeOp().call(self, p, dim, keepdim, dtype); });
  if (rec) recordNormDim("NormBackward3", self, out, p, dim, keepdim);
  return out;
}

// ---- flip, repeat, squeeze ------------------------------------------------------------

Tensor flipKernel(const Tensor& self, IntArrayRef dims) {
  const bool rec = shouldRecord("flip", self);
  Tensor out = belowAutograd([&] { return flipOp().call(self, dims); });
  if (rec) {
    const DimVector ds(dims.begin(), dims.end());
    Node* node =
        record("FlipBackward0", {self}, out, [ds](const F&, const Tensor& g) {
          return variable_list{flipOp().call(g, ds)};
        });
    if (node != nullptr) node->addSaved("dims", IValue(dims));
  }
  return out;
}

// The output is self (padded with leading 1s to the length of `repeats`)
// tiled: seen as [r0, p0, r1, p1, ...], the gradient is summed over the
// r's and reshaped to self's sizes.
Tensor repeatBackward(const Tensor& g, const DimVector& repeats,
                      const DimVector& sizes) {
  const size_t n = repeats.size();
  const size_t lead = n - sizes.size();  // the forward checked n >= dim
  DimVector split;
  DimVector copies;
  for (size_t i = 0; i < n; ++i) {
    split.push_back(repeats[i]);
    split.push_back(i < lead ? 1 : sizes[i - lead]);
    copies.push_back(static_cast<int64_t>(2 * i));
  }
  if (n == 0) return g;
  return reshape(turnout::sum(reshape(g, split), copies, false), sizes);
}

Tensor repeatKernel(const Tensor& self, IntArrayRef repeats) {
  const bool rec = shouldRecord("repeat", self);
  Tensor out = belowAutograd([&] { return repeatOp().call(self, repeats); });
  if (rec) {
    const DimVector reps(repeats.begin(), repeats.end());
    const DimVector sizes(self.sizes().begin(), self.sizes().end());
    Node* node = record("RepeatBackward0", {self}, out,
                        [reps, sizes](const F&, const Tensor& g) {
                          return variable_list{repeatBackward(g, reps, sizes)};
                        });
    if (node != nullptr) {
      node->addSaved("repeats", IValue(repeats));
      node->addSaved("self_sym_sizes", IValue(self.sizes()));
    }
  }
  return out;
}

// squeeze(): a view, as torch's.
Tensor squeezeAllKernel(const Tensor& self) {
  const bool rec = shouldRecord("squeeze", self);
  Tensor out = belowAutograd([&] { return squeezeOp().call(self); });
  setViewBase(out, self);
  if (rec) {
    const DimVector sizes(self.sizes().begin(), self.sizes().end());
    Node* node = record(
        "SqueezeBackward0", {self}, out,
        [sizes](const F&, const Tensor& g) {
          return variable_list{reshape(g, sizes)};
        },
        /*is_view=*/true);
    if (node != nullptr) node->addSaved("self_sizes", IValue(self.sizes()));
  }
  return out;
}

// ---- dot, mv ------------------------------------------------------------------------

// torch shows each operand only where the other one's gradient needs it.
Tensor dotKernel(const Tensor& self, const Tensor& tensor) {
  const bool rec = shouldRecord("dot", self, tensor);
  Tensor out = belowAutograd([&] { return dotOp().call(self, tensor); });
  if (rec) {
    const SavedVariable a = requiresGrad(tensor) ? SavedVariable(self)
                                                 : SavedVariable();
    const SavedVariable b = requiresGrad(self) ? SavedVariable(tensor)
                                               : SavedVariable();
    Node* node = record("DotBackward0", {self, tensor}, out,
                        [a, b](const F& n, const Tensor& g) {
                          Tensor ga, gb;
                          if (n.needsGrad(0)) ga = mul(g, b.unpack(&n));
                          if (n.needsGrad(1)) gb = mul(g, a.unpack(&n));
                          return variable_list{ga, gb};
                        });
    if (node != nullptr) {
      node->addSaved("self", a);
      node->addSaved("tensor", b);
    }
  }
  return out;
}

Tensor mvKernel(const Tensor& self, const Tensor& vec) {
  const bool rec = shouldRecord("mv", self, vec);
  Tensor out = belowAutograd([&] { return mvOp().call(self, vec); });
  if (rec) {
    const SavedVariable a = requiresGrad(vec) ? SavedVariable(self)
                                              : SavedVariable();
    const SavedVariable b = requiresGrad(self) ? SavedVariable(vec)
                                               : SavedVariable();
    Node* node = record(
        "MvBackward0", {self, vec}, out, [a, b](const F& n, const Tensor& g) {
          Tensor ga, gb;
          if (n.needsGrad(0)) {
            ga = mul(turnout::unsqueeze(g, 1),
                     turnout::unsqueeze(b.unpack(&n), 0));
          }
          if (n.needsGrad(1)) gb = mvOp().call(turnout::t(a.unpack(&n)), g);
          return variable_list{ga, gb};
        });
    if (node != nullptr) {
      node->addSaved("self", a);
      node->addSaved("vec", b);
    }
  }
  return out;
}

// t * s, or t itself where s is 1 (torch 1.13's maybe_multiply).
Tensor scaledBy(const Tensor& t, const Scalar& s) {
  const bool one =
      s.isIntegral(false) ? s.toLong() == 1 : s.toDouble() == 1.0;
  return one ? t : mul(t, s);
}

// AddmvBackward0; `out` is the result (self for addmv_). torch shows mat
// only where vec's gradient needs it, and vec where mat's does.
void recordAddmv(const Tensor& self, const Tensor& mat, const Tensor& vec,
                 const Scalar& beta, const Scalar& alpha, const Tensor& out) {
  const SavedVariable m = requiresGrad(vec) ? SavedVariable(mat)
                                            : SavedVariable();
  const SavedVariable v = requiresGrad(mat) ? SavedVariable(vec)
                                            : SavedVariable();
  Node* node = record(
      "AddmvBackward0", {self, mat, vec}, out,
      [m, v, beta, alpha](const F& n, const Tensor& g) {
        // The node sums self's gradient to self's shape.
        variable_list grads(3);
        // Scaled only by a factor other than 1, as torch 1.13's
        // maybe_multiply; mat's is the outer product g vec^T (torch's ger:
        // g as a column times vec, MulBackward0 under create_graph).
        if (n.needsGrad(0)) grads[0] = scaledBy(g, beta);
        if (n.needsGrad(1)) {
          grads[1] = scaledBy(
              mul(turnout::unsqueeze(g, 1), v.unpack(&n)), alpha);
        }
        if (n.needsGrad(2)) {
          grads[2] = scaledBy(mvOp().call(turnout::t(m.unpack(&n)), g), alpha);
        }
        return grads;
      });
  if (node != nullptr) {
    node->addSaved("alpha", IValue(alpha));
    node->addSaved("beta", IValue(beta));
    node->addSaved("mat", m);
    node->addSaved("vec", v);
  }
}

Tensor addmvKernel(const Tensor& self, const Tensor& mat, const Tensor& vec,
                   const Scalar& beta, const Scalar& alpha) {
  const bool rec = shouldRecord("addmv", self, mat, vec);
  Tensor out = belowAutograd(
      [&] { return addmvOp().call(self, mat, vec, beta, alpha); });
  if (rec) recordAddmv(self, mat, vec, beta, alpha, out);
  return out;
}

Tensor& addmvInplace(Tensor& self, const Tensor& mat, const Tensor& vec,
                     const Scalar& beta, const Scalar& alpha) {
  const bool rec = shouldRecord("addmv_", self, mat, vec);
  detail::writeInplace(self, rec, "addmv_", [&] {
    addmvInplaceOp().call(self, mat, vec, beta, alpha);
  });
  if (rec) recordAddmv(self, mat, vec, beta, alpha, self);
  return self;
}

// ---- zero_, fill_.Tensor, fmod.Scalar --------------------------------------------------

variable_list zeroGrad(const F&, const Tensor& g) {
  return variable_list{zeros_like(g)};
}

Tensor& zeroKernel(Tensor& self) {
  const bool rec = shouldRecord("zero_", self);
  detail::writeInplace(self, rec, "zero_", [&] { zeroOp().call(self); });
  if (rec) record("ZeroBackward0", {self}, self, zeroGrad);
  return self;
}

Tensor& fillTensorKernel(Tensor& self, const Tensor& value) {
  const bool rec = shouldRecord("fill_", self, value);
  detail::writeInplace(self, rec, "fill_",
                       [&] { fillTensorOp().call(self, value); });
  if (rec) {
    record("FillBackward3", {self, value}, self,
           [](const F& n, const Tensor& g) {
             Tensor gs, gv;
             if (n.needsGrad(0)) gs = zeros_like(g);
             if (n.needsGrad(1)) gv = turnout::sum(g);
             return variable_list{gs, gv};
           });
  }
  return self;
}

Tensor fmodScalarKernel(const Tensor& self, const Scalar& other) {
  const bool rec = shouldRecord("fmod", self);
  Tensor out = belowAutograd([&] { return fmodScalarOp().call(self, other); });
  if (rec) record("FmodBackward0", {self}, out, passGrad);
  return out;
}

Tensor& fmodScalarInplace(Tensor& self, const Scalar& other) {
  const bool rec = shouldRecord("fmod_", self);
  detail::writeInplace(self, rec, "fmod_",
                       [&] { fmodScalarInplaceOp().call(self, other); });
  if (rec) record("FmodBackward0", {self}, self, passGrad);
  return self;
}

// resize_: refused on a tensor that requires grad, grad mode or not (its
// history would describe other elements), as torch's; otherwise below
// autograd, leaving the version counter alone (a geometry change, not a
// write).
Tensor& resizeInplace(Tensor& self, IntArrayRef size,
                      std::optional<MemoryFormat> memory_format) {
  TURNOUT_CHECK(!self.requires_grad(), ErrorKind::InvalidArgument,
                "resize_(): cannot resize a tensor that requires grad; "
                "resize a detached one (x.detach().resize_(...)) or build a "
                "new tensor");
  static const auto op =
      lookup<Tensor&(Tensor&, IntArrayRef, std::optional<MemoryFormat>)>(
          "aten::resize_", "");
  belowAutograd([&] { op.call(self, size, memory_format); });
  return self;
}

// resize_as_: refused as resize_ for a self that requires grad (the
// template may: only its sizes are read); otherwise below autograd.
Tensor& resizeAsInplace(Tensor& self, const Tensor& the_template,
                        std::optional<MemoryFormat> memory_format) {
  TURNOUT_CHECK(!self.requires_grad(), ErrorKind::InvalidArgument,
                "resize_as_(): cannot resize a tensor that requires grad; "
                "resize a detached one (x.detach().resize_as_(t)) or build a "
                "new tensor");
  static const auto op =
      lookup<Tensor&(Tensor&, const Tensor&, std::optional<MemoryFormat>)>(
          "aten::resize_as_", "");
  belowAutograd([&] { op.call(self, the_template, memory_format); });
  return self;
}

}  // namespace
}  // namespace autograd
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, Autograd, m) {
  m.impl("resize_", TURNOUT_FN(turnout::autograd::resizeInplace));
  m.impl("resize_as_", TURNOUT_FN(turnout::autograd::resizeAsInplace));
  using namespace turnout::autograd;  // NOLINT: the kernels above
  m.impl("maximum", TURNOUT_FN(maxMinKernel<true>));
  m.impl("minimum", TURNOUT_FN(maxMinKernel<false>));
  m.impl("fmod.Tensor", TURNOUT_FN(fmodKernel));
  m.impl("fmod_.Tensor", TURNOUT_FN(fmodInplace));
  m.impl("remainder.Tensor", TURNOUT_FN(remainderKernel));
  m.impl("remainder_.Tensor", TURNOUT_FN(remainderInplace));
  m.impl("remainder.Scalar", TURNOUT_FN(remainderScalarKernel));
  m.impl("remainder_.Scalar", TURNOUT_FN(remainderScalarInplace));
  m.impl("remainder.Scalar_Tensor", TURNOUT_FN(remainderScalarTensorKernel));
  m.impl("pow.Tensor_Tensor", TURNOUT_FN(powKernel));
  m.impl("pow_.Tensor", TURNOUT_FN(powInplace));
  m.impl("pow.Scalar", TURNOUT_FN(powScalarKernel));
  m.impl("pow_.Scalar", TURNOUT_FN(powScalarInplace));
  m.impl("floor_divide", TURNOUT_FN(floorDivideKernel));
  m.impl("floor_divide_.Tensor", TURNOUT_FN(floorDivideInplace));
  m.impl("prod", TURNOUT_FN(prodAllKernel));
  m.impl("prod.dim_int", TURNOUT_FN(prodDimKernel));
  m.impl("gather", TURNOUT_FN(gatherKernel));
  m.impl("scatter_add", TURNOUT_FN(scatterAddKernel));
  m.impl("logsumexp", TURNOUT_FN(logsumexpKernel));
  m.impl("norm.Scalar", TURNOUT_FN(normScalarKernel));
  m.impl("norm.ScalarOpt_dim", TURNOUT_FN(normDimKernel));
  m.impl("norm.ScalarOpt_dtype", TURNOUT_FN(normDtypeKernel));
  m.impl("norm.ScalarOpt_dim_dtype", TURNOUT_FN(normDimDtypeKernel));
  m.impl("flip", TURNOUT_FN(flipKernel));
  m.impl("repeat", TURNOUT_FN(repeatKernel));
  m.impl("squeeze", TURNOUT_FN(squeezeAllKernel));
  m.impl("dot", TURNOUT_FN(dotKernel));
  m.impl("mv", TURNOUT_FN(mvKernel));
  m.impl("zero_", TURNOUT_FN(zeroKernel));
  m.impl("fill_.Tensor", TURNOUT_FN(fillTensorKernel));
  m.impl("fmod.Scalar", TURNOUT_FN(fmodScalarKernel));
  m.impl("fmod_.Scalar", TURNOUT_FN(fmodScalarInplace));
  m.impl("addmv", TURNOUT_FN(addmvKernel));
  m.impl("addmv_", TURNOUT_FN(addmvInplace));
  // Not differentiable.
  for (const char* name :
       {"all", "all.dim", "any", "any.dim", "logical_not", "logical_not_",
        "bitwise_xor.Tensor", "bitwise_xor_.Tensor", "eye", "eye.m",
        "new_zeros", "new_ones", "new_full", "isnan", "isinf",
        "bitwise_xor.Scalar_Tensor"}) {
    m.impl(name, turnout::CppFunction::makeFallthrough());
  }
}
