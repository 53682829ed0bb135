#include "dispatcher/schema/schema_parser.h"

#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/schema/function_schema.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

using Kind = SchemaType::Kind;

// Schemas that print back exactly as written: every type form, alias form
// and default form of the language. Each was checked against PyTorch 1.13's
// str(torch._C.parse_schema(s)).
TEST(SchemaParser, RoundTripsCanonicalText) {
  const char* cases[] = {
      // Names.
      "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> "
      "Tensor",
      "foo(Tensor x) -> Tensor",
      "aten::relu(Tensor self) -> Tensor",
      "my_ops::_private.out_2(Tensor self) -> Tensor",
      // Every leaf type.
      "ns::f(Tensor a, int b, SymInt c, float d, bool e, str f, Scalar g, "
      "ScalarType h, Layout i, MemoryFormat j, Device k, Generator l, "
      "Dimname m, Storage n, Stream o, QScheme p, complex q, number r, Any s, "
      "AnyEnumType t, AnyClassType u, NoneType v) -> ()",
      // Containers and their combinations.
      "ns::f(Tensor? a, Tensor[] b, Tensor?[] c, Tensor?[]? d, int[] e, "
      "int[]? f, int?[] g, int[][] h, str[][] i, SymInt[] j, SymInt[]? k, "
      "Generator? l, Dimname[] m, Dimname[1]? n) -> SymInt[]",
      "ns::f(int[2] a, int[1]? b, SymInt[3] c, bool[3] d, int?[2] e) -> ()",
      "ns::f(Dict(str, t) a, Dict(int, Tensor) b, Future(t) c, RRef(t) d, "
      "(str, t) e, () f, (int, (str, float)) g) -> Future(t)",
      "ns::f(t x, t1 y, tVal z, t[] w, t? v) -> t",
      // Alias annotations.
      "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> "
      "Tensor(a!)",
      "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
      "aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
      "ns::f(Tensor(a!)[] self, Tensor(b!)[]? other) -> ()",
      "ns::f(Tensor[](a!) self, t[](a) other, Tensor(a)[](b) x) -> t[](*)",
      "ns::f(Tensor(a)? x, Tensor(a!)? y, t(*) z) -> t(*)?",
      "ns::f(Tensor(*) x, Tensor(a|b) y, Tensor(a! -> a|b) z) -> Tensor(b|a)",
      "aten::update.str(Dict(str, t)(a!) self, Dict(str, t)(a!) to_add) -> ()",
      "aten::to_here(RRef(t) self, float timeout=60.) -> t(*)",
      // Defaults.
      "ns::f(int a=0, int b=-1, int c=9223372036854775807, "
      "int d=-9223372036854775808, bool e=True, bool f=False, int? g=None) "
      "-> ()",
      "ns::f(float a=0., float b=1., float c=0.5, float d=-2.5, "
      "float e=1.0000000000000001e-05, float f=1e-08, "
      "float g=0.33333333333333331, float h=10000000000., float i=1e+19, "
      "float j=inf, float k=-inf, float l=nan, float m=-0.) -> ()",
      "ns::f(Scalar a=1, Scalar b=1., Scalar c=0.01, Scalar d=True, "
      "Scalar e=0.+1.j, complex f=1.-2.5j, float? g=1, float? h=1.) -> ()",
      "ns::f(str a=\"mean\", str b=\" \\n\\t\\f\\v\", str c=\"\\\"\\'\\\\\", "
      "str? d=None, str e=\"\", str f=\"\\001\\303\\251\") -> ()",
      "ns::f(int[2] a=1, int[2] b=[1, 2], int[1] c=[3], int[] d=[], "
      "int[] e=[-2, -1], int[3] f=[], SymInt[2] g=[1, 1], "
      "bool[3] h=[True, True, True], float[2] i=[1., 1.], "
      "float[] j=[1., 2.5], int[1]? k=None) -> ()",
      "ns::f(int[] a=[0, 0], int[2]? b=1, str[] c=[\"a\", \"b\"], "
      "int[][] d=[[1], []], Tensor?[] e=[None]) -> ()",
      "ns::f(Tensor? a=None, Generator? b=None, Tensor c=None, "
      "ScalarType? d=None, Layout? e=None, Device? f=None, "
      "MemoryFormat? g=None, Device h=\"cuda:0\") -> ()",
      // Keyword-only arguments, varargs, returns.
      "ns::f(Tensor a, *, Tensor b, int c=1) -> (Tensor values, "
      "Tensor indices)",
      "ns::f(*, Tensor(a!) out) -> Tensor(a!)",
      "ns::f(int a=1, *, int b) -> ()",
      "ns::f(int a=1, int[] b) -> ()",
      "ns::f() -> ()",
      "ns::f(...) -> ...",
      "ns::f(Tensor a, ...) -> (Tensor, ...)",
      "ns::f(...) -> ()",
      "ns::f() -> (Tensor, Tensor)",
      "ns::f() -> (str, t)",
      "ns::f() -> ((str, t))",
      "aten::items.str(Dict(str, t) self) -> ((str, t)[])",
      "ns::f() -> Tensor out",
  };
  for (const char* text : cases) {
    SCOPED_TRACE(text);
    FunctionSchema schema = parseSchema(text);
    EXPECT_EQ(toString(schema), text);
    EXPECT_EQ(parseSchema(toString(schema)), schema);
  }
}

// Text that parses but prints differently: the printed form is PyTorch
// 1.13's str() of the same input, except where noted.
TEST(SchemaParser, PrintsCanonicalForm) {
  struct Case {
    const char* input;
    const char* printed;
  };
  const Case cases[] = {
      {"ns::f(Tensor  x ,  int   y = 2)->Tensor",
       "ns::f(Tensor x, int y=2) -> Tensor"},
      {"ns::f(Tensor x,\n      Tensor y)\n    -> Tensor",
       "ns::f(Tensor x, Tensor y) -> Tensor"},
      // Enum names print as PyTorch's integer values.
      {"ns::f(int reduction=Mean) -> ()", "ns::f(int reduction=1) -> ()"},
      {"ns::f(MemoryFormat m=contiguous_format) -> ()",
       "ns::f(MemoryFormat m=0) -> ()"},
      {"ns::f(ScalarType s=long, Layout l=strided, ScalarType t=float, "
       "ScalarType c=complex) -> ()",
       "ns::f(ScalarType s=4, Layout l=0, ScalarType t=6, ScalarType c=9) -> "
       "()"},
      // Sized lists repeat a single value; int lists collapse back.
      {"ns::f(int[2] stride=[1, 1]) -> ()", "ns::f(int[2] stride=1) -> ()"},
      {"ns::f(int[2] stride=[1,2]) -> ()", "ns::f(int[2] stride=[1, 2]) -> ()"},
      {"ns::f(int[1] stride=3) -> ()", "ns::f(int[1] stride=[3]) -> ()"},
      {"ns::f(SymInt[2] stride=1) -> ()",
       "ns::f(SymInt[2] stride=[1, 1]) -> ()"},
      {"ns::f(bool[3] m=True) -> ()",
       "ns::f(bool[3] m=[True, True, True]) -> ()"},
      {"ns::f(float[2] m=1) -> ()", "ns::f(float[2] m=[1., 1.]) -> ()"},
      // Numbers.
      {"ns::f(float x=1) -> ()", "ns::f(float x=1.) -> ()"},
      {"ns::f(float x=1e-5) -> ()",
       "ns::f(float x=1.0000000000000001e-05) -> ()"},
      {"ns::f(float x=1e10) -> ()", "ns::f(float x=10000000000.) -> ()"},
      {"ns::f(float x=1.5e300) -> ()",
       "ns::f(float x=1.5000000000000001e+300) -> ()"},
      {"ns::f(float x=0.1) -> ()", "ns::f(float x=0.10000000000000001) -> ()"},
      {"ns::f(float x=.5) -> ()", "ns::f(float x=0.5) -> ()"},
      {"ns::f(float x=9007199254740993) -> ()",
       "ns::f(float x=9007199254740992.) -> ()"},
      {"ns::f(float[] x=[1, 2.5]) -> ()", "ns::f(float[] x=[1., 2.5]) -> ()"},
      {"ns::f(Scalar x=1.0) -> ()", "ns::f(Scalar x=1.) -> ()"},
      {"ns::f(Scalar x=1e-5) -> ()",
       "ns::f(Scalar x=1.0000000000000001e-05) -> ()"},
      {"ns::f(complex x=1j) -> ()", "ns::f(complex x=0.+1.j) -> ()"},
      {"ns::f(Scalar x=-2.5j) -> ()", "ns::f(Scalar x=0.-2.5j) -> ()"},
      // PyTorch rejects these two; turnout widens them to the type.
      {"ns::f(complex x=1) -> ()", "ns::f(complex x=1.+0.j) -> ()"},
      {"ns::f(float x=-inf) -> ()", "ns::f(float x=-inf) -> ()"},
      // Strings print double-quoted, escaped.
      {"ns::f(str x='abc') -> ()", "ns::f(str x=\"abc\") -> ()"},
      {"ns::f(str x=\"a'b\\\"c\\n\") -> ()",
       "ns::f(str x=\"a\\'b\\\"c\\n\") -> ()"},
      {"ns::f(str x='\\x41\\101\\r') -> ()", "ns::f(str x=\"AA\\r\") -> ()"},
      // Types.
      {"ns::f(None x) -> None", "ns::f(NoneType x) -> NoneType"},
      // Returns.
      {"ns::f() -> (Tensor)", "ns::f() -> Tensor"},
      {"ns::f() -> (Tensor a)", "ns::f() -> Tensor a"},
      {"ns::f(Tensor a, ...) -> (...)", "ns::f(Tensor a, ...) -> ..."},
      {"ns::f(Tensor a, *) -> ()", "ns::f(Tensor a) -> ()"},
      // Alias annotations: an element's annotation stays with the element
      // (PyTorch prints "Tensor?(a)[]", which it cannot parse).
      {"ns::f(Tensor(a)?[] x) -> ()", "ns::f(Tensor(a)?[] x) -> ()"},
      {"ns::f(Tensor(a -> a) x) -> ()", "ns::f(Tensor(a) x) -> ()"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.input);
    FunctionSchema schema = parseSchema(c.input);
    EXPECT_EQ(toString(schema), c.printed);
    EXPECT_EQ(parseSchema(toString(schema)), schema);
  }
}

TEST(SchemaParser, BuildsTheStructure) {
  FunctionSchema s = parseSchema(
      "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, "
      "Tensor(a!) out) -> Tensor(a!)");
  EXPECT_EQ(s.name(), "aten::add");
  EXPECT_EQ(s.overload_name(), "out");
  EXPECT_EQ(s.operator_name(), (OperatorName{"aten::add", "out"}));
  ASSERT_EQ(s.arguments().size(), 4u);
  ASSERT_EQ(s.returns().size(), 1u);
  EXPECT_FALSE(s.is_vararg());
  EXPECT_FALSE(s.is_varret());

  const Argument& self = s.arguments()[0];
  EXPECT_EQ(self.name(), "self");
  EXPECT_EQ(self.type(), SchemaType::get(Kind::Tensor));
  EXPECT_FALSE(self.kwarg_only());
  EXPECT_FALSE(self.default_value());
  EXPECT_FALSE(self.alias_info());

  const Argument& alpha = s.arguments()[2];
  EXPECT_EQ(alpha.type()->kind(), Kind::Scalar);
  EXPECT_TRUE(alpha.kwarg_only());
  ASSERT_TRUE(alpha.default_value());
  EXPECT_EQ(alpha.default_value()->toInt(), 1);

  const Argument& out = s.arguments()[3];
  EXPECT_TRUE(out.kwarg_only());
  EXPECT_TRUE(out.is_out());
  ASSERT_TRUE(out.alias_info());
  EXPECT_EQ(out.alias_info()->beforeSets(), std::vector<std::string>{"a"});
  EXPECT_EQ(out.alias_info()->afterSets(), std::vector<std::string>{"a"});
  EXPECT_TRUE(out.alias_info()->isWrite());

  EXPECT_EQ(s.returns()[0].name(), "");
  EXPECT_TRUE(s.returns()[0].alias_info()->isWrite());
  EXPECT_TRUE(s.is_mutable());
}

TEST(SchemaParser, ListAliasAnnotations) {
  FunctionSchema s = parseSchema(
      "ns::f(Tensor(a!)[] x, Tensor[](b) y, Tensor(c -> *) z) -> ()");
  // Tensor(a!)[]: the list has no sets of its own, writes because its
  // element does, and holds the element's annotation.
  const AliasInfo& x = *s.arguments()[0].alias_info();
  EXPECT_TRUE(x.beforeSets().empty());
  EXPECT_TRUE(x.isWrite());
  ASSERT_EQ(x.containedTypes().size(), 1u);
  EXPECT_EQ(x.containedTypes()[0], AliasInfo({"a"}, {"a"}, true));
  EXPECT_TRUE(s.arguments()[0].type()->isTensorList());

  const AliasInfo& y = *s.arguments()[1].alias_info();
  EXPECT_EQ(y, AliasInfo({"b"}, {"b"}, false));

  const AliasInfo& z = *s.arguments()[2].alias_info();
  EXPECT_EQ(z.beforeSets(), std::vector<std::string>{"c"});
  EXPECT_EQ(z.afterSets(), std::vector<std::string>{"*"});
  EXPECT_FALSE(z.isWildcardBefore());
  EXPECT_TRUE(z.isWildcardAfter());
  EXPECT_TRUE(s.is_mutable());
}

TEST(SchemaParser, TypesAndSizes) {
  FunctionSchema s = parseSchema(
      "ns::f(int[2] a, SymInt[]? b, Dimname c, Tensor?[] d, tVal e, "
      "Dict(str, t) f, (str, t) g) -> ()");
  const auto& args = s.arguments();
  EXPECT_EQ(args[0].N(), 2);
  EXPECT_EQ(args[0].type()->toString(), "int[]");
  EXPECT_FALSE(args[1].N());
  EXPECT_EQ(args[1].type()->kind(), Kind::Optional);
  EXPECT_EQ(args[1].type()->elementType()->elementType()->kind(), Kind::SymInt);
  EXPECT_EQ(args[2].type()->kind(), Kind::Dimname);
  EXPECT_TRUE(args[3].type()->isOptionalTensorList());
  EXPECT_EQ(args[4].type()->kind(), Kind::Var);
  EXPECT_EQ(args[4].type()->varName(), "tVal");
  EXPECT_EQ(args[5].type()->keyType()->kind(), Kind::Str);
  EXPECT_EQ(args[5].type()->valueType()->varName(), "t");
  EXPECT_EQ(args[6].type()->kind(), Kind::Tuple);
  EXPECT_EQ(args[6].type()->containedTypes().size(), 2u);
  EXPECT_EQ(s.tensorArgumentIndices(), std::vector<size_t>{3});
}

TEST(SchemaParser, DefaultValues) {
  FunctionSchema s = parseSchema(
      "ns::f(int a=Mean, float b=1, float? c=1, int[2] d=0, str e='x', "
      "bool f=True, Tensor? g=None, complex h=2j) -> ()");
  const auto& args = s.arguments();
  const DefaultValue& a = *args[0].default_value();
  EXPECT_TRUE(a.isInt());
  EXPECT_EQ(a.toInt(), 1);
  EXPECT_EQ(a.spelling(), "Mean");
  EXPECT_EQ(a, DefaultValue::fromInt(1));  // The spelling does not count.
  // A float's int literal becomes a double; under an optional it stays an
  // int, as in c10.
  EXPECT_TRUE(args[1].default_value()->isDouble());
  EXPECT_EQ(args[1].default_value()->toDouble(), 1.0);
  EXPECT_TRUE(args[2].default_value()->isInt());
  EXPECT_EQ(*args[3].default_value(),
            DefaultValue::fromList(
                {DefaultValue::fromInt(0), DefaultValue::fromInt(0)}));
  EXPECT_EQ(args[4].default_value()->toStringRef(), "x");
  EXPECT_TRUE(args[5].default_value()->toBool());
  EXPECT_TRUE(args[6].default_value()->isNone());
  EXPECT_EQ(args[7].default_value()->toComplex(), std::complex<double>(0, 2));
}

TEST(SchemaParser, VarargsAndVarret) {
  FunctionSchema a = parseSchema("prim::Print(...) -> ()");
  EXPECT_TRUE(a.is_vararg());
  EXPECT_FALSE(a.is_varret());
  EXPECT_TRUE(a.arguments().empty());
  FunctionSchema b = parseSchema("prim::TupleUnpack(Any tup) -> ...");
  EXPECT_FALSE(b.is_vararg());
  EXPECT_TRUE(b.is_varret());
  EXPECT_TRUE(b.returns().empty());
}

TEST(SchemaParser, NoNamespace) {
  FunctionSchema s = parseSchema("foo(Tensor x) -> Tensor");
  EXPECT_EQ(s.name(), "foo");
  EXPECT_EQ(s.operator_name().getNamespace(), "");
}

TEST(SchemaParser, ParseName) {
  struct Case {
    const char* input;
    OperatorName expected;
  };
  const Case cases[] = {
      {"aten::add", {"aten::add", ""}},
      {"aten::add.Tensor", {"aten::add", "Tensor"}},
      {"  aten::add.out  ", {"aten::add", "out"}},
      {"foo", {"foo", ""}},
      {"foo.bar", {"foo", "bar"}},
      {"_ns1::__and__.Scalar_2", {"_ns1::__and__", "Scalar_2"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.input);
    EXPECT_EQ(parseName(c.input), c.expected);
  }
}

TEST(SchemaParser, ParseSchemaOrName) {
  auto name = parseSchemaOrName("myops::foo.out");
  ASSERT_TRUE(std::holds_alternative<OperatorName>(name));
  EXPECT_EQ(std::get<OperatorName>(name), (OperatorName{"myops::foo", "out"}));

  auto schema = parseSchemaOrName("myops::foo(Tensor x) -> Tensor");
  ASSERT_TRUE(std::holds_alternative<FunctionSchema>(schema));
  EXPECT_EQ(toString(std::get<FunctionSchema>(schema)),
            "myops::foo(Tensor x) -> Tensor");
}

// Runs `parse` and returns its error message; fails the test when it does
// not throw an InvalidArgument Error.
template <typename Parse>
std::string errorMessage(Parse parse) {
  try {
    parse();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    return e.message();
  }
  ADD_FAILURE() << "expected an Error";
  return "";
}

TEST(SchemaParser, ErrorsPointAtTheColumn) {
  struct Case {
    const char* input;
    const char* message;
  };
  const Case cases[] = {
      {"aten::foo(Tensor a x) -> Tensor",
       "invalid schema: expected ',' or ')' but found 'x'\n"
       "  aten::foo(Tensor a x) -> Tensor\n"
       "                     ^"},
      {"aten::foo(Tensr x) -> Tensor",
       "invalid schema: unknown type 'Tensr'; did you mean 'Tensor'?\n"
       "  aten::foo(Tensr x) -> Tensor\n"
       "            ^"},
      {"aten::foo(Int x) -> ()",
       "invalid schema: unknown type 'Int'; did you mean 'int'?\n"
       "  aten::foo(Int x) -> ()\n"
       "            ^"},
      {"aten::foo(Blob x) -> ()",
       "invalid schema: unknown type 'Blob'\n"
       "  aten::foo(Blob x) -> ()\n"
       "            ^"},
      {"aten::foo(double x) -> ()",
       "invalid schema: unknown type 'double'; use 'float' (a C++ double)\n"
       "  aten::foo(double x) -> ()\n"
       "            ^"},
      {"aten::foo(int64_t x) -> ()",
       "invalid schema: unknown type 'int64_t'; use 'int' (or 'SymInt' for a "
       "symbolic size)\n"
       "  aten::foo(int64_t x) -> ()\n"
       "            ^"},
      {"aten::foo(Tensor x)",
       "invalid schema: expected '->' but found the end of the schema\n"
       "  aten::foo(Tensor x)\n"
       "                     ^"},
      {"aten::foo",
       "invalid schema: expected '(' but found the end of the schema\n"
       "  aten::foo\n"
       "           ^"},
      {"aten::foo(Tensor x",
       "invalid schema: expected ',' or ')' but found the end of the schema\n"
       "  aten::foo(Tensor x\n"
       "                    ^"},
      {"aten::foo(Tensor x) -> Tensor y z",
       "invalid schema: expected the end of the schema but found 'z'\n"
       "  aten::foo(Tensor x) -> Tensor y z\n"
       "                                  ^"},
      {"aten::foo(Tensor,) -> ()",
       "invalid schema: expected an argument name but found ','\n"
       "  aten::foo(Tensor,) -> ()\n"
       "                  ^"},
      {"aten::foo(Tensor x,) -> ()",
       "invalid schema: expected a type but found ')'\n"
       "  aten::foo(Tensor x,) -> ()\n"
       "                     ^"},
      {"(Tensor x) -> ()",
       "invalid schema: expected an operator name but found '('\n"
       "  (Tensor x) -> ()\n"
       "  ^"},
      {"aten::(Tensor x) -> ()",
       "invalid schema: expected a name after '::' but found '('\n"
       "  aten::(Tensor x) -> ()\n"
       "        ^"},
      {"aten::foo.(Tensor x) -> ()",
       "invalid schema: expected an overload name after '.' but found '('\n"
       "  aten::foo.(Tensor x) -> ()\n"
       "            ^"},
      {"aten::foo(Tensor x) -> Tensor %",
       "invalid schema: unexpected character '%'\n"
       "  aten::foo(Tensor x) -> Tensor %\n"
       "                                ^"},
      // Issue 15: whole UTF-8 characters quoted (one byte of one made the
      // message undecodable: Python raised it empty); carets by character.
      {"aten::foo(Tensor é) -> Tensor",
       "invalid schema: unexpected character 'é'\n"
       "  aten::foo(Tensor é) -> Tensor\n"
       "                   ^"},
      {"aten::fü(Tensor x) -> 😀",
       "invalid schema: unexpected character 'ü'\n"
       "  aten::fü(Tensor x) -> 😀\n"
       "         ^"},
      {"aten::f(Tensor x) -> ü€ 😀",
       "invalid schema: unexpected character 'ü'\n"
       "  aten::f(Tensor x) -> ü€ 😀\n"
       "                       ^"},
      {"aten::f(str x=\"ü\\€\") -> ()",
       "invalid schema: unknown escape sequence '\\€'\n"
       "  aten::f(str x=\"ü\\€\") -> ()\n"
       "                  ^"},
      // Alias annotations.
      {"aten::foo(Tensor(a x) -> ()",
       "invalid schema: expected ')' to end the alias annotation but found "
       "'x'\n"
       "  aten::foo(Tensor(a x) -> ()\n"
       "                     ^"},
      {"aten::foo(Tensor() x) -> ()",
       "invalid schema: expected an alias set (a name such as 'a', or '*') "
       "but found ')'\n"
       "  aten::foo(Tensor() x) -> ()\n"
       "                   ^"},
      {"aten::foo(Tensor?(a) x) -> ()",
       "invalid schema: expected an argument name but found '('\n"
       "  aten::foo(Tensor?(a) x) -> ()\n"
       "                   ^"},
      {"aten::foo(Dict(str, Tensor(a)) x) -> ()",
       "invalid schema: alias annotations are not supported inside "
       "Dict(...); annotate the container, as in Dict(str, t)(a!)\n"
       "  aten::foo(Dict(str, Tensor(a)) x) -> ()\n"
       "                      ^"},
      {"aten::foo((Tensor(a), int) x) -> ()",
       "invalid schema: alias annotations are not supported inside a tuple "
       "type; annotate the container, as in Dict(str, t)(a!)\n"
       "  aten::foo((Tensor(a), int) x) -> ()\n"
       "             ^"},
      // Sized lists.
      {"aten::foo(int[2 x) -> ()",
       "invalid schema: expected ']' but found 'x'\n"
       "  aten::foo(int[2 x) -> ()\n"
       "                  ^"},
      {"aten::foo(int[x] y) -> ()",
       "invalid schema: expected ']' or a list size from 0 to 1024 but found "
       "'x'\n"
       "  aten::foo(int[x] y) -> ()\n"
       "                ^"},
      {"aten::foo(int[1.5] y) -> ()",
       "invalid schema: expected ']' or a list size from 0 to 1024 but found "
       "'1.5'\n"
       "  aten::foo(int[1.5] y) -> ()\n"
       "                ^"},
      // Argument lists.
      {"aten::foo(int a=1, int b) -> ()",
       "invalid schema: argument 'b' has no default but follows one that has; "
       "give it a default or make it keyword-only (after '*')\n"
       "  aten::foo(int a=1, int b) -> ()\n"
       "                     ^"},
      {"aten::foo(..., int a) -> ()",
       "invalid schema: '...' must be the last argument\n"
       "  aten::foo(..., int a) -> ()\n"
       "                 ^"},
      {"aten::foo(Tensor a, int b=1, ...) -> ()",
       "invalid schema: a schema with '...' arguments cannot have default "
       "values\n"
       "  aten::foo(Tensor a, int b=1, ...) -> ()\n"
       "                            ^"},
      {"aten::foo(*, *, int a) -> ()",
       "invalid schema: '*' appears twice; the arguments after the first are "
       "already keyword-only\n"
       "  aten::foo(*, *, int a) -> ()\n"
       "               ^"},
      {"aten::foo() -> (..., Tensor)",
       "invalid schema: '...' must be the last return\n"
       "  aten::foo() -> (..., Tensor)\n"
       "                       ^"},
      {"aten::foo(Tensor x) -> Tensor y=1",
       "invalid schema: a return cannot have a default value\n"
       "  aten::foo(Tensor x) -> Tensor y=1\n"
       "                                 ^"},
      {"aten::foo(__torch__.torch.classes.ns.Foo x) -> ()",
       "invalid schema: TorchScript custom class types "
       "(__torch__.torch.classes...) are not supported\n"
       "  aten::foo(__torch__.torch.classes.ns.Foo x) -> ()\n"
       "            ^"},
      // Default values.
      {"aten::foo(int x=1.5) -> ()",
       "invalid schema: expected an integer for type 'int' but found '1.5'\n"
       "  aten::foo(int x=1.5) -> ()\n"
       "                  ^"},
      {"aten::foo(int x=None) -> ()",
       "invalid schema: expected an integer for type 'int' but found 'None'; "
       "write 'int?' to allow None\n"
       "  aten::foo(int x=None) -> ()\n"
       "                  ^"},
      {"aten::foo(bool? x=1) -> ()",
       "invalid schema: expected True or False or None for type 'bool?' but "
       "found '1'\n"
       "  aten::foo(bool? x=1) -> ()\n"
       "                    ^"},
      {"aten::foo(str x=- 1) -> ()",
       "invalid schema: expected a string literal for type 'str' but found "
       "'- 1'\n"
       "  aten::foo(str x=- 1) -> ()\n"
       "                  ^"},
      {"aten::foo(Tensor x=0) -> ()",
       "invalid schema: expected None for type 'Tensor' but found '0'\n"
       "  aten::foo(Tensor x=0) -> ()\n"
       "                     ^"},
      {"aten::foo(int x=Sum) -> ()",
       "invalid schema: unknown name 'Sum' as a default value; the names a "
       "default may use are None, True, False, inf, nan, float, complex, "
       "long, strided, Mean and contiguous_format\n"
       "  aten::foo(int x=Sum) -> ()\n"
       "                  ^"},
      {"aten::foo(int x=99999999999999999999) -> ()",
       "invalid schema: integer 99999999999999999999 does not fit in 64 bits\n"
       "  aten::foo(int x=99999999999999999999) -> ()\n"
       "                  ^"},
      {"aten::foo(float x=1e999) -> ()",
       "invalid schema: number '1e999' is out of range\n"
       "  aten::foo(float x=1e999) -> ()\n"
       "                    ^"},
      {"aten::foo(int x=-) -> ()",
       "invalid schema: expected a number after '-' but found ')'\n"
       "  aten::foo(int x=-) -> ()\n"
       "                   ^"},
      {"aten::foo(int x=) -> ()",
       "invalid schema: expected a default value but found ')'\n"
       "  aten::foo(int x=) -> ()\n"
       "                  ^"},
      {"aten::foo(t x=1) -> ()",
       "invalid schema: an argument of type 't' cannot have a default value\n"
       "  aten::foo(t x=1) -> ()\n"
       "                ^"},
      {"aten::foo(int[] x=1) -> ()",
       "invalid schema: expected a list such as [0, 1] for type 'int[]' but "
       "found '1'\n"
       "  aten::foo(int[] x=1) -> ()\n"
       "                    ^"},
      {"aten::foo(int[] x=[1 2]) -> ()",
       "invalid schema: expected ',' or ']' but found '2'\n"
       "  aten::foo(int[] x=[1 2]) -> ()\n"
       "                       ^"},
      {"aten::foo(str x=\"abc) -> ()",
       "invalid schema: unterminated string literal\n"
       "  aten::foo(str x=\"abc) -> ()\n"
       "                  ^"},
      {"aten::foo(str x=\"a\\qb\") -> ()",
       "invalid schema: unknown escape sequence '\\q'\n"
       "  aten::foo(str x=\"a\\qb\") -> ()\n"
       "                    ^"},
      // A schema over several lines shows on one.
      {"aten::foo(Tensor a,\n\tTensr b) -> ()",
       "invalid schema: unknown type 'Tensr'; did you mean 'Tensor'?\n"
       "  aten::foo(Tensor a,  Tensr b) -> ()\n"
       "                       ^"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.input);
    EXPECT_EQ(errorMessage([&] { parseSchema(c.input); }), c.message);
  }
}

TEST(SchemaParser, ParsesFromManyThreads) {
  const std::string text =
      "aten::index.Tensor_out(Tensor self, Tensor?[] indices, *, "
      "Tensor(a!) out) -> Tensor(a!)";
  const FunctionSchema expected = parseSchema(text);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 200; ++j) {
        FunctionSchema s = parseSchema(text);
        EXPECT_EQ(s, expected);
        EXPECT_EQ(toString(s), text);
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

TEST(SchemaParser, NameErrors) {
  EXPECT_EQ(errorMessage([] { parseName("aten::add.Tensor(Tensor x)"); }),
            "invalid operator name: expected the end of the name but found "
            "'('\n"
            "  aten::add.Tensor(Tensor x)\n"
            "                  ^");
  EXPECT_EQ(errorMessage([] { parseName("aten::"); }),
            "invalid operator name: expected a name after '::' but found the "
            "end of the operator name\n"
            "  aten::\n"
            "        ^");
  EXPECT_EQ(errorMessage([] { parseName(""); }),
            "invalid operator name: expected an operator name but found the "
            "end of the operator name\n"
            "  \n"
            "  ^");
  EXPECT_EQ(errorMessage([] { parseSchemaOrName("aten::foo bar"); }),
            "invalid schema: expected '(' or the end of the name but found "
            "'bar'\n"
            "  aten::foo bar\n"
            "            ^");
}

}  // namespace
}  // namespace turnout
