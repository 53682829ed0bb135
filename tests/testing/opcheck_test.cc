// opcheck (testing/opcheck.h) and gradcheck (kernels/autograd/gradcheck.h):
// every rule on an operator that breaks it, with its message, and the
// reference operators passing. tests/python/test_opcheck.py checks the same
// operators (defined in Python) for the same messages.
#include "testing/opcheck.h"

#include <string>
#include <vector>

#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/function_node.h"
#include "kernels/autograd/gradcheck.h"
#include "kernels/ops.h"
#include "testing/opcheck_gtest.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using testing::OpCheckOptions;
using testing::OpCheckReport;
using testing::opcheck;
using testing::errorOf;
using testing::rangeOf;

// ---- Operators: one right, the others each breaking one rule -------------------

Tensor scaleCpu(const Tensor& x, double s) { return turnout::mul(x, s); }
Tensor scaleMeta(const Tensor& x, double) {
  return detail::makeEmptyTensor(x.sizes(), x.scalar_type(), x.device());
}
// scale's autograd kernel; `factor` is what the backward multiplies by (s
// for the right one).
template <bool kWrong>
Tensor scaleAutograd(const Tensor& x, double s) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow(kWrong ? "opcheck_test::scale_bad_grad"
                                                 : "opcheck_test::scale",
                                          "")
                       .typed<Tensor(const Tensor&, double)>();
  const bool rec = autograd::detail::shouldRecord("scale", x);
  Tensor out;
  {
    AutoDispatchBelowAutograd below;
    out = op.call(x, s);
  }
  if (rec) {
    const double factor = kWrong ? s + 1 : s;
    autograd::detail::record(
        "ScaleBackward", {x}, out,
        [factor](const autograd::FunctionNode&, const Tensor& g) {
          return autograd::variable_list{turnout::mul(g, factor)};
        });
  }
  return out;
}

// Mutates x, declared `Tensor x`.
Tensor sneakyCpu(const Tensor& x) {
  turnout::mul_(x, 2);
  return turnout::clone(x);
}
// Returns a view of x, declared `-> Tensor`.
Tensor leakyCpu(const Tensor& x) { return turnout::view(x, {-1}); }
Tensor flatMeta(const Tensor& x) {
  return detail::makeEmptyTensor({x.numel()}, x.scalar_type(), x.device());
}
// Declared `Tensor(a) x -> Tensor(a)`, returns a new tensor.
Tensor fakeViewCpu(const Tensor& x) { return turnout::clone(x); }
// Declared `Tensor(a!) x -> Tensor(a!)`, returns a new tensor.
Tensor notInPlaceCpu(const Tensor& x) {
  Tensor out = turnout::add(x, 1);
  turnout::copy_(const_cast<Tensor&>(x), out);
  return out;
}
Tensor sameMeta(const Tensor& x) { return turnout::clone(x); }
Tensor copyCpu(const Tensor& x) { return turnout::clone(x); }
// Meta kernels that disagree with copyCpu.
Tensor metaWrongSizes(const Tensor& x) {
  return detail::makeEmptyTensor({x.numel() + 1}, x.scalar_type(), x.device());
}
Tensor metaWrongDtype(const Tensor& x) {
  return detail::makeEmptyTensor(x.sizes(), ScalarType::Double, x.device());
}
// Column-major result; the Meta kernel claims row-major.
Tensor columnsCpu(const Tensor& x) {
  return turnout::contiguous(turnout::transpose(x, 0, 1)).transpose(0, 1);
}
Tensor rowsMeta(const Tensor& x) {
  return detail::makeEmptyTensor(x.sizes(), x.scalar_type(), x.device());
}
// Raises on a shape mismatch; its Meta kernel does not.
Tensor strictAddCpu(const Tensor& a, const Tensor& b) {
  TURNOUT_CHECK(a.sizes() == b.sizes(), ErrorKind::InvalidArgument,
                "strict_add: sizes differ");
  return turnout::add(a, b);
}
Tensor laxMeta(const Tensor& a, const Tensor&) {
  return detail::makeEmptyTensor(a.sizes(), a.scalar_type(), a.device());
}
// Not differentiable: returns a Long count.
Tensor countCpu(const Tensor& x) {
  return turnout::sum(turnout::gt(x, 0), std::nullopt);
}

// Not differentiable although it returns Float: says so with a fallthrough
// at the Autograd key.
Tensor zerosOfCpu(const Tensor& x) { return turnout::zeros_like(x); }

// CompositeImplicitAutograd, declared `Tensor(a) -> Tensor(a)`: a view when
// x is contiguous, a new tensor otherwise (it "may alias").
Tensor maybeViewMath(const Tensor& x) { return turnout::contiguous(x); }

TURNOUT_LIBRARY(opcheck_test, m) {
  m.def("zeros_of(Tensor x) -> Tensor");
  m.def("maybe_view(Tensor(a) x) -> Tensor(a)", TURNOUT_FN(maybeViewMath));
  m.def("scale(Tensor x, float s) -> Tensor");
  m.def("scale_bad_grad(Tensor x, float s) -> Tensor");
  m.def("scale_no_autograd(Tensor x, float s) -> Tensor");
  m.def("sneaky(Tensor x) -> Tensor");
  m.def("leaky(Tensor x) -> Tensor");
  m.def("fake_view(Tensor(a) x) -> Tensor(a)");
  m.def("not_in_place(Tensor(a!) x) -> Tensor(a!)");
  m.def("meta_sizes(Tensor x) -> Tensor");
  m.def("meta_dtype(Tensor x) -> Tensor");
  m.def("meta_strides(Tensor x) -> Tensor");
  m.def("no_meta(Tensor x) -> Tensor");
  m.def("strict_add(Tensor a, Tensor b) -> Tensor");
  m.def("count(Tensor x) -> Tensor");
}

TURNOUT_LIBRARY_IMPL(opcheck_test, CPU, m) {
  m.impl("scale", TURNOUT_FN(scaleCpu));
  m.impl("scale_bad_grad", TURNOUT_FN(scaleCpu));
  m.impl("scale_no_autograd", TURNOUT_FN(scaleCpu));
  m.impl("sneaky", TURNOUT_FN(sneakyCpu));
  m.impl("leaky", TURNOUT_FN(leakyCpu));
  m.impl("fake_view", TURNOUT_FN(fakeViewCpu));
  m.impl("not_in_place", TURNOUT_FN(notInPlaceCpu));
  m.impl("meta_sizes", TURNOUT_FN(copyCpu));
  m.impl("meta_dtype", TURNOUT_FN(copyCpu));
  m.impl("meta_strides", TURNOUT_FN(columnsCpu));
  m.impl("no_meta", TURNOUT_FN(copyCpu));
  m.impl("strict_add", TURNOUT_FN(strictAddCpu));
  m.impl("count", TURNOUT_FN(countCpu));
  m.impl("zeros_of", TURNOUT_FN(zerosOfCpu));
}

TURNOUT_LIBRARY_IMPL(opcheck_test, Meta, m) {
  m.impl("scale", TURNOUT_FN(scaleMeta));
  m.impl("scale_bad_grad", TURNOUT_FN(scaleMeta));
  m.impl("scale_no_autograd", TURNOUT_FN(scaleMeta));
  m.impl("sneaky", TURNOUT_FN(sameMeta));
  m.impl("leaky", TURNOUT_FN(flatMeta));
  m.impl("fake_view", TURNOUT_FN(sameMeta));
  m.impl("not_in_place", TURNOUT_FN(sameMeta));
  m.impl("meta_sizes", TURNOUT_FN(metaWrongSizes));
  m.impl("meta_dtype", TURNOUT_FN(metaWrongDtype));
  m.impl("meta_strides", TURNOUT_FN(rowsMeta));
  m.impl("strict_add", TURNOUT_FN(laxMeta));
  m.impl("count", TURNOUT_FN(sameMeta));
  m.impl("zeros_of", TURNOUT_FN(sameMeta));
}

TURNOUT_LIBRARY_IMPL(opcheck_test, Autograd, m) {
  m.impl("scale", TURNOUT_FN(scaleAutograd<false>));
  m.impl("scale_bad_grad", TURNOUT_FN(scaleAutograd<true>));
  m.impl("zeros_of", CppFunction::makeFallthrough());
}

OperatorHandle opNamed(const char* name, const char* overload = "") {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

std::string messageOf(const OpCheckReport& r, const std::string& test) {
  const testing::OpCheckResult* result = r.find(test);
  EXPECT_NE(result, nullptr) << test << " did not run";
  return result != nullptr ? result->message : "";
}

Tensor sample() { return rangeOf({2, 3}, ScalarType::Float, 0.5, -1.0); }

// ---- Each rule, broken ------------------------------------------------------------

TEST(OpCheck, RightOperatorPasses) {
  EXPECT_OPCHECK_OK(opNamed("opcheck_test::scale"), {IValue(sample()), IValue(2.0)});
}

TEST(OpCheck, MutatedArgumentNotMarkedMutable) {
  const Tensor x = sample();
  const std::vector<double> before = testing::valuesOf(x);
  OpCheckReport r = opcheck(opNamed("opcheck_test::sneaky"), {IValue(x)});
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(messageOf(r, "test_schema"),
              HasSubstr("argument 'x' was mutated (its values changed "
                        "(element 0 was -1, is -2)) but its schema type is "
                        "'Tensor', not 'Tensor(a!)'"));
  // The caller's tensor is untouched: opcheck runs on copies.
  EXPECT_EQ(testing::valuesOf(x), before);
}

TEST(OpCheck, OutputAliasesInputWithoutAnnotation) {
  OpCheckReport r = opcheck(opNamed("opcheck_test::leaky"), {IValue(sample())});
  EXPECT_THAT(messageOf(r, "test_schema"),
              HasSubstr("output 0 aliases argument 'x' (they share storage) "
                        "but its schema type is 'Tensor', not 'Tensor(a)'"));
}

TEST(OpCheck, DeclaredAliasThatIsNotOne) {
  OpCheckReport r =
      opcheck(opNamed("opcheck_test::fake_view"), {IValue(sample())});
  EXPECT_THAT(messageOf(r, "test_schema"),
              HasSubstr("output 0 is declared as an alias of argument 'x' "
                        "(schema 'Tensor(a) x' -> 'Tensor(a)') but is not a "
                        "view of it"));
}

TEST(OpCheck, DeclaredMutationNotInPlace) {
  OpCheckReport r =
      opcheck(opNamed("opcheck_test::not_in_place"), {IValue(sample())});
  EXPECT_THAT(messageOf(r, "test_schema"),
              HasSubstr("output 0 must be argument 'x' itself, written in "
                        "place (schema 'Tensor(a!) x' -> 'Tensor(a!)'), but "
                        "is a new tensor"));
}

TEST(OpCheck, MetaKernelDisagrees) {
  struct Case {
    const char* op;
    const char* message;
  } cases[] = {
      {"opcheck_test::meta_sizes",
       "output 0: the Meta kernel gives sizes [7] but the real kernel [2, 3]"},
      {"opcheck_test::meta_dtype",
       "output 0: the Meta kernel gives dtype Double but the real kernel "
       "Float"},
      {"opcheck_test::meta_strides",
       "output 0: the Meta kernel gives strides [3, 1] but the real kernel "
       "[1, 2] (sizes [2, 3])"},
      {"opcheck_test::no_meta",
       "operator opcheck_test::no_meta has no Meta kernel"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    OpCheckReport r = opcheck(opNamed(c.op), {IValue(sample())});
    EXPECT_THAT(messageOf(r, "test_faketensor"), HasSubstr(c.message));
    EXPECT_TRUE(r.find("test_schema")->ok);
  }
}

TEST(OpCheck, MetaKernelMustRaiseWhereTheRealOneDoes) {
  OpCheckReport r = opcheck(opNamed("opcheck_test::strict_add"),
                            {IValue(sample()), IValue(rangeOf({3, 2}))});
  EXPECT_THAT(messageOf(r, "test_faketensor"),
              HasSubstr("the real kernel raised (InvalidArgument: strict_add: "
                        "sizes differ) but the Meta kernel did not"));
}

TEST(OpCheck, DifferentiableOperatorWithoutAutogradKernel) {
  OpCheckReport r = opcheck(opNamed("opcheck_test::scale_no_autograd"),
                            {IValue(sample()), IValue(2.0)});
  EXPECT_THAT(messageOf(r, "test_autograd_registration"),
              HasSubstr("operator opcheck_test::scale_no_autograd returns "
                        "floating-point tensors and its arguments 'x' may "
                        "require grad, but it has no autograd kernel"));
  EXPECT_TRUE(r.find("test_faketensor")->ok) << r.toString();
}

TEST(OpCheck, WrongBackward) {
  OpCheckReport r = opcheck(opNamed("opcheck_test::scale_bad_grad"),
                            {IValue(sample()), IValue(2.0)});
  const std::string m = messageOf(r, "test_autograd_registration");
  EXPECT_THAT(m, HasSubstr("the gradients of opcheck_test::scale_bad_grad "
                           "disagree with finite differences (gradcheck in "
                           "double; input 0 is 'x'): Jacobian mismatch for "
                           "output 0 with respect to input 0"));
  EXPECT_THAT(m, HasSubstr("(analytical 3, numerical 2)"));
}

TEST(OpCheck, NonDifferentiableOperatorNeedsNoAutogradKernel) {
  EXPECT_OPCHECK_OK(opNamed("opcheck_test::count"), {IValue(sample())},
                    OpCheckOptions{{"test_autograd_registration"}});
}

TEST(OpCheck, FallthroughAtAutogradDeclaresNonDifferentiable) {
  EXPECT_OPCHECK_OK(opNamed("opcheck_test::zeros_of"), {IValue(sample())});
}

TEST(OpCheck, CompositeAliasMayBeANewTensor) {
  EXPECT_OPCHECK_OK(opNamed("opcheck_test::maybe_view"),
                    {IValue(turnout::transpose(sample(), 0, 1))});
  EXPECT_OPCHECK_OK(opNamed("opcheck_test::maybe_view"), {IValue(sample())});
}

TEST(OpCheck, ReportNamesEveryTest) {
  OpCheckReport r = opcheck(opNamed("opcheck_test::leaky"), {IValue(sample())});
  EXPECT_THAT(r.toString(),
              HasSubstr("opcheck opcheck_test::leaky: 1 of 4 tests passed\n"
                        "  test_schema: output 0 aliases"));
  EXPECT_EQ(r.firstFailure()->test, "test_schema");
}

TEST(OpCheck, BadCallsAreRefused) {
  OperatorHandle op = opNamed("opcheck_test::scale");
  EXPECT_THAT(errorOf([&] { opcheck(op, {IValue(sample())}); }),
              HasSubstr("opcheck(opcheck_test::scale): missing argument 's' "
                        "(position 2)"));
  EXPECT_THAT(errorOf([&] {
                opcheck(op, {IValue(sample()), IValue(1.0)},
                        OpCheckOptions{{"test_nothing"}});
              }),
              HasSubstr("unknown test 'test_nothing'"));
  EXPECT_THAT(errorOf([&] {
                opcheck(op, {IValue(sample())}, {{"t", IValue(1.0)}});
              }),
              HasSubstr("no argument named 't'"));
}

// ---- The reference operators pass --------------------------------------------------

TEST(OpCheck, ReferenceOperatorsPass) {
  const Tensor a = sample();
  const Tensor b = rangeOf({2, 3}, ScalarType::Float, 0.25, 0.5);
  const Tensor sq = rangeOf({3, 3}, ScalarType::Float, 0.1, -0.4);
  struct Case {
    const char* name;
    const char* overload;
    Stack args;
    std::vector<std::pair<std::string, IValue>> kwargs;
  };
  std::vector<Case> cases = {
      {"aten::add", "Tensor", {IValue(a), IValue(b)}, {}},
      {"aten::add", "Tensor", {IValue(a), IValue(rangeOf({3}))}, {{"alpha", IValue(2)}}},
      {"aten::mul", "Tensor", {IValue(a), IValue(b)}, {}},
      {"aten::mul", "Scalar", {IValue(a), IValue(3.0)}, {}},
      {"aten::sub", "Tensor", {IValue(a), IValue(b)}, {}},
      {"aten::div", "Tensor", {IValue(a), IValue(b)}, {}},
      {"aten::view", "", {IValue(a), IValue(std::vector<int64_t>{3, 2})}, {}},
      {"aten::transpose", "int", {IValue(a), IValue(0), IValue(1)}, {}},
      {"aten::add_", "Tensor", {IValue(a), IValue(b)}, {}},
      {"aten::mul_", "Tensor", {IValue(a), IValue(b)}, {}},
      {"aten::sum", "", {IValue(a)}, {}},
      {"aten::mean", "", {IValue(a)}, {}},
      {"aten::contiguous", "", {IValue(turnout::transpose(a, 0, 1))}, {}},
      {"aten::to", "dtype", {IValue(a), IValue(ScalarType::Double)}, {}},
      {"aten::sum", "dim_IntList", {IValue(a), IValue(std::vector<int64_t>{1})}, {}},
      {"aten::mm", "", {IValue(a), IValue(sq)}, {}},
      // Away from 0, where relu has no derivative.
      {"aten::relu", "", {IValue(rangeOf({2, 3}, ScalarType::Float, 0.5, -0.9))}, {}},
      {"aten::neg", "", {IValue(a)}, {}},
      {"aten::exp", "", {IValue(a)}, {}},
      {"aten::tanh", "", {IValue(a)}, {}},
      {"aten::unsqueeze", "", {IValue(a), IValue(0)}, {}},
      {"aten::clone", "", {IValue(a)}, {}},
      {"aten::matmul", "", {IValue(a), IValue(sq)}, {}},
      {"aten::add", "out", {IValue(a), IValue(b)}, {{"out", IValue(turnout::clone(b))}}},
      {"aten::gt", "Tensor", {IValue(a), IValue(b)}, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.name) + "." + c.overload);
    EXPECT_OPCHECK_OK(opNamed(c.name, c.overload), c.args, c.kwargs);
  }
}

// ---- gradcheck ------------------------------------------------------------------------

TEST(Gradcheck, PassesOnRightGradientsAndReportsWrongOnes) {
  Tensor x = rangeOf({3}, ScalarType::Double, 0.3, -0.2);
  autograd::setRequiresGrad(x, true);
  auto tanh_fn = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{turnout::tanh(in[0])};
  };
  EXPECT_TRUE(autograd::gradcheck(tanh_fn, {x}).ok);
  EXPECT_FALSE(autograd::grad(x).defined());  // the caller's x is untouched

  Tensor w = rangeOf({3}, ScalarType::Double);
  autograd::setRequiresGrad(w, true);
  auto bad = opNamed("opcheck_test::scale_bad_grad")
                 .typed<Tensor(const Tensor&, double)>();
  auto fn = [&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{bad.call(in[0], 2.0)};
  };
  autograd::GradcheckResult r =
      autograd::gradcheck(fn, {w}, autograd::GradcheckOptions{}.raiseException(false));
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.message,
              HasSubstr("Jacobian mismatch for output 0 with respect to input "
                        "0: the largest difference is 1 (analytical 3, "
                        "numerical 2) at input element "));
  EXPECT_THAT(errorOf([&] { autograd::gradcheck(fn, {w}); }),
              HasSubstr("gradcheck: Jacobian mismatch"));
}

TEST(Gradcheck, RefusesInputsItCannotPerturb) {
  auto id = [](const std::vector<Tensor>& in) { return in; };
  EXPECT_THAT(errorOf([&] { autograd::gradcheck(id, {rangeOf({2}, ScalarType::Double)}); }),
              HasSubstr("expected at least one input tensor that requires grad"));
}

}  // namespace
}  // namespace turnout
