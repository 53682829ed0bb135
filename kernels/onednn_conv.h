// The forward of an ordinary 2-d float32 convolution through oneDNN
// (Debian's libdnnl, the library torch 1.13's CPU convolution uses): its
// direct kernels (brgconv / jit on AVX2 and AVX-512) run in a blocked
// channel layout, so the input and weight are reordered into it and the
// result back, all inside oneDNN. On this project's benchmark block
// (4x64x28x28, 3x3, 64 channels) that is 1.5 ms against 8.5 ms for the
// im2col + OpenBLAS lowering of kernels/conv.cc (bench/README.md).
//
// conv.cc calls it for large enough float32 CPU convolutions and falls back
// to its own lowering when this returns false (oneDNN has no implementation
// for the shape, or failed). Threads: oneDNN's own OpenMP team
// (OMP_NUM_THREADS, as torch's). Thread safety: any thread may call it at
// any time; each thread has its own oneDNN stream.
#ifndef TURNOUT_KERNELS_ONEDNN_CONV_H_
#define TURNOUT_KERNELS_ONEDNN_CONV_H_

#include <cstdint>

namespace turnout::onednn {

/// A 2-d convolution's geometry: input [batch, in_channels, ih, iw],
/// weight [out_channels, in_channels / groups, kh, kw], output [batch,
/// out_channels, oh, ow]; stride, padding (on both sides) and dilation as
/// torch's (dilation 1 is a dense kernel).
struct Conv2dShape {
  int64_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  int64_t ih = 1, iw = 1, kh = 1, kw = 1, oh = 1, ow = 1;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
};

/// Whether this build can call oneDNN at all (false under ThreadSanitizer,
/// which cannot see the OpenMP runtime's synchronisation).
bool available();

/// y = conv(x, w) + bias for contiguous float arrays in the shapes above
/// (bias: out_channels values, or null). Returns false, having written
/// nothing the caller relies on, when oneDNN cannot run it; y is then to be
/// computed another way.
bool convForward(const Conv2dShape& s, const float* x, const float* w,
                 const float* bias, float* y);

}  // namespace turnout::onednn

#endif  // TURNOUT_KERNELS_ONEDNN_CONV_H_
