// Calls racing with registration and deregistration of the same operator run
// the old kernel or the new one, never freed memory. Meant for
// --config=tsan and --config=asan; bounded in iterations and time.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "dispatcher/call_section.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

std::atomic<int64_t> cpu_calls{0};
std::atomic<int64_t> math_calls{0};

Tensor k_cpu(const Tensor& x) {
  cpu_calls.fetch_add(1, std::memory_order_relaxed);
  return x;
}

TEST(Concurrency, CallsRaceWithRegistrationSafely) {
  Library def(Library::FRAGMENT, "conc", std::nullopt, "conc.cc", 1);
  def.def("op(Tensor x) -> Tensor");
  def.impl("op", dispatch(DispatchKey::CPU, TURNOUT_FN(k_cpu)));
  auto op = Dispatcher::singleton()
                .findSchemaOrThrow("conc::op", "")
                .typed<Tensor(const Tensor&)>();
  Tensor x = detail::makeTensorWithKeySet(
      DispatchKeySet({DispatchKey::CPU, DispatchKey::AutogradCPU}));

  std::atomic<bool> stop{false};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t) {
    callers.emplace_back([&] {
      int64_t n = 0;
      while (!stop.load(std::memory_order_relaxed) && n < 2000000) {
        Tensor r = op.call(x);
        ASSERT_TRUE(r.defined());
        ++n;
      }
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  int rounds = 0;
  while (rounds < 2000 && std::chrono::steady_clock::now() < deadline) {
    // A kernel with state (a captured counter) replaces the CPU kernel and
    // is removed again: its functor must outlive every call running it.
    auto state = std::make_shared<std::atomic<int64_t>>(0);
    {
      Library lib(Library::IMPL, "conc", DispatchKey::CPU, "conc.cc", 2);
      lib.impl("op", [state](const Tensor& y) {
        state->fetch_add(1, std::memory_order_relaxed);
        math_calls.fetch_add(1, std::memory_order_relaxed);
        return y;
      });
      std::this_thread::yield();
    }
    // A fallback for a key the callers do not use forces every table to be
    // rebuilt and republished.
    {
      Library fb(Library::IMPL, "_", DispatchKey::Tracer, "conc.cc", 3);
      fb.fallback(CppFunction::makeFallthrough());
    }
    ++rounds;
  }
  stop.store(true);
  for (std::thread& t : callers) t.join();
  detail::Reclaimer::global().reclaim();
  EXPECT_GT(cpu_calls.load() + math_calls.load(), 0);
  EXPECT_GT(rounds, 0);
  Dispatcher::singleton().checkInvariants();
}

TEST(Concurrency, RetiredObjectsWaitForReadersInsideASection) {
  auto& reclaimer = detail::Reclaimer::global();
  if (!reclaimer.reclaims()) GTEST_SKIP() << "membarrier(2) unavailable";
  reclaimer.reclaim();
  static std::atomic<int> freed{0};
  freed = 0;
  std::atomic<bool> inside{false};
  std::atomic<bool> release{false};
  std::thread reader([&] {
    detail::CallSection section;
    inside = true;
    while (!release.load()) std::this_thread::yield();
  });
  while (!inside.load()) std::this_thread::yield();
  reclaimer.retire(new int(7), [](void* p) {
    delete static_cast<int*>(p);
    freed.fetch_add(1);
  }, sizeof(int));
  reclaimer.reclaim();
  EXPECT_EQ(freed.load(), 0) << "freed while a reader was inside";
  release = true;
  reader.join();
  reclaimer.reclaim();
  EXPECT_EQ(freed.load(), 1);
}

TEST(Concurrency, LookupsRaceWithNewOperators) {
  std::atomic<bool> stop{false};
  std::thread finder([&] {
    while (!stop.load()) {
      auto h = Dispatcher::singleton().findSchema({"conc2::op0", ""});
      (void)h;
      try {
        Dispatcher::singleton().findSchemaOrThrow("conc2::op1", "");
      } catch (const Error&) {
        // Not defined yet: fine, the race is what is under test.
      }
    }
  });
  std::vector<std::unique_ptr<Library>> libs;
  for (int i = 0; i < 3000; ++i) {  // past the index's first growth
    libs.push_back(std::make_unique<Library>(Library::FRAGMENT, "conc2",
                                             std::nullopt, "conc.cc", 4));
    libs.back()->def("op" + std::to_string(i) + "(Tensor x) -> Tensor");
  }
  stop = true;
  finder.join();
  EXPECT_TRUE(Dispatcher::singleton().findSchema({"conc2::op2999", ""}));
  libs.clear();
  EXPECT_FALSE(Dispatcher::singleton().findSchema({"conc2::op0", ""}));
}

}  // namespace
}  // namespace turnout
