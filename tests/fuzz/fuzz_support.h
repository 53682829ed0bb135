// What the fuzz targets share: a failed check that names the input, and a
// nesting guard, off by default, for fuzzing a tree whose parsers do not
// bound their recursion yet (before the limits of issue 15, cases 6 and 7).
//
//   if (skipDeeplyNested(text)) return 0;
//   FUZZ_CHECK(a == b, "print -> parse changed the schema: ", a, " vs ", b);
//
// A failed FUZZ_CHECK prints its message and the input (escaped) to stderr
// and aborts: libFuzzer keeps the input as a crash artifact, and the corpus
// replay test (replay_test.cc) fails on it.
#ifndef TURNOUT_TESTS_FUZZ_FUZZ_SUPPORT_H_
#define TURNOUT_TESTS_FUZZ_FUZZ_SUPPORT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "dispatcher/core/error.h"

namespace turnout {
namespace fuzz {

/// The input being run, set by the harness, printed by a failed check.
void setCurrentInput(std::string_view input);

/// Prints `message` and the current input to stderr, then aborts.
[[noreturn]] void fail(const std::string& message);

/// The deepest nesting of brackets ( [ { in `text`, plus the number of type
/// suffixes ("[]" and "?") in a row: what the recursive-descent parsers
/// recurse on.
int nestingDepth(std::string_view text);

/// True when `text` nests deeper than kMaxNesting and the guard is on:
/// TURNOUT_FUZZ_SHALLOW=1 in the environment turns it on.
bool skipDeeplyNested(std::string_view text);
inline constexpr int kMaxNesting = 200;

/// The body of a text target's LLVMFuzzerTestOneInput: sets the current
/// input, skips it when `skip_deep` and skipDeeplyNested says so, and runs
/// `check` on it. Returns 0, libFuzzer's "keep going".
///
///   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
///     return turnout::fuzz::runTextInput(data, size, /*skip_deep=*/true,
///                                        checkSchema);
///   }
int runTextInput(const uint8_t* data, size_t size, bool skip_deep,
                 void (*check)(std::string_view text));

/// True when every byte of `text` belongs to a valid UTF-8 sequence.
bool isValidUtf8(std::string_view text);

/// A refused input: `e` must be InvalidArgument with a message, valid UTF-8
/// where the input was (Python raises it as text: a message cut inside a
/// character once reached Python empty). `what` names the call that threw.
void checkRejection(const Error& e, std::string_view input, const char* what);

}  // namespace fuzz
}  // namespace turnout

#define FUZZ_CHECK(cond, ...)                                             \
  do {                                                                    \
    if (!(cond)) {                                                        \
      ::turnout::fuzz::fail(::turnout::detail::joinParts(                 \
          __FILE__, ":", __LINE__, ": check failed: " #cond ": ",         \
          __VA_ARGS__));                                                  \
    }                                                                     \
  } while (0)

#endif  // TURNOUT_TESTS_FUZZ_FUZZ_SUPPORT_H_
