// Helpers of the autograd tests: leaves that require grad, the name of a
// tensor's grad_fn and the values it keeps, deterministic inputs for gradcheck,
// and the public autograd::gradcheck (kernels/autograd/gradcheck.h) as a
// GoogleTest assertion:
//
//   EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) {
//     return mul(in[0], in[1]); }, {randomOf({2, 3}), randomOf({3})}));
#ifndef TURNOUT_TESTS_KERNELS_AUTOGRAD_AUTOGRAD_TESTING_H_
#define TURNOUT_TESTS_KERNELS_AUTOGRAD_AUTOGRAD_TESTING_H_

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/gradcheck.h"
#include "kernels/autograd/node.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace testing {

/// A tensor of `values` shaped `sizes` that requires grad (a leaf).
inline Tensor leaf(const std::vector<double>& values, IntArrayRef sizes,
                   ScalarType dtype = ScalarType::Float) {
  Tensor t = tensorOf(values, sizes, dtype);
  autograd::setRequiresGrad(t, true);
  return t;
}

/// The names of the values `t`'s grad_fn keeps (Node::saved(), Python's
/// grad_fn._saved_<name>), in the order they were added; empty without one.
inline std::vector<std::string> savedNames(const Tensor& t) {
  std::vector<std::string> out;
  if (std::shared_ptr<autograd::Node> fn = autograd::gradFn(t)) {
    for (const autograd::Node::Saved& s : fn->saved()) out.push_back(s.name);
  }
  return out;
}

/// The value `t`'s grad_fn keeps under `name`; fails the test (and returns
/// null) when there is none.
inline const autograd::Node::Saved* savedOf(const Tensor& t,
                                            const std::string& name) {
  if (std::shared_ptr<autograd::Node> fn = autograd::gradFn(t)) {
    for (const autograd::Node::Saved& s : fn->saved()) {
      if (s.name == name) return &s;
    }
  }
  ADD_FAILURE() << "no saved value '" << name << "'";
  return nullptr;
}

/// The name of `t`'s grad_fn ("MulBackward0"), or "(none)".
inline std::string fnName(const Tensor& t) {
  std::shared_ptr<autograd::Node> fn = autograd::gradFn(t);
  return fn ? fn->name() : "(none)";
}

/// Double values in [-1, 1] that have no ties and stay away from 0 by at
/// least `margin` (so kinks of abs, relu, clamp are not straddled by eps),
/// plus `shift`; `seed` picks another sequence.
inline Tensor randomOf(IntArrayRef sizes, double margin = 0.05,
                       double shift = 0.0, unsigned seed = 1) {
  std::vector<double> v(static_cast<size_t>(numelOf(sizes)));
  for (size_t i = 0; i < v.size(); ++i) {
    double x = std::sin(1.37 * static_cast<double>(i) + 0.71 * seed + 0.3);
    if (std::fabs(x) < margin) x = x < 0 ? -margin - 0.013 * i : margin + 0.011 * i;
    v[i] = x + shift;
  }
  return tensorOf(v, sizes, ScalarType::Double);
}

using GradFn = std::function<Tensor(const std::vector<Tensor>&)>;
using autograd::GradcheckOptions;

/// autograd::gradcheck of a one-output function, every Double input
/// requiring grad (the others, Bool conditions or Float inputs, pass as
/// they are): success, or a failure with gradcheck's message. Errors the
/// function or gradcheck throws propagate.
inline ::testing::AssertionResult gradcheck(const GradFn& fn,
                                            std::vector<Tensor> inputs,
                                            GradcheckOptions options = {}) {
  for (Tensor& t : inputs) {
    if (t.defined() && t.scalar_type() == ScalarType::Double) {
      autograd::setRequiresGrad(t, true);
    }
  }
  const autograd::GradcheckResult r = autograd::gradcheck(
      [&fn](const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(in)}; },
      inputs, options.raiseException(false));
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.message;
}

}  // namespace testing
}  // namespace turnout

#endif  // TURNOUT_TESTS_KERNELS_AUTOGRAD_AUTOGRAD_TESTING_H_
