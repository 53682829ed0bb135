#include "kernels/dtype_dispatch.h"

#include "dispatcher/core/error.h"

namespace turnout {
namespace detail {

void throwNotImplementedForDtype(std::string_view op, ScalarType dtype) {
  TURNOUT_CHECK(false, ErrorKind::NotImplemented, "\"", op,
                "\" not implemented for '", toString(dtype), "'");
  __builtin_unreachable();
}

}  // namespace detail
}  // namespace turnout
