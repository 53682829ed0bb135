// Process exit while other threads keep calling operators: returning from
// main or calling exit() runs the static destructors while detached threads
// are still inside calls (unboxed and boxed add and mul on CPU, and the
// factories that allocate their inputs). Nothing those calls reach may be
// destroyed under them: the registry and its registrations, the allocators,
// the warning handler and the operator handles the kernels cache. Each case
// runs the child below (a DISABLED_ test only a child runs) many times, as
// the window in which a thread meets a destroyed object is short.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "dispatcher/core/scalar_type.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/operator_handle.h"
#include "dispatcher/stack.h"
#include "gtest/gtest.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "tests/child_process.h"

namespace turnout {
namespace {

using testing::ChildResult;
using testing::runTestInChild;

constexpr const char* kModeVariable = "TURNOUT_EXIT_TEST_MODE";
constexpr int kThreads = 4;

// One round of calls: unboxed add and mul (through the kernels' cached
// TypedOperatorHandles), boxed add.Tensor and mul.Tensor (a handle looked
// up each time: the registry's name index), on freshly allocated inputs.
void callOperators() {
  const Tensor a = ones({8});
  const Tensor b = full({8}, 2.0);
  const Tensor c = mul(add(a, b), b);
  Stack stack = {IValue(c), IValue(a), IValue(Scalar(1))};
  Dispatcher::singleton().findSchemaOrThrow("aten::add", "Tensor").callBoxed(
      stack);
  stack = {stack.at(0), IValue(b)};
  Dispatcher::singleton().findSchemaOrThrow("aten::mul", "Tensor").callBoxed(
      stack);
}

// The child: kThreads detached threads call operators in a loop, never
// stopping; once each has finished a round, the process leaves as `mode`
// says: "return" returns from the test and from main (exit status 0),
// "exit" calls std::exit(7). An exception in a thread (an operator
// deregistered under it) ends the process by std::terminate, a destroyed
// object by a signal: either fails the parent's check.
TEST(ExitChild, DISABLED_LeavesWhileThreadsCallOperators) {
  const char* mode = std::getenv(kModeVariable);
  ASSERT_NE(mode, nullptr) << "run only by ExitWithRunningThreads' cases";
  static std::atomic<int> started{0};
  for (int i = 0; i < kThreads; ++i) {
    std::thread([] {
      callOperators();
      started.fetch_add(1);
      for (;;) callOperators();
    }).detach();
  }
  while (started.load() < kThreads) std::this_thread::yield();
  if (std::string(mode) == "exit") std::exit(7);
}

// Generous for a loaded 2-core machine and a sanitizer build: a child ends
// in a fraction of a second when nothing hangs.
constexpr std::chrono::seconds kTimeout{30};
constexpr int kRounds = 20;

void runRounds(const std::string& mode, int expected_status) {
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const ChildResult r =
        runTestInChild("ExitChild.DISABLED_LeavesWhileThreadsCallOperators",
                       kModeVariable, mode, kTimeout);
    ASSERT_TRUE(r.exitedWith(expected_status)) << r.describe();
  }
}

TEST(ExitWithRunningThreads, ReturnFromMainWhileThreadsCallOperators) {
  runRounds("return", 0);
}

TEST(ExitWithRunningThreads, ExitWhileThreadsCallOperators) {
  runRounds("exit", 7);
}

}  // namespace
}  // namespace turnout
