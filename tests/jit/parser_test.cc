// Parser and printer: round trips over the corpus in testdata/ (hand-written
// graphs and graphs as PyTorch 1.13 prints them, from
// testdata/pytorch/generate.py), operator resolution, and parse errors.
#include "jit/ir/parser.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/printer.h"
#include "tests/error_of.h"
#include "tests/jit/testing.h"

namespace turnout {
namespace jit {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using turnout::testing::errorOf;
using turnout::testing::readFile;

struct CorpusFile {
  const char* name;
  bool runnable;  // every operator in it is registered here
};

constexpr CorpusFile kCorpus[] = {
    {"tests/jit/testdata/hand_written.ir", true},
    {"tests/jit/testdata/loops.ir", true},
    {"tests/jit/testdata/empty.ir", true},
    {"tests/jit/testdata/pytorch/if_else.ir", true},
    {"tests/jit/testdata/pytorch/for_loop.ir", true},
    {"tests/jit/testdata/pytorch/while_loop.ir", true},
    {"tests/jit/testdata/pytorch/raise_and_lists.ir", true},
    {"tests/jit/testdata/pytorch/constants.ir", true},
    {"tests/jit/testdata/pytorch/overloads.ir", true},
    {"tests/jit/testdata/pytorch/nested.ir", true},
    {"tests/jit/testdata/pytorch/list_construct.ir", true},
    {"tests/jit/testdata/pytorch/float_constants.ir", true},
    {"tests/jit/testdata/pytorch/traced.ir", true},
    // aten::__is__ and prim::unchecked_cast are not registered here.
    {"tests/jit/testdata/pytorch/optional_arg.ir", false},
    {"tests/jit/testdata/pytorch/traced_views.ir", true},
};

TEST(Parser, CorpusRoundTrips) {
  for (const CorpusFile& f : kCorpus) {
    SCOPED_TRACE(f.name);
    const std::string text = readFile(f.name);
    ASSERT_FALSE(text.empty());
    ParseOptions options;
    options.allow_unresolved = !f.runnable;
    std::unique_ptr<Graph> g = parseIR(text, options);
    EXPECT_EQ(g->toString(), text);
    g->lint();
    // A copy prints the same, and reparses to the same text.
    std::unique_ptr<Graph> c = g->copy();
    c->lint();
    EXPECT_EQ(c->toString(), text);
    EXPECT_EQ(parseIR(c->toString(), options)->toString(), text);
    if (f.runnable) {
      for (const Block* b : {g->block()}) {
        for (const Node* n : b->nodes()) {
          if (!isInterpreterPrim(n->kind())) {
            EXPECT_TRUE(n->op().has_value()) << n->toString();
          }
        }
      }
    }
  }
}

TEST(Parser, UnresolvedOperatorsNeedTheOption) {
  const std::string text =
      readFile("tests/jit/testdata/pytorch/optional_arg.ir");
  EXPECT_THAT(errorOf([&] { parseIR(text); }),
              HasSubstr("parse error at 4:15: no operator named aten::__is__ "
                        "is registered"));
}

// Operator names without an overload pick the overload the input types fit.
TEST(Parser, ResolvesOverloadsByInputTypes) {
  struct Case {
    const char* args;  // declared inputs
    const char* call;  // the node
    const char* expected;
  };
  const Case cases[] = {
      {"%a : Tensor, %b : Tensor, %c : int", "aten::add(%a, %b, %c)",
       "aten::add.Tensor"},
      {"%a : Tensor, %b : float, %c : int", "aten::add(%a, %b, %c)",
       "aten::add.Scalar"},
      {"%a : Tensor, %b : int", "aten::mul(%a, %b)", "aten::mul.Scalar"},
      {"%a : Tensor, %b : Tensor", "aten::mul(%a, %b)", "aten::mul.Tensor"},
      {"%a : int, %b : int", "aten::add(%a, %b)", "aten::add.int"},
      {"%a : float, %b : float", "aten::lt(%a, %b)", "aten::lt.float"},
      {"%a : int[], %b : int", "aten::__getitem__(%a, %b)",
       "aten::__getitem__.t"},
      {"%a : Float(2, strides=[1], requires_grad=0, device=cpu), %b : Tensor",
       "aten::div(%a, %b)", "aten::div.Tensor"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.call);
    std::string args = c.args;
    for (size_t p = args.find(", %"); p != std::string::npos;
         p = args.find(", %", p)) {
      args.replace(p, 2, ",\n      ");
    }
    std::string text = "graph(" + args + "):\n  %r : " +
                       (std::string(c.call).find("lt") != std::string::npos
                            ? "bool"
                        : std::string(c.args).find("Tensor") ==
                                std::string::npos
                            ? "int"
                            : "Tensor") +
                       " = " + c.call + "\n  return (%r)\n";
    std::unique_ptr<Graph> g = parseIR(text);
    const Node* n = g->outputs()[0]->node();
    ASSERT_TRUE(n->op().has_value());
    EXPECT_EQ(toString(n->op()->operator_name()), c.expected);
    EXPECT_EQ(g->toString(), text);  // printed without the overload
  }
}

TEST(Parser, KeepsAnExplicitOverload) {
  const std::string text =
      "graph(%a : Tensor,\n      %b : Tensor):\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %r : Tensor = aten::sub.Tensor(%a, %b, %one)\n"
      "  return (%r)\n";
  std::unique_ptr<Graph> g = parseIR(text);
  EXPECT_EQ(g->toString(), text);
  EXPECT_EQ(g->outputs()[0]->node()->op()->operator_name().overload_name,
            "Tensor");
}

TEST(Parser, ConstantsHoldTheirValues) {
  std::unique_ptr<Graph> g = parseIR(
      "graph():\n"
      "  %i : int = prim::Constant[value=-7]()\n"
      "  %f : float = prim::Constant[value=1.]()\n"
      "  %b : bool = prim::Constant[value=1]()\n"
      "  %s : str = prim::Constant[value=\"a\\\"b\\n\"]()\n"
      "  %d : Device = prim::Constant[value=\"cpu\"]()\n"
      "  %n : NoneType = prim::Constant()\n"
      "  %t : Long(requires_grad=0, device=cpu) = prim::Constant[value={2}]()\n"
      "  %u : Double(requires_grad=0, device=cpu) = "
      "prim::Constant[value={2.5}]()\n"
      "  %l : int[] = prim::Constant[value=[1, 2]]()\n"
      "  return (%i, %f, %b, %s, %d, %n, %t, %u, %l)\n");
  const auto& o = g->outputs();
  EXPECT_EQ(toIValue(o[0])->toInt(), -7);
  EXPECT_EQ(toIValue(o[1])->toDouble(), 1.0);
  EXPECT_EQ(toIValue(o[2])->toBool(), true);
  EXPECT_EQ(toIValue(o[3])->toStringRef(), "a\"b\n");
  EXPECT_EQ(toIValue(o[4])->toDevice(), Device("cpu"));
  EXPECT_TRUE(toIValue(o[5])->isNone());
  Tensor t = toIValue(o[6])->toTensor();
  EXPECT_EQ(t.scalar_type(), ScalarType::Long);
  EXPECT_EQ(t.dim(), 0);
  EXPECT_EQ(toIValue(o[7])->toTensor().scalar_type(), ScalarType::Double);
  EXPECT_EQ(toIValue(o[8])->toIntVector(), (std::vector<int64_t>{1, 2}));
  EXPECT_FALSE(toIValue(g->inputs().empty() ? o[0] : o[0]) == std::nullopt);
}

// Found by //tests/fuzz:ir_fuzzer: a string constant holding bytes that are
// not printable prints with the escapes of the schema language (\a \b \f \v,
// octal \ooo), which the parser did not read back.
TEST(Parser, StringConstantsWithEveryByteRoundTrip) {
  std::string bytes;
  for (int c = 0; c < 256; ++c) bytes += static_cast<char>(c);
  Graph g;
  g.registerOutput(g.insertConstant(IValue(bytes)));
  const std::string printed = g.toString();
  EXPECT_THAT(printed, HasSubstr("\\a\\b"));
  EXPECT_THAT(printed, HasSubstr("\\377"));
  std::unique_ptr<Graph> back = parseIR(printed);
  EXPECT_EQ(toIValue(back->outputs()[0])->toStringRef(), bytes);
  EXPECT_EQ(back->toString(), printed);
}

TEST(Parser, StringEscapes) {
  struct Case {
    const char* literal;
    std::string value;
  };
  const Case cases[] = {
      {R"("\a\b\f\v\t\r\n")", "\a\b\f\v\t\r\n"},
      {R"("\101\0\7x\377")", std::string("A\0\7x\xff", 5)},
      {R"("\x41\x4a\x4A")", "AJJ"},
      {R"("\\\"\'")", "\\\"'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.literal);
    std::unique_ptr<Graph> g =
        parseIR(std::string("graph():\n  %s : str = prim::Constant[value=") +
                c.literal + "]()\n  return (%s)\n");
    EXPECT_EQ(toIValue(g->outputs()[0])->toStringRef(), c.value);
  }
  const Case errors[] = {
      {R"("\400")", "octal escape above \\377"},
      {R"("\x4")", "expected two hex digits after \\x"},
      {R"("\x-1")", "expected two hex digits after \\x"},
      {R"("\q")", "unknown escape \\q"},
  };
  for (const Case& c : errors) {
    SCOPED_TRACE(c.literal);
    EXPECT_THAT(errorOf([&] {
                  parseIR(std::string("graph():\n  %s : str = "
                                      "prim::Constant[value=") +
                          c.literal + "]()\n  return (%s)\n");
                }),
                HasSubstr(c.value));
  }
}

TEST(Parser, SourceLocationsAreKept) {
  std::unique_ptr<Graph> g = parseIR(
      "graph(%a : int):\n"
      "  %r : int = aten::neg(%a) # /some/dir/model.py:12:34\n"
      "  return (%r)\n");
  EXPECT_EQ(g->outputs()[0]->node()->sourceLocation(),
            "/some/dir/model.py:12:34");
}

// Traced module graphs print the tracer's scope between the inputs and the
// source comment; it is kept and printed back, with or without a comment.
TEST(Parser, ScopesAreKeptAndPrintedBack) {
  const std::string text =
      "graph(%x : Tensor):\n"
      "  %1 : int = prim::Constant[value=1](), scope: __module.l1\n"
      "  %r : Tensor = aten::add(%x, %x, %1), scope: __module.l1/__module.l1.a"
      " # /some/dir/model.py:12:0\n"
      "  return (%r)\n";
  std::unique_ptr<Graph> g = parseIR(text);
  const Node* add = g->outputs()[0]->node();
  EXPECT_EQ(add->scope(), "__module.l1/__module.l1.a");
  EXPECT_EQ(add->sourceLocation(), "/some/dir/model.py:12:0");
  EXPECT_EQ(add->inputs()[2]->node()->scope(), "__module.l1");
  EXPECT_EQ(g->toString(), text);
  EXPECT_THAT(errorOf([] {
                parseIR("graph(%x : Tensor):\n"
                        "  %r : Tensor = aten::neg(%x), scope:  # f.py:1:0\n"
                        "  return (%r)\n");
              }),
              HasSubstr("parse error at 2:39: expected a scope name after "
                        "'scope:'"));
}

// torch prints an empty list constant with its element type; it reads back
// as an empty list and prints as torch's again.
TEST(Parser, EmptyListConstantsAsTorchPrintsThem) {
  const std::string text =
      "graph(%x : Tensor):\n"
      "  %e : int[] = prim::Constant[value=annotate(List[int], [])]()\n"
      "  %f : float[] = prim::Constant[value=annotate(List[float], [])]()\n"
      "  %n : int = aten::len(%e)\n"
      "  %m : int = aten::len(%f)\n"
      "  %s : int = aten::add(%n, %m)\n"
      "  return (%s)\n";
  std::unique_ptr<Graph> g = parseIR(text);
  EXPECT_EQ(g->toString(), text);
  EXPECT_THAT(errorOf([] {
                parseIR("graph():\n"
                        "  %e : str[] = prim::Constant[value=annotate("
                        "List[str], [])]()\n"
                        "  return (%e)\n");
              }),
              HasSubstr("parse error at 2:51: expected int or float as the "
                        "element type of an empty list constant"));
}

// Each bad text, the line:column of the error and what it says.
TEST(Parser, ErrorsGiveLineColumnAndWhatWasExpected) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"grap():\n  return ()\n", "parse error at 1:1: expected 'graph'"},
      {"graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x,, )\n  return (%y)\n",
       "parse error at 2:30: expected '%' but found ','"},
      {"graph(%x : Tensr):\n  return (%x)\n",
       "parse error at 1:12: unknown type 'Tensr'"},
      {"graph(%x : Tensor):\n  return (%y)\n",
       "parse error at 2:11: %y is used before it is defined"},
      {"graph(%x : Tensor):\n  %x : Tensor = aten::neg(%x)\n  return (%x)\n",
       "parse error at 2:3: %x is defined twice"},
      {"graph(%x : Tensor):\n  %y : Tensor = aten::nope(%x)\n  return (%y)\n",
       "parse error at 2:17: no operator named aten::nope is registered"},
      {"graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x, %x)\n"
       "  return (%y)\n",
       "parse error at 2:17: no overload of aten::neg fits the inputs "
       "(Tensor, Tensor)"},
      {"graph(%x : Tensor):\n  %y : Tensor = aten::neg.nope(%x)\n"
       "  return (%y)\n",
       "parse error at 2:17: operator aten::neg.nope is not registered"},
      {"graph(%c : bool):\n  %y : int = prim::If(%c)\n    block0():\n"
       "      %z : int = prim::Constant[value=1]()\n      -> (%z)\n"
       "    block1():\n      -> (%z)\n  return (%y)\n",
       "parse error at 7:11: %z is defined inside a block and is not visible "
       "here"},
      {"graph(%c : bool):\n  %y : int = prim::If(%c)\n    block0():\n"
       "      -> ()\n    block1():\n      -> ()\n  return (%y)\n",
       "each prim::If block takes no inputs and returns 1 values"},
      {"graph():\n  %y : int = prim::Constant[value=\"x\"]()\n  return (%y)\n",
       "parse error at 2:14: the value of this prim::Constant does not fit its "
       "type int"},
      {"graph():\n  %y : Tensor = prim::Constant[value=<Tensor>]()\n"
       "  return (%y)\n",
       "parse error at 2:38: a tensor constant printed as <Tensor> has lost "
       "its contents"},
      {"graph():\n  %y : Device = prim::Constant[value=\"cpuu\"]()\n"
       "  return (%y)\n",
       "invalid Device constant"},
      {"graph(%x : Float(3, requires_grad=2)):\n  return (%x)\n",
       "requires_grad must be 0 or 1"},
      {"graph(%x : Tensor):\n  return (%x)\n  extra\n",
       "parse error at 3:3: expected the end of the graph after 'return (...)' "
       "but found 'extra'"},
      {"graph(%x : Tensor):\n  %s : str = prim::Constant[value=\"abc]()\n"
       "  return (%x)\n",
       "unterminated string literal"},
      {"graph(%x : int):\n  %y : int = prim::Loop(%x)\n    block0():\n"
       "      -> ()\n  return (%y)\n",
       "prim::Loop takes (max_trip_count, start_condition, carried...)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_THAT(errorOf([&] { parseIR(c.text); }), HasSubstr(c.message));
  }
}

// Issue 15: an error at a non-ASCII character quoted one byte of it, and
// Python raised the error with no message (the text was not UTF-8).
TEST(Parser, ErrorsQuoteWholeCharactersAndCountColumnsInCharacters) {
  EXPECT_EQ(errorOf([] {
              parseIR("graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x, é)\n"
                      "  return (%y)\n");
            }),
            "parse error at 2:31: expected '%' but found 'é'\n"
            "      %y : Tensor = aten::neg(%x, é)\n"
            "                                  ^");
  // Characters before the error shift the column by one each, not by their
  // byte count.
  EXPECT_EQ(errorOf([] { parseIR("graph(%x : Tensor):  # ü€😀\n  😀\n"); }),
            "parse error at 2:3: expected 'return' but found '😀'\n"
            "      😀\n"
            "      ^");
  EXPECT_THAT(errorOf([] {
                parseIR("graph(%x : Tensor):\n  %s : str = "
                        "prim::Constant[value=\"a\\é\"]()\n  return (%x)\n");
              }),
              HasSubstr("unknown escape \\é\n"));
}

// Found by //tests/fuzz:ir_fuzzer: text that parses but fails lint() (here a
// prim::Constant with an input) threw lint's Internal error, which calls it
// a turnout bug; it is the writer's error.
TEST(Parser, TextThatFailsLintIsAnInputError) {
  const char* text =
      "graph(%x : Tensor):\n"
      "  %5 : int = prim::Constant[value=2](%x)\n"
      "  return (%5)\n";
  try {
    parseIR(text);
    ADD_FAILURE() << "parsed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.message();
    EXPECT_THAT(e.message(), HasSubstr("parse error: prim::Constant"));
    EXPECT_THAT(e.message(),
                HasSubstr("%5 : int = prim::Constant[value=2](%x)"));
    EXPECT_THAT(e.message(), Not(HasSubstr("Graph::lint()")));
  }
}

TEST(Parser, ErrorShowsTheLineWithACaret) {
  EXPECT_EQ(errorOf([] {
              parseIR("graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x,, )\n"
                      "  return (%y)\n");
            }),
            "parse error at 2:30: expected '%' but found ','\n"
            "      %y : Tensor = aten::neg(%x,, )\n"
            "                                 ^");
}

TEST(Printer, AttributeValues) {
  EXPECT_EQ(attributeToString(AttributeValue(int64_t{-3})), "-3");
  EXPECT_EQ(attributeToString(AttributeValue(0.1)), "0.10000000000000001");
  EXPECT_EQ(attributeToString(AttributeValue(2.0)), "2.");
  EXPECT_EQ(attributeToString(AttributeValue(std::string("a\"b"))),
            "\"a\\\"b\"");
  EXPECT_EQ(attributeToString(AttributeValue(std::vector<int64_t>{1, 2})),
            "[1, 2]");
}

}  // namespace
}  // namespace jit
}  // namespace turnout
