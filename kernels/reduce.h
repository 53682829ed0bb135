// Reductions and softmax (aten::sum, mean, amax, amin, argmax, softmax.int,
// log_softmax.int and their out= variants; _softmax, _log_softmax and their
// backward operators): the C++ front end. Each
// function calls through the dispatcher, so it runs the kernel of its
// argument's device (CPU, Meta).
//
//   Tensor total = turnout::sum(x);                    // 0-dim; Long for ints
//   Tensor rows = turnout::sum(x, {1}, /*keepdim=*/true);
//   Tensor m = turnout::mean(x, {-1, -2});
//   Tensor i = turnout::argmax(x, 0);
//   Tensor p = turnout::softmax(logits, -1);
//
// The *_out functions take `out` first, as ATen's C++ API does:
// sum_out(out, x, {1}, /*keepdim=*/false, std::nullopt).
//
// PyTorch's rules: an empty dim list reduces every dimension; negative dims
// count from the end; integer and Bool sums are Long unless `dtype` says
// otherwise; mean needs a floating dtype; the sum of no elements is 0 and
// their mean NaN, while amax/amin/argmax of no elements fail. Float sums
// accumulate in double, so a sum of 16M floats keeps its precision. NaN
// propagates through amax/amin and is the maximum for argmax.
//
// Large inputs are split over parallel_for's threads (kernels/parallel.h);
// a sum depends on the thread count, never on scheduling. argmax over the
// flattened tensor runs on the calling thread.
//
// Thread safety: as the dispatcher; the functions are reentrant.
#ifndef TURNOUT_KERNELS_REDUCE_H_
#define TURNOUT_KERNELS_REDUCE_H_

#include <cstdint>
#include <initializer_list>
#include <optional>

#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"

namespace turnout {

/// aten::sum: the sum of every element, a 0-dim tensor.
Tensor sum(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
/// aten::sum.dim_IntList: the sum over `dim` (every dimension when empty).
Tensor sum(const Tensor& self, IntArrayRef dim, bool keepdim = false,
           std::optional<ScalarType> dtype = std::nullopt);
/// The same for a braced list, so that `sum(x, {})` (every dimension) is not
/// ambiguous with the dtype overload.
inline Tensor sum(const Tensor& self, std::initializer_list<int64_t> dim,
                  bool keepdim = false,
                  std::optional<ScalarType> dtype = std::nullopt) {
  return sum(self, IntArrayRef(dim), keepdim, dtype);
}
/// aten::sum.IntList_out. Without `dtype`, the sum is computed in out's
/// dtype.
Tensor& sum_out(Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim,
                std::optional<ScalarType> dtype);
/// aten::sum.out (every element).
Tensor& sum_out(Tensor& out, const Tensor& self,
                std::optional<ScalarType> dtype);

/// aten::mean: the mean of every element, a 0-dim tensor.
Tensor mean(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
/// aten::mean.dim.
Tensor mean(const Tensor& self, IntArrayRef dim, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
/// The same for a braced list (see sum).
inline Tensor mean(const Tensor& self, std::initializer_list<int64_t> dim,
                   bool keepdim = false,
                   std::optional<ScalarType> dtype = std::nullopt) {
  return mean(self, IntArrayRef(dim), keepdim, dtype);
}
/// aten::mean.out.
Tensor& mean_out(Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim,
                 std::optional<ScalarType> dtype);

/// aten::amax: the maximum over `dim` (every dimension when empty).
Tensor amax(const Tensor& self, IntArrayRef dim = {}, bool keepdim = false);
/// aten::amax.out.
Tensor& amax_out(Tensor& out, const Tensor& self, IntArrayRef dim,
                 bool keepdim);
/// aten::amin.
Tensor amin(const Tensor& self, IntArrayRef dim = {}, bool keepdim = false);
/// aten::amin.out.
Tensor& amin_out(Tensor& out, const Tensor& self, IntArrayRef dim,
                 bool keepdim);

/// aten::argmax: the index (Long) of the first maximum along `dim`, or in
/// the flattened tensor when `dim` is not given.
Tensor argmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt,
              bool keepdim = false);
/// aten::argmax.out.
Tensor& argmax_out(Tensor& out, const Tensor& self, std::optional<int64_t> dim,
                   bool keepdim);

/// aten::softmax.int: exp(x - max) / sum(exp(x - max)) along `dim`, in
/// `dtype` when given (the input is converted first).
Tensor softmax(const Tensor& self, int64_t dim,
               std::optional<ScalarType> dtype = std::nullopt);
/// aten::softmax.int_out.
Tensor& softmax_out(Tensor& out, const Tensor& self, int64_t dim,
                    std::optional<ScalarType> dtype);
/// aten::log_softmax.int: x - max - log(sum(exp(x - max))) along `dim`.
Tensor log_softmax(const Tensor& self, int64_t dim,
                   std::optional<ScalarType> dtype = std::nullopt);
/// aten::log_softmax.int_out.
Tensor& log_softmax_out(Tensor& out, const Tensor& self, int64_t dim,
                        std::optional<ScalarType> dtype);

/// aten::_softmax: softmax along `dim`; with `half_to_float`, a Half input
/// gives a Float result.
Tensor _softmax(const Tensor& self, int64_t dim, bool half_to_float = false);
/// aten::_log_softmax.
Tensor _log_softmax(const Tensor& self, int64_t dim,
                    bool half_to_float = false);
/// aten::_softmax_backward_data: the gradient of softmax given its `output`
/// y and the gradient g of the loss with respect to it:
/// y * (g - sum(g * y, dim)), in `input_dtype`.
Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output,
                              int64_t dim, ScalarType input_dtype);
/// aten::_log_softmax_backward_data: g - exp(y) * sum(g, dim), for y the
/// log_softmax output.
Tensor _log_softmax_backward_data(const Tensor& grad_output,
                                  const Tensor& output, int64_t dim,
                                  ScalarType input_dtype);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_REDUCE_H_
