// A user's library of operators for turnout.ops.load_library: one op with
// a CPU kernel, built against the shared runtime (//runtime:turnout).
#include "dispatcher/library.h"
#include "kernels/ops.h"

namespace {

turnout::Tensor twice_cpu(const turnout::Tensor& x) {
  return turnout::add(x, x);
}

}  // namespace

TURNOUT_LIBRARY(loadtest, m) { m.def("twice(Tensor x) -> Tensor"); }

TURNOUT_LIBRARY_IMPL(loadtest, CPU, m) {
  m.impl("twice", TURNOUT_FN(twice_cpu));
}
