#include "dispatcher/core/layout.h"

#include <sstream>
#include <vector>

#include "gtest/gtest.h"

namespace turnout {
namespace {

TEST(Layout, C10NumberingAndNames) {
  struct Case {
    Layout layout;
    int value;
    const char* name;
  };
  const std::vector<Case> cases = {
      {Layout::Strided, 0, "Strided"},     {Layout::Sparse, 1, "Sparse"},
      {Layout::SparseCsr, 2, "SparseCsr"}, {Layout::Mkldnn, 3, "Mkldnn"},
      {Layout::SparseCsc, 4, "SparseCsc"}, {Layout::SparseBsr, 5, "SparseBsr"},
      {Layout::SparseBsc, 6, "SparseBsc"}, {Layout::Jagged, 7, "Jagged"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(static_cast<int>(c.layout), c.value);
    EXPECT_TRUE(isValidLayout(c.value));
    EXPECT_STREQ(toString(c.layout), c.name);
    std::ostringstream out;
    out << c.layout;
    EXPECT_EQ(out.str(), c.name);
  }
  EXPECT_FALSE(isValidLayout(-1));
  EXPECT_FALSE(isValidLayout(8));
  EXPECT_STREQ(toString(static_cast<Layout>(42)), "InvalidLayout");
  EXPECT_EQ(kStrided, Layout::Strided);
}

}  // namespace
}  // namespace turnout
