#include "kernels/autograd/autograd_meta.h"

#include "dispatcher/core/error.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/autograd/grad_ops.h"

namespace turnout {
namespace autograd {
namespace {

AutogradMeta& materialize(const Tensor& t) {
  TURNOUT_CHECK(t.defined(), ErrorKind::InvalidArgument,
                "autograd: the tensor is undefined");
  TensorImpl* impl = t.unsafeGetTensorImpl();
  if (impl->autograd_meta() == nullptr) {
    impl->set_autograd_meta(std::make_unique<AutogradMeta>());
  }
  return *static_cast<AutogradMeta*>(impl->autograd_meta());
}

}  // namespace

AutogradMeta* getAutogradMeta(const Tensor& t) {
  if (!t.defined()) return nullptr;
  return static_cast<AutogradMeta*>(t.unsafeGetTensorImpl()->autograd_meta());
}

void setViewBase(const Tensor& view, const Tensor& of) {
  if (!view.defined() || !of.defined() ||
      view.unsafeGetTensorImpl() == of.unsafeGetTensorImpl()) {
    return;
  }
  Tensor base = viewBase(of);
  materialize(view).view_base = base.defined() ? std::move(base) : of;
}

Tensor viewBase(const Tensor& t) {
  const AutogradMeta* meta = getAutogradMeta(t);
  return meta == nullptr ? Tensor() : meta->view_base;
}

namespace {
// Keys a tensor subclass adds; set_data keeps the variable's.
constexpr DispatchKeySet kPythonKeys =
    DispatchKeySet(DispatchKey::Python).add(DispatchKey::PythonTLSSnapshot);

bool denseCpuOrCuda(const Tensor& t) {
  return t.layout() == Layout::Strided &&
         (t.device().type() == DeviceType::CPU ||
          t.device().type() == DeviceType::CUDA);
}
}  // namespace

void setData(const Tensor& self, const Tensor& value) {
  TURNOUT_CHECK(self.defined() && value.defined(), ErrorKind::InvalidArgument,
                "Tensor.data = value: ", self.defined() ? "value" : "the tensor",
                " is undefined");
  if (self.unsafeGetTensorImpl() == value.unsafeGetTensorImpl()) return;
  TURNOUT_CHECK(
      (self.key_set() - kPythonKeys) == (value.key_set() - kPythonKeys) ||
          (denseCpuOrCuda(self) && denseCpuOrCuda(value)),
      ErrorKind::InvalidArgument,
      "Tensor.data = value (set_data): the tensor (", self.device().str(),
      ", layout ", toString(self.layout()), ") and the value (",
      value.device().str(), ", layout ", toString(value.layout()),
      ") have incompatible tensor types; only a dense CPU or CUDA tensor "
      "takes another's, or two tensors of the same kind. Make the value "
      "with the tensor's device and layout first, e.g. value.to(t.device)");
  TURNOUT_CHECK(!requiresGrad(self) || isFloatingType(value.scalar_type()),
                ErrorKind::InvalidArgument,
                "Tensor.data = value (set_data): data set to a tensor that "
                "requires gradients must be floating point or complex dtype; "
                "the value is ",
                toString(value.scalar_type()),
                ". Convert it first (value.float()) or call "
                "requires_grad_(False) on the tensor");
  AutogradMeta* meta = getAutogradMeta(self);
  if (meta != nullptr && (self.scalar_type() != value.scalar_type() ||
                          self.device() != value.device())) {
    // Its recorded input metadata is out of date, as torch resets it.
    meta->grad_accumulator.reset();
  }
  self.unsafeGetTensorImpl()->shallow_copy_from(*value.unsafeGetTensorImpl());
}

bool requiresGrad(const Tensor& t) {
  const AutogradMeta* meta = getAutogradMeta(t);
  return meta != nullptr && (meta->requires_grad || meta->grad_fn != nullptr);
}

bool isLeaf(const Tensor& t) {
  const AutogradMeta* meta = getAutogradMeta(t);
  return meta == nullptr || meta->grad_fn == nullptr;
}

void setRequiresGrad(const Tensor& t, bool flag) {
  TURNOUT_CHECK(isLeaf(t), ErrorKind::InvalidArgument,
                "you can only change requires_grad flags of leaf variables. "
                "If you want to use a computed variable in a subgraph that "
                "doesn't require differentiation use var_no_grad = "
                "var.detach().");
  TURNOUT_CHECK(!flag || isFloatingType(t.scalar_type()),
                ErrorKind::InvalidArgument,
                "only Tensors of floating point dtype can require gradients "
                "(got ", toString(t.scalar_type()), ")");
  if (!flag && getAutogradMeta(t) == nullptr) return;
  materialize(t).requires_grad = flag;
}

Tensor grad(const Tensor& t) {
  const AutogradMeta* meta = getAutogradMeta(t);
  if (meta == nullptr) return Tensor();
  return meta->retained_grad ? *meta->retained_grad : meta->grad;
}

void setGrad(const Tensor& t, Tensor grad) {
  AutogradMeta& meta = materialize(t);
  (meta.retained_grad ? *meta.retained_grad : meta.grad) = std::move(grad);
}

std::function<void()> registerHook(const Tensor& t, TensorHook hook) {
  TURNOUT_CHECK(requiresGrad(t), ErrorKind::InvalidArgument,
                "cannot register a hook on a tensor that does not require "
                "grad (call requires_grad_() on the leaf first)");
  AutogradMeta& meta = materialize(t);
  if (meta.grad_fn) {
    std::weak_ptr<Node> node = meta.grad_fn;
    const uint64_t key = meta.grad_fn->addPreHook(meta.output_nr,
                                                  std::move(hook));
    return [node, key] {
      if (std::shared_ptr<Node> n = node.lock()) n->removePreHook(key);
    };
  }
  if (!meta.leaf_hooks) meta.leaf_hooks = std::make_shared<LeafHooks>();
  const uint64_t key = meta.leaf_hooks->next_key++;
  meta.leaf_hooks->hooks.emplace_back(key, std::move(hook));
  std::weak_ptr<LeafHooks> hooks = meta.leaf_hooks;
  return [hooks, key] {
    if (std::shared_ptr<LeafHooks> h = hooks.lock()) {
      for (auto it = h->hooks.begin(); it != h->hooks.end(); ++it) {
        if (it->first == key) {
          h->hooks.erase(it);
          return;
        }
      }
    }
  };
}

void retainGrad(const Tensor& t) {
  TURNOUT_CHECK(requiresGrad(t), ErrorKind::InvalidArgument,
                "can't retain_grad on a tensor that does not require grad");
  if (isLeaf(t)) return;  // a leaf's .grad is kept anyway
  AutogradMeta& meta = materialize(t);
  if (meta.retained_grad) return;
  meta.retained_grad = std::make_shared<Tensor>(std::move(meta.grad));
  std::shared_ptr<Tensor> slot = meta.retained_grad;
  registerHook(t, [slot](const Tensor& g) {
    *slot = slot->defined() ? detail::addGrads(*slot, g) : g.clone();
    return Tensor();
  });
}

bool retainsGrad(const Tensor& t) {
  const AutogradMeta* meta = getAutogradMeta(t);
  return meta != nullptr && meta->retained_grad != nullptr && !isLeaf(t);
}

std::shared_ptr<Node> gradFn(const Tensor& t) {
  const AutogradMeta* meta = getAutogradMeta(t);
  return meta != nullptr ? meta->grad_fn : nullptr;
}

namespace {

bool answersSizes(const Tensor& t) {
  return t.unsafeGetTensorImpl()->python_custom() & TensorImpl::kCustomSizes;
}

}  // namespace

Edge gradientEdge(const Tensor& t) {
  AutogradMeta* meta = getAutogradMeta(t);
  if (meta == nullptr) return Edge{};
  if (meta->grad_fn) return Edge{meta->grad_fn, meta->output_nr};
  if (!meta->requires_grad) return Edge{};
  std::shared_ptr<Node> accumulator = meta->grad_accumulator.lock();
  if (!accumulator) {
    accumulator = std::make_shared<AccumulateGrad>(t);
    meta->grad_accumulator = accumulator;
    if (answersSizes(t)) gradientSizes(t);  // its handler is asked here
  }
  return Edge{accumulator, 0};
}

DimVector gradientSizes(const Tensor& t) {
  if (__builtin_expect(!answersSizes(t), 1)) {
    const IntArrayRef sizes = t.sizes();
    return DimVector(sizes.begin(), sizes.end());
  }
  AutogradMeta& meta = materialize(t);
  if (!meta.answered_sizes) {
    const IntArrayRef sizes = t.sizes();
    meta.answered_sizes.emplace(sizes.begin(), sizes.end());
  }
  return *meta.answered_sizes;
}

void setHistory(const Tensor& output, const std::shared_ptr<Node>& fn) {
  AutogradMeta& meta = materialize(output);
  meta.grad_fn = fn;
  meta.output_nr = fn->add_input();
  if (answersSizes(output)) {
    // As torch 1.13's, which records an output's metadata with its history.
    meta.answered_sizes.reset();
    gradientSizes(output);
  }
}

void checkInplace(const Tensor& t, const char* op_name) {
  const AutogradMeta* meta = getAutogradMeta(t);
  TURNOUT_CHECK(meta == nullptr || meta->grad_fn != nullptr ||
                    !meta->requires_grad,
                ErrorKind::InvalidArgument, op_name,
                ": a leaf Variable that requires grad is being used in an "
                "in-place operation.");
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  TURNOUT_INTERNAL_ASSERT(grads.size() == 1, "AccumulateGrad got ",
                          grads.size(), " gradients");
  Tensor& incoming = grads[0];
  if (!incoming.defined()) return {};
  AutogradMeta& meta = materialize(variable_);
  if (meta.leaf_hooks && !meta.leaf_hooks->hooks.empty()) {
    // A copy: a hook may remove itself (or others) while running.
    auto hooks = meta.leaf_hooks->hooks;
    for (auto& [key, hook] : hooks) {
      incoming = detail::applyGradHook(hook, incoming, "a leaf");
    }
  }
  // As torch 1.13 accumulates (what a Python mode sees, and .grad's
  // identity): the first gradient is kept as it is (detached) when no one
  // else holds it, grad mode is off (no create_graph) and its layout is
  // the variable's; else a copy laid out as the variable (empty_like +
  // copy_; recorded under create_graph).
  // Later ones are added in place (add_: .grad stays the same tensor)
  // without grad mode, out of place with it (so that .grad's graph grows).
  // `expected_uses`: grads[0] itself, and the engine's copy of the inputs
  // for post hooks.
  if (!meta.grad.defined()) {
    const uint64_t expected_uses = hasPostHooks() ? 2 : 1;
    if (!GradMode::is_enabled() && incoming.use_count() <= expected_uses &&
        detail::obeysLayout(incoming, variable_)) {
      meta.grad = detail::detachGrad(incoming);
    } else {
      meta.grad = detail::cloneObeyingLayout(incoming, variable_);
    }
  } else if (!GradMode::is_enabled()) {
    detail::addGradsInplace(meta.grad, incoming);
  } else {
    meta.grad = detail::addGrads(meta.grad, incoming);
  }
  return {};
}

}  // namespace autograd
}  // namespace turnout
