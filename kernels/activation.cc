// The activation operators of kernels/nn.h: gelu, silu, elu, leaky_relu,
// hardtanh, softplus (with their in-place forms and backward operators),
// clamp_, clamp_min(_), clamp_max(_), dropout and dropout_.
//
// The forward operators are CompositeExplicitAutograd kernels written over
// the elementwise operators, so one kernel serves CPU, Meta and CUDA; their
// gradients come from the Autograd kernels in autograd/nn_autograd.cc,
// which call the backward operators. The backward operators (and dropout,
// as torch's) are CompositeImplicitAutograd: autograd sees through them, so
// a gradient of a gradient works; but gelu_backward, elu_backward,
// leaky_relu_backward, hardtanh_backward, softplus_backward and
// threshold_backward are CompositeExplicitAutograd, as torch 1.13's (a
// Python mode sees them), with its double-backward formulas in
// autograd/nn_autograd.cc.
//
// Dtypes and errors are torch 1.13's: the activations are defined for
// floating-point inputs only ("\"silu_cpu\" not implemented for 'Long'"),
// hardtanh for every dtype but Bool.
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/operator_handle.h"
#include "kernels/aten_tags.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/nn.h"
#include "kernels/parallel.h"
#include "kernels/random.h"
#include "kernels/reduce_utils.h"
#include "kernels/tensor_utils.h"
#include "kernels/type_promotion.h"
#include "kernels/unary_math.h"
#include "kernels/vec_math.h"

namespace turnout {
namespace {

template <class Sig>
TypedOperatorHandle<Sig> lookup(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}
Tensor& mut(const Tensor& t) { return const_cast<Tensor&>(t); }

void checkDefined(const Tensor& t, const char* op, const char* arg) {
  TURNOUT_CHECK(t.defined(), ErrorKind::InvalidArgument, op, ": expected ",
                arg, " to be a defined tensor, but got an undefined one");
}

// The activations are torch's floating-point kernels: another dtype is
// refused with the name of torch's CPU kernel.
void checkFloating(const Tensor& self, const char* kernel_name) {
  TURNOUT_CHECK(isFloatingType(self.scalar_type()), ErrorKind::NotImplemented,
                "\"", kernel_name, "\" not implemented for '",
                toString(self.scalar_type()), "'");
}

// The backward operators compute in the promoted dtype of their two
// tensors (an integer self with a float gradient is fine, as torch's).
void checkFloatingPair(const Tensor& grad, const Tensor& self,
                       const char* kernel_name) {
  const ScalarType t = resultType(grad, self);
  TURNOUT_CHECK(isFloatingType(t), ErrorKind::NotImplemented, "\"",
                kernel_name, "\" not implemented for '", toString(t), "'");
}

// self = value, for the in-place forms (value has self's shape; a dtype
// that cannot hold the result was refused by the functional form).
Tensor& assign(Tensor& self, const Tensor& value) {
  turnout::copy_(self, value);
  return self;
}

// The out= overloads: `result` (computed aside, so out may overlap self)
// written into `out`, which must have its dtype ("Found dtype Double but
// expected Float", as torch's) and is resized when its shape differs.
Tensor& writeOut(const char* op, const Tensor& result, Tensor& out) {
  TURNOUT_CHECK(out.defined(), ErrorKind::InvalidArgument, op,
                ": expected a defined out tensor");
  TURNOUT_CHECK(out.scalar_type() == result.scalar_type(), ErrorKind::Type,
                "Found dtype ", toString(out.scalar_type()), " but expected ",
                toString(result.scalar_type()));
  reduce_internal::checkSameDevice(op, result, out);
  reduce_internal::resizeOutput(out, result.sizes(), op);
  turnout::copy_(out, result);
  return out;
}

// ---- gelu -------------------------------------------------------------------

bool geluIsTanh(std::string_view approximate) {
  TURNOUT_CHECK(approximate == "none" || approximate == "tanh",
                ErrorKind::InvalidArgument,
                "approximate argument must be either none or tanh. (got '",
                std::string(approximate), "')");
  return approximate == "tanh";
}

constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kGeluTanhCoeff = 0.044715;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)

// tanh's inner argument, sqrt(2/pi) (x + 0.044715 x^3).
Tensor geluInner(const Tensor& x) {
  return mul(add(x, mul(mul(mul(x, x), x), kGeluTanhCoeff)), kSqrt2OverPi);
}

// A contiguous float or double CPU tensor in one pass (float four lanes
// at a time through SLEEF's erf/tanh, as ATen's vectorised kernel); the
// composite below makes five passes and took glibc's scalar erff, three
// times slower than ATen on a transformer block's GELU (bench/README.md).
bool geluContiguousCpu(const Tensor& self, bool tanh_form, Tensor& out) {
  if (!self.is_cpu() || !self.is_contiguous()) return false;
  const ScalarType dtype = self.scalar_type();
  if (dtype != ScalarType::Float && dtype != ScalarType::Double) return false;
  out = emptyTensor(self.sizes(), dtype, self.device());
  const int64_t n = self.numel();
  if (dtype == ScalarType::Float) {
    const auto* x = static_cast<const float*>(self.data_ptr());
    auto* y = static_cast<float*>(out.data_ptr());
    parallel_for(0, n, kGrainSize / 8, [&](int64_t begin, int64_t end) {
      (tanh_form ? vec_math::geluTanh : vec_math::geluErf)(x + begin,
                                                          y + begin,
                                                          end - begin);
    });
    return true;
  }
  const auto* x = static_cast<const double*>(self.data_ptr());
  auto* y = static_cast<double*>(out.data_ptr());
  parallel_for(0, n, kGrainSize / 8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const double v = x[i];
      const double t =
          tanh_form
              ? std::tanh(kSqrt2OverPi * (v + kGeluTanhCoeff * v * v * v))
              : std::erf(v * M_SQRT1_2);
      y[i] = 0.5 * v * (1 + t);
    }
  });
  return true;
}

Tensor geluKernel(const Tensor& self, std::string_view approximate) {
  checkDefined(self, "gelu", "self");
  const bool tanh_form = geluIsTanh(approximate);
  checkFloating(self, "GeluKernelImpl");
  if (Tensor out; geluContiguousCpu(self, tanh_form, out)) return out;
  // none: x/2 (1 + erf(x / sqrt 2)); tanh: x/2 (1 + tanh(inner)).
  const Tensor t = tanh_form ? turnout::tanh(geluInner(self))
                             : turnout::erf(mul(self, M_SQRT1_2));
  return mul(mul(self, 0.5), add(t, 1));
}

Tensor& geluInplace(Tensor& self, std::string_view approximate) {
  return assign(self, geluKernel(self, approximate));
}

Tensor geluBackward(const Tensor& grad_output, const Tensor& self,
                    std::string_view approximate) {
  checkDefined(grad_output, "gelu_backward", "grad_output");
  checkDefined(self, "gelu_backward", "self");
  const bool tanh_form = geluIsTanh(approximate);
  checkFloatingPair(grad_output, self, "GeluBackwardKernelImpl");
  if (!tanh_form) {
    // Phi(x) + x phi(x).
    const Tensor cdf = mul(add(turnout::erf(mul(self, M_SQRT1_2)), 1), 0.5);
    const Tensor pdf =
        mul(turnout::exp(mul(mul(self, self), -0.5)), kInvSqrt2Pi);
    return mul(grad_output, add(cdf, mul(self, pdf)));
  }
  // d/dx [x/2 (1 + tanh(u))] = (1 + t)/2 + x/2 (1 - t^2) u',
  // u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2).
  const Tensor t = turnout::tanh(geluInner(self));
  const Tensor du =
      mul(add(mul(mul(self, self), 3 * kGeluTanhCoeff), 1), kSqrt2OverPi);
  const Tensor left = mul(add(t, 1), 0.5);
  const Tensor right =
      mul(mul(mul(self, 0.5), sub(ones_like(t), mul(t, t))), du);
  return mul(grad_output, add(left, right));
}

// ---- silu ---------------------------------------------------------------------

Tensor siluKernel(const Tensor& self) {
  checkDefined(self, "silu", "self");
  checkFloating(self, "silu_cpu");
  return mul(self, turnout::sigmoid(self));
}
Tensor& siluInplace(Tensor& self) { return assign(self, siluKernel(self)); }

Tensor siluBackward(const Tensor& grad_output, const Tensor& self) {
  checkDefined(grad_output, "silu_backward", "grad_output");
  checkDefined(self, "silu_backward", "self");
  checkFloatingPair(grad_output, self, "silu_backward_cpu");
  // s (1 + x (1 - s)).
  const Tensor s = turnout::sigmoid(self);
  return mul(grad_output,
             mul(s, add(mul(self, sub(ones_like(s), s)), 1)));
}

// ---- elu ------------------------------------------------------------------------

Tensor eluKernel(const Tensor& self, const Scalar& alpha, const Scalar& scale,
                 const Scalar& input_scale) {
  checkDefined(self, "elu", "self");
  checkFloating(self, "elu_cpu");
  // x > 0: scale x; else scale alpha (exp(x input_scale) - 1).
  const Tensor negative = mul(
      turnout::expm1(mul(self, input_scale)), alpha.toDouble() * scale.toDouble());
  return where(gt(self, 0), mul(self, scale), negative);
}
Tensor& eluInplace(Tensor& self, const Scalar& alpha, const Scalar& scale,
                   const Scalar& input_scale) {
  return assign(self, eluKernel(self, alpha, scale, input_scale));
}

Tensor eluBackward(const Tensor& grad_output, const Scalar& alpha,
                   const Scalar& scale, const Scalar& input_scale,
                   bool is_result, const Tensor& self_or_result) {
  checkDefined(grad_output, "elu_backward", "grad_output");
  checkDefined(self_or_result, "elu_backward", "self_or_result");
  checkFloatingPair(grad_output, self_or_result, "elu_backward_cpu");
  const double a = alpha.toDouble(), s = scale.toDouble(),
               is = input_scale.toDouble();
  if (is_result) {
    TURNOUT_CHECK(a >= 0, ErrorKind::InvalidArgument,
                  "In-place elu backward calculation is triggered with a "
                  "negative slope which is not supported. This is caused by "
                  "calling in-place forward function with a negative slope, "
                  "please call out-of-place version instead.");
    // y <= 0: input_scale (y + alpha scale); else scale.
    const Tensor negative =
        mul(grad_output, mul(add(self_or_result, a * s), is));
    return where(le(self_or_result, 0), negative, mul(grad_output, s));
  }
  // x <= 0: input_scale alpha scale exp(x input_scale); else scale.
  const Tensor negative = mul(
      grad_output, mul(turnout::exp(mul(self_or_result, is)), is * a * s));
  return where(le(self_or_result, 0), negative, mul(grad_output, s));
}

// ---- leaky_relu -------------------------------------------------------------------

Tensor leakyReluKernel(const Tensor& self, const Scalar& negative_slope) {
  checkDefined(self, "leaky_relu", "self");
  checkFloating(self, "leaky_relu_cpu");
  return where(gt(self, 0), self, mul(self, negative_slope));
}
Tensor& leakyReluInplace(Tensor& self, const Scalar& negative_slope) {
  return assign(self, leakyReluKernel(self, negative_slope));
}

Tensor leakyReluBackward(const Tensor& grad_output, const Tensor& self,
                         const Scalar& negative_slope, bool self_is_result) {
  checkDefined(grad_output, "leaky_relu_backward", "grad_output");
  checkDefined(self, "leaky_relu_backward", "self");
  TURNOUT_CHECK(!self_is_result || negative_slope.toDouble() >= 0.0,
                ErrorKind::InvalidArgument,
                "In-place leakyReLu backward calculation is triggered with a "
                "negative slope which is not supported. This is caused by "
                "calling in-place forward function with a negative slope, "
                "please call out-of-place version instead. File an issue at "
                "https://github.com/pytorch/pytorch if you do require "
                "supporting in-place leakRelu backward calculation with "
                "negative slope");
  checkFloatingPair(grad_output, self, "leaky_relu_backward_cpu");
  return where(gt(self, 0), grad_output, mul(grad_output, negative_slope));
}

// ---- hardtanh -------------------------------------------------------------------------

void checkHardtanh(const Tensor& self, const Scalar& min_val,
                   const Scalar& max_val) {
  TURNOUT_CHECK(self.scalar_type() != ScalarType::Bool,
                ErrorKind::InvalidArgument,
                "Bool inputs not supported for hardtanh");
  TURNOUT_CHECK(self.scalar_type() != ScalarType::Byte ||
                    (min_val.toDouble() >= 0 && max_val.toDouble() >= 0),
                ErrorKind::InvalidArgument,
                "cannot do hardtanh on an unsigned type with negative limits");
}

Tensor hardtanhKernel(const Tensor& self, const Scalar& min_val,
                      const Scalar& max_val) {
  checkDefined(self, "hardtanh", "self");
  checkHardtanh(self, min_val, max_val);
  return clamp(self, min_val, max_val);
}
Tensor& hardtanhInplace(Tensor& self, const Scalar& min_val,
                        const Scalar& max_val) {
  return assign(self, hardtanhKernel(self, min_val, max_val));
}

Tensor hardtanhBackward(const Tensor& grad_output, const Tensor& self,
                        const Scalar& min_val, const Scalar& max_val) {
  checkDefined(grad_output, "hardtanh_backward", "grad_output");
  checkDefined(self, "hardtanh_backward", "self");
  checkFloatingPair(grad_output, self, "hardtanh_backward_cpu");
  // Zero at and beyond the limits.
  const Tensor zero = zeros_like(grad_output);
  return where(gt(self, min_val),
               where(lt(self, max_val), grad_output, zero), zero);
}

// ---- softplus ---------------------------------------------------------------------------

Tensor softplusKernel(const Tensor& self, const Scalar& beta,
                      const Scalar& threshold) {
  checkDefined(self, "softplus", "self");
  checkFloating(self, "softplus_cpu");
  // x beta > threshold: x; else log1p(exp(x beta)) / beta.
  const Tensor xb = mul(self, beta);
  return where(gt(xb, threshold), self,
               div(turnout::log1p(turnout::exp(xb)), beta));
}

Tensor softplusBackward(const Tensor& grad_output, const Tensor& self,
                        const Scalar& beta, const Scalar& threshold) {
  checkDefined(grad_output, "softplus_backward", "grad_output");
  checkDefined(self, "softplus_backward", "self");
  checkFloatingPair(grad_output, self, "softplus_backward_cpu");
  // z / (z + 1) = sigmoid(x beta).
  const Tensor xb = mul(self, beta);
  return where(gt(xb, threshold), grad_output,
               mul(grad_output, turnout::sigmoid(xb)));
}

// ---- threshold_backward ------------------------------------------------------------------
// relu's gradient (threshold_backward(g, result, 0)): 0 where
// self <= threshold, else grad_output (a NaN self passes it), in the
// promoted dtype of the two, broadcast; the threshold is compared as a
// value of that dtype (truncated for an integral one), as torch 1.13's
// threshold kernel.

Tensor thresholdBackward(const Tensor& grad_output, const Tensor& self,
                         const Scalar& threshold) {
  checkDefined(grad_output, "threshold_backward", "grad_output");
  checkDefined(self, "threshold_backward", "self");
  const ScalarType t = resultType(grad_output, self);
  TURNOUT_CHECK(t != ScalarType::Bool, ErrorKind::NotImplemented,
                "\"threshold_cpu\" not implemented for 'Bool'");
  const Tensor x = self.scalar_type() == t ? self : to(self, t);
  const Tensor g = grad_output.scalar_type() == t ? grad_output
                                                  : to(grad_output, t);
  const Scalar bound = isFloatingType(t) ? threshold
                                         : Scalar(threshold.toLong());
  return where(le(x, bound), zeros({}, TensorOptions(t).device(g.device())),
               g);
}

// ---- clamp_min, clamp_max (CompositeExplicitAutograd over clamp, as torch 1.13's) -------
// F.normalize calls clamp_min; values and promotion are clamp's with one
// bound; gradients in autograd/nn_autograd.cc (ClampMinBackward0, ...).

Tensor clampMin(const Tensor& self, const Scalar& min) {
  return clamp(self, min, std::nullopt);
}

Tensor clampMax(const Tensor& self, const Scalar& max) {
  return clamp(self, std::nullopt, max);
}

Tensor& clampMinInplace(Tensor& self, const Scalar& min) {
  turnout::clamp_(self, min, std::nullopt);
  return self;
}

Tensor& clampMaxInplace(Tensor& self, const Scalar& max) {
  turnout::clamp_(self, std::nullopt, max);
  return self;
}

// ---- clamp_ ---------------------------------------------------------------------------

Tensor& clampInplace(Tensor& self, const std::optional<Scalar>& min,
                     const std::optional<Scalar>& max) {
  checkDefined(self, "clamp_", "self");
  const Tensor r = clamp(self, min, max);
  TURNOUT_CHECK(canCast(r.scalar_type(), self.scalar_type()),
                ErrorKind::InvalidArgument, "result type ", toString(r.scalar_type()),
                " can't be cast to the desired output type ",
                toString(self.scalar_type()));
  return assign(self, r);
}

// ---- dropout (CompositeImplicitAutograd) ---------------------------------------------------

void checkDropoutP(double p) {
  TURNOUT_CHECK(p >= 0 && p <= 1, ErrorKind::InvalidArgument,
                "dropout probability has to be between 0 and 1, but got ", p);
}

Tensor dropoutKernel(const Tensor& input, double p, bool train) {
  checkDefined(input, "dropout", "input");
  checkDropoutP(p);
  if (p == 0 || !train || input.numel() == 0) return input;
  if (p == 1) return mul(input, 0);
  // Keep each element with probability 1 - p, scaled by 1 / (1 - p).
  Tensor noise = empty_like(input);
  turnout::bernoulli_(noise, 1 - p);
  turnout::div_(noise, 1 - p);
  return mul(input, noise);
}

Tensor& dropoutInplace(Tensor& self, double p, bool train) {
  checkDefined(self, "dropout_", "self");
  checkDropoutP(p);
  if (p == 0 || !train || self.numel() == 0) return self;
  if (p == 1) {
    turnout::mul_(self, 0);
    return self;
  }
  Tensor noise = empty_like(self);
  turnout::bernoulli_(noise, 1 - p);
  turnout::div_(noise, 1 - p);
  turnout::mul_(self, noise);
  return self;
}

}  // namespace

// ---- Front end ------------------------------------------------------------------------------

#define TURNOUT_NN_CALL(name, overload, Sig, ...)                \
  static const auto op = lookup<Sig>("aten::" name, overload);   \
  return op.call(__VA_ARGS__)

Tensor gelu(const Tensor& self, std::string_view approximate) {
  TURNOUT_NN_CALL("gelu", "", Tensor(const Tensor&, std::string_view), self,
                  approximate);
}
const Tensor& gelu_(const Tensor& self, std::string_view approximate) {
  TURNOUT_NN_CALL("gelu_", "", Tensor&(Tensor&, std::string_view), mut(self),
                  approximate);
}
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self,
                     std::string_view approximate) {
  TURNOUT_NN_CALL("gelu_backward", "",
                  Tensor(const Tensor&, const Tensor&, std::string_view),
                  grad_output, self, approximate);
}
Tensor silu(const Tensor& self) {
  TURNOUT_NN_CALL("silu", "", Tensor(const Tensor&), self);
}
const Tensor& silu_(const Tensor& self) {
  TURNOUT_NN_CALL("silu_", "", Tensor&(Tensor&), mut(self));
}
Tensor silu_backward(const Tensor& grad_output, const Tensor& self) {
  TURNOUT_NN_CALL("silu_backward", "", Tensor(const Tensor&, const Tensor&),
                  grad_output, self);
}
Tensor elu(const Tensor& self, const Scalar& alpha, const Scalar& scale,
           const Scalar& input_scale) {
  TURNOUT_NN_CALL(
      "elu", "",
      Tensor(const Tensor&, const Scalar&, const Scalar&, const Scalar&), self,
      alpha, scale, input_scale);
}
const Tensor& elu_(const Tensor& self, const Scalar& alpha, const Scalar& scale,
                   const Scalar& input_scale) {
  TURNOUT_NN_CALL("elu_", "",
                  Tensor&(Tensor&, const Scalar&, const Scalar&, const Scalar&),
                  mut(self), alpha, scale, input_scale);
}
Tensor elu_backward(const Tensor& grad_output, const Scalar& alpha,
                    const Scalar& scale, const Scalar& input_scale,
                    bool is_result, const Tensor& self_or_result) {
  TURNOUT_NN_CALL("elu_backward", "",
                  Tensor(const Tensor&, const Scalar&, const Scalar&,
                         const Scalar&, bool, const Tensor&),
                  grad_output, alpha, scale, input_scale, is_result,
                  self_or_result);
}
Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope) {
  TURNOUT_NN_CALL("leaky_relu", "", Tensor(const Tensor&, const Scalar&), self,
                  negative_slope);
}
const Tensor& leaky_relu_(const Tensor& self, const Scalar& negative_slope) {
  TURNOUT_NN_CALL("leaky_relu_", "", Tensor&(Tensor&, const Scalar&),
                  mut(self), negative_slope);
}
Tensor leaky_relu_backward(const Tensor& grad_output, const Tensor& self,
                           const Scalar& negative_slope, bool self_is_result) {
  TURNOUT_NN_CALL(
      "leaky_relu_backward", "",
      Tensor(const Tensor&, const Tensor&, const Scalar&, bool), grad_output,
      self, negative_slope, self_is_result);
}
Tensor hardtanh(const Tensor& self, const Scalar& min_val,
                const Scalar& max_val) {
  TURNOUT_NN_CALL("hardtanh", "",
                  Tensor(const Tensor&, const Scalar&, const Scalar&), self,
                  min_val, max_val);
}
const Tensor& hardtanh_(const Tensor& self, const Scalar& min_val,
                        const Scalar& max_val) {
  TURNOUT_NN_CALL("hardtanh_", "",
                  Tensor&(Tensor&, const Scalar&, const Scalar&), mut(self),
                  min_val, max_val);
}
Tensor hardtanh_backward(const Tensor& grad_output, const Tensor& self,
                         const Scalar& min_val, const Scalar& max_val) {
  TURNOUT_NN_CALL(
      "hardtanh_backward", "",
      Tensor(const Tensor&, const Tensor&, const Scalar&, const Scalar&),
      grad_output, self, min_val, max_val);
}
Tensor softplus(const Tensor& self, const Scalar& beta,
                const Scalar& threshold) {
  TURNOUT_NN_CALL("softplus", "",
                  Tensor(const Tensor&, const Scalar&, const Scalar&), self,
                  beta, threshold);
}
Tensor softplus_backward(const Tensor& grad_output, const Tensor& self,
                         const Scalar& beta, const Scalar& threshold) {
  TURNOUT_NN_CALL(
      "softplus_backward", "",
      Tensor(const Tensor&, const Tensor&, const Scalar&, const Scalar&),
      grad_output, self, beta, threshold);
}
const Tensor& clamp_(const Tensor& self, const std::optional<Scalar>& min,
                     const std::optional<Scalar>& max) {
  TURNOUT_NN_CALL("clamp_", "",
                  Tensor&(Tensor&, const std::optional<Scalar>&,
                          const std::optional<Scalar>&),
                  mut(self), min, max);
}
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self,
                          const Scalar& threshold) {
  TURNOUT_NN_CALL("threshold_backward", "",
                  Tensor(const Tensor&, const Tensor&, const Scalar&),
                  grad_output, self, threshold);
}
Tensor dropout(const Tensor& input, double p, bool train) {
  TURNOUT_NN_CALL("dropout", "", Tensor(const Tensor&, double, bool), input,
                  p, train);
}
#undef TURNOUT_NN_CALL

}  // namespace turnout

// ---- Registration -----------------------------------------------------------------------

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);
  m.def("gelu(Tensor self, *, str approximate=\"none\") -> Tensor");
  m.def("gelu_(Tensor(a!) self, *, str approximate=\"none\") -> Tensor(a!)");
  m.def(
      "gelu_backward(Tensor grad_output, Tensor self, *, str "
      "approximate=\"none\") -> Tensor");
  m.def("silu(Tensor self) -> Tensor");
  m.def("silu_(Tensor(a!) self) -> Tensor(a!)");
  m.def("silu_backward(Tensor grad_output, Tensor self) -> Tensor");
  m.def(
      "elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar "
      "input_scale=1) -> Tensor");
  m.def(
      "elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar "
      "input_scale=1) -> Tensor(a!)");
  m.def(
      "elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, Scalar "
      "input_scale, bool is_result, Tensor self_or_result) -> Tensor");
  m.def("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor");
  m.def(
      "leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> "
      "Tensor(a!)");
  m.def(
      "leaky_relu_backward(Tensor grad_output, Tensor self, Scalar "
      "negative_slope, bool self_is_result) -> Tensor");
  m.def("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor");
  m.def(
      "hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> "
      "Tensor(a!)");
  m.def(
      "hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, "
      "Scalar max_val) -> Tensor");
  m.def("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor");
  m.def(
      "softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar "
      "threshold) -> Tensor");
  m.def(
      "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) "
      "-> Tensor");
  m.def(
      "clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> "
      "Tensor(a!)");
  m.def(
      "gelu.out(Tensor self, *, str approximate=\"none\", Tensor(a!) out) -> "
      "Tensor(a!)");
  m.def("silu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
  m.def(
      "elu.out(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar "
      "input_scale=1, *, Tensor(a!) out) -> Tensor(a!)");
  m.def(
      "leaky_relu.out(Tensor self, Scalar negative_slope=0.01, *, Tensor(a!) "
      "out) -> Tensor(a!)");
  m.def(
      "hardtanh.out(Tensor self, Scalar min_val=-1, Scalar max_val=1, *, "
      "Tensor(a!) out) -> Tensor(a!)");
  m.def(
      "softplus.out(Tensor self, Scalar beta=1, Scalar threshold=20, *, "
      "Tensor(a!) out) -> Tensor(a!)");
  m.def("dropout(Tensor input, float p, bool train) -> Tensor");
  m.def("clamp_min(Tensor self, Scalar min) -> Tensor");
  m.def("clamp_max(Tensor self, Scalar max) -> Tensor");
  m.def("clamp_min_(Tensor(a!) self, Scalar min) -> Tensor(a!)");
  m.def("clamp_max_(Tensor(a!) self, Scalar max) -> Tensor(a!)");
  m.def("dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)");
}

namespace turnout {
namespace {

Tensor& geluOut(const Tensor& self, std::string_view approximate, Tensor& out) {
  return writeOut("gelu.out", geluKernel(self, approximate), out);
}
Tensor& siluOut(const Tensor& self, Tensor& out) {
  return writeOut("silu.out", siluKernel(self), out);
}
Tensor& eluOut(const Tensor& self, const Scalar& alpha, const Scalar& scale,
               const Scalar& input_scale, Tensor& out) {
  return writeOut("elu.out", eluKernel(self, alpha, scale, input_scale), out);
}
Tensor& leakyReluOut(const Tensor& self, const Scalar& negative_slope,
                     Tensor& out) {
  return writeOut("leaky_relu.out", leakyReluKernel(self, negative_slope), out);
}
Tensor& hardtanhOut(const Tensor& self, const Scalar& min_val,
                    const Scalar& max_val, Tensor& out) {
  return writeOut("hardtanh.out", hardtanhKernel(self, min_val, max_val), out);
}
Tensor& softplusOut(const Tensor& self, const Scalar& beta,
                    const Scalar& threshold, Tensor& out) {
  return writeOut("softplus.out", softplusKernel(self, beta, threshold), out);
}

}  // namespace
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  using namespace turnout;  // NOLINT: the kernels above
  m.impl("gelu.out", TURNOUT_FN(geluOut));
  m.impl("silu.out", TURNOUT_FN(siluOut));
  m.impl("elu.out", TURNOUT_FN(eluOut));
  m.impl("leaky_relu.out", TURNOUT_FN(leakyReluOut));
  m.impl("hardtanh.out", TURNOUT_FN(hardtanhOut));
  m.impl("softplus.out", TURNOUT_FN(softplusOut));
  m.impl("gelu", TURNOUT_FN(geluKernel));
  m.impl("gelu_", TURNOUT_FN(geluInplace));
  m.impl("silu", TURNOUT_FN(siluKernel));
  m.impl("silu_", TURNOUT_FN(siluInplace));
  m.impl("elu", TURNOUT_FN(eluKernel));
  m.impl("elu_", TURNOUT_FN(eluInplace));
  m.impl("leaky_relu", TURNOUT_FN(leakyReluKernel));
  m.impl("leaky_relu_", TURNOUT_FN(leakyReluInplace));
  m.impl("hardtanh", TURNOUT_FN(hardtanhKernel));
  m.impl("hardtanh_", TURNOUT_FN(hardtanhInplace));
  m.impl("softplus", TURNOUT_FN(softplusKernel));
  m.impl("clamp_", TURNOUT_FN(clampInplace));
  m.impl("clamp_min", TURNOUT_FN(clampMin));
  m.impl("clamp_max", TURNOUT_FN(clampMax));
  m.impl("clamp_min_", TURNOUT_FN(clampMinInplace));
  m.impl("clamp_max_", TURNOUT_FN(clampMaxInplace));
  // The backward operators that torch 1.13 has as backend kernels, with
  // its double-backward formulas (autograd/nn_autograd.cc).
  m.impl("leaky_relu_backward", TURNOUT_FN(leakyReluBackward));
  m.impl("hardtanh_backward", TURNOUT_FN(hardtanhBackward));
  m.impl("gelu_backward", TURNOUT_FN(geluBackward));
  m.impl("elu_backward", TURNOUT_FN(eluBackward));
  m.impl("softplus_backward", TURNOUT_FN(softplusBackward));
  m.impl("threshold_backward", TURNOUT_FN(thresholdBackward));
}

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  using namespace turnout;  // NOLINT: the kernels above
  m.impl("silu_backward", TURNOUT_FN(siluBackward));
  m.impl("dropout", TURNOUT_FN(dropoutKernel));
  m.impl("dropout_", TURNOUT_FN(dropoutInplace));
}
