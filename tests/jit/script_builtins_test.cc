// TorchScript's builtins (jit/runtime/script_builtins.cc) run from graphs as
// torch 1.13 prints them: Python's semantics, lists shared with the caller,
// errors with the node's position. The values are torch's (checked against
// torch itself by tests/python/test_jit_script_corpus.py).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "dispatcher/dispatcher.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/parser.h"
#include "jit/passes/constant_propagation.h"
#include "jit/runtime/interpreter.h"
#include "kernels/factory.h"
#include "tests/error_of.h"

namespace turnout {
namespace jit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using turnout::testing::errorOf;

Stack run(const std::string& text, Stack inputs) {
  Code code(*parseIR(text));
  code.run(inputs);
  return inputs;
}

TEST(ScriptBuiltins, ListMutationIsSeenByTheCaller) {
  const std::string text = R"IR(graph(%x.1 : int[]):
  %2 : int = prim::Constant[value=4]()
  %5 : int = prim::Constant[value=-1]()
  %0 : int = prim::Constant[value=0]()
  %3 : int[] = aten::append(%x.1, %2)
  %6 : int = aten::pop(%x.1, %0)
  %7 : int[] = aten::_set_item(%x.1, %5, %2)
   = aten::insert(%x.1, %5, %6)
  return (%6)
)IR";
  IValue list(std::vector<int64_t>{1, 2, 3});
  Stack out = run(text, {list});
  EXPECT_EQ(out[0].toInt(), 1);
  // [1,2,3] -> append 4 -> pop(0) -> [2,3,4] -> [-1]=4 -> insert(-1, 1).
  EXPECT_THAT(list.toIntListRef(), ElementsAre(2, 3, 1, 4));
}

TEST(ScriptBuiltins, ListConstantsAreFreshEachRun) {
  Code code(*parseIR(R"IR(graph(%x : int):
  %l : int[] = prim::Constant[value=[1, 2]]()
  %3 : int[] = aten::append(%l, %x)
  %n : int = aten::len(%l)
  return (%n)
)IR"));
  for (int i = 0; i < 3; ++i) {
    Stack s{IValue(int64_t{7})};
    code.run(s);
    EXPECT_EQ(s[0].toInt(), 3);
  }
}

TEST(ScriptBuiltins, PythonStyleModAndFloorDivision) {
  const std::string text = R"IR(graph(%a : int, %b : int, %c : float, %d : float):
  %1 : int = aten::remainder(%a, %b)
  %2 : int = aten::floordiv(%a, %b)
  %3 : float = aten::remainder(%c, %d)
  %4 : float = aten::floordiv(%c, %d)
  %5 : float = aten::remainder(%a, %d)
  %6 : float = aten::floordiv(%c, %b)
  return (%1, %2, %3, %4, %5, %6)
)IR";
  Stack out = run(text, {IValue(int64_t{-7}), IValue(int64_t{3}), IValue(-7.5),
                         IValue(2.0)});
  EXPECT_EQ(out[0].toInt(), 2);
  EXPECT_EQ(out[1].toInt(), -3);
  EXPECT_EQ(out[2].toDouble(), 0.5);
  EXPECT_EQ(out[3].toDouble(), -4.0);
  EXPECT_EQ(out[4].toDouble(), 1.0);
  EXPECT_EQ(out[5].toDouble(), -3.0);
}

TEST(ScriptBuiltins, ErrorsKeepTheGraphPosition) {
  struct Case {
    const char* text;
    Stack inputs;
    const char* error;
  };
  const Case cases[] = {
      {R"IR(graph(%a : int, %b : int):
  %1 : int = aten::remainder(%a, %b) # m.py:3:11
  return (%1)
)IR",
       {IValue(int64_t{7}), IValue(int64_t{0})},
       "aten::remainder.int failed at m.py:3:11\n  in: %1 : int = "
       "aten::remainder(%a, %b) # m.py:3:11\naten::remainder.int: integer "
       "division or modulo by zero"},
      {R"IR(graph(%x : int[]):
  %n : int = prim::Constant[value=-1]()
  %1 : int = aten::pop(%x, %n) # m.py:4:8
  return (%1)
)IR",
       {IValue(std::vector<int64_t>{})},
       "aten::pop.t failed at m.py:4:8"},
      {R"IR(graph(%x : int[]):
  %n : int = prim::Constant[value=5]()
  %1 : int[] = aten::_set_item(%x, %n, %n) # m.py:5:8
  return (%1)
)IR",
       {IValue(std::vector<int64_t>{1})},
       "list assignment index out of range (index 5, list of length 1)"},
      {R"IR(graph(%x : int[]):
  %1 : int = prim::max(%x) # m.py:6:8
  return (%1)
)IR",
       {IValue(std::vector<int64_t>{})},
       "prim::max.self_int failed at m.py:6:8"},
      {R"IR(graph(%x : int[]):
  %n : int = prim::Constant[value=5]()
  %1 : int = aten::index(%x, %n) # m.py:7:8
  return (%1)
)IR",
       {IValue(std::vector<int64_t>{1})},
       "x not in list"},
      {R"IR(graph(%x : int):
  %z : int = prim::Constant[value=0]()
  %1 : int = aten::__range_length(%x, %x, %z) # m.py:8:8
  return (%1)
)IR",
       {IValue(int64_t{1})},
       "range() arg 3 must not be zero"},
      {R"IR(graph(%x : str):
  %1 : str = aten::format(%x, %x) # m.py:9:8
  return (%1)
)IR",
       {IValue("no placeholder")},
       "too many arguments for format string"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Stack s = c.inputs;
    EXPECT_THAT(errorOf([&] { run(c.text, s); }), HasSubstr(c.error));
  }
}

TEST(ScriptBuiltins, StrAndFormatPrintAsTorch) {
  const std::string text = R"IR(graph(%a : float, %b : float[], %c : str[], %d : (int, str), %e : int?):
  %f : str = prim::Constant[value="{} {} {}!"]()
  %1 : str = aten::str(%a)
  %2 : str = aten::str(%b)
  %3 : str = aten::str(%c)
  %4 : str = aten::str(%d)
  %5 : str = aten::str(%e)
  %6 : str = aten::format(%f, %a, %c, %d)
  return (%1, %2, %3, %4, %5, %6)
)IR";
  Stack out = run(text, {IValue(0.1), IValue(std::vector<double>{1.5, 2.0}),
                         IValue(std::vector<IValue>{IValue("a"), IValue("b'")}),
                         IValue::makeTuple({IValue(int64_t{1}), IValue("x")}),
                         IValue()});
  std::vector<std::string> got;
  for (const IValue& v : out) got.push_back(v.toStringRef());
  EXPECT_THAT(got, ElementsAre("0.10000000000000001", "[1.5, 2.]", "[a, b']",
                               "(1, x)", "None", "0.10000000000000001 [a, b'] "
                                                 "(1, x)!"));
}

TEST(ScriptBuiltins, ConstantPropagationFoldsVarargFormat) {
  std::unique_ptr<Graph> g = parseIR(R"IR(graph():
  %f : str = prim::Constant[value="x{}y"]()
  %1 : int = prim::Constant[value=1]()
  %2 : str = aten::format(%f, %1)
  return (%2)
)IR");
  EXPECT_TRUE(propagateConstants(*g));
  Stack s;
  Code(*g).run(s);
  EXPECT_EQ(s[0].toStringRef(), "x1y");
}

TEST(ScriptBuiltins, RangesAndTensors) {
  const std::string text = R"IR(graph(%lo : int, %hi : int, %step : int):
  %n : int = aten::__range_length(%lo, %hi, %step)
  %i : int = prim::Constant[value=2]()
  %v : int = aten::__derive_index(%i, %lo, %step)
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %l : int[] = prim::ListConstruct(%lo, %hi)
  %t : Tensor = aten::tensor(%l, %none, %none, %false)
  %dt : int = prim::dtype(%t)
  %k : int = aten::numel(%t)
  return (%n, %v, %dt, %k)
)IR";
  Stack out = run(text, {IValue(int64_t{10}), IValue(int64_t{2}),
                         IValue(int64_t{-3})});
  EXPECT_EQ(out[0].toInt(), 3);   // 10, 7, 4
  EXPECT_EQ(out[1].toInt(), 4);   // 10 + 2 * -3
  EXPECT_EQ(out[2].toInt(), 4);   // Long
  EXPECT_EQ(out[3].toInt(), 2);
}

// `fmt % value` with each of torch 1.13's conversions; the expected text is
// torch's for the same graph.
TEST(ScriptBuiltins, PercentFormatAsTorch) {
  const std::string text =
      R"IR(graph(%a : int, %b : float, %c : float, %d : int, %e : float, %f : float, %g : int, %h : str, %l : str[], %z : float):
  %fmt : str = prim::Constant[value="%d|%i|%s|%f|%e|%E|%c|%c|%%|%F"]()
  %t : (int, float, float, int, float, float, int, str, float) = prim::TupleConstruct(%a, %b, %c, %d, %e, %f, %g, %h, %c)
  %1 : str = aten::percentFormat(%fmt, %t)
  %s : str = prim::Constant[value="<%s>"]()
  %2 : str = aten::percentFormat(%s, %l)
  %3 : str = aten::percentFormat(%s, %z)
  %big : float = prim::Constant[value=1e+300]()
  %limit : float = prim::Constant[value=3.4028235677973366e+38]()
  %below : float = prim::Constant[value=-3.4028235677973362e+38]()
  %ef : str = prim::Constant[value="%e %f %E"]()
  %bt : (float, float, float) = prim::TupleConstruct(%big, %limit, %below)
  %5 : str = aten::percentFormat(%ef, %bt)
  %u : () = prim::Constant[value=()]()
  %p : str = prim::Constant[value="100%%"]()
  %4 : str = aten::percentFormat(%p, %u)
  return (%1, %2, %3, %4, %5)
)IR";
  Stack out = run(text, {IValue(int64_t{-3}), IValue(2.9), IValue(0.1),
                         IValue(int64_t{123456789}), IValue(1e20),
                         IValue(INFINITY), IValue(int64_t{321}), IValue("x"),
                         IValue(std::vector<IValue>{IValue("a"), IValue("b")}),
                         IValue(-0.0)});
  // %f rounds to a 32-bit float first (123456789 -> 123456792), as torch.
  EXPECT_EQ(out[0].toStringRef(),
            "-3|2|0.10000000000000001|123456792.000000|1.000000e+20|INF|A|x|%"
            "|0.100000");
  EXPECT_EQ(out[1].toStringRef(), "<[a, b]>");
  EXPECT_EQ(out[2].toStringRef(), "<0.>");  // torch's str(-0.0)
  EXPECT_EQ(out[3].toStringRef(), "100%");
  // Past the float range after rounding: inf, as torch; just below: FLT_MAX.
  EXPECT_EQ(out[4].toStringRef(), "inf inf -3.402823E+38");
}

TEST(ScriptBuiltins, PercentFormatErrors) {
  struct Case {
    const char* fmt;
    IValue value;
    const char* type;
    const char* error;
  };
  const Case cases[] = {
      {"%d %", IValue(int64_t{1}), "int",
       "aten::percentFormat: incomplete format specifier: \"%d %\" ends with "
       "'%'"},
      {"%s %s", IValue(int64_t{1}), "int",
       "too few arguments for format string \"%s %s\" (1 given)"},
      {"x", IValue(int64_t{1}), "int",
       "too many arguments for format string \"x\" (1 given, it converts 0)"},
      {"%g", IValue(1.0), "float",
       "the specifier %g is not supported in TorchScript format strings"},
      {"%5d", IValue(int64_t{1}), "int", "the specifier %5 is not supported"},
      {"%d", IValue(true), "bool",
       "%d requires a number for formatting, but got Bool (a bool is not a "
       "number here"},
      {"%e", IValue("s"), "str",
       "%e requires a number for formatting, but got String"},
      {"%c", IValue("ab"), "str",
       "%c requires an int or a one-byte string for formatting, but got a "
       "string of 2 bytes"},
      {"%c", IValue(1.5), "float",
       "%c requires an int or a one-byte string for formatting, but got "
       "Double"},
      {"%i", IValue(3e9), "float",
       "%i of the float 3e+09, outside the 32-bit int range"},
      {"%d", IValue(NAN), "float", "outside the 32-bit int range"},
  };
  for (const Case& c : cases) {
    const std::string text = std::string("graph(%f : str, %v : ") + c.type +
                             "):\n  %1 : str = aten::percentFormat(%f, %v) "
                             "# m.py:2:11\n  return (%1)\n";
    SCOPED_TRACE(text + c.fmt);
    const std::string error = errorOf([&] {
      run(text, {IValue(c.fmt), c.value});
    });
    EXPECT_THAT(error, HasSubstr(c.error));
    EXPECT_THAT(error, HasSubstr("m.py:2:11"));
  }
  // A graph of three inputs: percentFormat takes one value (a tuple for
  // several), as torch prints it.
  EXPECT_THAT(errorOf([&] {
                run(R"IR(graph(%f : str, %a : int):
  %1 : str = aten::percentFormat(%f, %a, %a)
  return (%1)
)IR",
                    {IValue("%d %d"), IValue(int64_t{1})});
              }),
              HasSubstr("aten::percentFormat: expected two inputs, the format "
                        "string and one value (a tuple for several values), "
                        "found 3"));
  // Called boxed without the interpreter's input count.
  OperatorHandle op =
      Dispatcher::singleton().findSchemaOrThrow("aten::percentFormat", "");
  Stack s{IValue("%s"), IValue("x")};
  EXPECT_THAT(errorOf([&] { op.callBoxed(s); }),
              HasSubstr("aten::percentFormat: called without its input count"));
}

TEST(ScriptBuiltins, ConstantPropagationFoldsPercentFormat) {
  std::unique_ptr<Graph> g = parseIR(R"IR(graph():
  %f : str = prim::Constant[value="%d items"]()
  %1 : int = prim::Constant[value=3]()
  %2 : str = aten::percentFormat(%f, %1)
  %b : str = prim::Constant[value="%q"]()
  %3 : str = aten::percentFormat(%b, %1) # m.py:4:4
  return (%2, %3)
)IR");
  propagateConstants(*g);
  EXPECT_THAT(g->toString(), HasSubstr("value=\"3 items\""));
  // The failing call stays in the graph and raises when run.
  EXPECT_THAT(g->toString(), HasSubstr("aten::percentFormat(%b, %1)"));
  Stack s;
  EXPECT_THAT(errorOf([&] { Code(*g).run(s); }),
              HasSubstr("the specifier %q is not supported"));
}

std::vector<std::string> strings(const IValue& list) {
  std::vector<std::string> out;
  for (const IValue& v : list.toList()) out.push_back(v.toStringRef());
  return out;
}

// list.sort(reverse=True), sorted() and list.remove() on a List[str]: the
// caller's list changes in place; sorted() copies.
TEST(ScriptBuiltins, StrListSortSortedRemove) {
  const std::string text = R"IR(graph(%l : str[], %x : str):
  %t : bool = prim::Constant[value=1]()
  %s : str[] = aten::sorted(%l)
   = aten::sort(%l, %t)
   = aten::remove(%l, %x) # m.py:5:4
  return (%s)
)IR";
  IValue list(std::vector<IValue>{IValue("b"), IValue("a"), IValue("\xc3\xa9"),
                                  IValue("A"), IValue("a")});
  Stack out = run(text, {list, IValue("a")});
  // Bytes order: UTF-8's is the code points' (Python's).
  EXPECT_THAT(strings(out[0]), ElementsAre("A", "a", "a", "b", "\xc3\xa9"));
  EXPECT_THAT(strings(list), ElementsAre("\xc3\xa9", "b", "a", "A"));

  // remove() of an absent string raises and leaves the list as it was.
  IValue two(std::vector<IValue>{IValue("b"), IValue("a")});
  EXPECT_THAT(errorOf([&] {
                run(text, {two, IValue("q")});
              }),
              HasSubstr("aten::remove.str: list.remove(x): x not in list "
                        "(x = \"q\")"));
  EXPECT_THAT(strings(two), ElementsAre("b", "a"));  // sorted, not removed

  // An empty list that is not generic (as Python's [] may arrive).
  IValue empty(std::vector<int64_t>{});
  EXPECT_THAT(errorOf([&] {
                run(text, {empty, IValue("a")});
              }),
              HasSubstr("x not in list"));
}

TEST(ScriptBuiltins, StrListOpsRefuseOtherElements) {
  for (const char* name : {"aten::sort", "aten::sorted", "aten::remove"}) {
    SCOPED_TRACE(name);
    const std::string op = name;
    OperatorHandle h = Dispatcher::singleton().findSchemaOrThrow(op, "str");
    IValue list(
        std::vector<IValue>{IValue("b"), IValue(int64_t{1}), IValue("a")});
    Stack s{list};
    if (op == "aten::sort") s.push_back(IValue(false));
    if (op == "aten::remove") s.push_back(IValue("a"));
    EXPECT_THAT(errorOf([&] { h.callBoxed(s); }),
                HasSubstr(op + ".str: expected a list of str, found an "
                               "element of type Int"));
    // Unchanged: nothing sorted or removed before the check.
    ASSERT_EQ(list.toList().size(), 3u);
    EXPECT_EQ(list.toList()[0].toStringRef(), "b");
    EXPECT_EQ(list.toList()[2].toStringRef(), "a");
    Stack ints{IValue(std::vector<int64_t>{1})};
    if (op == "aten::sort") ints.push_back(IValue(false));
    if (op == "aten::remove") ints.push_back(IValue("a"));
    EXPECT_THAT(errorOf([&] { h.callBoxed(ints); }),
                HasSubstr(op + ".str: expected a list of str, got IntList"));
  }
}

}  // namespace
}  // namespace jit
}  // namespace turnout
