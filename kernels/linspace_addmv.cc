// aten::linspace (and .out): CPU and Meta kernels behind a BackendSelect
// kernel, as the other factories; aten::addmv (and addmv_, .out) as
// CompositeExplicitAutograd kernels over matmul, mul, add and copy_ (as
// torch 1.13's, a Python mode sees addmv itself), so their Meta shapes and
// other devices come from those operators; their Autograd kernels are in
// kernels/autograd/misc_autograd.cc.
// Front end in linspace_addmv.h.
#include "kernels/linspace_addmv.h"

#include <cstdint>
#include <optional>

#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/operator_handle.h"
#include "kernels/aten_tags.h"
#include "kernels/copy.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/factory_utils.h"
#include "kernels/loops.h"
#include "kernels/linalg.h"
#include "kernels/reduce_utils.h"
#include "kernels/shape.h"
#include "kernels/tensor_utils.h"
#include "kernels/type_promotion.h"

namespace turnout {
namespace {

using Dt = std::optional<ScalarType>;
using Lo = std::optional<Layout>;
using Dv = std::optional<Device>;
using Pin = std::optional<bool>;

// ---- linspace --------------------------------------------------------------------

// Writes the `steps` values into out (contiguous, CPU): the first half
// counts up from start, the second down from end, so both ends are exact.
void fillLinspace(const Tensor& out, const Scalar& start, const Scalar& end,
                  int64_t steps) {
  if (!out.is_cpu() || steps == 0) return;
  visitDtype(out.scalar_type(), "linspace", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data_ptr<T>();
    const double a = start.toDouble();
    const double b = end.toDouble();
    if (steps == 1) {
      p[0] = convertElement<T>(a);
      return;
    }
    const double step = (b - a) / static_cast<double>(steps - 1);
    const int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; ++i) {
      const double v = i < half ? a + step * static_cast<double>(i)
                                : b - step * static_cast<double>(steps - i - 1);
      p[i] = convertElement<T>(v);
    }
  });
}

void checkSteps(int64_t steps) {
  TURNOUT_CHECK(steps >= 0, ErrorKind::InvalidArgument,
                "number of steps must be non-negative");
}

Tensor linspaceKernel(const Scalar& start, const Scalar& end, int64_t steps,
                      Dt dtype, Lo layout, Dv device, Pin pin) {
  checkSteps(steps);
  TURNOUT_CHECK(layout.value_or(Layout::Strided) == Layout::Strided,
                ErrorKind::NotImplemented, "linspace(): layout ", *layout,
                " is not supported; only strided tensors are");
  TURNOUT_CHECK(!pin.value_or(false), ErrorKind::NotImplemented,
                "linspace(): pin_memory=True is not supported yet");
  Tensor out = emptyTensor({steps}, dtype.value_or(kDefaultFloatType),
                           device.value_or(Device(DeviceType::CPU)));
  fillLinspace(out, start, end, steps);
  return out;
}

Tensor& linspaceOut(const Scalar& start, const Scalar& end, int64_t steps,
                    Tensor& out) {
  checkSteps(steps);
  reduce_internal::resizeOutput(out, {steps}, "linspace.out");
  if (out.is_contiguous()) {
    fillLinspace(out, start, end, steps);
  } else {
    Tensor values = emptyTensor({steps}, out.scalar_type(), out.device());
    fillLinspace(values, start, end, steps);
    copyCast(out, values);
  }
  return out;
}

using LinspaceSig = Tensor(const Scalar&, const Scalar&, int64_t, Dt, Lo, Dv,
                           Pin);

template <class Sig>
TypedOperatorHandle<Sig> lookup(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

Tensor linspaceBs(DispatchKeySet, const Scalar& start, const Scalar& end,
                  int64_t steps, Dt dtype, Lo layout, Dv device, Pin pin) {
  static const auto op = lookup<LinspaceSig>("aten::linspace", "");
  return op.redispatch(
      backendSelectKeySet(dtype.value_or(kDefaultFloatType),
                          layout.value_or(Layout::Strided),
                          device.value_or(Device(DeviceType::CPU))),
      start, end, steps, dtype, layout, device, pin);
}

// ---- addmv ------------------------------------------------------------------------

bool isZero(const Scalar& s) {
  return s.isFloatingPoint() ? s.toDouble() == 0.0 : s.toLong() == 0;
}
bool isOne(const Scalar& s) {
  return s.isFloatingPoint() ? s.toDouble() == 1.0 : s.toLong() == 1;
}

// beta * self + alpha * (mat @ vec); with beta == 0, self's values (NaN
// included) are ignored, as in BLAS and PyTorch.
Tensor addmvImpl(const Tensor& self, const Tensor& mat, const Tensor& vec,
                 const Scalar& beta, const Scalar& alpha) {
  TURNOUT_CHECK(self.defined() && mat.defined() && vec.defined(),
                ErrorKind::InvalidArgument,
                "addmv: expected defined tensors, but got an undefined one");
  TURNOUT_CHECK(mat.dim() == 2 && vec.dim() == 1 && self.dim() <= 1,
                ErrorKind::InvalidArgument,
                "vector + matrix @ vector expected, got ", self.dim(), ", ",
                mat.dim(), ", ", vec.dim());
  const bool self_fits =
      self.dim() == 0 || self.size(0) == 1 || self.size(0) == mat.size(0);
  TURNOUT_CHECK(mat.size(1) == vec.size(0) && self_fits,
                ErrorKind::InvalidArgument, "size mismatch, got ",
                self.dim() == 0 ? int64_t{1} : self.size(0), ", ", mat.size(0),
                "x", mat.size(1), ",", vec.size(0));
  Tensor product = turnout::matmul(mat, vec);
  if (!isOne(alpha)) product = turnout::mul(product, alpha);
  if (isZero(beta)) {
    // The result still has self's dtype promotion and mat @ vec's shape.
    return self.scalar_type() == product.scalar_type()
               ? product
               : turnout::to(product, resultType(self, product));
  }
  return turnout::add(product, self, beta);
}

Tensor& addmvInplace(Tensor& self, const Tensor& mat, const Tensor& vec,
                     const Scalar& beta, const Scalar& alpha) {
  const Tensor result = addmvImpl(self, mat, vec, beta, alpha);
  TURNOUT_CHECK(self.sizes() == result.sizes(), ErrorKind::InvalidArgument,
                "output with shape ", shapeString(self.sizes()),
                " doesn't match the broadcast shape ",
                shapeString(result.sizes()));
  turnout::copy_(self, result);
  return self;
}

Tensor& addmvOut(const Tensor& self, const Tensor& mat, const Tensor& vec,
                 const Scalar& beta, const Scalar& alpha, Tensor& out) {
  const Tensor result = addmvImpl(self, mat, vec, beta, alpha);
  reduce_internal::resizeOutput(out, result.sizes(), "addmv.out");
  turnout::copy_(out, result);
  return out;
}

}  // namespace

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps,
                TensorOptions o) {
  static const auto op = lookup<LinspaceSig>("aten::linspace", "");
  return op.call(start, end, steps, o.dtype_opt(), o.layout_opt(),
                 o.device_opt(), std::nullopt);
}

Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec,
             const Scalar& beta, const Scalar& alpha) {
  static const auto op =
      lookup<Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&,
                    const Scalar&)>("aten::addmv", "");
  return op.call(self, mat, vec, beta, alpha);
}

}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);
  m.def(
      "linspace(Scalar start, Scalar end, int steps, *, ScalarType? "
      "dtype=None, Layout? layout=None, Device? device=None, bool? "
      "pin_memory=None) -> Tensor");
  m.def(
      "linspace.out(Scalar start, Scalar end, int steps, *, Tensor(a!) out) "
      "-> Tensor(a!)");
  m.def(
      "addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar "
      "alpha=1) -> Tensor");
  m.def(
      "addmv.out(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, "
      "Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  m.def(
      "addmv_(Tensor(a!) self, Tensor mat, Tensor vec, *, Scalar beta=1, "
      "Scalar alpha=1) -> Tensor(a!)");
}

TURNOUT_LIBRARY_IMPL(aten, BackendSelect, m) {
  m.impl("linspace", TURNOUT_FN(turnout::linspaceBs));
}
TURNOUT_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("linspace", TURNOUT_FN(turnout::linspaceKernel));
  m.impl("linspace.out", TURNOUT_FN(turnout::linspaceOut));
}
TURNOUT_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("linspace", TURNOUT_FN(turnout::linspaceKernel));
  m.impl("linspace.out", TURNOUT_FN(turnout::linspaceOut));
}
// As torch 1.13's, not composite-implicit: a Python mode sees addmv itself.
// Gradients in kernels/autograd/misc_autograd.cc; addmv.out has none.
TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("addmv", TURNOUT_FN(turnout::addmvImpl));
  m.impl("addmv_", TURNOUT_FN(turnout::addmvInplace));
  m.impl("addmv.out", TURNOUT_FN(turnout::addmvOut));
}
