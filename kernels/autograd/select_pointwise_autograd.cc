// The Autograd kernels of kernels/pointwise_ternary.cc and
// kernels/select_ops.cc, with torch 1.13's formulas (derivatives.yaml),
// node names and saved values, written over turnout's operators so that
// they are differentiable again:
//   addcmul (AddcmulBackward0): self: g; tensor1: g * tensor2 * value;
//     tensor2: g * tensor1 * value (tensor2 saved only where tensor1 needs
//     a gradient, and the reverse, as torch's);
//   addcdiv (AddcdivBackward0): self: g; tensor1: g * value / tensor2;
//     tensor2: -g * value * tensor1 / tensor2^2;
//   lerp.Scalar (LerpBackward0): self: g * (1 - weight); end: g * weight;
//   lerp.Tensor (LerpBackward1): as lerp.Scalar, and weight: g * (end -
//     self);
//   tril, triu (TrilBackward0, TriuBackward0): tril(g, diagonal);
//   roll (RollBackward0): roll(g, -shifts, dims);
//   masked_select (MaskedSelectBackward0): g put into zeros of the
//     broadcast shape at the mask's places (index_put), summed to self's.
// The in-place forms record the same nodes on self. equal is not
// differentiable (fallthrough); the out= forms have no Autograd kernel
// (the autograd fallback refuses inputs that require grad, as torch's).
#include <optional>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/operator_handle.h"
#include "kernels/autograd/function_node.h"
#include "kernels/autograd/saved_variable.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/indexing.h"
#include "kernels/shape.h"
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

// ---- addcmul, addcdiv -------------------------------------------------------------

using AddcSig = Tensor(const Tensor&, const Tensor&, const Tensor&,
                       const Scalar&);
using AddcInplaceSig = Tensor&(Tensor&, const Tensor&, const Tensor&,
                               const Scalar&);

template <bool kMul>
const TypedOperatorHandle<AddcSig>& addcOp() {
  static const auto op =
      lookup<AddcSig>(kMul ? "aten::addcmul" : "aten::addcdiv", "");
  return op;
}
template <bool kMul>
const TypedOperatorHandle<AddcInplaceSig>& addcInplaceOp() {
  static const auto op =
      lookup<AddcInplaceSig>(kMul ? "aten::addcmul_" : "aten::addcdiv_", "");
  return op;
}

// Records the node of addcmul/addcdiv whose output is `out` (self itself
// for the in-place form).
template <bool kMul>
void recordAddc(const Tensor& self, const Tensor& t1, const Tensor& t2,
                const Scalar& value, const Tensor& out) {
  const bool g1 = requiresGrad(t1);
  const bool g2 = requiresGrad(t2);
  // What each formula reads, as torch saves it.
  const SavedVariable s1 = g2 ? SavedVariable(t1) : SavedVariable();
  const SavedVariable s2 = (kMul ? g1 : (g1 || g2)) ? SavedVariable(t2)
                                                    : SavedVariable();
  Node* node = record(
      kMul ? "AddcmulBackward0" : "AddcdivBackward0", {self, t1, t2}, out,
      [s1, s2, value](const F& n, const Tensor& g) {
        Tensor gs;
        Tensor g1;
        Tensor g2;
        if (n.needsGrad(0)) gs = g;
        if constexpr (kMul) {
          // g * (tensor2 * value), as torch 1.13 groups it (the first
          // gradient's node is then MulBackward0, as torch's).
          if (n.needsGrad(1)) g1 = mul(g, mul(s2.unpack(&n), value));
          if (n.needsGrad(2)) g2 = mul(g, mul(s1.unpack(&n), value));
        } else {
          // g * (value / tensor2) and -g * (value * tensor1 / tensor2^2).
          if (n.needsGrad(1)) {
            g1 = mul(g, mul(turnout::reciprocal(s2.unpack(&n)), value));
          }
          if (n.needsGrad(2)) {
            const Tensor b = s2.unpack(&n);
            g2 = mul(neg(g), div(mul(s1.unpack(&n), value), mul(b, b)));
          }
        }
        return variable_list{gs, g1, g2};
      });
  if (node != nullptr) {
    node->addSaved("tensor1", s1);
    node->addSaved("tensor2", s2);
    node->addSaved("value", IValue(value));
  }
}

template <bool kMul>
Tensor addcKernel(const Tensor& self, const Tensor& t1, const Tensor& t2,
                  const Scalar& value) {
  const bool rec = shouldRecord(kMul ? "addcmul" : "addcdiv", self, t1, t2);
  Tensor out =
      belowAutograd([&] { return addcOp<kMul>().call(self, t1, t2, value); });
  if (rec) recordAddc<kMul>(self, t1, t2, value, out);
  return out;
}

template <bool kMul>
Tensor& addcInplace(Tensor& self, const Tensor& t1, const Tensor& t2,
                    const Scalar& value) {
  const char* op = kMul ? "addcmul_" : "addcdiv_";
  const bool rec = shouldRecord(op, self, t1, t2);
  detail::writeInplace(self, rec, op, [&] {
    addcInplaceOp<kMul>().call(self, t1, t2, value);
  });
  if (rec) recordAddc<kMul>(self, t1, t2, value, self);
  return self;
}

// ---- lerp -------------------------------------------------------------------------

using LerpScalarSig = Tensor(const Tensor&, const Tensor&, const Scalar&);
using LerpScalarInplaceSig = Tensor&(Tensor&, const Tensor&, const Scalar&);
using LerpTensorSig = Tensor(const Tensor&, const Tensor&, const Tensor&);
using LerpTensorInplaceSig = Tensor&(Tensor&, const Tensor&, const Tensor&);

const TypedOperatorHandle<LerpScalarSig>& lerpScalarOp() {
  static const auto op = lookup<LerpScalarSig>("aten::lerp", "Scalar");
  return op;
}
const TypedOperatorHandle<LerpScalarInplaceSig>& lerpScalarInplaceOp() {
  static const auto op = lookup<LerpScalarInplaceSig>("aten::lerp_", "Scalar");
  return op;
}
const TypedOperatorHandle<LerpTensorSig>& lerpTensorOp() {
  static const auto op = lookup<LerpTensorSig>("aten::lerp", "Tensor");
  return op;
}
const TypedOperatorHandle<LerpTensorInplaceSig>& lerpTensorInplaceOp() {
  static const auto op = lookup<LerpTensorInplaceSig>("aten::lerp_", "Tensor");
  return op;
}

void recordLerpScalar(const Tensor& self, const Tensor& end,
                      const Scalar& weight, const Tensor& out) {
  const double w = weight.toDouble();
  Node* node = record("LerpBackward0", {self, end}, out,
                      [w](const F& n, const Tensor& g) {
                        Tensor gs;
                        Tensor ge;
                        if (n.needsGrad(0)) gs = mul(g, Scalar(1.0 - w));
                        if (n.needsGrad(1)) ge = mul(g, Scalar(w));
                        return variable_list{gs, ge};
                      });
  if (node != nullptr) node->addSaved("weight", IValue(weight));
}

Tensor lerpScalarKernel(const Tensor& self, const Tensor& end,
                        const Scalar& weight) {
  const bool rec = shouldRecord("lerp", self, end);
  Tensor out =
      belowAutograd([&] { return lerpScalarOp().call(self, end, weight); });
  if (rec) recordLerpScalar(self, end, weight, out);
  return out;
}

Tensor& lerpScalarInplace(Tensor& self, const Tensor& end,
                          const Scalar& weight) {
  const bool rec = shouldRecord("lerp_", self, end);
  detail::writeInplace(self, rec, "lerp_", [&] {
    lerpScalarInplaceOp().call(self, end, weight);
  });
  if (rec) recordLerpScalar(self, end, weight, self);
  return self;
}

// `self_value`: self before an in-place form wrote it.
void recordLerpTensor(const Tensor& self, const Tensor& self_value,
                      const Tensor& end, const Tensor& weight,
                      const Tensor& out) {
  const bool gw = requiresGrad(weight);
  const SavedVariable sw(weight);  // torch saves it in every case
  const SavedVariable ss = gw ? SavedVariable(self_value) : SavedVariable();
  const SavedVariable se = gw ? SavedVariable(end) : SavedVariable();
  Node* node = record(
      "LerpBackward1", {self, end, weight}, out,
      [sw, ss, se](const F& n, const Tensor& g) {
        Tensor gs;
        Tensor ge;
        Tensor gw;
        if (n.needsGrad(0)) gs = mul(g, rsub(sw.unpack(&n), Scalar(1)));
        if (n.needsGrad(1)) ge = mul(g, sw.unpack(&n));
        if (n.needsGrad(2)) gw = mul(g, sub(se.unpack(&n), ss.unpack(&n)));
        return variable_list{gs, ge, gw};
      });
  if (node != nullptr) {
    node->addSaved("end", se);
    node->addSaved("self", ss);
    node->addSaved("weight", sw);
  }
}

Tensor lerpTensorKernel(const Tensor& self, const Tensor& end,
                        const Tensor& weight) {
  const bool rec = shouldRecord("lerp", self, end, weight);
  Tensor out =
      belowAutograd([&] { return lerpTensorOp().call(self, end, weight); });
  if (rec) recordLerpTensor(self, self, end, weight, out);
  return out;
}

Tensor& lerpTensorInplace(Tensor& self, const Tensor& end,
                          const Tensor& weight) {
  const bool rec = shouldRecord("lerp_", self, end, weight);
  checkInplaceAllowed(self, rec, "lerp_");
  // Self's value before the write, for weight's gradient: cloned with
  // autograd (as torch's original_self), so that a gradient of that
  // gradient reaches self's history too.
  Tensor original;
  if (rec && requiresGrad(weight)) original = turnout::clone(self);
  belowAutograd([&] { lerpTensorInplaceOp().call(self, end, weight); });
  self.unsafeGetTensorImpl()->bump_version();
  if (rec) recordLerpTensor(self, original, end, weight, self);
  return self;
}

// ---- tril, triu -------------------------------------------------------------------

using TriSig = Tensor(const Tensor&, int64_t);
using TriInplaceSig = Tensor&(Tensor&, int64_t);

template <bool kLower>
const TypedOperatorHandle<TriSig>& triOp() {
  static const auto op =
      lookup<TriSig>(kLower ? "aten::tril" : "aten::triu", "");
  return op;
}
template <bool kLower>
const TypedOperatorHandle<TriInplaceSig>& triInplaceOp() {
  static const auto op =
      lookup<TriInplaceSig>(kLower ? "aten::tril_" : "aten::triu_", "");
  return op;
}

template <bool kLower>
void recordTri(const Tensor& self, int64_t diagonal, const Tensor& out) {
  Node* node = record(kLower ? "TrilBackward0" : "TriuBackward0", {self}, out,
                      [diagonal](const F&, const Tensor& g) {
                        return variable_list{triOp<kLower>().call(g, diagonal)};
                      });
  if (node != nullptr) node->addSaved("diagonal", IValue(diagonal));
}

template <bool kLower>
Tensor triKernel(const Tensor& self, int64_t diagonal) {
  const bool rec = shouldRecord(kLower ? "tril" : "triu", self);
  Tensor out =
      belowAutograd([&] { return triOp<kLower>().call(self, diagonal); });
  if (rec) recordTri<kLower>(self, diagonal, out);
  return out;
}

template <bool kLower>
Tensor& triInplace(Tensor& self, int64_t diagonal) {
  const char* op = kLower ? "tril_" : "triu_";
  const bool rec = shouldRecord(op, self);
  detail::writeInplace(self, rec, op,
                       [&] { triInplaceOp<kLower>().call(self, diagonal); });
  if (rec) recordTri<kLower>(self, diagonal, self);
  return self;
}

// ---- roll -------------------------------------------------------------------------

using RollSig = Tensor(const Tensor&, IntArrayRef, IntArrayRef);
const TypedOperatorHandle<RollSig>& rollOp() {
  static const auto op = lookup<RollSig>("aten::roll", "");
  return op;
}

Tensor rollKernel(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  const bool rec = shouldRecord("roll", self);
  Tensor out = belowAutograd([&] { return rollOp().call(self, shifts, dims); });
  if (rec) {
    DimVector back;
    for (const int64_t s : shifts) back.push_back(-s);
    const DimVector ds(dims.begin(), dims.end());
    Node* node = record("RollBackward0", {self}, out,
                        [back, ds](const F&, const Tensor& g) {
                          return variable_list{rollOp().call(g, back, ds)};
                        });
    if (node != nullptr) {
      node->addSaved("dims", IValue(dims));
      node->addSaved("shifts", IValue(shifts));
    }
  }
  return out;
}

// ---- masked_select ----------------------------------------------------------------

using MaskedSelectSig = Tensor(const Tensor&, const Tensor&);
const TypedOperatorHandle<MaskedSelectSig>& maskedSelectOp() {
  static const auto op = lookup<MaskedSelectSig>("aten::masked_select", "");
  return op;
}

Tensor maskedSelectKernel(const Tensor& self, const Tensor& mask) {
  const bool rec = shouldRecord("masked_select", self);
  Tensor out =
      belowAutograd([&] { return maskedSelectOp().call(self, mask); });
  if (rec) {
    SavedVariable sm(mask);
    SavedVariable ss(self);
    const DimVector self_sizes(self.sizes().begin(), self.sizes().end());
    Node* node = record(
        "MaskedSelectBackward0", {self}, out,
        [sm, self_sizes](const F& n, const Tensor& g) {
          const Tensor m = sm.unpack(&n);
          const DimVector sizes = inferBroadcastSize(self_sizes, m.sizes());
          // Flat, so that a 0-dim mask is a mask of one element too.
          const int64_t count = numelOf(sizes);
          const Tensor z = turnout::zeros(
              {count}, TensorOptions(g.scalar_type()).device(g.device()));
          const OptionalTensorList at{
              turnout::reshape(turnout::expand(m, sizes), {count})};
          // The node sums the broadcast gradient to self's shape.
          return variable_list{turnout::reshape(index_put(z, at, g), sizes)};
        });
    if (node != nullptr) {
      node->addSaved("mask", sm);
      node->addSaved("self", ss);
    }
  }
  return out;
}

}  // namespace
}  // namespace autograd
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, Autograd, m) {
  using namespace turnout::autograd;  // NOLINT: the kernels above
  m.impl("addcmul", TURNOUT_FN(addcKernel<true>));
  m.impl("addcmul_", TURNOUT_FN(addcInplace<true>));
  m.impl("addcdiv", TURNOUT_FN(addcKernel<false>));
  m.impl("addcdiv_", TURNOUT_FN(addcInplace<false>));
  m.impl("lerp.Scalar", TURNOUT_FN(lerpScalarKernel));
  m.impl("lerp_.Scalar", TURNOUT_FN(lerpScalarInplace));
  m.impl("lerp.Tensor", TURNOUT_FN(lerpTensorKernel));
  m.impl("lerp_.Tensor", TURNOUT_FN(lerpTensorInplace));
  m.impl("tril", TURNOUT_FN(triKernel<true>));
  m.impl("tril_", TURNOUT_FN(triInplace<true>));
  m.impl("triu", TURNOUT_FN(triKernel<false>));
  m.impl("triu_", TURNOUT_FN(triInplace<false>));
  m.impl("roll", TURNOUT_FN(rollKernel));
  m.impl("masked_select", TURNOUT_FN(maskedSelectKernel));
  // Not differentiable.
  m.impl("equal", turnout::CppFunction::makeFallthrough());
}
