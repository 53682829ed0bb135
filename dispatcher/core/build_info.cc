#include "dispatcher/core/build_info.h"

#include "dispatcher/core/version.h"

namespace turnout {

BuildInfo buildInfo() {
  BuildInfo info;
  info.version = TURNOUT_VERSION;
  info.soname = "libturnout.so." TURNOUT_SOVERSION;
#ifdef __OPTIMIZE__
  info.optimized = true;
#else
  info.optimized = false;
#endif
#ifdef NDEBUG
  info.assertions = false;
#else
  info.assertions = true;
#endif
  return info;
}

}  // namespace turnout
