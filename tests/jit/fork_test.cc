// Future, fork() and collectAll(), and prim::fork / aten::wait run by the
// interpreter: results, errors surfacing at wait(), the caller's
// thread-local dispatch state carried to the pool, and many (nested) forks
// at once without deadlock. Run under --config=tsan too.
#include "jit/runtime/future.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dispatcher/library.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/parser.h"
#include "jit/runtime/interpreter.h"
#include "kernels/autograd/grad_mode.h"
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

// forktest::probe(x) returns x and records whether AutogradCPU was excluded
// on the thread that ran it.
std::atomic<int> probe_saw_excluded{-1};
Tensor probeKernel(const Tensor& x) {
  probe_saw_excluded.store(
      tls_is_dispatch_key_excluded(DispatchKey::AutogradCPU) ? 1 : 0);
  return x;
}
TURNOUT_LIBRARY(forktest, m) {
  m.def("probe(Tensor x) -> Tensor");
}
TURNOUT_LIBRARY_IMPL(forktest, CPU, m) {
  m.impl("probe", TURNOUT_FN(probeKernel));
}

TEST(Future, ForkDeliversTheValue) {
  Tensor x = rangeOf({3});
  std::shared_ptr<Future> f = fork([x] { return IValue(mul(x, 2)); });
  f->wait();
  EXPECT_TRUE(f->completed());
  EXPECT_FALSE(f->hasError());
  EXPECT_EQ(valuesOf(f->value().toTensor()), (std::vector<double>{0, 2, 4}));
  EXPECT_EQ(f->errorMessage(), "");
}

TEST(Future, ValueBeforeCompletionAndCompletingTwiceAreErrors) {
  auto f = std::make_shared<Future>();
  EXPECT_THAT(errorOf([&] { f->value(); }),
              HasSubstr("not complete yet; call wait() first"));
  f->markCompleted(IValue(1));
  EXPECT_THAT(errorOf([&] { f->markCompleted(IValue(2)); }),
              HasSubstr("already complete"));
  EXPECT_THAT(errorOf([&] {
                f->setError(std::make_exception_ptr(
                    Error(ErrorKind::Type, "late")));
              }),
              HasSubstr("already complete"));
  EXPECT_EQ(f->value().toInt(), 1);  // the first result stays
  EXPECT_THAT(errorOf([&] { f->setError(nullptr); }),
              HasSubstr("the error is null"));
  EXPECT_THAT(errorOf([] { fork(nullptr); }),
              HasSubstr("the function is empty"));
}

TEST(Future, ErrorsSurfaceAtWait) {
  std::shared_ptr<Future> f = fork([]() -> IValue {
    throw Error(ErrorKind::Index, "forked work failed: index 7 of 3");
  });
  try {
    f->wait();
    FAIL() << "wait() should throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Index);
    EXPECT_EQ(e.message(), "forked work failed: index 7 of 3");
  }
  EXPECT_TRUE(f->hasError());
  EXPECT_EQ(f->errorMessage(), "forked work failed: index 7 of 3");
  EXPECT_THAT(errorOf([&] { f->value(); }), HasSubstr("index 7 of 3"));
  // A kernel's error, raised on the pool thread.
  std::shared_ptr<Future> g = fork([] {
    return IValue(add(rangeOf({2}), rangeOf({3})));
  });
  EXPECT_THAT(errorOf([&] { g->wait(); }), HasSubstr("must match the size"));
}

TEST(Future, ThenChainsAndPropagatesErrors) {
  auto f = std::make_shared<Future>();
  std::shared_ptr<Future> g =
      f->then([](Future& p) { return IValue(p.value().toInt() + 1); });
  std::shared_ptr<Future> h =
      g->then([](Future& p) { return IValue(p.value().toInt() * 10); });
  EXPECT_FALSE(h->completed());
  f->markCompleted(IValue(4));
  EXPECT_EQ(h->value().toInt(), 50);
  // Added after completion: runs at once.
  EXPECT_EQ(f->then([](Future& p) { return IValue(p.value().toInt()); })
                ->value()
                .toInt(),
            4);
  // An error passes down the chain through value().
  std::shared_ptr<Future> bad = fork([]() -> IValue {
    throw Error(ErrorKind::Type, "bad input");
  });
  std::shared_ptr<Future> after =
      bad->then([](Future& p) { return IValue(p.value().toInt() + 1); });
  EXPECT_THAT(errorOf([&] { after->wait(); }), HasSubstr("bad input"));
  // A callback that throws fails its future only.
  std::shared_ptr<Future> thrower = f->then([](Future&) -> IValue {
    throw Error(ErrorKind::InvalidArgument, "callback failed");
  });
  EXPECT_THAT(thrower->errorMessage(), HasSubstr("callback failed"));
  EXPECT_THAT(errorOf([&] { f->then(nullptr); }),
              HasSubstr("the callback is empty"));
}

TEST(Future, CollectAll) {
  std::vector<std::shared_ptr<Future>> fs;
  for (int i = 0; i < 8; ++i) {
    fs.push_back(fork([i] { return IValue(i * i); }));
  }
  std::shared_ptr<Future> all = collectAll(fs);
  all->wait();
  // Its value is the list of the futures themselves, each complete.
  ASSERT_TRUE(all->holdsFutures());
  const std::vector<std::shared_ptr<Future>>& done = all->futures();
  ASSERT_EQ(done.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(done[i], fs[i]);
    EXPECT_TRUE(done[i]->completed());
    EXPECT_EQ(done[i]->value().toInt(), i * i);
  }
  EXPECT_THAT(errorOf([&] { all->value(); }),
              HasSubstr("is a list of futures (a collectAll() result)"));
  EXPECT_THAT(errorOf([&] { fs[0]->futures(); }),
              HasSubstr("this future holds a value, not a list of futures"));
  auto pending = std::make_shared<Future>();
  std::shared_ptr<Future> waiting = collectAll({pending});
  EXPECT_FALSE(waiting->holdsFutures());
  EXPECT_THAT(errorOf([&] { waiting->futures(); }),
              HasSubstr("Future::futures(): the future is not complete yet"));
  pending->markCompleted(IValue(3));
  ASSERT_TRUE(waiting->holdsFutures());
  EXPECT_EQ(waiting->futures()[0]->value().toInt(), 3);

  // A failure fails the result at once, as c10::collectAll, without
  // waiting for the others.
  auto slow = std::make_shared<Future>();
  std::vector<std::shared_ptr<Future>> mixed = {
      fork([] { return IValue(1); }), slow,
      fork([]() -> IValue { throw Error(ErrorKind::Type, "third failed"); })};
  std::shared_ptr<Future> some = collectAll(mixed);
  EXPECT_THAT(errorOf([&] { some->wait(); }), HasSubstr("third failed"));
  EXPECT_FALSE(slow->completed());
  EXPECT_FALSE(some->holdsFutures());
  EXPECT_THAT(errorOf([&] { some->futures(); }), HasSubstr("third failed"));
  // A later failure changes nothing.
  slow->setError(std::make_exception_ptr(
      Error(ErrorKind::Index, "second failed")));
  EXPECT_THAT(errorOf([&] { some->wait(); }), HasSubstr("third failed"));

  std::shared_ptr<Future> none = collectAll({});
  EXPECT_TRUE(none->completed());
  EXPECT_TRUE(none->holdsFutures());
  EXPECT_TRUE(none->futures().empty());
  EXPECT_THAT(errorOf([] { collectAll({nullptr}); }),
              HasSubstr("future 0 is null"));

  // Completed by hand before its inputs: that result stands, and the
  // inputs' completion does not throw.
  auto late = std::make_shared<Future>();
  std::shared_ptr<Future> overridden = collectAll({late});
  overridden->markCompleted(IValue(7));
  late->markCompleted(IValue(1));
  EXPECT_EQ(overridden->value().toInt(), 7);
  EXPECT_FALSE(overridden->holdsFutures());
}

TEST(Future, CollectAllResultDroppedBeforeItsInputs) {
  // The inputs hold only a weak reference to the result: dropping it
  // frees it although an input never completes (LeakSanitizer checks).
  auto never = std::make_shared<Future>();
  std::weak_ptr<Future> weak;
  {
    std::shared_ptr<Future> all = collectAll({never});
    weak = all;
  }
  EXPECT_TRUE(weak.expired());
  never->markCompleted(IValue(1));  // its callback finds no result
}

TEST(Future, CollectAllFromManyThreads) {
  // Inputs completed concurrently: the result completes exactly once.
  for (int round = 0; round < 20; ++round) {
    std::vector<std::shared_ptr<Future>> fs;
    for (int i = 0; i < 6; ++i) fs.push_back(std::make_shared<Future>());
    std::shared_ptr<Future> all = collectAll(fs);
    std::vector<std::shared_ptr<Future>> setters;
    for (int i = 0; i < 6; ++i) {
      setters.push_back(fork([f = fs[i], i, round] {
        if (round % 2 == 1 && i == 3) {
          f->setError(std::make_exception_ptr(
              Error(ErrorKind::Index, "input 3 failed")));
        } else {
          f->markCompleted(IValue(i));
        }
        return IValue();
      }));
    }
    for (auto& s : setters) s->wait();
    if (round % 2 == 1) {
      EXPECT_THAT(errorOf([&] { all->wait(); }), HasSubstr("input 3 failed"));
    } else {
      all->wait();
      ASSERT_EQ(all->futures().size(), 6u);
      for (int i = 0; i < 6; ++i) {
        EXPECT_EQ(all->futures()[i]->value().toInt(), i);
      }
    }
  }
}

TEST(Future, ForkCarriesTheCallersDispatchState) {
  const LocalDispatchKeySet outside = tls_local_dispatch_key_set();
  LocalDispatchKeySet seen_inside;
  {
    AutoDispatchBelowAutograd below;
    IncludeDispatchKeyGuard python(DispatchKey::TESTING_ONLY_GenericMode);
    const LocalDispatchKeySet caller = tls_local_dispatch_key_set();
    std::shared_ptr<Future> f = fork([&] {
      seen_inside = tls_local_dispatch_key_set();
      return IValue();
    });
    f->wait();
    EXPECT_EQ(seen_inside.included_, caller.included_);
    EXPECT_EQ(seen_inside.excluded_, caller.excluded_);
  }
  {
    autograd::NoGradGuard no_grad;
    std::shared_ptr<Future> f =
        fork([] { return IValue(autograd::GradMode::is_enabled()); });
    f->wait();
    EXPECT_FALSE(f->value().toBool());
  }
  std::shared_ptr<Future> enabled =
      fork([] { return IValue(autograd::GradMode::is_enabled()); });
  enabled->wait();
  EXPECT_TRUE(enabled->value().toBool());
  // The pool thread got its own state back: a fork without guards sees
  // the defaults.
  std::vector<std::shared_ptr<Future>> fs;
  std::vector<LocalDispatchKeySet> seen(16);
  for (int i = 0; i < 16; ++i) {
    fs.push_back(fork([&seen, i] {
      seen[i] = tls_local_dispatch_key_set();
      return IValue();
    }));
  }
  collectAll(fs)->wait();
  for (const LocalDispatchKeySet& s : seen) {
    EXPECT_EQ(s.included_, outside.included_);
    EXPECT_EQ(s.excluded_, outside.excluded_);
  }
}

// Each task forks `fanout` children and waits on them: with more waiting
// tasks than pool threads, only helping (running queued work while
// waiting) lets this finish.
int64_t forkTree(int depth, int fanout) {
  if (depth == 0) return 1;
  std::vector<std::shared_ptr<Future>> children;
  for (int i = 0; i < fanout; ++i) {
    children.push_back(
        fork([=] { return IValue(forkTree(depth - 1, fanout)); }));
  }
  int64_t total = 0;
  for (auto& c : children) {
    c->wait();
    total += c->value().toInt();
  }
  return total;
}

TEST(Future, ManyNestedForksFromManyThreads) {
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      std::shared_ptr<Future> root =
          fork([] { return IValue(forkTree(4, 4)); });
      root->wait();
      if (root->value().toInt() != 256) ++wrong;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Future, NumInteropThreads) {
  fork([] { return IValue(); })->wait();  // the pool has started
  EXPECT_GE(getNumInteropThreads(), 1);
  EXPECT_THAT(errorOf([] { setNumInteropThreads(0); }),
              HasSubstr("at least 1"));
  EXPECT_THAT(errorOf([] { setNumInteropThreads(3); }),
              HasSubstr("already started"));
}

// ---- prim::fork / aten::wait in graphs

Stack run(const Graph& g, Stack inputs) {
  Code code(g);
  code.run(inputs);
  return inputs;
}

constexpr const char* kForkGraph = R"IR(graph(%x : Tensor,
      %y : Tensor):
  %2 : int = prim::Constant[value=1]()
  %f1 : Future[Tensor] = prim::fork(%x)
    block0(%a : Tensor):
      %4 : Tensor = aten::mul(%a, %y)
      -> (%4)
  %f2 : Future[Tensor] = prim::fork(%y, %x)
    block0(%b : Tensor, %c : Tensor):
      %6 : Tensor = aten::sub(%b, %c, %2)
      -> (%6)
  %r1 : Tensor = aten::wait(%f1)
  %r2 : Tensor = aten::wait(%f2)
  %z : Tensor = aten::add(%r1, %r2, %2)
  return (%z)
)IR";

TEST(ForkGraph, RunsAndRoundTrips) {
  std::unique_ptr<Graph> g = parseIR(kForkGraph);
  EXPECT_EQ(g->toString(), kForkGraph);
  Tensor x = tensorOf({1, 2, 3}, {3}), y = tensorOf({10, 20, 30}, {3});
  Stack out = run(*g, {x, y});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf(out[0].toTensor()),
            valuesOf(add(mul(x, y), sub(y, x))));
  EXPECT_THAT(Code(*g).dump(), HasSubstr("Fork 1"));
}

TEST(ForkGraph, ForkInALoopAndInABranch) {
  std::unique_ptr<Graph> g = parseIR(R"IR(graph(%x : Tensor, %n : int):
    %t : bool = prim::Constant[value=1]()
    %one : int = prim::Constant[value=1]()
    %r : Tensor = prim::Loop(%n, %t, %x)
      block0(%i : int, %acc : Tensor):
        %f : Future[Tensor] = prim::fork()
          block0():
            %s : Tensor = aten::add(%acc, %x, %one)
            -> (%s)
        %c : bool = aten::gt(%i, %one)
        %v : Tensor = prim::If(%c)
          block0():
            %w : Tensor = aten::wait(%f)
            -> (%w)
          block1():
            %w2 : Tensor = aten::wait(%f)
            %w3 : Tensor = aten::wait(%f)
            %w4 : Tensor = aten::add(%w2, %w3, %one)
            -> (%w4)
        -> (%t, %v)
    return (%r))IR");
  Tensor x = tensorOf({1, 2}, {2});
  Tensor acc = x;
  for (int i = 0; i < 4; ++i) {
    Tensor s = add(acc, x);
    acc = i > 1 ? s : add(s, s);
  }
  Stack out = run(*g, {x, int64_t{4}});
  EXPECT_EQ(valuesOf(out[0].toTensor()), valuesOf(acc));
}

TEST(ForkGraph, ErrorsSurfaceAtWaitWithContext) {
  std::unique_ptr<Graph> g = parseIR(R"IR(graph(%x : Tensor, %y : Tensor):
    %one : int = prim::Constant[value=1]()
    %f : Future[Tensor] = prim::fork(%x, %y)
      block0(%a : Tensor, %b : Tensor):
        %s : Tensor = aten::add(%a, %b, %one) # model.py:3:4
        -> (%s)
    %r : Tensor = aten::wait(%f) # model.py:5:8
    return (%r))IR");
  Tensor x = rangeOf({2}), y = rangeOf({3});
  Stack stack{x, y};
  const std::string message = errorOf([&] { Code(*g).run(stack); });
  EXPECT_THAT(message, HasSubstr("aten::wait failed at model.py:5:8"));
  EXPECT_THAT(message, HasSubstr("aten::add.Tensor failed at model.py:3:4"));
  EXPECT_TRUE(stack.empty());
}

TEST(ForkGraph, ForkedGraphRunsWithTheCallersDispatchState) {
  std::unique_ptr<Graph> g = parseIR(R"IR(graph(%x : Tensor):
    %f : Future[Tensor] = prim::fork(%x)
      block0(%a : Tensor):
        %s : Tensor = forktest::probe(%a)
        -> (%s)
    %r : Tensor = aten::wait(%f)
    return (%r))IR");
  Code code(*g);
  for (bool below : {true, false}) {
    SCOPED_TRACE(below);
    std::optional<AutoDispatchBelowAutograd> guard;
    if (below) guard.emplace();
    probe_saw_excluded.store(-1);
    Stack stack{rangeOf({2})};
    code.run(stack);
    EXPECT_EQ(probe_saw_excluded.load(), below ? 1 : 0);
  }
}

TEST(ForkGraph, FuturesAreValues) {
  // Returned: the caller gets the Future itself.
  Code returns(*parseIR(R"IR(graph(%x : int):
    %f : Future[int] = prim::fork(%x)
      block0(%a : int):
        -> (%a)
    return (%f))IR"));
  Stack s{IValue(int64_t{5})};
  returns.run(s);
  ASSERT_TRUE(s[0].isFuture());
  s[0].toFuture()->wait();
  EXPECT_EQ(s[0].toFuture()->value().toInt(), 5);
  // Stored in a list (Future[int][], as torch prints it), read back and
  // waited on; twice on the same future gives the same value.
  Code listed(*parseIR(R"IR(graph(%x : int):
    %f : Future[int] = prim::fork(%x)
      block0(%a : int):
        %b : int = aten::mul(%a, %a)
        -> (%b)
    %g : Future[int] = prim::fork(%x)
      block0(%c : int):
        %d : int = aten::add(%c, %c)
        -> (%d)
    %l : Future[int][] = prim::ListConstruct(%f, %g)
    %0 : int = prim::Constant[value=0]()
    %1 : int = prim::Constant[value=1]()
    %h : Future[int] = aten::__getitem__(%l, %1)
    %k : Future[int] = aten::__getitem__(%l, %0)
    %r1 : int = aten::wait(%h)
    %r2 : int = aten::wait(%k)
    %r3 : int = aten::wait(%k)
    return (%r1, %r2, %r3))IR"));
  Stack t{IValue(int64_t{3})};
  listed.run(t);
  EXPECT_EQ(t[0].toInt(), 6);
  EXPECT_EQ(t[1].toInt(), 9);
  EXPECT_EQ(t[2].toInt(), 9);
}

TEST(ForkGraph, CompileAndParseErrors) {
  // aten::wait of something that is not a Future.
  EXPECT_THAT(errorOf([] {
                Code(*parseIR(R"IR(graph(%x : Tensor):
    %r : Tensor = aten::wait(%x)
    return (%r))IR"));
              }),
              HasSubstr("aten::wait takes a Future"));
  EXPECT_THAT(errorOf([] {
                parseIR(R"IR(graph(%x : Tensor):
    %f : Future[Tensor] = prim::fork(%x)
      block0():
        -> (%x)
    return (%x))IR");
              }),
              HasSubstr("one parameter per input"));
  EXPECT_THAT(errorOf([] {
                parseIR(R"IR(graph(%x : Tensor):
    %r : Tensor = aten::wait(%x, %x)
    return (%r))IR");
              }),
              HasSubstr("aten::wait takes one Future"));
}

TEST(ForkGraph, ManyThreadsRunOneCode) {
  std::unique_ptr<Graph> g = parseIR(kForkGraph);
  Code code(*g);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Tensor x = tensorOf({1.0 * t, 2}, {2}), y = tensorOf({3, 4}, {2});
      std::vector<double> expected = valuesOf(add(mul(x, y), sub(y, x)));
      for (int k = 0; k < 50; ++k) {
        Stack stack{x, y};
        code.run(stack);
        if (valuesOf(stack[0].toTensor()) != expected) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace jit
}  // namespace turnout
