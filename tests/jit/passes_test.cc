// The graph passes in expected-output form: IR text before, the pass, IR
// text after. Each expected text is itself checked to parse and print back
// unchanged, so it is a graph and not just a string.
#include <functional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/parser.h"
#include "jit/passes/common_subexpression_elimination.h"
#include "jit/passes/constant_propagation.h"
#include "jit/passes/dead_code_elimination.h"
#include "jit/passes/inline_constant_branches.h"
#include "jit/passes/peephole.h"
#include "jit/passes/shape_propagation.h"
#include "jit/passes/side_effects.h"
#include "jit/runtime/interpreter.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace jit {
namespace {

using ::testing::HasSubstr;
using turnout::testing::tensorOf;
using turnout::testing::valuesOf;

using Pass = std::function<bool(Graph&)>;

struct Case {
  const char* name;
  const char* before;
  const char* after;  // nullptr: the pass changes nothing
};

void expectPass(const Pass& pass, const Case& c) {
  SCOPED_TRACE(c.name);
  std::unique_ptr<Graph> g = parseIR(c.before);
  const std::string before = g->toString();
  const bool changed = pass(*g);
  g->lint();
  const std::string expected = c.after ? c.after : before;
  EXPECT_EQ(g->toString(), expected);
  EXPECT_EQ(changed, c.after != nullptr);
  // The expected text is a graph: it parses and prints back unchanged
  // (but for tensor constants, whose data the text form leaves out).
  if (expected.find("<Tensor>") == std::string::npos) {
    EXPECT_EQ(parseIR(expected)->toString(), expected);
  }
  // A second run finds nothing more to do.
  EXPECT_FALSE(pass(*g)) << g->toString();
}

// ---- Dead code elimination -----------------------------------------------

TEST(DeadCodeElimination, ExpectedOutput) {
  const Case cases[] = {
      {"an unused pure node and what only it used",
       R"IR(graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : Tensor = aten::mul(%x, %x)
  %3 : Tensor = aten::add(%2, %x, %1)
  %4 : Tensor = aten::neg(%x)
  return (%4)
)IR",
       R"IR(graph(%x : Tensor):
  %4 : Tensor = aten::neg(%x)
  return (%4)
)IR"},
      {"a node writing to an input stays, with what it uses",
       R"IR(graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : Tensor = aten::mul(%x, %x)
  %3 : Tensor = aten::add_(%x, %2, %1)
  %4 : Tensor = aten::neg(%x)
  return (%x)
)IR",
       R"IR(graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : Tensor = aten::mul(%x, %x)
  %3 : Tensor = aten::add_(%x, %2, %1)
  return (%x)
)IR"},
      {"a random draw stays: removing it would shift later draws",
       R"IR(graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %s : int[] = prim::Constant[value=[2]]()
  %r : Tensor = aten::rand(%s, %none, %none, %none, %none)
  return (%x)
)IR",
       nullptr},
      {"an If that may raise stays; its unused outputs go",
       R"IR(graph(%c : bool,
      %x : Tensor):
  %msg : str = prim::Constant[value="bad"]()
  %y : Tensor, %z : Tensor = prim::If(%c)
    block0():
      = prim::RaiseException(%msg)
      -> (%x, %x)
    block1():
      %n : Tensor = aten::neg(%x)
      -> (%x, %n)
  return (%y)
)IR",
       R"IR(graph(%c : bool,
      %x : Tensor):
  %msg : str = prim::Constant[value="bad"]()
  %y : Tensor = prim::If(%c)
    block0():
       = prim::RaiseException(%msg)
      -> (%x)
    block1():
      -> (%x)
  return (%y)
)IR"},
      {"an If whose outputs are unused and that has no effects goes",
       R"IR(graph(%c : bool,
      %x : Tensor):
  %y : Tensor = prim::If(%c)
    block0():
      %n : Tensor = aten::neg(%x)
      -> (%n)
    block1():
      -> (%x)
  return (%x)
)IR",
       R"IR(graph(%c : bool,
      %x : Tensor):
  return (%x)
)IR"},
      {"a loop keeps what its carried values use",
       R"IR(graph(%x : Tensor,
      %n : int):
  %t : bool = prim::Constant[value=1]()
  %1 : int = prim::Constant[value=1]()
  %dead : Tensor = aten::neg(%x)
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %acc : Tensor):
      %unused : Tensor = aten::mul(%acc, %acc)
      %next : Tensor = aten::add(%acc, %x, %1)
      -> (%t, %next)
  return (%y)
)IR",
       R"IR(graph(%x : Tensor,
      %n : int):
  %t : bool = prim::Constant[value=1]()
  %1 : int = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %acc : Tensor):
      %next : Tensor = aten::add(%acc, %x, %1)
      -> (%t, %next)
  return (%y)
)IR"},
  };
  for (const Case& c : cases) expectPass(eliminateDeadCode, c);
}

// ---- Constant propagation ----------------------------------------------------

TEST(ConstantPropagation, ExpectedOutput) {
  const Case cases[] = {
      {"int arithmetic folds, then what used it",
       R"IR(graph(%x : Tensor):
  %a : int = prim::Constant[value=2]()
  %b : int = prim::Constant[value=3]()
  %c : int = aten::mul(%a, %b)
  %d : int = aten::add(%c, %a)
  %y : Tensor = aten::add(%x, %x, %d)
  return (%y)
)IR",
       R"IR(graph(%x : Tensor):
  %a : int = prim::Constant[value=2]()
  %b : int = prim::Constant[value=3]()
  %6 : int = prim::Constant[value=6]()
  %7 : int = prim::Constant[value=8]()
  %y : Tensor = aten::add(%x, %x, %7)
  return (%y)
)IR"},
      {"a list of constants and a factory on it fold to a tensor",
       R"IR(graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %two : int = prim::Constant[value=2]()
  %s : int[] = prim::ListConstruct(%two)
  %o : Tensor = aten::ones(%s, %none, %none, %none, %none)
  %y : Tensor = aten::mul(%x, %o)
  return (%y)
)IR",
       R"IR(graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %two : int = prim::Constant[value=2]()
  %6 : int[] = prim::Constant[value=[2]]()
  %7 : Float(2, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value=<Tensor>]()
  %y : Tensor = aten::mul(%x, %7)
  return (%y)
)IR"},
      // A folded tensor would be one tensor shared by every run: add_
      // would change it run after run.
      {"random draws are never folded, nor tensors in a graph that writes",
       R"IR(graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %s : int[] = prim::Constant[value=[2]]()
  %r : Tensor = aten::rand(%s, %none, %none, %none, %none)
  %o : Tensor = aten::ones(%s, %none, %none, %none, %none)
  %w : Tensor = aten::add_(%o, %o, %one)
  %y : Tensor = aten::add(%r, %w, %one)
  %z : Tensor = aten::add(%x, %y, %one)
  %two : int = aten::add(%one, %one)
  return (%z, %two)
)IR",
       R"IR(graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %s : int[] = prim::Constant[value=[2]]()
  %r : Tensor = aten::rand(%s, %none, %none, %none, %none)
  %o : Tensor = aten::ones(%s, %none, %none, %none, %none)
  %w : Tensor = aten::add_(%o, %o, %one)
  %y : Tensor = aten::add(%r, %w, %one)
  %z : Tensor = aten::add(%x, %y, %one)
  %10 : int = prim::Constant[value=2]()
  return (%z, %10)
)IR"},
      {"a tensor result returned by the graph is not folded",
       R"IR(graph():
  %none : NoneType = prim::Constant()
  %s : int[] = prim::Constant[value=[2]]()
  %o : Tensor = aten::ones(%s, %none, %none, %none, %none)
  return (%o)
)IR",
       nullptr},
      {"a node whose kernel fails is left for the run to report",
       R"IR(graph():
  %l : int[] = prim::Constant[value=[1, 2]]()
  %i : int = prim::Constant[value=5]()
  %e : int = aten::__getitem__(%l, %i)
  return (%e)
)IR",
       nullptr},
  };
  for (const Case& c : cases) expectPass(propagateConstants, c);
}

TEST(ConstantPropagation, FoldedGraphComputesTheSame) {
  const char* text = R"IR(graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %two : int = prim::Constant[value=2]()
  %s : int[] = prim::ListConstruct(%two)
  %o : Tensor = aten::ones(%s, %none, %none, %none, %none)
  %t : Tensor = aten::mul(%o, %two)
  %y : Tensor = aten::mul(%x, %t)
  return (%y)
)IR";
  std::unique_ptr<Graph> g = parseIR(text);
  ASSERT_TRUE(propagateConstants(*g));
  Tensor x = tensorOf({1.5, -2}, {2});
  Stack a{x}, b{x};
  Code(*parseIR(text)).run(a);
  Code(*g).run(b);
  EXPECT_EQ(valuesOf(a[0].toTensor()), valuesOf(b[0].toTensor()));
  EXPECT_EQ(valuesOf(b[0].toTensor()), (std::vector<double>{3, -4}));
}

// ---- Common subexpression elimination -----------------------------------------

TEST(CommonSubexpressionElimination, ExpectedOutput) {
  const Case cases[] = {
      {"repeated nodes and constants merge",
       R"IR(graph(%x : Tensor,
      %y : Tensor):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %2 : int = prim::Constant[value=1]()
  %b : Tensor = aten::mul(%x, %y)
  %c : Tensor = aten::add(%a, %b, %2)
  %d : Tensor = aten::mul(%y, %x)
  return (%c, %d)
)IR",
       R"IR(graph(%x : Tensor,
      %y : Tensor):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %c : Tensor = aten::add(%a, %a, %1)
  %d : Tensor = aten::mul(%y, %x)
  return (%c, %d)
)IR"},
      {"int 1, float 1. and bool True stay apart",
       R"IR(graph():
  %1 : int = prim::Constant[value=1]()
  %2 : float = prim::Constant[value=1.]()
  %3 : bool = prim::Constant[value=1]()
  return (%1, %2, %3)
)IR",
       nullptr},
      {"a nested block reuses what an enclosing block computed before it",
       R"IR(graph(%c : bool,
      %x : Tensor):
  %a : Tensor = aten::neg(%x)
  %r : Tensor = prim::If(%c)
    block0():
      %b : Tensor = aten::neg(%x)
      -> (%b)
    block1():
      %e : Tensor = aten::exp(%x)
      -> (%e)
  %f : Tensor = aten::exp(%x)
  return (%a, %r, %f)
)IR",
       R"IR(graph(%c : bool,
      %x : Tensor):
  %a : Tensor = aten::neg(%x)
  %r : Tensor = prim::If(%c)
    block0():
      -> (%a)
    block1():
      %e : Tensor = aten::exp(%x)
      -> (%e)
  %f : Tensor = aten::exp(%x)
  return (%a, %r, %f)
)IR"},
      {"random draws never merge",
       R"IR(graph():
  %none : NoneType = prim::Constant()
  %s : int[] = prim::Constant[value=[2]]()
  %a : Tensor = aten::rand(%s, %none, %none, %none, %none)
  %b : Tensor = aten::rand(%s, %none, %none, %none, %none)
  return (%a, %b)
)IR",
       nullptr},
      {"with a write in the graph only immutable values merge",
       R"IR(graph(%x : Tensor,
      %n : int):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %x)
  %w : Tensor = aten::add_(%x, %x, %1)
  %b : Tensor = aten::mul(%x, %x)
  %i : int = aten::add(%n, %1)
  %j : int = aten::add(%n, %1)
  return (%a, %b, %i, %j)
)IR",
       R"IR(graph(%x : Tensor,
      %n : int):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %x)
  %w : Tensor = aten::add_(%x, %x, %1)
  %b : Tensor = aten::mul(%x, %x)
  %i : int = aten::add(%n, %1)
  return (%a, %b, %i, %i)
)IR"},
  };
  for (const Case& c : cases) expectPass(eliminateCommonSubexpressions, c);
}

// ---- Peephole ---------------------------------------------------------------------

TEST(Peephole, ExpectedOutput) {
  const Case cases[] = {
      {"x + 0, x - 0, x * 1, x / 1 on a Float tensor",
       R"IR(graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu)):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %f1 : float = prim::Constant[value=1.]()
  %a : Tensor = aten::add(%x, %0, %1)
  %b : Tensor = aten::sub(%a, %0, %1)
  %c : Tensor = aten::mul(%b, %1)
  %d : Tensor = aten::div(%c, %f1)
  return (%d)
)IR",
       R"IR(graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu)):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %f1 : float = prim::Constant[value=1.]()
  return (%x)
)IR"},
      {"identities that would change the dtype stay",
       R"IR(graph(%b : Bool(2, strides=[1], requires_grad=0, device=cpu),
      %l : Long(2, strides=[1], requires_grad=0, device=cpu),
      %u : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %z : float = prim::Constant[value=0.]()
  %a : Tensor = aten::add(%b, %0, %1)
  %c : Tensor = aten::div(%l, %1)
  %d : Tensor = aten::add(%l, %z, %1)
  %e : Tensor = aten::add(%u, %0, %1)
  %f : Tensor = aten::add(%l, %0, %0)
  return (%a, %c, %d, %e, %f)
)IR",
       nullptr},
      {"a 0-dim tensor constant that does not promote",
       R"IR(graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu)):
  %k : Long(requires_grad=0, device=cpu) = prim::Constant[value={1}]()
  %y : Tensor = aten::mul(%x, %k)
  return (%y)
)IR",
       R"IR(graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu)):
  %k : Long(requires_grad=0, device=cpu) = prim::Constant[value={1}]()
  return (%x)
)IR"},
      {"t().t() of a matrix",
       R"IR(graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %u : Tensor):
  %a : Tensor = aten::t(%x)
  %b : Tensor = aten::t(%a)
  %c : Tensor = aten::t(%u)
  %d : Tensor = aten::t(%c)
  return (%b, %d)
)IR",
       R"IR(graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %u : Tensor):
  %c : Tensor = aten::t(%u)
  %d : Tensor = aten::t(%c)
  return (%x, %d)
)IR"},
      {"dim and size of a tensor of known shape",
       R"IR(graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %m : int = prim::Constant[value=-1]()
  %d : int = aten::dim(%x)
  %s : int[] = aten::size(%x)
  %l : int = aten::size(%x, %m)
  return (%d, %s, %l)
)IR",
       R"IR(graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %m : int = prim::Constant[value=-1]()
  %5 : int = prim::Constant[value=2]()
  %6 : int[] = prim::Constant[value=[2, 3]]()
  %7 : int = prim::Constant[value=3]()
  return (%5, %6, %7)
)IR"},
      {"no identity rewrite in a graph that writes",
       R"IR(graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=1]()
  %y : Tensor = aten::mul(%x, %1)
  %w : Tensor = aten::add_(%y, %x, %1)
  return (%x)
)IR",
       nullptr},
  };
  for (const Case& c : cases) expectPass(peepholeOptimize, c);
}

// ---- Inlining of constant branches -----------------------------------------------

TEST(InlineConstantBranches, ExpectedOutput) {
  const Case cases[] = {
      {"a constant true condition takes block0",
       R"IR(graph(%x : Tensor):
  %c : bool = prim::Constant[value=1]()
  %r : Tensor = prim::If(%c)
    block0():
      %y : Tensor = aten::neg(%x)
      -> (%y)
    block1():
      -> (%x)
  %z : Tensor = aten::exp(%r)
  return (%z)
)IR",
       R"IR(graph(%x : Tensor):
  %c : bool = prim::Constant[value=1]()
  %y : Tensor = aten::neg(%x)
  %z : Tensor = aten::exp(%y)
  return (%z)
)IR"},
      {"a constant false condition takes block1, nested too",
       R"IR(graph(%x : Tensor,
      %b : bool):
  %c : bool = prim::Constant[value=0]()
  %r : Tensor = prim::If(%b)
    block0():
      %s : Tensor = prim::If(%c)
        block0():
          -> (%x)
        block1():
          %y : Tensor = aten::neg(%x)
          -> (%y)
      -> (%s)
    block1():
      -> (%x)
  return (%r)
)IR",
       R"IR(graph(%x : Tensor,
      %b : bool):
  %c : bool = prim::Constant[value=0]()
  %r : Tensor = prim::If(%b)
    block0():
      %y : Tensor = aten::neg(%x)
      -> (%y)
    block1():
      -> (%x)
  return (%r)
)IR"},
      {"a loop that never runs gives its initial values",
       R"IR(graph(%x : Tensor):
  %t : bool = prim::Constant[value=1]()
  %0 : int = prim::Constant[value=0]()
  %y : Tensor = prim::Loop(%0, %t, %x)
    block0(%i : int, %acc : Tensor):
      %n : Tensor = aten::neg(%acc)
      -> (%t, %n)
  return (%y)
)IR",
       R"IR(graph(%x : Tensor):
  %t : bool = prim::Constant[value=1]()
  %0 : int = prim::Constant[value=0]()
  return (%x)
)IR"},
      {"a condition computed at run time stays",
       R"IR(graph(%x : Tensor,
      %b : bool):
  %r : Tensor = prim::If(%b)
    block0():
      -> (%x)
    block1():
      %y : Tensor = aten::neg(%x)
      -> (%y)
  return (%r)
)IR",
       nullptr},
  };
  for (const Case& c : cases) expectPass(inlineConstantBranches, c);
}

// ---- Shape propagation ----------------------------------------------------------------

TEST(ShapePropagation, ExpectedOutput) {
  const Case cases[] = {
      {"broadcasting and type promotion through the Meta kernels",
       R"IR(graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %y : Long(3, strides=[1], requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %y, %1)
  %b : Tensor = aten::mul(%y, %1)
  %c : Tensor = aten::t(%a)
  %d : Tensor = aten::gt(%c, %1)
  return (%d, %b)
)IR",
       R"IR(graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %y : Long(3, strides=[1], requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=1]()
  %a : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::add(%x, %y, %1)
  %b : Long(3, strides=[1], requires_grad=0, device=cpu) = aten::mul(%y, %1)
  %c : Float(3, 2, strides=[1, 3], requires_grad=0, device=cpu) = aten::t(%a)
  %d : Bool(3, 2, strides=[1, 3], requires_grad=0, device=cpu) = aten::gt(%c, %1)
  return (%d, %b)
)IR"},
      {"with a size unknown the dtype and the rank are known",
       R"IR(graph(%x : Float(*, 3, requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %1, %1)
  return (%a)
)IR",
       R"IR(graph(%x : Float(*, 3, requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=1]()
  %a : Float(*, *, requires_grad=0, device=cpu) = aten::add(%x, %1, %1)
  return (%a)
)IR"},
      {"an If gets what both branches agree on",
       R"IR(graph(%c : bool,
      %x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %r : Tensor = prim::If(%c)
    block0():
      %y : Tensor = aten::neg(%x)
      -> (%y)
    block1():
      %z : Tensor = aten::t(%x)
      -> (%z)
  return (%r)
)IR",
       R"IR(graph(%c : bool,
      %x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %r : Float(*, *, strides=[*, *], requires_grad=0, device=cpu) = prim::If(%c)
    block0():
      %y : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::neg(%x)
      -> (%y)
    block1():
      %z : Float(3, 2, strides=[1, 3], requires_grad=0, device=cpu) = aten::t(%x)
      -> (%z)
  return (%r)
)IR"},
      {"a node the Meta kernel rejects keeps its type",
       R"IR(graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu),
      %y : Float(3, strides=[1], requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %y, %1)
  return (%a)
)IR",
       nullptr},
  };
  for (const Case& c : cases) expectPass(propagateShapes, c);
}

TEST(ShapePropagation, RankOnlyWhenStandInSizesAgree) {
  const Case c = {"squeeze's rank depends on the sizes: only the dtype",
                  R"IR(graph(%x : Float(*, 3, requires_grad=0, device=cpu)):
  %0 : int = prim::Constant[value=0]()
  %a : Tensor = aten::squeeze(%x, %0)
  return (%a)
)IR",
                  R"IR(graph(%x : Float(*, 3, requires_grad=0, device=cpu)):
  %0 : int = prim::Constant[value=0]()
  %a : Float(requires_grad=0, device=cpu) = aten::squeeze(%x, %0)
  return (%a)
)IR"};
  expectPass(propagateShapes, c);
}

TEST(ShapePropagation, LoopCarriedValuesAgreeOverIterations) {
  const Case cases[] = {
      {"a carried value that keeps its type",
       R"IR(graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu),
      %n : int):
  %t : bool = prim::Constant[value=1]()
  %h : float = prim::Constant[value=0.5]()
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %acc : Tensor):
      %next : Tensor = aten::mul(%acc, %h)
      -> (%t, %next)
  return (%y)
)IR",
       R"IR(graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu),
      %n : int):
  %t : bool = prim::Constant[value=1]()
  %h : float = prim::Constant[value=0.5]()
  %y : Float(2, strides=[1], requires_grad=0, device=cpu) = prim::Loop(%n, %t, %x)
    block0(%i : int, %acc : Float(2, strides=[1], requires_grad=0, device=cpu)):
      %next : Float(2, strides=[1], requires_grad=0, device=cpu) = aten::mul(%acc, %h)
      -> (%t, %next)
  return (%y)
)IR"},
      // Long on entry, Float after one iteration: no dtype for every
      // iteration, so the Meta kernel cannot run and nothing is known.
      {"a carried value whose dtype changes",
       R"IR(graph(%x : Long(2, strides=[1], requires_grad=0, device=cpu),
      %n : int):
  %t : bool = prim::Constant[value=1]()
  %h : float = prim::Constant[value=0.5]()
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %acc : Tensor):
      %next : Tensor = aten::mul(%acc, %h)
      -> (%t, %next)
  return (%y)
)IR",
       nullptr},
  };
  for (const Case& c : cases) expectPass(propagateShapes, c);
}

TEST(ShapePropagation, EraseKeepsInputsAndConstants) {
  std::unique_ptr<Graph> g = parseIR(R"IR(graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu)):
  %k : Long(requires_grad=0, device=cpu) = prim::Constant[value={1}]()
  %y : Float(2, strides=[1], requires_grad=0, device=cpu) = aten::mul(%x, %k)
  return (%y)
)IR");
  EXPECT_TRUE(eraseShapeInformation(*g));
  EXPECT_EQ(g->toString(),
            R"IR(graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu)):
  %k : Long(requires_grad=0, device=cpu) = prim::Constant[value={1}]()
  %y : Tensor = aten::mul(%x, %k)
  return (%y)
)IR");
  EXPECT_FALSE(eraseShapeInformation(*g));
}

TEST(ShapePropagation, MergeTypes) {
  TensorRefinement a;
  a.dtype = ScalarType::Float;
  a.sizes = {{2, 3}};
  TensorRefinement b = a;
  b.sizes = {{2, 4}};
  EXPECT_EQ(mergeTypes(Type::tensor(a), Type::tensor(b)).toString(),
            "Float(2, *)");
  b.dtype = ScalarType::Long;
  b.sizes = {{2}};
  EXPECT_EQ(mergeTypes(Type::tensor(a), Type::tensor(b)).toString(), "Tensor");
  EXPECT_EQ(mergeTypes(Type::of(SchemaType::Kind::Int),
                       Type::of(SchemaType::Kind::Int))
                .toString(),
            "int");
}

// ---- Side effects ------------------------------------------------------------------------

TEST(SideEffects, FromSchemasAndKinds) {
  std::unique_ptr<Graph> g = parseIR(R"IR(graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %1 : int = prim::Constant[value=1]()
  %s : int[] = prim::Constant[value=[2]]()
  %a : Tensor = aten::add(%x, %x, %1)
  %w : Tensor = aten::add_(%x, %x, %1)
  %r : Tensor = aten::rand(%s, %none, %none, %none, %none)
  return (%a)
)IR");
  std::vector<Node*> nodes;
  for (Node* n : g->block()->nodes()) nodes.push_back(n);
  ASSERT_EQ(nodes.size(), 6u);
  const Node* add = nodes[3];
  const Node* add_ = nodes[4];
  const Node* rand = nodes[5];
  EXPECT_TRUE(isPure(add));
  EXPECT_FALSE(hasSideEffects(add));
  EXPECT_TRUE(writesToInputs(add_));
  EXPECT_TRUE(hasSideEffects(add_));
  EXPECT_FALSE(isPure(add_));
  EXPECT_TRUE(isNondeterministic(rand));
  EXPECT_TRUE(hasSideEffects(rand));
  EXPECT_FALSE(isPure(rand));
  EXPECT_TRUE(graphHasWrites(*g));
  EXPECT_TRUE(isPure(nodes[0]));
}

TEST(SideEffects, UnresolvedNodesAreKeptAndNeverFolded) {
  ParseOptions options;
  options.allow_unresolved = true;
  const Case c = {"an unknown operator",
                  R"IR(graph(%x : Tensor):
  %a : Tensor = myops::unknown(%x)
  return (%x)
)IR",
                  nullptr};
  auto parse = [&](const Case& k) { return parseIR(k.before, options); };
  std::unique_ptr<Graph> g = parse(c);
  EXPECT_FALSE(eliminateDeadCode(*g));
  EXPECT_FALSE(eliminateCommonSubexpressions(*g));
  EXPECT_FALSE(propagateConstants(*g));
  EXPECT_TRUE(graphHasWrites(*g));
}

}  // namespace
}  // namespace jit
}  // namespace turnout
