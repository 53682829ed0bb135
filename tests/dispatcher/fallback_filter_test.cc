// FallbackFilter (dispatcher/fallback_filter.h): a filtered backend fallback
// sees only the calls its filter selects; the others pass its key, unboxed
// for a typed call, as if it were not there.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dispatcher/core/autograd_meta_interface.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/fallback_filter.h"
#include "dispatcher/library.h"
#include "dispatcher/operator_entry.h"
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

// Kernels that record which of them ran last.
std::atomic<int> g_ran{0};
template <int kId>
Tensor recording(const Tensor& x) {
  g_ran = kId;
  return x;
}
template <int kId>
void boxedRecording(const OperatorHandle&, Stack*) {
  g_ran = kId;
}

TURNOUT_LIBRARY(ff_test, m) {
  m.def("id(Tensor x) -> Tensor");
  m.def("first(Tensor[] xs) -> Tensor");
  m.def("boxed_only(Tensor x) -> Tensor");
  m.def("with_autograd(Tensor x) -> Tensor");
  m.def("per_backend(Tensor x) -> Tensor");
  m.def("per_backend_fallthrough(Tensor x) -> Tensor");
  m.def("swap_me(Tensor x) -> Tensor");
}
TURNOUT_LIBRARY_IMPL(ff_test, CPU, m) {
  m.impl("id", TURNOUT_FN(identity));
  m.impl("first", TURNOUT_FN(firstOf));
  m.impl("boxed_only", CppFunction::makeFromBoxedFunction(&boxedIdentity));
  m.impl("with_autograd", TURNOUT_FN(identity));
  m.impl("per_backend", TURNOUT_FN(recording<1>));
  m.impl("per_backend_fallthrough", TURNOUT_FN(recording<1>));
  m.impl("swap_me", TURNOUT_FN(recording<1>));
}
TURNOUT_LIBRARY_IMPL(ff_test, CUDA, m) {
  m.impl("per_backend", CppFunction::makeFromBoxedFunction(&boxedRecording<2>));
}
TURNOUT_LIBRARY_IMPL(ff_test, Meta, m) {
  m.impl("per_backend", TURNOUT_FN(recording<3>));
}
TURNOUT_LIBRARY_IMPL(ff_test, PrivateUse1, m) {
  m.impl("per_backend", TURNOUT_FN(recording<4>));
}
TURNOUT_LIBRARY_IMPL(ff_test, SparseCPU, m) {
  m.impl("per_backend", TURNOUT_FN(recording<5>));
}
TURNOUT_LIBRARY_IMPL(ff_test, Conjugate, m) {
  m.impl("per_backend", TURNOUT_FN(recording<6>));
}
// A fallthrough for one backend only: the table's fallthrough masks then
// depend on the backend, and the pass-through takes the general lookup.
TURNOUT_LIBRARY_IMPL(ff_test, QuantizedCPU, m) {
  m.impl("per_backend_fallthrough", CppFunction::makeFallthrough());
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

Tensor call(const char* name, const Tensor& x, bool boxed) {
  if (!boxed) return op(name).typed<Tensor(const Tensor&)>().call(x);
  Stack stack{IValue(x)};
  op(name).callBoxed(stack);
  return stack.at(0).toTensor();
}
Tensor callId(const Tensor& x, bool boxed) {
  return call("ff_test::id", x, boxed);
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

// A call passed on reaches the kernel the keys below autograd select, in
// both call forms: on the shortcut for a call that keeps Dense alone (one
// backend, several, a boxed-only kernel), and on the general lookup for one
// that keeps more (Sparse, Conjugate) or whose table has a fallthrough for
// some backends only.
TEST_F(FallbackFilterTest, PassingOnReachesTheKernelBelow) {
  // Which of the two paths the cases below take (the entry's precomputed
  // mask: 0 turns the shortcut off).
  const auto densePassMask = [](const char* name) {
    const DispatchTable& table = op(name).entry()->table();
    const KernelFunction& entry = table.kernels[
        getDispatchTableIndexForDispatchKey(DispatchKey::AutogradCPU)];
    return static_cast<const detail::FilteredFallback*>(entry.functor())
        ->dense_pass_mask;
  };
  EXPECT_NE(densePassMask("ff_test::per_backend"), 0u);
  EXPECT_EQ(densePassMask("ff_test::per_backend_fallthrough"), 0u);
  const auto plain = [](DispatchKey backend, DispatchKey autograd) {
    return testing::tensorWith(
        {backend, autograd, DispatchKey::ADInplaceOrView});
  };
  struct Case {
    const char* name;
    const char* op;
    Tensor x;
    int ran;
  };
  const std::vector<Case> cases = {
      {"CPU", "ff_test::per_backend", cpuTensor(), 1},
      {"CUDA, boxed-only kernel", "ff_test::per_backend",
       plain(DispatchKey::CUDA, DispatchKey::AutogradCUDA), 2},
      {"Meta", "ff_test::per_backend",
       plain(DispatchKey::Meta, DispatchKey::AutogradMeta), 3},
      {"PrivateUse1", "ff_test::per_backend",
       plain(DispatchKey::PrivateUse1, DispatchKey::AutogradPrivateUse1), 4},
      {"CPU and Meta: the highest backend", "ff_test::per_backend",
       testing::tensorWith({DispatchKey::CPU, DispatchKey::Meta,
                            DispatchKey::AutogradCPU}),
       3},
      {"SparseCPU", "ff_test::per_backend",
       testing::tensorWith({DispatchKey::SparseCPU, DispatchKey::AutogradCPU}),
       5},
      {"Conjugate", "ff_test::per_backend",
       testing::tensorWith({DispatchKey::CPU, DispatchKey::Conjugate,
                            DispatchKey::AutogradCPU}),
       6},
      {"fallthrough for one backend", "ff_test::per_backend_fallthrough",
       cpuTensor(), 1},
  };
  for (const bool boxed : {false, true}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.name) + (boxed ? ", boxed" : ", unboxed"));
      g_ran = 0;
      EXPECT_TRUE(call(c.op, c.x, boxed).is_same(c.x));
      EXPECT_EQ(g_ran, c.ran);
      EXPECT_EQ(g_fallback_calls, 0);
    }
  }
  Dispatcher::singleton().checkInvariants();
}

// What a filtered entry precomputes belongs to its table: a kernel
// registered below autograd after calls were made, and its removal, are
// seen by the next call through the same handle, in both call forms.
TEST_F(FallbackFilterTest, PassingOnSeesKernelsRegisteredLater) {
  Dispatcher& d = Dispatcher::singleton();
  const auto swap_me = op("ff_test::swap_me").typed<Tensor(const Tensor&)>();
  const Tensor x = cpuTensor();
  const auto ran = [&](bool boxed) {
    g_ran = 0;
    EXPECT_TRUE(call("ff_test::swap_me", x, boxed).is_same(x));
    return g_ran.load();
  };
  for (const bool boxed : {false, true}) {
    SCOPED_TRACE(boxed ? "boxed" : "unboxed");
    EXPECT_EQ(ran(boxed), 1);
    {
      Library lib(Library::IMPL, "ff_test", DispatchKey::CPU, __FILE__,
                  __LINE__);
      lib.impl("swap_me", TURNOUT_FN(recording<7>));
      d.checkInvariants();
      EXPECT_EQ(ran(boxed), 7);
      g_ran = 0;
      swap_me.call(x);  // the handle taken before
      EXPECT_EQ(g_ran, 7);
    }
    d.checkInvariants();
    EXPECT_EQ(ran(boxed), 1);
    {
      // A Conjugate kernel: a call that keeps Conjugate goes there now.
      Library lib(Library::IMPL, "ff_test", DispatchKey::Conjugate, __FILE__,
                  __LINE__);
      lib.impl("swap_me", TURNOUT_FN(recording<8>));
      g_ran = 0;
      swap_me.call(testing::tensorWith(
          {DispatchKey::CPU, DispatchKey::Conjugate, DispatchKey::AutogradCPU}));
      EXPECT_EQ(g_ran, 8);
      EXPECT_EQ(ran(boxed), 1);
    }
  }
  EXPECT_EQ(g_fallback_calls, 0);
}

// A thread that keeps calling sees each registration and removal of a
// kernel below autograd made by another thread, with no new handle
// (ThreadSanitizer checks the publication).
TEST_F(FallbackFilterTest, ACallingThreadSeesKernelsRegisteredMeanwhile) {
  std::atomic<bool> stop{false};
  std::atomic<int> seen{0};
  std::thread caller([&stop, &seen] {
    const auto swap_me = op("ff_test::swap_me").typed<Tensor(const Tensor&)>();
    const OperatorHandle boxed = op("ff_test::swap_me");
    const Tensor x = cpuTensor();
    for (uint64_t i = 0; !stop.load(); ++i) {
      if (i % 2 == 0) {
        EXPECT_TRUE(swap_me.call(x).is_same(x));
      } else {
        Stack stack{IValue(x)};
        boxed.callBoxed(stack);
      }
      seen = g_ran.load();
    }
  });
  // Waits (a few seconds at most) until the caller has run kernel `id`.
  const auto waitUntilSeen = [&seen](int id) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (seen.load() != id && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    return seen.load() == id;
  };
  EXPECT_TRUE(waitUntilSeen(1));
  for (int round = 0; round < 20; ++round) {
    {
      Library lib(Library::IMPL, "ff_test", DispatchKey::CPU, __FILE__,
                  __LINE__);
      lib.impl("swap_me", TURNOUT_FN(recording<7>));
      EXPECT_TRUE(waitUntilSeen(7)) << "round " << round;
    }
    EXPECT_TRUE(waitUntilSeen(1)) << "round " << round;
  }
  stop = true;
  caller.join();
  EXPECT_EQ(g_fallback_calls, 0);
  Dispatcher::singleton().checkInvariants();
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
