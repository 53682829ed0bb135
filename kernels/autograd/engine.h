// backward(): runs the backward graph from some outputs to the leaves.
//
//   Tensor loss = ...;                 // a 1-element tensor with a grad_fn
//   autograd::backward({loss});        // grads accumulate into leaves' .grad
//
// Nodes run in dependency order (a Node runs once every Node that sends it a
// gradient has run), later-created Nodes first among the ready ones, with
// gradients for the same input summed. Grad mode is off while they run.
//
// Thread safety: runs on the calling thread; a graph must not be run by two
// threads at once.
#ifndef TURNOUT_KERNELS_AUTOGRAD_ENGINE_H_
#define TURNOUT_KERNELS_AUTOGRAD_ENGINE_H_

#include <functional>
#include <optional>
#include <string>

#include "kernels/autograd/node.h"

namespace turnout {
namespace autograd {

/// Computes the gradients of `roots` with respect to every leaf that
/// requires grad. `grad_roots[i]` is the gradient of `roots[i]`; when empty,
/// each root must have one element and gets 1. Throws InvalidArgument when a
/// root does not require grad, or needs an explicit gradient.
///
/// As torch's, each Node's saved tensors are freed once it has run, unless
/// `retain_graph`: a second backward through it then throws torch's "Trying
/// to backward through the graph a second time" error.
///
/// With `create_graph`, the backward formulas run with grad mode on, so that
/// the accumulated gradients have a graph of their own (double backward).
/// With `inputs` (each must require grad), the gradients accumulate into
/// those tensors' .grad only (a non-leaf's too), and only the nodes on a
/// path to them run.
void backward(const variable_list& roots, const variable_list& grad_roots = {},
              bool retain_graph = false, bool create_graph = false,
              const variable_list& inputs = {});

/// backward() with `create_graph` leaves each leaf's .grad holding a graph
/// that holds the leaf: a reference cycle, freed only when .grad is reset.
/// As torch 1.13's engine, the first such call of the process (its roots
/// checked, before any node runs) warns, with inputs or without; grad()
/// never does. The warning goes to this handler (empty: turnout::warn);
/// turnout._C installs one that issues a Python UserWarning. A handler may
/// throw (a warnings filter set to "error"): backward() then throws before
/// any .grad changes. Returns the previous handler. Thread-safe.
using BackwardWarningHandler = std::function<void(const std::string&)>;
BackwardWarningHandler setBackwardWarningHandler(BackwardWarningHandler handler);

/// Lets the next backward() with `create_graph` warn again (tests).
void resetCreateGraphWarning();

/// The gradients of `roots` with respect to `inputs` (torch.autograd.grad):
/// one per input, undefined where no gradient reaches it. No leaf's .grad
/// changes. `grad_roots` as for backward(). With `create_graph`, the
/// backward formulas run with grad mode on, so that the results have a
/// graph of their own (for higher derivatives). Throws InvalidArgument when
/// an input does not require grad. Saved tensors are freed as backward()'s
/// unless `retain_graph` (which defaults to `create_graph`, as torch's).
variable_list grad(const variable_list& roots, const variable_list& grad_roots,
                   const variable_list& inputs, bool create_graph = false,
                   std::optional<bool> retain_graph = std::nullopt);

}  // namespace autograd
}  // namespace turnout

#endif  // TURNOUT_KERNELS_AUTOGRAD_ENGINE_H_
