// Indexing operators of namespace aten, and their C++ front end: advanced
// indexing (index.Tensor, index_put_, index_put), index_select, nonzero and
// masked_fill, with PyTorch 1.13's schemas, shapes and errors.
//
//   Tensor x = arange(12).view({3, 4});
//   Tensor rows = index(x, {tensor({0, 2})});            // x[[0, 2]]: [2, 4]
//   Tensor cols = index(x, {std::nullopt, idx});         // x[:, idx]
//   Tensor pos = index(x, {gt(x, 5)});                   // x[x > 5]: 1-d
//   index_put_(x, {gt(x, 5)}, zeros({}, kLong));         // x[x > 5] = 0
//   Tensor sel = index_select(x, 1, tensor({3, 0}));     // [3, 2]
//
// indices (`Tensor?[]`) hold one entry per indexed dimension, from the
// first: None keeps a dimension whole; a long tensor picks positions (they
// broadcast together); a bool (or uint8) mask of k dimensions stands for k
// long tensors, its nonzero() columns. When the tensor indices are adjacent
// their broadcast shape replaces the indexed dimensions in place, otherwise
// it comes first, as in NumPy and PyTorch. The results are new dense
// tensors (never views), laid out as torch's TensorIterator lays them out:
// contiguous for contiguous operands, permuted like a permuted self.
//
// Dispatch: index.Tensor (and .Tensor_out), index_put_, index_select (and
// .out) and nonzero (and .out) have CPU kernels, and Meta kernels except
// nonzero (a mask's result size
// depends on the data: a mask on Meta is refused); index_put and
// masked_fill(_) are CompositeExplicitAutograd. Gradients:
// kernels/autograd/shape_autograd.cc.
#ifndef TURNOUT_KERNELS_INDEXING_H_
#define TURNOUT_KERNELS_INDEXING_H_

#include <optional>
#include <vector>

#include "dispatcher/core/scalar.h"
#include "dispatcher/core/tensor.h"

namespace turnout {

/// A list of optional index tensors (schema type `Tensor?[]`).
using OptionalTensorList = std::vector<std::optional<Tensor>>;

/// aten::index.Tensor: self[indices] (see the file comment). Throws Index
/// "tensors used as indices must be long, byte or bool tensors", "too many
/// indices for tensor of dimension 3", "index 5 is out of bounds for
/// dimension 0 with size 3", "The shape of the mask [2] at index 0 does not
/// match the shape of the indexed tensor [3, 4] at index 0", "shape
/// mismatch: indexing tensors could not be broadcast together with shapes
/// [2], [3]".
Tensor index(const Tensor& self, const OptionalTensorList& indices);
/// aten::index_put_: self[indices] = values (values broadcast to the
/// indexed shape; `accumulate` adds instead, duplicates included). Returns
/// self. values must have self's dtype.
Tensor& index_put_(Tensor& self, const OptionalTensorList& indices,
                   const Tensor& values, bool accumulate = false);
/// aten::index_put: index_put_ on a copy of self.
Tensor index_put(const Tensor& self, const OptionalTensorList& indices,
                 const Tensor& values, bool accumulate = false);
/// aten::index_select: the entries `index` (1-d or 0-d, int32 or int64)
/// of dimension `dim`.
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
/// aten::nonzero: the indices of the nonzero elements, [n, self.dim()],
/// int64, in row-major order.
Tensor nonzero(const Tensor& self);
/// aten::masked_fill.Scalar / .Tensor (value 0-dim): self with `value`
/// where the bool `mask` (broadcast with self) is true.
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value);
/// aten::masked_fill_.Scalar / .Tensor: in place; mask broadcasts to self.
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Scalar& value);
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Tensor& value);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_INDEXING_H_
