// View and shape operators: sizes, strides and storage sharing on CPU and
// Meta, values through views, reshape's copy, cat/stack, and errors.
#include "kernels/shape.h"

#include <functional>
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

using ::testing::HasSubstr;
using testing::tensorOf;
using testing::valuesOf;
using testing::vec;
using Dims = std::vector<int64_t>;

using testing::errorOf;
using testing::expectErrors;

Tensor range6() { return tensorOf({0, 1, 2, 3, 4, 5}, {2, 3}); }

TEST(Views, SizesStridesOffsetsOnCpuAndMeta) {
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&)> f;  // on a [2, 3] tensor
    Dims sizes;
    Dims strides;
    int64_t offset;
  };
  const std::vector<Case> cases = {
      {"view",
       [](const Tensor& x) {
         return view(x, {3, -1});
       },
       {3, 2},
       {2, 1},
       0},
      {"t", [](const Tensor& x) { return t(x); }, {3, 2}, {1, 3}, 0},
      {"transpose",
       [](const Tensor& x) { return transpose(x, -1, 0); },
       {3, 2},
       {1, 3},
       0},
      {"permute",
       [](const Tensor& x) {
         return permute(x, {1, 0});
       },
       {3, 2},
       {1, 3},
       0},
      {"expand",
       [](const Tensor& x) {
         return expand(x, {4, 2, -1});
       },
       {4, 2, 3},
       {0, 3, 1},
       0},
      {"unsqueeze",
       [](const Tensor& x) { return unsqueeze(x, 1); },
       {2, 1, 3},
       {3, 3, 1},
       0},
      {"unsqueeze end",
       [](const Tensor& x) { return unsqueeze(x, -1); },
       {2, 3, 1},
       {3, 1, 1},
       0},
      {"squeeze no-op",
       [](const Tensor& x) { return squeeze(x, 0); },
       {2, 3},
       {3, 1},
       0},
      {"squeeze",
       [](const Tensor& x) { return squeeze(unsqueeze(x, 0), 0); },
       {2, 3},
       {3, 1},
       0},
      {"slice",
       [](const Tensor& x) { return slice(x, 1, 1, std::nullopt); },
       {2, 2},
       {3, 1},
       1},
      {"slice step",
       [](const Tensor& x) { return slice(x, 1, 0, 100, 2); },
       {2, 2},
       {3, 2},
       0},
      {"slice negative",
       [](const Tensor& x) { return slice(x, 1, -2, -1); },
       {2, 1},
       {3, 1},
       1},
      {"slice empty",
       [](const Tensor& x) { return slice(x, 0, 2, 1); },
       {0, 3},
       {3, 1},
       6},
      {"select", [](const Tensor& x) { return select(x, 0, 1); }, {3}, {1}, 3},
      {"select negative",
       [](const Tensor& x) { return select(x, 1, -1); },
       {2},
       {3},
       2},
      {"detach", [](const Tensor& x) { return detach(x); }, {2, 3}, {3, 1}, 0},
      {"alias", [](const Tensor& x) { return alias(x); }, {2, 3}, {3, 1}, 0},
  };
  for (const char* device : {"cpu", "meta"}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.name) + " on " + device);
      Tensor x =
          device == std::string("cpu") ? range6() : empty({2, 3}, "meta");
      Tensor v = c.f(x);
      EXPECT_EQ(vec(v.sizes()), c.sizes);
      EXPECT_EQ(vec(v.strides()), c.strides);
      EXPECT_EQ(v.storage_offset(), c.offset);
      EXPECT_EQ(v.device(), x.device());
      EXPECT_TRUE(v.storage().is_alias_of(x.storage()));
    }
  }
}

TEST(Views, WritesThroughAViewAreSeenByTheBase) {
  Tensor x = range6();
  fill_(select(t(x), 0, 1), 9);  // t(x)[1] is x[:, 1]
  fill_(slice(x, 1, 2), -1);     // x[:, 2:]
  EXPECT_EQ(valuesOf(x), (std::vector<double>{0, 9, -1, 3, 9, -1}));
  EXPECT_EQ(valuesOf(t(x)), (std::vector<double>{0, 3, 9, 9, -1, -1}));
  EXPECT_EQ(valuesOf(expand(select(x, 0, 0), {2, 3})),
            (std::vector<double>{0, 9, -1, 0, 9, -1}));
}

TEST(Views, ZeroDimAndEmpty) {
  Tensor s = full({}, 3.0);
  EXPECT_EQ(t(s).dim(), 0);
  EXPECT_EQ(vec(unsqueeze(s, 0).sizes()), Dims{1});
  EXPECT_EQ(squeeze(s, -1).dim(), 0);
  EXPECT_EQ(vec(view(s, {1, 1}).sizes()), (Dims{1, 1}));
  EXPECT_EQ(vec(expand(s, {2, 2}).strides()), (Dims{0, 0}));
  Tensor e = zeros({0, 4});
  EXPECT_EQ(vec(view(e, {4, 0}).sizes()), (Dims{4, 0}));
  EXPECT_EQ(vec(reshape(e, {2, 0, 2}).sizes()), (Dims{2, 0, 2}));
}

TEST(View, StridesOfNonContiguousInputs) {
  // Merging the dims of a slice along the last dim is impossible; splitting
  // a dim of a transposed tensor is fine.
  Tensor x = zeros({4, 6});
  Tensor tx = t(x);  // [6, 4] strides [1, 6]
  EXPECT_EQ(vec(view(tx, {2, 3, 4}).strides()), (Dims{3, 1, 6}));
  EXPECT_EQ(vec(view(unsqueeze(tx, 1), {6, 2, 2}).strides()), (Dims{1, 12, 6}));
  EXPECT_THAT(errorOf([&] { view(tx, {24}); }),
              HasSubstr("view size is not compatible with input tensor's size "
                        "and stride (at least one dimension spans across two "
                        "contiguous subspaces). Use .reshape(...) instead."));
}

TEST(Reshape, ViewsWhenPossibleElseCopies) {
  Tensor x = range6();
  Tensor v = reshape(x, {3, 2});
  EXPECT_TRUE(v.storage().is_alias_of(x.storage()));
  Tensor c = reshape(t(x), {6});
  EXPECT_FALSE(c.storage().is_alias_of(x.storage()));
  EXPECT_EQ(valuesOf(c), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  Tensor m = reshape(t(empty({2, 3}, "meta")), {-1});
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(vec(m.sizes()), Dims{6});
}

TEST(Contiguous, ReturnsSelfOrACopy) {
  Tensor x = range6();
  EXPECT_TRUE(contiguous(x).is_same(x));
  Tensor c = contiguous(t(x));
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(valuesOf(c), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  Tensor n = zeros({2, 3, 4, 5});
  Tensor cl = contiguous(n, MemoryFormat::ChannelsLast);
  EXPECT_EQ(vec(cl.strides()), (Dims{60, 1, 15, 3}));
  EXPECT_TRUE(contiguous(cl, MemoryFormat::ChannelsLast).is_same(cl));
}

TEST(Cat, ValuesDtypesAndMeta) {
  Tensor a = tensorOf({1, 2, 3, 4}, {2, 2}, kInt);
  Tensor b = tensorOf({5, 6}, {2, 1}, kDouble);
  Tensor c = cat({a, b}, 1);
  EXPECT_EQ(c.scalar_type(), kDouble);
  EXPECT_EQ(vec(c.sizes()), (Dims{2, 3}));
  EXPECT_EQ(valuesOf(c), (std::vector<double>{1, 2, 5, 3, 4, 6}));
  EXPECT_EQ(valuesOf(cat({a, t(a)}, 0)),
            (std::vector<double>{1, 2, 3, 4, 1, 3, 2, 4}));
  // 1-d empty tensors are skipped (PyTorch 1.13).
  EXPECT_EQ(vec(cat({a, zeros({0}, kInt)}, -1).sizes()), (Dims{2, 2}));
  Tensor m = cat({empty({2, 3}, "meta"), empty({4, 3}, "meta")});
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(vec(m.sizes()), (Dims{6, 3}));
}

TEST(Stack, NewDimension) {
  Tensor a = tensorOf({1, 2}, {2});
  Tensor b = tensorOf({3, 4}, {2});
  EXPECT_EQ(valuesOf(stack({a, b})), (std::vector<double>{1, 2, 3, 4}));
  Tensor s1 = stack({a, b}, 1);
  EXPECT_EQ(vec(s1.sizes()), (Dims{2, 2}));
  EXPECT_EQ(valuesOf(s1), (std::vector<double>{1, 3, 2, 4}));
  EXPECT_EQ(vec(stack({empty({2}, "meta")}, -1).sizes()), (Dims{2, 1}));
}

TEST(Shape, Errors) {
  struct Case {
    const char* name;
    std::function<void()> f;
    const char* message;
  };
  Tensor x = range6();
  const std::vector<Case> cases = {
      {"view numel",
       [&] {
         view(x, {2, 5});
       },
       "shape '[2, 5]' is invalid for input of size 6"},
      {"view two -1",
       [&] {
         view(x, {-1, -1});
       },
       "only one dimension can be inferred"},
      {"view meta numel", [&] { view(empty({6}, "meta"), {4}); },
       "shape '[4]' is invalid for input of size 6"},
      {"t 3d",
       [&] {
         t(zeros({1, 2, 3}));
       },
       "t() expects a tensor with <= 2 dimensions, but self is 3D"},
      {"transpose dim", [&] { transpose(x, 0, 2); },
       "Dimension out of range (expected to be in range of [-2, 1], but got "
       "2)"},
      {"permute length", [&] { permute(x, {0}); },
       "input.dim() = 2 is not equal to len(dims) = 1"},
      {"permute dup",
       [&] {
         permute(x, {1, 1});
       },
       "permute(): duplicate dims are not allowed."},
      {"expand fewer", [&] { expand(x, {3}); },
       "expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes "
       "provided (1) must be greater or equal to the number of dimensions in "
       "the tensor (2)"},
      {"expand mismatch",
       [&] {
         expand(x, {2, 4});
       },
       "The expanded size of the tensor (4) must match the existing size (3) "
       "at non-singleton dimension 1.  Target sizes: [2, 4].  Tensor sizes: "
       "[2, 3]"},
      {"expand leading -1",
       [&] {
         expand(x, {-1, 2, 3});
       },
       "The expanded size of the tensor (-1) isn't allowed in a leading, "
       "non-existing dimension 0"},
      {"slice 0-dim", [&] { slice(zeros({}), 0); },
       "slice() cannot be applied to a 0-dim tensor."},
      {"slice step", [&] { slice(x, 0, 0, 1, 0); },
       "slice step must be positive"},
      {"select range", [&] { select(x, 1, 3); },
       "select(): index 3 out of range for tensor of size [2, 3] at dimension "
       "1"},
      {"select 0-dim", [&] { select(zeros({}), 0, 0); },
       "select() cannot be applied to a 0-dim tensor."},
      {"unsqueeze dim", [&] { unsqueeze(x, 3); }, "Dimension out of range"},
      // No tensor to dispatch on: the dispatcher says so (cat has backend
      // kernels only, as in PyTorch).
      {"cat empty", [&] { cat({}); }, "Could not run 'aten::cat'"},
      {"cat sizes",
       [&] {
         cat({x, zeros({3, 3})}, 1);
       },
       "Sizes of tensors must match except in dimension 1. Expected size 2 but "
       "got size 3 for tensor number 1 in the list."},
      {"cat ndim",
       [&] {
         cat({x, zeros({3})});
       },
       "Tensors must have same number of dimensions: got 2 and 1"},
      {"cat 0-dim", [&] { cat({zeros({})}); },
       "zero-dimensional tensor (at position 0) cannot be concatenated"},
      {"cat devices",
       [&] {
         cat({x, empty({2, 3}, "meta")});
       },
       "Expected all tensors to be on the same device, but found at least two "
       "devices, cpu and meta!"},
      {"stack sizes",
       [&] {
         stack({zeros({2}), zeros({3})});
       },
       "stack expects each tensor to be equal size, but got [2] at entry 0 and "
       "[3] at entry 1"},
      {"stack empty", [&] { stack({}); },
       "stack expects a non-empty TensorList"},
      {"contiguous preserve", [&] { contiguous(x, MemoryFormat::Preserve); },
       "preserve memory format is unsupported by the contiguous operator"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(errorOf(c.f), HasSubstr(c.message));
  }
}

TEST(Shape, BoxedSliceWithNoneBounds) {
  Tensor x = range6();
  Stack stack{IValue(x), IValue(1), IValue(), IValue(2), IValue(1)};
  Dispatcher::singleton()
      .findSchemaOrThrow("aten::slice", "Tensor")
      .callBoxed(stack);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_EQ(valuesOf(stack[0].toTensor()), (std::vector<double>{0, 1, 3, 4}));
}

// Views whose sizes overflow int64 are errors (ones(2, 3).expand(2^62, 2,
// 3) used to have numel -2^63 and sum to 0); views of large but valid
// sizes still work.
TEST(Shape, OverflowingSizesAreErrors) {
  constexpr int64_t k31 = int64_t{1} << 31;
  constexpr int64_t k62 = int64_t{1} << 62;
  const Tensor x = tensorOf({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor m = testing::metaTensor({2, 3});
  const Tensor one = tensorOf({1}, {1});
  expectErrors(ErrorKind::InvalidArgument, {
      {"expand", [&] { expand(x, {k62, 2, 3}); },
       "expand(torch.FloatTensor{[2, 3]}, size=[4611686018427387904, 2, 3]): "
       "the number of elements of the expanded sizes [4611686018427387904, "
       "2, 3] overflows int64"},
      {"expand meta", [&] { expand(m, {k62 / 2, 2, 3}); }, "overflows int64"},
      {"expand a zero too late", [&] { expand(slice(view(x, {2, 3, 1}), 2, 0, 0),
                                              {k62, k62, 2, 3, 0}); },
       "overflows int64"},
      {"view", [&] { view(x, {k31, k31, k31}); },
       "shape '[2147483648, 2147483648, 2147483648]' is invalid for input of "
       "size 6"},
      {"view inferred", [&] { view(x, {k31, k31, k31, -1}); },
       "is invalid for input of size 6"},
      {"reshape", [&] { reshape(x, {k31, k31, k31}); },
       "is invalid for input of size 6"},
      {"cat", [&] {
         const Tensor big = expand(one, {std::numeric_limits<int64_t>::max()});
         cat({big, one});
       },
       "cat(): the size of the result in dimension 0 (the sum of the inputs' "
       "sizes there) overflows int64 at tensor number 1 in the list"},
  });
  const Tensor big = expand(x, {int64_t{1} << 40, 2, 3});
  EXPECT_EQ(big.numel(), int64_t{6} << 40);
  EXPECT_EQ(view(expand(one, {k62}), {-1}).numel(), k62);
  // A huge slice step: one element, no overflow of the stride.
  const Tensor s = slice(x, 1, 0, std::nullopt, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(s.sizes(), IntArrayRef({2, 1}));
  EXPECT_EQ(valuesOf(s), (std::vector<double>{1, 4}));
}

}  // namespace
}  // namespace turnout
