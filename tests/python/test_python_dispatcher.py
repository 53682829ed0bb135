"""Tests for turnout._python_dispatcher: PythonDispatcher's tables come from
the real dispatcher, and print as torch 1.13's torch._python_dispatcher
prints them (the same registrations are run on both and compared)."""

import contextlib
import doctest
import gc

import pytest

import turnout._python_dispatcher
from turnout import _C
from turnout._python_dispatcher import PythonDispatcher
# Autograd fallback "nothing" in this module: PythonDispatcher's tables (and its docstring) are torch 1.13's.
from torch113_tables import autograd_fallback_nothing  # noqa: F401 (autouse)



@pytest.fixture
def d():
    dispatcher = PythonDispatcher()
    yield dispatcher
    dispatcher.close()


@contextlib.contextmanager
def torch_dispatcher():
    """torch's PythonDispatcher; its operator (__test__::foo) is the same for
    every instance, so it goes when the instance does."""
    from torch._python_dispatcher import PythonDispatcher as TorchDispatcher

    t = TorchDispatcher()
    try:
        yield t
    finally:
        del t
        gc.collect()


def raised(f, *args):
    """(type, message) of what f(*args) raises (the exception itself is
    dropped: its traceback would keep torch's dispatcher alive)."""
    try:
        f(*args)
    except Exception as e:  # noqa: BLE001 -- compared by the caller
        return type(e), str(e)
    raise AssertionError(f"{f} accepted {args}")


# Registrations, one list per register() call.
CASES = {
    "cpu_xla_math": [["CPU", "XLA", "CompositeImplicitAutograd"]],
    "cpu_autograd": [["CPU", "Autograd"]],
    "fpga_math_is_ambiguous": [["FPGA", "CompositeImplicitAutograd"]],
    "explicit_autograd": [["CompositeExplicitAutograd", "AutogradCPU"]],
    "autograd_and_autograd_cpu": [["Autograd", "AutogradCPU"]],
    "nothing": [[]],
    "every_runtime_key": [PythonDispatcher.runtime_keys],
    "calls_add_up": [["CPU"], ["XLA", "Autograd"], ["Lazy"]],
    "math_then_explicit": [["CompositeImplicitAutograd"],
                           ["CompositeExplicitAutograd"]],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_tables_print_as_torchs(d, case):
    with torch_dispatcher() as t:
        for keys in CASES[case]:
            t.register(keys)
            d.register(keys)
        assert d.dispatchTable() == t.dispatchTable()
        assert d.registrations() == t.registrations()
    assert d.keys() == PythonDispatcher.supported_keys


def test_layout():
    with torch_dispatcher() as t:
        t.register(["CPU", "XLA", "CompositeImplicitAutograd"])
        table = t.dispatchTable()
    assert table.startswith("\nComputed Dispatch Table\nkey             kernel\n"
                            "---------------------------\n"
                            "CPU             fn_CPU [kernel]\n")
    assert "AutogradCPU     fallthrough [backend fallback]\n" in table
    assert PythonDispatcher.runtime_keys == t.runtime_keys
    assert PythonDispatcher.alias_keys == t.alias_keys
    assert PythonDispatcher.supported_keys == t.supported_keys


def test_entries_are_the_dispatchers_own(d):
    d.register(["CPU", "XLA", "CompositeImplicitAutograd"])
    dump = _C._dispatch_dump_table(d.qualname).splitlines()
    rows = d.dispatchTable().splitlines()[4:]
    for row in rows:
        key, entry = row.split(maxsplit=1)
        if entry.startswith("fallthrough "):
            entry = "fallthrough registered in turnout framework " + entry[12:]
        assert f"{key}: {entry}" in dump
        assert d.kernelFor(key) == entry.split(" [")[0].replace(
            "fallthrough registered in turnout framework", "fallthrough")
    assert d.kernelFor("CUDA") == "fn_CompositeImplicitAutograd"
    assert d.kernelFor("AutogradCPU") == "fallthrough"


@pytest.mark.parametrize("keys", [
    ["CPU", "CPU"],
    ["CompositeExplicitAutograd", "CompositeImplicitAutograd"],
    ["CompositeImplicitAutograd", "CPU", "CompositeExplicitAutograd"],
    ["QuantizedCPU"],
    ["CPU", "Nope"],
    ["CompositeExplicitAutogradNonFunctional"],
])
def test_refused_registrations_are_torchs(d, keys):
    """The same registrations are refused with the same exception type,
    naming the same keys; turnout registers nothing of a refused call (torch
    may have registered the keys before the bad one)."""
    with torch_dispatcher() as t:
        theirs = raised(t.register, keys)
    d.register(["CPU", "Autograd"])
    before = (d.dispatchTable(), d.registrations())
    ours = raised(d.register, keys)
    assert ours[0] is theirs[0] is RuntimeError
    for word in ("duplicates", "both", "not supported"):
        assert (word in ours[1]) == (word in theirs[1]), (word, ours, theirs)
    for k in keys:
        if k in theirs[1]:
            assert k in ours[1]
    if "not supported" in theirs[1]:
        assert str(PythonDispatcher.supported_keys) in ours[1]
    assert (d.dispatchTable(), d.registrations()) == before


def test_kernel_for_an_unknown_key(d):
    with pytest.raises(ValueError, match="Nope"):
        d.kernelFor("Nope")


def test_instances_are_independent_and_close_removes_the_operator():
    a, b = PythonDispatcher(), PythonDispatcher()
    assert a.qualname != b.qualname
    a.register(["CPU"])
    b.register(["XLA"])
    assert a.kernelFor("XLA") == "missing" and b.kernelFor("XLA") == "fn_XLA"
    a.close()
    b.close()
    names = _C._dispatch_get_all_op_names()
    assert a.qualname not in names and b.qualname not in names
    assert _C._dispatch_find_dangling_impls() == []


def test_docstring_examples():
    failures, attempted = doctest.testmod(turnout._python_dispatcher)
    assert failures == 0 and attempted > 0
