#!/usr/bin/env bash
# Runs what tools/gpu/bundle.sh packed, on the GPU machine:
#
#   turnout-gpu/run.sh tests [OUT_DIR]     # every GPU test; JUnit XML into OUT_DIR
#   turnout-gpu/run.sh bench [FLAGS...]    # bench/cuda_bench with Google Benchmark flags
#   turnout-gpu/run.sh python ARGS...      # the bundle's Python, turnout importable
#
# `tests` ends with "N passed, N failed" and exits non-zero on any failure.
# A test that skips itself counts as failed here: on a GPU machine every
# GPU test must run.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cuda_lib=${CUDA_HOME:-/usr/local/cuda}/lib64
export LD_LIBRARY_PATH="$here/lib:$cuda_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$here/site"
export PYTHONDONTWRITEBYTECODE=1
py="$here/py/bin/python3"

case "${1:-}" in
  tests)
    reports=${2:-$(mktemp -d)}
    mkdir -p "$reports"
    status=0
    for t in "$here"/bin/*_test; do
      name=$(basename "$t")
      echo "=== $name ==="
      "$t" --gtest_output="xml:$reports/$name.xml" || status=1
    done
    echo "=== python ==="
    (cd "$here/tests" &&
     "$py" run_pytest.py -rs --junitxml="$reports/python.xml" \
       test_cuda.py test_tensor.py test_docstrings.py test_op_db_cuda.py) || status=1
    # Sum the JUnit reports: skipped counts as failed (see above).
    read -r passed failed < <("$py" - "$reports" <<'EOF'
import glob, sys, xml.etree.ElementTree as ET
passed = failed = 0
for path in glob.glob(sys.argv[1] + "/*.xml"):
    for case in ET.parse(path).getroot().iter("testcase"):
        bad = [c for c in case if c.tag in ("failure", "error", "skipped")]
        skipped_by_gtest = case.get("status") == "notrun" or case.get("result") == "skipped"
        if bad or skipped_by_gtest:
            failed += 1
            for c in bad:
                print(f"{case.get('classname')}.{case.get('name')}: {c.tag}", file=sys.stderr)
        else:
            passed += 1
print(passed, failed)
EOF
    )
    if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
    echo "${passed} passed, ${failed} failed"
    [ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
    ;;
  bench)
    shift
    exec "$here/bin/cuda_bench" "$@"
    ;;
  python)
    shift
    exec "$py" "$@"
    ;;
  *)
    echo "usage: run.sh tests [OUT_DIR] | bench [FLAGS...] | python ARGS..." >&2
    exit 2
    ;;
esac
