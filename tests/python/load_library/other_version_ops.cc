// A library linked against "another turnout" (libturnout.so.9.9, a stand-in):
// load_library must refuse it, whether that runtime is found (a second
// runtime in the process) or not (built against another version).
extern "C" int turnout_other_runtime_marker();

extern "C" int other_version_ops_marker() {
  return turnout_other_runtime_marker();
}
