#!/usr/bin/env bash
# Builds turnout's libFuzzer targets (tests/fuzz/, --config=fuzz: clang-14,
# ASan + UBSan) and runs each for SECONDS, starting from its checked-in
# corpus (tests/fuzz/corpus/<target>/, which it replays first). Prints one
# line per target, then "N passed, N failed" last; exits non-zero when a
# target crashed, failed a check, leaked, hung or ran out of memory.
#
#   tools/fuzz.sh                 # every target, 60 s each
#   tools/fuzz.sh 300 ir          # only the IR target, 5 min
#   tools/fuzz.sh 0               # build and replay the corpora only
#
# The build uses an output base of its own (a second Bazel server, stopped on
# exit), so that clang never replaces the main output base's GCC toolchain:
# switching would reconfigure it and rebuild the whole tree each time. The
# output base is kept between runs (incremental builds); a cold one costs
# about 9 min of 2 cores. Environment:
#   TURNOUT_FUZZ_OUTPUT_BASE   the output base (default: under ~/.cache)
#   TURNOUT_FUZZ_BAZEL_FLAGS   more flags for `bazel build`, e.g.
#                              "--disk_cache=DIR --jobs=2"
#   TURNOUT_FUZZ_OUT           where the new inputs, logs and crash inputs
#                              go (default: a new /tmp folder, kept only
#                              when a target failed)
#   TURNOUT_FUZZ_SHALLOW=1     skip inputs nested more than 200 deep
#                              (tests/fuzz/fuzz_support.h)
#
# A crash input (crash-*, leak-*, timeout-*, oom-* in the target's folder of
# TURNOUT_FUZZ_OUT) replays with
#   bazel run //tests/fuzz:<target>_fuzzer -- /path/to/crash-...
# (GCC build, a plain driver) or the clang binary this script built. Once
# fixed, add it to tests/fuzz/corpus/<target>/ (the replay tests run every
# corpus file) and write a GoogleTest for the fix.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

seconds=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(schema ir snapshot registry)
fi
case "$seconds" in
  ''|*[!0-9]*) echo "usage: tools/fuzz.sh [SECONDS] [TARGET...]" >&2; exit 2 ;;
esac

output_base=${TURNOUT_FUZZ_OUTPUT_BASE:-$HOME/.cache/turnout-fuzz/$(printf '%s' "$root" | md5sum | cut -c1-12)}
# --max_idle_secs: should this script be killed before its trap runs, the
# server still goes away on its own.
bazel=(bazel --output_base="$output_base" --max_idle_secs=300)
if [ -n "${TURNOUT_FUZZ_OUT:-}" ]; then
  out=$TURNOUT_FUZZ_OUT
  keep_out=1
else
  out=$(mktemp -d /tmp/turnout-fuzz.XXXXXX)
  keep_out=0
fi
mkdir -p "$out"
failed_any=0
cleanup() {
  "${bazel[@]}" shutdown >/dev/null 2>&1 || true
  if [ "$keep_out" -eq 0 ] && [ "$failed_any" -eq 0 ]; then
    rm -rf "$out"
  fi
}
trap cleanup EXIT

labels=()
for t in "${targets[@]}"; do
  labels+=("//tests/fuzz:${t}_fuzzer")
done
# shellcheck disable=SC2086  # TURNOUT_FUZZ_BAZEL_FLAGS is a list of flags
flags=(--config=fuzz ${TURNOUT_FUZZ_BAZEL_FLAGS:-})
echo "=== bazel build ${flags[*]} (output base $output_base) ==="
start=$(date +%s)
if ! "${bazel[@]}" build "${flags[@]}" "${labels[@]}"; then
  failed_any=1
  echo "fuzz: the build failed"
  echo "0 passed, ${#targets[@]} failed"
  exit 1
fi
echo "fuzz: build took $(( $(date +%s) - start )) s"
bin=$("${bazel[@]}" info "${flags[@]}" bazel-bin 2>/dev/null)

passed=0
failed=0
summary=()
for t in "${targets[@]}"; do
  dir="$out/$t"
  mkdir -p "$dir/new" "$dir/artifacts"
  log="$dir/log"
  dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  # Inputs longer than the longest seed, and no longer than a few KB: the
  # harnesses' checks are linear or worse in the input.
  case "$t" in
    snapshot) max_len=8192 ;;
    registry) max_len=512 ;;
    *) max_len=4096 ;;
  esac
  echo "=== $t: ${seconds} s ==="
  # -timeout: one input running 10 s is a hang. -rss_limit_mb: the harnesses
  # bound their own work; more than 2 GB is a leak or a runaway allocation.
  # The first corpus folder receives the new inputs: a scratch one, so that
  # the checked-in corpus changes only by hand.
  if [ "$seconds" -eq 0 ]; then
    run_flags=(-runs=0)
  else
    run_flags=(-max_total_time="$seconds")
  fi
  # The outer timeout catches a fuzzer that never stops (a hang in a
  # harness's own setup).
  timeout $((seconds + 120)) "$bin/tests/fuzz/${t}_fuzzer" "${run_flags[@]}" \
    -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
    "${dict[@]}" -artifact_prefix="$dir/artifacts/" \
    "$dir/new" "tests/fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
  crashes=$(find "$dir/artifacts" -type f | wc -l)
  line="$t: ${runs:-?} runs, ${rate:-?} runs/s, ${cov:-cov: ? ft: ?}, ${crashes} crashes"
  if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    failed=$((failed + 1))
    failed_any=1
    line="$line (exit $rc): FAILED, log $log"
    for a in "$dir"/artifacts/*; do
      [ -f "$a" ] && line="$line, input $a"
    done
    # The failure itself, for the CI log.
    grep -E -m1 -A12 'ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error:|turnout fuzz:|terminate called' "$log"
  else
    passed=$((passed + 1))
  fi
  summary+=("$line")
done

echo "=== fuzz summary ($seconds s per target) ==="
for line in "${summary[@]}"; do
  echo "$line"
done
if [ "$failed_any" -ne 0 ]; then
  echo "fuzz: logs and inputs kept in $out"
fi
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
