// The IR: building graphs, use lists, insertion points, replacement,
// removal, copies, names, and lint() catching each broken invariant.
#include "jit/ir/ir.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/parser.h"
#include "jit/ir/resolve.h"
#include "kernels/factory.h"
#include "tests/error_of.h"

namespace turnout {
namespace jit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using turnout::testing::errorOf;

TEST(Graph, BuildsAndPrints) {
  Graph g;
  Value* x = g.addInput("x");
  Value* one = g.insertConstant(IValue(int64_t{1}));
  Node* add = g.create("aten::add", {x, x, one});
  add->setSourceLocation("model.py:1:2");
  resolveOperator(add);
  g.insertNode(add);
  add->output()->setDebugName("y");
  g.registerOutput(add->output());
  g.lint();
  EXPECT_EQ(g.toString(),
            "graph(%x : Tensor):\n"
            "  %1 : int = prim::Constant[value=1]()\n"
            "  %y : Tensor = aten::add(%x, %x, %1) # model.py:1:2\n"
            "  return (%y)\n");
  EXPECT_EQ(toString(add->op()->operator_name()), "aten::add.Tensor");
  EXPECT_THAT(x->uses(), ElementsAre(Use{add, 0}, Use{add, 1}));
}

TEST(Graph, InsertionPointsAndMoves) {
  auto g = parseIR(
      "graph(%a : int):\n"
      "  %b : int = aten::neg(%a)\n"
      "  %c : int = aten::neg(%b)\n"
      "  return (%c)\n");
  Node* b = g->outputs()[0]->node()->prev();
  {
    WithInsertPoint guard(b);
    Value* k = g->insertConstant(IValue(int64_t{5}));
    k->setDebugName("k");
  }
  EXPECT_EQ(g->insertPoint(), g->block()->returnNode());
  Node* c = g->outputs()[0]->node();
  EXPECT_THAT(errorOf([&] { c->moveAfter(c); }),
              HasSubstr("moveAfter(): both nodes must be in blocks, distinct"));
  g->lint();
  EXPECT_EQ(g->toString(),
            "graph(%a : int):\n"
            "  %k : int = prim::Constant[value=5]()\n"
            "  %b : int = aten::neg(%a)\n"
            "  %c : int = aten::neg(%b)\n"
            "  return (%c)\n");
  EXPECT_TRUE(b->prev()->isBefore(b));
  EXPECT_FALSE(b->isBefore(b->prev()));
}

TEST(Graph, ReplaceAllUsesWithAndDestroy) {
  auto g = parseIR(
      "graph(%a : int, %b : int):\n"
      "  %x : int = aten::add(%a, %b)\n"
      "  %y : int = aten::mul(%x, %x)\n"
      "  return (%y, %x)\n");
  Value* a = g->inputs()[0];
  Node* x = g->outputs()[1]->node();
  x->output()->replaceAllUsesWith(a);
  EXPECT_FALSE(x->output()->hasUses());
  x->destroy();
  g->lint();
  EXPECT_EQ(g->toString(),
            "graph(%a : int,\n      %b : int):\n"
            "  %y : int = aten::mul(%a, %a)\n"
            "  return (%y, %a)\n");
  EXPECT_EQ(a->uses().size(), 3u);
}

TEST(Graph, ReplaceUsesAfterANode) {
  auto g = parseIR(
      "graph(%a : int, %b : int):\n"
      "  %x : int = aten::add(%a, %b)\n"
      "  %y : int = aten::mul(%a, %x)\n"
      "  return (%y, %a)\n");
  Node* x = g->outputs()[0]->node()->prev();
  g->inputs()[0]->replaceAllUsesAfterNodeWith(x, x->output());
  g->lint();
  EXPECT_EQ(g->toString(),
            "graph(%a : int,\n      %b : int):\n"
            "  %x : int = aten::add(%a, %b)\n"
            "  %y : int = aten::mul(%x, %x)\n"
            "  return (%y, %x)\n");
}

TEST(Graph, DestroyRefusesAUsedNode) {
  auto g = parseIR(
      "graph(%a : int):\n  %x : int = aten::neg(%a)\n  return (%x)\n");
  EXPECT_THAT(errorOf([&] { g->outputs()[0]->node()->destroy(); }),
              HasSubstr("destroy(): %x (output of aten::neg) still has 1 uses"));
  g->lint();
}

TEST(Graph, DestroyingAnIfFreesItsBlocks) {
  auto g = parseIR(
      "graph(%c : bool, %a : int):\n"
      "  %r : int = prim::If(%c)\n"
      "    block0():\n"
      "      %n : int = aten::neg(%a)\n"
      "      -> (%n)\n"
      "    block1():\n"
      "      -> (%a)\n"
      "  return (%a)\n");
  Node* n = g->block()->nodes().first;
  n->destroy();
  g->lint();
  EXPECT_EQ(g->inputs()[1]->uses().size(), 1u);
}

TEST(Graph, CopyIsDeepAndIndependent) {
  auto g = parseIR(
      "graph(%c : bool, %a : int):\n"
      "  %r : int = prim::If(%c) # f.py:1:1\n"
      "    block0():\n"
      "      %n : int = aten::neg(%a)\n"
      "      -> (%n)\n"
      "    block1():\n"
      "      -> (%a)\n"
      "  return (%r)\n");
  std::unique_ptr<Graph> c = g->copy();
  g.reset();
  c->lint();
  EXPECT_EQ(c->toString(),
            "graph(%c : bool,\n      %a : int):\n"
            "  %r : int = prim::If(%c) # f.py:1:1\n"
            "    block0():\n"
            "      %n : int = aten::neg(%a)\n"
            "      -> (%n)\n"
            "    block1():\n"
            "      -> (%a)\n"
            "  return (%r)\n");
  // New values never take an existing name.
  Value* v = c->insertConstant(IValue(true));
  EXPECT_NE(v->debugName(), "r");
  c->lint();
}

TEST(Graph, NamesStayUnique) {
  Graph g;
  Value* a = g.addInput("x");
  Value* b = g.addInput("y");
  b->setDebugName("x");
  EXPECT_EQ(b->debugName(), "x");
  EXPECT_EQ(a->debugName(), "x.1");
  g.lint();
  EXPECT_THAT(errorOf([&] { a->setDebugName("a b"); }),
              HasSubstr("' ' may not appear in a value name"));
  EXPECT_THAT(errorOf([&] { a->setDebugName(""); }),
              HasSubstr("the name is empty"));
}

TEST(Graph, ConstantsOfEveryKind) {
  Graph g;
  std::vector<IValue> values = {
      IValue(), IValue(true), IValue(int64_t{-4}), IValue(2.5),
      IValue(std::string("s")), IValue(Device("meta")),
      IValue(std::vector<int64_t>{1, 2}), IValue(std::vector<double>{0.5}),
      IValue(full({}, Scalar(int64_t{3}), TensorOptions().dtype(ScalarType::Long)))};
  for (const IValue& v : values) g.registerOutput(g.insertConstant(v));
  g.lint();
  EXPECT_EQ(g.toString(),
            "graph():\n"
            "  %0 : NoneType = prim::Constant()\n"
            "  %1 : bool = prim::Constant[value=1]()\n"
            "  %2 : int = prim::Constant[value=-4]()\n"
            "  %3 : float = prim::Constant[value=2.5]()\n"
            "  %4 : str = prim::Constant[value=\"s\"]()\n"
            "  %5 : Device = prim::Constant[value=\"meta\"]()\n"
            "  %6 : int[] = prim::Constant[value=[1, 2]]()\n"
            "  %7 : float[] = prim::Constant[value=[0.5]]()\n"
            "  %8 : Long(requires_grad=0, device=cpu) = "
            "prim::Constant[value={3}]()\n"
            "  return (%0, %1, %2, %3, %4, %5, %6, %7, %8)\n");
  for (size_t i = 0; i < values.size(); ++i) {
    SCOPED_TRACE(i);
    IValue back = *toIValue(g.outputs()[i]);
    EXPECT_EQ(back.tag(), values[i].tag());
  }
  // Tuples of None, bool, int, float, str (and such tuples) are constants,
  // printed as torch prints them; a tuple holding a list is not.
  Value* t = g.insertConstant(IValue::makeTuple(
      {IValue(2.5), IValue("s"), IValue(true), IValue(),
       IValue::makeTuple({IValue(int64_t{1})})}));
  EXPECT_EQ(t->node()->toString(),
            "%" + t->debugName() +
                " : (float, str, bool, NoneType, (int)) = "
                "prim::Constant[value=(2.5, \"s\", True, None, (1,))]()");
  EXPECT_THAT(errorOf([&] {
                g.insertConstant(IValue::makeTuple(
                    {IValue(std::vector<int64_t>{1})}));
              }),
              HasSubstr("a tuple constant holds only None, bool, int, float, "
                        "str and such tuples"));
  g.lint();
}

// Each case breaks one invariant behind the API's back, as a buggy pass
// would, and checks lint() names it.
TEST(Graph, LintCatchesBrokenInvariants) {
  const char* text =
      "graph(%c : bool, %a : int):\n"
      "  %r : int = prim::If(%c)\n"
      "    block0():\n"
      "      %n : int = aten::neg(%a)\n"
      "      -> (%n)\n"
      "    block1():\n"
      "      -> (%a)\n"
      "  %m : int = aten::neg(%r)\n"
      "  return (%m)\n";
  {
    SCOPED_TRACE("use of a value defined inside a block");
    auto g = parseIR(text);
    Node* m = g->outputs()[0]->node();
    Value* n = g->block()->nodes().first->blocks()[0]->outputs()[0];
    m->replaceInput(0, n);
    EXPECT_THAT(errorOf([&] { g->lint(); }),
                HasSubstr("input %n of aten::neg is not defined before it"));
  }
  {
    SCOPED_TRACE("use before definition");
    auto g = parseIR(text);
    Node* m = g->outputs()[0]->node();
    m->moveBefore(g->block()->nodes().first);
    EXPECT_THAT(errorOf([&] { g->lint(); }),
                HasSubstr("input %r of aten::neg is not defined before it"));
  }
  {
    SCOPED_TRACE("prim::If output count");
    auto g = parseIR(text);
    Node* ifn = g->block()->nodes().first;
    ifn->blocks()[1]->eraseOutput(0);
    EXPECT_THAT(errorOf([&] { g->lint(); }),
                HasSubstr("a prim::If block takes no inputs and returns as "
                          "many values as the node has outputs"));
  }
  {
    SCOPED_TRACE("prim::Loop shape");
    auto g = parseIR(
        "graph(%n : int, %c : bool):\n"
        "   = prim::Loop(%n, %c)\n"
        "    block0(%i : int):\n"
        "      -> (%c)\n"
        "  return ()\n");
    g->block()->nodes().first->blocks()[0]->addInput("extra");
    EXPECT_THAT(errorOf([&] { g->lint(); }),
                HasSubstr("prim::Loop with 0 carried values"));
  }
  {
    SCOPED_TRACE("a node that takes blocks");
    auto g = parseIR(text);
    g->outputs()[0]->node()->addBlock();
    EXPECT_THAT(errorOf([&] { g->lint(); }),
                HasSubstr("aten::neg may not have blocks"));
  }
}

TEST(Graph, ApiErrors) {
  Graph g;
  Graph other;
  Value* x = other.addInput("x");
  Node* n = g.create("aten::neg", {}, 1);
  EXPECT_THAT(errorOf([&] { n->addInput(x); }),
              HasSubstr("an input must be a value of the same graph"));
  EXPECT_THAT(errorOf([&] { n->input(0); }),
              HasSubstr("aten::neg: input 0 out of range"));
  EXPECT_THAT(errorOf([&] { n->attribute("value"); }),
              HasSubstr("aten::neg has no attribute 'value'"));
  g.insertNode(n);
  EXPECT_THAT(errorOf([&] { n->insertBefore(g.block()->returnNode()); }),
              HasSubstr("the node is already in a block"));
  n->destroy();
  g.lint();
}

}  // namespace
}  // namespace jit
}  // namespace turnout
