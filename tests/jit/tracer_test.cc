// The tracer: graphs that agree with eager for several functions (views,
// factories, scalars, lists, composites), their text, the round trip
// through the parser, and every error path leaving the thread as it was.
#include "jit/tracer/tracer.h"

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "dispatcher/local_dispatch_key_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/parser.h"
#include "jit/runtime/future.h"
#include "jit/runtime/interpreter.h"
#include "kernels/ops.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace jit {
namespace {

using ::testing::HasSubstr;
using turnout::testing::errorOf;
using turnout::testing::rangeOf;
using turnout::testing::tensorOf;
using turnout::testing::valuesOf;

using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

TracedFunction boxed(Fn fn) {
  return [fn](const std::vector<IValue>& in) {
    std::vector<Tensor> ts;
    for (const IValue& v : in) ts.push_back(v.toTensor());
    std::vector<IValue> out;
    for (Tensor& t : fn(ts)) out.emplace_back(std::move(t));
    return out;
  };
}

std::vector<IValue> boxAll(const std::vector<Tensor>& ts) {
  return std::vector<IValue>(ts.begin(), ts.end());
}

// Runs `g` with the interpreter on `inputs`.
std::vector<Tensor> runGraph(const Graph& g, const std::vector<Tensor>& inputs) {
  Code code(g);
  Stack stack(inputs.begin(), inputs.end());
  code.run(stack);
  std::vector<Tensor> out;
  for (IValue& v : stack) out.push_back(std::move(v).toTensor());
  return out;
}

// Traces `fn` on `example`, then checks that the graph, and the graph
// printed and parsed back, give what `fn` gives on `example` and on
// `other` (inputs the trace never saw).
void expectAgrees(const Fn& fn, const std::vector<Tensor>& example,
                  const std::vector<Tensor>& other) {
  std::unique_ptr<Graph> g = trace(boxed(fn), boxAll(example));
  std::unique_ptr<Graph> reparsed = parseIR(g->toString());
  EXPECT_EQ(reparsed->toString(), g->toString());
  for (const auto* inputs : {&example, &other}) {
    std::vector<Tensor> expected = fn(*inputs);
    for (const Graph* graph : {g.get(), reparsed.get()}) {
      std::vector<Tensor> got = runGraph(*graph, *inputs);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(got[i].sizes(), expected[i].sizes());
        EXPECT_EQ(got[i].scalar_type(), expected[i].scalar_type());
        EXPECT_EQ(valuesOf(got[i]), valuesOf(expected[i]));
      }
    }
  }
}

TEST(Tracer, AgreesWithEager) {
  struct Case {
    const char* name;
    Fn fn;
  };
  const std::vector<Case> cases = {
      {"elementwise", [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{relu(sub(mul(in[0], in[1]), in[0]))};
       }},
      {"scalars", [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{
             div(add(in[0], 1.5, /*alpha=*/2), 4), pow(in[1], 2)};
       }},
      {"views", [](const std::vector<Tensor>& in) {
         Tensor v = view(in[0], {3, 2});
         Tensor s = select(transpose(v, 0, 1), 0, 1);
         return std::vector<Tensor>{add(s, sum(in[1])), t(v)};
       }},
      {"factories", [](const std::vector<Tensor>& in) {
         Tensor z = zeros({2, 3});
         Tensor o = ones({2, 3}, TensorOptions(ScalarType::Double));
         Tensor f = full({2, 3}, 0.5);
         return std::vector<Tensor>{add(add(in[0], z), f), mul(in[1], o),
                                    arange(6)};
       }},
      {"lists", [](const std::vector<Tensor>& in) {
         Tensor c = cat({in[0], in[1], in[0]}, 1);
         return std::vector<Tensor>{c, stack({in[0], in[1]}, 0)};
       }},
      {"inplace", [](const std::vector<Tensor>& in) {
         Tensor a = mul(in[0], 2);
         Tensor v = select(a, 0, 0);
         v.add_(1);  // writes through the view into `a`
         return std::vector<Tensor>{a, v};
       }},
      {"composite", [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{linear(in[0], in[1]),
                                    softmax(in[0], 1)};
       }},
      {"input returned", [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{in[1], neg(in[0])};
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    expectAgrees(c.fn, {rangeOf({2, 3}), rangeOf({2, 3}, ScalarType::Float, 0.5, 1)},
                 {rangeOf({2, 3}, ScalarType::Float, -1, 3),
                  rangeOf({2, 3}, ScalarType::Float, 2, -4)});
  }
}

TEST(Tracer, GraphText) {
  std::unique_ptr<Graph> g = trace(
      boxed([](const std::vector<Tensor>& in) {
        Tensor y = add(in[0], in[1]);
        return std::vector<Tensor>{relu(mul(y, 3))};
      }),
      boxAll({rangeOf({2}), rangeOf({2})}), {{"x", "y"}});
  EXPECT_EQ(g->toString(),
            "graph(%x : Tensor,\n"
            "      %y : Tensor):\n"
            "  %2 : int = prim::Constant[value=1]()\n"
            "  %3 : Tensor = aten::add.Tensor(%x, %y, %2)\n"
            "  %4 : int = prim::Constant[value=3]()\n"
            "  %5 : Tensor = aten::mul.Scalar(%3, %4)\n"
            "  %6 : Tensor = aten::relu(%5)\n"
            "  return (%6)\n");
}

TEST(Tracer, FactoryAndListText) {
  std::unique_ptr<Graph> g = trace(
      boxed([](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{cat({in[0], zeros({2})}, 0)};
      }),
      boxAll({rangeOf({2})}), {{"x"}});
  EXPECT_EQ(g->toString(),
            "graph(%x : Tensor):\n"
            "  %1 : int[] = prim::Constant[value=[2]]()\n"
            "  %2 : NoneType = prim::Constant()\n"
            "  %3 : NoneType = prim::Constant()\n"
            "  %4 : NoneType = prim::Constant()\n"
            "  %5 : NoneType = prim::Constant()\n"
            "  %6 : Tensor = aten::zeros(%1, %2, %3, %4, %5)\n"
            "  %7 : Tensor[] = prim::ListConstruct(%x, %6)\n"
            "  %8 : int = prim::Constant[value=0]()\n"
            "  %9 : Tensor = aten::cat(%7, %8)\n"
            "  return (%9)\n");
}

TEST(Tracer, CompositeRecordsOnlyTheOutermostCall) {
  std::unique_ptr<Graph> g = trace(
      boxed([](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{linear(in[0], in[1])};
      }),
      boxAll({rangeOf({2, 3}), rangeOf({4, 3})}));
  int calls = 0;
  for (const Node* n : g->block()->nodes()) {
    if (n->op()) {
      ++calls;
      EXPECT_EQ(n->kind(), "aten::linear");
    }
  }
  EXPECT_EQ(calls, 1);
}

TEST(Tracer, CapturedTensorBecomesAConstant) {
  Tensor bias = tensorOf({10, 20}, {2});
  std::unique_ptr<Graph> g = trace(
      boxed([&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{add(in[0], bias)};
      }),
      boxAll({rangeOf({2})}));
  EXPECT_THAT(g->toString(), HasSubstr("prim::Constant[value=<Tensor>]()"));
  EXPECT_EQ(valuesOf(runGraph(*g, {tensorOf({1, 2}, {2})})[0]),
            (std::vector<double>{11, 22}));
}

TEST(Tracer, BadExampleInputs) {
  auto fn = boxed([](const std::vector<Tensor>& in) { return in; });
  Tensor x = rangeOf({2});
  EXPECT_THAT(errorOf([&] { trace(fn, {IValue(3)}); }),
              HasSubstr("example input 0 is not a defined tensor (got Int)"));
  EXPECT_THAT(errorOf([&] { trace(fn, {IValue(Tensor())}); }),
              HasSubstr("got an undefined Tensor"));
  EXPECT_THAT(errorOf([&] { trace(fn, {x, rangeOf({2}), x}); }),
              HasSubstr("example inputs 0 and 2 are the same tensor"));
  EXPECT_THAT(errorOf([&] { trace(fn, {x}, {{"a", "b"}}); }),
              HasSubstr("2 input names for 1 example inputs"));
  EXPECT_THAT(errorOf([&] { trace(nullptr, {x}); }),
              HasSubstr("the function is empty"));
}

TEST(Tracer, ErrorsLeaveTheThreadAsItWas) {
  const LocalDispatchKeySet before = tls_local_dispatch_key_set();
  Tensor x = rangeOf({2});
  // An exception from fn propagates unchanged.
  EXPECT_THAT(errorOf([&] {
                trace([](const std::vector<IValue>&) -> std::vector<IValue> {
                  throw Error(ErrorKind::Type, "my own error");
                }, {x});
              }),
              HasSubstr("my own error"));
  // Nested traces are refused.
  EXPECT_THAT(errorOf([&] {
                trace([&](const std::vector<IValue>& in) {
                  return trace([](const std::vector<IValue>& i) { return i; },
                               {x})
                             ->inputs()
                             .empty()
                             ? in
                             : in;
                }, {rangeOf({2})});
              }),
              HasSubstr("already tracing"));
  EXPECT_FALSE(isTracing());
  EXPECT_EQ(tls_local_dispatch_key_set().included_, before.included_);
  EXPECT_EQ(tls_local_dispatch_key_set().excluded_, before.excluded_);
}

TEST(Tracer, FailedCallCaughtInsideFnLeavesNoNodes) {
  Tensor bias = tensorOf({1, 2, 3}, {3});  // unseen: would be a constant
  std::unique_ptr<Graph> g = trace(
      boxed([&](const std::vector<Tensor>& in) {
        try {
          add(in[0], bias);  // sizes 2 and 3 do not broadcast
          ADD_FAILURE() << "add should have failed";
        } catch (const Error&) {
        }
        return std::vector<Tensor>{neg(in[0])};
      }),
      boxAll({rangeOf({2})}), {{"x"}});
  EXPECT_EQ(g->toString(),
            "graph(%x : Tensor):\n"
            "  %3 : Tensor = aten::neg(%x)\n"
            "  return (%3)\n");
}

TEST(Tracer, ForkedWorkInsideTraceFailsClearly) {
  std::string message;
  trace(boxed([&](const std::vector<Tensor>& in) {
          std::shared_ptr<Future> f =
              fork([x = in[0]] { return IValue(neg(x)); });
          message = errorOf([&] { f->wait(); });
          return in;
        }),
        boxAll({rangeOf({2})}));
  EXPECT_THAT(message, HasSubstr("aten::neg reached the Tracer dispatch key "
                                 "on a thread that is not tracing"));
}

TEST(Tracer, ManyThreadsTraceAtOnce) {
  std::vector<std::thread> threads;
  std::vector<std::string> texts(4);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 20; ++k) {
        std::unique_ptr<Graph> g = trace(
            boxed([i](const std::vector<Tensor>& in) {
              return std::vector<Tensor>{mul(in[0], i)};
            }),
            boxAll({rangeOf({3})}), {{"x"}});
        texts[i] = g->toString();
        std::vector<Tensor> out = runGraph(*g, {rangeOf({3})});
        EXPECT_EQ(valuesOf(out[0]), valuesOf(mul(rangeOf({3}), i)));
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    EXPECT_THAT(texts[i], HasSubstr("prim::Constant[value=" +
                                    std::to_string(i) + "]()"));
  }
}

}  // namespace
}  // namespace jit
}  // namespace turnout
