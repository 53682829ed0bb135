// tanh_backward and sigmoid_backward: the gradients of tanh and sigmoid
// from their outputs, as torch 1.13's backward formulas call them (so that
// a first gradient's grad_fn is TanhBackwardBackward0 /
// SigmoidBackwardBackward0 and a Python mode sees the operator during
// backward):
//
//   tanh_backward(g, y)    = g * (1 - y * y)
//   sigmoid_backward(g, y) = g * (1 - y) * y
//
// CPU and Meta kernels here (one template over kCpu, as elementwise_kernels.cc
// writes them); CUDA in cuda/pointwise.cc through the elementwise loops; the
// .grad_input out= overloads in out_variants.cc; their own derivatives in
// autograd/autograd_kernels.cc. Dtypes as torch 1.13's: the result type of
// the two inputs; the CPU kernels compute floating dtypes only
// ("\"tanh_backward_cpu\" not implemented for 'Long'"; tanh_backward refuses
// Half too), the Meta kernels accept every dtype, as torch's.
#include <initializer_list>
#include <optional>
#include <string_view>

#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/operator_handle.h"
#include "kernels/aten_tags.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/elementwise.h"
#include "kernels/loops.h"
#include "kernels/output_layout.h"
#include "kernels/tensor_utils.h"
#include "kernels/type_promotion.h"

namespace turnout {
namespace {

enum class OutputGrad { Tanh, Sigmoid };

// A 0-dim CPU tensor goes with a tensor on any device, as a number would.
bool isCpuScalar(const Tensor& t) { return t.dim() == 0 && t.is_cpu(); }

template <bool kCpu, OutputGrad kKind>
Tensor outputGrad(const Tensor& grad_output, const Tensor& output) {
  constexpr const char* op =
      kKind == OutputGrad::Tanh ? "tanh_backward" : "sigmoid_backward";
  constexpr const char* cpu_name = kKind == OutputGrad::Tanh
                                       ? "tanh_backward_cpu"
                                       : "sigmoid_backward_cpu";
  TURNOUT_CHECK(grad_output.defined() && output.defined(),
                ErrorKind::InvalidArgument, op,
                ": expected grad_output and output to be defined tensors, "
                "but got an undefined one");
  TURNOUT_CHECK(grad_output.device() == output.device() ||
                    isCpuScalar(grad_output) || isCpuScalar(output),
                ErrorKind::InvalidArgument,
                "Expected all tensors to be on the same device, but found at "
                "least two devices, ",
                grad_output.device(), " and ", output.device(), "!");
  const ScalarType dtype = resultType(grad_output, output);
  const DimVector sizes =
      inferBroadcastSize(grad_output.sizes(), output.sizes());
  const Device device =
      isCpuScalar(grad_output) ? output.device() : grad_output.device();
  Tensor out =
      emptyElementwiseOutput(sizes, dtype, device, {&grad_output, &output});
  if constexpr (kCpu) {
    TURNOUT_CHECK(kKind != OutputGrad::Tanh || dtype != ScalarType::Half,
                  ErrorKind::NotImplemented, "\"", cpu_name,
                  "\" not implemented for 'Half'");
    visitFloatingDtype(dtype, cpu_name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using M = OpMathType<T>;
      if (out.numel() == 0) return;
      cpuKernel(out, castTo(grad_output, dtype), castTo(output, dtype),
                [](T g, T y) -> T {
                  const M gm(g);
                  const M ym(y);
                  if constexpr (kKind == OutputGrad::Tanh) {
                    return T(gm * (M(1) - ym * ym));
                  } else {
                    return T(gm * (M(1) - ym) * ym);
                  }
                });
    });
  }
  return out;
}

}  // namespace

Tensor tanh_backward(const Tensor& grad_output, const Tensor& output) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::tanh_backward", "")
                             .typed<Tensor(const Tensor&, const Tensor&)>();
  return op.call(grad_output, output);
}
Tensor sigmoid_backward(const Tensor& grad_output, const Tensor& output) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::sigmoid_backward", "")
                             .typed<Tensor(const Tensor&, const Tensor&)>();
  return op.call(grad_output, output);
}

}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);
  m.def("tanh_backward(Tensor grad_output, Tensor output) -> Tensor");
  m.def("sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor");
}

TURNOUT_LIBRARY_IMPL(aten, CPU, m) {
  using turnout::OutputGrad;
  m.impl("tanh_backward",
         TURNOUT_FN((turnout::outputGrad<true, OutputGrad::Tanh>)));
  m.impl("sigmoid_backward",
         TURNOUT_FN((turnout::outputGrad<true, OutputGrad::Sigmoid>)));
}
TURNOUT_LIBRARY_IMPL(aten, Meta, m) {
  using turnout::OutputGrad;
  m.impl("tanh_backward",
         TURNOUT_FN((turnout::outputGrad<false, OutputGrad::Tanh>)));
  m.impl("sigmoid_backward",
         TURNOUT_FN((turnout::outputGrad<false, OutputGrad::Sigmoid>)));
}
