// Issue 15, "no input crashes it", for graphs: operand counts the passes
// used to assume (case 5), types and blocks nested without bound (case 7),
// and the size of IR text.
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/ir.h"
#include "jit/ir/parser.h"
#include "jit/passes/common_subexpression_elimination.h"
#include "jit/passes/constant_propagation.h"
#include "jit/passes/dead_code_elimination.h"
#include "jit/passes/inline_constant_branches.h"
#include "jit/passes/peephole.h"
#include "jit/passes/shape_propagation.h"
#include "jit/runtime/graph_executor.h"
#include "jit/runtime/interpreter.h"
#include "tests/error_of.h"

namespace turnout {
namespace jit {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using turnout::testing::errorOf;
using Kind = SchemaType::Kind;

std::string repeat(std::string_view s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

ErrorKind errorKindOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no error";
  return ErrorKind::Internal;
}

// ---- Case 5: a zero-input prim::TupleUnpack / prim::ListUnpack.

// The graph the issue found: lint let it through, the interpreter refused
// it cleanly, and constant propagation (run by the GraphExecutor) read the
// missing input.
std::unique_ptr<Graph> zeroInputUnpack(std::string_view kind) {
  auto g = std::make_unique<Graph>();
  Node* n = g->insertNode(g->create(std::string(kind), {}, 2));
  n->outputs()[0]->setType(Type::of(Kind::Int));
  n->outputs()[1]->setType(Type::of(Kind::Int));
  g->registerOutput(n->outputs()[0]);
  return g;
}

TEST(GraphLimits, ZeroInputUnpackIsRefusedNotRead) {
  for (std::string_view kind : {prim::kTupleUnpack, prim::kListUnpack}) {
    SCOPED_TRACE(kind);
    std::unique_ptr<Graph> g = zeroInputUnpack(kind);
    const std::string message = errorOf([&] { g->lint(); });
    EXPECT_THAT(message, StartsWith("Graph::lint(): " + std::string(kind) +
                                    " takes 1 inputs but has 0\n  at: "));
    EXPECT_EQ(errorKindOf([&] { GraphExecutor ex(*g); }),
              ErrorKind::InvalidArgument);
    EXPECT_THAT(errorOf([&] { Code code(*g); }), HasSubstr("takes 1 inputs"));
    // The passes themselves (they may see graphs lint never saw) leave it.
    EXPECT_FALSE(propagateConstants(*g));
    EXPECT_FALSE(eliminateCommonSubexpressions(*g));
    EXPECT_FALSE(peepholeOptimize(*g));
    EXPECT_FALSE(propagateShapes(*g));
    EXPECT_EQ(g->block()->nodes().first->kind(), kind);
  }
  // And from text: the parser lints.
  EXPECT_THAT(errorOf([] {
                parseIR("graph():\n  %a : int, %b : int = prim::TupleUnpack()\n"
                        "  return (%a)\n");
              }),
              HasSubstr("prim::TupleUnpack takes 1 inputs but has 0"));
}

// The same class of assumption in the other passes: block and operand
// counts of prim::If and prim::Loop that only lint() guarantees.
TEST(GraphLimits, PassesLeaveMalformedControlFlowAlone) {
  {
    // prim::If on a constant false with one block: inlining read block 1.
    Graph g;
    Value* f = g.insertConstant(IValue(false));
    Node* n = g.insertNode(g.create(std::string(prim::kIf), {f}, 0));
    n->addBlock();
    EXPECT_FALSE(inlineConstantBranches(g));
    EXPECT_FALSE(propagateShapes(g));
    EXPECT_THAT(errorOf([&] { g.lint(); }),
                HasSubstr("prim::If needs one input and two blocks"));
  }
  {
    // prim::If with an unused output whose blocks return nothing.
    Graph g;
    Value* t = g.insertConstant(IValue(true));
    Node* n = g.insertNode(g.create(std::string(prim::kIf), {t}, 1));
    n->addBlock();
    n->addBlock();
    EXPECT_NO_THROW(eliminateDeadCode(g));
    Graph g2;
    Value* c = g2.addInput("c", Type::of(Kind::Bool));
    Node* m = g2.insertNode(g2.create(std::string(prim::kIf), {c}, 1));
    m->addBlock();
    m->addBlock();
    g2.registerOutput(m->output());
    EXPECT_FALSE(propagateShapes(g2));
    EXPECT_FALSE(inlineConstantBranches(g2));
  }
  {
    // prim::Loop without a block, and with too few inputs.
    Graph g;
    Value* x = g.addInput("x");
    Node* n = g.insertNode(g.create(std::string(prim::kLoop), {x}, 1));
    g.registerOutput(n->output());
    EXPECT_FALSE(propagateShapes(g));
    EXPECT_FALSE(inlineConstantBranches(g));
    EXPECT_EQ(errorKindOf([&] { GraphExecutor ex(g); }), ErrorKind::Internal);
  }
}

// ---- Case 7: types and blocks nested without bound.

TEST(GraphLimits, DeepInputTypesStopAtTheLimitWithThePosition) {
  const int n = SchemaType::kMaxNesting;
  struct Case {
    const char* open;
    const char* close;
  };
  for (const Case& c : {Case{"(", ")"}, Case{"Dict(str, ", ")"},
                        Case{"Future[", "]"}}) {
    SCOPED_TRACE(c.open);
    const std::string ok = "graph(%x : " + repeat(c.open, n) + "int" +
                           repeat(c.close, n) + "):\n  return (%x)\n";
    std::unique_ptr<Graph> g = parseIR(ok);
    EXPECT_EQ(g->toString(), ok);
    // 20,000 deep crashed the parser; now one level over the limit is an
    // error at the opening that is one too many.
    for (int depth : {n + 1, 20000}) {
      const std::string deep = "graph(%x : " + repeat(c.open, depth) + "int" +
                               repeat(c.close, depth) + "):\n  return (%x)\n";
      const size_t column = std::string("graph(%x : ").size() +
                            std::string(c.open).size() * n + 1;
      EXPECT_THAT(errorOf([&] { parseIR(deep); }),
                  StartsWith("parse error at 1:" + std::to_string(column) +
                             ": types nested more than 256 deep"));
    }
  }
  // List and optional suffixes are loops: 100,000 of them parse and print.
  const std::string lists = "graph(%x : int" + repeat("[]", 100000) +
                            "):\n  return (%x)\n";
  std::unique_ptr<Graph> g = parseIR(lists);
  EXPECT_EQ(g->toString(), lists);
  g->lint();
}

// `depth` prim::If nested in each other's block0; the innermost returns
// %x + %x, every block1 %x. Written without indentation (the parser does
// not need it).
std::string nestedIfs(size_t depth) {
  std::string s = "graph(%c : bool, %x : int):\n";
  for (size_t i = 0; i < depth; ++i) {
    s += "%r" + std::to_string(i) + " : int = prim::If(%c)\nblock0():\n";
  }
  s += "%in : int = aten::add(%x, %x)\n";
  for (size_t i = depth; i-- > 0;) {
    s += i + 1 == depth ? std::string("-> (%in)\n")
                        : "-> (%r" + std::to_string(i + 1) + ")\n";
    s += "block1():\n-> (%x)\n";
  }
  return s + "return (%r0)\n";
}

TEST(GraphLimits, NestedIfsUpToTheLimitRun) {
  std::unique_ptr<Graph> g = parseIR(nestedIfs(kMaxBlockNesting));
  g->lint();
  EXPECT_FALSE(g->toString().empty());
  EXPECT_NO_THROW(g->copy());
  for (bool c : {true, false}) {
    Stack a{IValue(c), IValue(int64_t{5})};
    Code(*g).run(a);
    GraphExecutor ex(*g);
    Stack b{IValue(c), IValue(int64_t{5})};
    ex.run(b);
    EXPECT_EQ(a[0].toInt(), c ? 10 : 5);
    EXPECT_EQ(b[0].toInt(), a[0].toInt());
  }
}

TEST(GraphLimits, NestedIfsOverTheLimitAreRefused) {
  // From text: 20,000 crashed the parser; one over the limit is an error
  // at the block that is one level too many.
  for (size_t depth : {kMaxBlockNesting + 1, size_t{20000}}) {
    EXPECT_THAT(errorOf([&] { parseIR(nestedIfs(depth)); }),
                StartsWith("parse error at " +
                           std::to_string(3 + 2 * kMaxBlockNesting) +
                           ":1: blocks nested more than 1000 deep; flatten "
                           "the control flow"));
  }
  // Built through the API: everything that recurses over blocks refuses it
  // before it starts.
  Graph g;
  Value* c = g.addInput("c", Type::of(Kind::Bool));
  Block* b = g.block();
  for (int i = 0; i < 20000; ++i) {
    Node* n = g.create(std::string(prim::kIf), {c}, 0);
    b->appendNode(n);
    b = n->addBlock();
    n->addBlock();
  }
  const std::string lint = errorOf([&] { g.lint(); });
  EXPECT_THAT(lint, StartsWith("Graph::lint(): blocks nest more than 1000 "
                               "deep; the blocks of this node are one level "
                               "too many\n  at:  = prim::If(%c)\n"));
  const std::function<void()> refused[] = {
      [&] { g.lint(); },
      [&] { g.toString(); },
      [&] { g.copy(); },
      [&] {
        Graph other;
        std::unordered_map<const Value*, Value*> env{
            {c, other.addInput("c", Type::of(Kind::Bool))}};
        other.createClone(g.block()->nodes().first, env);
      },
      [&] {
        Graph other;
        std::unordered_map<const Value*, Value*> env{
            {c, other.addInput("c", Type::of(Kind::Bool))}};
        other.block()->cloneFrom(g.block(), env);
      },
      [&] { Code code(g); },
      [&] { GraphExecutor ex(g); },
      [&] { propagateConstants(g); },
      [&] { propagateShapes(g); },
      [&] { eraseShapeInformation(g); },
      [&] { peepholeOptimize(g); },
      [&] { inlineConstantBranches(g); },
      [&] { eliminateCommonSubexpressions(g); },
      [&] { eliminateDeadCode(g); },
  };
  for (const auto& f : refused) {
    EXPECT_EQ(errorKindOf(f), ErrorKind::InvalidArgument);
    EXPECT_THAT(errorOf(f), HasSubstr("blocks nest more than 1000 deep"));
  }
  // Destroying it frees the nested blocks in a loop (it recursed as deep).
  g.block()->nodes().first->destroy();
  EXPECT_TRUE(g.block()->empty());
  g.lint();
}

// One value used by 100,000 inputs: lint compares use lists in O(uses log
// uses) (it looked each use up in the list: 10^10 steps), and the
// interpreter summarises a value's uses once.
TEST(GraphLimits, ManyUsesOfOneValue) {
  Graph g;
  Value* x = g.addInput("x", Type::of(Kind::Int));
  std::vector<Value*> inputs(100000, x);
  Node* n = g.insertNode(g.create(std::string(prim::kListConstruct), inputs));
  n->output()->setType(Type(SchemaType::list(SchemaType::get(Kind::Int))));
  g.registerOutput(n->output());
  g.lint();
  Code code(g);
  Stack stack{IValue(int64_t{7})};
  code.run(stack);
  EXPECT_EQ(stack[0].toIntVector().size(), 100000u);
}

TEST(GraphLimits, TextOverTheSizeLimitIsRefused) {
  std::string text = "graph():\n  return ()\n";
  text.resize(size_t{64} << 20, ' ');
  EXPECT_NO_THROW(parseIR(text));
  text += ' ';
  EXPECT_EQ(errorOf([&] { parseIR(text); }),
            "parse error: the text is 67108865 bytes long, over the limit of "
            "67108864 bytes (at byte 67108864); split the graph, or check "
            "that this is IR text");
}

}  // namespace
}  // namespace jit
}  // namespace turnout
