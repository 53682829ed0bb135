// TorchScript's dict builtins (jit/runtime/dict_builtins.cc) and
// prim::DictConstruct run from graphs as torch 1.13 prints them: insertion
// order, dicts shared with the caller, torch's KeyError messages with the
// node's position, and malformed graphs refused at compile time. The values
// are torch's (checked against torch itself by
// tests/python/test_jit_script_corpus.py).
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/parser.h"
#include "jit/passes/common_subexpression_elimination.h"
#include "jit/passes/constant_propagation.h"
#include "jit/passes/dead_code_elimination.h"
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

std::string printed(const IValue& v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

IValue strIntDict(std::vector<std::pair<std::string, int64_t>> entries) {
  auto d = ivalue::DictImpl::create(IValue::Tag::GenericList,
                                    IValue::Tag::IntList);
  for (auto& [k, v] : entries) d->insertOrAssign(k, v);
  return IValue(d);
}

// As torch 1.13 prints f(x: int): d = {"a": x, "b": 2}; d["c"] = 3;
// s = sum of d[k] for k in d; return d, s, d.get("z"), d.get("z", 5),
// d.pop("a"), d.setdefault("q", 7), list(d.items()), dict(d), d.copy()
TEST(DictBuiltins, TorchsGraphRuns) {
  const std::string text = R"IR(graph(%x.1 : int):
  %47 : str = prim::Constant[value="q"]() # d.py:11:69
  %37 : str = prim::Constant[value="z"]() # d.py:11:23
  %14 : bool = prim::Constant[value=1]() # d.py:7:4
  %8 : str = prim::Constant[value="c"]() # d.py:5:6
  %3 : str = prim::Constant[value="b"]() # d.py:4:17
  %1 : str = prim::Constant[value="a"]() # d.py:4:9
  %4 : int = prim::Constant[value=2]() # d.py:4:22
  %6 : int = prim::Constant[value=3]() # d.py:5:13
  %s.1 : int = prim::Constant[value=0]() # d.py:6:8
  %41 : int = prim::Constant[value=5]() # d.py:11:40
  %48 : int = prim::Constant[value=7]() # d.py:11:74
  %d.1 : Dict(str, int) = prim::DictConstruct(%1, %x.1, %3, %4)
   = aten::_set_item(%d.1, %8, %6) # d.py:5:4
  %12 : str[] = aten::keys(%d.1) # d.py:7:4
  %13 : int = aten::len(%12) # d.py:7:4
  %s : int = prim::Loop(%13, %14, %s.1) # d.py:7:4
    block0(%15 : int, %s.11 : int):
      %k.1 : str = aten::__getitem__(%12, %15) # d.py:7:4
      %20 : int = aten::__getitem__(%d.1, %k.1) # d.py:8:13
      %s.5 : int = aten::add(%s.11, %20) # d.py:8:8
      -> (%14, %s.5)
  %38 : int? = aten::get(%d.1, %37) # d.py:11:17
  %42 : int = aten::get(%d.1, %37, %41) # d.py:11:29
  %45 : int = aten::pop(%d.1, %1) # d.py:11:44
  %49 : int = aten::setdefault(%d.1, %47, %48) # d.py:11:56
  %51 : (str, int)[] = aten::items(%d.1) # d.py:11:83
  %52 : (str, int)[] = aten::list(%51) # d.py:11:78
  %54 : Dict(str, int) = aten::dict(%d.1) # d.py:11:95
  %56 : Dict(str, int) = aten::copy(%d.1) # d.py:11:104
  return (%d.1, %s, %38, %42, %45, %49, %52, %54, %56)
)IR";
  Stack out = run(text, {IValue(int64_t{4})});
  ASSERT_EQ(out.size(), 9u);
  EXPECT_EQ(printed(out[0]), R"({"b": 2, "c": 3, "q": 7})");
  EXPECT_EQ(out[1].toInt(), 9);
  EXPECT_TRUE(out[2].isNone());
  EXPECT_EQ(out[3].toInt(), 5);
  EXPECT_EQ(out[4].toInt(), 4);
  EXPECT_EQ(out[5].toInt(), 7);
  EXPECT_EQ(printed(out[6]), R"([("b", 2), ("c", 3), ("q", 7)])");
  // dict(d) and d.copy() are new dicts with the same entries.
  EXPECT_EQ(out[7], out[0]);
  EXPECT_FALSE(out[7].isSameIdentity(out[0]));
  EXPECT_FALSE(out[8].isSameIdentity(out[0]));
}

TEST(DictBuiltins, MutationIsSeenByTheCaller) {
  const std::string text = R"IR(graph(%d : Dict(str, int), %e : Dict(str, int)):
  %a : str = prim::Constant[value="a"]()
  %z : str = prim::Constant[value="z"]()
  %one : int = prim::Constant[value=1]()
   = aten::_set_item(%d, %z, %one)
   = aten::update(%d, %e)
   = aten::Delete(%d, %a)
   = aten::clear(%e)
  %n : int = aten::len(%d)
  return (%n)
)IR";
  IValue d = strIntDict({{"a", 1}, {"b", 2}});
  IValue e = strIntDict({{"b", 20}, {"c", 30}});
  Stack out = run(text, {d, e});
  EXPECT_EQ(out[0].toInt(), 3);
  EXPECT_EQ(printed(d), R"({"b": 20, "z": 1, "c": 30})");
  EXPECT_EQ(printed(e), "{}");
  d.toDictRef().checkInvariants();
}

TEST(DictBuiltins, KeysAndValuesListsAreTypedEvenWhenEmpty) {
  // An empty Dict(int, float): keys() is an IntList, values() a DoubleList,
  // so list operators on them see their own kinds.
  const std::string text = R"IR(graph():
  %d : Dict(int, float) = prim::DictConstruct()
  %k : int[] = aten::keys(%d)
  %v : float[] = aten::values(%d)
  %t : Dict(Tensor, Tensor) = prim::DictConstruct()
  %tk : Tensor[] = aten::keys(%t)
  return (%k, %v, %tk)
)IR";
  Stack out = run(text, {});
  EXPECT_TRUE(out[0].isIntList());
  EXPECT_TRUE(out[1].isDoubleList());
  EXPECT_TRUE(out[2].isTensorList());
}

TEST(DictBuiltins, TensorKeysByIdentityAndOtherKeyTypes) {
  const std::string text = R"IR(graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %d : Dict(Tensor, int) = prim::DictConstruct(%x, %one, %y, %two)
  %a : int = aten::__getitem__(%d, %y)
  %b : bool = aten::__contains__(%d, %x)
  %f : float = prim::Constant[value=2.5]()
  %t : bool = prim::Constant[value=1]()
  %e : Dict(float, bool) = prim::DictConstruct(%f, %t)
  %c : bool = aten::__getitem__(%e, %f)
  %p : (float, bool) = aten::popitem(%e)
  %n : int = aten::len(%e)
  return (%a, %b, %c, %p, %n)
)IR";
  Tensor x = zeros({2});
  Tensor y = zeros({2});
  Stack out = run(text, {x, y});
  EXPECT_EQ(out[0].toInt(), 2);
  EXPECT_TRUE(out[1].toBool());
  EXPECT_TRUE(out[2].toBool());
  EXPECT_EQ(printed(out[3]), "(2.5, True)");
  EXPECT_EQ(out[4].toInt(), 0);
}

TEST(DictBuiltins, ErrorsAsTorchWithTheGraphPosition) {
  struct Case {
    const char* text;
    Stack inputs;
    const char* error;
  };
  const Case cases[] = {
      {R"IR(graph(%d : Dict(str, int)):
  %k : str = prim::Constant[value="missing"]()
  %1 : int = aten::__getitem__(%d, %k) # m.py:3:11
  return (%1)
)IR",
       {strIntDict({{"a", 1}})},
       "aten::__getitem__.Dict_str failed at m.py:3:11\n  in: %1 : int = "
       "aten::__getitem__(%d, %k) # m.py:3:11\nKeyError: missing"},
      {R"IR(graph(%d : Dict(float, int), %k : float):
  %1 : int = aten::pop(%d, %k) # m.py:4:8
  return (%1)
)IR",
       {IValue(ivalue::DictImpl::create(IValue::Tag::DoubleList,
                                        IValue::Tag::IntList)),
        IValue(3.0)},
       "aten::pop.Dict_float failed at m.py:4:8"},
      {R"IR(graph(%d : Dict(float, int), %k : float):
  %1 : int = aten::pop(%d, %k) # m.py:4:8
  return (%1)
)IR",
       {IValue(ivalue::DictImpl::create(IValue::Tag::DoubleList,
                                        IValue::Tag::IntList)),
        IValue(3.25)},
       "KeyError: 3.25"},
      {R"IR(graph(%d : Dict(str, int)):
  %k : str = prim::Constant[value="q"]()
   = aten::Delete(%d, %k) # m.py:5:8
  return (%d)
)IR",
       {strIntDict({})},
       "KeyError: q"},
      {R"IR(graph(%d : Dict(str, int)):
  %1 : (str, int) = aten::popitem(%d) # m.py:6:8
  return (%1)
)IR",
       {strIntDict({})},
       "popitem(): dictionary is empty"},
      // A dict whose keys are not the overload's: a Type error, not a
      // silent miss.
      {R"IR(graph(%d : Dict(str, int), %k : str):
  %1 : bool = aten::__contains__(%d, %k) # m.py:7:8
  return (%1)
)IR",
       {strIntDict({}), IValue(int64_t{3})},
       "aten::__contains__: expected a String key, got Int"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Stack s = c.inputs;
    EXPECT_THAT(errorOf([&] { run(c.text, s); }), HasSubstr(c.error));
  }
}

TEST(DictBuiltins, MalformedGraphsAreRefused) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      // Wrong key type for the dict: no overload fits.
      {R"IR(graph(%d : Dict(str, int), %k : int):
  %1 : int = aten::__getitem__(%d, %k) # m.py:1:1
  return (%1)
)IR",
       "no overload of aten::__getitem__ fits the inputs (Dict(str, int), "
       "int)"},
      // An odd number of DictConstruct inputs.
      {R"IR(graph(%k : str):
  %d : Dict(str, int) = prim::DictConstruct(%k)
  return (%d)
)IR",
       "takes keys and values in pairs"},
      // A value of the wrong type.
      {R"IR(graph(%k : str):
  %d : Dict(str, int) = prim::DictConstruct(%k, %k)
  return (%d)
)IR",
       "does not fit the value type"},
      // Not a Dict output.
      {R"IR(graph(%k : str, %v : int):
  %d : int[] = prim::DictConstruct(%k, %v)
  return (%d)
)IR",
       "prim::DictConstruct makes a dict"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_THAT(errorOf([&] { Code code(*parseIR(c.text)); }),
                HasSubstr(c.error));
  }
}

TEST(DictBuiltins, TwoEmptyDictsStayTwoUnderThePasses) {
  // CSE must not merge two DictConstruct() in a graph that mutates: each
  // is its own object.
  std::unique_ptr<Graph> g = parseIR(R"IR(graph():
  %a : Dict(str, int) = prim::DictConstruct()
  %b : Dict(str, int) = prim::DictConstruct()
  %k : str = prim::Constant[value="k"]()
  %one : int = prim::Constant[value=1]()
   = aten::_set_item(%a, %k, %one)
  %n : int = aten::len(%b)
  return (%n)
)IR");
  eliminateCommonSubexpressions(*g);
  propagateConstants(*g);
  eliminateDeadCode(*g);
  Code code(*g);
  Stack s;
  code.run(s);
  EXPECT_EQ(s[0].toInt(), 0);
}

}  // namespace
}  // namespace jit
}  // namespace turnout
