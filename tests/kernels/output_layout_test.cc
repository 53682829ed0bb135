// The layout of new elementwise outputs (kernels/output_layout.h): a table
// of input layouts with the strides torch 1.13 gives (measured with torch
// 1.13; tests/python/test_elementwise_layout_torch.py compares the
// operators themselves), the inline contiguity shortcut against the full
// rule over many shapes, empty_like's dense strides, and the resize of an
// out= tensor to given strides.
#include "kernels/output_layout.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "dispatcher/core/error.h"
#include "gtest/gtest.h"
#include "kernels/factory_utils.h"
#include "kernels/reduce_utils.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace {

using Dims = std::vector<int64_t>;

// A Meta tensor (no data) with these sizes and strides.
Tensor meta(const Dims& sizes, const Dims& strides) {
  return emptyStridedTensor(sizes, strides, ScalarType::Float,
                            Device(DeviceType::Meta));
}

Dims dims(IntArrayRef r) { return Dims(r.begin(), r.end()); }

struct Operand {
  Dims sizes;
  Dims strides;
  bool scalar = false;  // a Scalar argument (nullptr)
};
Operand scalar() { return {{}, {}, true}; }

Dims stridesFor(const Dims& out_sizes, const std::vector<Operand>& ops) {
  std::vector<Tensor> tensors;
  tensors.reserve(ops.size());
  for (const Operand& o : ops) tensors.push_back(meta(o.sizes, o.strides));
  std::vector<const Tensor*> inputs;
  for (size_t i = 0; i < ops.size(); ++i) {
    inputs.push_back(ops[i].scalar ? nullptr : &tensors[i]);
  }
  return dims(elementwiseOutputStrides(out_sizes, inputs));
}

TEST(OutputLayout, TorchsStridesForATableOfLayouts) {
  struct Case {
    const char* name;
    Dims sizes;
    std::vector<Operand> inputs;
    Dims expected;  // torch 1.13's
  };
  const std::vector<Case> cases = {
      {"transposed, unary", {3, 4}, {{{3, 4}, {1, 3}}}, {1, 3}},
      {"transposed + scalar", {3, 4}, {{{3, 4}, {1, 3}}, scalar()}, {1, 3}},
      {"permuted 3-d", {4, 2, 3}, {{{4, 2, 3}, {1, 12, 4}}, scalar()},
       {1, 12, 4}},
      {"contiguous first decides", {3, 4}, {{{3, 4}, {4, 1}}, {{3, 4}, {1, 3}}},
       {4, 1}},
      {"transposed first decides", {3, 4}, {{{3, 4}, {1, 3}}, {{3, 4}, {4, 1}}},
       {1, 3}},
      {"broadcast row abstains in dim 0", {3, 4},
       {{{4}, {1}}, {{3, 4}, {1, 3}}}, {1, 3}},
      {"expanded (stride 0) abstains", {3, 4},
       {{{3, 4}, {0, 1}}, {{3, 4}, {1, 3}}}, {1, 3}},
      {"expanded alone: contiguous", {3, 4}, {{{3, 4}, {1, 0}}}, {4, 1}},
      {"channels-last, same shape", {2, 3, 4, 5},
       {{{2, 3, 4, 5}, {60, 1, 15, 3}}, {{2, 3, 4, 5}, {60, 1, 15, 3}}},
       {60, 1, 15, 3}},
      {"channels-last + contiguous", {2, 3, 4, 5},
       {{{2, 3, 4, 5}, {60, 1, 15, 3}}, {{2, 3, 4, 5}, {60, 20, 5, 1}}},
       {60, 1, 15, 3}},
      {"contiguous + channels-last", {2, 3, 4, 5},
       {{{2, 3, 4, 5}, {60, 20, 5, 1}}, {{2, 3, 4, 5}, {60, 1, 15, 3}}},
       {60, 20, 5, 1}},
      {"channels-last with an odd size-1 stride, same shape", {2, 3, 1, 5},
       {{{2, 3, 1, 5}, {15, 1, 999, 3}}, {{2, 3, 1, 5}, {15, 1, 999, 3}}},
       {15, 1, 15, 3}},
      {"channels-last with an odd size-1 stride + scalar", {2, 3, 1, 5},
       {{{2, 3, 1, 5}, {15, 1, 999, 3}}, scalar()}, {15, 1, 30, 3}},
      {"C = 1 channels-last + scalar", {2, 1, 4, 5},
       {{{2, 1, 4, 5}, {20, 1, 5, 1}}, scalar()}, {20, 1, 5, 1}},
      {"dense, same strides: kept exactly", {4, 1, 3},
       {{{4, 1, 3}, {1, 100, 4}}}, {1, 100, 4}},
      {"dense + scalar: ordered", {4, 1, 3},
       {{{4, 1, 3}, {1, 100, 4}}, scalar()}, {1, 12, 4}},
      {"contiguous, odd size-1 stride + scalar", {3, 1},
       {{{3, 1}, {1, 100}}, scalar()}, {1, 3}},
      {"contiguous, odd size-1 stride, same shape", {3, 1},
       {{{3, 1}, {1, 100}}, {{3, 1}, {1, 100}}}, {1, 1}},
      {"gaps: ordered", {4, 3}, {{{4, 3}, {1, 8}}}, {1, 4}},
      {"gaps in natural order: contiguous", {4, 3}, {{{4, 3}, {6, 2}}}, {3, 1}},
      {"empty, same shape: contiguous", {3, 0},
       {{{3, 0}, {1, 3}}, {{3, 0}, {1, 3}}}, {1, 1}},
      {"empty + scalar", {3, 0}, {{{3, 0}, {1, 3}}, scalar()}, {1, 3}},
      {"empty 3-d + scalar", {4, 3, 0}, {{{4, 3, 0}, {1, 4, 4}}, scalar()},
       {1, 0, 4}},
      {"empty (0, 1) + scalar: the tie swaps", {0, 1},
       {{{0, 1}, {1, 1}}, scalar()}, {1, 0}},
      {"empty (2, 0, 1) + scalar", {2, 0, 1},
       {{{2, 0, 1}, {1, 1, 1}}, scalar()}, {0, 1, 0}},
      {"one element", {1, 1}, {{{1, 1}, {1, 1}}, scalar()}, {1, 1}},
      {"0-dim", {}, {{{}, {}}, scalar()}, {}},
      {"p + q", {3, 4, 2}, {{{3, 4, 2}, {4, 1, 12}}, {{3, 4, 2}, {2, 6, 1}}},
       {4, 1, 12}},
      {"q + p", {3, 4, 2}, {{{3, 4, 2}, {2, 6, 1}}, {{3, 4, 2}, {4, 1, 12}}},
       {2, 6, 1}},
      {"where: condition first", {3, 4},
       {{{3, 4}, {1, 3}}, {{3, 4}, {4, 1}}, {{3, 4}, {4, 1}}}, {1, 3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(stridesFor(c.sizes, c.inputs), c.expected);
  }
}

// The inline shortcut may only say "contiguous" where the full rule agrees.
TEST(OutputLayout, ShortcutAgreesWithTheFullRule) {
  std::mt19937 rng(7);
  const int64_t kSizes[] = {0, 1, 2, 3};
  int shortcut_taken = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    const int ndim = 1 + static_cast<int>(rng() % 4);
    Dims out(ndim);
    for (int64_t& s : out) s = kSizes[rng() % 4];
    std::vector<Tensor> tensors;
    for (int k = 0; k < 2; ++k) {
      // A contiguous, broadcasting or odd-strided input.
      const int in_ndim = static_cast<int>(rng() % (ndim + 1));
      Dims sizes(out.end() - in_ndim, out.end());
      for (int64_t& s : sizes) {
        if (rng() % 3 == 0) s = 1;
      }
      Dims strides = dims(contiguousStrides(sizes));
      for (size_t d = 0; d < sizes.size(); ++d) {
        if (sizes[d] == 1 && rng() % 2 == 0) strides[d] = rng() % 50;
      }
      if (rng() % 4 == 0 && sizes.size() >= 2) {
        std::swap(strides[0], strides[1]);
      }
      tensors.push_back(meta(sizes, strides));
    }
    const bool with_scalar = rng() % 2 == 0;
    const Tensor* scalar_or_b = with_scalar ? nullptr : &tensors[1];
    const bool shortcut =
        elementwiseOutputIsContiguous(out, {&tensors[0], scalar_or_b});
    if (!shortcut) continue;
    ++shortcut_taken;
    const std::vector<const Tensor*> inputs = {&tensors[0], scalar_or_b};
    EXPECT_EQ(dims(elementwiseOutputStrides(out, inputs)),
              dims(contiguousStrides(out)))
        << "sizes " << shapeString(out) << ", input 0 "
        << shapeString(tensors[0].sizes()) << " / "
        << shapeString(tensors[0].strides());
  }
  EXPECT_GT(shortcut_taken, 500);
}

TEST(OutputLayout, ShortcutNeedsContiguousInputs) {
  const Tensor t = meta({3, 4}, {1, 3});
  const Tensor c = meta({3, 4}, {4, 1});
  EXPECT_FALSE(elementwiseOutputIsContiguous(Dims{3, 4}, {&t}));
  EXPECT_FALSE(elementwiseOutputIsContiguous(Dims{3, 4}, {&c, &t}));
  EXPECT_TRUE(elementwiseOutputIsContiguous(Dims{3, 4}, {&c, &c}));
  EXPECT_TRUE(elementwiseOutputIsContiguous(Dims{3, 4}, {&c, nullptr}));
  // One dimension: one order, whatever the input.
  const Tensor gaps = meta({4}, {2});
  EXPECT_TRUE(elementwiseOutputIsContiguous(Dims{4}, {&gaps}));
}

TEST(OutputLayout, EmptyElementwiseOutputAllocatesTheLayout) {
  const Tensor t = meta({3, 4}, {1, 3});
  const Tensor out = emptyElementwiseOutput(Dims{3, 4}, ScalarType::Double,
                                            Device(DeviceType::Meta), {&t});
  EXPECT_EQ(dims(out.strides()), (Dims{1, 3}));
  EXPECT_EQ(out.scalar_type(), ScalarType::Double);
  const Tensor cpu_out = emptyElementwiseOutput(
      Dims{3, 4}, ScalarType::Float, Device(DeviceType::CPU), {&t, nullptr});
  EXPECT_EQ(dims(cpu_out.strides()), (Dims{1, 3}));
  EXPECT_GE(cpu_out.storage().nbytes(), 12 * sizeof(float));
}

TEST(OutputLayout, DenseStridesInOrderAsEmptyLike) {
  struct Case {
    Dims sizes, strides, expected;  // torch 1.13's empty_like
  };
  const std::vector<Case> cases = {
      {{4, 3}, {6, 2}, {3, 1}},
      {{4, 3}, {1, 8}, {1, 4}},
      {{4, 2, 3}, {2, 24, 8}, {1, 12, 4}},
      {{3, 4}, {0, 1}, {4, 1}},
      {{3, 4}, {1, 0}, {4, 1}},
      {{4, 3}, {0, 1}, {3, 1}},
      {{3, 4}, {1, 2}, {1, 3}},  // overlapping
      {{2, 3, 4, 5}, {120, 2, 30, 6}, {60, 1, 15, 3}},
      {{4, 1, 3}, {2, 100, 8}, {1, 12, 4}},  // size 1: multiplies nothing
      {{4, 1, 3}, {2, 1, 8}, {1, 1, 4}},
      {{5}, {3}, {1}},
      {{}, {}, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(shapeString(c.sizes) + " / " + shapeString(c.strides));
    EXPECT_EQ(dims(denseStridesInOrder(c.sizes, c.strides)), c.expected);
  }
}

TEST(OutputLayout, ResizeOutputToStrides) {
  Tensor out = emptyTensor(Dims{0}, ScalarType::Float, Device(DeviceType::CPU));
  reduce_internal::resizeOutput(out, Dims{3, 4}, Dims{1, 3}, "test.out");
  EXPECT_EQ(dims(out.sizes()), (Dims{3, 4}));
  EXPECT_EQ(dims(out.strides()), (Dims{1, 3}));
  EXPECT_GE(out.storage().nbytes(), 12 * sizeof(float));
  // The right sizes already: its own strides stay.
  reduce_internal::resizeOutput(out, Dims{3, 4}, Dims{4, 1}, "test.out");
  EXPECT_EQ(dims(out.strides()), (Dims{1, 3}));

  const Tensor t = meta({4, 2, 3}, {1, 12, 4});
  Tensor m = emptyTensor(Dims{0}, ScalarType::Float, Device(DeviceType::Meta));
  reduce_internal::resizeElementwiseOutput(m, Dims{4, 2, 3}, {&t, nullptr},
                                           "test.out");
  EXPECT_EQ(dims(m.strides()), (Dims{1, 12, 4}));
  const Tensor c = meta({4, 2, 3}, {6, 3, 1});
  Tensor m2 = emptyTensor(Dims{0}, ScalarType::Float, Device(DeviceType::Meta));
  reduce_internal::resizeElementwiseOutput(m2, Dims{4, 2, 3}, {&c, &t},
                                           "test.out");
  EXPECT_TRUE(m2.is_contiguous());
}

TEST(OutputLayout, ResizeToStridesRefusesAStorageThatCannotGrow) {
  float data[2] = {7, 8};
  Storage storage(make_intrusive<StorageImpl>(
      sizeof(data), DataPtr(data, Device(DeviceType::CPU)),
      /*allocator=*/nullptr, /*resizable=*/false));
  Tensor out(make_intrusive<TensorImpl, UndefinedTensorImpl>(
      std::move(storage), ScalarType::Float, Device(DeviceType::CPU)));
  out.unsafeGetTensorImpl()->set_sizes_contiguous({2});
  try {
    reduce_internal::resizeOutput(out, Dims{3, 4}, Dims{1, 3}, "test.out");
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "test.out: Trying to resize storage that is not resizable "
                  "(out has shape [2], needs [3, 4])"),
              std::string::npos)
        << e.what();
  }
  // Unchanged.
  EXPECT_EQ(dims(out.sizes()), (Dims{2}));
  EXPECT_EQ(dims(out.strides()), (Dims{1}));
  EXPECT_EQ(out.data_ptr<float>()[1], 8.0f);
}

}  // namespace
}  // namespace turnout
