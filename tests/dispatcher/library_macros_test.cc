// The static registration macros, and the handle queries they make
// answerable.
#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "gtest/gtest.h"

namespace {

using turnout::CppFunction;
using turnout::DispatchKey;
using turnout::Tensor;

Tensor macro_cpu(const Tensor& x) { return x; }
int64_t macro_count(int64_t n) { return n + 1; }

}  // namespace

TURNOUT_LIBRARY(macros, m) {
  m.def("id(Tensor x) -> Tensor");
  m.def("count(int n) -> int", TURNOUT_FN(macro_count));
}

TURNOUT_LIBRARY_FRAGMENT(macros, m) { m.def("extra(Tensor x) -> Tensor"); }

TURNOUT_LIBRARY_IMPL(macros, CPU, m) { m.impl("id", TURNOUT_FN(macro_cpu)); }

TURNOUT_LIBRARY_IMPL(macros, Tracer, m) {
  m.impl("id", CppFunction::makeFallthrough());
}

namespace turnout {
namespace {

TEST(LibraryMacros, RegisterAtLoadTime) {
  OperatorHandle id = Dispatcher::singleton().findSchemaOrThrow("macros::id", "");
  EXPECT_TRUE(id.hasKernelForDispatchKey(DispatchKey::CPU));
  EXPECT_TRUE(id.hasComputedKernelForDispatchKey(DispatchKey::CPU));
  EXPECT_FALSE(id.hasComputedKernelForDispatchKey(DispatchKey::CUDA));
  EXPECT_TRUE(id.isKernelFallthroughKernel(DispatchKey::Tracer));
  EXPECT_TRUE(id.hasKernelForAnyDispatchKey(
      DispatchKeySet({DispatchKey::CUDA, DispatchKey::CPU})));
  EXPECT_TRUE(Dispatcher::singleton().findSchema({"macros::extra", ""}));
  EXPECT_NE(id.debug().find("library_macros_test.cc"), std::string::npos);
  id.checkInvariants();
}

TEST(LibraryMacros, CallBoxedForDispatchKey) {
  OperatorHandle id = Dispatcher::singleton().findSchemaOrThrow("macros::id", "");
  Tensor x = detail::makeTensorWithKeySet(DispatchKeySet(DispatchKey::CUDA));
  Stack stack{IValue(x)};
  // Runs the CPU entry whatever the argument's keys say.
  id.callBoxedForDispatchKey(DispatchKey::CPU, stack);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_TRUE(stack[0].toTensor().is_same(x));
  EXPECT_THROW(id.callBoxedForDispatchKey(DispatchKey::Autograd, stack), Error);
  EXPECT_THROW(id.callBoxedForDispatchKey(DispatchKey::Tracer, stack), Error);
}

TEST(LibraryMacros, OpsWithoutTensorsUseTheUndefinedEntry) {
  auto count = Dispatcher::singleton()
                   .findSchemaOrThrow("macros::count", "")
                   .typed<int64_t(int64_t)>();
  EXPECT_EQ(count.call(41), 42);
}

}  // namespace
}  // namespace turnout
