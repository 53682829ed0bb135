// FallbackFilter (dispatcher/fallback_filter.h): a filtered backend fallback
// sees only the calls its filter selects; the others pass its key, unboxed
// for a typed call, as if it were not there.
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dispatcher/core/autograd_meta_interface.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/fallback_filter.h"
#include "dispatcher/library.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/dispatcher/testing.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using testing::cpuTensor;
using testing::op;

// The tests' stand-ins for autograd's state and grad mode.
struct Marker final : AutogradMetaInterface {
  explicit Marker(bool selected) : selected(selected) {}
  bool selected;
};
std::atomic<bool> g_active{true};
std::atomic<int> g_fallback_calls{0};
std::atomic<int> g_kernel_calls{0};

bool selects(const Tensor& t) {
  return static_cast<const Marker*>(t.unsafeGetTensorImpl()->autograd_meta())
      ->selected;
}
bool active() { return g_active.load(); }

constexpr DispatchKeySet kBelowAutograd(DispatchKeySet::FULL_AFTER,
                                        DispatchKey::AutogradOther);

void countingFallback(const OperatorHandle& op, DispatchKeySet ks,
                      Stack* stack) {
  ++g_fallback_calls;
  op.redispatchBoxed(ks & kBelowAutograd, stack);
}

Tensor identity(const Tensor& x) {
  ++g_kernel_calls;
  return x;
}
Tensor firstOf(const std::vector<Tensor>& xs) {
  ++g_kernel_calls;
  return xs.at(0);
}
void boxedIdentity(const OperatorHandle&, Stack*) { ++g_kernel_calls; }

TURNOUT_LIBRARY(ff_test, m) {
  m.def("id(Tensor x) -> Tensor");
  m.def("first(Tensor[] xs) -> Tensor");
  m.def("boxed_only(Tensor x) -> Tensor");
  m.def("with_autograd(Tensor x) -> Tensor");
}
TURNOUT_LIBRARY_IMPL(ff_test, CPU, m) {
  m.impl("id", TURNOUT_FN(identity));
  m.impl("first", TURNOUT_FN(firstOf));
  m.impl("boxed_only", CppFunction::makeFromBoxedFunction(&boxedIdentity));
  m.impl("with_autograd", TURNOUT_FN(identity));
}
TURNOUT_LIBRARY_IMPL(ff_test, Autograd, m) {
  m.impl("with_autograd", TURNOUT_FN(identity));
}

FallbackFilter filter() {
  FallbackFilter f;
  f.selects = &selects;
  f.active = &active;
  f.pass_through = kBelowAutograd;
  return f;
}

void installFilteredFallback() {
  Dispatcher::singleton().setFrameworkFallback(
      DispatchKey::Autograd,
      KernelFunction::makeFromBoxedFunction(&countingFallback),
      "counting fallback", filter());
}

class FallbackFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    installFilteredFallback();
    g_active = true;
    g_fallback_calls = 0;
    g_kernel_calls = 0;
  }
  void TearDown() override {
    Dispatcher::singleton().setFrameworkFallback(DispatchKey::Autograd,
                                                 KernelFunction(), "");
  }
};

Tensor marked(bool selected) {
  Tensor t = cpuTensor();
  t.unsafeGetTensorImpl()->set_autograd_meta(std::make_unique<Marker>(selected));
  return t;
}

Tensor callId(const Tensor& x, bool boxed) {
  if (!boxed) return op("ff_test::id").typed<Tensor(const Tensor&)>().call(x);
  Stack stack{IValue(x)};
  op("ff_test::id").callBoxed(stack);
  return stack.at(0).toTensor();
}

// Which calls reach the fallback, in both call forms: plain tensors and
// unselected ones never; a selected one only while active.
TEST_F(FallbackFilterTest, OnlySelectedCallsReachTheFallback) {
  struct Case {
    const char* name;
    Tensor x;
    bool active;
    int fallback_calls;
  };
  const std::vector<Case> cases = {
      {"plain", cpuTensor(), true, 0},
      {"unselected", marked(false), true, 0},
      {"selected", marked(true), true, 1},
      {"selected, inactive", marked(true), false, 0},
  };
  for (const bool boxed : {false, true}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.name) + (boxed ? ", boxed" : ", unboxed"));
      g_active = c.active;
      g_fallback_calls = 0;
      g_kernel_calls = 0;
      EXPECT_TRUE(callId(c.x, boxed).is_same(c.x));
      EXPECT_EQ(g_fallback_calls, c.fallback_calls);
      EXPECT_EQ(g_kernel_calls, 1);
    }
  }
}

// Every tensor of a Tensor[] is looked at, typed and boxed.
TEST_F(FallbackFilterTest, ListsAreScanned) {
  const auto first =
      op("ff_test::first").typed<Tensor(const std::vector<Tensor>&)>();
  first.call({cpuTensor(), marked(false)});
  EXPECT_EQ(g_fallback_calls, 0);
  first.call({cpuTensor(), marked(true)});
  EXPECT_EQ(g_fallback_calls, 1);
  Stack stack{IValue(std::vector<Tensor>{cpuTensor(), marked(true)})};
  op("ff_test::first").callBoxed(stack);
  EXPECT_EQ(g_fallback_calls, 2);
  EXPECT_EQ(g_kernel_calls, 3);
}

// An operator with boxed kernels only has no typed entry point: its typed
// calls box, and are filtered all the same.
TEST_F(FallbackFilterTest, BoxedOnlyOperatorsAreFilteredToo) {
  const auto typed = op("ff_test::boxed_only").typed<Tensor(const Tensor&)>();
  const Tensor plain = cpuTensor();
  EXPECT_TRUE(typed.call(plain).is_same(plain));
  EXPECT_EQ(g_fallback_calls, 0);
  typed.call(marked(true));
  EXPECT_EQ(g_fallback_calls, 1);
  EXPECT_EQ(g_kernel_calls, 2);
}

// An operator with an autograd kernel never reaches the fallback.
TEST_F(FallbackFilterTest, AnAutogradKernelComesFirst) {
  op("ff_test::with_autograd").typed<Tensor(const Tensor&)>().call(marked(true));
  EXPECT_EQ(g_fallback_calls, 0);
  EXPECT_EQ(g_kernel_calls, 1);  // the autograd kernel itself
}

// The dumps show the fallback, not the specialised entry.
TEST_F(FallbackFilterTest, TheTableShowsTheFallback) {
  EXPECT_THAT(op("ff_test::id").dumpComputedTable(),
              HasSubstr("AutogradCPU: counting fallback [backend fallback]"));
  EXPECT_FALSE(op("ff_test::id").isKernelFallthroughKernel(
      DispatchKey::AutogradCPU));
}

// Each filtered entry names its own table, through registrations and
// fallback changes (checkInvariants asserts it).
TEST_F(FallbackFilterTest, EntriesNameTheirOwnTable) {
  Dispatcher& d = Dispatcher::singleton();
  d.checkInvariants();
  {
    Library lib(Library::FRAGMENT, "ff_test", std::nullopt, __FILE__, __LINE__);
    lib.def("late(Tensor x) -> Tensor");
    d.checkInvariants();
    lib.impl("late", dispatch(DispatchKey::CPU, TURNOUT_FN(identity)));
    d.checkInvariants();
    op("ff_test::late").typed<Tensor(const Tensor&)>().call(marked(true));
    EXPECT_EQ(g_fallback_calls, 1);
    d.setFrameworkFallback(DispatchKey::Autograd, KernelFunction(), "");
    d.checkInvariants();
    installFilteredFallback();
    d.checkInvariants();
  }
  d.checkInvariants();
}

TEST_F(FallbackFilterTest, ABadFilterIsRejected) {
  Dispatcher& d = Dispatcher::singleton();
  FallbackFilter no_test = filter();
  no_test.selects = nullptr;
  EXPECT_THROW(
      d.setFrameworkFallback(
          DispatchKey::Autograd,
          KernelFunction::makeFromBoxedFunction(&countingFallback), "bad",
          no_test),
      Error);
  EXPECT_THROW(d.setFrameworkFallback(DispatchKey::Autograd,
                                      KernelFunction::makeFallthrough(), "bad",
                                      filter()),
               Error);
  // Nothing changed.
  EXPECT_THAT(op("ff_test::id").dumpComputedTable(),
              HasSubstr("AutogradCPU: counting fallback [backend fallback]"));
}

// Calls from several threads while the fallback is replaced again and
// again: each call sees one whole table (ThreadSanitizer checks the rest).
TEST_F(FallbackFilterTest, CallsDuringFallbackChanges) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> callers;
  for (int t = 0; t < 2; ++t) {
    callers.emplace_back([&stop, t] {
      const auto id = op("ff_test::id").typed<Tensor(const Tensor&)>();
      const Tensor plain = cpuTensor();
      const Tensor selected = marked(true);
      while (!stop.load()) {
        const Tensor& x = t == 0 ? plain : selected;
        EXPECT_TRUE(id.call(x).is_same(x));
        Stack stack{IValue(x)};
        op("ff_test::id").callBoxed(stack);
      }
    });
  }
  for (int i = 0; i < 50; ++i) {
    Dispatcher::singleton().setFrameworkFallback(DispatchKey::Autograd,
                                                 KernelFunction(), "");
    installFilteredFallback();
  }
  stop = true;
  for (std::thread& t : callers) t.join();
  Dispatcher::singleton().checkInvariants();
}

}  // namespace
}  // namespace turnout
