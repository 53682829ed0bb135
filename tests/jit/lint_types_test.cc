// Graph::lint() checks that every value is used as its user expects (issue
// 15, case 11): graphs that linted but were ill-typed ran differently in
// the interpreter and after the graph executor's passes (one raised, the
// other returned). Each graph below parsed and linted before; now the
// parser (which lints) refuses it, naming the node.
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/ir.h"
#include "jit/ir/parser.h"
#include "jit/passes/constant_propagation.h"
#include "jit/runtime/graph_executor.h"
#include "jit/runtime/interpreter.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace jit {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using turnout::testing::errorOf;

struct IllTyped {
  const char* what;
  const char* ir;
  const char* message;  // after "Graph::lint(): "
};

const IllTyped kIllTyped[] = {
    {"an int condition", R"IR(graph(%x : int):
  %y : int = prim::If(%x)
    block0():
      -> (%x)
    block1():
      -> (%x)
  return (%y))IR",
     "the condition of prim::If must be bool, not %x : int"},
    {"a Tensor condition", R"IR(graph(%x : Tensor):
   = prim::If(%x)
    block0():
      -> ()
    block1():
      -> ()
  return (%x))IR",
     "the condition of prim::If must be bool, not %x : Tensor"},
    {"a branch returning a float for an int", R"IR(graph(%c : bool, %x : int):
  %f : float = prim::Constant[value=1.5]()
  %y : int = prim::If(%c)
    block0():
      -> (%f)
    block1():
      -> (%x)
  return (%y))IR",
     "block0 returns %f : float for output %y : int"},
    {"a float trip count", R"IR(graph(%n : float, %x : int):
  %t : bool = prim::Constant[value=1]()
  %y : int = prim::Loop(%n, %t, %x)
    block0(%i : int, %a : int):
      -> (%t, %a)
  return (%y))IR",
     "the max trip count (input 0) of prim::Loop must be int, not %n : "
     "float"},
    {"an int loop condition", R"IR(graph(%n : int, %x : int):
  %y : int = prim::Loop(%n, %n, %x)
    block0(%i : int, %a : int):
      -> (%a, %a)
  return (%y))IR",
     "the start condition (input 1) of prim::Loop must be bool, not %n : "
     "int"},
    {"a carried float into an int", R"IR(graph(%n : int, %x : float):
  %t : bool = prim::Constant[value=1]()
  %y : int = prim::Loop(%n, %t, %x)
    block0(%i : int, %a : int):
      -> (%t, %a)
  return (%y))IR",
     "loop-carried value 0 has types %x : float (in), %a : int (block "
     "input), %a : int (block output) and %y : int (out) that do not fit "
     "each other"},
    {"a ListUnpack of a tuple", R"IR(graph():
  %a : int = prim::Constant[value=1]()
  %t : (int, int) = prim::TupleConstruct(%a, %a)
  %x : int, %y : int = prim::ListUnpack(%t)
  return (%x))IR",
     "prim::ListUnpack into 2 values needs a list, not %t : (int, int)"},
    // The interpreter raised "expected a tuple to unpack but got a list";
    // constant propagation folded it and the executor returned 1.
    {"a TupleUnpack of a list", R"IR(graph():
  %l : int[] = prim::Constant[value=[1, 2]]()
  %x : int, %y : int = prim::TupleUnpack(%l)
  return (%x))IR",
     "prim::TupleUnpack into 2 values needs a tuple of 2 elements, not %l : "
     "int[]"},
    {"a TupleUnpack into too many", R"IR(graph(%t : (int, int)):
  %x : int, %y : int, %z : int = prim::TupleUnpack(%t)
  return (%x))IR",
     "prim::TupleUnpack into 3 values needs a tuple of 3 elements, not %t : "
     "(int, int)"},
    {"an unpacked int declared Tensor", R"IR(graph(%l : int[]):
  %x : Tensor, %y : int = prim::ListUnpack(%l)
  return (%x))IR",
     "output 0 (%x : Tensor) cannot hold an element of %l : int[]"},
    {"an int[] of floats", R"IR(graph(%f : float):
  %l : int[] = prim::ListConstruct(%f, %f)
  return (%l))IR",
     "input 0 (%f : float) does not fit the element type of %l : int[]"},
    {"a list declared Tensor", R"IR(graph(%f : float):
  %l : Tensor = prim::ListConstruct(%f, %f)
  return (%l))IR",
     "prim::ListConstruct makes a list, not %l : Tensor"},
    {"a tuple of the wrong arity", R"IR(graph(%f : float):
  %t : (float, float, float) = prim::TupleConstruct(%f, %f)
  return (%t))IR",
     "prim::TupleConstruct of 2 values makes a tuple of as many, not %t : "
     "(float, float, float)"},
    {"a tuple of the wrong types", R"IR(graph(%f : float):
  %t : (float, Tensor) = prim::TupleConstruct(%f, %f)
  return (%t))IR",
     "input 1 (%f : float) does not fit element 1 of %t : (float, Tensor)"},
    // __getitem__.t(t[] list, int idx) -> t: t is int here.
    {"an element of int[] declared Tensor", R"IR(graph(%l : int[]):
  %0 : int = prim::Constant[value=0]()
  %x : Tensor = aten::__getitem__(%l, %0)
  %y : Tensor = aten::neg(%x)
  return (%y))IR",
     "output 0 (%x : Tensor) of aten::__getitem__.t is declared with a type "
     "its result (int) cannot have"},
    {"a Tensor result declared int", R"IR(graph(%a : Tensor):
  %x : int = aten::neg(%a)
  return (%x))IR",
     "output 0 (%x : int) of aten::neg is declared with a type its result "
     "(Tensor) cannot have"},
    {"an int exception message", R"IR(graph(%x : int):
   = prim::RaiseException(%x)
  return (%x))IR",
     "the message (input 0) of prim::RaiseException must be str, not %x : "
     "int"},
    {"a wait on a Tensor", R"IR(graph(%x : Tensor):
  %y : Tensor = aten::wait(%x)
  return (%y))IR",
     "aten::wait takes a Future, not %x : Tensor"},
    {"a fork typed as its result", R"IR(graph(%x : Tensor):
  %f : Tensor = prim::fork(%x)
    block0(%a : Tensor):
      %b : Tensor = aten::neg(%a)
      -> (%b)
  return (%x))IR",
     "prim::fork's output must be a Future of what its block returns (%b : "
     "Tensor), not %f : Tensor"},
};

TEST(LintTypes, IllTypedGraphsAreRefused) {
  for (const IllTyped& c : kIllTyped) {
    SCOPED_TRACE(c.what);
    try {
      parseIR(c.ir);
      ADD_FAILURE() << "parsed and linted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_THAT(e.message(),
                  StartsWith(std::string("Graph::lint(): ") + c.message +
                             "\n  at: "));
    }
  }
}

// What TorchScript's subtyping allows still lints, and runs the same with
// and without the executor's passes.
TEST(LintTypes, SubtypesAreAccepted) {
  const char* graphs[] = {
      // Tensor refinements either way; a Scalar result declared float.
      R"IR(graph(%x : Float(2, 3)):
  %n : NoneType = prim::Constant()
  %y : Float(2, 3) = aten::neg(%x)
  %s : Tensor = aten::sum(%y, %n)
  %f : float = aten::item(%s)
  %g : float = aten::neg(%f)
  return (%g))IR",
      // None and int for int?; a refined tensor out of a Tensor[].
      R"IR(graph(%c : bool, %x : Tensor):
  %n : NoneType = prim::Constant()
  %1 : int = prim::Constant[value=1]()
  %o : int? = prim::If(%c)
    block0():
      -> (%n)
    block1():
      -> (%1)
  %l : Tensor[] = prim::ListConstruct(%x, %x)
  %a : Float(2, 3), %b : Tensor = prim::ListUnpack(%l)
  %t : (Tensor, int?) = prim::TupleConstruct(%a, %o)
  %u : Tensor, %v : int? = prim::TupleUnpack(%t)
  %r : Tensor = aten::add(%u, %b, %1)
  return (%r))IR",
  };
  for (const char* ir : graphs) {
    SCOPED_TRACE(ir);
    std::unique_ptr<Graph> g = parseIR(ir);
    const Tensor x =
        turnout::testing::tensorOf({1., 2., 3., 4., 5., 6.}, {2, 3});
    Stack a = g->inputs().size() == 1
                  ? Stack{IValue(x)}
                  : Stack{IValue(true), IValue(x)};
    Stack b = a;
    Code(*g).run(a);
    GraphExecutor ex(*g);
    ex.run(b);
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(b.size(), 1u);
    if (a[0].isTensor()) {
      EXPECT_EQ(turnout::testing::valuesOf(a[0].toTensor()),
                turnout::testing::valuesOf(b[0].toTensor()));
    } else {
      EXPECT_EQ(a[0].toDouble(), b[0].toDouble());
    }
  }
}

// prim::unchecked_cast claims a type without a check: torch's passes leave
// a cast of a None constant to bool in a branch that never runs (inlined
// F.cross_entropy: `if size_average is not None` on a None argument). It
// lints, runs (the branch is not taken) and the executor's passes fold it.
TEST(LintTypes, UncheckedCastOfNoneToAnyTypeLints) {
  const char* ir = R"IR(graph(%x : Tensor):
  %n : NoneType = prim::Constant()
  %f : bool = prim::Constant[value=0]()
  %c : bool = aten::__isnot__(%n, %n)
  %r : Tensor = prim::If(%c)
    block0():
      %b : bool = prim::unchecked_cast(%n)
      %t : Tensor = prim::unchecked_cast(%n)
      %u : Tensor = aten::mul(%t, %b)
      -> (%u)
    block1():
      %v : Tensor = aten::neg(%x)
      -> (%v)
  return (%r))IR";
  std::unique_ptr<Graph> g = parseIR(ir);
  const Tensor x = turnout::testing::tensorOf({1., -2.}, {2});
  Stack a{IValue(x)};
  Stack b{IValue(x)};
  Code(*g).run(a);
  GraphExecutor ex(*g);
  ex.run(b);
  EXPECT_EQ(turnout::testing::valuesOf(a[0].toTensor()),
            (std::vector<double>{-1., 2.}));
  EXPECT_EQ(turnout::testing::valuesOf(b[0].toTensor()),
            (std::vector<double>{-1., 2.}));
}

// Constant propagation itself unpacks only what the interpreter would: a
// list with ListUnpack, a tuple with TupleUnpack (it folded either with
// either).
TEST(LintTypes, ConstantPropagationUnpacksLikeTheInterpreter) {
  Graph g;
  Value* l = g.insertConstant(IValue(std::vector<int64_t>{1, 2}));
  Node* n = g.insertNode(g.create(std::string(prim::kTupleUnpack), {l}, 2));
  for (Value* v : n->outputs()) v->setType(Type::of(SchemaType::Kind::Int));
  g.registerOutput(n->outputs()[0]);
  EXPECT_FALSE(propagateConstants(g));
  EXPECT_EQ(n->outputs()[0]->uses().size(), 1u);
}

// Counts too: an operator node with the wrong number of inputs or outputs
// (buildable through the API) is refused by lint, not by the passes.
TEST(LintTypes, OperatorArityIsChecked) {
  std::unique_ptr<Graph> g = parseIR(R"IR(graph(%x : Tensor):
  %y : Tensor = aten::neg(%x)
  return (%y))IR");
  Node* neg = g->block()->nodes().first;
  neg->addInput(g->inputs()[0]);
  EXPECT_THAT(errorOf([&] { g->lint(); }),
              StartsWith("Graph::lint(): aten::neg takes 1 inputs "
                         "(aten::neg(Tensor self) -> Tensor) but the node has "
                         "2\n  at: %y : Tensor = aten::neg(%x, %x)"));
  neg->removeInput(1);
  neg->addOutput();
  EXPECT_THAT(errorOf([&] { GraphExecutor ex(*g); }),
              HasSubstr("aten::neg returns 1 values (aten::neg(Tensor self) "
                        "-> Tensor) but the node has 2 outputs"));
}

}  // namespace
}  // namespace jit
}  // namespace turnout
