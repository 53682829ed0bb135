#include "dispatcher/schema/operator_name.h"

#include <sstream>
#include <string>
#include <unordered_set>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

TEST(OperatorName, Printing) {
  struct Case {
    OperatorName op;
    const char* printed;
  };
  const Case cases[] = {
      {{"aten::add", "Tensor"}, "aten::add.Tensor"},
      {{"aten::add", ""}, "aten::add"},
      {{"foo", ""}, "foo"},
      {{"foo", "out"}, "foo.out"},
      {{"", ""}, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.printed);
    EXPECT_EQ(toString(c.op), c.printed);
    std::ostringstream out;
    out << c.op;
    EXPECT_EQ(out.str(), c.printed);
  }
}

TEST(OperatorName, Namespace) {
  struct Case {
    const char* name;
    const char* ns;
  };
  const Case cases[] = {
      {"aten::add", "aten"},
      {"my_ops::foo", "my_ops"},
      {"foo", ""},
      {"::foo", ""},
      {"", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    OperatorName op{c.name, "overload"};
    EXPECT_EQ(op.getNamespace(), c.ns);
  }
}

TEST(OperatorName, EqualityAndOrder) {
  OperatorName add{"aten::add", "Tensor"};
  EXPECT_EQ(add, (OperatorName{"aten::add", "Tensor"}));
  EXPECT_NE(add, (OperatorName{"aten::add", ""}));
  EXPECT_NE(add, (OperatorName{"aten::sub", "Tensor"}));
  // "aten::add" + ".Tensor" and "aten::add.Tensor" + "" print alike but are
  // different operators.
  EXPECT_NE(add, (OperatorName{"aten::add.Tensor", ""}));
  EXPECT_LT((OperatorName{"aten::add", ""}), add);
  EXPECT_LT(add, (OperatorName{"aten::add", "out"}));
  EXPECT_LT((OperatorName{"aten::add", "out"}),
            (OperatorName{"aten::mul", ""}));
}

TEST(OperatorName, Hashing) {
  OperatorName a{"aten::add", "Tensor"};
  OperatorName b{"aten::add", "Tensor"};
  OperatorName c{"aten::add", ""};
  EXPECT_EQ(absl::Hash<OperatorName>()(a), absl::Hash<OperatorName>()(b));
  EXPECT_EQ(std::hash<OperatorName>()(a), std::hash<OperatorName>()(b));

  absl::flat_hash_set<OperatorName> absl_set = {a, b, c};
  EXPECT_EQ(absl_set.size(), 2u);
  EXPECT_TRUE(absl_set.contains(OperatorName{"aten::add", ""}));
  std::unordered_set<OperatorName> std_set = {a, b, c};
  EXPECT_EQ(std_set.size(), 2u);
  EXPECT_EQ(std_set.count(OperatorName{"aten::add", "Tensor"}), 1u);
}

}  // namespace
}  // namespace turnout
