// The C++ front end of the neural-network operators of issue 20
// (kernels/activation.cc, normalization.cc, embedding.cc, loss.cc): each
// function calls its aten operator through the dispatcher, so CPU, Meta and
// any registered key work alike.
//
//   Tensor y = turnout::gelu(x, "tanh");
//   auto [out, mean, rstd] = turnout::native_layer_norm(x, {4}, w, b, 1e-5);
//   auto [loss, total] = turnout::nll_loss_forward(logp, target, {}, 1, -100);
//
// Schemas and semantics are torch 1.13's. The forward operators are
// CompositeExplicitAutograd kernels over the elementwise, reduction and
// indexing operators (one kernel for CPU, Meta and CUDA), with Autograd
// kernels (kernels/autograd/nn_autograd.cc) that call the backward operators;
// the backward operators are CompositeImplicitAutograd, so they are
// differentiable themselves (double backward).
//
// Thread safety: as the dispatcher; reentrant.
#ifndef TURNOUT_KERNELS_NN_H_
#define TURNOUT_KERNELS_NN_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>

#include "dispatcher/core/scalar.h"
#include "dispatcher/core/tensor.h"

namespace turnout {

// ---- Activations (activation.cc) ---------------------------------------------
Tensor gelu(const Tensor& self, std::string_view approximate = "none");
const Tensor& gelu_(const Tensor& self, std::string_view approximate = "none");
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self,
                     std::string_view approximate = "none");
Tensor silu(const Tensor& self);
const Tensor& silu_(const Tensor& self);
Tensor silu_backward(const Tensor& grad_output, const Tensor& self);
Tensor elu(const Tensor& self, const Scalar& alpha = 1, const Scalar& scale = 1,
           const Scalar& input_scale = 1);
const Tensor& elu_(const Tensor& self, const Scalar& alpha = 1,
                   const Scalar& scale = 1, const Scalar& input_scale = 1);
Tensor elu_backward(const Tensor& grad_output, const Scalar& alpha,
                    const Scalar& scale, const Scalar& input_scale,
                    bool is_result, const Tensor& self_or_result);
Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope = 0.01);
const Tensor& leaky_relu_(const Tensor& self,
                          const Scalar& negative_slope = 0.01);
Tensor leaky_relu_backward(const Tensor& grad_output, const Tensor& self,
                           const Scalar& negative_slope, bool self_is_result);
Tensor hardtanh(const Tensor& self, const Scalar& min_val = -1,
                const Scalar& max_val = 1);
const Tensor& hardtanh_(const Tensor& self, const Scalar& min_val = -1,
                        const Scalar& max_val = 1);
Tensor hardtanh_backward(const Tensor& grad_output, const Tensor& self,
                         const Scalar& min_val, const Scalar& max_val);
Tensor softplus(const Tensor& self, const Scalar& beta = 1,
                const Scalar& threshold = 20);
Tensor softplus_backward(const Tensor& grad_output, const Tensor& self,
                         const Scalar& beta, const Scalar& threshold);
/// aten::threshold_backward: grad_output where self > threshold, else 0
/// (relu's gradient is threshold_backward(grad, result, 0)).
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self,
                          const Scalar& threshold);
/// aten::clamp_ (the Scalar overload).
const Tensor& clamp_(const Tensor& self, const std::optional<Scalar>& min,
                     const std::optional<Scalar>& max = std::nullopt);
/// aten::dropout: `input` itself when !train or p == 0; else input times a
/// mask drawn from the default generator (kernels/random.h), scaled by
/// 1 / (1 - p).
Tensor dropout(const Tensor& input, double p, bool train);

// ---- Normalization (normalization.cc) ------------------------------------------
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                  const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt,
                  double eps = 1e-5);
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(
    const Tensor& input, IntArrayRef normalized_shape,
    const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
    double eps);
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(
    const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape,
    const Tensor& mean, const Tensor& rstd, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias, std::array<bool, 3> output_mask);

// ---- Embedding (embedding.cc) -------------------------------------------------
Tensor embedding(const Tensor& weight, const Tensor& indices,
                 int64_t padding_idx = -1, bool scale_grad_by_freq = false,
                 bool sparse = false);
Tensor embedding_backward(const Tensor& grad, const Tensor& indices,
                          int64_t num_weights, int64_t padding_idx,
                          bool scale_grad_by_freq, bool sparse);

// ---- Losses (loss.cc) ----------------------------------------------------------
std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& self,
                                            const Tensor& target,
                                            const std::optional<Tensor>& weight,
                                            int64_t reduction,
                                            int64_t ignore_index);
Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self,
                         const Tensor& target,
                         const std::optional<Tensor>& weight, int64_t reduction,
                         int64_t ignore_index, const Tensor& total_weight);
std::tuple<Tensor, Tensor> nll_loss2d_forward(
    const Tensor& self, const Tensor& target,
    const std::optional<Tensor>& weight, int64_t reduction,
    int64_t ignore_index);
Tensor nll_loss2d_backward(const Tensor& grad_output, const Tensor& self,
                           const Tensor& target,
                           const std::optional<Tensor>& weight,
                           int64_t reduction, int64_t ignore_index,
                           const Tensor& total_weight);
Tensor cross_entropy_loss(const Tensor& self, const Tensor& target,
                          const std::optional<Tensor>& weight = std::nullopt,
                          int64_t reduction = 1, int64_t ignore_index = -100,
                          double label_smoothing = 0.0);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_NN_H_
