// errorOf: the message of the turnout::Error a callable throws, for tests
// that check error text.
//
//   EXPECT_THAT(errorOf([&] { view(x, {7}); }), HasSubstr("is invalid"));
#ifndef TURNOUT_TESTS_ERROR_OF_H_
#define TURNOUT_TESTS_ERROR_OF_H_

#include <functional>
#include <string>

#include "dispatcher/core/error.h"

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

}  // namespace testing
}  // namespace turnout

#endif  // TURNOUT_TESTS_ERROR_OF_H_
