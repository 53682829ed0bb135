// Registration and calls through the dispatcher: c10's semantics, the dump
// formats and the errors.
#include "dispatcher/dispatcher.h"

#include <string>
#include <vector>

#include "dispatcher/core/tensor.h"
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
using ::testing::HasSubstr;

Tensor cudaTensor() {
  return tensorWith({DispatchKey::CUDA, DispatchKey::AutogradCUDA,
                     DispatchKey::ADInplaceOrView});
}

// Records which kernel ran.
thread_local std::string last_kernel;

Tensor fn_cpu(const Tensor& x) {
  last_kernel = "cpu";
  return x;
}
Tensor fn_cuda(const Tensor& x) {
  last_kernel = "cuda";
  return x;
}
Tensor fn_math(const Tensor& x) {
  last_kernel = "math";
  return x;
}
Tensor fn_default(const Tensor& x) {
  last_kernel = "default";
  return x;
}
Tensor fn_autograd(const Tensor& x) {
  last_kernel = "autograd";
  return x;
}

using testing::errorOf;


TEST(Dispatcher, CallsTheKernelOfTheHighestKey) {
  Library lib(Library::FRAGMENT, "t1", std::nullopt, "lib.cc", 10);
  lib.def("foo(Tensor x) -> Tensor");
  lib.impl("foo", dispatch(DispatchKey::CPU, TURNOUT_FN(fn_cpu)));
  lib.impl("foo", dispatch(DispatchKey::CUDA, TURNOUT_FN(fn_cuda)));
  auto foo = op("t1::foo").typed<Tensor(const Tensor&)>();
  foo.call(cpuTensor());
  EXPECT_EQ(last_kernel, "cpu");
  foo.call(cudaTensor());
  EXPECT_EQ(last_kernel, "cuda");

  Stack stack{IValue(cudaTensor())};
  op("t1::foo").callBoxed(stack);
  EXPECT_EQ(last_kernel, "cuda");
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_TRUE(stack[0].isTensor());
}

TEST(Dispatcher, DumpsUseC10Formats) {
  Library lib(Library::FRAGMENT, "t2", std::nullopt, "file.cc", 12);
  lib.def("foo(Tensor x) -> Tensor");
  lib.impl("foo", dispatch(DispatchKey::CPU,
                           CppFunction(TURNOUT_FN(fn_cpu)).debug("fn_cpu")));
  lib.impl("foo", CppFunction(TURNOUT_FN(fn_math)).debug("fn_old"));
  lib.impl("foo", CppFunction(TURNOUT_FN(fn_math)).debug("fn_math"));
  OperatorHandle foo = op("t2::foo");
  EXPECT_EQ(foo.dumpState(),
            "name: t2::foo\n"
            "schema: t2::foo(Tensor x) -> Tensor\n"
            "debug: registered at file.cc:12\n"
            "alias analysis kind: FROM_SCHEMA\n"
            "CPU: fn_cpu :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n"
            "CompositeImplicitAutograd[alias]: fn_math :: (Tensor _0) -> "
            "Tensor _0 [ boxed unboxed ]\n"
            "CompositeImplicitAutograd[alias] (inactive): fn_old :: (Tensor "
            "_0) -> Tensor _0 [ boxed unboxed ]\n");
  std::string table = foo.dumpComputedTable();
  EXPECT_THAT(table, HasSubstr("Undefined: fn_math [math kernel]\n"));
  EXPECT_THAT(table, HasSubstr("CPU: fn_cpu [kernel]\n"));
  EXPECT_THAT(table, HasSubstr("CUDA: fn_math [math kernel]\n"));
  EXPECT_THAT(table, HasSubstr("AutogradOther: fn_math [math kernel]\n"));
  // CPU has its own kernel: autograd for CPU falls through to it.
  EXPECT_THAT(table,
              HasSubstr("AutogradCPU: fallthrough registered in turnout "
                        "framework [backend fallback]\n"));
  EXPECT_THAT(table, HasSubstr("AutogradCUDA: fn_math [math kernel]\n"));
  EXPECT_THAT(table, HasSubstr("BackendSelect: fallthrough registered in "
                               "turnout framework [backend fallback]\n"));
  foo.checkInvariants();
}

TEST(Dispatcher, MissingKernelErrorNamesKeysAndSites) {
  Library lib(Library::FRAGMENT, "t3", std::nullopt, "file.cc", 30);
  lib.def("foo(Tensor x) -> Tensor");
  lib.impl("foo", dispatch(DispatchKey::CPU, TURNOUT_FN(fn_cpu)));
  auto foo = op("t3::foo").typed<Tensor(const Tensor&)>();
  std::string message = errorOf([&] { foo.call(cudaTensor()); });
  EXPECT_THAT(message, HasSubstr("Could not run 't3::foo' with arguments from "
                                 "the 'CUDA' backend."));
  EXPECT_THAT(message, HasSubstr("'t3::foo' is only available for these "
                                 "backends: [CPU, BackendSelect, "
                                 "ADInplaceOrView, AutogradOther, "));
  EXPECT_THAT(message, HasSubstr("CPU: registered at file.cc:30 [kernel]\n"));
  EXPECT_THAT(message,
              HasSubstr("To fix it, register a kernel for CUDA, or a "
                        "CompositeExplicitAutograd kernel that serves every "
                        "backend:\n"
                        "  TURNOUT_LIBRARY_IMPL(t3, CUDA, m) { "
                        "m.impl(\"foo\", kernel); }\n"));
  try {
    foo.call(cudaTensor());
    ADD_FAILURE() << "expected a throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NotImplemented);
    // The fix as data, for the bindings to spell in Python.
    ASSERT_TRUE(e.fixIt().has_value());
    EXPECT_EQ(e.fixIt()->action, FixIt::Action::RegisterKernel);
    EXPECT_EQ(e.fixIt()->ns, "t3");
    EXPECT_EQ(e.fixIt()->op, "foo");
    EXPECT_EQ(e.fixIt()->key, "CUDA");
  }
}

TEST(Dispatcher, FallthroughSkipsTheKey) {
  Library lib(Library::FRAGMENT, "t4", std::nullopt, "file.cc", 40);
  lib.def("foo(Tensor x) -> Tensor");
  lib.impl("foo", dispatch(DispatchKey::CPU, TURNOUT_FN(fn_cpu)));
  lib.impl("foo", dispatch(DispatchKey::Python, CppFunction::makeFallthrough()));
  OperatorHandle foo = op("t4::foo");
  EXPECT_TRUE(foo.isKernelFallthroughKernel(DispatchKey::Python));
  last_kernel.clear();
  foo.typed<Tensor(const Tensor&)>().call(
      tensorWith({DispatchKey::CPU, DispatchKey::Python}));
  EXPECT_EQ(last_kernel, "cpu");
}

TEST(Dispatcher, SecondKernelWinsAndTheFirstComesBack) {
  std::vector<std::string> warnings;
  WarningHandler previous = setWarningHandler(
      [&](const std::string& m) { warnings.push_back(m); });
  Library lib(Library::FRAGMENT, "t5", std::nullopt, "file.cc", 50);
  lib.def("foo(Tensor x) -> Tensor");
  lib.impl("foo", dispatch(DispatchKey::CPU, TURNOUT_FN(fn_cpu)));
  auto foo = op("t5::foo").typed<Tensor(const Tensor&)>();
  {
    Library override_lib(Library::IMPL, "t5", DispatchKey::CPU, "other.cc", 7);
    override_lib.impl("foo", TURNOUT_FN(fn_math));
    foo.call(cpuTensor());
    EXPECT_EQ(last_kernel, "math");
    EXPECT_THAT(op("t5::foo").dumpState(),
                HasSubstr("CPU (inactive): registered at file.cc:50"));
  }
  foo.call(cpuTensor());
  EXPECT_EQ(last_kernel, "cpu");
  setWarningHandler(previous);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("previous kernel: registered at file.cc:50"));
  EXPECT_THAT(warnings[0], HasSubstr("new kernel: registered at other.cc:7"));
}

TEST(Dispatcher, DefTwiceFailsAndKeepsTheFirst) {
  Library lib(Library::FRAGMENT, "t6", std::nullopt, "first.cc", 1);
  lib.def("foo(Tensor x) -> Tensor");
  Library lib2(Library::FRAGMENT, "t6", std::nullopt, "second.cc", 2);
  std::string message = errorOf([&] { lib2.def("foo(Tensor y) -> Tensor"); });
  // c10's facts and order, then turnout's hint (the torch-named Python API
  // leaves the hint out: tests/python/test_torch_api.py).
  EXPECT_THAT(message, HasSubstr("multiple times"));
  EXPECT_THAT(message, HasSubstr("Duplicate registration: registered at "
                                 "second.cc:2. Original registration: "
                                 "registered at first.cc:1\n"));
  EXPECT_THAT(message, HasSubstr("to add a kernel to it, use impl()"));
  EXPECT_EQ(toString(op("t6::foo").schema()), "t6::foo(Tensor x) -> Tensor");
  op("t6::foo").checkInvariants();
}

TEST(Dispatcher, TagsAreKeptWithTheSchemaAndDumped) {
  OperatorHandle foo = [] {
    Library lib(Library::FRAGMENT, "ttag", std::nullopt, "tags.cc", 3);
    lib.def("foo(Tensor x) -> Tensor", AliasAnalysisKind::FROM_SCHEMA,
            {"pointwise", "core"});
    OperatorHandle h = op("ttag::foo");
    EXPECT_EQ(h.tags(), (std::vector<std::string>{"pointwise", "core"}));
    EXPECT_TRUE(h.hasTag("core"));
    EXPECT_FALSE(h.hasTag("inplace_view"));
    EXPECT_EQ(h.dumpState(),
              "name: ttag::foo\n"
              "schema: ttag::foo(Tensor x) -> Tensor\n"
              "debug: registered at tags.cc:3\n"
              "alias analysis kind: FROM_SCHEMA\n"
              "tags: pointwise core\n");
    h.checkInvariants();
    return h;
  }();
  // The def is gone, and its tags with it; a new def has its own.
  EXPECT_TRUE(foo.tags().empty());
  Library lib(Library::FRAGMENT, "ttag", std::nullopt, "tags.cc", 30);
  lib.def("foo(Tensor x) -> Tensor");
  EXPECT_TRUE(foo.tags().empty());
  EXPECT_EQ(foo.dumpState().find("tags:"), std::string::npos);
  foo.checkInvariants();
}

std::vector<std::string> tagsOfBar(const OperatorName& op) {
  if (op.name == "ttag2::bar" && op.overload_name.empty()) return {"core"};
  return {};
}

TEST(Dispatcher, TagsForGivesDefsWithoutTagsTheirTags) {
  Library lib(Library::FRAGMENT, "ttag2", std::nullopt, "tags.cc", 40);
  lib.tagsFor(&tagsOfBar);
  lib.def("bar(Tensor x) -> Tensor");
  lib.def("bar.other(Tensor x, int n) -> Tensor");
  lib.def("baz(Tensor x) -> Tensor");
  lib.def("qux(Tensor x) -> Tensor", AliasAnalysisKind::FROM_SCHEMA,
          {"pointwise"});
  EXPECT_EQ(op("ttag2::bar").tags(), (std::vector<std::string>{"core"}));
  EXPECT_TRUE(Dispatcher::singleton()
                  .findSchemaOrThrow("ttag2::bar", "other")
                  .tags()
                  .empty());
  EXPECT_TRUE(op("ttag2::baz").tags().empty());
  // Tags given to def win over the library's table.
  EXPECT_EQ(op("ttag2::qux").tags(), (std::vector<std::string>{"pointwise"}));
  op("ttag2::bar").checkInvariants();
}

TEST(Dispatcher, BadTagsAreRejectedAndRegisterNothing) {
  struct Case {
    std::vector<std::string> tags;
    const char* message;
  };
  const Case cases[] = {
      {{""}, "tag 0 is '', which is not a tag"},
      {{"ok", "two words"}, "tag 1 is 'two words', which is not a tag"},
      {{"1st"}, "tag 0 is '1st'"},
      {{"core", "core"}, "tag 'core' is given twice (tags 0 and 1)"},
  };
  Library lib(Library::FRAGMENT, "ttag2", std::nullopt, "tags.cc", 4);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    std::string message = errorOf([&] {
      lib.def("foo(Tensor x) -> Tensor", AliasAnalysisKind::FROM_SCHEMA, c.tags);
    });
    EXPECT_THAT(message, HasSubstr("def of ttag2::foo"));
    EXPECT_THAT(message, HasSubstr(c.message));
    EXPECT_FALSE(Dispatcher::singleton()
                     .findSchema(OperatorName{"ttag2::foo", ""})
                     .has_value());
  }
  lib.def("foo(Tensor x) -> Tensor", AliasAnalysisKind::FROM_SCHEMA, {"core"});
  EXPECT_EQ(op("ttag2::foo").tags(), std::vector<std::string>{"core"});
  Dispatcher::singleton().checkInvariants();
}

TEST(Dispatcher, OneDefLibraryPerNamespace) {
  Library lib(Library::DEF, "t7", std::nullopt, "a.cc", 1);
  std::string message =
      errorOf([] { Library again(Library::DEF, "t7", std::nullopt, "b.cc", 2); });
  EXPECT_THAT(message,
              HasSubstr("Only one DEF library may define the namespace t7"));
  EXPECT_THAT(message, HasSubstr("a.cc:1"));
  EXPECT_THAT(message, HasSubstr("b.cc:2"));
  EXPECT_THAT(message, HasSubstr("  TURNOUT_LIBRARY_FRAGMENT(t7, m) {"));
  EXPECT_THAT(message, HasSubstr("  TURNOUT_LIBRARY_IMPL(t7, CPU, m) {"));
}

TEST(Dispatcher, ImplBeforeDefIsDangling) {
  Library impl(Library::IMPL, "t8", DispatchKey::CPU, "impl.cc", 1);
  impl.impl("foo", TURNOUT_FN(fn_cpu));
  auto& d = Dispatcher::singleton();
  EXPECT_FALSE(d.findSchema({"t8::foo", ""}).has_value());
  ASSERT_TRUE(d.findOp({"t8::foo", ""}).has_value());
  bool dangling = false;
  for (const OperatorHandle& h : d.findDanglingImpls()) {
    dangling |= h.operator_name().name == "t8::foo";
  }
  EXPECT_TRUE(dangling);
  EXPECT_THAT(errorOf([] { op("t8::foo"); }), HasSubstr("no schema"));
  {
    Library def(Library::FRAGMENT, "t8", std::nullopt, "def.cc", 1);
    def.def("foo(Tensor x) -> Tensor");
    op("t8::foo").typed<Tensor(const Tensor&)>().call(cpuTensor());
    EXPECT_EQ(last_kernel, "cpu");
  }
  EXPECT_FALSE(d.findSchema({"t8::foo", ""}).has_value());
}

TEST(Dispatcher, InferredSchemaMismatchIsRejected) {
  Library lib(Library::FRAGMENT, "t9", std::nullopt, "file.cc", 90);
  lib.def("foo(Tensor x, int n) -> Tensor");
  std::string message = errorOf(
      [&] { lib.impl("foo", dispatch(DispatchKey::CPU, TURNOUT_FN(fn_cpu))); });
  EXPECT_THAT(message, HasSubstr("Inferred operator schema for a C++ kernel "
                                 "function doesn't match the expected function "
                                 "schema."));
  // Declared vs inferred, as c10.
  EXPECT_THAT(message, HasSubstr("The number of arguments is different. 2 vs 1."));
  EXPECT_THAT(message, HasSubstr("inferred schema: (Tensor _0) -> Tensor _0"));
  // turnout's hint, after c10's lines.
  EXPECT_THAT(message, HasSubstr("2 vs 1.\n  dispatch key: CPU\nFix the "));
  EXPECT_FALSE(op("t9::foo").hasKernelForDispatchKey(DispatchKey::CPU));
  op("t9::foo").checkInvariants();
}

TEST(Dispatcher, WrongTypedSignatureIsRejected) {
  Library lib(Library::FRAGMENT, "t10", std::nullopt, "file.cc", 100);
  lib.def("foo(Tensor x) -> Tensor");
  lib.impl("foo", dispatch(DispatchKey::CPU, TURNOUT_FN(fn_cpu)));
  std::string message =
      errorOf([] { op("t10::foo").typed<Tensor(Tensor)>(); });
  EXPECT_THAT(message, HasSubstr("wrong signature"));
  message = errorOf([] { op("t10::foo").typed<Tensor(const Tensor&, int64_t)>(); });
  EXPECT_THAT(message, HasSubstr("does not fit the schema t10::foo(Tensor x) -> "
                                 "Tensor"));
  EXPECT_THAT(message, HasSubstr("The number of arguments is different. 1 vs 2."));
}

TEST(Dispatcher, AliasPrecedence) {
  Library lib(Library::FRAGMENT, "t11", std::nullopt, "file.cc", 110);
  lib.def("foo(Tensor x) -> Tensor");
  lib.impl("foo", TURNOUT_FN(fn_math));  // CompositeImplicitAutograd
  lib.impl("foo", dispatch(DispatchKey::CompositeExplicitAutograd,
                           TURNOUT_FN(fn_default)));
  auto foo = op("t11::foo").typed<Tensor(const Tensor&)>();
  foo.call(cudaTensor());
  EXPECT_EQ(last_kernel, "default");
  {
    Library ag(Library::IMPL, "t11", DispatchKey::Autograd, "ag.cc", 1);
    ag.impl("foo", TURNOUT_FN(fn_autograd));
    foo.call(cudaTensor());
    EXPECT_EQ(last_kernel, "autograd");
    {
      AutoDispatchBelowAutograd below;
      foo.call(cudaTensor());
      EXPECT_EQ(last_kernel, "default");
    }
  }
  op("t11::foo").checkInvariants();
}

TEST(Dispatcher, AmbiguousAutogradOther) {
  Library lib(Library::FRAGMENT, "t12", std::nullopt, "file.cc", 120);
  lib.def("foo(Tensor x) -> Tensor");
  lib.impl("foo", TURNOUT_FN(fn_math));
  lib.impl("foo", dispatch(DispatchKey::FPGA, TURNOUT_FN(fn_cpu)));
  OperatorHandle foo = op("t12::foo");
  EXPECT_THAT(foo.dumpComputedTable(),
              HasSubstr("AutogradOther: ambiguous_autogradother [ambiguous "
                        "autogradother]\n"));
  std::string message = errorOf([&] {
    foo.typed<Tensor(const Tensor&)>().call(
        tensorWith({DispatchKey::FPGA, DispatchKey::AutogradOther}));
  });
  EXPECT_THAT(message, HasSubstr("CompositeExplicitAutograd"));
}

TEST(Dispatcher, RedispatchGoesBelowTheCurrentKey) {
  Library lib(Library::FRAGMENT, "t13", std::nullopt, "file.cc", 130);
  lib.def("foo(Tensor x) -> Tensor");
  lib.impl("foo", dispatch(DispatchKey::CPU, TURNOUT_FN(fn_cpu)));
  std::vector<std::string> seen;
  lib.impl("foo", dispatch(DispatchKey::AutogradCPU,
                           [&seen](DispatchKeySet ks, const Tensor& x) {
                             seen.push_back(toString(ks));
                             static auto h =
                                 op("t13::foo").typed<Tensor(const Tensor&)>();
                             return h.redispatch(
                                 ks & DispatchKeySet(DispatchKeySet::FULL_AFTER,
                                                     DispatchKey::AutogradCPU),
                                 x);
                           }));
  last_kernel.clear();
  op("t13::foo").typed<Tensor(const Tensor&)>().call(cpuTensor());
  EXPECT_EQ(last_kernel, "cpu");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], "DispatchKeySet(CPU, AutogradCPU)");
}

TEST(Dispatcher, BoxedFallbackSeesEveryOperator) {
  Library lib(Library::FRAGMENT, "t14", std::nullopt, "file.cc", 140);
  lib.def("foo(Tensor x) -> Tensor");
  lib.impl("foo", dispatch(DispatchKey::CPU, TURNOUT_FN(fn_cpu)));
  static std::vector<std::string> calls;
  calls.clear();
  {
    Library fb(Library::IMPL, "_", DispatchKey::Tracer, "fb.cc", 3);
    fb.fallback(CppFunction::makeFromBoxedFunction(
        [](const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
          calls.push_back(toString(op.operator_name()));
          op.redispatchBoxed(ks & DispatchKeySet(DispatchKeySet::FULL_AFTER,
                                                 DispatchKey::Tracer),
                             stack);
        }));
    EXPECT_TRUE(
        Dispatcher::singleton().hasBackendFallbackForDispatchKey(DispatchKey::Tracer));
    IncludeDispatchKeyGuard trace(DispatchKey::Tracer);
    Tensor r = op("t14::foo").typed<Tensor(const Tensor&)>().call(cpuTensor());
    EXPECT_TRUE(r.defined());
    EXPECT_EQ(last_kernel, "cpu");
    Library fb2(Library::IMPL, "_", DispatchKey::Tracer, "fb2.cc", 4);
    std::string message = errorOf([&] {
      fb2.fallback(CppFunction::makeFromBoxedFunction(
          [](const OperatorHandle&, Stack*) {}));
    });
    EXPECT_THAT(message, HasSubstr("multiple backend fallbacks"));
    EXPECT_THAT(message, HasSubstr("previous registration registered at "
                                   "fb.cc:3, new registration registered at "
                                   "fb2.cc:4\nDestroy the previous library"));
  }
  EXPECT_EQ(calls, std::vector<std::string>{"t14::foo"});
  EXPECT_FALSE(
      Dispatcher::singleton().hasBackendFallbackForDispatchKey(DispatchKey::Tracer));
}

// Found by //tests/fuzz:registry_fuzzer: a typed kernel registered as a
// backend fallback ran with its own C++ signature for an operator of another
// schema, and left the operator's stack with the wrong number of values.
TEST(Dispatcher, TypedFallbackIsRefused) {
  Library lib(Library::FRAGMENT, "t14b", std::nullopt, "file.cc", 145);
  lib.def("foo(Tensor x) -> Tensor");
  lib.impl("foo", dispatch(DispatchKey::CPU, TURNOUT_FN(fn_cpu)));
  Library fb(Library::IMPL, "_", DispatchKey::Tracer, "fb.cc", 7);
  const std::string before = op("t14b::foo").dumpComputedTable();
  std::string message = errorOf(
      [&] { fb.fallback([](int64_t n) -> int64_t { return n; }); });
  EXPECT_THAT(message, HasSubstr("fallback(): a backend fallback for Tracer "
                                 "(registered at fb.cc:7) must be a boxed "
                                 "kernel"));
  EXPECT_THAT(message, HasSubstr("makeFromBoxedFunction"));
  EXPECT_FALSE(
      Dispatcher::singleton().hasBackendFallbackForDispatchKey(DispatchKey::Tracer));
  EXPECT_EQ(op("t14b::foo").dumpComputedTable(), before);
  Dispatcher::singleton().checkInvariants();
  // Boxed and fallthrough fallbacks still register.
  fb.fallback(CppFunction::makeFallthrough());
  EXPECT_TRUE(
      Dispatcher::singleton().hasBackendFallbackForDispatchKey(DispatchKey::Tracer));
}

TEST(Dispatcher, UnboxedCallOfABoxedKernel) {
  Library lib(Library::FRAGMENT, "t15", std::nullopt, "file.cc", 150);
  lib.def("scale(Tensor x, int n) -> (Tensor, int)");
  lib.impl("scale", dispatch(DispatchKey::CPU,
                             CppFunction::makeFromBoxedFunction(
                                 [](const OperatorHandle&, Stack* stack) {
                                   int64_t n = stack->back().toInt();
                                   stack->back() = IValue(n * 2);
                                 })));
  auto scale = op("t15::scale").typed<std::tuple<Tensor, int64_t>(const Tensor&, int64_t)>();
  auto [t, n] = scale.call(cpuTensor(), 21);
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(n, 42);
}

TEST(Dispatcher, BoxedCallOfAnUnboxedKernelWithManyTypes) {
  Library lib(Library::FRAGMENT, "t16", std::nullopt, "file.cc", 160);
  lib.def("f(Tensor x, int a, float b, bool c, str s, int[] l, Tensor? o) -> "
          "(int, float, str)");
  lib.impl("f", dispatch(DispatchKey::CPU,
                         [](const Tensor&, int64_t a, double b, bool c,
                            std::string s, std::vector<int64_t> l,
                            const std::optional<Tensor>& o) {
                           return std::make_tuple(
                               a + static_cast<int64_t>(l.size()) + (c ? 1 : 0),
                               b * 2, s + (o.has_value() ? "!" : "?"));
                         }));
  Stack stack{IValue(cpuTensor()), IValue(int64_t{1}), IValue(1.5), IValue(true),
              IValue(std::string("hi")), IValue(std::vector<int64_t>{1, 2}),
              IValue()};
  op("t16::f").callBoxed(stack);
  ASSERT_EQ(stack.size(), 3u);
  EXPECT_EQ(stack[0].toInt(), 4);
  EXPECT_EQ(stack[1].toDouble(), 3.0);
  EXPECT_EQ(stack[2].toStringRef(), "hi?");
}

TEST(Dispatcher, DefWithKernelInfersTheSchema) {
  Library lib(Library::FRAGMENT, "t17", std::nullopt, "file.cc", 170);
  lib.def("twice", [](const Tensor& x, int64_t n) { return n * 2; });
  OperatorHandle h = op("t17::twice");
  EXPECT_EQ(toString(h.schema()), "t17::twice(Tensor _0, int _1) -> int _0");
  EXPECT_EQ((h.typed<int64_t(const Tensor&, int64_t)>().call(cudaTensor(), 4)),
            8);
}

TEST(Dispatcher, DefWithAnInferredSchemaIsConservative) {
  // As c10: a schema inferred from a C++ function says nothing of aliasing.
  Library lib(Library::FRAGMENT, "t17b", std::nullopt, "file.cc", 175);
  lib.def("twice", [](const Tensor& x, int64_t n) { return n * 2; });
  lib.def("given(Tensor x) -> Tensor", TURNOUT_FN(fn_cpu));
  EXPECT_THAT(op("t17b::twice").dumpState(),
              HasSubstr("alias analysis kind: CONSERVATIVE\n"));
  EXPECT_THAT(op("t17b::given").dumpState(),
              HasSubstr("alias analysis kind: FROM_SCHEMA\n"));
}

TEST(Dispatcher, DefWithAliasAndKernelIsAllOrNothing) {
  Library lib(Library::FRAGMENT, "t17c", std::nullopt, "file.cc", 176);
  lib.def("foo(Tensor x) -> Tensor", AliasAnalysisKind::PURE_FUNCTION,
          dispatch(DispatchKey::CPU, TURNOUT_FN(fn_cpu)));
  EXPECT_THAT(op("t17c::foo").dumpState(),
              HasSubstr("alias analysis kind: PURE_FUNCTION\nCPU: "));
  EXPECT_THAT(errorOf([&] {
                lib.def("bar(Tensor x, int n) -> Tensor",
                        AliasAnalysisKind::CONSERVATIVE,
                        dispatch(DispatchKey::CPU, TURNOUT_FN(fn_cpu)));
              }),
              HasSubstr("2 vs 1."));
  EXPECT_FALSE(Dispatcher::singleton().findOp({"t17c::bar", ""}).has_value());
}

TEST(Dispatcher, NamespaceMismatchesAreErrors) {
  Library lib(Library::FRAGMENT, "t18", std::nullopt, "file.cc", 180);
  EXPECT_THAT(errorOf([&] { lib.def("other::foo(Tensor x) -> Tensor"); }),
              HasSubstr("does not match namespace"));
  Library impl(Library::IMPL, "t18", DispatchKey::CPU, "file.cc", 181);
  EXPECT_THAT(errorOf([&] { impl.impl("other::foo", TURNOUT_FN(fn_cpu)); }),
              HasSubstr("does not match namespace"));
  EXPECT_THAT(errorOf([&] {
                impl.impl("foo", dispatch(DispatchKey::CUDA, TURNOUT_FN(fn_cpu)));
              }),
              HasSubstr("inconsistent with the dispatch key"));
  EXPECT_THAT(errorOf([&] { impl.def("foo(Tensor x) -> Tensor"); }),
              HasSubstr("cannot define an operator inside an IMPL library "
                        "(registered at file.cc:181)"));
  EXPECT_THAT(errorOf([&] { impl.def("foo(Tensor x) -> Tensor"); }),
              HasSubstr("  TURNOUT_LIBRARY_FRAGMENT(t18, m) { "
                        "m.def(\"foo(Tensor x) -> Tensor\"); }\n"));
  EXPECT_THAT(errorOf([&] { lib.fallback(CppFunction::makeFallthrough()); }),
              HasSubstr("no dispatch key"));
}

TEST(Dispatcher, FindSchemaOrThrowExplains) {
  EXPECT_EQ(errorOf([] {
              Dispatcher::singleton().findSchemaOrThrow("nope::op", "ov");
            }),
            "Could not find schema for nope::op.ov; is the library that "
            "defines it linked and loaded?");
}

class CountingListener : public OpRegistrationListener {
 public:
  explicit CountingListener(std::vector<std::string>* log) : log_(log) {}
  void onOperatorRegistered(const OperatorHandle& op) override {
    if (op.operator_name().name.rfind("t19::", 0) == 0) {
      log_->push_back("+" + op.operator_name().name);
    }
  }
  void onOperatorDeregistered(const OperatorHandle& op) override {
    if (op.operator_name().name.rfind("t19::", 0) == 0) {
      log_->push_back("-" + op.operator_name().name);
    }
  }

 private:
  std::vector<std::string>* log_;
};

TEST(Dispatcher, RegistrationListenerSeesDefsAndUndefs) {
  std::vector<std::string> log;
  RegistrationHandleRAII listener = Dispatcher::singleton().addRegistrationListener(
      std::make_unique<CountingListener>(&log));
  {
    Library lib(Library::FRAGMENT, "t19", std::nullopt, "file.cc", 190);
    lib.def("a(Tensor x) -> Tensor");
  }
  EXPECT_EQ(log, (std::vector<std::string>{"+t19::a", "-t19::a"}));
}

TEST(Dispatcher, GetRegistrationsForDispatchKey) {
  Library lib(Library::FRAGMENT, "t20", std::nullopt, "file.cc", 200);
  lib.def("a(Tensor x) -> Tensor");
  lib.impl("a", dispatch(DispatchKey::XLA, TURNOUT_FN(fn_cpu)));
  auto names =
      Dispatcher::singleton().getRegistrationsForDispatchKey(DispatchKey::XLA);
  EXPECT_NE(std::find(names.begin(), names.end(), OperatorName{"t20::a", ""}),
            names.end());
  auto all = Dispatcher::singleton().getAllOpNames();
  EXPECT_NE(std::find(all.begin(), all.end(), OperatorName{"t20::a", ""}),
            all.end());
  Dispatcher::singleton().checkInvariants();
}

}  // namespace
}  // namespace turnout
