// The IR's types as torch 1.13 prints them (Future[T], Union(...), Function,
// tuples of refined tensors, tuple constants, prim::isinstance's types):
// each parses and prints back unchanged, lint knows each; CompilationUnit,
// prim::CallFunction in the interpreter and the inlining pass.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/compilation_unit.h"
#include "jit/ir/parser.h"
#include "jit/passes/dead_code_elimination.h"
#include "jit/passes/inline.h"
#include "jit/passes/shape_propagation.h"
#include "jit/runtime/interpreter.h"
#include "kernels/factory.h"
#include "kernels/scalar_ops.h"
#include "tests/error_of.h"

namespace turnout {
namespace jit {
namespace {

using ::testing::HasSubstr;
using turnout::testing::errorOf;

TEST(ScriptTypes, RoundTripAsTorchPrintsThem) {
  // Each text is torch 1.13's own (str(fn.graph) of scripted and traced
  // functions), trimmed to the types.
  const char* cases[] = {
      "graph(%x.1 : Union(Tensor, int)):\n  return (%x.1)\n",
      "graph(%x.1 : Union(Tensor, float, int)):\n  return (%x.1)\n",
      "graph(%f : Future[Tensor]):\n  return (%f)\n",
      "graph(%f : Future[(Tensor, Tensor)]):\n  return (%f)\n",
      "graph(%fs : Future[Tensor][]):\n  return (%fs)\n",
      "graph(%d : Dict(str, Future[int])):\n  return (%d)\n",
      "graph(%x : Float(3, 8, strides=[8, 1], requires_grad=0, device=cpu)):\n"
      "  %6 : (Float(3, 8, strides=[8, 1], requires_grad=0, device=cpu), "
      "Float(3, 8, strides=[8, 1], requires_grad=0, device=cpu)) = "
      "prim::TupleConstruct(%x, %x)\n"
      "  return (%6)\n",
      "graph(%x : Tensor):\n"
      "  %31 : (float, str) = prim::Constant[value=(2.5, \"s\")]()\n"
      "  %62 : (int, float) = prim::Constant[value=(1, 2.)]()\n"
      "  %63 : ((int, float), bool, NoneType) = "
      "prim::Constant[value=((1, 2.), True, None)]()\n"
      "  return (%31, %62, %63)\n",
      "graph(%x : int):\n"
      "  %27 : ((int), (bool, NoneType, str, float, (int))) = "
      "prim::Constant[value=((1,), (True, None, \"q\\\"s\", "
      "-2.5000000000000002e-10, (3,)))]()\n"
      "  return (%27)\n",
      "graph(%x.1 : Union(Tensor, float, int)):\n"
      "  %19 : bool = prim::isinstance[types=[float, int]](%x.1)\n"
      "  return (%19)\n",
      "graph(%x.1 : Tensor):\n"
      "  %1 : Function = prim::Constant[name=\"inner\"]()\n"
      "  %3 : Tensor = prim::CallFunction(%1, %x.1) # /tmp/t1.py:7:10\n"
      "  return (%3)\n",
  };
  for (const char* text : cases) {
    SCOPED_TRACE(text);
    std::unique_ptr<Graph> g = parseIR(text);
    EXPECT_EQ(g->toString(), text);
    EXPECT_EQ(g->copy()->toString(), text);
  }
}

TEST(ScriptTypes, SchemaSpellingOfFuturesParsesAndPrintsAsTorch) {
  std::unique_ptr<Graph> g =
      parseIR("graph(%f : Future(Tensor)):\n  return (%f)\n");
  EXPECT_EQ(g->toString(), "graph(%f : Future[Tensor]):\n  return (%f)\n");
}

TEST(ScriptTypes, TypesKeepTheirParts) {
  std::unique_ptr<Graph> g = parseIR(
      "graph(%u : Union(Tensor, int),\n"
      "      %t : (Float(2, strides=[1], requires_grad=0, device=cpu), int)):\n"
      "  return (%u, %t)\n");
  const Type& u = g->inputs()[0]->type();
  ASSERT_TRUE(u.isUnion());
  ASSERT_EQ(u.containedTypes().size(), 2u);
  EXPECT_TRUE(u.containedTypes()[0].isTensor());
  EXPECT_EQ(u.unrefined(), u);
  const Type& t = g->inputs()[1]->type();
  ASSERT_EQ(t.containedTypes().size(), 2u);
  ASSERT_NE(t.containedTypes()[0].refinement(), nullptr);
  EXPECT_EQ(t.unrefined().toString(), "(Tensor, int)");
  EXPECT_NE(t, t.unrefined());
}

TEST(ScriptTypes, BadTypesSayWhereAndWhat) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"graph(%x : Union(int)):\n  return (%x)\n",
       "parse error at 1:12: a Union needs at least two member types"},
      {"graph(%x : Union(int, str)[]):\n  return (%x)\n",
       "cannot be a list element"},
      {"graph(%x : Future[Tensor):\n  return (%x)\n",
       "parse error at 1:25: expected ']' but found ')'"},
      {"graph(%x : Tensor):\n"
       "  %1 : Function = prim::Constant[value=1]()\n  return (%x)\n",
       "a Function constant names its function and holds no value"},
      {"graph(%x : Tensor):\n"
       "  %1 : (int, str) = prim::Constant[value=(1, 2)]()\n  return (%x)\n",
       "does not fit its type (int, str)"},
      {"graph(%x : Tensor):\n"
       "  %1 : Tensor = prim::CallFunction(%x)\n  return (%1)\n",
       "prim::CallFunction's first input must be a Function"},
      {"graph(%x : int):\n"
       "  %1 : bool = prim::isinstance(%x)\n  return (%1)\n",
       "prim::isinstance needs the types it tests"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_THAT(errorOf([&] { parseIR(c.text); }), HasSubstr(c.error));
  }
}

TEST(ScriptTypes, ShapePropagationRefinesAndErasesTuples) {
  std::unique_ptr<Graph> g = parseIR(
      "graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu)):\n"
      "  %1 : int = prim::Constant[value=1]()\n"
      "  %y : Tensor = aten::add(%x, %x, %1)\n"
      "  %t : (Tensor, int) = prim::TupleConstruct(%y, %1)\n"
      "  %a : Tensor, %b : int = prim::TupleUnpack(%t)\n"
      "  return (%t, %a)\n");
  EXPECT_TRUE(propagateShapes(*g));
  const std::string refined =
      "Float(2, strides=[1], requires_grad=0, device=cpu)";
  EXPECT_EQ(g->outputs()[0]->type().toString(), "(" + refined + ", int)");
  EXPECT_EQ(g->outputs()[1]->type().toString(), refined);
  g->lint();
  EXPECT_TRUE(eraseShapeInformation(*g));
  EXPECT_EQ(g->outputs()[0]->type().toString(), "(Tensor, int)");
  EXPECT_EQ(g->outputs()[1]->type().toString(), "Tensor");
}

constexpr const char* kInner = R"IR(graph(%x : Tensor):
  %y : Tensor = aten::neg(%x) # inner.py:2:11
  return (%y)
)IR";

constexpr const char* kOuter = R"IR(graph(%x.1 : Tensor):
  %1 : Function = prim::Constant[name="inner"]()
  %3 : Tensor = prim::CallFunction(%1, %x.1) # outer.py:7:10
  %4 : Tensor = prim::CallFunction(%1, %3) # outer.py:8:10
  return (%4)
)IR";

TEST(CompilationUnit, CallFunctionRunsTheNamedGraph) {
  auto cu = CompilationUnit::create();
  // The caller may be defined before its callee.
  std::shared_ptr<const Graph> outer = cu->define("outer", kOuter);
  cu->define("inner", kInner);
  EXPECT_EQ(cu->functionNames(), (std::vector<std::string>{"inner", "outer"}));
  Code code(*outer);
  Stack stack{IValue(full({2}, 3.0))};
  code.run(stack);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_EQ(item(stack[0].toTensor().sum()).toDouble(), 6.0);
}

TEST(CompilationUnit, InlineReplacesTheCallByTheBody) {
  auto cu = CompilationUnit::create();
  cu->define("inner", kInner);
  ParseOptions options;
  options.compilation_unit = cu;
  std::unique_ptr<Graph> outer = parseIR(kOuter, options);
  EXPECT_TRUE(inlineCalls(*outer));
  EXPECT_EQ(outer->toString(),
            "graph(%x.1 : Tensor):\n"
            "  %5 : Tensor = aten::neg(%x.1) # inner.py:2:11\n"
            "  %6 : Tensor = aten::neg(%5) # inner.py:2:11\n"
            "  return (%6)\n");
  EXPECT_FALSE(inlineCalls(*outer));
  Stack stack{IValue(full({2}, 3.0))};
  Code(*outer).run(stack);
  EXPECT_EQ(item(stack[0].toTensor().sum()).toDouble(), 6.0);
}

TEST(CompilationUnit, DeadCodeEliminationKeepsCallsForTheirEffects) {
  auto cu = CompilationUnit::create();
  cu->define("push", R"IR(graph(%l : int[]):
  %1 : int = prim::Constant[value=1]()
  %2 : int[] = aten::append(%l, %1)
  %n : int = aten::len(%l)
  return (%n)
)IR");
  ParseOptions options;
  options.compilation_unit = cu;
  std::unique_ptr<Graph> g = parseIR(R"IR(graph(%l : int[]):
  %f : Function = prim::Constant[name="push"]()
  %unused : int = prim::CallFunction(%f, %l)
  %n : int = aten::len(%l)
  return (%n)
)IR",
                                     options);
  EXPECT_FALSE(eliminateDeadCode(*g));
  Stack stack{IValue(std::vector<int64_t>{})};
  Code(*g).run(stack);
  EXPECT_EQ(stack[0].toInt(), 1);
}

TEST(CompilationUnit, ErrorsNameTheCallAndTheFunction) {
  auto cu = CompilationUnit::create();
  std::shared_ptr<const Graph> outer = cu->define("outer", kOuter);
  // Not defined (yet).
  EXPECT_THAT(errorOf([&] { Code code(*outer); }),
              HasSubstr("function 'inner' is not defined in the graph's "
                        "CompilationUnit (defined: outer); define it first"));
  std::unique_ptr<Graph> copy = outer->copy();
  EXPECT_THAT(errorOf([&] { inlineCalls(*copy); }),
              HasSubstr("at outer.py:7:10: function 'inner' is not defined"));
  EXPECT_EQ(copy->toString(), outer->toString());  // unchanged
  // Defined twice.
  EXPECT_THAT(errorOf([&] { cu->define("outer", kInner); }),
              HasSubstr("function 'outer' is already defined"));
  // No unit at all.
  std::unique_ptr<Graph> orphan = parseIR(kOuter);
  EXPECT_THAT(errorOf([&] { Code code(*orphan); }),
              HasSubstr("the graph has no CompilationUnit to find function "
                        "'inner' in"));
  // Recursion.
  cu->define("inner", R"IR(graph(%x : Tensor):
  %1 : Function = prim::Constant[name="outer"]()
  %y : Tensor = prim::CallFunction(%1, %x)
  return (%y)
)IR");
  EXPECT_THAT(errorOf([&] { Code code(*outer); }),
              HasSubstr("recursive calls are not supported"));
  std::unique_ptr<Graph> again = outer->copy();
  EXPECT_THAT(errorOf([&] { inlineCalls(*again); }),
              HasSubstr("recursive calls cannot be inlined"));
  // Wrong arity.
  auto cu2 = CompilationUnit::create();
  cu2->define("inner", R"IR(graph(%x : Tensor, %y : Tensor):
  return (%x)
)IR");
  ParseOptions options;
  options.compilation_unit = cu2;
  std::unique_ptr<Graph> g = parseIR(kOuter, options);
  EXPECT_THAT(errorOf([&] { Code code(*g); }),
              HasSubstr("function 'inner' takes 2 inputs and returns 1 "
                        "values, but the call passes 1 and expects 1"));
}

TEST(CompilationUnit, ErrorsInsideTheCalleeKeepBothPositions) {
  auto cu = CompilationUnit::create();
  cu->define("inner", R"IR(graph(%x : int):
  %0 : int = prim::Constant[value=0]()
  %y : int = aten::floordiv(%x, %0) # inner.py:3:4
  return (%y)
)IR");
  std::shared_ptr<const Graph> outer = cu->define("outer", R"IR(graph(%x : int):
  %1 : Function = prim::Constant[name="inner"]()
  %y : int = prim::CallFunction(%1, %x) # outer.py:9:2
  return (%y)
)IR");
  Code code(*outer);
  Stack stack{IValue(int64_t{4})};
  std::string e = errorOf([&] { code.run(stack); });
  EXPECT_THAT(e, HasSubstr("prim::CallFunction failed at outer.py:9:2"));
  EXPECT_THAT(e, HasSubstr("aten::floordiv.int failed at inner.py:3:4"));
  EXPECT_THAT(e, HasSubstr("integer division or modulo by zero"));
}

// torch 1.13's str(graph) of a scripted function with two forks.
constexpr const char* kTorchForks = R"IR(graph(%x.1 : Tensor):
  %18 : int = prim::Constant[value=1]()
  %fut.1 : Future[Tensor] = prim::fork_0(%x.1) # /tmp/t1.py:7:10
  %36 : Future[Tensor] = prim::fork_1(%x.1) # /tmp/t1.py:8:12
  %13 : Tensor = aten::wait(%fut.1) # /tmp/t1.py:9:11
  %17 : Tensor = aten::wait(%36) # /tmp/t1.py:9:33
  %19 : Tensor = aten::add(%13, %17, %18) # /tmp/t1.py:9:11
  return (%19)
with prim::fork_0 = graph(%x.1 : Tensor):
  %1 : Function = prim::Constant[name="inner"]()
  %3 : Tensor = prim::CallFunction(%1, %x.1) # /tmp/t1.py:7:10
  return (%3)
with prim::fork_1 = graph(%x.1 : Tensor):
  %1 : Function = prim::Constant[name="inner"]()
  %3 : Tensor = prim::CallFunction(%1, %x.1) # /tmp/t1.py:8:12
  return (%3)
)IR";

TEST(ForkSubgraphs, ParsePrintAndRunAsTorchPrintsThem) {
  auto cu = CompilationUnit::create();
  cu->define("inner", kInner);
  std::shared_ptr<const Graph> g = cu->define("forks", kTorchForks);
  EXPECT_EQ(g->toString(), kTorchForks);
  EXPECT_EQ(g->copy()->toString(), kTorchForks);
  Code code(*g);
  Stack stack{IValue(full({2}, 3.0))};
  code.run(stack);
  EXPECT_EQ(item(stack[0].toTensor().sum()).toDouble(), -12.0);
}

TEST(ForkSubgraphs, MissingOrExtraSubgraphsSayWhich) {
  const std::string head = R"IR(graph(%x.1 : Tensor):
  %f : Future[Tensor] = prim::fork_0(%x.1)
  %r : Tensor = aten::wait(%f)
  return (%r)
)IR";
  const std::string body = R"IR(with prim::fork_0 = graph(%a : Tensor):
  %b : Tensor = aten::neg(%a)
  return (%b)
)IR";
  EXPECT_THAT(errorOf([&] { parseIR(head); }),
              HasSubstr("expected 'with prim::fork_0 = graph(...)' giving the "
                        "subgraph of that fork"));
  EXPECT_THAT(errorOf([&] {
                parseIR(head + body + "with prim::fork_1 = graph():\n"
                                      "  return ()\n");
              }),
              HasSubstr("expected the end of the graph"));
  EXPECT_THAT(
      errorOf([&] {
        parseIR(head + "with prim::fork_0 = graph(%a : Tensor, %c : Tensor):\n"
                       "  return (%a)\n");
      }),
      HasSubstr("prim::fork_0 takes 1 inputs and its subgraph must take as "
                "many and return one value"));
  Stack stack{IValue(full({2}, 3.0))};
  Code(*parseIR(head + body)).run(stack);
  EXPECT_EQ(item(stack[0].toTensor().sum()).toDouble(), -6.0);
}

TEST(IsInstance, TestsTheRuntimeValue) {
  std::unique_ptr<Graph> g = parseIR(R"IR(graph(%x.1 : Union(Tensor, float, int)):
  %2 : bool = prim::isinstance[types=[float, int]](%x.1)
  %3 : bool = prim::isinstance[types=[Tensor]](%x.1)
  %4 : bool = prim::isinstance[types=[int[]]](%x.1)
  return (%2, %3, %4)
)IR");
  Code code(*g);
  struct Case {
    IValue in;
    bool number, tensor, ints;
  };
  const Case cases[] = {
      {IValue(int64_t{1}), true, false, false},
      {IValue(2.5), true, false, false},
      {IValue(full({1}, 1.0)), false, true, false},
      {IValue(std::vector<int64_t>{1}), false, false, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in.tagKind());
    Stack stack{c.in};
    code.run(stack);
    EXPECT_EQ(stack[0].toBool(), c.number);
    EXPECT_EQ(stack[1].toBool(), c.tensor);
    EXPECT_EQ(stack[2].toBool(), c.ints);
  }
}

}  // namespace
}  // namespace jit
}  // namespace turnout
