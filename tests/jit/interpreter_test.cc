// The interpreter: every prim, control flow (If, Loop with carried values,
// nested), errors with source locations, agreement with eager calls, and
// one Code run from many threads.
#include "jit/runtime/interpreter.h"

#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/parser.h"
#include "kernels/elementwise.h"
#include "tests/error_of.h"
#include "tests/jit/testing.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace jit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using turnout::testing::errorOf;
using turnout::testing::readFile;
using turnout::testing::tensorOf;
using turnout::testing::valuesOf;

Stack run(const std::string& text, Stack inputs) {
  Code code(*parseIR(text));
  code.run(inputs);
  return inputs;
}

Tensor vec(std::vector<double> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return tensorOf(v, {n});
}

TEST(Interpreter, IfPicksABranch) {
  const std::string text =
      readFile("tests/jit/testdata/pytorch/if_else.ir");
  Tensor x = vec({1, 2}), y = vec({10, 20});
  for (int64_t n : {0, 1, 2, 5}) {
    SCOPED_TRACE(n);
    Stack out = run(text, {x, y, n});
    ASSERT_EQ(out.size(), 1u);
    Tensor expected = n > 1 ? add(x, y) : y;
    EXPECT_EQ(valuesOf(out[0].toTensor()), valuesOf(expected));
  }
}

TEST(Interpreter, ForLoopCarriesValuesAndCountsFromZero) {
  const std::string text =
      readFile("tests/jit/testdata/pytorch/for_loop.ir");
  for (int64_t n : {0, 1, 4}) {
    SCOPED_TRACE(n);
    Tensor x = vec({1, -2});
    Tensor expected = x;
    for (int64_t i = 0; i < n; ++i) expected = add(mul(expected, 2), i);
    Stack out = run(text, {x, n});
    EXPECT_EQ(valuesOf(out[0].toTensor()), valuesOf(expected));
  }
}

TEST(Interpreter, WhileLoopStopsOnItsCondition) {
  Stack out = run(readFile("tests/jit/testdata/pytorch/while_loop.ir"),
                  {vec({20})});
  EXPECT_THAT(valuesOf(out[0].toTensor()), ElementsAre(5.0));
}

TEST(Interpreter, NestedLoopsAndIf) {
  const std::string text = readFile("tests/jit/testdata/pytorch/nested.ir");
  for (int64_t n : {0, 1, 3, 5}) {
    SCOPED_TRACE(n);
    Tensor x = vec({0.5});
    Tensor expected = x;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < i; ++j) {
        expected = i > j ? add(expected, j) : sub(expected, i);
      }
    }
    Stack out = run(text, {x, n});
    EXPECT_EQ(valuesOf(out[0].toTensor()), valuesOf(expected));
  }
}

TEST(Interpreter, LoopsWithSeveralCarriedValues) {
  const std::string text = readFile("tests/jit/testdata/loops.ir");
  const int64_t n = 4;
  Tensor x = vec({1});
  Tensor expected = x;
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < i && i < n; ++j) expected = add(expected, j);
    k += i;
  }
  Stack out = run(text, {x, n});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(valuesOf(out[0].toTensor()), valuesOf(expected));
  EXPECT_EQ(out[1].toInt(), k);
}

TEST(Interpreter, ListsAndTuples) {
  Tensor x = vec({1, 2}), y = vec({3, 4});
  Stack out = run(readFile("tests/jit/testdata/pytorch/list_construct.ir"),
                  {x, y, int64_t{2}, int64_t{5}});
  ASSERT_EQ(out.size(), 1u);
  const auto& t = out[0].toTupleRef().elements();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].toInt(), 7 + 2);  // l[2] + len(ts)
  EXPECT_EQ(valuesOf(t[1].toTensor()), valuesOf(y));

  out = run(readFile("tests/jit/testdata/pytorch/raise_and_lists.ir"),
            {x, std::vector<int64_t>{3, 4}});
  EXPECT_EQ(valuesOf(out[0].toTensor()), valuesOf(add(mul(x, 3), 4)));
}

TEST(Interpreter, EveryListKindAndUnpack) {
  const std::string text =
      "graph(%a : int, %f : float, %b : bool, %t : Tensor, %s : str):\n"
      "  %li : int[] = prim::ListConstruct(%a, %a)\n"
      "  %lf : float[] = prim::ListConstruct(%f)\n"
      "  %lb : bool[] = prim::ListConstruct(%b, %b, %b)\n"
      "  %lt : Tensor[] = prim::ListConstruct(%t)\n"
      "  %ls : str[] = prim::ListConstruct(%s, %s)\n"
      "  %x : int, %y : int = prim::ListUnpack(%li)\n"
      "  %s1 : str, %s2 : str = prim::ListUnpack(%ls)\n"
      "  %tup : (int, str) = prim::TupleConstruct(%x, %s2)\n"
      "  %p : int, %q : str = prim::TupleUnpack(%tup)\n"
      "  %u : Tensor = prim::Uninitialized()\n"
      "  return (%li, %lf, %lb, %lt, %ls, %p, %q, %y, %u)\n";
  Tensor t = vec({1});
  Stack out = run(text, {int64_t{3}, 0.5, true, t, std::string("s")});
  ASSERT_EQ(out.size(), 9u);
  EXPECT_EQ(out[0].toIntVector(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(out[1].toDoubleVector(), (std::vector<double>{0.5}));
  EXPECT_EQ(out[2].toBoolVector(), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(out[3].toTensorVector().size(), 1u);
  EXPECT_TRUE(out[4].isGenericList());
  EXPECT_EQ(out[4].toListRef()[1].toStringRef(), "s");
  EXPECT_EQ(out[5].toInt(), 3);
  EXPECT_EQ(out[6].toStringRef(), "s");
  EXPECT_EQ(out[7].toInt(), 3);
  EXPECT_TRUE(out[8].isNone());
}

TEST(Interpreter, ConstantsOfEveryKind) {
  Stack out = run(readFile("tests/jit/testdata/pytorch/constants.ir"),
                  {vec({3, 6}), false});
  const auto& t = out[0].toTupleRef().elements();
  ASSERT_EQ(t.size(), 5u);
  EXPECT_THAT(valuesOf(t[0].toTensor()), ElementsAre(1.0, 2.0));
  EXPECT_EQ(t[1].toBool(), false);
  EXPECT_EQ(t[2].toStringRef(), "hello");
  EXPECT_EQ(t[3].toDevice(), Device("cpu"));
  EXPECT_TRUE(t[4].isNone());

  out = run(readFile("tests/jit/testdata/pytorch/traced.ir"),
            {tensorOf({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 4}),
             tensorOf({2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, {3, 4})});
  Tensor x = tensorOf({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 4});
  Tensor y = tensorOf({2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, {3, 4});
  EXPECT_EQ(valuesOf(out[0].toTensor()),
            valuesOf(sub(mul(add(x, y), x), div(y, 2))));
}

TEST(Interpreter, AgreesWithEagerCallsOnOverloads) {
  Tensor x = vec({1.5, -2}), y = vec({4, 8});
  Stack out = run(readFile("tests/jit/testdata/pytorch/overloads.ir"),
                  {x, y});
  const auto& t = out[0].toTupleRef().elements();
  Tensor w = mul(add(x, y, 2), 0.5);
  EXPECT_EQ(valuesOf(t[0].toTensor()), valuesOf(sub(w, 1, 1)));
  EXPECT_EQ(valuesOf(t[1].toTensor()), valuesOf(div(w, y)));
}

TEST(Interpreter, RaiseExceptionReportsClassMessageAndLocation) {
  const std::string text =
      "graph(%c : bool):\n"
      "  %m : str = prim::Constant[value=\"too short\"]()\n"
      "  %k : str = prim::Constant[value=\"builtins.IndexError\"]()\n"
      "   = prim::If(%c)\n"
      "    block0():\n"
      "       = prim::RaiseException(%m, %k) # model.py:22:8\n"
      "      -> ()\n"
      "    block1():\n"
      "      -> ()\n"
      "  return (%c)\n";
  Code code(*parseIR(text));
  Stack s{true};
  try {
    code.run(s);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Index);
    EXPECT_THAT(e.message(), HasSubstr("the graph raised IndexError: too short"));
    EXPECT_THAT(e.message(), HasSubstr("prim::RaiseException failed at model.py:22:8"));
    EXPECT_THAT(e.message(),
                HasSubstr("in:  = prim::RaiseException(%m, %k) # model.py:22:8"));
  }
  EXPECT_TRUE(s.empty());
  s = {false};
  code.run(s);
  EXPECT_EQ(s[0].toBool(), false);
}

TEST(Interpreter, AFailingOperatorNamesItselfItsNodeAndLocation) {
  const std::string text = readFile("tests/jit/testdata/pytorch/raise_and_lists.ir");
  Code code(*parseIR(text));
  Stack s{IValue(std::string("below")), vec({1}), std::vector<int64_t>{1}};
  std::string message = errorOf([&] { code.run(s); });
  EXPECT_THAT(message, HasSubstr("aten::__getitem__.t failed at model.py:15:17\n"
                                 "  in: %b.1 : int = aten::__getitem__(%l.1, "
                                 "%6) # model.py:15:17\n"));
  // The inputs are consumed; what lay below them is left as it was.
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].toStringRef(), "below");
}

TEST(Interpreter, UnpackOfTheWrongSizeIsAnError) {
  Code code(*parseIR(
      "graph(%l : int[]):\n"
      "  %a : int, %b : int = prim::ListUnpack(%l) # m.py:1:2\n"
      "  return (%a)\n"));
  Stack s{std::vector<int64_t>{1, 2, 3}};
  EXPECT_THAT(errorOf([&] { code.run(s); }),
              HasSubstr("prim::ListUnpack failed at m.py:1:2\n  in: %a : int, "
                        "%b : int = prim::ListUnpack(%l) # m.py:1:2\nexpected "
                        "a list of 2 elements to unpack but got 3"));
}

// torch 1.13's graph for `x if k is None else x * k` (aten::__is__,
// prim::unchecked_cast) runs, both ways.
TEST(Interpreter, OptionalArgumentRuns) {
  Code code(*parseIR(readFile("tests/jit/testdata/pytorch/optional_arg.ir")));
  Stack none{IValue(vec({1, 2})), IValue()};
  code.run(none);
  EXPECT_THAT(valuesOf(none[0].toTensor()), ElementsAre(1, 2));
  Stack three{IValue(vec({1, 2})), IValue(int64_t{3})};
  code.run(three);
  EXPECT_THAT(valuesOf(three[0].toTensor()), ElementsAre(3, 6));
}

TEST(Interpreter, CompileErrors) {
  ParseOptions lenient;
  lenient.allow_unresolved = true;
  auto g = parseIR(
      "graph(%x.1 : Tensor,\n      %k.1 : int?):\n"
      "  %3 : NoneType = prim::Constant() # model.py:54:12\n"
      "  %4 : bool = aten::__no_such_op__(%k.1, %3) # model.py:54:7\n"
      "  return (%4)\n",
      lenient);
  EXPECT_THAT(errorOf([&] { Code code(*g); }),
              HasSubstr("cannot compile the graph at model.py:54:7: no "
                        "registered operator resolves aten::__no_such_op__"));
  Graph h;
  Node* n = h.insertNode(h.create("prim::Unknown", {}, 1));
  h.registerOutput(n->output());
  EXPECT_THAT(errorOf([&] { Code code(h); }),
              HasSubstr("no registered operator resolves prim::Unknown"));
}

TEST(Interpreter, TooFewInputs) {
  Code code(*parseIR(readFile("tests/jit/testdata/pytorch/if_else.ir")));
  Stack s{vec({1})};
  EXPECT_THAT(errorOf([&] { code.run(s); }),
              HasSubstr("Code::run(): the graph takes 3 inputs but the stack "
                        "holds 1 values"));
  EXPECT_EQ(s.size(), 1u);
}

// The instruction listing: copies where a value is used again, moves at
// its last use, constants loaded once per use, unused outputs dropped, and
// an output whose only use is the next call's first input left on the
// stack (%a: no Store 3 / Move 3). Operators of the (Tensor, Tensor[,
// Scalar]) -> Tensor form read their inputs in place (CallUnboxed: the
// stack top or registers, "!" at a last use); the others take a stack.
TEST(Interpreter, InstructionListing) {
  Code code(*parseIR(
      "graph(%x : Tensor, %y : Tensor):\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %a : Tensor = aten::add(%x, %y, %one)\n"
      "  %b : Tensor = aten::mul(%a, %x)\n"
      "  %unused : Tensor = aten::neg(%b)\n"
      "  %c : Tensor = aten::mul(%b, %one)\n"
      "  return (%b, %c)\n"));
  EXPECT_EQ(code.dump(),
            "0 LoadConst 0\n"
            "1 Store 2\n"
            "2 CallUnboxed aten::add.Tensor 0 1! 2\n"
            "3 CallUnboxed aten::mul.Tensor top 0!\n"
            "4 Store 3\n"
            "5 Load 3\n"
            "6 Call aten::neg\n"
            "7 Drop\n"
            "8 Load 3\n"
            "9 Move 2\n"
            "10 Call aten::mul.Scalar\n"
            "11 Store 4\n"
            "12 Move 3\n"
            "13 Move 4\n"
            "14 Ret\n");
  EXPECT_EQ(code.numRegisters(), 5u);
}

// CallUnboxed: the same values as the boxed calls, inputs read in place
// stay valid for their later uses, and a value of another kind where a
// tensor is due takes the boxed call's error.
TEST(Interpreter, UnboxedCallsMatchBoxedOnes) {
  const std::string text =
      "graph(%x : Tensor, %y : Tensor):\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %two : float = prim::Constant[value=2.5]()\n"
      "  %a : Tensor = aten::sub(%x, %y, %two)\n"
      "  %b : Tensor = aten::mul(%y, %a)\n"
      "  %c : Tensor = aten::add(%b, %x, %one)\n"
      "  %d : Tensor = aten::div(%c, %y)\n"
      "  %e : Tensor = aten::add(%d, %d, %one)\n"
      "  return (%e, %a, %x)\n";
  Code code(*parseIR(text));
  EXPECT_THAT(code.dump(), HasSubstr("CallUnboxed aten::sub.Tensor"));
  Tensor x = vec({1, 2, 3}), y = vec({4, 5, 6});
  Stack s{IValue(x), IValue(y)};
  code.run(s);
  ASSERT_EQ(s.size(), 3u);
  // a = x - 2.5 y; e = 2 ((y a + x) / y)
  const float xs[] = {1, 2, 3}, ys[] = {4, 5, 6};
  for (int i = 0; i < 3; ++i) {
    const float a = xs[i] - 2.5f * ys[i];
    const float e = 2 * ((ys[i] * a + xs[i]) / ys[i]);
    EXPECT_FLOAT_EQ(s[0].toTensor().data_ptr<float>()[i], e);
    EXPECT_FLOAT_EQ(s[1].toTensor().data_ptr<float>()[i], a);
  }
  EXPECT_TRUE(s[2].toTensor().is_same(x));
  // The inputs' references: the caller's and the returned %x only.
  s.clear();
  EXPECT_EQ(x.unsafeGetTensorImpl()->refcount(), 1u);
  EXPECT_EQ(y.unsafeGetTensorImpl()->refcount(), 1u);

  // A None given for a Tensor input.
  Code mul(*parseIR(
      "graph(%x : Tensor, %y : Tensor):\n"
      "  %r : Tensor = aten::mul(%x, %y)\n"
      "  return (%r)\n"));
  Stack boxed{IValue(x), IValue()};
  const std::string error = errorOf([&] { mul.run(boxed); });
  EXPECT_THAT(error, HasSubstr("aten::mul.Tensor failed"));
  EXPECT_THAT(error, HasSubstr("Tensor"));
  EXPECT_TRUE(boxed.empty());
  EXPECT_EQ(x.unsafeGetTensorImpl()->refcount(), 1u);
}

// Forwarding keeps argument order: %a stays on the stack only where it is
// the next call's first input.
TEST(Interpreter, ForwardedOutputsKeepArgumentOrder) {
  Code code(*parseIR(
      "graph(%x : Tensor, %y : Tensor):\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %a : Tensor = aten::sub(%x, %y, %one)\n"
      "  %b : Tensor = aten::sub(%a, %y, %one)\n"
      "  %c : Tensor = aten::sub(%y, %b, %one)\n"
      "  %d : Tensor = aten::div(%c, %c)\n"
      "  %e : Tensor = aten::mul(%d, %x)\n"
      "  return (%e)\n"));
  // %a -> %b forwarded; %b is %c's second input (stored); %c is used
  // twice by %d (stored); %d -> %e forwarded: registers for x, y, one, b,
  // c and e.
  EXPECT_EQ(code.numRegisters(), 6u);
  Stack s{vec({10.0, 4.0}), vec({1.0, 2.0})};
  code.run(s);
  ASSERT_EQ(s.size(), 1u);
  // a = x - y = [9, 2]; b = a - y = [8, 0]; c = y - b = [-7, 2];
  // d = c / c = [1, 1]; e = d * x = [10, 4].
  EXPECT_EQ(valuesOf(s[0].toTensor()), valuesOf(vec({10.0, 4.0})));
  // A failing call leaves the stack empty (the catch-all in Code::run).
  Stack bad{vec({1.0, 2.0}), vec({1.0, 2.0, 3.0})};
  EXPECT_THAT(errorOf([&] { code.run(bad); }),
              HasSubstr("aten::sub.Tensor failed"));
  EXPECT_TRUE(bad.empty());
}

TEST(Interpreter, OneCodeRunsOnManyThreads) {
  Code code(*parseIR(readFile("tests/jit/testdata/pytorch/nested.ir")));
  Tensor expected = vec({0.5});
  for (int64_t i = 0; i < 6; ++i) {
    for (int64_t j = 0; j < i; ++j) expected = add(expected, j);
  }
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 50; ++k) {
        Stack s{vec({0.5}), int64_t{6}};
        code.run(s);
        ok[t] += valuesOf(s[0].toTensor()) == valuesOf(expected);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_THAT(ok, ElementsAre(50, 50, 50, 50));
}

}  // namespace
}  // namespace jit
}  // namespace turnout
