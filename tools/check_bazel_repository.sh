#!/usr/bin/env bash
# Checks that turnout works as a Bazel repository of another workspace, as
# examples/external/README.md tells users: copies examples/external out of
# the tree, points its WORKSPACE at this tree (TURNOUT_PATH), builds
# //:libmy_ops.so and //:main there with a Bazel server of its own (its own
# --output_user_root, so nothing is shared with this tree's builds), runs
# main and checks its output. Offline, like every build here.
#
#   tools/check_bazel_repository.sh [WORKDIR]   # default: a new /tmp folder
#
# It compiles the whole runtime from source with a second Bazel server (3
# min 50 s on 2 cores with CUDA, measured), so CI does not run it;
# //tests/tools:install_prefix_test checks the make and CMake ways. Run it by
# hand after changing deps.bzl, WORKSPACE, third_party/, BUILD files that
# must also work from another workspace, or the example. Prints
# "bazel repository: ok" last, or fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d /tmp/turnout-bazel-repository.XXXXXX)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
ws="$work/my_ops"

rm -rf "$ws"
cp -R "$root/examples/external" "$ws"
sed -i "s|TURNOUT_PATH|$root|" "$ws/WORKSPACE"
cd "$ws"
bazel=(bazel --output_user_root="$work/bazel-root")
# Stops this check's Bazel server on every exit.
trap '"${bazel[@]}" shutdown >/dev/null 2>&1 || true' EXIT

start=$(date +%s)
"${bazel[@]}" build //:libmy_ops.so //:main
echo "built in $(($(date +%s) - start)) s"
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
dynamic=$(readelf -d bazel-bin/libmy_ops.so)
if ! grep -q 'NEEDED.*\[libturnout\.so\.' <<<"$dynamic"; then
  echo "FAIL: bazel-bin/libmy_ops.so does not link libturnout.so"
  failures=$((failures + 1))
fi

if [ "$failures" -ne 0 ]; then
  echo "bazel repository: $failures check(s) failed"
  exit 1
fi
echo "bazel repository: ok"
