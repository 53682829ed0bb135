// CPU and Meta kernels of the operators along one dimension (cumsum,
// cumprod, max/min with and without a dim, sort, topk), their schemas, var
// and std as CompositeImplicitAutograd kernels over mean/sub/mul/sum/div,
// and the C++ front end (see dim_ops.h).
//
// A tensor walked along `dim` is seen as [outer, n, inner] (the sizes
// before `dim`, at it, after it) of a contiguous copy in the compute dtype;
// outputs are new contiguous tensors of the same layout, so element (o, k,
// i) is at (o * n + k) * inner + i in both.
#include "kernels/dim_ops.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <type_traits>
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
#include "kernels/loops.h"
#include "kernels/reduce.h"
#include "kernels/reduce_utils.h"
#include "kernels/tensor_utils.h"
#include "kernels/type_promotion.h"

namespace turnout {
namespace {

using reduce_internal::copyToOut;
using DimList = std::optional<std::vector<int64_t>>;

struct Rows {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
};

// Precondition: `dim` wrapped (0 for a 0-dim shape).
Rows rowsOf(IntArrayRef sizes, int64_t dim) {
  Rows r;
  if (sizes.empty()) return r;
  for (int64_t d = 0; d < dim; ++d) r.outer *= sizes[d];
  r.n = sizes[dim];
  for (size_t d = dim + 1; d < sizes.size(); ++d) r.inner *= sizes[d];
  return r;
}

void checkDefined(const char* op, const Tensor& t) {
  TURNOUT_CHECK(t.defined(), ErrorKind::InvalidArgument, op,
                ": expected a defined tensor, but got an undefined one");
}

int64_t wrapDim(const Tensor& self, int64_t dim) {
  return maybeWrapDim(dim, self.dim());
}

// `sizes` with dimension `dim` set to `n` (removed when !keepdim and
// n == 1 stands for a reduction), for a tensor of at least one dimension.
DimVector withDim(IntArrayRef sizes, int64_t dim, int64_t n, bool remove) {
  DimVector out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (static_cast<int64_t>(d) == dim) {
      if (!remove) out.push_back(n);
    } else {
      out.push_back(sizes[d]);
    }
  }
  return out;
}

// NaN-aware ordering: NaN is the largest value.
template <class M>
bool isNan(M v) {
  if constexpr (std::is_floating_point_v<M>) {
    return std::isnan(v);
  } else {
    return false;
  }
}
template <class M>
bool lessNanLast(M a, M b) {
  return !isNan(a) && (isNan(b) || a < b);
}

// ---- cumsum / cumprod ----------------------------------------------------------

ScalarType cumDtype(const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return isIntegralType(self.scalar_type(), /*include_bool=*/true)
             ? ScalarType::Long
             : self.scalar_type();
}

// out (contiguous, its dtype the compute dtype) = running sums/products of
// self along dim. Floating accumulate in double, integers in wrapping
// unsigned 64-bit arithmetic.
template <bool kProd>
void cumInto(const Tensor& out, const Tensor& self, int64_t dim) {
  if (out.numel() == 0) return;
  const Tensor x = contiguousCastTo(self, out.scalar_type());
  const Rows r = rowsOf(out.sizes(), dim);
  visitDtype(out.scalar_type(), kProd ? "cumprod" : "cumsum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = std::conditional_t<
        std::is_floating_point_v<OpMathType<T>>, double,
        std::conditional_t<std::is_same_v<T, bool>, bool, uint64_t>>;
    const T* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for (int64_t a = 0; a < r.outer; ++a) {
      for (int64_t i = 0; i < r.inner; ++i) {
        A acc = kProd ? A(1) : A(0);
        for (int64_t k = 0; k < r.n; ++k) {
          const int64_t at = (a * r.n + k) * r.inner + i;
          const A v = convertElement<A>(in[at]);
          if constexpr (std::is_same_v<A, bool>) {
            acc = kProd ? (acc && v) : (acc || v);
          } else if constexpr (kProd) {
            acc = acc * v;
          } else {
            acc = acc + v;
          }
          o[at] = convertElement<T>(acc);
        }
      }
    }
  });
}

template <bool kCpu, bool kProd>
Tensor cumKernel(const Tensor& self, int64_t dim,
                 std::optional<ScalarType> dtype) {
  checkDefined(kProd ? "cumprod" : "cumsum", self);
  const int64_t d = wrapDim(self, dim);
  Tensor out = emptyTensor(self.sizes(), cumDtype(self, dtype), self.device());
  if constexpr (kCpu) cumInto<kProd>(out, self, d);
  return out;
}


template <bool kCpu, bool kProd>
Tensor& cumOutKernel(const Tensor& self, int64_t dim,
                     std::optional<ScalarType> dtype, Tensor& out) {
  const char* op = kProd ? "cumprod.out" : "cumsum.out";
  checkDefined(op, self);
  const int64_t d = wrapDim(self, dim);
  TURNOUT_CHECK(!dtype || *dtype == out.scalar_type(), ErrorKind::Type,
                "Expected out tensor to have dtype ", dtypeName(*dtype),
                ", but got ", dtypeName(out.scalar_type()), " instead");
  // Without dtype, the input is converted to out's dtype, as PyTorch does.
  Tensor result = emptyTensor(self.sizes(), out.scalar_type(), self.device());
  if constexpr (kCpu) cumInto<kProd>(result, self, d);
  return copyToOut(op, result, out);
}

template <bool kCpu, bool kProd>
Tensor& cumInplaceKernel(Tensor& self, int64_t dim,
                         std::optional<ScalarType> dtype) {
  const char* op = kProd ? "cumprod_" : "cumsum_";
  checkDefined(op, self);
  const int64_t d = wrapDim(self, dim);
  TURNOUT_CHECK(!dtype || *dtype == self.scalar_type(), ErrorKind::Type,
                "Bad in-place call: input tensor dtype ",
                dtypeName(self.scalar_type()), " and output tensor dtype ",
                dtypeName(*dtype), " should match");
  if constexpr (kCpu) {
    Tensor result = emptyTensor(self.sizes(), self.scalar_type(), self.device());
    cumInto<kProd>(result, self, d);
    copyCast(self, result);
  }
  return self;
}

// ---- max / min -------------------------------------------------------------------

// Whether v replaces the best so far: NaN wins over numbers (the first NaN
// stays), otherwise strictly better (the first of ties stays).
template <bool kMax, class M>
bool better(M v, M best) {
  if (isNan(best)) return false;
  if (isNan(v)) return true;
  return kMax ? best < v : v < best;
}

template <bool kCpu, bool kMax>
Tensor minmaxAll(const Tensor& self) {
  const char* op = kMax ? "max" : "min";
  checkDefined(op, self);
  TURNOUT_CHECK(self.numel() > 0, ErrorKind::InvalidArgument, op,
                "(): Expected reduction dim to be specified for input.numel() "
                "== 0. Specify the reduction dim with the 'dim' argument.");
  Tensor out = emptyTensor({}, self.scalar_type(), self.device());
  if constexpr (kCpu) {
    const Tensor x = contiguousCastTo(self, self.scalar_type());
    visitDtype(self.scalar_type(), op, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using M = OpMathType<T>;
      const T* p = x.data_ptr<T>();
      M best = M(p[0]);
      for (int64_t i = 1; i < x.numel(); ++i) {
        if (better<kMax>(M(p[i]), best)) best = M(p[i]);
      }
      *out.data_ptr<T>() = T(best);
    });
  }
  return out;
}

// values/indices (contiguous, [outer, 1, inner]) of the extremes of self
// along dim.
template <bool kMax>
void minmaxDimInto(const Tensor& values, const Tensor& indices,
                   const Tensor& self, int64_t dim) {
  if (values.numel() == 0) return;
  const Tensor x = contiguousCastTo(self, self.scalar_type());
  const Rows r = rowsOf(self.sizes(), dim);
  visitDtype(self.scalar_type(), kMax ? "max" : "min", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = OpMathType<T>;
    const T* in = x.data_ptr<T>();
    T* v = values.data_ptr<T>();
    int64_t* ix = indices.data_ptr<int64_t>();
    for (int64_t a = 0; a < r.outer; ++a) {
      for (int64_t i = 0; i < r.inner; ++i) {
        int64_t best_k = 0;
        M best = M(in[a * r.n * r.inner + i]);
        for (int64_t k = 1; k < r.n; ++k) {
          const M c = M(in[(a * r.n + k) * r.inner + i]);
          if (better<kMax>(c, best)) {
            best = c;
            best_k = k;
          }
        }
        v[a * r.inner + i] = T(best);
        ix[a * r.inner + i] = best_k;
      }
    }
  });
}

template <bool kMax>
DimVector minmaxDimSizes(const Tensor& self, int64_t dim, bool keepdim) {
  const char* op = kMax ? "max" : "min";
  checkDefined(op, self);
  const int64_t d = wrapDim(self, dim);
  if (self.dim() == 0) return {};
  TURNOUT_CHECK(self.size(d) > 0, ErrorKind::Index, op,
                "(): Expected reduction dim ", d, " to have non-zero size.");
  return withDim(self.sizes(), d, 1, !keepdim);
}

template <bool kCpu, bool kMax>
std::tuple<Tensor, Tensor> minmaxDim(const Tensor& self, int64_t dim,
                                     bool keepdim) {
  const DimVector sizes = minmaxDimSizes<kMax>(self, dim, keepdim);
  Tensor values = emptyTensor(sizes, self.scalar_type(), self.device());
  Tensor indices = emptyTensor(sizes, ScalarType::Long, self.device());
  if constexpr (kCpu) {
    minmaxDimInto<kMax>(values, indices, self, wrapDim(self, dim));
  }
  return {values, indices};
}

template <bool kCpu, bool kMax>
std::tuple<Tensor&, Tensor&> minmaxDimOut(const Tensor& self, int64_t dim,
                                          bool keepdim, Tensor& values,
                                          Tensor& indices) {
  const char* op = kMax ? "max.dim_max" : "min.dim_min";
  auto [v, i] = minmaxDim<kCpu, kMax>(self, dim, keepdim);
  copyToOut(op, v, values);
  copyToOut(op, i, indices);
  return {values, indices};
}

// argmin: the index of the first minimum (NaN counts as the minimum, as
// PyTorch's argmin picks it), along `dim` or over the flattened tensor.
template <bool kCpu>
Tensor argminKernel(const Tensor& self, std::optional<int64_t> dim,
                    bool keepdim) {
  checkDefined("argmin", self);
  // After the shape checks, as PyTorch orders them.
  auto check_dtype = [&] {
    // (With no elements nothing is computed, and nothing is refused.)
    TURNOUT_CHECK(self.scalar_type() != ScalarType::Bool || self.numel() == 0,
                  ErrorKind::NotImplemented,
                  "\"argmin_cpu\" not implemented for 'Bool'");
  };
  if (dim) {
    const int64_t d = wrapDim(self, *dim);
    DimVector sizes;
    if (self.dim() > 0) {
      TURNOUT_CHECK(self.size(d) > 0, ErrorKind::Index,
                    "argmin(): Expected reduction dim ", d,
                    " to have non-zero size.");
      sizes = withDim(self.sizes(), d, 1, !keepdim);
    }
    check_dtype();
    Tensor values = emptyTensor(sizes, self.scalar_type(), self.device());
    Tensor indices = emptyTensor(sizes, ScalarType::Long, self.device());
    if constexpr (kCpu) minmaxDimInto<false>(values, indices, self, d);
    return indices;
  }
  TURNOUT_CHECK(self.numel() > 0, ErrorKind::Index,
                "argmin(): Expected reduction dim to be specified for "
                "input.numel() == 0.");
  check_dtype();
  const DimVector sizes =
      keepdim ? DimVector(self.dim(), 1) : DimVector();
  Tensor indices = emptyTensor(sizes, ScalarType::Long, self.device());
  if constexpr (kCpu) {
    const Tensor flat = contiguousCastTo(self, self.scalar_type());
    Tensor values = emptyTensor({1}, self.scalar_type(), self.device());
    const Tensor as_row =
        makeView(flat, {flat.numel()}, {1}, flat.storage_offset());
    const Tensor index_row = makeView(indices, {1}, {1}, 0);
    minmaxDimInto<false>(values, index_row, as_row, 0);
  }
  return indices;
}

template <bool kCpu>
Tensor& argminOut(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
                  Tensor& out) {
  return copyToOut("argmin.out", argminKernel<kCpu>(self, dim, keepdim), out);
}

// ---- sort / topk -----------------------------------------------------------------

// Sorts every row of self along dim (stable; NaN largest) and writes the
// first `k` of each into values/indices ([outer, k, inner], contiguous).
void sortInto(const Tensor& values, const Tensor& indices, const Tensor& self,
              int64_t dim, int64_t k, bool descending) {
  if (values.numel() == 0) return;
  const Tensor x = contiguousCastTo(self, self.scalar_type());
  const Rows r = rowsOf(self.sizes(), dim);
  visitDtype(self.scalar_type(), "sort", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = OpMathType<T>;
    const T* in = x.data_ptr<T>();
    T* v = values.data_ptr<T>();
    int64_t* ix = indices.data_ptr<int64_t>();
    std::vector<int64_t> order(static_cast<size_t>(r.n));
    std::vector<M> row(static_cast<size_t>(r.n));
    for (int64_t a = 0; a < r.outer; ++a) {
      for (int64_t i = 0; i < r.inner; ++i) {
        for (int64_t j = 0; j < r.n; ++j) {
          row[j] = M(in[(a * r.n + j) * r.inner + i]);
        }
        std::iota(order.begin(), order.end(), int64_t{0});
        if (descending) {
          std::stable_sort(order.begin(), order.end(),
                           [&](int64_t p, int64_t q) {
                             return lessNanLast(row[q], row[p]);
                           });
        } else {
          std::stable_sort(order.begin(), order.end(),
                           [&](int64_t p, int64_t q) {
                             return lessNanLast(row[p], row[q]);
                           });
        }
        for (int64_t j = 0; j < k; ++j) {
          const int64_t at = (a * k + j) * r.inner + i;
          v[at] = T(row[order[j]]);
          ix[at] = order[j];
        }
      }
    }
  });
}

template <bool kCpu>
std::tuple<Tensor, Tensor> sortKernel(const Tensor& self, int64_t dim,
                                      bool descending) {
  checkDefined("sort", self);
  const int64_t d = wrapDim(self, dim);
  Tensor values = emptyTensor(self.sizes(), self.scalar_type(), self.device());
  Tensor indices = emptyTensor(self.sizes(), ScalarType::Long, self.device());
  if constexpr (kCpu) {
    sortInto(values, indices, self, d, rowsOf(self.sizes(), d).n, descending);
  }
  return {values, indices};
}

// sort.stable: every sort here is stable, so `stable` changes nothing.
template <bool kCpu>
std::tuple<Tensor, Tensor> sortStable(const Tensor& self,
                                      std::optional<bool> /*stable*/,
                                      int64_t dim, bool descending) {
  return sortKernel<kCpu>(self, dim, descending);
}

template <bool kCpu>
std::tuple<Tensor&, Tensor&> sortValues(const Tensor& self, int64_t dim,
                                        bool descending, Tensor& values,
                                        Tensor& indices) {
  auto [v, i] = sortKernel<kCpu>(self, dim, descending);
  copyToOut("sort.values", v, values);
  copyToOut("sort.values", i, indices);
  return {values, indices};
}

template <bool kCpu>
std::tuple<Tensor&, Tensor&> sortValuesStable(const Tensor& self,
                                              std::optional<bool> stable,
                                              int64_t dim, bool descending,
                                              Tensor& values, Tensor& indices) {
  (void)stable;
  return sortValues<kCpu>(self, dim, descending, values, indices);
}

template <bool kCpu>
std::tuple<Tensor, Tensor> topkKernel(const Tensor& self, int64_t k,
                                      int64_t dim, bool largest, bool sorted) {
  (void)sorted;  // the k are always returned in order
  checkDefined("topk", self);
  const int64_t d = wrapDim(self, dim);
  const int64_t n = self.dim() == 0 ? 1 : self.size(d);
  TURNOUT_CHECK(k >= 0 && k <= n, ErrorKind::InvalidArgument,
                "selected index k out of range (topk: k = ", k,
                ", but dimension ", d, " has size ", n, ")");
  const DimVector sizes =
      self.dim() == 0 ? DimVector() : withDim(self.sizes(), d, k, false);
  Tensor values = emptyTensor(sizes, self.scalar_type(), self.device());
  Tensor indices = emptyTensor(sizes, ScalarType::Long, self.device());
  if constexpr (kCpu) sortInto(values, indices, self, d, k, largest);
  return {values, indices};
}

template <bool kCpu>
std::tuple<Tensor&, Tensor&> topkValues(const Tensor& self, int64_t k,
                                        int64_t dim, bool largest, bool sorted,
                                        Tensor& values, Tensor& indices) {
  auto [v, i] = topkKernel<kCpu>(self, k, dim, largest, sorted);
  copyToOut("topk.values", v, values);
  copyToOut("topk.values", i, indices);
  return {values, indices};
}

// ---- var / std (CompositeImplicitAutograd) -----------------------------------------

std::vector<int64_t> reduceDims(const Tensor& self, const DimList& dim) {
  std::vector<int64_t> dims;
  if (dim && !dim->empty()) {
    for (int64_t d : *dim) dims.push_back(maybeWrapDim(d, self.dim()));
  } else {
    for (int64_t d = 0; d < self.dim(); ++d) dims.push_back(d);
  }
  return dims;
}

// sum((x - mean)^2) / max(0, N - correction) over `dim`.
Tensor varImpl(const char* op, const Tensor& self, const DimList& dim,
               int64_t correction, bool keepdim) {
  checkDefined(op, self);
  TURNOUT_CHECK(isFloatingType(self.scalar_type()), ErrorKind::InvalidArgument,
                "std and var only support floating point and complex dtypes");
  const std::vector<int64_t> dims = reduceDims(self, dim);
  int64_t count = 1;
  for (int64_t d : dims) count *= self.dim() == 0 ? 1 : self.size(d);
  const Tensor centered =
      turnout::sub(self, turnout::mean(self, IntArrayRef(dims), true));
  const Tensor squares =
      turnout::sum(turnout::mul(centered, centered), IntArrayRef(dims), keepdim);
  const double divisor =
      static_cast<double>(std::max<int64_t>(0, count - correction));
  return turnout::div(squares, Scalar(divisor));
}

int64_t correctionOf(std::optional<int64_t> correction) {
  return correction.value_or(1);
}

template <bool kStd>
Tensor finish(const Tensor& var) {
  return kStd ? turnout::sqrt(var) : var;
}

// The correction overloads, through the dispatcher: var and std (all, dim,
// out) are CompositeImplicitAutograd over them, as torch 1.13's, so a
// Python mode sees var.correction and its gradient is VarBackward0's.
using VarCorrectionSig = Tensor(const Tensor&, DimList, std::optional<int64_t>,
                                bool);
using VarCorrectionOutSig = Tensor&(const Tensor&, DimList,
                                    std::optional<int64_t>, bool, Tensor&);
template <bool kStd>
const TypedOperatorHandle<VarCorrectionSig>& varCorrectionOp() {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow(kStd ? "aten::std" : "aten::var", "correction")
          .typed<VarCorrectionSig>();
  return op;
}
template <bool kStd>
const TypedOperatorHandle<VarCorrectionOutSig>& varCorrectionOutOp() {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow(kStd ? "aten::std" : "aten::var", "correction_out")
          .typed<VarCorrectionOutSig>();
  return op;
}

template <bool kStd>
Tensor varAll(const Tensor& self, bool unbiased) {
  return varCorrectionOp<kStd>().call(self, std::nullopt, unbiased ? 1 : 0,
                                      false);
}
template <bool kStd>
Tensor varDim(const Tensor& self, DimList dim, bool unbiased, bool keepdim) {
  return varCorrectionOp<kStd>().call(self, dim, unbiased ? 1 : 0, keepdim);
}
template <bool kStd>
Tensor varCorrection(const Tensor& self, DimList dim,
                     std::optional<int64_t> correction, bool keepdim) {
  return finish<kStd>(varImpl(kStd ? "std" : "var", self, dim,
                              correctionOf(correction), keepdim));
}
template <bool kStd>
Tensor& varOut(const Tensor& self, DimList dim, bool unbiased, bool keepdim,
               Tensor& out) {
  return varCorrectionOutOp<kStd>().call(self, dim, unbiased ? 1 : 0, keepdim,
                                         out);
}
template <bool kStd>
Tensor& varCorrectionOut(const Tensor& self, DimList dim,
                         std::optional<int64_t> correction, bool keepdim,
                         Tensor& out) {
  return copyToOut(kStd ? "std.correction_out" : "var.correction_out",
                   varCorrection<kStd>(self, dim, correction, keepdim), out);
}

// ---- Front end ----------------------------------------------------------------------

template <class Sig>
TypedOperatorHandle<Sig> lookup(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

using CumSig = Tensor(const Tensor&, int64_t, std::optional<ScalarType>);
using PairSig = std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool);
using VarSig = Tensor(const Tensor&, DimList, std::optional<int64_t>, bool);

}  // namespace

Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  static const auto op = lookup<CumSig>("aten::cumsum", "");
  return op.call(self, dim, dtype);
}
Tensor cumprod(const Tensor& self, int64_t dim,
               std::optional<ScalarType> dtype) {
  static const auto op = lookup<CumSig>("aten::cumprod", "");
  return op.call(self, dim, dtype);
}
const Tensor& cumsum_(const Tensor& self, int64_t dim,
                      std::optional<ScalarType> dtype) {
  static const auto op =
      lookup<Tensor&(Tensor&, int64_t, std::optional<ScalarType>)>(
          "aten::cumsum_", "");
  return op.call(const_cast<Tensor&>(self), dim, dtype);
}
const Tensor& cumprod_(const Tensor& self, int64_t dim,
                       std::optional<ScalarType> dtype) {
  static const auto op =
      lookup<Tensor&(Tensor&, int64_t, std::optional<ScalarType>)>(
          "aten::cumprod_", "");
  return op.call(const_cast<Tensor&>(self), dim, dtype);
}
Tensor max(const Tensor& self) {
  static const auto op = lookup<Tensor(const Tensor&)>("aten::max", "");
  return op.call(self);
}
Tensor min(const Tensor& self) {
  static const auto op = lookup<Tensor(const Tensor&)>("aten::min", "");
  return op.call(self);
}
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim) {
  static const auto op = lookup<PairSig>("aten::max", "dim");
  return op.call(self, dim, keepdim);
}
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim) {
  static const auto op = lookup<PairSig>("aten::min", "dim");
  return op.call(self, dim, keepdim);
}
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim,
                                bool descending) {
  static const auto op = lookup<PairSig>("aten::sort", "");
  return op.call(self, dim, descending);
}
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim,
                                bool largest, bool sorted) {
  static const auto op =
      lookup<std::tuple<Tensor, Tensor>(const Tensor&, int64_t, int64_t, bool,
                                        bool)>("aten::topk", "");
  return op.call(self, k, dim, largest, sorted);
}
Tensor var(const Tensor& self, IntArrayRef dim, int64_t correction,
           bool keepdim) {
  static const auto op = lookup<VarSig>("aten::var", "correction");
  return op.call(self, std::vector<int64_t>(dim.begin(), dim.end()),
                 correction, keepdim);
}
Tensor std(const Tensor& self, IntArrayRef dim, int64_t correction,
           bool keepdim) {
  static const auto op = lookup<VarSig>("aten::std", "correction");
  return op.call(self, std::vector<int64_t>(dim.begin(), dim.end()),
                 correction, keepdim);
}

namespace autograd_helpers {

Tensor indexAlongDimBackward(const Tensor& grad, const Tensor& indices,
                             IntArrayRef self_sizes, int64_t dim) {
  if (!grad.is_cpu() && !grad.is_meta()) {  // CUDA: computed on the host
    const Device cpu(DeviceType::CPU);
    return to(indexAlongDimBackward(to(grad, cpu), to(indices, cpu),
                                    self_sizes, dim),
              grad.device());
  }
  Tensor out = emptyTensor(self_sizes, grad.scalar_type(), grad.device());
  if (out.is_meta()) return out;  // the shape only
  const Tensor g = contiguousCastTo(grad, grad.scalar_type());
  const Tensor ix = contiguousCastTo(indices, ScalarType::Long);
  const int64_t d = self_sizes.empty() ? 0 : dim;
  const Rows in_rows = rowsOf(self_sizes, d);
  const Rows g_rows = rowsOf(g.sizes(), d);
  visitFloatingDtype(grad.scalar_type(), "indexAlongDimBackward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = OpMathType<T>;
    T* o = out.data_ptr<T>();
    std::fill(o, o + out.numel(), T(M(0)));
    const T* gp = g.data_ptr<T>();
    const int64_t* ip = ix.data_ptr<int64_t>();
    for (int64_t a = 0; a < g_rows.outer; ++a) {
      for (int64_t k = 0; k < g_rows.n; ++k) {
        for (int64_t i = 0; i < g_rows.inner; ++i) {
          const int64_t at = (a * g_rows.n + k) * g_rows.inner + i;
          T& dst = o[(a * in_rows.n + ip[at]) * in_rows.inner + i];
          dst = T(M(dst) + M(gp[at]));
        }
      }
    }
  });
  return out;
}

Tensor cumprodBackward(const Tensor& grad, const Tensor& self, int64_t dim) {
  if (!grad.is_cpu() && !grad.is_meta()) {  // CUDA: computed on the host
    const Device cpu(DeviceType::CPU);
    return to(cumprodBackward(to(grad, cpu), to(self, cpu), dim), grad.device());
  }
  Tensor out = emptyTensor(self.sizes(), grad.scalar_type(), grad.device());
  if (out.is_meta() || out.numel() == 0) return out;
  const Tensor g = contiguousCastTo(grad, grad.scalar_type());
  const Tensor x = contiguousCastTo(self, grad.scalar_type());
  const Rows r = rowsOf(self.sizes(), self.dim() == 0 ? 0 : dim);
  visitFloatingDtype(grad.scalar_type(), "cumprodBackward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = OpMathType<T>;
    const T* gp = g.data_ptr<T>();
    const T* xp = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    auto at = [&](int64_t a, int64_t k, int64_t i) {
      return (a * r.n + k) * r.inner + i;
    };
    // d out_j / d x_k = prod_{i <= j, i != k} x_i for j >= k: summed
    // directly, so zeros in x need no special case (O(n^2) per row).
    for (int64_t a = 0; a < r.outer; ++a) {
      for (int64_t i = 0; i < r.inner; ++i) {
        M prefix = M(1);  // prod_{i < k} x_i
        for (int64_t k = 0; k < r.n; ++k) {
          M q = prefix;
          M s = M(gp[at(a, k, i)]) * q;
          for (int64_t j = k + 1; j < r.n; ++j) {
            q = q * M(xp[at(a, j, i)]);
            s = s + M(gp[at(a, j, i)]) * q;
          }
          o[at(a, k, i)] = T(s);
          prefix = prefix * M(xp[at(a, k, i)]);
        }
      }
    }
  });
  return out;
}

}  // namespace autograd_helpers
}  // namespace turnout

// ---- Registration -------------------------------------------------------------------

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);
  m.def("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor");
  m.def(
      "cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) "
      "out) -> Tensor(a!)");
  m.def(
      "cumsum_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> "
      "Tensor(a!)");
  m.def("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor");
  m.def(
      "cumprod.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) "
      "out) -> Tensor(a!)");
  m.def(
      "cumprod_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> "
      "Tensor(a!)");
  m.def("max(Tensor self) -> Tensor");
  m.def(
      "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, "
      "Tensor indices)");
  m.def(
      "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) "
      "max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) "
      "indices)");
  m.def("min(Tensor self) -> Tensor");
  m.def("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor");
  m.def(
      "argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, "
      "Tensor(a!) out) -> Tensor(a!)");
  m.def(
      "min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, "
      "Tensor indices)");
  m.def(
      "min.dim_min(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) "
      "min, Tensor(b!) min_indices) -> (Tensor(a!) values, Tensor(b!) "
      "indices)");
  m.def(
      "sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, "
      "Tensor indices)");
  m.def(
      "sort.stable(Tensor self, *, bool? stable, int dim=-1, bool "
      "descending=False) -> (Tensor values, Tensor indices)");
  m.def(
      "sort.values(Tensor self, int dim=-1, bool descending=False, *, "
      "Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, "
      "Tensor(b!) indices)");
  m.def(
      "sort.values_stable(Tensor self, *, bool? stable, int dim=-1, bool "
      "descending=False, Tensor(a!) values, Tensor(b!) indices) -> "
      "(Tensor(a!) values, Tensor(b!) indices)");
  m.def(
      "topk(Tensor self, int k, int dim=-1, bool largest=True, bool "
      "sorted=True) -> (Tensor values, Tensor indices)");
  m.def(
      "topk.values(Tensor self, int k, int dim=-1, bool largest=True, bool "
      "sorted=True, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) "
      "values, Tensor(b!) indices)");
  for (const char* name : {"var", "std"}) {
    const std::string n = name;
    m.def(n + "(Tensor self, bool unbiased=True) -> Tensor");
    m.def(n +
          ".dim(Tensor self, int[1]? dim, bool unbiased=True, bool "
          "keepdim=False) -> Tensor");
    m.def(n +
          ".correction(Tensor self, int[1]? dim, *, int? correction, bool "
          "keepdim=False) -> Tensor");
    m.def(n +
          ".out(Tensor self, int[1]? dim, bool unbiased=True, bool "
          "keepdim=False, *, Tensor(a!) out) -> Tensor(a!)");
    m.def(n +
          ".correction_out(Tensor self, int[1]? dim, *, int? correction, bool "
          "keepdim=False, Tensor(a!) out) -> Tensor(a!)");
  }
}

namespace turnout {
namespace {
template <bool kCpu>
void registerDimOps(Library& m) {
  m.impl("cumsum", TURNOUT_FN((cumKernel<kCpu, false>)));
  m.impl("cumsum.out", TURNOUT_FN((cumOutKernel<kCpu, false>)));
  m.impl("cumsum_", TURNOUT_FN((cumInplaceKernel<kCpu, false>)));
  m.impl("cumprod", TURNOUT_FN((cumKernel<kCpu, true>)));
  m.impl("cumprod.out", TURNOUT_FN((cumOutKernel<kCpu, true>)));
  m.impl("cumprod_", TURNOUT_FN((cumInplaceKernel<kCpu, true>)));
  m.impl("max", TURNOUT_FN((minmaxAll<kCpu, true>)));
  m.impl("min", TURNOUT_FN((minmaxAll<kCpu, false>)));
  m.impl("max.dim", TURNOUT_FN((minmaxDim<kCpu, true>)));
  m.impl("min.dim", TURNOUT_FN((minmaxDim<kCpu, false>)));
  m.impl("max.dim_max", TURNOUT_FN((minmaxDimOut<kCpu, true>)));
  m.impl("min.dim_min", TURNOUT_FN((minmaxDimOut<kCpu, false>)));
  m.impl("argmin", TURNOUT_FN(argminKernel<kCpu>));
  m.impl("argmin.out", TURNOUT_FN(argminOut<kCpu>));
  m.impl("sort", TURNOUT_FN(sortKernel<kCpu>));
  m.impl("sort.stable", TURNOUT_FN(sortStable<kCpu>));
  m.impl("sort.values", TURNOUT_FN(sortValues<kCpu>));
  m.impl("sort.values_stable", TURNOUT_FN(sortValuesStable<kCpu>));
  m.impl("topk", TURNOUT_FN(topkKernel<kCpu>));
  m.impl("topk.values", TURNOUT_FN(topkValues<kCpu>));
}
}  // namespace
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, CPU, m) { turnout::registerDimOps<true>(m); }
TURNOUT_LIBRARY_IMPL(aten, Meta, m) { turnout::registerDimOps<false>(m); }

// var.correction and std.correction are sums and means (so Meta and other
// devices come from those operators), registered as
// CompositeExplicitAutograd, as torch 1.13's are backend kernels: a Python
// mode sees them whole; their gradients (VarBackward0, StdBackward0) are in
// kernels/autograd/math_autograd.cc. The out= forms have no Autograd
// kernel, as the other out= forms.
TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  using namespace turnout;  // NOLINT: the kernels above
  m.impl("var.correction", TURNOUT_FN(varCorrection<false>));
  m.impl("var.correction_out", TURNOUT_FN(varCorrectionOut<false>));
  m.impl("std.correction", TURNOUT_FN(varCorrection<true>));
  m.impl("std.correction_out", TURNOUT_FN(varCorrectionOut<true>));
}

// The other overloads of var and std call the correction ones.
TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  using namespace turnout;  // NOLINT: the kernels above
  m.impl("var", TURNOUT_FN(varAll<false>));
  m.impl("var.dim", TURNOUT_FN(varDim<false>));
  m.impl("var.out", TURNOUT_FN(varOut<false>));
  m.impl("std", TURNOUT_FN(varAll<true>));
  m.impl("std.dim", TURNOUT_FN(varDim<true>));
  m.impl("std.out", TURNOUT_FN(varOut<true>));
}
