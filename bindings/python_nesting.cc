#include "bindings/python_nesting.h"

#include <Python.h>
#include <pthread.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "bindings/python_error.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {
namespace nesting_internal {

thread_local int tls_python_nesting = 0;

namespace {

// The lowest stack address this thread may reach before entering Python
// again fails: computed once per thread. 0: not yet; 1: unknown (no check).
thread_local uintptr_t tls_stack_floor = 0;

uintptr_t computeStackFloor() {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return 1;
  void* low = nullptr;
  size_t size = 0;
  const int rc = pthread_attr_getstack(&attr, &low, &size);
  pthread_attr_destroy(&attr);
  if (rc != 0 || low == nullptr || size == 0) return 1;
  // Stacks grow down on every platform turnout builds for.
  const size_t reserve =
      std::clamp<size_t>(size / 8, size_t{64} << 10, size_t{512} << 10);
  return reinterpret_cast<uintptr_t>(low) + std::min(reserve, size / 2);
}

}  // namespace

bool pythonStackIsLow() {
  uintptr_t floor = tls_stack_floor;
  if (__builtin_expect(floor == 0, 0)) floor = tls_stack_floor = computeStackFloor();
  return reinterpret_cast<uintptr_t>(__builtin_frame_address(0)) < floor;
}

}  // namespace nesting_internal

void PythonNestingGuard::fail(Kind kind, const std::string& what,
                              bool stack_low) {
  const int depth = nesting_internal::tls_python_nesting;
  std::string message =
      "turnout: calling " + what +
      " would nest Python kernels and dispatch handlers " +
      (stack_low ? "too deeply for this thread's C stack"
                 : "more than " + std::to_string(pythonNestingLimit()) +
                       " levels deep") +
      " (" + std::to_string(depth) + " already running on this thread). ";
  switch (kind) {
    case Kind::Subclass:
      message +=
          "A __turnout_dispatch__ that calls func(*args, **kwargs) on its own "
          "tensors calls itself again: call func inside `with "
          "turnout.utils.no_dispatch():`, or on the tensors it wraps";
      break;
    case Kind::Kernel:
      message +=
          "A kernel that calls its own operator, or redispatches with the key "
          "set it was given, calls itself again: redispatch with its own key "
          "removed (keyset.remove(key)), or call a different operator";
      break;
    case Kind::Mode:
      message +=
          "Each active dispatch mode adds a level, and a handler that enters "
          "a mode inside itself adds more: use fewer nested modes, or run "
          "inner calls inside `with turnout.utils.no_dispatch():`";
      break;
    case Kind::Backward:
      message +=
          "A backward function that runs backward() on its own graph calls "
          "itself again";
      break;
  }
  PyErr_SetString(PyExc_RecursionError, message.c_str());
  throw PythonError(py::error_already_set());
}
}  // namespace bindings
}  // namespace turnout
