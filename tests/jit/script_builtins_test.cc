// TorchScript's builtins (jit/runtime/script_builtins.cc) run from graphs as
// torch 1.13 prints them: Python's semantics, lists shared with the caller,
// errors with the node's position. The values are torch's (checked against
// torch itself by tests/python/test_jit_script_corpus.py).
#include <string>
#include <vector>

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

}  // namespace
}  // namespace jit
}  // namespace turnout
