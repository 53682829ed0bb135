// A user's library of operators, written as it would be outside turnout's
// tree, against the installed headers: one operator, myops::scaled_add, with
// a CPU kernel, a Meta kernel (shapes only) and an autograd kernel.
//
// Build it with make (pkg-config), CMake (find_package) or Bazel
// (@turnout//runtime:turnout): see README.md beside this file.
#include "my_ops.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/function_node.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/ops.h"

using turnout::ErrorKind;
using turnout::Tensor;

namespace {

// What every kernel checks first, so that CPU and Meta fail alike.
void checkInputs(const Tensor& a, const Tensor& b) {
  TURNOUT_CHECK(a.sizes() == b.sizes(), ErrorKind::InvalidArgument,
                "myops::scaled_add: a and b must have the same shape, got ",
                a.toString(), " and ", b.toString());
  TURNOUT_CHECK(
      a.scalar_type() == turnout::kFloat && b.scalar_type() == turnout::kFloat,
      ErrorKind::Type, "myops::scaled_add: expected Float tensors, got ",
      a.toString(), " and ", b.toString());
}

// The output: a new contiguous tensor of a's shape, dtype and device.
Tensor newLike(const Tensor& a) {
  return turnout::empty(
      a.sizes(), turnout::TensorOptions(a.scalar_type()).device(a.device()));
}

// The CPU kernel: the arithmetic, on contiguous copies of the inputs.
Tensor scaled_add_cpu(const Tensor& a, const Tensor& b, double alpha) {
  checkInputs(a, b);
  const Tensor ac = a.contiguous();
  const Tensor bc = b.contiguous();
  Tensor out = newLike(a);
  const float* pa = ac.data_ptr<float>();
  const float* pb = bc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  const float s = static_cast<float>(alpha);
  for (int64_t i = 0; i < out.numel(); ++i) po[i] = pa[i] + s * pb[i];
  return out;
}

// The Meta kernel: the same checks and the output's shape and dtype, no
// data. The graph executor's shape propagation runs operators on meta
// tensors, so graphs that call myops::scaled_add get typed outputs.
Tensor scaled_add_meta(const Tensor& a, const Tensor& b, double alpha) {
  checkInputs(a, b);
  return newLike(a);
}

// The autograd kernel, registered at the Autograd alias key (AutogradCPU,
// AutogradMeta, ...). It is written against the public autograd API
// (FunctionNode, setHistory), as kernels/autograd/autograd_kernels.cc is:
//   1. call the operator again below autograd, which reaches CPU or Meta;
//   2. when grad mode is on and an input requires grad, make the output's
//      grad_fn a node with the derivative: d/da = g, d/db = alpha * g.
Tensor scaled_add_autograd(const Tensor& a, const Tensor& b, double alpha) {
  static const auto op =
      turnout::Dispatcher::singleton()
          .findSchemaOrThrow("myops::scaled_add", "")
          .typed<Tensor(const Tensor&, const Tensor&, double)>();
  Tensor out;
  {
    turnout::AutoDispatchBelowAutograd below;
    out = op.call(a, b, alpha);
  }
  namespace ag = turnout::autograd;
  if (ag::GradMode::is_enabled() &&
      (ag::requiresGrad(a) || ag::requiresGrad(b))) {
    auto node = std::make_shared<ag::FunctionNode>(
        "ScaledAddBackward0", std::vector<Tensor>{a, b},
        [alpha](const ag::FunctionNode&, const Tensor& g) {
          return ag::variable_list{g, turnout::mul(g, alpha)};
        });
    ag::setHistory(out, node);
  }
  return out;
}

}  // namespace

// The schema, once per namespace. `float` in a schema is a C++ double.
TURNOUT_LIBRARY(myops, m) {
  m.def("scaled_add(Tensor a, Tensor b, float alpha) -> Tensor");
}

TURNOUT_LIBRARY_IMPL(myops, CPU, m) {
  m.impl("scaled_add", TURNOUT_FN(scaled_add_cpu));
}

TURNOUT_LIBRARY_IMPL(myops, Meta, m) {
  m.impl("scaled_add", TURNOUT_FN(scaled_add_meta));
}

TURNOUT_LIBRARY_IMPL(myops, Autograd, m) {
  m.impl("scaled_add", TURNOUT_FN(scaled_add_autograd));
}

namespace myops {

Tensor scaled_add(const Tensor& a, const Tensor& b, double alpha) {
  // Looked up once; the call goes through the dispatcher every time, so
  // autograd, a dispatch mode or another backend's kernel take part.
  static const auto op =
      turnout::Dispatcher::singleton()
          .findSchemaOrThrow("myops::scaled_add", "")
          .typed<Tensor(const Tensor&, const Tensor&, double)>();
  return op.call(a, b, alpha);
}

}  // namespace myops
