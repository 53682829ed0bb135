#include "kernels/autograd/saved_variable.h"

#include <atomic>
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

std::atomic<PythonShallowCopyHook> g_python_hook{nullptr};

// The copy the Python handlers made of `t`, or undefined when none wants
// to. A handler's result that is `t` itself or has autograd history is
// copied again here (keeping it would be a cycle or a stale history); it
// shares `t`'s version counter, as torch's copy does.
Tensor copyThroughPython(const Tensor& t) {
  // Relaxed: the hook is a function pointer set once, before any call that
  // could reach Python.
  PythonShallowCopyHook hook = g_python_hook.load(std::memory_order_relaxed);
  if (hook == nullptr) return Tensor();
  Tensor copy = hook(t);
  if (!copy.defined()) return copy;
  TensorImpl* impl = copy.unsafeGetTensorImpl();
  if (impl == t.unsafeGetTensorImpl() || impl->autograd_meta() != nullptr) {
    copy = shallowCopy(copy);
    impl = copy.unsafeGetTensorImpl();
  }
  impl->set_version_counter(t.unsafeGetTensorImpl()->version_counter());
  return copy;
}

// A tensor of its own over `t`'s memory, through the handlers when they
// want it.
Tensor detachedCopy(const Tensor& t) {
  Tensor copy = copyThroughPython(t);
  return copy.defined() ? copy : shallowCopy(t);
}

}  // namespace

void setPythonShallowCopyHook(PythonShallowCopyHook hook) {
  g_python_hook.store(hook, std::memory_order_relaxed);
}

SavedVariable::SavedVariable(const Tensor& t, bool is_output,
                             uint32_t output_nr) {
  if (!t.defined()) return;
  state_ = std::make_shared<State>();
  state_->saved_version = t.unsafeGetTensorImpl()->version();
  state_->is_output = is_output;
  state_->output_nr = output_nr;
  // An output is kept as a tensor of its own over the same memory and
  // version counter, without autograd history: no cycle. One the Node does
  // not attach (not floating point) is kept as it is, as an input.
  if (!is_output || !isFloatingType(t.scalar_type())) {
    state_->is_output = false;
    state_->data = t;
    return;
  }
  state_->data = detachedCopy(t);
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
  if (!state_->is_output) return data;
  // A saved output comes back as a new tensor (torch's make_variable over
  // the saved data, a copy the Python handlers see), whose grad_fn is the
  // Node in grad mode (made per unpack: keeping it here would be the cycle
  // this class avoids). Only the graph built from it in backward holds the
  // Node.
  Tensor via_python = copyThroughPython(data);
  std::shared_ptr<Node> node;
  if (saved_for != nullptr && GradMode::is_enabled() &&
      state_->output_nr < saved_for->num_inputs()) {
    node = std::const_pointer_cast<Node>(saved_for->weak_from_this().lock());
  }
  if (node == nullptr) return via_python.defined() ? via_python : data;
  Tensor out = via_python.defined() ? via_python : shallowCopy(data);
  auto meta = std::make_unique<AutogradMeta>();
  meta->grad_fn = std::move(node);
  meta->output_nr = state_->output_nr;
  out.unsafeGetTensorImpl()->set_autograd_meta(std::move(meta));
  return out;
}

}  // namespace autograd
}  // namespace turnout
