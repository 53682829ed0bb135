#include "dispatcher/core/memory_format.h"

#include <sstream>
#include <vector>

#include "gtest/gtest.h"

namespace turnout {
namespace {

TEST(MemoryFormat, C10NumberingAndNames) {
  struct Case {
    MemoryFormat format;
    int value;
    const char* name;
  };
  const std::vector<Case> cases = {
      {MemoryFormat::Contiguous, 0, "Contiguous"},
      {MemoryFormat::Preserve, 1, "Preserve"},
      {MemoryFormat::ChannelsLast, 2, "ChannelsLast"},
      {MemoryFormat::ChannelsLast3d, 3, "ChannelsLast3d"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(static_cast<int>(c.format), c.value);
    EXPECT_TRUE(isValidMemoryFormat(c.value));
    EXPECT_STREQ(toString(c.format), c.name);
    std::ostringstream out;
    out << c.format;
    EXPECT_EQ(out.str(), c.name);
  }
  EXPECT_FALSE(isValidMemoryFormat(4));
  EXPECT_FALSE(isValidMemoryFormat(-1));
  EXPECT_STREQ(toString(static_cast<MemoryFormat>(9)), "InvalidMemoryFormat");
}

}  // namespace
}  // namespace turnout
