// max_pool2d_with_indices, avg_pool2d, _adaptive_avg_pool2d and their
// backward operators (CPU and Meta kernels), and the composite max_pool2d
// and adaptive_avg_pool2d. Every kernel works plane by plane (a plane is
// one channel of one image), in double, on contiguous copies.
#include "kernels/pool.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/aten_tags.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/loops.h"
#include "kernels/parallel.h"
#include "kernels/reduce.h"
#include "kernels/reduce_utils.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace {

using reduce_internal::checkSameDevice;
using reduce_internal::copyToOut;
using reduce_internal::sizesToString;

struct PoolGeometry {
  int64_t planes = 0, ih = 0, iw = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  DimVector out_sizes;
};

// Floor division (rounding toward negative infinity).
int64_t divFloor(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t pooledSize(int64_t in, int64_t k, int64_t pad, int64_t stride,
                   int64_t dilation, bool ceil_mode) {
  int64_t out =
      divFloor(in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0),
               stride) +
      1;
  // The last window must start inside the input or its left padding.
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// One or two values: (first, second).
std::pair<int64_t, int64_t> pair(IntArrayRef v) {
  return {v[0], v.size() == 2 ? v[1] : v[0]};
}

void checkFloating(const char* op, const Tensor& self) {
  TURNOUT_CHECK(isFloatingType(self.scalar_type()), ErrorKind::NotImplemented,
                "\"", op, "\" not implemented for '", self.scalar_type(),
                "' (floating dtypes only)");
}

// The shared checks of max_pool2d and avg_pool2d (name: "max_pool2d" or
// "avg_pool2d"), torch 1.13's messages.
PoolGeometry checkPool(const char* name, const Tensor& self,
                       IntArrayRef kernel_size, IntArrayRef stride,
                       IntArrayRef padding, IntArrayRef dilation,
                       bool ceil_mode) {
  TURNOUT_CHECK(self.defined(), ErrorKind::InvalidArgument, name,
                ": self must be a defined tensor");
  TURNOUT_CHECK(kernel_size.size() == 1 || kernel_size.size() == 2,
                ErrorKind::InvalidArgument, name,
                ": kernel_size must either be a single int, or a tuple of two "
                "ints (got ", sizesToString(kernel_size), ")");
  TURNOUT_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 2,
                ErrorKind::InvalidArgument, name,
                ": stride must either be omitted, a single int, or a tuple of "
                "two ints (got ", sizesToString(stride), ")");
  TURNOUT_CHECK(padding.size() == 1 || padding.size() == 2,
                ErrorKind::InvalidArgument, name,
                ": padding must either be a single int, or a tuple of two ints "
                "(got ", sizesToString(padding), ")");
  TURNOUT_CHECK(dilation.size() == 1 || dilation.size() == 2,
                ErrorKind::InvalidArgument, name,
                ": dilation must be either a single int, or a tuple of two "
                "ints (got ", sizesToString(dilation), ")");
  PoolGeometry g;
  std::tie(g.kh, g.kw) = pair(kernel_size);
  std::tie(g.sh, g.sw) = stride.empty() ? pair(kernel_size) : pair(stride);
  std::tie(g.ph, g.pw) = pair(padding);
  std::tie(g.dh, g.dw) = pair(dilation);
  const int64_t nd = self.dim();
  bool non_empty = nd == 3 || nd == 4;
  for (int64_t d = nd - 3; non_empty && d < nd; ++d) {
    if (d > 0 && self.size(d) == 0) non_empty = false;
  }
  TURNOUT_CHECK(non_empty, ErrorKind::InvalidArgument, name,
                ": non-empty 3D or 4D (batch mode) tensor expected for input, "
                "but got input of size ", sizesToString(self.sizes()));
  TURNOUT_CHECK(g.kh > 0 && g.kw > 0, ErrorKind::InvalidArgument, name,
                ": kernel size should be greater than zero, but got kH: ", g.kh,
                " kW: ", g.kw);
  TURNOUT_CHECK(g.sh > 0 && g.sw > 0, ErrorKind::InvalidArgument, name,
                ": stride should be greater than zero, but got dH: ", g.sh,
                " dW: ", g.sw);
  TURNOUT_CHECK(g.dh > 0 && g.dw > 0, ErrorKind::InvalidArgument, name,
                ": dilation should be greater than zero, but got dilationH: ",
                g.dh, " dilationW: ", g.dw);
  TURNOUT_CHECK(g.ph >= 0 && g.pw >= 0, ErrorKind::InvalidArgument, name,
                ": pad must be non-negative, but got padH: ", g.ph,
                " padW: ", g.pw);
  TURNOUT_CHECK(g.ph <= g.kh / 2 && g.pw <= g.kw / 2,
                ErrorKind::InvalidArgument, name,
                ": pad should be at most half of kernel size, but got pad=",
                g.ph > g.kh / 2 ? g.ph : g.pw, " and kernel_size=",
                g.ph > g.kh / 2 ? g.kh : g.kw);
  g.ih = self.size(nd - 2);
  g.iw = self.size(nd - 1);
  const int64_t channels = self.size(nd - 3);
  g.planes = channels * (nd == 4 ? self.size(0) : 1);
  g.oh = pooledSize(g.ih, g.kh, g.ph, g.sh, g.dh, ceil_mode);
  g.ow = pooledSize(g.iw, g.kw, g.pw, g.sw, g.dw, ceil_mode);
  TURNOUT_CHECK(g.oh >= 1 && g.ow >= 1, ErrorKind::InvalidArgument, name,
                ": Given input size: (", channels, "x", g.ih, "x", g.iw,
                "). Calculated output size: (", channels, "x", g.oh, "x", g.ow,
                "). Output size is too small");
  g.out_sizes = DimVector(self.sizes().begin(), self.sizes().end());
  g.out_sizes[nd - 2] = g.oh;
  g.out_sizes[nd - 1] = g.ow;
  return g;
}

// Runs fn(plane) for every plane, split over the thread pool.
template <class Fn>
void forEachPlane(const PoolGeometry& g, int64_t work_per_plane, Fn fn) {
  const int64_t grain =
      std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, work_per_plane));
  parallel_for(0, g.planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) fn(p);
  });
}

void checkGradShape(const char* op, const Tensor& grad_output,
                    IntArrayRef expected) {
  TURNOUT_CHECK(grad_output.defined(), ErrorKind::InvalidArgument, op,
                ": grad_output must be a defined tensor");
  TURNOUT_CHECK(grad_output.sizes() == expected, ErrorKind::InvalidArgument, op,
                ": expected grad_output of size ", sizesToString(expected),
                " (the forward's output), but got ",
                sizesToString(grad_output.sizes()));
}

// ---- max_pool2d_with_indices -------------------------------------------------

// The window geometry of one plane, by value: read through a reference
// (the PoolGeometry or a lambda's captures), every field was reloaded for
// each element, since the int64 index stores might alias it.
struct PoolWindows {
  int64_t ih, iw, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
};

// The max pool of one contiguous plane `in` into `out` and `idx`. torch's
// rule: start at the window's first element inside the input with -inf; a
// larger value or a NaN (the last one) wins. A window that lies wholly
// inside the input (every window when there is no padding and no ceil_mode
// overhang) skips the bounds checks and branches (on data such as relu's
// output a branch mispredicted about every other element).
// One step of the rule for a window's candidate `v` at `k`, with masks, not
// selects: GCC turned even `take ? v : best` back into a branch.
template <class To, class From>
inline To bitCast(From v) {
  static_assert(sizeof(To) == sizeof(From));
  To out;
  std::memcpy(&out, &v, sizeof out);
  return out;
}

template <class T>
inline void takeIfLarger(T v, int64_t k, T& best, int64_t& best_i) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const bool take = (v > best) | (v != v);
  const Bits m = Bits{0} - static_cast<Bits>(take);
  const Bits vb = bitCast<Bits>(v), bb = bitCast<Bits>(best);
  best = bitCast<T>((vb & m) | (bb & ~m));
  const uint64_t im = uint64_t{0} - static_cast<uint64_t>(take);
  best_i = static_cast<int64_t>((static_cast<uint64_t>(k) & im) |
                                (static_cast<uint64_t>(best_i) & ~im));
}

// The 2x2 window with stride 2, no padding, no dilation (CNNs' usual
// pool): four candidates per output, in torch's order. The first always
// wins against -inf or ties at index 0 of the window, so it starts there.
template <class T>
void maxPool2x2Plane(const PoolWindows w, const T* in, T* out, int64_t* idx) {
  for (int64_t y = 0; y < w.oh; ++y) {
    const int64_t r0 = 2 * y * w.iw, r1 = r0 + w.iw;
    for (int64_t x = 0; x < w.ow; ++x) {
      const int64_t k = r0 + 2 * x;
      T best = in[k];
      int64_t best_i = k;
      takeIfLarger(in[k + 1], k + 1, best, best_i);
      takeIfLarger(in[r1 + 2 * x], r1 + 2 * x, best, best_i);
      takeIfLarger(in[r1 + 2 * x + 1], r1 + 2 * x + 1, best, best_i);
      out[y * w.ow + x] = best;
      idx[y * w.ow + x] = best_i;
    }
  }
}

template <class T>
void maxPoolPlane(const PoolWindows w, const T* in, T* out, int64_t* idx) {
  if (w.kh == 2 && w.kw == 2 && w.sh == 2 && w.sw == 2 && w.ph == 0 &&
      w.pw == 0 && w.dh == 1 && w.dw == 1 && 2 * w.oh <= w.ih &&
      2 * w.ow <= w.iw) {
    maxPool2x2Plane(w, in, out, idx);
    return;
  }
  for (int64_t y = 0; y < w.oh; ++y) {
    const int64_t hs = y * w.sh - w.ph;
    const bool rows_inside = hs >= 0 && hs + (w.kh - 1) * w.dh < w.ih;
    for (int64_t x0 = 0; x0 < w.ow; ++x0, ++out, ++idx) {
      const int64_t ws = x0 * w.sw - w.pw;
      if (rows_inside && ws >= 0 && ws + (w.kw - 1) * w.dw < w.iw) {
        T best = -std::numeric_limits<T>::infinity();
        int64_t best_i = hs * w.iw + ws;
        for (int64_t i = 0; i < w.kh; ++i) {
          const int64_t row = (hs + i * w.dh) * w.iw + ws;
          for (int64_t j = 0; j < w.kw; ++j) {
            const int64_t k = row + j * w.dw;
            takeIfLarger(in[k], k, best, best_i);
          }
        }
        *out = best;
        *idx = best_i;
        continue;
      }
      int64_t y0 = hs, x1 = ws;
      while (y0 < 0) y0 += w.dh;
      while (x1 < 0) x1 += w.dw;
      T best = -std::numeric_limits<T>::infinity();
      int64_t best_i = y0 * w.iw + x1;
      for (int64_t i = 0; i < w.kh; ++i) {
        const int64_t iy = hs + i * w.dh;
        if (iy < 0 || iy >= w.ih) continue;
        for (int64_t j = 0; j < w.kw; ++j) {
          const int64_t ix = ws + j * w.dw;
          if (ix < 0 || ix >= w.iw) continue;
          takeIfLarger(in[iy * w.iw + ix], iy * w.iw + ix, best, best_i);
        }
      }
      *out = best;
      *idx = best_i;
    }
  }
}

// The max pool of every plane of contiguous `xp` into `vp` and `ip`, in T.
// Comparisons in float or double give the same winner, so a contiguous
// float or double input runs in its own dtype (no conversion to double and
// back, two passes and two tensors fewer), any other through a double copy.
template <class T>
void maxPoolPlanes(const PoolGeometry& g, const T* xp, T* vp, int64_t* ip) {
  const PoolWindows w{g.ih, g.iw, g.oh, g.ow, g.kh, g.kw,
                      g.sh, g.sw, g.ph, g.pw, g.dh, g.dw};
  forEachPlane(g, g.oh * g.ow * g.kh * g.kw, [&](int64_t p) {
    maxPoolPlane(w, xp + p * w.ih * w.iw, vp + p * w.oh * w.ow,
                 ip + p * w.oh * w.ow);
  });
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices_kernel(
    const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
    IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const PoolGeometry g = checkPool("max_pool2d", self, kernel_size, stride,
                                   padding, dilation, ceil_mode);
  checkFloating("max_pool2d", self);
  Tensor out = emptyTensor(g.out_sizes, self.scalar_type(), self.device());
  Tensor indices = emptyTensor(g.out_sizes, ScalarType::Long, self.device());
  if (self.is_meta() || out.numel() == 0) return {out, indices};
  int64_t* ip = indices.data_ptr<int64_t>();
  if (self.is_contiguous() && self.scalar_type() == ScalarType::Float) {
    maxPoolPlanes(g, self.data_ptr<float>(), out.data_ptr<float>(), ip);
    return {out, indices};
  }
  if (self.is_contiguous() && self.scalar_type() == ScalarType::Double) {
    maxPoolPlanes(g, self.data_ptr<double>(), out.data_ptr<double>(), ip);
    return {out, indices};
  }
  const Tensor x = contiguousCastTo(self, ScalarType::Double);
  Tensor values = emptyTensor(g.out_sizes, ScalarType::Double, self.device());
  maxPoolPlanes(g, x.data_ptr<double>(), values.data_ptr<double>(), ip);
  copyCast(out, values);
  return {out, indices};
}

std::tuple<Tensor&, Tensor&> max_pool2d_with_indices_out_kernel(
    const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
    IntArrayRef padding, IntArrayRef dilation, bool ceil_mode, Tensor& out,
    Tensor& indices) {
  auto [o, i] = max_pool2d_with_indices_kernel(self, kernel_size, stride,
                                               padding, dilation, ceil_mode);
  copyToOut("max_pool2d_with_indices.out()", o, out);
  copyToOut("max_pool2d_with_indices.out()", i, indices);
  return {out, indices};
}

Tensor max_pool2d_with_indices_backward_kernel(
    const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
    IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
    bool ceil_mode, const Tensor& indices) {
  const char* op = "max_pool2d_with_indices_backward()";
  const PoolGeometry g = checkPool("max_pool2d", self, kernel_size, stride,
                                   padding, dilation, ceil_mode);
  checkFloating("max_pool2d", self);
  checkGradShape(op, grad_output, g.out_sizes);
  checkSameDevice(op, self, grad_output);
  checkSameDevice(op, self, indices);
  TURNOUT_CHECK(indices.defined() && indices.scalar_type() == ScalarType::Long &&
                    indices.sizes() == IntArrayRef(g.out_sizes),
                ErrorKind::InvalidArgument, op,
                ": expected indices of dtype Long and size ",
                sizesToString(g.out_sizes), " (as max_pool2d_with_indices "
                "returns them)");
  Tensor grad_input = emptyTensor(self.sizes(), self.scalar_type(), self.device());
  if (self.is_meta() || grad_input.numel() == 0) return grad_input;
  const Tensor go = contiguousCastTo(grad_output, ScalarType::Double);
  const Tensor ix = contiguousCastTo(indices, ScalarType::Long);
  Tensor acc = emptyTensor(self.sizes(), ScalarType::Double, self.device());
  const double* gp = go.data_ptr<double>();
  const int64_t* ipp = ix.data_ptr<int64_t>();
  double* ap = acc.data_ptr<double>();
  const int64_t plane_in = g.ih * g.iw, plane_out = g.oh * g.ow;
  for (int64_t k = 0, n = ix.numel(); k < n; ++k) {
    TURNOUT_CHECK(ipp[k] >= 0 && ipp[k] < plane_in, ErrorKind::Index, op,
                  ": index ", ipp[k], " is out of bounds for a plane of ",
                  plane_in, " elements (indices must come from "
                  "max_pool2d_with_indices on this input)");
  }
  forEachPlane(g, plane_in + plane_out, [&](int64_t p) {
    double* dst = ap + p * plane_in;
    std::fill(dst, dst + plane_in, 0.0);
    for (int64_t o = 0; o < plane_out; ++o) {
      dst[ipp[p * plane_out + o]] += gp[p * plane_out + o];
    }
  });
  copyCast(grad_input, acc);
  return grad_input;
}

Tensor& max_pool2d_with_indices_backward_out_kernel(
    const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
    IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
    bool ceil_mode, const Tensor& indices, Tensor& grad_input) {
  return copyToOut("max_pool2d_with_indices_backward.grad_input()",
                   max_pool2d_with_indices_backward_kernel(
                       grad_output, self, kernel_size, stride, padding,
                       dilation, ceil_mode, indices),
                   grad_input);
}

// ---- avg_pool2d --------------------------------------------------------------

// The window of output (y, x), clipped to the input, and its divisor.
struct AvgWindow {
  int64_t h0, h1, w0, w1;
  double divisor;
  bool empty() const { return h0 >= h1 || w0 >= w1; }
};

AvgWindow avgWindow(const PoolGeometry& g, int64_t y, int64_t x,
                    bool count_include_pad,
                    std::optional<int64_t> divisor_override) {
  int64_t h0 = y * g.sh - g.ph, w0 = x * g.sw - g.pw;
  int64_t h1 = std::min(h0 + g.kh, g.ih + g.ph);
  int64_t w1 = std::min(w0 + g.kw, g.iw + g.pw);
  const int64_t padded = (h1 - h0) * (w1 - w0);
  h0 = std::max<int64_t>(h0, 0);
  w0 = std::max<int64_t>(w0, 0);
  h1 = std::min(h1, g.ih);
  w1 = std::min(w1, g.iw);
  double divisor;
  if (divisor_override.has_value()) {
    divisor = static_cast<double>(*divisor_override);
  } else if (count_include_pad) {
    divisor = static_cast<double>(padded);
  } else {
    divisor = static_cast<double>((h1 - h0) * (w1 - w0));
  }
  return {h0, h1, w0, w1, divisor};
}

PoolGeometry checkAvgPool(const Tensor& self, IntArrayRef kernel_size,
                          IntArrayRef stride, IntArrayRef padding,
                          bool ceil_mode,
                          std::optional<int64_t> divisor_override) {
  TURNOUT_CHECK(!divisor_override.has_value() || *divisor_override != 0,
                ErrorKind::InvalidArgument,
                "avg_pool2d: divisor must be not zero");
  const int64_t one[] = {1};
  PoolGeometry g = checkPool("avg_pool2d", self, kernel_size, stride, padding,
                             IntArrayRef(one), ceil_mode);
  checkFloating("avg_pool2d", self);
  return g;
}

Tensor avg_pool2d_kernel(const Tensor& self, IntArrayRef kernel_size,
                         IntArrayRef stride, IntArrayRef padding,
                         bool ceil_mode, bool count_include_pad,
                         std::optional<int64_t> divisor_override) {
  const PoolGeometry g = checkAvgPool(self, kernel_size, stride, padding,
                                      ceil_mode, divisor_override);
  Tensor out = emptyTensor(g.out_sizes, self.scalar_type(), self.device());
  if (self.is_meta() || out.numel() == 0) return out;
  const Tensor x = contiguousCastTo(self, ScalarType::Double);
  Tensor values = emptyTensor(g.out_sizes, ScalarType::Double, self.device());
  const double* xp = x.data_ptr<double>();
  double* vp = values.data_ptr<double>();
  forEachPlane(g, g.oh * g.ow * g.kh * g.kw, [&](int64_t p) {
    const double* in = xp + p * g.ih * g.iw;
    for (int64_t y = 0; y < g.oh; ++y) {
      for (int64_t x0 = 0; x0 < g.ow; ++x0) {
        const AvgWindow w =
            avgWindow(g, y, x0, count_include_pad, divisor_override);
        double total = 0;
        for (int64_t iy = w.h0; iy < w.h1; ++iy) {
          for (int64_t ix = w.w0; ix < w.w1; ++ix) total += in[iy * g.iw + ix];
        }
        vp[(p * g.oh + y) * g.ow + x0] = w.empty() ? 0.0 : total / w.divisor;
      }
    }
  });
  copyCast(out, values);
  return out;
}

Tensor& avg_pool2d_out_kernel(const Tensor& self, IntArrayRef kernel_size,
                              IntArrayRef stride, IntArrayRef padding,
                              bool ceil_mode, bool count_include_pad,
                              std::optional<int64_t> divisor_override,
                              Tensor& out) {
  return copyToOut("avg_pool2d.out()",
                   avg_pool2d_kernel(self, kernel_size, stride, padding,
                                     ceil_mode, count_include_pad,
                                     divisor_override),
                   out);
}

Tensor avg_pool2d_backward_kernel(const Tensor& grad_output, const Tensor& self,
                                  IntArrayRef kernel_size, IntArrayRef stride,
                                  IntArrayRef padding, bool ceil_mode,
                                  bool count_include_pad,
                                  std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d_backward()";
  const PoolGeometry g = checkAvgPool(self, kernel_size, stride, padding,
                                      ceil_mode, divisor_override);
  checkGradShape(op, grad_output, g.out_sizes);
  checkSameDevice(op, self, grad_output);
  Tensor grad_input = emptyTensor(self.sizes(), self.scalar_type(), self.device());
  if (self.is_meta() || grad_input.numel() == 0) return grad_input;
  const Tensor go = contiguousCastTo(grad_output, ScalarType::Double);
  Tensor acc = emptyTensor(self.sizes(), ScalarType::Double, self.device());
  const double* gp = go.data_ptr<double>();
  double* ap = acc.data_ptr<double>();
  forEachPlane(g, g.oh * g.ow * g.kh * g.kw, [&](int64_t p) {
    double* dst = ap + p * g.ih * g.iw;
    std::fill(dst, dst + g.ih * g.iw, 0.0);
    for (int64_t y = 0; y < g.oh; ++y) {
      for (int64_t x0 = 0; x0 < g.ow; ++x0) {
        const AvgWindow w =
            avgWindow(g, y, x0, count_include_pad, divisor_override);
        if (w.empty()) continue;
        const double v = gp[(p * g.oh + y) * g.ow + x0] / w.divisor;
        for (int64_t iy = w.h0; iy < w.h1; ++iy) {
          for (int64_t ix = w.w0; ix < w.w1; ++ix) dst[iy * g.iw + ix] += v;
        }
      }
    }
  });
  copyCast(grad_input, acc);
  return grad_input;
}

Tensor& avg_pool2d_backward_out_kernel(
    const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
    IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
    bool count_include_pad, std::optional<int64_t> divisor_override,
    Tensor& grad_input) {
  return copyToOut("avg_pool2d_backward.grad_input()",
                   avg_pool2d_backward_kernel(grad_output, self, kernel_size,
                                              stride, padding, ceil_mode,
                                              count_include_pad,
                                              divisor_override),
                   grad_input);
}

// ---- adaptive_avg_pool2d -----------------------------------------------------

// Output cell o of n over an input of size `in` covers
// [floor(o * in / n), ceil((o + 1) * in / n)).
int64_t adaptiveStart(int64_t o, int64_t n, int64_t in) { return o * in / n; }
int64_t adaptiveEnd(int64_t o, int64_t n, int64_t in) {
  return ((o + 1) * in + n - 1) / n;
}

void checkOutputSize(IntArrayRef output_size) {
  TURNOUT_CHECK(output_size.size() == 2, ErrorKind::InvalidArgument,
                "adaptive_avg_pool2d: output_size must be 2 (got ",
                sizesToString(output_size), ")");
  TURNOUT_CHECK(output_size[0] >= 0 && output_size[1] >= 0,
                ErrorKind::InvalidArgument,
                "adaptive_avg_pool2d: elements of output_size must be greater "
                "than or equal to 0 but received {",
                output_size[0], ", ", output_size[1], "}");
}

PoolGeometry checkAdaptive(const Tensor& self, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool2d()";
  checkOutputSize(output_size);
  TURNOUT_CHECK(self.defined(), ErrorKind::InvalidArgument, op,
                ": self must be a defined tensor");
  const int64_t nd = self.dim();
  TURNOUT_CHECK(nd == 3 || nd == 4, ErrorKind::InvalidArgument, op,
                ": Expected 3D or 4D tensor, but got ",
                sizesToString(self.sizes()));
  for (int64_t d = 1; d < nd; ++d) {
    TURNOUT_CHECK(self.size(d) > 0, ErrorKind::InvalidArgument, op,
                  ": Expected input to have non-zero size for non-batch "
                  "dimensions, but input has sizes ",
                  sizesToString(self.sizes()), " with dimension ", d,
                  " being empty");
  }
  checkFloating("adaptive_avg_pool2d", self);
  PoolGeometry g;
  g.ih = self.size(nd - 2);
  g.iw = self.size(nd - 1);
  g.oh = output_size[0];
  g.ow = output_size[1];
  g.planes = self.size(nd - 3) * (nd == 4 ? self.size(0) : 1);
  g.out_sizes = DimVector(self.sizes().begin(), self.sizes().end());
  g.out_sizes[nd - 2] = g.oh;
  g.out_sizes[nd - 1] = g.ow;
  return g;
}

Tensor adaptive_avg_pool2d_internal_kernel(const Tensor& self,
                                           IntArrayRef output_size) {
  const PoolGeometry g = checkAdaptive(self, output_size);
  Tensor out = emptyTensor(g.out_sizes, self.scalar_type(), self.device());
  if (self.is_meta() || out.numel() == 0) return out;
  const Tensor x = contiguousCastTo(self, ScalarType::Double);
  Tensor values = emptyTensor(g.out_sizes, ScalarType::Double, self.device());
  const double* xp = x.data_ptr<double>();
  double* vp = values.data_ptr<double>();
  forEachPlane(g, g.ih * g.iw + g.oh * g.ow, [&](int64_t p) {
    const double* in = xp + p * g.ih * g.iw;
    for (int64_t y = 0; y < g.oh; ++y) {
      const int64_t h0 = adaptiveStart(y, g.oh, g.ih),
                    h1 = adaptiveEnd(y, g.oh, g.ih);
      for (int64_t x0 = 0; x0 < g.ow; ++x0) {
        const int64_t w0 = adaptiveStart(x0, g.ow, g.iw),
                      w1 = adaptiveEnd(x0, g.ow, g.iw);
        double total = 0;
        for (int64_t iy = h0; iy < h1; ++iy) {
          for (int64_t ix = w0; ix < w1; ++ix) total += in[iy * g.iw + ix];
        }
        vp[(p * g.oh + y) * g.ow + x0] =
            total / static_cast<double>((h1 - h0) * (w1 - w0));
      }
    }
  });
  copyCast(out, values);
  return out;
}

Tensor& adaptive_avg_pool2d_internal_out_kernel(const Tensor& self,
                                                IntArrayRef output_size,
                                                Tensor& out) {
  return copyToOut("_adaptive_avg_pool2d.out()",
                   adaptive_avg_pool2d_internal_kernel(self, output_size), out);
}

Tensor adaptive_avg_pool2d_backward_kernel(const Tensor& grad_output,
                                           const Tensor& self) {
  const char* op = "_adaptive_avg_pool2d_backward()";
  TURNOUT_CHECK(grad_output.defined() && self.defined(),
                ErrorKind::InvalidArgument, op,
                ": grad_output and self must be defined tensors");
  TURNOUT_CHECK(grad_output.dim() == self.dim(), ErrorKind::InvalidArgument, op,
                ": grad_output of size ", sizesToString(grad_output.sizes()),
                " does not match self of size ", sizesToString(self.sizes()));
  const int64_t nd = self.dim();
  const int64_t out_hw[] = {nd >= 2 ? grad_output.size(nd - 2) : 0,
                            nd >= 2 ? grad_output.size(nd - 1) : 0};
  const PoolGeometry g = checkAdaptive(self, IntArrayRef(out_hw));
  checkGradShape(op, grad_output, g.out_sizes);
  checkSameDevice(op, self, grad_output);
  Tensor grad_input = emptyTensor(self.sizes(), self.scalar_type(), self.device());
  if (self.is_meta() || grad_input.numel() == 0) return grad_input;
  const Tensor go = contiguousCastTo(grad_output, ScalarType::Double);
  Tensor acc = emptyTensor(self.sizes(), ScalarType::Double, self.device());
  const double* gp = go.data_ptr<double>();
  double* ap = acc.data_ptr<double>();
  forEachPlane(g, g.ih * g.iw + g.oh * g.ow, [&](int64_t p) {
    double* dst = ap + p * g.ih * g.iw;
    std::fill(dst, dst + g.ih * g.iw, 0.0);
    for (int64_t y = 0; y < g.oh; ++y) {
      const int64_t h0 = adaptiveStart(y, g.oh, g.ih),
                    h1 = adaptiveEnd(y, g.oh, g.ih);
      for (int64_t x0 = 0; x0 < g.ow; ++x0) {
        const int64_t w0 = adaptiveStart(x0, g.ow, g.iw),
                      w1 = adaptiveEnd(x0, g.ow, g.iw);
        const double v = gp[(p * g.oh + y) * g.ow + x0] /
                         static_cast<double>((h1 - h0) * (w1 - w0));
        for (int64_t iy = h0; iy < h1; ++iy) {
          for (int64_t ix = w0; ix < w1; ++ix) dst[iy * g.iw + ix] += v;
        }
      }
    }
  });
  copyCast(grad_input, acc);
  return grad_input;
}

Tensor& adaptive_avg_pool2d_backward_out_kernel(const Tensor& grad_output,
                                                const Tensor& self,
                                                Tensor& out) {
  return copyToOut("_adaptive_avg_pool2d_backward.out()",
                   adaptive_avg_pool2d_backward_kernel(grad_output, self), out);
}

// ---- CompositeImplicitAutograd ---------------------------------------------

Tensor max_pool2d_composite(const Tensor& self, IntArrayRef kernel_size,
                            IntArrayRef stride, IntArrayRef padding,
                            IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(turnout::max_pool2d_with_indices(
      self, kernel_size, stride, padding, dilation, ceil_mode));
}

// As torch 1.13: a 1x1 output is a mean over the last two dimensions.
Tensor adaptive_avg_pool2d_composite(const Tensor& self,
                                     IntArrayRef output_size) {
  checkOutputSize(output_size);
  if (output_size[0] == 1 && output_size[1] == 1) {
    const int64_t dims[] = {-1, -2};
    return turnout::mean(self, IntArrayRef(dims), /*keepdim=*/true);
  }
  return turnout::_adaptive_avg_pool2d(self, output_size);
}

Tensor& adaptive_avg_pool2d_out_composite(const Tensor& self,
                                          IntArrayRef output_size,
                                          Tensor& out) {
  return copyToOut("adaptive_avg_pool2d.out()",
                   turnout::_adaptive_avg_pool2d(self, output_size), out);
}

}  // namespace
}  // namespace turnout

// ---- Registration -----------------------------------------------------------

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);  // torch's tags (kernels/aten_tags.h)
  m.def(
      "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] "
      "padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor");
  m.def(
      "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] "
      "stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) "
      "-> (Tensor, Tensor)");
  m.def(
      "max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] "
      "stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, "
      "*, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))");
  m.def(
      "max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, "
      "int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, "
      "bool ceil_mode, Tensor indices) -> Tensor");
  m.def(
      "max_pool2d_with_indices_backward.grad_input(Tensor grad_output, Tensor "
      "self, int[2] kernel_size, int[2] stride, int[2] padding, int[2] "
      "dilation, bool ceil_mode, Tensor indices, *, Tensor(a!) grad_input) -> "
      "Tensor(a!)");
  m.def(
      "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] "
      "padding=0, bool ceil_mode=False, bool count_include_pad=True, int? "
      "divisor_override=None) -> Tensor");
  m.def(
      "avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], "
      "int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, "
      "int? divisor_override=None, *, Tensor(a!) out) -> Tensor(a!)");
  m.def(
      "avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] "
      "kernel_size, int[2] stride, int[2] padding, bool ceil_mode, bool "
      "count_include_pad, int? divisor_override) -> Tensor");
  m.def(
      "avg_pool2d_backward.grad_input(Tensor grad_output, Tensor self, int[2] "
      "kernel_size, int[2] stride, int[2] padding, bool ceil_mode, bool "
      "count_include_pad, int? divisor_override, *, Tensor(a!) grad_input) -> "
      "Tensor(a!)");
  m.def("adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor");
  m.def(
      "adaptive_avg_pool2d.out(Tensor self, SymInt[2] output_size, *, "
      "Tensor(a!) out) -> Tensor(a!)");
  m.def("_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor");
  m.def(
      "_adaptive_avg_pool2d.out(Tensor self, SymInt[2] output_size, *, "
      "Tensor(a!) out) -> Tensor(a!)");
  m.def(
      "_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> "
      "Tensor");
  m.def(
      "_adaptive_avg_pool2d_backward.out(Tensor grad_output, Tensor self, *, "
      "Tensor(a!) out) -> Tensor(a!)");
}

// One function per operator serves CPU and Meta (checks and shapes first).
#define TURNOUT_POOL_KERNELS(m)                                              \
  m.impl("max_pool2d_with_indices",                                          \
         TURNOUT_FN(max_pool2d_with_indices_kernel));                        \
  m.impl("max_pool2d_with_indices.out",                                      \
         TURNOUT_FN(max_pool2d_with_indices_out_kernel));                    \
  m.impl("max_pool2d_with_indices_backward",                                 \
         TURNOUT_FN(max_pool2d_with_indices_backward_kernel));               \
  m.impl("max_pool2d_with_indices_backward.grad_input",                      \
         TURNOUT_FN(max_pool2d_with_indices_backward_out_kernel));           \
  m.impl("avg_pool2d", TURNOUT_FN(avg_pool2d_kernel));                       \
  m.impl("avg_pool2d.out", TURNOUT_FN(avg_pool2d_out_kernel));               \
  m.impl("avg_pool2d_backward", TURNOUT_FN(avg_pool2d_backward_kernel));     \
  m.impl("avg_pool2d_backward.grad_input",                                   \
         TURNOUT_FN(avg_pool2d_backward_out_kernel));                        \
  m.impl("_adaptive_avg_pool2d",                                             \
         TURNOUT_FN(adaptive_avg_pool2d_internal_kernel));                   \
  m.impl("_adaptive_avg_pool2d.out",                                         \
         TURNOUT_FN(adaptive_avg_pool2d_internal_out_kernel));               \
  m.impl("_adaptive_avg_pool2d_backward",                                    \
         TURNOUT_FN(adaptive_avg_pool2d_backward_kernel));                   \
  m.impl("_adaptive_avg_pool2d_backward.out",                                \
         TURNOUT_FN(adaptive_avg_pool2d_backward_out_kernel))

TURNOUT_LIBRARY_IMPL(aten, CPU, m) {
  using namespace turnout;  // NOLINT: the kernels above
  TURNOUT_POOL_KERNELS(m);
}
TURNOUT_LIBRARY_IMPL(aten, Meta, m) {
  using namespace turnout;  // NOLINT: the kernels above
  TURNOUT_POOL_KERNELS(m);
}
#undef TURNOUT_POOL_KERNELS

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  using namespace turnout;  // NOLINT: the kernels above
  m.impl("max_pool2d", TURNOUT_FN(max_pool2d_composite));
  m.impl("adaptive_avg_pool2d", TURNOUT_FN(adaptive_avg_pool2d_composite));
}

// Not composite-implicit, as torch 1.13's (a backend kernel there): a
// Python mode sees the out= call whole. No Autograd kernel, as the other
// out= forms.
TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  using namespace turnout;  // NOLINT: the kernels above
  m.impl("adaptive_avg_pool2d.out",
         TURNOUT_FN(adaptive_avg_pool2d_out_composite));
}

// ---- Front end ----------------------------------------------------------------

namespace turnout {

std::tuple<Tensor, Tensor> max_pool2d_with_indices(
    const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
    IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::max_pool2d_with_indices", "")
                       .typed<std::tuple<Tensor, Tensor>(
                           const Tensor&, IntArrayRef, IntArrayRef,
                           IntArrayRef, IntArrayRef, bool)>();
  return op.call(self, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor max_pool2d_with_indices_backward(const Tensor& grad_output,
                                        const Tensor& self,
                                        IntArrayRef kernel_size,
                                        IntArrayRef stride, IntArrayRef padding,
                                        IntArrayRef dilation, bool ceil_mode,
                                        const Tensor& indices) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::max_pool2d_with_indices_backward", "")
          .typed<Tensor(const Tensor&, const Tensor&, IntArrayRef, IntArrayRef,
                        IntArrayRef, IntArrayRef, bool, const Tensor&)>();
  return op.call(grad_output, self, kernel_size, stride, padding, dilation,
                 ceil_mode, indices);
}

Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size,
                  IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                  bool ceil_mode) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::max_pool2d", "")
                       .typed<Tensor(const Tensor&, IntArrayRef, IntArrayRef,
                                     IntArrayRef, IntArrayRef, bool)>();
  return op.call(self, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size,
                  IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::avg_pool2d", "")
                       .typed<Tensor(const Tensor&, IntArrayRef, IntArrayRef,
                                     IntArrayRef, bool, bool,
                                     std::optional<int64_t>)>();
  return op.call(self, kernel_size, stride, padding, ceil_mode,
                 count_include_pad, divisor_override);
}

Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& self,
                           IntArrayRef kernel_size, IntArrayRef stride,
                           IntArrayRef padding, bool ceil_mode,
                           bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::avg_pool2d_backward", "")
                       .typed<Tensor(const Tensor&, const Tensor&, IntArrayRef,
                                     IntArrayRef, IntArrayRef, bool, bool,
                                     std::optional<int64_t>)>();
  return op.call(grad_output, self, kernel_size, stride, padding, ceil_mode,
                 count_include_pad, divisor_override);
}

Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::adaptive_avg_pool2d", "")
                       .typed<Tensor(const Tensor&, IntArrayRef)>();
  return op.call(self, output_size);
}

Tensor _adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::_adaptive_avg_pool2d", "")
                       .typed<Tensor(const Tensor&, IntArrayRef)>();
  return op.call(self, output_size);
}

Tensor _adaptive_avg_pool2d_backward(const Tensor& grad_output,
                                     const Tensor& self) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::_adaptive_avg_pool2d_backward", "")
          .typed<Tensor(const Tensor&, const Tensor&)>();
  return op.call(grad_output, self);
}

}  // namespace turnout
