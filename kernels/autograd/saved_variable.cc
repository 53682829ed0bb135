#include "kernels/autograd/saved_variable.h"

#include <string>

#include "dispatcher/core/error.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/autograd/node.h"

namespace turnout {
namespace autograd {
namespace {

std::string describe(const Tensor& t) {
  std::string out = "[" + std::string(toString(t.scalar_type())) + " [";
  for (size_t i = 0; i < t.sizes().size(); ++i) {
    out += (i ? ", " : "") + std::to_string(t.sizes()[i]);
  }
  return out + "]]";
}

// A tensor of its own over `t`'s memory and version counter, without
// autograd history.
Tensor shallowCopy(const Tensor& t) {
  Tensor out(make_intrusive<TensorImpl, UndefinedTensorImpl>(
      t.storage(), t.scalar_type(), t.device(), t.layout(), t.key_set()));
  TensorImpl* impl = out.unsafeGetTensorImpl();
  impl->set_sizes_and_strides(t.sizes(), t.strides());
  impl->set_storage_offset(t.storage_offset());
  impl->set_version_counter(t.unsafeGetTensorImpl()->version_counter());
  return out;
}

}  // namespace

SavedVariable::SavedVariable(const Tensor& t, bool is_output,
                             uint32_t output_nr) {
  if (!t.defined()) return;
  state_ = std::make_shared<State>();
  state_->saved_version = t.unsafeGetTensorImpl()->version();
  state_->is_output = is_output;
  state_->output_nr = output_nr;
  // An output is kept as a tensor of its own over the same memory and
  // version counter, without autograd history: no cycle.
  if (!is_output) {
    state_->data = t;
    return;
  }
  state_->data = shallowCopy(t);
}

void SavedVariable::release() const {
  if (state_ == nullptr) return;
  state_->released = true;
  Tensor dropped = std::move(state_->data);
}

Tensor SavedVariable::unpack(const Node* saved_for) const {
  if (state_ == nullptr) return Tensor();
  TURNOUT_CHECK(!state_->released, ErrorKind::InvalidArgument,
                "Trying to backward through the graph a second time (or "
                "directly access saved tensors after they have already been "
                "freed). Saved intermediate values of the graph are freed "
                "when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph "
                "a second time or if you need to access saved tensors after "
                "calling backward. (",
                saved_for ? saved_for->name() : std::string("a node"),
                "'s saved tensors were freed.)");
  const Tensor& data = state_->data;
  const uint32_t current = data.unsafeGetTensorImpl()->version();
  TURNOUT_CHECK(current == state_->saved_version, ErrorKind::InvalidArgument,
                "one of the variables needed for gradient computation has "
                "been modified by an inplace operation: ",
                describe(data), ", which is saved by ",
                saved_for ? saved_for->name() : std::string("a node"),
                ", is at version ", current, "; expected version ",
                state_->saved_version,
                " instead. Hint: make the in-place operation out-of-place, or "
                "clone() the tensor before modifying it.");
  if (!state_->is_output || saved_for == nullptr || !GradMode::is_enabled() ||
      !isFloatingType(data.scalar_type()) ||
      state_->output_nr >= saved_for->num_inputs()) {
    return data;
  }
  // The output again, as a new tensor whose grad_fn is the Node (made per
  // unpack: keeping it here would be the cycle this class avoids). Only
  // the graph built from it in backward holds the Node.
  std::shared_ptr<Node> node =
      std::const_pointer_cast<Node>(saved_for->weak_from_this().lock());
  if (node == nullptr) return data;
  Tensor out = shallowCopy(data);
  auto meta = std::make_unique<AutogradMeta>();
  meta->grad_fn = std::move(node);
  meta->output_nr = state_->output_nr;
  out.unsafeGetTensorImpl()->set_autograd_meta(std::move(meta));
  return out;
}

}  // namespace autograd
}  // namespace turnout
