#include "dispatcher/load_library.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "dispatcher/core/error.h"
#include "dispatcher/core/version.h"
#include "dispatcher/library.h"

namespace turnout {
namespace detail {

LoadCapture*& currentLoadCapture() {
  thread_local LoadCapture* capture = nullptr;
  return capture;
}

}  // namespace detail

namespace {

constexpr const char* kRuntimePrefix = "libturnout.so";

struct LoaderState {
  std::mutex mu;
  std::vector<std::string> loaded;  // canonical paths, in load order
  // Libraries refused after dlopen, with their message. They stay mapped:
  // a retired dispatch table may still hold one of their kernels, whose
  // code must outlive it, so nothing loaded is ever dlclosed. Loading one
  // again would run no registration: it fails again with the first message.
  std::map<std::string, std::string> failed;
};

LoaderState& state() {
  static auto* s = new LoaderState;  // never destroyed: outlives static dtors
  return *s;
}

std::string baseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The file this runtime was loaded from: libturnout.so.V, or the program
// itself when the runtime is linked statically (C++ tests).
std::string ownRuntime() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&loadLibrary), &info) != 0 &&
      info.dli_fname != nullptr) {
    return info.dli_fname;
  }
  return "";
}

// The loaded objects whose file is a libturnout.so*, by path.
std::vector<std::string> loadedRuntimes() {
  std::vector<std::string> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name != nullptr &&
            baseName(info->dlpi_name).rfind(kRuntimePrefix, 0) == 0) {
          static_cast<std::vector<std::string>*>(data)->push_back(
              info->dlpi_name);
        }
        return 0;
      },
      &out);
  return out;
}

std::string demangle(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), free);
  return status == 0 && name ? std::string(name.get()) : symbol;
}

// dlerror()'s text, with what it means for a library of operators.
std::string explainDlopenError(const std::string& error) {
  const std::string own_soname =
      std::string(kRuntimePrefix) + "." + TURNOUT_SOVERSION;
  const size_t runtime = error.find(kRuntimePrefix);
  if (runtime != std::string::npos &&
      error.find("cannot open shared object file") != std::string::npos) {
    const std::string needed =
        error.substr(runtime, error.find(':', runtime) - runtime);
    return detail::joinParts(
        error, ". It was built against another turnout version (it needs ",
        needed, "; this process runs ", own_soname, ", turnout ",
        TURNOUT_VERSION, "): rebuild it against this turnout");
  }
  const std::string undefined = "undefined symbol: ";
  const size_t at = error.find(undefined);
  if (at != std::string::npos) {
    const std::string symbol = error.substr(at + undefined.size());
    return detail::joinParts(
        error, " (", demangle(symbol),
        "). Either it was built against the headers of another turnout "
        "version (rebuild it against turnout ",
        TURNOUT_VERSION,
        "), or it uses a library it does not link (add that library to its "
        "link line)");
  }
  return error;
}

void rollBack(detail::LoadCapture& capture) {
  for (auto it = capture.registered.rbegin(); it != capture.registered.rend();
       ++it) {
    (*it)->release();
  }
  capture.registered.clear();
}

}  // namespace

bool loadLibrary(const std::string& path) {
  TURNOUT_CHECK(!path.empty(), ErrorKind::Load,
                "load_library: the path is empty; give the path of a shared "
                "library of operators, e.g. build/libmy_ops.so");
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) {
    const int err = errno;
    throw Error(
        ErrorKind::Load,
        detail::joinParts(
            "load_library(", path, "): could not load it: ", std::strerror(err),
            ". Give the path of a shared library of operators (relative "
            "paths are from the current directory)"));
  }
  const std::string full = resolved;

  LoaderState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (std::find(s.loaded.begin(), s.loaded.end(), full) != s.loaded.end()) {
    return false;
  }
  if (auto it = s.failed.find(full); it != s.failed.end()) {
    throw Error(ErrorKind::Load,
                detail::joinParts(it->second,
                                  "\n(This is the error of the first attempt: "
                                  "the library stays mapped, so a fixed "
                                  "build of it loads in a new process.)"));
  }

  const std::vector<std::string> runtimes_before = loadedRuntimes();
  detail::LoadCapture capture;
  detail::currentLoadCapture() = &capture;
  void* handle = dlopen(full.c_str(), RTLD_NOW | RTLD_LOCAL);
  detail::currentLoadCapture() = nullptr;
  if (handle == nullptr) {
    const char* error = dlerror();
    throw Error(
        ErrorKind::Load,
        detail::joinParts(
            "load_library(", full, "): could not load it: ",
            explainDlopenError(error ? error : "unknown dlopen error")));
  }

  // A second runtime: the library linked another libturnout (another
  // version, or another copy by path); its operators went to that one's
  // registry, which this process does not use.
  const std::string own = ownRuntime();
  for (const std::string& runtime : loadedRuntimes()) {
    const bool was_there =
        std::find(runtimes_before.begin(), runtimes_before.end(), runtime) !=
        runtimes_before.end();
    if (was_there || runtime == own) continue;
    rollBack(capture);
    s.failed[full] = detail::joinParts(
        "load_library(", full,
        "): it brought a second turnout runtime into the process (", runtime,
        ") besides this one (", own.empty() ? std::string("unknown") : own,
        ", turnout ", TURNOUT_VERSION,
        "), so its operators would register where no one calls "
        "them. Build it against this turnout's shared runtime "
        "(pkg-config turnout, CMake's turnout::turnout, "
        "@turnout//runtime:turnout), and load it into a process "
        "that uses that runtime");
    throw Error(ErrorKind::Load, s.failed[full]);
  }

  if (capture.error) {
    rollBack(capture);
    ErrorKind kind = ErrorKind::InvalidArgument;
    std::string what;
    try {
      std::rethrow_exception(capture.error);
    } catch (const Error& e) {
      kind = e.kind();
      what = e.what();
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "an exception that is not a std::exception";
    }
    const std::string message = detail::joinParts(
        "load_library(", full, "): ", capture.error_site, " failed: ", what,
        "\nNothing of the library stays registered: fix it and load it "
        "again (in a new process: this one keeps the failed file mapped)");
    s.failed[full] = message;
    throw Error(kind, message);
  }
  // Never dlclose a loaded library: its kernels must outlive every call.
  s.loaded.push_back(full);
  return true;
}

std::vector<std::string> loadedLibraries() {
  LoaderState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.loaded;
}

}  // namespace turnout
