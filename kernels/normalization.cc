// layer_norm (CompositeImplicitAutograd, onto native_layer_norm, as torch
// 1.13's), native_layer_norm (CompositeExplicitAutograd over the reduction
// and elementwise operators: one kernel for CPU, Meta and CUDA; its
// gradient is in autograd/nn_autograd.cc) and native_layer_norm_backward
// (CompositeExplicitAutograd too, with torch 1.13's double backward in
// nn_autograd.cc). See nn.h.
//
// The input is normalised over its last normalized_shape.size() dimensions;
// mean and rstd keep the leading dimensions and have size 1 in the others,
// as torch's.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "absl/strings/str_join.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/operator_handle.h"
#include "kernels/aten_tags.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/nn.h"
#include "kernels/parallel.h"
#include "kernels/reduce.h"
#include "kernels/shape.h"
#include "kernels/tensor_utils.h"
#include "kernels/unary_math.h"

namespace turnout {
namespace {

template <class Sig>
TypedOperatorHandle<Sig> lookup(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

std::string shapeText(IntArrayRef s) {
  return "[" + absl::StrJoin(s, ", ") + "]";
}

// torch's checks of layer_norm's arguments. Returns the first normalised
// dimension.
int64_t checkLayerNormInputs(const char* op, const Tensor& input,
                             IntArrayRef normalized_shape,
                             const std::optional<Tensor>& weight,
                             const std::optional<Tensor>& bias) {
  TURNOUT_CHECK(input.defined(), ErrorKind::InvalidArgument, op,
                ": expected input to be a defined tensor");
  const int64_t n = static_cast<int64_t>(normalized_shape.size());
  TURNOUT_CHECK(n >= 1, ErrorKind::InvalidArgument,
                "Expected normalized_shape to be at least 1-dimensional, "
                "i.e., containing at least one element, but got "
                "normalized_shape = ",
                shapeText(normalized_shape));
  for (const auto* p : {&weight, &bias}) {
    if (!p->has_value() || !(*p)->defined()) continue;
    const Tensor& t = **p;
    TURNOUT_CHECK(
        t.sizes() == normalized_shape, ErrorKind::InvalidArgument,
        "Expected ", p == &weight ? "weight" : "bias",
        " to be of same shape as normalized_shape, but got ",
        p == &weight ? "weight" : "bias", " of shape ", shapeText(t.sizes()),
        " and normalized_shape = ", shapeText(normalized_shape));
  }
  const int64_t ndim = input.dim();
  bool matches = ndim >= n;
  for (int64_t i = 0; matches && i < n; ++i) {
    matches = input.size(ndim - n + i) == normalized_shape[i];
  }
  TURNOUT_CHECK(matches, ErrorKind::InvalidArgument,
                "Given normalized_shape=", shapeText(normalized_shape),
                ", expected input with shape [*, ",
                absl::StrJoin(normalized_shape, ", "),
                "], but got input of size", shapeText(input.sizes()));
  TURNOUT_CHECK(isFloatingType(input.scalar_type()), ErrorKind::NotImplemented,
                "\"LayerNormKernelImpl\" not implemented for '",
                toString(input.scalar_type()), "'");
  for (const auto* p : {&weight, &bias}) {
    if (!p->has_value() || !(*p)->defined()) continue;
    TURNOUT_CHECK((*p)->scalar_type() == input.scalar_type(), ErrorKind::Type,
                  "expected scalar type ", toString(input.scalar_type()),
                  " but found ", toString((*p)->scalar_type()));
  }
  return ndim - n;
}

std::vector<int64_t> trailingDims(int64_t axis, int64_t ndim) {
  std::vector<int64_t> dims;
  for (int64_t d = axis; d < ndim; ++d) dims.push_back(d);
  return dims;
}

std::vector<int64_t> leadingDims(int64_t axis) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < axis; ++d) dims.push_back(d);
  return dims;
}

bool present(const std::optional<Tensor>& t) {
  return t.has_value() && t->defined();
}

// Contiguous float or double CPU tensors (weight and bias contiguous or
// absent) in two passes over each row, with no temporary tensor: the
// composite below makes eight passes and allocates seven tensors, which
// dominated a transformer block's layer_norm at small sizes. Same
// arithmetic: mean and biased variance accumulated in double (four
// independent partial sums, so that the additions overlap), then
// ((x - mean) * rstd) * weight + bias in the tensor's dtype.
template <class F>
double sumInDouble(int64_t n, F term) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += term(i);
    s1 += term(i + 1);
    s2 += term(i + 2);
    s3 += term(i + 3);
  }
  for (; i < n; ++i) s0 += term(i);
  return (s0 + s1) + (s2 + s3);
}

template <class T>
void layerNormRows(const T* x, const T* w, const T* b, T* y, T* mean_out,
                   T* rstd_out, int64_t rows, int64_t n, double eps) {
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / (4 * n)),
               [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* xr = x + r * n;
      T* yr = y + r * n;
      const double sum = sumInDouble(
          n, [&](int64_t i) { return static_cast<double>(xr[i]); });
      const T mean = static_cast<T>(sum / static_cast<double>(n));
      const double sq = sumInDouble(n, [&](int64_t i) {
        const T c = xr[i] - mean;
        return static_cast<double>(c * c);
      });
      const T var = static_cast<T>(sq / static_cast<double>(n));
      const T rstd = static_cast<T>(1) / std::sqrt(var + static_cast<T>(eps));
      if (w != nullptr && b != nullptr) {
        for (int64_t i = 0; i < n; ++i) {
          yr[i] = (xr[i] - mean) * rstd * w[i] + b[i];
        }
      } else {
        for (int64_t i = 0; i < n; ++i) {
          T v = (xr[i] - mean) * rstd;
          if (w != nullptr) v = v * w[i];
          if (b != nullptr) v = v + b[i];
          yr[i] = v;
        }
      }
      mean_out[r] = mean;
      rstd_out[r] = rstd;
    }
  });
}

bool layerNormContiguousCpu(const Tensor& input, int64_t axis,
                            const std::optional<Tensor>& weight,
                            const std::optional<Tensor>& bias, double eps,
                            std::tuple<Tensor, Tensor, Tensor>& result) {
  const ScalarType dtype = input.scalar_type();
  if (!input.is_cpu() || !input.is_contiguous() || input.numel() == 0 ||
      (dtype != ScalarType::Float && dtype != ScalarType::Double)) {
    return false;
  }
  for (const auto* p : {&weight, &bias}) {
    if (present(*p) && (!(*p)->is_cpu() || !(*p)->is_contiguous())) {
      return false;
    }
  }
  std::vector<int64_t> stat_sizes(input.sizes().begin(), input.sizes().end());
  int64_t n = 1;
  for (size_t d = static_cast<size_t>(axis); d < stat_sizes.size(); ++d) {
    n *= stat_sizes[d];
    stat_sizes[d] = 1;
  }
  Tensor out = emptyTensor(input.sizes(), dtype, input.device());
  Tensor mean = emptyTensor(stat_sizes, dtype, input.device());
  Tensor rstd = emptyTensor(stat_sizes, dtype, input.device());
  const int64_t rows = input.numel() / n;
  auto run = [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    auto data = [](const std::optional<Tensor>& t) -> const T* {
      return present(t) ? static_cast<const T*>(t->data_ptr()) : nullptr;
    };
    layerNormRows<T>(static_cast<const T*>(input.data_ptr()), data(weight),
                     data(bias), static_cast<T*>(out.data_ptr()),
                     static_cast<T*>(mean.data_ptr()),
                     static_cast<T*>(rstd.data_ptr()), rows, n, eps);
  };
  if (dtype == ScalarType::Float) {
    run(static_cast<float*>(nullptr));
  } else {
    run(static_cast<double*>(nullptr));
  }
  result = {out, mean, rstd};
  return true;
}

std::tuple<Tensor, Tensor, Tensor> nativeLayerNorm(
    const Tensor& input, IntArrayRef normalized_shape,
    const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
    double eps) {
  const int64_t axis = checkLayerNormInputs("native_layer_norm", input,
                                            normalized_shape, weight, bias);
  // torch 1.13 normalises a contiguous copy of the input, so its results
  // are contiguous whatever the input's layout (the elementwise operators
  // below would keep a permuted input's order).
  if (!input.is_contiguous()) {
    return nativeLayerNorm(contiguous(input), normalized_shape, weight, bias,
                           eps);
  }
  if (std::tuple<Tensor, Tensor, Tensor> result;
      layerNormContiguousCpu(input, axis, weight, bias, eps, result)) {
    return result;
  }
  const std::vector<int64_t> dims = trailingDims(axis, input.dim());
  const Tensor mean = turnout::mean(input, dims, /*keepdim=*/true);
  const Tensor centered = sub(input, mean);
  // The biased variance.
  const Tensor var = turnout::mean(mul(centered, centered), dims, true);
  const Tensor rstd = turnout::rsqrt(add(var, eps));
  Tensor out = mul(centered, rstd);
  if (present(weight)) out = mul(out, *weight);
  if (present(bias)) out = add(out, *bias);
  return {out, mean, rstd};
}

Tensor layerNorm(const Tensor& input, IntArrayRef normalized_shape,
                 const std::optional<Tensor>& weight,
                 const std::optional<Tensor>& bias, double eps,
                 bool cudnn_enable) {
  (void)cudnn_enable;  // no cuDNN here
  checkLayerNormInputs("layer_norm", input, normalized_shape, weight, bias);
  return std::get<0>(
      native_layer_norm(input, normalized_shape, weight, bias, eps));
}

// d input = rstd (g - mean(g) - xhat mean(g xhat)), g = grad_out * weight;
// d weight = sum over the leading dims of grad_out xhat; d bias = of grad_out.
std::tuple<Tensor, Tensor, Tensor> nativeLayerNormBackward(
    const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape,
    const Tensor& mean, const Tensor& rstd, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias, std::vector<bool> output_mask) {
  TURNOUT_CHECK(grad_out.defined() && mean.defined() && rstd.defined(),
                ErrorKind::InvalidArgument,
                "native_layer_norm_backward: grad_out, mean and rstd must be "
                "defined tensors");
  TURNOUT_CHECK(output_mask.size() == 3, ErrorKind::InvalidArgument,
                "native_layer_norm_backward: output_mask must have 3 "
                "elements, got ",
                output_mask.size());
  const int64_t axis =
      checkLayerNormInputs("native_layer_norm_backward", input,
                           normalized_shape, weight, bias);
  TURNOUT_CHECK(grad_out.sizes() == input.sizes(), ErrorKind::InvalidArgument,
                "native_layer_norm_backward: grad_out of shape ",
                shapeText(grad_out.sizes()), " does not match input's ",
                shapeText(input.sizes()));
  TURNOUT_CHECK(!output_mask[1] || present(weight), ErrorKind::InvalidArgument,
                "native_layer_norm_backward: output_mask[1] asks for the "
                "gradient of weight, but weight is None");
  TURNOUT_CHECK(!output_mask[2] || present(bias), ErrorKind::InvalidArgument,
                "native_layer_norm_backward: output_mask[2] asks for the "
                "gradient of bias, but bias is None");
  const std::vector<int64_t> dims = trailingDims(axis, input.dim());
  const std::vector<int64_t> lead = leadingDims(axis);
  const Tensor xhat = mul(sub(input, mean), rstd);
  Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    const Tensor g = present(weight) ? mul(grad_out, *weight) : grad_out;
    const Tensor mean_g = turnout::mean(g, dims, true);
    const Tensor mean_gx = turnout::mean(mul(g, xhat), dims, true);
    grad_input = mul(sub(sub(g, mean_g), mul(xhat, mean_gx)), rstd);
  }
  if (output_mask[1]) {
    const Tensor prod = mul(grad_out, xhat);
    grad_weight = lead.empty() ? prod : turnout::sum(prod, lead);
  }
  if (output_mask[2]) {
    grad_bias = lead.empty() ? clone(grad_out) : turnout::sum(grad_out, lead);
  }
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                  const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  static const auto op =
      lookup<Tensor(const Tensor&, IntArrayRef, const std::optional<Tensor>&,
                    const std::optional<Tensor>&, double, bool)>(
          "aten::layer_norm", "");
  return op.call(input, normalized_shape, weight, bias, eps, true);
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(
    const Tensor& input, IntArrayRef normalized_shape,
    const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
    double eps) {
  static const auto op = lookup<std::tuple<Tensor, Tensor, Tensor>(
      const Tensor&, IntArrayRef, const std::optional<Tensor>&,
      const std::optional<Tensor>&, double)>("aten::native_layer_norm", "");
  return op.call(input, normalized_shape, weight, bias, eps);
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(
    const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape,
    const Tensor& mean, const Tensor& rstd, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias, std::array<bool, 3> output_mask) {
  static const auto op = lookup<std::tuple<Tensor, Tensor, Tensor>(
      const Tensor&, const Tensor&, IntArrayRef, const Tensor&, const Tensor&,
      const std::optional<Tensor>&, const std::optional<Tensor>&,
      std::vector<bool>)>("aten::native_layer_norm_backward", "");
  return op.call(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                 std::vector<bool>(output_mask.begin(), output_mask.end()));
}

}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);
  m.def(
      "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, "
      "Tensor? bias=None, float eps=1.0000000000000001e-05, bool "
      "cudnn_enable=True) -> Tensor");
  m.def(
      "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? "
      "weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)");
  m.def(
      "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] "
      "normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? "
      "bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)");
}

// native_layer_norm_backward's gradient (NativeLayerNormBackwardBackward0)
// is in autograd/nn_autograd.cc.
TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("native_layer_norm", TURNOUT_FN(turnout::nativeLayerNorm));
  m.impl("native_layer_norm_backward",
         TURNOUT_FN(turnout::nativeLayerNormBackward));
}

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  m.impl("layer_norm", TURNOUT_FN(turnout::layerNorm));
}
