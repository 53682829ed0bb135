#!/usr/bin/env bash
# Prints "PASSED FAILED": test cases summed over the JUnit reports
# (bazel-testlogs/<target>/test.xml) of the test targets of a bazel query
# (first argument; default every test target in //...).
# A target without a report counts as one failure. With a second argument
# "skipped-fail", a skipped test case counts as failed too (GPU runs, where
# every GPU test must run).
set -uo pipefail
cd "$(dirname "$0")/.."
logs=$(bazel info bazel-testlogs 2>/dev/null)
passed=0
failed=0
query=${1:-'tests(//...)'}
skipped_fail=0
[ "${2:-}" = skipped-fail ] && skipped_fail=1
for target in $(bazel query "$query" 2>/dev/null); do
  path=${target#//}
  path=${path/://}
  xml="$logs/$path/test.xml"
  if [ ! -f "$xml" ]; then
    failed=$((failed + 1))
    continue
  fi
  # Only the top-level <testsuites> (or the first <testsuite>) totals.
  read -r t f e < <(/usr/bin/python3 - "$xml" "$skipped_fail" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
t = sum(int(s.get("tests", 0)) for s in suites)
f = sum(int(s.get("failures", 0)) for s in suites)
e = sum(int(s.get("errors", 0)) for s in suites)
sk = sum(int(s.get("skipped", 0) or 0) + int(s.get("disabled", 0) or 0) for s in suites)
if sys.argv[2] == "1":
    f += sk  # skipped-fail
else:
    t -= sk
print(t, f, e)
PY
)
  bad=$((f + e))
  passed=$((passed + t - bad))
  failed=$((failed + bad))
done
echo "$passed $failed"
