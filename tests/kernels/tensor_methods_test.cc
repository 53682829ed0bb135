// The operator methods of Tensor (kernels/tensor_methods.cc): each must
// reach its operator with its arguments in order and PyTorch's defaults.
// The kernels themselves are tested in their areas; here every method is
// compared with the free function called with explicit arguments, on inputs
// where a swapped argument or a wrong default would change the result.
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/node.h"
#include "kernels/ops.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using testing::errorOf;
using ::testing::HasSubstr;
using testing::meta;
using testing::sizesOf;
using testing::tensorOf;
using testing::valuesOf;

// Same sizes, dtype, device and values (NaN equal to NaN).
void expectSameTensor(const Tensor& got, const Tensor& want) {
  ASSERT_TRUE(got.defined());
  EXPECT_EQ(sizesOf(got), sizesOf(want));
  EXPECT_EQ(got.scalar_type(), want.scalar_type());
  EXPECT_EQ(got.device(), want.device());
  if (got.is_meta()) return;
  std::vector<double> g = valuesOf(got), w = valuesOf(want);
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << "element " << i;
    } else {
      EXPECT_EQ(g[i], w[i]) << "element " << i;
    }
  }
}

struct Case {
  std::string name;
  std::function<Tensor()> method;
  std::function<Tensor()> free;
};

// a and b differ everywhere, so that a swapped pair of arguments shows.
Tensor a() { return tensorOf({1, -2, 3, -4, 5, 6}, {2, 3}); }
Tensor b() { return tensorOf({2, 3, 5, 7, 11, 13}, {2, 3}); }
Tensor positive() { return tensorOf({0.5, 1, 2, 4, 8, 16}, {2, 3}); }

TEST(TensorMethods, ElementwiseMatchFreeFunctions) {
  const Tensor x = a(), y = b(), p = positive();
  std::vector<Case> cases = {
      {"add", [&] { return x.add(y); }, [&] { return add(x, y, 1); }},
      {"add alpha", [&] { return x.add(y, 3); }, [&] { return add(x, y, 3); }},
      {"add scalar", [&] { return x.add(2.5); },
       [&] { return add(x, 2.5, 1); }},
      {"add scalar alpha", [&] { return x.add(2, 3); },
       [&] { return add(x, Scalar(2), 3); }},
      {"sub", [&] { return x.sub(y); }, [&] { return sub(x, y, 1); }},
      {"sub alpha", [&] { return x.sub(y, 2); }, [&] { return sub(x, y, 2); }},
      {"sub scalar", [&] { return x.sub(1.5); },
       [&] { return sub(x, 1.5, 1); }},
      {"mul", [&] { return x.mul(y); }, [&] { return mul(x, y); }},
      {"mul scalar", [&] { return x.mul(3); }, [&] { return mul(x, 3); }},
      {"div", [&] { return x.div(y); }, [&] { return div(x, y); }},
      {"div scalar", [&] { return x.div(4); }, [&] { return div(x, 4); }},
      {"neg", [&] { return x.neg(); }, [&] { return neg(x); }},
      {"abs", [&] { return x.abs(); }, [&] { return abs(x); }},
      {"exp", [&] { return x.exp(); }, [&] { return exp(x); }},
      {"log", [&] { return p.log(); }, [&] { return log(p); }},
      {"sqrt", [&] { return p.sqrt(); }, [&] { return sqrt(p); }},
      {"tanh", [&] { return x.tanh(); }, [&] { return tanh(x); }},
      {"sigmoid", [&] { return x.sigmoid(); }, [&] { return sigmoid(x); }},
      {"relu", [&] { return x.relu(); }, [&] { return relu(x); }},
      {"pow", [&] { return x.pow(3); }, [&] { return pow(x, 3); }},
      {"clamp both", [&] { return x.clamp(-1, 4); },
       [&] { return clamp(x, Scalar(-1), Scalar(4)); }},
      {"clamp min only", [&] { return x.clamp(0); },
       [&] { return clamp(x, Scalar(0), std::nullopt); }},
      {"clamp max only", [&] { return x.clamp(std::nullopt, 2); },
       [&] { return clamp(x, std::nullopt, Scalar(2)); }},
      {"eq", [&] { return x.eq(y); }, [&] { return eq(x, y); }},
      {"eq scalar", [&] { return x.eq(3); }, [&] { return eq(x, 3); }},
      {"ne", [&] { return x.ne(y); }, [&] { return ne(x, y); }},
      {"ne scalar", [&] { return x.ne(3); }, [&] { return ne(x, 3); }},
      {"lt", [&] { return x.lt(y); }, [&] { return lt(x, y); }},
      {"lt scalar", [&] { return x.lt(3); }, [&] { return lt(x, 3); }},
      {"le", [&] { return x.le(y); }, [&] { return le(x, y); }},
      {"le scalar", [&] { return x.le(3); }, [&] { return le(x, 3); }},
      {"gt", [&] { return x.gt(y); }, [&] { return gt(x, y); }},
      {"gt scalar", [&] { return x.gt(3); }, [&] { return gt(x, 3); }},
      {"ge", [&] { return x.ge(y); }, [&] { return ge(x, y); }},
      {"ge scalar", [&] { return x.ge(3); }, [&] { return ge(x, 3); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    expectSameTensor(c.method(), c.free());
  }
}

TEST(TensorMethods, ArgumentOrderIsSelfFirst) {
  // Hand-computed, so that a method and a free function that both swapped
  // their operands would still fail.
  EXPECT_EQ(valuesOf(a().sub(b(), 2)),
            (std::vector<double>{-3, -8, -7, -18, -17, -20}));
  EXPECT_EQ(valuesOf(tensorOf({8, 9}, {2}).div(tensorOf({2, 3}, {2}))),
            (std::vector<double>{4, 3}));
  EXPECT_EQ(valuesOf(a().lt(b())), (std::vector<double>{1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(valuesOf(a().gt(0)), (std::vector<double>{1, 0, 1, 0, 1, 1}));
  Tensor m = tensorOf({1, 2, 3, 4}, {2, 2});
  Tensor n = tensorOf({0, 1, 1, 0}, {2, 2});
  EXPECT_EQ(valuesOf(m.mm(n)), (std::vector<double>{2, 1, 4, 3}));
  EXPECT_EQ(valuesOf(n.mm(m)), (std::vector<double>{3, 4, 1, 2}));
}

TEST(TensorMethods, ReductionsAndLinalgMatchFreeFunctions) {
  const Tensor x = a();
  const Tensor m = tensorOf({1, 2, 3, 4, 5, 6}, {3, 2});
  const Tensor batch = testing::rangeOf({2, 2, 3});
  const Tensor batch2 = testing::rangeOf({2, 3, 2}, ScalarType::Float, 0.5, 1);
  const Tensor ints = tensorOf({1, 2, 3, 4}, {2, 2}, ScalarType::Int);
  std::vector<Case> cases = {
      {"sum", [&] { return x.sum(); }, [&] { return sum(x, std::nullopt); }},
      {"sum dtype", [&] { return ints.sum(kFloat); },
       [&] { return sum(ints, kFloat); }},
      {"sum ints is Long", [&] { return ints.sum(); },
       [&] { return sum(ints, std::nullopt); }},
      {"sum dim", [&] { return x.sum({1}); },
       [&] { return sum(x, IntArrayRef({1}), false, std::nullopt); }},
      {"sum dim keepdim", [&] { return x.sum({0}, true); },
       [&] { return sum(x, IntArrayRef({0}), true, std::nullopt); }},
      {"sum dim keepdim dtype", [&] { return x.sum({0}, true, kDouble); },
       [&] { return sum(x, IntArrayRef({0}), true, kDouble); }},
      {"sum empty dims", [&] { return x.sum({}); },
       [&] { return sum(x, IntArrayRef(), false, std::nullopt); }},
      {"sum IntArrayRef", [&] { return x.sum(IntArrayRef({-1})); },
       [&] { return sum(x, IntArrayRef({-1}), false, std::nullopt); }},
      {"mean", [&] { return x.mean(); }, [&] { return mean(x, std::nullopt); }},
      {"mean dim", [&] { return x.mean({1}); },
       [&] { return mean(x, IntArrayRef({1}), false, std::nullopt); }},
      {"mean dim keepdim dtype", [&] { return x.mean({0}, true, kDouble); },
       [&] { return mean(x, IntArrayRef({0}), true, kDouble); }},
      {"amax", [&] { return x.amax(); },
       [&] { return amax(x, IntArrayRef(), false); }},
      {"amax dim keepdim", [&] { return x.amax({1}, true); },
       [&] { return amax(x, IntArrayRef({1}), true); }},
      {"amin", [&] { return x.amin(); },
       [&] { return amin(x, IntArrayRef(), false); }},
      {"amin dim", [&] { return x.amin({0}); },
       [&] { return amin(x, IntArrayRef({0}), false); }},
      {"argmax", [&] { return x.argmax(); },
       [&] { return argmax(x, std::nullopt, false); }},
      {"argmax dim keepdim", [&] { return x.argmax(0, true); },
       [&] { return argmax(x, 0, true); }},
      {"softmax", [&] { return x.softmax(1); },
       [&] { return softmax(x, 1, std::nullopt); }},
      {"softmax dtype", [&] { return x.softmax(0, kDouble); },
       [&] { return softmax(x, 0, kDouble); }},
      {"log_softmax", [&] { return x.log_softmax(1); },
       [&] { return log_softmax(x, 1, std::nullopt); }},
      {"log_softmax dtype", [&] { return x.log_softmax(0, kDouble); },
       [&] { return log_softmax(x, 0, kDouble); }},
      {"mm", [&] { return x.mm(m); }, [&] { return mm(x, m); }},
      {"bmm", [&] { return batch.bmm(batch2); },
       [&] { return bmm(batch, batch2); }},
      {"matmul", [&] { return batch.matmul(m); },
       [&] { return matmul(batch, m); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    expectSameTensor(c.method(), c.free());
  }
}

TEST(TensorMethods, ShapeAndCopyMatchFreeFunctions) {
  const Tensor x = testing::rangeOf({2, 3});
  const Tensor col = testing::rangeOf({2, 1});
  std::vector<Case> cases = {
      {"view",
       [&] {
         return x.view({3, 2});
       },
       [&] {
         return view(x, {3, 2});
       }},
      {"view -1", [&] { return x.view({-1}); }, [&] { return view(x, {6}); }},
      {"reshape", [&] { return x.t().reshape({6}); },
       [&] { return reshape(t(x), {6}); }},
      {"t", [&] { return x.t(); }, [&] { return t(x); }},
      {"transpose", [&] { return x.transpose(1, 0); },
       [&] { return transpose(x, 0, 1); }},
      {"permute",
       [&] {
         return x.permute({1, 0});
       },
       [&] {
         return permute(x, {1, 0});
       }},
      {"expand",
       [&] {
         return col.expand({2, 4});
       },
       [&] {
         return expand(col, {2, 4}, false);
       }},
      {"squeeze", [&] { return col.squeeze(1); },
       [&] { return squeeze(col, 1); }},
      {"unsqueeze", [&] { return x.unsqueeze(1); },
       [&] { return unsqueeze(x, 1); }},
      {"slice defaults", [&] { return x.slice(); },
       [&] { return slice(x, 0, std::nullopt, std::nullopt, 1); }},
      {"slice", [&] { return x.slice(1, 1, 3); },
       [&] { return slice(x, 1, 1, 3, 1); }},
      {"slice step", [&] { return x.slice(1, 0, std::nullopt, 2); },
       [&] { return slice(x, 1, 0, std::nullopt, 2); }},
      {"select", [&] { return x.select(1, 2); },
       [&] { return select(x, 1, 2); }},
      {"contiguous", [&] { return x.t().contiguous(); },
       [&] { return contiguous(t(x), MemoryFormat::Contiguous); }},
      {"clone", [&] { return x.clone(); },
       [&] { return clone(x, std::nullopt); }},
      {"to dtype", [&] { return x.to(kLong); },
       [&] { return to(x, kLong, false, false, std::nullopt); }},
      {"to device", [&] { return x.to(meta()); },
       [&] { return to(x, meta(), false, false); }},
      {"to device dtype", [&] { return x.to(meta(), kDouble); },
       [&] { return to(x, meta(), kDouble, false, false, std::nullopt); }},
      {"detach", [&] { return x.detach(); }, [&] { return detach(x); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    expectSameTensor(c.method(), c.free());
  }
}

TEST(TensorMethods, ViewsShareStorage) {
  Tensor x = testing::rangeOf({2, 3});
  for (const Tensor& v : {x.view({6}), x.t(), x.transpose(0, 1),
                          x.permute({1, 0}), x.unsqueeze(0), x.slice(1, 1),
                          x.select(0, 1), x.detach(), x.contiguous()}) {
    EXPECT_EQ(v.storage().data(), x.storage().data());
  }
  EXPECT_TRUE(x.contiguous().is_same(x));
  EXPECT_TRUE(x.to(kFloat).is_same(x));
  EXPECT_FALSE(x.to(kFloat, false, /*copy=*/true).is_same(x));
  EXPECT_NE(x.clone().storage().data(), x.storage().data());
}

TEST(TensorMethods, InPlaceWriteSelfAndReturnIt) {
  struct InPlace {
    std::string name;
    std::function<const Tensor&(const Tensor&)> method;
    std::function<Tensor(const Tensor&)> want;  // out of place, on a copy
  };
  const Tensor y = b();
  std::vector<InPlace> cases = {
      {"add_", [&](const Tensor& s) -> const Tensor& { return s.add_(y); },
       [&](const Tensor& s) { return add(s, y); }},
      {"add_ alpha",
       [&](const Tensor& s) -> const Tensor& { return s.add_(y, -2); },
       [&](const Tensor& s) { return add(s, y, -2); }},
      {"add_ scalar",
       [&](const Tensor& s) -> const Tensor& { return s.add_(3, 2); },
       [&](const Tensor& s) { return add(s, Scalar(3), 2); }},
      {"sub_", [&](const Tensor& s) -> const Tensor& { return s.sub_(y); },
       [&](const Tensor& s) { return sub(s, y); }},
      {"sub_ alpha",
       [&](const Tensor& s) -> const Tensor& { return s.sub_(y, 3); },
       [&](const Tensor& s) { return sub(s, y, 3); }},
      {"sub_ scalar",
       [&](const Tensor& s) -> const Tensor& { return s.sub_(1.5); },
       [&](const Tensor& s) { return sub(s, 1.5); }},
      {"mul_", [&](const Tensor& s) -> const Tensor& { return s.mul_(y); },
       [&](const Tensor& s) { return mul(s, y); }},
      {"mul_ scalar",
       [&](const Tensor& s) -> const Tensor& { return s.mul_(-3); },
       [&](const Tensor& s) { return mul(s, -3); }},
      {"div_", [&](const Tensor& s) -> const Tensor& { return s.div_(y); },
       [&](const Tensor& s) { return div(s, y); }},
      {"div_ scalar",
       [&](const Tensor& s) -> const Tensor& { return s.div_(4); },
       [&](const Tensor& s) { return div(s, 4); }},
      {"copy_", [&](const Tensor& s) -> const Tensor& { return s.copy_(y); },
       [&](const Tensor&) { return y; }},
      {"copy_ broadcast",
       [&](const Tensor& s) -> const Tensor& {
         return s.copy_(tensorOf({7, 8, 9}, {3}));
       },
       [&](const Tensor&) {
         return tensorOf({7, 8, 9, 7, 8, 9}, {2, 3});
       }},
      {"fill_", [&](const Tensor& s) -> const Tensor& { return s.fill_(2.5); },
       [&](const Tensor& s) {
         return full({2, 3}, 2.5);
       }},
  };
  for (const InPlace& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor self = a();
    Tensor want = c.want(a());
    const Tensor& r = c.method(self);
    EXPECT_EQ(&r, &self);
    expectSameTensor(self, want);
  }
}

TEST(TensorMethods, InPlaceThroughAViewWritesTheBase) {
  Tensor x = testing::rangeOf({2, 3});
  x.select(0, 1).fill_(-1);
  x.slice(1, 0, 1).add_(10);
  EXPECT_EQ(valuesOf(x), (std::vector<double>{10, 1, 2, 9, -1, -1}));
}

TEST(TensorMethods, Item) {
  EXPECT_EQ(tensorOf({2.5}, {}).item().toDouble(), 2.5);
  EXPECT_TRUE(tensorOf({3}, {1}, kLong).item().isIntegral(false));
  EXPECT_EQ(tensorOf({3}, {1}, kLong).item<int64_t>(), 3);
  EXPECT_EQ(tensorOf({-1.5}, {}, kDouble).item<double>(), -1.5);
  EXPECT_THAT(errorOf([] { a().item(); }),
              HasSubstr("a Tensor with 6 elements cannot be converted to "
                        "Scalar"));
}

TEST(TensorMethods, ErrorsComeFromTheOperator) {
  // A method adds nothing to the operator's own message.
  Tensor x = a();
  EXPECT_EQ(errorOf([&] { x.view({4}); }), errorOf([&] { view(x, {4}); }));
  EXPECT_EQ(errorOf([&] { x.mm(x); }), errorOf([&] { mm(x, x); }));
  EXPECT_EQ(errorOf([&] {
              x.add(tensorOf({1, 2}, {2}));
            }),
            errorOf([&] {
              add(x, tensorOf({1, 2}, {2}));
            }));
  EXPECT_THAT(errorOf([&] { x.mm(x); }), HasSubstr("cannot be multiplied"));
  // An undefined self reaches the dispatcher like any other argument.
  EXPECT_EQ(errorOf([] { Tensor().add(1); }),
            errorOf([] { add(Tensor(), 1); }));
  EXPECT_THAT(errorOf([] { Tensor().add(1); }),
              HasSubstr("Could not run 'aten::add.Scalar' with arguments from "
                        "the 'Undefined' backend"));
}

// ---- Autograd --------------------------------------------------------------

TEST(TensorMethods, RequiresGrad) {
  Tensor w = a();
  EXPECT_FALSE(w.requires_grad());
  EXPECT_TRUE(w.is_leaf());
  EXPECT_EQ(w.grad_fn(), nullptr);
  EXPECT_FALSE(w.grad().defined());

  const Tensor& r = w.requires_grad_();
  EXPECT_EQ(&r, &w);
  EXPECT_TRUE(w.requires_grad());
  EXPECT_TRUE(autograd::requiresGrad(w));
  EXPECT_TRUE(w.is_leaf());
  w.requires_grad_(false);
  EXPECT_FALSE(w.requires_grad());

  Tensor i = tensorOf({1, 2}, {2}, kLong);
  EXPECT_THAT(errorOf([&] { i.requires_grad_(); }),
              HasSubstr("only Tensors of floating point dtype can require "
                        "gradients (got Long)"));
  EXPECT_FALSE(i.requires_grad());
  i.requires_grad_(false);  // allowed: nothing to change
}

// y = 3 * x, recorded by hand so that the test does not depend on the
// operators' autograd kernels.
struct TimesThreeBackward final : autograd::Node {
  explicit TimesThreeBackward(const Tensor& x)
      : Node({autograd::gradientEdge(x)}) {}
  autograd::variable_list apply(autograd::variable_list&& grads) override {
    return {mul(grads[0], 3)};
  }
  std::string name() const override { return "TimesThreeBackward"; }
};

Tensor timesThree(const Tensor& x) {
  Tensor y = full(x.sizes(), 0.0);
  {
    Tensor values = mul(x.detach(), 3);
    copy_(y, values);
  }
  autograd::setHistory(y, std::make_shared<TimesThreeBackward>(x));
  return y;
}

TEST(TensorMethods, BackwardAccumulatesIntoGrad) {
  Tensor x = tensorOf({2}, {});
  x.requires_grad_();
  Tensor y = timesThree(x);
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn(), autograd::gradFn(y));
  EXPECT_EQ(y.grad_fn()->name(), "TimesThreeBackward");
  EXPECT_THAT(errorOf([&] { y.requires_grad_(false); }),
              HasSubstr("you can only change requires_grad flags of leaf "
                        "variables"));

  y.backward();
  EXPECT_EQ(valuesOf(x.grad()), (std::vector<double>{3}));
  timesThree(x).backward();  // accumulates
  EXPECT_EQ(valuesOf(x.grad()), (std::vector<double>{6}));
  EXPECT_FALSE(y.grad().defined());  // not a leaf: nothing accumulated
}

TEST(TensorMethods, BackwardWithAGradient) {
  Tensor x = tensorOf({1, 2, 3}, {3});
  x.requires_grad_();
  Tensor y = timesThree(x);
  EXPECT_THAT(errorOf([&] { y.backward(); }),
              HasSubstr("grad can be implicitly created only for scalar "
                        "outputs"));
  EXPECT_FALSE(x.grad().defined());
  y.backward(tensorOf({1, 10, 100}, {3}));
  EXPECT_EQ(valuesOf(x.grad()), (std::vector<double>{3, 30, 300}));
}

TEST(TensorMethods, BackwardOfATensorWithoutHistoryFails) {
  EXPECT_THAT(errorOf([] { a().sum().backward(); }),
              HasSubstr("does not require grad and does not have a grad_fn"));
}

}  // namespace
}  // namespace turnout
