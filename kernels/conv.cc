// aten::convolution, convolution_backward (CPU and Meta kernels) and the
// CompositeImplicitAutograd conv1d, conv2d, _convolution.deprecated and the
// CompositeExplicitAutograd _convolution over them.
//
// Lowering: for each image n and group g, with K the kernel's elements and
// L the output's spatial elements,
//   cols[Cg*K, L]   = im2col(input[n, g])        (zeros where padded)
//   out[n, g][Og, L] = weight[g][Og, Cg*K] @ cols
// and backward
//   grad_cols       = weight[g]^T @ grad_out[n, g];  col2im adds it up
//   grad_weight[g] += grad_out[n, g] @ cols^T
//   grad_bias       = sum of grad_out over n and L.
// 1-d convolutions run as 2-d ones of height 1. A float32 forward of 2^16
// multiply-adds or more runs through oneDNN instead (onednnForward below).
//
// A transposed convolution is the adjoint of the ordinary convolution whose
// input has the transposed one's output shape and whose output has its
// input shape, with the same weight ([in, out / groups, *kernel] is that
// convolution's [out, in / groups, *kernel]). So its forward is that
// convolution's input gradient (plus the bias), its input gradient is that
// convolution's forward, and its weight gradient is that convolution's
// weight gradient with the roles of input and grad_output exchanged.
#include "kernels/conv.h"

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/aten_tags.h"
#include "kernels/blas.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/loops.h"
#include "kernels/onednn_conv.h"
#include "kernels/reduce_utils.h"
#include "kernels/shape.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace {

using reduce_internal::checkSameDevice;
using reduce_internal::sizesToString;

// The geometry of one ordinary convolution, as 2-d (a 1-d one has height
// 1). For a transposed convolution it is the ordinary one it is the adjoint
// of (see the top of this file): `in_*` describe the transposed call's
// output and `out_*`/`oh`, `ow` its input.
struct ConvGeometry {
  int64_t nsp = 2;  // spatial dimensions of the call: 1 or 2
  bool transposed = false;
  int64_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  int64_t ih = 1, iw = 1, kh = 1, kw = 1, oh = 1, ow = 1;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  DimVector out_sizes;  // the ordinary convolution's output
  DimVector in_sizes;   // and its input

  // What aten::convolution returns: out_sizes, or in_sizes when transposed.
  const DimVector& resultSizes() const {
    return transposed ? in_sizes : out_sizes;
  }

  int64_t cg() const { return in_channels / groups; }
  int64_t og() const { return out_channels / groups; }
  int64_t kernelElems() const { return kh * kw; }
  int64_t outElems() const { return oh * ow; }
  int64_t inElems() const { return ih * iw; }
  // A 1x1 kernel, stride 1, no padding: the input is its own im2col.
  bool pointwise() const {
    return kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0;
  }
};

std::string listString(IntArrayRef v) { return sizesToString(v); }

// A parameter list of one value or one per spatial dimension.
DimVector expandParam(const char* name, IntArrayRef v, int64_t nsp) {
  TURNOUT_CHECK(static_cast<int64_t>(v.size()) == 1 ||
                    static_cast<int64_t>(v.size()) == nsp,
                ErrorKind::InvalidArgument, "convolution(): expected ", name,
                " to be a single integer value or a list of ", nsp,
                " values to match the convolution dimensions, but got ", name,
                "=", listString(v));
  DimVector out(nsp);
  for (int64_t i = 0; i < nsp; ++i) out[i] = v.size() == 1 ? v[0] : v[i];
  return out;
}

// torch 1.13's checks, in its order, with its messages.
ConvGeometry checkConvolution(const Tensor& input, const Tensor& weight,
                              const std::optional<Tensor>& bias,
                              IntArrayRef stride, IntArrayRef padding,
                              IntArrayRef dilation, bool transposed,
                              IntArrayRef output_padding, int64_t groups) {
  const char* op = "convolution()";
  TURNOUT_CHECK(input.defined() && weight.defined(), ErrorKind::InvalidArgument,
                op, ": input and weight must be defined tensors");
  checkSameDevice(op, input, weight);
  const bool has_bias = bias.has_value() && bias->defined();
  if (has_bias) checkSameDevice(op, input, *bias);
  const int64_t wd = weight.dim();
  TURNOUT_CHECK(wd >= 3, ErrorKind::InvalidArgument, op,
                ": expected weight to have 3 (1-d) or 4 (2-d) dimensions "
                "[", transposed ? "in_channels, out_channels / groups"
                                : "out_channels, in_channels / groups",
                ", *kernel_size], but got weight of size ",
                sizesToString(weight.sizes()));
  TURNOUT_CHECK(input.dim() == wd, ErrorKind::InvalidArgument, "Expected ", wd,
                "-dimensional input for ", wd, "-dimensional weight ",
                sizesToString(weight.sizes()), ", but got ", input.dim(),
                "-dimensional input of size ", sizesToString(input.sizes()),
                " instead");
  TURNOUT_CHECK(wd <= 4, ErrorKind::NotImplemented, op,
                ": only 1-d and 2-d convolutions are implemented in turnout, "
                "but got a ", wd - 2, "-d one (weight of size ",
                sizesToString(weight.sizes()), ")");
  ConvGeometry g;
  g.nsp = wd - 2;
  g.transposed = transposed;
  const DimVector s = expandParam("stride", stride, g.nsp);
  const DimVector p = expandParam("padding", padding, g.nsp);
  const DimVector d = expandParam("dilation", dilation, g.nsp);
  for (int64_t v : s) {
    TURNOUT_CHECK(v > 0, ErrorKind::InvalidArgument,
                  "non-positive stride is not supported (", op, " got stride=",
                  listString(stride), ")");
  }
  for (int64_t v : p) {
    TURNOUT_CHECK(v >= 0, ErrorKind::InvalidArgument,
                  "negative padding is not supported (", op, " got padding=",
                  listString(padding), ")");
  }
  DimVector op_pad(g.nsp, 0);
  if (transposed) {
    op_pad = expandParam("output_padding", output_padding, g.nsp);
    for (int64_t v : op_pad) {
      TURNOUT_CHECK(v >= 0, ErrorKind::InvalidArgument,
                    "negative output_padding is not supported (", op,
                    " got output_padding=", listString(output_padding), ")");
    }
  }
  for (int64_t v : d) {
    TURNOUT_CHECK(v > 0, ErrorKind::InvalidArgument,
                  "non-positive dilation is not supported (", op,
                  " got dilation=", listString(dilation), ")");
  }
  TURNOUT_CHECK(groups > 0, ErrorKind::InvalidArgument,
                "non-positive groups is not supported (", op, " got groups=",
                groups, ")");
  TURNOUT_CHECK(weight.size(0) >= groups, ErrorKind::InvalidArgument,
                "Given groups=", groups, ", expected weight to be at least ",
                groups, " at dimension 0, but got weight of size ",
                sizesToString(weight.sizes()), " instead");
  TURNOUT_CHECK(weight.size(0) % groups == 0, ErrorKind::InvalidArgument,
                "Given groups=", groups, ", expected weight to be divisible by ",
                groups, " at dimension 0, but got weight of size ",
                sizesToString(weight.sizes()), " instead");
  // The channels: an ordinary convolution's input has weight.size(1) *
  // groups of them and its output weight.size(0); a transposed one the
  // other way round.
  const int64_t in_ch = transposed ? weight.size(0) : weight.size(1) * groups;
  const int64_t out_ch = transposed ? weight.size(1) * groups : weight.size(0);
  const char* given = transposed ? "Given transposed=1, weight of size "
                                 : "Given groups=";
  TURNOUT_CHECK(input.size(1) == in_ch, ErrorKind::InvalidArgument, given,
                transposed ? sizesToString(weight.sizes())
                           : std::to_string(groups) + ", weight of size " +
                                 sizesToString(weight.sizes()),
                ", expected input", sizesToString(input.sizes()), " to have ",
                in_ch, " channels, but got ", input.size(1),
                " channels instead");
  if (has_bias) {
    TURNOUT_CHECK(bias->dim() == 1 && bias->size(0) == out_ch,
                  ErrorKind::InvalidArgument,
                  transposed ? "Given transposed=1, weight of size "
                             : "Given weight of size ",
                  sizesToString(weight.sizes()),
                  ", expected bias to be 1-dimensional with ", out_ch,
                  " elements, but got bias of size ",
                  sizesToString(bias->sizes()), " instead");
  }
  // Spatial sizes: the ordinary convolution's input (`full`) and output.
  DimVector full(g.nsp), reduced(g.nsp);
  if (!transposed) {
    // The padded input must hold the dilated kernel.
    bool fits = true;
    std::string padded, kernel;
    for (int64_t i = 0; i < g.nsp; ++i) {
      const int64_t in = input.size(2 + i) + 2 * p[i];
      const int64_t k = d[i] * (weight.size(2 + i) - 1) + 1;
      if (in < k) fits = false;
      padded += (i ? " x " : "") + std::to_string(in);
      kernel += (i ? " x " : "") + std::to_string(k);
      full[i] = input.size(2 + i);
      reduced[i] = (in - k) / s[i] + 1;
    }
    TURNOUT_CHECK(fits, ErrorKind::InvalidArgument,
                  "Calculated padded input size per channel: (", padded,
                  "). Kernel size: (", kernel,
                  "). Kernel size can't be greater than actual input size");
  } else {
    bool small_padding = true, positive = true;
    std::string in_text, out_text;
    for (int64_t i = 0; i < g.nsp; ++i) {
      if (op_pad[i] >= s[i] && op_pad[i] >= d[i]) small_padding = false;
      reduced[i] = input.size(2 + i);
      full[i] = (reduced[i] - 1) * s[i] - 2 * p[i] +
                d[i] * (weight.size(2 + i) - 1) + op_pad[i] + 1;
      if (full[i] <= 0) positive = false;
      in_text += (i ? " x " : "") + std::to_string(reduced[i]);
      out_text += (i ? " x " : "") + std::to_string(full[i]);
    }
    TURNOUT_CHECK(small_padding, ErrorKind::InvalidArgument,
                  "output padding must be smaller than either stride or "
                  "dilation, but got output_padding=",
                  listString(output_padding), ", stride=", listString(stride),
                  ", dilation=", listString(dilation));
    TURNOUT_CHECK(positive, ErrorKind::InvalidArgument,
                  "Given input size per channel: (", in_text,
                  "). Calculated output size per channel: (", out_text,
                  "). Output size is too small");
  }
  TURNOUT_CHECK(input.scalar_type() == weight.scalar_type() &&
                    (!has_bias || bias->scalar_type() == input.scalar_type()),
                ErrorKind::InvalidArgument, op,
                ": input, weight and bias must have the same dtype, but got "
                "input ", input.scalar_type(), ", weight ",
                weight.scalar_type(), has_bias ? ", bias " : "",
                has_bias ? toString(bias->scalar_type()) : "");
  TURNOUT_CHECK(input.scalar_type() == ScalarType::Float ||
                    input.scalar_type() == ScalarType::Double,
                ErrorKind::NotImplemented, op, ": not implemented for '",
                input.scalar_type(),
                "' in turnout (float32 and float64 only)");

  g.batch = input.size(0);
  g.in_channels = transposed ? out_ch : in_ch;
  g.out_channels = transposed ? in_ch : out_ch;
  g.groups = groups;
  // 2-d: dims (h, w); 1-d: h = 1 and the one dim is w.
  const int64_t last = g.nsp - 1;
  g.iw = full[last];
  g.ow = reduced[last];
  g.kw = weight.size(2 + last);
  g.sw = s[last];
  g.pw = p[last];
  g.dw = d[last];
  if (g.nsp == 2) {
    g.ih = full[0];
    g.oh = reduced[0];
    g.kh = weight.size(2);
    g.sh = s[0];
    g.ph = p[0];
    g.dh = d[0];
  }
  g.out_sizes = {g.batch, g.out_channels};
  g.in_sizes = {g.batch, g.in_channels};
  for (int64_t i = 0; i < g.nsp; ++i) {
    g.out_sizes.push_back(reduced[i]);
    g.in_sizes.push_back(full[i]);
  }
  return g;
}

// cols[(c * kh + i) * kw + j][y * ow + x] = in[c][y*sh - ph + i*dh][x*sw - pw + j*dw]
template <class T>
void im2col(const ConvGeometry& g, const T* in, int64_t channels, T* cols) {
  const int64_t L = g.outElems();
  for (int64_t c = 0; c < channels; ++c) {
    const T* plane = in + c * g.inElems();
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        T* row = cols + ((c * g.kh + i) * g.kw + j) * L;
        for (int64_t y = 0; y < g.oh; ++y) {
          T* dst = row + y * g.ow;
          const int64_t iy = y * g.sh - g.ph + i * g.dh;
          if (iy < 0 || iy >= g.ih) {
            std::fill(dst, dst + g.ow, T(0));
            continue;
          }
          const T* src = plane + iy * g.iw;
          const int64_t x0 = j * g.dw - g.pw;  // ix = x * sw + x0
          if (g.sw == 1 && x0 >= 0 && x0 + g.ow <= g.iw) {
            std::copy(src + x0, src + x0 + g.ow, dst);
            continue;
          }
          for (int64_t x = 0; x < g.ow; ++x) {
            const int64_t ix = x * g.sw + x0;
            dst[x] = (ix >= 0 && ix < g.iw) ? src[ix] : T(0);
          }
        }
      }
    }
  }
}

// The adjoint of im2col: adds every column entry into its input element.
template <class T>
void col2imAdd(const ConvGeometry& g, const T* cols, int64_t channels, T* in) {
  const int64_t L = g.outElems();
  for (int64_t c = 0; c < channels; ++c) {
    T* plane = in + c * g.inElems();
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        const T* row = cols + ((c * g.kh + i) * g.kw + j) * L;
        for (int64_t y = 0; y < g.oh; ++y) {
          const int64_t iy = y * g.sh - g.ph + i * g.dh;
          if (iy < 0 || iy >= g.ih) continue;
          const T* src = row + y * g.ow;
          T* dst = plane + iy * g.iw;
          const int64_t x0 = j * g.dw - g.pw;
          for (int64_t x = 0; x < g.ow; ++x) {
            const int64_t ix = x * g.sw + x0;
            if (ix >= 0 && ix < g.iw) dst[ix] += src[x];
          }
        }
      }
    }
  }
}

// out[N, C, L] += bias[C].
template <class T>
void addBias(const Tensor& bias, int64_t batch, int64_t channels, int64_t L,
             T* op) {
  const Tensor bc = contiguousCastTo(bias, bias.scalar_type());
  const T* bp = static_cast<const T*>(bc.data_ptr());
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      T* row = op + (n * channels + c) * L;
      const T v = bp[c];
      for (int64_t i = 0; i < L; ++i) row[i] += v;
    }
  }
}

// Below this many multiply-adds oneDNN's layout reorders cost more than
// they save (measured: 1x3x8x8 by 4 3x3 filters, 6.9e3, takes 13 us through
// oneDNN and 4 us through im2col; 1x8x16x16 by 8, 1.5e5, 18 and 28 us).
constexpr int64_t kOnednnMinMacs = 1 << 16;

// The float32 forward through oneDNN (kernels/onednn_conv.h) when it is
// large enough to gain; false when it did not run.
bool onednnForward(const ConvGeometry& g, const Tensor& x, const Tensor& w,
                   const std::optional<Tensor>& bias, Tensor& out) {
  const int64_t macs =
      g.batch * g.out_channels * g.outElems() * g.cg() * g.kernelElems();
  if (!onednn::available() || macs < kOnednnMinMacs) return false;
  Tensor b;
  if (bias.has_value() && bias->defined()) {
    b = contiguousCastTo(*bias, ScalarType::Float);
  }
  onednn::Conv2dShape s;
  s.batch = g.batch;
  s.in_channels = g.in_channels;
  s.out_channels = g.out_channels;
  s.groups = g.groups;
  s.ih = g.ih, s.iw = g.iw, s.kh = g.kh, s.kw = g.kw, s.oh = g.oh, s.ow = g.ow;
  s.sh = g.sh, s.sw = g.sw, s.ph = g.ph, s.pw = g.pw, s.dh = g.dh, s.dw = g.dw;
  return onednn::convForward(
      s, static_cast<const float*>(x.data_ptr()),
      static_cast<const float*>(w.data_ptr()),
      b.defined() ? static_cast<const float*>(b.data_ptr()) : nullptr,
      static_cast<float*>(out.data_ptr()));
}

// out[N, out_channels, oh, ow] = the ordinary convolution of `input`
// (shaped in_sizes), plus the bias when given.
template <class T>
void convForward(const ConvGeometry& g, const Tensor& input,
                 const Tensor& weight, const std::optional<Tensor>& bias,
                 Tensor& out) {
  const Tensor x = contiguousCastTo(input, input.scalar_type());
  const Tensor w = contiguousCastTo(weight, weight.scalar_type());
  if constexpr (std::is_same_v<T, float>) {
    if (onednnForward(g, x, w, bias, out)) return;
  }
  const T* xp = static_cast<const T*>(x.data_ptr());
  const T* wp = static_cast<const T*>(w.data_ptr());
  T* op = static_cast<T*>(out.data_ptr());
  const int64_t cg = g.cg(), og = g.og(), K = g.kernelElems(),
                L = g.outElems(), rows = cg * K;
  std::vector<T> cols;
  if (!g.pointwise()) cols.resize(static_cast<size_t>(rows * L));
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      const T* in = xp + (n * g.in_channels + gi * cg) * g.inElems();
      const T* b = in;
      if (!g.pointwise()) {
        im2col(g, in, cg, cols.data());
        b = cols.data();
      }
      blas_internal::gemm<T, T>(og, L, rows, T(1), wp + gi * og * rows, rows,
                                1, b, L, 1, T(0),
                                op + (n * g.out_channels + gi * og) * L, L, 1);
    }
  }
  if (bias.has_value() && bias->defined()) {
    addBias<T>(*bias, g.batch, g.out_channels, L, op);
  }
}

// gi (shaped in_sizes) = the ordinary convolution's input gradient for
// `grad_output` (shaped out_sizes): weight^T @ grad_output, then col2im.
template <class T>
void convInputGrad(const ConvGeometry& g, const Tensor& grad_output,
                   const Tensor& weight, Tensor& gi) {
  const Tensor go = contiguousCastTo(grad_output, grad_output.scalar_type());
  const Tensor w = contiguousCastTo(weight, weight.scalar_type());
  const T* gop = static_cast<const T*>(go.data_ptr());
  const T* wp = static_cast<const T*>(w.data_ptr());
  T* gip = static_cast<T*>(gi.data_ptr());
  const int64_t cg = g.cg(), og = g.og(), K = g.kernelElems(),
                L = g.outElems(), rows = cg * K;
  std::vector<T> cols;
  if (!g.pointwise()) cols.resize(static_cast<size_t>(rows * L));
  std::fill(gip, gip + gi.numel(), T(0));
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t gr = 0; gr < g.groups; ++gr) {
      const T* a = wp + gr * og * rows;  // [og, rows], read transposed
      const T* b = gop + (n * g.out_channels + gr * og) * L;
      T* dst = gip + (n * g.in_channels + gr * cg) * g.inElems();
      if (g.pointwise()) {
        blas_internal::gemm<T, T>(rows, L, og, T(1), a, 1, rows, b, L, 1, T(0),
                                  dst, L, 1);
      } else {
        blas_internal::gemm<T, T>(rows, L, og, T(1), a, 1, rows, b, L, 1, T(0),
                                  cols.data(), L, 1);
        col2imAdd(g, cols.data(), cg, dst);
      }
    }
  }
}

// gw (weight's shape) = the ordinary convolution's weight gradient:
// the sum over images of grad_output @ im2col(input)^T.
template <class T>
void convWeightGrad(const ConvGeometry& g, const Tensor& grad_output,
                    const Tensor& input, Tensor& gw) {
  const Tensor go = contiguousCastTo(grad_output, grad_output.scalar_type());
  const Tensor x = contiguousCastTo(input, input.scalar_type());
  const T* gop = static_cast<const T*>(go.data_ptr());
  const T* xp = static_cast<const T*>(x.data_ptr());
  T* gwp = static_cast<T*>(gw.data_ptr());
  const int64_t cg = g.cg(), og = g.og(), K = g.kernelElems(),
                L = g.outElems(), rows = cg * K;
  std::vector<T> cols;
  if (!g.pointwise()) cols.resize(static_cast<size_t>(rows * L));
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t gr = 0; gr < g.groups; ++gr) {
      const T* in = xp + (n * g.in_channels + gr * cg) * g.inElems();
      const T* b = in;
      if (!g.pointwise()) {
        im2col(g, in, cg, cols.data());
        b = cols.data();
      }
      // gw[og, rows] (+)= go[og, L] @ cols^T
      blas_internal::gemm<T, T>(og, rows, L, T(1),
                                gop + (n * g.out_channels + gr * og) * L, L, 1,
                                b, 1, L, n == 0 ? T(0) : T(1),
                                gwp + gr * og * rows, rows, 1);
    }
  }
  if (g.batch == 0) std::fill(gwp, gwp + gw.numel(), T(0));
}

// gb[C] = the sum of grad[N, C, L] over N and L, in double.
template <class T>
void biasGrad(const Tensor& grad, Tensor& gb) {
  const Tensor go = contiguousCastTo(grad, grad.scalar_type());
  const T* gop = static_cast<const T*>(go.data_ptr());
  T* gbp = static_cast<T*>(gb.data_ptr());
  const int64_t batch = go.size(0), channels = go.size(1),
                L = channels == 0 || batch == 0
                        ? 0
                        : go.numel() / (batch * channels);
  for (int64_t c = 0; c < channels; ++c) {
    double total = 0;
    for (int64_t n = 0; n < batch; ++n) {
      const T* row = gop + (n * channels + c) * L;
      for (int64_t i = 0; i < L; ++i) total += row[i];
    }
    gbp[c] = static_cast<T>(total);
  }
}

template <class T>
void convolutionFloating(const ConvGeometry& g, const Tensor& input,
                         const Tensor& weight,
                         const std::optional<Tensor>& bias, Tensor& out) {
  if (!g.transposed) {
    convForward<T>(g, input, weight, bias, out);
    return;
  }
  convInputGrad<T>(g, input, weight, out);
  if (bias.has_value() && bias->defined()) {
    addBias<T>(*bias, g.batch, g.in_channels, g.inElems(),
               static_cast<T*>(out.data_ptr()));
  }
}

Tensor convolution_kernel(const Tensor& input, const Tensor& weight,
                          const std::optional<Tensor>& bias, IntArrayRef stride,
                          IntArrayRef padding, IntArrayRef dilation,
                          bool transposed, IntArrayRef output_padding,
                          int64_t groups) {
  const ConvGeometry g =
      checkConvolution(input, weight, bias, stride, padding, dilation,
                       transposed, output_padding, groups);
  Tensor out =
      emptyTensor(g.resultSizes(), input.scalar_type(), input.device());
  if (out.is_meta() || out.numel() == 0) return out;
  if (input.scalar_type() == ScalarType::Float) {
    convolutionFloating<float>(g, input, weight, bias, out);
  } else {
    convolutionFloating<double>(g, input, weight, bias, out);
  }
  return out;
}

Tensor& convolution_out_kernel(const Tensor& input, const Tensor& weight,
                               const std::optional<Tensor>& bias,
                               IntArrayRef stride, IntArrayRef padding,
                               IntArrayRef dilation, bool transposed,
                               IntArrayRef output_padding, int64_t groups,
                               Tensor& out) {
  return reduce_internal::copyToOut(
      "convolution.out()",
      convolution_kernel(input, weight, bias, stride, padding, dilation,
                         transposed, output_padding, groups),
      out);
}

// The gradients of aten::convolution (ordinary or transposed) that
// output_mask asks for, into gi, gw and gb (defined exactly when asked).
template <class T>
void convolutionBackwardFloating(const ConvGeometry& g,
                                 const Tensor& grad_output,
                                 const Tensor& input, const Tensor& weight,
                                 Tensor& gi, Tensor& gw, Tensor& gb) {
  if (gi.defined() && gi.numel() > 0) {
    if (g.transposed) {
      convForward<T>(g, grad_output, weight, std::nullopt, gi);
    } else {
      convInputGrad<T>(g, grad_output, weight, gi);
    }
  }
  if (gw.defined() && gw.numel() > 0) {
    // Transposed: the ordinary convolution's input is grad_output, and its
    // output gradient is the transposed call's input.
    if (g.transposed) {
      convWeightGrad<T>(g, input, grad_output, gw);
    } else {
      convWeightGrad<T>(g, grad_output, input, gw);
    }
  }
  if (gb.defined() && gb.numel() > 0) biasGrad<T>(grad_output, gb);
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward_kernel(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight,
    const std::optional<std::vector<int64_t>>& bias_sizes, IntArrayRef stride,
    IntArrayRef padding, IntArrayRef dilation, bool transposed,
    IntArrayRef output_padding, int64_t groups,
    std::vector<bool> output_mask) {
  const char* op = "convolution_backward()";
  TURNOUT_CHECK(output_mask.size() == 3, ErrorKind::InvalidArgument, op,
                ": output_mask must have 3 entries, got ", output_mask.size());
  const ConvGeometry g =
      checkConvolution(input, weight, std::nullopt, stride, padding, dilation,
                       transposed, output_padding, groups);
  TURNOUT_CHECK(grad_output.defined(), ErrorKind::InvalidArgument, op,
                ": grad_output must be a defined tensor");
  checkSameDevice(op, input, grad_output);
  TURNOUT_CHECK(grad_output.sizes() == IntArrayRef(g.resultSizes()),
                ErrorKind::InvalidArgument, op, ": expected grad_output of size ",
                sizesToString(g.resultSizes()), " (the convolution's output), "
                "but got ", sizesToString(grad_output.sizes()));
  TURNOUT_CHECK(grad_output.scalar_type() == input.scalar_type(),
                ErrorKind::InvalidArgument, op, ": grad_output has dtype ",
                grad_output.scalar_type(), " but input has ",
                input.scalar_type());
  const int64_t result_channels = grad_output.size(1);
  if (output_mask[2] && bias_sizes.has_value()) {
    TURNOUT_CHECK(
        bias_sizes->size() == 1 && (*bias_sizes)[0] == result_channels,
        ErrorKind::InvalidArgument, op, ": expected bias_sizes [",
        result_channels, "], got ", sizesToString(*bias_sizes));
  }
  Tensor gi, gw, gb;
  const ScalarType dt = input.scalar_type();
  if (output_mask[0]) gi = emptyTensor(input.sizes(), dt, input.device());
  if (output_mask[1]) gw = emptyTensor(weight.sizes(), dt, input.device());
  if (output_mask[2]) gb = emptyTensor({result_channels}, dt, input.device());
  if (input.is_meta()) return {gi, gw, gb};
  if (dt == ScalarType::Float) {
    convolutionBackwardFloating<float>(g, grad_output, input, weight, gi, gw,
                                       gb);
  } else {
    convolutionBackwardFloating<double>(g, grad_output, input, weight, gi, gw,
                                        gb);
  }
  return {gi, gw, gb};
}

// ---- CompositeImplicitAutograd ---------------------------------------------

// conv1d / conv2d: an input of weight.dim() - 1 dimensions is one unbatched
// image, as torch's.
Tensor convNd(const char* name, int64_t nsp, const Tensor& input,
              const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
              int64_t groups, bool transposed = false,
              IntArrayRef output_padding = {}) {
  TURNOUT_CHECK(input.defined() && weight.defined(), ErrorKind::InvalidArgument,
                name, ": input and weight must be defined tensors");
  TURNOUT_CHECK(input.dim() == nsp + 1 || input.dim() == nsp + 2,
                ErrorKind::InvalidArgument, "Expected ", nsp + 1,
                "D (unbatched) or ", nsp + 2, "D (batched) input to ", name,
                ", but got input of size: ", sizesToString(input.sizes()));
  const bool unbatched = input.dim() == nsp + 1;
  const std::vector<int64_t> zeros(static_cast<size_t>(nsp), 0);
  // As torch's: a None bias reaches convolution as an undefined tensor (its
  // autograd node shows it so: grad_fn._saved_bias_sym_sizes_opt is (0,)).
  const std::optional<Tensor> bias_or_undefined(bias.value_or(Tensor()));
  Tensor out = convolution(unbatched ? unsqueeze(input, 0) : input, weight,
                           bias_or_undefined, stride, padding, dilation,
                           transposed,
                           transposed ? output_padding : IntArrayRef(zeros),
                           groups);
  return unbatched ? squeeze(out, 0) : out;
}

Tensor conv2d_composite(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef dilation,
                        int64_t groups) {
  return convNd("conv2d", 2, input, weight, bias, stride, padding, dilation,
                groups);
}

Tensor conv1d_composite(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef dilation,
                        int64_t groups) {
  return convNd("conv1d", 1, input, weight, bias, stride, padding, dilation,
                groups);
}

// conv_transpose1d / conv_transpose2d: torch's argument order (groups
// before dilation).
Tensor conv_transpose2d_composite(const Tensor& input, const Tensor& weight,
                                  const std::optional<Tensor>& bias,
                                  IntArrayRef stride, IntArrayRef padding,
                                  IntArrayRef output_padding, int64_t groups,
                                  IntArrayRef dilation) {
  return convNd("conv_transpose2d", 2, input, weight, bias, stride, padding,
                dilation, groups, /*transposed=*/true, output_padding);
}

Tensor conv_transpose1d_composite(const Tensor& input, const Tensor& weight,
                                  const std::optional<Tensor>& bias,
                                  IntArrayRef stride, IntArrayRef padding,
                                  IntArrayRef output_padding, int64_t groups,
                                  IntArrayRef dilation) {
  return convNd("conv_transpose1d", 1, input, weight, bias, stride, padding,
                dilation, groups, /*transposed=*/true, output_padding);
}

// _convolution (what traced graphs of nn.Conv2d call;
// CompositeExplicitAutograd, as torch's, so that it gets its own autograd
// node): the backend flags choose among torch's implementations; here there
// is one.
Tensor internal_convolution_composite(
    const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
    IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
    bool transposed, IntArrayRef output_padding, int64_t groups, bool benchmark,
    bool deterministic, bool cudnn_enabled, bool allow_tf32) {
  (void)benchmark, (void)deterministic, (void)cudnn_enabled, (void)allow_tf32;
  return convolution(input, weight, bias, stride, padding, dilation, transposed,
                     output_padding, groups);
}

Tensor internal_convolution_deprecated_composite(
    const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
    IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
    bool transposed, IntArrayRef output_padding, int64_t groups, bool benchmark,
    bool deterministic, bool cudnn_enabled) {
  // As torch's: _convolution's, with allow_tf32 (torch passes its global
  // TF32 setting; the flags do not matter here).
  return _convolution(input, weight, bias, stride, padding, dilation,
                      transposed, output_padding, groups, benchmark,
                      deterministic, cudnn_enabled, /*allow_tf32=*/true);
}

}  // namespace
}  // namespace turnout

// ---- Registration -----------------------------------------------------------

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);  // torch's tags (kernels/aten_tags.h)
  m.def(
      "convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, "
      "int[] padding, int[] dilation, bool transposed, int[] output_padding, "
      "int groups) -> Tensor");
  m.def(
      "convolution.out(Tensor input, Tensor weight, Tensor? bias, int[] "
      "stride, int[] padding, int[] dilation, bool transposed, int[] "
      "output_padding, int groups, *, Tensor(a!) out) -> Tensor(a!)");
  m.def(
      "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, "
      "SymInt[]? bias_sizes, int[] stride, int[] padding, int[] dilation, "
      "bool transposed, int[] output_padding, int groups, bool[3] "
      "output_mask) -> (Tensor, Tensor, Tensor)");
  m.def(
      "conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] "
      "stride=1, int[2] padding=0, int[2] dilation=1, int groups=1) -> "
      "Tensor");
  m.def(
      "conv1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] "
      "stride=[1], int[1] padding=[0], int[1] dilation=[1], int groups=1) -> "
      "Tensor");
  m.def(
      "conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, "
      "int[1] stride=[1], int[1] padding=[0], int[1] output_padding=[0], int "
      "groups=1, int[1] dilation=[1]) -> Tensor");
  m.def(
      "conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, "
      "int[2] stride=1, int[2] padding=0, int[2] output_padding=0, int "
      "groups=1, int[2] dilation=1) -> Tensor");
  m.def(
      "_convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, "
      "int[] padding, int[] dilation, bool transposed, int[] output_padding, "
      "int groups, bool benchmark, bool deterministic, bool cudnn_enabled, "
      "bool allow_tf32) -> Tensor");
  m.def(
      "_convolution.deprecated(Tensor input, Tensor weight, Tensor? bias, "
      "int[] stride, int[] padding, int[] dilation, bool transposed, int[] "
      "output_padding, int groups, bool benchmark, bool deterministic, bool "
      "cudnn_enabled) -> Tensor");
}

// One function per operator serves CPU and Meta: the checks and shapes come
// first, the arithmetic is skipped for Meta tensors.
#define TURNOUT_CONV_KERNELS(m)                                    \
  m.impl("convolution", TURNOUT_FN(convolution_kernel));           \
  m.impl("convolution.out", TURNOUT_FN(convolution_out_kernel));   \
  m.impl("convolution_backward", TURNOUT_FN(convolution_backward_kernel))

TURNOUT_LIBRARY_IMPL(aten, CPU, m) {
  using namespace turnout;  // NOLINT: the kernels above
  TURNOUT_CONV_KERNELS(m);
}
TURNOUT_LIBRARY_IMPL(aten, Meta, m) {
  using namespace turnout;  // NOLINT: the kernels above
  TURNOUT_CONV_KERNELS(m);
}
#undef TURNOUT_CONV_KERNELS

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  using namespace turnout;  // NOLINT: the kernels above
  m.impl("conv2d", TURNOUT_FN(conv2d_composite));
  m.impl("conv1d", TURNOUT_FN(conv1d_composite));
  m.impl("conv_transpose1d", TURNOUT_FN(conv_transpose1d_composite));
  m.impl("conv_transpose2d.input", TURNOUT_FN(conv_transpose2d_composite));
  m.impl("_convolution.deprecated",
         TURNOUT_FN(internal_convolution_deprecated_composite));
}

TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  using namespace turnout;  // NOLINT: the kernel above
  m.impl("_convolution", TURNOUT_FN(internal_convolution_composite));
}

// ---- Front end ----------------------------------------------------------------

namespace turnout {

Tensor convolution(const Tensor& input, const Tensor& weight,
                   const std::optional<Tensor>& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed,
                   IntArrayRef output_padding, int64_t groups) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::convolution", "")
          .typed<Tensor(const Tensor&, const Tensor&,
                        const std::optional<Tensor>&, IntArrayRef, IntArrayRef,
                        IntArrayRef, bool, IntArrayRef, int64_t)>();
  return op.call(input, weight, bias, stride, padding, dilation, transposed,
                 output_padding, groups);
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight,
    const std::optional<std::vector<int64_t>>& bias_sizes, IntArrayRef stride,
    IntArrayRef padding, IntArrayRef dilation, bool transposed,
    IntArrayRef output_padding, int64_t groups,
    std::vector<bool> output_mask) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::convolution_backward", "")
          .typed<std::tuple<Tensor, Tensor, Tensor>(
              const Tensor&, const Tensor&, const Tensor&,
              const std::optional<std::vector<int64_t>>&, IntArrayRef,
              IntArrayRef, IntArrayRef, bool, IntArrayRef, int64_t,
              std::vector<bool>)>();
  return op.call(grad_output, input, weight, bias_sizes, stride, padding,
                 dilation, transposed, output_padding, groups, output_mask);
}

Tensor conv2d(const Tensor& input, const Tensor& weight,
              const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::conv2d", "")
          .typed<Tensor(const Tensor&, const Tensor&,
                        const std::optional<Tensor>&, IntArrayRef, IntArrayRef,
                        IntArrayRef, int64_t)>();
  return op.call(input, weight, bias, stride, padding, dilation, groups);
}

Tensor _convolution(const Tensor& input, const Tensor& weight,
                    const std::optional<Tensor>& bias, IntArrayRef stride,
                    IntArrayRef padding, IntArrayRef dilation, bool transposed,
                    IntArrayRef output_padding, int64_t groups, bool benchmark,
                    bool deterministic, bool cudnn_enabled, bool allow_tf32) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::_convolution", "")
          .typed<Tensor(const Tensor&, const Tensor&,
                        const std::optional<Tensor>&, IntArrayRef, IntArrayRef,
                        IntArrayRef, bool, IntArrayRef, int64_t, bool, bool,
                        bool, bool)>();
  return op.call(input, weight, bias, stride, padding, dilation, transposed,
                 output_padding, groups, benchmark, deterministic,
                 cudnn_enabled, allow_tf32);
}

Tensor conv1d(const Tensor& input, const Tensor& weight,
              const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::conv1d", "")
          .typed<Tensor(const Tensor&, const Tensor&,
                        const std::optional<Tensor>&, IntArrayRef, IntArrayRef,
                        IntArrayRef, int64_t)>();
  return op.call(input, weight, bias, stride, padding, dilation, groups);
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding,
                        int64_t groups, IntArrayRef dilation) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::conv_transpose2d", "input")
          .typed<Tensor(const Tensor&, const Tensor&,
                        const std::optional<Tensor>&, IntArrayRef, IntArrayRef,
                        IntArrayRef, int64_t, IntArrayRef)>();
  return op.call(input, weight, bias, stride, padding, output_padding, groups,
                 dilation);
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding,
                        int64_t groups, IntArrayRef dilation) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::conv_transpose1d", "")
          .typed<Tensor(const Tensor&, const Tensor&,
                        const std::optional<Tensor>&, IntArrayRef, IntArrayRef,
                        IntArrayRef, int64_t, IntArrayRef)>();
  return op.call(input, weight, bias, stride, padding, output_padding, groups,
                 dilation);
}

}  // namespace turnout
