// CUDA kernels of the reductions: aten::sum (all, dim_IntList), mean (all,
// dim), amax, amin, argmax, argmin, and their out= overloads; all, any
// (full and .dim), prod (full and .dim_int), max and min (full, .dim and
// the out= .dim_max, .dim_min). The Meta kernel gives the result's sizes
// and dtype and runs every check; the reduced dimensions are permuted
// innermost and the input made contiguous in the compute dtype, then
// reduce.cu folds each row (floating dtypes in double, the others in int64;
// few long rows in two passes through a scratch buffer).
#include <optional>
#include <tuple>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/cuda/cuda_loops.h"
#include "kernels/cuda/cuda_utils.h"
#include "kernels/cuda/stream.h"
#include "kernels/factory.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace cuda {
namespace {

using DimList = std::optional<std::vector<int64_t>>;
using Dt = std::optional<ScalarType>;

// Launches reduce.cu on `rows` ([outer, inner], contiguous, `compute`)
// into `out`, with the scratch memory the two-pass reduction of few long
// rows needs. The scratch comes from the caching allocator and goes back
// when this returns, before the kernels ran: the next user of the block is
// queued after them on the same stream. Precondition: rows' device is
// current.
void runReduce(const char* op, ReduceOp kind, const Tensor& rows,
               const Tensor& out, ScalarType compute, int64_t outer,
               int64_t inner) {
  const int dtype = static_cast<int>(compute);
  const int64_t scratch_bytes = reduceScratchBytes(dtype, outer, inner);
  Tensor scratch;
  void* scratch_ptr = nullptr;
  if (scratch_bytes > 0) {
    const int64_t sizes[] = {scratch_bytes};
    scratch = emptyTensor(sizes, ScalarType::Byte, rows.device());
    scratch_ptr = scratch.data_ptr();
  }
  checkCuda(launchReduce(kind, rows.data_ptr(), out.data_ptr(), dtype, outer,
                         inner, scratch_ptr, currentStreamHandle()),
            op);
}

// Reduces `self` over `dims` (none: all) in `compute` into a new CUDA
// tensor with the Meta result's sizes and dtype.
Tensor reduceCuda(const char* op, ReduceOp kind, const Tensor& self,
                  IntArrayRef dims, ScalarType compute, const Tensor& meta) {
  const Device device = checkCudaDevices(op, {&self});
  const int64_t nd = self.dim();
  std::vector<bool> reduced(static_cast<size_t>(nd), dims.empty());
  if (nd > 0) {
    for (int64_t d : dims) reduced[maybeWrapDim(d, nd)] = true;
  }
  DimVector sizes, strides;  // kept dimensions, then reduced ones
  int64_t outer = 1, inner = 1;
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t d = 0; d < nd; ++d) {
      if (reduced[d] != (pass == 1)) continue;
      sizes.push_back(self.size(d));
      strides.push_back(self.stride(d));
      (pass == 0 ? outer : inner) *= self.size(d);
    }
  }
  Tensor out = emptyTensor(meta.sizes(), meta.scalar_type(), device);
  TURNOUT_INTERNAL_ASSERT(out.numel() == outer, op, ": ", out.numel(),
                          " outputs for ", outer, " rows");
  if (outer == 0) return out;
  const Tensor permuted = makeView(self, sizes, strides, self.storage_offset());
  const Tensor rows = contiguousAs(permuted, compute, device);
  CUDADeviceGuard guard(device);
  const bool indices = kind == ReduceOp::ArgMax || kind == ReduceOp::ArgMin;
  if (indices || meta.scalar_type() == compute) {
    runReduce(op, kind, rows, out, compute, outer, inner);
    return out;
  }
  Tensor values = emptyTensor(meta.sizes(), compute, device);
  runReduce(op, kind, rows, values, compute, outer, inner);
  runElementwise(op, ElementwiseOp::Copy, meta.scalar_type(), out, {values});
  return out;
}

std::vector<int64_t> dimsOf(const DimList& dim) {
  return dim.value_or(std::vector<int64_t>{});
}

Tensor sumKernel(const Tensor& self, Dt dtype) {
  static const auto op = typedOp<Tensor(const Tensor&, Dt)>("aten::sum", "");
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), dtype);
  return reduceCuda("sum()", ReduceOp::Sum, self, {}, m.scalar_type(), m);
}

Tensor sumDimKernel(const Tensor& self, DimList dim, bool keepdim, Dt dtype) {
  static const auto op =
      typedOp<Tensor(const Tensor&, DimList, bool, Dt)>("aten::sum",
                                                        "dim_IntList");
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), dim, keepdim, dtype);
  return reduceCuda("sum()", ReduceOp::Sum, self, dimsOf(dim), m.scalar_type(),
                    m);
}

Tensor meanKernel(const Tensor& self, Dt dtype) {
  static const auto op = typedOp<Tensor(const Tensor&, Dt)>("aten::mean", "");
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), dtype);
  return reduceCuda("mean()", ReduceOp::Mean, self, {}, m.scalar_type(), m);
}

Tensor meanDimKernel(const Tensor& self, DimList dim, bool keepdim, Dt dtype) {
  static const auto op =
      typedOp<Tensor(const Tensor&, DimList, bool, Dt)>("aten::mean", "dim");
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), dim, keepdim, dtype);
  return reduceCuda("mean()", ReduceOp::Mean, self, dimsOf(dim),
                    m.scalar_type(), m);
}

Tensor amaxKernel(const Tensor& self, IntArrayRef dim, bool keepdim) {
  static const auto op =
      typedOp<Tensor(const Tensor&, IntArrayRef, bool)>("aten::amax", "");
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), dim, keepdim);
  return reduceCuda("amax()", ReduceOp::Max, self, dim, self.scalar_type(), m);
}

Tensor aminKernel(const Tensor& self, IntArrayRef dim, bool keepdim) {
  static const auto op =
      typedOp<Tensor(const Tensor&, IntArrayRef, bool)>("aten::amin", "");
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), dim, keepdim);
  return reduceCuda("amin()", ReduceOp::Min, self, dim, self.scalar_type(), m);
}

// argmax and argmin (kMax: argmax). With no dim they index the flattened
// (row-major) tensor: reducing every dimension in order gives exactly that
// index.
template <bool kMax>
Tensor argKernel(const Tensor& self, std::optional<int64_t> dim,
                 bool keepdim) {
  static const auto op =
      typedOp<Tensor(const Tensor&, std::optional<int64_t>, bool)>(
          kMax ? "aten::argmax" : "aten::argmin", "");
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), dim, keepdim);
  std::vector<int64_t> dims;
  if (dim && self.dim() > 0) dims.push_back(*dim);
  return reduceCuda(kMax ? "argmax()" : "argmin()",
                    kMax ? ReduceOp::ArgMax : ReduceOp::ArgMin, self, dims,
                    self.scalar_type(), m);
}

// ---- out= overloads: the Meta kernel checks (and sizes) out, the
// functional CUDA kernel computes, finishOut copies. Without a dtype, sum
// and mean compute in out's dtype, as the CPU kernels do.

Tensor& sumIntListOut(const Tensor& self, DimList dim, bool keepdim, Dt dtype,
                      Tensor& out) {
  static const auto op =
      typedOp<Tensor&(const Tensor&, DimList, bool, Dt, Tensor&)>(
          "aten::sum", "IntList_out");
  checkCudaDevices("sum.IntList_out()", {&self}, &out);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), metaLike(self), dim, keepdim, dtype, mo);
  return finishOut(
      "sum.IntList_out()", mo,
      sumDimKernel(self, dim, keepdim, dtype.value_or(out.scalar_type())), out);
}

Tensor& sumOut(const Tensor& self, Dt dtype, Tensor& out) {
  static const auto op =
      typedOp<Tensor&(const Tensor&, Dt, Tensor&)>("aten::sum", "out");
  checkCudaDevices("sum.out()", {&self}, &out);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), metaLike(self), dtype, mo);
  return finishOut("sum.out()", mo,
                   sumKernel(self, dtype.value_or(out.scalar_type())), out);
}

Tensor& meanOut(const Tensor& self, DimList dim, bool keepdim, Dt dtype,
                Tensor& out) {
  static const auto op =
      typedOp<Tensor&(const Tensor&, DimList, bool, Dt, Tensor&)>("aten::mean",
                                                                  "out");
  checkCudaDevices("mean.out()", {&self}, &out);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), metaLike(self), dim, keepdim, dtype, mo);
  return finishOut(
      "mean.out()", mo,
      meanDimKernel(self, dim, keepdim, dtype.value_or(out.scalar_type())),
      out);
}

#define TURNOUT_CUDA_MINMAX_OUT(name, kernel)                                 \
  Tensor& name##Out(const Tensor& self, IntArrayRef dim, bool keepdim,        \
                    Tensor& out) {                                            \
    static const auto op =                                                    \
        typedOp<Tensor&(const Tensor&, IntArrayRef, bool, Tensor&)>(          \
            "aten::" #name, "out");                                           \
    checkCudaDevices(#name ".out()", {&self}, &out);                          \
    Tensor mo = metaLike(out);                                                \
    op.redispatch(metaKeys(), metaLike(self), dim, keepdim, mo);              \
    return finishOut(#name ".out()", mo, kernel(self, dim, keepdim), out);    \
  }
TURNOUT_CUDA_MINMAX_OUT(amax, amaxKernel)
TURNOUT_CUDA_MINMAX_OUT(amin, aminKernel)
#undef TURNOUT_CUDA_MINMAX_OUT

template <bool kMax>
Tensor& argOut(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
               Tensor& out) {
  static const auto op =
      typedOp<Tensor&(const Tensor&, std::optional<int64_t>, bool, Tensor&)>(
          kMax ? "aten::argmax" : "aten::argmin", "out");
  const char* name = kMax ? "argmax.out()" : "argmin.out()";
  checkCudaDevices(name, {&self}, &out);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), metaLike(self), dim, keepdim, mo);
  return finishOut(name, mo, argKernel<kMax>(self, dim, keepdim), out);
}

// ---- all, any, prod (issue 20), max and min (issue 18) ------------------------

// all and any fold the input as Bool with Min and Max, into Bool, copied
// into the Meta result's dtype (uint8 for uint8 inputs). An empty row folds
// to Min's identity, true, which is all's; any of nothing is false.
template <bool kAll>
Tensor logicalReduce(const Tensor& self, IntArrayRef dims, const Tensor& meta) {
  const char* op = kAll ? "all()" : "any()";
  if (!kAll && self.numel() == 0) {
    const Device device = checkCudaDevices(op, {&self});
    return zeros(meta.sizes(), TensorOptions(meta.scalar_type()).device(device));
  }
  return reduceCuda(op, kAll ? ReduceOp::Min : ReduceOp::Max, self, dims,
                    ScalarType::Bool, meta);
}

// The dimension list of a single-dim reduction: none for a 0-dim tensor,
// which reduces its one element.
std::vector<int64_t> oneDim(const Tensor& self, int64_t dim) {
  if (self.dim() == 0) return {};
  return {dim};
}

template <bool kAll>
Tensor logicalAll(const Tensor& self) {
  static const auto op =
      typedOp<Tensor(const Tensor&)>(kAll ? "aten::all" : "aten::any", "");
  const Tensor m = op.redispatch(metaKeys(), metaLike(self));
  return logicalReduce<kAll>(self, {}, m);
}

template <bool kAll>
Tensor logicalDim(const Tensor& self, int64_t dim, bool keepdim) {
  static const auto op = typedOp<Tensor(const Tensor&, int64_t, bool)>(
      kAll ? "aten::all" : "aten::any", "dim");
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), dim, keepdim);
  return logicalReduce<kAll>(self, oneDim(self, dim), m);
}

// prod folds in the Meta result's dtype (Long for integral and Bool inputs
// without dtype=): double for floating dtypes, wrapping int64 for the
// others.
Tensor prodKernel(const Tensor& self, Dt dtype) {
  static const auto op = typedOp<Tensor(const Tensor&, Dt)>("aten::prod", "");
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), dtype);
  return reduceCuda("prod()", ReduceOp::Prod, self, {}, m.scalar_type(), m);
}

Tensor prodDimKernel(const Tensor& self, int64_t dim, bool keepdim, Dt dtype) {
  static const auto op = typedOp<Tensor(const Tensor&, int64_t, bool, Dt)>(
      "aten::prod", "dim_int");
  const Tensor m =
      op.redispatch(metaKeys(), metaLike(self), dim, keepdim, dtype);
  return reduceCuda("prod()", ReduceOp::Prod, self, oneDim(self, dim),
                    m.scalar_type(), m);
}

// max() and min() of every element (NaN propagates).
template <bool kMax>
Tensor minmaxAll(const Tensor& self) {
  static const auto op =
      typedOp<Tensor(const Tensor&)>(kMax ? "aten::max" : "aten::min", "");
  const Tensor m = op.redispatch(metaKeys(), metaLike(self));
  return reduceCuda(kMax ? "max()" : "min()",
                    kMax ? ReduceOp::Max : ReduceOp::Min, self, {},
                    self.scalar_type(), m);
}

// max.dim and min.dim: the values fold with Max/Min, the indices with
// ArgMax/ArgMin, which agree: a NaN is the value and its first position the
// index; otherwise the first of equal extremes.
using ValuesIndices = std::tuple<Tensor, Tensor>;

template <bool kMax>
ValuesIndices minmaxDim(const Tensor& self, int64_t dim, bool keepdim) {
  static const auto op =
      typedOp<ValuesIndices(const Tensor&, int64_t, bool)>(
          kMax ? "aten::max" : "aten::min", "dim");
  const char* name = kMax ? "max()" : "min()";
  const auto [mv, mi] = op.redispatch(metaKeys(), metaLike(self), dim, keepdim);
  const std::vector<int64_t> dims = oneDim(self, dim);
  Tensor values = reduceCuda(name, kMax ? ReduceOp::Max : ReduceOp::Min, self,
                             dims, self.scalar_type(), mv);
  Tensor indices =
      reduceCuda(name, kMax ? ReduceOp::ArgMax : ReduceOp::ArgMin, self, dims,
                 self.scalar_type(), mi);
  return {values, indices};
}

template <bool kMax>
std::tuple<Tensor&, Tensor&> minmaxDimOut(const Tensor& self, int64_t dim,
                                          bool keepdim, Tensor& values,
                                          Tensor& indices) {
  static const auto op =
      typedOp<std::tuple<Tensor&, Tensor&>(const Tensor&, int64_t, bool,
                                           Tensor&, Tensor&)>(
          kMax ? "aten::max" : "aten::min", kMax ? "dim_max" : "dim_min");
  const char* name = kMax ? "max.dim_max()" : "min.dim_min()";
  checkCudaDevices(name, {&self, &indices}, &values);
  Tensor mv = metaLike(values);
  Tensor mi = metaLike(indices);
  op.redispatch(metaKeys(), metaLike(self), dim, keepdim, mv, mi);
  const auto [v, i] = minmaxDim<kMax>(self, dim, keepdim);
  finishOut(name, mv, v, values);
  finishOut(name, mi, i, indices);
  return {values, indices};
}

}  // namespace
}  // namespace cuda
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("sum.IntList_out", TURNOUT_FN(::turnout::cuda::sumIntListOut));
  m.impl("sum.out", TURNOUT_FN(::turnout::cuda::sumOut));
  m.impl("mean.out", TURNOUT_FN(::turnout::cuda::meanOut));
  m.impl("amax.out", TURNOUT_FN(::turnout::cuda::amaxOut));
  m.impl("amin.out", TURNOUT_FN(::turnout::cuda::aminOut));
  m.impl("argmax.out", TURNOUT_FN(::turnout::cuda::argOut<true>));
  using namespace ::turnout::cuda;
  m.impl("sum", TURNOUT_FN(sumKernel));
  m.impl("sum.dim_IntList", TURNOUT_FN(sumDimKernel));
  m.impl("mean", TURNOUT_FN(meanKernel));
  m.impl("mean.dim", TURNOUT_FN(meanDimKernel));
  m.impl("amax", TURNOUT_FN(amaxKernel));
  m.impl("amin", TURNOUT_FN(aminKernel));
  m.impl("argmax", TURNOUT_FN(argKernel<true>));
  m.impl("all", TURNOUT_FN(logicalAll<true>));
  m.impl("all.dim", TURNOUT_FN(logicalDim<true>));
  m.impl("any", TURNOUT_FN(logicalAll<false>));
  m.impl("any.dim", TURNOUT_FN(logicalDim<false>));
  m.impl("prod", TURNOUT_FN(prodKernel));
  m.impl("prod.dim_int", TURNOUT_FN(prodDimKernel));
  m.impl("argmin", TURNOUT_FN(argKernel<false>));
  m.impl("argmin.out", TURNOUT_FN(argOut<false>));
  m.impl("max", TURNOUT_FN(minmaxAll<true>));
  m.impl("min", TURNOUT_FN(minmaxAll<false>));
  m.impl("max.dim", TURNOUT_FN(minmaxDim<true>));
  m.impl("min.dim", TURNOUT_FN(minmaxDim<false>));
  m.impl("max.dim_max", TURNOUT_FN(minmaxDimOut<true>));
  m.impl("min.dim_min", TURNOUT_FN(minmaxDimOut<false>));
}
