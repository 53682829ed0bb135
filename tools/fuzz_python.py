"""Fuzzes turnout's Python argument conversion: random nested values passed
to every registered operator overload, each batch in a child process, so
that a crash is counted and reported with its reproducer instead of ending
the run.

    bazel run //tools:fuzz_python -- 300        # five minutes
    bazel run //tools:fuzz_python -- --replay FILE

Values (drawn with hypothesis): ints (small, at the int64 limits and past
them), floats (NaN, infinities), bools, None, str (non-ASCII too), tensors
of a few dtypes and shapes, dtypes and devices; lists, tuples and dicts of
them nested; lists that contain themselves; nesting from 50 to 100,000
levels. Each call gives every argument either such a value or one that fits
its schema type, positionally or by keyword, through the overload or its
packet (overload resolution).

A call passes when it returns or raises an Exception whose message is not
empty. A child that dies (a signal, a non-zero exit) is a crash, one that
runs past its time a hang, and an exception with an empty message or a
SystemError (an unknown C++ exception) a bad error; each is printed with a
script that reproduces it. Prints "calls N, crashes C, hangs H, bad errors
B" and exits 1 when any of C, H, B is not 0.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Sequence, Tuple

__all__ = ["PRELUDE", "Finding", "Result", "draw_calls", "overloads",
           "run_calls"]

# What every child (and every reproducer) runs first: the helpers a call's
# source uses to build its values.
PRELUDE = '''\
import turnout
from turnout import ops as _ops


def _t(shape, dtype, grad=False):
    t = turnout.zeros(shape, dtype=getattr(turnout, dtype))
    if grad:
        t.requires_grad_(True)
    return t


def _selfref(items, wrap=None):
    """A list that contains itself (inside a tuple when wrap="tuple")."""
    out = list(items)
    out.append((out,) if wrap == "tuple" else out)
    return out


def _deep(n, leaf, kind="list"):
    v = leaf
    for _ in range(n):
        v = [v] if kind == "list" else (v,)
    return v


_deep_ones = {}


def _deep1(n, kind="list"):
    """_deep(n, 1, kind), built once per process (100,000 levels take a
    while) and shared: conversions only read it."""
    if (n, kind) not in _deep_ones:
        _deep_ones[n, kind] = _deep(n, 1, kind)
    return _deep_ones[n, kind]


def _op(name, via):
    ns, rest = name.split("::")
    base, _, overload = rest.partition(".")
    packet = getattr(getattr(_ops, ns), base)
    return packet if via == "packet" else getattr(packet, overload or "default")
'''

# The child: reads a JSON list of call sources, runs each one, and says
# "S i" before call i and "E i STATUS" after it, so that the parent knows
# which call a crash or a hang happened in.
CHILD = PRELUDE + '''
import json, resource, sys
# A size drawn at random must fail to allocate, not exhaust the machine.
_limit = 6 << 30
resource.setrlimit(resource.RLIMIT_AS, (_limit, _limit))
_calls = json.load(open(sys.argv[1]))
for _i, _src in enumerate(_calls):
    print("S", _i, flush=True)
    try:
        exec(_src)
        _status = "ok"
    except Exception as _e:  # noqa: BLE001: every clean error passes
        _msg = str(_e)
        if isinstance(_e, SystemError) or not _msg.strip():
            _status = "bad " + type(_e).__name__ + " " + json.dumps(_msg)
        else:
            _status = "err " + type(_e).__name__
        del _e
    print("E", _i, _status, flush=True)
print("DONE", flush=True)
'''


def overloads() -> List[Tuple[str, List[Tuple[str, str, bool]]]]:
    """Every registered overload: ("aten::add.Tensor", [(name, type,
    kwarg_only), ...]), from the registry through turnout's Python API."""
    from turnout import _C
    out = []
    for name in sorted(_C._dispatch_get_all_op_names()):
        qualname, _, overload = name.partition(".")
        schema = _C._OpOverload(qualname, overload or "default")._schema
        out.append((name, [(a.name, a.type, a.kwarg_only)
                           for a in schema.arguments]))
    return out


# ---- Values, as Python source ------------------------------------------------

def _strategies(ops: Sequence[Tuple[str, List[Tuple[str, str, bool]]]]):
    from hypothesis import strategies as st

    INF = float("inf")
    dtypes = ["float32", "float64", "int64", "int32", "bool", "float16"]
    small = st.integers(-4, 4)
    ints = st.one_of(
        small, st.integers(),
        st.sampled_from([2**31 - 1, 2**31, 2**63 - 1, 2**63, -2**63,
                         -2**63 - 1, 2**64, 10**30, -10**100]))
    floats = st.one_of(
        st.floats(allow_nan=True, allow_infinity=True).map(
            lambda x: f"float('{x}')" if x != x or x in (INF, -INF)
            else repr(x)),
        st.sampled_from(["float('nan')", "float('inf')", "-float('inf')",
                         "-0.0", "1e308", "5e-324"]))
    shape = st.lists(st.integers(0, 3), max_size=3)
    tensor = st.builds(
        lambda s, d, g: f"_t({s!r}, {d!r}, {g and d.startswith('float')})",
        shape, st.sampled_from(dtypes), st.booleans())

    leaf = st.one_of(
        ints.map(repr), floats, st.booleans().map(repr),
        st.just("None"), st.text(max_size=6).map(repr), tensor,
        st.sampled_from(dtypes).map(lambda d: f"turnout.{d}"),
        st.sampled_from(["'cpu'", "'cuda:0'", "'meta'", "'cpu:-1'", "'x'",
                         "turnout.device('cpu')"]))

    def containers(children):
        items = st.lists(children, max_size=4)
        return st.one_of(
            items.map(lambda xs: "[" + ", ".join(xs) + "]"),
            items.map(lambda xs: "(" + "".join(x + ", " for x in xs) + ")"),
            st.lists(st.tuples(st.text(max_size=3), children), max_size=3)
            .map(lambda kv: "{" + ", ".join(f"{k!r}: {v}" for k, v in kv)
                 + "}"),
            st.builds(lambda xs, w: f"_selfref([{', '.join(xs)}], {w!r})",
                      items, st.sampled_from([None, "tuple"])))

    nested = st.recursive(leaf, containers, max_leaves=10)
    deep = st.builds(
        lambda n, v, k: f"_deep({n}, {v}, {k!r})",
        st.sampled_from([50, 99, 100, 101, 1000, 100_000]), leaf,
        st.sampled_from(["list", "tuple"]))
    hostile = st.one_of(nested, nested, nested, deep)

    def typed(t: str):
        """A value that fits schema type `t` (most of the time)."""
        if t.endswith("?"):
            return st.one_of(st.just("None"), typed(t[:-1]))
        m = re.fullmatch(r"(.*)\[(\d*)\]", t)
        if m:
            inner = typed(m.group(1))
            return st.one_of(
                st.lists(inner, max_size=3).map(
                    lambda xs: "[" + ", ".join(xs) + "]"),
                st.lists(inner, max_size=3).map(
                    lambda xs: "(" + "".join(x + ", " for x in xs) + ")"),
                *([small.map(repr)] if m.group(2) else []))
        if t == "Tensor":
            return tensor
        if t in ("int", "SymInt"):
            return st.one_of(small, ints).map(repr)
        if t == "float":
            return floats
        if t == "bool":
            return st.booleans().map(repr)
        if t in ("Scalar", "number"):
            return st.one_of(small.map(repr), floats,
                             st.booleans().map(repr))
        if t == "str":
            return st.text(max_size=6).map(repr)
        if t == "ScalarType":
            return st.sampled_from(dtypes).map(lambda d: f"turnout.{d}")
        if t == "Device":
            return st.sampled_from(["'cpu'", "'meta'", "'cuda:0'"])
        return hostile

    def call(op):
        name, args = op
        picks = [st.one_of(typed(t), hostile) for _, t, _ in args]
        extra = st.lists(hostile, max_size=1)
        return st.builds(
            lambda values, how, more, via: _render(name, args, values, how,
                                                   more, via),
            st.tuples(*picks), st.lists(st.sampled_from("pko"),
                                        min_size=len(args),
                                        max_size=len(args)),
            extra, st.sampled_from(["overload", "packet"]))

    return st.sampled_from(list(ops)).flatmap(call)


def _render(name, args, values, how, more, via) -> str:
    """The source of one call: argument i positional ("p", only while every
    argument before it is), by keyword ("k") or left out ("o"), plus maybe
    one positional argument too many."""
    pos: List[str] = []
    kw: List[str] = []
    positional = True
    for (arg, _, kwarg_only), value, h in zip(args, values, how):
        if h == "p" and positional and not kwarg_only:
            pos.append(value)
            continue
        positional = False
        if h != "o":
            kw.append(f"{arg}={value}")
    if positional and more:
        pos.extend(more)
    return f"_op({name!r}, {via!r})(" + ", ".join(pos + kw) + ")"


def draw_calls(n: int, ops, seed: Optional[int] = None) -> List[str]:
    """`n` call sources drawn by hypothesis (fewer when it runs out)."""
    import hypothesis
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    strategy = _strategies(ops)
    out: List[str] = []

    @settings(max_examples=n, database=None, deadline=None,
              phases=[Phase.generate], derandomize=seed is None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def collect(data):
        out.append(data.draw(strategy))

    if seed is not None:
        collect = hypothesis.seed(seed)(collect)
    collect()
    return out


# ---- Running calls in children -------------------------------------------------

class Finding:
    """One call that crashed, hung or raised a bad error."""

    def __init__(self, kind: str, source: str, detail: str):
        self.kind, self.source, self.detail = kind, source, detail

    def reproducer(self) -> str:
        return PRELUDE + "\n" + self.source + "\n"

    def __str__(self) -> str:
        return (f"--- {self.kind}: {self.detail}\n{self.source}\n"
                "--- reproducer (with the prelude):\n" + self.reproducer())


class Result:
    def __init__(self):
        self.calls = 0
        self.findings: List[Finding] = []
        # How the calls that finished ended: "ok", or the exception's type.
        self.outcomes: Dict[str, int] = {}

    def count(self, kind: str) -> int:
        return sum(f.kind == kind for f in self.findings)

    def summary(self) -> str:
        return (f"calls {self.calls}, crashes {self.count('crash')}, "
                f"hangs {self.count('hang')}, bad errors "
                f"{self.count('bad error')}")


def _child_env() -> Dict[str, str]:
    return dict(os.environ,
                PYTHONPATH=os.pathsep.join(p for p in sys.path if p))


def run_calls(calls: List[str], result: Result, timeout: float = 60) -> None:
    """Runs `calls` in child processes, restarting after each crash or hang
    with the call after it, and adds the counts and findings to `result`."""
    start = 0
    with tempfile.TemporaryDirectory() as tmp:
        while start < len(calls):
            batch = calls[start:]
            path = os.path.join(tmp, "calls.json")
            with open(path, "w") as f:
                json.dump(batch, f)
            try:
                proc = subprocess.run(
                    [sys.executable, "-c", CHILD, path], capture_output=True,
                    text=True, env=_child_env(), timeout=timeout)
                out, err, rc, hung = proc.stdout, proc.stderr, proc.returncode, False
            except subprocess.TimeoutExpired as e:
                out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
                err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
                rc, hung = None, True
            started, ended = -1, -1
            for line in out.splitlines():
                parts = line.split(" ", 3)
                if parts[0] == "S":
                    started = int(parts[1])
                elif parts[0] == "E":
                    ended = int(parts[1])
                    outcome = parts[2] if parts[2] == "ok" else parts[3].split()[0]
                    result.outcomes[outcome] = result.outcomes.get(outcome, 0) + 1
                    if parts[2] == "bad":
                        result.findings.append(Finding(
                            "bad error", batch[ended], parts[3]))
            result.calls += max(ended, started) + 1
            if not hung and rc == 0 and "DONE" in out:
                return
            if started < 0 or started == ended:
                # Died outside any call (the import, the prelude).
                raise RuntimeError(f"the fuzz child failed (rc {rc}):\n{err}")
            kind = "hang" if hung else "crash"
            detail = (f"no answer in {timeout} s" if hung
                      else f"exit status {rc}: {err.strip()[-500:]}")
            result.findings.append(Finding(kind, batch[started], detail))
            start += started + 1


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("seconds", nargs="?", type=float, default=60,
                        help="how long to run (default 60)")
    parser.add_argument("--batch", type=int, default=400,
                        help="calls drawn and run per child (default 400)")
    parser.add_argument("--seed", type=int, default=None,
                        help="hypothesis seed of the first batch (default: "
                        "random)")
    parser.add_argument("--replay", metavar="FILE",
                        help="run the call sources in FILE (one per line)")
    args = parser.parse_args(argv)

    result = Result()
    if args.replay:
        with open(args.replay) as f:
            run_calls([line for line in f.read().splitlines() if line],
                      result)
    else:
        ops = overloads()
        deadline = time.monotonic() + args.seconds
        seed = args.seed if args.seed is not None else int.from_bytes(
            os.urandom(4), "little")
        batches = 0
        while time.monotonic() < deadline:
            calls = draw_calls(args.batch, ops, seed + batches)
            run_calls(calls, result)
            batches += 1
            print(f"[{time.monotonic() - deadline + args.seconds:6.0f} s] "
                  + result.summary(), flush=True)
        print(f"{len(ops)} overloads, seed {seed}, {batches} batches")
    for finding in result.findings:
        print(finding)
    print("outcomes: " + ", ".join(
        f"{k} {v}" for k, v in sorted(result.outcomes.items(),
                                      key=lambda kv: -kv[1])))
    print(result.summary())
    return 1 if result.findings else 0


if __name__ == "__main__":
    sys.exit(main())
