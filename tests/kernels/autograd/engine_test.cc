// The autograd engine on hand-built graphs. The operator library's own
// autograd kernels come with the operators (autograd_kernels_test.cc); here
// the Nodes are written out. aten::add.Tensor and aten::ones_like, which the
// engine calls to sum and seed gradients, are the reference kernels.
#include "kernels/autograd/engine.h"

#include <string>
#include <thread>
#include <vector>

#include "dispatcher/core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/error_of.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/autograd/saved_variable.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace autograd {
namespace {

using ::testing::HasSubstr;

Tensor scalar(float v) {
  Tensor t = emptyTensor({}, ScalarType::Float, Device("cpu"));
  t.data_ptr<float>()[0] = v;
  return t;
}
float value(const Tensor& t) { return t.data_ptr<float>()[0]; }

// y = a * b for 1-element tensors: dy/da = b, dy/db = a.
struct MulBackward final : Node {
  MulBackward(const Tensor& a, const Tensor& b)
      : Node({gradientEdge(a), gradientEdge(b)}), a_(a), b_(b) {}
  variable_list apply(variable_list&& grads) override {
    float g = value(grads[0]);
    return {scalar(g * value(b_.unpack(this))), scalar(g * value(a_.unpack(this)))};
  }
  std::string name() const override { return "MulBackward0"; }
  SavedVariable a_, b_;
};

// y = a + b: passes the gradient to both.
struct AddBackward final : Node {
  AddBackward(const Tensor& a, const Tensor& b)
      : Node({gradientEdge(a), gradientEdge(b)}) {}
  variable_list apply(variable_list&& grads) override {
    return {grads[0], grads[0]};
  }
  std::string name() const override { return "AddBackward0"; }
};

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = scalar(value(a) * value(b));
  if (GradMode::is_enabled() && (requiresGrad(a) || requiresGrad(b))) {
    setHistory(out, std::make_shared<MulBackward>(a, b));
  }
  return out;
}
Tensor add(const Tensor& a, const Tensor& b) {
  Tensor out = scalar(value(a) + value(b));
  if (GradMode::is_enabled() && (requiresGrad(a) || requiresGrad(b))) {
    setHistory(out, std::make_shared<AddBackward>(a, b));
  }
  return out;
}

using testing::errorOf;

TEST(Engine, ProductRule) {
  Tensor x = scalar(3), w = scalar(4);
  setRequiresGrad(x, true);
  setRequiresGrad(w, true);
  Tensor y = mul(x, w);
  EXPECT_FALSE(isLeaf(y));
  EXPECT_EQ(gradFn(y)->name(), "MulBackward0");
  backward({y});
  EXPECT_EQ(value(grad(x)), 4);
  EXPECT_EQ(value(grad(w)), 3);
}

TEST(Engine, GradientsAccumulateAcrossCallsAndPaths) {
  Tensor x = scalar(2);
  setRequiresGrad(x, true);
  // z = x*x + x: dz/dx = 2x + 1 = 5, through a diamond.
  Tensor z = add(mul(x, x), x);
  backward({z});
  EXPECT_EQ(value(grad(x)), 5);
  Tensor z2 = add(mul(x, x), x);
  backward({z2});
  EXPECT_EQ(value(grad(x)), 10);
  setGrad(x, Tensor());
  EXPECT_FALSE(grad(x).defined());
}

TEST(Engine, GradReturnsInputGradientsAndLeavesDotGradAlone) {
  Tensor x = scalar(3), w = scalar(4), unused = scalar(1);
  setRequiresGrad(x, true);
  setRequiresGrad(w, true);
  setRequiresGrad(unused, true);
  Tensor z = mul(x, w);       // a non-leaf input: dy/dz = x = 3
  Tensor y = mul(z, x);       // y = x*x*w: dy/dx = 2xw = 24, dy/dw = 9
  variable_list g = grad({y}, {}, {x, w, z, unused});
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(value(g[0]), 24);
  EXPECT_EQ(value(g[1]), 9);
  EXPECT_EQ(value(g[2]), 3);
  EXPECT_FALSE(g[3].defined());  // not reached: no gradient
  EXPECT_FALSE(grad(x).defined());
  EXPECT_FALSE(grad(w).defined());
  // The graph is still there: backward() afterwards accumulates as usual.
  backward({y}, {scalar(0.5)});
  EXPECT_EQ(value(grad(x)), 12);
}

// Counts its runs: a node on no path to the requested inputs must not run.
struct CountingBackward final : Node {
  explicit CountingBackward(const Tensor& a, int* runs)
      : Node({gradientEdge(a)}), runs_(runs) {}
  variable_list apply(variable_list&& grads) override {
    ++*runs_;
    return {grads[0]};
  }
  std::string name() const override { return "CountingBackward"; }
  int* runs_;
};

TEST(Engine, BackwardWithInputsAccumulatesOnlyIntoThem) {
  Tensor x = scalar(3), w = scalar(4), unused = scalar(1);
  setRequiresGrad(x, true);
  setRequiresGrad(w, true);
  setRequiresGrad(unused, true);
  int runs = 0;
  Tensor wc = scalar(4);
  setHistory(wc, std::make_shared<CountingBackward>(w, &runs));
  Tensor z = mul(x, wc);  // a non-leaf input
  Tensor y = mul(z, x);   // y = x*x*w
  backward({y}, {}, /*retain_graph=*/true, /*create_graph=*/false, {x});
  EXPECT_EQ(value(grad(x)), 24);
  EXPECT_FALSE(grad(w).defined());
  EXPECT_EQ(runs, 0);  // w's branch leads to no input: pruned
  backward({y}, {}, true, false, {z, unused});
  EXPECT_EQ(value(grad(z)), 3);  // a non-leaf's .grad, and nothing past it
  EXPECT_EQ(value(grad(x)), 24);
  EXPECT_FALSE(grad(unused).defined());  // not reached
  EXPECT_EQ(runs, 0);
  backward({y}, {}, false, false, {w});
  EXPECT_EQ(value(grad(w)), 9);
  EXPECT_EQ(runs, 1);
  EXPECT_THAT(
      errorOf([&] { backward({mul(x, x)}, {}, false, false, {scalar(1)}); }),
      HasSubstr("element 0 of inputs does not require grad"));
}

TEST(Engine, PostHooksSeeAndReplaceANodesGradients) {
  Tensor x = scalar(3), w = scalar(4);
  setRequiresGrad(x, true);
  setRequiresGrad(w, true);
  Tensor y = mul(x, w);
  std::vector<float> seen;
  uint64_t look = gradFn(y)->addPostHook(
      [&](const variable_list& grad_inputs, const variable_list& grad_outputs) {
        seen = {value(grad_inputs[0]), value(grad_inputs[1]),
                value(grad_outputs[0])};
        return grad_inputs;
      });
  gradFn(y)->addPostHook([](const variable_list& gi, const variable_list&) {
    return variable_list{scalar(value(gi[0]) * 10), gi[1]};
  });
  backward({y}, {scalar(2)});
  EXPECT_EQ(seen, (std::vector<float>{8, 6, 2}));
  EXPECT_EQ(value(grad(x)), 80);  // replaced by the second hook
  EXPECT_EQ(value(grad(w)), 6);
  EXPECT_TRUE(gradFn(y)->removePostHook(look));
  EXPECT_FALSE(gradFn(y)->removePostHook(look));
  gradFn(y)->addPostHook([](const variable_list&, const variable_list&) {
    return variable_list{};
  });
  EXPECT_THAT(errorOf([&] { backward({y}); }),
              HasSubstr("a hook of MulBackward0 returned 0 gradients where "
                        "the node has 2 inputs"));
}

TEST(Engine, GradErrors) {
  Tensor x = scalar(3);
  setRequiresGrad(x, true);
  Tensor y = mul(x, x);
  EXPECT_THAT(errorOf([&] { grad({y}, {}, {scalar(1)}); }),
              HasSubstr("grad: element 0 of inputs does not require grad"));
  EXPECT_THAT(errorOf([&] { grad({scalar(1)}, {}, {x}); }),
              HasSubstr("element 0 of tensors does not require grad"));
}

TEST(Engine, ExplicitRootGradient) {
  Tensor x = scalar(2);
  setRequiresGrad(x, true);
  Tensor y = mul(x, scalar(5));
  backward({y}, {scalar(0.5)});
  EXPECT_EQ(value(grad(x)), 2.5);
}

TEST(Engine, NoGradRecordsNothingAndIsThreadLocal) {
  Tensor x = scalar(2);
  setRequiresGrad(x, true);
  {
    NoGradGuard guard;
    EXPECT_FALSE(GradMode::is_enabled());
    std::thread t([] { EXPECT_TRUE(GradMode::is_enabled()); });
    t.join();
    EXPECT_FALSE(requiresGrad(mul(x, x)));
  }
  EXPECT_TRUE(GradMode::is_enabled());
  EXPECT_TRUE(requiresGrad(mul(x, x)));
}

TEST(Engine, ModifiedSavedTensorFailsClearly) {
  Tensor x = scalar(3), w = scalar(4);
  setRequiresGrad(x, true);
  Tensor y = mul(x, w);
  w.unsafeGetTensorImpl()->bump_version();  // an in-place write to w
  EXPECT_THAT(errorOf([&] { backward({y}); }),
              HasSubstr("one of the variables needed for gradient computation "
                        "has been modified by an inplace operation: [Float []], "
                        "which is saved by MulBackward0, is at version 1; "
                        "expected version 0 instead."));
}

// backward(create_graph) warns once per process, after its roots are
// checked; grad() never warns; a throwing handler stops backward before any
// .grad changes.
TEST(Engine, CreateGraphWarnsOnceThroughItsHandler) {
  std::vector<std::string> seen;
  BackwardWarningHandler previous = setBackwardWarningHandler(
      [&seen](const std::string& text) { seen.push_back(text); });
  resetCreateGraphWarning();
  Tensor x = scalar(3);
  setRequiresGrad(x, true);
  grad({mul(x, x)}, {}, {x}, /*create_graph=*/true);
  backward({mul(x, x)});
  EXPECT_TRUE(seen.empty());
  Tensor plain = scalar(1);
  EXPECT_THAT(errorOf([&] { backward({plain}, {}, false, true); }),
              HasSubstr("does not require grad"));
  EXPECT_TRUE(seen.empty());  // refused before the warning
  Tensor pair = emptyTensor({2}, ScalarType::Float, Device("cpu"));
  setRequiresGrad(pair, true);
  EXPECT_THAT(errorOf([&] {
                backward({pair}, {emptyTensor({3}, ScalarType::Float, Device("cpu"))},
                         false, true);
              }),
              HasSubstr("Mismatch in shape: the gradient given for output 0 "
                        "has shape [3] but output 0 has shape [2]"));
  EXPECT_TRUE(seen.empty());
  backward({mul(x, x)}, {}, false, /*create_graph=*/true, {x});
  backward({mul(x, x)}, {}, false, /*create_graph=*/true);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_THAT(seen[0], HasSubstr("reference cycle"));
  EXPECT_THAT(seen[0], HasSubstr("turnout.autograd.grad"));

  resetCreateGraphWarning();
  setGrad(x, Tensor());
  setBackwardWarningHandler([](const std::string& text) {
    throw Error(ErrorKind::InvalidArgument, "as error: " + text);
  });
  EXPECT_THAT(errorOf([&] { backward({mul(x, x)}, {}, false, true); }),
              HasSubstr("as error: backward(create_graph=True)"));
  EXPECT_FALSE(grad(x).defined());
  setBackwardWarningHandler(std::move(previous));
}

TEST(Engine, Errors) {
  Tensor x = scalar(1);
  EXPECT_EQ(errorOf([&] { backward({x}); }),
            "element 0 of tensors does not require grad and does not have a "
            "grad_fn");
  Tensor v = emptyTensor({2}, ScalarType::Float, Device("cpu"));
  setRequiresGrad(v, true);
  EXPECT_THAT(errorOf([&] { backward({v}); }),
              HasSubstr("grad can be implicitly created only for scalar "
                        "outputs"));
  Tensor i = emptyTensor({1}, ScalarType::Long, Device("cpu"));
  EXPECT_THAT(errorOf([&] { setRequiresGrad(i, true); }),
              HasSubstr("only Tensors of floating point dtype can require "
                        "gradients"));
  setRequiresGrad(x, true);
  Tensor y = mul(x, x);
  EXPECT_THAT(errorOf([&] { setRequiresGrad(y, false); }),
              HasSubstr("you can only change requires_grad flags of leaf "
                        "variables"));
  EXPECT_THAT(errorOf([&] { checkInplace(x, "add_"); }),
              HasSubstr("add_: a leaf Variable that requires grad is being "
                        "used in an in-place operation."));
  checkInplace(y, "add_");  // a non-leaf may be modified in place
}

TEST(Engine, SavedOutputsDoNotKeepTheirGraphAlive) {
  Tensor x = scalar(3);
  setRequiresGrad(x, true);
  Tensor y = mul(x, x);
  std::weak_ptr<Node> fn = gradFn(y);
  SavedVariable saved(y, /*is_output=*/true);
  EXPECT_TRUE(saved.unpack(nullptr).defined());
  EXPECT_FALSE(gradFn(saved.unpack(nullptr)));
  y = Tensor();
  EXPECT_TRUE(fn.expired());
}

}  // namespace
}  // namespace autograd
}  // namespace turnout
