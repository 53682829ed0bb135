// loadLibrary: dlopens a shared library of operators, whose TURNOUT_LIBRARY
// blocks register into this process's registry (the one of the shared
// runtime both link), all or nothing.
//
//   turnout::loadLibrary("/path/libmy_ops.so");    // its ops are now callable
//   turnout::loadedLibraries();                    // {"/path/libmy_ops.so"}
//
// turnout.ops.load_library in Python and `inspect --load` call it.
//
// Thread safety: loads are serialised; operators may be called on other
// threads meanwhile.
#ifndef TURNOUT_DISPATCHER_LOAD_LIBRARY_H_
#define TURNOUT_DISPATCHER_LOAD_LIBRARY_H_

#include <exception>
#include <string>
#include <vector>

namespace turnout {
namespace detail {

class LibraryInit;

// What loadLibrary collects from the blocks a library registers while it is
// being opened (on the opening thread).
struct LoadCapture {
  std::vector<LibraryInit*> registered;  // in registration order
  std::exception_ptr error;              // the first block that threw
  std::string error_site;                // "TURNOUT_LIBRARY(ns) at f.cc:3"
};

/// The calling thread's capture while loadLibrary runs, else null.
LoadCapture*& currentLoadCapture();

}  // namespace detail

/// Loads the shared library at `path` (made absolute and canonical) and
/// runs its static registrations. Returns false, doing nothing, when that
/// file is already loaded.
///
/// Throws Error (kind Load) naming the file and the cause when it cannot be
/// loaded: no such file, not a shared library, a missing symbol, linked
/// against another turnout version or a second copy of the runtime. Throws
/// the registration's own error, prefixed with the file and the block
/// (e.g. "TURNOUT_LIBRARY(myops) at my_ops.cc:12"), when one of its blocks
/// throws (a duplicate def, a schema that does not parse, a kernel whose
/// signature does not match): the blocks that had registered are undone,
/// so nothing of the library stays registered.
bool loadLibrary(const std::string& path);

/// The canonical paths of the libraries loadLibrary loaded, in load order.
std::vector<std::string> loadedLibraries();

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_LOAD_LIBRARY_H_
