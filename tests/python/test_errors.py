"""Tests for bindings/errors.cc: turnout::Error kinds become Python
exceptions with the C++ message, except that an error's fix-it (a
registration that would fix it) is spelled in Python as well as in C++."""

import pytest

import turnout
from turnout import _C
from turnout.library import Library

from readme_samples import find


def test_invalid_argument_is_a_value_error_and_a_runtime_error():
    assert issubclass(_C.InvalidArgumentError, ValueError)
    assert issubclass(_C.InvalidArgumentError, RuntimeError)
    # A registration error: caught as torch users catch it, or as ValueError.
    lib = _C._dispatch_library("FRAGMENT", "errors_test", "", "first.py", 1)
    lib.def_("f(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="multiple times"):
        _C._dispatch_library("FRAGMENT", "errors_test", "").def_(
            "f(Tensor x) -> Tensor")
    with pytest.raises(ValueError, match="no operator named 'nope::op'"):
        _C._dispatch_get_tags("nope::op")
    lib._destroy()


def test_dispatch_error_is_a_runtime_error():
    lib = _C._dispatch_library("FRAGMENT", "errors_test2", "")
    lib.def_("g(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="errors_test2::g") as info:
        turnout.ops.errors_test2.g(turnout.ones(1))
    assert isinstance(info.value, NotImplementedError)
    lib._destroy()


def test_type_and_index_kinds():
    with pytest.raises(TypeError, match="expected a turnout.Tensor, got int"):
        _C._python_tensor_is_held_by_cpp(3)
    with pytest.raises(IndexError):
        turnout.ones(2).size(5)


# ---- fix-its spelled in Python ---------------------------------------------------


def fix_it_section(message):
    """The lines of the fix-it section: from "  from Python:" up to the
    first blank line or the end of the message."""
    lines = message.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("  from Python:"))
    end = next((i for i in range(start, len(lines)) if not lines[i]), len(lines))
    return lines[start:end]


def test_missing_kernel_says_how_to_register_one_from_python_and_cpp():
    with turnout.library.scoped_library("errors_fix", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        with pytest.raises(NotImplementedError) as info:
            turnout.ops.errors_fix.f(turnout.ones(1))
    message = str(info.value)
    assert message.startswith(
        "Could not run 'errors_fix::f' with arguments from the 'CPU' backend.")
    assert ("To fix it, register a kernel for CPU, or a CompositeExplicitAutograd "
            "kernel that serves every backend:\n") in message
    assert fix_it_section(message) == [
        '  from Python:  lib = turnout.library.Library("errors_fix", "IMPL")',
        '                lib.impl("f", kernel, "CPU")',
        '  from C++:     TURNOUT_LIBRARY_IMPL(errors_fix, CPU, m) { m.impl("f", kernel); }',
    ]
    # The registration sites still follow, after a blank line.
    assert "\n\nBackendSelect: fallthrough registered in turnout framework" in message


def test_missing_kernel_fix_it_names_the_overload():
    with turnout.library.scoped_library("errors_fix2", "DEF") as lib:
        lib.define("g.out(Tensor x) -> Tensor")
        with pytest.raises(NotImplementedError) as info:
            turnout.ops.errors_fix2.g.out(turnout.ones(1))
    assert '                lib.impl("g.out", kernel, "CPU")' in fix_it_section(
        str(info.value))


def test_the_python_fix_it_works():
    """Doing what the message says makes the call succeed."""
    with turnout.library.scoped_library("errors_fix3", "DEF") as lib:
        lib.define("h(Tensor x) -> Tensor")
        with pytest.raises(NotImplementedError):
            turnout.ops.errors_fix3.h(turnout.ones(1))
        impl = Library("errors_fix3", "IMPL")
        impl.impl("h", lambda x: x + 1, "CPU")
        assert turnout.ops.errors_fix3.h(turnout.ones(1)).tolist() == [2.0]
        impl._destroy()


def test_missing_meta_kernel_mentions_register_fake():
    with turnout.library.scoped_library("errors_fix4", "DEF") as lib:
        lib.define("dup(Tensor x) -> Tensor")
        lib.impl("dup", lambda x: x + x, "CPU")
        with pytest.raises(NotImplementedError) as info:
            turnout.ops.errors_fix4.dup(turnout.empty(2, device="meta"))
    assert fix_it_section(str(info.value)) == [
        '  from Python:  lib = turnout.library.Library("errors_fix4", "IMPL")',
        '                lib.impl("dup", kernel, "Meta")',
        '                or, for an operator made by turnout.library.custom_op: '
        'op.register_fake(kernel)',
        '  from C++:     TURNOUT_LIBRARY_IMPL(errors_fix4, Meta, m) { m.impl("dup", kernel); }',
    ]


def test_a_second_def_library_says_fragment_or_impl():
    first = Library("errors_fix5", "DEF")
    try:
        with pytest.raises(ValueError) as info:
            Library("errors_fix5", "DEF")
    finally:
        first._destroy()
    message = str(info.value)
    assert message.startswith(
        "Only one DEF library may define the namespace errors_fix5: its DEF "
        "library was registered at ")
    section = fix_it_section(message)
    assert section[0] == ('  from Python:  lib = turnout.library.Library('
                          '"errors_fix5", "FRAGMENT")      # more definitions')
    assert section[1] == ('                lib = turnout.library.Library('
                          '"errors_fix5", "IMPL", "CPU")  # kernels')
    assert section[-2].startswith("  from C++:     TURNOUT_LIBRARY_FRAGMENT(errors_fix5, m)")
    assert section[-1].startswith("                TURNOUT_LIBRARY_IMPL(errors_fix5, CPU, m)")


def test_define_in_an_impl_library_says_where_to_define():
    lib = Library("errors_fix6", "IMPL", "CPU")
    with pytest.raises(ValueError) as info:
        lib.define('f(Tensor x, str mode="a") -> Tensor')
    lib._destroy()
    message = str(info.value)
    assert message.startswith(
        "def(\"f(Tensor x, str mode=\"a\") -> Tensor\"): cannot define an "
        "operator inside an IMPL library (registered at ")
    assert fix_it_section(message) == [
        '  from Python:  lib = turnout.library.Library("errors_fix6", "FRAGMENT")',
        '                lib.define("f(Tensor x, str mode=\\"a\\") -> Tensor")',
        '  from C++:     TURNOUT_LIBRARY_FRAGMENT(errors_fix6, m) { '
        'm.def("f(Tensor x, str mode=\\"a\\") -> Tensor"); }',
    ]


def test_errors_without_a_fix_it_keep_the_cpp_message():
    with pytest.raises(ValueError) as info:
        _C._dispatch_get_tags("nope::op")
    assert "from Python:" not in str(info.value)


def test_a_graph_keeps_the_fix_it_of_the_call_that_failed():
    import turnout.jit as jit
    with turnout.library.scoped_library("errors_fix7", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        g = jit.Graph.parse("graph(%x : Tensor):\n"
                            "  %y : Tensor = errors_fix7::f(%x) # model.py:7:4\n"
                            "  return (%y)\n")
        with pytest.raises(NotImplementedError) as info:
            jit.run(g, turnout.ones(1))
    message = str(info.value)
    assert "errors_fix7::f failed at model.py:7:4" in message
    assert fix_it_section(message)[1] == '                lib.impl("f", kernel, "CPU")'


def test_readme_shows_the_fix_it_as_python_users_read_it():
    """README.md ("Ask why") quotes this error's fix-it; it must be the
    real text."""
    with turnout.library.scoped_library("myops", "DEF") as lib:
        lib.define("scale(Tensor x) -> Tensor")
        with pytest.raises(NotImplementedError) as info:
            turnout.ops.myops.scale(turnout.ones(1))
    lines = str(info.value).splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("To fix it,"))
    quoted = "\n".join(lines[start:start + 4]) + "\n"
    assert "```\n" + quoted + "```\n" in find("README.md").read_text(), quoted
