// A library that uses a function no loaded library defines: dlopen fails
// with "undefined symbol", which load_library explains.
#include "dispatcher/library.h"

namespace turnout_test {
turnout::Tensor definedNowhere(const turnout::Tensor& x);
}  // namespace turnout_test

TURNOUT_LIBRARY(loadmissing, m) {
  m.def("f(Tensor x) -> Tensor", TURNOUT_FN(turnout_test::definedNowhere));
}
