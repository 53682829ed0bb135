// The Autograd kernels of the operators of kernels/attention.cc that are not
// composite-implicit:
//   div.Tensor_mode: without a rounding mode, div.Tensor itself (its own
//     gradient); with one, the quotient is piecewise constant and both
//     inputs get zero gradients, as torch 1.13's (DivBackward2);
//   div.Scalar_mode (DivBackward3): g / other without a rounding mode,
//     zeros with one;
//   baddbmm (BaddbmmBackward0): self: beta * g; batch1: alpha * g @
//     batch2^T; batch2: alpha * batch1^T @ g;
//   constant_pad_nd (ConstantPadNdBackward0): g with the padding taken off
//     (constant_pad_nd with the negated pads);
//   logical_or, logical_or_: not differentiable (fallthrough).
#include <optional>
#include <string>
#include <vector>

#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/operator_handle.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/function_node.h"
#include "kernels/autograd/saved_variable.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/linalg.h"
#include "kernels/shape.h"

namespace turnout {
namespace autograd {
namespace {

using detail::record;
using detail::shouldRecord;
using F = FunctionNode;

using detail::belowAutograd;
using ScalarModeSig = Tensor(const Tensor&, const Scalar&,
                             const std::optional<std::string>&);
using BaddbmmSig = Tensor(const Tensor&, const Tensor&, const Tensor&,
                          const Scalar&, const Scalar&);
using PadSig = Tensor(const Tensor&, IntArrayRef, const Scalar&);

template <class Sig>
TypedOperatorHandle<Sig> lookup(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

bool isOne(const Scalar& s) {
  return s.isFloatingPoint() ? s.toDouble() == 1.0 : s.toLong() == 1;
}
Tensor scaled(const Tensor& g, const Scalar& s) {
  return isOne(s) ? g : mul(g, s);
}

using DivModeSig = Tensor(const Tensor&, const Tensor&,
                          const std::optional<std::string>&);

Tensor divModeKernel(const Tensor& self, const Tensor& other,
                     const std::optional<std::string>& mode) {
  if (!mode) return div(self, other);  // div.Tensor records its own node
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::div", "Tensor_mode")
                             .typed<DivModeSig>();
  const bool rec = shouldRecord("div", self, other);
  Tensor out = belowAutograd([&] { return op.call(self, other, mode); });
  if (rec) {
    Node* node = record(
        "DivBackward2", {self, other}, out, [](const F& n, const Tensor& g) {
          // The node sums each gradient to its input's shape.
          variable_list grads(2);
          for (size_t i = 0; i < 2; ++i) {
            if (n.needsGrad(i)) grads[i] = zeros_like(g);
          }
          return grads;
        });
    if (node != nullptr) node->addSaved("rounding_mode", IValue(*mode));
  }
  return out;
}

Tensor divScalarModeKernel(const Tensor& self, const Scalar& other,
                           const std::optional<std::string>& mode) {
  static const auto op = lookup<ScalarModeSig>("aten::div", "Scalar_mode");
  const bool rec = shouldRecord("div", self);
  Tensor out = belowAutograd([&] { return op.call(self, other, mode); });
  if (rec) {
    const bool rounded = mode.has_value();
    Node* node = record("DivBackward3", {self}, out,
                        [other, rounded](const F&, const Tensor& g) {
                          return variable_list{rounded ? zeros_like(g)
                                                       : div(g, other)};
                        });
    if (node != nullptr) {
      node->addSaved("other", IValue(other));
      node->addSaved("rounding_mode", mode ? IValue(*mode) : IValue());
    }
  }
  return out;
}

// torch shows each batch only where the other one's gradient needs it.
Tensor baddbmmKernel(const Tensor& self, const Tensor& batch1,
                     const Tensor& batch2, const Scalar& beta,
                     const Scalar& alpha) {
  static const auto op = lookup<BaddbmmSig>("aten::baddbmm", "");
  const bool rec = shouldRecord("baddbmm", self, batch1, batch2);
  Tensor out = belowAutograd(
      [&] { return op.call(self, batch1, batch2, beta, alpha); });
  if (rec) {
    const SavedVariable b1 =
        requiresGrad(batch2) ? SavedVariable(batch1) : SavedVariable();
    const SavedVariable b2 =
        requiresGrad(batch1) ? SavedVariable(batch2) : SavedVariable();
    Node* node = record(
        "BaddbmmBackward0", {self, batch1, batch2}, out,
        [b1, b2, beta, alpha](const F& n, const Tensor& g) {
          // The node sums self's gradient to self's shape.
          variable_list grads(3);
          if (n.needsGrad(0)) grads[0] = mul(g, beta);
          if (n.needsGrad(1)) {
            grads[1] = scaled(bmm(g, transpose(b2.unpack(&n), 1, 2)), alpha);
          }
          if (n.needsGrad(2)) {
            grads[2] = scaled(bmm(transpose(b1.unpack(&n), 1, 2), g), alpha);
          }
          return grads;
        });
    if (node != nullptr) {
      node->addSaved("alpha", IValue(alpha));
      node->addSaved("batch1", b1);
      node->addSaved("batch2", b2);
      node->addSaved("beta", IValue(beta));
    }
  }
  return out;
}

Tensor constantPadNdKernel(const Tensor& self, IntArrayRef pad,
                           const Scalar& value) {
  static const auto op = lookup<PadSig>("aten::constant_pad_nd", "");
  const bool rec = shouldRecord("constant_pad_nd", self);
  Tensor out = belowAutograd([&] { return op.call(self, pad, value); });
  if (rec) {
    std::vector<int64_t> negated;
    for (int64_t p : pad) negated.push_back(-p);
    Node* node = record("ConstantPadNdBackward0", {self}, out,
                        [negated](const F&, const Tensor& g) {
                          return variable_list{op.call(g, negated, Scalar(0))};
                        });
    if (node != nullptr) node->addSaved("pad", IValue(pad));
  }
  return out;
}

}  // namespace
}  // namespace autograd
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, Autograd, m) {
  using namespace turnout::autograd;  // NOLINT: the kernels above
  m.impl("div.Tensor_mode", TURNOUT_FN(divModeKernel));
  m.impl("div.Scalar_mode", TURNOUT_FN(divScalarModeKernel));
  m.impl("baddbmm", TURNOUT_FN(baddbmmKernel));
  m.impl("constant_pad_nd", TURNOUT_FN(constantPadNdKernel));
  for (const char* name : {"logical_or", "logical_or_"}) {
    m.impl(name, turnout::CppFunction::makeFallthrough());
  }
}
