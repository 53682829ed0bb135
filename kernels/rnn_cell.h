// The C++ front end of the recurrent cells (kernels/rnn_cell.cc): one time
// step of nn.LSTMCell, nn.GRUCell and nn.RNNCell, each calling its aten
// operator through the dispatcher, so CPU, Meta and any registered key work
// alike.
//
//   auto [h1, c1] = turnout::lstm_cell(x, {h, c}, w_ih, w_hh, b_ih, b_hh);
//   Tensor h2 = turnout::gru_cell(x, h, w_ih, w_hh, b_ih, b_hh);
//
// Schemas, semantics and shape errors are torch 1.13's; the operators are
// CompositeImplicitAutograd (linear, chunk and pointwise operators), so they
// are differentiable as their parts are. input is (batch, input_size), each
// hidden state (batch, hidden_size).
//
// Thread safety: as the dispatcher; reentrant.
#ifndef TURNOUT_KERNELS_RNN_CELL_H_
#define TURNOUT_KERNELS_RNN_CELL_H_

#include <optional>
#include <tuple>

#include "absl/types/span.h"
#include "dispatcher/core/tensor.h"

namespace turnout {

/// aten::lstm_cell: hx is (h, c); returns (hy, cy).
std::tuple<Tensor, Tensor> lstm_cell(
    const Tensor& input, absl::Span<const Tensor> hx, const Tensor& w_ih,
    const Tensor& w_hh, const std::optional<Tensor>& b_ih = std::nullopt,
    const std::optional<Tensor>& b_hh = std::nullopt);
/// aten::gru_cell.
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                const Tensor& w_hh,
                const std::optional<Tensor>& b_ih = std::nullopt,
                const std::optional<Tensor>& b_hh = std::nullopt);
/// aten::rnn_tanh_cell: tanh(input w_ih^T + b_ih + hx w_hh^T + b_hh).
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                     const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih = std::nullopt,
                     const std::optional<Tensor>& b_hh = std::nullopt);
/// aten::rnn_relu_cell: as rnn_tanh_cell, with relu.
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                     const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih = std::nullopt,
                     const std::optional<Tensor>& b_hh = std::nullopt);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_RNN_CELL_H_
