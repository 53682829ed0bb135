// Taking and releasing the GIL from C++, safely at interpreter shutdown.
//
//   withoutGil([&] { op.callBoxed(stack); });   // GIL held; released inside
//
//   GilAcquire gil;                             // any thread, any GIL state
//   PyObject* r = callOrPark(fn, args, nullptr);
//
// Why not pybind11's gil_scoped_release / gil_scoped_acquire: while the
// interpreter shuts down, CPython 3.11 ends a thread that asks for the GIL
// (or whose Python code would take it back) with pthread_exit. Its forced
// unwinding aborts the process when it starts inside a destructor
// (gil_scoped_release's takes the GIL back: std::terminate) or reaches a
// catch (...) that does not rethrow (an inter-op pool task's: "exception not
// rethrown"), and it runs the cleanups of C++ frames, which would drop
// Python references without the GIL. These helpers take the GIL outside any
// destructor, and a thread that finds the interpreter shutting down -- a
// daemon thread still working at exit, a pool thread -- parks until the
// process ends instead (parkIfFinalizing, parkForever), keeping its
// references.
//
// Every binding that runs C++ work without the GIL, takes the GIL on a
// thread that may not hold it, or calls Python there, goes through these.
//
// Thread safety: per thread.
#ifndef TURNOUT_BINDINGS_GIL_H_
#define TURNOUT_BINDINGS_GIL_H_

#include <Python.h>
#include <cxxabi.h>

namespace turnout {
namespace bindings {

/// Runs `f` with the GIL released and returns with it held again, whether
/// `f` returns or throws (its exception propagates unchanged). A thread
/// that comes back while the interpreter shuts down waits for the process
/// to end. The warnings `f` gave are then issued as Python warnings
/// (gil_internal::flush_warnings). Precondition: the GIL is held by this
/// thread.
template <class F>
void withoutGil(F&& f);

/// PyGILState_Ensure / Release as RAII: works whether this thread never had
/// a Python thread state or released the GIL with withoutGil. Parks instead
/// of returning while the interpreter shuts down.
class GilAcquire {
 public:
  GilAcquire() : state_(ensureOrPark()) {}
  ~GilAcquire() { PyGILState_Release(state_); }
  GilAcquire(const GilAcquire&) = delete;
  GilAcquire& operator=(const GilAcquire&) = delete;

 private:
  static PyGILState_STATE ensureOrPark();
  PyGILState_STATE state_;
};

/// PyObject_Call (a new reference, or null with the Python error set). When
/// the interpreter shuts down while `fn` runs, the thread parks here rather
/// than being unwound. Precondition: the GIL is held.
inline PyObject* callOrPark(PyObject* fn, PyObject* args, PyObject* kwargs);

/// Call before taking the GIL on a thread that gave it up. While the
/// interpreter shuts down, CPython 3.11 ends a thread that asks for the GIL
/// with pthread_exit; the forced unwinding then runs pybind11's cleanup
/// without the GIL (a crash) or starts inside a destructor (std::terminate).
/// Such a thread, a daemon thread still calling at exit, waits here instead
/// until the process ends (as CPython 3.14 itself does).
void parkIfFinalizing();
/// Never returns: the calling thread sleeps until the process ends.
[[noreturn]] void parkForever();

// Implementation details.

namespace gil_internal {
// How deep this thread is in withoutGil: a thread that released the GIL
// for a call from Python (its warnings wait for the call's return).
inline thread_local int tls_without_gil = 0;
// Issues the turnout::warn messages this thread deferred while it ran a
// call from Python (python_error.h, flushWarnings), or null. Set by
// turnout._C when it loads; each extension module has its own copy, so
// another module's withoutGil (turnout._C_cuda's) leaves them to _C's next
// call.
inline void (*flush_warnings)() = nullptr;

// PyEval_RestoreThread, parking instead of being ended at shutdown.
inline void restoreOrPark(PyThreadState* state) {
  parkIfFinalizing();
  try {
    PyEval_RestoreThread(state);
  } catch (abi::__forced_unwind&) {  // shutdown began while it waited
    parkForever();
  }
}
}  // namespace gil_internal

template <class F>
void withoutGil(F&& f) {
  PyThreadState* state = PyEval_SaveThread();
  ++gil_internal::tls_without_gil;
  try {
    f();
  } catch (...) {
    --gil_internal::tls_without_gil;
    gil_internal::restoreOrPark(state);
    throw;
  }
  --gil_internal::tls_without_gil;
  gil_internal::restoreOrPark(state);
  if (gil_internal::flush_warnings != nullptr) gil_internal::flush_warnings();
}

inline PyGILState_STATE GilAcquire::ensureOrPark() {
  parkIfFinalizing();
  try {
    return PyGILState_Ensure();
  } catch (abi::__forced_unwind&) {  // shutdown began while it waited
    parkForever();
  }
}

inline PyObject* callOrPark(PyObject* fn, PyObject* args, PyObject* kwargs) {
  try {
    return PyObject_Call(fn, args, kwargs);
  } catch (abi::__forced_unwind&) {
    parkForever();
  }
}

}  // namespace bindings
}  // namespace turnout

#endif  // TURNOUT_BINDINGS_GIL_H_
