// The schema language's limits (issue 15): List and Optional suffixes nest
// without bound and every function over types loops over them; Dict,
// Future, RRef, tuples, annotated lists and list literals nest at most
// SchemaType::kMaxNesting deep; the text is at most 1 MiB. Before, ~9,000
// nested Dict( or ~130,000 [] overflowed the stack.
#include <string>

#include "dispatcher/core/error.h"
#include "dispatcher/schema/function_schema.h"
#include "dispatcher/schema/schema_matching.h"
#include "dispatcher/schema/schema_parser.h"
#include "dispatcher/schema/schema_type.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/error_of.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::errorOf;
using Kind = SchemaType::Kind;

std::string repeat(std::string_view s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// torch 1.13 parses `int` with 100,000 `[]` (torch._C.parse_schema); so
// does this, and prints, compares and frees the type without recursing.
TEST(SchemaLimits, HundredThousandListSuffixes) {
  const std::string type = "int" + repeat("[]", 100000);
  const std::string text = "f(" + type + " x) -> " + type;
  FunctionSchema s = parseSchema(text);
  EXPECT_EQ(toString(s), text);
  FunctionSchema again = parseSchema(text);
  EXPECT_EQ(s, again);
  EXPECT_TRUE(typesMatch(*s.arguments()[0].type(), *again.returns()[0].type()));
  EXPECT_FALSE(s.arguments()[0].type()->containsTensor());
  const std::string tensors = "Tensor" + repeat("?[]", 50000);
  FunctionSchema t = parseSchema("f(" + tensors + " x) -> ()");
  EXPECT_TRUE(t.arguments()[0].type()->containsTensor());
  EXPECT_EQ(t.arguments()[0].type()->toString(), tensors);
  EXPECT_EQ(t.arguments()[0].type()->nesting(), 0);
}

// T?? is T? (torch 1.13 prints f(int?? x) -> () as f(int? x) -> ()), so
// 100,000 `?` are one.
TEST(SchemaLimits, OptionalOfOptionalIsOptional) {
  EXPECT_EQ(toString(parseSchema("f(int?? x) -> ()")), "f(int? x) -> ()");
  EXPECT_EQ(toString(parseSchema("f(int?[]?? x) -> ()")),
            "f(int?[]? x) -> ()");
  EXPECT_EQ(toString(parseSchema("f(int" + repeat("?", 100000) + " x) -> ()")),
            "f(int? x) -> ()");
}

TEST(SchemaLimits, NestedContainersStopAtTheLimit) {
  const int n = SchemaType::kMaxNesting;
  struct Case {
    std::string open, close;
  };
  const Case cases[] = {{"Dict(str, ", ")"},
                        {"Future(", ")"},
                        {"RRef(", ")"},
                        {"(", ")"},
                        {"(int, ", ")[]?"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.open);
    const std::string ok =
        "f(" + repeat(c.open, n) + "int" + repeat(c.close, n) + " x) -> ()";
    FunctionSchema s = parseSchema(ok);
    EXPECT_EQ(s.arguments()[0].type()->nesting(), n);
    EXPECT_EQ(toString(s), ok);
    // One more level: a clear error at the opening that is one too many.
    const std::string deep = "f(" + repeat(c.open, n + 1) + "int" +
                             repeat(c.close, n + 1) + " x) -> ()";
    const std::string message = errorOf([&] { parseSchema(deep); });
    EXPECT_THAT(message,
                StartsWith("invalid schema: types such as Dict(...), "
                           "Future(...) and tuples nested more than 256 deep"));
    // The caret is under the first character of the 257th opening.
    const size_t caret = message.rfind('\n') + 1;
    EXPECT_EQ(message.size() - caret - 3,
              2 + c.open.size() * static_cast<size_t>(n))
        << message.substr(message.size() - 10);
  }
  // What crashed before: ~9,000 nested Dict( and ~8,800 tuples.
  for (const char* open : {"Dict(str, ", "(", "Future("}) {
    const std::string deep = "f(" + repeat(open, 9000) + "int" +
                             repeat(")", 9000) + " x) -> ()";
    EXPECT_THAT(errorOf([&] { parseSchema(deep); }),
                HasSubstr("nested more than 256 deep"));
  }
}

TEST(SchemaLimits, FactoriesRefuseTooDeepTypes) {
  SchemaTypePtr t = SchemaType::get(Kind::Int);
  for (int i = 0; i < SchemaType::kMaxNesting; ++i) {
    t = SchemaType::list(SchemaType::future(t));
  }
  EXPECT_EQ(t->nesting(), SchemaType::kMaxNesting);
  EXPECT_THAT(errorOf([&] { SchemaType::dict(SchemaType::get(Kind::Str), t); }),
              HasSubstr("a Dict type would nest Dict, Future, RRef and tuple "
                        "types more than 256 deep"));
  EXPECT_THAT(errorOf([&] { SchemaType::tuple({t}); }),
              HasSubstr("more than 256 deep"));
}

TEST(SchemaLimits, AnnotatedListsAndListLiteralsStopAtTheLimit) {
  const int n = SchemaType::kMaxNesting;
  // An annotation inside lists nests once per list.
  FunctionSchema ok =
      parseSchema("f(Tensor(a)" + repeat("[]", n) + " x) -> ()");
  EXPECT_EQ(toString(ok), "f(Tensor(a)" + repeat("[]", n) + " x) -> ()");
  EXPECT_THAT(
      errorOf([&] {
        parseSchema("f(Tensor(a!)" + repeat("[]", 100000) + " x) -> ()");
      }),
      StartsWith("invalid schema: an alias-annotated type in more than 256 "
                 "nested lists; annotate the outer list instead"));
  // A default value of nested lists recurses: bounded the same way.
  const std::string type = "int" + repeat("[]", n + 1);
  EXPECT_NO_THROW(parseSchema("f(" + type + " x=" + repeat("[", n) +
                              repeat("]", n) + ") -> ()"));
  EXPECT_THAT(errorOf([&] {
                parseSchema("f(" + type + " x=" + repeat("[", n + 1) +
                            repeat("]", n + 1) + ") -> ()");
              }),
              StartsWith("invalid schema: list literals nested more than 256 "
                         "deep"));
}

TEST(SchemaLimits, TextOverOneMebibyteIsRefused) {
  std::string text = "f(int x) -> ()";
  text.append((size_t{1} << 20) - text.size(), ' ');
  EXPECT_NO_THROW(parseSchema(text));
  text += ' ';
  EXPECT_EQ(errorOf([&] { parseSchema(text); }),
            "invalid schema: the text is 1048577 bytes long, over the limit "
            "of 1048576 bytes (at byte 1048576); it begins 'f(int x) -> ()   "
            "                       ...'");
  EXPECT_THAT(errorOf([&] { parseName(std::string(2 << 20, 'a')); }),
              StartsWith("invalid operator name: the text is 2097152 bytes"));
}

}  // namespace
}  // namespace turnout
