// The dispatch trace: a call that goes Autograd -> CPU, unboxed and boxed,
// its sinks, its guard, and several threads tracing at once.
#include "dispatcher/debug/dispatch_trace.h"

#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dispatcher/core/tensor.h"
#include "dispatcher/debug/profiler.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/dispatcher/testing.h"
#include "tests/error_of.h"

namespace turnout {
namespace {

using testing::cpuTensor;
using testing::op;
using ::testing::ElementsAre;
using testing::errorOf;
using ::testing::HasSubstr;

Tensor fnCpu(const Tensor& x) { return x; }

// An autograd kernel that passes the call to the keys below its own.
Tensor fnAutograd(DispatchKeySet ks, const Tensor& x) {
  static auto self = op("tr::f").typed<Tensor(const Tensor&)>();
  return self.redispatch(
      ks & DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::AutogradCPU),
      x);
}

// The same, boxed.
void fnAutogradBoxed(const OperatorHandle& op, DispatchKeySet ks,
                     Stack* stack) {
  op.redispatchBoxed(
      ks & DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::AutogradCPU),
      stack);
}

// Hands the call on as the Python key's fallback does: says to whom, then
// redispatches below its key.
void fnHandOn(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  traceHandler(op, DispatchKey::AutogradCPU, "handler hand_on (trace.cc:7)");
  op.redispatchBoxed(
      ks & DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::AutogradCPU),
      stack);
}

// tr::f: Autograd kernel redispatching to CPU; tr::g: the same, boxed.
struct TraceOps {
  TraceOps() : lib(Library::FRAGMENT, "tr", std::nullopt, "trace.cc", 1) {
    lib.def("f(Tensor x) -> Tensor");
    lib.impl("f", dispatch(DispatchKey::CPU, TURNOUT_FN(fnCpu)));
    lib.impl("f", dispatch(DispatchKey::AutogradCPU, TURNOUT_FN(fnAutograd)));
    lib.def("g(Tensor x) -> Tensor");
    lib.impl("g", dispatch(DispatchKey::CPU, TURNOUT_FN(fnCpu)));
    lib.impl("g",
             dispatch(DispatchKey::AutogradCPU,
                      CppFunction::makeFromBoxedFunction(&fnAutogradBoxed)));
    lib.def("h(Tensor x) -> Tensor");
    lib.impl("h", dispatch(DispatchKey::CPU, TURNOUT_FN(fnCpu)));
    lib.impl("h", dispatch(DispatchKey::AutogradCPU,
                           CppFunction::makeFromBoxedFunction(&fnHandOn)));
  }
  Library lib;
};

// Registered once for the binary; deregistered at exit.
void ensureOps() { static TraceOps ops; }

// Collects lines through a callback sink.
struct Lines {
  std::vector<std::string> lines;
  std::vector<DispatchTraceEvent> events;
  DispatchTraceCallback sink() {
    return [this](const DispatchTraceEvent& e, const std::string& line) {
      lines.push_back(line);
      events.push_back(e);
    };
  }
};

TEST(DispatchTrace, UnboxedCallGoesAutogradThenCpu) {
  ensureOps();
  Lines out;
  {
    DispatchTraceGuard trace(out.sink());
    EXPECT_TRUE(isDispatchTraceEnabled());
    op("tr::f").typed<Tensor(const Tensor&)>().call(cpuTensor());
  }
  EXPECT_THAT(out.lines,
              ElementsAre("tr::f call DispatchKeySet(CPU, AutogradCPU) -> "
                          "AutogradCPU [kernel] registered at trace.cc:1",
                          "  tr::f redispatch DispatchKeySet(CPU) -> CPU "
                          "[kernel] registered at trace.cc:1"));
  ASSERT_EQ(out.events.size(), 2u);
  EXPECT_EQ(out.events[0].key, DispatchKey::AutogradCPU);
  EXPECT_EQ(out.events[0].depth, 0u);
  EXPECT_EQ(out.events[1].key, DispatchKey::CPU);
  EXPECT_EQ(out.events[1].depth, 1u);
  EXPECT_EQ(out.events[1].call, detail::CallKind::Redispatch);
}

TEST(DispatchTrace, HandlerLineSaysWhoTheKernelHandsTheCallTo) {
  ensureOps();
  Lines out;
  {
    DispatchTraceGuard trace(out.sink());
    op("tr::h").typed<Tensor(const Tensor&)>().call(cpuTensor());
  }
  EXPECT_THAT(
      out.lines,
      ElementsAre("tr::h call DispatchKeySet(CPU, AutogradCPU) -> "
                  "AutogradCPU [kernel] registered at trace.cc:1",
                  "  [AutogradCPU] tr::h -> handler hand_on (trace.cc:7)",
                  "  tr::h redispatchBoxed DispatchKeySet(CPU) -> CPU "
                  "[kernel] registered at trace.cc:1"));
  ASSERT_EQ(out.events.size(), 3u);
  EXPECT_EQ(out.events[1].call, detail::CallKind::Handler);
  EXPECT_EQ(out.events[1].depth, 1u);
  EXPECT_EQ(out.events[1].site, "handler hand_on (trace.cc:7)");
  // Off: nothing is written, and the kernel still runs.
  out.lines.clear();
  op("tr::h").typed<Tensor(const Tensor&)>().call(cpuTensor());
  EXPECT_TRUE(out.lines.empty());
}

TEST(DispatchTrace, BoxedCallGoesAutogradThenCpu) {
  ensureOps();
  Lines out;
  {
    DispatchTraceGuard trace(out.sink());
    Stack stack{IValue(cpuTensor())};
    op("tr::g").callBoxed(stack);
    // A typed call of a boxed kernel is traced once, as the call.
    op("tr::g").typed<Tensor(const Tensor&)>().call(cpuTensor());
  }
  EXPECT_THAT(out.lines,
              ElementsAre("tr::g callBoxed DispatchKeySet(CPU, AutogradCPU) -> "
                          "AutogradCPU [kernel] registered at trace.cc:1",
                          "  tr::g redispatchBoxed DispatchKeySet(CPU) -> CPU "
                          "[kernel] registered at trace.cc:1",
                          "tr::g call DispatchKeySet(CPU, AutogradCPU) -> "
                          "AutogradCPU [kernel] registered at trace.cc:1",
                          "  tr::g redispatchBoxed DispatchKeySet(CPU) -> CPU "
                          "[kernel] registered at trace.cc:1"));
}

TEST(DispatchTrace, OffAfterTheGuardAndSinksRestored) {
  ensureOps();
  Lines outer;
  Lines inner;
  {
    DispatchTraceGuard a(outer.sink());
    {
      DispatchTraceGuard b(inner.sink());
      op("tr::f").typed<Tensor(const Tensor&)>().call(cpuTensor());
    }
    op("tr::f").typed<Tensor(const Tensor&)>().call(cpuTensor());
  }
  EXPECT_FALSE(isDispatchTraceEnabled());
  op("tr::f").typed<Tensor(const Tensor&)>().call(cpuTensor());
  EXPECT_EQ(inner.lines.size(), 2u);
  EXPECT_EQ(outer.lines.size(), 2u);
}

TEST(DispatchTrace, StreamSinkMissingKernelAndScopes) {
  ensureOps();
  std::ostringstream text;
  {
    DispatchTraceGuard trace(text);
    RecordScope phase("test::phase");
    Tensor meta =
        detail::makeTensorWithKeySet(DispatchKeySet(DispatchKey::Meta));
    EXPECT_THAT(
        errorOf([&] { op("tr::f").typed<Tensor(const Tensor&)>().call(meta); }),
        HasSubstr("Could not run 'tr::f'"));
  }
  EXPECT_EQ(text.str(),
            "scope test::phase\n"
            "  tr::f call DispatchKeySet(Meta) -> Meta [missing]\n");
}

TEST(DispatchTrace, RejectedSinksChangeNothing) {
  EXPECT_THAT(
      errorOf([] { DispatchTraceGuard g(static_cast<std::FILE*>(nullptr)); }),
      HasSubstr("the FILE* is null"));
  EXPECT_FALSE(isDispatchTraceEnabled());
  EXPECT_THAT(errorOf([] { DispatchTraceGuard g{DispatchTraceCallback()}; }),
              HasSubstr("the callback is empty"));
  EXPECT_FALSE(isDispatchTraceEnabled());
}

TEST(DispatchTrace, CallbackThatDispatchesIsNotTracedAgain) {
  ensureOps();
  int calls = 0;
  {
    DispatchTraceGuard trace(
        [&calls](const DispatchTraceEvent&, const std::string&) {
          ++calls;
          op("tr::f").typed<Tensor(const Tensor&)>().call(cpuTensor());
        });
    op("tr::f").typed<Tensor(const Tensor&)>().call(cpuTensor());
  }
  EXPECT_EQ(calls, 2);
}

TEST(DispatchTrace, ThreadsWriteWholeLinesWithTheirOwnDepth) {
  ensureOps();
  std::mutex mu;
  std::vector<DispatchTraceEvent> events;
  std::vector<std::string> lines;
  constexpr int kThreads = 4;
  constexpr int kCalls = 50;
  {
    DispatchTraceGuard trace(
        [&](const DispatchTraceEvent& e, const std::string& line) {
          std::lock_guard<std::mutex> lock(mu);
          events.push_back(e);
          lines.push_back(line);
        });
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t] {
        for (int i = 0; i < kCalls; ++i) {
          if (t % 2 == 0) {
            op("tr::f").typed<Tensor(const Tensor&)>().call(cpuTensor());
          } else {
            Stack stack{IValue(cpuTensor())};
            op("tr::g").callBoxed(stack);
          }
        }
      });
    }
    for (std::thread& th : threads) th.join();
  }
  ASSERT_EQ(events.size(), size_t{kThreads * kCalls * 2});
  // Per thread: call at depth 0, then its redispatch at depth 1.
  std::map<uint32_t, std::vector<uint32_t>> depths;
  for (size_t i = 0; i < events.size(); ++i) {
    depths[events[i].thread].push_back(events[i].depth);
    EXPECT_EQ(lines[i], formatDispatchTraceLine(events[i]));
  }
  EXPECT_EQ(depths.size(), size_t{kThreads});
  for (const auto& [thread, d] : depths) {
    ASSERT_EQ(d.size(), size_t{kCalls * 2});
    for (size_t i = 0; i < d.size(); ++i) {
      EXPECT_EQ(d[i], i % 2) << "thread " << thread << " event " << i;
    }
  }
}

}  // namespace
}  // namespace turnout
