// TorchScript's str methods (jit/runtime/str_builtins.cc): the error paths
// (each names the operator and the node), the inputs on which torch 1.13
// never returns (turnout returns Python's result or raises), and constant
// folding that leaves a failing call to the run. The values are checked
// against torch itself by tests/python/test_jit_str_builtins_torch.py.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/parser.h"
#include "jit/passes/constant_propagation.h"
#include "jit/runtime/interpreter.h"
#include "tests/error_of.h"

namespace turnout {
namespace jit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using turnout::testing::errorOf;

Stack run(const std::string& text, Stack inputs) {
  Code code(*parseIR(text));
  code.run(inputs);
  return inputs;
}

// A graph of one call `op(%s, %a, ...)` over a str and ints / strs.
std::string callGraph(const std::string& op, const std::string& params,
                      const std::string& args, const std::string& ret) {
  return "graph(" + params + "):\n  %r : " + ret + " = " + op + "(" + args +
         ") # m.py:3:4\n  return (%r)\n";
}

struct ErrorCase {
  std::string op, params, args, ret;
  Stack inputs;
  std::string error;
};

TEST(StrBuiltins, ErrorsNameTheOperator) {
  const std::string s4 = "%s : str, %p : str, %a : int, %b : int";
  const std::string a4 = "%s, %p, %a, %b";
  auto i = [](int64_t v) { return IValue(v); };
  const std::vector<ErrorCase> cases = {
      // torch 1.13 raises for a start past the end (its substr throws).
      {"aten::startswith", s4, a4, "bool", {IValue(""), IValue(""), i(1), i(0)},
       "aten::startswith: start (1) is past the end of the string (length 0)"},
      {"aten::endswith", s4, a4, "bool", {IValue("ab"), IValue("b"), i(3), i(-1)},
       "aten::endswith: start (3) is past the end"},
      {"aten::find", s4, a4, "int", {IValue("ab"), IValue("b"), i(5), i(9)},
       "aten::find: start (5) is past the end"},
      {"aten::index", s4, a4, "int", {IValue("ab"), IValue("z"), i(0), i(-1)},
       "aten::index.str: substring not found"},
      {"aten::rindex", s4, a4, "int", {IValue("ab"), IValue("z"), i(0), i(-1)},
       "aten::rindex: substring not found"},
      {"aten::split", "%s : str, %p : str, %m : int", "%s, %p, %m", "str[]",
       {IValue("abc"), IValue(""), i(-1)}, "aten::split.str: empty separator"},
      {"aten::rsplit", "%s : str, %p : str, %m : int", "%s, %p, %m", "str[]",
       {IValue("abc"), IValue(""), i(2)}, "aten::rsplit: empty separator"},
      {"aten::center", "%s : str, %w : int, %f : str", "%s, %w, %f", "str",
       {IValue("ab"), i(5), IValue("")},
       "aten::center: The fill character must be exactly one character long"},
      {"aten::ljust", "%s : str, %w : int, %f : str", "%s, %w, %f", "str",
       {IValue("ab"), i(5), IValue("xy")},
       "aten::ljust: The fill character must be exactly one character long"},
      {"aten::__getitem__", "%s : str, %i : int", "%s, %i", "str",
       {IValue("abc"), i(-4)},
       "aten::__getitem__.str: string index out of range (index -4, string "
       "of length 3)"},
      {"aten::slice", "%s : str, %a : int, %b : int, %c : int",
       "%s, %a, %b, %c", "str", {IValue("abc"), i(0), i(2), i(0)},
       "aten::slice.str: slice step cannot be zero"},
      {"aten::ord", "%s : str", "%s", "int", {IValue("ab")},
       "aten::ord: expected a string of one byte, found 2"},
      {"aten::ord", "%s : str", "%s", "int", {IValue("")},
       "aten::ord: expected a string of one byte, found 0"},
      {"aten::chr", "%i : int", "%i", "str", {i(0x10ffff)},
       "aten::chr: chr() arg not in range(0x110000), found 1114111"},
      {"aten::chr", "%i : int", "%i", "str", {i(-1)},
       "aten::chr: chr() arg not in range(0x110000), found -1"},
      {"aten::Int", "%s : str", "%s", "int", {IValue("12 ")},
       "aten::Int.str: invalid literal for int() with base 10: '12 '"},
      {"aten::Int", "%s : str", "%s", "int", {IValue("99999999999999999999")},
       "aten::Int.str: '99999999999999999999' does not fit in a 64-bit int"},
      {"aten::Float", "%s : str", "%s", "float", {IValue("1_0")},
       "aten::Float.str: could not convert string to float: '1_0'"},
      // Where torch 1.13 runs out of memory: a clear error instead.
      {"aten::zfill", "%s : str, %w : int", "%s, %w", "str",
       {IValue("a"), i(int64_t{1} << 40)},
       "aten::zfill: the result would be 1099511627776 bytes, over turnout's "
       "limit"},
      {"aten::replace", "%s : str, %o : str, %n : str, %m : int",
       "%s, %o, %n, %m", "str",
       {IValue("a"), IValue(""), IValue("xy"), i(int64_t{1} << 62)},
       "aten::replace: the result would be"},
  };
  for (const ErrorCase& c : cases) {
    const std::string text = callGraph(c.op, c.params, c.args, c.ret);
    SCOPED_TRACE(text);
    Stack s = c.inputs;
    const std::string error = errorOf([&] { run(text, s); });
    EXPECT_THAT(error, HasSubstr(c.error));
    EXPECT_THAT(error, HasSubstr("m.py:3:4"));  // the node's position
  }
}

// Inputs on which torch 1.13 loops for ever or runs out of memory:
// turnout returns Python's result.
TEST(StrBuiltins, PythonsResultWhereTorchNeverReturns) {
  auto i = [](int64_t v) { return IValue(v); };
  const std::string count = callGraph(
      "aten::count", "%s : str, %p : str, %a : int, %b : int",
      "%s, %p, %a, %b", "int");
  EXPECT_EQ(run(count, {IValue("abc"), IValue(""), i(0), i(-1)})[0].toInt(), 4);
  EXPECT_EQ(run(count, {IValue("abc"), IValue(""), i(1), i(2)})[0].toInt(), 2);
  // Not a hang in torch: an empty window gives 0, as torch's.
  EXPECT_EQ(run(count, {IValue("abc"), IValue(""), i(3), i(-1)})[0].toInt(), 0);
  const std::string replace = callGraph(
      "aten::replace", "%s : str, %o : str, %n : str, %m : int",
      "%s, %o, %n, %m", "str");
  EXPECT_EQ(run(replace, {IValue("abc"), IValue(""), IValue("x"), i(-1)})[0]
                .toStringRef(),
            "xaxbxcx");
  EXPECT_EQ(run(replace, {IValue("abc"), IValue(""), IValue(""), i(-1)})[0]
                .toStringRef(),
            "abc");
  // max >= 0 returns in torch: `new` max times at the front, as torch's.
  EXPECT_EQ(run(replace, {IValue("abc"), IValue(""), IValue("x"), i(2)})[0]
                .toStringRef(),
            "xxabc");
  const std::string center = callGraph(
      "aten::center", "%s : str, %w : int, %f : str", "%s, %w, %f", "str");
  EXPECT_EQ(run(center, {IValue("abc"), i(-1), IValue("*")})[0].toStringRef(),
            "abc");
}

TEST(StrBuiltins, TorchsQuirksKept) {
  const std::string text = R"IR(graph(%s : str):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %m1 : int = prim::Constant[value=-1]()
  %b : str = prim::Constant[value="b"]()
  %a : str = prim::Constant[value="a"]()
  %five : int = prim::Constant[value=5]()
  %false : bool = prim::Constant[value=0]()
  %true : bool = prim::Constant[value=1]()
  %1 : str[] = aten::split(%s, %none, %one)
  %2 : bool = aten::startswith(%s, %a, %one, %zero)
  %3 : int = aten::find(%s, %b, %zero, %m1)
  %4 : str[] = aten::splitlines(%s, %true)
  %5 : str = aten::zfill(%s, %five)
  return (%1, %2, %3, %4, %5)
)IR";
  Stack out = run(text, {IValue("-a b\r\nc")});
  std::vector<std::string> split;
  for (const IValue& v : out[0].toList()) split.push_back(v.toStringRef());
  // split(None, 1) ignores max.
  EXPECT_THAT(split, ElementsAre("-a", "b", "c"));
  // end < start: the window runs to the end ("a b\r\nc" starts with "a").
  EXPECT_TRUE(out[1].toBool());
  EXPECT_EQ(out[2].toInt(), 3);
  std::vector<std::string> lines;
  for (const IValue& v : out[3].toList()) lines.push_back(v.toStringRef());
  EXPECT_THAT(lines, ElementsAre("-a b", "\r", "", "\n", "c"));
  EXPECT_EQ(out[4].toStringRef(), "-a b\r\nc");  // wide enough: unchanged
}

// torch 1.13's isidentifier() is Python 2's over ASCII: a letter, then
// letters and digits; no underscore, no byte past ASCII.
TEST(StrBuiltins, IsIdentifierIsPython2s) {
  const std::string text =
      callGraph("aten::isidentifier", "%s : str", "%s", "bool");
  const std::vector<std::pair<std::string, bool>> cases = {
      {"a", true},
      {"Ab9", true},
      {"def", true},
      {"", false},
      {"_", false},
      {"_a", false},
      {"a_b", false},
      {"1a", false},
      {"a b", false},
      {"a$", false},
      {"\xc3\xa9", false},
      {"a\xc3\xa9", false},
      {std::string("a\0b", 3), false}};
  for (const auto& [input, want] : cases) {
    SCOPED_TRACE(input);
    EXPECT_EQ(run(text, {IValue(input)})[0].toBool(), want);
  }
}

TEST(StrBuiltins, ConstantPropagationLeavesErrorsToTheRun) {
  std::unique_ptr<Graph> g = parseIR(R"IR(graph():
  %s : str = prim::Constant[value="ab"]()
  %i : int = prim::Constant[value=7]()
  %w : int = prim::Constant[value=4]()
  %1 : str = aten::__getitem__(%s, %i) # m.py:5:6
  %2 : str = aten::zfill(%s, %w)
  return (%1, %2)
)IR");
  propagateConstants(*g);
  // zfill folded; the failing __getitem__ stays and raises when run.
  EXPECT_THAT(g->toString(), Not(HasSubstr("aten::zfill")));
  EXPECT_THAT(g->toString(), HasSubstr("aten::__getitem__"));
  Stack s;
  EXPECT_THAT(errorOf([&] { Code(*g).run(s); }),
              HasSubstr("string index out of range"));
}

}  // namespace
}  // namespace jit
}  // namespace turnout
