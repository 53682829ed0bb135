#include "kernels/linalg.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using testing::columnMajor;
using ::testing::HasSubstr;
using testing::metaTensor;
using testing::rangeOf;
using testing::sizesOf;
using testing::stridedCopy;
using testing::tensorOf;
using testing::transposed;
using testing::valuesOf;

// Small integers, so that every dtype (Half and BFloat16 included) holds
// every product and sum exactly.
Tensor smallInts(std::vector<int64_t> sizes, ScalarType dtype, int seed = 0) {
  std::vector<double> v(static_cast<size_t>(numelOf(sizes)));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<double>(static_cast<int>((i * 7 + seed * 3) % 9) - 4);
  }
  return tensorOf(v, sizes, dtype);
}

// torch.matmul's semantics in double, written independently of the
// kernel: promote 1-D operands, broadcast the batch, multiply, drop the
// promoted dimensions.
std::pair<std::vector<int64_t>, std::vector<double>> referenceMatmul(
    const Tensor& a, const Tensor& b) {
  std::vector<int64_t> as = sizesOf(a), bs = sizesOf(b);
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  std::vector<int64_t> ab(as.begin(), as.end() - 2),
      bb(bs.begin(), bs.end() - 2);
  const size_t nb = std::max(ab.size(), bb.size());
  ab.insert(ab.begin(), nb - ab.size(), 1);
  bb.insert(bb.begin(), nb - bb.size(), 1);
  std::vector<int64_t> batch(nb);
  for (size_t i = 0; i < nb; ++i) batch[i] = ab[i] == 1 ? bb[i] : ab[i];
  const std::vector<double> av = valuesOf(a), bv = valuesOf(b);
  int64_t batch_numel = 1;
  for (int64_t s : batch) batch_numel *= s;
  std::vector<double> out;
  for (int64_t bi = 0; bi < batch_numel; ++bi) {
    int64_t a_index = 0, b_index = 0, rest = bi;
    std::vector<int64_t> idx(nb);
    for (size_t d = nb; d-- > 0;) {
      idx[d] = rest % batch[d];
      rest /= batch[d];
    }
    for (size_t d = 0; d < nb; ++d) {
      a_index = a_index * ab[d] + (ab[d] == 1 ? 0 : idx[d]);
      b_index = b_index * bb[d] + (bb[d] == 1 ? 0 : idx[d]);
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          acc +=
              av[a_index * m * k + i * k + p] * bv[b_index * k * n + p * n + j];
        }
        out.push_back(acc);
      }
    }
  }
  std::vector<int64_t> shape(batch);
  if (!a_vec) shape.push_back(m);
  if (!b_vec) shape.push_back(n);
  return {shape, out};
}

void expectNear(const std::vector<double>& got, const std::vector<double>& want,
                double rtol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], rtol * (1 + std::abs(want[i]))) << "at " << i;
  }
}

using testing::errorOf;

// The layouts each operand is tried in: contiguous, column-major
// (transposed memory), and every element two apart.
enum class Layout { Contiguous, ColumnMajor, Strided };
const Layout kLayouts[] = {Layout::Contiguous, Layout::ColumnMajor,
                           Layout::Strided};

Tensor inLayout(const Tensor& t, Layout l) {
  switch (l) {
    case Layout::Contiguous:
      return t;
    case Layout::ColumnMajor:
      return t.dim() >= 2 ? columnMajor(t, t.dim() - 2, t.dim() - 1) : t;
    case Layout::Strided:
      return stridedCopy(t);
  }
  return t;
}

const ScalarType kMatmulDtypes[] = {ScalarType::Float, ScalarType::Double,
                                    ScalarType::Long,  ScalarType::Int,
                                    ScalarType::Half,  ScalarType::BFloat16};

TEST(Mm, MatchesReferenceForDtypesShapesAndLayouts) {
  struct Case {
    std::vector<int64_t> a, b;
  };
  const Case cases[] = {{{2, 3}, {3, 4}}, {{1, 1}, {1, 1}}, {{5, 7}, {7, 1}},
                        {{1, 6}, {6, 3}}, {{0, 3}, {3, 2}}, {{3, 0}, {0, 2}},
                        {{4, 2}, {2, 0}}};
  for (ScalarType dtype : kMatmulDtypes) {
    for (const Case& c : cases) {
      for (Layout la : kLayouts) {
        for (Layout lb : kLayouts) {
          SCOPED_TRACE(::testing::Message()
                       << dtype << " " << ::testing::PrintToString(c.a) << " @ "
                       << ::testing::PrintToString(c.b) << " layouts "
                       << static_cast<int>(la) << "," << static_cast<int>(lb));
          Tensor a = smallInts(c.a, dtype, 1), b = smallInts(c.b, dtype, 2);
          Tensor y = mm(inLayout(a, la), inLayout(b, lb));
          auto [shape, want] = referenceMatmul(a, b);
          EXPECT_EQ(sizesOf(y), shape);
          EXPECT_EQ(y.scalar_type(), dtype);
          EXPECT_TRUE(y.is_contiguous());
          EXPECT_EQ(valuesOf(y), want);
        }
      }
    }
  }
}

TEST(Mm, LargeFloatProductsThroughBlasMatchDoubleReference) {
  for (ScalarType dtype : {ScalarType::Float, ScalarType::Double}) {
    for (Layout la : kLayouts) {
      for (Layout lb : kLayouts) {
        SCOPED_TRACE(::testing::Message()
                     << dtype << " " << static_cast<int>(la) << ","
                     << static_cast<int>(lb));
        Tensor a = rangeOf({67, 45}, dtype, 0.013, -1.5);
        Tensor b = rangeOf({45, 81}, dtype, -0.007, 2.25);
        Tensor y = mm(inLayout(a, la), inLayout(b, lb));
        auto [shape, want] = referenceMatmul(a, b);
        EXPECT_EQ(sizesOf(y), shape);
        expectNear(valuesOf(y), want,
                   dtype == ScalarType::Float ? 1e-5 : 1e-12);
      }
    }
  }
}

TEST(Mm, OutputWithoutUnitStrideAndTransposedOut) {
  Tensor a = smallInts({3, 4}, ScalarType::Float, 1);
  Tensor b = smallInts({4, 5}, ScalarType::Float, 2);
  auto [shape, want] = referenceMatmul(a, b);
  // Column-major out, and out with every element two apart.
  Tensor col = columnMajor(tensorOf(std::vector<double>(15, 0), {3, 5}), 0, 1);
  mm_out(col, a, b);
  EXPECT_EQ(valuesOf(col), want);
  Tensor strided = stridedCopy(tensorOf(std::vector<double>(15, 0), {3, 5}));
  mm_out(strided, a, b);
  EXPECT_EQ(valuesOf(strided), want);
}

TEST(Mm, ExpandedOperandsWithZeroStrides) {
  // Broadcast views (stride 0) are no BLAS layout: they are copied first.
  for (ScalarType dtype :
       {ScalarType::Float, ScalarType::Double, ScalarType::Long}) {
    SCOPED_TRACE(::testing::Message() << dtype);
    Tensor row = smallInts({4}, dtype, 1);
    Tensor a = makeView(row, {3, 4}, {0, 1}, 0);  // every row the same
    Tensor col = smallInts({4}, dtype, 2);
    Tensor b = makeView(col, {4, 5}, {1, 0}, 0);  // every column the same
    Tensor y = mm(a, b);
    EXPECT_EQ(valuesOf(y), referenceMatmul(a, b).second);
    Tensor bb = bmm(makeView(row, {2, 3, 4}, {0, 0, 1}, 0),
                    makeView(col, {2, 4, 5}, {0, 1, 0}, 0));
    EXPECT_EQ(valuesOf(bb),
              referenceMatmul(makeView(row, {2, 3, 4}, {0, 0, 1}, 0),
                              makeView(col, {2, 4, 5}, {0, 1, 0}, 0))
                  .second);
  }
}

TEST(Mm, Errors) {
  const Tensor f23 = rangeOf({2, 3}), f45 = rangeOf({4, 5}), f3 = rangeOf({3});
  struct Case {
    const char* name;
    std::function<void()> call;
    ErrorKind kind;
    std::string message;
  };
  const Case cases[] = {
      {"shapes", [&] { mm(f23, f45); }, ErrorKind::InvalidArgument,
       "mm(): mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"},
      {"self 1-D", [&] { mm(f3, f45); }, ErrorKind::InvalidArgument,
       "mm(): self must be a matrix, got 1-D tensor"},
      {"mat2 1-D", [&] { mm(f23, f3); }, ErrorKind::InvalidArgument,
       "mm(): mat2 must be a matrix, got 1-D tensor"},
      {"dtypes",
       [&] {
         mm(f23, rangeOf({3, 2}, ScalarType::Double));
       },
       ErrorKind::InvalidArgument,
       "mm(): expected self and mat2 to have the same dtype, but got: Float "
       "!= Double"},
      {"bool",
       [&] {
         mm(rangeOf({2, 2}, ScalarType::Bool),
            rangeOf({2, 2}, ScalarType::Bool));
       },
       ErrorKind::NotImplemented, "mm(): not implemented for 'Bool'"},
      {"devices",
       [&] {
         mm(f23, metaTensor({3, 2}));
       },
       ErrorKind::InvalidArgument,
       "mm(): Expected all tensors to be on the same device, but found at "
       "least two devices, cpu and meta!"},
      {"meta shapes",
       [&] {
         mm(metaTensor({2, 3}), metaTensor({4, 5}));
       },
       ErrorKind::InvalidArgument,
       "mm(): mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    try {
      c.call();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), c.kind);
      EXPECT_EQ(std::string(e.what()), c.message);
    }
  }
}

TEST(Bmm, MatchesReferenceAndMeta) {
  for (ScalarType dtype : kMatmulDtypes) {
    for (Layout la : kLayouts) {
      for (Layout lb : kLayouts) {
        SCOPED_TRACE(::testing::Message()
                     << dtype << " " << static_cast<int>(la) << ","
                     << static_cast<int>(lb));
        Tensor a = smallInts({3, 2, 4}, dtype, 1),
               b = smallInts({3, 4, 5}, dtype, 2);
        Tensor y = bmm(inLayout(a, la), inLayout(b, lb));
        auto [shape, want] = referenceMatmul(a, b);
        EXPECT_EQ(sizesOf(y), shape);
        EXPECT_EQ(valuesOf(y), want);
      }
    }
  }
  // A batch dimension that is not the outermost in memory.
  Tensor a = smallInts({2, 3, 4}, ScalarType::Float, 1);
  Tensor at = transposed(smallInts({3, 2, 4}, ScalarType::Float, 1), 0, 1);
  Tensor b = smallInts({2, 4, 2}, ScalarType::Float, 2);
  EXPECT_EQ(valuesOf(bmm(at, b)), referenceMatmul(at, b).second);

  Tensor m = bmm(metaTensor({7, 2, 3}, ScalarType::Double),
                 metaTensor({7, 3, 5}, ScalarType::Double));
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(sizesOf(m), (std::vector<int64_t>{7, 2, 5}));
  EXPECT_EQ(m.scalar_type(), ScalarType::Double);
  EXPECT_EQ(sizesOf(bmm(rangeOf({0, 2, 3}), rangeOf({0, 3, 4}))),
            (std::vector<int64_t>{0, 2, 4}));
}

TEST(Bmm, Errors) {
  EXPECT_EQ(errorOf([] {
              bmm(rangeOf({2, 3}), rangeOf({2, 3, 4}));
            }),
            "bmm(): batch1 must be a 3D tensor, got 2-D tensor");
  EXPECT_EQ(errorOf([] {
              bmm(rangeOf({2, 2, 3}), rangeOf({3, 4}));
            }),
            "bmm(): batch2 must be a 3D tensor, got 2-D tensor");
  EXPECT_EQ(errorOf([] {
              bmm(rangeOf({2, 2, 3}), rangeOf({3, 3, 4}));
            }),
            "bmm(): batch1 and batch2 must have same number of batches, got 2 "
            "and 3");
  EXPECT_EQ(errorOf([] {
              bmm(metaTensor({2, 2, 3}), metaTensor({2, 4, 4}));
            }),
            "bmm(): Expected size for first two dimensions of batch2 tensor to "
            "be: [2, 3] but got: [2, 4].");
}

TEST(Matmul, EveryCaseMatchesReferenceOnCpuAndShapeOnMeta) {
  struct Case {
    std::vector<int64_t> a, b, out;
  };
  const Case cases[] = {
      {{3}, {3}, {}},
      {{2, 3}, {3}, {2}},
      {{3}, {3, 4}, {4}},
      {{2, 3}, {3, 4}, {2, 4}},
      {{5, 2, 3}, {3, 4}, {5, 2, 4}},
      {{5, 2, 3}, {3}, {5, 2}},
      {{2, 5, 2, 3}, {3}, {2, 5, 2}},
      {{3}, {5, 3, 4}, {5, 4}},
      {{2, 3}, {5, 3, 4}, {5, 2, 4}},
      {{5, 1, 2, 3}, {4, 3, 2}, {5, 4, 2, 2}},
      {{1, 2, 3}, {7, 3, 4}, {7, 2, 4}},
      {{2, 1, 3}, {4, 1, 3, 2}, {4, 2, 1, 2}},
      {{0, 2, 3}, {3, 4}, {0, 2, 4}},
      {{2, 0}, {0, 3}, {2, 3}},
  };
  for (const Case& c : cases) {
    for (Layout la : kLayouts) {
      for (Layout lb : kLayouts) {
        SCOPED_TRACE(::testing::Message()
                     << ::testing::PrintToString(c.a) << " @ "
                     << ::testing::PrintToString(c.b) << " layouts "
                     << static_cast<int>(la) << "," << static_cast<int>(lb));
        Tensor a = smallInts(c.a, ScalarType::Float, 1);
        Tensor b = smallInts(c.b, ScalarType::Float, 2);
        Tensor y = matmul(inLayout(a, la), inLayout(b, lb));
        auto [shape, want] = referenceMatmul(a, b);
        EXPECT_EQ(shape, c.out);
        EXPECT_EQ(sizesOf(y), c.out);
        EXPECT_EQ(valuesOf(y), want);
      }
    }
    Tensor m = matmul(metaTensor(c.a), metaTensor(c.b));
    EXPECT_TRUE(m.is_meta());
    EXPECT_EQ(sizesOf(m), c.out);
  }
  // A batch that cannot be folded into rows (transposed batch dimensions).
  Tensor a = transposed(smallInts({3, 4, 2, 5}, ScalarType::Double, 1), 0, 1);
  Tensor b = smallInts({5, 3}, ScalarType::Double, 2);
  EXPECT_EQ(valuesOf(matmul(a, b)), referenceMatmul(a, b).second);
  EXPECT_EQ(valuesOf(matmul(a, rangeOf({5}, ScalarType::Double))),
            referenceMatmul(a, rangeOf({5}, ScalarType::Double)).second);
}

TEST(Matmul, Errors) {
  EXPECT_EQ(errorOf([] {
              matmul(rangeOf({}), rangeOf({2, 2}));
            }),
            "matmul(): both arguments to matmul need to be at least 1D, but "
            "they are 0D and 2D");
  EXPECT_EQ(errorOf([] { matmul(rangeOf({3}), rangeOf({4})); }),
            "matmul(): inconsistent tensor size, expected tensor [3] and src "
            "[4] to have the same number of elements, but got 3 and 4 "
            "elements respectively");
  EXPECT_EQ(errorOf([] {
              matmul(rangeOf({2, 3}), rangeOf({4}));
            }),
            "matmul(): size mismatch, got input (2), mat (2x3), vec (4)");
  EXPECT_EQ(
      errorOf([] {
        matmul(rangeOf({3}), rangeOf({4, 5}));
      }),
      "matmul(): mat1 and mat2 shapes cannot be multiplied (1x3 and 4x5)");
  EXPECT_EQ(
      errorOf([] {
        matmul(rangeOf({2, 2, 3}), rangeOf({4, 5}));
      }),
      "matmul(): mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)");
  EXPECT_EQ(errorOf([] {
              matmul(metaTensor({2, 2, 3}), metaTensor({3, 4, 5}));
            }),
            "The size of tensor a (2) must match the size of tensor b (3) at "
            "non-singleton dimension 0");
  EXPECT_EQ(errorOf([] {
              matmul(rangeOf({2, 2, 3}), rangeOf({2, 4, 5}));
            }),
            "matmul(): Expected size for first two dimensions of batch2 tensor "
            "to be: [2, 3] but got: [2, 4].");
}

TEST(Addmm, BetaAlphaAndBroadcastSelf) {
  struct Case {
    std::vector<int64_t> self;
    double beta, alpha;
  };
  const Case cases[] = {{{3, 4}, 1, 1}, {{4}, 1, 1},   {{1, 4}, 2, 1},
                        {{3, 1}, 1, 3}, {{}, -1, 0.5}, {{3, 4}, 0, 2}};
  for (ScalarType dtype : {ScalarType::Float, ScalarType::Double}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message()
                   << dtype << " self " << ::testing::PrintToString(c.self)
                   << " beta " << c.beta << " alpha " << c.alpha);
      Tensor self = smallInts(c.self, dtype, 3);
      Tensor m1 = smallInts({3, 2}, dtype, 1), m2 = smallInts({2, 4}, dtype, 2);
      Tensor y = addmm(self, columnMajor(m1, 0, 1), m2, c.beta, c.alpha);
      auto prod = referenceMatmul(m1, m2).second;
      std::vector<double> sv = valuesOf(self);
      std::vector<double> want(12);
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 4; ++j) {
          double s = c.self.empty()       ? sv[0]
                     : c.self.size() == 1 ? sv[j]
                     : c.self[0] == 1     ? sv[j]
                     : c.self[1] == 1     ? sv[i]
                                          : sv[i * 4 + j];
          want[i * 4 + j] = c.beta * s + c.alpha * prod[i * 4 + j];
        }
      }
      EXPECT_EQ(sizesOf(y), (std::vector<int64_t>{3, 4}));
      expectNear(valuesOf(y), want, 1e-6);
    }
  }
  // beta == 0: NaN in self does not propagate.
  Tensor nan_self = tensorOf({std::nan("")}, {1});
  Tensor y = addmm(nan_self, rangeOf({2, 2}), rangeOf({2, 2}), 0, 1);
  EXPECT_EQ(valuesOf(y), (std::vector<double>{2, 3, 6, 11}));
  // Integers: exact.
  Tensor yi = addmm(tensorOf({10}, {1}, ScalarType::Long),
                    rangeOf({2, 2}, ScalarType::Long),
                    rangeOf({2, 2}, ScalarType::Long), 2, 3);
  EXPECT_EQ(valuesOf(yi), (std::vector<double>{26, 29, 38, 53}));
  Tensor m = addmm(metaTensor({4}), metaTensor({3, 2}), metaTensor({2, 4}));
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(sizesOf(m), (std::vector<int64_t>{3, 4}));
}

TEST(Addmm, Errors) {
  EXPECT_EQ(errorOf([] {
              addmm(rangeOf({3}), rangeOf({2, 3}), rangeOf({3, 2}));
            }),
            "addmm(): The expanded size of the tensor (2) must match the "
            "existing size (3) at non-singleton dimension 1.  Target sizes: "
            "[2, 2].  Tensor sizes: [3]");
  EXPECT_EQ(errorOf([] {
              addmm(rangeOf({2}), rangeOf({2, 3}), rangeOf({2, 2}));
            }),
            "addmm(): mat1 and mat2 shapes cannot be multiplied (2x3 and 2x2)");
  EXPECT_EQ(errorOf([] {
              addmm(rangeOf({2}), rangeOf({3}), rangeOf({3, 2}));
            }),
            "addmm(): mat1 must be a matrix, got 1-D tensor");
  EXPECT_EQ(errorOf([] {
              addmm(rangeOf({2}, ScalarType::Long),
                    rangeOf({2, 2}, ScalarType::Long),
                    rangeOf({2, 2}, ScalarType::Long), 1, 0.5);
            }),
            "addmm(): For integral input tensors, argument alpha must not be a "
            "floating point number.");
  EXPECT_EQ(errorOf([] {
              addmm(metaTensor({2}), metaTensor({2, 3}), metaTensor({4, 2}));
            }),
            "addmm(): mat1 and mat2 shapes cannot be multiplied (2x3 and 4x2)");
}

TEST(Linear, MatchesMatmulPlusBias) {
  struct Case {
    std::vector<int64_t> input;
    bool bias;
  };
  const Case cases[] = {
      {{3}, false},      {{3}, true},    {{2, 3}, false},      {{2, 3}, true},
      {{4, 2, 3}, true}, {{0, 3}, true}, {{2, 2, 2, 3}, false}};
  for (const Case& c : cases) {
    for (Layout li : kLayouts) {
      for (Layout lw : kLayouts) {
        SCOPED_TRACE(::testing::Message()
                     << ::testing::PrintToString(c.input) << " bias " << c.bias
                     << " layouts " << static_cast<int>(li) << ","
                     << static_cast<int>(lw));
        Tensor x = smallInts(c.input, ScalarType::Float, 1);
        Tensor w = smallInts({5, 3}, ScalarType::Float, 2);
        Tensor b = smallInts({5}, ScalarType::Float, 3);
        Tensor y = linear(
            inLayout(x, li), inLayout(w, lw),
            c.bias ? std::optional<Tensor>(stridedCopy(b)) : std::nullopt);
        auto [shape, want] = referenceMatmul(x, transposed(w, 0, 1));
        if (c.bias) {
          std::vector<double> bv = valuesOf(b);
          for (size_t i = 0; i < want.size(); ++i) want[i] += bv[i % 5];
        }
        EXPECT_EQ(sizesOf(y), shape);
        EXPECT_EQ(valuesOf(y), want);
      }
    }
  }
  Tensor m = linear(metaTensor({8, 4, 3}), metaTensor({5, 3}), metaTensor({5}));
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(sizesOf(m), (std::vector<int64_t>{8, 4, 5}));
}

TEST(Linear, Errors) {
  EXPECT_EQ(
      errorOf([] {
        linear(rangeOf({2, 4}), rangeOf({5, 3}));
      }),
      "linear(): mat1 and mat2 shapes cannot be multiplied (2x4 and 3x5)");
  EXPECT_EQ(errorOf([] {
              linear(rangeOf({2, 3}), rangeOf({5, 3}), rangeOf({4}));
            }),
            "The size of tensor a (5) must match the size of tensor b (4) at "
            "non-singleton dimension 1");
  EXPECT_EQ(errorOf([] {
              linear(rangeOf({2, 3}), rangeOf({5, 3}), rangeOf({1, 2, 5}));
            }),
            "linear(): output with shape [2, 5] doesn't match the broadcast "
            "shape [1, 2, 5]");
}

TEST(LinalgOut, ResizesChecksDtypeAndReturnsOut) {
  Tensor a = smallInts({2, 3}, ScalarType::Float, 1);
  Tensor b = smallInts({3, 4}, ScalarType::Float, 2);
  auto want = referenceMatmul(a, b).second;
  Tensor out = emptyTensor({0}, ScalarType::Float, testing::cpu());
  Tensor& r = mm_out(out, a, b);
  EXPECT_TRUE(r.is_same(out));
  EXPECT_EQ(sizesOf(out), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(valuesOf(out), want);

  Tensor right = emptyTensor({2, 4}, ScalarType::Float, testing::cpu());
  EXPECT_EQ(valuesOf(matmul_out(right, a, b)), want);
  Tensor bout = emptyTensor({0}, ScalarType::Float, testing::cpu());
  bmm_out(bout, smallInts({1, 2, 3}, ScalarType::Float),
          smallInts({1, 3, 4}, ScalarType::Float));
  EXPECT_EQ(sizesOf(bout), (std::vector<int64_t>{1, 2, 4}));
  Tensor aout = emptyTensor({2, 4}, ScalarType::Float, testing::cpu());
  addmm_out(aout, tensorOf({1}, {1}), a, b, 1, 1);
  std::vector<double> plus1 = want;
  for (double& v : plus1) v += 1;
  EXPECT_EQ(valuesOf(aout), plus1);
  Tensor lout = emptyTensor({2, 4}, ScalarType::Float, testing::cpu());
  linear_out(lout, a, transposed(b, 0, 1), std::nullopt);
  EXPECT_EQ(valuesOf(lout), want);

  Tensor wrong = emptyTensor({2, 4}, ScalarType::Double, testing::cpu());
  EXPECT_EQ(errorOf([&] { mm_out(wrong, a, b); }),
            "mm.out(): Expected out tensor to have dtype Float, but got Double "
            "instead");
  Tensor mout = metaTensor({0});
  mm_out(mout, metaTensor({2, 3}), metaTensor({3, 4}));
  EXPECT_EQ(sizesOf(mout), (std::vector<int64_t>{2, 4}));
}

TEST(Linalg, BoxedCallsUseSchemaDefaults) {
  auto op = Dispatcher::singleton().findSchemaOrThrow("aten::addmm", "");
  Stack stack{IValue(tensorOf({1}, {1})), IValue(rangeOf({2, 2})),
              IValue(rangeOf({2, 2})), IValue(Scalar(1)), IValue(Scalar(2))};
  op.callBoxed(stack);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_EQ(valuesOf(stack[0].toTensor()), (std::vector<double>{5, 7, 13, 23}));

  auto lin = Dispatcher::singleton().findSchemaOrThrow("aten::linear", "");
  Stack s2{IValue(rangeOf({2})), IValue(rangeOf({1, 2})), IValue()};
  lin.callBoxed(s2);
  EXPECT_EQ(valuesOf(s2[0].toTensor()), (std::vector<double>{1}));
}

}  // namespace
}  // namespace turnout
