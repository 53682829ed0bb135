#!/usr/bin/env bash
# Runs every turnout test: installs what is missing, then `bazel test //...`
# plainly and under AddressSanitizer+UBSan and ThreadSanitizer.
# Prints "N passed, N failed" (test cases, summed over configurations) last
# and exits non-zero on any failure.
#
#   tools/test.sh              # all three configurations
#   tools/test.sh plain        # just one of: plain asan tsan
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
done

if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  # A build error or a crashed test binary leaves no report to count.
  failed=1
fi
echo "${passed} passed, ${failed} failed"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
