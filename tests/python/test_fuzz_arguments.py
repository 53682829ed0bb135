"""Argument conversion against hostile values (issue 15): every registered
overload, called from Python with random nested values drawn by hypothesis
(tools/fuzz_python.py, which runs the same for longer) and with a fixed
sweep of the values that used to crash. Each batch runs in a child process,
so a crash is counted and shown with its reproducer; none is allowed, nor a
hang, nor an error without a message."""

import fuzz_python

# The values that crashed before (deep or self-referencing, issue 15), and a
# few more that stress conversion: past int64, NaN, non-ASCII, a dict.
HOSTILE = [
    "_selfref([1])",
    "_selfref([], 'tuple')",
    "_deep1(100_000)",
    "_deep1(100_000, 'tuple')",
    "2**64",
    "float('nan')",
    "'\\u00e9\\U0001f600'",
    "{'k': _selfref([])}",
]


def check(calls, result):
    fuzz_python.run_calls(calls, result)
    assert not result.findings, "\n".join(map(str, result.findings[:5])) + \
        "\n" + result.summary()
    assert result.calls == len(calls)


def test_every_overload_takes_hostile_values_in_every_position():
    ops = fuzz_python.overloads()
    assert len(ops) > 100
    calls = []
    for name, args in ops:
        for value in HOSTILE:
            # Through the overload, in each position (None before it) ...
            for i in range(max(1, len(args))):
                calls.append(f"_op({name!r}, 'overload')("
                             + ", ".join(["None"] * i + [value]) + ")")
            # ... and through the packet's overload resolution, twice.
            calls.append(f"_op({name!r}, 'packet')({value}, {value})")
    check(calls, fuzz_python.Result())


def test_random_calls_to_every_overload():
    ops = fuzz_python.overloads()
    # Six draws per overload (hypothesis does not draw them evenly), and
    # derandomized: the same calls each run.
    n = max(4000, 6 * len(ops))
    calls = fuzz_python.draw_calls(n, ops)
    assert len(calls) > 0.9 * n
    called = {c.split("'")[1] for c in calls}
    assert len(called) > 0.9 * len(ops), sorted(set(n for n, _ in ops) - called)
    check(calls, fuzz_python.Result())
