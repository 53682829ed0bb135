// opcheck: is an operator's registration right? Runs an operator on sample
// arguments and checks what its schema promises against what its kernels do,
// as torch.library.opcheck does; turnout.library.opcheck calls this same
// code.
//
//   OperatorHandle op = Dispatcher::singleton().findSchemaOrThrow("myops::scale", "");
//   OpCheckReport report = testing::opcheck(op, {IValue(x), IValue(2.0)});
//   report.ok();          // every test passed
//   report.toString();    // "opcheck myops::scale: test_schema: SUCCESS ..."
//
// The tests (OpCheckOptions::tests picks some):
//   test_schema                 from the schema alone: arguments not marked
//                               mutable (`!`) are not mutated (values, sizes,
//                               strides, storage offset, dtype); outputs
//                               annotated as aliases (`Tensor(a)`) share the
//                               argument's storage (a CompositeImplicitAutograd
//                               kernel's may also return a new tensor: it
//                               "may alias", as contiguous and reshape do),
//                               the others share none; a returned
//                               `Tensor(a!)` is the argument itself.
//   test_faketensor             the Meta kernel exists (or a composite serves
//                               Meta), and on meta copies of the arguments
//                               gives the sizes, strides (of dimensions of
//                               size > 1), dtype, device meta and aliasing of
//                               the real kernel; raises where the real kernel
//                               raises (any error but turnout's
//                               NotImplemented and Internal).
//   test_autograd_registration  with the floating-point arguments requiring
//                               grad, the call reaches an autograd kernel or a
//                               CompositeImplicitAutograd kernel, unless the
//                               operator returns no floating-point tensor, has
//                               out= arguments, or declares itself not
//                               differentiable with a fallthrough kernel at
//                               the Autograd key; then gradcheck passes on
//                               double copies (float where the kernel takes no
//                               double, with eps 1e-3, atol and rtol 1e-2).
//   test_graph                  traced and run by a GraphExecutor (sizes
//                               specialised, shapes propagated), the operator
//                               gives the eager outputs and mutations, and
//                               the propagated output types agree with them.
//
// Every test runs on copies of the arguments (copies that share storage
// where the arguments do), so the caller's tensors are never changed.
// Arguments are CPU tensors (or meta, for test_schema and test_graph).
//
// Thread safety: runs the operator on the calling thread; other threads may
// call and register meanwhile (a registration racing the check may be seen
// by some tests and not others).
#ifndef TURNOUT_TESTING_OPCHECK_H_
#define TURNOUT_TESTING_OPCHECK_H_

#include <string>
#include <utility>
#include <vector>

#include "dispatcher/core/ivalue.h"
#include "dispatcher/operator_handle.h"
#include "dispatcher/stack.h"

namespace turnout {
namespace testing {

/// The tests opcheck runs by default, in this order.
const std::vector<std::string>& opcheckTestNames();

struct OpCheckOptions {
  /// Which tests to run (names from opcheckTestNames()); each at most once.
  std::vector<std::string> tests = opcheckTestNames();
  /// gradcheck's step and tolerances in test_autograd_registration.
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
};

/// One test's outcome.
struct OpCheckResult {
  std::string test;     // "test_schema"
  bool ok = true;
  std::string message;  // empty when ok: what broke which rule
};

struct OpCheckReport {
  std::string op;  // "ns::name.overload"
  std::vector<OpCheckResult> results;  // in the order run

  bool ok() const;
  /// The first failing result, or null.
  const OpCheckResult* firstFailure() const;
  /// The result of `test`, or null when it did not run.
  const OpCheckResult* find(const std::string& test) const;
  /// "opcheck ns::op: 3 of 4 tests passed\n  test_schema: SUCCESS\n  ...".
  std::string toString() const;
};

/// Runs the tests on `op` with `args`, the schema's arguments in order (the
/// trailing ones may be left out where the schema gives defaults).
/// Throws InvalidArgument for an unknown or repeated test name, or
/// arguments that do not fit the schema (too many, a missing one without a
/// default); what the operator does is reported, never thrown.
OpCheckReport opcheck(const OperatorHandle& op, const Stack& args,
                      const OpCheckOptions& options = {});

/// The same with keyword arguments: `kwargs` names schema arguments after
/// the positional ones (e.g. {"out", IValue(y)}).
OpCheckReport opcheck(const OperatorHandle& op, const Stack& args,
                      const std::vector<std::pair<std::string, IValue>>& kwargs,
                      const OpCheckOptions& options = {});

}  // namespace testing
}  // namespace turnout

#endif  // TURNOUT_TESTING_OPCHECK_H_
