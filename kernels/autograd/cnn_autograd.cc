// The Autograd kernels of the convolution (and _convolution), pooling and
// batch-norm operators (kernels/conv.h, pool.h, batch_norm.h): record when
// grad mode is on and an input requires grad, call the operator below
// autograd, attach a FunctionNode whose formula calls the operator's
// backward operator (as torch's derivatives do). The backward operators
// themselves have no autograd kernel yet: no double backward through them.
//
// Multi-output operators get their node on the differentiable output only
// (max_pool2d_with_indices' values; native_batch_norm's output, not its
// saved statistics), as torch's.
//
// Every node exposes the values it keeps under torch 1.13's names
// (Node::addSaved, Python's grad_fn._saved_<name>), the int lists as given
// (max_pool2d's default stride is []).
#include <optional>
#include <tuple>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/autograd/function_node.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/autograd/saved_variable.h"
#include "kernels/batch_norm.h"
#include "kernels/conv.h"
#include "kernels/elementwise.h"
#include "kernels/pool.h"
#include "kernels/reduce.h"
#include "kernels/shape.h"
#include "kernels/unary_math.h"

namespace turnout {
namespace autograd {
namespace {

using detail::belowAutograd;
using detail::record;
using detail::shouldRecord;
using F = FunctionNode;
using IntVec = std::vector<int64_t>;

IntVec vec(IntArrayRef v) { return IntVec(v.begin(), v.end()); }

Tensor orUndefined(const std::optional<Tensor>& t) {
  return t.has_value() ? *t : Tensor();
}

// Differentiable gradients of a convolution, for create_graph. The
// convolution B(x, w) is bilinear, so its input gradient B_x^T(g; w) is
// bilinear in (g, w) and its weight gradient B_w^T(g; x) in (g, x), with
// <gg, B_x^T(g; w)> = <B(gg, w), g> and <gg, B_w^T(g; x)> = <B(x, gg), g>:
// the gradients of each are a convolution and the other gradient, which
// record in turn (third derivatives too). Torch 1.13's
// convolution_backward has its own autograd formula; turnout's operator
// has none, and these pieces stand in for it (as ConvolutionBackwardBackward0).
struct ConvGeometry {
  IntVec stride, padding, dilation, output_padding;
  bool transposed;
  int64_t groups;
};

Tensor convOf(const Tensor& x, const Tensor& w, const ConvGeometry& c) {
  return turnout::convolution(x, w, std::nullopt, c.stride, c.padding,
                              c.dilation, c.transposed, c.output_padding,
                              c.groups);
}

Tensor convWeightGrad(const Tensor& g, const Tensor& x, const Tensor& w,
                      const ConvGeometry& c);

// B_x^T(g; w): `x` gives the input's shape only.
Tensor convInputGrad(const Tensor& g, const Tensor& x, const Tensor& w,
                     const ConvGeometry& c) {
  const bool rec = shouldRecord("convolution_backward", g, w);
  Tensor out = belowAutograd([&] {
    return std::get<0>(turnout::convolution_backward(
        g, x, w, std::nullopt, c.stride, c.padding, c.dilation, c.transposed,
        c.output_padding, c.groups, {true, false, false}));
  });
  if (rec) {
    SavedVariable sg(g), sx(x), sw(w);
    record("ConvolutionBackwardBackward0", {g, w}, out,
           [sg, sx, sw, c](const F& n, const Tensor& gg) {
             const Tensor w = sw.unpack(&n);
             return variable_list{n.needsGrad(0) ? convOf(gg, w, c) : Tensor(),
                                  n.needsGrad(1)
                                      ? convWeightGrad(sg.unpack(&n), gg, w, c)
                                      : Tensor()};
           });
  }
  return out;
}

// B_w^T(g; x): `w` gives the weight's shape only.
Tensor convWeightGrad(const Tensor& g, const Tensor& x, const Tensor& w,
                      const ConvGeometry& c) {
  const bool rec = shouldRecord("convolution_backward", g, x);
  Tensor out = belowAutograd([&] {
    return std::get<1>(turnout::convolution_backward(
        g, x, w, std::nullopt, c.stride, c.padding, c.dilation, c.transposed,
        c.output_padding, c.groups, {false, true, false}));
  });
  if (rec) {
    SavedVariable sg(g), sx(x), sw(w);
    record("ConvolutionBackwardBackward0", {g, x}, out,
           [sg, sx, sw, c](const F& n, const Tensor& gg) {
             const Tensor x = sx.unpack(&n);
             return variable_list{n.needsGrad(0) ? convOf(x, gg, c) : Tensor(),
                                  n.needsGrad(1)
                                      ? convInputGrad(sg.unpack(&n), x, gg, c)
                                      : Tensor()};
           });
  }
  return out;
}

// convolution and _convolution: the same gradient, under torch's two nodes
// (ConvolutionBackward0 keeps the bias's sizes as "bias_sym_sizes_opt",
// ConvolutionBackward1 as "bias_sizes_opt"). `fwd()` runs the operator.
template <class Fwd>
Tensor recordConvolution(const char* op_name, const char* node_name,
                         const char* bias_sizes_name, const Tensor& input,
                         const Tensor& weight,
                         const std::optional<Tensor>& bias, IntArrayRef stride,
                         IntArrayRef padding, IntArrayRef dilation,
                         bool transposed, IntArrayRef output_padding,
                         int64_t groups, Fwd fwd) {
  const Tensor b = orUndefined(bias);
  const bool rec = shouldRecord({input, weight, b}, op_name);
  Tensor out = belowAutograd(fwd);
  if (rec) {
    SavedVariable si(input), sw(weight);
    std::optional<std::vector<int64_t>> bias_sizes;
    if (b.defined()) bias_sizes = vec(b.sizes());
    Node* node =
        record(node_name, {input, weight, b}, out,
               [si, sw, bias_sizes, s = vec(stride), p = vec(padding),
                d = vec(dilation), transposed, op = vec(output_padding),
                groups](const F& n, const Tensor& g) {
                 const std::vector<bool> mask = {
                     n.needsGrad(0), n.needsGrad(1),
                     n.needsGrad(2) && bias_sizes.has_value()};
                 if (GradMode::is_enabled()) {  // create_graph
                   const ConvGeometry c{s, p, d, op, transposed, groups};
                   const Tensor x = si.unpack(&n), w = sw.unpack(&n);
                   Tensor gb;
                   if (mask[2]) {
                     IntVec dims{0};
                     for (int64_t i = 2; i < g.dim(); ++i) dims.push_back(i);
                     gb = detail::sumGradOver("ConvolutionBackwardBackward0", g,
                                              dims, {x, w});
                   }
                   return variable_list{
                       mask[0] ? convInputGrad(g, x, w, c) : Tensor(),
                       mask[1] ? convWeightGrad(g, x, w, c) : Tensor(), gb};
                 }
                 auto [gi, gw, gb] = turnout::convolution_backward(
                     g, si.unpack(&n), sw.unpack(&n), bias_sizes, s, p, d,
                     transposed, op, groups, mask);
                 return variable_list{gi, gw, gb};
               });
    if (node != nullptr) {
      // torch 1.13 shows a bias that is present but undefined (conv2d's and
      // conv1d's None reach convolution so) by an undefined tensor's sizes,
      // (0,); a None bias as None.
      IValue saved_bias_sizes;
      if (bias.has_value()) {
        saved_bias_sizes = IValue(bias_sizes.value_or(std::vector<int64_t>{0}));
      }
      node->addSaved(bias_sizes_name, std::move(saved_bias_sizes));
      node->addSaved("dilation", IValue(dilation));
      node->addSaved("groups", IValue(groups));
      node->addSaved("input", si);
      node->addSaved("output_padding", IValue(output_padding));
      node->addSaved("padding", IValue(padding));
      node->addSaved("stride", IValue(stride));
      node->addSaved("transposed", IValue(transposed));
      node->addSaved("weight", sw);
    }
  }
  return out;
}

Tensor convolutionKernel(const Tensor& input, const Tensor& weight,
                         const std::optional<Tensor>& bias, IntArrayRef stride,
                         IntArrayRef padding, IntArrayRef dilation,
                         bool transposed, IntArrayRef output_padding,
                         int64_t groups) {
  return recordConvolution("convolution", "ConvolutionBackward0",
                           "bias_sym_sizes_opt", input, weight, bias, stride,
                           padding, dilation, transposed, output_padding,
                           groups, [&] {
                             return turnout::convolution(
                                 input, weight, bias, stride, padding, dilation,
                                 transposed, output_padding, groups);
                           });
}

Tensor internalConvolutionKernel(const Tensor& input, const Tensor& weight,
                                 const std::optional<Tensor>& bias,
                                 IntArrayRef stride, IntArrayRef padding,
                                 IntArrayRef dilation, bool transposed,
                                 IntArrayRef output_padding, int64_t groups,
                                 bool benchmark, bool deterministic,
                                 bool cudnn_enabled, bool allow_tf32) {
  return recordConvolution(
      "_convolution", "ConvolutionBackward1", "bias_sizes_opt", input, weight,
      bias, stride, padding, dilation, transposed, output_padding, groups, [&] {
        return turnout::_convolution(input, weight, bias, stride, padding,
                                     dilation, transposed, output_padding,
                                     groups, benchmark, deterministic,
                                     cudnn_enabled, allow_tf32);
      });
}

std::tuple<Tensor, Tensor> maxPool2dWithIndicesKernel(
    const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
    IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const bool rec = shouldRecord("max_pool2d_with_indices", self);
  auto result = belowAutograd([&] {
    return turnout::max_pool2d_with_indices(self, kernel_size, stride, padding,
                                            dilation, ceil_mode);
  });
  if (rec) {
    SavedVariable ss(self), si(std::get<1>(result));
    Node* node =
        record("MaxPool2DWithIndicesBackward0", {self}, std::get<0>(result),
               [ss, si, k = vec(kernel_size), s = vec(stride), p = vec(padding),
                d = vec(dilation), ceil_mode](const F& n, const Tensor& g) {
                 return variable_list{turnout::max_pool2d_with_indices_backward(
                     g, ss.unpack(&n), k, s, p, d, ceil_mode, si.unpack(&n))};
               });
    if (node != nullptr) {
      node->addSaved("ceil_mode", IValue(ceil_mode));
      node->addSaved("dilation", IValue(dilation));
      node->addSaved("kernel_size", IValue(kernel_size));
      node->addSaved("padding", IValue(padding));
      node->addSaved("result1", si);
      node->addSaved("self", ss);
      node->addSaved("stride", IValue(stride));
    }
  }
  return result;
}

Tensor avgPool2dKernel(const Tensor& self, IntArrayRef kernel_size,
                       IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                       bool count_include_pad,
                       std::optional<int64_t> divisor_override) {
  const bool rec = shouldRecord("avg_pool2d", self);
  Tensor out = belowAutograd([&] {
    return turnout::avg_pool2d(self, kernel_size, stride, padding, ceil_mode,
                               count_include_pad, divisor_override);
  });
  if (rec) {
    SavedVariable ss(self);
    Node* node = record(
        "AvgPool2DBackward0", {self}, out,
        [ss, k = vec(kernel_size), s = vec(stride), p = vec(padding), ceil_mode,
         count_include_pad, divisor_override](const F& n, const Tensor& g) {
          return variable_list{turnout::avg_pool2d_backward(
              g, ss.unpack(&n), k, s, p, ceil_mode, count_include_pad,
              divisor_override)};
        });
    if (node != nullptr) {
      node->addSaved("ceil_mode", IValue(ceil_mode));
      node->addSaved("count_include_pad", IValue(count_include_pad));
      node->addSaved("divisor_override", IValue(divisor_override));
      node->addSaved("kernel_size", IValue(kernel_size));
      node->addSaved("padding", IValue(padding));
      node->addSaved("self", ss);
      node->addSaved("stride", IValue(stride));
    }
  }
  return out;
}

Tensor adaptiveAvgPool2dKernel(const Tensor& self, IntArrayRef output_size) {
  const bool rec = shouldRecord("_adaptive_avg_pool2d", self);
  Tensor out = belowAutograd(
      [&] { return turnout::_adaptive_avg_pool2d(self, output_size); });
  if (rec) {
    SavedVariable ss(self);
    Node* node =
        record("AdaptiveAvgPool2DBackward0", {self}, out,
               [ss](const F& n, const Tensor& g) {
                 return variable_list{
                     turnout::_adaptive_avg_pool2d_backward(g, ss.unpack(&n))};
               });
    if (node != nullptr) node->addSaved("self", ss);
  }
  return out;
}

// The pooling backward operators are differentiable in grad_output (torch
// 1.13's double backward; their gradient with respect to self is zero):
// each is linear in it, and its adjoint is the forward pooling again (for
// max pooling, a gather at the saved indices).
using GatherSig = Tensor(const Tensor&, int64_t, const Tensor&, bool);
const TypedOperatorHandle<GatherSig>& gatherOp() {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::gather", "")
                             .typed<GatherSig>();
  return op;
}

Tensor maxPool2dWithIndicesBackwardKernel(
    const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
    IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
    bool ceil_mode, const Tensor& indices) {
  const bool rec =
      shouldRecord("max_pool2d_with_indices_backward", grad_output, self);
  Tensor out = belowAutograd([&] {
    return turnout::max_pool2d_with_indices_backward(
        grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
        indices);
  });
  if (rec) {
    SavedVariable si(indices);
    Node* node = record(
        "MaxPool2DWithIndicesBackwardBackward0", {grad_output, self}, out,
        [si](const F& n, const Tensor& gg) {
          // grad_output[..., i] takes gg at the input position indices[..., i]
          // of its (flattened) plane.
          const Tensor ix = si.unpack(&n);
          const int64_t lead = gg.dim() - 2;
          std::vector<int64_t> flat_gg(gg.sizes().begin(),
                                       gg.sizes().begin() + lead);
          flat_gg.push_back(-1);
          std::vector<int64_t> flat_ix(ix.sizes().begin(),
                                       ix.sizes().begin() + lead);
          flat_ix.push_back(-1);
          const Tensor picked =
              gatherOp().call(turnout::reshape(gg, flat_gg), lead,
                              turnout::reshape(ix, flat_ix), false);
          return variable_list{turnout::reshape(picked, ix.sizes()), Tensor()};
        });
    if (node != nullptr) node->addSaved("indices", si);
  }
  return out;
}

Tensor avgPool2dBackwardKernel(const Tensor& grad_output, const Tensor& self,
                               IntArrayRef kernel_size, IntArrayRef stride,
                               IntArrayRef padding, bool ceil_mode,
                               bool count_include_pad,
                               std::optional<int64_t> divisor_override) {
  const bool rec = shouldRecord("avg_pool2d_backward", grad_output, self);
  Tensor out = belowAutograd([&] {
    return turnout::avg_pool2d_backward(grad_output, self, kernel_size, stride,
                                        padding, ceil_mode, count_include_pad,
                                        divisor_override);
  });
  if (rec) {
    record("AvgPool2DBackwardBackward0", {grad_output, self}, out,
           [k = vec(kernel_size), s = vec(stride), p = vec(padding), ceil_mode,
            count_include_pad, divisor_override](const F&, const Tensor& gg) {
             return variable_list{
                 turnout::avg_pool2d(gg, k, s, p, ceil_mode, count_include_pad,
                                     divisor_override),
                 Tensor()};
           });
  }
  return out;
}

Tensor adaptiveAvgPool2dBackwardKernel(const Tensor& grad_output,
                                       const Tensor& self) {
  const bool rec =
      shouldRecord("_adaptive_avg_pool2d_backward", grad_output, self);
  Tensor out = belowAutograd([&] {
    return turnout::_adaptive_avg_pool2d_backward(grad_output, self);
  });
  if (rec) {
    const std::vector<int64_t> size(grad_output.sizes().end() - 2,
                                    grad_output.sizes().end());
    record("AdaptiveAvgPool2DBackwardBackward0", {grad_output, self}, out,
           [size](const F&, const Tensor& gg) {
             return variable_list{turnout::_adaptive_avg_pool2d(gg, size),
                                  Tensor()};
           });
  }
  return out;
}

// native_batch_norm's gradients from differentiable operators, for
// create_graph (turnout's native_batch_norm_backward has no autograd
// formula; torch 1.13's has one). The statistics are computed again from x
// in grad mode, so that the second derivative sees their dependence on it
// (the saved mean and invstd are outputs without history). With batch
// statistics: gi = w * invstd * (g - mean(g) - xhat * mean(g * xhat)); with
// running ones: gi = w * invstd * g. gw = sum(g * xhat), gb = sum(g), over
// every dimension but the channels.
variable_list batchNormGrads(const Tensor& g, const Tensor& x, const Tensor& w,
                             const Tensor& running_mean,
                             const Tensor& running_var, bool training,
                             double eps, const std::vector<bool>& mask) {
  IntVec dims{0};
  for (int64_t i = 2; i < x.dim(); ++i) dims.push_back(i);
  IntVec channel_shape(static_cast<size_t>(x.dim()), 1);
  channel_shape[1] = x.size(1);
  const bool batch_stats = training || !running_mean.defined();
  Tensor mean, invstd;
  if (batch_stats) {
    mean = turnout::mean(x, dims, /*keepdim=*/true);
    const Tensor xc = turnout::sub(x, mean);
    invstd = turnout::rsqrt(turnout::add(
        turnout::mean(turnout::mul(xc, xc), dims, /*keepdim=*/true), eps));
  } else {
    mean = turnout::reshape(running_mean, channel_shape);
    invstd = turnout::reshape(turnout::rsqrt(turnout::add(running_var, eps)),
                              channel_shape);
  }
  const Tensor xhat = turnout::mul(turnout::sub(x, mean), invstd);
  Tensor gi, gw, gb;
  if (mask[0]) {
    Tensor centred = g;
    if (batch_stats) {
      centred = turnout::sub(
          turnout::sub(g, turnout::mean(g, dims, /*keepdim=*/true)),
          turnout::mul(xhat, turnout::mean(turnout::mul(g, xhat), dims,
                                           /*keepdim=*/true)));
    }
    gi = turnout::mul(centred, invstd);
    if (w.defined()) gi = turnout::mul(gi, turnout::reshape(w, channel_shape));
  }
  if (mask[1]) gw = turnout::sum(turnout::mul(g, xhat), dims);
  if (mask[2]) gb = turnout::sum(g, dims);
  return {gi, gw, gb};
}

std::tuple<Tensor, Tensor, Tensor> nativeBatchNormKernel(
    const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
    const std::optional<Tensor>& running_var, bool training, double momentum,
    double eps) {
  const Tensor w = orUndefined(weight), b = orUndefined(bias);
  const bool rec = shouldRecord({input, w, b}, "native_batch_norm");
  // As torch: the running statistics are buffers, never differentiable.
  if (GradMode::is_enabled()) {
    for (const auto& [name, t] : {std::pair{"running_mean", &running_mean},
                                  std::pair{"running_var", &running_var}}) {
      TURNOUT_CHECK(!t->has_value() || !requiresGrad(**t),
                    ErrorKind::InvalidArgument,
                    "The function 'native_batch_norm' is not differentiable "
                    "with respect to argument '", name,
                    "'. This input cannot have requires_grad True (pass ",
                    name, ".detach(), or a buffer)");
    }
  }
  auto result = belowAutograd([&] {
    return turnout::native_batch_norm(input, weight, bias, running_mean,
                                      running_var, training, momentum, eps);
  });
  if (rec) {
    // The running statistics are read by an eval-mode backward only, and
    // training mode updates them in place: keep the tensors, not copies
    // (torch saves them the same way; the kernel's update does not bump
    // their version, so a later training step does not invalidate them).
    SavedVariable si(input), sw(w);
    SavedVariable srm(orUndefined(running_mean)), srv(orUndefined(running_var));
    SavedVariable smean(std::get<1>(result));
    SavedVariable sinvstd(std::get<2>(result));
    const bool has_weight = w.defined(), has_bias = b.defined();
    Node* node =
        record("NativeBatchNormBackward0", {input, w, b}, std::get<0>(result),
               [si, sw, srm, srv, smean, sinvstd, training, eps, has_weight,
                has_bias](const F& n, const Tensor& g) {
                 const std::vector<bool> mask = {n.needsGrad(0),
                                                 n.needsGrad(1) && has_weight,
                                                 n.needsGrad(2) && has_bias};
                 if (GradMode::is_enabled() && si.unpack(&n).numel() > 0) {
                   return batchNormGrads(g, si.unpack(&n), sw.unpack(&n),
                                         srm.unpack(&n), srv.unpack(&n),
                                         training, eps, mask);
                 }
                 auto opt = [](const Tensor& t) {
                   return t.defined() ? std::optional<Tensor>(t) : std::nullopt;
                 };
                 auto [gi, gw, gb] = turnout::native_batch_norm_backward(
                     g, si.unpack(&n), opt(sw.unpack(&n)), opt(srm.unpack(&n)),
                     opt(srv.unpack(&n)), opt(smean.unpack(&n)),
                     opt(sinvstd.unpack(&n)), training, eps, mask);
                 return variable_list{gi, gw, gb};
               });
    if (node != nullptr) {
      node->addSaved("eps", IValue(eps));
      node->addSaved("input", si);
      node->addSaved("result1", smean);
      node->addSaved("result2", sinvstd);
      node->addSaved("running_mean", srm);
      node->addSaved("running_var", srv);
      node->addSaved("training", IValue(training));
      node->addSaved("weight", sw);
    }
  }
  return result;
}

}  // namespace
}  // namespace autograd
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, Autograd, m) {
  using namespace turnout::autograd;  // NOLINT: the kernels above
  m.impl("convolution", TURNOUT_FN(convolutionKernel));
  m.impl("_convolution", TURNOUT_FN(internalConvolutionKernel));
  m.impl("max_pool2d_with_indices", TURNOUT_FN(maxPool2dWithIndicesKernel));
  m.impl("avg_pool2d", TURNOUT_FN(avgPool2dKernel));
  m.impl("_adaptive_avg_pool2d", TURNOUT_FN(adaptiveAvgPool2dKernel));
  m.impl("native_batch_norm", TURNOUT_FN(nativeBatchNormKernel));
  m.impl("max_pool2d_with_indices_backward",
         TURNOUT_FN(maxPool2dWithIndicesBackwardKernel));
  m.impl("avg_pool2d_backward", TURNOUT_FN(avgPool2dBackwardKernel));
  m.impl("_adaptive_avg_pool2d_backward",
         TURNOUT_FN(adaptiveAvgPool2dBackwardKernel));
}
