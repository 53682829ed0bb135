"""Tests for turnout._python_dispatcher: PythonDispatcher's tables come from
the real dispatcher."""

import doctest
import re

import pytest

import turnout._python_dispatcher
from turnout import _C
from turnout._python_dispatcher import PythonDispatcher


@pytest.fixture
def d():
    dispatcher = PythonDispatcher()
    yield dispatcher
    dispatcher.close()


def table_rows(text):
    """The rows of a table as lists of cells (title, header, rule dropped).
    Cells are separated by two or more spaces; a cell may hold one."""
    return [re.split(r"\s{2,}", line.strip()) for line in text.splitlines()[3:]]


# Each case: keys to register, and the expected (kernel, source) of the keys
# that are shown by default.
CASES = {
    "cpu_xla_math": (
        ["CPU", "XLA", "CompositeImplicitAutograd"],
        {
            "CPU": ("fn_CPU", "kernel"),
            "AutogradCPU": ("fallthrough", "backend fallback"),
            "FPGA": ("fn_CompositeImplicitAutograd", "math kernel"),
            "AutogradOther": ("fn_CompositeImplicitAutograd", "math kernel"),
            "XLA": ("fn_XLA", "kernel"),
            "AutogradXLA": ("fallthrough", "backend fallback"),
            "Lazy": ("fn_CompositeImplicitAutograd", "math kernel"),
            "AutogradLazy": ("fn_CompositeImplicitAutograd", "math kernel"),
        },
    ),
    "cpu_autograd": (
        ["CPU", "Autograd"],
        {
            "CPU": ("fn_CPU", "kernel"),
            "AutogradCPU": ("fn_Autograd", "autograd kernel"),
            "FPGA": ("missing", "missing"),
            "AutogradOther": ("fn_Autograd", "autograd kernel"),
            "XLA": ("missing", "missing"),
            "AutogradXLA": ("fn_Autograd", "autograd kernel"),
            "Lazy": ("missing", "missing"),
            "AutogradLazy": ("fn_Autograd", "autograd kernel"),
        },
    ),
    "fpga_math_is_ambiguous": (
        ["FPGA", "CompositeImplicitAutograd"],
        {
            "CPU": ("fn_CompositeImplicitAutograd", "math kernel"),
            "FPGA": ("fn_FPGA", "kernel"),
            "AutogradOther": ("ambiguous_autogradother",
                              "ambiguous autogradother"),
            "XLA": ("fn_CompositeImplicitAutograd", "math kernel"),
        },
    ),
    "explicit_beats_implicit": (
        ["CompositeExplicitAutograd", "CompositeImplicitAutograd"],
        {
            "CPU": ("fn_CompositeExplicitAutograd", "default backend kernel"),
            "AutogradCPU": ("fallthrough", "backend fallback"),
            "Lazy": ("fn_CompositeExplicitAutograd", "default backend kernel"),
        },
    ),
    "runtime_key_outside_the_default_list": (
        ["CUDA", "AutogradCUDA"],
        {
            "CPU": ("missing", "missing"),
            "CUDA": ("fn_CUDA", "kernel"),
            "AutogradCUDA": ("fn_AutogradCUDA", "kernel"),
        },
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_dispatch_table_matches_the_dispatchers_own_dump(d, case):
    keys, expected = CASES[case]
    d.register(keys)
    table = {r[0]: (r[1], r[2]) for r in table_rows(d.dispatchTable())}
    for key, want in expected.items():
        assert table[key] == want, key
    # Every shown entry is what _dispatch_dump_table says, line for line.
    dump = _C._dispatch_dump_table(d.qualname).splitlines()
    for key, (kernel, source) in table.items():
        if kernel == "missing":
            assert not any(line.startswith(f"{key}: ") for line in dump), key
        else:
            full = ("fallthrough registered by turnout as a framework default"
                    if kernel == "fallthrough" else kernel)
            assert f"{key}: {full} [{source}]" in dump, key
        assert d.kernelFor(key) == kernel


def test_default_keys_and_registered_runtime_keys_are_shown(d):
    d.register(["CUDA", "CompositeImplicitAutograd"])
    shown = [r[0] for r in table_rows(d.dispatchTable())]
    assert shown == list(PythonDispatcher.runtime_keys) + ["CUDA"]


def test_table_is_aligned_columns(d):
    d.register(["CPU", "XLA", "CompositeImplicitAutograd"])
    lines = d.dispatchTable().splitlines()
    assert lines[0] == "Computed Dispatch Table"
    assert lines[1].split() == ["key", "kernel", "source"]
    kernel_col = lines[1].index("kernel")
    source_col = lines[1].index("source")
    for line in lines[2:]:
        assert line[kernel_col - 2:kernel_col] == "  "
        assert line[kernel_col] != " " and line[source_col] != " "


def test_registrations_match_the_dump(d):
    d.register(["CPU", "XLA", "CompositeImplicitAutograd"])
    assert d.registrations() == (
        "Registered Kernels\n"
        "key                               kernel\n"
        "--------------------------------  ----------------------------\n"
        "CPU                               fn_CPU\n"
        "XLA                               fn_XLA\n"
        "CompositeImplicitAutograd[alias]  fn_CompositeImplicitAutograd\n")
    dump = d.rawRegistrations()
    for key, kernel in table_rows(d.registrations()):
        assert f"{key}: {kernel} :: " in dump


def test_register_replaces_the_previous_registrations(d):
    d.register(["CPU"])
    d.register(["XLA"])
    assert d.keys() == ["XLA"]
    assert d.kernelFor("CPU") == "missing"
    assert d.kernelFor("XLA") == "fn_XLA"
    assert [r[0] for r in table_rows(d.registrations())] == ["XLA"]


@pytest.mark.parametrize("keys,exc,match", [
    (["Nope"], ValueError, r"'Nope' is not a dispatch key"),
    (["CPU", "CPU"], ValueError, r"key 'CPU' is listed twice"),
    ("CPU", TypeError, r"expected a list of key names"),
    ([1], TypeError, r"expected a list of key names"),
    # Refused by the dispatcher itself, with its own message.
    (["Dense"], ValueError, r"cannot register a kernel for Dense"),
])
def test_bad_keys_raise_and_leave_the_registrations(d, keys, exc, match):
    d.register(["CPU", "Autograd"])
    before = (d.dispatchTable(), d.registrations())
    with pytest.raises(exc, match=match):
        d.register(keys)
    assert (d.dispatchTable(), d.registrations()) == before
    assert d.keys() == ["CPU", "Autograd"]


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
