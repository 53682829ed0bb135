// The autograd fallback (kernels/autograd/autograd_fallback.h): a call of an
// operator with no autograd kernel on inputs that require grad warns once
// per operator, naming it and the fix; everything else stays silent, and
// passes the autograd keys with no allocation.
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/autograd/autograd_fallback.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/ops.h"
#include "tests/kernels/testing.h"

// Counts the calling thread's allocations while `counting` is set (the
// replacement serves the whole test binary).
namespace {
thread_local bool counting = false;
thread_local long allocations = 0;
}  // namespace

void* operator new(std::size_t n) {
  if (counting) ++allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace turnout {
namespace autograd {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using turnout::testing::tensorOf;

Tensor twice(const Tensor& x) { return turnout::mul(x, 2); }
Tensor longOf(const Tensor& x) { return turnout::to(x, ScalarType::Long); }
Tensor identity(const Tensor& x) { return x; }  // allocates nothing
// An autograd kernel that leaves the recording to mul's.
Tensor twiceAutograd(const Tensor& x) { return turnout::mul(x, 2); }
Tensor sumOf(const std::vector<Tensor>& xs, double alpha) {
  return turnout::mul(turnout::add(xs.at(0), xs.at(1)), alpha);
}

TURNOUT_LIBRARY(fb_test, m) {
  m.def("twice(Tensor x) -> Tensor");
  m.def("twice_nd(Tensor x) -> Tensor");
  m.def("twice_ag(Tensor x) -> Tensor");
  m.def("twice_ci(Tensor x) -> Tensor");
  m.def("as_long(Tensor x) -> Tensor");
  m.def("identity(Tensor x) -> Tensor");
  m.def("sum_of(Tensor[] xs, float alpha) -> Tensor");
}
TURNOUT_LIBRARY_IMPL(fb_test, CPU, m) {
  m.impl("twice", TURNOUT_FN(twice));
  m.impl("twice_nd", TURNOUT_FN(twice));
  m.impl("twice_ag", TURNOUT_FN(twice));
  m.impl("as_long", TURNOUT_FN(longOf));
  m.impl("identity", TURNOUT_FN(identity));
  m.impl("sum_of", TURNOUT_FN(sumOf));
}
TURNOUT_LIBRARY_IMPL(fb_test, Autograd, m) {
  // Declared non-differentiable: the fix the warning names.
  m.impl("twice_nd", CppFunction::makeFallthrough());
  m.impl("twice_ag", TURNOUT_FN(twiceAutograd));
}
TURNOUT_LIBRARY_IMPL(fb_test, CompositeImplicitAutograd, m) {
  m.impl("twice_ci", TURNOUT_FN(twice));
}

Tensor call(const char* name, const Tensor& x) {
  return Dispatcher::singleton()
      .findSchemaOrThrow(name, "")
      .typed<Tensor(const Tensor&)>()
      .call(x);
}

class AutogradFallback : public ::testing::Test {
 protected:
  void SetUp() override {
    mode_ = autogradFallbackMode();
    setAutogradFallbackMode(AutogradFallbackMode::Warn);
    resetAutogradFallbackWarnings();
    previous_ = setAutogradFallbackWarningHandler(
        [this](const std::string& m) { warnings_.push_back(m); });
  }
  void TearDown() override {
    setAutogradFallbackWarningHandler(previous_);
    setAutogradFallbackMode(mode_);
  }
  AutogradFallbackMode mode_;
  std::vector<std::string> warnings_;
  AutogradFallbackWarningHandler previous_;
};

Tensor leaf() {
  Tensor x = tensorOf({1, 2}, {2});
  setRequiresGrad(x, true);
  return x;
}

Stack callBoxed(const char* name, Stack stack) {
  Dispatcher::singleton().findSchemaOrThrow(name, "").callBoxed(stack);
  return stack;
}

// Warn by default, as torch 2.x (the test runs without
// TURNOUT_AUTOGRAD_FALLBACK_MODE; test_autograd_function.py sets it).
TEST(AutogradFallbackMode, WarnByDefault) {
  EXPECT_EQ(autogradFallbackMode(), AutogradFallbackMode::Warn);
  EXPECT_FALSE(Dispatcher::singleton()
                   .findSchemaOrThrow("fb_test::twice", "")
                   .isKernelFallthroughKernel(DispatchKey::AutogradCPU));
}

TEST_F(AutogradFallback, WarnsOncePerOperatorNamingTheFix) {
  EXPECT_EQ(autogradFallbackMode(), AutogradFallbackMode::Warn);
  Tensor x = leaf();
  Tensor y = call("fb_test::twice", x);
  EXPECT_EQ(turnout::testing::valuesOf(y), (std::vector<double>{2, 4}));
  ASSERT_EQ(warnings_.size(), 1u);
  const std::string& w = warnings_[0];
  EXPECT_THAT(w, HasSubstr("fb_test::twice has no autograd kernel, but was "
                           "called with a Tensor that requires grad"));
  EXPECT_THAT(w, HasSubstr("element 0 of tensors does not require grad"));
  EXPECT_THAT(w, HasSubstr("TURNOUT_LIBRARY_IMPL(fb_test, Autograd, m)"));
  EXPECT_THAT(w, HasSubstr("autograd::Function<T>::apply"));
  EXPECT_THAT(w, HasSubstr("register_autograd"));
  EXPECT_THAT(w, HasSubstr("m.impl(\"twice\", CppFunction::makeFallthrough())"));
  call("fb_test::twice", x);
  EXPECT_EQ(warnings_.size(), 1u);
  resetAutogradFallbackWarnings();
  call("fb_test::twice", x);
  EXPECT_EQ(warnings_.size(), 2u);
}

// The typed call passes through unboxed (or, when it may warn, boxes); the
// boxed call tests the stack. Both warn alike, once for the operator.
TEST_F(AutogradFallback, UnboxedAndBoxedCallsWarnAlike) {
  const Tensor x = leaf();
  const Tensor plain = tensorOf({1, 2}, {2});
  for (const bool boxed : {false, true}) {
    SCOPED_TRACE(boxed ? "boxed" : "unboxed");
    resetAutogradFallbackWarnings();
    warnings_.clear();
    auto run = [boxed](const Tensor& t) {
      return boxed ? callBoxed("fb_test::twice", {IValue(t)}).at(0).toTensor()
                   : call("fb_test::twice", t);
    };
    EXPECT_EQ(turnout::testing::valuesOf(run(plain)),
              (std::vector<double>{2, 4}));
    {
      NoGradGuard no_grad;
      EXPECT_EQ(turnout::testing::valuesOf(run(x)), (std::vector<double>{2, 4}));
    }
    EXPECT_THAT(warnings_, IsEmpty());
    EXPECT_EQ(turnout::testing::valuesOf(run(x)), (std::vector<double>{2, 4}));
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_THAT(warnings_[0], HasSubstr("fb_test::twice has no autograd kernel"));
    run(x);
    EXPECT_EQ(warnings_.size(), 1u);
  }
}

// A Tensor[] argument is scanned too, in both forms.
TEST_F(AutogradFallback, ATensorListArgumentThatRequiresGradWarns) {
  const Tensor plain = tensorOf({1, 2}, {2});
  for (const bool boxed : {false, true}) {
    SCOPED_TRACE(boxed ? "boxed" : "unboxed");
    resetAutogradFallbackWarnings();
    warnings_.clear();
    auto run = [boxed](std::vector<Tensor> xs) {
      if (boxed) {
        return callBoxed("fb_test::sum_of", {IValue(xs), IValue(2.0)})
            .at(0)
            .toTensor();
      }
      return Dispatcher::singleton()
          .findSchemaOrThrow("fb_test::sum_of", "")
          .typed<Tensor(const std::vector<Tensor>&, double)>()
          .call(xs, 2.0);
    };
    EXPECT_EQ(turnout::testing::valuesOf(run({plain, plain})),
              (std::vector<double>{4, 8}));
    EXPECT_THAT(warnings_, IsEmpty());
    EXPECT_EQ(turnout::testing::valuesOf(run({plain, leaf()})),
              (std::vector<double>{4, 8}));
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_THAT(warnings_[0], HasSubstr("fb_test::sum_of has no autograd"));
  }
}

TEST_F(AutogradFallback, SilentWhereNothingCouldGoWrong) {
  Tensor x = leaf();
  Tensor plain = tensorOf({1, 2}, {2});
  call("fb_test::twice", plain);  // nothing requires grad
  {
    NoGradGuard no_grad;
    call("fb_test::twice", x);  // grad mode off
  }
  call("fb_test::as_long", x);    // no floating output
  call("fb_test::twice_nd", x);   // declared non-differentiable
  // An autograd kernel, and a CompositeImplicitAutograd kernel: the
  // fallback is not in their tables.
  EXPECT_TRUE(autograd::requiresGrad(call("fb_test::twice_ag", x)));
  EXPECT_TRUE(autograd::requiresGrad(call("fb_test::twice_ci", x)));
  callBoxed("fb_test::twice_ag", {IValue(x)});
  callBoxed("fb_test::twice_ci", {IValue(x)});
  callBoxed("fb_test::twice_nd", {IValue(x)});
  // The reference operators: with autograd kernels, or non-differentiable.
  turnout::mul(x, 2);
  turnout::gt(x, 1);
  turnout::eq(x, x);
  turnout::argmax(x);
  turnout::detach(x);
  turnout::zeros_like(x);
  turnout::ones_like(x);
  turnout::empty_like(x);
  turnout::reshape(x, {2, 1});  // CompositeImplicitAutograd
  EXPECT_THAT(warnings_, IsEmpty());
}

TEST_F(AutogradFallback, TheTableShowsTheFallbackAndModeNothingFallsThrough) {
  const OperatorHandle op = Dispatcher::singleton().findSchemaOrThrow("fb_test::twice", "");
  EXPECT_THAT(op.dumpComputedTable(),
              HasSubstr("AutogradCPU: autograd fallback (warns: no autograd "
                        "kernel) registered in turnout framework"));
  EXPECT_FALSE(op.isKernelFallthroughKernel(DispatchKey::AutogradCPU));
  const OperatorHandle nd =
      Dispatcher::singleton().findSchemaOrThrow("fb_test::twice_nd", "");
  EXPECT_TRUE(nd.isKernelFallthroughKernel(DispatchKey::AutogradCPU));

  setAutogradFallbackMode(AutogradFallbackMode::Nothing);
  EXPECT_THAT(op.dumpComputedTable(),
              HasSubstr("AutogradCPU: fallthrough registered in turnout "
                        "framework [backend fallback]"));
  EXPECT_TRUE(op.isKernelFallthroughKernel(DispatchKey::AutogradCPU));
  call("fb_test::twice", leaf());
  EXPECT_THAT(warnings_, IsEmpty());
  setAutogradFallbackMode(AutogradFallbackMode::Warn);
  call("fb_test::twice", leaf());
  EXPECT_EQ(warnings_.size(), 1u);
}

// Where no input requires grad (or grad mode is off), Warn passes the
// autograd keys as Nothing does: no allocation, unboxed or boxed.
TEST_F(AutogradFallback, PassingThroughAllocatesNothing) {
  const auto op = Dispatcher::singleton()
                      .findSchemaOrThrow("fb_test::identity", "")
                      .typed<Tensor(const Tensor&)>();
  const Tensor plain = tensorOf({1, 2}, {2});
  const Tensor x = leaf();
  Stack stack;
  stack.reserve(4);
  for (const AutogradFallbackMode mode :
       {AutogradFallbackMode::Warn, AutogradFallbackMode::Nothing}) {
    SCOPED_TRACE(mode == AutogradFallbackMode::Warn ? "warn" : "nothing");
    setAutogradFallbackMode(mode);
    op.call(plain);  // the thread's first call may register it
    counting = true;
    allocations = 0;
    Tensor r = op.call(plain);
    {
      NoGradGuard no_grad;
      r = op.call(x);
    }
    stack.emplace_back(plain);
    op.callBoxed(stack);
    stack.clear();
    counting = false;
    EXPECT_EQ(allocations, 0);
    EXPECT_TRUE(r.is_same(x));
  }
  // The call that may warn is boxed: it allocates, and warns.
  setAutogradFallbackMode(AutogradFallbackMode::Warn);
  counting = true;
  allocations = 0;
  op.call(x);
  counting = false;
  EXPECT_GT(allocations, 0);
  EXPECT_EQ(warnings_.size(), 1u);
}

// The filtered entries name their own table (checkInvariants), through
// registrations and mode changes.
TEST_F(AutogradFallback, TablesStayConsistent) {
  Dispatcher::singleton().checkInvariants();
  {
    Library lib(Library::FRAGMENT, "fb_test", std::nullopt, __FILE__, __LINE__);
    lib.def("late(Tensor x) -> Tensor");
    lib.impl("late", dispatch(DispatchKey::CPU, TURNOUT_FN(twice)));
    Dispatcher::singleton().checkInvariants();
    call("fb_test::late", leaf());
    EXPECT_EQ(warnings_.size(), 1u);
    setAutogradFallbackMode(AutogradFallbackMode::Nothing);
    Dispatcher::singleton().checkInvariants();
    setAutogradFallbackMode(AutogradFallbackMode::Warn);
    Dispatcher::singleton().checkInvariants();
  }
  Dispatcher::singleton().checkInvariants();
}

TEST_F(AutogradFallback, AHandlerThatThrowsFailsTheCall) {
  setAutogradFallbackWarningHandler([](const std::string& m) {
    throw Error(ErrorKind::InvalidArgument, m);
  });
  EXPECT_THROW(call("fb_test::twice", leaf()), Error);
}

}  // namespace
}  // namespace autograd
}  // namespace turnout
