// native_batch_norm, native_batch_norm_backward (CPU and Meta kernels) and
// the CompositeImplicitAutograd batch_norm over native_batch_norm.
//
// The input is viewed as [N, C, S] (S: the product of the dimensions after
// the channel); every channel's statistics and results are computed in
// double from a contiguous copy, channels split over the thread pool.
#include "kernels/batch_norm.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/aten_tags.h"
#include "kernels/copy.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/elementwise.h"
#include "kernels/loops.h"
#include "kernels/parallel.h"
#include "kernels/reduce_utils.h"
#include "kernels/shape.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace {

using reduce_internal::checkSameDevice;
using reduce_internal::sizesToString;

bool given(const std::optional<Tensor>& t) {
  return t.has_value() && t->defined();
}

// The [N, C, S] view of an input of at least 2 dimensions.
struct BnShape {
  int64_t n = 0, c = 0, s = 1;
  int64_t perChannel() const { return n * s; }
};

BnShape bnShape(const char* op, const Tensor& input) {
  TURNOUT_CHECK(input.defined(), ErrorKind::InvalidArgument, op,
                ": input must be a defined tensor");
  TURNOUT_CHECK(input.dim() >= 2, ErrorKind::Index, op,
                ": expected an input of at least 2 dimensions (N, C, ...), "
                "but got input of size ", sizesToString(input.sizes()),
                " (dimension 1, the channels, is out of range)");
  TURNOUT_CHECK(isFloatingType(input.scalar_type()), ErrorKind::NotImplemented,
                "\"batch_norm\" not implemented for '", input.scalar_type(),
                "' (floating dtypes only)");
  BnShape b;
  b.n = input.size(0);
  b.c = input.size(1);
  for (int64_t d = 2; d < input.dim(); ++d) b.s *= input.size(d);
  return b;
}

// A per-channel tensor: C elements, input's dtype and device.
void checkChannelTensor(const char* op, const char* name,
                        const std::optional<Tensor>& t, const Tensor& input,
                        int64_t channels) {
  if (!given(t)) return;
  checkSameDevice(op, input, *t);
  TURNOUT_CHECK(t->numel() == channels, ErrorKind::InvalidArgument, name,
                " should contain ", channels, " elements not ", t->numel(),
                " (", op, ": one per channel of input of size ",
                sizesToString(input.sizes()), ")");
  TURNOUT_CHECK(t->scalar_type() == input.scalar_type(),
                ErrorKind::InvalidArgument, op, ": ", name, " has dtype ",
                t->scalar_type(), " but input has ", input.scalar_type(),
                "; they must match");
}

// A per-channel tensor's values as C doubles (`fill` when not given).
std::vector<double> channelValues(const std::optional<Tensor>& t, int64_t c,
                                  double fill) {
  std::vector<double> v(static_cast<size_t>(c), fill);
  if (!given(t)) return v;
  const Tensor d = contiguousCastTo(*t, ScalarType::Double);
  const double* p = d.data_ptr<double>();
  std::copy(p, p + c, v.begin());
  return v;
}

// C doubles into a new 1-d tensor of `dtype`.
Tensor channelTensor(const std::vector<double>& v, ScalarType dtype,
                     Device device) {
  Tensor d = emptyTensor({static_cast<int64_t>(v.size())}, ScalarType::Double,
                         device);
  std::copy(v.begin(), v.end(), d.data_ptr<double>());
  return castTo(d, dtype);
}

void parallelChannels(const BnShape& b, const std::function<void(int64_t)>& fn) {
  const int64_t grain =
      std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, b.perChannel()));
  parallel_for(0, b.c, grain, [&](int64_t begin, int64_t end) {
    for (int64_t ch = begin; ch < end; ++ch) fn(ch);
  });
}

// Eval mode on a contiguous float or double input: y = x * scale + shift
// per channel (scale and shift from the running statistics, in double),
// written straight into `out` in the input's dtype. The general path
// converts the input to double and the result back, two more passes and
// two tensors; this one is 2.6-2.9x faster on a CNN block's shapes
// (bench/README.md).
void evalInDtype(const BnShape& b, const Tensor& input, Tensor& out,
                 const std::optional<Tensor>& weight,
                 const std::optional<Tensor>& bias, const Tensor& running_mean,
                 const Tensor& running_var, double eps) {
  const std::vector<double> w = channelValues(weight, b.c, 1.0);
  const std::vector<double> bb = channelValues(bias, b.c, 0.0);
  const std::vector<double> rm = channelValues(running_mean, b.c, 0.0);
  const std::vector<double> rv = channelValues(running_var, b.c, 1.0);
  auto run = [&](auto* xp, auto* yp) {
    using T = std::remove_pointer_t<decltype(yp)>;
    parallelChannels(b, [&](int64_t ch) {
      const double scale = w[ch] / std::sqrt(rv[ch] + eps);
      const T s = static_cast<T>(scale);
      const T t = static_cast<T>(bb[ch] - rm[ch] * scale);
      for (int64_t i = 0; i < b.n; ++i) {
        const int64_t off = (i * b.c + ch) * b.s;
        for (int64_t k = 0; k < b.s; ++k) yp[off + k] = xp[off + k] * s + t;
      }
    });
  };
  if (input.scalar_type() == ScalarType::Float) {
    run(input.data_ptr<float>(), out.data_ptr<float>());
  } else {
    run(input.data_ptr<double>(), out.data_ptr<double>());
  }
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_kernel(
    const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
    const std::optional<Tensor>& running_var, bool training, double momentum,
    double eps) {
  const char* op = "native_batch_norm()";
  const BnShape b = bnShape(op, input);
  checkChannelTensor(op, "running_mean", running_mean, input, b.c);
  checkChannelTensor(op, "running_var", running_var, input, b.c);
  checkChannelTensor(op, "weight", weight, input, b.c);
  checkChannelTensor(op, "bias", bias, input, b.c);
  TURNOUT_CHECK(given(running_mean) == given(running_var),
                ErrorKind::InvalidArgument, op,
                ": running_mean and running_var must be both given or both "
                "None");
  TURNOUT_CHECK(training || given(running_mean), ErrorKind::InvalidArgument, op,
                ": running_mean and running_var must be given when "
                "training=False (eval mode normalises with them)");
  const ScalarType dt = input.scalar_type();
  Tensor out = emptyTensor(input.sizes(), dt, input.device());
  const int64_t stats = training ? b.c : 0;
  if (input.is_meta()) {
    return {out, emptyTensor({stats}, dt, input.device()),
            emptyTensor({stats}, dt, input.device())};
  }
  if (!training && input.is_contiguous() &&
      (dt == ScalarType::Float || dt == ScalarType::Double)) {
    evalInDtype(b, input, out, weight, bias, *running_mean, *running_var, eps);
    return {out, emptyTensor({0}, dt, input.device()),
            emptyTensor({0}, dt, input.device())};
  }
  const Tensor x = contiguousCastTo(input, ScalarType::Double);
  const double* xp = x.data_ptr<double>();
  Tensor y = emptyTensor(input.sizes(), ScalarType::Double, input.device());
  double* yp = y.data_ptr<double>();
  const std::vector<double> w = channelValues(weight, b.c, 1.0);
  const std::vector<double> bb = channelValues(bias, b.c, 0.0);
  std::vector<double> mean(static_cast<size_t>(b.c)),
      invstd(static_cast<size_t>(b.c)), unbiased(static_cast<size_t>(b.c));
  if (training) {
    const double count = static_cast<double>(b.perChannel());
    parallelChannels(b, [&](int64_t ch) {
      double total = 0;
      for (int64_t i = 0; i < b.n; ++i) {
        const double* row = xp + (i * b.c + ch) * b.s;
        for (int64_t k = 0; k < b.s; ++k) total += row[k];
      }
      const double m = total / count;
      double sq = 0;
      for (int64_t i = 0; i < b.n; ++i) {
        const double* row = xp + (i * b.c + ch) * b.s;
        for (int64_t k = 0; k < b.s; ++k) sq += (row[k] - m) * (row[k] - m);
      }
      mean[ch] = m;
      invstd[ch] = 1.0 / std::sqrt(sq / count + eps);
      unbiased[ch] = sq / (count - 1);
    });
  } else {
    const std::vector<double> rm = channelValues(running_mean, b.c, 0.0);
    const std::vector<double> rv = channelValues(running_var, b.c, 1.0);
    for (int64_t ch = 0; ch < b.c; ++ch) {
      mean[ch] = rm[ch];
      invstd[ch] = 1.0 / std::sqrt(rv[ch] + eps);
    }
  }
  parallelChannels(b, [&](int64_t ch) {
    const double scale = invstd[ch] * w[ch];
    const double shift = bb[ch] - mean[ch] * scale;
    for (int64_t i = 0; i < b.n; ++i) {
      const int64_t off = (i * b.c + ch) * b.s;
      for (int64_t k = 0; k < b.s; ++k) yp[off + k] = xp[off + k] * scale + shift;
    }
  });
  copyCast(out, y);
  if (!training) {
    return {out, emptyTensor({0}, dt, input.device()),
            emptyTensor({0}, dt, input.device())};
  }
  if (given(running_mean)) {
    // running = (1 - momentum) * running + momentum * batch statistic,
    // written into the caller's tensors (torch's schema does not mark it).
    std::vector<double> rm = channelValues(running_mean, b.c, 0.0);
    std::vector<double> rv = channelValues(running_var, b.c, 1.0);
    for (int64_t ch = 0; ch < b.c; ++ch) {
      rm[ch] = (1 - momentum) * rm[ch] + momentum * mean[ch];
      rv[ch] = (1 - momentum) * rv[ch] + momentum * unbiased[ch];
    }
    copyCast(*running_mean,
             reshape(channelTensor(rm, dt, input.device()),
                     running_mean->sizes()));
    copyCast(*running_var,
             reshape(channelTensor(rv, dt, input.device()),
                     running_var->sizes()));
  }
  return {out, channelTensor(mean, dt, input.device()),
          channelTensor(invstd, dt, input.device())};
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward_kernel(
    const Tensor& grad_out, const Tensor& input,
    const std::optional<Tensor>& weight,
    const std::optional<Tensor>& running_mean,
    const std::optional<Tensor>& running_var,
    const std::optional<Tensor>& save_mean,
    const std::optional<Tensor>& save_invstd, bool train, double eps,
    std::vector<bool> output_mask) {
  const char* op = "native_batch_norm_backward()";
  const BnShape b = bnShape(op, input);
  TURNOUT_CHECK(output_mask.size() == 3, ErrorKind::InvalidArgument, op,
                ": output_mask must have 3 entries, got ", output_mask.size());
  TURNOUT_CHECK(grad_out.defined() && grad_out.sizes() == input.sizes(),
                ErrorKind::InvalidArgument, op,
                ": expected grad_out of the input's size ",
                sizesToString(input.sizes()), ", but got ",
                grad_out.defined() ? sizesToString(grad_out.sizes())
                                   : std::string("an undefined tensor"));
  checkSameDevice(op, input, grad_out);
  checkChannelTensor(op, "weight", weight, input, b.c);
  if (train) {
    TURNOUT_CHECK(given(save_mean) && given(save_invstd),
                  ErrorKind::InvalidArgument, op,
                  ": train=True needs save_mean and save_invstd (the "
                  "statistics native_batch_norm returned)");
    checkChannelTensor(op, "save_mean", save_mean, input, b.c);
    checkChannelTensor(op, "save_invstd", save_invstd, input, b.c);
  } else {
    TURNOUT_CHECK(given(running_mean) && given(running_var),
                  ErrorKind::InvalidArgument, op,
                  ": train=False needs running_mean and running_var");
    checkChannelTensor(op, "running_mean", running_mean, input, b.c);
    checkChannelTensor(op, "running_var", running_var, input, b.c);
  }
  const ScalarType dt = input.scalar_type();
  Tensor gi, gw, gb;
  if (output_mask[0]) gi = emptyTensor(input.sizes(), dt, input.device());
  if (output_mask[1]) gw = emptyTensor({b.c}, dt, input.device());
  if (output_mask[2]) gb = emptyTensor({b.c}, dt, input.device());
  if (input.is_meta()) return {gi, gw, gb};
  std::vector<double> mean, invstd;
  if (train) {
    mean = channelValues(save_mean, b.c, 0.0);
    invstd = channelValues(save_invstd, b.c, 1.0);
  } else {
    mean = channelValues(running_mean, b.c, 0.0);
    invstd = channelValues(running_var, b.c, 1.0);
    for (double& v : invstd) v = 1.0 / std::sqrt(v + eps);
  }
  const std::vector<double> w = channelValues(weight, b.c, 1.0);
  const Tensor x = contiguousCastTo(input, ScalarType::Double);
  const Tensor g = contiguousCastTo(grad_out, ScalarType::Double);
  const double* xp = x.data_ptr<double>();
  const double* gp = g.data_ptr<double>();
  Tensor acc;
  double* ap = nullptr;
  if (output_mask[0]) {
    acc = emptyTensor(input.sizes(), ScalarType::Double, input.device());
    ap = acc.data_ptr<double>();
  }
  std::vector<double> sum_g(static_cast<size_t>(b.c)),
      dot(static_cast<size_t>(b.c));
  const double count = static_cast<double>(b.perChannel());
  parallelChannels(b, [&](int64_t ch) {
    double sg = 0, d = 0;
    for (int64_t i = 0; i < b.n; ++i) {
      const int64_t off = (i * b.c + ch) * b.s;
      for (int64_t k = 0; k < b.s; ++k) {
        sg += gp[off + k];
        d += gp[off + k] * (xp[off + k] - mean[ch]);
      }
    }
    sum_g[ch] = sg;
    dot[ch] = d;
    if (ap == nullptr) return;
    const double is = invstd[ch];
    for (int64_t i = 0; i < b.n; ++i) {
      const int64_t off = (i * b.c + ch) * b.s;
      for (int64_t k = 0; k < b.s; ++k) {
        if (train) {
          // d/dx of (x - mean) * invstd with batch statistics.
          const double xhat_proj = (xp[off + k] - mean[ch]) * is * is * d / count;
          ap[off + k] = (gp[off + k] - sg / count - xhat_proj) * is * w[ch];
        } else {
          ap[off + k] = gp[off + k] * is * w[ch];
        }
      }
    }
  });
  if (output_mask[0]) copyCast(gi, acc);
  if (output_mask[1]) {
    std::vector<double> v(static_cast<size_t>(b.c));
    for (int64_t ch = 0; ch < b.c; ++ch) v[ch] = dot[ch] * invstd[ch];
    copyCast(gw, channelTensor(v, dt, input.device()));
  }
  if (output_mask[2]) copyCast(gb, channelTensor(sum_g, dt, input.device()));
  return {gi, gw, gb};
}

// ---- batch_norm (CompositeImplicitAutograd) ------------------------------------

// torch 1.13's checks of batch_norm (through _batch_norm_impl_index), then
// native_batch_norm's first output.
Tensor batch_norm_composite(const Tensor& input,
                            const std::optional<Tensor>& weight,
                            const std::optional<Tensor>& bias,
                            const std::optional<Tensor>& running_mean,
                            const std::optional<Tensor>& running_var,
                            bool training, double momentum, double eps,
                            bool cudnn_enabled) {
  (void)cudnn_enabled;
  const char* op = "batch_norm()";
  TURNOUT_CHECK(input.defined(), ErrorKind::InvalidArgument, op,
                ": input must be a defined tensor");
  TURNOUT_CHECK(input.dim() >= 2, ErrorKind::Index,
                "Dimension out of range (expected to be in range of [",
                -std::max<int64_t>(input.dim(), 1), ", ",
                std::max<int64_t>(input.dim(), 1) - 1,
                "], but got 1): batch_norm() needs an input of at least 2 "
                "dimensions (N, C, ...), got ", sizesToString(input.sizes()));
  const int64_t c = input.size(1);
  const std::pair<const char*, const std::optional<Tensor>*> per_channel[] = {
      {"running_mean", &running_mean},
      {"running_var", &running_var},
      {"weight", &weight},
      {"bias", &bias}};
  for (const auto& [name, t] : per_channel) {
    if (!given(*t)) continue;
    TURNOUT_CHECK((*t)->numel() == c, ErrorKind::InvalidArgument, name,
                  " should contain ", c, " elements not ", (*t)->numel());
  }
  if (input.numel() == 0) {
    // As torch: a copy (not a view, not a new empty tensor) that keeps the
    // gradient chain to weight and bias.
    Tensor out = clone(input);
    if (given(weight)) out = mul(out, select(*weight, 0, 0));
    if (given(bias)) out = add(out, select(*bias, 0, 0));
    return out;
  }
  return std::get<0>(native_batch_norm(input, weight, bias, running_mean,
                                       running_var, training, momentum, eps));
}

}  // namespace
}  // namespace turnout

// ---- Registration -----------------------------------------------------------

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);  // torch's tags (kernels/aten_tags.h)
  m.def(
      "batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? "
      "running_mean, Tensor? running_var, bool training, float momentum, "
      "float eps, bool cudnn_enabled) -> Tensor");
  m.def(
      "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? "
      "running_mean, Tensor? running_var, bool training, float momentum, "
      "float eps) -> (Tensor, Tensor, Tensor)");
  m.def(
      "native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? "
      "weight, Tensor? running_mean, Tensor? running_var, Tensor? save_mean, "
      "Tensor? save_invstd, bool train, float eps, bool[3] output_mask) -> "
      "(Tensor, Tensor, Tensor)");
}

// One function per operator serves CPU and Meta (checks and shapes first).
#define TURNOUT_BATCH_NORM_KERNELS(m)                                   \
  m.impl("native_batch_norm", TURNOUT_FN(native_batch_norm_kernel));    \
  m.impl("native_batch_norm_backward",                                  \
         TURNOUT_FN(native_batch_norm_backward_kernel))

TURNOUT_LIBRARY_IMPL(aten, CPU, m) {
  using namespace turnout;  // NOLINT: the kernels above
  TURNOUT_BATCH_NORM_KERNELS(m);
}
TURNOUT_LIBRARY_IMPL(aten, Meta, m) {
  using namespace turnout;  // NOLINT: the kernels above
  TURNOUT_BATCH_NORM_KERNELS(m);
}
#undef TURNOUT_BATCH_NORM_KERNELS

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  using namespace turnout;  // NOLINT: the kernels above
  m.impl("batch_norm", TURNOUT_FN(batch_norm_composite));
}

// ---- Front end ----------------------------------------------------------------

namespace turnout {

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(
    const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
    const std::optional<Tensor>& running_var, bool training, double momentum,
    double eps) {
  using OT = const std::optional<Tensor>&;
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::native_batch_norm", "")
          .typed<std::tuple<Tensor, Tensor, Tensor>(const Tensor&, OT, OT, OT,
                                                    OT, bool, double, double)>();
  return op.call(input, weight, bias, running_mean, running_var, training,
                 momentum, eps);
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(
    const Tensor& grad_out, const Tensor& input,
    const std::optional<Tensor>& weight,
    const std::optional<Tensor>& running_mean,
    const std::optional<Tensor>& running_var,
    const std::optional<Tensor>& save_mean,
    const std::optional<Tensor>& save_invstd, bool train, double eps,
    std::vector<bool> output_mask) {
  using OT = const std::optional<Tensor>&;
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::native_batch_norm_backward", "")
                       .typed<std::tuple<Tensor, Tensor, Tensor>(
                           const Tensor&, const Tensor&, OT, OT, OT, OT, OT,
                           bool, double, std::vector<bool>)>();
  return op.call(grad_out, input, weight, running_mean, running_var, save_mean,
                 save_invstd, train, eps, output_mask);
}

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean,
                  const std::optional<Tensor>& running_var, bool training,
                  double momentum, double eps, bool cudnn_enabled) {
  using OT = const std::optional<Tensor>&;
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::batch_norm", "")
                       .typed<Tensor(const Tensor&, OT, OT, OT, OT, bool,
                                     double, double, bool)>();
  return op.call(input, weight, bias, running_mean, running_var, training,
                 momentum, eps, cudnn_enabled);
}

}  // namespace turnout
