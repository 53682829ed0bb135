// OperatorHandle::explain: one case per kind of table entry, with and
// without thread-local key guards, checked against where the call really
// goes.
#include "dispatcher/debug/explain.h"

#include <string>
#include <vector>

#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/dispatcher/testing.h"
#include "tests/error_of.h"

namespace turnout {
namespace {

using testing::cpuTensor;
using testing::op;
using testing::tensorWith;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::errorOf;


thread_local std::string last_kernel;
Tensor fnCpu(const Tensor& x) {
  last_kernel = "cpu";
  return x;
}
Tensor fnOther(const Tensor& x) {
  last_kernel = "other";
  return x;
}


DispatchExplanation explainWith(const char* name, const Tensor& x) {
  Stack args{IValue(x)};
  return explain(op(name), args);
}

// The key the call really reached, for comparison with the explanation.
std::string runAndSeeKernel(const char* name, const Tensor& x) {
  last_kernel.clear();
  op(name).typed<Tensor(const Tensor&)>().call(x);
  return last_kernel;
}

std::vector<DispatchKey> chainKeys(const DispatchExplanation& e) {
  std::vector<DispatchKey> keys;
  for (const ExplainedEntry& step : e.redispatch_chain) keys.push_back(step.key);
  return keys;
}

TEST(Explain, KernelForTheBackendWithAutogradSkipped) {
  Library lib(Library::FRAGMENT, "ex1", std::nullopt, "ex.cc", 10);
  lib.def("f(Tensor x) -> Tensor");
  lib.impl("f", dispatch(DispatchKey::CPU, TURNOUT_FN(fnCpu)));
  DispatchExplanation e = explainWith("ex1::f", cpuTensor());
  EXPECT_EQ(e.op, "ex1::f");
  EXPECT_EQ(e.schema, "ex1::f(Tensor x) -> Tensor");
  ASSERT_EQ(e.arguments.size(), 1u);
  EXPECT_EQ(e.arguments[0].name, "x");
  EXPECT_EQ(e.arguments[0].type, "Tensor");
  EXPECT_EQ(e.arguments[0].value, "Tensor");
  EXPECT_EQ(e.arguments[0].key_set, cpuTensor().key_set());
  EXPECT_EQ(e.argument_keys, cpuTensor().key_set());
  EXPECT_EQ(e.tls_included, default_included_set);
  EXPECT_EQ(e.tls_excluded, default_excluded_set);
  // The framework's autograd, ADInplaceOrView and BackendSelect
  // fallthroughs are skipped before any call.
  EXPECT_EQ(e.dispatch_key_set, DispatchKeySet(DispatchKey::CPU));
  EXPECT_THAT(e.skipped,
              ElementsAre(DispatchKey::AutogradCPU, DispatchKey::ADInplaceOrView,
                          DispatchKey::BackendSelect));
  EXPECT_TRUE(e.fallthrough_keys.has(DispatchKey::AutogradCPU));
  EXPECT_FALSE(e.fallthrough_keys.has(DispatchKey::Tracer));
  EXPECT_EQ(e.entry.key, DispatchKey::CPU);
  EXPECT_EQ(e.entry.kind, EntryKind::Kernel);
  EXPECT_EQ(e.entry.site, "registered at ex.cc:10");
  EXPECT_FALSE(e.entry.fallthrough);
  EXPECT_TRUE(e.redispatch_chain.empty());
  EXPECT_EQ(runAndSeeKernel("ex1::f", cpuTensor()), "cpu");
}

TEST(Explain, TextForm) {
  Library lib(Library::FRAGMENT, "ex2", std::nullopt, "ex.cc", 20);
  lib.def("f(Tensor x, int n) -> Tensor");
  lib.impl("f", dispatch(DispatchKey::CPU, [](const Tensor& x, int64_t) {
             return x;
           }));
  lib.impl("f", dispatch(DispatchKey::Autograd,
                         [](DispatchKeySet ks, const Tensor& x, int64_t n) {
                           return x;
                         }));
  Stack args{IValue(cpuTensor()), IValue(int64_t{3})};
  DispatchExplanation e = explain(op("ex2::f"), args);
  EXPECT_EQ(args.size(), 2u) << "explain must not touch the stack";
  EXPECT_EQ(e.toString(),
            "explain ex2::f(Tensor x, int n) -> Tensor\n"
            "  argument 0 'x' (Tensor): Tensor DispatchKeySet(CPU, "
            "ADInplaceOrView, AutogradCPU)\n"
            "  arguments' keys:  DispatchKeySet(CPU, ADInplaceOrView, "
            "AutogradCPU)\n"
            "  thread included:  DispatchKeySet(BackendSelect, "
            "ADInplaceOrView)\n"
            "  thread excluded:  DispatchKeySet(AutocastCPU, AutocastXPU, "
            "AutocastHPU, AutocastCUDA, AutocastPrivateUse1)\n"
            "  fallthrough keys: DispatchKeySet(BackendSelect, "
            "ADInplaceOrView)\n"
            "  skipped (fallthrough): ADInplaceOrView BackendSelect\n"
            "  dispatch key set: DispatchKeySet(CPU, AutogradCPU)\n"
            "  chosen: AutogradCPU -> registered at ex.cc:20 [autograd "
            "kernel]\n"
            "  a redispatch below AutogradCPU would visit:\n"
            "    CPU -> registered at ex.cc:20 [kernel]\n");
}

TEST(Explain, MathKernelServesAutogradAndBackend) {
  Library lib(Library::FRAGMENT, "ex3", std::nullopt, "ex.cc", 30);
  lib.def("f(Tensor x) -> Tensor");
  lib.impl("f", dispatch(DispatchKey::CompositeImplicitAutograd,
                         TURNOUT_FN(fnOther)));
  DispatchExplanation e = explainWith("ex3::f", cpuTensor());
  EXPECT_EQ(e.entry.key, DispatchKey::AutogradCPU);
  EXPECT_EQ(e.entry.kind, EntryKind::MathKernel);
  EXPECT_EQ(e.entry.site, "registered at ex.cc:30");
  // ADInplaceOrView was skipped up front; a redispatch would reach the
  // math kernel again at CPU.
  EXPECT_THAT(e.skipped, ElementsAre(DispatchKey::ADInplaceOrView,
                                     DispatchKey::BackendSelect));
  ASSERT_EQ(e.redispatch_chain.size(), 1u);
  EXPECT_EQ(e.redispatch_chain[0].key, DispatchKey::CPU);
  EXPECT_EQ(e.redispatch_chain[0].kind, EntryKind::MathKernel);
  EXPECT_FALSE(e.redispatch_chain[0].fallthrough);
  EXPECT_EQ(runAndSeeKernel("ex3::f", cpuTensor()), "other");
}

TEST(Explain, DefaultBackendKernel) {
  Library lib(Library::FRAGMENT, "ex4", std::nullopt, "ex.cc", 40);
  lib.def("f(Tensor x) -> Tensor");
  lib.impl("f", dispatch(DispatchKey::CompositeExplicitAutograd,
                         TURNOUT_FN(fnOther)));
  DispatchExplanation e = explainWith("ex4::f", cpuTensor());
  EXPECT_EQ(e.entry.key, DispatchKey::CPU);
  EXPECT_EQ(e.entry.kind, EntryKind::DefaultBackendKernel);
  EXPECT_EQ(e.entry.site, "registered at ex.cc:40");
  EXPECT_THAT(e.toString(),
              HasSubstr("chosen: CPU -> registered at ex.cc:40 [default "
                        "backend kernel]\n"));
}

TEST(Explain, AutogradKernelAndItsChainUnderTlsGuards) {
  Library lib(Library::FRAGMENT, "ex5", std::nullopt, "ex.cc", 50);
  lib.def("f(Tensor x) -> Tensor");
  lib.impl("f", dispatch(DispatchKey::CPU, TURNOUT_FN(fnCpu)));
  lib.impl("f", dispatch(DispatchKey::Autograd, TURNOUT_FN(fnOther)));
  DispatchExplanation e = explainWith("ex5::f", cpuTensor());
  EXPECT_EQ(e.entry.key, DispatchKey::AutogradCPU);
  EXPECT_EQ(e.entry.kind, EntryKind::AutogradKernel);
  EXPECT_THAT(chainKeys(e), ElementsAre(DispatchKey::CPU));
  EXPECT_EQ(e.redispatch_chain[0].kind, EntryKind::Kernel);
  EXPECT_EQ(runAndSeeKernel("ex5::f", cpuTensor()), "other");
  {
    AutoDispatchBelowAutograd below;
    DispatchExplanation b = explainWith("ex5::f", cpuTensor());
    EXPECT_TRUE(b.tls_excluded.has(DispatchKey::AutogradCPU));
    EXPECT_EQ(b.dispatch_key_set, DispatchKeySet(DispatchKey::CPU));
    EXPECT_EQ(b.entry.key, DispatchKey::CPU);
    EXPECT_EQ(b.entry.kind, EntryKind::Kernel);
    EXPECT_EQ(runAndSeeKernel("ex5::f", cpuTensor()), "cpu");
  }
  {
    // Including a key the tensor lacks: the include set reaches the call.
    ExcludeDispatchKeyGuard no_autograd(autograd_dispatch_keyset);
    IncludeDispatchKeyGuard meta(DispatchKey::Meta);
    DispatchExplanation m = explainWith("ex5::f", cpuTensor());
    EXPECT_TRUE(m.tls_included.has(DispatchKey::Meta));
    EXPECT_EQ(m.entry.key, DispatchKey::Meta);
    EXPECT_EQ(m.entry.kind, EntryKind::Missing);
    EXPECT_THAT(m.toString(), HasSubstr("chosen: Meta -> no kernel [missing]"));
  }
}

TEST(Explain, BackendFallback) {
  Library lib(Library::FRAGMENT, "ex6", std::nullopt, "ex.cc", 60);
  lib.def("f(Tensor x) -> Tensor");
  lib.impl("f", dispatch(DispatchKey::CPU, TURNOUT_FN(fnCpu)));
  Library fb(Library::IMPL, "_", DispatchKey::PrivateUse1, "fallback.cc", 6);
  fb.fallback(CppFunction::makeFromBoxedFunction(
      [](const OperatorHandle&, Stack*) { last_kernel = "fallback"; }));
  DispatchExplanation e = explainWith(
      "ex6::f", tensorWith({DispatchKey::PrivateUse1,
                            DispatchKey::AutogradPrivateUse1}));
  EXPECT_EQ(e.entry.key, DispatchKey::PrivateUse1);
  EXPECT_EQ(e.entry.kind, EntryKind::BackendFallback);
  EXPECT_EQ(e.entry.site, "registered at fallback.cc:6");
}

TEST(Explain, UserFallthroughIsSkipped) {
  Library lib(Library::FRAGMENT, "ex7", std::nullopt, "ex.cc", 70);
  lib.def("f(Tensor x) -> Tensor");
  lib.impl("f", dispatch(DispatchKey::CPU, TURNOUT_FN(fnCpu)));
  Library tracer(Library::IMPL, "ex7", DispatchKey::Tracer, "ex.cc", 71);
  tracer.impl("f", CppFunction::makeFallthrough());
  IncludeDispatchKeyGuard trace(DispatchKey::Tracer);
  DispatchExplanation e = explainWith("ex7::f", cpuTensor());
  EXPECT_TRUE(e.before_mask.has(DispatchKey::Tracer));
  EXPECT_FALSE(e.dispatch_key_set.has(DispatchKey::Tracer));
  EXPECT_TRUE(e.fallthrough_keys.has(DispatchKey::Tracer));
  ASSERT_FALSE(e.skipped.empty());
  EXPECT_EQ(e.skipped[0], DispatchKey::Tracer);
  EXPECT_EQ(e.entry.key, DispatchKey::CPU);
  EXPECT_THAT(e.toString(), HasSubstr("skipped (fallthrough): Tracer "));
  EXPECT_EQ(runAndSeeKernel("ex7::f", cpuTensor()), "cpu");
}

TEST(Explain, MissingKernel) {
  Library lib(Library::FRAGMENT, "ex8", std::nullopt, "ex.cc", 80);
  lib.def("f(Tensor x) -> Tensor");
  lib.impl("f", dispatch(DispatchKey::CPU, TURNOUT_FN(fnCpu)));
  Tensor cuda = tensorWith({DispatchKey::CUDA, DispatchKey::AutogradCUDA});
  DispatchExplanation e = explainWith("ex8::f", cuda);
  EXPECT_EQ(e.entry.key, DispatchKey::CUDA);
  EXPECT_EQ(e.entry.kind, EntryKind::Missing);
  EXPECT_EQ(e.entry.site, "");
  EXPECT_THAT(errorOf([&] { runAndSeeKernel("ex8::f", cuda); }),
              HasSubstr("Could not run 'ex8::f'"));
}

TEST(Explain, AmbiguousAutogradOther) {
  Library lib(Library::FRAGMENT, "ex9", std::nullopt, "ex.cc", 90);
  lib.def("f(Tensor x) -> Tensor");
  lib.impl("f", dispatch(DispatchKey::CompositeImplicitAutograd,
                         TURNOUT_FN(fnOther)));
  lib.impl("f", dispatch(DispatchKey::FPGA, TURNOUT_FN(fnCpu)));
  DispatchExplanation e = explainWith(
      "ex9::f", tensorWith({DispatchKey::FPGA, DispatchKey::AutogradOther}));
  EXPECT_EQ(e.entry.key, DispatchKey::AutogradOther);
  EXPECT_EQ(e.entry.kind, EntryKind::AmbiguousAutogradOther);
  EXPECT_TRUE(e.redispatch_chain.empty());
  EXPECT_THAT(e.toString(), HasSubstr("[ambiguous autogradother]"));
}

TEST(Explain, ArgumentsOfEveryShape) {
  Library lib(Library::FRAGMENT, "ex10", std::nullopt, "ex.cc", 100);
  lib.def("f(Tensor[] xs, Tensor? y, int n) -> Tensor");
  Stack args{IValue(std::vector<Tensor>{cpuTensor(), cpuTensor()}), IValue(),
             IValue(int64_t{1})};
  DispatchExplanation e = explain(op("ex10::f"), args);
  ASSERT_EQ(e.arguments.size(), 2u);
  EXPECT_EQ(e.arguments[0].value, "list of 2 tensors");
  EXPECT_EQ(e.arguments[0].type, "Tensor[]");
  EXPECT_EQ(e.arguments[0].key_set, cpuTensor().key_set());
  EXPECT_EQ(e.arguments[1].value, "None");
  EXPECT_TRUE(e.arguments[1].key_set.empty());
  EXPECT_EQ(e.entry.kind, EntryKind::Missing);
}

TEST(Explain, TooFewArgumentsIsAClearError) {
  Library lib(Library::FRAGMENT, "ex11", std::nullopt, "ex.cc", 110);
  lib.def("f(Tensor x, Tensor y) -> Tensor");
  Stack args{IValue(cpuTensor())};
  std::string message = errorOf([&] { explain(op("ex11::f"), args); });
  EXPECT_THAT(message, HasSubstr("explain(ex11::f)"));
  EXPECT_THAT(message, HasSubstr("takes 2 arguments but the stack holds only 1"));
}

}  // namespace
}  // namespace turnout
