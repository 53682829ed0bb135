// A second library of operators for `inspect --load`, so that the test can
// load two: one operator, defined with no kernel.
#include "dispatcher/library.h"

TURNOUT_LIBRARY(inspect_test_more, m) { m.def("other(Tensor x) -> Tensor"); }
