// Process exit while another thread is inside OpenBLAS (kernels/blas.cc):
// exit() used to hang for ever in OpenBLAS's library destructor, which
// joins its worker threads. Each case runs this binary again as a child
// (the DISABLED_ test below, which only a child runs) and waits for it with
// a timeout.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "dispatcher/core/scalar_type.h"
#include "gtest/gtest.h"
#include "kernels/factory.h"
#include "kernels/linalg.h"
#include "tests/child_process.h"

namespace turnout {
namespace {

using testing::ChildResult;
using testing::runTestInChild;

constexpr const char* kModeVariable = "TURNOUT_BLAS_EXIT_TEST_MODE";

std::atomic<bool> stop_multiplying{false};

// How the child leaves, once a second thread is busy in mm: "exit" calls
// std::exit(7); "return" lets the test and main return (exit status 0).
// The thread multiplies until exit begins (this test's atexit handler runs
// before the library's own: it was registered later), then sleeps: exit
// starts while it is inside an mm, and it calls no operator while exit
// tears the registrations down.
TEST(BlasExitChild, DISABLED_LeavesWhileAnotherThreadMultiplies) {
  const char* mode = std::getenv(kModeVariable);
  ASSERT_NE(mode, nullptr) << "run only by BlasExit's cases";
  std::atexit([] { stop_multiplying.store(true); });
  static std::atomic<int> products{0};
  // Detached: it is still running when the process ends. 1024 x 1024
  // floats: OpenBLAS uses its threads, and one product takes a while.
  std::thread([] {
    const Tensor a = ones({1024, 1024});
    while (!stop_multiplying.load()) {
      const Tensor c = mm(a, a);
      products.fetch_add(1);
    }
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }).detach();
  // One product done: OpenBLAS's threads exist; the thread is in the next.
  while (products.load() == 0) std::this_thread::yield();
  if (std::string(mode) == "exit") std::exit(7);
}

// Generous for a loaded 2-core machine and a sanitizer build: the child
// ends in well under a second when nothing hangs.
constexpr std::chrono::seconds kTimeout{20};
constexpr const char* kChild =
    "BlasExitChild.DISABLED_LeavesWhileAnotherThreadMultiplies";

TEST(BlasExit, ExitWhileAnotherThreadIsInMmDoesNotHang) {
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    const ChildResult r = runTestInChild(kChild, kModeVariable, "exit", kTimeout);
    EXPECT_TRUE(r.exitedWith(7)) << r.describe();
  }
}

TEST(BlasExit, ReturnFromMainWhileAnotherThreadIsInMmDoesNotHang) {
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    const ChildResult r =
        runTestInChild(kChild, kModeVariable, "return", kTimeout);
    EXPECT_TRUE(r.exitedWith(0)) << r.describe();
  }
}

}  // namespace
}  // namespace turnout
