// embedding (CompositeExplicitAutograd over index_select: one kernel for
// CPU, Meta and CUDA; its gradient is in autograd/nn_autograd.cc),
// embedding_backward and embedding_dense_backward (CompositeImplicitAutograd
// over index_put with accumulation, so they are differentiable themselves).
// Schemas and errors are torch 1.13's; see nn.h.
//
// padding_idx: rows equal to it get no gradient (-1, the default, is "no
// padding index", as torch's aten operator reads it). scale_grad_by_freq:
// each row's gradient is divided by the number of times its index occurs.
#include <optional>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/operator_handle.h"
#include "kernels/aten_tags.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/indexing.h"
#include "kernels/nn.h"
#include "kernels/shape.h"

namespace turnout {
namespace {

template <class Sig>
TypedOperatorHandle<Sig> lookup(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

void checkIndices(const Tensor& indices, const char* op) {
  TURNOUT_CHECK(indices.defined(), ErrorKind::InvalidArgument, op,
                ": expected indices to be a defined tensor");
  const ScalarType t = indices.scalar_type();
  TURNOUT_CHECK(t == ScalarType::Long || t == ScalarType::Int, ErrorKind::Type,
                "Expected tensor for argument #1 'indices' to have one of the "
                "following scalar types: Long, Int; but got torch.",
                toString(t), "Tensor instead (while checking arguments for ",
                op, ")");
}

Tensor embeddingKernel(const Tensor& weight, const Tensor& indices,
                       int64_t padding_idx, bool scale_grad_by_freq,
                       bool sparse) {
  (void)padding_idx;  // the gradient's business
  (void)scale_grad_by_freq;
  (void)sparse;
  TURNOUT_CHECK(weight.defined(), ErrorKind::InvalidArgument,
                "embedding: expected weight to be a defined tensor");
  TURNOUT_CHECK(weight.dim() == 2, ErrorKind::InvalidArgument,
                "'weight' must be 2-D");
  checkIndices(indices, "embedding");
  if (indices.dim() == 1) return index_select(weight, 0, indices);
  std::vector<int64_t> sizes(indices.sizes().begin(), indices.sizes().end());
  sizes.push_back(weight.size(1));
  return view(index_select(weight, 0, reshape(indices, {-1})), sizes);
}

Tensor embeddingDenseBackward(const Tensor& grad_output, const Tensor& indices,
                              int64_t num_weights, int64_t padding_idx,
                              bool scale_grad_by_freq) {
  TURNOUT_CHECK(grad_output.defined(), ErrorKind::InvalidArgument,
                "embedding_dense_backward: expected grad_output to be a "
                "defined tensor");
  checkIndices(indices, "embedding_backward");
  TURNOUT_CHECK(num_weights >= 0, ErrorKind::InvalidArgument,
                "embedding_dense_backward: num_weights must be non-negative, "
                "got ",
                num_weights);
  const int64_t n = indices.numel();
  TURNOUT_CHECK(grad_output.dim() >= 1 &&
                    grad_output.numel() ==
                        n * grad_output.size(grad_output.dim() - 1),
                ErrorKind::InvalidArgument,
                "embedding_dense_backward: grad_output must have one row per "
                "index (", n, " indices), got grad_output of ",
                grad_output.numel(), " elements");
  const int64_t dim = grad_output.size(grad_output.dim() - 1);
  const Tensor idx = to(reshape(indices, {-1}), ScalarType::Long);
  Tensor rows = reshape(grad_output, {n, dim});
  const TensorOptions long_options =
      TensorOptions(ScalarType::Long).device(grad_output.device());
  if (scale_grad_by_freq) {
    // counts[i] = occurrences of index i; each row divided by its count.
    const Tensor counts = index_put(zeros({num_weights}, long_options), {idx},
                                    ones_like(idx), /*accumulate=*/true);
    rows = div(rows, unsqueeze(index_select(counts, 0, idx), 1));
  }
  if (padding_idx >= 0) {
    rows = where(unsqueeze(ne(idx, padding_idx), 1), rows,
                 zeros_like(rows));
  }
  const Tensor zero = zeros(
      {num_weights, dim},
      TensorOptions(grad_output.scalar_type()).device(grad_output.device()));
  return index_put(zero, {idx}, rows, /*accumulate=*/true);
}

Tensor embeddingBackward(const Tensor& grad, const Tensor& indices,
                         int64_t num_weights, int64_t padding_idx,
                         bool scale_grad_by_freq, bool sparse) {
  TURNOUT_CHECK(!sparse, ErrorKind::NotImplemented,
                "embedding_backward: sparse=True (a sparse gradient) is not "
                "supported by turnout; call embedding with sparse=False");
  static const auto dense =
      lookup<Tensor(const Tensor&, const Tensor&, int64_t, int64_t, bool)>(
          "aten::embedding_dense_backward", "");
  return dense.call(grad, indices, num_weights, padding_idx,
                    scale_grad_by_freq);
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices,
                 int64_t padding_idx, bool scale_grad_by_freq, bool sparse) {
  static const auto op =
      lookup<Tensor(const Tensor&, const Tensor&, int64_t, bool, bool)>(
          "aten::embedding", "");
  return op.call(weight, indices, padding_idx, scale_grad_by_freq, sparse);
}

Tensor embedding_backward(const Tensor& grad, const Tensor& indices,
                          int64_t num_weights, int64_t padding_idx,
                          bool scale_grad_by_freq, bool sparse) {
  static const auto op = lookup<Tensor(const Tensor&, const Tensor&, int64_t,
                                       int64_t, bool, bool)>(
      "aten::embedding_backward", "");
  return op.call(grad, indices, num_weights, padding_idx, scale_grad_by_freq,
                 sparse);
}

}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);
  m.def(
      "embedding(Tensor weight, Tensor indices, int padding_idx=-1, bool "
      "scale_grad_by_freq=False, bool sparse=False) -> Tensor");
  m.def(
      "embedding_backward(Tensor grad, Tensor indices, SymInt num_weights, "
      "int padding_idx, bool scale_grad_by_freq, bool sparse) -> Tensor");
  m.def(
      "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt "
      "num_weights, int padding_idx, bool scale_grad_by_freq) -> Tensor");
}

// embedding_dense_backward as torch 1.13's (a backend kernel there): a
// Python mode sees it whole; its double backward is in
// autograd/nn_autograd.cc.
TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("embedding", TURNOUT_FN(turnout::embeddingKernel));
  m.impl("embedding_dense_backward",
         TURNOUT_FN(turnout::embeddingDenseBackward));
}

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  m.impl("embedding_backward", TURNOUT_FN(turnout::embeddingBackward));
}
