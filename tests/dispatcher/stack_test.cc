#include "dispatcher/stack.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dispatcher/core/error.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

TEST(Stack, PushPopPeekDropLast) {
  Tensor t = detail::makeEmptyTensor({2}, kFloat, Device("cpu"));
  Stack stack;
  push(stack, t, 2, 0.5, "name");
  ASSERT_EQ(stack.size(), 4u);
  EXPECT_TRUE(stack[0].isTensor());
  EXPECT_EQ(t.use_count(), 2u);

  EXPECT_EQ(peek(stack, 0, 3).toInt(), 2);
  EXPECT_EQ(peek(stack, 2, 3).toStringRef(), "name");
  peek(stack, 0, 1) = IValue("renamed");
  const Stack& const_stack = stack;
  EXPECT_EQ(peek(const_stack, 0, 1).toStringRef(), "renamed");

  absl::Span<const IValue> tail = last(stack, 2);
  ASSERT_EQ(tail.size(), 2u);
  EXPECT_EQ(tail[0].toDouble(), 0.5);
  EXPECT_EQ(tail[1].toStringRef(), "renamed");

  EXPECT_EQ(pop(stack).toStringRef(), "renamed");
  std::vector<IValue> two = pop(stack, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].toInt(), 2);
  EXPECT_EQ(two[1].toDouble(), 0.5);
  ASSERT_EQ(stack.size(), 1u);
  drop(stack, 1);
  EXPECT_TRUE(stack.empty());
  EXPECT_EQ(t.use_count(), 1u);
  push(stack);  // nothing
  EXPECT_TRUE(stack.empty());
}

TEST(Stack, TypedPop) {
  Tensor t = detail::makeEmptyTensor({2}, kFloat, Device("cpu"));
  Stack stack;
  push(stack, IValue(9), t, int64_t{3}, std::vector<int64_t>{1, 2},
       std::optional<double>());
  Tensor self;
  int64_t dim = 0;
  std::vector<int64_t> sizes;
  std::optional<double> scale = 1.0;
  pop(stack, self, dim, sizes, scale);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_EQ(stack[0].toInt(), 9);
  EXPECT_TRUE(self.is_same(t));
  EXPECT_EQ(t.use_count(), 2u);  // moved off the stack, not copied
  EXPECT_EQ(dim, 3);
  EXPECT_EQ(sizes, (std::vector<int64_t>{1, 2}));
  EXPECT_FALSE(scale.has_value());
  std::string name;
  EXPECT_THROW(pop(stack, name), Error);  // an Int is not a string
}

TEST(Stack, TooFewValuesIsAnIndexError) {
  struct Case {
    std::function<void(Stack&)> op;
    const char* message;
  };
  // Each runs on a stack holding one value.
  const std::vector<Case> cases = {
      {[](Stack& s) { pop(s, 3); },
       "pop(): the stack has 1 values but 3 are needed"},
      {[](Stack& s) {
         int64_t a = 0, b = 0;
         pop(s, a, b);
       },
       "pop(): the stack has 1 values but 2 are needed"},
      {[](Stack& s) { peek(s, 0, 2); },
       "peek(): the stack has 1 values but 2 are needed"},
      {[](Stack& s) { peek(s, 1, 1); },
       "peek(): index 1 is not below the count 1"},
      {[](Stack& s) { last(s, 2); },
       "last(): the stack has 1 values but 2 are needed"},
      {[](Stack& s) { drop(s, 5); },
       "drop(): the stack has 1 values but 5 are needed"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    Stack stack;
    push(stack, 1);
    try {
      c.op(stack);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Index);
      EXPECT_EQ(e.message(), c.message);
    }
    EXPECT_EQ(stack.size(), 1u);  // unchanged
  }
  Stack empty;
  try {
    pop(empty);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "pop(): the stack has 0 values but 1 are needed");
  }
}

}  // namespace
}  // namespace turnout
