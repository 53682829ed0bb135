#include "dispatcher/schema/function_schema.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "dispatcher/schema/schema_parser.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

using Kind = SchemaType::Kind;

SchemaTypePtr leaf(Kind kind) { return SchemaType::get(kind); }

TEST(FunctionSchema, PrintsHandBuiltSchemas) {
  SchemaTypePtr tensor = leaf(Kind::Tensor);
  struct Case {
    FunctionSchema schema;
    const char* printed;
  };
  const Case cases[] = {
      {FunctionSchema({"aten::add", "Tensor"},
                      {Argument("self", tensor), Argument("other", tensor),
                       Argument("alpha", leaf(Kind::Scalar), std::nullopt,
                                DefaultValue::fromInt(1),
                                /*kwarg_only=*/true)},
                      {Argument("", tensor)}),
       "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> "
       "Tensor"},
      {FunctionSchema(
           {"aten::max", "dim"},
           {Argument("self", tensor), Argument("dim", leaf(Kind::Int)),
            Argument("keepdim", leaf(Kind::Bool), std::nullopt,
                     DefaultValue::fromBool(false))},
           {Argument("values", tensor), Argument("indices", tensor)}),
       "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> "
       "(Tensor values, Tensor indices)"},
      {FunctionSchema({"aten::_foreach_zero_", ""},
                      {Argument("self", SchemaType::list(tensor), std::nullopt,
                                std::nullopt, false,
                                [] {
                                  AliasInfo list;
                                  list.setIsWrite(true);
                                  list.addContainedType(
                                      AliasInfo({"a"}, {"a"}, true));
                                  return list;
                                }())},
                      {}),
       "aten::_foreach_zero_(Tensor(a!)[] self) -> ()"},
      {FunctionSchema({"aten::unbind", "int"},
                      {Argument("self", tensor, std::nullopt, std::nullopt,
                                false, AliasInfo({"a"}, {"*"}, false))},
                      {Argument("", SchemaType::list(tensor))}),
       "aten::unbind.int(Tensor(a -> *) self) -> Tensor[]"},
      {FunctionSchema({"ns::f", ""}, {}, {}, /*is_vararg=*/true,
                      /*is_varret=*/true),
       "ns::f(...) -> ..."},
      {FunctionSchema({"ns::f", ""}, {Argument("a", tensor)},
                      {Argument("", tensor)}, true, true),
       "ns::f(Tensor a, ...) -> (Tensor, ...)"},
      {FunctionSchema({"ns::f", ""}, {},
                      {Argument("", SchemaType::tuple(
                                        {leaf(Kind::Str), leaf(Kind::Int)}))}),
       "ns::f() -> ((str, int))"},
      {FunctionSchema({}, {Argument("_0", tensor)}, {Argument("_0", tensor)}),
       "(Tensor _0) -> Tensor _0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.printed);
    EXPECT_EQ(toString(c.schema), c.printed);
    std::ostringstream out;
    out << c.schema;
    EXPECT_EQ(out.str(), c.printed);
    if (!c.schema.name().empty()) {
      EXPECT_EQ(parseSchema(c.printed), c.schema);
    }
  }
}

TEST(FunctionSchema, PrintsArguments) {
  SchemaTypePtr int_list = SchemaType::list(leaf(Kind::Int));
  auto ints = [](std::vector<int64_t> values) {
    std::vector<DefaultValue> out;
    for (int64_t v : values) out.push_back(DefaultValue::fromInt(v));
    return DefaultValue::fromList(std::move(out));
  };
  struct Case {
    Argument argument;
    const char* printed;
  };
  const Case cases[] = {
      {Argument("stride", int_list, 2, ints({1, 1})), "int[2] stride=1"},
      {Argument("stride", int_list, 2, ints({1, 2})), "int[2] stride=[1, 2]"},
      {Argument("dim", int_list, 1, ints({0})), "int[1] dim=[0]"},
      // Collapsing needs a size that matches: "int[] x=0" would not parse.
      {Argument("x", int_list, std::nullopt, ints({0, 0})), "int[] x=[0, 0]"},
      {Argument("x", int_list, 3, ints({0, 0})), "int[3] x=[0, 0]"},
      {Argument("x", SchemaType::list(leaf(Kind::SymInt)), 2, ints({1, 1})),
       "SymInt[2] x=[1, 1]"},
      {Argument("x", SchemaType::optional(int_list), 2, ints({3, 3})),
       "int[2]? x=3"},
      {Argument("x", SchemaType::optional(int_list), 1, DefaultValue()),
       "int[1]? x=None"},
      {Argument("mode", leaf(Kind::Str), std::nullopt,
                DefaultValue::fromString("mean")),
       "str mode=\"mean\""},
      {Argument("out", leaf(Kind::Tensor), std::nullopt, std::nullopt, true,
                AliasInfo({"a"}, {"a"}, true)),
       "Tensor(a!) out"},
      {Argument("x", SchemaType::optional(leaf(Kind::Tensor)), std::nullopt,
                std::nullopt, false, AliasInfo({"a"}, {"a"}, false)),
       "Tensor(a)? x"},
      {Argument("", SchemaType::var("t"), std::nullopt, std::nullopt, false,
                AliasInfo({"*"}, {"*"}, false)),
       "t(*)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.printed);
    EXPECT_EQ(toString(c.argument), c.printed);
  }
}

TEST(DefaultValue, PrintsAsPyTorch) {
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    DefaultValue value;
    const char* printed;
  };
  const Case cases[] = {
      {DefaultValue(), "None"},
      {DefaultValue::fromBool(true), "True"},
      {DefaultValue::fromBool(false), "False"},
      {DefaultValue::fromInt(-100), "-100"},
      {DefaultValue::fromEnumName("Mean", 1), "1"},
      {DefaultValue::fromDouble(1.0), "1."},
      {DefaultValue::fromDouble(0.0), "0."},
      {DefaultValue::fromDouble(-0.0), "-0."},
      {DefaultValue::fromDouble(60.0), "60."},
      {DefaultValue::fromDouble(0.5), "0.5"},
      {DefaultValue::fromDouble(1e-5), "1.0000000000000001e-05"},
      {DefaultValue::fromDouble(1e-8), "1e-08"},
      {DefaultValue::fromDouble(1.0 / 3), "0.33333333333333331"},
      {DefaultValue::fromDouble(1e18), "1000000000000000000."},
      {DefaultValue::fromDouble(1e19), "1e+19"},
      {DefaultValue::fromDouble(inf), "inf"},
      {DefaultValue::fromDouble(-inf), "-inf"},
      {DefaultValue::fromDouble(std::nan("")), "nan"},
      {DefaultValue::fromComplex({0, 1}), "0.+1.j"},
      {DefaultValue::fromComplex({1.5, -2}), "1.5-2.j"},
      {DefaultValue::fromString("valid"), "\"valid\""},
      {DefaultValue::fromString(" \n\t\f\v"), "\" \\n\\t\\f\\v\""},
      {DefaultValue::fromString("\"'\\"), "\"\\\"\\'\\\\\""},
      {DefaultValue::fromString("\x01\xc3\xa9"), "\"\\001\\303\\251\""},
      {DefaultValue::fromList({}), "[]"},
      {DefaultValue::fromList(
           {DefaultValue::fromInt(-2), DefaultValue::fromInt(-1)}),
       "[-2, -1]"},
      {DefaultValue::fromList(
           {DefaultValue::fromBool(true), DefaultValue::fromDouble(2)}),
       "[True, 2.]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.printed);
    EXPECT_EQ(c.value.toString(), c.printed);
  }
}

TEST(DefaultValue, Equality) {
  EXPECT_EQ(DefaultValue(), DefaultValue());
  EXPECT_EQ(DefaultValue::fromEnumName("Mean", 1), DefaultValue::fromInt(1));
  EXPECT_EQ(DefaultValue::fromEnumName("Mean", 1).spelling(), "Mean");
  EXPECT_NE(DefaultValue::fromInt(1), DefaultValue::fromDouble(1));
  EXPECT_NE(DefaultValue::fromDouble(0.0), DefaultValue::fromDouble(-0.0));
  EXPECT_EQ(DefaultValue::fromDouble(std::nan("")),
            DefaultValue::fromDouble(std::nan("")));
  EXPECT_NE(DefaultValue::fromList({DefaultValue::fromInt(1)}),
            DefaultValue::fromList({DefaultValue::fromInt(2)}));
  EXPECT_NE(DefaultValue::fromString("a"), DefaultValue::fromString("b"));
}

TEST(AliasInfo, Printing) {
  struct Case {
    AliasInfo info;
    const char* printed;
  };
  const Case cases[] = {
      {AliasInfo({"a"}, {"a"}, false), "(a)"},
      {AliasInfo({"a"}, {"a"}, true), "(a!)"},
      {AliasInfo({"a"}, {"*"}, false), "(a -> *)"},
      {AliasInfo({"b", "a"}, {"b", "a"}, false), "(b|a)"},
      {AliasInfo({"a"}, {"a", "b"}, true), "(a! -> a|b)"},
      {AliasInfo({"*"}, {"*"}, false), "(*)"},
      // Sets are sets: the same sets after as before need no arrow.
      {AliasInfo({"a", "b"}, {"b", "a"}, false), "(a|b)"},
      {AliasInfo(), "()"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.printed);
    EXPECT_EQ(c.info.toString(), c.printed);
  }
  EXPECT_EQ(AliasInfo({"a", "b"}, {"a", "b"}, false),
            AliasInfo({"b", "a"}, {"b", "a"}, false));
  EXPECT_NE(AliasInfo({"a", "b"}, {"a", "b"}, false),
            AliasInfo({"a"}, {"a"}, false));
  EXPECT_NE(AliasInfo({"a"}, {"a"}, false), AliasInfo({"a"}, {"a"}, true));
  EXPECT_NE(AliasInfo({"a"}, {"a"}, false), AliasInfo({"a"}, {"*"}, false));
  EXPECT_TRUE(AliasInfo({"*"}, {"*"}, false).isWildcardBefore());
  EXPECT_FALSE(AliasInfo({"a"}, {"*"}, false).isWildcardBefore());
}

TEST(FunctionSchema, Queries) {
  FunctionSchema s = parseSchema(
      "ns::f(Tensor a, int b, Tensor? c, Tensor[] d, Tensor?[] e, "
      "Tensor[]? f, Dict(str, Tensor) g, *, Tensor(a!) out) -> Tensor(a!)");
  EXPECT_EQ(s.tensorArgumentIndices(), (std::vector<size_t>{0, 2, 3, 4, 7}));
  EXPECT_EQ(s.argumentIndexWithName("c"), 2u);
  EXPECT_EQ(s.argumentIndexWithName("out"), 7u);
  EXPECT_EQ(s.argumentIndexWithName("missing"), std::nullopt);
  EXPECT_TRUE(s.is_mutable());
  EXPECT_TRUE(s.arguments()[7].is_out());
  EXPECT_FALSE(s.arguments()[0].is_out());

  struct Case {
    const char* schema;
    bool is_mutable;
  };
  const Case cases[] = {
      {"ns::f(Tensor self) -> Tensor", false},
      {"ns::f(Tensor(a) self) -> Tensor(a)", false},
      {"ns::f(Tensor(a!) self) -> Tensor(a!)", true},
      {"ns::f(Tensor(a!)[] self) -> ()", true},
      {"ns::f(t[](a!) self) -> ()", true},
      {"ns::f(Tensor self) -> Tensor(a!)", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.schema);
    EXPECT_EQ(parseSchema(c.schema).is_mutable(), c.is_mutable);
  }
}

TEST(FunctionSchema, EqualityComparesEveryPart) {
  const char* base =
      "ns::f(Tensor(a!) x, int[2] y=1, *, str z=\"q\") -> Tensor";
  const char* variants[] = {
      "ns::g(Tensor(a!) x, int[2] y=1, *, str z=\"q\") -> Tensor",
      "ns::f.o(Tensor(a!) x, int[2] y=1, *, str z=\"q\") -> Tensor",
      "ns::f(Tensor(a) x, int[2] y=1, *, str z=\"q\") -> Tensor",
      "ns::f(Tensor(a!) w, int[2] y=1, *, str z=\"q\") -> Tensor",
      "ns::f(Tensor(a!) x, int[3] y=1, *, str z=\"q\") -> Tensor",
      "ns::f(Tensor(a!) x, int[2] y=2, *, str z=\"q\") -> Tensor",
      "ns::f(Tensor(a!) x, *, int[2] y=1, str z=\"q\") -> Tensor",
      "ns::f(Tensor(a!) x, int[2] y=1, *, str z=\"r\") -> Tensor",
      "ns::f(Tensor(a!) x, int[2] y=1, *, str z=\"q\") -> Tensor r",
      "ns::f(Tensor(a!) x, int[2] y=1, *, str z=\"q\") -> Tensor?",
      "ns::f(Tensor(a!) x, int[2] y=1, *, str z=\"q\") -> (Tensor, ...)",
  };
  EXPECT_EQ(parseSchema(base), parseSchema(base));
  for (const char* v : variants) {
    SCOPED_TRACE(v);
    EXPECT_NE(parseSchema(base), parseSchema(v));
  }
  EXPECT_NE(parseSchema("ns::f(Tensor x) -> ()"),
            parseSchema("ns::f(Tensor x, ...) -> ()"));
}

}  // namespace
}  // namespace turnout
