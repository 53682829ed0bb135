#include "kernels/autograd/custom_function.h"

#include <cxxabi.h>

#include <cstdlib>
#include <string>

#include "dispatcher/core/error.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/function_node.h"
#include "kernels/copy.h"
#include "kernels/factory.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace autograd {
namespace {

// True when `grad` of shape `have` can be summed to `want` (`want`
// broadcasts to `have`).
bool sumsTo(IntArrayRef have, IntArrayRef want) {
  if (want.size() > have.size()) return false;
  const size_t lead = have.size() - want.size();
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] != have[lead + i] && want[i] != 1) return false;
  }
  return true;
}

// A tensor over `t`'s memory and version counter with no autograd state:
// what apply returns for an input that forward returned unchanged, so that
// the output's history does not overwrite the input's.
Tensor alias(const Tensor& t) {
  return makeView(t, t.sizes(), t.strides(), t.storage_offset());
}

}  // namespace

// ---- AutogradContext -----------------------------------------------------------

void AutogradContext::save_for_backward(variable_list to_save) {
  TURNOUT_CHECK(!saved_done_, ErrorKind::InvalidArgument,
                node_ ? node_->name() : std::string("a Function"),
                ": save_for_backward() may only be called in forward");
  to_save_ = std::move(to_save);
}

variable_list AutogradContext::get_saved_variables() const {
  TURNOUT_CHECK(saved_done_, ErrorKind::InvalidArgument,
                node_ ? node_->name() : std::string("a Function"),
                ": get_saved_variables() was called in forward; the saved "
                "tensors are ready once forward has returned (use them in "
                "backward)");
  variable_list out;
  out.reserve(saved_.size());
  for (const SavedVariable& s : saved_) out.push_back(s.unpack(node_));
  return out;
}

void AutogradContext::mark_dirty(const variable_list& inputs) {
  dirty_.clear();
  for (const Tensor& t : inputs) {
    if (t.defined()) dirty_.insert(t.unsafeGetTensorImpl());
  }
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  non_differentiable_.clear();
  for (const Tensor& t : outputs) {
    if (t.defined()) non_differentiable_.insert(t.unsafeGetTensorImpl());
  }
}

bool AutogradContext::needs_input_grad(size_t i) const {
  const size_t n = node_ ? node_->next_edges().size() : 0;
  const size_t args = node_ ? node_->inputs_.size() : 0;
  TURNOUT_CHECK(i < args, ErrorKind::Index,
                node_ ? node_->name() : std::string("a Function"),
                ": needs_input_grad(", i, ") is out of range: forward has ",
                args, " Tensor argument", args == 1 ? "" : "s",
                " (the index counts Tensor arguments only)");
  // No edges: apply is not recording, and no input needs a gradient.
  return i < n && node_->next_edges()[i].isValid();
}

// ---- CustomFunctionNode --------------------------------------------------------

void CustomFunctionNode::addArgument(const Tensor* t) {
  is_tensor_arg_.push_back(t != nullptr);
  if (t == nullptr) return;
  tensor_inputs_.push_back(*t);
  InputInfo info;
  if (t->defined()) {
    info.sizes.assign(t->sizes().begin(), t->sizes().end());
    info.dtype = t->scalar_type();
  }
  inputs_.push_back(std::move(info));
}

bool CustomFunctionNode::begin() {
  const bool recording = detail::shouldRecord(tensor_inputs_, name_.c_str());
  if (recording) {
    std::vector<Edge> edges;
    edges.reserve(tensor_inputs_.size());
    for (const Tensor& t : tensor_inputs_) edges.push_back(gradientEdge(t));
    set_next_edges(std::move(edges));
  }
  return recording;
}

variable_list CustomFunctionNode::wrapOutputs(variable_list outputs,
                                              bool recording) {
  AutogradContext& ctx = ctx_;
  auto isInput = [this](const Tensor& t) {
    for (const Tensor& in : tensor_inputs_) {
      if (in.defined() && in.is_same(t)) return true;
    }
    return false;
  };
  // Every dirty tensor must come back: its new value is an output.
  for (const TensorImpl* d : ctx.dirty_) {
    bool returned = false;
    for (const Tensor& o : outputs) returned |= o.unsafeGetTensorImpl() == d;
    TURNOUT_CHECK(returned, ErrorKind::InvalidArgument, name_,
                  ": a tensor marked dirty (mark_dirty) was not returned by "
                  "forward; return every tensor forward modified in place");
  }
  if (recording) {
    // Checked before anything changes, so that an error leaves the inputs
    // as they were.
    for (const Tensor& o : outputs) {
      if (o.defined() && ctx.dirty_.count(o.unsafeGetTensorImpl()) &&
          isInput(o)) {
        detail::checkInplaceAllowed(o, true, name_.c_str());
      }
    }
  }
  for (const Tensor& o : outputs) {
    if (o.defined() && ctx.dirty_.count(o.unsafeGetTensorImpl())) {
      o.unsafeGetTensorImpl()->bump_version();
    }
  }

  outputs_.clear();
  for (Tensor& o : outputs) {
    OutputInfo info;
    if (o.defined()) {
      info.defined = true;
      info.sizes.assign(o.sizes().begin(), o.sizes().end());
      info.dtype = o.scalar_type();
      info.device = o.device();
    }
    outputs_.push_back(std::move(info));
    if (!recording) continue;
    const bool differentiable =
        o.defined() && isFloatingType(o.scalar_type()) &&
        !ctx.non_differentiable_.count(o.unsafeGetTensorImpl());
    if (!differentiable) {
      add_input();  // its slot: backward gets zeros or nothing for it
      continue;
    }
    const bool dirty = ctx.dirty_.count(o.unsafeGetTensorImpl()) > 0;
    if (dirty && isInput(o)) {
      // Rebases the input's history onto this node: its old grad_fn is
      // already one of the node's next edges.
      setHistory(o, shared_from_this());
      continue;
    }
    // An input returned unchanged, or a tensor with history of its own,
    // keeps it: the output is a new tensor over the same memory.
    if (isInput(o) || requiresGrad(o)) {
      o = alias(o);
      setHistory(o, shared_from_this());
      AutogradMeta* meta = getAutogradMeta(o);
      meta->is_view = true;
      meta->view_version = o.unsafeGetTensorImpl()->version();
      continue;
    }
    setHistory(o, shared_from_this());
  }

  // Saved once the outputs have their history: an output saved here keeps
  // its data only (no cycle through its grad_fn).
  ctx.saved_.clear();
  for (const Tensor& t : ctx.to_save_) {
    bool is_output = false;
    uint32_t output_nr = 0;
    for (const Tensor& o : outputs) {
      if (t.defined() && o.defined() &&
          o.unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) {
        is_output = gradFn(o).get() == this;
        if (is_output) output_nr = getAutogradMeta(o)->output_nr;
      }
    }
    ctx.saved_.emplace_back(t, is_output, output_nr);
  }
  ctx.to_save_.clear();
  ctx.saved_done_ = true;
  tensor_inputs_.clear();
  return outputs;
}

variable_list CustomFunctionNode::apply(variable_list&& grads) {
  TURNOUT_INTERNAL_ASSERT(grads.size() == outputs_.size(), name_, " got ",
                          grads.size(), " gradients for ", outputs_.size(),
                          " outputs");
  if (ctx_.materialize_grads_) {
    for (size_t i = 0; i < grads.size(); ++i) {
      const OutputInfo& o = outputs_[i];
      if (grads[i].defined() || !o.defined) continue;
      grads[i] = zeros(o.sizes, TensorOptions(o.dtype).device(o.device));
    }
  }
  variable_list out = callBackward(std::move(grads));
  const size_t num_args = is_tensor_arg_.size();
  if (out.size() > num_args) {
    for (size_t i = num_args; i < out.size(); ++i) {
      TURNOUT_CHECK(!out[i].defined(), ErrorKind::InvalidArgument, name_,
                    ": backward returned ", out.size(),
                    " gradients, but forward took ", num_args,
                    " argument", num_args == 1 ? "" : "s",
                    "; return one gradient per argument of forward");
    }
    out.resize(num_args);
  }
  TURNOUT_CHECK(out.size() == num_args, ErrorKind::InvalidArgument, name_,
                ": backward returned ", out.size(), " gradient",
                out.size() == 1 ? "" : "s", ", but forward took ", num_args,
                " argument", num_args == 1 ? "" : "s",
                "; return one gradient per argument of forward (an "
                "undefined Tensor for the arguments that take none)");
  variable_list result;
  result.reserve(inputs_.size());
  for (size_t i = 0; i < num_args; ++i) {
    Tensor& g = out[i];
    if (!is_tensor_arg_[i]) {
      TURNOUT_CHECK(!g.defined(), ErrorKind::InvalidArgument, name_,
                    ": backward returned a gradient for argument ", i,
                    " of forward, which is not a Tensor; return an "
                    "undefined Tensor there");
      continue;
    }
    const size_t k = result.size();
    if (!g.defined() || !next_edges()[k].isValid()) {
      result.emplace_back();
      continue;
    }
    const InputInfo& in = inputs_[k];
    TURNOUT_CHECK(sumsTo(g.sizes(), in.sizes), ErrorKind::InvalidArgument,
                  name_, ": backward returned a gradient of shape ",
                  shapeString(g.sizes()), " for argument ", i,
                  " of forward, whose shape is ", shapeString(in.sizes),
                  "; the gradient must have the input's shape (or one that "
                  "the input's shape broadcasts to)");
    g = sumToSize(g, in.sizes);
    if (g.scalar_type() != in.dtype) g = to(g, in.dtype);
    result.push_back(std::move(g));
  }
  return result;
}

namespace function_internal {

std::string nodeName(const std::type_info& type) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : type.name();
  std::free(demangled);
  // The class's own name, without namespaces or template arguments.
  const size_t angle = name.find('<');
  std::string head = name.substr(0, angle);
  const size_t colon = head.rfind("::");
  if (colon != std::string::npos) head = head.substr(colon + 2);
  return head + "Backward";
}

}  // namespace function_internal
}  // namespace autograd
}  // namespace turnout
