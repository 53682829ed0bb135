// PythonError: a Python exception (type, value, traceback) travelling
// through C++ frames -- the dispatcher, the graph interpreter, a Future --
// as a C++ exception that can be raised again any number of times and
// dropped on any thread.
//
//   try {
//     fn();                                   // Python code, GIL held
//   } catch (py::error_already_set& e) {
//     throw PythonError(e);
//   }
//   ...
//   catch (const PythonError& e) { e.restore(); }   // GIL held: raise it
//
// Why not pybind11's error_already_set: it can be restored only once (a
// second restore is a pybind11_fail inside pybind11's own catch block: an
// abort), and its destructor takes the GIL, which ends the thread inside a
// destructor (an abort) when the last copy is dropped on a non-Python
// thread while the interpreter shuts down. A failed Future keeps its error
// for every wait, and its last reference may be dropped on an inter-op pool
// thread at any time.
//
// The translator in errors.cc raises a PythonError that reaches pybind11 or
// ops.cc as its Python exception, unchanged, with the traceback it had when
// it was caught (each raise starts again from that traceback).
//
// Thread safety: copies share the Python objects; a PythonError may be
// copied, rethrown and destroyed on any thread without the GIL (the
// references are released as python_kernel.h's releasePyObject does).
// restore() and the constructor need the GIL.
#ifndef TURNOUT_BINDINGS_PYTHON_ERROR_H_
#define TURNOUT_BINDINGS_PYTHON_ERROR_H_

#include <pybind11/pybind11.h>

#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace turnout {
namespace bindings {

class PythonError : public std::exception {
 public:
  /// Takes the exception `e` holds (its type, value and traceback), leaving
  /// `e` as it was. Precondition: the GIL is held.
  explicit PythonError(const pybind11::error_already_set& e);

  /// "Boom: kernel raised" and the traceback, as error_already_set::what().
  const char* what() const noexcept override { return what_.c_str(); }

  /// Makes the exception the current Python error, with the traceback it
  /// had when it was caught. May be called any number of times.
  /// Precondition: the GIL is held.
  void restore() const;

  /// restore(), then throws a fresh pybind11::error_already_set for code
  /// that must hand pybind11 its own type. Precondition: the GIL is held.
  [[noreturn]] void raise() const;

 private:
  struct Held;
  std::shared_ptr<const Held> held_;
  std::string what_;
};

/// `text` as a Python UserWarning at the calling Python frame, for C++
/// warning handlers (the autograd fallback's, backward's create_graph one):
/// takes the GIL, and throws PythonError when a warnings filter turns the
/// warning into an error; with no interpreter left, turnout::warn instead.
/// Call it outside any turnout lock (it takes the GIL).
void warnAsUserWarning(const std::string& text);

/// The turnout::warn messages (a resized out=, a TorchScript warn) given on
/// this thread while Python's call into turnout runs, with the GIL or under
/// withoutGil: kept until the call returns to Python (flushWarnings), then
/// issued as Python UserWarnings, as torch's bindings do -- not at the
/// warn() site, which may hold a lock or lack the GIL. Null until the first.
inline thread_local std::vector<std::string>* tls_deferred_warnings = nullptr;
void deferWarning(const std::string& text);
/// Issues the deferred warnings; throws PythonError when a warnings filter
/// turns one into an error (the rest are dropped). Precondition: the GIL.
void issueDeferredWarnings();
/// issueDeferredWarnings when there are any: one load and a compare on the
/// way out of every operator call.
inline void flushWarnings() {
  if (__builtin_expect(tls_deferred_warnings != nullptr &&
                           !tls_deferred_warnings->empty(),
                       0)) {
    issueDeferredWarnings();
  }
}

}  // namespace bindings
}  // namespace turnout

#endif  // TURNOUT_BINDINGS_PYTHON_ERROR_H_
