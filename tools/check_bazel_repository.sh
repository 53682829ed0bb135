#!/usr/bin/env bash
# Checks that turnout works as a Bazel repository of another workspace, as
# examples/external/README.md tells users: copies examples/external out of
# the tree, points its WORKSPACE at this tree (TURNOUT_PATH), builds
# //:libmy_ops.so and //:main there with a Bazel server of its own (its own
# --output_user_root, so nothing is shared with this tree's builds, and no
# lock with this tree's server), runs main and checks its output. Then it
# loads that libmy_ops.so into Debian's /usr/bin/python3 with
# turnout.ops.load_library, the package being this tree's optimised one
# (`bazel run //:install_python -- --target`, by this tree's own server),
# and checks that the library bound to the runtime _C loaded (one
# libturnout mapped), its operator's result and autograd, and that
# _dispatch_dump_table names my_ops.cc. Offline, like every build here.
#
#   tools/check_bazel_repository.sh [WORKDIR]   # default: a new /tmp folder,
#                                               # removed on exit
#
# tools/test.sh runs it once, in its plain configuration, after `bazel test`
# (so //:install_python is already built), and counts it as one test case;
# //tests/tools:install_prefix_test checks the make and CMake ways. It
# compiles the whole runtime from source with the second Bazel server (about
# 4 min on 2 cores with CUDA). Run it by hand after changing deps.bzl,
# WORKSPACE, third_party/, BUILD files that must also work from another
# workspace, or the example. Needs no stdin; stops its Bazel server on
# every exit. Prints "bazel repository: ok" last, or fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -gt 0 ]; then
  work=$1
  keep_work=1
else
  work=$(mktemp -d /tmp/turnout-bazel-repository.XXXXXX)
  keep_work=0
fi
mkdir -p "$work"
work=$(cd "$work" && pwd)
ws="$work/my_ops"
site="$work/python"
# --max_idle_secs: should this script be killed before its trap runs, the
# server still goes away on its own.
bazel=(bazel --output_user_root="$work/bazel-root" --max_idle_secs=300)

# Stops this check's Bazel server on every exit (from the workspace, which
# names the server), then removes the folder this script made. Bazel leaves
# read-only folders in its output root: made writable first.
cleanup() {
  if [ -d "$ws" ]; then
    (cd "$ws" && "${bazel[@]}" shutdown >/dev/null 2>&1) || true
  fi
  if [ "$keep_work" -eq 0 ]; then
    chmod -R u+w "$work" 2>/dev/null || true
    rm -rf "$work"
  fi
}
trap cleanup EXIT

start=$(date +%s)
# The Python package users get (optimised whatever the flags), from this
# tree, by this tree's server.
(cd "$root" && bazel run //:install_python -- --target "$site")

rm -rf "$ws"
cp -R "$root/examples/external" "$ws"
sed -i "s|TURNOUT_PATH|$root|" "$ws/WORKSPACE"
cd "$ws"

build_start=$(date +%s)
"${bazel[@]}" build //:libmy_ops.so //:main
echo "built in $(($(date +%s) - build_start)) s"
"${bazel[@]}" run //:main >"$work/main.out"
cat "$work/main.out"

failures=0
# expect PATTERN: a line of main's output matches the grep -E PATTERN.
expect() {
  if ! grep -qE -- "$1" "$work/main.out"; then
    echo "FAIL: no line of main's output matches /$1/"
    failures=$((failures + 1))
  fi
}
expect '^scaled_add\(a, b, 0\.5\) = \[0\.5, 1\.5, 2\.5, 3\.5\]$'
expect '^on meta: Tensor\(sizes=\[4\], dtype=Float, device=meta\)$'
expect '^b\.grad = \[0\.5, 0\.5, 0\.5, 0\.5\]$'
expect '^CPU: registered at (.*/)?my_ops\.cc:[0-9]+ \[kernel\]$'
expect '^Meta: registered at (.*/)?my_ops\.cc:[0-9]+ \[kernel\]$'
expect '^AutogradCPU: registered at (.*/)?my_ops\.cc:[0-9]+ \[autograd kernel\]$'
# The library links the shared runtime (one registry per process).
# (readelf's output is read whole: grep -q would close the pipe early.)
library=$(readlink -f bazel-bin/libmy_ops.so)
dynamic=$(readelf -d "$library")
needed=$(sed -n 's/.*NEEDED.*\[\(libturnout\.so\.[^]]*\)\].*/\1/p' <<<"$dynamic")
if [ -z "$needed" ]; then
  echo "FAIL: bazel-bin/libmy_ops.so does not link libturnout.so"
  failures=$((failures + 1))
fi

# The library in Python: this tree's optimised package from $site only (-s:
# not /usr/bin/python3's user site, which may hold another turnout), run
# from $work, outside any source tree.
echo "=== load_library($library) in /usr/bin/python3 ==="
if ! (cd "$work" && env -u PYTHONHOME PYTHONPATH="$site" /usr/bin/python3 -s - \
        "$site" "$library" "$ws/my_ops.cc" "$needed") <<'PY'; then
import os
import re
import sys

site, library, source, needed = sys.argv[1:]
import turnout

# This tree's optimised package, from the folder install_python wrote.
assert turnout.__file__ == os.path.join(site, "turnout", "__init__.py"), \
    turnout.__file__
info = turnout._C._build_info()
assert info["optimized"] and not info["assertions"], info
# The library needs the soname of the runtime the package carries.
assert needed == info["soname"], (needed, info["soname"])
runtime = os.path.realpath(os.path.join(site, "turnout", "lib", info["soname"]))

turnout.ops.load_library(library)
assert library in turnout.ops.loaded_libraries, turnout.ops.loaded_libraries

# The loader took the libturnout _C had loaded (same soname), not the copy
# beside libmy_ops.so in the external workspace's bazel-bin: one runtime,
# one registry.
maps = open("/proc/self/maps").read().split()
mapped = sorted({p for p in maps if "/libturnout.so" in p})
assert mapped == [runtime], mapped
assert library in maps, f"{library} is not mapped"

# Eager, through the autograd kernel and its backward.
a = turnout.tensor([0.0, 1.0, 2.0, 3.0], requires_grad=True)
b = turnout.tensor([1.0, 1.0, 1.0, 1.0], requires_grad=True)
y = turnout.ops.myops.scaled_add(a, b, 0.5)
assert y.tolist() == [0.5, 1.5, 2.5, 3.5], y.tolist()
y.sum().backward()
assert a.grad.tolist() == [1.0] * 4, a.grad.tolist()
assert b.grad.tolist() == [0.5] * 4, b.grad.tolist()

# The dispatch table names my_ops.cc and each TURNOUT_LIBRARY_IMPL block's
# line.
lines = open(source).read().splitlines()
table = turnout._C._dispatch_dump_table("myops::scaled_add")
for key, runtime_key, kind in [("CPU", "CPU", "kernel"),
                               ("Meta", "Meta", "kernel"),
                               ("Autograd", "AutogradCPU", "autograd kernel")]:
    line = 1 + next(i for i, text in enumerate(lines)
                    if text.startswith(f"TURNOUT_LIBRARY_IMPL(myops, {key}, m)"))
    pattern = rf"^{runtime_key}: registered at (\S*/)?my_ops\.cc:{line} \[{kind}\]$"
    assert re.search(pattern, table, re.M), f"no line matches {pattern}:\n{table}"

print(f"loaded {library} into {turnout.__file__}")
print(f"runtime mapped once: {mapped[0]}")
print(f"scaled_add(a, b, 0.5) = {y.tolist()}; b.grad = {b.grad.tolist()}")
print(table, end="")
PY
  echo "FAIL: libmy_ops.so in Python (above)"
  failures=$((failures + 1))
fi
echo "checked in $(($(date +%s) - start)) s"

if [ "$failures" -ne 0 ]; then
  echo "bazel repository: $failures check(s) failed"
  exit 1
fi
echo "bazel repository: ok"
