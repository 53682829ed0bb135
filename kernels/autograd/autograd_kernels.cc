// The Autograd kernels of the differentiable reference operators, registered
// at the Autograd alias key. Each one:
//   1. decides whether to record (grad mode on and an input requires grad);
//   2. excludes the autograd keys and calls the operator again, which
//      reaches the backend kernel below (belowAutograd);
//   3. when recording, makes a FunctionNode with the derivative formula and
//      what it saved the grad_fn of the output.
// In-place operators also check the in-place rules and bump the version
// counter of the tensor they wrote, recording or not (writeInplace).
//
// Operators registered as CompositeImplicitAutograd (reshape, contiguous,
// to.dtype, matmul, linear) have no kernel here: their gradients come from
// the operators they call. detach, comparisons, argmax and a few others are
// not differentiable and register fallthroughs (at the end).
//
// Formulas are written with the front-end operators; backward() runs them
// with grad mode off.
#include <algorithm>
#include <numeric>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "kernels/autograd/function_node.h"
#include "kernels/autograd/saved_variable.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/linalg.h"
#include "kernels/reduce.h"
#include "kernels/shape.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace autograd {
namespace {

using detail::checkInplaceAllowed;
using detail::record;
using detail::shouldRecord;
using F = FunctionNode;
using DimList = std::optional<std::vector<int64_t>>;

bool isOne(const Scalar& s) {
  return s.isIntegral(false) ? s.toLong() == 1 : s.toDouble() == 1.0;
}
Tensor scaled(const Tensor& g, const Scalar& s) {
  return isOne(s) ? g : turnout::mul(g, s);
}
Scalar negated(const Scalar& s) {
  return s.isIntegral(false) ? Scalar(-s.toLong()) : Scalar(-s.toDouble());
}
// A 0-dim zero of g's dtype and device: broadcasts in where().
Tensor zeroLike(const Tensor& g) {
  return turnout::zeros({}, TensorOptions(g.scalar_type()).device(g.device()));
}
void bumpVersion(const Tensor& t) { t.unsafeGetTensorImpl()->bump_version(); }

using detail::belowAutograd;
using detail::writeInplace;

// The reduced dimensions of a reduction over `dim` (all when empty), wrapped
// and sorted; none for a 0-dim tensor.
std::vector<int64_t> reducedDims(IntArrayRef dim, int64_t ndim) {
  std::vector<int64_t> out;
  for (int64_t d : dim) out.push_back(maybeWrapDim(d, ndim));  // checks d
  if (dim.empty() || ndim == 0) {  // every dim; a 0-dim tensor has none
    out.resize(static_cast<size_t>(ndim));
    std::iota(out.begin(), out.end(), 0);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}
// g with the reduced dimensions put back as size 1 (a no-op for keepdim).
Tensor unsqueezeReduced(Tensor g, const std::vector<int64_t>& dims,
                        bool keepdim) {
  if (keepdim) return g;
  for (int64_t d : dims) g = turnout::unsqueeze(g, d);
  return g;
}

// ---- Arithmetic ------------------------------------------------------------
// Each operator and its in-place form share one formula. In-place, self's
// old history becomes the first next edge of the new node, which becomes
// self's grad_fn (PyTorch's rebase_history for a non-view).

// add / sub by a Scalar: the gradient passes through.
F::Formula passThrough() {
  return [](const F&, const Tensor& g) { return variable_list{g}; };
}

// add.Tensor / sub.Tensor: g for self, g * a for other, where `a` is alpha
// (add) or -alpha (sub).
F::Formula addSubTensorBackward(const Scalar& a) {
  return [a](const F&, const Tensor& g) {
    return variable_list{g, scaled(g, a)};
  };
}

// mul.Tensor / div.Tensor: `s` is self's value before the operation, saved
// when other requires grad; `o` is other, saved when some gradient uses it
// (an undefined `o` unpacks to an undefined tensor without a check).
template <bool kDiv>
F::Formula mulDivTensorBackward(SavedVariable s, SavedVariable o) {
  return [s = std::move(s), o = std::move(o)](const F& n, const Tensor& g) {
    const Tensor b = o.unpack(&n);
    Tensor ga, gb;
    if (kDiv) {
      if (n.needsGrad(0)) ga = turnout::div(g, b);
      if (n.needsGrad(1)) {
        // -g * ((self / other) / other), as torch 1.13 computes it.
        gb = turnout::mul(turnout::neg(g),
                          turnout::div(turnout::div(s.unpack(&n), b), b));
      }
    } else {
      if (n.needsGrad(0)) ga = turnout::mul(g, b);
      if (n.needsGrad(1)) gb = turnout::mul(g, s.unpack(&n));
    }
    return variable_list{ga, gb};
  };
}

// mul.Scalar / div.Scalar.
template <bool kDiv>
F::Formula mulDivScalarBackward(const Scalar& other) {
  return [other](const F&, const Tensor& g) {
    return variable_list{kDiv ? turnout::div(g, other)
                              : turnout::mul(g, other)};
  };
}

template <bool kSub>
Tensor addSubTensor(const Tensor& self, const Tensor& other,
                    const Scalar& alpha) {
  const bool rec = shouldRecord(kSub ? "sub" : "add", self, other);
  Tensor out = belowAutograd([&] {
    return kSub ? turnout::sub(self, other, alpha)
                : turnout::add(self, other, alpha);
  });
  if (rec) {
    if (Node* n = record(kSub ? "SubBackward0" : "AddBackward0",
                         {self, other}, out,
                         addSubTensorBackward(kSub ? negated(alpha) : alpha))) {
      n->addSaved("alpha", IValue(alpha));
    }
  }
  return out;
}

template <bool kSub>
Tensor addSubScalar(const Tensor& self, const Scalar& other,
                    const Scalar& alpha) {
  const bool rec = shouldRecord(kSub ? "sub" : "add", self);
  Tensor out = belowAutograd([&] {
    return kSub ? turnout::sub(self, other, alpha)
                : turnout::add(self, other, alpha);
  });
  if (rec) {
    record(kSub ? "SubBackward1" : "AddBackward1", {self}, out, passThrough());
  }
  return out;
}

// rsub.Tensor: other - alpha * self, so -alpha * g for self, g for other.
Tensor rsubTensor(const Tensor& self, const Tensor& other,
                  const Scalar& alpha) {
  const bool rec = shouldRecord("rsub", self, other);
  Tensor out = belowAutograd([&] { return turnout::rsub(self, other, alpha); });
  if (rec) {
    const Scalar minus_alpha = negated(alpha);
    if (Node* n = record("RsubBackward0", {self, other}, out,
                         [minus_alpha](const F&, const Tensor& g) {
                           return variable_list{scaled(g, minus_alpha), g};
                         })) {
      n->addSaved("alpha", IValue(alpha));
    }
  }
  return out;
}

// rsub.Scalar (`4 - x`): -alpha * g for self.
Tensor rsubScalar(const Tensor& self, const Scalar& other,
                  const Scalar& alpha) {
  const bool rec = shouldRecord("rsub", self);
  Tensor out = belowAutograd([&] { return turnout::rsub(self, other, alpha); });
  if (rec) {
    const Scalar minus_alpha = negated(alpha);
    if (Node* n = record("RsubBackward1", {self}, out,
                         [minus_alpha](const F&, const Tensor& g) {
                           return variable_list{scaled(g, minus_alpha)};
                         })) {
      n->addSaved("alpha", IValue(alpha));
    }
  }
  return out;
}

template <bool kDiv>
Tensor mulDivTensor(const Tensor& self, const Tensor& other) {
  const bool rec = shouldRecord(kDiv ? "div" : "mul", self, other);
  Tensor out = belowAutograd([&] {
    return kDiv ? turnout::div(self, other) : turnout::mul(self, other);
  });
  if (rec) {
    // Both of div's gradients use other; only self's of mul's does.
    SavedVariable s(requiresGrad(other) ? self : Tensor());
    SavedVariable o(kDiv || requiresGrad(self) ? other : Tensor());
    if (Node* n = record(kDiv ? "DivBackward0" : "MulBackward0",
                         {self, other}, out, mulDivTensorBackward<kDiv>(s, o))) {
      n->addSaved("other", o);
      n->addSaved("self", s);
    }
  }
  return out;
}

template <bool kDiv>
Tensor mulDivScalar(const Tensor& self, const Scalar& other) {
  const bool rec = shouldRecord(kDiv ? "div" : "mul", self);
  Tensor out = belowAutograd([&] {
    return kDiv ? turnout::div(self, other) : turnout::mul(self, other);
  });
  if (rec) {
    if (Node* n = record(kDiv ? "DivBackward1" : "MulBackward1", {self}, out,
                         mulDivScalarBackward<kDiv>(other))) {
      n->addSaved("other", IValue(other));
    }
  }
  return out;
}

template <bool kSub>
Tensor& addSubInplaceTensor(Tensor& self, const Tensor& other,
                            const Scalar& alpha) {
  const char* op = kSub ? "sub_" : "add_";
  const bool rec = shouldRecord(op, self, other);
  writeInplace(self, rec, op, [&] {
    if (kSub) {
      turnout::sub_(self, other, alpha);
    } else {
      turnout::add_(self, other, alpha);
    }
  });
  if (rec) {
    if (Node* n = record(kSub ? "SubBackward0" : "AddBackward0",
                         {self, other}, self,
                         addSubTensorBackward(kSub ? negated(alpha) : alpha))) {
      n->addSaved("alpha", IValue(alpha));
    }
  }
  return self;
}

template <bool kSub>
Tensor& addSubInplaceScalar(Tensor& self, const Scalar& other,
                            const Scalar& alpha) {
  const char* op = kSub ? "sub_" : "add_";
  const bool rec = shouldRecord(op, self);
  writeInplace(self, rec, op, [&] {
    if (kSub) {
      turnout::sub_(self, other, alpha);
    } else {
      turnout::add_(self, other, alpha);
    }
  });
  if (rec) {
    record(kSub ? "SubBackward1" : "AddBackward1", {self}, self, passThrough());
  }
  return self;
}

// mul_ and div_ by a tensor: the gradient of `other` needs self's value
// before the write, so it is cloned first when `other` requires grad. The
// clone falls between the check and the write: the steps of writeInplace
// are spelled out here.
template <bool kDiv>
Tensor& mulDivInplaceTensor(Tensor& self, const Tensor& other) {
  const char* op = kDiv ? "div_" : "mul_";
  const bool rec = shouldRecord(op, self, other);
  checkInplaceAllowed(self, rec, op);
  Tensor original;
  if (rec && requiresGrad(other)) {
    original = detail::cloneWithHistory(self);
  }
  // x.mul_(x) saves the tensor that becomes this node's output: kept
  // without its history (as an output), or it would hold its own grad_fn.
  SavedVariable o(
      rec ? other : Tensor(),
      /*is_output=*/other.unsafeGetTensorImpl() == self.unsafeGetTensorImpl());
  belowAutograd([&] {
    if (kDiv) {
      turnout::div_(self, other);
    } else {
      turnout::mul_(self, other);
    }
  });
  bumpVersion(self);
  if (rec) {
    SavedVariable s(original);
    if (Node* n = record(kDiv ? "DivBackward0" : "MulBackward0",
                         {self, other}, self, mulDivTensorBackward<kDiv>(s, o))) {
      n->addSaved("other", o);
      n->addSaved("self", s);
    }
  }
  return self;
}

template <bool kDiv>
Tensor& mulDivInplaceScalar(Tensor& self, const Scalar& other) {
  const char* op = kDiv ? "div_" : "mul_";
  const bool rec = shouldRecord(op, self);
  writeInplace(self, rec, op, [&] {
    if (kDiv) {
      turnout::div_(self, other);
    } else {
      turnout::mul_(self, other);
    }
  });
  if (rec) {
    record(kDiv ? "DivBackward1" : "MulBackward1", {self}, self,
           mulDivScalarBackward<kDiv>(other));
  }
  return self;
}

// ---- Unary -----------------------------------------------------------------

// The common shape of a unary operator: `fwd` computes the output below
// autograd; `formula(g, self, result)` the gradient, from the saved input
// and/or output (each saved only when its flag says so).
// `extra(node)` adds the node's other saved values (torch's names).
struct NoExtra {
  void operator()(Node*) const {}
};
template <class Fwd, class Formula, class Extra = NoExtra>
Tensor unary(const char* op, const char* name, const Tensor& self, Fwd fwd,
             bool save_self, bool save_result, Formula formula,
             Extra extra = {}) {
  const bool rec = shouldRecord(op, self);
  Tensor out = belowAutograd([&] { return fwd(self); });
  if (rec) {
    SavedVariable s(save_self ? self : Tensor());
    SavedVariable r(save_result ? out : Tensor(), /*is_output=*/true);
    Node* node =
        record(name, {self}, out, [s, r, formula](const F& n, const Tensor& g) {
          return variable_list{formula(g, s.unpack(&n), r.unpack(&n))};
        });
    if (node != nullptr && save_result) node->addSaved("result", r);
    if (node != nullptr && save_self) node->addSaved("self", s);
    if (node != nullptr) extra(node);
  }
  return out;
}

IValue optionalValue(const std::optional<Scalar>& s) {
  return s ? IValue(*s) : IValue();
}

Tensor negKernel(const Tensor& self) {
  return unary(
      "neg", "NegBackward0", self,
      [](const Tensor& x) { return turnout::neg(x); }, false, false,
      [](const Tensor& g, const Tensor&, const Tensor&) {
        return turnout::neg(g);
      });
}

Tensor absKernel(const Tensor& self) {
  return unary(
      "abs", "AbsBackward0", self,
      [](const Tensor& x) { return turnout::abs(x); }, true, false,
      [](const Tensor& g, const Tensor& x, const Tensor&) {
        // g * sign(x) (0 at x == 0), with sign recorded (its derivative is
        // zero): under create_graph the gradient depends on x, as torch's
        // g * sgn(x) does.
        static const auto sign = Dispatcher::singleton()
                                     .findSchemaOrThrow("aten::sign", "")
                                     .typed<Tensor(const Tensor&)>();
        return turnout::mul(g, sign.call(x));
      });
}

Tensor expKernel(const Tensor& self) {
  return unary(
      "exp", "ExpBackward0", self,
      [](const Tensor& x) { return turnout::exp(x); }, false, true,
      [](const Tensor& g, const Tensor&, const Tensor& r) {
        return turnout::mul(g, r);
      });
}

Tensor logKernel(const Tensor& self) {
  return unary(
      "log", "LogBackward0", self,
      [](const Tensor& x) { return turnout::log(x); }, true, false,
      [](const Tensor& g, const Tensor& x, const Tensor&) {
        return turnout::div(g, x);
      });
}

Tensor sqrtKernel(const Tensor& self) {
  return unary(
      "sqrt", "SqrtBackward0", self,
      [](const Tensor& x) { return turnout::sqrt(x); }, false, true,
      [](const Tensor& g, const Tensor&, const Tensor& r) {
        return turnout::div(g, turnout::mul(r, 2));
      });
}

Tensor tanhKernel(const Tensor& self) {
  return unary(
      "tanh", "TanhBackward0", self,
      [](const Tensor& x) { return turnout::tanh(x); }, false, true,
      [](const Tensor& g, const Tensor&, const Tensor& r) {
        return turnout::tanh_backward(g, r);  // g * (1 - r^2)
      });
}

Tensor sigmoidKernel(const Tensor& self) {
  return unary(
      "sigmoid", "SigmoidBackward0", self,
      [](const Tensor& x) { return turnout::sigmoid(x); }, false, true,
      [](const Tensor& g, const Tensor&, const Tensor& r) {
        return turnout::sigmoid_backward(g, r);  // g * r * (1 - r)
      });
}

// relu's gradient, torch's threshold_backward(g, result, 0) (an operator
// with an Autograd kernel of its own, autograd/nn_autograd.cc): recorded
// over g and the result, so that under create_graph it depends on the
// input as torch's ThresholdBackwardBackward0 does (autograd.grad through
// it then gives zeros instead of failing).
Tensor reluGrad(const Tensor& g, const Tensor& r) {
  static const auto threshold_backward =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::threshold_backward", "")
          .typed<Tensor(const Tensor&, const Tensor&, const Scalar&)>();
  return threshold_backward.call(g, r, Scalar(0));
}

Tensor reluKernel(const Tensor& self) {
  return unary(
      "relu", "ReluBackward0", self,
      [](const Tensor& x) { return turnout::relu(x); }, false, true,
      [](const Tensor& g, const Tensor&, const Tensor& r) {
        return reluGrad(g, r);
      });
}

Tensor powTensorScalar(const Tensor& self, const Scalar& exponent) {
  const bool zero = exponent.isIntegral(true) ? exponent.toLong() == 0
                                              : exponent.toDouble() == 0.0;
  return unary(
      "pow", "PowBackward0", self,
      [exponent](const Tensor& x) { return turnout::pow(x, exponent); }, !zero,
      false,
      [exponent, zero](const Tensor& g, const Tensor& x, const Tensor&) {
        if (zero) return turnout::zeros_like(g);
        // g * e * x^(e - 1)
        const Scalar e1 = exponent.isIntegral(true)
                              ? Scalar(exponent.toLong() - 1)
                              : Scalar(exponent.toDouble() - 1.0);
        return turnout::mul(turnout::mul(g, exponent), turnout::pow(x, e1));
      },
      [exponent](Node* n) { n->addSaved("exponent", IValue(exponent)); });
}

Tensor clampKernel(const Tensor& self, const std::optional<Scalar>& min,
                   const std::optional<Scalar>& max) {
  return unary(
      "clamp", "ClampBackward1", self,
      [&](const Tensor& x) { return turnout::clamp(x, min, max); }, true, false,
      [min, max](const Tensor& g, const Tensor& x, const Tensor&) {
        // The gradient passes where min <= x <= max.
        const Tensor z = zeroLike(g);
        Tensor out = g;
        if (min) out = turnout::where(turnout::lt(x, *min), z, out);
        if (max) out = turnout::where(turnout::gt(x, *max), z, out);
        return out;
      },
      [&](Node* n) {
        n->addSaved("max", optionalValue(max));
        n->addSaved("min", optionalValue(min));
      });
}

Tensor whereSelf(const Tensor& condition, const Tensor& self,
                 const Tensor& other) {
  const bool rec = shouldRecord("where", self, other);
  Tensor out =
      belowAutograd([&] { return turnout::where(condition, self, other); });
  if (rec) {
    SavedVariable c(condition);
    Node* node = record(
        "WhereBackward0", {self, other}, out, [c](const F& n, const Tensor& g) {
          const Tensor cond = c.unpack(&n);
          const Tensor z = zeroLike(g);
          return variable_list{
              n.needsGrad(0) ? turnout::where(cond, g, z) : Tensor(),
              n.needsGrad(1) ? turnout::where(cond, z, g) : Tensor()};
        });
    if (node != nullptr) node->addSaved("condition", c);
  }
  return out;
}

// ---- Reductions ------------------------------------------------------------

Tensor sumKernel(const Tensor& self, std::optional<ScalarType> dtype) {
  const bool rec = shouldRecord("sum", self);
  Tensor out = belowAutograd([&] { return turnout::sum(self, dtype); });
  if (rec) {
    // One read of the sizes (a subclass may answer them, torch 1.13 asks
    // once here too).
    const IntArrayRef self_sizes = self.sizes();
    DimVector sizes(self_sizes.begin(), self_sizes.end());
    Node* n = record("SumBackward0", {self}, out,
                     [sizes](const F&, const Tensor& g) {
                       return variable_list{turnout::expand(g, sizes)};
                     });
    if (n != nullptr) n->addSaved("self_sym_sizes", IValue(IntArrayRef(sizes)));
  }
  return out;
}

// mean over every element: the gradient is g / numel, spread out.
Tensor meanKernel(const Tensor& self, std::optional<ScalarType> dtype) {
  const bool rec = shouldRecord("mean", self);
  Tensor out = belowAutograd([&] { return turnout::mean(self, dtype); });
  if (rec) {
    DimVector sizes(self.sizes().begin(), self.sizes().end());
    const double count = static_cast<double>(self.numel());
    Node* n = record("MeanBackward0", {self}, out,
                     [sizes, count](const F&, const Tensor& g) {
                       return variable_list{turnout::div(
                           turnout::expand(g, sizes), Scalar(count))};
                     });
    if (n != nullptr) {
      // The values read above: a subclass answering its sizes is asked
      // once for each, as torch's.
      n->addSaved("self_numel", IValue(static_cast<int64_t>(count)));
      n->addSaved("self_sizes", IValue(IntArrayRef(sizes)));
    }
  }
  return out;
}

// sum.dim_IntList and mean.dim.
template <bool kMean>
Tensor sumMeanDim(const Tensor& self, DimList dim, bool keepdim,
                  std::optional<ScalarType> dtype) {
  const char* op = kMean ? "mean" : "sum";
  const bool rec = shouldRecord(op, self);
  const IntArrayRef dims_ref = dim ? IntArrayRef(*dim) : IntArrayRef();
  Tensor out = belowAutograd([&] {
    return kMean ? turnout::mean(self, dims_ref, keepdim, dtype)
                 : turnout::sum(self, dims_ref, keepdim, dtype);
  });
  if (rec) {
    // One read of the sizes, as sumKernel.
    const IntArrayRef self_sizes = self.sizes();
    DimVector sizes(self_sizes.begin(), self_sizes.end());
    std::vector<int64_t> dims =
        reducedDims(dims_ref, static_cast<int64_t>(sizes.size()));
    int64_t count = 1;
    for (int64_t d : dims) count *= sizes[d];
    Node* n = record(
        kMean ? "MeanBackward1" : "SumBackward1", {self}, out,
        [sizes, dims, keepdim, count](const F&, const Tensor& g) {
          Tensor r = turnout::expand(unsqueezeReduced(g, dims, keepdim), sizes);
          if (kMean) r = turnout::div(r, Scalar(static_cast<double>(count)));
          return variable_list{r};
        });
    if (n != nullptr) {
      // The dims as given (torch keeps them unwrapped).
      n->addSaved("dim", IValue(std::vector<int64_t>(dims_ref.begin(),
                                                     dims_ref.end())));
      n->addSaved("keepdim", IValue(keepdim));
      if (kMean) n->addSaved("self", SavedVariable(self));
      n->addSaved("self_sym_sizes", IValue(IntArrayRef(sizes)));
    }
  }
  return out;
}

// amax / amin: the gradient is shared evenly by the elements equal to the
// result, as in PyTorch.
template <bool kMax>
Tensor aminmax(const Tensor& self, IntArrayRef dim, bool keepdim) {
  const char* op = kMax ? "amax" : "amin";
  const bool rec = shouldRecord(op, self);
  Tensor out = belowAutograd([&] {
    return kMax ? turnout::amax(self, dim, keepdim)
                : turnout::amin(self, dim, keepdim);
  });
  if (rec) {
    std::vector<int64_t> dims = reducedDims(dim, self.dim());
    SavedVariable s(self);
    SavedVariable r(out, /*is_output=*/true);
    Node* node = record(
        kMax ? "AmaxBackward0" : "AminBackward0", {self}, out,
        [s, r, dims, keepdim](const F& n, const Tensor& g) {
          const Tensor x = s.unpack(&n);
          const Tensor res = unsqueezeReduced(r.unpack(&n), dims, keepdim);
          const Tensor mask = turnout::to(turnout::eq(x, res), g.scalar_type());
          const Tensor count = turnout::sum(mask, dims, /*keepdim=*/true);
          return variable_list{turnout::mul(
              turnout::div(unsqueezeReduced(g, dims, keepdim), count), mask)};
        });
    if (node != nullptr) {
      node->addSaved("dim", IValue(dim));  // as given
      node->addSaved("keepdim", IValue(keepdim));
      node->addSaved("result", r);
      node->addSaved("self", s);
    }
  }
  return out;
}

// _softmax, _log_softmax (softmax.int and log_softmax.int are
// composite-implicit over them, as torch 1.13's): the backward kernels take
// the saved output.
template <bool kLog>
Tensor softmaxImpl(const Tensor& self, int64_t dim, bool half_to_float) {
  const char* op = kLog ? "log_softmax" : "softmax";
  const bool rec = shouldRecord(op, self);
  Tensor out = belowAutograd([&] {
    return kLog ? turnout::_log_softmax(self, dim, half_to_float)
                : turnout::_softmax(self, dim, half_to_float);
  });
  if (rec) {
    SavedVariable r(out, /*is_output=*/true);
    Node* node = record(
        kLog ? "LogSoftmaxBackward0" : "SoftmaxBackward0", {self}, out,
           [r, dim](const F& n, const Tensor& g) {
             const Tensor res = r.unpack(&n);
             return variable_list{kLog ? turnout::_log_softmax_backward_data(
                                             g, res, dim, res.scalar_type())
                                       : turnout::_softmax_backward_data(
                                             g, res, dim, res.scalar_type())};
           });
    if (node != nullptr) {
      node->addSaved("dim", IValue(dim));
      node->addSaved("result", r);
    }
  }
  return out;
}
// _softmax_backward_data and _log_softmax_backward_data are differentiable
// (the second derivatives of softmax), with torch 1.13's formulas. For
// softmax's r = y * (go - sum(go * y)): d/dgo is the same operator on the
// incoming gradient gg, d/dy = go * gg - sum(y * go) * gg - go * sum(y *
// gg). For log_softmax's r = go - exp(y) * sum(go): d/dgo = gg -
// sum(gg * exp(y)), d/dy = -sum(go) * exp(y) * gg.
template <bool kLog>
Tensor softmaxBackwardData(const Tensor& grad_output, const Tensor& output,
                           int64_t dim, ScalarType input_dtype) {
  const bool rec = shouldRecord(
      kLog ? "_log_softmax_backward_data" : "_softmax_backward_data",
      grad_output, output);
  Tensor out = belowAutograd([&] {
    return kLog ? turnout::_log_softmax_backward_data(grad_output, output, dim,
                                                      input_dtype)
                : turnout::_softmax_backward_data(grad_output, output, dim,
                                                  input_dtype);
  });
  if (rec) {
    SavedVariable sgo(grad_output), sy(output);
    const int64_t d = maybeWrapDim(dim, output.dim());
    Node* node = record(
        kLog ? "LogSoftmaxBackwardDataBackward0"
             : "SoftmaxBackwardDataBackward0",
        {grad_output, output}, out,
        [sgo, sy, d, input_dtype](const F& n, const Tensor& gg_in) {
          const Tensor go = sgo.unpack(&n), y = sy.unpack(&n);
          const Tensor gg = turnout::to(gg_in, y.scalar_type());
          const std::vector<int64_t> dims{d};
          auto sumDim = [&](const Tensor& t) {
            return turnout::sum(t, dims, /*keepdim=*/true);
          };
          Tensor ggo, gy;
          if (kLog) {
            const Tensor ey = turnout::exp(y);
            if (n.needsGrad(0))
              ggo = turnout::sub(gg, sumDim(turnout::mul(gg, ey)));
            if (n.needsGrad(1)) {
              gy = turnout::mul(turnout::mul(turnout::neg(sumDim(go)), ey), gg);
            }
          } else {
            if (n.needsGrad(0)) {
              ggo = turnout::_softmax_backward_data(gg, y, d, input_dtype);
            }
            if (n.needsGrad(1)) {
              gy = turnout::sub(
                  turnout::sub(turnout::mul(go, gg),
                               turnout::mul(sumDim(turnout::mul(y, go)), gg)),
                  turnout::mul(go, sumDim(turnout::mul(y, gg))));
            }
          }
          return variable_list{ggo, gy};
        });
    if (node != nullptr) {
      node->addSaved("dim", IValue(dim));
      node->addSaved("grad_output", sgo);
      node->addSaved("output", sy);
    }
  }
  return out;
}

Tensor internalSoftmax(const Tensor& self, int64_t dim, bool half_to_float) {
  return softmaxImpl<false>(self, dim, half_to_float);
}
Tensor internalLogSoftmax(const Tensor& self, int64_t dim, bool half_to_float) {
  return softmaxImpl<true>(self, dim, half_to_float);
}

// ---- Linear algebra --------------------------------------------------------

// mm, and bmm (kBatched: each matrix of the batch): self's gradient is g
// times mat2 transposed, mat2's is self transposed times g; each operand is
// saved only for the other's gradient.
template <bool kBatched>
Tensor mmOrBmm(const Tensor& a, const Tensor& b) {
  return kBatched ? turnout::bmm(a, b) : turnout::mm(a, b);
}
template <bool kBatched>
Tensor transposeMatrices(const Tensor& m) {
  return kBatched ? turnout::transpose(m, 1, 2) : turnout::t(m);
}

// mm's operand gradients in the layout of their operand, as torch's: a
// column-major operand (a transposed view of a contiguous matrix, such as a
// linear layer's `w.t()`) gets its gradient computed as the transpose of
// the transposed product, so the gradient reaching the matrix behind the
// view is contiguous and accumulating it into `.grad` copies nothing.
bool isColumnMajor(const Tensor& m) {
  return m.dim() == 2 && m.size(0) > 1 && m.size(1) > 1 && m.stride(0) == 1 &&
         m.stride(1) == m.size(0);
}
// self's gradient, alpha times g times mat2 transposed.
Tensor mmGradSelf(const Tensor& g, const Tensor& mat2, bool self_column_major,
                  const Scalar& alpha = Scalar(1)) {
  const Tensor r = self_column_major ? turnout::mm(mat2, turnout::t(g))
                                     : turnout::mm(g, turnout::t(mat2));
  return scaled(self_column_major ? turnout::t(r) : r, alpha);  // scaled last
}
// mat2's gradient, alpha times self transposed times g.
Tensor mmGradMat2(const Tensor& self, const Tensor& g, bool mat2_column_major,
                  const Scalar& alpha = Scalar(1)) {
  const Tensor r = mat2_column_major ? turnout::mm(turnout::t(g), self)
                                     : turnout::mm(turnout::t(self), g);
  return scaled(mat2_column_major ? turnout::t(r) : r, alpha);
}

template <bool kBatched>
Tensor mmBmm(const Tensor& self, const Tensor& mat2) {
  const bool rec = shouldRecord(kBatched ? "bmm" : "mm", self, mat2);
  Tensor out = belowAutograd([&] { return mmOrBmm<kBatched>(self, mat2); });
  if (rec) {
    SavedVariable a(requiresGrad(mat2) ? self : Tensor());
    SavedVariable b(requiresGrad(self) ? mat2 : Tensor());
    const bool self_cm = !kBatched && isColumnMajor(self);
    const bool mat2_cm = !kBatched && isColumnMajor(mat2);
    Node* node = record(
        kBatched ? "BmmBackward0" : "MmBackward0", {self, mat2}, out,
           [a, b, self_cm, mat2_cm](const F& n, const Tensor& g) {
             Tensor ga, gb;
             if (n.needsGrad(0)) {
               ga = kBatched ? turnout::bmm(g, transposeMatrices<true>(
                                                   b.unpack(&n)))
                             : mmGradSelf(g, b.unpack(&n), self_cm);
             }
             if (n.needsGrad(1)) {
               gb = kBatched ? turnout::bmm(transposeMatrices<true>(
                                                a.unpack(&n)),
                                            g)
                             : mmGradMat2(a.unpack(&n), g, mat2_cm);
             }
             return variable_list{ga, gb};
           });
    if (node != nullptr) {
      node->addSaved("mat2", b);
      if (!kBatched) {
        node->addSaved("mat2_sym_sizes", IValue(mat2.sizes()));
        node->addSaved("mat2_sym_strides", IValue(mat2.strides()));
      }
      node->addSaved("self", a);
      if (!kBatched) {
        node->addSaved("self_sym_sizes", IValue(self.sizes()));
        node->addSaved("self_sym_strides", IValue(self.strides()));
      }
    }
  }
  return out;
}

Tensor addmmKernel(const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                   const Scalar& beta, const Scalar& alpha) {
  const bool rec = shouldRecord("addmm", self, mat1, mat2);
  Tensor out = belowAutograd(
      [&] { return turnout::addmm(self, mat1, mat2, beta, alpha); });
  if (rec) {
    SavedVariable a(requiresGrad(mat2) ? mat1 : Tensor());
    SavedVariable b(requiresGrad(mat1) ? mat2 : Tensor());
    const bool mat1_cm = isColumnMajor(mat1);
    const bool mat2_cm = isColumnMajor(mat2);
    Node* node = record(
        "AddmmBackward0", {self, mat1, mat2}, out,
           [a, b, beta, alpha, mat1_cm, mat2_cm](const F& n, const Tensor& g) {
             return variable_list{
                 n.needsGrad(0) ? scaled(g, beta) : Tensor(),
                 n.needsGrad(1)
                     ? mmGradSelf(g, b.unpack(&n), mat1_cm, alpha)
                     : Tensor(),
                 n.needsGrad(2)
                     ? mmGradMat2(a.unpack(&n), g, mat2_cm, alpha)
                     : Tensor()};
           });
    if (node != nullptr) {
      node->addSaved("alpha", IValue(alpha));
      node->addSaved("beta", IValue(beta));
      node->addSaved("mat1", a);
      node->addSaved("mat1_sym_sizes", IValue(mat1.sizes()));
      node->addSaved("mat1_sym_strides", IValue(mat1.strides()));
      node->addSaved("mat2", b);
      node->addSaved("mat2_sym_sizes", IValue(mat2.sizes()));
      node->addSaved("mat2_sym_strides", IValue(mat2.strides()));
    }
  }
  return out;
}

// ---- Views -----------------------------------------------------------------
// A view of a tensor that requires grad gets a grad_fn of its own and is
// marked as a view (function_node.h: in-place writes through it, or use
// after its base was modified in place, fail instead of giving wrong
// gradients).

// `extra(node)` adds the saved values torch's node shows (sizes, dims, ...).
template <class Fwd, class Formula, class Extra>
Tensor viewOp(const char* op, const char* name, const Tensor& self, Fwd fwd,
              Formula formula, Extra extra) {
  const bool rec = shouldRecord(op, self);
  Tensor out = belowAutograd([&] { return fwd(self); });
  setViewBase(out, self);
  if (rec) {
    // The sizes the formula needs: a subclass that answers them is asked as
    // torch 1.13 asks, once with the input's metadata (gradientSizes), and
    // once more by a node that saves them (an extra taking them).
    constexpr bool kSaves = std::is_invocable_v<Extra, Node*, IntArrayRef>;
    DimVector sizes;
    if constexpr (kSaves) {
      const IntArrayRef self_sizes = self.sizes();
      sizes.assign(self_sizes.begin(), self_sizes.end());
    } else {
      sizes = gradientSizes(self);
    }
    Node* node = record(
        name, {self}, out,
        [sizes, formula](const F&, const Tensor& g) {
          return variable_list{formula(g, IntArrayRef(sizes))};
        },
        /*is_view=*/true);
    if (node != nullptr) {
      if constexpr (kSaves) {
        extra(node, IntArrayRef(sizes));
      } else {
        extra(node);
      }
    }
  }
  return out;
}
// The extra of a view whose node shows self's sizes under `name`.
auto savesSizes(const Tensor& self, const char* name) {
  (void)self;
  return [name](Node* n, IntArrayRef sizes) {
    n->addSaved(name, IValue(sizes));
  };
}

Tensor reshapeTo(const Tensor& g, IntArrayRef sizes) {
  return turnout::reshape(g, sizes);
}

Tensor viewKernel(const Tensor& self, IntArrayRef size) {
  return viewOp(
      "view", "ViewBackward0", self,
      [size](const Tensor& x) { return turnout::view(x, size); }, reshapeTo,
      savesSizes(self, "self_sym_sizes"));
}

Tensor aliasKernel(const Tensor& self) {
  return viewOp(
      "alias", "AliasBackward0", self,
      [](const Tensor& x) { return turnout::alias(x); },
      [](const Tensor& g, IntArrayRef) { return g; }, NoExtra{});
}

Tensor tKernel(const Tensor& self) {
  return viewOp(
      "t", "TBackward0", self, [](const Tensor& x) { return turnout::t(x); },
      [](const Tensor& g, IntArrayRef) { return turnout::t(g); }, NoExtra{});
}

Tensor transposeKernel(const Tensor& self, int64_t dim0, int64_t dim1) {
  return viewOp(
      "transpose", "TransposeBackward0", self,
      [=](const Tensor& x) { return turnout::transpose(x, dim0, dim1); },
      [=](const Tensor& g, IntArrayRef) {
        return turnout::transpose(g, dim0, dim1);
      },
      [=](Node* n) {
        n->addSaved("dim0", IValue(dim0));
        n->addSaved("dim1", IValue(dim1));
      });
}

Tensor permuteKernel(const Tensor& self, IntArrayRef dims) {
  const bool rec = shouldRecord("permute", self);
  Tensor out = belowAutograd([&] { return turnout::permute(self, dims); });
  setViewBase(out, self);
  if (rec) {
    // The forward checked `dims`: the inverse permutation is well formed.
    const int64_t n = self.dim();
    std::vector<int64_t> inverse(dims.size(), 0);
    for (size_t i = 0; i < dims.size(); ++i) {
      inverse[static_cast<size_t>(maybeWrapDim(dims[i], n))] =
          static_cast<int64_t>(i);
    }
    Node* node = record(
        "PermuteBackward0", {self}, out,
        [inverse](const F&, const Tensor& g) {
          return variable_list{turnout::permute(g, inverse)};
        },
        /*is_view=*/true);
    if (node != nullptr) node->addSaved("dims", IValue(dims));  // as given
  }
  return out;
}

Tensor expandKernel(const Tensor& self, IntArrayRef size, bool implicit) {
  // The gradient is summed back to self's shape by the node (sumToSize).
  return viewOp(
      "expand", "ExpandBackward0", self,
      [=](const Tensor& x) { return turnout::expand(x, size, implicit); },
      [](const Tensor& g, IntArrayRef) { return g; },
      savesSizes(self, "self_sym_sizes"));
}

Tensor squeezeKernel(const Tensor& self, int64_t dim) {
  return viewOp(
      "squeeze", "SqueezeBackward1", self,
      [dim](const Tensor& x) { return turnout::squeeze(x, dim); },
      [dim](const Tensor& g, IntArrayRef sizes) {
        // torch 1.13's unsqueeze_to: dim back only where squeeze removed one.
        if (sizes.empty()) return g;
        const int64_t d = maybeWrapDim(dim, static_cast<int64_t>(sizes.size()));
        return sizes[d] == 1 ? turnout::unsqueeze(g, d) : g;
      },
      [&self, dim](Node* n) {
        n->addSaved("dim", IValue(dim));
        n->addSaved("self_sizes", IValue(self.sizes()));
      });
}

Tensor unsqueezeKernel(const Tensor& self, int64_t dim) {
  return viewOp(
      "unsqueeze", "UnsqueezeBackward0", self,
      [dim](const Tensor& x) { return turnout::unsqueeze(x, dim); },
      [dim](const Tensor& g, IntArrayRef) { return turnout::squeeze(g, dim); },
      [dim](Node* n) { n->addSaved("dim", IValue(dim)); });
}

Tensor sliceKernel(const Tensor& self, int64_t dim,
                   std::optional<int64_t> start, std::optional<int64_t> end,
                   int64_t step) {
  return viewOp(
      "slice", "SliceBackward0", self,
      [=](const Tensor& x) { return turnout::slice(x, dim, start, end, step); },
      [=](const Tensor& g, IntArrayRef sizes) {
        return detail::viewBackward(
            "SliceBackwardBackward0", g, sizes, [=](const Tensor& z) {
              return turnout::slice(z, dim, start, end, step);
            });
      },
      [&](Node* n) {
        n->addSaved("dim", IValue(dim));
        n->addSaved("end", end ? IValue(*end) : IValue());
        n->addSaved("self_sym_sizes", IValue(self.sizes()));
        n->addSaved("start", start ? IValue(*start) : IValue());
        n->addSaved("step", IValue(step));
      });
}

Tensor selectKernel(const Tensor& self, int64_t dim, int64_t index) {
  return viewOp(
      "select", "SelectBackward0", self,
      [=](const Tensor& x) { return turnout::select(x, dim, index); },
      [=](const Tensor& g, IntArrayRef sizes) {
        return detail::viewBackward(
            "SelectBackwardBackward0", g, sizes,
            [=](const Tensor& z) { return turnout::select(z, dim, index); });
      },
      [&](Node* n) {
        n->addSaved("dim", IValue(dim));
        n->addSaved("index", IValue(index));
        n->addSaved("self_sizes", IValue(self.sizes()));
      });
}

// ---- Joining ---------------------------------------------------------------

Tensor catKernel(absl::Span<const Tensor> tensors, int64_t dim) {
  const bool rec = shouldRecord(tensors, "cat");
  Tensor out = belowAutograd([&] { return turnout::cat(tensors, dim); });
  if (rec) {
    // PyTorch's cat skips 1-D empty inputs of any other shape.
    const int64_t d = maybeWrapDim(dim, out.dim());
    std::vector<int64_t> lengths;
    for (const Tensor& t : tensors) {
      const bool skipped = t.dim() == 1 && t.size(0) == 0;
      lengths.push_back(skipped ? -1 : t.size(d));
    }
    Node* node = record(
        "CatBackward0", tensors, out, [lengths, d](const F&, const Tensor& g) {
          variable_list grads;
          int64_t offset = 0;
          for (int64_t len : lengths) {
            if (len < 0) {  // an empty gradient, as torch's
              grads.push_back(turnout::zeros(
                  {0}, TensorOptions(g.scalar_type()).device(g.device())));
              continue;
            }
            grads.push_back(turnout::slice(g, d, offset, offset + len, 1));
            offset += len;
          }
          return grads;
        });
    if (node != nullptr) node->addSaved("dim", IValue(dim));  // as given
  }
  return out;
}

Tensor stackKernel(absl::Span<const Tensor> tensors, int64_t dim) {
  const bool rec = shouldRecord(tensors, "stack");
  Tensor out = belowAutograd([&] { return turnout::stack(tensors, dim); });
  if (rec) {
    const int64_t d = maybeWrapDim(dim, out.dim());
    const int64_t count = static_cast<int64_t>(tensors.size());
    Node* node = record("StackBackward0", tensors, out,
                        [d, count](const F&, const Tensor& g) {
                          variable_list grads;
                          for (int64_t i = 0; i < count; ++i) {
                            grads.push_back(turnout::select(g, d, i));
                          }
                          return grads;
                        });
    if (node != nullptr) node->addSaved("dim", IValue(dim));
  }
  return out;
}

// ---- Copies ----------------------------------------------------------------

Tensor cloneKernel(const Tensor& self,
                   std::optional<MemoryFormat> memory_format) {
  return unary(
      "clone", "CloneBackward0", self,
      [=](const Tensor& x) { return turnout::clone(x, memory_format); }, false,
      false, [](const Tensor& g, const Tensor&, const Tensor&) { return g; });
}

Tensor toCopyKernel(const Tensor& self, std::optional<ScalarType> dtype,
                    std::optional<Layout> layout, std::optional<Device> device,
                    std::optional<bool> pin_memory, bool non_blocking,
                    std::optional<MemoryFormat> memory_format) {
  // The node casts the gradient back to self's dtype.
  return unary(
      "_to_copy", "ToCopyBackward0", self,
      [=](const Tensor& x) {
        return turnout::_to_copy(x, dtype, layout, device, pin_memory,
                                 non_blocking, memory_format);
      },
      false, false,
      [](const Tensor& g, const Tensor&, const Tensor&) { return g; });
}

Tensor& copyKernel(Tensor& self, const Tensor& src, bool non_blocking) {
  const bool rec = shouldRecord("copy_", self, src);
  writeInplace(self, rec, "copy_",
               [&] { turnout::copy_(self, src, non_blocking); });
  if (rec) {
    // self is overwritten: its old value gets a zero gradient; src's
    // gradient is summed over the broadcast and cast by the node.
    record("CopyBackwards", {self, src}, self, [](const F& n, const Tensor& g) {
      return variable_list{n.needsGrad(0) ? turnout::zeros_like(g) : Tensor(),
                           g};
    });
  }
  return self;
}

Tensor& fillKernel(Tensor& self, const Scalar& value) {
  const bool rec = shouldRecord("fill_", self);
  writeInplace(self, rec, "fill_", [&] { turnout::fill_(self, value); });
  if (rec) {
    // torch 1.13's name for fill_.Scalar's node.
    record("FillBackward2", {self}, self, [](const F&, const Tensor& g) {
      return variable_list{turnout::zeros_like(g)};
    });
  }
  return self;
}

}  // namespace
}  // namespace autograd
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, Autograd, m) {
  using namespace turnout::autograd;  // NOLINT: the kernels above
  m.impl("add.Tensor", TURNOUT_FN(addSubTensor<false>));
  m.impl("add.Scalar", TURNOUT_FN(addSubScalar<false>));
  m.impl("sub.Tensor", TURNOUT_FN(addSubTensor<true>));
  m.impl("rsub.Tensor", TURNOUT_FN(rsubTensor));
  m.impl("rsub.Scalar", TURNOUT_FN(rsubScalar));
  m.impl("sub.Scalar", TURNOUT_FN(addSubScalar<true>));
  m.impl("mul.Tensor", TURNOUT_FN(mulDivTensor<false>));
  m.impl("mul.Scalar", TURNOUT_FN(mulDivScalar<false>));
  m.impl("div.Tensor", TURNOUT_FN(mulDivTensor<true>));
  m.impl("div.Scalar", TURNOUT_FN(mulDivScalar<true>));
  m.impl("add_.Tensor", TURNOUT_FN(addSubInplaceTensor<false>));
  m.impl("add_.Scalar", TURNOUT_FN(addSubInplaceScalar<false>));
  m.impl("sub_.Tensor", TURNOUT_FN(addSubInplaceTensor<true>));
  m.impl("sub_.Scalar", TURNOUT_FN(addSubInplaceScalar<true>));
  m.impl("mul_.Tensor", TURNOUT_FN(mulDivInplaceTensor<false>));
  m.impl("mul_.Scalar", TURNOUT_FN(mulDivInplaceScalar<false>));
  m.impl("div_.Tensor", TURNOUT_FN(mulDivInplaceTensor<true>));
  m.impl("div_.Scalar", TURNOUT_FN(mulDivInplaceScalar<true>));
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
  m.impl("sum", TURNOUT_FN(sumKernel));
  m.impl("sum.dim_IntList", TURNOUT_FN(sumMeanDim<false>));
  m.impl("mean", TURNOUT_FN(meanKernel));
  m.impl("mean.dim", TURNOUT_FN(sumMeanDim<true>));
  m.impl("amax", TURNOUT_FN(aminmax<true>));
  m.impl("amin", TURNOUT_FN(aminmax<false>));
  m.impl("_softmax", TURNOUT_FN(internalSoftmax));
  m.impl("_log_softmax", TURNOUT_FN(internalLogSoftmax));
  m.impl("_softmax_backward_data", TURNOUT_FN(softmaxBackwardData<false>));
  m.impl("_log_softmax_backward_data", TURNOUT_FN(softmaxBackwardData<true>));
  m.impl("mm", TURNOUT_FN(mmBmm<false>));
  m.impl("bmm", TURNOUT_FN(mmBmm<true>));
  m.impl("addmm", TURNOUT_FN(addmmKernel));
  m.impl("view", TURNOUT_FN(viewKernel));
  m.impl("t", TURNOUT_FN(tKernel));
  m.impl("alias", TURNOUT_FN(aliasKernel));
  m.impl("transpose.int", TURNOUT_FN(transposeKernel));
  m.impl("permute", TURNOUT_FN(permuteKernel));
  m.impl("expand", TURNOUT_FN(expandKernel));
  m.impl("squeeze.dim", TURNOUT_FN(squeezeKernel));
  m.impl("unsqueeze", TURNOUT_FN(unsqueezeKernel));
  m.impl("slice.Tensor", TURNOUT_FN(sliceKernel));
  m.impl("select.int", TURNOUT_FN(selectKernel));
  m.impl("cat", TURNOUT_FN(catKernel));
  m.impl("stack", TURNOUT_FN(stackKernel));
  m.impl("clone", TURNOUT_FN(cloneKernel));
  m.impl("_to_copy", TURNOUT_FN(toCopyKernel));
  m.impl("copy_", TURNOUT_FN(copyKernel));
  m.impl("fill_.Scalar", TURNOUT_FN(fillKernel));

  // Not differentiable: their outputs take no gradient (comparisons,
  // indices, sizes, new tensors that merely take their input's shape), so
  // calls skip the autograd keys, and the autograd fallback
  // (autograd_fallback.h), which warns about operators with no autograd
  // kernel, never sees them.
  for (const char* op :
       {"eq.Tensor", "eq.Scalar", "ne.Tensor", "ne.Scalar", "lt.Tensor",
        "lt.Scalar", "le.Tensor", "le.Scalar", "gt.Tensor", "gt.Scalar",
        "ge.Tensor", "ge.Scalar", "argmax", "item", "dim", "size",
        "is_pinned", "detach", "empty_like", "zeros_like", "ones_like",
        "full_like", "rand_like", "randn_like", "randint_like",
        "randint_like.low_dtype", "new_empty", "new_empty_strided",
        "sym_size", "sym_size.int",
        "sym_stride", "sym_stride.int", "sym_numel", "sym_storage_offset",
        "is_contiguous.memory_format",
        "Float.Tensor", "Int.Tensor", "ScalarImplicit"}) {
    m.impl(op, turnout::CppFunction::makeFallthrough());
  }
}
