// Memory of removed operators and of retired tables (issue 17, items 3-4):
// an operator with no def and no kernel left keeps a few hundred bytes while
// every handle to it stays valid, and a thread parked inside a call holds
// back only the table it is using, not everything retired while it waits.
//
// The byte counts come from the allocator (mallinfo2, or the sanitizer's
// allocator under ASan / TSan), never from timings. Meant for the plain
// build and for --config=asan and --config=tsan (smaller counts there).
#include <malloc.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dispatcher/call_section.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/debug/explain.h"
#include "dispatcher/debug/registry_snapshot.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/dispatcher/testing.h"
#include "tests/error_of.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TURNOUT_TEST_SANITIZED 1
// The sanitizers' allocator statistics (GCC ships the runtime, not
// <sanitizer/allocator_interface.h>).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace turnout {
namespace {

using ::testing::HasSubstr;
using testing::cpuTensor;
using testing::errorOf;

#if defined(TURNOUT_TEST_SANITIZED)
constexpr int kScale = 8;  // sanitizers: an eighth of the counts
int64_t allocatedBytes() {
  return static_cast<int64_t>(__sanitizer_get_current_allocated_bytes());
}
#else
constexpr int kScale = 1;
int64_t allocatedBytes() {
  struct mallinfo2 m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
}
#endif

// Frees what every pass can free now (a second pass frees what the first
// one's deleters retired).
void reclaimAll() {
  detail::Reclaimer::global().reclaim();
  detail::Reclaimer::global().reclaim();
}

Tensor identity(const Tensor& x) { return x; }

// Defines and removes `n` operators memtest::<prefix><i>, each with a def and
// a CPU kernel, each in a library of its own (as a service that loads and
// unloads generated kernels would).
void defineAndRemove(const std::string& prefix, int first, int n) {
  for (int i = first; i < first + n; ++i) {
    Library lib(Library::FRAGMENT, "memtest", std::nullopt, __FILE__, __LINE__);
    const std::string name = prefix + std::to_string(i);
    lib.def(name + "(Tensor x) -> Tensor");
    lib.impl(name, dispatch(DispatchKey::CPU, TURNOUT_FN(identity)));
  }
}

TEST(Reclamation, RemovedOperatorsKeepAFewHundredBytes) {
  auto& reclaimer = detail::Reclaimer::global();
  if (!reclaimer.reclaims()) GTEST_SKIP() << "membarrier(2) unavailable";
  // Warm up: one-time caches (inferred schemas, the index's first buckets).
  defineAndRemove("warm_", 0, 2000);
  reclaimAll();
  const int n = 100000 / kScale;
  const int64_t before = allocatedBytes();
  defineAndRemove("gone_", 0, n);
  reclaimAll();
  const int64_t after = allocatedBytes();
  const double per_op = static_cast<double>(after - before) / n;
  std::printf("bytes left behind per removed operator: %.1f (%d operators)\n",
              per_op, n);
  // Was 5.5 KB a name: the table, the computed entries and the schema stayed.
  EXPECT_LE(per_op, 300.0);
  EXPECT_FALSE(Dispatcher::singleton().findSchema({"memtest::gone_7", ""}));
  EXPECT_FALSE(Dispatcher::singleton().findOp({"memtest::gone_7", ""}));
  Dispatcher::singleton().checkInvariants();
}

TEST(Reclamation, StaleHandlesStayValidAndFailCleanly) {
  auto lib = std::make_unique<Library>(Library::FRAGMENT, "memtest",
                                       std::nullopt, "stale.cc", 1);
  lib->def("stale(Tensor x) -> Tensor");
  lib->impl("stale", dispatch(DispatchKey::CPU, TURNOUT_FN(identity)));
  OperatorHandle op = testing::op("memtest::stale");
  auto typed = op.typed<Tensor(const Tensor&)>();
  Tensor x = cpuTensor();
  EXPECT_TRUE(typed.call(x).defined());

  lib.reset();
  reclaimAll();
  EXPECT_TRUE(op.entry()->isEmpty());
  EXPECT_FALSE(op.hasSchema());
  EXPECT_FALSE(Dispatcher::singleton().findOp({"memtest::stale", ""}));
  EXPECT_THAT(errorOf([&] { typed.call(x); }),
              HasSubstr("Could not run 'memtest::stale' with arguments from "
                        "the 'CPU' backend"));
  Stack stack{IValue(x)};
  EXPECT_THAT(errorOf([&] { op.callBoxed(stack); }),
              HasSubstr("Could not run 'memtest::stale'"));
  EXPECT_THAT(errorOf([&] { op.schema(); }), HasSubstr("has kernels but no schema"));
  EXPECT_EQ(op.dumpState(), "name: memtest::stale\nschema: (none)\n");
  // The framework's fallthroughs, as for any operator with no kernel.
  EXPECT_THAT(op.dumpComputedTable(),
              HasSubstr("AutogradCPU: fallthrough registered in turnout "
                        "framework [backend fallback]"));
  EXPECT_TRUE(op.tags().empty());
  EXPECT_FALSE(op.hasKernelForDispatchKey(DispatchKey::CPU));
  EXPECT_EQ(explain(op, Stack{}).op, "memtest::stale");
  for (const auto& record : takeRegistrySnapshot().operators) {
    EXPECT_NE(record.name, "memtest::stale");
  }
  op.checkInvariants();

  // A backend fallback registered afterwards reaches it: the shared table of
  // operators with no registrations is rebuilt, and this one moves to it.
  static std::atomic<int> fallback_calls{0};
  {
    Library fb(Library::IMPL, "_", DispatchKey::CPU, "stale.cc", 2);
    fb.fallback(CppFunction::makeFromBoxedFunction(
        [](const OperatorHandle& h, Stack* s) {
          fallback_calls.fetch_add(1);
          EXPECT_EQ(toString(h.operator_name()), "memtest::stale");
        }));
    EXPECT_TRUE(op.hasComputedKernelForDispatchKey(DispatchKey::CPU));
    // The fallback leaves the argument on the stack: it is the result.
    EXPECT_TRUE(typed.call(x).defined());
    EXPECT_EQ(fallback_calls.load(), 1);
    Dispatcher::singleton().checkInvariants();
  }
  reclaimAll();
  EXPECT_FALSE(op.hasComputedKernelForDispatchKey(DispatchKey::CPU));
  EXPECT_THAT(errorOf([&] { typed.call(x); }), HasSubstr("Could not run"));

  // Defined again: the same entry, so the old handle works again.
  Library again(Library::FRAGMENT, "memtest", std::nullopt, "stale.cc", 3);
  again.def("stale(Tensor x) -> Tensor");
  again.impl("stale", dispatch(DispatchKey::CPU, TURNOUT_FN(identity)));
  EXPECT_EQ(testing::op("memtest::stale"), op);
  EXPECT_FALSE(op.entry()->isEmpty());
  EXPECT_TRUE(typed.call(x).defined());
  op.checkInvariants();
}

TEST(Reclamation, AFailedRegistrationOnAnEmptyOperatorLeavesItEmpty) {
  std::optional<OperatorHandle> op;
  {
    Library lib(Library::FRAGMENT, "memtest", std::nullopt, "fail.cc", 1);
    lib.def("failing(Tensor x) -> Tensor");
    op = Dispatcher::singleton().findSchema({"memtest::failing", ""});
  }
  ASSERT_TRUE(op.has_value());
  ASSERT_TRUE(op->entry()->isEmpty());
  Library lib(Library::FRAGMENT, "memtest", std::nullopt, "fail.cc", 2);
  EXPECT_THAT(errorOf([&] {
                lib.def("failing(Tensor x) -> Tensor",
                        AliasAnalysisKind::FROM_SCHEMA, {"1bad"});
              }),
              HasSubstr("which is not a tag"));
  EXPECT_TRUE(op->entry()->isEmpty());
  op->checkInvariants();
}

// ---- A parked reader --------------------------------------------------------

// A kernel that waits until told to return, with state its functor owns.
struct Parking {
  std::atomic<bool> inside{false};
  std::atomic<bool> leave{false};
};

TEST(Reclamation, HazardGuardProtectsOnlyWhatItLoaded) {
  auto& reclaimer = detail::Reclaimer::global();
  if (!reclaimer.reclaims()) GTEST_SKIP() << "membarrier(2) unavailable";
  reclaimAll();
  static std::atomic<int> freed_a{0};
  static std::atomic<int> freed_b{0};
  std::atomic<const int*> published{new int(1)};
  Parking parking;
  std::thread reader([&] {
    detail::HazardGuard<int> guard(published);
    parking.inside = true;
    while (!parking.leave.load()) std::this_thread::yield();
    EXPECT_EQ(*guard, 1);  // still alive: ASan would say otherwise
  });
  while (!parking.inside.load()) std::this_thread::yield();
  // Replace what the reader holds, and retire something it never saw.
  const int* held = published.exchange(new int(2), detail::kPublishOrder);
  reclaimer.retire(const_cast<int*>(held), [](void* p) {
    delete static_cast<int*>(p);
    freed_a.fetch_add(1);
  }, sizeof(int));
  reclaimer.retire(new int(3), [](void* p) {
    delete static_cast<int*>(p);
    freed_b.fetch_add(1);
  }, sizeof(int));
  reclaimAll();
  EXPECT_EQ(freed_a.load(), 0) << "freed while a guard held it";
  EXPECT_EQ(freed_b.load(), 1) << "a parked reader held back an unrelated free";
  parking.leave = true;
  reader.join();
  reclaimAll();
  EXPECT_EQ(freed_a.load(), 1);
  delete published.load();
}

// While one thread is parked inside a kernel, another calls and the test
// thread defines and removes operators (the same names each cycle, and a
// kernel of the parked operator itself). What the parked call uses stays
// alive; everything else is freed as usual. Under the epoch scheme every
// cycle's tables waited for the parked reader (6.5 KB a cycle).
TEST(Reclamation, AParkedReaderDoesNotHoldBackReclamation) {
  auto& reclaimer = detail::Reclaimer::global();
  if (!reclaimer.reclaims()) GTEST_SKIP() << "membarrier(2) unavailable";
  auto parking = std::make_shared<Parking>();
  auto park_lib = std::make_unique<Library>(Library::FRAGMENT, "memtest",
                                            std::nullopt, "park.cc", 1);
  park_lib->def("park(Tensor x) -> Tensor");
  auto text = std::make_shared<std::string>("the kernel's own state");
  park_lib->impl("park", dispatch(DispatchKey::CPU,
                                  [parking, text](const Tensor& x) {
                                    parking->inside = true;
                                    while (!parking->leave.load()) {
                                      std::this_thread::yield();
                                    }
                                    // The functor outlived its library.
                                    EXPECT_EQ(*text, "the kernel's own state");
                                    return x;
                                  }));
  Library calls_lib(Library::FRAGMENT, "memtest", std::nullopt, "park.cc", 2);
  calls_lib.def("busy(Tensor x) -> Tensor");
  calls_lib.impl("busy", dispatch(DispatchKey::CPU, TURNOUT_FN(identity)));
  auto park = testing::op("memtest::park").typed<Tensor(const Tensor&)>();
  auto busy = testing::op("memtest::busy").typed<Tensor(const Tensor&)>();
  Tensor x = testing::tensorWith({DispatchKey::CPU});

  std::thread parked([&] { EXPECT_TRUE(park.call(x).defined()); });
  while (!parking->inside.load()) std::this_thread::yield();
  // The parked call's kernel and library go away while it runs.
  text.reset();
  park_lib.reset();
  reclaimAll();

  std::atomic<bool> stop{false};
  std::thread caller([&] {
    int64_t n = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      EXPECT_TRUE(busy.call(x).defined());
      ++n;
    }
    EXPECT_GT(n, 0);
  });
  const int64_t before = allocatedBytes();
  const int cycles = 100000 / kScale / 4;
  int64_t peak = 0;
  for (int i = 0; i < cycles; ++i) {
    {
      Library lib(Library::FRAGMENT, "memtest", std::nullopt, "park.cc", 3);
      lib.def("churn(Tensor x) -> Tensor");
      lib.impl("churn", dispatch(DispatchKey::CPU, TURNOUT_FN(identity)));
      lib.impl("busy", dispatch(DispatchKey::AutogradCPU, TURNOUT_FN(identity)));
    }
    if (i % 256 == 0) peak = std::max(peak, allocatedBytes() - before);
  }
  peak = std::max(peak, allocatedBytes() - before);
  stop = true;
  caller.join();
  std::printf("%d cycles with a parked reader: peak growth %.2f MB, %zu bytes "
              "pending\n",
              cycles, peak / 1e6, reclaimer.pendingBytes());
  // 10 MB per 100,000 cycles at most: the pass threshold (256 KB) and the
  // parked call's own table, whatever the number of cycles.
  EXPECT_LE(peak, 10'000'000 / 4 / kScale + 1'000'000);
  EXPECT_LE(reclaimer.pendingBytes(), 1'000'000u);
  EXPECT_GE(reclaimer.pendingCount(), 1u) << "the parked call's table was freed";

  parking->leave = true;
  parked.join();
  reclaimAll();
  EXPECT_EQ(reclaimer.pendingCount(), 0u);
  EXPECT_LE(allocatedBytes() - before, 200'000);
  Dispatcher::singleton().checkInvariants();
}

// Calls nested past the last hazard slot fall back to a CallSection: the
// tables and kernels of every level stay alive while the innermost level
// removes the kernels they are running, and are freed once they return.
// memtest::recurse(x, n) calls itself with n - 1 down to 0; at n ==
// kSwitchAt (nested past the last slot) it overrides its own CPU kernel, so
// the deeper levels run a table and a kernel that no slot protects.
constexpr int64_t kSwitchAt = 10;
const int64_t kDepth = static_cast<int64_t>(detail::kHazardSlots) + 20;

struct DeepLibs {
  std::unique_ptr<Library> first;
  std::unique_ptr<Library> second;
};
DeepLibs& deepLibs() {
  static auto* libs = new DeepLibs();
  return *libs;
}

Tensor recurseStep(const Tensor& x, int64_t n, const std::string& label);

// A kernel whose functor owns `label`: a freed functor shows as a
// use-after-free (ASan) or a wrong label when a level returns.
auto recurseKernel(std::string label) {
  auto owned = std::make_shared<std::string>(std::move(label));
  return [owned](const Tensor& x, int64_t n) -> Tensor {
    return recurseStep(x, n, *owned);
  };
}

Tensor recurseStep(const Tensor& x, int64_t n, const std::string& label) {
  static const auto op =
      testing::op("memtest::recurse").typed<Tensor(const Tensor&, int64_t)>();
  if (n == kSwitchAt) {
    deepLibs().second = std::make_unique<Library>(
        Library::IMPL, "memtest", DispatchKey::CPU, "deep.cc", 3);
    deepLibs().second->impl("recurse", recurseKernel("second"));
  }
  if (n > 0) {
    Tensor r = op.call(x, n - 1);
    const std::string copy = label;  // reads the functor's state
    EXPECT_EQ(copy, n >= kSwitchAt ? "first" : "second") << "at n = " << n;
    return r;
  }
  // Innermost: both kernels go away and their tables are retired.
  deepLibs().first.reset();
  deepLibs().second.reset();
  reclaimAll();
  EXPECT_GE(detail::Reclaimer::global().pendingCount(), 2u)
      << "a table in use by an outer level was freed";
  return x;
}

TEST(Reclamation, CallsNestedPastTheLastSlotStaySafe) {
  auto& reclaimer = detail::Reclaimer::global();
  if (!reclaimer.reclaims()) GTEST_SKIP() << "membarrier(2) unavailable";
  reclaimAll();
  Library def(Library::FRAGMENT, "memtest", std::nullopt, "deep.cc", 1);
  def.def("recurse(Tensor x, int n) -> Tensor");
  deepLibs().first = std::make_unique<Library>(Library::IMPL, "memtest",
                                               DispatchKey::CPU, "deep.cc", 2);
  deepLibs().first->impl("recurse", recurseKernel("first"));
  auto op = testing::op("memtest::recurse").typed<Tensor(const Tensor&, int64_t)>();
  Tensor x = testing::tensorWith({DispatchKey::CPU});
  EXPECT_TRUE(op.call(x, kDepth).defined());
  reclaimAll();
  EXPECT_EQ(reclaimer.pendingCount(), 0u);
  EXPECT_THAT(errorOf([&] { op.call(x, 1); }), HasSubstr("Could not run"));
}

}  // namespace
}  // namespace turnout
