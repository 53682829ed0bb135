// Helpers of the autograd tests: leaves that require grad, and the name of
// a tensor's grad_fn.
#ifndef TURNOUT_TESTS_KERNELS_AUTOGRAD_AUTOGRAD_TESTING_H_
#define TURNOUT_TESTS_KERNELS_AUTOGRAD_AUTOGRAD_TESTING_H_

#include <memory>
#include <string>
#include <vector>

#include "kernels/autograd/autograd_meta.h"
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

/// The name of `t`'s grad_fn ("MulBackward0"), or "(none)".
inline std::string fnName(const Tensor& t) {
  std::shared_ptr<autograd::Node> fn = autograd::gradFn(t);
  return fn ? fn->name() : "(none)";
}

}  // namespace testing
}  // namespace turnout

#endif  // TURNOUT_TESTS_KERNELS_AUTOGRAD_AUTOGRAD_TESTING_H_
