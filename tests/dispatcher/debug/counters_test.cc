// Counters: creation, bumping from many threads, listing, reset, errors; and
// the dispatcher's own counter of backend fallbacks taken under a trace.
#include "dispatcher/debug/counters.h"

#include <string>
#include <thread>
#include <vector>

#include "dispatcher/core/tensor.h"
#include "dispatcher/debug/dispatch_trace.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/error_of.h"

namespace turnout {
namespace {

using ::testing::Contains;
using testing::errorOf;
using ::testing::HasSubstr;
using ::testing::Pair;

TEST(Counters, SameNameSameCounter) {
  Counter& a = counter("test.same");
  Counter& b = counter("test.same");
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(a.name(), "test.same");
  int64_t start = a.value();
  b.add(3);
  a.add();
  EXPECT_EQ(a.value(), start + 4);
}

TEST(Counters, NameWithoutCategoryGoesToMisc) {
  EXPECT_EQ(counter("lonely").name(), "misc.lonely");
}

TEST(Counters, BadNames) {
  EXPECT_THAT(errorOf([] { counter(""); }), HasSubstr("the name is empty"));
  EXPECT_THAT(errorOf([] { counter("jit."); }),
              HasSubstr("the category or the event is empty"));
  EXPECT_THAT(errorOf([] { counter(".x"); }),
              HasSubstr("the category or the event is empty"));
}

TEST(Counters, ConcurrentAddsAreAllCounted) {
  Counter& c = counter("test.concurrent");
  const int64_t start = c.value();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 10000; ++i) counter("test.concurrent").add();
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(c.value(), start + 40000);
}

TEST(Counters, ListingAndReset) {
  counter("test.listed").add(2);
  auto values = counterValues();
  EXPECT_THAT(values, Contains(Pair("test.listed", ::testing::Ge(2))));
  for (size_t i = 1; i < values.size(); ++i) {
    EXPECT_LT(values[i - 1].first, values[i].first);
  }
  resetCounters();
  EXPECT_EQ(counter("test.listed").value(), 0);
}

Tensor fnCpu(const Tensor& x) { return x; }

TEST(Counters, TraceCountsBackendFallbacksTaken) {
  Library lib(Library::FRAGMENT, "cnt1", std::nullopt, "cnt.cc", 1);
  lib.def("f(Tensor x) -> Tensor");
  lib.impl("f", dispatch(DispatchKey::CPU, TURNOUT_FN(fnCpu)));
  Library fb(Library::IMPL, "_", DispatchKey::PrivateUse1, "cnt.cc", 2);
  fb.fallback(CppFunction::makeFromBoxedFunction(
      [](const OperatorHandle&, Stack* stack) {}));
  auto f = Dispatcher::singleton()
               .findSchemaOrThrow("cnt1::f", "")
               .typed<Tensor(const Tensor&)>();
  Tensor pu1 =
      detail::makeTensorWithKeySet(DispatchKeySet(DispatchKey::PrivateUse1));
  Tensor cpu = detail::makeTensorWithKeySet(DispatchKeySet(DispatchKey::CPU));
  Counter& taken = counter(kCounterBackendFallbacks);
  const int64_t start = taken.value();
  Stack stack{IValue(pu1)};
  Dispatcher::singleton().findSchemaOrThrow("cnt1::f", "").callBoxed(stack);
  EXPECT_EQ(taken.value(), start);  // not counted without a trace
  {
    DispatchTraceGuard trace(
        [](const DispatchTraceEvent&, const std::string&) {});
    f.call(cpu);
    EXPECT_EQ(taken.value(), start);
    Stack s2{IValue(pu1)};
    Dispatcher::singleton().findSchemaOrThrow("cnt1::f", "").callBoxed(s2);
    EXPECT_EQ(taken.value(), start + 1);
  }
}

}  // namespace
}  // namespace turnout
