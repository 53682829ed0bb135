// A user's library of operators, built as a shared library for
// `inspect --load`: one new operator with a CPU kernel, and an override of a
// reference operator's CPU kernel.
#include "dispatcher/core/tensor.h"
#include "dispatcher/library.h"

namespace {

turnout::Tensor same(const turnout::Tensor& x) { return x; }

}  // namespace

TURNOUT_LIBRARY(inspect_test, m) { m.def("same(Tensor x) -> Tensor"); }

TURNOUT_LIBRARY_IMPL(inspect_test, CPU, m) { m.impl("same", TURNOUT_FN(same)); }

TURNOUT_LIBRARY_IMPL(aten, CPU, m) { m.impl("relu", TURNOUT_FN(same)); }
