// What the Autograd kernels record, and the rules around them: grad mode,
// accumulation into leaves, broadcasting, dtypes, in-place operations and
// the version counter, views, detach. Gradient values of every operator are
// checked numerically in gradcheck_test.cc.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "dispatcher/dispatcher.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/engine.h"
#include "kernels/autograd/function_node.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/autograd/saved_variable.h"
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
using turnout::testing::leaf;
using turnout::testing::rangeOf;
using turnout::testing::sizesOf;
using turnout::testing::tensorOf;
using turnout::testing::valuesOf;

TEST(AutogradKernels, RecordOnlyWhenAnInputRequiresGrad) {
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor c = tensorOf({4, 5, 6}, {3});
  EXPECT_EQ(fnName(turnout::mul(x, c)), "MulBackward0");
  EXPECT_EQ(fnName(turnout::mul(c, x)), "MulBackward0");
  EXPECT_EQ(fnName(turnout::sum(x)), "SumBackward0");
  EXPECT_EQ(fnName(turnout::relu(x)), "ReluBackward0");
  Tensor plain = turnout::mul(c, c);
  EXPECT_FALSE(requiresGrad(plain));
  EXPECT_EQ(getAutogradMeta(plain), nullptr);  // no state at all
  // Outputs that are not differentiable are not tracked.
  EXPECT_FALSE(requiresGrad(turnout::gt(x, 1)));
  EXPECT_FALSE(requiresGrad(turnout::eq(x, c)));
  EXPECT_FALSE(requiresGrad(turnout::argmax(x)));
}

TEST(AutogradKernels, NoGradGuardRecordsNothing) {
  Tensor x = leaf({1, 2}, {2});
  {
    NoGradGuard no_grad;
    Tensor y = turnout::exp(turnout::mul(x, 2));
    EXPECT_FALSE(requiresGrad(y));
    EXPECT_EQ(fnName(y), "(none)");
  }
  EXPECT_TRUE(requiresGrad(turnout::exp(x)));
}

TEST(AutogradKernels, GradientsAccumulateIntoLeavesAcrossBackwardCalls) {
  Tensor x = leaf({1, 2, 3}, {3});
  backward({turnout::sum(turnout::mul(x, x))});
  EXPECT_THAT(valuesOf(grad(x)), ElementsAre(2, 4, 6));
  backward({turnout::sum(turnout::mul(x, x))});
  EXPECT_THAT(valuesOf(grad(x)), ElementsAre(4, 8, 12));
  setGrad(x, Tensor());
  backward({turnout::sum(x)});
  EXPECT_THAT(valuesOf(grad(x)), ElementsAre(1, 1, 1));
}

TEST(AutogradKernels, BroadcastGradientsAreSummedToTheInputShape) {
  Tensor a = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = leaf({10, 20, 30}, {3});
  Tensor s = leaf({7}, {});
  backward({turnout::sum(turnout::mul(turnout::add(a, b), s))});
  EXPECT_EQ(sizesOf(grad(b)), (std::vector<int64_t>{3}));
  EXPECT_THAT(valuesOf(grad(b)), ElementsAre(14, 14, 14));
  EXPECT_EQ(sizesOf(grad(s)), (std::vector<int64_t>{}));
  EXPECT_THAT(valuesOf(grad(s)), ElementsAre(21 + 120));
  EXPECT_THAT(valuesOf(grad(a)), ElementsAre(7, 7, 7, 7, 7, 7));
}

TEST(AutogradKernels, GradientsHaveTheirInputsDtype) {
  Tensor x = leaf({1, 2}, {2}, ScalarType::Float);
  Tensor w = leaf({3, 4}, {2}, ScalarType::Double);
  Tensor y = turnout::mul(x, w);
  EXPECT_EQ(y.scalar_type(), ScalarType::Double);
  backward({turnout::sum(y)});
  EXPECT_EQ(grad(x).scalar_type(), ScalarType::Float);
  EXPECT_EQ(grad(w).scalar_type(), ScalarType::Double);
  EXPECT_THAT(valuesOf(grad(x)), ElementsAre(3, 4));
}

TEST(AutogradKernels, InplaceOnALeafThatRequiresGradFailsAndChangesNothing) {
  Tensor x = leaf({1, 2}, {2});
  const uint32_t v0 = x.unsafeGetTensorImpl()->version();
  EXPECT_EQ(errorOf([&] { turnout::add_(x, Scalar(1)); }),
            "add_: a leaf Variable that requires grad is being used in an "
            "in-place operation.");
  EXPECT_THAT(errorOf([&] { turnout::mul_(x, tensorOf({2, 2}, {2})); }),
              HasSubstr("mul_: a leaf Variable that requires grad"));
  EXPECT_THAT(errorOf([&] { turnout::copy_(x, tensorOf({2, 2}, {2})); }),
              HasSubstr("copy_: a leaf Variable that requires grad"));
  EXPECT_THAT(valuesOf(x), ElementsAre(1, 2));
  EXPECT_EQ(x.unsafeGetTensorImpl()->version(), v0);
  EXPECT_TRUE(isLeaf(x));
}

TEST(AutogradKernels, InplaceOnALeafUnderNoGradIsAllowedAndBumpsTheVersion) {
  // An optimizer step: w -= lr * grad.
  Tensor w = leaf({1, 2}, {2});
  backward({turnout::sum(turnout::mul(w, w))});
  const uint32_t v0 = w.unsafeGetTensorImpl()->version();
  {
    NoGradGuard no_grad;
    turnout::sub_(w, grad(w), 0.5);
  }
  EXPECT_THAT(valuesOf(w), ElementsAre(0, 0));
  EXPECT_EQ(w.unsafeGetTensorImpl()->version(), v0 + 1);
  EXPECT_TRUE(isLeaf(w));
  EXPECT_TRUE(requiresGrad(w));
}

TEST(AutogradKernels, InplaceOnANonLeafRebasesItsHistory) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = turnout::mul(x, 2);
  const uint32_t v0 = y.unsafeGetTensorImpl()->version();
  turnout::add_(y, Scalar(1));
  EXPECT_EQ(y.unsafeGetTensorImpl()->version(), v0 + 1);
  EXPECT_EQ(fnName(y), "AddBackward1");
  turnout::mul_(y, y);  // y = (2x + 1)^2, and y saved itself before the write
  EXPECT_EQ(fnName(y), "MulBackward0");
  EXPECT_THAT(errorOf([&] { backward({turnout::sum(y)}); }),
              HasSubstr("which is saved by MulBackward0, is at version 2; "
                        "expected version 1 instead"));
  Tensor z = turnout::mul(x, 2);
  turnout::add_(z, Scalar(1));
  turnout::mul_(z, z);
  Tensor q = turnout::mul(x, 2);
  turnout::add_(q, Scalar(1));
  turnout::mul_(q, Scalar(3));  // q = 3(2x + 1): dq/dx = 6
  backward({turnout::sum(q)});
  EXPECT_THAT(valuesOf(grad(x)), ElementsAre(6, 6));
}

TEST(AutogradKernels, InplaceWithAnOperandThatRequiresGradMakesSelfANonLeaf) {
  Tensor w = leaf({2, 3}, {2});
  Tensor buf = tensorOf({1, 1}, {2});
  turnout::mul_(buf, w);
  EXPECT_FALSE(isLeaf(buf));
  backward({turnout::sum(buf)});
  EXPECT_THAT(valuesOf(grad(w)), ElementsAre(1, 1));
}

TEST(AutogradKernels, BackwardThroughAModifiedSavedTensorFailsClearly) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = turnout::exp(x);  // saves its output
  Tensor loss = turnout::sum(y);
  turnout::mul_(y, Scalar(2));
  EXPECT_EQ(errorOf([&] { backward({loss}); }),
            "one of the variables needed for gradient computation has been "
            "modified by an inplace operation: [Float [2]], which is saved by "
            "ExpBackward0, is at version 1; expected version 0 instead. Hint: "
            "make the in-place operation out-of-place, or clone() the tensor "
            "before modifying it.");

  // A saved tensor that does not require grad is checked too.
  Tensor c = tensorOf({3, 4}, {2});
  Tensor z = turnout::sum(turnout::mul(x, c));
  turnout::add_(c, Scalar(1));
  EXPECT_THAT(errorOf([&] { backward({z}); }),
              HasSubstr("which is saved by MulBackward0, is at version 1"));
}

TEST(AutogradKernels, ViewsGetAGradFnAndPassGradientsToTheirBase) {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor v = turnout::select(x, 0, 1);
  EXPECT_EQ(fnName(v), "SelectBackward0");
  EXPECT_EQ(v.storage().data(), x.storage().data());  // still a view
  Tensor tv = turnout::t(x);
  EXPECT_EQ(fnName(tv), "TBackward0");
  EXPECT_EQ(fnName(turnout::alias(x)), "AliasBackward0");
  backward({turnout::sum(turnout::mul(v, v))});
  EXPECT_THAT(valuesOf(grad(x)), ElementsAre(0, 0, 0, 8, 10, 12));
}

TEST(AutogradKernels, InplaceThroughAViewOfATensorThatRequiresGradIsRefused) {
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor y = turnout::mul(x, 1);
  Tensor v = turnout::slice(y, 0, 0, 2, 1);
  EXPECT_THAT(errorOf([&] { turnout::add_(v, Scalar(1)); }),
              HasSubstr("add_: in-place modification of a view (made by "
                        "SliceBackward0) of a tensor that requires grad is "
                        "not supported"));
  EXPECT_THAT(valuesOf(y), ElementsAre(1, 2, 3));
}

TEST(AutogradKernels, AViewUsedAfterItsBaseWasModifiedInPlaceIsRefused) {
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor y = turnout::mul(x, 1);
  Tensor v = turnout::slice(y, 0, 0, 2, 1);
  turnout::mul_(y, Scalar(3));
  EXPECT_THAT(errorOf([&] { turnout::sum(v); }),
              HasSubstr("sum: an input is a view (made by SliceBackward0) "
                        "whose memory was modified in place after the view "
                        "was taken (version 0 then, 1 now)"));
  // Taken again, the view is fine.
  Tensor v2 = turnout::slice(y, 0, 0, 2, 1);
  backward({turnout::sum(v2)});
  EXPECT_THAT(valuesOf(grad(x)), ElementsAre(3, 3, 0));
}

TEST(AutogradKernels, DetachCutsTheHistoryAndSharesTheVersionCounter) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = turnout::exp(x);
  Tensor d = turnout::detach(y);
  EXPECT_FALSE(requiresGrad(d));
  EXPECT_TRUE(isLeaf(d));
  EXPECT_EQ(d.storage().data(), y.storage().data());
  EXPECT_FALSE(requiresGrad(turnout::mul(d, 2)));
  Tensor loss = turnout::sum(y);
  turnout::add_(d, Scalar(1));  // writes y's memory, which ExpBackward0 saved
  EXPECT_THAT(errorOf([&] { backward({loss}); }),
              HasSubstr("saved by ExpBackward0, is at version 1"));
}

TEST(AutogradKernels, SumToSizeNamesBothShapesOnBadInput) {
  EXPECT_EQ(errorOf([] { sumToSize(rangeOf({2, 3}), {4}); }),
            "sumToSize: a gradient of shape [2, 3] cannot be summed to shape "
            "[4] (the input's shape must broadcast to the gradient's)");
  EXPECT_THAT(valuesOf(sumToSize(rangeOf({2, 3}), {2, 1})), ElementsAre(3, 12));
  EXPECT_THAT(valuesOf(sumToSize(rangeOf({2, 3}), {})), ElementsAre(15));
}

TEST(AutogradKernels, MetaTensorsGetGradientsOfTheRightShape) {
  Tensor x = testing::metaTensor({4, 3});
  Tensor w = testing::metaTensor({5, 3});
  Tensor b = testing::metaTensor({5});
  setRequiresGrad(w, true);
  setRequiresGrad(b, true);
  Tensor y = turnout::linear(x, w, b);
  backward({turnout::sum(turnout::relu(y))});
  EXPECT_EQ(sizesOf(grad(w)), (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(sizesOf(grad(b)), (std::vector<int64_t>{5}));
  EXPECT_TRUE(grad(w).is_meta());
}

TEST(AutogradKernels, TwoLayerPerceptronGradients) {
  // loss = sum(relu(x W1^T + b1) W2^T): checked against the chain rule by
  // hand on a 1-sample, 2-2-1 network.
  Tensor x = tensorOf({1, 2}, {1, 2});
  Tensor w1 = leaf({1, -1, 0.5, 0.5}, {2, 2});
  Tensor b1 = leaf({0, 0}, {2});
  Tensor w2 = leaf({2, 3}, {1, 2});
  Tensor h = turnout::relu(turnout::linear(x, w1, b1));  // [-1, 1.5] -> [0, 1.5]
  Tensor loss = turnout::sum(turnout::linear(h, w2));
  backward({loss});
  EXPECT_THAT(valuesOf(grad(w2)), ElementsAre(0, 1.5));
  EXPECT_THAT(valuesOf(grad(b1)), ElementsAre(0, 3));
  EXPECT_THAT(valuesOf(grad(w1)), ElementsAre(0, 0, 3, 6));
}

TEST(AutogradKernels, ASavedOutputComesBackWithItsNodeUnderCreateGraph) {
  // exp' = exp is computed from the saved result: with create_graph the
  // first gradient must itself be differentiable (d2/dx2 exp = exp).
  Tensor x = leaf({0.5, -1, 2}, {3});
  Tensor y = turnout::exp(x);
  std::weak_ptr<Node> fn = gradFn(y);
  // Without create_graph the saved result comes back without history.
  Tensor plain =
      grad({turnout::sum(y)}, {}, {x}, false, /*retain_graph=*/true)[0];
  EXPECT_FALSE(requiresGrad(plain));
  Tensor g = grad({turnout::sum(y)}, {}, {x}, /*create_graph=*/true)[0];
  EXPECT_TRUE(requiresGrad(g));
  Tensor g2 = grad({turnout::sum(g)}, {}, {x})[0];
  EXPECT_EQ(valuesOf(g2), valuesOf(turnout::exp(tensorOf({0.5, -1, 2}, {3}))));
  // Node -> saved output -> Node would be a cycle: the node goes with the
  // last tensor that reaches it.
  y = Tensor();
  EXPECT_FALSE(fn.expired());  // g's graph holds it
  g = Tensor();
  EXPECT_TRUE(fn.expired());
}

TEST(AutogradKernels, AnInplaceSavedOutputComesBackWithItsNewNode) {
  Tensor x = leaf({0.5, -1}, {2});
  Tensor y = turnout::mul(x, 1);
  Dispatcher::singleton()  // ExpBackward0 saves y after the write
      .findSchemaOrThrow("aten::exp_", "")
      .typed<Tensor&(Tensor&)>()
      .call(y);
  ASSERT_EQ(fnName(y), "ExpBackward0");
  Tensor g = grad({turnout::sum(y)}, {}, {x}, /*create_graph=*/true)[0];
  Tensor g2 = grad({turnout::sum(g)}, {}, {x})[0];
  EXPECT_EQ(valuesOf(g2), valuesOf(turnout::exp(tensorOf({0.5, -1}, {2}))));
}

TEST(AutogradKernels, TheGradientOfASelectIsDifferentiable) {
  // d/dx of sum(grad(x[1]^3)^2): 2 * 3x^2 * 6x at index 1 only.
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor y = turnout::pow(turnout::select(x, 0, 1), 3);
  Tensor g = grad({y}, {}, {x}, /*create_graph=*/true)[0];
  EXPECT_EQ(fnName(g), "SelectBackwardBackward0");
  Tensor g2 = grad({turnout::sum(turnout::mul(g, g))}, {}, {x})[0];
  EXPECT_THAT(valuesOf(g2), ElementsAre(0, 2 * 12 * 12, 0));
}

TEST(AutogradKernels, LiftFreshRecordsOverANonLeafAndRefusesALeaf) {
  const auto lift = Dispatcher::singleton()
                        .findSchemaOrThrow("aten::lift_fresh", "")
                        .typed<Tensor(const Tensor&)>();
  Tensor x = leaf({1, 2}, {2});
  Tensor z = turnout::mul(x, 2);
  Tensor y = lift.call(z);  // z itself, with a new grad_fn, as torch 1.13's
  EXPECT_EQ(y.unsafeGetTensorImpl(), z.unsafeGetTensorImpl());
  EXPECT_EQ(fnName(z), "LiftFreshBackward0");
  backward({turnout::sum(y)});
  EXPECT_THAT(valuesOf(grad(x)), ElementsAre(2, 2));
  // torch 1.13 would move the leaf into the graph (a cycle through its
  // AccumulateGrad, and a failing backward): refused, x left as it was.
  EXPECT_THAT(errorOf([&] { lift.call(x); }),
              HasSubstr("lift_fresh: the input is a leaf that requires grad"));
  EXPECT_TRUE(isLeaf(x));
  NoGradGuard no_grad;
  EXPECT_EQ(lift.call(x).unsafeGetTensorImpl(), x.unsafeGetTensorImpl());
}

// ---- The Python bindings' shallow-copy hook, view bases, set_data ---------

// Counts the copies asked of the hook; makes none (SavedVariable then makes
// its own), or makes them itself when `g_make` is set.
int g_hook_calls = 0;
bool g_make = false;
Tensor countingHook(const Tensor& t) {
  ++g_hook_calls;
  return g_make ? turnout::alias(t) : Tensor();
}
struct HookGuard {
  HookGuard() {
    g_hook_calls = 0;
    setPythonShallowCopyHook(&countingHook);
  }
  ~HookGuard() {
    setPythonShallowCopyHook(nullptr);
    g_make = false;
  }
};

TEST(SavedVariableHook, AskedOnlyForSavedOutputsWhenSavingAndUnpacking) {
  HookGuard guard;
  struct Case {
    const char* name;
    Tensor (*run)(const Tensor&);
    int calls;
  };
  const Case cases[] = {
      {"exp saves its output", [](const Tensor& x) { return turnout::exp(x); },
       1},
      {"tanh saves its output",
       [](const Tensor& x) { return turnout::tanh(x); }, 1},
      {"neg saves nothing", [](const Tensor& x) { return turnout::neg(x); }, 0},
      {"mul saves inputs", [](const Tensor& x) { return turnout::mul(x, x); },
       0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    g_hook_calls = 0;
    Tensor x = leaf({0.5, 1.0}, {2});
    Tensor y = c.run(x);
    EXPECT_EQ(g_hook_calls, c.calls);
  }
  // Nothing recorded: nothing saved.
  g_hook_calls = 0;
  turnout::exp(tensorOf({1, 2}, {2}));
  EXPECT_EQ(g_hook_calls, 0);
  // Backward unpacks the saved output once more.
  Tensor x = leaf({0.0, 1.0}, {2});
  Tensor y = turnout::exp(x);
  g_hook_calls = 0;
  backward({turnout::sum(y)});
  EXPECT_EQ(g_hook_calls, 1);
  EXPECT_THAT(valuesOf(grad(x)),
              ElementsAre(1.0, ::testing::DoubleNear(std::exp(1.0), 1e-6)));
}

TEST(SavedVariableHook, AHookCopyKeepsTheVersionCheck) {
  HookGuard guard;
  g_make = true;
  Tensor x = leaf({0.0, 1.0}, {2});
  Tensor y = turnout::exp(x);
  EXPECT_EQ(g_hook_calls, 1);
  turnout::add_(y, 1);  // after the save: backward must refuse
  EXPECT_THAT(errorOf([&] { backward({turnout::sum(y)}); }),
              HasSubstr("modified by an inplace operation"));
}

TEST(ViewBase, ViewsKeepTheirRootBaseOthersHaveNone) {
  for (bool requires : {false, true}) {
    SCOPED_TRACE(requires ? "requires grad" : "plain");
    Tensor x = tensorOf({1, 2, 3, 4}, {2, 2});
    if (requires) setRequiresGrad(x, true);
    const int64_t flat[] = {4};
    Tensor v = turnout::view(x, flat);
    Tensor vv = turnout::select(v, 0, 1);
    EXPECT_EQ(viewBase(v).unsafeGetTensorImpl(), x.unsafeGetTensorImpl());
    EXPECT_EQ(viewBase(vv).unsafeGetTensorImpl(), x.unsafeGetTensorImpl());
    EXPECT_FALSE(viewBase(x).defined());
    EXPECT_FALSE(viewBase(turnout::detach(v)).defined());
    EXPECT_FALSE(viewBase(turnout::mul(v, 2)).defined());
  }
}

TEST(SetData, TakesTheMemoryKeepsTheIdentity) {
  Tensor x = leaf({1, 2, 3}, {3});
  TensorImpl* impl = x.unsafeGetTensorImpl();
  setGrad(x, tensorOf({5, 5, 5}, {3}));
  turnout::add_(turnout::detach(x), 1);  // x's version: 1
  Tensor value = tensorOf({7, 8}, {2});
  turnout::add_(value, 0);  // value's version: 1
  turnout::add_(value, 0);  // 2
  setData(x, value);
  EXPECT_EQ(x.unsafeGetTensorImpl(), impl);
  EXPECT_THAT(sizesOf(x), ElementsAre(2));
  EXPECT_THAT(valuesOf(x), ElementsAre(7, 8));
  EXPECT_TRUE(requiresGrad(x));
  EXPECT_THAT(valuesOf(grad(x)), ElementsAre(5, 5, 5));  // kept, as torch's
  EXPECT_EQ(x.unsafeGetTensorImpl()->version(), 1u);  // its own counter
  EXPECT_EQ(x.data_ptr(), value.data_ptr());          // shared memory
}

TEST(SetData, ErrorsChangeNothing) {
  struct Case {
    const char* name;
    Tensor value;
    const char* message;
  };
  const Case cases[] = {
      {"integer value for a tensor requiring grad",
       turnout::arange(Scalar(3), TensorOptions(ScalarType::Long)),
       "must be floating point or complex dtype"},
      {"Meta value for a CPU tensor",
       turnout::zeros({2}, TensorOptions(ScalarType::Float)
                               .device(Device(DeviceType::Meta))),
       "incompatible tensor types"},
      {"undefined value", Tensor(), "value is undefined"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor x = leaf({1, 2, 3}, {3});
    EXPECT_THAT(errorOf([&] { setData(x, c.value); }), HasSubstr(c.message));
    EXPECT_THAT(sizesOf(x), ElementsAre(3));
    EXPECT_EQ(x.scalar_type(), ScalarType::Float);
    EXPECT_THAT(valuesOf(x), ElementsAre(1, 2, 3));
  }
}

}  // namespace
}  // namespace autograd
}  // namespace turnout
