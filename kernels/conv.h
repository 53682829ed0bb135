// Convolution (issue 20): aten::convolution and its backward, ordinary and
// transposed, with the composite aten::conv1d / conv2d / conv_transpose1d /
// conv_transpose2d / _convolution over it, torch 1.13's schemas and error
// messages. C++ front end:
//
//   Tensor y = turnout::conv2d(x, w, b, /*stride=*/{2, 2}, /*padding=*/{1, 1});
//   auto [gx, gw, gb] = turnout::convolution_backward(
//       gy, x, w, std::vector<int64_t>{w.size(0)}, {2, 2}, {1, 1}, {1, 1},
//       false, {0, 0}, 1, {true, true, true});
//
// The CPU kernel runs a float32 forward of 2^16 multiply-adds or more
// through oneDNN (kernels/onednn_conv.h); the rest, and every backward, it
// lowers each (image, group) to one matrix product (im2col, then the BLAS
// gemm of kernels/blas.h); a 1x1 kernel with stride 1 and no padding
// multiplies the input in place; a transposed convolution runs as the
// adjoint of an ordinary one (conv.cc). 1-d and 2-d, float32 and
// float64; 3-d is refused (NotImplemented).
#ifndef TURNOUT_KERNELS_CONV_H_
#define TURNOUT_KERNELS_CONV_H_

#include <optional>
#include <tuple>
#include <vector>

#include "dispatcher/core/tensor.h"

namespace turnout {

/// aten::convolution.
Tensor convolution(const Tensor& input, const Tensor& weight,
                   const std::optional<Tensor>& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed,
                   IntArrayRef output_padding, int64_t groups);

/// aten::convolution_backward: (grad_input, grad_weight, grad_bias), each
/// undefined where output_mask says it is not wanted.
std::tuple<Tensor, Tensor, Tensor> convolution_backward(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight,
    const std::optional<std::vector<int64_t>>& bias_sizes, IntArrayRef stride,
    IntArrayRef padding, IntArrayRef dilation, bool transposed,
    IntArrayRef output_padding, int64_t groups,
    std::vector<bool> output_mask);

/// aten::conv2d (CompositeImplicitAutograd over convolution; a 3-d input is
/// one unbatched image).
Tensor conv2d(const Tensor& input, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1, 1}, IntArrayRef padding = {0, 0},
              IntArrayRef dilation = {1, 1}, int64_t groups = 1);

/// aten::_convolution (CompositeExplicitAutograd over convolution, as
/// torch 1.13's: it has its own autograd node, ConvolutionBackward1). The
/// backend flags are ignored: turnout has one implementation.
Tensor _convolution(const Tensor& input, const Tensor& weight,
                    const std::optional<Tensor>& bias, IntArrayRef stride,
                    IntArrayRef padding, IntArrayRef dilation, bool transposed,
                    IntArrayRef output_padding, int64_t groups, bool benchmark,
                    bool deterministic, bool cudnn_enabled, bool allow_tf32);

/// aten::conv1d (the same for 1-d).
Tensor conv1d(const Tensor& input, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1}, IntArrayRef padding = {0},
              IntArrayRef dilation = {1}, int64_t groups = 1);

/// aten::conv_transpose2d.input (CompositeImplicitAutograd over
/// convolution with transposed=true; weight is [in_channels, out_channels /
/// groups, kh, kw]; a 3-d input is one unbatched image).
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = {1, 1},
                        IntArrayRef padding = {0, 0},
                        IntArrayRef output_padding = {0, 0}, int64_t groups = 1,
                        IntArrayRef dilation = {1, 1});

/// aten::conv_transpose1d (the same for 1-d).
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = {1}, IntArrayRef padding = {0},
                        IntArrayRef output_padding = {0}, int64_t groups = 1,
                        IntArrayRef dilation = {1});

}  // namespace turnout

#endif  // TURNOUT_KERNELS_CONV_H_
