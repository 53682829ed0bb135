// A user's library of operators, written as it would be outside turnout's
// tree, against the installed headers: one operator, myops::scaled_add, with
// a CPU kernel, a Meta kernel (shapes only) and an autograd kernel.
//
// Build it with make (pkg-config), CMake (find_package) or Bazel
// (@turnout//runtime:turnout): see README.md beside this file.
#include "my_ops.h"

#include <cstdint>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "kernels/autograd/custom_function.h"
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
// AutogradMeta, ...), written with the public autograd::Function API
// (kernels/autograd/custom_function.h):
//   forward: call the operator again below autograd, which reaches CPU or
//     Meta, and keep alpha for backward;
//   backward: d/da = g, d/db = alpha * g, nothing for alpha.
// apply() records backward only when grad mode is on and an input requires
// grad; the node is called "ScaledAddBackward".
struct ScaledAdd : turnout::autograd::Function<ScaledAdd> {
  static Tensor forward(turnout::autograd::AutogradContext* ctx,
                        const Tensor& a, const Tensor& b, double alpha) {
    static const auto op =
        turnout::Dispatcher::singleton()
            .findSchemaOrThrow("myops::scaled_add", "")
            .typed<Tensor(const Tensor&, const Tensor&, double)>();
    ctx->saved_data["alpha"] = alpha;
    turnout::AutoDispatchBelowAutograd below;
    return op.call(a, b, alpha);
  }
  static turnout::autograd::variable_list backward(
      turnout::autograd::AutogradContext* ctx,
      turnout::autograd::variable_list grads) {
    const double alpha = ctx->saved_data["alpha"].toDouble();
    return {grads[0], turnout::mul(grads[0], alpha), Tensor()};
  }
};

Tensor scaled_add_autograd(const Tensor& a, const Tensor& b, double alpha) {
  return ScaledAdd::apply(a, b, alpha);
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
