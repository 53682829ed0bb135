#include "kernels/reduce.h"

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "gtest/gtest.h"
#include "kernels/parallel.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using testing::columnMajor;
using testing::metaTensor;
using testing::rangeOf;
using testing::sizesOf;
using testing::stridedCopy;
using testing::tensorOf;
using testing::transposed;
using testing::valuesOf;

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

using testing::errorOf;

// A reduction over `dims` (every dim when empty) of row-major `values`, in
// double, written independently of the kernels.
struct Reduced {
  std::vector<int64_t> shape;
  std::vector<double> values;
};
Reduced referenceReduce(const std::vector<double>& values,
                        const std::vector<int64_t>& sizes,
                        std::vector<int64_t> dims, bool keepdim,
                        const std::function<double(double, double)>& combine,
                        double init) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  std::vector<bool> reduced(nd, dims.empty());
  for (int64_t d : dims) {
    if (nd > 0) reduced[(d + nd) % nd] = true;
  }
  std::vector<int64_t> keep(sizes);
  Reduced r;
  for (int64_t d = 0; d < nd; ++d) {
    if (reduced[d]) keep[d] = 1;
    if (!reduced[d])
      r.shape.push_back(sizes[d]);
    else if (keepdim)
      r.shape.push_back(1);
  }
  int64_t out_numel = 1;
  for (int64_t s : keep) out_numel *= s;
  r.values.assign(out_numel, init);
  std::vector<int64_t> idx(nd, 0);
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i), o = 0;
    for (int64_t d = nd - 1; d >= 0; --d) {
      idx[d] = rest % sizes[d];
      rest /= sizes[d];
    }
    for (int64_t d = 0; d < nd; ++d)
      o = o * keep[d] + (reduced[d] ? 0 : idx[d]);
    r.values[o] = combine(r.values[o], values[i]);
  }
  return r;
}

double add(double a, double b) { return a + b; }
double maxNan(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? kNan : std::max(a, b);
}
double minNan(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? kNan : std::min(a, b);
}

// Values that every dtype holds exactly (Bool: nonzero -> 1).
std::vector<double> smallValues(int64_t n, int seed) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<double>((i * 5 + seed) % 7) - 3;
  return v;
}

enum class Layout { Contiguous, Strided, Transposed };
const Layout kLayouts[] = {Layout::Contiguous, Layout::Strided,
                           Layout::Transposed};

Tensor inLayout(const Tensor& t, Layout l) {
  switch (l) {
    case Layout::Contiguous:
      return t;
    case Layout::Strided:
      return stridedCopy(t);
    case Layout::Transposed:
      return t.dim() >= 2 ? columnMajor(t, 0, t.dim() - 1) : stridedCopy(t);
  }
  return t;
}

struct DimCase {
  std::vector<int64_t> sizes;
  std::vector<int64_t> dims;
  bool keepdim;
};
const DimCase kDimCases[] = {
    {{5}, {}, false},
    {{5}, {0}, true},
    {{3, 4}, {1}, false},
    {{3, 4}, {0}, false},
    {{3, 4}, {-1}, true},
    {{3, 4}, {0, 1}, false},
    {{2, 3, 4}, {0, 2}, false},
    {{2, 3, 4}, {1}, true},
    {{2, 3, 4}, {-3, -2}, true},
    {{2, 1, 3, 4}, {1, 3}, false},
    {{4, 1, 1}, {0}, false},
    {{}, {}, false},
    {{}, {0}, true},
    {{6, 5}, {}, true},
};

// Runs check(x, c, l) for every dtype in `dtypes`, every case of
// kDimCases and every layout of kLayouts, under a SCOPED_TRACE naming the
// three. x is contiguous, of c.sizes and the dtype, holding
// smallValues(numel, seed); check puts it in layout l (inLayout).
template <class Dtypes, class Check>
void forEachCase(const Dtypes& dtypes, int seed, Check check) {
  for (ScalarType dtype : dtypes) {
    for (const DimCase& c : kDimCases) {
      for (Layout l : kLayouts) {
        SCOPED_TRACE(::testing::Message()
                     << dtype << " sizes " << ::testing::PrintToString(c.sizes)
                     << " dims " << ::testing::PrintToString(c.dims)
                     << " keepdim " << c.keepdim << " layout "
                     << static_cast<int>(l));
        check(tensorOf(smallValues(numelOf(c.sizes), seed), c.sizes, dtype), c,
              l);
      }
    }
  }
}

TEST(Sum, MatchesReferenceForDtypesDimsAndLayouts) {
  const ScalarType dtypes[] = {ScalarType::Float, ScalarType::Double,
                               ScalarType::Half,  ScalarType::BFloat16,
                               ScalarType::Int,   ScalarType::Long,
                               ScalarType::Bool};
  forEachCase(dtypes, 1, [](const Tensor& x, const DimCase& c, Layout l) {
    const ScalarType dtype = x.scalar_type();
    Tensor y = sum(inLayout(x, l), c.dims, c.keepdim);
    Reduced want =
        referenceReduce(valuesOf(x), c.sizes, c.dims, c.keepdim, add, 0.0);
    const ScalarType want_dtype =
        isIntegralType(dtype, true) ? ScalarType::Long : dtype;
    EXPECT_EQ(y.scalar_type(), want_dtype);
    EXPECT_EQ(sizesOf(y), want.shape);
    EXPECT_EQ(valuesOf(y), want.values);
    Tensor m = sum(metaTensor(c.sizes, dtype), c.dims, c.keepdim);
    EXPECT_TRUE(m.is_meta());
    EXPECT_EQ(m.scalar_type(), want_dtype);
    EXPECT_EQ(sizesOf(m), want.shape);
  });
}

TEST(Sum, AllElementsDtypeArgumentAndExpandedInput) {
  Tensor x = rangeOf({2, 3});  // 0..5
  EXPECT_EQ(sizesOf(sum(x)), std::vector<int64_t>{});
  EXPECT_EQ(valuesOf(sum(x)), std::vector<double>{15});
  EXPECT_EQ(valuesOf(sum(x, {})), std::vector<double>{15});  // every dim
  EXPECT_EQ(valuesOf(mean(x, {}, true)), std::vector<double>{2.5});
  EXPECT_EQ(sizesOf(mean(x, {}, true)), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(sum(rangeOf({3}, ScalarType::Int)).scalar_type(), ScalarType::Long);
  // dtype converts before summing: 0.5 + 1.5 + 2.5 as Int is 0 + 1 + 2.
  Tensor h = rangeOf({3}, ScalarType::Float, 1.0, 0.5);
  EXPECT_EQ(valuesOf(sum(h, ScalarType::Int)), std::vector<double>{3});
  EXPECT_EQ(sum(h, ScalarType::Int).scalar_type(), ScalarType::Int);
  EXPECT_EQ(valuesOf(sum(rangeOf({4}, ScalarType::Long), ScalarType::Double)),
            std::vector<double>{6});
  EXPECT_EQ(valuesOf(sum(rangeOf({3}), ScalarType::Bool)),
            std::vector<double>{1});
  // A broadcast (stride 0) view: every row is the same.
  Tensor row = rangeOf({4});
  Tensor expanded = makeView(row, {3, 4}, {0, 1}, 0);
  EXPECT_EQ(valuesOf(sum(expanded, {0})), (std::vector<double>{0, 3, 6, 9}));
  EXPECT_EQ(valuesOf(sum(expanded, {1})), (std::vector<double>{6, 6, 6}));
}

TEST(Sum, EmptyTensorsSumToZero) {
  Tensor e = rangeOf({0, 3});
  EXPECT_EQ(valuesOf(sum(e)), std::vector<double>{0});
  EXPECT_EQ(valuesOf(sum(e, {0})), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(sizesOf(sum(e, {1})), std::vector<int64_t>{0});
  EXPECT_EQ(sizesOf(sum(e, {1}, true)), (std::vector<int64_t>{0, 1}));
}

TEST(Sum, SixteenMillionFloatsStayAccurate) {
  // A float accumulator drifts by whole percents here; double does not.
  const int64_t n = int64_t{1} << 24;
  Tensor x = emptyTensor({n}, ScalarType::Float, testing::cpu());
  float* d = x.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) d[i] = 0.1f;
  const double want = static_cast<double>(0.1f) * n;
  const double got = valuesOf(sum(x))[0];
  EXPECT_NEAR(got, want, want * 1e-7);
  // Down the rows of a 4096 x 4096 matrix too (the vertical loop).
  Tensor m = makeView(x, {4096, 4096}, {4096, 1}, 0);
  const std::vector<double> cols = valuesOf(sum(m, {0}));
  EXPECT_NEAR(cols[17], 0.1f * 4096.0, 1e-3);
}

TEST(Reduce, ThreadedReductionsMatchReferenceForEveryLayout) {
  // Large enough to be split over threads, along a reduced outer dimension
  // (per-chunk accumulators) and along a kept one (shared accumulators).
  const int old_threads = get_num_threads();
  set_num_threads(4);
  const std::vector<int64_t> sizes = {40000, 3};
  std::vector<double> v(120000);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>((i * 7919) % 1000) - 500;
  Tensor x = tensorOf(v, sizes, ScalarType::Long);
  for (std::vector<int64_t> dims : {std::vector<int64_t>{0}, {1}, {}}) {
    for (Layout l : kLayouts) {
      SCOPED_TRACE(::testing::Message() << ::testing::PrintToString(dims)
                                        << " layout " << static_cast<int>(l));
      Tensor in = inLayout(x, l);
      EXPECT_EQ(valuesOf(sum(in, dims)),
                referenceReduce(v, sizes, dims, false, add, 0.0).values);
      EXPECT_EQ(valuesOf(amax(in, dims)),
                referenceReduce(v, sizes, dims, false, maxNan, -kInf).values);
      EXPECT_EQ(valuesOf(amin(in, dims)),
                referenceReduce(v, sizes, dims, false, minNan, kInf).values);
    }
  }
  // argmax along each dimension, split over threads too.
  Tensor f = tensorOf(v, sizes, ScalarType::Float);
  for (int64_t d : {0, 1}) {
    std::vector<double> got = valuesOf(argmax(stridedCopy(f), d));
    Reduced hi = referenceReduce(v, sizes, {d}, false, maxNan, -kInf);
    ASSERT_EQ(got.size(), hi.values.size());
    for (size_t o = 0; o < got.size(); ++o) {
      const int64_t k = static_cast<int64_t>(got[o]);
      const size_t flat = d == 0 ? k * 3 + o : o * 3 + k;
      EXPECT_EQ(v[flat], hi.values[o]) << "d " << d << " o " << o;
    }
  }
  set_num_threads(old_threads);
}

TEST(Sum, Errors) {
  EXPECT_EQ(errorOf([] {
              sum(rangeOf({2, 3}), {2});
            }),
            "Dimension out of range (expected to be in range of [-2, 1], but "
            "got 2)");
  EXPECT_EQ(errorOf([] {
              sum(rangeOf({2, 3}), {1, -1});
            }),
            "sum(): dim 1 appears multiple times in the list of dims");
  EXPECT_EQ(errorOf([] {
              sum(metaTensor({2, 3}), {0, 0});
            }),
            "sum(): dim 0 appears multiple times in the list of dims");
}

TEST(Mean, MatchesReferenceAndRequiresFloating) {
  const ScalarType dtypes[] = {ScalarType::Float, ScalarType::Double,
                               ScalarType::Half};
  forEachCase(dtypes, 2, [](const Tensor& x, const DimCase& c, Layout l) {
    const ScalarType dtype = x.scalar_type();
    Tensor y = mean(inLayout(x, l), c.dims, c.keepdim);
    Reduced s =
        referenceReduce(valuesOf(x), c.sizes, c.dims, c.keepdim, add, 0.0);
    const double count =
        static_cast<double>(x.numel()) / static_cast<double>(s.values.size());
    EXPECT_EQ(sizesOf(y), s.shape);
    EXPECT_EQ(y.scalar_type(), dtype);
    std::vector<double> got = valuesOf(y);
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], s.values[i] / count,
                  dtype == ScalarType::Half ? 2e-3 : 1e-6);
    }
  });
  EXPECT_EQ(valuesOf(mean(rangeOf({4}))), std::vector<double>{1.5});
  EXPECT_EQ(valuesOf(mean(rangeOf({4}, ScalarType::Long), ScalarType::Double)),
            std::vector<double>{1.5});
  EXPECT_TRUE(std::isnan(valuesOf(mean(rangeOf({0})))[0]));
  EXPECT_EQ(sizesOf(mean(metaTensor({2, 3, 4}), {1}, true)),
            (std::vector<int64_t>{2, 1, 4}));
  EXPECT_EQ(errorOf([] { mean(rangeOf({4}, ScalarType::Long)); }),
            "mean(): could not infer output dtype. Input dtype must be either "
            "a floating point or complex dtype. Got: Long");
  EXPECT_EQ(errorOf([] { mean(rangeOf({4}), {0}, false, ScalarType::Int); }),
            "mean(): could not infer output dtype. Optional dtype must be "
            "either a floating point or complex dtype. Got: Int");
}

TEST(AmaxAmin, MatchReferenceForDtypesDimsAndLayouts) {
  const ScalarType dtypes[] = {ScalarType::Float,    ScalarType::Double,
                               ScalarType::BFloat16, ScalarType::Int,
                               ScalarType::Long,     ScalarType::Bool};
  forEachCase(dtypes, 3, [](const Tensor& x, const DimCase& c, Layout l) {
    const ScalarType dtype = x.scalar_type();
    const std::vector<double> xv = valuesOf(x);
    Tensor hi = amax(inLayout(x, l), c.dims, c.keepdim);
    Tensor lo = amin(inLayout(x, l), c.dims, c.keepdim);
    Reduced want_hi =
        referenceReduce(xv, c.sizes, c.dims, c.keepdim, maxNan, -kInf);
    Reduced want_lo =
        referenceReduce(xv, c.sizes, c.dims, c.keepdim, minNan, kInf);
    EXPECT_EQ(hi.scalar_type(), dtype);
    EXPECT_EQ(sizesOf(hi), want_hi.shape);
    EXPECT_EQ(valuesOf(hi), want_hi.values);
    EXPECT_EQ(valuesOf(lo), want_lo.values);
    Tensor m = amin(metaTensor(c.sizes, dtype), c.dims, c.keepdim);
    EXPECT_EQ(sizesOf(m), want_lo.shape);
    EXPECT_EQ(m.scalar_type(), dtype);
  });
}

TEST(AmaxAmin, NanPropagatesAndInfinitiesCount) {
  Tensor x = tensorOf({1, kNan, 3, -kInf, -kInf, -kInf}, {2, 3});
  std::vector<double> hi = valuesOf(amax(x, {1}));
  EXPECT_TRUE(std::isnan(hi[0]));
  EXPECT_EQ(hi[1], -kInf);
  std::vector<double> lo = valuesOf(amin(x, {0}));
  EXPECT_EQ(lo[0], -kInf);
  EXPECT_TRUE(std::isnan(lo[1]));
  EXPECT_TRUE(std::isnan(valuesOf(amax(x))[0]));
}

TEST(AmaxAmin, EmptyReductionsFailLikePytorch) {
  EXPECT_EQ(errorOf([] { amax(rangeOf({0})); }),
            "amax(): Expected reduction dim to be specified for input.numel() "
            "== 0. Specify the reduction dim with the 'dim' argument.");
  EXPECT_EQ(errorOf([] {
              amin(rangeOf({0, 3}), {0});
            }),
            "amin(): Expected reduction dim 0 to have non-zero size.");
  EXPECT_EQ(errorOf([] {
              amax(metaTensor({3, 0}), {-1});
            }),
            "amax(): Expected reduction dim -1 to have non-zero size.");
  // Reducing a non-empty dimension of an empty tensor is fine.
  EXPECT_EQ(sizesOf(amax(rangeOf({0, 3}), {1})), std::vector<int64_t>{0});
}

TEST(Argmax, FirstMaximumNanAndLayouts) {
  // Ties: the first index wins; NaN is the maximum.
  Tensor x =
      tensorOf({1, 5, 5, 2, /**/ 7, kNan, 9, kNan, /**/ 0, 0, 0, 0}, {3, 4});
  for (Layout l : kLayouts) {
    SCOPED_TRACE(static_cast<int>(l));
    Tensor v = inLayout(x, l);
    EXPECT_EQ(valuesOf(argmax(v, 1)), (std::vector<double>{1, 1, 0}));
    EXPECT_EQ(valuesOf(argmax(v, 0)), (std::vector<double>{1, 1, 1, 1}));
    EXPECT_EQ(valuesOf(argmax(v)), std::vector<double>{5});
    EXPECT_EQ(argmax(v).scalar_type(), ScalarType::Long);
    EXPECT_EQ(sizesOf(argmax(v, -1, true)), (std::vector<int64_t>{3, 1}));
    EXPECT_EQ(sizesOf(argmax(v, std::nullopt, true)),
              (std::vector<int64_t>{1, 1}));
  }
  // The flattened index follows row-major order, not memory order.
  Tensor t = transposed(rangeOf({2, 3}, ScalarType::Int), 0,
                        1);  // [[0,3],[1,4],[2,5]]
  EXPECT_EQ(valuesOf(argmax(t)), std::vector<double>{5});
  EXPECT_EQ(valuesOf(argmax(rangeOf({}, ScalarType::Long))),
            std::vector<double>{0});
  EXPECT_EQ(valuesOf(argmax(rangeOf({}), 0)), std::vector<double>{0});
  EXPECT_EQ(sizesOf(argmax(rangeOf({0, 3}), 1)), std::vector<int64_t>{0});
  Tensor m = argmax(metaTensor({2, 3, 4}, ScalarType::Half), 1);
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.scalar_type(), ScalarType::Long);
  EXPECT_EQ(sizesOf(m), (std::vector<int64_t>{2, 4}));
}

TEST(Argmax, Errors) {
  EXPECT_EQ(errorOf([] { argmax(rangeOf({0})); }),
            "argmax(): Expected reduction dim to be specified for "
            "input.numel() == 0.");
  EXPECT_EQ(errorOf([] {
              argmax(rangeOf({0, 3}), 0);
            }),
            "argmax(): Expected reduction dim 0 to have non-zero size.");
  EXPECT_EQ(errorOf([] { argmax(rangeOf({2}), 1); }),
            "Dimension out of range (expected to be in range of [-1, 0], but "
            "got 1)");
}

TEST(ReduceOut, ComputesInOutDtypeResizesAndChecks) {
  Tensor x = rangeOf({2, 3}, ScalarType::Float, 0.5);
  Tensor out = emptyTensor({0}, ScalarType::Double, testing::cpu());
  Tensor& r = sum_out(out, x, {1}, false, std::nullopt);
  EXPECT_TRUE(r.is_same(out));
  EXPECT_EQ(sizesOf(out), std::vector<int64_t>{2});
  EXPECT_EQ(valuesOf(out), (std::vector<double>{1.5, 6}));
  Tensor all = emptyTensor({}, ScalarType::Float, testing::cpu());
  sum_out(all, x, std::nullopt);
  EXPECT_EQ(valuesOf(all), std::vector<double>{7.5});
  EXPECT_EQ(errorOf([&] { sum_out(out, x, {1}, false, ScalarType::Float); }),
            "sum.IntList_out(): Expected out tensor to have dtype Float, but "
            "got Double instead");
  Tensor mo = emptyTensor({2}, ScalarType::Float, testing::cpu());
  mean_out(mo, x, {1}, false, std::nullopt);
  EXPECT_EQ(valuesOf(mo), (std::vector<double>{0.5, 2}));
  Tensor ao = emptyTensor({3}, ScalarType::Float, testing::cpu());
  amax_out(ao, x, {0}, false);
  EXPECT_EQ(valuesOf(ao), (std::vector<double>{1.5, 2, 2.5}));
  amin_out(ao, x, {0}, false);
  EXPECT_EQ(valuesOf(ao), (std::vector<double>{0, 0.5, 1}));
  Tensor wrong = emptyTensor({3}, ScalarType::Double, testing::cpu());
  EXPECT_EQ(errorOf([&] { amax_out(wrong, x, {0}, false); }),
            "amax.out(): Expected the dtype for input and out to match, but "
            "got Float for input's dtype and Double for out's dtype.");
  Tensor io = emptyTensor({0}, ScalarType::Long, testing::cpu());
  argmax_out(io, x, 1, true);
  EXPECT_EQ(sizesOf(io), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(valuesOf(io), (std::vector<double>{2, 2}));
  Tensor mout = metaTensor({0});
  sum_out(mout, metaTensor({4, 5}), {0}, true, std::nullopt);
  EXPECT_EQ(sizesOf(mout), (std::vector<int64_t>{1, 5}));
}

TEST(Reduce, BoxedCallsWithNoneAndDefaults) {
  auto op =
      Dispatcher::singleton().findSchemaOrThrow("aten::sum", "dim_IntList");
  Stack stack{IValue(rangeOf({2, 3}, ScalarType::Int)), IValue(), IValue(false),
              IValue()};
  op.callBoxed(stack);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_EQ(stack[0].toTensor().scalar_type(), ScalarType::Long);
  EXPECT_EQ(valuesOf(stack[0].toTensor()), std::vector<double>{15});

  auto am = Dispatcher::singleton().findSchemaOrThrow("aten::amax", "");
  Stack s2{IValue(rangeOf({2, 3})), IValue(std::vector<int64_t>{0}),
           IValue(true)};
  am.callBoxed(s2);
  EXPECT_EQ(sizesOf(s2[0].toTensor()), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(valuesOf(s2[0].toTensor()), (std::vector<double>{3, 4, 5}));
}

}  // namespace
}  // namespace turnout
