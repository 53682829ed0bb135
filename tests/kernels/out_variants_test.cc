// Tests of kernels/out_variants.cc: the out= overloads made from their
// functional overloads, called through the dispatcher boxed and unboxed
// (as C++ code and the graph executor call them): the out written and
// returned as itself, each out rule's refusal leaving the out as it was,
// the resize warning (and its absence where torch resizes silently), several
// outs, a list of outs, factories, Meta. The values are compared with
// torch 1.13 by tests/python/test_out_variants_torch.py; under ASan this is
// the memory-safety test of the boxed kernel's stack handling.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/core/ivalue.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/operator_handle.h"
#include "dispatcher/stack.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using namespace ::turnout::testing;  // NOLINT
using V = std::vector<double>;
using BinaryOut = Tensor&(const Tensor&, const Tensor&, Tensor&);

template <class Sig>
TypedOperatorHandle<Sig> op(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}
OperatorHandle handle(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

// Collects the warnings given while it lives.
class WarningCollector {
 public:
  WarningCollector()
      : previous_(setWarningHandler(
            [this](const std::string& m) { messages_.push_back(m); })) {}
  ~WarningCollector() { setWarningHandler(previous_); }
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  std::vector<std::string> messages_;
  WarningHandler previous_;
};

TEST(OutVariants, UnboxedCallWritesAndReturnsTheOut) {
  const Tensor a = tensorOf({1, 2, 3, 4}, {2, 2}, ScalarType::Long);
  const Tensor b = tensorOf({1, 0}, {2}, ScalarType::Long);
  Tensor out = emptyTensor({0}, ScalarType::Float, cpu());
  Tensor& r = op<BinaryOut>("aten::eq", "Tensor_out").call(a, b, out);
  EXPECT_EQ(&r, &out);
  EXPECT_EQ(out.scalar_type(), ScalarType::Float);  // bool cast to Float
  EXPECT_EQ(out.sizes(), IntArrayRef({2, 2}));
  EXPECT_EQ(valuesOf(out), (V{1, 0, 0, 0}));
}

TEST(OutVariants, BoxedCallReturnsTheOutItself) {
  const Tensor a = tensorOf({1.5, -2.5}, {2});
  Tensor out = emptyTensor({0}, ScalarType::Float, cpu());
  Stack stack{IValue(a), IValue(Scalar(2.0)), IValue(Scalar(1)), IValue(out)};
  handle("aten::add", "Scalar_out").callBoxed(stack);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_EQ(stack[0].toTensor().unsafeGetTensorImpl(),
            out.unsafeGetTensorImpl());
  EXPECT_EQ(valuesOf(out), (V{3.5, -0.5}));
}

TEST(OutVariants, RefusedDtypeLeavesTheOutAsItWas) {
  struct Case {
    const char* name;
    std::function<void(Tensor&)> call;
    ScalarType out_dtype;
    const char* message;
  };
  const Tensor x = tensorOf({1.5, 2.5, 3.5}, {3});
  const std::vector<Case> cases = {
      {"cast", [&](Tensor& o) {
         op<BinaryOut>("aten::fmod", "Tensor_out").call(x, x, o);
       },
       ScalarType::Long, "can't be cast to the desired output type Long"},
      {"exact", [&](Tensor& o) {
         op<BinaryOut>("aten::mv", "out")
             .call(tensorOf({1, 2, 3, 4, 5, 6}, {2, 3}), x, o);
       },
       ScalarType::Double, "Expected out tensor to have dtype Float"},
      {"bool or byte", [&](Tensor& o) {
         op<Tensor&(const Tensor&, Tensor&)>("aten::all", "all_out").call(x, o);
       },
       ScalarType::Float, "only supports a Bool (or Byte) out tensor"},
      {"floating", [&](Tensor& o) {
         op<Tensor&(const Tensor&, IntArrayRef, bool, Tensor&)>(
             "aten::logsumexp", "out")
             .call(x, {0}, false, o);
       },
       ScalarType::Long, "Expected floating point type"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor out = tensorOf({7, 8, 9, 10}, {4}, c.out_dtype);
    EXPECT_THAT(errorOf([&] { c.call(out); }), HasSubstr(c.message));
    EXPECT_EQ(out.sizes(), IntArrayRef({4}));
    EXPECT_EQ(valuesOf(out), (V{7, 8, 9, 10}));
  }
}

TEST(OutVariants, OutOnAnotherDeviceIsRefused) {
  const Tensor x = tensorOf({1, 2}, {2});
  Tensor out = emptyTensor({0}, ScalarType::Bool, meta());
  EXPECT_THAT(errorOf([&] {
                op<BinaryOut>("aten::lt", "Tensor_out").call(x, x, out);
              }),
              HasSubstr("Expected all tensors to be on the same device"));
}

TEST(OutVariants, MetaInputsGiveAMetaOutItsShape) {
  const Tensor a = emptyTensor({2, 3}, ScalarType::Float, meta());
  const Tensor b = emptyTensor({3}, ScalarType::Float, meta());
  Tensor out = emptyTensor({0}, ScalarType::Float, meta());
  op<BinaryOut>("aten::maximum", "out").call(a, b, out);
  EXPECT_EQ(out.sizes(), IntArrayRef({2, 3}));
  EXPECT_EQ(out.device(), meta());
}

TEST(OutVariants, ResizingAnOutWithElementsWarnsWhereTorchDoes) {
  const Tensor x = tensorOf({1, 2, 3, 4}, {2, 2});
  {
    WarningCollector w;
    Tensor out = emptyTensor({7}, ScalarType::Float, cpu());
    op<BinaryOut>("aten::minimum", "out").call(x, x, out);
    EXPECT_EQ(out.sizes(), IntArrayRef({2, 2}));
    ASSERT_EQ(w.messages().size(), 1u);
    EXPECT_THAT(w.messages()[0], HasSubstr("was resized"));
  }
  {
    WarningCollector w;  // torch's zeros.out resizes without a warning
    Tensor out = tensorOf({5, 5, 5, 5, 5, 5, 5}, {7});
    op<Tensor&(IntArrayRef, Tensor&)>("aten::zeros", "out").call({2, 3}, out);
    EXPECT_EQ(out.sizes(), IntArrayRef({2, 3}));
    EXPECT_EQ(valuesOf(out), (V{0, 0, 0, 0, 0, 0}));
    EXPECT_TRUE(w.messages().empty());
  }
  {
    WarningCollector w;  // the right shape: kept, strides too
    Tensor out = transposed(emptyTensor({2, 2}, ScalarType::Float, cpu()), 0, 1);
    const void* data = out.data_ptr();
    op<BinaryOut>("aten::maximum", "out").call(x, x, out);
    EXPECT_EQ(out.data_ptr(), data);
    EXPECT_EQ(out.strides(), IntArrayRef({1, 2}));
    EXPECT_EQ(valuesOf(out), (V{1, 2, 3, 4}));
    EXPECT_TRUE(w.messages().empty());
  }
}

TEST(OutVariants, FactoryTakesTheOutsDtypeAndDevice) {
  Tensor out = emptyTensor({0}, ScalarType::Int, cpu());
  op<Tensor&(const Scalar&, const Scalar&, const Scalar&, Tensor&)>(
      "aten::arange", "start_out")
      .call(1, 7, 2, out);
  EXPECT_EQ(out.scalar_type(), ScalarType::Int);
  EXPECT_EQ(valuesOf(out), (V{1, 3, 5}));
  Tensor m = emptyTensor({0}, ScalarType::Double, meta());
  op<Tensor&(IntArrayRef, const Scalar&, Tensor&)>("aten::full", "out")
      .call({3}, 2.5, m);
  EXPECT_EQ(m.sizes(), IntArrayRef({3}));
  EXPECT_EQ(m.device(), meta());
  EXPECT_EQ(m.scalar_type(), ScalarType::Double);
}

TEST(OutVariants, SeveralOutsAreEachWrittenAndReturned) {
  const Tensor self = tensorOf({-1, -2, -3, -4, -5, -6}, {2, 3});
  const Tensor target = tensorOf({0, 2}, {2}, ScalarType::Long);
  Tensor output = emptyTensor({0}, ScalarType::Float, cpu());
  Tensor total = emptyTensor({0}, ScalarType::Float, cpu());
  Stack stack{IValue(self),   IValue(target), IValue(),
              IValue(int64_t{1}), IValue(int64_t{-100}), IValue(output),
              IValue(total)};
  handle("aten::nll_loss_forward", "output").callBoxed(stack);
  ASSERT_EQ(stack.size(), 2u);
  EXPECT_EQ(stack[0].toTensor().unsafeGetTensorImpl(),
            output.unsafeGetTensorImpl());
  EXPECT_EQ(stack[1].toTensor().unsafeGetTensorImpl(),
            total.unsafeGetTensorImpl());
  EXPECT_EQ(valuesOf(output), (V{3.5}));  // mean of 1 and 6
  EXPECT_EQ(valuesOf(total), (V{2}));
}

TEST(OutVariants, AListOfOutsNeedsOnePerPiece) {
  const Tensor x = rangeOf({5, 2});
  std::vector<Tensor> outs = {emptyTensor({0}, ScalarType::Float, cpu()),
                              emptyTensor({0}, ScalarType::Float, cpu())};
  Stack bad{IValue(x), IValue(int64_t{2}), IValue(int64_t{0}), IValue(outs)};
  EXPECT_THAT(errorOf([&] {
                handle("aten::unsafe_split", "Tensor_out").callBoxed(bad);
              }),
              HasSubstr("expected 3 out tensors, one per result, but got 2"));
  EXPECT_EQ(outs[0].sizes(), IntArrayRef({0}));
  outs.push_back(emptyTensor({0}, ScalarType::Float, cpu()));
  Stack good{IValue(x), IValue(int64_t{2}), IValue(int64_t{0}), IValue(outs)};
  handle("aten::unsafe_split", "Tensor_out").callBoxed(good);
  EXPECT_TRUE(good.empty());  // returns ()
  EXPECT_EQ(valuesOf(outs[0]), (V{0, 1, 2, 3}));
  EXPECT_EQ(valuesOf(outs[2]), (V{8, 9}));
}

TEST(OutVariants, PartialOverlapWithAnInputIsRefused) {
  Tensor base = tensorOf({1, 2, 3, 4}, {4});
  Tensor out = makeView(base, {3}, {1}, 1);
  const Tensor in = makeView(base, {3}, {1}, 0);
  EXPECT_THAT(errorOf([&] {
                op<BinaryOut>("aten::maximum", "out").call(in, in, out);
              }),
              HasSubstr("single memory location"));
  EXPECT_EQ(valuesOf(base), (V{1, 2, 3, 4}));
}

}  // namespace
}  // namespace turnout
