// FunctionNode: the backward Node of one recorded operator, with its
// derivative formula as a function, and the helpers the autograd kernels
// (autograd_kernels.cc) share.
//
//   if (autograd::detail::shouldRecord({self, other})) {
//     autograd::SavedVariable saved_other(other);
//     autograd::detail::record("MulBackward0", {self, other}, out,
//         [saved_other](const FunctionNode& n, const Tensor& g) {
//           return variable_list{mul(g, saved_other.unpack(&n)), Tensor()};
//         });
//   }
//
// A formula returns one gradient per input (undefined where the input needs
// none, see needsGrad). The node then reduces every gradient to its input's
// shape (summing over broadcast dimensions: sumToSize) and casts it to its
// input's dtype, so formulas need not repeat that.
//
// Thread safety: as Node.
#ifndef TURNOUT_KERNELS_AUTOGRAD_FUNCTION_NODE_H_
#define TURNOUT_KERNELS_AUTOGRAD_FUNCTION_NODE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/autograd/node.h"

namespace turnout {
namespace autograd {

/// Sums `grad` over the dimensions it was broadcast along so that it gets
/// `sizes` (leading dimensions, and dimensions of size 1 in `sizes`).
/// Throws InvalidArgument when `grad`'s shape does not broadcast from
/// `sizes`.
Tensor sumToSize(const Tensor& grad, IntArrayRef sizes);

class FunctionNode final : public Node {
 public:
  /// Gradient of the (single) forward output in, one gradient per input out.
  using Formula = std::function<variable_list(const FunctionNode&, const Tensor&)>;

  FunctionNode(const char* name, absl::Span<const Tensor> inputs,
               Formula formula);

  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return name_; }
  /// True when input `i` gets a gradient (a formula can skip the others).
  bool needsGrad(size_t i) const { return next_edges()[i].isValid(); }

 private:
  struct InputInfo {
    DimVector sizes;
    ScalarType dtype;
  };
  const char* name_;
  std::vector<InputInfo> inputs_;
  Formula formula_;
};

namespace detail {

/// True when grad mode is on and some input requires grad: the operator's
/// outputs must get a grad_fn. Throws for an input that is a view whose
/// memory was modified in place after the view was taken (its history is
/// stale; turnout does not rebase views).
bool shouldRecord(absl::Span<const Tensor> inputs, const char* op_name);
/// The same for a fixed list of inputs, without building a list on the
/// common path where nothing requires grad.
template <class... Ts>
bool shouldRecord(const char* op_name, const Ts&... inputs) {
  if (!GradMode::is_enabled() || !(requiresGrad(inputs) || ...)) return false;
  return shouldRecord({inputs...}, op_name);
}

/// Creates the FunctionNode of an operator over `inputs` and makes it the
/// grad_fn of `output` (nothing for an `output` that is not floating-point:
/// it cannot require grad). `is_view` marks `output` as a differentiable
/// view. Returns the node (null when none was made), for Node::addSaved.
Node* record(const char* name, absl::Span<const Tensor> inputs,
             const Tensor& output, FunctionNode::Formula formula,
             bool is_view = false);

/// The gradient of a view operator: zeros of `sizes` (g's dtype and
/// device) with `g` written where `view_of(zeros)` lies. Differentiable
/// itself, as torch's select_backward and slice_backward are: when grad mode
/// is on and `g` requires grad (backward with create_graph=True), the result
/// gets a node `name` ("SelectBackwardBackward0") whose gradient is
/// view_of(the result's gradient). (Writing g into a view of fresh zeros
/// under autograd would lose g's history: turnout does not rebase views.)
Tensor viewBackward(const char* name, const Tensor& g, IntArrayRef sizes,
                    std::function<Tensor(const Tensor&)> view_of);

/// A backward formula's part that is linear in the gradient `g` and
/// computed by a raw kernel: `apply(g)` runs below autograd; when grad mode
/// is on and `g` requires grad, the result gets a node `name` whose gradient
/// is `adjoint(its gradient)` (the transposed map, run in grad mode, so
/// that it is differentiable in turn). viewBackward is one.
Tensor linearInGrad(const char* name, const Tensor& g,
                    const std::function<Tensor(const Tensor&)>& apply,
                    std::function<Tensor(const Tensor&)> adjoint);

/// sum(g, dims), a bias's gradient, recorded as `name` over g and `others`
/// (their gradients zero), as torch's multi-output backward operators
/// record every output over all their inputs: under create_graph it
/// requires grad wherever torch's does. `dims`: non-negative.
Tensor sumGradOver(const char* name, const Tensor& g, IntArrayRef dims,
                   absl::Span<const Tensor> others);

/// Self's value before an in-place write, for a formula that needs it: a
/// clone made in grad mode (CloneBackward0 over self's old history), so
/// that the formula is differentiable under create_graph, as torch's saved
/// original self is. Precondition: recording.
Tensor cloneWithHistory(const Tensor& self);

/// The part of an in-place operator's work that autograd owns: checks that
/// `self` may be modified (not a leaf that requires grad, not a view of a
/// tensor that requires grad) when `recording`.
void checkInplaceAllowed(const Tensor& self, bool recording,
                         const char* op_name);

/// Step 2 of every autograd kernel: `fn()` run with the autograd keys
/// excluded, so that the operator it calls reaches the backend kernel below.
/// Returns what `fn` returns.
template <class Fn>
auto belowAutograd(Fn fn) -> decltype(fn()) {
  AutoDispatchBelowAutograd guard;
  return fn();
}

/// The steps every in-place autograd kernel takes around its write, in this
/// order: checks that `self` may be modified (when `recording`), runs
/// `write` below autograd, and bumps self's version counter. The bump
/// happens recording or not: a tensor saved elsewhere that shares self's
/// memory must see the write.
template <class Write>
void writeInplace(const Tensor& self, bool recording, const char* op_name,
                  Write write) {
  checkInplaceAllowed(self, recording, op_name);
  belowAutograd(write);
  self.unsafeGetTensorImpl()->bump_version();
}

}  // namespace detail
}  // namespace autograd
}  // namespace turnout

#endif  // TURNOUT_KERNELS_AUTOGRAD_FUNCTION_NODE_H_
