// The C++ front end of the operators that work along one dimension
// (aten::cumsum, cumprod, max.dim, min.dim, sort, topk), of the full max()
// and min(), and of var and std; and the backward helpers their autograd
// kernels share. Each front-end function calls through the dispatcher.
//
//   Tensor c = turnout::cumsum(x, 1);                 // Long for integers
//   auto [values, indices] = turnout::max(x, 0);      // first maximum
//   auto [sorted, order] = turnout::sort(x, -1, /*descending=*/true);
//   auto [top, where] = turnout::topk(x, 3);
//   Tensor v = turnout::var(x, {1}, /*correction=*/1, /*keepdim=*/true);
//
// PyTorch's rules: NaN is the largest value (max picks it, sort puts it
// last ascending and first descending); ties go to the first occurrence
// (sort is stable); cumsum and cumprod of integers and Bool are Long unless
// `dtype` says otherwise; var and std need a floating input and divide by
// max(0, N - correction).
//
// Thread safety: as the dispatcher; reentrant.
#ifndef TURNOUT_KERNELS_DIM_OPS_H_
#define TURNOUT_KERNELS_DIM_OPS_H_

#include <cstdint>
#include <optional>
#include <tuple>

#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"

namespace turnout {

/// aten::cumsum: running sums along `dim`.
Tensor cumsum(const Tensor& self, int64_t dim,
              std::optional<ScalarType> dtype = std::nullopt);
/// aten::cumprod: running products along `dim`.
Tensor cumprod(const Tensor& self, int64_t dim,
               std::optional<ScalarType> dtype = std::nullopt);

/// aten::cumsum_ / cumprod_: in place (dtype, when given, must be self's).
const Tensor& cumsum_(const Tensor& self, int64_t dim,
                      std::optional<ScalarType> dtype = std::nullopt);
const Tensor& cumprod_(const Tensor& self, int64_t dim,
                       std::optional<ScalarType> dtype = std::nullopt);

/// aten::max: the largest element (0-dim). Throws for an empty tensor.
Tensor max(const Tensor& self);
/// aten::min.
Tensor min(const Tensor& self);
/// aten::max.dim: (values, Long indices) of the maxima along `dim`.
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim,
                               bool keepdim = false);
/// aten::min.dim.
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim,
                               bool keepdim = false);

/// aten::sort: (values, Long indices) sorted along `dim`, stable.
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1,
                                bool descending = false);
/// aten::topk: the k largest (or smallest) along `dim`, in order.
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim = -1,
                                bool largest = true, bool sorted = true);

/// aten::var.correction over `dim` (every dimension when empty).
Tensor var(const Tensor& self, IntArrayRef dim, int64_t correction = 1,
           bool keepdim = false);
/// aten::std.correction.
Tensor std(const Tensor& self, IntArrayRef dim, int64_t correction = 1,
           bool keepdim = false);

namespace autograd_helpers {

/// The gradient of an operator that picked elements of a tensor of sizes
/// `self_sizes` along `dim` (max.dim, min.dim, sort, topk): a new tensor of
/// `self_sizes`, zero except that grad[.., j, ..] is added at index
/// indices[.., j, ..] along `dim`. `grad` and `indices` have one shape (the
/// input's with `dim` of any length; keepdim form). CPU and Meta; other
/// devices compute on host copies.
Tensor indexAlongDimBackward(const Tensor& grad, const Tensor& indices,
                             IntArrayRef self_sizes, int64_t dim);

/// The gradient of cumprod along `dim` for input `self` and upstream
/// gradient `grad` (exact where `self` has zeros). CPU and Meta; other
/// devices compute on host copies.
Tensor cumprodBackward(const Tensor& grad, const Tensor& self, int64_t dim);

}  // namespace autograd_helpers
}  // namespace turnout

#endif  // TURNOUT_KERNELS_DIM_OPS_H_
