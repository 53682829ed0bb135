// kernels/aliases.cc and resize_as_ (misc_ops.cc): an alias computes what
// its target computes, called unboxed and boxed, its defaults are its own
// (special_round's decimals=0), its kernel is CompositeImplicitAutograd;
// resize_as_ takes the template's sizes and memory format.
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dispatcher/dispatcher.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/unary_math.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using namespace ::turnout::testing;  // NOLINT

template <class Sig>
TypedOperatorHandle<Sig> op(const char* name, const char* overload = "") {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

TEST(Aliases, ComputeTheirTargets) {
  const Tensor x = tensorOf({0.25, -0.5, 0.75}, {3}, ScalarType::Double);
  using Unary = Tensor(const Tensor&);
  const std::vector<std::pair<const char*, Tensor (*)(const Tensor&)>> cases = {
      {"aten::arccos", acos},
      {"aten::arcsinh", asinh},
      {"aten::fix", trunc},
      {"aten::special_psi", digamma},
      {"aten::special_gammaln", lgamma},
      {"aten::special_expm1", expm1}};
  for (const auto& [name, target] : cases) {
    SCOPED_TRACE(name);
    EXPECT_EQ(valuesOf(op<Unary>(name).call(x)), valuesOf(target(x)));
    // Boxed: the target's result on the stack.
    Stack stack{IValue(x)};
    Dispatcher::singleton().findSchemaOrThrow(name, "").callBoxed(stack);
    ASSERT_EQ(stack.size(), 1u);
    EXPECT_EQ(valuesOf(stack[0].toTensor()), valuesOf(target(x)));
    EXPECT_THAT(Dispatcher::singleton().findSchemaOrThrow(name, "").dumpState(),
                HasSubstr("CompositeImplicitAutograd"));
  }
  // In place and out=: the alias returns self / out.
  Tensor y = clone(x);
  const Tensor& r = op<Tensor&(Tensor&)>("aten::arccos_").call(y);
  EXPECT_TRUE(r.is_same(y));
  EXPECT_EQ(valuesOf(y), valuesOf(acos(x)));
  Tensor out = emptyTensor({0}, ScalarType::Double, cpu());
  op<Tensor&(int64_t, const Tensor&, Tensor&)>("aten::special_polygamma", "out")
      .call(2, x, out);
  EXPECT_EQ(valuesOf(out), valuesOf(polygamma(2, x)));
}

TEST(Aliases, DefaultsAndErrorsAreTheirOwnAndTheTargets) {
  // special_round's decimals defaults to 0 (round.decimals' has no
  // default); a boxed caller passes it, as c10's callers do.
  const OperatorHandle round =
      Dispatcher::singleton().findSchemaOrThrow("aten::special_round", "");
  std::ostringstream schema;
  schema << round.schema();
  EXPECT_THAT(schema.str(), HasSubstr("*, int decimals=0)"));
  const Tensor x = tensorOf({1.25, 2.5, -0.5}, {3}, ScalarType::Double);
  Stack stack{IValue(x), IValue(int64_t{0})};
  round.callBoxed(stack);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_EQ(valuesOf(stack[0].toTensor()), (std::vector<double>{1, 2, -0.0}));
  // A stack too short is refused before the alias's kernel runs.
  Stack short_stack{IValue(x)};
  EXPECT_THAT(errorOf([&] { round.callBoxed(short_stack); }),
              HasSubstr("takes 2 arguments"));
  EXPECT_THAT(errorOf([&] {
                op<Tensor(int64_t, const Tensor&)>("aten::special_polygamma")
                    .call(-1, x);
              }),
              HasSubstr("polygamma(n, x) does not support negative n."));
}

TEST(ResizeAs, SizesAndMemoryFormats) {
  using Sig = Tensor&(Tensor&, const Tensor&, std::optional<MemoryFormat>);
  const auto resize_as = op<Sig>("aten::resize_as_");
  Tensor a = rangeOf({6});
  const Tensor t = emptyTensor({2, 3}, ScalarType::Long, cpu());
  EXPECT_TRUE(resize_as.call(a, t, std::nullopt).is_same(a));
  EXPECT_EQ(sizesOf(a), sizesOf(t));
  EXPECT_EQ(a.scalar_type(), ScalarType::Float);  // its own dtype stays
  EXPECT_EQ(valuesOf(a), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  Tensor b = rangeOf({2});
  resize_as.call(b, emptyTensor({1, 2, 3, 4}, ScalarType::Float, cpu()),
                 MemoryFormat::ChannelsLast);
  EXPECT_EQ(vec(b.strides()), (std::vector<int64_t>{24, 1, 8, 2}));
  // Preserve: a contiguous template gives contiguous strides.
  resize_as.call(b, emptyTensor({1, 2, 3, 4}, ScalarType::Float, cpu()),
                 MemoryFormat::Preserve);
  EXPECT_EQ(vec(b.strides()), (std::vector<int64_t>{24, 12, 4, 1}));
  // ChannelsLast needs a 4-d size: refused, the tensor unchanged.
  Tensor c = rangeOf({2});
  EXPECT_FALSE(errorOf([&] {
                 resize_as.call(c,
                                emptyTensor({2, 3}, ScalarType::Float, cpu()),
                                MemoryFormat::ChannelsLast);
               }).empty());
  EXPECT_EQ(sizesOf(c), (std::vector<int64_t>{2}));
  // A self that requires grad is refused (Autograd kernel).
  Tensor g = rangeOf({2});
  g.requires_grad_(true);
  EXPECT_THAT(errorOf([&] { resize_as.call(g, t, std::nullopt); }),
              HasSubstr("cannot resize a tensor that requires grad"));
  // Meta: sizes only.
  Tensor m = emptyTensor({2}, ScalarType::Float, meta());
  resize_as.call(m, emptyTensor({3, 4}, ScalarType::Float, meta()),
                 std::nullopt);
  EXPECT_EQ(sizesOf(m), (std::vector<int64_t>{3, 4}));
}

}  // namespace
}  // namespace turnout
