// The autograd state of a tensor, and the functions that read and set it.
//
//   Tensor w = ...;
//   autograd::setRequiresGrad(w, true);        // w.requires_grad_()
//   Tensor y = ...;                             // ops record y's grad_fn
//   autograd::backward({y});                    // engine.h
//   autograd::grad(w);                          // dL/dw
//
// A tensor that autograd never touched has no AutogradMeta at all (the
// TensorImpl hook is null), so plain tensors pay nothing.
//
// Thread safety: like the tensor's other mutators, set by the thread that
// owns the tensor; reads are safe once it is shared.
#ifndef TURNOUT_KERNELS_AUTOGRAD_AUTOGRAD_META_H_
#define TURNOUT_KERNELS_AUTOGRAD_AUTOGRAD_META_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dispatcher/core/autograd_meta_interface.h"
#include "dispatcher/core/tensor.h"
#include "kernels/autograd/node.h"

namespace turnout {
namespace autograd {

/// A hook on a tensor's gradient (Tensor.register_hook): returns the
/// gradient to use instead, or an undefined tensor to keep it.
using TensorHook = std::function<Tensor(const Tensor& grad)>;

struct LeafHooks {
  std::vector<std::pair<uint64_t, TensorHook>> hooks;
  uint64_t next_key = 0;
};

struct AutogradMeta final : AutogradMetaInterface {
  bool requires_grad = false;  // meaningful for leaves only
  Tensor grad;                 // accumulated by backward()
  std::shared_ptr<Node> grad_fn;
  std::weak_ptr<Node> grad_accumulator;  // a leaf's AccumulateGrad
  uint32_t output_nr = 0;                // which output of grad_fn
  // A differentiable view (its grad_fn is the view op's) and the version of
  // its memory when it was taken: a later in-place write through the base
  // makes its history stale (turnout does not rebase views).
  bool is_view = false;
  uint32_t view_version = 0;
  // torch's `_base`: the tensor this one is a view of (the root of a chain
  // of views), set by the autograd kernel of every view operator, recording
  // or not; undefined for a tensor that is not a view. Holding the base is
  // no cycle: a base never holds its views.
  Tensor view_base;
  // A leaf's Tensor.register_hook hooks, run on each gradient before it is
  // accumulated (shared with the handles that remove them), and whether a
  // non-leaf keeps its gradient in .grad (retain_grad).
  std::shared_ptr<LeafHooks> leaf_hooks;
  // A retaining non-leaf's .grad, shared with the hook that fills it (the
  // hook lives on grad_fn: holding the tensor itself would be a cycle).
  std::shared_ptr<Tensor> retained_grad;
  // The sizes the handler of a tensor whose subclass answers them
  // (dispatch_sizes_strides_policy) gave when the tensor joined autograd,
  // as a leaf's accumulator or an operator's output (torch 1.13's
  // InputMetadata): its gradients are summed to them, without asking again.
  std::optional<DimVector> answered_sizes;
};

/// The state, or null when autograd never touched `t`.
AutogradMeta* getAutogradMeta(const Tensor& t);

/// True when gradients flow to or through `t`: a leaf that requires grad, or
/// the output of a recorded operation.
bool requiresGrad(const Tensor& t);
/// True when `t` has no grad_fn.
bool isLeaf(const Tensor& t);
/// `t.requires_grad_(flag)`. Throws InvalidArgument for a non-floating dtype
/// ("only Tensors of floating point dtype can require gradients") and for a
/// non-leaf.
void setRequiresGrad(const Tensor& t, bool flag);
/// The accumulated gradient (undefined before any backward()).
Tensor grad(const Tensor& t);
/// Replaces the accumulated gradient (e.g. with an undefined tensor, to
/// zero it).
void setGrad(const Tensor& t, Tensor grad);
/// The Node that made `t`, or null.
std::shared_ptr<Node> gradFn(const Tensor& t);

/// `t.register_hook(hook)`, as torch's: the hook sees every gradient
/// computed for `t` in backward, in registration order with `t`'s other
/// hooks, and may replace it (same shape): for a non-leaf, before its
/// grad_fn uses it; for a leaf, before it is accumulated into .grad.
/// (grad() and backward(inputs=) capture a gradient before the hooks of the
/// tensor it is taken for, as torch 1.13's.) Returns the function that
/// removes the hook. Throws InvalidArgument when `t` does not require grad.
std::function<void()> registerHook(const Tensor& t, TensorHook hook);
/// `t.retain_grad()`: a non-leaf keeps the gradients computed for it in
/// .grad, accumulated over backward calls (a hook run in order with the
/// others); nothing for a leaf. Throws as registerHook.
void retainGrad(const Tensor& t);
/// Whether retain_grad was called on the non-leaf `t`.
bool retainsGrad(const Tensor& t);

/// Where a gradient for `t` goes: its grad_fn and output_nr, a leaf's
/// AccumulateGrad, or an invalid edge when `t` needs no gradient.
Edge gradientEdge(const Tensor& t);
/// The sizes `t`'s gradients are summed to: t.sizes(), asked once per tensor
/// of a subclass that answers its sizes (AutogradMeta::answered_sizes).
DimVector gradientSizes(const Tensor& t);
/// Marks `view`, an output of a view operator over `of`, as a view in
/// torch's `_is_view()` sense: its base is `of`'s base when `of` is a view
/// itself, else `of`. Nothing when `view` is `of` (an operator that returned
/// its input) or undefined.
void setViewBase(const Tensor& view, const Tensor& of);
/// torch's `t._base`: the tensor `t` is a view of, undefined when `t` is not
/// a view (detach() and `.data` are not).
Tensor viewBase(const Tensor& t);

/// `self.data = value` (torch's set_data): `self` takes `value`'s memory,
/// dtype, device, sizes and strides and keeps its identity: its autograd
/// state (requires_grad, grad, grad_fn, hooks, being a view), its version
/// counter and its Python object. A leaf's AccumulateGrad is dropped when
/// the dtype or device changes (a new one is made on the next use). Throws,
/// changing nothing, InvalidArgument when the two tensors cannot share
/// metadata (a layout or backend other than dense CPU/CUDA that differs,
/// e.g. a Meta value for a CPU tensor) and when `self` requires grad and
/// `value` is not floating point (torch raises RuntimeError for both). Nothing happens when they are the
/// same tensor.
void setData(const Tensor& self, const Tensor& value);

/// Makes `fn` the grad_fn of `output` (its next forward output).
void setHistory(const Tensor& output, const std::shared_ptr<Node>& fn);

/// Throws, as PyTorch does, when an in-place operation would overwrite a
/// leaf that requires grad ("a leaf Variable that requires grad is being
/// used in an in-place operation.").
void checkInplace(const Tensor& t, const char* op_name);

/// Adds a gradient into a leaf's .grad.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor variable) : variable_(std::move(variable)) {}
  variable_list apply(variable_list&& grads) override;
  // As torch 1.13 names it, with its C++ namespace.
  std::string name() const override {
    return "torch::autograd::AccumulateGrad";
  }
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
};

}  // namespace autograd
}  // namespace turnout

#endif  // TURNOUT_KERNELS_AUTOGRAD_AUTOGRAD_META_H_
