// gradcheck: compares the Jacobian that backward() computes with one from
// central finite differences, in double precision, as torch.autograd.gradcheck.
//
//   Tensor a = testing::randomOf({2, 3}), b = testing::randomOf({3});
//   EXPECT_TRUE(testing::gradcheck(
//       [](const std::vector<Tensor>& in) { return mul(in[0], in[1]); },
//       {a, b}));
//
// Every floating input is made a leaf that requires grad (a non-contiguous
// input stays non-contiguous: its elements are perturbed in place through
// its strides). Other inputs (Bool conditions, ...) are passed as they are.
// For each output element j, backward() with a one-hot gradient gives row j
// of the analytical Jacobian; each input element perturbed by +-eps gives a
// column of the numerical one. A mismatch names the input, both element
// indices and both values.
#ifndef TURNOUT_TESTS_KERNELS_AUTOGRAD_GRADCHECK_H_
#define TURNOUT_TESTS_KERNELS_AUTOGRAD_GRADCHECK_H_

#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/engine.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/ops.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace testing {

using GradFn = std::function<Tensor(const std::vector<Tensor>&)>;

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
};

/// Double values in [-1, 1] that have no ties and stay away from 0 by at
/// least `margin` (so kinks of abs, relu, clamp are not straddled by eps).
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

namespace gradcheck_internal {

inline std::string shapeOf(const Tensor& t) {
  std::string out = "[";
  for (int64_t d = 0; d < t.dim(); ++d) {
    out += (d ? ", " : "") + std::to_string(t.size(d));
  }
  return out + "]";
}

// Six significant digits, as a person reads them.
inline std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// A pointer to element `k` (row-major logical order) of a CPU double tensor.
inline double* elementPtr(const Tensor& t, int64_t k) {
  double* p = t.data_ptr<double>();
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    const int64_t size = t.size(d);
    p += (k % size) * t.stride(d);
    k /= size;
  }
  return p;
}

inline std::vector<double> flatOutput(const GradFn& fn,
                                      const std::vector<Tensor>& in) {
  autograd::NoGradGuard no_grad;
  return valuesOf(fn(in));
}

}  // namespace gradcheck_internal

inline ::testing::AssertionResult gradcheck(const GradFn& fn,
                                            std::vector<Tensor> inputs,
                                            GradcheckOptions opt = {}) {
  using gradcheck_internal::elementPtr;
  std::vector<bool> diff(inputs.size());
  bool any = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    diff[i] = inputs[i].defined() && inputs[i].scalar_type() == ScalarType::Double;
    if (diff[i]) {
      autograd::setRequiresGrad(inputs[i], true);
      any = true;
    }
  }
  if (!any) return ::testing::AssertionFailure() << "gradcheck: no Double input";

  Tensor y = fn(inputs);
  if (y.scalar_type() != ScalarType::Double) {
    return ::testing::AssertionFailure()
           << "gradcheck: the output is " << toString(y.scalar_type())
           << ", expected Double";
  }
  if (!autograd::requiresGrad(y)) {
    return ::testing::AssertionFailure()
           << "gradcheck: the output has no grad_fn although inputs require "
              "grad";
  }
  const int64_t n_out = y.numel();

  // analytical[i][j][k] = d out_j / d in_i[k]
  std::vector<std::vector<std::vector<double>>> analytical(inputs.size());
  for (int64_t j = 0; j < n_out; ++j) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (diff[i]) autograd::setGrad(inputs[i], Tensor());
    }
    Tensor seed = zeros(y.sizes(), TensorOptions(ScalarType::Double));
    seed.data_ptr<double>()[j] = 1.0;
    autograd::backward({y}, {seed});
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!diff[i]) continue;
      Tensor g = autograd::grad(inputs[i]);
      std::vector<double> row(static_cast<size_t>(inputs[i].numel()), 0.0);
      if (g.defined()) {
        if (g.sizes() != inputs[i].sizes()) {
          std::ostringstream s;
          s << "gradcheck: the gradient of input " << i << " has shape "
            << gradcheck_internal::shapeOf(g) << ", the input "
            << gradcheck_internal::shapeOf(inputs[i]);
          return ::testing::AssertionFailure() << s.str();
        }
        if (g.scalar_type() != ScalarType::Double) {
          return ::testing::AssertionFailure()
                 << "gradcheck: the gradient of input " << i << " is "
                 << toString(g.scalar_type()) << ", expected Double";
        }
        row = valuesOf(g);
      }
      analytical[i].push_back(std::move(row));
    }
  }

  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!diff[i]) continue;
    for (int64_t k = 0; k < inputs[i].numel(); ++k) {
      double* p = elementPtr(inputs[i], k);
      const double x0 = *p;
      *p = x0 + opt.eps;
      std::vector<double> plus = gradcheck_internal::flatOutput(fn, inputs);
      *p = x0 - opt.eps;
      std::vector<double> minus = gradcheck_internal::flatOutput(fn, inputs);
      *p = x0;
      for (int64_t j = 0; j < n_out; ++j) {
        const double numerical = (plus[j] - minus[j]) / (2 * opt.eps);
        const double a = analytical[i][j][k];
        if (!(std::fabs(a - numerical) <=
              opt.atol + opt.rtol * std::fabs(numerical))) {
          return ::testing::AssertionFailure()
                 << "gradcheck: Jacobian mismatch for input " << i
                 << " (shape " << gradcheck_internal::shapeOf(inputs[i])
                 << "), output element " << j << ", input element " << k
                 << ": numerical " << gradcheck_internal::num(numerical)
                 << ", analytical " << gradcheck_internal::num(a) << " (atol "
                 << opt.atol << ", rtol " << opt.rtol << ")";
        }
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace testing
}  // namespace turnout

#endif  // TURNOUT_TESTS_KERNELS_AUTOGRAD_GRADCHECK_H_
