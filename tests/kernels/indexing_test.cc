// Advanced indexing, index_select, nonzero, masked_fill, and the shape
// operators of kernels/shape_ops.h: shapes, strides and storage sharing on
// CPU and Meta, values, errors, and gradients (recorded nodes, gradcheck).
// tests/python/test_ops_index_torch.py checks the same against torch 1.13.
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/engine.h"
#include "kernels/autograd/gradcheck.h"
#include "dispatcher/dispatcher.h"
#include "kernels/ops.h"
#include "tests/error_of.h"
#include "tests/kernels/autograd/autograd_testing.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::errorOf;
using testing::fnName;
using testing::leaf;
using testing::rangeOf;
using testing::tensorOf;
using testing::valuesOf;
using Dims = std::vector<int64_t>;

Dims dimsOf(IntArrayRef a) { return Dims(a.begin(), a.end()); }
Tensor longs(const std::vector<double>& v, IntArrayRef sizes) {
  return tensorOf(v, sizes, ScalarType::Long);
}
Tensor bools(const std::vector<double>& v, IntArrayRef sizes) {
  return tensorOf(v, sizes, ScalarType::Bool);
}
OptionalTensorList idx(std::vector<std::optional<Tensor>> v) { return v; }
Tensor onMeta(const Tensor& t) {
  return empty(t.sizes(), TensorOptions(t.scalar_type()).device("meta"));
}

// x[indices] on a [3, 4, 5] arange: shapes as NumPy's rules put them,
// contiguous results, values from torch 1.13.
TEST(Index, ShapesAndValues) {
  Tensor x = rangeOf({3, 4, 5});
  struct Case {
    const char* name;
    OptionalTensorList indices;
    Dims sizes;
    std::vector<double> first;  // leading values
  };
  const std::vector<Case> cases = {
      {"x[[0, 2]]", idx({longs({0, 2}, {2})}), {2, 4, 5}, {0, 1, 2}},
      {"x[:, [0, 2]]", idx({std::nullopt, longs({0, 2}, {2})}), {3, 2, 5},
       {0, 1, 2, 3, 4, 10}},
      {"x[[0, 1], :, [1, 2]] (apart: block first)",
       idx({longs({0, 1}, {2}), std::nullopt, longs({1, 2}, {2})}),
       {2, 4},
       {1, 6, 11, 16, 22}},
      {"x[[[0], [2]], [1, 3]] (broadcast)",
       idx({longs({0, 2}, {2, 1}), longs({1, 3}, {2})}),
       {2, 2, 5},
       {5, 6, 7, 8, 9, 15}},
      {"x[[-1]]", idx({longs({-1}, {1})}), {1, 4, 5}, {40, 41}},
      {"x[mask 3x4]",
       idx({bools({0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, {3, 4})}),
       {2, 5},
       {5, 6, 7, 8, 9, 40}},
      {"x[:, :, mask 5]", idx({std::nullopt, std::nullopt,
                                bools({1, 0, 0, 0, 1}, {5})}),
       {3, 4, 2},
       {0, 4, 5, 9}},
      {"x[[]]", idx({longs({}, {0})}), {0, 4, 5}, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor r = index(x, c.indices);
    EXPECT_EQ(dimsOf(r.sizes()), c.sizes);
    EXPECT_TRUE(r.is_contiguous());
    std::vector<double> v = valuesOf(r);
    v.resize(std::min(v.size(), c.first.size()));
    EXPECT_EQ(v, c.first);
    // Meta: the same shape, for long indices.
    bool has_mask = false;
    for (const auto& i : c.indices) {
      has_mask |= i.has_value() && i->scalar_type() == ScalarType::Bool;
    }
    if (!has_mask) {
      OptionalTensorList meta_indices;
      for (const auto& i : c.indices) {
        meta_indices.push_back(i.has_value() ? std::optional<Tensor>(onMeta(*i))
                                             : std::nullopt);
      }
      EXPECT_EQ(dimsOf(index(onMeta(x), meta_indices).sizes()), c.sizes);
    }
  }
}

TEST(Index, NonContiguousSelfAndIndices) {
  Tensor x = testing::transposed(rangeOf({4, 3}), 0, 1);  // [3, 4]
  Tensor i = select(longs({2, 9, 0, 9}, {2, 2}), 1, 0);  // [2, 0], stride 2
  EXPECT_THAT(valuesOf(index(x, idx({i}))), ElementsAre(2, 5, 8, 11, 0, 3, 6, 9));
}

// The result is laid out as its operands are (torch's TensorIterator): a
// permuted self gives a permuted result, on CPU and Meta alike.
TEST(Index, ResultFollowsTheOperandsLayout) {
  Tensor x = permute(rangeOf({3, 4, 5}), {2, 0, 1});  // [5, 3, 4] (1, 20, 5)
  OptionalTensorList i = idx({std::nullopt, longs({0, 1}, {2})});
  Tensor r = index(x, i);
  EXPECT_EQ(dimsOf(r.sizes()), (Dims{5, 2, 4}));
  EXPECT_EQ(dimsOf(r.strides()), (Dims{1, 5, 10}));  // torch 1.13's
  EXPECT_EQ(valuesOf(r), valuesOf(contiguous(r)));
  EXPECT_EQ(valuesOf(select(r, 0, 1))[5], 26);  // x[1, 1, 1] = (1, 1, 1) of base
  Tensor y = permute(rangeOf({3, 4, 5}), {2, 1, 0});  // [5, 4, 3] (1, 5, 20)
  Tensor q = index(y, idx({std::nullopt, std::nullopt, longs({2, 0}, {2})}));
  EXPECT_EQ(dimsOf(q.strides()), (Dims{2, 10, 1}));
  Tensor meta_y = permute(onMeta(rangeOf({3, 4, 5})), {2, 1, 0});
  EXPECT_EQ(dimsOf(index(meta_y, idx({std::nullopt, std::nullopt,
                                         onMeta(longs({2, 0}, {2}))}))
                       .strides()),
            (Dims{2, 10, 1}));
}

TEST(Index, Errors) {
  Tensor x = rangeOf({3, 4});
  EXPECT_THAT(errorOf([&] { index(x, idx({tensorOf({1}, {1})})); }),
              HasSubstr("tensors used as indices must be long, byte or bool "
                        "tensors"));
  EXPECT_THAT(errorOf([&] { index(x, idx({longs({3}, {1})})); }),
              HasSubstr("index 3 is out of bounds for dimension 0 with size 3"));
  EXPECT_THAT(errorOf([&] { index(x, idx({longs({-5}, {1}), std::nullopt})); }),
              HasSubstr("index -5 is out of bounds"));
  EXPECT_THAT(
      errorOf([&] {
        index(x, idx({longs({0}, {1}), longs({0}, {1}), longs({0}, {1})}));
      }),
      HasSubstr("too many indices for tensor of dimension 2"));
  EXPECT_THAT(errorOf([&] { index(x, idx({bools({1, 0}, {2})})); }),
              HasSubstr("The shape of the mask [2] at index 0 does not match "
                        "the shape of the indexed tensor [3, 4] at index 0"));
  EXPECT_THAT(
      errorOf([&] { index(x, idx({longs({0, 1}, {2}), longs({0, 1, 2}, {3})})); }),
      HasSubstr("shape mismatch: indexing tensors could not be broadcast "
                "together with shapes [2], [3]"));
  EXPECT_THAT(errorOf([&] { index(onMeta(x), idx({onMeta(bools({1, 0, 1}, {3}))})); }),
              HasSubstr("a boolean mask index on the Meta device"));
}

// Tensor?[] boxed: a GenericList of None and tensors (what Python passes),
// or a TensorList; anything else is refused with the position.
TEST(Index, BoxedOptionalTensorLists) {
  Tensor x = rangeOf({3, 4});
  OperatorHandle op =
      Dispatcher::singleton().findSchemaOrThrow("aten::index", "Tensor");
  Stack generic{IValue(x), IValue(std::vector<IValue>{
                               IValue(), IValue(longs({3, 0}, {2}))})};
  op.callBoxed(generic);
  ASSERT_EQ(generic.size(), 1u);
  EXPECT_THAT(valuesOf(generic[0].toTensor()), ElementsAre(3, 0, 7, 4, 11, 8));
  Stack tensors{IValue(x), IValue(std::vector<Tensor>{longs({2}, {1})})};
  op.callBoxed(tensors);
  EXPECT_THAT(valuesOf(tensors[0].toTensor()), ElementsAre(8, 9, 10, 11));
  Stack bad{IValue(x), IValue(std::vector<IValue>{IValue(), IValue(int64_t{1})})};
  EXPECT_THAT(errorOf([&] { op.callBoxed(bad); }),
              HasSubstr("expected a list of optional tensors (Tensor?[]), got "
                        "Int at position 1"));
}

TEST(IndexPut, WritesAccumulatesAndChecks) {
  Tensor x = zeros({3, 4});
  index_put_(x, idx({bools({1, 0, 1}, {3})}), tensorOf({1, 2, 3, 4}, {4}));
  EXPECT_THAT(valuesOf(x), ElementsAre(1, 2, 3, 4, 0, 0, 0, 0, 1, 2, 3, 4));
  // Duplicates add up when accumulating.
  Tensor y = zeros({3});
  index_put_(y, idx({longs({0, 0, 2}, {3})}), tensorOf({1}, {}), true);
  EXPECT_THAT(valuesOf(y), ElementsAre(2, 0, 1));
  // The functional form leaves self alone.
  Tensor z = index_put(y, idx({longs({1}, {1})}), tensorOf({7}, {}));
  EXPECT_THAT(valuesOf(z), ElementsAre(2, 7, 1));
  EXPECT_THAT(valuesOf(y), ElementsAre(2, 0, 1));
  // Values overlapping self are read before the write: x[[1, 0]] = x[[0, 1]].
  Tensor w = tensorOf({1, 2, 3}, {3});
  index_put_(w, idx({longs({1, 0}, {2})}), slice(w, 0, 0, 2));
  EXPECT_THAT(valuesOf(w), ElementsAre(2, 1, 3));
  EXPECT_THAT(errorOf([&] { index_put_(x, idx({longs({0}, {1})}), longs({1}, {})); }),
              HasSubstr("Index put requires the source and destination dtypes "
                        "match, got Float for the destination and Long for the "
                        "source."));
  EXPECT_THAT(errorOf([&] { index_put_(x, idx({longs({0}, {1})}), zeros({3})); }),
              HasSubstr("shape mismatch: value tensor of shape [3] cannot be "
                        "broadcast to indexing result of shape [1, 4]"));
  Tensor expanded = expand(zeros({4}), {3, 4});
  EXPECT_THAT(errorOf([&] {
                index_put_(expanded, idx({longs({0}, {1})}), zeros({}));
              }),
              HasSubstr("more than one element of the written-to tensor"));
  // A failed call leaves self as it was.
  EXPECT_THAT(valuesOf(x), ElementsAre(1, 2, 3, 4, 0, 0, 0, 0, 1, 2, 3, 4));
  // Meta: checks only.
  Tensor m = onMeta(x);
  EXPECT_TRUE(index_put_(m, idx({onMeta(longs({0}, {1}))}), onMeta(zeros({4})))
                  .is_meta());
}

TEST(IndexSelect, ValuesShapesAndErrors) {
  Tensor x = rangeOf({3, 4});
  Tensor r = index_select(x, 1, tensorOf({3, 0}, {2}, ScalarType::Int));
  EXPECT_EQ(dimsOf(r.sizes()), (Dims{3, 2}));
  EXPECT_THAT(valuesOf(r), ElementsAre(3, 0, 7, 4, 11, 8));
  EXPECT_EQ(dimsOf(index_select(x, 0, longs({2}, {})).sizes()), (Dims{1, 4}));
  EXPECT_EQ(dimsOf(index_select(onMeta(x), -1, onMeta(longs({0, 1, 2}, {3})))
                       .sizes()),
            (Dims{3, 3}));
  EXPECT_THAT(errorOf([&] { index_select(x, 0, longs({0}, {1, 1})); }),
              HasSubstr("index_select(): Index is supposed to be a vector"));
  EXPECT_THAT(errorOf([&] { index_select(x, 0, tensorOf({0}, {1})); }),
              HasSubstr("index_select(): Expected dtype int32 or int64 for "
                        "index"));
  EXPECT_THAT(errorOf([&] { index_select(x, 0, longs({3}, {1})); }),
              HasSubstr("index out of range in self"));
  EXPECT_THAT(errorOf([&] { index_select(x, 2, longs({0}, {1})); }),
              HasSubstr("Dimension out of range"));
}

TEST(Nonzero, ColumnMajorIndices) {
  Tensor n = nonzero(tensorOf({0, 1, 2, 0}, {2, 2}));
  EXPECT_EQ(dimsOf(n.sizes()), (Dims{2, 2}));
  EXPECT_EQ(dimsOf(n.strides()), (Dims{1, 2}));  // torch's layout
  EXPECT_THAT(valuesOf(n), ElementsAre(0, 1, 1, 0));
  EXPECT_EQ(dimsOf(nonzero(tensorOf({3}, {})).sizes()), (Dims{1, 0}));
  EXPECT_EQ(dimsOf(nonzero(zeros({3})).sizes()), (Dims{0, 1}));
  std::vector<Tensor> w = where(tensorOf({0, 1, 2, 0}, {2, 2}));
  ASSERT_EQ(w.size(), 2u);
  EXPECT_THAT(valuesOf(w[0]), ElementsAre(0, 1));
  EXPECT_THAT(valuesOf(w[1]), ElementsAre(1, 0));
}

TEST(MaskedFill, InPlaceOutOfPlaceAndErrors) {
  Tensor x = rangeOf({2, 3});
  Tensor mask = bools({1, 0, 1}, {3});
  EXPECT_THAT(valuesOf(masked_fill(x, mask, Scalar(-1.0))),
              ElementsAre(-1, 1, -1, -1, 4, -1));
  EXPECT_THAT(valuesOf(masked_fill(x, mask, tensorOf({9}, {}, ScalarType::Long))),
              ElementsAre(9, 1, 9, 9, 4, 9));
  EXPECT_EQ(dimsOf(masked_fill(tensorOf({1, 2, 3}, {3}), bools({1, 0, 1, 0, 0, 0}, {2, 3}),
                               Scalar(0.0))
                       .sizes()),
            (Dims{2, 3}));
  masked_fill_(x, mask, Scalar(5.0));
  EXPECT_THAT(valuesOf(x), ElementsAre(5, 1, 5, 5, 4, 5));
  EXPECT_THAT(errorOf([&] { masked_fill(x, tensorOf({1, 0, 1}, {3}), Scalar(1)); }),
              HasSubstr("only supports boolean masks"));
  EXPECT_THAT(errorOf([&] { masked_fill(x, mask, tensorOf({1, 2}, {2})); }),
              HasSubstr("only supports a 0-dimensional value tensor, but got "
                        "tensor with 1 dimension(s)."));
  EXPECT_THAT(errorOf([&] { masked_fill_(x, bools({1, 0, 1, 0, 0, 0}, {2, 1, 3}),
                                         Scalar(1)); }),
              HasSubstr("output with shape [2, 3] doesn't match the broadcast "
                        "shape [2, 2, 3]"));
}

// ---- Shape operators --------------------------------------------------------------

TEST(ShapeOps, SplitChunkUnbindAreViews) {
  Tensor x = rangeOf({5, 2});
  std::vector<Tensor> s = split(x, 2);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(dimsOf(s[2].sizes()), (Dims{1, 2}));
  EXPECT_EQ(s[1].storage_offset(), 4);
  EXPECT_TRUE(s[1].storage().is_alias_of(x.storage()));
  std::vector<Tensor> w = split_with_sizes(x, {1, 0, 4}, 0);
  EXPECT_EQ(dimsOf(w[1].sizes()), (Dims{0, 2}));
  EXPECT_EQ(w[2].storage_offset(), 2);
  std::vector<Tensor> c = chunk(x, 2, 1);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(dimsOf(c[1].strides()), (Dims{2, 1}));
  EXPECT_EQ(chunk(zeros({0, 2}), 3).size(), 3u);
  std::vector<Tensor> u = unbind(x, 1);
  ASSERT_EQ(u.size(), 2u);
  EXPECT_THAT(valuesOf(u[1]), ElementsAre(1, 3, 5, 7, 9));
  // Writes through a piece reach the base.
  fill_(s[0], Scalar(-1.0));
  EXPECT_EQ(valuesOf(x)[3], -1);
  // Meta views.
  EXPECT_TRUE(split(onMeta(x), 4)[1].is_meta());
  EXPECT_THAT(errorOf([&] { split(x, -1); }),
              HasSubstr("split expects split_size be non-negative, but got "
                        "split_size=-1"));
  EXPECT_THAT(errorOf([&] { split(x, 0); }),
              HasSubstr("split_size can only be 0 if dimension size is 0, but "
                        "got dimension size of 5"));
  EXPECT_THAT(errorOf([&] { split_with_sizes(x, {1, 1}); }),
              HasSubstr("split_with_sizes expects split_sizes to sum exactly "
                        "to 5 (input tensor's size at dimension 0), but got "
                        "split_sizes=[1, 1]"));
  EXPECT_THAT(errorOf([&] { chunk(x, 0); }),
              HasSubstr("chunk expects `chunks` to be greater than 0, got: 0"));
  EXPECT_THAT(errorOf([&] { unbind(tensorOf({1}, {})); }),
              HasSubstr("Dimension specified as 0 but tensor has no "
                        "dimensions"));
}

TEST(ShapeOps, FlattenDiagonalAsStrided) {
  Tensor x = rangeOf({2, 3, 4});
  EXPECT_EQ(dimsOf(flatten(x).sizes()), (Dims{24}));
  EXPECT_EQ(dimsOf(flatten(x, 1).sizes()), (Dims{2, 12}));
  EXPECT_EQ(dimsOf(flatten(tensorOf({1}, {})).sizes()), (Dims{1}));
  EXPECT_THAT(errorOf([&] { flatten(x, 2, 1); }),
              HasSubstr("start_dim cannot come after end_dim"));
  Tensor m = rangeOf({5, 2});
  Tensor d = diagonal(m, -3);
  EXPECT_EQ(dimsOf(d.sizes()), (Dims{2}));
  EXPECT_EQ(dimsOf(d.strides()), (Dims{3}));
  EXPECT_EQ(d.storage_offset(), 6);
  EXPECT_THAT(valuesOf(d), ElementsAre(6, 9));
  EXPECT_EQ(dimsOf(diagonal(x, 1, 0, 2).sizes()), (Dims{3, 2}));
  EXPECT_EQ(dimsOf(diagonal(m, 5).sizes()), (Dims{0}));
  EXPECT_THAT(errorOf([&] { diagonal(m, 0, 1, -1); }),
              HasSubstr("diagonal dimensions cannot be identical 1, -1"));
  Tensor a = as_strided(m, {2, 2}, {1, 2}, 1);
  EXPECT_THAT(valuesOf(a), ElementsAre(1, 3, 2, 4));
  EXPECT_TRUE(a.storage().is_alias_of(m.storage()));
  EXPECT_THAT(errorOf([&] { as_strided(m, {2}, {1, 1}); }),
              HasSubstr("mismatch in length of strides and shape"));
  EXPECT_THAT(errorOf([&] { as_strided(m, {2}, {-1}); }),
              HasSubstr("Negative strides are not supported"));
  EXPECT_FALSE(errorOf([&] { as_strided(m, {20}, {1}); }).empty());
}

TEST(ShapeOps, OutFormsAndWhereOverloads) {
  Tensor a = rangeOf({2});
  Tensor out = empty({0});
  cat_out({a, a}, 0, out);
  EXPECT_THAT(valuesOf(out), ElementsAre(0, 1, 0, 1));
  stack_out({a, a}, 1, out);
  EXPECT_EQ(dimsOf(out.sizes()), (Dims{2, 2}));
  Tensor wrong = empty({0}, TensorOptions(ScalarType::Long));
  EXPECT_THAT(errorOf([&] { cat_out({a, a}, 0, wrong); }),
              HasSubstr("Expected out tensor to have dtype Float"));
  Tensor c = bools({1, 0}, {2});
  Tensor l = longs({1, 2}, {2});
  EXPECT_EQ(where(c, l, Scalar(0.5)).scalar_type(), ScalarType::Float);
  EXPECT_THAT(valuesOf(where(c, l, Scalar(0.5))), ElementsAre(1, 0.5));
  EXPECT_EQ(where(c, Scalar(int64_t{3}), l).scalar_type(), ScalarType::Long);
  EXPECT_EQ(where(c, Scalar(int64_t{1}), Scalar(int64_t{0})).scalar_type(),
            ScalarType::Long);
  EXPECT_EQ(where(c, Scalar(1.0), Scalar(int64_t{0})).scalar_type(),
            ScalarType::Float);
  EXPECT_EQ(where(c, Scalar(true), Scalar(false)).scalar_type(),
            ScalarType::Bool);
}

// ---- Autograd ----------------------------------------------------------------------

TEST(ShapeAutograd, NodesAndViews) {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(fnName(split(x, 1, 1)[0]), "SplitBackward0");
  EXPECT_EQ(fnName(split_with_sizes(x, {1, 2}, 1)[1]), "SplitWithSizesBackward0");
  EXPECT_EQ(fnName(unbind(x)[0]), "UnbindBackward0");
  EXPECT_EQ(fnName(diagonal(x)), "DiagonalBackward0");
  EXPECT_EQ(fnName(as_strided(x, {2}, {1})), "AsStridedBackward0");
  EXPECT_EQ(fnName(index(x, idx({longs({1}, {1})}))), "IndexBackward0");
  EXPECT_EQ(fnName(index_select(x, 1, longs({1}, {1}))), "IndexSelectBackward0");
  EXPECT_EQ(fnName(masked_fill(x, bools({1, 0, 0}, {3}), Scalar(0.0))),
            "MaskedFillBackward0");
  EXPECT_FALSE(autograd::requiresGrad(nonzero(x)));
  // In place on a leaf that requires grad is refused, as every in-place op.
  EXPECT_THAT(errorOf([&] { index_put_(x, idx({longs({0}, {1})}), zeros({})); }),
              HasSubstr("leaf"));
  // Pieces' gradients add up in the base.
  std::vector<Tensor> p = split(x, 2, 1);
  autograd::backward({sum(mul(p[0], 2.0)), sum(mul(p[1], 3.0))});
  EXPECT_THAT(valuesOf(autograd::grad(x)), ElementsAre(2, 2, 3, 2, 2, 3));
}

TEST(ShapeAutograd, Gradcheck) {
  using autograd::gradcheck;
  Tensor x = rangeOf({3, 4}, ScalarType::Double, 0.37, -1.0);
  Tensor v = rangeOf({4}, ScalarType::Double, 0.5, 1.0);
  autograd::setRequiresGrad(x, true);
  autograd::setRequiresGrad(v, true);
  using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
  const std::vector<std::pair<const char*, Fn>> cases = {
      {"index with repeats",
       [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{
             index(in[0], idx({longs({0, 2, 0}, {3}), longs({1, 1, 3}, {3})}))};
       }},
      {"index with a mask",
       [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{
             index(in[0], idx({std::nullopt, bools({1, 0, 1, 1}, {4})}))};
       }},
      {"index_put",
       [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{
             index_put(in[0], idx({longs({2, 0}, {2})}), in[1])};
       }},
      {"index_put accumulate",
       [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{
             index_put(in[0], idx({longs({2, 2}, {2})}), in[1], true)};
       }},
      {"index_put_ on a copy",
       [](const std::vector<Tensor>& in) {
         Tensor c = clone(in[0]);
         index_put_(c, idx({bools({1, 0, 1}, {3})}), in[1]);
         return std::vector<Tensor>{c};
       }},
      {"index_select",
       [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{index_select(in[0], 1, longs({3, 3, 0}, {3}))};
       }},
      {"masked_fill",
       [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{
             masked_fill(in[0], bools({1, 0, 0, 1}, {4}), select(in[1], 0, 2))};
       }},
      {"masked_fill_ on a copy",
       [](const std::vector<Tensor>& in) {
         Tensor c = mul(in[0], 1.0);
         masked_fill_(c, bools({0, 1, 0}, {3, 1}), Scalar(2.0));
         return std::vector<Tensor>{c};
       }},
      {"split, chunk, unbind",
       [](const std::vector<Tensor>& in) {
         std::vector<Tensor> out = split(in[0], 3, 1);
         for (const Tensor& t : chunk(in[0], 2, 0)) out.push_back(t);
         for (const Tensor& t : unbind(in[0], 1)) out.push_back(mul(t, t));
         return out;
       }},
      {"diagonal, flatten",
       [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{diagonal(in[0], 1), flatten(in[0])};
       }},
      {"as_strided with overlap",
       [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{as_strided(in[0], {3, 3}, {1, 1}, 2)};
       }},
      {"where overloads",
       [](const std::vector<Tensor>& in) {
         Tensor c = bools({1, 0, 1, 0}, {4});
         return std::vector<Tensor>{where(c, in[1], Scalar(2.0)),
                                    where(c, Scalar(1.0), in[1])};
       }},
  };
  for (const auto& [name, fn] : cases) {
    SCOPED_TRACE(name);
    autograd::GradcheckResult r = gradcheck(
        fn, {x, v}, autograd::GradcheckOptions{}.raiseException(false));
    EXPECT_TRUE(r.ok) << r.message;
  }
}

}  // namespace
}  // namespace turnout
