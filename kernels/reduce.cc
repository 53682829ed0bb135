// aten::sum, mean, amax, amin, argmax (and out=): schemas, CPU and Meta
// kernels, and their front end (declared in reduce.h).
//
// One loop serves sum, mean, amax and amin: the input's dimensions are
// sorted by stride (so memory is read in order whatever the layout),
// size-1 dimensions dropped and neighbours merged where both the input and
// the accumulator step evenly across them. The innermost remaining
// dimension is then either reduced (a horizontal reduction into one
// accumulator, unrolled over independent partial sums so it vectorises) or
// kept (a vertical one: a row of accumulators updated together). Floating
// sums accumulate in double, in blocks (cascade summation), so the sum of
// 16M floats is accurate to double rounding before the final conversion.
#include "kernels/reduce.h"

#include <algorithm>
#include <bitset>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <vector>

#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/aten_tags.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/loops.h"
#include "kernels/parallel.h"
#include "kernels/reduce_utils.h"
#include "kernels/strided_walk.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace {

using reduce_internal::copyToOut;

using DimList = std::optional<std::vector<int64_t>>;
constexpr size_t kMaxDims = 64;

// Which dimensions a reduction removes, and the shapes around it.
struct ReducePlan {
  std::bitset<kMaxDims> reduced;
  DimVector keep_sizes;  // the input's sizes with reduced dims set to 1
  DimVector out_sizes;   // keep_sizes, or without the reduced dims
  int64_t count = 1;     // elements reduced into each output element
};

// Precondition: `dims` are the user's dims; empty means every dimension.
ReducePlan planReduce(const char* op, const Tensor& self, IntArrayRef dims,
                      bool keepdim) {
  const int64_t nd = self.dim();
  TURNOUT_CHECK(nd <= static_cast<int64_t>(kMaxDims),
                ErrorKind::InvalidArgument, op, ": tensors of ", nd,
                " dimensions are not supported (at most ", kMaxDims, ")");
  ReducePlan p;
  std::bitset<kMaxDims> seen;
  if (dims.empty()) {
    for (int64_t d = 0; d < nd; ++d) p.reduced.set(d);
  } else {
    for (int64_t d : dims) {
      const int64_t w = maybeWrapDim(d, nd);
      TURNOUT_CHECK(!seen.test(w), ErrorKind::InvalidArgument, op, ": dim ", w,
                    " appears multiple times in the list of dims");
      seen.set(w);
      if (nd > 0) p.reduced.set(w);
    }
  }
  for (int64_t d = 0; d < nd; ++d) {
    if (p.reduced.test(d)) {
      p.count *= self.size(d);
      p.keep_sizes.push_back(1);
      if (keepdim) p.out_sizes.push_back(1);
    } else {
      p.keep_sizes.push_back(self.size(d));
      p.out_sizes.push_back(self.size(d));
    }
  }
  return p;
}

// The input walked in memory order, with the accumulator's strides (0 along
// reduced dimensions). Dimensions are outermost first.
struct Geometry {
  DimVector sizes, in_strides, acc_strides;
};

Geometry planGeometry(const Tensor& in, const ReducePlan& p) {
  const int64_t nd = in.dim();
  const DimVector acc_contig = contiguousStrides(p.keep_sizes);
  std::vector<int64_t> order;
  for (int64_t d = 0; d < nd; ++d) {
    if (in.size(d) != 1) order.push_back(d);
  }
  // Largest input stride outermost; between equal strides, the
  // accumulator's order.
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const int64_t sa = in.stride(a), sb = in.stride(b);
    if (sa != sb) return sa > sb;
    const int64_t aa = p.reduced.test(a) ? 0 : acc_contig[a];
    const int64_t ab = p.reduced.test(b) ? 0 : acc_contig[b];
    return aa > ab;
  });
  Geometry g;
  for (int64_t d : order) {
    const int64_t size = in.size(d);
    const int64_t is = in.stride(d);
    const int64_t as = p.reduced.test(d) ? 0 : acc_contig[d];
    if (!g.sizes.empty()) {
      // Merge into the previous (outer) dimension when it steps over whole
      // copies of this one in both the input and the accumulator.
      const size_t last = g.sizes.size() - 1;
      if (g.in_strides[last] == is * size && g.acc_strides[last] == as * size) {
        g.sizes[last] *= size;
        g.in_strides[last] = is;
        g.acc_strides[last] = as;
        continue;
      }
    }
    g.sizes.push_back(size);
    g.in_strides.push_back(is);
    g.acc_strides.push_back(as);
  }
  return g;
}

// Calls `inner(in_offset, acc_offset, n, in_stride, acc_stride)` for each
// run of the innermost dimension.
template <class F>
void forEachRun(const Geometry& g, F&& inner) {
  const int64_t nd = static_cast<int64_t>(g.sizes.size());
  if (nd == 0) {
    inner(int64_t{0}, int64_t{0}, int64_t{1}, int64_t{1}, int64_t{0});
    return;
  }
  const int64_t n = g.sizes[nd - 1];
  const int64_t is = g.in_strides[nd - 1];
  const int64_t as = g.acc_strides[nd - 1];
  DimVector index(nd, 0);
  int64_t in_off = 0, acc_off = 0;
  while (true) {
    inner(in_off, acc_off, n, is, as);
    int64_t d = nd - 2;
    for (; d >= 0; --d) {
      in_off += g.in_strides[d];
      acc_off += g.acc_strides[d];
      if (++index[d] < g.sizes[d]) break;
      in_off -= g.in_strides[d] * g.sizes[d];
      acc_off -= g.acc_strides[d] * g.sizes[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// ---- Operations
// -----------------------------------------------------------------

// The accumulator type: double for floating inputs, int64_t for integers,
// bool for Bool (max/min only; sums of Bool are Long before they get here).
template <class T>
using AccType = std::conditional_t<
    std::is_same_v<T, bool>, bool,
    std::conditional_t<std::is_integral_v<T>, int64_t, double>>;

template <class A>
bool isNan(A v) {
  if constexpr (std::is_floating_point_v<A>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// The sum of a contiguous run of floats (doubles), accumulated in double:
// sixteen independent partial sums per block of 4096, the blocks added in
// order (cascade summation). Compiled twice, for AVX2 and for the x86-64 baseline; the
// loader picks the one the CPU runs (an ifunc), so the binary stays
// portable while the float-to-double conversion runs four lanes wide.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define TURNOUT_SUM_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TURNOUT_SUM_CLONES
#endif

// Four doubles; four floats. GCC's vector extensions keep the partial
// sums in registers (an array of sixteen doubles went through the stack on
// every step); on the baseline target a V4d is two SSE registers.
using V4d = double __attribute__((vector_size(32)));
using V4f = float __attribute__((vector_size(16)));

// acc += p[0..4) in double. By reference: a V4d passed or returned by
// value would change the ABI between the two compilations.
inline void addV4d(V4d& acc, const float* p) {
  V4f x;
  std::memcpy(&x, p, sizeof(x));
  acc += __builtin_convertvector(x, V4d);
}
inline void addV4d(V4d& acc, const double* p) {
  V4d x;
  std::memcpy(&x, p, sizeof(x));
  acc += x;
}

template <class T>
inline double sumRunInDouble(const T* p, int64_t n) {
  constexpr int64_t kBlock = 4096;
  double total = 0;
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t end = std::min(n, start + kBlock);
    V4d s0 = {}, s1 = {}, s2 = {}, s3 = {};
    int64_t i = start;
    for (; i + 16 <= end; i += 16) {
      addV4d(s0, p + i);
      addV4d(s1, p + i + 4);
      addV4d(s2, p + i + 8);
      addV4d(s3, p + i + 12);
    }
    const V4d s = (s0 + s1) + (s2 + s3);
    double block = (s[0] + s[1]) + (s[2] + s[3]);
    for (; i < end; ++i) block += static_cast<double>(p[i]);
    total += block;
  }
  return total;
}

TURNOUT_SUM_CLONES double sumFloatRun(const float* p, int64_t n) {
  return sumRunInDouble(p, n);
}
TURNOUT_SUM_CLONES double sumDoubleRun(const double* p, int64_t n) {
  return sumRunInDouble(p, n);
}
#undef TURNOUT_SUM_CLONES

struct SumOp {
  template <class A>
  static A identity() {
    return A(0);
  }
  template <class A>
  static A combine(A a, A b) {
    return a + b;
  }
  // A contiguous run: eight independent partial sums per block of 4096, the
  // blocks added in order (cascade summation); float and double runs take
  // the vectorised sumFloatRun / sumDoubleRun.
  template <class A, class T>
  static A reduceContiguous(const T* p, int64_t n) {
    if constexpr (std::is_same_v<A, double> && std::is_same_v<T, float>) {
      return sumFloatRun(p, n);
    } else if constexpr (std::is_same_v<A, double> &&
                         std::is_same_v<T, double>) {
      return sumDoubleRun(p, n);
    }
    constexpr int64_t kBlock = 4096;
    A total = A(0);
    for (int64_t start = 0; start < n; start += kBlock) {
      const int64_t end = std::min(n, start + kBlock);
      A s[8] = {};
      int64_t i = start;
      for (; i + 8 <= end; i += 8) {
        for (int j = 0; j < 8; ++j) s[j] += convertElement<A>(p[i + j]);
      }
      for (; i < end; ++i) s[0] += convertElement<A>(p[i]);
      total +=
          ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    }
    return total;
  }
};

template <bool kMax>
struct MinMaxOp {
  template <class A>
  static A identity() {
    if constexpr (std::is_same_v<A, bool>) {
      return !kMax;
    } else if constexpr (std::is_floating_point_v<A>) {
      return kMax ? -std::numeric_limits<A>::infinity()
                  : std::numeric_limits<A>::infinity();
    } else {
      return kMax ? std::numeric_limits<A>::lowest()
                  : std::numeric_limits<A>::max();
    }
  }
  // NaN wins, as in PyTorch.
  template <class A>
  static A combine(A a, A b) {
    if (isNan(a)) return a;
    if (isNan(b)) return b;
    if constexpr (kMax) {
      return b > a ? b : a;
    } else {
      return b < a ? b : a;
    }
  }
  template <class A, class T>
  static A reduceContiguous(const T* p, int64_t n) {
    A r = identity<A>();
    for (int64_t i = 0; i < n; ++i) r = combine(r, convertElement<A>(p[i]));
    return r;
  }
};

// Combines every element that geometry `g` covers, from `base`, into `acc`.
template <class Op, class T, class A>
void reduceRange(const Geometry& g, const T* base, A* acc) {
  forEachRun(g, [&](int64_t in_off, int64_t acc_off, int64_t n, int64_t is,
                    int64_t as) {
    const T* p = base + in_off;
    A* a = acc + acc_off;
    if (as == 0) {
      A r;
      if (is == 1) {
        r = Op::template reduceContiguous<A, T>(p, n);
      } else {
        r = Op::template identity<A>();
        for (int64_t i = 0; i < n; ++i) {
          r = Op::combine(r, convertElement<A>(p[i * is]));
        }
      }
      *a = Op::combine(*a, r);
    } else if (is == 1 && as == 1) {
      for (int64_t i = 0; i < n; ++i)
        a[i] = Op::combine(a[i], convertElement<A>(p[i]));
    } else {
      for (int64_t i = 0; i < n; ++i) {
        a[i * as] = Op::combine(a[i * as], convertElement<A>(p[i * is]));
      }
    }
  });
}

// acc (acc_numel elements, contiguous over plan.keep_sizes, filled with Op's
// identity) gets every element of `in` combined into it.
//
// Large inputs are split along the outermost dimension (in memory order)
// into a fixed number of chunks, one per thread. When that dimension is
// kept, the chunks update disjoint accumulators; when it is reduced, each
// chunk fills its own copy and the copies are combined in chunk order, so a
// result depends on the thread count but never on scheduling.
template <class Op, class T, class A>
void reduceInto(const Tensor& in, const ReducePlan& plan, A* acc,
                int64_t acc_numel) {
  const Geometry g = planGeometry(in, plan);
  const T* base = static_cast<const T*>(in.data_ptr());
  const int64_t numel = in.numel();
  const int threads = get_num_threads();
  if (g.sizes.empty() || numel < 2 * kGrainSize || threads <= 1 ||
      in_parallel_region()) {
    reduceRange<Op, T, A>(g, base, acc);
    return;
  }
  const int64_t outer = g.sizes[0];
  const int64_t per_unit = std::max<int64_t>(numel / outer, 1);
  const int64_t grain_units = std::max<int64_t>(kGrainSize / per_unit, 1);
  const int64_t chunks = std::min<int64_t>(threads, outer / grain_units);
  if (chunks <= 1) {
    reduceRange<Op, T, A>(g, base, acc);
    return;
  }
  const bool shared = g.acc_strides[0] != 0;
  std::unique_ptr<A[]> partial;
  if (!shared) {
    partial.reset(new A[static_cast<size_t>(chunks * acc_numel)]);
    std::fill(partial.get(), partial.get() + chunks * acc_numel,
              Op::template identity<A>());
  }
  parallel_for(0, chunks, 1, [&](int64_t c_begin, int64_t c_end) {
    for (int64_t c = c_begin; c < c_end; ++c) {
      const int64_t b = outer * c / chunks;
      const int64_t e = outer * (c + 1) / chunks;
      Geometry sub = g;
      sub.sizes[0] = e - b;
      A* a =
          shared ? acc + b * g.acc_strides[0] : partial.get() + c * acc_numel;
      reduceRange<Op, T, A>(sub, base + b * g.in_strides[0], a);
    }
  });
  if (!shared) {
    for (int64_t c = 0; c < chunks; ++c) {
      const A* p = partial.get() + c * acc_numel;
      for (int64_t i = 0; i < acc_numel; ++i)
        acc[i] = Op::combine(acc[i], p[i]);
    }
  }
}

// Reduces `in` (dtype T) with Op into a new tensor of plan.out_sizes and
// dtype `out_dtype` (T's dtype, or Long for integer sums); `divide` turns the
// sum into a mean.
template <class Op>
Tensor runReduce(const char* op, const Tensor& in, const ReducePlan& plan,
                 ScalarType out_dtype, bool divide) {
  Tensor out = emptyTensor(plan.out_sizes, out_dtype, in.device());
  if (out.is_meta() || out.numel() == 0) return out;
  visitDtype(in.scalar_type(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = AccType<T>;
    const int64_t n = out.numel();
    // Not std::vector: vector<bool> has no data().
    std::unique_ptr<A[]> acc(new A[static_cast<size_t>(n)]);
    std::fill(acc.get(), acc.get() + n, Op::template identity<A>());
    if (in.numel() > 0) reduceInto<Op, T, A>(in, plan, acc.get(), n);
    visitDtype(out_dtype, op, [&](auto out_tag) {
      using O = typename decltype(out_tag)::type;
      O* o = static_cast<O*>(out.data_ptr());
      if (divide) {
        if constexpr (std::is_floating_point_v<A>) {
          const A count = static_cast<A>(plan.count);
          for (int64_t i = 0; i < n; ++i) {
            o[i] = convertElement<O>(plan.count == 0
                                         ? std::numeric_limits<A>::quiet_NaN()
                                         : acc[i] / count);
          }
        }
      } else {
        for (int64_t i = 0; i < n; ++i) o[i] = convertElement<O>(acc[i]);
      }
    });
  });
  return out;
}

std::vector<int64_t> dimsOrAll(const DimList& dim) {
  return dim.has_value() ? *dim : std::vector<int64_t>{};
}

// ---- sum
// ---------------------------------------------------------------------------

ScalarType sumDtype(const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype.has_value()) return *dtype;
  return isIntegralType(self.scalar_type(), /*include_bool=*/true)
             ? ScalarType::Long
             : self.scalar_type();
}

Tensor sumImpl(const char* op, const Tensor& self, IntArrayRef dims,
               bool keepdim, ScalarType dtype) {
  const ReducePlan plan = planReduce(op, self, dims, keepdim);
  // Convert first, as PyTorch does (sum(x, dtype=...) sums x.to(dtype)); a
  // Bool result is summed as Long and converted at the end.
  const ScalarType compute =
      dtype == ScalarType::Bool ? ScalarType::Long : dtype;
  Tensor in = self.is_meta() || self.scalar_type() == compute
                  ? self
                  : contiguousCastTo(self, compute);
  return runReduce<SumOp>(op, in, plan, dtype, /*divide=*/false);
}

Tensor sum_kernel(const Tensor& self, std::optional<ScalarType> dtype) {
  return sumImpl("sum()", self, {}, false, sumDtype(self, dtype));
}

Tensor sum_dim_kernel(const Tensor& self, DimList dim, bool keepdim,
                      std::optional<ScalarType> dtype) {
  return sumImpl("sum()", self, dimsOrAll(dim), keepdim, sumDtype(self, dtype));
}

// Without dtype, an out= sum computes in out's dtype.
std::optional<ScalarType> outDtype(std::optional<ScalarType> dtype,
                                   const Tensor& out) {
  return dtype.has_value() ? dtype
                           : std::optional<ScalarType>(out.scalar_type());
}

Tensor& sum_intlist_out_kernel(const Tensor& self, DimList dim, bool keepdim,
                               std::optional<ScalarType> dtype, Tensor& out) {
  return copyToOut(
      "sum.IntList_out()",
      sumImpl("sum()", self, dimsOrAll(dim), keepdim, *outDtype(dtype, out)),
      out);
}

Tensor& sum_out_kernel(const Tensor& self, std::optional<ScalarType> dtype,
                       Tensor& out) {
  return copyToOut("sum.out()",
                   sumImpl("sum()", self, {}, false, *outDtype(dtype, out)),
                   out);
}

// ---- mean
// --------------------------------------------------------------------------

Tensor meanImpl(const Tensor& self, IntArrayRef dims, bool keepdim,
                std::optional<ScalarType> opt_dtype) {
  const char* op = "mean()";
  const ScalarType dtype = opt_dtype.value_or(self.scalar_type());
  TURNOUT_CHECK(isFloatingType(dtype), ErrorKind::InvalidArgument, op,
                ": could not infer output dtype. ",
                opt_dtype.has_value() ? "Optional" : "Input",
                " dtype must be either a floating point or complex dtype. "
                "Got: ",
                dtype);
  const ReducePlan plan = planReduce(op, self, dims, keepdim);
  Tensor in = self.is_meta() || self.scalar_type() == dtype
                  ? self
                  : contiguousCastTo(self, dtype);
  return runReduce<SumOp>(op, in, plan, dtype, /*divide=*/true);
}

Tensor mean_kernel(const Tensor& self, std::optional<ScalarType> dtype) {
  return meanImpl(self, {}, false, dtype);
}

Tensor mean_dim_kernel(const Tensor& self, DimList dim, bool keepdim,
                       std::optional<ScalarType> dtype) {
  return meanImpl(self, dimsOrAll(dim), keepdim, dtype);
}

Tensor& mean_out_kernel(const Tensor& self, DimList dim, bool keepdim,
                        std::optional<ScalarType> dtype, Tensor& out) {
  return copyToOut(
      "mean.out()",
      meanImpl(self, dimsOrAll(dim), keepdim, outDtype(dtype, out)), out);
}

// ---- amax / amin
// -------------------------------------------------------------------

// PyTorch's zero_numel_check_dims: a reduction without an identity needs
// every reduced dimension to be non-empty.
void checkNonEmptyReduction(const char* op, const Tensor& self,
                            IntArrayRef dims) {
  if (self.numel() != 0) return;
  TURNOUT_CHECK(!dims.empty(), ErrorKind::InvalidArgument, op,
                ": Expected reduction dim to be specified for input.numel() "
                "== 0. Specify the reduction dim with the 'dim' argument.");
  for (int64_t d : dims) {
    if (self.dim() == 0) {
      TURNOUT_CHECK(d == 0 || d == -1, ErrorKind::Index, op,
                    ": Expected reduction dim -1 or 0 for scalar but got ", d);
    } else {
      TURNOUT_CHECK(self.size(maybeWrapDim(d, self.dim())) != 0,
                    ErrorKind::Index, op, ": Expected reduction dim ", d,
                    " to have non-zero size.");
    }
  }
}

template <bool kMax>
Tensor minmaxImpl(const char* op, const Tensor& self, IntArrayRef dim,
                  bool keepdim) {
  const ReducePlan plan = planReduce(op, self, dim, keepdim);
  checkNonEmptyReduction(op, self, dim);
  return runReduce<MinMaxOp<kMax>>(op, self, plan, self.scalar_type(),
                                   /*divide=*/false);
}

template <bool kMax>
Tensor& minmaxOut(const char* op, const Tensor& self, IntArrayRef dim,
                  bool keepdim, Tensor& out) {
  TURNOUT_CHECK(self.scalar_type() == out.scalar_type(),
                ErrorKind::InvalidArgument, op,
                ": Expected the dtype for input and out to match, but got ",
                self.scalar_type(), " for input's dtype and ",
                out.scalar_type(), " for out's dtype.");
  return copyToOut(op, minmaxImpl<kMax>(op, self, dim, keepdim), out);
}

Tensor amax_kernel(const Tensor& self, IntArrayRef dim, bool keepdim) {
  return minmaxImpl<true>("amax()", self, dim, keepdim);
}
Tensor& amax_out_kernel(const Tensor& self, IntArrayRef dim, bool keepdim,
                        Tensor& out) {
  return minmaxOut<true>("amax.out()", self, dim, keepdim, out);
}
Tensor amin_kernel(const Tensor& self, IntArrayRef dim, bool keepdim) {
  return minmaxImpl<false>("amin()", self, dim, keepdim);
}
Tensor& amin_out_kernel(const Tensor& self, IntArrayRef dim, bool keepdim,
                        Tensor& out) {
  return minmaxOut<false>("amin.out()", self, dim, keepdim, out);
}

// ---- argmax
// ------------------------------------------------------------------------

// The index of the first maximum of n elements `stride` apart; a NaN is the
// maximum (the first NaN wins).
template <class T>
int64_t argmaxRun(const T* p, int64_t n, int64_t stride) {
  using A = AccType<T>;
  A best = convertElement<A>(p[0]);
  int64_t best_i = 0;
  if (isNan(best)) return 0;
  for (int64_t i = 1; i < n; ++i) {
    const A v = convertElement<A>(p[i * stride]);
    if (isNan(v)) return i;
    if (v > best) {
      best = v;
      best_i = i;
    }
  }
  return best_i;
}

Tensor argmax_kernel(const Tensor& self, std::optional<int64_t> dim,
                     bool keepdim) {
  const char* op = "argmax()";
  const int64_t nd = self.dim();
  int64_t d = -1;
  if (dim.has_value()) {
    d = maybeWrapDim(*dim, nd);
    if (nd == 0) {
      d = -1;  // a scalar: reduce "everything", one element
    } else {
      TURNOUT_CHECK(self.size(d) != 0, ErrorKind::Index, op,
                    ": Expected reduction dim ", d, " to have non-zero size.");
    }
  } else {
    TURNOUT_CHECK(self.numel() != 0, ErrorKind::Index, op,
                  ": Expected reduction dim to be specified for input.numel() "
                  "== 0.");
  }
  DimVector out_sizes;
  for (int64_t i = 0; i < nd; ++i) {
    const bool reduced = d < 0 || i == d;
    if (!reduced) {
      out_sizes.push_back(self.size(i));
    } else if (keepdim) {
      out_sizes.push_back(1);
    }
  }
  Tensor out = emptyTensor(out_sizes, ScalarType::Long, self.device());
  if (out.is_meta() || out.numel() == 0) return out;
  int64_t* o = out.data_ptr<int64_t>();
  visitDtype(self.scalar_type(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (d < 0) {
      // Flattened: row-major order, so walk a contiguous copy if need be.
      Tensor c = contiguousCastTo(self, self.scalar_type());
      o[0] = argmaxRun(static_cast<const T*>(c.data_ptr()), c.numel(), 1);
      return;
    }
    // Every position of the other dimensions, then a run along d.
    DimVector sizes(self.sizes().begin(), self.sizes().end());
    DimVector strides(self.strides().begin(), self.strides().end());
    const int64_t n = sizes[d];
    const int64_t stride = strides[d];
    sizes[d] = 1;
    const DimVector out_strides = contiguousStrides(sizes);
    const T* base = static_cast<const T*>(self.data_ptr());
    parallelForEachOffset(sizes, strides, out_strides, n,
                          [&](int64_t in_off, int64_t out_off) {
                            o[out_off] = argmaxRun(base + in_off, n, stride);
                          });
  });
  return out;
}

Tensor& argmax_out_kernel(const Tensor& self, std::optional<int64_t> dim,
                          bool keepdim, Tensor& out) {
  return copyToOut("argmax.out()", argmax_kernel(self, dim, keepdim), out);
}

}  // namespace

// ---- Registration ------------------------------------------------------

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags).def("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor");
  m.def(
      "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
      "ScalarType? dtype=None) -> Tensor");
  m.def(
      "sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, "
      "ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)");
  m.def(
      "sum.out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out) -> "
      "Tensor(a!)");
  m.def("mean(Tensor self, *, ScalarType? dtype=None) -> Tensor");
  m.def(
      "mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
      "dtype=None) -> Tensor");
  m.def(
      "mean.out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
      "dtype=None, Tensor(a!) out) -> Tensor(a!)");
  m.def("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor");
  m.def(
      "amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, "
      "Tensor(a!) out) -> Tensor(a!)");
  m.def("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor");
  m.def(
      "amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *, "
      "Tensor(a!) out) -> Tensor(a!)");
  m.def("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor");
  m.def(
      "argmax.out(Tensor self, int? dim=None, bool keepdim=False, *, "
      "Tensor(a!) out) -> Tensor(a!)");
}

// The kernels check shapes before touching data and skip the arithmetic for
// Meta outputs, so one function serves both keys.
#define TURNOUT_REDUCE_KERNELS(m)                                \
  m.impl("sum", TURNOUT_FN(sum_kernel));                         \
  m.impl("sum.dim_IntList", TURNOUT_FN(sum_dim_kernel));         \
  m.impl("sum.IntList_out", TURNOUT_FN(sum_intlist_out_kernel)); \
  m.impl("sum.out", TURNOUT_FN(sum_out_kernel));                 \
  m.impl("mean", TURNOUT_FN(mean_kernel));                       \
  m.impl("mean.dim", TURNOUT_FN(mean_dim_kernel));               \
  m.impl("mean.out", TURNOUT_FN(mean_out_kernel));               \
  m.impl("amax", TURNOUT_FN(amax_kernel));                       \
  m.impl("amax.out", TURNOUT_FN(amax_out_kernel));               \
  m.impl("amin", TURNOUT_FN(amin_kernel));                       \
  m.impl("amin.out", TURNOUT_FN(amin_out_kernel));               \
  m.impl("argmax", TURNOUT_FN(argmax_kernel));                   \
  m.impl("argmax.out", TURNOUT_FN(argmax_out_kernel))

TURNOUT_LIBRARY_IMPL(aten, CPU, m) { TURNOUT_REDUCE_KERNELS(m); }
TURNOUT_LIBRARY_IMPL(aten, Meta, m) { TURNOUT_REDUCE_KERNELS(m); }
#undef TURNOUT_REDUCE_KERNELS

// ---- Front end
// ---------------------------------------------------------------------

namespace {

DimList toDimList(IntArrayRef dim) {
  return std::vector<int64_t>(dim.begin(), dim.end());
}

}  // namespace

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::sum", "")
          .typed<Tensor(const Tensor&, std::optional<ScalarType>)>();
  return op.call(self, dtype);
}

Tensor sum(const Tensor& self, IntArrayRef dim, bool keepdim,
           std::optional<ScalarType> dtype) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::sum", "dim_IntList")
                       .typed<Tensor(const Tensor&, DimList, bool,
                                     std::optional<ScalarType>)>();
  return op.call(self, toDimList(dim), keepdim, dtype);
}

Tensor& sum_out(Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim,
                std::optional<ScalarType> dtype) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::sum", "IntList_out")
                       .typed<Tensor&(const Tensor&, DimList, bool,
                                      std::optional<ScalarType>, Tensor&)>();
  return op.call(self, toDimList(dim), keepdim, dtype, out);
}

Tensor& sum_out(Tensor& out, const Tensor& self,
                std::optional<ScalarType> dtype) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::sum", "out")
          .typed<Tensor&(const Tensor&, std::optional<ScalarType>, Tensor&)>();
  return op.call(self, dtype, out);
}

Tensor mean(const Tensor& self, std::optional<ScalarType> dtype) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::mean", "")
          .typed<Tensor(const Tensor&, std::optional<ScalarType>)>();
  return op.call(self, dtype);
}

Tensor mean(const Tensor& self, IntArrayRef dim, bool keepdim,
            std::optional<ScalarType> dtype) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::mean", "dim")
                       .typed<Tensor(const Tensor&, DimList, bool,
                                     std::optional<ScalarType>)>();
  return op.call(self, toDimList(dim), keepdim, dtype);
}

Tensor& mean_out(Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim,
                 std::optional<ScalarType> dtype) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::mean", "out")
                       .typed<Tensor&(const Tensor&, DimList, bool,
                                      std::optional<ScalarType>, Tensor&)>();
  return op.call(self, toDimList(dim), keepdim, dtype, out);
}

Tensor amax(const Tensor& self, IntArrayRef dim, bool keepdim) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::amax", "")
                       .typed<Tensor(const Tensor&, IntArrayRef, bool)>();
  return op.call(self, dim, keepdim);
}

Tensor& amax_out(Tensor& out, const Tensor& self, IntArrayRef dim,
                 bool keepdim) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::amax", "out")
          .typed<Tensor&(const Tensor&, IntArrayRef, bool, Tensor&)>();
  return op.call(self, dim, keepdim, out);
}

Tensor amin(const Tensor& self, IntArrayRef dim, bool keepdim) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::amin", "")
                       .typed<Tensor(const Tensor&, IntArrayRef, bool)>();
  return op.call(self, dim, keepdim);
}

Tensor& amin_out(Tensor& out, const Tensor& self, IntArrayRef dim,
                 bool keepdim) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::amin", "out")
          .typed<Tensor&(const Tensor&, IntArrayRef, bool, Tensor&)>();
  return op.call(self, dim, keepdim, out);
}

Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::argmax", "")
          .typed<Tensor(const Tensor&, std::optional<int64_t>, bool)>();
  return op.call(self, dim, keepdim);
}

Tensor& argmax_out(Tensor& out, const Tensor& self, std::optional<int64_t> dim,
                   bool keepdim) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::argmax", "out")
                       .typed<Tensor&(const Tensor&, std::optional<int64_t>,
                                      bool, Tensor&)>();
  return op.call(self, dim, keepdim, out);
}

}  // namespace turnout
