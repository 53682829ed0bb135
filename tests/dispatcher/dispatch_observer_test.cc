// The observer hook: a tool installs a DispatchObserver and sets its bit;
// the call path then reports dispatches and spans to it, and nothing when
// the bit is clear.
#include "dispatcher/dispatch_observer.h"

#include <memory>
#include <string>
#include <vector>

#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/dispatcher/testing.h"
#include "tests/error_of.h"

namespace turnout {
namespace {

using ::testing::ElementsAre;
using testing::errorOf;
using ::testing::HasSubstr;

Tensor identity(const Tensor& x) { return x; }

Tensor cpuTensor() { return testing::tensorWith({DispatchKey::CPU}); }

struct Recorder final : detail::DispatchObserver {
  std::vector<std::string> dispatches;  // "op kind depth key"
  std::vector<std::string> spans;       // "session depth"
  uint32_t current_session = 0;

  void onDispatch(const OperatorHandle& op, DispatchKeySet ks, DispatchKey key,
                  detail::CallKind kind, uint32_t depth) override {
    dispatches.push_back(toString(op.operator_name()) + " " +
                         detail::toString(kind) + " " + std::to_string(depth) +
                         " " + toString(key));
  }
  uint32_t session() override { return current_session; }
  void onSpan(uint32_t session, const void* op_entry, DispatchKey key,
              detail::CallKind kind, const std::string* user_name,
              uint32_t depth, int64_t start_ns, int64_t end_ns, int64_t self_ns,
              int64_t python_ns) override {
    EXPECT_LE(start_ns, end_ns);
    EXPECT_LE(self_ns, end_ns - start_ns);
    spans.push_back(std::to_string(session) + " " + std::to_string(depth));
  }
};

// Sets one bit of dispatch_observers for its lifetime.
struct BitOn {
  explicit BitOn(uint32_t bit) : bit_(bit) {
    detail::dispatch_observers.fetch_or(bit_);
  }
  ~BitOn() { detail::dispatch_observers.fetch_and(~bit_); }
  uint32_t bit_;
};

class DispatchObserverTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    lib_ = std::make_unique<Library>(Library::FRAGMENT, "obs", std::nullopt,
                                     "obs.cc", 1);
    lib_->def("f(Tensor x) -> Tensor");
    lib_->impl("f", dispatch(DispatchKey::CPU, TURNOUT_FN(identity)));
  }
  static void TearDownTestSuite() { lib_.reset(); }
  TypedOperatorHandle<Tensor(const Tensor&)> f() {
    return Dispatcher::singleton()
        .findSchemaOrThrow("obs::f", "")
        .typed<Tensor(const Tensor&)>();
  }

 private:
  static std::unique_ptr<Library> lib_;
};

std::unique_ptr<Library> DispatchObserverTest::lib_;

TEST_F(DispatchObserverTest, TraceBitReportsEachDispatch) {
  static Recorder* recorder = new Recorder();
  detail::installDispatchObserver(detail::kTraceOn, recorder);
  {
    BitOn on(detail::kTraceOn);
    f().call(cpuTensor());
    Stack stack{IValue(cpuTensor())};
    f().callBoxed(stack);
  }
  f().call(cpuTensor());  // bit clear: not reported
  EXPECT_THAT(recorder->dispatches,
              ElementsAre("obs::f call 0 CPU", "obs::f callBoxed 0 CPU"));
}

TEST_F(DispatchObserverTest, ProfilerBitReportsSpansOfItsSession) {
  static Recorder* recorder = new Recorder();
  detail::installDispatchObserver(detail::kProfilerOn, recorder);
  BitOn on(detail::kProfilerOn);
  f().call(cpuTensor());  // session 0: no span
  recorder->current_session = 7;
  f().call(cpuTensor());
  recorder->current_session = 0;
  EXPECT_THAT(recorder->spans, ElementsAre("7 0"));
  EXPECT_TRUE(recorder->dispatches.empty());
}

TEST(DispatchObserver, InstallRejectsNullAndUnknownBits) {
  Recorder recorder;
  EXPECT_THAT(errorOf([] {
                detail::installDispatchObserver(detail::kTraceOn, nullptr);
              }),
              HasSubstr("the observer is null"));
  EXPECT_THAT(errorOf([&] { detail::installDispatchObserver(4, &recorder); }),
              HasSubstr("bit 4 is neither kTraceOn (1) nor kProfilerOn (2)"));
}

}  // namespace
}  // namespace turnout
