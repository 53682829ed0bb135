// copy_, fill_.Scalar, clone, _to_copy, to.dtype, to.device: CPU values,
// dtype conversion, broadcasting, strided and overlapping operands, Meta.
#include "kernels/copy.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/core/ivalue.h"
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

using testing::errorOf;
using testing::rangeOf;

TEST(Copy, ConvertsBetweenEveryPairOfDtypes) {
  for (ScalarType from : kAllScalarTypes) {
    for (ScalarType into : kAllScalarTypes) {
      SCOPED_TRACE(std::string(toString(from)) + " -> " + toString(into));
      Tensor src = tensorOf({0, 1, 2, 3}, {4}, from);
      Tensor dst = zeros({4}, into);
      copy_(dst, src);
      std::vector<double> want = {0, 1, 2, 3};
      if (from == kBool || into == kBool) want = {0, 1, 1, 1};
      EXPECT_EQ(valuesOf(dst), want);
    }
  }
}

TEST(Copy, TruncatesFloatToIntAndKeepsHalfPrecision) {
  Tensor dst = zeros({3}, kLong);
  copy_(dst, tensorOf({1.9, -1.9, 2.5}, {3}, kDouble));
  EXPECT_EQ(valuesOf(dst), (std::vector<double>{1, -1, 2}));
  Tensor h = zeros({1}, kHalf);
  copy_(h, tensorOf({1.0 / 3}, {1}, kDouble));
  EXPECT_EQ(valuesOf(h)[0], 0.333251953125);
}

TEST(Copy, BroadcastsAndWritesThroughStridedViews) {
  Tensor dst = zeros({2, 3});
  copy_(dst, tensorOf({1, 2, 3}, {3}));
  EXPECT_EQ(valuesOf(dst), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  // Into a transposed view: the base sees the transposed values.
  Tensor base = zeros({3, 2});
  copy_(t(base), tensorOf({1, 2, 3, 4, 5, 6}, {2, 3}));
  EXPECT_EQ(valuesOf(base), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  // From a strided slice.
  Tensor src = tensorOf({0, 1, 2, 3, 4, 5}, {6}, kLong);
  Tensor out = zeros({3}, kInt);
  copy_(out, slice(src, 0, 1, std::nullopt, 2));
  EXPECT_EQ(valuesOf(out), (std::vector<double>{1, 3, 5}));
}

// As PyTorch: a source that partially overlaps the destination (both dense)
// is an error; the same memory in the same layout is a no-op; layouts with
// gaps, whose overlap is not computed, go through a temporary.
TEST(Copy, OverlappingSourceAndDestination) {
  struct Case {
    const char* name;
    std::function<void(const Tensor&)> copy;  // on y = [0, 1, ..., 7]
  };
  const std::vector<Case> raising = {
      {"transposed", [](const Tensor& y) {
         Tensor x = view(y, {2, 2, 2});
         copy_(x, transpose(x, 0, 2));
       }},
      {"shift right", [](const Tensor& y) {
         copy_(slice(y, 0, 1), slice(y, 0, 0, 7));
       }},
      {"0-dim inside", [](const Tensor& y) {
         copy_(slice(y, 0, 0, 4), select(y, 0, 2));
       }},
      {"other dtype", [](const Tensor& y) {
         Tensor l = tensorOf({0, 1, 2, 3, 4, 5, 6, 7}, {8}, kLong);
         copy_(slice(l, 0, 1), slice(l, 0, 0, 7));
       }},
  };
  for (const Case& c : raising) {
    SCOPED_TRACE(c.name);
    Tensor y = rangeOf({8});
    EXPECT_EQ(errorOf([&] { c.copy(y); }),
              "copy_(): unsupported operation: some elements of the input "
              "tensor and the written-to tensor refer to a single memory "
              "location. Please clone() the tensor before performing the "
              "operation.");
    EXPECT_EQ(valuesOf(y), valuesOf(rangeOf({8})));  // nothing written
  }
  Tensor y = rangeOf({8});
  copy_(y, y);
  copy_(slice(y, 0, 1), slice(y, 0, 1));  // another view of the same
  copy_(slice(y, 0, 0, 4), slice(y, 0, 4));  // disjoint
  EXPECT_EQ(valuesOf(y), (std::vector<double>{4, 5, 6, 7, 4, 5, 6, 7}));
  // Every other element, shifted by one of them: gaps, so not computed;
  // read from a temporary, each gets its old neighbour.
  Tensor z = rangeOf({8});
  Tensor even = slice(z, 0, 0, std::nullopt, 2);
  copy_(slice(even, 0, 1), slice(even, 0, 0, 3));
  EXPECT_EQ(valuesOf(z), (std::vector<double>{0, 1, 0, 3, 2, 5, 4, 7}));
  // Meta: the same check, by storage offsets.
  Tensor m = testing::metaTensor({8});
  EXPECT_THAT(errorOf([&] { copy_(slice(m, 0, 1), slice(m, 0, 0, 7)); }),
              HasSubstr("some elements of the input tensor and the "
                        "written-to tensor refer to a single memory"));
}

TEST(Copy, Errors) {
  struct Case {
    const char* name;
    std::function<void()> f;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"shape", [] { copy_(zeros({2}), zeros({3})); },
       "The size of tensor a (2) must match the size of tensor b (3)"},
      {"broadcast grows",
       [] {
         copy_(zeros({2}), zeros({2, 2}));
       },
       "output with shape [2] doesn't match the broadcast shape [2, 2]"},
      {"expanded destination",
       [] { copy_(expand(zeros({1}), {3}), zeros({3})); },
       "more than one element of the written-to tensor refers to a single"},
      {"out of meta", [] { copy_(zeros({2}), zeros({2}, "meta")); },
       "Cannot copy out of meta tensor; no data!"},
      {"fill overflow", [] { fill_(zeros({2}, kChar), 300); },
       "fill_(): value 300 cannot be converted to type Char without overflow"},
      {"fill nan to int", [] { fill_(zeros({2}, kInt), NAN); },
       "cannot be converted to type Int"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(errorOf(c.f), HasSubstr(c.message));
  }
}

TEST(Copy, MetaChecksShapesAndCopiesNothing) {
  Tensor m = empty({2, 3}, "meta");
  EXPECT_TRUE(copy_(m, zeros({3})).is_same(m));
  EXPECT_THAT(errorOf([&] { copy_(m, zeros({4})); }),
              HasSubstr("must match the size of tensor b (4)"));
  // -1 .. -255 wrap into Byte, as torch's fill_; -256 does not fit.
  EXPECT_THAT(errorOf([&] {
                fill_(empty({2}, TensorOptions(kByte).device("meta")), -256);
              }),
              HasSubstr("cannot be converted to type Byte"));
}

TEST(Fill, EveryDtypeContiguousAndStrided) {
  for (ScalarType dt : kAllScalarTypes) {
    SCOPED_TRACE(toString(dt));
    Tensor x = zeros({2, 3}, dt);
    fill_(x, 1);
    EXPECT_EQ(valuesOf(x), std::vector<double>(6, 1));
    fill_(select(x, 1, 2), 0);  // a strided column
    EXPECT_EQ(valuesOf(x), (std::vector<double>{1, 1, 0, 1, 1, 0}));
  }
  Tensor s = zeros({});
  fill_(s, 2.5);
  EXPECT_EQ(valuesOf(s), std::vector<double>{2.5});
  Tensor e = zeros({0, 3});
  fill_(e, 1);  // nothing to do
  EXPECT_EQ(e.numel(), 0);
}

TEST(Clone, CopiesAndPreservesDenseStrides) {
  Tensor x = tensorOf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor c = clone(x);
  EXPECT_FALSE(c.storage().is_alias_of(x.storage()));
  fill_(x, 0);
  EXPECT_EQ(valuesOf(c), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  Tensor tt = t(tensorOf({1, 2, 3, 4, 5, 6}, {2, 3}));
  EXPECT_EQ(vec(clone(tt).strides()), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(vec(clone(tt, MemoryFormat::Contiguous).strides()),
            (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(valuesOf(clone(tt, MemoryFormat::Contiguous)),
            (std::vector<double>{1, 4, 2, 5, 3, 6}));
  // Not dense (a slice with gaps): contiguous.
  Tensor gaps = slice(zeros({4, 4}), 1, 0, 4, 2);
  EXPECT_EQ(vec(clone(gaps).strides()), (std::vector<int64_t>{2, 1}));
  Tensor meta = clone(empty({2, 3}, "meta"));
  EXPECT_TRUE(meta.is_meta());
  EXPECT_EQ(vec(meta.sizes()), (std::vector<int64_t>{2, 3}));
}

TEST(To, DtypeReturnsSelfWhenNothingChanges) {
  Tensor x = tensorOf({1.5, -2.5}, {2});
  EXPECT_TRUE(to(x, kFloat).is_same(x));
  EXPECT_FALSE(to(x, kFloat, false, /*copy=*/true).is_same(x));
  Tensor l = to(x, kLong);
  EXPECT_EQ(l.scalar_type(), kLong);
  EXPECT_EQ(valuesOf(l), (std::vector<double>{1, -2}));
}

TEST(To, DeviceCpuAndMeta) {
  Tensor x = tensorOf({1, 2}, {2});
  EXPECT_TRUE(to(x, Device("cpu")).is_same(x));
  Tensor m = to(x, Device("meta"));
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.scalar_type(), kFloat);
  Tensor md = to(x, Device("meta"), kDouble);
  EXPECT_EQ(md.scalar_type(), kDouble);
  EXPECT_THAT(errorOf([&] { to(m, Device("cpu")); }),
              HasSubstr("Cannot copy out of meta tensor"));
  Tensor c = _to_copy(x);
  EXPECT_FALSE(c.is_same(x));
  EXPECT_EQ(valuesOf(c), (std::vector<double>{1, 2}));
}

TEST(To, DeviceWithoutKernelsFailsInTheDispatcher) {
  // No CUDA allocator here: the allocation fails, naming the device type.
  Tensor x = tensorOf({1, 2}, {2});
  EXPECT_THROW(to(x, Device("cuda")), Error);
}

TEST(Copy, BoxedCallReturnsSelf) {
  Tensor x = zeros({2});
  Tensor src = tensorOf({4, 5}, {2});
  Stack stack{IValue(x), IValue(src), IValue(false)};
  Dispatcher::singleton().findSchemaOrThrow("aten::copy_", "").callBoxed(stack);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_TRUE(stack[0].toTensor().is_same(x));
  EXPECT_EQ(valuesOf(x), (std::vector<double>{4, 5}));
}

}  // namespace
}  // namespace turnout
