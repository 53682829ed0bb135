// gradcheck: compares the gradients autograd computes with central finite
// differences, as torch.autograd.gradcheck does.
//
//   Tensor x = turnout::rand({3}, TensorOptions(ScalarType::Double));
//   autograd::setRequiresGrad(x, true);
//   GradcheckResult r = autograd::gradcheck(
//       [](const std::vector<Tensor>& in) {
//         return std::vector<Tensor>{turnout::tanh(in[0])};
//       },
//       {x}, GradcheckOptions{}.raiseException(false));
//   r.ok;        // true when every Jacobian entry agrees
//   r.message;   // otherwise: which output, which input, both Jacobians
//
// The numerical Jacobian of every differentiable output (floating point)
// with respect to every input that requires grad is
// (f(x + eps) - f(x - eps)) / (2 eps), one element at a time; the
// analytical one comes from one backward() per output element. They agree
// when |analytical - numerical| <= atol + rtol * |numerical| everywhere
// (torch's rule and defaults). Use double inputs: in single precision eps
// is lost in rounding.
//
// The function receives fresh leaf copies of the inputs (so the caller's
// tensors keep their .grad and values, and inputs that are not leaves work
// too); it must be deterministic and return the same outputs each call.
//
// Thread safety: runs on the calling thread; `fn` runs there too.
#ifndef TURNOUT_KERNELS_AUTOGRAD_GRADCHECK_H_
#define TURNOUT_KERNELS_AUTOGRAD_GRADCHECK_H_

#include <functional>
#include <string>
#include <vector>

#include "dispatcher/core/tensor.h"

namespace turnout {
namespace autograd {

/// What gradcheck differentiates: inputs to outputs. Outputs that are not
/// floating point (or are undefined) are not differentiated.
using GradcheckFunction =
    std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

struct GradcheckOptions {
  double eps = 1e-6;   // the finite-difference step
  double atol = 1e-5;  // absolute tolerance
  double rtol = 1e-3;  // relative tolerance (of the numerical value)
  /// Throw Error(InvalidArgument) with the message on a mismatch, instead of
  /// returning a result with ok == false.
  bool raise_exception = true;

  GradcheckOptions& raiseException(bool v) {
    raise_exception = v;
    return *this;
  }
};

struct GradcheckResult {
  bool ok = true;
  /// Empty when ok; else "Jacobian mismatch for output 0 with respect to
  /// input 1: ..." with both Jacobians.
  std::string message;
};

/// Checks the gradients of `fn` at `inputs` with respect to every input that
/// requires grad. Throws InvalidArgument (whatever raise_exception says)
/// when no input requires grad, an input that requires grad is not a
/// floating-point CPU tensor, `fn` returns a different number of outputs or
/// sizes from one call to the next, or eps is not positive; errors `fn`
/// raises propagate.
GradcheckResult gradcheck(const GradcheckFunction& fn,
                          const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options = {});

}  // namespace autograd
}  // namespace turnout

#endif  // TURNOUT_KERNELS_AUTOGRAD_GRADCHECK_H_
