// kernels/aten_tags.h: the table is sorted, names only registered reference
// operators, and every one of them carries its entry's tags.
#include "kernels/aten_tags.h"

#include <optional>
#include <string>

#include "dispatcher/dispatcher.h"
#include "dispatcher/schema/operator_name.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

TEST(AtenTags, TableIsSortedAndNamesRegisteredOperators) {
  const auto& table = atenTagTable();
  ASSERT_FALSE(table.empty());
  for (size_t i = 0; i < table.size(); ++i) {
    const std::string& name = table[i].first;
    SCOPED_TRACE(name);
    if (i > 0) {
      EXPECT_LT(table[i - 1].first, name);  // sorted, no duplicates
    }
    EXPECT_FALSE(table[i].second.empty());
    size_t dot = name.find('.');
    OperatorName op{name.substr(0, dot),
                    dot == std::string::npos ? "" : name.substr(dot + 1)};
    std::optional<OperatorHandle> h = Dispatcher::singleton().findSchema(op);
    ASSERT_TRUE(h.has_value()) << "no reference operator " << name;
    EXPECT_EQ(h->tags(), table[i].second);
    EXPECT_EQ(atenTags(op), table[i].second);
  }
}

TEST(AtenTags, AnOperatorNotInTheTableHasNone) {
  EXPECT_TRUE(atenTags(OperatorName{"aten::reshape", ""}).empty());
  EXPECT_TRUE(atenTags(OperatorName{"aten::add", "int"}).empty());
  EXPECT_TRUE(atenTags(OperatorName{"aten::zzz", ""}).empty());
  EXPECT_EQ(atenTags(OperatorName{"aten::add", "Tensor"}),
            (std::vector<std::string>{"core", "pointwise"}));
}

}  // namespace
}  // namespace turnout
