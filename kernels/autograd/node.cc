#include "kernels/autograd/node.h"

#include <atomic>

#include "dispatcher/core/error.h"
#include "dispatcher/core/tensor_impl.h"

namespace turnout {
namespace autograd {
namespace {

std::atomic<uint64_t> next_sequence_nr{0};

}  // namespace

Node::Node(std::vector<Edge> next_edges)
    : next_edges_(std::move(next_edges)),
      sequence_nr_(next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

uint64_t Node::addPostHook(PostHook hook) {
  uint64_t key = next_hook_key_++;
  post_hooks_.emplace_back(key, std::move(hook));
  return key;
}

bool Node::removePostHook(uint64_t key) {
  for (auto it = post_hooks_.begin(); it != post_hooks_.end(); ++it) {
    if (it->first == key) {
      post_hooks_.erase(it);
      return true;
    }
  }
  return false;
}

variable_list Node::runPostHooks(variable_list grad_inputs,
                                 const variable_list& grad_outputs) {
  // A copy: a hook may remove itself (or others) while running.
  std::vector<std::pair<uint64_t, PostHook>> hooks = post_hooks_;
  for (auto& [key, hook] : hooks) {
    variable_list next = hook(grad_inputs, grad_outputs);
    TURNOUT_CHECK(next.size() == grad_inputs.size(), ErrorKind::InvalidArgument,
                  "a hook of ", name(), " returned ", next.size(),
                  " gradients where the node has ", grad_inputs.size(),
                  " inputs; return one per input (or the grad_inputs given)");
    grad_inputs = std::move(next);
  }
  return grad_inputs;
}

uint64_t Node::addPreHook(uint32_t input_nr, PreHook hook) {
  uint64_t key = next_hook_key_++;
  pre_hooks_.push_back({key, input_nr, std::move(hook)});
  return key;
}

bool Node::removePreHook(uint64_t key) {
  for (auto it = pre_hooks_.begin(); it != pre_hooks_.end(); ++it) {
    if (it->key == key) {
      pre_hooks_.erase(it);
      return true;
    }
  }
  return false;
}

void Node::runPreHooks(variable_list& grads) {
  // A copy: a hook may remove itself (or others) while running.
  std::vector<InputHook> hooks = pre_hooks_;
  for (const InputHook& h : hooks) {
    if (h.input_nr >= grads.size() || !grads[h.input_nr].defined()) continue;
    grads[h.input_nr] = detail::applyGradHook(h.hook, grads[h.input_nr],
                                              name().c_str());
  }
}

namespace detail {

Tensor applyGradHook(const std::function<Tensor(const Tensor&)>& hook,
                     const Tensor& grad, const char* where) {
  Tensor next = hook(grad);
  if (!next.defined()) return grad;
  TURNOUT_CHECK(next.sizes() == grad.sizes(), ErrorKind::InvalidArgument,
                "a gradient hook (at ", where, ") returned a gradient of shape ",
                shapeString(next.sizes()), " for one of shape ",
                shapeString(grad.sizes()),
                "; return a gradient of the same shape, or None to keep it");
  return next;
}

}  // namespace detail

void Node::addSaved(std::string name, SavedVariable tensor) {
  Saved s;
  s.name = std::move(name);
  s.is_tensor = true;
  s.tensor = std::move(tensor);
  saved_.push_back(std::move(s));
}

void Node::addSaved(std::string name, std::vector<SavedVariable> tensors) {
  Saved s;
  s.name = std::move(name);
  s.is_tensor_list = true;
  s.tensors = std::move(tensors);
  saved_.push_back(std::move(s));
}

void Node::addSaved(std::string name, IValue value) {
  Saved s;
  s.name = std::move(name);
  s.value = std::move(value);
  saved_.push_back(std::move(s));
}

void Node::releaseVariables() {
  for (const Saved& s : saved_) {
    if (s.is_tensor) s.tensor.release();
    for (const SavedVariable& t : s.tensors) t.release();
  }
}

}  // namespace autograd
}  // namespace turnout
