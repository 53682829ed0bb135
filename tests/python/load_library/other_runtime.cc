// Stands in for another turnout's runtime: a library named
// libturnout.so.9.9, which other_version_ops links.
extern "C" int turnout_other_runtime_marker() { return 99; }
