// Tests of kernels/pointwise_ternary.cc (addcmul, addcdiv, lerp) and
// kernels/select_ops.cc (tril, triu, roll, masked_select, equal), called
// through the dispatcher: values against direct formulas over strided,
// transposed, expanded, batched, 0-dim and empty inputs, integer wrapping,
// Meta shapes, aliasing in place and errors. Under ASan this is
// the memory-safety test of their index walks; the values are compared with
// torch 1.13 by tests/python/test_op_db_torch.py.
#include <cmath>
#include <cstdint>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/operator_handle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/elementwise.h"
#include "kernels/reduce.h"
#include "kernels/shape.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using namespace ::turnout::testing;  // NOLINT
using V = std::vector<double>;
using Sizes = std::vector<int64_t>;

template <class Sig>
TypedOperatorHandle<Sig> op(const char* name, const char* overload = "") {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}
using Tri = Tensor(const Tensor&, int64_t);
using TriInplace = Tensor&(Tensor&, int64_t);
using Roll = Tensor(const Tensor&, IntArrayRef, IntArrayRef);
using MaskedSelect = Tensor(const Tensor&, const Tensor&);
using Equal = bool(const Tensor&, const Tensor&);
using Addc = Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&);
using AddcInplace = Tensor&(Tensor&, const Tensor&, const Tensor&,
                            const Scalar&);
using AddcOut = Tensor&(const Tensor&, const Tensor&, const Tensor&,
                        const Scalar&, Tensor&);
using LerpScalar = Tensor(const Tensor&, const Tensor&, const Scalar&);
using LerpTensor = Tensor(const Tensor&, const Tensor&, const Tensor&);

// ---- tril, triu ------------------------------------------------------------------

// The kept elements of a [batch, rows, cols] row-major array.
V triExpected(const V& x, int64_t batch, int64_t rows, int64_t cols,
              int64_t k, bool lower) {
  V out(x.size());
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        const size_t at = static_cast<size_t>((b * rows + i) * cols + j);
        const bool keep = lower ? j - i <= k : j - i >= k;
        out[at] = keep ? x[at] : 0;
      }
    }
  }
  return out;
}

TEST(KernelWriterOps, TrilTriuOverLayoutsAndDiagonals) {
  const Tensor base = rangeOf({2, 3, 4}, ScalarType::Float, 1.0, 1.0);
  const V x = valuesOf(base);
  const Tensor layouts[] = {base, stridedCopy(base),
                            columnMajor(base, 1, 2)};
  for (const bool lower : {true, false}) {
    const auto fn = op<Tri>(lower ? "aten::tril" : "aten::triu");
    const auto fn_ = op<TriInplace>(lower ? "aten::tril_" : "aten::triu_");
    for (int64_t k : {-5, -3, -1, 0, 1, 2, 4, 9}) {
      const V want = triExpected(x, 2, 3, 4, k, lower);
      for (const Tensor& t : layouts) {
        SCOPED_TRACE(::testing::Message() << lower << " k=" << k);
        const Tensor r = fn.call(t, k);
        EXPECT_TRUE(r.is_contiguous());
        EXPECT_EQ(valuesOf(r), want);
        Tensor copy = stridedCopy(t);
        fn_.call(copy, k);
        EXPECT_EQ(valuesOf(copy), want);
      }
    }
    EXPECT_EQ(fn.call(rangeOf({0, 3}), 1).numel(), 0);
    EXPECT_EQ(sizesOf(fn.call(metaTensor({5, 2, 3}), 1)), (Sizes{5, 2, 3}));
    EXPECT_THAT(errorOf([&] { fn.call(rangeOf({3}), 0); }),
                HasSubstr("Dimension out of range"));
    EXPECT_THAT(errorOf([&] { fn.call(rangeOf({}), 0); }),
                HasSubstr("no dimensions"));
  }
  // Extreme diagonals do not overflow.
  const auto tril = op<Tri>("aten::tril");
  EXPECT_EQ(valuesOf(tril.call(base, INT64_MAX)), x);
  EXPECT_EQ(valuesOf(tril.call(base, INT64_MIN)), V(24, 0.0));
}

TEST(KernelWriterOps, TrilInPlaceOnAnExpandedTensor) {
  // As torch's: tril_ of an expanded tensor writes the shared row (zeroed
  // where any of the rows it stands for is).
  Tensor row = tensorOf({1, 2, 3}, {1, 3});
  Tensor expanded = expand(row, {3, 3});
  op<TriInplace>("aten::tril_").call(expanded, 1);
  EXPECT_EQ(valuesOf(row), (V{1, 2, 0}));
}

// ---- roll -------------------------------------------------------------------------

TEST(KernelWriterOps, RollMatchesTheIndexFormula) {
  const auto roll = op<Roll>("aten::roll");
  const Tensor base = rangeOf({2, 3, 4});
  const V x = valuesOf(base);
  struct Case {
    std::vector<int64_t> shifts, dims;
    std::vector<int64_t> per_dim;  // the total shift of each dim
  };
  const Case cases[] = {{{1}, {0}, {1, 0, 0}},     {{-1}, {2}, {0, 0, -1}},
                        {{7, 2}, {1, -1}, {0, 7, 2}}, {{1, 1}, {1, 1}, {0, 2, 0}},
                        {{-9, 5, 3}, {0, 1, 2}, {-9, 5, 3}}};
  for (const Case& c : cases) {
    V want(x.size());
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 3; ++j) {
        for (int64_t k = 0; k < 4; ++k) {
          auto src = [](int64_t idx, int64_t s, int64_t n) {
            return ((idx - s) % n + n) % n;
          };
          want[(i * 3 + j) * 4 + k] =
              x[(src(i, c.per_dim[0], 2) * 3 + src(j, c.per_dim[1], 3)) * 4 +
                src(k, c.per_dim[2], 4)];
        }
      }
    }
    for (const Tensor& t : {base, stridedCopy(base), columnMajor(base, 0, 2)}) {
      EXPECT_EQ(valuesOf(roll.call(t, c.shifts, c.dims)), want);
    }
  }
  // No dims: rolled as a flat array, shape kept.
  const Tensor flat = roll.call(columnMajor(base, 1, 2), {5}, {});
  EXPECT_EQ(sizesOf(flat), (Sizes{2, 3, 4}));
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(valuesOf(flat)[(i + 5) % 24], x[i]);
  }
  EXPECT_EQ(valuesOf(roll.call(tensorOf({4}, {}), {3}, {})), (V{4}));
  EXPECT_EQ(roll.call(rangeOf({0, 3}), {1}, {0}).numel(), 0);
  EXPECT_EQ(sizesOf(roll.call(metaTensor({2, 5}), {1}, {1})), (Sizes{2, 5}));
  EXPECT_THAT(errorOf([&] { roll.call(base, {}, {}); }),
              HasSubstr("`shifts` required"));
  EXPECT_THAT(errorOf([&] { roll.call(base, {1, 2}, {0}); }),
              HasSubstr("shifts and dimensions must align. shifts: 2, dims:1"));
  EXPECT_THAT(errorOf([&] { roll.call(base, {1}, {3}); }),
              HasSubstr("Dimension out of range"));
  EXPECT_THAT(errorOf([&] { roll.call(tensorOf({1}, {}), {1}, {0}); }),
              HasSubstr("no dimensions"));
}

// ---- masked_select, equal -----------------------------------------------------------

TEST(KernelWriterOps, MaskedSelectBroadcastsInRowMajorOrder) {
  const auto ms = op<MaskedSelect>("aten::masked_select");
  const Tensor x = rangeOf({3, 4});
  const Tensor mask = to(tensorOf({1, 0, 1, 1}, {4}), ScalarType::Bool);
  EXPECT_EQ(valuesOf(ms.call(x, mask)), (V{0, 2, 3, 4, 6, 7, 8, 10, 11}));
  EXPECT_EQ(valuesOf(ms.call(columnMajor(x, 0, 1), mask)),
            (V{0, 2, 3, 4, 6, 7, 8, 10, 11}));
  // self broadcast by the mask.
  const Tensor col = to(tensorOf({1, 0}, {2, 1}), ScalarType::Bool);
  EXPECT_EQ(valuesOf(ms.call(stridedCopy(rangeOf({3})), col)), (V{0, 1, 2}));
  const Tensor none = to(tensorOf({0, 0, 0, 0}, {4}), ScalarType::Bool);
  EXPECT_EQ(sizesOf(ms.call(x, none)), (Sizes{0}));
  EXPECT_EQ(valuesOf(ms.call(tensorOf({5}, {}),
                             to(tensorOf({1}, {}), ScalarType::Bool))),
            (V{5}));
  EXPECT_THAT(errorOf([&] { ms.call(x, tensorOf({1, 0, 1, 1}, {4})); }),
              HasSubstr("expected BoolTensor or ByteTensor for mask"));
  EXPECT_THAT(errorOf([&] { ms.call(x, to(tensorOf({1, 0, 1}, {3}),
                                          ScalarType::Bool)); }),
              HasSubstr("must match the size"));
  // No Meta kernel, as torch 1.13: the size depends on the mask's values.
  EXPECT_THAT(errorOf([&] {
                ms.call(metaTensor({2}), metaTensor({2}, ScalarType::Bool));
              }),
              HasSubstr("Meta"));
}

TEST(KernelWriterOps, EqualComparesSizesAndPromotedValues) {
  const auto eq = op<Equal>("aten::equal");
  const Tensor x = rangeOf({2, 3});
  EXPECT_TRUE(eq.call(x, columnMajor(x, 0, 1)));
  EXPECT_TRUE(eq.call(x, to(x, ScalarType::Long)));
  EXPECT_FALSE(eq.call(tensorOf({1.5}, {1}), tensorOf({1}, {1}, ScalarType::Long)));
  EXPECT_FALSE(eq.call(x, rangeOf({3, 2})));
  EXPECT_FALSE(eq.call(x, rangeOf({6})));
  EXPECT_FALSE(eq.call(tensorOf({std::nan("")}, {1}), tensorOf({std::nan("")}, {1})));
  EXPECT_TRUE(eq.call(rangeOf({0}), rangeOf({0}, ScalarType::Int)));
}

// ---- addcmul, addcdiv, lerp -----------------------------------------------------------

TEST(KernelWriterOps, AddcmulAddcdivValues) {
  const auto addcmul = op<Addc>("aten::addcmul");
  const auto addcdiv = op<Addc>("aten::addcdiv");
  const Tensor a = tensorOf({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = tensorOf({2, -1, 0.5}, {3});
  const Tensor c = tensorOf({4, 2}, {2, 1});
  const V av = valuesOf(a);
  V mul(6), div(6);
  for (int i = 0; i < 6; ++i) {
    const double bb = valuesOf(b)[i % 3];
    const double cc = valuesOf(c)[i / 3];
    mul[i] = av[i] + 0.5 * bb * cc;
    div[i] = av[i] + 0.5 * bb / cc;
  }
  EXPECT_EQ(valuesOf(addcmul.call(columnMajor(a, 0, 1), b, c, 0.5)), mul);
  EXPECT_EQ(valuesOf(addcdiv.call(stridedCopy(a), b, c, 0.5)), div);
  // Integers wrap; a float value is truncated to the integer dtype.
  const Tensor i8 = tensorOf({100, -100}, {2}, ScalarType::Char);
  EXPECT_EQ(valuesOf(addcmul.call(i8, i8, tensorOf({1, 1}, {2}, ScalarType::Char),
                                  2.7)),
            (V{44, -44}));
  // In place with every operand the same tensor.
  Tensor s = tensorOf({1, 2, 3}, {3});
  op<AddcInplace>("aten::addcmul_").call(s, s, s, 1);
  EXPECT_EQ(valuesOf(s), (V{2, 6, 12}));
  // out= is resized, and refused before any write for a narrower dtype.
  Tensor out = rangeOf({0});
  op<AddcOut>("aten::addcmul", "out").call(a, b, c, 1, out);
  EXPECT_EQ(sizesOf(out), (Sizes{2, 3}));
  Tensor bad = rangeOf({2, 3}, ScalarType::Long);
  EXPECT_THAT(errorOf([&] {
                op<AddcOut>("aten::addcdiv", "out").call(a, b, c, 1, bad);
              }),
              HasSubstr("can't be cast to the desired output type Long"));
  EXPECT_EQ(valuesOf(bad), valuesOf(rangeOf({2, 3})));
  EXPECT_THAT(errorOf([&] {
                addcdiv.call(a, to(b, ScalarType::Long), to(c, ScalarType::Int), 1);
              }),
              HasSubstr("Integer division with addcdiv"));
  EXPECT_EQ(sizesOf(addcmul.call(metaTensor({4, 1}), metaTensor({3}),
                                 metaTensor({}), 2)),
            (Sizes{4, 3}));
}

TEST(KernelWriterOps, LerpIsExactAtBothEnds) {
  const auto lerp_s = op<LerpScalar>("aten::lerp", "Scalar");
  const auto lerp_t = op<LerpTensor>("aten::lerp", "Tensor");
  const Tensor a = tensorOf({0.1, -3, 1e8}, {3}, ScalarType::Double);
  const Tensor b = tensorOf({0.7, 5, -1e-8}, {3}, ScalarType::Double);
  EXPECT_EQ(valuesOf(lerp_s.call(a, b, 0.0)), valuesOf(a));
  EXPECT_EQ(valuesOf(lerp_s.call(a, b, 1.0)), valuesOf(b));
  const Tensor w = tensorOf({0, 1, 0.25}, {3}, ScalarType::Double);
  const V r = valuesOf(lerp_t.call(a, b, w));
  EXPECT_EQ(r[0], 0.1);
  EXPECT_EQ(r[1], 5);
  EXPECT_DOUBLE_EQ(r[2], 1e8 + 0.25 * (-1e-8 - 1e8));
  const V big = valuesOf(lerp_s.call(a, b, 0.75));
  EXPECT_DOUBLE_EQ(big[1], 5 - (5 - -3) * 0.25);
  EXPECT_THAT(errorOf([&] { lerp_s.call(a, to(b, ScalarType::Float), 0.5); }),
              HasSubstr("expected dtype double for `end` but got dtype float"));
  EXPECT_THAT(errorOf([&] { lerp_t.call(a, b, to(w, ScalarType::Float)); }),
              HasSubstr("for `weight`"));
  EXPECT_THAT(errorOf([&] {
                lerp_s.call(to(a, ScalarType::Half), to(b, ScalarType::Half), 0.5);
              }),
              HasSubstr("\"lerp_kernel_scalar\" not implemented for 'Half'"));
  EXPECT_EQ(sizesOf(lerp_t.call(metaTensor({2, 1}), metaTensor({3}),
                                metaTensor({1}))),
            (Sizes{2, 3}));
}

}  // namespace
}  // namespace turnout
