#include "kernels/autograd/function_node.h"

#include <string>

#include "dispatcher/core/error.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/copy.h"
#include "kernels/factory.h"
#include "kernels/reduce.h"
#include "kernels/shape.h"

namespace turnout {
namespace autograd {

Tensor sumToSize(const Tensor& grad, IntArrayRef sizes) {
  if (grad.sizes() == sizes) return grad;
  // A 0-dim input takes the sum of everything (SumBackward0 under
  // create_graph, as torch 1.13's sum_to), not a keepdim sum and a view.
  if (sizes.empty()) return sum(grad);
  const int64_t gd = grad.dim();
  const int64_t sd = static_cast<int64_t>(sizes.size());
  const int64_t lead = gd - sd;
  bool ok = lead >= 0;
  std::vector<int64_t> dims;
  for (int64_t i = 0; ok && i < gd; ++i) {
    if (i < lead) {
      dims.push_back(i);
      continue;
    }
    const int64_t want = sizes[i - lead];
    const int64_t have = grad.size(i);
    if (want == have) continue;
    if (want == 1) {
      dims.push_back(i);
    } else {
      ok = false;
    }
  }
  TURNOUT_CHECK(ok, ErrorKind::InvalidArgument, "sumToSize: a gradient of shape ",
                shapeString(grad.sizes()), " cannot be summed to shape ",
                shapeString(sizes),
                " (the input's shape must broadcast to the gradient's)");
  Tensor r = dims.empty() ? grad : sum(grad, IntArrayRef(dims), /*keepdim=*/true);
  return r.sizes() == sizes ? r : reshape(r, sizes);
}

FunctionNode::FunctionNode(const char* name, absl::Span<const Tensor> inputs,
                           Formula formula)
    : name_(name), formula_(std::move(formula)) {
  std::vector<Edge> edges;
  edges.reserve(inputs.size());
  inputs_.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    edges.push_back(gradientEdge(t));
    if (t.defined() && edges.back().isValid()) {
      // A subclass that answers its sizes was asked when the tensor joined
      // autograd (gradientSizes), as torch 1.13's InputMetadata.
      inputs_.push_back({gradientSizes(t), t.scalar_type()});
    } else {
      // No gradient flows to it: its sizes are never read.
      inputs_.push_back({DimVector(), ScalarType::Float});
    }
  }
  set_next_edges(std::move(edges));
}

variable_list FunctionNode::apply(variable_list&& grads) {
  TURNOUT_INTERNAL_ASSERT(grads.size() == 1, name_, " got ", grads.size(),
                          " gradients for its one output");
  if (!grads[0].defined()) return variable_list(inputs_.size());
  variable_list out = formula_(*this, grads[0]);
  TURNOUT_INTERNAL_ASSERT(out.size() == inputs_.size(), name_, " computed ",
                          out.size(), " gradients for ", inputs_.size(),
                          " inputs");
  for (size_t i = 0; i < out.size(); ++i) {
    Tensor& g = out[i];
    if (!g.defined() || !needsGrad(i)) {
      g = Tensor();
      continue;
    }
    g = sumToSize(g, inputs_[i].sizes);
    if (g.scalar_type() != inputs_[i].dtype) g = to(g, inputs_[i].dtype);
  }
  return out;
}

namespace detail {

bool shouldRecord(absl::Span<const Tensor> inputs, const char* op_name) {
  if (!GradMode::is_enabled()) return false;
  bool any = false;
  for (const Tensor& t : inputs) {
    const AutogradMeta* meta = getAutogradMeta(t);
    if (meta == nullptr) continue;
    if (!(meta->requires_grad || meta->grad_fn)) continue;
    any = true;
    if (meta->is_view) {
      const uint32_t now = t.unsafeGetTensorImpl()->version();
      TURNOUT_CHECK(
          now == meta->view_version, ErrorKind::NotImplemented, op_name,
          ": an input is a view (made by ", meta->grad_fn->name(),
          ") whose memory was modified in place after the view was taken "
          "(version ", meta->view_version, " then, ", now,
          " now); turnout's autograd does not rebase the history of views "
          "yet (issue 3). Take the view again after the in-place operation, "
          "or clone() it before.");
    }
  }
  return any;
}

Node* record(const char* name, absl::Span<const Tensor> inputs,
             const Tensor& output, FunctionNode::Formula formula,
             bool is_view) {
  // Only floating-point tensors carry gradients: an integer or bool result
  // (a cast, an argmax-like output) has no history and never requires grad.
  if (!isFloatingType(output.scalar_type())) return nullptr;
  auto node = std::make_shared<FunctionNode>(name, inputs, std::move(formula));
  setHistory(output, node);
  if (is_view) {
    AutogradMeta* meta = getAutogradMeta(output);
    meta->is_view = true;
    meta->view_version = output.unsafeGetTensorImpl()->version();
  }
  return node.get();
}

Tensor viewBackward(const char* name, const Tensor& g, IntArrayRef sizes,
                    std::function<Tensor(const Tensor&)> view_of) {
  const DimVector shape(sizes.begin(), sizes.end());
  return linearInGrad(
      name, g,
      [&](const Tensor& grad) {
        Tensor z = zeros(
            shape, TensorOptions(grad.scalar_type()).device(grad.device()));
        copy_(view_of(z), grad);
        return z;
      },
      view_of);  // a copy: `apply` above uses view_of too
}

Tensor linearInGrad(const char* name, const Tensor& g,
                    const std::function<Tensor(const Tensor&)>& apply,
                    std::function<Tensor(const Tensor&)> adjoint) {
  const bool rec = shouldRecord(name, g);
  Tensor out = belowAutograd([&] { return apply(g); });
  if (rec) {
    record(
        name, {g}, out,
        [adjoint = std::move(adjoint)](const FunctionNode&, const Tensor& gg) {
          return variable_list{adjoint(gg)};
        });
  }
  return out;
}

Tensor cloneWithHistory(const Tensor& self) { return clone(self); }

Tensor sumGradOver(const char* name, const Tensor& g, IntArrayRef dims,
                   absl::Span<const Tensor> others) {
  std::vector<Tensor> inputs{g};
  inputs.insert(inputs.end(), others.begin(), others.end());
  const bool rec = shouldRecord(inputs, name);
  Tensor out = belowAutograd([&] { return sum(g, dims); });
  if (rec) {
    const DimVector g_sizes(g.sizes().begin(), g.sizes().end());
    DimVector kept = g_sizes;
    for (int64_t d : dims) kept[static_cast<size_t>(d)] = 1;
    std::vector<DimVector> other_sizes;
    for (const Tensor& t : others) {
      other_sizes.emplace_back(
          t.defined() ? DimVector(t.sizes().begin(), t.sizes().end())
                      : DimVector());
    }
    record(
        name, inputs, out,
        [g_sizes, kept, other_sizes](const FunctionNode& n, const Tensor& gg) {
          variable_list grads(1 + other_sizes.size());
          if (n.needsGrad(0)) grads[0] = expand(reshape(gg, kept), g_sizes);
          for (size_t i = 0; i < other_sizes.size(); ++i) {
            if (n.needsGrad(i + 1)) {
              grads[i + 1] =
                  zeros(other_sizes[i],
                        TensorOptions(gg.scalar_type()).device(gg.device()));
            }
          }
          return grads;
        });
  }
  return out;
}

void checkInplaceAllowed(const Tensor& self, bool recording,
                         const char* op_name) {
  if (!recording) return;
  checkInplace(self, op_name);
  const AutogradMeta* meta = getAutogradMeta(self);
  TURNOUT_CHECK(meta == nullptr || !meta->is_view, ErrorKind::NotImplemented,
                op_name,
                ": in-place modification of a view (made by ",
                meta && meta->grad_fn ? meta->grad_fn->name() : "a view op",
                ") of a tensor that requires grad is not supported by "
                "turnout's autograd yet (issue 3): the base's history would "
                "not see the change. clone() the view first, or modify the "
                "base.");
}

}  // namespace detail
}  // namespace autograd
}  // namespace turnout
