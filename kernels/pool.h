// 2-d pooling (issue 20): max_pool2d (over max_pool2d_with_indices),
// avg_pool2d, adaptive_avg_pool2d (over _adaptive_avg_pool2d, or mean for a
// 1x1 output, as torch 1.13) and their backward operators, with torch
// 1.13's schemas, output sizes (ceil_mode, padding, dilation) and errors.
//
//   Tensor y = turnout::max_pool2d(x, {2, 2});
//   Tensor z = turnout::avg_pool2d(x, {3, 3}, {2, 2}, {1, 1});
//
// Inputs are [N, C, H, W] or unbatched [C, H, W]; CPU kernels compute in
// double and support the floating dtypes.
#ifndef TURNOUT_KERNELS_POOL_H_
#define TURNOUT_KERNELS_POOL_H_

#include <optional>
#include <tuple>

#include "dispatcher/core/tensor.h"

namespace turnout {

std::tuple<Tensor, Tensor> max_pool2d_with_indices(
    const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
    IntArrayRef padding = {0}, IntArrayRef dilation = {1},
    bool ceil_mode = false);

Tensor max_pool2d_with_indices_backward(const Tensor& grad_output,
                                        const Tensor& self,
                                        IntArrayRef kernel_size,
                                        IntArrayRef stride, IntArrayRef padding,
                                        IntArrayRef dilation, bool ceil_mode,
                                        const Tensor& indices);

Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size,
                  IntArrayRef stride = {}, IntArrayRef padding = {0},
                  IntArrayRef dilation = {1}, bool ceil_mode = false);

Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size,
                  IntArrayRef stride = {}, IntArrayRef padding = {0},
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);

Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& self,
                           IntArrayRef kernel_size, IntArrayRef stride,
                           IntArrayRef padding, bool ceil_mode,
                           bool count_include_pad,
                           std::optional<int64_t> divisor_override);

Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size);
Tensor _adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size);
Tensor _adaptive_avg_pool2d_backward(const Tensor& grad_output,
                                     const Tensor& self);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_POOL_H_
