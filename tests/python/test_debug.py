"""Tests for bindings/debug.cc and turnout.debug / turnout.profiler /
turnout.utils: explain for each kind of table entry, dispatch traces,
profiles, registry snapshots and diffs, counters, timers and same()."""

import doctest
import io
import json
import os
import re
import time

import numpy as np
import pytest

import turnout
import turnout.debug
import turnout.profiler
import turnout.utils
from turnout import DispatchKey, _C
from turnout._mode import DispatchMode, no_dispatch
from turnout.utils import counters, same, timed, time_report

from example_loader import load_example
# Autograd fallback "nothing" in this module: the dumps, explanations and traces here are torch 1.13's.
from torch113_tables import autograd_fallback_nothing  # noqa: F401 (autouse)



aten = turnout.ops.aten


def grad_tensor():
    return turnout.ones(2, requires_grad=True)


# ---- explain -----------------------------------------------------------------------


def test_explain_kernel():
    x = turnout.ones(2)
    with _C._AutoDispatchBelowAutograd():
        e = turnout.debug.explain(aten.add.Tensor, x, x)
    assert e.op == "aten::add.Tensor"
    assert e.entry.key == DispatchKey.CPU
    assert e.entry.kind == "kernel"
    assert e.entry.site.startswith("registered at kernels/")
    assert [a.name for a in e.arguments] == ["self", "other"]
    assert e.arguments[0].key_set.has(DispatchKey.CPU)
    assert e.redispatch_chain == []
    text = str(e)
    assert text.startswith("explain aten::add.Tensor(Tensor self, Tensor other")
    assert "  chosen: CPU -> registered at kernels/" in text


def test_explain_autograd_kernel_and_its_redispatch_chain():
    x = grad_tensor()
    e = turnout.debug.explain(aten.mul.Tensor, x, x)
    assert (e.entry.key, e.entry.kind) == (DispatchKey.AutogradCPU, "autograd kernel")
    assert [(s.key, s.kind) for s in e.redispatch_chain] == [(DispatchKey.CPU, "kernel")]
    assert "a redispatch below AutogradCPU would visit:" in str(e)


def test_explain_sees_the_threads_excluded_keys():
    x = grad_tensor()
    with _C._AutoDispatchBelowAutograd():
        e = turnout.debug.explain(aten.mul.Tensor, x, x)
    assert e.tls_excluded.has(DispatchKey.AutogradCPU)
    assert e.entry.key == DispatchKey.CPU


def test_explain_math_and_default_backend_kernels():
    lib = _C._dispatch_library("DEF", "dbg_kinds", "", "kinds.py", 3)
    lib.def_name_t_t("math")
    lib.def_name_t_t("explicit", "CompositeExplicitAutograd", "explicit_kernel")
    x = turnout.ones(2)
    e = turnout.debug.explain("dbg_kinds::math", x)
    assert (e.entry.key, e.entry.kind) == (DispatchKey.AutogradCPU, "math kernel")
    assert e.entry.site == "default_def_name_t_t"
    e = turnout.debug.explain("dbg_kinds::explicit", x)
    assert (e.entry.key, e.entry.kind) == (DispatchKey.CPU, "default backend kernel")
    assert e.entry.site == "explicit_kernel"
    lib._destroy()


def test_explain_backend_fallback_and_missing():
    lib = _C._dispatch_library("DEF", "dbg_fb", "", "fb.py", 1)
    lib.def_("f(Tensor x) -> Tensor")
    x = turnout.ones(2)
    e = turnout.debug.explain("dbg_fb::f", x)
    assert (e.entry.key, e.entry.kind) == (DispatchKey.CPU, "missing")
    assert DispatchKey.AutogradCPU in list(e.skipped)
    assert 'a call here fails with "Could not run"' in str(e)

    fb = _C._dispatch_library("IMPL", "_", "Tracer", "fb.py", 9)
    fb.fallback("", lambda *args, **kwargs: args[0])
    with _C._IncludeDispatchKeyGuard(DispatchKey.Tracer):
        e = turnout.debug.explain("dbg_fb::f", x)
    assert (e.entry.key, e.entry.kind) == (DispatchKey.Tracer, "backend fallback")
    assert "python kernel" in e.entry.site
    assert e.tls_included.has(DispatchKey.Tracer)
    fb._destroy()
    lib._destroy()


def test_explain_picks_the_overload_of_a_packet_and_takes_kwargs():
    x = turnout.ones(2)
    # As a call (and torch 1.13): the Tensor overload, 2.0 a wrapped number.
    e = turnout.debug.explain(aten.add, x, 2.0)
    assert e.op == "aten::add.Tensor"
    assert turnout.debug.explain(aten.add.Scalar, x, 2.0).op == "aten::add.Scalar"
    assert turnout.debug.explain(aten.add, x, x, alpha=2).op == "aten::add.Tensor"
    assert turnout.debug.explain("aten::add", x, x).op == "aten::add.Tensor"


@pytest.mark.parametrize("call,exc,match", [
    (lambda: turnout.debug.explain(aten.add.Tensor, turnout.ones(2), "x"), TypeError,
     "argument 'other' \\(position 2\\) must be Tensor, but got str"),
    (lambda: turnout.debug.explain(aten.add.Tensor, turnout.ones(2)), TypeError,
     "missing required argument 'other'"),
    (lambda: turnout.debug.explain(aten.add.Tensor, turnout.ones(2), turnout.ones(2),
                                   beta=1), TypeError, "unexpected keyword argument 'beta'"),
    (lambda: turnout.debug.explain(aten.add, "a", 1), TypeError,
     "no overload fits the arguments"),
    (lambda: turnout.debug.explain("aten::no_such_op", 1), ValueError,
     "no operator named 'aten::no_such_op'"),
    (lambda: turnout.debug.explain("no_namespace", 1), ValueError,
     "expected a qualified operator name"),
    (lambda: turnout.debug.explain(42), TypeError, "got int"),
])
def test_explain_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ---- dispatch trace ------------------------------------------------------------------


def test_trace_autograd_then_cpu():
    x = grad_tensor()
    out = io.StringIO()
    with turnout.debug.dispatch_trace(file=out) as t:
        aten.mul.Tensor(x, x)
    lines = out.getvalue().splitlines()
    assert lines == t.lines
    assert lines[0].startswith(
        "aten::mul.Tensor call DispatchKeySet(CPU, AutogradCPU) -> "
        "AutogradCPU [autograd kernel] registered at kernels/autograd/")
    cpu = [e for e in t.events if e["key"] == DispatchKey.CPU and
           e["op"] == "aten::mul.Tensor"]
    # The autograd kernel calls the operator again below autograd.
    assert cpu and cpu[0]["depth"] == 1 and cpu[0]["entry_kind"] == "kernel"
    assert any(l.startswith("  aten::mul.Tensor call DispatchKeySet(CPU) -> CPU "
                            "[kernel] registered at kernels/") for l in lines)
    # Off again after the block.
    assert not _C._dispatch_trace_enabled()
    with turnout.debug.dispatch_trace(file=io.StringIO()) as t2:
        pass
    aten.mul.Tensor(x, x)
    assert t2.lines == []


def test_trace_to_a_path_is_written_as_it_happens(tmp_path):
    path = tmp_path / "trace.txt"
    x = turnout.ones(2)
    with turnout.debug.dispatch_trace(file=path):
        aten.add.Tensor(x, x)
        assert "aten::add.Tensor call " in path.read_text()
    assert path.read_text().splitlines()[0].startswith("aten::add.Tensor call ")


def test_trace_shows_python_kernels():
    lib = _C._dispatch_library("DEF", "dbg_pyk", "", "pyk.py", 1)
    lib.def_("f(Tensor x) -> Tensor")

    def my_cpu_kernel(x):
        return x

    lib.impl("f", "CPU", my_cpu_kernel)
    with turnout.debug.dispatch_trace(file=io.StringIO()) as t:
        turnout.ops.dbg_pyk.f(turnout.ones(1))
    line = [l for l in t.lines if l.startswith("dbg_pyk::f")][0]
    assert "-> CPU [kernel] python kernel" in line
    assert "my_cpu_kernel" in line
    lib._destroy()


def test_trace_through_a_python_mode():
    class Passthrough(DispatchMode):
        def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    x = turnout.ones(2)
    with turnout.debug.dispatch_trace(file=io.StringIO()) as t:
        with Passthrough():
            aten.add.Tensor(x, x)
    add = [e for e in t.events if e["op"] == "aten::add.Tensor"]
    python = [e for e in add if e["key"] == DispatchKey.Python]
    assert python, t.lines
    # The mode calls the operator on: the CPU kernel runs nested inside.
    assert any(e["key"] == DispatchKey.CPU and e["depth"] > python[0]["depth"]
               for e in add), t.lines
    assert any("-> Python [" in l for l in t.lines)


def normalised(lines):
    """Registration sites without their line numbers (they move as code is
    edited), and Python files relative to the working directory."""
    cwd = os.getcwd() + os.sep
    return [re.sub(r"\.cc:\d+", ".cc:N", l).replace(cwd, "") for l in lines]


def test_trace_names_the_python_mode_that_handles_a_call():
    example = load_example("logging_mode")
    handler = example.LoggingMode.__turnout_dispatch__.__code__
    where = f"{os.path.relpath(handler.co_filename)}:{handler.co_firstlineno}"
    x = turnout.ones(2)
    with turnout.debug.dispatch_trace(file=io.StringIO()) as t:
        with example.LoggingMode(io.StringIO()):
            aten.add.Tensor(x, x)
    # As c10: PythonTLSSnapshot (above autograd) records the thread's key
    # sets for _RestorePythonTLSSnapshot first.
    assert normalised(t.lines) == [
        "aten::add.Tensor call DispatchKeySet(CPU, Python, AutogradCPU, "
        "PythonTLSSnapshot) -> PythonTLSSnapshot [backend fallback] registered "
        "at bindings/python_mode.cc:N",
        "  aten::add.Tensor redispatchBoxed DispatchKeySet(CPU, Python, "
        "AutogradCPU) -> AutogradCPU [autograd kernel] registered at "
        "kernels/autograd/autograd_kernels.cc:N",
        "    aten::add.Tensor call DispatchKeySet(CPU, Python) -> Python "
        "[backend fallback] registered at bindings/python_mode.cc:N",
        f"      [Python] aten::add.Tensor -> mode LoggingMode ({where})",
        "      aten::add.Tensor call DispatchKeySet(CPU) -> CPU [kernel] "
        "registered at kernels/elementwise_kernels.cc:N",
    ]
    if "TEST_SRCDIR" in os.environ:  # Bazel runs tests from the runfiles root
        assert where.startswith("examples/logging_mode.py:")
    handler_event = [e for e in t.events if e["call"] == "handler"]
    assert [(e["op"], e["key"], e["depth"]) for e in handler_event] == [
        ("aten::add.Tensor", DispatchKey.Python, 3)]
    assert handler_event[0]["site"] == f"mode LoggingMode ({where})"


class Traced(turnout.Tensor):
    """A subclass that runs every call on the plain tensor inside."""

    @classmethod
    def __turnout_dispatch__(cls, func, types, args=(), kwargs=None):
        with no_dispatch():
            return func(*args, **(kwargs or {}))


def test_trace_names_the_tensor_subclass_that_handles_a_call():
    s = turnout.Tensor._make_subclass(Traced, turnout.ones(2))
    with turnout.debug.dispatch_trace(file=io.StringIO()) as t:
        aten.neg(s)
    code = Traced.__turnout_dispatch__.__func__.__code__
    where = f"{os.path.relpath(code.co_filename)}:{code.co_firstlineno}"
    assert normalised(t.lines) == [
        "aten::neg callBoxed DispatchKeySet(CPU, Python, AutogradCPU, "
        "PythonTLSSnapshot) -> PythonTLSSnapshot [backend fallback] registered "
        "at bindings/python_mode.cc:N",
        "  aten::neg redispatchBoxed DispatchKeySet(CPU, Python, AutogradCPU) "
        "-> AutogradCPU [autograd kernel] registered at "
        "kernels/autograd/autograd_kernels.cc:N",
        "    aten::neg call DispatchKeySet(CPU, Python) -> Python "
        "[backend fallback] registered at bindings/python_mode.cc:N",
        f"      [Python] aten::neg -> subclass Traced ({where})",
        "      aten::neg callBoxed DispatchKeySet(CPU) -> CPU [kernel] "
        "registered at kernels/elementwise_kernels.cc:N",
    ]


def test_trace_errors(tmp_path):
    with pytest.raises(TypeError, match="expected None \\(stderr\\), a path"):
        turnout.debug.dispatch_trace(file=42)
    with pytest.raises(ValueError, match="cannot open the file"):
        with turnout.debug.dispatch_trace(file=tmp_path / "no" / "such" / "dir"):
            pass
    assert not _C._dispatch_trace_enabled()


def test_trace_counts_backend_fallbacks_taken():
    lib = _C._dispatch_library("DEF", "dbg_cnt", "", "cnt.py", 1)
    lib.def_("f(Tensor x) -> Tensor")
    lib.impl("f", "CPU", lambda x: x)
    fb = _C._dispatch_library("IMPL", "_", "Tracer", "cnt.py", 2)
    fb.fallback("", lambda op, ks, *args, **kwargs: op.redispatch(
        ks - turnout.DispatchKeySet([DispatchKey.Tracer]), *args, **kwargs)
        if hasattr(op, "redispatch") else args[0], with_keyset=True)
    before = counters["dispatch"]["backend_fallbacks"]
    x = turnout.ones(1)
    with _C._IncludeDispatchKeyGuard(DispatchKey.Tracer):
        e = turnout.debug.explain("dbg_cnt::f", x)
        assert e.entry.kind == "backend fallback"
        with turnout.debug.dispatch_trace(file=io.StringIO()):
            turnout.ops.dbg_cnt.f(x)
    assert counters["dispatch"]["backend_fallbacks"] == before + 1
    fb._destroy()
    lib._destroy()


# ---- profiler -------------------------------------------------------------------------


def test_profile_table_and_chrome_trace_with_nested_spans(tmp_path):
    x = grad_tensor()
    with turnout.profiler.profile() as prof:
        with turnout.profiler.record_function("my_phase"):
            for _ in range(3):
                aten.mul.Tensor(x, x)
    table = prof.table(sort_by="calls", row_limit=5)
    header = table.splitlines()[1]
    assert header.split()[:3] == ["Name", "Key", "Calls"]
    assert "aten::mul.Tensor" in table
    rows = {(s["name"], s["key"]): s for s in prof.stats()}
    assert rows[("aten::mul.Tensor", DispatchKey.AutogradCPU)]["calls"] == 3
    assert rows[("aten::mul.Tensor", DispatchKey.CPU)]["min_depth"] >= 2
    assert rows[("my_phase", DispatchKey.Undefined)]["is_scope"]
    assert len(prof.table(row_limit=1).strip().splitlines()) < len(table.splitlines())

    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    doc = json.loads(path.read_text())
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    spans = [e for e in events if e.get("ph") == "X"]
    assert any(e["name"].startswith("aten::mul.Tensor") for e in spans)
    # Properly nested: on each thread, two spans are disjoint or one holds
    # the other; every CPU span of mul lies inside an AutogradCPU one.
    eps = 1e-3
    for a in spans:
        for b in spans:
            if a is b or a["tid"] != b["tid"]:
                continue
            a0, a1 = a["ts"], a["ts"] + a["dur"]
            b0, b1 = b["ts"], b["ts"] + b["dur"]
            disjoint = a1 <= b0 + eps or b1 <= a0 + eps
            nested = (a0 - eps <= b0 and b1 <= a1 + eps) or (b0 - eps <= a0 and a1 <= b1 + eps)
            assert disjoint or nested, (a, b)
    phase = [e for e in spans if e["name"] == "my_phase"][0]
    for e in spans:
        if e is not phase:
            assert phase["ts"] - eps <= e["ts"] and e["ts"] + e["dur"] <= phase["ts"] + phase["dur"] + eps


def test_profile_python_time_column():
    lib = _C._dispatch_library("DEF", "dbg_pyt", "", "pyt.py", 1)
    lib.def_("f(Tensor x) -> Tensor")

    def spin(seconds):
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    def slow_kernel(x):
        spin(0.002)
        return aten.add.Tensor(x, x)

    lib.impl("f", "CPU", slow_kernel)

    class Spinning(DispatchMode):
        def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
            spin(0.001)
            return func(*args, **(kwargs or {}))

    x = turnout.ones(2)
    with turnout.profiler.profile() as prof:
        for _ in range(2):
            turnout.ops.dbg_pyt.f(x)
        with Spinning():
            aten.neg(x)
    lib._destroy()
    rows = {(s["name"], s["key"]): s for s in prof.stats(sort_by="python")}
    kernel = rows[("dbg_pyt::f", DispatchKey.CPU)]
    mode = rows[("aten::neg", DispatchKey.Python)]
    assert prof.stats(sort_by="python")[0]["name"] == "dbg_pyt::f"
    # Python time is part of self time; the operators the Python code calls
    # are not counted in it.
    assert 2 * 2_000_000 <= kernel["python_ns"] <= kernel["self_ns"]
    assert 1_000_000 <= mode["python_ns"] <= mode["self_ns"]
    for (name, key), row in rows.items():
        if (name, key) not in [("dbg_pyt::f", DispatchKey.CPU),
                               ("aten::neg", DispatchKey.Python)]:
            assert row["python_ns"] == 0, (name, key)
    assert sum(e["python_ns"] for e in prof.events()) == (
        kernel["python_ns"] + mode["python_ns"])

    header = prof.table().splitlines()[1].split()
    assert header[header.index("%") + 1] == "Python", header
    trace = json.loads(prof.chrome_trace())
    spans = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    assert sum(e["args"]["python_us"] for e in spans) == pytest.approx(
        (kernel["python_ns"] + mode["python_ns"]) / 1e3, abs=1e-3)


def test_profile_errors():
    prof = turnout.profiler.profile()
    with pytest.raises(RuntimeError, match="nothing was recorded yet"):
        prof.table()
    with prof:
        with pytest.raises(ValueError, match="already running"):
            with turnout.profiler.profile():
                pass
        with pytest.raises(ValueError):
            prof.table()  # still running
    with pytest.raises(ValueError, match="sort_by"):
        prof.table(sort_by="bogus")
    with pytest.raises(TypeError, match="row_limit"):
        prof.table(row_limit="3")
    with pytest.raises(RuntimeError, match="already ran"):
        with prof:
            pass
    with pytest.raises(TypeError, match="expected name to be a str"):
        turnout.profiler.record_function(3)


# ---- snapshot and diff ------------------------------------------------------------------


def test_snapshot_records_operators_and_fallbacks():
    snap = turnout.debug.snapshot()
    relu = snap["aten::relu"]
    assert relu["schema"] == "aten::relu(Tensor self) -> Tensor"
    cpu = [e for e in relu["table"] if e["key"] == "CPU"][0]
    assert cpu["kind"] == "kernel" and cpu["site"].startswith("registered at kernels/")
    assert any(f["key"] == "AutogradCPU" and f["fallthrough"] for f in snap.fallbacks)
    with pytest.raises(KeyError, match="no operator 'aten::nope'"):
        snap["aten::nope"]


def test_diff_after_registering_a_library(tmp_path):
    before = turnout.debug.snapshot()
    before.save(tmp_path / "before.json")
    lib = _C._dispatch_library("DEF", "dbg_diff", "", "mylib.py", 7)
    lib.def_("f(Tensor x) -> Tensor")
    impl = _C._dispatch_library("IMPL", "dbg_diff", "CPU", "mylib.py", 8)
    impl.impl("f", "", lambda x: x)
    over = _C._dispatch_library("IMPL", "aten", "CPU", "mylib.py", 9)
    over.impl("relu", "", lambda x: x)
    d = turnout.debug.diff(before)
    assert [(c["change"], c["what"], c["op"], c["key"]) for c in d.changes] == [
        ("overridden", "kernel", "aten::relu", "CPU"),
        ("added", "operator", "dbg_diff::f", ""),
        ("added", "kernel", "dbg_diff::f", "CPU"),
    ]
    assert d.overridden[0]["after"]["site"].startswith("python kernel")
    text = str(d)
    assert "added operator dbg_diff::f(Tensor x) -> Tensor  registered at mylib.py:7\n" in text
    assert repr(d) == "<RegistryDiff: 2 added, 1 overridden, 0 removed>"
    after = turnout.debug.snapshot()
    over._destroy()
    impl._destroy()
    lib._destroy()
    assert not turnout.debug.diff(tmp_path / "before.json")
    removed = turnout.debug.diff(after, before)
    assert len(removed.removed) == 2 and len(removed.overridden) == 1


def test_snapshot_files(tmp_path):
    snap = turnout.debug.snapshot()
    snap.save(tmp_path / "s.json")
    loaded = turnout.debug.load_snapshot(tmp_path / "s.json")
    assert loaded.to_json() == snap.to_json()
    (tmp_path / "bad.json").write_text('{"format": "turnout.registry_snapshot",\n "x": }')
    with pytest.raises(ValueError, match="bad.json: line 2, column 7"):
        turnout.debug.load_snapshot(tmp_path / "bad.json")
    with pytest.raises(TypeError, match="expected before to be a Snapshot"):
        turnout.debug.diff(3, snap)


# ---- counters, timers, same ------------------------------------------------------------------


def test_counters():
    counters["dbgtest"]["a"] += 2
    counters.add("dbgtest", "a")
    counters["dbgtest"]["b"] = 5
    assert counters["dbgtest"]["a"] == 3
    assert counters["dbgtest"]["never"] == 0
    assert counters.to_dict()["dbgtest"] == {"a": 3, "b": 5}
    _C._counter_add("dbgtest.from_cpp", 4)  # what C++'s counter("...").add does
    assert counters["dbgtest"]["from_cpp"] == 4
    del counters["dbgtest"]["b"]
    assert counters["dbgtest"]["b"] == 0
    counters.clear()
    assert counters["dbgtest"]["a"] == 0
    assert "dbgtest" not in counters.to_dict()
    with pytest.raises(ValueError, match="without '.'"):
        counters["a.b"]
    with pytest.raises(TypeError, match="expected an int count"):
        counters["dbgtest"]["a"] = 1.5
    with pytest.raises(TypeError, match="expected the event to be a str"):
        counters["dbgtest"][3]


def test_timed_decorator_and_context_manager():
    turnout.utils.reset_time_report()

    @timed
    def work():
        return aten.add.Tensor(turnout.ones(2), turnout.ones(2))

    @timed("named_phase")
    def named():
        return 1

    work()
    work()
    assert named() == 1
    with timed("block"):
        with timed("block"):  # nesting the same phase is fine
            pass
    report = time_report()
    lines = report.splitlines()
    assert lines[0].split() == ["phase", "calls", "total", "ms", "avg", "ms"]
    by_name = {l.split()[0]: l.split() for l in lines[1:]}
    assert by_name["test_timed_decorator_and_context_manager.<locals>.work"][1] == "2"
    assert by_name["named_phase"][1] == "1"
    assert by_name["block"][1] == "2"
    assert "block" in time_report(reset=True)
    assert [l.split() for l in time_report().strip().splitlines()] == [lines[0].split()]
    with pytest.raises(TypeError, match="expected a non-empty str"):
        timed("")


def test_timed_phase_is_a_profiler_span():
    with turnout.profiler.profile() as prof:
        with timed("compile_phase"):
            pass
    assert any(s["name"] == "compile_phase" and s["is_scope"] for s in prof.stats())


def test_same():
    a = turnout.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert same(a, a.clone() if hasattr(a, "clone") else turnout.tensor([[1.0, 2.0], [3.0, 4.0]]))
    r = same(a, turnout.tensor([[1.0, 2.0], [3.0, 4.5]]))
    assert not r
    assert str(r).startswith("result[1][1]: ref 4.0, res 4.5")
    assert "1 of 4 elements differ" in str(r)
    assert same(a, turnout.tensor([[1.0, 2.0], [3.0, 4.5]]), atol=0.6)
    assert "shapes differ: ref (2, 2), res (4,)" in str(
        same(a, turnout.tensor([1.0, 2.0, 3.0, 4.0])))
    assert "dtypes differ" in str(same(a, turnout.tensor([[1, 2], [3, 4]])))
    nan = turnout.tensor([float("nan"), 1.0])
    assert not same(nan, nan)
    assert same(nan, nan, equal_nan=True)
    assert str(same({"x": [1, (a, 2.0)]}, {"x": [1, (a, 2.5)]})) == (
        "result['x'][1][1]: ref 2.0, res 2.5 (|diff| 0.5 > atol 1e-08 + rtol 1e-05 * |ref|)")
    assert "keys differ" in str(same({"a": 1}, {"b": 1}))
    assert "lengths differ: ref 2, res 1" in str(same([1, 2], [1]))
    assert "ref is Tensor" in str(same(a, 1.0)) or "ref is TensorBase" in str(same(a, 1.0))
    assert same(np.array([1.0]), np.array([1.0 + 1e-9]))
    with pytest.raises(ValueError, match="rtol must be a number >= 0"):
        same(1, 1, rtol=-1)


@pytest.mark.parametrize("module", [turnout.debug, turnout.profiler, turnout.utils],
                         ids=lambda m: m.__name__)
def test_docstring_examples(module):
    failures, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0
    assert attempted > 0
