// More shape operators of namespace aten (beside kernels/shape.h), and their
// C++ front end: split.Tensor, split.sizes, split_with_sizes, chunk,
// unbind.int, flatten.using_ints, as_strided, diagonal; the out= forms of
// cat and stack; where's Scalar overloads, where(condition) and
// where.self_out; scalar_tensor; lift_fresh (what torch's indexing calls on
// the tensors it makes from Python values: an identity).
//
//   Tensor x = arange(10).view({5, 2});
//   std::vector<Tensor> parts = split(x, 2);         // [2, 2], [2, 2], [1, 2]
//   std::vector<Tensor> c = chunk(x, 2);             // [3, 2], [2, 2]
//   Tensor d = diagonal(x);                          // [0, 3], a view
//   Tensor f = flatten(x);                           // [10]
//   Tensor y = where(gt(x, 4), x, Scalar(0));        // where.ScalarOther
//
// The pieces of split, split_with_sizes, chunk and unbind, and the results
// of as_strided and diagonal, are views of `self` (shared storage, torch's
// strides); flatten is reshape's (a view when the layout allows it).
//
// Dispatch, as in PyTorch 1.13: split.Tensor, split_with_sizes, unbind.int,
// as_strided, diagonal, stack.out, scalar_tensor and lift_fresh are
// CompositeExplicitAutograd (their gradients are in
// kernels/autograd/shape_autograd.cc); chunk, split.sizes, flatten,
// where.ScalarSelf / ScalarOther / Scalar and where(condition) are
// CompositeImplicitAutograd (a dispatch mode sees the operators they call:
// split.Tensor, reshape, scalar_tensor + where.self, nonzero + unbind.int);
// cat.out and where.self_out have CPU and Meta kernels.
#ifndef TURNOUT_KERNELS_SHAPE_OPS_H_
#define TURNOUT_KERNELS_SHAPE_OPS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "dispatcher/core/scalar.h"
#include "dispatcher/core/tensor.h"

namespace turnout {

/// aten::split.Tensor: views of `split_size` entries along `dim` (the last
/// one shorter). Throws InvalidArgument for a negative split_size, and for
/// 0 when the dimension is not empty.
std::vector<Tensor> split(const Tensor& self, int64_t split_size,
                          int64_t dim = 0);
/// aten::split_with_sizes: views of the given sizes (they must add up to
/// the size of `dim`).
std::vector<Tensor> split_with_sizes(const Tensor& self,
                                     IntArrayRef split_sizes, int64_t dim = 0);
/// aten::unsafe_split.Tensor and unsafe_split_with_sizes: split's pieces,
/// which autograd records as results rather than views, so that they may be
/// modified in place (torch's lstm_cell does).
std::vector<Tensor> unsafe_split(const Tensor& self, int64_t split_size,
                                 int64_t dim = 0);
std::vector<Tensor> unsafe_split_with_sizes(const Tensor& self,
                                            IntArrayRef split_sizes,
                                            int64_t dim = 0);
/// aten::chunk: `chunks` (or fewer) views of equal size along `dim`.
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim = 0);
/// aten::unbind.int: the selects of every index of `dim`.
std::vector<Tensor> unbind(const Tensor& self, int64_t dim = 0);
/// aten::flatten.using_ints: dims start_dim..end_dim merged into one.
Tensor flatten(const Tensor& self, int64_t start_dim = 0, int64_t end_dim = -1);
/// aten::as_strided: a view of self's storage with the given geometry
/// (storage_offset defaults to self's). Throws when it does not fit.
Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                  std::optional<int64_t> storage_offset = std::nullopt);
/// aten::diagonal: the diagonal `offset` of the plane (dim1, dim2), as the
/// last dimension of a view.
Tensor diagonal(const Tensor& self, int64_t offset = 0, int64_t dim1 = 0,
                int64_t dim2 = 1);
/// aten::cat.out / aten::stack.out: into `out` (resized as torch does).
Tensor& cat_out(absl::Span<const Tensor> tensors, int64_t dim, Tensor& out);
Tensor& stack_out(absl::Span<const Tensor> tensors, int64_t dim, Tensor& out);
/// aten::where.ScalarSelf / ScalarOther / Scalar.
Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other);
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other);
Tensor where(const Tensor& condition, const Scalar& self, const Scalar& other);
/// aten::where (one argument): condition.nonzero() as one long tensor per
/// dimension.
std::vector<Tensor> where(const Tensor& condition);
/// aten::scalar_tensor: a 0-dim tensor holding `s` (Float by default).
Tensor scalar_tensor(const Scalar& s, std::optional<ScalarType> dtype,
                     std::optional<Device> device);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_SHAPE_OPS_H_
