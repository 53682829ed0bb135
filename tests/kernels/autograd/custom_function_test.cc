// Function<T> and AutogradContext (kernels/autograd/custom_function.h): a
// library's own autograd kernels, checked against finite differences
// (autograd::gradcheck, through autograd_testing.h) and known formulas, with
// the rules on saved tensors, dirty and non-differentiable outputs,
// needs_input_grad, and the errors.
#include <cmath>
#include <string>
#include <vector>

#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/custom_function.h"
#include "kernels/autograd/engine.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/ops.h"
#include "tests/error_of.h"
#include "tests/kernels/autograd/autograd_testing.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace autograd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using turnout::testing::errorOf;
using turnout::testing::fnName;
using turnout::testing::gradcheck;
using turnout::testing::leaf;
using turnout::testing::randomOf;
using turnout::testing::tensorOf;
using turnout::testing::valuesOf;

// alpha * x * exp(y): two Tensor arguments and a double, saved tensors and a
// saved value.
struct MulExp : Function<MulExp> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& y,
                        double alpha) {
    Tensor e = turnout::exp(y);
    Tensor out = turnout::mul(turnout::mul(x, e), alpha);
    ctx->save_for_backward({x, e});
    ctx->saved_data["alpha"] = alpha;
    return out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list saved = ctx->get_saved_variables();
    const double alpha = ctx->saved_data["alpha"].toDouble();
    Tensor g = turnout::mul(grads[0], alpha);
    Tensor gx = turnout::mul(g, saved[1]);
    Tensor gy = turnout::mul(turnout::mul(g, saved[0]), saved[1]);
    return {gx, gy, Tensor()};
  }
};

TEST(CustomFunction, GradientsMatchFiniteDifferences) {
  EXPECT_TRUE(gradcheck(
      [](const std::vector<Tensor>& in) {
        return MulExp::apply(in[0], in[1], 1.5);
      },
      {randomOf({2, 3}), randomOf({2, 3}, 0.05, 0.0, 2)}));
  // Broadcast: y's gradient is summed to its shape by the node.
  EXPECT_TRUE(gradcheck(
      [](const std::vector<Tensor>& in) {
        return turnout::mul(MulExp::apply(in[0], in[1], -0.5), in[0]);
      },
      {randomOf({2, 3}), randomOf({3}, 0.05, 0.0, 3)}));
}

TEST(CustomFunction, ForwardValuesAndNodeName) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = tensorOf({0, 1}, {2});
  Tensor out = MulExp::apply(x, y, 2.0);
  EXPECT_EQ(fnName(out), "MulExpBackward");
  std::vector<double> v = valuesOf(out);
  EXPECT_NEAR(v[0], 2.0, 1e-6);
  EXPECT_NEAR(v[1], 4.0 * std::exp(1.0), 1e-5);
  backward({turnout::sum(out)});
  std::vector<double> g = valuesOf(grad(x));
  EXPECT_NEAR(g[0], 2.0, 1e-6);
  EXPECT_NEAR(g[1], 2.0 * std::exp(1.0), 1e-5);
}

TEST(CustomFunction, NothingIsRecordedWithoutGradOrGradMode) {
  Tensor x = tensorOf({1, 2}, {2});
  Tensor out = MulExp::apply(x, x, 1.0);
  EXPECT_FALSE(requiresGrad(out));
  Tensor w = leaf({1, 2}, {2});
  NoGradGuard no_grad;
  EXPECT_FALSE(requiresGrad(MulExp::apply(w, x, 1.0)));
}

// Forward runs with grad mode off: what it calls records nothing.
struct Probe : Function<Probe> {
  static Tensor forward(AutogradContext*, const Tensor& x) {
    EXPECT_FALSE(GradMode::is_enabled());
    Tensor y = turnout::mul(x, 3);
    EXPECT_FALSE(requiresGrad(y));
    return y;
  }
  static variable_list backward(AutogradContext*, variable_list grads) {
    return {turnout::mul(grads[0], 3)};
  }
};

TEST(CustomFunction, ForwardRunsWithGradModeOff) {
  Tensor x = leaf({1}, {1});
  Tensor y = Probe::apply(x);
  EXPECT_TRUE(GradMode::is_enabled());
  EXPECT_EQ(fnName(y), "ProbeBackward");
}

// An operator of a library with its autograd kernel written with
// Function<T>, which redispatches below autograd: what a C++ operator
// library does without autograd::detail.
Tensor cubeCpu(const Tensor& x) { return turnout::mul(turnout::mul(x, x), x); }

struct Cube : Function<Cube> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x) {
    static const auto op = Dispatcher::singleton()
                               .findSchemaOrThrow("cfn_test::cube", "")
                               .typed<Tensor(const Tensor&)>();
    ctx->save_for_backward({x});
    AutoDispatchBelowAutograd below;
    return op.call(x);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    Tensor x = ctx->get_saved_variables()[0];
    return {turnout::mul(turnout::mul(grads[0], turnout::mul(x, x)), 3)};
  }
};

Tensor cubeAutograd(const Tensor& x) { return Cube::apply(x); }

TURNOUT_LIBRARY(cfn_test, m) { m.def("cube(Tensor x) -> Tensor"); }
TURNOUT_LIBRARY_IMPL(cfn_test, CPU, m) { m.impl("cube", TURNOUT_FN(cubeCpu)); }
TURNOUT_LIBRARY_IMPL(cfn_test, Autograd, m) {
  m.impl("cube", TURNOUT_FN(cubeAutograd));
}

Tensor callCube(const Tensor& x) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("cfn_test::cube", "")
                             .typed<Tensor(const Tensor&)>();
  return op.call(x);
}

TEST(CustomFunction, AnOperatorsAutogradKernel) {
  EXPECT_TRUE(gradcheck(
      [](const std::vector<Tensor>& in) { return callCube(in[0]); },
      {randomOf({4})}));
  Tensor x = leaf({2}, {1});
  Tensor y = callCube(x);
  EXPECT_EQ(fnName(y), "CubeBackward");
  backward({y});
  EXPECT_THAT(valuesOf(grad(x)), ElementsAre(12));
}

TEST(CustomFunction, SavedTensorModifiedInPlaceFailsInBackward) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y0 = turnout::mul(x, 1);  // not a leaf: may be modified in place
  Tensor out = MulExp::apply(x, y0, 1.0);
  EXPECT_EQ(errorOf([&] { backward({turnout::sum(out)}); }), "(no error)");
  Tensor x2 = turnout::mul(x, 1);
  Tensor out2 = MulExp::apply(x2, y0, 1.0);
  turnout::add_(x2, 1);
  std::string e = errorOf([&] { backward({turnout::sum(out2)}); });
  EXPECT_THAT(e, HasSubstr("modified by an inplace operation"));
  EXPECT_THAT(e, HasSubstr("MulExpBackward"));
  EXPECT_THAT(e, HasSubstr("is at version 1; expected version 0"));
}

// Doubles x in place and returns it (mark_dirty).
struct DoubleInPlace : Function<DoubleInPlace> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    turnout::mul_(x, 2);
    ctx->mark_dirty({x});
    return x;
  }
  static variable_list backward(AutogradContext*, variable_list grads) {
    return {turnout::mul(grads[0], 2)};
  }
};

TEST(CustomFunction, MarkDirtyRebasesTheInputsHistory) {
  Tensor a = leaf({1, 2}, {2});
  Tensor y = turnout::mul(a, 3);
  const uint32_t before = y.unsafeGetTensorImpl()->version();
  Tensor out = DoubleInPlace::apply(y);
  EXPECT_TRUE(out.is_same(y));
  EXPECT_EQ(fnName(y), "DoubleInPlaceBackward");
  // One bump by mul_, one by mark_dirty (as torch).
  EXPECT_EQ(y.unsafeGetTensorImpl()->version(), before + 2);
  EXPECT_THAT(valuesOf(y), ElementsAre(6, 12));
  backward({turnout::sum(y)});
  EXPECT_THAT(valuesOf(grad(a)), ElementsAre(6, 6));
}

TEST(CustomFunction, MarkDirtyOnALeafThatRequiresGradIsAnError) {
  Tensor a = leaf({1, 2}, {2});
  EXPECT_THAT(errorOf([&] { DoubleInPlace::apply(a); }),
              HasSubstr("a leaf Variable that requires grad is being used in "
                        "an in-place operation"));
  EXPECT_TRUE(isLeaf(a));
}

struct DirtyNotReturned : Function<DirtyNotReturned> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x) {
    ctx->mark_dirty({x});
    return turnout::mul(x, 2);
  }
  static variable_list backward(AutogradContext*, variable_list grads) {
    return grads;
  }
};

TEST(CustomFunction, DirtyTensorsMustBeReturned) {
  Tensor x = leaf({1}, {1});
  EXPECT_THAT(errorOf([&] { DirtyNotReturned::apply(turnout::mul(x, 1)); }),
              HasSubstr("DirtyNotReturnedBackward: a tensor marked dirty "
                        "(mark_dirty) was not returned by forward"));
}

// Returns (x * 2, x > 0 as a Float mask, indices as Long); the mask is
// marked non-differentiable, the Long output is so by its dtype. Records
// what backward received.
std::vector<bool> g_received_defined;
struct WithMask : Function<WithMask> {
  static variable_list forward(AutogradContext* ctx, const Tensor& x,
                               bool materialize) {
    Tensor mask = turnout::to(turnout::gt(x, 0), ScalarType::Float);
    ctx->mark_non_differentiable({mask});
    ctx->set_materialize_grads(materialize);
    return {turnout::mul(x, 2), mask,
            turnout::to(turnout::gt(x, 0), ScalarType::Long)};
  }
  static variable_list backward(AutogradContext*, variable_list grads) {
    g_received_defined.clear();
    for (const Tensor& g : grads) g_received_defined.push_back(g.defined());
    if (grads[1].defined()) {
      EXPECT_THAT(valuesOf(grads[1]), ElementsAre(0, 0));
    }
    return {turnout::mul(grads[0], 2), Tensor()};
  }
};

TEST(CustomFunction, NonDifferentiableOutputs) {
  for (bool materialize : {true, false}) {
    SCOPED_TRACE(materialize);
    Tensor x = leaf({-1, 2}, {2});
    variable_list out = WithMask::apply(x, materialize);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(fnName(out[0]), "WithMaskBackward");
    EXPECT_FALSE(requiresGrad(out[1]));
    EXPECT_FALSE(requiresGrad(out[2]));
    EXPECT_THAT(valuesOf(out[1]), ElementsAre(0, 1));
    backward({turnout::sum(out[0])});
    EXPECT_THAT(valuesOf(grad(x)), ElementsAre(2, 2));
    EXPECT_THAT(g_received_defined,
                ElementsAre(true, materialize, materialize));
  }
}

// needs_input_grad, read in forward and in backward.
std::vector<bool> g_needs_forward, g_needs_backward;
struct Needs : Function<Needs> {
  static Tensor forward(AutogradContext* ctx, const Tensor& a, int64_t k,
                        const Tensor& b) {
    g_needs_forward = {ctx->needs_input_grad(0), ctx->needs_input_grad(1)};
    return turnout::add(turnout::mul(a, k), b);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    g_needs_backward = {ctx->needs_input_grad(0), ctx->needs_input_grad(1)};
    Tensor ga = ctx->needs_input_grad(0) ? turnout::mul(grads[0], 2) : Tensor();
    Tensor gb = ctx->needs_input_grad(1) ? grads[0] : Tensor();
    return {ga, Tensor(), gb};
  }
};

TEST(CustomFunction, NeedsInputGradCountsTensorArguments) {
  Tensor a = tensorOf({1}, {1});
  Tensor b = leaf({1}, {1});
  Tensor out = Needs::apply(a, int64_t{2}, b);
  EXPECT_THAT(g_needs_forward, ElementsAre(false, true));
  backward({out});
  EXPECT_THAT(g_needs_backward, ElementsAre(false, true));
  EXPECT_FALSE(grad(a).defined());
  EXPECT_THAT(valuesOf(grad(b)), ElementsAre(1));
  // Not recording: nothing needs a gradient.
  Needs::apply(a, int64_t{2}, a);
  EXPECT_THAT(g_needs_forward, ElementsAre(false, false));
}

struct NeedsOutOfRange : Function<NeedsOutOfRange> {
  static Tensor forward(AutogradContext* ctx, const Tensor& a, double) {
    ctx->needs_input_grad(1);
    return a;
  }
  static variable_list backward(AutogradContext*, variable_list grads) {
    return grads;
  }
};

TEST(CustomFunction, NeedsInputGradOutOfRange) {
  Tensor a = leaf({1}, {1});
  Error e(ErrorKind::Internal, "");
  try {
    NeedsOutOfRange::apply(a, 1.0);
    FAIL() << "no error";
  } catch (const Error& caught) {
    e = caught;
  }
  EXPECT_EQ(e.kind(), ErrorKind::Index);
  EXPECT_THAT(e.message(),
              HasSubstr("NeedsOutOfRangeBackward: needs_input_grad(1) is out "
                        "of range: forward has 1 Tensor argument"));
}

TEST(CustomFunction, ApplyTwiceAndChained) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = tensorOf({0, 0}, {2});
  // Two independent nodes over the same inputs; their gradients add up.
  Tensor s = turnout::add(MulExp::apply(x, y, 1.0), MulExp::apply(x, y, 2.0));
  backward({turnout::sum(s)});
  EXPECT_THAT(valuesOf(grad(x)), ElementsAre(3, 3));
  // The output of one apply as the input of the next.
  setGrad(x, Tensor());
  Tensor z = Probe::apply(Probe::apply(x));
  EXPECT_THAT(valuesOf(z), ElementsAre(9, 18));
  backward({turnout::sum(z)});
  EXPECT_THAT(valuesOf(grad(x)), ElementsAre(9, 9));
  // A second backward through the same graph runs it again, as for the
  // built-in operators.
  backward({turnout::sum(z)});
  EXPECT_THAT(valuesOf(grad(x)), ElementsAre(18, 18));
}

// Returns its input unchanged: the output is a new tensor over the same
// memory, with this node as grad_fn; the input keeps its own history.
struct Identity : Function<Identity> {
  static Tensor forward(AutogradContext*, const Tensor& x) { return x; }
  static variable_list backward(AutogradContext*, variable_list grads) {
    return grads;
  }
};

TEST(CustomFunction, AnInputReturnedUnchangedKeepsItsHistory) {
  Tensor x = leaf({1, 2}, {2});
  Tensor out = Identity::apply(x);
  EXPECT_FALSE(out.is_same(x));
  EXPECT_EQ(out.data_ptr(), x.data_ptr());
  EXPECT_TRUE(isLeaf(x));
  EXPECT_EQ(fnName(out), "IdentityBackward");
  backward({turnout::sum(turnout::mul(out, 5))});
  EXPECT_THAT(valuesOf(grad(x)), ElementsAre(5, 5));
}

// Backward that returns the wrong things.
int g_bad_kind = 0;
struct Bad : Function<Bad> {
  static Tensor forward(AutogradContext*, const Tensor& x, double) {
    return turnout::mul(x, 2);
  }
  static variable_list backward(AutogradContext*, variable_list grads) {
    switch (g_bad_kind) {
      case 0:
        return {grads[0]};  // one for two arguments
      case 1:
        return {grads[0], grads[0]};  // a gradient for the double
      case 2:
        return {tensorOf({1, 2, 3}, {3}), Tensor()};  // wrong shape
      case 3:
        return {grads[0], Tensor(), Tensor()};  // extra undefined: fine
      default:
        return {grads[0], Tensor(), grads[0]};  // extra defined
    }
  }
};

TEST(CustomFunction, BackwardResultsAreChecked) {
  struct Case {
    int kind;
    std::string error;
  };
  const std::vector<Case> cases = {
      {0, "BadBackward: backward returned 1 gradient, but forward took 2 "
          "arguments; return one gradient per argument of forward"},
      {1, "BadBackward: backward returned a gradient for argument 1 of "
          "forward, which is not a Tensor"},
      {2, "BadBackward: backward returned a gradient of shape [3] for "
          "argument 0 of forward, whose shape is [2]"},
      {3, "(no error)"},
      {4, "BadBackward: backward returned 3 gradients, but forward took 2 "
          "arguments"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind);
    g_bad_kind = c.kind;
    Tensor x = leaf({1, 2}, {2});
    Tensor out = Bad::apply(x, 1.0);
    EXPECT_THAT(errorOf([&] { backward({turnout::sum(out)}); }),
                HasSubstr(c.error));
  }
}

struct SavedTooEarly : Function<SavedTooEarly> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x) {
    ctx->save_for_backward({x});
    ctx->get_saved_variables();
    return x;
  }
  static variable_list backward(AutogradContext*, variable_list grads) {
    return grads;
  }
};

TEST(CustomFunction, SavedVariablesAreReadyAfterForward) {
  Tensor x = leaf({1}, {1});
  EXPECT_THAT(errorOf([&] { SavedTooEarly::apply(x); }),
              HasSubstr("SavedTooEarlyBackward: get_saved_variables() was "
                        "called in forward"));
}

// Saving the output does not keep the graph alive in a cycle, and gives the
// output's values back in backward.
struct ExpSavesOutput : Function<ExpSavesOutput> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x) {
    Tensor y = turnout::exp(x);
    ctx->save_for_backward({y});
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {turnout::mul(grads[0], ctx->get_saved_variables()[0])};
  }
};

TEST(CustomFunction, SavingAnOutput) {
  EXPECT_TRUE(gradcheck(
      [](const std::vector<Tensor>& in) { return ExpSavesOutput::apply(in[0]); },
      {randomOf({3})}));
  std::weak_ptr<Node> node;
  {
    Tensor x = leaf({1}, {1});
    Tensor y = ExpSavesOutput::apply(x);
    node = gradFn(y);
    EXPECT_FALSE(node.expired());
  }
  EXPECT_TRUE(node.expired());  // freed with its output: no cycle
}

}  // namespace
}  // namespace autograd
}  // namespace turnout
