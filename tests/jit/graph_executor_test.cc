// The graph executor: results agree with eager calls, one plan per
// ArgumentSpec with its optimised graph, the debug state, optimisation off,
// errors, and many threads running one executor (run it under TSan).
#include "jit/runtime/graph_executor.h"

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "dispatcher/debug/profiler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/parser.h"
#include "kernels/elementwise.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace jit {
namespace {

using ::testing::HasSubstr;
using turnout::testing::errorOf;
using turnout::testing::tensorOf;
using turnout::testing::valuesOf;

// x + 0 (a no-op), times y; for a matrix t().t() of it, else its negation;
// minus y. The optimised plan for matrices is mul then sub.
constexpr const char* kModel = R"IR(graph(%x : Tensor,
      %y : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %a : Tensor = aten::add(%x, %0, %1)
  %b : Tensor = aten::mul(%a, %y)
  %d : int = aten::dim(%x)
  %c : bool = aten::eq(%d, %2)
  %r : Tensor = prim::If(%c)
    block0():
      %t1 : Tensor = aten::t(%b)
      %t2 : Tensor = aten::t(%t1)
      -> (%t2)
    block1():
      %n : Tensor = aten::neg(%b)
      -> (%n)
  %s : Tensor = aten::sub(%r, %y, %1)
  return (%s)
)IR";

Tensor eager(const Tensor& x, const Tensor& y) {
  Tensor b = mul(add(x, 0), y);
  return sub(x.dim() == 2 ? b : neg(b), y);
}

Tensor runOnce(GraphExecutor& ex, const Tensor& x, const Tensor& y) {
  Stack stack{IValue(x), IValue(y)};
  ex.run(stack);
  EXPECT_EQ(stack.size(), 1u);
  return stack[0].toTensor();
}

TEST(GraphExecutor, ResultsAgreeWithEagerCalls) {
  GraphExecutor ex(*parseIR(kModel));
  const std::vector<std::pair<Tensor, Tensor>> inputs = {
      {tensorOf({1, 2, 3, 4, 5, 6}, {2, 3}), tensorOf({2, 2, 2}, {3})},
      {tensorOf({1, -2}, {2}), tensorOf({3, 4}, {2})},
      {tensorOf({1, 2, 3, 4}, {2, 2}, ScalarType::Double),
       tensorOf({1, 2, 3, 4}, {2, 2}, ScalarType::Double)},
      {tensorOf({1, 2}, {2}, ScalarType::Long),
       tensorOf({5, 7}, {2}, ScalarType::Long)},
  };
  for (const auto& [x, y] : inputs) {
    SCOPED_TRACE(x.toString());
    Tensor got = runOnce(ex, x, y);
    Tensor want = eager(x, y);
    EXPECT_EQ(got.scalar_type(), want.scalar_type());
    EXPECT_EQ(got.sizes(), want.sizes());
    EXPECT_EQ(valuesOf(got), valuesOf(want));
  }
}

TEST(GraphExecutor, OptimizedGraphIsSpecialisedToTheInputs) {
  GraphExecutor ex(*parseIR(kModel));
  EXPECT_EQ(ex.lastExecutedOptimizedGraph(), nullptr);
  runOnce(ex, tensorOf({1, 2, 3, 4}, {2, 2}), tensorOf({1, 2}, {2}));
  EXPECT_EQ(ex.lastExecutedOptimizedGraph()->toString(),
            R"IR(graph(%x : Float(*, *, requires_grad=0, device=cpu),
      %y : Float(*, requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=1]()
  %b : Float(*, *, requires_grad=0, device=cpu) = aten::mul(%x, %y)
  %s : Float(*, *, requires_grad=0, device=cpu) = aten::sub(%b, %y, %1)
  return (%s)
)IR");
  runOnce(ex, tensorOf({1, 2}, {2}), tensorOf({1, 2}, {2}));
  EXPECT_EQ(ex.lastExecutedOptimizedGraph()->toString(),
            R"IR(graph(%x : Float(*, requires_grad=0, device=cpu),
      %y : Float(*, requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=1]()
  %b : Float(*, requires_grad=0, device=cpu) = aten::mul(%x, %y)
  %n : Float(*, requires_grad=0, device=cpu) = aten::neg(%b)
  %s : Float(*, requires_grad=0, device=cpu) = aten::sub(%n, %y, %1)
  return (%s)
)IR");
}

TEST(GraphExecutor, OnePlanPerSpec) {
  GraphExecutor ex(*parseIR(kModel));
  Tensor m = tensorOf({1, 2, 3, 4}, {2, 2});
  Tensor v = tensorOf({1, 2}, {2});
  Tensor l = tensorOf({1, 2}, {2}, ScalarType::Long);
  runOnce(ex, m, v);
  runOnce(ex, tensorOf({9, 9, 9, 9, 9, 9}, {3, 2}), v);  // same spec
  runOnce(ex, v, v);
  runOnce(ex, l, l);
  runOnce(ex, v, v);
  GraphExecutorState state = ex.getDebugState();
  ASSERT_EQ(state.plans.size(), 3u);
  EXPECT_EQ(state.plans[0].spec.toString(),
            "(Float(*, *, requires_grad=0, device=cpu), "
            "Float(*, requires_grad=0, device=cpu)) optimized");
  EXPECT_EQ(state.plans[1].spec.toString(),
            "(Float(*, requires_grad=0, device=cpu), "
            "Float(*, requires_grad=0, device=cpu)) optimized");
  EXPECT_EQ(state.plans[2].spec.toString(),
            "(Long(*, requires_grad=0, device=cpu), "
            "Long(*, requires_grad=0, device=cpu)) optimized");
  EXPECT_THAT(state.plans[0].code, HasSubstr("CallUnboxed aten::mul.Tensor"));
  EXPECT_EQ(state.graph->toString(), parseIR(kModel)->toString());
}

TEST(GraphExecutor, DebugStateText) {
  GraphExecutor ex(*parseIR(R"IR(graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : int = aten::add(%1, %1)
  %y : Tensor = aten::mul(%x, %2)
  return (%y)
)IR"));
  EXPECT_EQ(ex.getDebugState().toString(), "GraphExecutor: 0 plans\n");
  Stack stack{IValue(tensorOf({1.5}, {1}, ScalarType::Double))};
  ex.run(stack);
  EXPECT_EQ(valuesOf(stack[0].toTensor()), std::vector<double>{3.0});
  EXPECT_EQ(ex.getDebugState().toString(),
            R"IR(GraphExecutor: 1 plan
plan 0: (Double(*, requires_grad=0, device=cpu)) optimized
graph(%x : Double(*, requires_grad=0, device=cpu)):
  %4 : int = prim::Constant[value=2]()
  %y : Double(*, requires_grad=0, device=cpu) = aten::mul(%x, %4)
  return (%y)
)IR");
}

TEST(GraphExecutor, SpecializeSizesFoldsShapes) {
  GraphExecutorOptions options;
  options.specialize_sizes = true;
  GraphExecutor ex(*parseIR(R"IR(graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %n : int = aten::size(%x, %0)
  %y : Tensor = aten::mul(%x, %n)
  return (%y)
)IR"),
                   options);
  for (int64_t n : {2, 3, 2}) {
    Stack stack{IValue(tensorOf(std::vector<double>(n, 1.0), {n}))};
    ex.run(stack);
    EXPECT_EQ(valuesOf(stack[0].toTensor()),
              std::vector<double>(n, static_cast<double>(n)));
  }
  GraphExecutorState state = ex.getDebugState();
  ASSERT_EQ(state.plans.size(), 2u);
  EXPECT_EQ(state.plans[1].spec.toString(),
            "(Float(3, strides=[1], requires_grad=0, device=cpu)) optimized");
  EXPECT_EQ(state.plans[1].graph->toString(),
            R"IR(graph(%x : Float(3, strides=[1], requires_grad=0, device=cpu)):
  %4 : int = prim::Constant[value=3]()
  %y : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::mul(%x, %4)
  return (%y)
)IR");
}

TEST(GraphExecutor, OptimizationOff) {
  GraphExecutorOptions options;
  options.optimize = false;
  GraphExecutor off(*parseIR(kModel), options);
  Tensor m = tensorOf({1, 2, 3, 4}, {2, 2});
  Tensor v = tensorOf({1, 2}, {2});
  EXPECT_EQ(valuesOf(runOnce(off, m, v)), valuesOf(eager(m, v)));
  std::shared_ptr<const Graph> g = off.lastExecutedOptimizedGraph();
  EXPECT_THAT(g->toString(), HasSubstr("prim::If"));
  EXPECT_THAT(g->toString(), HasSubstr("aten::t"));
  EXPECT_THAT(off.getDebugState().plans[0].spec.toString(),
              HasSubstr(") unoptimized"));

  // The thread's switch: an unoptimised plan beside the optimised one.
  GraphExecutor ex(*parseIR(kModel));
  runOnce(ex, m, v);
  setGraphExecutorOptimize(false);
  EXPECT_FALSE(getGraphExecutorOptimize());
  EXPECT_EQ(valuesOf(runOnce(ex, m, v)), valuesOf(eager(m, v)));
  setGraphExecutorOptimize(true);
  GraphExecutorState state = ex.getDebugState();
  ASSERT_EQ(state.plans.size(), 2u);
  EXPECT_THAT(state.plans[0].graph->toString(),
              ::testing::Not(HasSubstr("prim::If")));
  EXPECT_THAT(state.plans[1].graph->toString(), HasSubstr("prim::If"));
}

TEST(GraphExecutor, Errors) {
  GraphExecutor ex(*parseIR(kModel));
  Stack one{IValue(tensorOf({1}, {1}))};
  EXPECT_EQ(errorOf([&] { ex.run(one); }),
            "GraphExecutor::run(): the graph takes 2 inputs but the stack "
            "holds 1 values");
  // A kernel error names the operator and the node; the stack keeps what
  // lay below the inputs.
  Stack bad{IValue(int64_t{7}), IValue(tensorOf({1, 2}, {2})),
            IValue(tensorOf({1, 2, 3}, {3}))};
  EXPECT_THAT(errorOf([&] { ex.run(bad); }), HasSubstr("aten::mul.Tensor"));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].toInt(), 7);

  // A graph the interpreter cannot compile: the error comes at the first
  // run, and no plan is kept.
  ParseOptions unresolved;
  unresolved.allow_unresolved = true;
  GraphExecutor broken(*parseIR(R"IR(graph(%x : Tensor):
  %y : Tensor = myops::missing(%x)
  return (%y)
)IR",
                                unresolved));
  Stack s{IValue(tensorOf({1}, {1}))};
  EXPECT_THAT(errorOf([&] { broken.run(s); }),
              HasSubstr("no registered operator resolves myops::missing"));
  EXPECT_TRUE(broken.getDebugState().plans.empty());
  EXPECT_EQ(broken.lastExecutedOptimizedGraph(), nullptr);
}

TEST(GraphExecutor, NonTensorInputsAndUndefinedTensors) {
  GraphExecutor ex(*parseIR(R"IR(graph(%x : Tensor,
      %n : int):
  %y : Tensor = aten::mul(%x, %n)
  return (%y, %n)
)IR"));
  Stack stack{IValue(tensorOf({1, 2}, {2})), IValue(int64_t{3})};
  ex.run(stack);
  ASSERT_EQ(stack.size(), 2u);
  EXPECT_EQ(valuesOf(stack[0].toTensor()), (std::vector<double>{3, 6}));
  EXPECT_EQ(stack[1].toInt(), 3);
  Stack undefined{IValue(Tensor()), IValue(int64_t{3})};
  EXPECT_NE(errorOf([&] { ex.run(undefined); }), "(no error)");
  GraphExecutorState state = ex.getDebugState();
  ASSERT_EQ(state.plans.size(), 2u);
  EXPECT_EQ(state.plans[0].spec.toString(),
            "(Float(*, requires_grad=0, device=cpu), Int) optimized");
  EXPECT_EQ(state.plans[1].spec.toString(),
            "(Tensor(undefined), Int) optimized");
}

TEST(GraphExecutor, ManyThreadsShareOnePlanPerSpec) {
  GraphExecutor ex(*parseIR(kModel));
  const std::vector<std::pair<Tensor, Tensor>> inputs = {
      {tensorOf({1, 2, 3, 4}, {2, 2}), tensorOf({1, 2}, {2})},
      {tensorOf({1, 2}, {2}), tensorOf({3, 4}, {2})},
      {tensorOf({1, 2}, {2}, ScalarType::Double),
       tensorOf({3, 4}, {2}, ScalarType::Double)},
  };
  std::vector<std::vector<double>> expected;
  for (const auto& [x, y] : inputs) expected.push_back(valuesOf(eager(x, y)));
  constexpr int kThreads = 8;
  constexpr int kRuns = 100;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRuns; ++i) {
        const size_t k = static_cast<size_t>(t + i) % inputs.size();
        Stack stack{IValue(inputs[k].first), IValue(inputs[k].second)};
        ex.run(stack);
        if (valuesOf(stack[0].toTensor()) != expected[k]) ++wrong;
        if (ex.lastExecutedOptimizedGraph() == nullptr) ++wrong;
        if (i % 10 == 0 && ex.getDebugState().plans.empty()) ++wrong;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(ex.getDebugState().plans.size(), inputs.size());
}

TEST(GraphExecutor, CompilePhasesAreProfiledAsNestedSpans) {
  GraphExecutor ex(*parseIR(kModel));
  Tensor x = tensorOf({1, 2}, {2});
  Tensor y = tensorOf({3, 4}, {2});
  Profiler prof;
  runOnce(ex, x, y);  // compiles a plan, then runs it
  runOnce(ex, x, y);  // runs the cached plan
  prof.stop();
  const std::vector<ProfileEvent>& events = prof.events();
  auto count = [&](const std::string& name) {
    int n = 0;
    for (const ProfileEvent& e : events) n += e.name == name;
    return n;
  };
  EXPECT_EQ(count("jit::compile_plan"), 1) << "the second run compiles nothing";
  EXPECT_EQ(count("jit::optimize_graph"), 1);
  EXPECT_EQ(count("jit::build_code"), 1);
  EXPECT_EQ(count("jit::pass::erase_shape_information"), 1);
  for (const char* pass : {"jit::pass::propagate_shapes", "jit::pass::peephole",
                           "jit::pass::constant_propagation",
                           "jit::pass::inline_constant_branches",
                           "jit::pass::common_subexpression_elimination",
                           "jit::pass::dead_code_elimination"}) {
    SCOPED_TRACE(pass);
    EXPECT_GE(count(pass), 1);
    EXPECT_EQ(count(pass), count("jit::pass::peephole")) << "once per round";
  }
  // Properly nested: events come ordered by start; each span lies inside the
  // nearest earlier span one level up, and that one has the expected name.
  std::map<std::string, std::string> parent_of;
  std::vector<const ProfileEvent*> open;
  for (const ProfileEvent& e : events) {
    ASSERT_EQ(e.thread, events[0].thread);
    while (!open.empty() && open.back()->depth >= e.depth) open.pop_back();
    if (e.depth == 0) {
      EXPECT_TRUE(open.empty());
      open.push_back(&e);
      continue;
    }
    ASSERT_FALSE(open.empty()) << e.name;
    const ProfileEvent& parent = *open.back();
    EXPECT_EQ(parent.depth + 1, e.depth) << e.name;
    EXPECT_LE(parent.start_ns, e.start_ns) << e.name;
    EXPECT_LE(e.end_ns, parent.end_ns)
        << e.name << " ends after " << parent.name;
    if (e.call == detail::CallKind::UserScope) parent_of[e.name] = parent.name;
    open.push_back(&e);
  }
  EXPECT_EQ(parent_of.count("jit::compile_plan"), 0u) << "outermost";
  EXPECT_EQ(parent_of["jit::optimize_graph"], "jit::compile_plan");
  EXPECT_EQ(parent_of["jit::build_code"], "jit::compile_plan");
  EXPECT_EQ(parent_of["jit::pass::peephole"], "jit::optimize_graph");
  EXPECT_EQ(parent_of["jit::pass::dead_code_elimination"],
            "jit::optimize_graph");
  // The plan's operators run after compiling, outside its span.
  const ProfileEvent* compile = nullptr;
  int subs = 0;
  for (const ProfileEvent& e : events) {
    if (e.name == "jit::compile_plan") compile = &e;
    if (e.name == "aten::sub.Tensor" && e.depth == 0) {
      ASSERT_NE(compile, nullptr);
      EXPECT_GE(e.start_ns, compile->end_ns);
      ++subs;
    }
  }
  EXPECT_EQ(subs, 2) << "one per run";
  EXPECT_THAT(prof.table(), HasSubstr("jit::compile_plan"));
  EXPECT_THAT(prof.chromeTrace(),
              HasSubstr(R"({"name":"jit::compile_plan","cat":"scope")"));
}

}  // namespace
}  // namespace jit
}  // namespace turnout
