// GoogleTest assertions over opcheck (testing/opcheck.h): a C++ operator
// library tests its registrations without Python.
//
//   #include "testing/opcheck_gtest.h"
//
//   TEST(MyOps, ScaleIsRegisteredRight) {
//     auto op = turnout::Dispatcher::singleton().findSchemaOrThrow("myops::scale", "");
//     EXPECT_OPCHECK_OK(op, {turnout::IValue(x), turnout::IValue(2.0)});
//   }
//
// On failure the assertion prints the whole report: every test, and for each
// failing one what broke which rule. Both macros take the same arguments as
// opcheck() (args, and optionally kwargs and OpCheckOptions).
#ifndef TURNOUT_TESTING_OPCHECK_GTEST_H_
#define TURNOUT_TESTING_OPCHECK_GTEST_H_

#include "gtest/gtest.h"
#include "testing/opcheck.h"

namespace turnout {
namespace testing {

/// Success when every test of the report passed, else its text.
inline ::testing::AssertionResult opcheckSucceeded(const OpCheckReport& report) {
  if (report.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << report.toString();
}

}  // namespace testing
}  // namespace turnout

/// EXPECT_OPCHECK_OK(op, args [, kwargs] [, options]): a non-fatal failure
/// with opcheck's report unless every test passes.
#define EXPECT_OPCHECK_OK(op, ...)        \
  EXPECT_TRUE(::turnout::testing::opcheckSucceeded( \
      ::turnout::testing::opcheck((op), __VA_ARGS__)))

/// ASSERT_OPCHECK_OK: the same, fatal.
#define ASSERT_OPCHECK_OK(op, ...)        \
  ASSERT_TRUE(::turnout::testing::opcheckSucceeded( \
      ::turnout::testing::opcheck((op), __VA_ARGS__)))

#endif  // TURNOUT_TESTING_OPCHECK_GTEST_H_
