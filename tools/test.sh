#!/usr/bin/env bash
# Runs every turnout test: installs what is missing, then `bazel test //...`
# plainly and under AddressSanitizer+UBSan and ThreadSanitizer. The plain
# configuration also runs tools/check_bazel_repository.sh (turnout as a
# Bazel repository of another workspace, its operator library loaded into
# Python; a second Bazel server, about 4 min), outside `bazel test`, as one
# more test case, and tools/fuzz.sh (the libFuzzer targets of tests/fuzz,
# built with clang-14 in an output base of their own, about 10 min on 2
# cores, then run for TURNOUT_FUZZ_SECONDS, default 20, each; one test case
# per target).
# Prints "N passed, N failed" (test cases, summed over configurations) last
# and exits non-zero on any failure.
#
#   tools/test.sh              # all three configurations
#   tools/test.sh plain        # just one of: plain asan tsan
#   TURNOUT_SKIP_BAZEL_REPOSITORY=1 tools/test.sh plain
#                              # quick local runs: without the Bazel
#                              # repository check (CI always runs it)
#   TURNOUT_SKIP_FUZZ=1 tools/test.sh plain
#                              # without the fuzz targets (CI always runs
#                              # them; their corpora replay in `bazel test`
#                              # anyway, //tests/fuzz:*_corpus_test)
#   tools/test.sh cuda         # on a GPU machine: the GPU tests (tagged
#                              # "cuda"), plain; a skipped test fails. On a
#                              # GPU machine without Bazel, use
#                              # tools/gpu/bundle.sh instead.
set -uo pipefail
cd "$(dirname "$0")/.."

tools/install_deps.sh || { echo "0 passed, 1 failed"; exit 1; }

configs=("$@")
if [ ${#configs[@]} -eq 0 ]; then
  configs=(plain asan tsan)
fi

passed=0
failed=0
status=0
for config in "${configs[@]}"; do
  flags=()
  query='tests(//...)'
  count_flag=
  if [ "$config" = cuda ]; then
    if ! nvidia-smi -L >/dev/null 2>&1; then
      echo "cuda: no GPU here (nvidia-smi -L failed); tools/test.sh cuda is for a GPU machine"
      failed=$((failed + 1))
      continue
    fi
    flags=(--build_tests_only --test_tag_filters=cuda)
    query='attr("tags", "\bcuda\b", tests(//...))'
    count_flag=skipped-fail
  elif [ "$config" != plain ]; then
    # --build_tests_only: what no test needs (the optimised package, the
    # wheel, benchmarks) is built once, in the plain configuration.
    flags=(--config="$config" --build_tests_only)
    # Python tests need an uninstrumented extension: plain configuration only
    # (.bazelrc filters them out of the sanitizer configurations).
    query='tests(//...) except attr("tags", "python", tests(//...))'
  fi
  echo "=== bazel test //... ${flags[*]:-} ==="
  # No stale reports: every configuration writes the same testlogs folder.
  rm -rf "$(bazel info bazel-testlogs 2>/dev/null)"/*
  bazel test "${flags[@]}" //... || status=1
  # Sum the test cases of this run's test targets from their JUnit reports.
  read -r p f < <(tools/count_results.sh "$query" $count_flag)
  echo "${config}: ${p} passed, ${f} failed"
  passed=$((passed + p))
  failed=$((failed + f))

  # Once, in the plain configuration: it builds in a workspace of its own,
  # with a Bazel server of its own (a nested Bazel inside a test sandbox
  # would be fragile), and takes the optimised Python package that the
  # `bazel test` above built. One test case: passed or failed.
  if [ "$config" = plain ]; then
    if [ "${TURNOUT_SKIP_BAZEL_REPOSITORY:-}" = 1 ]; then
      echo "bazel repository: skipped (TURNOUT_SKIP_BAZEL_REPOSITORY=1)"
    else
      echo "=== tools/check_bazel_repository.sh ==="
      if tools/check_bazel_repository.sh </dev/null; then
        passed=$((passed + 1))
      else
        echo "bazel repository: FAILED (tools/check_bazel_repository.sh, above)"
        failed=$((failed + 1))
      fi
    fi
    # Once too: the fuzz targets build with clang in an output base of their
    # own; each target counts as one test case.
    if [ "${TURNOUT_SKIP_FUZZ:-}" = 1 ]; then
      echo "fuzz: skipped (TURNOUT_SKIP_FUZZ=1)"
    else
      fuzz_seconds=${TURNOUT_FUZZ_SECONDS:-20}
      echo "=== tools/fuzz.sh $fuzz_seconds ==="
      fuzz_log=$(mktemp /tmp/turnout-fuzz-log.XXXXXX)
      tools/fuzz.sh "$fuzz_seconds" </dev/null 2>&1 | tee "$fuzz_log"
      fuzz_last=$(tail -1 "$fuzz_log")
      rm -f "$fuzz_log"
      if [[ "$fuzz_last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        passed=$((passed + BASH_REMATCH[1]))
        failed=$((failed + BASH_REMATCH[2]))
      else
        echo "fuzz: FAILED (tools/fuzz.sh, above)"
        failed=$((failed + 1))
      fi
    fi
  fi
done

if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  # A build error or a crashed test binary leaves no report to count.
  failed=1
fi
echo "${passed} passed, ${failed} failed"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
