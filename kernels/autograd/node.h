// Node: one step of the backward graph, and Edge: where its gradients go.
//
// A differentiable operator's autograd kernel creates a Node that saves what
// the backward formula needs, points its next edges at the Nodes of its
// inputs (their grad_fn, or the AccumulateGrad of a leaf), and becomes the
// grad_fn of its outputs. backward() (engine.h) runs the Nodes in reverse.
//
//   struct MulBackward final : Node {
//     variable_list apply(variable_list&& grads) override {
//       return {mul(grads[0], other_.unpack(this)), mul(grads[0], self_.unpack(this))};
//     }
//     SavedVariable self_, other_;
//   };
//
// Thread safety: a graph is built by the thread that runs the forward pass;
// backward runs it on the calling thread.
#ifndef TURNOUT_KERNELS_AUTOGRAD_NODE_H_
#define TURNOUT_KERNELS_AUTOGRAD_NODE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dispatcher/core/ivalue.h"
#include "dispatcher/core/tensor.h"
#include "kernels/autograd/saved_variable.h"

namespace turnout {
namespace autograd {

using variable_list = std::vector<Tensor>;

class Node;

/// The `input_nr`-th gradient input of `function`. An invalid edge (no
/// function) means "this input needs no gradient".
struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
  bool isValid() const { return function != nullptr; }
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  explicit Node(std::vector<Edge> next_edges = {});
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  /// Gradients of the forward outputs in, gradients of the forward inputs
  /// (one per next edge; undefined where none) out.
  virtual variable_list apply(variable_list&& grads) = 0;
  /// "MulBackward0", as PyTorch names them.
  virtual std::string name() const = 0;

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  void set_next_edges(std::vector<Edge> edges) { next_edges_ = std::move(edges); }
  /// How many gradients apply() receives: the forward outputs attached.
  uint32_t num_inputs() const { return num_inputs_; }
  /// Registers one more forward output; returns its index (output_nr).
  uint32_t add_input() { return num_inputs_++; }
  /// Creation order: the engine runs later Nodes first.
  uint64_t sequence_nr() const { return sequence_nr_; }

  /// Called by the engine after apply(), as torch's Node post hooks:
  /// hook(grad_inputs, grad_outputs), with grad_inputs apply()'s results
  /// (the gradients of the forward inputs) and grad_outputs its arguments;
  /// what it returns replaces grad_inputs (return them unchanged to only
  /// look). Precondition (all three): no backward runs through this Node.
  using PostHook = std::function<variable_list(const variable_list& grad_inputs,
                                               const variable_list& grad_outputs)>;
  /// Adds a hook after the others; returns its key for removePostHook.
  uint64_t addPostHook(PostHook hook);
  /// Removes a hook; false when `key` is not (or no longer) registered.
  bool removePostHook(uint64_t key);
  bool hasPostHooks() const { return !post_hooks_.empty(); }
  /// Runs the hooks in order, each on the previous one's result.
  variable_list runPostHooks(variable_list grad_inputs,
                             const variable_list& grad_outputs);

  /// A hook on the gradient arriving at one input (a forward output's: a
  /// Tensor.register_hook of a non-leaf): called before apply() with that
  /// gradient, it returns the gradient to use instead, or an undefined
  /// tensor to keep it (torch's tensor pre hooks).
  using PreHook = std::function<Tensor(const Tensor& grad)>;
  /// Adds a hook for input `input_nr` after the others; returns its key
  /// for removePreHook.
  uint64_t addPreHook(uint32_t input_nr, PreHook hook);
  bool removePreHook(uint64_t key);
  bool hasPreHooks() const { return !pre_hooks_.empty(); }
  /// Runs the hooks in order on the gradients they watch (undefined ones
  /// are skipped). A hook that returns a gradient of another shape is an
  /// error naming the node.
  void runPreHooks(variable_list& grads);

  /// A value the node keeps for backward, under torch's name ("self",
  /// "other", "alpha", "result", "self_sym_sizes", "indices", ...): what
  /// Python shows as grad_fn._saved_<name>. A tensor (`tensor`, undefined
  /// where none was saved), a list of tensors (`tensors`, as index's
  /// "indices"; an undefined entry is a None index) or another value
  /// (`value`).
  struct Saved {
    std::string name;
    bool is_tensor = false;
    bool is_tensor_list = false;
    SavedVariable tensor;
    std::vector<SavedVariable> tensors;
    IValue value;
  };
  /// Precondition (all three): called while recording, before the node is
  /// shared.
  void addSaved(std::string name, SavedVariable tensor);
  void addSaved(std::string name, std::vector<SavedVariable> tensors);
  void addSaved(std::string name, IValue value);
  const std::vector<Saved>& saved() const { return saved_; }
  /// Frees the saved tensors (backward without retain_graph): a later
  /// backward through this node, or _saved_<name>, raises torch's error.
  /// A node that keeps tensors elsewhere (a Python Function's ctx) frees
  /// them too, after calling this.
  virtual void releaseVariables();

 private:
  std::vector<Saved> saved_;
  std::vector<std::pair<uint64_t, PostHook>> post_hooks_;
  struct InputHook {
    uint64_t key;
    uint32_t input_nr;
    PreHook hook;
  };
  std::vector<InputHook> pre_hooks_;
  uint64_t next_hook_key_ = 0;
  std::vector<Edge> next_edges_;
  uint32_t num_inputs_ = 0;
  uint64_t sequence_nr_;
};

namespace detail {
/// `hook(grad)`, or `grad` when the hook returns an undefined tensor;
/// InvalidArgument naming `where` when it returns another shape.
Tensor applyGradHook(const std::function<Tensor(const Tensor&)>& hook,
                     const Tensor& grad, const char* where);
}  // namespace detail

}  // namespace autograd
}  // namespace turnout

#endif  // TURNOUT_KERNELS_AUTOGRAD_NODE_H_
