// A library whose third block fails (it defines aten::add.Tensor again):
// load_library must undo the two blocks before it.
#include "dispatcher/library.h"
#include "kernels/ops.h"

namespace {

turnout::Tensor first_cpu(const turnout::Tensor& x) { return x; }

}  // namespace

TURNOUT_LIBRARY(loadbad, m) { m.def("first(Tensor x) -> Tensor"); }

TURNOUT_LIBRARY_IMPL(loadbad, CPU, m) {
  m.impl("first", TURNOUT_FN(first_cpu));
}

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.def("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
}
