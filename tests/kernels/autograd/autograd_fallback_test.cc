// The autograd fallback (kernels/autograd/autograd_fallback.h): a call of an
// operator with no autograd kernel on inputs that require grad warns once
// per operator, naming it and the fix; everything else stays silent.
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

namespace turnout {
namespace autograd {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using turnout::testing::tensorOf;

Tensor twice(const Tensor& x) { return turnout::mul(x, 2); }
Tensor longOf(const Tensor& x) { return turnout::to(x, ScalarType::Long); }

TURNOUT_LIBRARY(fb_test, m) {
  m.def("twice(Tensor x) -> Tensor");
  m.def("twice_nd(Tensor x) -> Tensor");
  m.def("as_long(Tensor x) -> Tensor");
}
TURNOUT_LIBRARY_IMPL(fb_test, CPU, m) {
  m.impl("twice", TURNOUT_FN(twice));
  m.impl("twice_nd", TURNOUT_FN(twice));
  m.impl("as_long", TURNOUT_FN(longOf));
}
// Declared non-differentiable: the fix the warning names.
TURNOUT_LIBRARY_IMPL(fb_test, Autograd, m) {
  m.impl("twice_nd", CppFunction::makeFallthrough());
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

// Nothing by default (the test runs without TURNOUT_AUTOGRAD_FALLBACK_MODE;
// test_autograd_function.py sets it).
TEST(AutogradFallbackMode, NothingByDefault) {
  EXPECT_EQ(autogradFallbackMode(), AutogradFallbackMode::Nothing);
  EXPECT_TRUE(Dispatcher::singleton()
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

TEST_F(AutogradFallback, AHandlerThatThrowsFailsTheCall) {
  setAutogradFallbackWarningHandler([](const std::string& m) {
    throw Error(ErrorKind::InvalidArgument, m);
  });
  EXPECT_THROW(call("fb_test::twice", leaf()), Error);
}

}  // namespace
}  // namespace autograd
}  // namespace turnout
