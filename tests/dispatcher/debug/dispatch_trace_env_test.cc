// TURNOUT_DISPATCH_TRACE=1 in the environment (set by the BUILD rule) turns
// the trace on from the start.
#include <string>
#include <vector>

#include "dispatcher/core/tensor.h"
#include "dispatcher/debug/dispatch_trace.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

int64_t addInt(int64_t a, int64_t b) { return a + b; }

TEST(DispatchTraceEnvironment, OnFromTheStart) {
  EXPECT_TRUE(isDispatchTraceEnabled());
  Library lib(Library::FRAGMENT, "trenv", std::nullopt, "env.cc", 3);
  lib.def("add(int a, int b) -> int");
  lib.impl("add", dispatch(DispatchKey::CompositeExplicitAutograd,
                           TURNOUT_FN(addInt)));
  std::vector<std::string> lines;
  setDispatchTraceSink([&lines](const DispatchTraceEvent&,
                                const std::string& line) {
    lines.push_back(line);
  });
  auto add = Dispatcher::singleton()
                 .findSchemaOrThrow("trenv::add", "")
                 .typed<int64_t(int64_t, int64_t)>();
  EXPECT_EQ(add.call(2, 3), 5);
  setDispatchTraceEnabled(false);
  EXPECT_EQ(add.call(2, 3), 5);
  EXPECT_THAT(lines, ::testing::ElementsAre(
                         "trenv::add call DispatchKeySet() -> Undefined "
                         "[default backend kernel] registered at env.cc:3"));
  setDispatchTraceSink(stderr);
}

}  // namespace
}  // namespace turnout
