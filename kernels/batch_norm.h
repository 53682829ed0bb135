// Batch normalisation (issue 20): native_batch_norm (training: batch
// statistics, running_mean / running_var updated in place with momentum;
// eval: the running statistics), native_batch_norm_backward, and the
// composite batch_norm over native_batch_norm, with torch 1.13's schemas.
//
//   auto [y, mean, invstd] = turnout::native_batch_norm(
//       x, w, b, running_mean, running_var, /*training=*/true, 0.1, 1e-5);
//
// Statistics are computed in double, per channel (dimension 1).
#ifndef TURNOUT_KERNELS_BATCH_NORM_H_
#define TURNOUT_KERNELS_BATCH_NORM_H_

#include <optional>
#include <tuple>
#include <vector>

#include "dispatcher/core/tensor.h"

namespace turnout {

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(
    const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias,
    const std::optional<Tensor>& running_mean,
    const std::optional<Tensor>& running_var, bool training, double momentum,
    double eps);

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(
    const Tensor& grad_out, const Tensor& input,
    const std::optional<Tensor>& weight,
    const std::optional<Tensor>& running_mean,
    const std::optional<Tensor>& running_var,
    const std::optional<Tensor>& save_mean,
    const std::optional<Tensor>& save_invstd, bool train, double eps,
    std::vector<bool> output_mask);

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean,
                  const std::optional<Tensor>& running_var, bool training,
                  double momentum, double eps, bool cudnn_enabled);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_BATCH_NORM_H_
