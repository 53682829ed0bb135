#include "kernels/type_promotion.h"

#include <vector>

#include "gtest/gtest.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace {

Tensor meta(ScalarType dtype, std::vector<int64_t> sizes) {
  return emptyTensor(sizes, dtype, Device(DeviceType::Meta));
}

TEST(TypePromotion, TensorsWithDimensions) {
  struct Case {
    ScalarType a, b, expected;
  };
  const Case cases[] = {
      {kInt, kFloat, kFloat},     {kLong, kInt, kLong},
      {kBool, kBool, kBool},      {kBool, kInt, kInt},
      {kHalf, kBFloat16, kFloat}, {kHalf, kFloat, kFloat},
      {kFloat, kDouble, kDouble}, {kByte, kChar, kShort},
      {kLong, kHalf, kHalf},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << c.a << " with " << c.b);
    EXPECT_EQ(resultType(meta(c.a, {2}), meta(c.b, {3, 2})), c.expected);
    EXPECT_EQ(resultType(meta(c.b, {2}), meta(c.a, {2})), c.expected);
    // Two 0-dim tensors promote like dimensioned ones.
    EXPECT_EQ(resultType(meta(c.a, {}), meta(c.b, {})), c.expected);
  }
}

TEST(TypePromotion, ZeroDimTensorsParticipateByCategory) {
  struct Case {
    ScalarType dim, zero, expected;
  };
  const Case cases[] = {
      {kByte, kLong, kByte},      // same category: the dimensioned one wins
      {kInt, kLong, kInt},        {kFloat, kDouble, kFloat},
      {kHalf, kDouble, kHalf},    {kInt, kDouble, kDouble},  // higher category
      {kBool, kInt, kInt},        {kBool, kDouble, kDouble},
      {kLong, kBool, kLong},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << c.dim << " with 0-dim " << c.zero);
    EXPECT_EQ(resultType(meta(c.dim, {3}), meta(c.zero, {})), c.expected);
    EXPECT_EQ(resultType(meta(c.zero, {}), meta(c.dim, {3})), c.expected);
  }
}

TEST(TypePromotion, ScalarsParticipateByCategory) {
  struct Case {
    ScalarType tensor;
    Scalar scalar;
    ScalarType expected;
  };
  const Case cases[] = {
      {kInt, Scalar(2.5), kFloat},   // a Python float is the default dtype
      {kLong, Scalar(2.5), kFloat},  {kHalf, Scalar(2.5), kHalf},
      {kDouble, Scalar(2.5), kDouble}, {kByte, Scalar(300), kByte},
      {kBool, Scalar(2), kLong},     {kBool, Scalar(true), kBool},
      {kFloat, Scalar(2), kFloat},   {kInt, Scalar(true), kInt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << c.tensor << " with " << c.scalar);
    EXPECT_EQ(resultType(meta(c.tensor, {3}), c.scalar), c.expected);
  }
  // A 0-dim tensor ranks above a Scalar of the same category.
  EXPECT_EQ(resultType(meta(kInt, {}), Scalar(2.5)), kFloat);
  EXPECT_EQ(resultType(meta(kDouble, {}), Scalar(2.5)), kDouble);
  EXPECT_EQ(resultType(meta(kByte, {}), Scalar(2)), kByte);
}

// The 0-dim CPU tensor the Python bindings make of a number (`x * 4`).
Tensor wrapped(ScalarType dtype) {
  Tensor t = emptyTensor({}, dtype, Device(DeviceType::CPU));
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

// A wrapped number promotes exactly as the Scalar it holds (c10's rule,
// torch.result_type(t, 2.5)), not as a 0-dim tensor of its dtype.
TEST(TypePromotion, WrappedNumbersCountAsScalars) {
  struct Number {
    ScalarType stored;  // what the bindings store it as
    Scalar scalar;
  };
  const Number numbers[] = {{kBool, Scalar(true)},
                            {kLong, Scalar(int64_t{1000})},
                            {kDouble, Scalar(2.5)}};
  for (ScalarType t : kAllScalarTypes) {
    for (const Number& n : numbers) {
      for (std::vector<int64_t> sizes : {std::vector<int64_t>{3},
                                         std::vector<int64_t>{}}) {
        SCOPED_TRACE(testing::Message() << t << " of dim " << sizes.size()
                                        << " with " << n.scalar);
        const ScalarType expected = resultType(meta(t, sizes), n.scalar);
        EXPECT_EQ(resultType(meta(t, sizes), wrapped(n.stored)), expected);
        EXPECT_EQ(resultType(wrapped(n.stored), meta(t, sizes)), expected);
      }
    }
  }
  // torch 1.13's answers for the cases the issue names.
  EXPECT_EQ(resultType(meta(kChar, {1}), wrapped(kLong)), kChar);  // + 1000
  EXPECT_EQ(resultType(meta(kInt, {2}), wrapped(kDouble)), kFloat);
  EXPECT_EQ(resultType(meta(kFloat, {2}), wrapped(kDouble)), kFloat);
  EXPECT_EQ(resultType(meta(kBool, {2}), wrapped(kLong)), kLong);
  EXPECT_EQ(resultType(meta(kBool, {2}), wrapped(kBool)), kBool);
  // ... where a plain 0-dim tensor of the same dtype decides otherwise.
  EXPECT_EQ(resultType(meta(kInt, {2}), meta(kDouble, {})), kDouble);
  EXPECT_EQ(resultType(meta(kInt, {}), wrapped(kDouble)), kFloat);
  EXPECT_EQ(resultType(meta(kInt, {}), meta(kDouble, {})), kDouble);
  // Two numbers: int and float give the default dtype; two floats stay
  // Double, as torch's TensorIterator computes operands of one dtype in it.
  EXPECT_EQ(resultType(wrapped(kLong), wrapped(kDouble)), kFloat);
  EXPECT_EQ(resultType(wrapped(kDouble), wrapped(kDouble)), kDouble);
  EXPECT_EQ(resultType({wrapped(kDouble), wrapped(kDouble)}), kFloat);
  EXPECT_EQ(resultType(wrapped(kLong), wrapped(kLong)), kLong);
  EXPECT_EQ(resultType(wrapped(kBool), wrapped(kBool)), kBool);
}

TEST(TypePromotion, ManyOperandsAndState) {
  EXPECT_EQ(resultType({meta(kInt, {2}), meta(kLong, {}), meta(kFloat, {})}),
            kFloat);
  ResultTypeState state = updateResultTypeState(meta(kInt, {2}), {});
  state = updateResultTypeState(Scalar(1), state);
  EXPECT_EQ(resultType(state), kInt);
  state = updateResultTypeState(Scalar(0.5), state);
  EXPECT_EQ(resultType(state), kFloat);
  EXPECT_EQ(resultType(updateResultTypeState(Tensor(), state)), kFloat);
}

TEST(TypePromotion, CanCast) {
  EXPECT_TRUE(canCast(kInt, kFloat));
  EXPECT_TRUE(canCast(kFloat, kHalf));
  EXPECT_TRUE(canCast(kBool, kLong));
  EXPECT_TRUE(canCast(kBool, kBool));
  EXPECT_FALSE(canCast(kFloat, kLong));
  EXPECT_FALSE(canCast(kInt, kBool));
  EXPECT_FALSE(canCast(kDouble, kBool));
  EXPECT_EQ(toFloatingType(kInt), kFloat);
  EXPECT_EQ(toFloatingType(kBool), kFloat);
  EXPECT_EQ(toFloatingType(kDouble), kDouble);
}

}  // namespace
}  // namespace turnout
