"""Debugging dispatch: why a call went where it went, and where the time goes.

Explains a call without running it, traces calls (with and without a
dispatch mode on the Python key), and profiles them. Each step prints a
section "== TITLE ==".

Run it with ``bazel run //examples:debugging``, or with Debian's
``/usr/bin/python3 examples/debugging.py`` once turnout is installed
(``bazel run //:install_python``). README.md ("Debugging dispatch") shows
its output, and //tests/python:debugging_example_test checks that the two
agree (the profile's times and percentages apart).
"""

from __future__ import annotations

import io
import re
from typing import Iterable

import turnout
import turnout.debug
import turnout.profiler
from logging_mode import LoggingMode  # examples/logging_mode.py


def print_trace(lines: Iterable[str]) -> None:
    """Prints trace lines, with the path of logging_mode.py shortened to
    examples/logging_mode.py wherever it was loaded from."""
    for line in lines:
        print(re.sub(r"\(\S*(examples/logging_mode\.py:\d+)\)", r"(\1)", line))


def main() -> None:
    x = turnout.ones(2, requires_grad=True)

    # 1. What a call would run, and why; nothing runs.
    print("== explain ==")
    print(turnout.debug.explain(turnout.ops.aten.mul.Tensor, x, x), end="")

    # 2. Every dispatch of a few calls: autograd, then the CPU kernel below.
    print("\n== dispatch_trace ==")
    with turnout.debug.dispatch_trace(file=io.StringIO()) as trace:
        y = (x * x).sum()
    print_trace(trace.lines)

    # 3. The same with a dispatch mode: who handles the Python key.
    print("\n== dispatch_trace with a dispatch mode ==")
    with turnout.debug.dispatch_trace(file=io.StringIO()) as trace, \
            LoggingMode(io.StringIO()):
        y = x * x
    print_trace(trace.lines)

    # 4. Where the time goes, per operator and key.
    print("\n== profile ==")
    with turnout.profiler.profile() as prof:
        for _ in range(100):
            y = (x * x).sum()
        with LoggingMode(io.StringIO()):
            for _ in range(100):
                y = (x * x).sum()
    print(prof.table(sort_by="self"), end="")
    del y


if __name__ == "__main__":
    main()
