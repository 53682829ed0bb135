#include "dispatcher/schema/schema_matching.h"

#include <optional>
#include <string>
#include <vector>

#include "dispatcher/schema/schema_parser.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

// The argument types of a schema, so that tests can write inferred
// signatures in the schema language: "(Tensor, int) -> Tensor".
std::vector<SchemaTypePtr> typesOf(const std::vector<Argument>& arguments) {
  std::vector<SchemaTypePtr> out;
  for (const Argument& a : arguments) out.push_back(a.type());
  return out;
}

FunctionSchema inferred(const std::string& signature) {
  FunctionSchema s = parseSchema("inferred" + signature);
  return makeInferredSchema(typesOf(s.arguments()), typesOf(s.returns()));
}

TEST(SchemaMatching, PrintsInferredSchemasAsC10) {
  struct Case {
    const char* signature;
    const char* printed;
  };
  const Case cases[] = {
      {"(Tensor a) -> Tensor", "(Tensor _0) -> Tensor _0"},
      {"(Tensor a, int b, int[] c) -> (Tensor, Tensor)",
       "(Tensor _0, int _1, int[] _2) -> (Tensor _0, Tensor _1)"},
      {"() -> ()", "() -> ()"},
      {"(Tensor?[] a, SymInt b) -> ()", "(Tensor?[] _0, SymInt _1) -> ()"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.signature);
    EXPECT_EQ(toInferredSchemaString(inferred(c.signature)), c.printed);
    EXPECT_EQ(toString(inferred(c.signature)), c.printed);
  }
  // A named schema prints without its name.
  EXPECT_EQ(toInferredSchemaString(parseSchema("ns::f(Tensor x) -> Tensor")),
            "(Tensor x) -> Tensor");
}

TEST(SchemaMatching, FindsTheFirstDifference) {
  struct Case {
    const char* inferred;
    const char* specified;
    std::optional<std::string> difference;
  };
  const Case cases[] = {
      // Names, defaults, alias annotations, sizes and '*' do not matter.
      {"(Tensor a, Tensor b) -> Tensor",
       "ns::f(Tensor(a!) self, Tensor other) -> Tensor(a!)", std::nullopt},
      {"(Tensor a, int b) -> Tensor",
       "ns::f(Tensor self, *, int dim=0) -> Tensor", std::nullopt},
      {"(int[] a) -> ()", "ns::f(int[2] stride=1) -> ()", std::nullopt},
      // c10 compares C++ representations.
      {"(int a, int[] b, int? c) -> int",
       "ns::f(SymInt a, SymInt[] b, SymInt? c) -> SymInt", std::nullopt},
      {"(SymInt a) -> ()", "ns::f(int a) -> ()", std::nullopt},
      {"(int a, int? b, int c) -> ()",
       "ns::f(ScalarType a, Layout? b, MemoryFormat c) -> ()", std::nullopt},
      {"(str a, str[] b) -> ()", "ns::f(Dimname a, Dimname[] b) -> ()",
       std::nullopt},
      {"(Dict(str, Tensor) a, (int, t) b) -> t",
       "ns::f(Dict(str, Tensor) a, (int, t) b) -> t", std::nullopt},
      // Counts.
      {"(Tensor a, int b) -> Tensor", "ns::f(Tensor self) -> Tensor",
       "The number of arguments is different. 1 vs 2."},
      {"() -> Tensor", "ns::f(Tensor self) -> Tensor",
       "The number of arguments is different. 1 vs 0."},
      {"(Tensor a) -> Tensor", "ns::f(Tensor self) -> (Tensor, Tensor)",
       "The number of returns is different. 2 vs 1"},
      // c10 checks both counts before any type.
      {"(int a) -> Tensor", "ns::f(Tensor self) -> (Tensor, Tensor)",
       "The number of returns is different. 2 vs 1"},
      // Types, declared first (c10's order).
      {"(Tensor a, int b) -> Tensor", "ns::f(Tensor self, Tensor b) -> Tensor",
       "Type mismatch in argument 2: Tensor vs int"},
      {"(Tensor a) -> Tensor", "ns::f(Tensor? self) -> Tensor",
       "Type mismatch in argument 1: Tensor? vs Tensor"},
      {"(Tensor[] a) -> ()", "ns::f(Tensor?[] a) -> ()",
       "Type mismatch in argument 1: Tensor?[] vs Tensor[]"},
      {"(int[] a) -> ()", "ns::f(int a) -> ()",
       "Type mismatch in argument 1: int vs int[]"},
      {"(float a) -> ()", "ns::f(Scalar a) -> ()",
       "Type mismatch in argument 1: Scalar vs float"},
      {"(t a) -> ()", "ns::f(t1 a) -> ()",
       "Type mismatch in argument 1: t1 vs t"},
      {"(Dict(str, Tensor) a) -> ()", "ns::f(Dict(str, t) a) -> ()",
       "Type mismatch in argument 1: Dict(str, t) vs Dict(str, Tensor)"},
      {"(Tensor a) -> Tensor", "ns::f(Tensor self) -> Tensor[]",
       "Type mismatch in return 1: Tensor[] vs Tensor"},
      {"(Tensor a) -> (Tensor, int)",
       "ns::f(Tensor self) -> (Tensor a, SymInt[] b)",
       "Type mismatch in return 2: SymInt[] vs int"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.inferred) + " against " + c.specified);
    EXPECT_EQ(
        findSchemaDifferences(inferred(c.inferred), parseSchema(c.specified)),
        c.difference);
  }
}

TEST(SchemaMatching, TypesMatch) {
  using Kind = SchemaType::Kind;
  auto leaf = [](Kind k) { return SchemaType::get(k); };
  EXPECT_TRUE(typesMatch(*leaf(Kind::Int), *leaf(Kind::SymInt)));
  EXPECT_TRUE(typesMatch(*leaf(Kind::Scalar), *leaf(Kind::Number)));
  EXPECT_TRUE(typesMatch(*SchemaType::optional(leaf(Kind::Int)),
                         *SchemaType::optional(leaf(Kind::ScalarType))));
  EXPECT_FALSE(typesMatch(*leaf(Kind::Int), *leaf(Kind::Float)));
  EXPECT_FALSE(
      typesMatch(*leaf(Kind::Int), *SchemaType::optional(leaf(Kind::Int))));
  EXPECT_FALSE(typesMatch(*SchemaType::future(leaf(Kind::Int)),
                          *SchemaType::rref(leaf(Kind::Int))));
  EXPECT_FALSE(typesMatch(*SchemaType::tuple({leaf(Kind::Int)}),
                          *SchemaType::tuple({})));
}

}  // namespace
}  // namespace turnout
