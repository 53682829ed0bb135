// What this copy of the runtime is: its version and how it was compiled.
// turnout._C._build_info() shows it, so that a test (or a user wondering
// why a call is slow) can tell an optimised install from a debug build.
#ifndef TURNOUT_DISPATCHER_CORE_BUILD_INFO_H_
#define TURNOUT_DISPATCHER_CORE_BUILD_INFO_H_

namespace turnout {

struct BuildInfo {
  const char* version;  // TURNOUT_VERSION, e.g. "0.1.0"
  const char* soname;   // "libturnout.so.0.1"
  bool optimized;       // compiled with -O1 or more
  bool assertions;      // NDEBUG not defined
};

/// The runtime's build, as compiled into libturnout (not into the caller).
BuildInfo buildInfo();

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CORE_BUILD_INFO_H_
