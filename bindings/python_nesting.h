// PythonNestingGuard: a per-thread bound on how deeply C++ re-enters Python,
// so that runaway recursion through the dispatcher is a RecursionError on
// every thread, never a C stack overflow.
//
//   void PythonKernel::callWithGil(const OperatorHandle& op, ...) {
//     PythonNestingGuard nesting([&] { return "a Python kernel of " + ...; });
//     ...  // call the Python function
//   }
//
// Each Python kernel, Python-key handler (dispatch mode or
// __turnout_dispatch__) and Python backward function counts one level while
// it runs. Python's own recursion limit does not protect these paths: every
// level holds dispatcher and binding frames as well as Python's, so a thread
// can run out of C stack before Python counts to its limit (a
// __turnout_dispatch__ that calls func(*args) on its own subclass without
// no_dispatch(), a kernel that redispatches with its own key set, on a thread
// with a smaller stack). Entering fails with RecursionError when
//   - this thread already runs pythonNestingLimit() levels: kMaxPythonNesting,
//     or fewer when Python's recursion limit is low, so that this error,
//     which names the operator and the fix, comes before Python's own (each
//     level runs at least one Python frame), or
//   - less C stack is left than a reserve (an eighth of the thread's stack,
//     at least 64 KiB and at most 512 KiB): whatever the frames weigh in
//     this build and whatever the thread's stack size.
// The C++ call path is untouched: only Python kernels and handlers pay, one
// thread-local increment and one compare of the stack pointer.
//
// Thread safety: the count is per thread. Precondition: the GIL is held
// (raising the RecursionError builds a Python exception).
#ifndef TURNOUT_BINDINGS_PYTHON_NESTING_H_
#define TURNOUT_BINDINGS_PYTHON_NESTING_H_

#include <Python.h>

#include <algorithm>
#include <string>
#include <utility>

namespace turnout {
namespace bindings {

/// The most Python kernels and handlers one thread may have running at
/// once, nested inside each other (Python's default recursion limit).
inline constexpr int kMaxPythonNesting = 1000;

/// The bound in force: kMaxPythonNesting, or Python's recursion limit less
/// 50 frames when that is lower (never below 16).
/// Precondition: the GIL is held.
inline int pythonNestingLimit() {
  return std::max(16, std::min(kMaxPythonNesting, Py_GetRecursionLimit() - 50));
}

namespace nesting_internal {
extern thread_local int tls_python_nesting;
/// True when this thread has less C stack left than its reserve.
bool pythonStackIsLow();
}  // namespace nesting_internal

class PythonNestingGuard {
 public:
  /// What is entered; picks the error's hint.
  enum class Kind { Kernel, Subclass, Mode, Backward };

  /// Enters one level; `describe()` (called only on failure) says what was
  /// being entered: "Bad.__turnout_dispatch__ for aten::add.Tensor".
  template <class Describe>
  PythonNestingGuard(Kind kind, Describe&& describe) {
    const bool too_deep =
        nesting_internal::tls_python_nesting >= pythonNestingLimit();
    if (__builtin_expect(too_deep || nesting_internal::pythonStackIsLow(), 0)) {
      fail(kind, std::forward<Describe>(describe)(), !too_deep);
    }
    ++nesting_internal::tls_python_nesting;
  }
  ~PythonNestingGuard() { --nesting_internal::tls_python_nesting; }
  PythonNestingGuard(const PythonNestingGuard&) = delete;
  PythonNestingGuard& operator=(const PythonNestingGuard&) = delete;

 private:
  /// Throws PythonError(RecursionError) naming `what`.
  [[noreturn]] static void fail(Kind kind, const std::string& what,
                                bool stack_low);
};

/// How many Python kernels and handlers this thread is running, nested.
inline int pythonNestingDepth() { return nesting_internal::tls_python_nesting; }

}  // namespace bindings
}  // namespace turnout

#endif  // TURNOUT_BINDINGS_PYTHON_NESTING_H_
