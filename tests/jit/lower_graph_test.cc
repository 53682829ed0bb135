// lowerGraph (jit/passes/lower_graph.h): expected output and errors, with a
// resolver over a small tree of attributes; the class types and
// prim::GetAttr of the text form.
#include "jit/passes/lower_graph.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/parser.h"
#include "kernels/factory.h"
#include "tests/error_of.h"

namespace turnout {
namespace jit {
namespace {

using ::testing::HasSubstr;
using turnout::testing::errorOf;

// self.l (an object) holds weight (a tensor) and bias (None); self holds
// training (false), k (3), name ("m") and scale (a tensor).
class Tree {
 public:
  Tree() {
    auto obj = [](const char* what) {
      return ModuleAttribute{ModuleAttribute::Kind::Object, IValue(), what};
    };
    auto tensor = [](Tensor t) {
      return ModuleAttribute{ModuleAttribute::Kind::Tensor, IValue(t),
                             "a tensor"};
    };
    auto constant = [](IValue v, const char* what) {
      return ModuleAttribute{ModuleAttribute::Kind::Constant, v, what};
    };
    attrs_[{"l"}] = obj("a Lin");
    attrs_[{"l", "weight"}] = tensor(ones({2}));
    attrs_[{"l", "bias"}] = constant(IValue(), "a NoneType");
    attrs_[{"training"}] = constant(IValue(false), "a bool");
    attrs_[{"k"}] = constant(IValue(int64_t{3}), "a int");
    attrs_[{"name"}] = constant(IValue("m"), "a str");
    attrs_[{"scale"}] = tensor(ones({2}));
  }

  AttributeResolver resolver() {
    return [this](const std::vector<std::string>& path)
               -> std::optional<ModuleAttribute> {
      ++calls_;
      auto it = attrs_.find(path);
      if (it == attrs_.end()) return std::nullopt;
      return it->second;
    };
  }
  int calls() const { return calls_; }

 private:
  std::map<std::vector<std::string>, ModuleAttribute> attrs_;
  int calls_ = 0;
};

TEST(LowerGraph, ExpectedOutput) {
  std::unique_ptr<Graph> g = parseIR(R"IR(graph(%self : __torch__.M,
      %x : Tensor):
  %l : __torch__.Lin = prim::GetAttr[name="l"](%self)
  %w : Tensor = prim::GetAttr[name="weight"](%l)
  %t : bool = prim::GetAttr[name="training"](%self)
  %y : Tensor = prim::If(%t)
    block0():
      %l.1 : __torch__.Lin = prim::GetAttr[name="l"](%self)
      %w.1 : Tensor = prim::GetAttr[name="weight"](%l.1)
      %b : Tensor? = prim::GetAttr[name="bias"](%l.1)
      %a : Tensor = aten::mul(%x, %w.1)
      -> (%a)
    block1():
      %s : Tensor = prim::GetAttr[name="scale"](%self)
      %c : Tensor = aten::mul(%x, %s)
      -> (%c)
  %n : str = prim::GetAttr[name="name"](%self)
  %z : Tensor = aten::mul(%y, %w)
  return (%z, %n)
)IR");
  const std::string before = g->toString();
  Tree tree;
  LoweredGraph out = lowerGraph(*g, tree.resolver());
  EXPECT_EQ(g->toString(), before);
  EXPECT_EQ(out.graph->toString(), R"IR(graph(%x : Tensor,
      %l_weight : Tensor,
      %scale : Tensor):
  %t : bool = prim::Constant[value=0]()
  %y : Tensor = prim::If(%t)
    block0():
      %b : NoneType = prim::Constant()
      %a : Tensor = aten::mul(%x, %l_weight)
      -> (%a)
    block1():
      %c : Tensor = aten::mul(%x, %scale)
      -> (%c)
  %n : str = prim::Constant[value="m"]()
  %z : Tensor = aten::mul(%y, %l_weight)
  return (%z, %n)
)IR");
  out.graph->lint();
  EXPECT_EQ(out.names, (std::vector<std::string>{"l.weight", "scale"}));
  ASSERT_EQ(out.values.size(), 2u);
  EXPECT_TRUE(out.values[0].isTensor());
  // Each path is resolved once however often it is read.
  EXPECT_EQ(tree.calls(), 6);
}

TEST(LowerGraph, Errors) {
  struct ErrorCase {
    const char* name;
    const char* graph;
    const char* message;
  };
  const ErrorCase cases[] = {
      {"first input not a module", "graph(%x : Tensor):\n  return (%x)\n",
       "the graph's first input must be the module, a class type (%self : "
       "__torch__.M), but it is %x : Tensor"},
      {"module passed to a node",
       "graph(%self : __torch__.M):\n"
       "  %l : __torch__.Lin = prim::GetAttr[name=\"l\"](%self)\n"
       "  %t : (__torch__.Lin) = prim::TupleConstruct(%l)\n"
       "  return (%t)\n",
       "self.l is used by prim::TupleConstruct (input 0); only prim::GetAttr "
       "reads of a module can be lowered"},
      {"module returned by a block",
       "graph(%self : __torch__.M, %c : bool):\n"
       "  %r : __torch__.M = prim::If(%c)\n"
       "    block0():\n      -> (%self)\n    block1():\n      -> (%self)\n"
       "  return (%c)\n",
       "self is returned (by a block)"},
      {"missing attribute",
       "graph(%self : __torch__.M):\n"
       "  %l : __torch__.Lin = prim::GetAttr[name=\"l\"](%self)\n"
       "  %w : Tensor = prim::GetAttr[name=\"weights\"](%l)\n"
       "  return (%w)\n",
       "the module has no attribute self.l.weights"},
      {"tensor read as an int",
       "graph(%self : __torch__.M):\n"
       "  %s : int = prim::GetAttr[name=\"scale\"](%self)\n"
       "  return (%s)\n",
       "self.scale is a tensor, but the graph reads it as int"},
      {"object read as a tensor",
       "graph(%self : __torch__.M):\n"
       "  %s : Tensor = prim::GetAttr[name=\"l\"](%self)\n"
       "  return (%s)\n",
       "self.l is a Lin, but the graph reads it as Tensor"},
      {"constant read as a module",
       "graph(%self : __torch__.M):\n"
       "  %s : __torch__.Lin = prim::GetAttr[name=\"k\"](%self)\n"
       "  return (%self)\n",
       "self.k is a int, but the graph reads it as __torch__.Lin"},
      {"str read as a bool",
       "graph(%self : __torch__.M):\n"
       "  %s : bool = prim::GetAttr[name=\"name\"](%self)\n"
       "  return (%s)\n",
       "self.name is a str, but the graph reads it as bool"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<Graph> g = parseIR(c.graph);
    const std::string before = g->toString();
    Tree tree;
    EXPECT_THAT(errorOf([&] { lowerGraph(*g, tree.resolver()); }),
                HasSubstr(c.message));
    EXPECT_EQ(g->toString(), before);
  }
}

TEST(LowerGraph, ClassTypesPrintAsTorch) {
  const std::string text =
      "graph(%self : __torch__.torch.nn.modules.linear.___torch_mangle_0.Linear,\n"
      "      %x : Tensor):\n"
      "  %w : Tensor = prim::GetAttr[name=\"weight\"](%self)\n"
      "  return (%w)\n";
  std::unique_ptr<Graph> g = parseIR(text);
  EXPECT_EQ(g->toString(), text);
  EXPECT_TRUE(g->inputs()[0]->type().isClass());
  EXPECT_EQ(g->inputs()[0]->type().className(),
            "__torch__.torch.nn.modules.linear.___torch_mangle_0.Linear");
  EXPECT_NE(g->inputs()[0]->type(), Type::classType("__torch__.Other"));
  EXPECT_EQ(g->inputs()[0]->type(),
            Type::classType(
                "__torch__.torch.nn.modules.linear.___torch_mangle_0.Linear"));
}

}  // namespace
}  // namespace jit
}  // namespace turnout
