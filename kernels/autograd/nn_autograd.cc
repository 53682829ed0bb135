// The Autograd kernels of the forward operators of kernels/nn.h (the
// activations, clamp_, clamp_min(_), clamp_max(_), clamp.Tensor,
// clamp_min.Tensor, clamp_max.Tensor, native_layer_norm, embedding,
// nll_loss_forward and nll_loss2d_forward), registered at the Autograd alias
// key as math_autograd.cc's are: record when grad mode is on and an input
// requires grad, call the operator below autograd, attach a FunctionNode whose
// formula calls the operator's backward operator (itself
// CompositeImplicitAutograd, so gradients of gradients work; or, as torch
// 1.13's, explicit with its own Autograd kernel: native_layer_norm_backward's
// below, and those of the other backward operators).
//
// In-place forms save what their formula needs before the write (a copy of
// self) or after it (the result), as torch's do: elu_ and leaky_relu_ use
// the result (their backward refuses a negative slope, as torch's);
// hardtanh_, gelu_, silu_ and clamp_ a copy of the input.
//
// Every node exposes the values it keeps under torch 1.13's names
// (Node::addSaved, Python's grad_fn._saved_<name>): the saved tensors and
// the operator's other arguments as given.
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/operator_handle.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/function_node.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/autograd/saved_variable.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/indexing.h"
#include "kernels/nn.h"
#include "kernels/reduce.h"
#include "kernels/shape.h"
#include "kernels/unary_math.h"

namespace turnout {
namespace autograd {
namespace {

using detail::belowAutograd;
using detail::record;
using detail::shouldRecord;
using detail::writeInplace;
using F = FunctionNode;

// The pattern every functional activation follows: save self, record.
// `extra(node)` adds the node's other saved values (torch's names).
template <class Fwd, class Grad, class Extra>
Tensor recordUnary(const char* op, const char* node, const Tensor& self,
                   Fwd fwd, Grad grad, Extra extra) {
  const bool rec = shouldRecord(op, self);
  Tensor out = belowAutograd(fwd);
  if (rec) {
    SavedVariable s(self);
    Node* made =
        record(node, {self}, out, [s, grad](const F& n, const Tensor& g) {
          return variable_list{grad(g, s.unpack(&n))};
        });
    if (made != nullptr) {
      made->addSaved("self", s);
      extra(made);
    }
  }
  return out;
}

// The in-place pattern: save_input: the formula gets self's value before
// the write (a copy); otherwise the result (self after it).
// The saved tensor shows as "self" (the copy) or "result", as torch's.
template <class Write, class Grad, class Extra>
Tensor& recordUnaryInplace(const char* op, const char* node, Tensor& self,
                           bool save_input, Write write, Grad grad,
                           Extra extra) {
  const bool rec = shouldRecord(op, self);
  Tensor original;
  if (rec && save_input) {
    original = detail::cloneWithHistory(self);
  }
  writeInplace(self, rec, op, write);
  if (rec) {
    SavedVariable s(save_input ? original : self, /*is_output=*/!save_input);
    Node* made =
        record(node, {self}, self, [s, grad](const F& n, const Tensor& g) {
          return variable_list{grad(g, s.unpack(&n))};
        });
    if (made != nullptr) {
      made->addSaved(save_input ? "self" : "result", s);
      extra(made);
    }
  }
  return self;
}

// ---- Activations ------------------------------------------------------------------

// The saved values besides the tensor, by torch's names.
auto savedApproximate(const std::string& approx) {
  return [approx](Node* n) { n->addSaved("approximate", IValue(approx)); };
}
auto noOtherSaved() {
  return [](Node*) {};
}
auto savedElu(const Scalar& alpha, const Scalar& scale,
              const Scalar& input_scale) {
  return [=](Node* n) {
    n->addSaved("alpha", IValue(alpha));
    n->addSaved("input_scale", IValue(input_scale));
    n->addSaved("scale", IValue(scale));
  };
}
auto savedSlope(const Scalar& slope) {
  return [slope](Node* n) { n->addSaved("negative_slope", IValue(slope)); };
}
auto savedHardtanh(const Scalar& min_val, const Scalar& max_val) {
  return [=](Node* n) {
    n->addSaved("max_val", IValue(max_val));
    n->addSaved("min_val", IValue(min_val));
  };
}
IValue optionalValue(const std::optional<Scalar>& s) {
  return s ? IValue(*s) : IValue();
}

Tensor gelu(const Tensor& self, std::string_view approximate) {
  const std::string approx(approximate);
  return recordUnary(
      "gelu", "GeluBackward0", self,
      [&] { return turnout::gelu(self, approx); },
      [approx](const Tensor& g, const Tensor& x) {
        return turnout::gelu_backward(g, x, approx);
      },
      savedApproximate(approx));
}
Tensor& gelu_(Tensor& self, std::string_view approximate) {
  const std::string approx(approximate);
  return recordUnaryInplace(
      "gelu_", "GeluBackward0", self, true,
      [&] { turnout::gelu_(self, approx); },
      [approx](const Tensor& g, const Tensor& x) {
        return turnout::gelu_backward(g, x, approx);
      },
      savedApproximate(approx));
}

Tensor silu(const Tensor& self) {
  return recordUnary(
      "silu", "SiluBackward0", self, [&] { return turnout::silu(self); },
      [](const Tensor& g, const Tensor& x) {
        return turnout::silu_backward(g, x);
      },
      noOtherSaved());
}
Tensor& silu_(Tensor& self) {
  return recordUnaryInplace(
      "silu_", "SiluBackward0", self, true, [&] { turnout::silu_(self); },
      [](const Tensor& g, const Tensor& x) {
        return turnout::silu_backward(g, x);
      },
      noOtherSaved());
}

Tensor elu(const Tensor& self, const Scalar& alpha, const Scalar& scale,
           const Scalar& input_scale) {
  return recordUnary(
      "elu", "EluBackward0", self,
      [&] { return turnout::elu(self, alpha, scale, input_scale); },
      [alpha, scale, input_scale](const Tensor& g, const Tensor& x) {
        return turnout::elu_backward(g, alpha, scale, input_scale, false, x);
      },
      savedElu(alpha, scale, input_scale));
}
Tensor& elu_(Tensor& self, const Scalar& alpha, const Scalar& scale,
             const Scalar& input_scale) {
  return recordUnaryInplace(
      "elu_", "EluBackward1", self, false,
      [&] { turnout::elu_(self, alpha, scale, input_scale); },
      [alpha, scale, input_scale](const Tensor& g, const Tensor& r) {
        return turnout::elu_backward(g, alpha, scale, input_scale, true, r);
      },
      savedElu(alpha, scale, input_scale));
}

Tensor leakyRelu(const Tensor& self, const Scalar& slope) {
  return recordUnary(
      "leaky_relu", "LeakyReluBackward0", self,
      [&] { return turnout::leaky_relu(self, slope); },
      [slope](const Tensor& g, const Tensor& x) {
        return turnout::leaky_relu_backward(g, x, slope, false);
      },
      savedSlope(slope));
}
Tensor& leakyRelu_(Tensor& self, const Scalar& slope) {
  return recordUnaryInplace(
      "leaky_relu_", "LeakyReluBackward1", self, false,
      [&] { turnout::leaky_relu_(self, slope); },
      [slope](const Tensor& g, const Tensor& r) {
        return turnout::leaky_relu_backward(g, r, slope, true);
      },
      savedSlope(slope));
}

Tensor hardtanh(const Tensor& self, const Scalar& min_val,
                const Scalar& max_val) {
  return recordUnary(
      "hardtanh", "HardtanhBackward0", self,
      [&] { return turnout::hardtanh(self, min_val, max_val); },
      [min_val, max_val](const Tensor& g, const Tensor& x) {
        return turnout::hardtanh_backward(g, x, min_val, max_val);
      },
      savedHardtanh(min_val, max_val));
}
// As torch 1.13's: the same node as hardtanh's, over a copy of the input
// (hardtanh_backward gives the same gradient from the input as from the
// result).
Tensor& hardtanh_(Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  return recordUnaryInplace(
      "hardtanh_", "HardtanhBackward0", self, true,
      [&] { turnout::hardtanh_(self, min_val, max_val); },
      [min_val, max_val](const Tensor& g, const Tensor& x) {
        return turnout::hardtanh_backward(g, x, min_val, max_val);
      },
      savedHardtanh(min_val, max_val));
}

Tensor softplus(const Tensor& self, const Scalar& beta,
                const Scalar& threshold) {
  return recordUnary(
      "softplus", "SoftplusBackward0", self,
      [&] { return turnout::softplus(self, beta, threshold); },
      [beta, threshold](const Tensor& g, const Tensor& x) {
        return turnout::softplus_backward(g, x, beta, threshold);
      },
      [beta, threshold](Node* n) {
        n->addSaved("beta", IValue(beta));
        n->addSaved("threshold", IValue(threshold));
      });
}

// clamp_: the gradient passes where min <= x <= max (x before the write).
Tensor& clamp_(Tensor& self, const std::optional<Scalar>& min,
               const std::optional<Scalar>& max) {
  return recordUnaryInplace(
      "clamp_", "ClampBackward1", self, true,
      [&] { turnout::clamp_(self, min, max); },
      [min, max](const Tensor& g, const Tensor& x) {
        const Tensor z = turnout::zeros_like(g);
        Tensor out = g;
        if (min) out = turnout::where(turnout::lt(x, *min), z, out);
        if (max) out = turnout::where(turnout::gt(x, *max), z, out);
        return out;
      },
      [min, max](Node* n) {
        n->addSaved("max", optionalValue(max));
        n->addSaved("min", optionalValue(min));
      });
}

// clamp_min, clamp_max and their in-place forms: torch 1.13's
// ClampMinBackward0 (ClampMaxBackward0): g where x >= min (x <= max), 0
// elsewhere (NaN included); the in-place forms over x before the write.
using ClampBoundSig = Tensor(const Tensor&, const Scalar&);
using ClampBoundInplaceSig = Tensor&(Tensor&, const Scalar&);

template <bool kMin>
Tensor clampBoundGrad(const Tensor& g, const Tensor& x, const Scalar& bound) {
  const Tensor keep = kMin ? turnout::ge(x, bound) : turnout::le(x, bound);
  return turnout::where(keep, g, turnout::zeros_like(g));
}

template <bool kMin>
Tensor clampBound(const Tensor& self, const Scalar& bound) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow(kMin ? "aten::clamp_min" : "aten::clamp_max", "")
          .typed<ClampBoundSig>();
  return recordUnary(
      kMin ? "clamp_min" : "clamp_max",
      kMin ? "ClampMinBackward0" : "ClampMaxBackward0", self,
      [&] { return op.call(self, bound); },
      [bound](const Tensor& g, const Tensor& x) {
        return clampBoundGrad<kMin>(g, x, bound);
      },
      [bound](Node* n) { n->addSaved(kMin ? "min" : "max", IValue(bound)); });
}

template <bool kMin>
Tensor& clampBound_(Tensor& self, const Scalar& bound) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow(kMin ? "aten::clamp_min_" : "aten::clamp_max_", "")
          .typed<ClampBoundInplaceSig>();
  return recordUnaryInplace(
      kMin ? "clamp_min_" : "clamp_max_",
      kMin ? "ClampMinBackward0" : "ClampMaxBackward0", self, true,
      [&] { op.call(self, bound); },
      [bound](const Tensor& g, const Tensor& x) {
        return clampBoundGrad<kMin>(g, x, bound);
      },
      [bound](Node* n) { n->addSaved(kMin ? "min" : "max", IValue(bound)); });
}

// leaky_relu_backward, hardtanh_backward: linear in grad_output, piecewise
// constant in self: torch 1.13's LeakyReluBackwardBackward0 and
// HardtanhBackwardBackward0 give grad_output the same backward of the
// incoming gradient and self zeros.
Tensor leakyReluBackward(const Tensor& grad_output, const Tensor& self,
                         const Scalar& negative_slope, bool self_is_result) {
  const bool rec = shouldRecord("leaky_relu_backward", grad_output, self);
  Tensor out = belowAutograd([&] {
    return turnout::leaky_relu_backward(grad_output, self, negative_slope,
                                        self_is_result);
  });
  if (rec) {
    SavedVariable s(self);
    Node* node = record(
        "LeakyReluBackwardBackward0", {grad_output, self}, out,
        [s, negative_slope](const F& n, const Tensor& g) {
          variable_list grads(2);
          if (n.needsGrad(0)) {
            grads[0] = turnout::leaky_relu_backward(g, s.unpack(&n),
                                                    negative_slope, false);
          }
          if (n.needsGrad(1)) grads[1] = turnout::zeros_like(g);
          return grads;
        });
    if (node != nullptr) {
      node->addSaved("negative_slope", IValue(negative_slope));
      node->addSaved("self", s);
    }
  }
  return out;
}

// threshold_backward (ThresholdBackwardBackward0, relu's gradient under
// create_graph): grad_output: the same backward of g; self: zeros.
Tensor thresholdBackward(const Tensor& grad_output, const Tensor& self,
                         const Scalar& threshold) {
  const bool rec = shouldRecord("threshold_backward", grad_output, self);
  Tensor out = belowAutograd([&] {
    return turnout::threshold_backward(grad_output, self, threshold);
  });
  if (rec) {
    SavedVariable s(self);
    Node* node = record(
        "ThresholdBackwardBackward0", {grad_output, self}, out,
        [s, threshold](const F& n, const Tensor& g) {
          variable_list grads(2);
          if (n.needsGrad(0)) {
            grads[0] = turnout::threshold_backward(g, s.unpack(&n), threshold);
          }
          if (n.needsGrad(1)) grads[1] = turnout::zeros_like(g);
          return grads;
        });
    if (node != nullptr) {
      node->addSaved("self", s);
      node->addSaved("threshold", IValue(threshold));
    }
  }
  return out;
}

Tensor hardtanhBackward(const Tensor& grad_output, const Tensor& self,
                        const Scalar& min_val, const Scalar& max_val) {
  const bool rec = shouldRecord("hardtanh_backward", grad_output, self);
  Tensor out = belowAutograd([&] {
    return turnout::hardtanh_backward(grad_output, self, min_val, max_val);
  });
  if (rec) {
    SavedVariable s(self);
    Node* node = record(
        "HardtanhBackwardBackward0", {grad_output, self}, out,
        [s, min_val, max_val](const F& n, const Tensor& g) {
          variable_list grads(2);
          if (n.needsGrad(0)) {
            grads[0] =
                turnout::hardtanh_backward(g, s.unpack(&n), min_val, max_val);
          }
          if (n.needsGrad(1)) grads[1] = turnout::zeros_like(g);
          return grads;
        });
    if (node != nullptr) {
      node->addSaved("max_val", IValue(max_val));
      node->addSaved("min_val", IValue(min_val));
      node->addSaved("self", s);
    }
  }
  return out;
}

// gelu_backward (GeluBackwardBackward0): grad_output: the same backward of
// g; self: g * grad_output * gelu''(self): phi(x) * (2 - x^2) exactly
// (phi the normal density); with approximate="tanh", for
// gelu(x) = x/2 * (1 + tanh(u)), u = k * (x + c x^3):
// (1 - t^2) * (u' + x/2 * (u'' - 2 t u'^2)), t = tanh(u).
Tensor geluSecondDerivative(const Tensor& x, std::string_view approximate) {
  if (approximate != "tanh") {
    const double inv_sqrt_2pi = 0.3989422804014327;  // 1 / sqrt(2 pi)
    const Tensor sq = turnout::mul(x, x);
    const Tensor pdf =
        turnout::mul(turnout::exp(turnout::mul(sq, Scalar(-0.5))),
                     Scalar(inv_sqrt_2pi));
    return turnout::mul(pdf, turnout::rsub(sq, Scalar(2)));
  }
  const double k = 0.7978845608028654;  // sqrt(2 / pi)
  const double c = 0.044715;
  const Tensor sq = turnout::mul(x, x);
  const Tensor u = turnout::mul(
      turnout::add(x, turnout::mul(turnout::mul(sq, x), Scalar(c))), Scalar(k));
  const Tensor t = turnout::tanh(u);
  const Tensor du = turnout::mul(
      turnout::add(turnout::mul(sq, Scalar(3 * c)), Scalar(1)), Scalar(k));
  const Tensor d2u = turnout::mul(x, Scalar(6 * c * k));
  const Tensor inner = turnout::sub(
      d2u, turnout::mul(turnout::mul(t, turnout::mul(du, du)), Scalar(2)));
  const Tensor bracket =
      turnout::add(du, turnout::mul(turnout::mul(x, inner), Scalar(0.5)));
  return turnout::mul(turnout::rsub(turnout::mul(t, t), Scalar(1)), bracket);
}

Tensor geluBackward(const Tensor& grad_output, const Tensor& self,
                    std::string_view approximate) {
  const bool rec = shouldRecord("gelu_backward", grad_output, self);
  Tensor out = belowAutograd(
      [&] { return turnout::gelu_backward(grad_output, self, approximate); });
  if (rec) {
    SavedVariable go(grad_output);
    SavedVariable s(self);
    const std::string approx(approximate);
    Node* node = record(
        "GeluBackwardBackward0", {grad_output, self}, out,
        [go, s, approx](const F& n, const Tensor& g) {
          const Tensor x = s.unpack(&n);
          variable_list grads(2);
          if (n.needsGrad(0)) grads[0] = turnout::gelu_backward(g, x, approx);
          if (n.needsGrad(1)) {
            grads[1] = turnout::mul(turnout::mul(g, go.unpack(&n)),
                                    geluSecondDerivative(x, approx));
          }
          return grads;
        });
    if (node != nullptr) {
      node->addSaved("approximate", IValue(approx));
      node->addSaved("grad_output", go);
      node->addSaved("self", s);
    }
  }
  return out;
}

// softplus_backward (SoftplusBackwardBackward0): grad_output: the same
// backward of g; self: g * grad_output * beta * s * (1 - s) where
// beta * self < threshold (0 beyond), s = sigmoid(beta * self).
Tensor softplusBackward(const Tensor& grad_output, const Tensor& self,
                        const Scalar& beta, const Scalar& threshold) {
  const bool rec = shouldRecord("softplus_backward", grad_output, self);
  Tensor out = belowAutograd([&] {
    return turnout::softplus_backward(grad_output, self, beta, threshold);
  });
  if (rec) {
    SavedVariable go(grad_output);
    SavedVariable s(self);
    Node* node = record(
        "SoftplusBackwardBackward0", {grad_output, self}, out,
        [go, s, beta, threshold](const F& n, const Tensor& g) {
          const Tensor x = s.unpack(&n);
          variable_list grads(2);
          if (n.needsGrad(0)) {
            grads[0] = turnout::softplus_backward(g, x, beta, threshold);
          }
          if (n.needsGrad(1)) {
            // Masked by multiplication, beta last (MulBackward1 under
            // create_graph), as torch 1.13's softplus_double_backward.
            const Tensor xb = turnout::mul(x, beta);
            const Tensor inside =
                turnout::to(turnout::lt(xb, threshold), g.scalar_type());
            grads[1] = turnout::mul(
                turnout::mul(turnout::sigmoid_backward(
                                 turnout::mul(g, go.unpack(&n)),
                                 turnout::sigmoid(xb)),
                             inside),
                beta);
          }
          return grads;
        });
    if (node != nullptr) {
      node->addSaved("beta", IValue(beta));
      node->addSaved("grad_output", go);
      node->addSaved("self", s);
      node->addSaved("threshold", IValue(threshold));
    }
  }
  return out;
}

// elu_backward (EluBackwardBackward0): grad_output: the same backward of g;
// self_or_result, where it is negative: g * grad_output * input_scale
// times, from the input, elu's slope there (elu_backward of it), or, from
// the result, 1.
Tensor eluBackward(const Tensor& grad_output, const Scalar& alpha,
                   const Scalar& scale, const Scalar& input_scale,
                   bool is_result, const Tensor& self_or_result) {
  const bool rec =
      shouldRecord("elu_backward", grad_output, self_or_result);
  Tensor out = belowAutograd([&] {
    return turnout::elu_backward(grad_output, alpha, scale, input_scale,
                                 is_result, self_or_result);
  });
  if (rec) {
    SavedVariable go(grad_output);
    SavedVariable s(self_or_result);
    Node* node = record(
        "EluBackwardBackward0", {grad_output, self_or_result}, out,
        [=](const F& n, const Tensor& g) {
          const Tensor x = s.unpack(&n);
          variable_list grads(2);
          if (n.needsGrad(0)) {
            grads[0] = turnout::elu_backward(g, alpha, scale, input_scale,
                                             is_result, x);
          }
          if (n.needsGrad(1)) {
            // Masked by multiplication (MulBackward0 under create_graph), as
            // torch 1.13's elu_double_backward.
            Tensor gg = turnout::mul(turnout::mul(g, go.unpack(&n)),
                                     input_scale);
            if (!is_result) {
              gg = turnout::elu_backward(gg, alpha, scale, input_scale, false,
                                         x);
            }
            grads[1] = turnout::mul(
                gg, turnout::to(turnout::lt(x, 0), g.scalar_type()));
          }
          return grads;
        });
    if (node != nullptr) {
      node->addSaved("alpha", IValue(alpha));
      node->addSaved("grad_output", go);
      node->addSaved("input_scale", IValue(input_scale));
      node->addSaved("is_result", IValue(is_result));
      node->addSaved("scale", IValue(scale));
      node->addSaved("self_or_result", s);
    }
  }
  return out;
}

// ---- native_layer_norm ---------------------------------------------------------------

Tensor valueOr(const std::optional<Tensor>& t) {
  return t.has_value() ? *t : Tensor();
}

std::tuple<Tensor, Tensor, Tensor> nativeLayerNorm(
    const Tensor& input, IntArrayRef normalized_shape,
    const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
    double eps) {
  const Tensor w = valueOr(weight), b = valueOr(bias);
  const bool rec = shouldRecord("native_layer_norm", input, w, b);
  auto result = belowAutograd([&] {
    return turnout::native_layer_norm(input, normalized_shape, weight, bias,
                                      eps);
  });
  if (rec) {
    const Tensor& out = std::get<0>(result);
    SavedVariable si(input), sw(w), sb(b);
    SavedVariable smean(std::get<1>(result));
    SavedVariable srstd(std::get<2>(result));
    const DimVector shape(normalized_shape.begin(), normalized_shape.end());
    Node* node = record(
        "NativeLayerNormBackward0", {input, w, b}, out,
        [si, sw, sb, smean, srstd, shape](const F& n, const Tensor& g) {
          const Tensor wt = sw.unpack(&n), bt = sb.unpack(&n);
          const Tensor x = si.unpack(&n);
          // Under create_graph, native_layer_norm_backward's Autograd kernel
          // records NativeLayerNormBackwardBackward0 (the statistics' own
          // dependence on x is in its formula).
          auto grads = turnout::native_layer_norm_backward(
              g, x, shape, smean.unpack(&n), srstd.unpack(&n),
              wt.defined() ? std::optional<Tensor>(wt) : std::nullopt,
              bt.defined() ? std::optional<Tensor>(bt) : std::nullopt,
              {n.needsGrad(0), n.needsGrad(1) && wt.defined(),
               n.needsGrad(2) && bt.defined()});
          return variable_list{std::get<0>(grads), std::get<1>(grads),
                               std::get<2>(grads)};
        });
    if (node != nullptr) {
      node->addSaved("bias", sb);
      node->addSaved("input", si);
      node->addSaved("normalized_shape", IValue(normalized_shape));
      node->addSaved("result1", smean);
      node->addSaved("result2", srstd);
      node->addSaved("weight", sw);
    }
  }
  return result;
}

// native_layer_norm_backward (NativeLayerNormBackwardBackward0, as torch
// 1.13's): each of its three outputs gets a node over grad_out, input and
// weight. Per row of N normalised elements, with xhat = (x - mean) rstd,
// g = grad_out * weight and P(v) = rstd (v - mean(v) - xhat mean(xhat v))
// (the derivative of xhat in x, symmetric), the outputs are
//   d_input = P(g), d_weight = sum_rows(grad_out xhat), d_bias =
//   sum_rows(grad_out),
// and their gradients, for upstream gI, gW, gB:
//   from d_input: grad_out: weight P(gI); weight: sum_rows(grad_out P(gI));
//     input: -rstd m P(gI) - rstd B/N P(g) - rstd A/N xhat, with
//     m = mean(g xhat), A = sum(gI P(g)), B = sum(gI xhat) per row;
//   from d_weight: grad_out: gW xhat; input: P(grad_out gW);
//   from d_bias: grad_out: gB.
// mean and rstd are taken as input's statistics (torch 1.13 has no
// gradient for them either); they are read as saved, without history.
void refuseStatisticsGrad(const F& n) {
  TURNOUT_CHECK(!n.needsGrad(3) && !n.needsGrad(4), ErrorKind::NotImplemented,
                "the derivative of native_layer_norm_backward with respect to ",
                n.needsGrad(3) ? "mean" : "rstd",
                " is not implemented (nor is it in torch 1.13): its formula "
                "takes mean and rstd as input's statistics; pass them "
                "detached (mean.detach(), rstd.detach())");
}

struct LayerNormRows {
  Tensor xhat, rstd;
  std::vector<int64_t> dims;  // the normalised ones
  std::vector<int64_t> lead;  // the others
  double n = 1;
  Tensor p(const Tensor& v) const {
    const Tensor c = sub(v, turnout::mean(v, dims, true));
    return mul(sub(c, mul(xhat, turnout::mean(mul(xhat, v), dims, true))),
               rstd);
  }
  Tensor rowSum(const Tensor& v) const {
    return turnout::sum(v, dims, /*keepdim=*/true);
  }
  Tensor leadSum(const Tensor& v) const {
    return lead.empty() ? v : turnout::sum(v, lead);
  }
};

std::tuple<Tensor, Tensor, Tensor> nativeLayerNormBackward(
    const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape,
    const Tensor& mean, const Tensor& rstd, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias, std::vector<bool> output_mask) {
  const Tensor w = valueOr(weight);
  const bool rec = shouldRecord("native_layer_norm_backward", grad_out, input,
                                w, mean, rstd);
  auto result = belowAutograd([&] {
    std::array<bool, 3> mask{};
    for (size_t i = 0; i < 3 && i < output_mask.size(); ++i) {
      mask[i] = output_mask[i];
    }
    return turnout::native_layer_norm_backward(
        grad_out, input, normalized_shape, mean, rstd, weight, bias, mask);
  });
  if (!rec) return result;
  const int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
  auto rows = std::make_shared<LayerNormRows>();
  for (int64_t i = 0; i < input.dim(); ++i) {
    (i < axis ? rows->lead : rows->dims).push_back(i);
  }
  for (int64_t s : normalized_shape) rows->n *= static_cast<double>(s);
  // Without history: the statistics are functions of x in the formula.
  const Tensor mean_c = mean.detach(), rstd_c = rstd.detach();
  auto prepare = [rows, mean_c, rstd_c](const Tensor& x) {
    LayerNormRows r = *rows;
    r.rstd = rstd_c;
    r.xhat = mul(sub(x, mean_c), rstd_c);
    return r;
  };
  const char* kName = "NativeLayerNormBackwardBackward0";
  // Each node its own saved values (a node frees its own after backward).
  struct Saved {
    SavedVariable go, x, w;
  };
  auto saved = [&] {
    return Saved{SavedVariable(grad_out), SavedVariable(input), SavedVariable(w)};
  };
  auto addSaved = [&](Node* node, const Saved& sv) {
    if (node == nullptr) return;
    const SavedVariable& sgo = sv.go;
    const SavedVariable& sx = sv.x;
    const SavedVariable& sw = sv.w;
    node->addSaved("grad_out", sgo);
    node->addSaved("input", sx);
    node->addSaved("mean", SavedVariable(mean_c));
    node->addSaved("normalized_shape", IValue(normalized_shape));
    node->addSaved("rstd", SavedVariable(rstd_c));
    node->addSaved("weight", sw);
  };
  // mean and rstd are inputs too, so that a gradient asked of them is
  // refused (as torch 1.13's not_implemented) rather than silently left out.
  const std::vector<Tensor> inputs{grad_out, input, w, mean, rstd};
  if (std::get<0>(result).defined()) {
    const Saved sv = saved();
    const SavedVariable &sgo = sv.go, &sx = sv.x, &sw = sv.w;
    addSaved(record(kName, inputs, std::get<0>(result),
        [sgo, sx, sw, prepare](const F& n, const Tensor& gi) {
          const Tensor go = sgo.unpack(&n), x = sx.unpack(&n);
          const Tensor wt = sw.unpack(&n);
          const LayerNormRows r = prepare(x);
          const Tensor g = wt.defined() ? mul(go, wt) : go;
          const Tensor p_gi = r.p(gi);
          refuseStatisticsGrad(n);
          variable_list grads(5);
          if (n.needsGrad(0)) grads[0] = wt.defined() ? mul(p_gi, wt) : p_gi;
          if (n.needsGrad(1)) {
            const Tensor p_g = r.p(g);
            const Tensor m = turnout::mean(mul(g, r.xhat), r.dims, true);
            const Tensor a = div(r.rowSum(mul(gi, p_g)), r.n);
            const Tensor b = div(r.rowSum(mul(gi, r.xhat)), r.n);
            grads[1] = neg(mul(r.rstd, add(add(mul(m, p_gi), mul(b, p_g)),
                                           mul(a, r.xhat))));
          }
          if (n.needsGrad(2) && wt.defined()) {
            grads[2] = r.leadSum(mul(go, p_gi));
          }
          return grads;
        }), sv);
  }
  if (std::get<1>(result).defined()) {
    const Saved sv = saved();
    const SavedVariable &sgo = sv.go, &sx = sv.x;
    addSaved(record(kName, inputs, std::get<1>(result),
        [sgo, sx, prepare](const F& n, const Tensor& gw) {
          const Tensor go = sgo.unpack(&n), x = sx.unpack(&n);
          const LayerNormRows r = prepare(x);
          refuseStatisticsGrad(n);
          variable_list grads(5);
          if (n.needsGrad(0)) grads[0] = mul(gw, r.xhat);
          if (n.needsGrad(1)) grads[1] = r.p(mul(go, gw));
          return grads;
        }), sv);
  }
  if (std::get<2>(result).defined()) {
    const Saved sv = saved();
    const SavedVariable& sgo = sv.go;
    addSaved(record(kName, inputs, std::get<2>(result),
        [sgo](const F& n, const Tensor& gb) {
          refuseStatisticsGrad(n);
          variable_list grads(5);
          if (n.needsGrad(0)) {
            const Tensor go = sgo.unpack(&n);
            grads[0] = turnout::expand(gb, go.sizes());
          }
          return grads;
        }), sv);
  }
  return result;
}

// ---- embedding -----------------------------------------------------------------------------

Tensor embedding(const Tensor& weight, const Tensor& indices,
                 int64_t padding_idx, bool scale_grad_by_freq, bool sparse) {
  const bool rec = shouldRecord("embedding", weight);
  Tensor out = belowAutograd([&] {
    return turnout::embedding(weight, indices, padding_idx, scale_grad_by_freq,
                              sparse);
  });
  if (rec) {
    SavedVariable si(indices);
    const int64_t num_weights = weight.size(0);
    Node* node = record("EmbeddingBackward0", {weight}, out,
                        [si, num_weights, padding_idx, scale_grad_by_freq,
                         sparse](const F& n, const Tensor& g) {
                          return variable_list{turnout::embedding_backward(
                              g, si.unpack(&n), num_weights, padding_idx,
                              scale_grad_by_freq, sparse)};
                        });
    if (node != nullptr) {
      // torch 1.13 keeps the weight too (its backward reads only its size).
      node->addSaved("indices", si);
      node->addSaved("padding_idx", IValue(padding_idx));
      node->addSaved("scale_grad_by_freq", IValue(scale_grad_by_freq));
      node->addSaved("sparse", IValue(sparse));
      node->addSaved("weight", SavedVariable(weight));
    }
  }
  return out;
}

// ---- nll_loss_forward, nll_loss2d_forward ---------------------------------------------------

template <bool k2d>
std::tuple<Tensor, Tensor> nllLossForward(const Tensor& self,
                                          const Tensor& target,
                                          const std::optional<Tensor>& weight,
                                          int64_t reduction,
                                          int64_t ignore_index) {
  const char* op = k2d ? "nll_loss2d_forward" : "nll_loss_forward";
  // As torch's: weight (like target) is not differentiable here.
  TURNOUT_CHECK(!GradMode::is_enabled() || !weight.has_value() ||
                    !requiresGrad(*weight),
                ErrorKind::InvalidArgument, "The function '", op,
                "' is not differentiable with respect to argument 'weight'. "
                "This input cannot have requires_grad True.");
  const bool rec = shouldRecord(op, self);
  auto result = belowAutograd([&] {
    return k2d ? turnout::nll_loss2d_forward(self, target, weight, reduction,
                                             ignore_index)
               : turnout::nll_loss_forward(self, target, weight, reduction,
                                           ignore_index);
  });
  if (rec) {
    // total_weight is not differentiable (torch's output_differentiability).
    SavedVariable ss(self), st(target), sw(valueOr(weight));
    SavedVariable stotal(std::get<1>(result));
    Node* node =
        record(k2d ? "NllLoss2DBackward0" : "NllLossBackward0", {self},
               std::get<0>(result),
               [ss, st, sw, stotal, reduction, ignore_index](const F& n,
                                                             const Tensor& g) {
                 const Tensor w = sw.unpack(&n);
                 const std::optional<Tensor> wo =
                     w.defined() ? std::optional<Tensor>(w) : std::nullopt;
                 const Tensor x = ss.unpack(&n), t = st.unpack(&n),
                              total = stotal.unpack(&n);
                 return variable_list{
                     k2d ? turnout::nll_loss2d_backward(g, x, t, wo, reduction,
                                                        ignore_index, total)
                         : turnout::nll_loss_backward(g, x, t, wo, reduction,
                                                      ignore_index, total)};
               });
    if (node != nullptr) {
      node->addSaved("ignore_index", IValue(ignore_index));
      node->addSaved("reduction", IValue(reduction));
      node->addSaved("self", ss);
      node->addSaved("target", st);
      node->addSaved("total_weight", stotal);
      node->addSaved("weight", sw);
    }
  }
  return result;
}

// nll_loss_backward, nll_loss2d_backward: linear in grad_output, constant
// in self: torch 1.13's NllLossBackwardBackward0 (NllLoss2DBackwardBackward0)
// gives grad_output the loss of the incoming gradient (nll_loss(g, target,
// ...)) and self zeros; target and total_weight take none.
template <bool k2d>
Tensor nllLossBackward(const Tensor& grad_output, const Tensor& self,
                       const Tensor& target,
                       const std::optional<Tensor>& weight, int64_t reduction,
                       int64_t ignore_index, const Tensor& total_weight) {
  const char* op = k2d ? "nll_loss2d_backward" : "nll_loss_backward";
  // As torch's: weight and total_weight are not differentiable here.
  const bool grad_mode = GradMode::is_enabled();
  TURNOUT_CHECK(!grad_mode || !weight.has_value() || !requiresGrad(*weight),
                ErrorKind::InvalidArgument, "The function '", op,
                "' is not differentiable with respect to argument 'weight'. "
                "This input cannot have requires_grad True.");
  TURNOUT_CHECK(!grad_mode || !requiresGrad(total_weight),
                ErrorKind::InvalidArgument, "The function '", op,
                "' is not differentiable with respect to argument "
                "'total_weight'. This input cannot have requires_grad True.");
  const bool rec = shouldRecord(op, grad_output, self);
  Tensor out = belowAutograd([&] {
    return k2d ? turnout::nll_loss2d_backward(grad_output, self, target,
                                              weight, reduction, ignore_index,
                                              total_weight)
               : turnout::nll_loss_backward(grad_output, self, target, weight,
                                            reduction, ignore_index,
                                            total_weight);
  });
  if (rec) {
    SavedVariable st(target), sw(valueOr(weight));
    Node* node = record(
        k2d ? "NllLoss2DBackwardBackward0" : "NllLossBackwardBackward0",
        {grad_output, self}, out,
        [st, sw, reduction, ignore_index](const F& n, const Tensor& g) {
          variable_list grads(2);
          if (n.needsGrad(0)) {
            const Tensor w = sw.unpack(&n);
            const std::optional<Tensor> wo =
                w.defined() ? std::optional<Tensor>(w) : std::nullopt;
            const Tensor t = st.unpack(&n);
            grads[0] = std::get<0>(
                k2d ? turnout::nll_loss2d_forward(g, t, wo, reduction,
                                                  ignore_index)
                    : turnout::nll_loss_forward(g, t, wo, reduction,
                                                ignore_index));
          }
          if (n.needsGrad(1)) grads[1] = turnout::zeros_like(g);
          return grads;
        });
    if (node != nullptr) {
      node->addSaved("ignore_index", IValue(ignore_index));
      node->addSaved("reduction", IValue(reduction));
      node->addSaved("target", st);
      node->addSaved("weight", sw);
    }
  }
  return out;
}

// embedding_dense_backward (EmbeddingDenseBackwardBackward0): linear in
// grad_output, whose gradient is the rows of g that `indices` picks (zeros
// where an index is padding_idx), in grad_output's shape; as torch 1.13's
// formula, scale_grad_by_freq is not applied to it. indices takes none.
Tensor embeddingDenseBackward(const Tensor& grad_output, const Tensor& indices,
                              int64_t num_weights, int64_t padding_idx,
                              bool scale_grad_by_freq) {
  using Sig = Tensor(const Tensor&, const Tensor&, int64_t, int64_t, bool);
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::embedding_dense_backward", "")
                             .typed<Sig>();
  const bool rec = shouldRecord("embedding_dense_backward", grad_output);
  Tensor out = belowAutograd([&] {
    return op.call(grad_output, indices, num_weights, padding_idx,
                   scale_grad_by_freq);
  });
  if (rec) {
    SavedVariable si(indices);
    Node* node = record(
        "EmbeddingDenseBackwardBackward0", {grad_output}, out,
        [si, padding_idx](const F& n, const Tensor& g) {
          const Tensor ix = si.unpack(&n);
          const Tensor flat = turnout::reshape(ix, DimVector{-1});
          Tensor rows = turnout::index_select(g, 0, flat);
          if (padding_idx >= 0) {
            const Tensor pad = turnout::reshape(turnout::eq(flat, padding_idx),
                                                DimVector{-1, 1});
            rows = turnout::masked_fill(rows, pad, Scalar(0));
          }
          DimVector size(ix.sizes().begin(), ix.sizes().end());
          size.push_back(-1);
          return variable_list{turnout::reshape(rows, size)};
        });
    if (node != nullptr) {
      node->addSaved("indices", si);
      node->addSaved("padding_idx", IValue(padding_idx));
    }
  }
  return out;
}

// clamp.Tensor, clamp_min.Tensor and clamp_max.Tensor: torch 1.13's
// ClampBackward0, ClampMinBackward1 and ClampMaxBackward1. Unlike maximum
// and minimum, which split a tie, self gets the whole gradient where it
// equals a bound, and a bound only where it wins strictly. With both
// bounds, where min > max the result is max: the gradient goes to max alone
// (min's needs min < max), as torch's formula gives it.
using ClampTensorSig = Tensor(const Tensor&, const std::optional<Tensor>&,
                              const std::optional<Tensor>&);
using ClampBoundTensorSig = Tensor(const Tensor&, const Tensor&);

// Gradients of self, min and max (undefined where a bound is absent).
variable_list clampTensorGrads(const Tensor& g, const Tensor& x,
                               const Tensor& mn, const Tensor& mx) {
  const Tensor z = turnout::zeros_like(g);
  if (mn.defined() && mx.defined()) {
    return {turnout::where(turnout::ge(x, mn),
                           turnout::where(turnout::le(x, mx), g, z), z),
            turnout::where(turnout::lt(x, mn),
                           turnout::where(turnout::lt(mn, mx), g, z), z),
            turnout::where(turnout::gt(x, mx), g,
                           turnout::where(turnout::lt(mx, mn), g, z))};
  }
  if (mn.defined()) {
    return {turnout::where(turnout::ge(x, mn), g, z),
            turnout::where(turnout::lt(x, mn), g, z), Tensor()};
  }
  return {turnout::where(turnout::le(x, mx), g, z), Tensor(),
          turnout::where(turnout::gt(x, mx), g, z)};
}

Tensor clampTensor(const Tensor& self, const std::optional<Tensor>& min,
                   const std::optional<Tensor>& max) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::clamp", "Tensor")
                             .typed<ClampTensorSig>();
  const Tensor mn = min ? *min : Tensor(), mx = max ? *max : Tensor();
  const bool rec = shouldRecord("clamp", self, mn, mx);
  Tensor out = belowAutograd([&] { return op.call(self, min, max); });
  if (rec) {
    SavedVariable ss(self), smin(mn), smax(mx);
    Node* node =
        record("ClampBackward0", {self, mn, mx}, out,
               [ss, smin, smax](const F& n, const Tensor& g) {
                 return clampTensorGrads(g, ss.unpack(&n), smin.unpack(&n),
                                         smax.unpack(&n));
               });
    if (node != nullptr) {
      node->addSaved("max", smax);
      node->addSaved("min", smin);
      node->addSaved("self", ss);
    }
  }
  return out;
}

template <bool kMin>
Tensor clampBoundTensor(const Tensor& self, const Tensor& bound) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow(kMin ? "aten::clamp_min" : "aten::clamp_max",
                             "Tensor")
          .typed<ClampBoundTensorSig>();
  const bool rec = shouldRecord(kMin ? "clamp_min" : "clamp_max", self, bound);
  Tensor out = belowAutograd([&] { return op.call(self, bound); });
  if (rec) {
    SavedVariable ss(self), sb(bound);
    Node* node = record(
        kMin ? "ClampMinBackward1" : "ClampMaxBackward1", {self, bound}, out,
        [ss, sb](const F& n, const Tensor& g) {
          const Tensor x = ss.unpack(&n), b = sb.unpack(&n);
          variable_list grads = kMin ? clampTensorGrads(g, x, b, Tensor())
                                     : clampTensorGrads(g, x, Tensor(), b);
          return variable_list{grads[0], grads[kMin ? 1 : 2]};
        });
    if (node != nullptr) {
      node->addSaved(kMin ? "min" : "max", sb);
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
  m.impl("gelu", TURNOUT_FN(gelu));
  m.impl("gelu_", TURNOUT_FN(gelu_));
  m.impl("silu", TURNOUT_FN(silu));
  m.impl("silu_", TURNOUT_FN(silu_));
  m.impl("elu", TURNOUT_FN(elu));
  m.impl("elu_", TURNOUT_FN(elu_));
  m.impl("leaky_relu", TURNOUT_FN(leakyRelu));
  m.impl("leaky_relu_", TURNOUT_FN(leakyRelu_));
  m.impl("hardtanh", TURNOUT_FN(hardtanh));
  m.impl("hardtanh_", TURNOUT_FN(hardtanh_));
  m.impl("softplus", TURNOUT_FN(softplus));
  m.impl("clamp_", TURNOUT_FN(clamp_));
  m.impl("clamp_min", TURNOUT_FN(clampBound<true>));
  m.impl("clamp_max", TURNOUT_FN(clampBound<false>));
  m.impl("clamp_min_", TURNOUT_FN(clampBound_<true>));
  m.impl("clamp_max_", TURNOUT_FN(clampBound_<false>));
  m.impl("clamp.Tensor", TURNOUT_FN(clampTensor));
  m.impl("clamp_min.Tensor", TURNOUT_FN(clampBoundTensor<true>));
  m.impl("clamp_max.Tensor", TURNOUT_FN(clampBoundTensor<false>));
  m.impl("leaky_relu_backward", TURNOUT_FN(leakyReluBackward));
  m.impl("hardtanh_backward", TURNOUT_FN(hardtanhBackward));
  m.impl("softplus_backward", TURNOUT_FN(softplusBackward));
  m.impl("threshold_backward", TURNOUT_FN(thresholdBackward));
  m.impl("gelu_backward", TURNOUT_FN(geluBackward));
  m.impl("elu_backward", TURNOUT_FN(eluBackward));
  m.impl("native_layer_norm", TURNOUT_FN(nativeLayerNorm));
  m.impl("native_layer_norm_backward", TURNOUT_FN(nativeLayerNormBackward));
  m.impl("embedding", TURNOUT_FN(embedding));
  m.impl("nll_loss_forward", TURNOUT_FN(nllLossForward<false>));
  m.impl("nll_loss2d_forward", TURNOUT_FN(nllLossForward<true>));
  m.impl("nll_loss_backward", TURNOUT_FN(nllLossBackward<false>));
  m.impl("nll_loss2d_backward", TURNOUT_FN(nllLossBackward<true>));
  m.impl("embedding_dense_backward", TURNOUT_FN(embeddingDenseBackward));
}
