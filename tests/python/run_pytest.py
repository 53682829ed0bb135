"""Runs pytest on the test files given as arguments, from Bazel's py_test.

Writes the JUnit report where Bazel asks (XML_OUTPUT_FILE), so that
tools/count_results.sh counts each test case.
"""

import os
import sys

import pytest

if __name__ == "__main__":
    args = ["-q", "-p", "no:cacheprovider", "--doctest-modules"]
    xml = os.environ.get("XML_OUTPUT_FILE")
    if xml:
        args.append(f"--junitxml={xml}")
    sys.exit(pytest.main(args + sys.argv[1:]))
