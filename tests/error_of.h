// errorOf: the message of the turnout::Error a callable throws, for tests
// that check error text; expectErrors: the same for a table of cases.
//
//   EXPECT_THAT(errorOf([&] { view(x, {7}); }), HasSubstr("is invalid"));
//   expectErrors(ErrorKind::InvalidArgument,
//                {{"view", [&] { view(x, {7}); }, "is invalid"}});
#ifndef TURNOUT_TESTS_ERROR_OF_H_
#define TURNOUT_TESTS_ERROR_OF_H_

#include <functional>
#include <string>
#include <vector>

#include "dispatcher/core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace turnout {
namespace testing {

/// The message of the Error `f` throws, or "(no error)" when it throws none.
inline std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.message();
  }
  return "(no error)";
}

/// A call that must fail, and a part of its message.
struct ErrorCase {
  const char* name;        // for SCOPED_TRACE
  std::function<void()> f;
  const char* message;     // a substring of the Error's message
};

/// Checks that each case's `f` throws an Error of `kind` whose message holds
/// the case's `message`.
inline void expectErrors(ErrorKind kind, const std::vector<ErrorCase>& cases) {
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    try {
      c.f();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), kind);
      EXPECT_THAT(e.message(), ::testing::HasSubstr(c.message));
    }
  }
}

}  // namespace testing
}  // namespace turnout

#endif  // TURNOUT_TESTS_ERROR_OF_H_
