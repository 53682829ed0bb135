// defaultToIValue: a schema default as the IValue a call passes, typed by
// its argument.
#include "dispatcher/schema/default_ivalue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dispatcher/schema/schema_parser.h"

namespace turnout {
namespace {

using ::testing::ElementsAre;

// The default of the only argument of "f(ARG) -> ()".
IValue defaultOf(const std::string& arg) {
  FunctionSchema schema = parseSchema("f(" + arg + ") -> ()");
  return defaultToIValue(schema.arguments().at(0));
}

TEST(DefaultToIValue, TakesTheArgumentsType) {
  IValue f = defaultOf("float x=1");  // an int literal for a float
  ASSERT_TRUE(f.isDouble());
  EXPECT_EQ(f.toDouble(), 1.0);
  EXPECT_EQ(defaultOf("int n=3").toInt(), 3);
  EXPECT_EQ(defaultOf("bool b=True").toBool(), true);
  EXPECT_EQ(defaultOf("str s=\"mean\"").toStringRef(), "mean");
  EXPECT_TRUE(defaultOf("float? y=None").isNone());
  EXPECT_TRUE(defaultOf("Tensor? w=None").isNone());
}

TEST(DefaultToIValue, ListsAndOneElementShorthand) {
  EXPECT_THAT(defaultOf("int[2] stride=1").toIntListRef(), ElementsAre(1, 1));
  EXPECT_THAT(defaultOf("int[] dims=[0, 2]").toIntListRef(), ElementsAre(0, 2));
  EXPECT_THAT(defaultOf("float[] s=[0.5, 2.0]").toDoubleListRef(),
              ElementsAre(0.5, 2.0));
  EXPECT_THAT(defaultOf("bool[2] m=[True, False]").toBoolListRef(),
              ElementsAre(true, false));
  EXPECT_TRUE(defaultOf("int[]? size=None").isNone());
}

}  // namespace
}  // namespace turnout
