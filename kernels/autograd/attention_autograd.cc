// The Autograd kernels of the operators of kernels/attention.cc that are not
// composite-implicit:
//   div.Tensor_mode: without a rounding mode, div.Tensor itself (its own
//     gradient); with one, the quotient is piecewise constant and both
//     inputs get zero gradients, as torch 1.13's (DivBackward2);
//   logical_or, logical_or_: not differentiable (fallthrough).
#include <optional>
#include <string>

#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/operator_handle.h"
#include "kernels/autograd/function_node.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"

namespace turnout {
namespace autograd {
namespace {

using detail::belowAutograd;
using detail::record;
using detail::shouldRecord;
using F = FunctionNode;

using DivModeSig = Tensor(const Tensor&, const Tensor&,
                          const std::optional<std::string>&);

Tensor divModeKernel(const Tensor& self, const Tensor& other,
                     const std::optional<std::string>& mode) {
  if (!mode) return div(self, other);  // div.Tensor records its own node
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::div", "Tensor_mode")
                             .typed<DivModeSig>();
  const bool rec = shouldRecord("div", self, other);
  Tensor out = belowAutograd([&] { return op.call(self, other, mode); });
  if (rec) {
    Node* node = record(
        "DivBackward2", {self, other}, out, [](const F& n, const Tensor& g) {
          // The node sums each gradient to its input's shape.
          variable_list grads(2);
          for (size_t i = 0; i < 2; ++i) {
            if (n.needsGrad(i)) grads[i] = zeros_like(g);
          }
          return grads;
        });
    if (node != nullptr) node->addSaved("rounding_mode", IValue(*mode));
  }
  return out;
}

}  // namespace
}  // namespace autograd
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, Autograd, m) {
  using namespace turnout::autograd;  // NOLINT: the kernels above
  m.impl("div.Tensor_mode", TURNOUT_FN(divModeKernel));
  for (const char* name : {"logical_or", "logical_or_"}) {
    m.impl(name, turnout::CppFunction::makeFallthrough());
  }
}
