// The Autograd kernels of the math operators of kernels/unary_math.h (and,
// as they are added, the other operators of the :math library), registered
// at the Autograd alias key the way autograd_kernels.cc registers the
// others: record when grad mode is on and an input requires grad, call the
// operator below autograd, attach a FunctionNode with the derivative.
//
// In-place forms check that self may be modified, bump its version counter
// (recording or not), and make the new node self's grad_fn with self's old
// history as its input. A formula that needs the input's old value saves a
// copy taken before the write (as PyTorch does for sin_ and friends); one
// that needs the result saves self after it.
//
// out= overloads have no autograd kernel (PyTorch refuses gradients through
// them; here they fall through to the backend, as add.out does).
#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/function_node.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/autograd/saved_variable.h"
#include "kernels/copy.h"
#include "kernels/dim_ops.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/indexing.h"
#include "kernels/reduce.h"
#include "kernels/shape.h"
#include "kernels/tensor_utils.h"
#include "kernels/unary_math.h"

namespace turnout {
namespace autograd {
namespace {

using detail::checkInplaceAllowed;
using detail::record;
using detail::shouldRecord;
using F = FunctionNode;

using detail::belowAutograd;

// The derivative of a unary operator: d(g, x, r) with x the input (its value
// before an in-place write) and r the result; each is defined only when the
// operator's description says it is saved.
using Derivative = Tensor (*)(const Tensor& g, const Tensor& x,
                              const Tensor& r);

struct UnaryGrad {
  const char* op;        // "sin"
  const char* node;      // "SinBackward0"
  bool save_self;
  bool save_result;
  Derivative derivative;
};

Tensor functionalKernel(const UnaryGrad& d, const Tensor& self,
                        Tensor (*fwd)(const Tensor&)) {
  const bool rec = shouldRecord(d.op, self);
  Tensor out = belowAutograd([&] { return fwd(self); });
  if (rec) {
    SavedVariable s(d.save_self ? self : Tensor());
    SavedVariable r(d.save_result ? out : Tensor(), /*is_output=*/true);
    const Derivative derivative = d.derivative;
    Node* node = record(d.node, {self}, out,
                        [s, r, derivative](const F& n, const Tensor& g) {
                          return variable_list{
                              derivative(g, s.unpack(&n), r.unpack(&n))};
                        });
    if (node != nullptr && d.save_result) node->addSaved("result", r);
    if (node != nullptr && d.save_self) node->addSaved("self", s);
  }
  return out;
}

template <class Write>
Tensor& inplaceKernel(const UnaryGrad& d, const char* op, Tensor& self,
                      Write write) {
  const bool rec = shouldRecord(op, self);
  checkInplaceAllowed(self, rec, op);
  Tensor original;
  if (rec && d.save_self) {
    original = detail::cloneWithHistory(self);
  }
  belowAutograd([&] { write(self); });
  self.unsafeGetTensorImpl()->bump_version();
  if (rec) {
    SavedVariable s(original);
    SavedVariable r(d.save_result ? self : Tensor(), /*is_output=*/true);
    const Derivative derivative = d.derivative;
    Node* node = record(
        d.node, {self}, self, [s, r, derivative](const F& n, const Tensor& g) {
          return variable_list{derivative(g, s.unpack(&n), r.unpack(&n))};
        });
    if (node != nullptr && d.save_result) node->addSaved("result", r);
    if (node != nullptr && d.save_self) node->addSaved("self", s);
  }
  return self;
}

// ---- Derivatives -----------------------------------------------------------------

Tensor zeroGrad(const Tensor& g, const Tensor&, const Tensor&) {
  return turnout::zeros_like(g);
}
Tensor one(const Tensor& like) { return turnout::ones_like(like); }

#define TURNOUT_DERIVATIVE(name, expr)                                \
  Tensor name(const Tensor& g, const Tensor& x, const Tensor& r) {    \
    (void)x;                                                          \
    (void)r;                                                          \
    return (expr);                                                    \
  }
// sin' = cos, cos' = -sin, tan' = 1 + tan^2.
TURNOUT_DERIVATIVE(dSin, mul(g, turnout::cos(x)))
TURNOUT_DERIVATIVE(dCos, mul(g, neg(turnout::sin(x))))
TURNOUT_DERIVATIVE(dTan, mul(g, add(mul(r, r), 1)))
// asin' = 1 / sqrt(1 - x^2), acos' = -asin', atan' = 1 / (1 + x^2); asin's,
// acos's and reciprocal's as torch 1.13 writes them: g times a factor (the
// first gradient's node is MulBackward0).
TURNOUT_DERIVATIVE(dAsin, mul(g, turnout::rsqrt(sub(one(x), mul(x, x)))))
TURNOUT_DERIVATIVE(dAcos,
                   mul(g, neg(turnout::rsqrt(sub(one(x), mul(x, x))))))
TURNOUT_DERIVATIVE(dAtan, div(g, add(mul(x, x), 1)))
TURNOUT_DERIVATIVE(dSinh, mul(g, turnout::cosh(x)))
TURNOUT_DERIVATIVE(dCosh, mul(g, turnout::sinh(x)))
TURNOUT_DERIVATIVE(dExp, mul(g, r))
TURNOUT_DERIVATIVE(dExpm1, mul(g, add(r, 1)))
TURNOUT_DERIVATIVE(dLog, div(g, x))
TURNOUT_DERIVATIVE(dLog2, div(g, mul(x, std::log(2.0))))
TURNOUT_DERIVATIVE(dLog10, div(g, mul(x, std::log(10.0))))
TURNOUT_DERIVATIVE(dLog1p, div(g, add(x, 1)))
// tanh' = 1 - r^2, sigmoid' = r (1 - r): through the operators torch 1.13's
// formulas call (a first gradient's node is then TanhBackwardBackward0 /
// SigmoidBackwardBackward0, below).
TURNOUT_DERIVATIVE(dTanh, turnout::tanh_backward(g, r))
TURNOUT_DERIVATIVE(dSigmoid, turnout::sigmoid_backward(g, r))
TURNOUT_DERIVATIVE(dSqrt, div(g, mul(r, 2)))
// rsqrt' = -r^3 / 2, reciprocal' = -r^2.
TURNOUT_DERIVATIVE(dRsqrt, mul(g, mul(mul(r, mul(r, r)), -0.5)))
TURNOUT_DERIVATIVE(dReciprocal, mul(g, neg(mul(r, r))))
// erf' = 2 / sqrt(pi) * exp(-x^2).
TURNOUT_DERIVATIVE(dErf, mul(g, mul(turnout::exp(neg(mul(x, x))),
                                    2.0 / std::sqrt(M_PI))))
// acosh' = 1 / sqrt(x^2 - 1), asinh' = 1 / sqrt(x^2 + 1),
// atanh' = 1 / (1 - x^2), erfc' = -erf', lgamma' = digamma.
TURNOUT_DERIVATIVE(dAcosh, mul(g, turnout::rsqrt(sub(pow(x, 2), 1))))
TURNOUT_DERIVATIVE(dAsinh, mul(g, turnout::rsqrt(add(pow(x, 2), 1))))
TURNOUT_DERIVATIVE(dAtanh, div(g, sub(one(x), pow(x, 2))))
TURNOUT_DERIVATIVE(dErfc, mul(g, mul(turnout::exp(neg(pow(x, 2))),
                                     -2.0 / std::sqrt(M_PI))))
TURNOUT_DERIVATIVE(dLgamma, mul(g, turnout::digamma(x)))
// digamma' = polygamma(1, x).
TURNOUT_DERIVATIVE(dDigamma, mul(g, turnout::polygamma(1, x)))
TURNOUT_DERIVATIVE(dNeg, neg(g))
// relu' = 1 where the result is positive.
TURNOUT_DERIVATIVE(dRelu, where(gt(r, 0), g, turnout::zeros_like(g)))
// abs' = sign(x) (0 at 0).
TURNOUT_DERIVATIVE(dAbs, mul(g, turnout::sign(x)))
#undef TURNOUT_DERIVATIVE

// The table: op, node, save self, save result, derivative.
#define TURNOUT_UNARY_GRADS(X)                                        \
  X(sin, "SinBackward0", true, false, dSin)                           \
  X(cos, "CosBackward0", true, false, dCos)                           \
  X(tan, "TanBackward0", false, true, dTan)                           \
  X(asin, "AsinBackward0", true, false, dAsin)                        \
  X(acos, "AcosBackward0", true, false, dAcos)                        \
  X(atan, "AtanBackward0", true, false, dAtan)                        \
  X(sinh, "SinhBackward0", true, false, dSinh)                        \
  X(cosh, "CoshBackward0", true, false, dCosh)                        \
  X(expm1, "Expm1Backward0", false, true, dExpm1)                     \
  X(log2, "Log2Backward0", true, false, dLog2)                        \
  X(log10, "Log10Backward0", true, false, dLog10)                     \
  X(log1p, "Log1PBackward0", true, false, dLog1p)                     \
  X(rsqrt, "RsqrtBackward0", false, true, dRsqrt)                     \
  X(reciprocal, "ReciprocalBackward0", false, true, dReciprocal)      \
  X(erf, "ErfBackward0", true, false, dErf)                           \
  X(acosh, "AcoshBackward0", true, false, dAcosh)                     \
  X(asinh, "AsinhBackward0", true, false, dAsinh)                     \
  X(atanh, "AtanhBackward0", true, false, dAtanh)                     \
  X(erfc, "ErfcBackward0", true, false, dErfc)                        \
  X(lgamma, "LgammaBackward0", true, false, dLgamma)                  \
  X(digamma, "DigammaBackward0", true, false, dDigamma)               \
  X(sign, "SignBackward0", false, false, zeroGrad)                    \
  X(floor, "FloorBackward0", false, false, zeroGrad)                  \
  X(ceil, "CeilBackward0", false, false, zeroGrad)                    \
  X(round, "RoundBackward0", false, false, zeroGrad)                  \
  X(trunc, "TruncBackward0", false, false, zeroGrad)
// Functional forms registered in autograd_kernels.cc; in-place here.
#define TURNOUT_OLD_UNARY_GRADS(X)                                    \
  X(exp, "ExpBackward0", false, true, dExp)                           \
  X(log, "LogBackward0", true, false, dLog)                           \
  X(sqrt, "SqrtBackward0", false, true, dSqrt)                        \
  X(tanh, "TanhBackward0", false, true, dTanh)                        \
  X(sigmoid, "SigmoidBackward0", false, true, dSigmoid)               \
  X(neg, "NegBackward0", false, false, dNeg)                          \
  X(abs, "AbsBackward0", true, false, dAbs)                           \
  X(relu, "ReluBackward0", false, true, dRelu)

#define TURNOUT_GRAD_DESC(name, node, s, r, d) \
  constexpr UnaryGrad k_##name{#name, node, s, r, d};
TURNOUT_UNARY_GRADS(TURNOUT_GRAD_DESC)
TURNOUT_OLD_UNARY_GRADS(TURNOUT_GRAD_DESC)
#undef TURNOUT_GRAD_DESC

#define TURNOUT_FUNCTIONAL(name, node, s, r, d)                        \
  Tensor name##Functional(const Tensor& self) {                        \
    return functionalKernel(k_##name, self,                            \
                            [](const Tensor& x) { return turnout::name(x); }); \
  }
#define TURNOUT_INPLACE(name, node, s, r, d)                               \
  Tensor& name##Inplace(Tensor& self) {                                    \
    return inplaceKernel(k_##name, #name "_", self,                        \
                         [](const Tensor& x) -> const Tensor& {            \
                           return turnout::name##_(x);                     \
                         });                                               \
  }
TURNOUT_UNARY_GRADS(TURNOUT_FUNCTIONAL)
TURNOUT_UNARY_GRADS(TURNOUT_INPLACE)
TURNOUT_OLD_UNARY_GRADS(TURNOUT_INPLACE)
#undef TURNOUT_FUNCTIONAL
#undef TURNOUT_INPLACE

// angle (no in-place form): of a real input, a zero gradient; torch 1.13
// saves self for the complex case's formula, and so does this.
constexpr UnaryGrad k_angle{"angle", "AngleBackward0", true, false, zeroGrad};
Tensor angleFunctional(const Tensor& self) {
  return functionalKernel(k_angle, self,
                          [](const Tensor& x) { return turnout::angle(x); });
}

// polygamma(n, x)' = polygamma(n + 1, x); torch 1.13's nodes save n and
// self (the in-place form's, PolygammaBackward1, self's old value). One
// maker records either node over `input` (self, whose history is still the
// old one when in place) into `output`, saving `x`: the input's value.
void recordPolygamma(const char* node_name, int64_t n, const Tensor& input,
                     const Tensor& x, const Tensor& output) {
  SavedVariable s(x);
  Node* node = record(node_name, {input}, output,
                      [s, n](const F& f, const Tensor& g) {
                        return variable_list{
                            mul(g, turnout::polygamma(n + 1, s.unpack(&f)))};
                      });
  if (node == nullptr) return;
  node->addSaved("n", IValue(n));
  node->addSaved("self", s);
}
Tensor polygammaFunctional(int64_t n, const Tensor& self) {
  const bool rec = shouldRecord("polygamma", self);
  Tensor out = belowAutograd([&] { return turnout::polygamma(n, self); });
  if (rec) recordPolygamma("PolygammaBackward0", n, self, self, out);
  return out;
}
Tensor& polygammaInplace(Tensor& self, int64_t n) {
  const bool rec = shouldRecord("polygamma_", self);
  checkInplaceAllowed(self, rec, "polygamma_");
  Tensor original;
  if (rec) original = detail::cloneWithHistory(self);
  belowAutograd([&] { turnout::polygamma_(self, n); });
  self.unsafeGetTensorImpl()->bump_version();
  if (rec) recordPolygamma("PolygammaBackward1", n, self, original, self);
  return self;
}

// tanh_backward(g, y) = g (1 - y^2) and sigmoid_backward(g, y) = g (1 - y) y,
// differentiable as torch 1.13's TanhBackwardBackward0 and
// SigmoidBackwardBackward0 (both save grad_output and output):
//   tanh:    d/dg = tanh_backward(gg, y),    d/dy = -2 gg g y
//   sigmoid: d/dg = sigmoid_backward(gg, y), d/dy = gg g (1 - 2 y)
template <bool kTanh>
Tensor outputGradKernel(const Tensor& grad_output, const Tensor& output) {
  const char* op = kTanh ? "tanh_backward" : "sigmoid_backward";
  const bool rec = shouldRecord(op, grad_output, output);
  Tensor out = belowAutograd([&] {
    return kTanh ? turnout::tanh_backward(grad_output, output)
                 : turnout::sigmoid_backward(grad_output, output);
  });
  if (rec) {
    SavedVariable sg(grad_output);
    SavedVariable sy(output);
    Node* node = record(
        kTanh ? "TanhBackwardBackward0" : "SigmoidBackwardBackward0",
        {grad_output, output}, out, [sg, sy](const F& n, const Tensor& gg) {
          variable_list grads(2);
          const Tensor y = sy.unpack(&n);
          if (n.needsGrad(0)) {
            grads[0] = kTanh ? turnout::tanh_backward(gg, y)
                             : turnout::sigmoid_backward(gg, y);
          }
          if (n.needsGrad(1)) {
            const Tensor g = sg.unpack(&n);
            // torch 1.13's grouping (what a mode sees, and the rounding
            // in reduced precision): gg * (-2 y * g), (gg * g) * (-2 y + 1).
            grads[1] = kTanh ? mul(gg, mul(mul(y, -2.0), g))
                             : mul(mul(gg, g), add(mul(y, -2.0), 1));
          }
          return grads;
        });
    if (node != nullptr) {
      node->addSaved("grad_output", sg);
      node->addSaved("output", sy);
    }
  }
  return out;
}

// round.decimals and round_.decimals: zero gradient.
constexpr UnaryGrad kRoundDecimals{"round", "RoundBackward1", false, false,
                                   zeroGrad};
Tensor roundDecimals(const Tensor& self, int64_t decimals) {
  const bool rec = shouldRecord("round", self);
  Tensor out = belowAutograd([&] { return turnout::round(self, decimals); });
  if (rec) {
    record(kRoundDecimals.node, {self}, out, [](const F&, const Tensor& g) {
      return variable_list{turnout::zeros_like(g)};
    });
  }
  return out;
}
Tensor& roundDecimalsInplace(Tensor& self, int64_t decimals) {
  return inplaceKernel(kRoundDecimals, "round_", self,
                       [&decimals](const Tensor& x) -> const Tensor& {
                         return turnout::round_(x, decimals);
                       });
}

// ---- Along a dimension -------------------------------------------------------------

// cumsum: the gradient is the reversed running sum of g along dim,
// sum(g) - cumsum(g) + g.
Tensor cumsumBackward(const Tensor& g, int64_t dim) {
  return add(sub(turnout::sum(g, {dim}, /*keepdim=*/true), turnout::cumsum(g, dim)),
             g);
}

Tensor cumsumKernel(const Tensor& self, int64_t dim,
                    std::optional<ScalarType> dtype) {
  const bool rec = shouldRecord("cumsum", self);
  Tensor out = belowAutograd([&] { return turnout::cumsum(self, dim, dtype); });
  if (rec) {
    const int64_t d = maybeWrapDim(dim, self.dim());
    Node* n =
        record("CumsumBackward0", {self}, out, [d](const F&, const Tensor& g) {
          return variable_list{cumsumBackward(g, d)};
        });
    if (n != nullptr) n->addSaved("dim", IValue(dim));  // as given
  }
  return out;
}

// What torch's CumprodBackward0 shows: dim as given, the result (kept as an
// output: no cycle) and self's value before the operation.
void addCumprodSaved(Node* node, int64_t dim, const Tensor& result,
                     const SavedVariable& self) {
  node->addSaved("dim", IValue(dim));
  node->addSaved("result", SavedVariable(result, /*is_output=*/true));
  node->addSaved("self", self);
}

// cumprod's gradient. Under create_graph (grad mode on, g or self requiring
// grad) and with no zero in self it is torch 1.13's differentiable form,
// the reversed cumsum of cumprod(self) * g divided by self; otherwise the
// exact raw kernel (which handles zeros, and whose result is not
// differentiable: a second derivative through an input with zeros is
// missing, a known difference).
Tensor cumprodGrad(const Tensor& g, const Tensor& self, int64_t d) {
  if (self.numel() <= 1) return g;  // cumprod is the identity there
  if (!GradMode::is_enabled() || !(requiresGrad(g) || requiresGrad(self)) ||
      self.is_meta()) {
    return autograd_helpers::cumprodBackward(g, self, d);
  }
  const double zeros = belowAutograd([&] {
    Tensor count =
        turnout::sum(turnout::to(turnout::eq(self, 0), ScalarType::Double));
    return turnout::to(count, Device(DeviceType::CPU)).data_ptr<double>()[0];
  });
  if (zeros != 0) {
    return autograd_helpers::cumprodBackward(g, self, d);
  }
  static const auto flip = Dispatcher::singleton()
                               .findSchemaOrThrow("aten::flip", "")
                               .typed<Tensor(const Tensor&, IntArrayRef)>();
  const std::vector<int64_t> dims{d};
  const Tensor w = turnout::mul(turnout::cumprod(self, d), g);
  const Tensor reversed =
      flip.call(turnout::cumsum(flip.call(w, dims), d), dims);
  return turnout::div(reversed, self);
}

Tensor cumprodKernel(const Tensor& self, int64_t dim,
                     std::optional<ScalarType> dtype) {
  const bool rec = shouldRecord("cumprod", self);
  Tensor out = belowAutograd([&] { return turnout::cumprod(self, dim, dtype); });
  if (rec) {
    const int64_t d = maybeWrapDim(dim, self.dim());
    SavedVariable s(self);
    Node* node = record("CumprodBackward0", {self}, out,
                        [s, d](const F& n, const Tensor& g) {
                          return variable_list{cumprodGrad(g, s.unpack(&n), d)};
                        });
    if (node != nullptr) addCumprodSaved(node, dim, out, s);
  }
  return out;
}

// cumsum_ / cumprod_ (dtype must be self's: the backend checks it).
Tensor& cumsumInplace(Tensor& self, int64_t dim,
                      std::optional<ScalarType> dtype) {
  const bool rec = shouldRecord("cumsum_", self);
  checkInplaceAllowed(self, rec, "cumsum_");
  belowAutograd([&] { turnout::cumsum_(self, dim, dtype); });
  self.unsafeGetTensorImpl()->bump_version();
  if (rec) {
    const int64_t d = maybeWrapDim(dim, self.dim());
    Node* n =
        record("CumsumBackward0", {self}, self, [d](const F&, const Tensor& g) {
          return variable_list{cumsumBackward(g, d)};
        });
    if (n != nullptr) n->addSaved("dim", IValue(dim));
  }
  return self;
}

Tensor& cumprodInplace(Tensor& self, int64_t dim,
                       std::optional<ScalarType> dtype) {
  const bool rec = shouldRecord("cumprod_", self);
  checkInplaceAllowed(self, rec, "cumprod_");
  Tensor original;
  if (rec) original = detail::cloneWithHistory(self);
  belowAutograd([&] { turnout::cumprod_(self, dim, dtype); });
  self.unsafeGetTensorImpl()->bump_version();
  if (rec) {
    const int64_t d = maybeWrapDim(dim, self.dim());
    SavedVariable s(original);
    Node* node = record("CumprodBackward0", {self}, self,
                        [s, d](const F& n, const Tensor& g) {
                          return variable_list{cumprodGrad(g, s.unpack(&n), d)};
                        });
    if (node != nullptr) addCumprodSaved(node, dim, self, s);
  }
  return self;
}

// max() / min(): the gradient is shared evenly by the elements equal to the
// result.
template <bool kMax>
Tensor minmaxAllKernel(const Tensor& self) {
  const char* op = kMax ? "max" : "min";
  const bool rec = shouldRecord(op, self);
  Tensor out = belowAutograd(
      [&] { return kMax ? turnout::max(self) : turnout::min(self); });
  if (rec) {
    SavedVariable s(self);
    SavedVariable r(out, /*is_output=*/true);
    Node* node = record(
        kMax ? "MaxBackward1" : "MinBackward1", {self}, out,
        [s, r](const F& n, const Tensor& g) {
          const Tensor x = s.unpack(&n);
          const Tensor mask = to(turnout::eq(x, r.unpack(&n)), g.scalar_type());
          return variable_list{div(mul(mask, g), turnout::sum(mask))};
        });
    if (node != nullptr) {
      node->addSaved("result", r);
      node->addSaved("self", s);
    }
  }
  return out;
}

// max.dim / min.dim / sort / topk: the gradient goes to the picked indices.
// Saves what torch's nodes show: dim as given, the indices, self's sizes
// (and keepdim, for max.dim / min.dim: `show_keepdim`).
using GatherSig = Tensor(const Tensor&, int64_t, const Tensor&, bool);
const TypedOperatorHandle<GatherSig>& gatherOp() {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::gather", "")
                             .typed<GatherSig>();
  return op;
}

Node* recordPicked(const char* node, const Tensor& self, const Tensor& values,
                   const Tensor& indices, int64_t dim, bool keepdim,
                   bool show_keepdim = false) {
  const int64_t d = self.dim() == 0 ? 0 : maybeWrapDim(dim, self.dim());
  const DimVector sizes(self.sizes().begin(), self.sizes().end());
  SavedVariable ix(indices);
  const bool squeeze = !keepdim && self.dim() > 0;
  Node* made =
      record(node, {self}, values,
             [ix, d, sizes, squeeze](const F& n, const Tensor& g) {
               Tensor grad = g;
               Tensor index = ix.unpack(&n);
               if (squeeze) {
                 grad = turnout::unsqueeze(grad, d);
                 index = turnout::unsqueeze(index, d);
               }
               // Linear in grad: differentiable (create_graph) through
               // the gather at the same indices.
               return variable_list{detail::linearInGrad(
                   "ScatterBackward0", grad,
                   [&](const Tensor& gr) {
                     return autograd_helpers::indexAlongDimBackward(gr, index,
                                                                    sizes, d);
                   },
                   [index, d](const Tensor& gg) {
                     return gatherOp().call(gg, d, index, false);
                   })};
             });
  if (made != nullptr) {
    made->addSaved("dim", IValue(dim));
    made->addSaved("indices", ix);
    if (show_keepdim) made->addSaved("keepdim", IValue(keepdim));
    made->addSaved("self_sizes", IValue(self.sizes()));
  }
  return made;
}

template <bool kMax>
std::tuple<Tensor, Tensor> minmaxDimKernel(const Tensor& self, int64_t dim,
                                           bool keepdim) {
  const char* op = kMax ? "max" : "min";
  const bool rec = shouldRecord(op, self);
  auto result = belowAutograd([&] {
    return kMax ? turnout::max(self, dim, keepdim)
                : turnout::min(self, dim, keepdim);
  });
  if (rec) {
    recordPicked(kMax ? "MaxBackward0" : "MinBackward0", self,
                 std::get<0>(result), std::get<1>(result), dim, keepdim,
                 /*show_keepdim=*/true);
  }
  return result;
}

std::tuple<Tensor, Tensor> sortKernel(const Tensor& self, int64_t dim,
                                      bool descending) {
  const bool rec = shouldRecord("sort", self);
  auto result =
      belowAutograd([&] { return turnout::sort(self, dim, descending); });
  if (rec) {
    recordPicked("SortBackward0", self, std::get<0>(result),
                 std::get<1>(result), dim, /*keepdim=*/true);
  }
  return result;
}

std::tuple<Tensor, Tensor> sortStableKernel(const Tensor& self,
                                            std::optional<bool> stable,
                                            int64_t dim, bool descending) {
  (void)stable;  // every sort is stable
  return sortKernel(self, dim, descending);
}

std::tuple<Tensor, Tensor> topkKernel(const Tensor& self, int64_t k,
                                      int64_t dim, bool largest, bool sorted) {
  const bool rec = shouldRecord("topk", self);
  auto result = belowAutograd(
      [&] { return turnout::topk(self, k, dim, largest, sorted); });
  if (rec) {
    recordPicked("TopkBackward0", self, std::get<0>(result),
                 std::get<1>(result), dim, /*keepdim=*/true);
  }
  return result;
}

// ---- var.correction, std.correction ----------------------------------------------
// torch 1.13's VarBackward0: 2 / (n - correction) * g * (x - mean(x)), g
// with the reduced dimensions put back; n is the number of elements
// reduced: all of them without a dim list, the product of the listed
// sizes with one (1 for an empty list, as torch 1.13, though the forward
// reduces every dimension then). No special case where n <= correction:
// the gradient is then inf, -inf or nan, as torch's. StdBackward0: the same
// over g / (2 * result), 0 where the result is 0.
using VarDimList = std::optional<std::vector<int64_t>>;
using VarCorrectionSig = Tensor(const Tensor&, VarDimList,
                                std::optional<int64_t>, bool);

Tensor varBackward(Tensor g, const Tensor& x, const VarDimList& dim,
                   int64_t correction, bool keepdim) {
  const int64_t ndim = x.dim();
  std::vector<int64_t> dims;
  int64_t n = 1;
  if (!dim.has_value() || dim->empty() || ndim == 0) {
    for (int64_t d = 0; d < ndim; ++d) dims.push_back(d);
    if (!dim.has_value() || ndim == 0) n = x.numel();
  } else {
    for (int64_t d : *dim) dims.push_back(maybeWrapDim(d, ndim));
    std::sort(dims.begin(), dims.end());
    dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
    for (int64_t d : dims) n *= x.sizes()[d];
    if (!keepdim) {
      for (int64_t d : dims) g = turnout::unsqueeze(g, d);
    }
  }
  const double scale = 2.0 / static_cast<double>(n - correction);
  const Tensor centered = sub(x, turnout::mean(x, IntArrayRef(dims), true));
  return mul(mul(g, Scalar(scale)), centered);
}

template <bool kStd>
Tensor varCorrectionKernel(const Tensor& self, VarDimList dim,
                           std::optional<int64_t> correction, bool keepdim) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow(kStd ? "aten::std" : "aten::var", "correction")
          .typed<VarCorrectionSig>();
  const char* name = kStd ? "std" : "var";
  const bool rec = shouldRecord(name, self);
  Tensor out =
      belowAutograd([&] { return op.call(self, dim, correction, keepdim); });
  if (rec) {
    // The forward checked the dims.
    const int64_t c = correction.value_or(1);
    SavedVariable s(self);
    SavedVariable r(kStd ? out : Tensor(), /*is_output=*/true);
    Node* node = record(
        kStd ? "StdBackward0" : "VarBackward0", {self}, out,
        [s, r, dim, c, keepdim](const F& n, const Tensor& g) {
          Tensor gv = g;
          if (kStd) {
            // A saved output has no history (saved_variable.h): under
            // create_graph the result is computed again from self, so that
            // the gradient's gradient goes through it as torch's does.
            Tensor result = r.unpack(&n);
            if (GradMode::is_enabled()) {
              result = op.call(s.unpack(&n), dim, c, keepdim);
            }
            gv = masked_fill(div(g, mul(result, Scalar(2))), eq(result, 0),
                             Scalar(0));
          }
          return variable_list{varBackward(gv, s.unpack(&n), dim, c, keepdim)};
        });
    if (node != nullptr) {
      node->addSaved("correction", correction ? IValue(*correction) : IValue());
      node->addSaved("dim", dim ? IValue(IntArrayRef(*dim)) : IValue());
      node->addSaved("keepdim", IValue(keepdim));
      if (kStd) node->addSaved("result", r);
      node->addSaved("self", s);
    }
  }
  return out;
}

}  // namespace
}  // namespace autograd
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, Autograd, m) {
  using namespace turnout::autograd;  // NOLINT: the kernels above
#define TURNOUT_REGISTER_FUNCTIONAL(name, node, s, r, d) \
  m.impl(#name, TURNOUT_FN(name##Functional));
#define TURNOUT_REGISTER_INPLACE(name, node, s, r, d) \
  m.impl(#name "_", TURNOUT_FN(name##Inplace));
  TURNOUT_UNARY_GRADS(TURNOUT_REGISTER_FUNCTIONAL)
  TURNOUT_UNARY_GRADS(TURNOUT_REGISTER_INPLACE)
  m.impl("angle", TURNOUT_FN(angleFunctional));
  m.impl("polygamma", TURNOUT_FN(polygammaFunctional));
  m.impl("polygamma_", TURNOUT_FN(polygammaInplace));
  m.impl("tanh_backward", TURNOUT_FN(outputGradKernel<true>));
  m.impl("sigmoid_backward", TURNOUT_FN(outputGradKernel<false>));
  TURNOUT_OLD_UNARY_GRADS(TURNOUT_REGISTER_INPLACE)
#undef TURNOUT_REGISTER_FUNCTIONAL
#undef TURNOUT_REGISTER_INPLACE
  m.impl("round.decimals", TURNOUT_FN(roundDecimals));
  m.impl("round_.decimals", TURNOUT_FN(roundDecimalsInplace));
  m.impl("cumsum", TURNOUT_FN(cumsumKernel));
  m.impl("cumprod", TURNOUT_FN(cumprodKernel));
  m.impl("cumsum_", TURNOUT_FN(cumsumInplace));
  m.impl("cumprod_", TURNOUT_FN(cumprodInplace));
  m.impl("max", TURNOUT_FN(minmaxAllKernel<true>));
  m.impl("min", TURNOUT_FN(minmaxAllKernel<false>));
  m.impl("max.dim", TURNOUT_FN(minmaxDimKernel<true>));
  m.impl("min.dim", TURNOUT_FN(minmaxDimKernel<false>));
  m.impl("sort", TURNOUT_FN(sortKernel));
  m.impl("sort.stable", TURNOUT_FN(sortStableKernel));
  m.impl("topk", TURNOUT_FN(topkKernel));
  m.impl("var.correction", TURNOUT_FN(varCorrectionKernel<false>));
  m.impl("std.correction", TURNOUT_FN(varCorrectionKernel<true>));
  // Indices: not differentiable.
  m.impl("argmin", turnout::CppFunction::makeFallthrough());
  m.impl("bitwise_not", turnout::CppFunction::makeFallthrough());
}
