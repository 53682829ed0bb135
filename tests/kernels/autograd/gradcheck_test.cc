// A gradient check (the public autograd::gradcheck, through
// autograd_testing.h) for every differentiable reference operator:
// broadcasting, non-contiguous inputs, dims and keepdim variants.
#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/autograd/function_node.h"
#include "kernels/ops.h"
#include "tests/kernels/autograd/autograd_testing.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace testing {
namespace {

using In = const std::vector<Tensor>&;

struct Case {
  std::string name;
  std::function<std::vector<Tensor>()> inputs;
  GradFn fn;
  GradcheckOptions options = {};
};

Tensor R(IntArrayRef sizes, unsigned seed = 1) {
  return randomOf(sizes, 0.05, 0.0, seed);
}
// Positive values in [0.5, 2.5].
Tensor P(IntArrayRef sizes, unsigned seed = 1) {
  return randomOf(sizes, 0.05, 1.5, seed);
}
// The same values, not contiguous.
Tensor NC(const Tensor& t) { return stridedCopy(t); }
// A transposed (column-major) tensor of the given logical sizes.
Tensor CM(IntArrayRef sizes, unsigned seed = 1) {
  return columnMajor(R(sizes, seed), 0, static_cast<int64_t>(sizes.size()) - 1);
}

std::vector<Case> cases() {
  std::vector<Case> c;
  auto add = [&c](std::string name, std::function<std::vector<Tensor>()> in,
                  GradFn fn, GradcheckOptions o = {}) {
    c.push_back({std::move(name), std::move(in), std::move(fn), o});
  };
  // ---- Arithmetic, with broadcasting and non-contiguous inputs.
  add("add.Tensor broadcast alpha", [] { return std::vector<Tensor>{R({2, 3}), R({3}, 2)}; },
      [](In x) { return turnout::add(x[0], x[1], 2.5); });
  add("add.Tensor non-contiguous", [] { return std::vector<Tensor>{CM({3, 2}), NC(R({3, 2}, 2))}; },
      [](In x) { return turnout::add(x[0], x[1]); });
  add("add.Tensor 0-dim", [] { return std::vector<Tensor>{R({}), R({2, 2}, 3)}; },
      [](In x) { return turnout::add(x[0], x[1]); });
  add("add.Scalar", [] { return std::vector<Tensor>{R({4})}; },
      [](In x) { return turnout::add(x[0], Scalar(3.0), 2); });
  add("sub.Tensor broadcast", [] { return std::vector<Tensor>{R({2, 1}), R({1, 3}, 2)}; },
      [](In x) { return turnout::sub(x[0], x[1], 1.5); });
  add("sub.Scalar", [] { return std::vector<Tensor>{R({3})}; },
      [](In x) { return turnout::sub(x[0], Scalar(1.0)); });
  add("mul.Tensor broadcast", [] { return std::vector<Tensor>{R({2, 3}), R({2, 1}, 2)}; },
      [](In x) { return turnout::mul(x[0], x[1]); });
  add("mul.Tensor same input", [] { return std::vector<Tensor>{R({3})}; },
      [](In x) { return turnout::mul(x[0], x[0]); });
  add("mul.Tensor non-contiguous", [] { return std::vector<Tensor>{CM({2, 3}), NC(R({2, 3}, 2))}; },
      [](In x) { return turnout::mul(x[0], x[1]); });
  add("mul.Scalar", [] { return std::vector<Tensor>{R({2, 2})}; },
      [](In x) { return turnout::mul(x[0], Scalar(-1.5)); });
  add("div.Tensor broadcast", [] { return std::vector<Tensor>{R({2, 3}), P({3}, 2)}; },
      [](In x) { return turnout::div(x[0], x[1]); });
  add("div.Scalar", [] { return std::vector<Tensor>{R({3})}; },
      [](In x) { return turnout::div(x[0], Scalar(4.0)); });
  // In-place variants act on a clone, which is not a leaf.
  add("add_.Tensor", [] { return std::vector<Tensor>{R({2, 3}), R({3}, 2)}; },
      [](In x) { Tensor y = turnout::clone(x[0]); turnout::add_(y, x[1], 2); return y; });
  add("add_.Scalar", [] { return std::vector<Tensor>{R({3})}; },
      [](In x) { Tensor y = turnout::clone(x[0]); turnout::add_(y, Scalar(1.0)); return y; });
  add("sub_.Tensor", [] { return std::vector<Tensor>{R({2, 3}), R({2, 1}, 2)}; },
      [](In x) { Tensor y = turnout::mul(x[0], 2); turnout::sub_(y, x[1], 3); return y; });
  add("sub_.Scalar", [] { return std::vector<Tensor>{R({3})}; },
      [](In x) { Tensor y = turnout::clone(x[0]); turnout::sub_(y, Scalar(1.0)); return y; });
  add("mul_.Tensor", [] { return std::vector<Tensor>{R({2, 3}), R({3}, 2)}; },
      [](In x) { Tensor y = turnout::mul(x[0], x[0]); turnout::mul_(y, x[1]); return y; });
  add("mul_.Scalar", [] { return std::vector<Tensor>{R({3})}; },
      [](In x) { Tensor y = turnout::clone(x[0]); turnout::mul_(y, Scalar(3.0)); return y; });
  add("div_.Tensor", [] { return std::vector<Tensor>{R({2, 3}), P({2, 3}, 2)}; },
      [](In x) { Tensor y = turnout::mul(x[0], 3); turnout::div_(y, x[1]); return y; });
  add("div_.Scalar", [] { return std::vector<Tensor>{R({3})}; },
      [](In x) { Tensor y = turnout::clone(x[0]); turnout::div_(y, Scalar(3.0)); return y; });
  // ---- Unary.
  add("neg", [] { return std::vector<Tensor>{NC(R({2, 3}))}; },
      [](In x) { return turnout::neg(x[0]); });
  add("abs", [] { return std::vector<Tensor>{R({2, 3})}; },
      [](In x) { return turnout::abs(x[0]); });
  add("exp", [] { return std::vector<Tensor>{CM({2, 3})}; },
      [](In x) { return turnout::exp(x[0]); });
  add("log", [] { return std::vector<Tensor>{P({5})}; },
      [](In x) { return turnout::log(x[0]); });
  add("sqrt", [] { return std::vector<Tensor>{P({5})}; },
      [](In x) { return turnout::sqrt(x[0]); });
  add("tanh", [] { return std::vector<Tensor>{R({5})}; },
      [](In x) { return turnout::tanh(x[0]); });
  add("sigmoid", [] { return std::vector<Tensor>{NC(R({5}))}; },
      [](In x) { return turnout::sigmoid(x[0]); });
  add("relu", [] { return std::vector<Tensor>{R({2, 4})}; },
      [](In x) { return turnout::relu(x[0]); });
  add("pow 3", [] { return std::vector<Tensor>{R({5})}; },
      [](In x) { return turnout::pow(x[0], 3); });
  add("pow 0.5", [] { return std::vector<Tensor>{P({5})}; },
      [](In x) { return turnout::pow(x[0], 0.5); });
  add("pow 0", [] { return std::vector<Tensor>{R({3})}; },
      [](In x) { return turnout::pow(x[0], 0); });
  add("clamp min max", [] { return std::vector<Tensor>{R({8})}; },
      [](In x) { return turnout::clamp(x[0], Scalar(-0.42), Scalar(0.53)); });
  add("clamp min", [] { return std::vector<Tensor>{R({8})}; },
      [](In x) { return turnout::clamp(x[0], Scalar(0.11)); });
  add("clamp max", [] { return std::vector<Tensor>{R({8})}; },
      [](In x) { return turnout::clamp(x[0], std::nullopt, Scalar(0.11)); });
  add("where.self broadcast",
      [] { return std::vector<Tensor>{turnout::gt(R({2, 3}, 5), 0), R({2, 3}), R({3}, 2)}; },
      [](In x) { return turnout::where(x[0], x[1], x[2]); });
  // ---- Reductions.
  add("sum", [] { return std::vector<Tensor>{CM({2, 3})}; },
      [](In x) { return turnout::sum(x[0]); });
  add("sum.dim_IntList", [] { return std::vector<Tensor>{R({2, 3, 4})}; },
      [](In x) { return turnout::sum(x[0], {1}); });
  add("sum.dim_IntList keepdim negative dims", [] { return std::vector<Tensor>{NC(R({2, 3, 4}))}; },
      [](In x) { return turnout::sum(x[0], {-1, 0}, true); });
  add("sum.dim_IntList two dims", [] { return std::vector<Tensor>{R({2, 3, 4})}; },
      [](In x) { return turnout::sum(x[0], {2, 0}); });
  // aten::mean had no autograd kernel: its output did not require grad
  // (found by opcheck's test_autograd_registration).
  add("mean", [] { return std::vector<Tensor>{CM({2, 3})}; },
      [](In x) { return turnout::mean(x[0]); });
  add("mean.dim", [] { return std::vector<Tensor>{R({2, 3, 4})}; },
      [](In x) { return turnout::mean(x[0], {1, 2}); });
  add("mean.dim keepdim", [] { return std::vector<Tensor>{CM({3, 4})}; },
      [](In x) { return turnout::mean(x[0], {0}, true); });
  add("amax all", [] { return std::vector<Tensor>{R({3, 4})}; },
      [](In x) { return turnout::amax(x[0]); });
  add("amax dim", [] { return std::vector<Tensor>{R({3, 4})}; },
      [](In x) { return turnout::amax(x[0], {1}); });
  add("amax dim keepdim", [] { return std::vector<Tensor>{NC(R({3, 4}))}; },
      [](In x) { return turnout::amax(x[0], {0}, true); });
  add("amin dim", [] { return std::vector<Tensor>{R({2, 3, 4})}; },
      [](In x) { return turnout::amin(x[0], {-1, 0}); });
  add("softmax.int", [] { return std::vector<Tensor>{R({3, 4})}; },
      [](In x) { return turnout::softmax(x[0], 1); });
  add("softmax.int dim 0 non-contiguous", [] { return std::vector<Tensor>{CM({3, 4})}; },
      [](In x) { return turnout::softmax(x[0], 0); });
  add("log_softmax.int", [] { return std::vector<Tensor>{R({3, 4})}; },
      [](In x) { return turnout::log_softmax(x[0], -1); });
  add("_softmax", [] { return std::vector<Tensor>{R({2, 3, 2})}; },
      [](In x) { return turnout::_softmax(x[0], 1, false); });
  add("_log_softmax", [] { return std::vector<Tensor>{R({2, 3})}; },
      [](In x) { return turnout::_log_softmax(x[0], 0, false); });
  // ---- Linear algebra.
  add("mm", [] { return std::vector<Tensor>{R({2, 3}), R({3, 4}, 2)}; },
      [](In x) { return turnout::mm(x[0], x[1]); });
  add("mm non-contiguous", [] { return std::vector<Tensor>{CM({2, 3}), NC(R({3, 4}, 2))}; },
      [](In x) { return turnout::mm(x[0], x[1]); });
  add("bmm", [] { return std::vector<Tensor>{R({2, 2, 3}), R({2, 3, 2}, 2)}; },
      [](In x) { return turnout::bmm(x[0], x[1]); });
  add("addmm broadcast self", [] { return std::vector<Tensor>{R({3}), R({2, 4}, 2), R({4, 3}, 3)}; },
      [](In x) { return turnout::addmm(x[0], x[1], x[2], 0.5, 2); });
  add("addmm", [] { return std::vector<Tensor>{R({2, 3}), CM({2, 4}, 2), R({4, 3}, 3)}; },
      [](In x) { return turnout::addmm(x[0], x[1], x[2]); });
  add("matmul 2x2", [] { return std::vector<Tensor>{R({2, 3}), R({3, 2}, 2)}; },
      [](In x) { return turnout::matmul(x[0], x[1]); });
  add("matmul 1x1", [] { return std::vector<Tensor>{R({3}), R({3}, 2)}; },
      [](In x) { return turnout::matmul(x[0], x[1]); });
  add("matmul 1x2", [] { return std::vector<Tensor>{R({3}), R({3, 2}, 2)}; },
      [](In x) { return turnout::matmul(x[0], x[1]); });
  add("matmul 2x1", [] { return std::vector<Tensor>{R({2, 3}), R({3}, 2)}; },
      [](In x) { return turnout::matmul(x[0], x[1]); });
  add("matmul 3x2", [] { return std::vector<Tensor>{R({2, 2, 3}), R({3, 2}, 2)}; },
      [](In x) { return turnout::matmul(x[0], x[1]); });
  add("matmul 1x3", [] { return std::vector<Tensor>{R({3}), R({2, 3, 2}, 2)}; },
      [](In x) { return turnout::matmul(x[0], x[1]); });
  add("matmul batch broadcast", [] { return std::vector<Tensor>{R({2, 1, 2, 3}), R({3, 3, 2}, 2)}; },
      [](In x) { return turnout::matmul(x[0], x[1]); });
  add("linear", [] { return std::vector<Tensor>{R({2, 3}), R({4, 3}, 2), R({4}, 3)}; },
      [](In x) { return turnout::linear(x[0], x[1], x[2]); });
  add("linear 3-D no bias", [] { return std::vector<Tensor>{R({2, 2, 3}), CM({4, 3}, 2)}; },
      [](In x) { return turnout::linear(x[0], x[1]); });
  add("linear 3-D bias", [] { return std::vector<Tensor>{R({2, 2, 3}), R({4, 3}, 2), R({4}, 3)}; },
      [](In x) { return turnout::linear(x[0], x[1], x[2]); });
  // ---- Shape and memory.
  add("view", [] { return std::vector<Tensor>{R({2, 6})}; },
      [](In x) { return turnout::mul(turnout::view(x[0], {3, 4}), 2); });
  add("reshape view", [] { return std::vector<Tensor>{R({2, 6})}; },
      [](In x) { return turnout::reshape(x[0], {4, -1}); });
  add("reshape copy", [] { return std::vector<Tensor>{CM({3, 4})}; },
      [](In x) { return turnout::reshape(x[0], {12}); });
  add("t", [] { return std::vector<Tensor>{R({2, 3})}; },
      [](In x) { return turnout::t(x[0]); });
  add("transpose.int", [] { return std::vector<Tensor>{R({2, 3, 4})}; },
      [](In x) { return turnout::transpose(x[0], 0, -1); });
  add("permute", [] { return std::vector<Tensor>{NC(R({2, 3, 4}))}; },
      [](In x) { return turnout::permute(x[0], {1, -1, 0}); });
  add("expand", [] { return std::vector<Tensor>{R({3, 1})}; },
      [](In x) { return turnout::expand(x[0], {2, 3, 4}); });
  add("squeeze.dim", [] { return std::vector<Tensor>{R({3, 1, 2})}; },
      [](In x) { return turnout::squeeze(x[0], 1); });
  add("unsqueeze", [] { return std::vector<Tensor>{R({3, 2})}; },
      [](In x) { return turnout::unsqueeze(x[0], -1); });
  add("slice.Tensor step", [] { return std::vector<Tensor>{R({3, 7})}; },
      [](In x) { return turnout::slice(x[0], 1, 1, 6, 2); });
  add("slice.Tensor negative", [] { return std::vector<Tensor>{CM({4, 3})}; },
      [](In x) { return turnout::slice(x[0], 0, -3, std::nullopt, 1); });
  add("select.int", [] { return std::vector<Tensor>{R({3, 4})}; },
      [](In x) { return turnout::select(x[0], 1, -2); });
  add("cat", [] { return std::vector<Tensor>{R({2, 1}), R({2, 3}, 2), NC(R({2, 2}, 3))}; },
      [](In x) { return turnout::cat({x[0], x[1], x[2]}, 1); });
  add("stack", [] { return std::vector<Tensor>{R({2, 3}), R({2, 3}, 2)}; },
      [](In x) { return turnout::stack({x[0], x[1]}, -1); });
  add("contiguous", [] { return std::vector<Tensor>{CM({3, 4})}; },
      [](In x) { return turnout::contiguous(x[0]); });
  add("clone", [] { return std::vector<Tensor>{NC(R({3}))}; },
      [](In x) { return turnout::clone(x[0]); });
  add("copy_ broadcast",
      [] { return std::vector<Tensor>{R({2, 3}), R({3}, 2)}; },
      [](In x) {
        Tensor y = turnout::mul(x[0], 2);
        turnout::copy_(y, x[1]);
        return turnout::mul(y, x[0]);
      });
  add("copy_ whole", [] { return std::vector<Tensor>{R({2, 3}), R({2, 3}, 2)}; },
      [](In x) { Tensor y = turnout::mul(x[0], 2); turnout::copy_(y, x[1]); return y; });
  // Through Float: central differences at Float precision need a larger eps.
  add("_to_copy / to.dtype", [] { return std::vector<Tensor>{R({4})}; },
      [](In x) {
        Tensor f = turnout::to(x[0], ScalarType::Float);
        return turnout::_to_copy(turnout::mul(f, f), ScalarType::Double);
      },
      GradcheckOptions{1e-2, 1e-3, 1e-2});
  return c;
}

TEST(Gradcheck, EveryDifferentiableOperator) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    try {
      EXPECT_TRUE(gradcheck(c.fn, c.inputs(), c.options)) << c.name;
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.name << " threw: " << e.what();
    }
  }
}

// Regression: the one-hot seed of a Half output was written as Float
// ("data_ptr<T>(): T is the C++ type of Float but the tensor's dtype is
// Half"). Half keeps ~3 digits: a large eps and tolerance.
TEST(Gradcheck, HalfOutput) {
  EXPECT_TRUE(gradcheck([](In x) { return turnout::to(x[0], ScalarType::Half); },
                        {R({3})}, GradcheckOptions{1e-1, 1e-2, 1e-2}));
}

TEST(Gradcheck, FailsOnAWrongFormula) {
  // y = 2x with a backward that says 3.
  GradFn wrong = [](In x) {
    Tensor y;
    {
      autograd::NoGradGuard no_grad;
      y = turnout::mul(x[0], 2);
    }
    autograd::detail::record("WrongBackward", {x[0]}, y,
                             [](const autograd::FunctionNode&, const Tensor& g) {
                               return autograd::variable_list{turnout::mul(g, 3)};
                             });
    return y;
  };
  ::testing::AssertionResult r = gradcheck(wrong, {R({2})});
  EXPECT_FALSE(r);
  EXPECT_THAT(r.message(),
              ::testing::HasSubstr("Jacobian mismatch for output 0 with respect "
                                   "to input 0: the largest difference is 1 "
                                   "(analytical 3, numerical 2) at input "
                                   "element 0, output element 0"));
}

}  // namespace
}  // namespace testing
}  // namespace turnout
