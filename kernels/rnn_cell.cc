// lstm_cell, gru_cell, rnn_tanh_cell and rnn_relu_cell: one time step of the
// recurrent cells nn.LSTMCell, nn.GRUCell and nn.RNNCell call (TorchScript
// prints aten::lstm_cell / gru_cell for them). CompositeImplicitAutograd
// over linear, chunk and the pointwise operators, as in torch 1.13, so CPU,
// Meta, CUDA and autograd (double backward too) come from those operators.
// Schemas and the shape errors are torch 1.13's; see rnn_cell.h.
//
//   gates = linear(input, w_ih, b_ih) + linear(hx, w_hh, b_hh)
//   lstm:  i, f, g, o = chunk(gates, 4, 1)
//          cy = sigmoid(f) * cx + sigmoid(i) * tanh(g);  hy = sigmoid(o) *
//          tanh(cy)
//   gru:   r = sigmoid(i_r + h_r);  z = sigmoid(i_z + h_z)
//          n = tanh(i_n + r * h_n);  hy = (hx - n) * z + n
//
// The input is (batch, input_size), each hidden state (batch, hidden_size):
// the modules unsqueeze an unbatched input before calling the operator.
#include "kernels/rnn_cell.h"

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "absl/types/span.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/operator_handle.h"
#include "kernels/aten_tags.h"
#include "kernels/elementwise.h"
#include "kernels/linalg.h"
#include "kernels/rnn_cell.h"
#include "kernels/shape_ops.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace {

template <class Sig>
TypedOperatorHandle<Sig> lookup(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

void checkDefined(const Tensor& t, const char* op, const char* arg) {
  TURNOUT_CHECK(t.defined(), ErrorKind::InvalidArgument, op, ": expected ", arg,
                " to be a defined tensor");
}

// size(d) with torch's "Dimension out of range" for a tensor with too few
// dimensions.
int64_t sizeAt(const Tensor& t, int64_t d) {
  return t.size(maybeWrapDim(d, t.dim()));
}

void checkInput(const Tensor& input, const Tensor& w_ih) {
  const int64_t expected = sizeAt(w_ih, 1);
  const int64_t got = sizeAt(input, 1);
  TURNOUT_CHECK(got == expected, ErrorKind::InvalidArgument,
                "input has inconsistent input_size: got ", got, " expected ",
                expected);
}

void checkHidden(const Tensor& input, const Tensor& hx, int64_t hidden_size) {
  const int64_t batch = sizeAt(input, 0);
  const int64_t hx_batch = sizeAt(hx, 0);
  TURNOUT_CHECK(batch == hx_batch, ErrorKind::InvalidArgument,
                "Input batch size ", batch,
                " doesn't match hidden0 batch size ", hx_batch);
  const int64_t got = sizeAt(hx, 1);
  TURNOUT_CHECK(got == hidden_size, ErrorKind::InvalidArgument,
                "hidden0 has inconsistent hidden_size: got ", got,
                ", expected ", hidden_size);
}

// The checks every cell makes; returns hidden_size.
int64_t checkCell(const char* op, const Tensor& input, const Tensor& hx,
                  const Tensor& w_ih, const Tensor& w_hh) {
  checkDefined(input, op, "input");
  checkDefined(hx, op, "hx");
  checkDefined(w_ih, op, "w_ih");
  checkDefined(w_hh, op, "w_hh");
  checkInput(input, w_ih);
  const int64_t hidden_size = sizeAt(w_hh, 1);
  checkHidden(input, hx, hidden_size);
  return hidden_size;
}

std::tuple<Tensor, Tensor> lstmCell(const Tensor& input,
                                    absl::Span<const Tensor> hx,
                                    const Tensor& w_ih, const Tensor& w_hh,
                                    const std::optional<Tensor>& b_ih,
                                    const std::optional<Tensor>& b_hh) {
  TURNOUT_CHECK(hx.size() == 2, ErrorKind::InvalidArgument,
                "lstm_cell expects two hidden states");
  const Tensor& h = hx[0];
  const Tensor& c = hx[1];
  const int64_t hidden_size = checkCell("lstm_cell", input, h, w_ih, w_hh);
  checkDefined(c, "lstm_cell", "hx[1]");
  checkHidden(input, c, hidden_size);
  const Tensor gates = add(linear(input, w_ih, b_ih), linear(h, w_hh, b_hh));
  const std::vector<Tensor> g = chunk(gates, 4, 1);
  const Tensor cy = add(mul(sigmoid(g[1]), c), mul(sigmoid(g[0]), tanh(g[2])));
  const Tensor hy = mul(sigmoid(g[3]), tanh(cy));
  return {hy, cy};
}

Tensor gruCell(const Tensor& input, const Tensor& hx, const Tensor& w_ih,
               const Tensor& w_hh, const std::optional<Tensor>& b_ih,
               const std::optional<Tensor>& b_hh) {
  checkCell("gru_cell", input, hx, w_ih, w_hh);
  const std::vector<Tensor> gi = chunk(linear(input, w_ih, b_ih), 3, 1);
  const std::vector<Tensor> gh = chunk(linear(hx, w_hh, b_hh), 3, 1);
  const Tensor reset = sigmoid(add(gi[0], gh[0]));
  const Tensor update = sigmoid(add(gi[1], gh[1]));
  const Tensor candidate = tanh(add(gi[2], mul(reset, gh[2])));
  return add(mul(sub(hx, candidate), update), candidate);
}

Tensor rnnGates(const char* op, const Tensor& input, const Tensor& hx,
                const Tensor& w_ih, const Tensor& w_hh,
                const std::optional<Tensor>& b_ih,
                const std::optional<Tensor>& b_hh) {
  checkCell(op, input, hx, w_ih, w_hh);
  return add(linear(input, w_ih, b_ih), linear(hx, w_hh, b_hh));
}

Tensor rnnTanhCell(const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                   const Tensor& w_hh, const std::optional<Tensor>& b_ih,
                   const std::optional<Tensor>& b_hh) {
  return tanh(rnnGates("rnn_tanh_cell", input, hx, w_ih, w_hh, b_ih, b_hh));
}

Tensor rnnReluCell(const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                   const Tensor& w_hh, const std::optional<Tensor>& b_ih,
                   const std::optional<Tensor>& b_hh) {
  return relu(rnnGates("rnn_relu_cell", input, hx, w_ih, w_hh, b_ih, b_hh));
}

}  // namespace

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);  // torch's tags (kernels/aten_tags.h)
  m.def(
      "lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh, "
      "Tensor? b_ih=None, Tensor? b_hh=None) -> (Tensor, Tensor)");
  m.def(
      "gru_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, "
      "Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor");
  m.def(
      "rnn_tanh_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, "
      "Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor");
  m.def(
      "rnn_relu_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, "
      "Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor");
}

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  m.impl("lstm_cell", TURNOUT_FN(lstmCell));
  m.impl("gru_cell", TURNOUT_FN(gruCell));
  m.impl("rnn_tanh_cell", TURNOUT_FN(rnnTanhCell));
  m.impl("rnn_relu_cell", TURNOUT_FN(rnnReluCell));
}

// ---- Front end
// ----------------------------------------------------------------

using CellSig = Tensor(const Tensor&, const Tensor&, const Tensor&,
                       const Tensor&, const std::optional<Tensor>&,
                       const std::optional<Tensor>&);

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input,
                                     absl::Span<const Tensor> hx,
                                     const Tensor& w_ih, const Tensor& w_hh,
                                     const std::optional<Tensor>& b_ih,
                                     const std::optional<Tensor>& b_hh) {
  static const auto op = lookup<std::tuple<Tensor, Tensor>(
      const Tensor&, absl::Span<const Tensor>, const Tensor&, const Tensor&,
      const std::optional<Tensor>&, const std::optional<Tensor>&)>(
      "aten::lstm_cell", "");
  return op.call(input, hx, w_ih, w_hh, b_ih, b_hh);
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                const Tensor& w_hh, const std::optional<Tensor>& b_ih,
                const std::optional<Tensor>& b_hh) {
  static const auto op = lookup<CellSig>("aten::gru_cell", "");
  return op.call(input, hx, w_ih, w_hh, b_ih, b_hh);
}

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                     const Tensor& w_hh, const std::optional<Tensor>& b_ih,
                     const std::optional<Tensor>& b_hh) {
  static const auto op = lookup<CellSig>("aten::rnn_tanh_cell", "");
  return op.call(input, hx, w_ih, w_hh, b_ih, b_hh);
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                     const Tensor& w_hh, const std::optional<Tensor>& b_ih,
                     const std::optional<Tensor>& b_hh) {
  static const auto op = lookup<CellSig>("aten::rnn_relu_cell", "");
  return op.call(input, hx, w_ih, w_hh, b_ih, b_hh);
}

}  // namespace turnout
