// Fuzz target: the schema parser. Whatever parses must print to a schema
// that parses back to an equal one and prints the same; whatever does not
// parse must fail with a turnout::Error (InvalidArgument) that says
// something, never another exception or a crash.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "dispatcher/core/error.h"
#include "dispatcher/schema/function_schema.h"
#include "dispatcher/schema/operator_name.h"
#include "dispatcher/schema/schema_parser.h"
#include "tests/fuzz/fuzz_support.h"

namespace turnout {
namespace fuzz {
namespace {

void checkSchema(std::string_view text) {
  std::optional<FunctionSchema> first;
  try {
    first = parseSchema(text);
  } catch (const Error& e) {
    checkRejection(e, text, "parseSchema");
    return;
  }
  const std::string printed = toString(*first);
  std::optional<FunctionSchema> second;
  try {
    second = parseSchema(printed);
  } catch (const Error& e) {
    FUZZ_CHECK(false, "the printed schema does not parse: ", printed, "\n",
               e.message());
  }
  FUZZ_CHECK(*first == *second, "parse -> print -> parse changed the schema: ",
             printed, " reads back as ", toString(*second));
  const std::string reprinted = toString(*second);
  FUZZ_CHECK(reprinted == printed, "printing is not stable: ", printed,
             " then ", reprinted);
}

void checkName(std::string_view text) {
  try {
    OperatorName name = parseName(text);
    const std::string printed = toString(name);
    OperatorName again = parseName(printed);
    FUZZ_CHECK(again == name, "parseName round trip: ", printed, " then ",
               toString(again));
  } catch (const Error& e) {
    checkRejection(e, text, "parseName");
  }
  try {
    auto either = parseSchemaOrName(text);
    (void)either;
  } catch (const Error& e) {
    checkRejection(e, text, "parseSchemaOrName");
  }
}

}  // namespace
}  // namespace fuzz
}  // namespace turnout

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return turnout::fuzz::runTextInput(
      data, size, /*skip_deep=*/true, [](std::string_view text) {
        turnout::fuzz::checkSchema(text);
        turnout::fuzz::checkName(text);
      });
}
