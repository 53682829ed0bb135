"""Tests for bindings/library.cc: _dispatch_library with C++ kernels."""

import pytest

import turnout
from turnout import DispatchKey, _C


def test_def_name_t_t_registers_an_identity_kernel():
    lib = _C._dispatch_library("DEF", "lib_test_a", "")
    lib.def_name_t_t("identity")
    t = turnout.ones(2)
    assert turnout.ops.lib_test_a.identity(t)._is_same(t)
    dump = _C._dispatch_dump("lib_test_a::identity")
    assert "schema: lib_test_a::identity(Tensor _0) -> Tensor _0" in dump
    assert "CompositeImplicitAutograd[alias]: default_def_name_t_t" in dump
    lib._destroy()
    assert "lib_test_a::identity" not in _C._dispatch_get_all_op_names()


def test_def_and_impl_at_a_key_and_deregistration_on_drop():
    lib = _C._dispatch_library("DEF", "lib_test_b", "", "my_file.py", 12)
    lib.def_("f(Tensor x) -> Tensor")
    impl = _C._dispatch_library("IMPL", "lib_test_b", "CPU")
    impl.impl_t_t("f")
    dump = _C._dispatch_dump("lib_test_b::f")
    assert "debug: registered at my_file.py:12" in dump
    assert "CPU: impl_t_t" in dump
    assert _C._dispatch_has_kernel_for_dispatch_key("lib_test_b::f", DispatchKey.CPU)
    del impl
    assert not _C._dispatch_has_kernel_for_dispatch_key("lib_test_b::f", DispatchKey.CPU)
    del lib
    assert "lib_test_b::f" not in _C._dispatch_get_all_op_names()


def test_fallback_fallthrough():
    lib = _C._dispatch_library("IMPL", "_", "XLA")
    lib.fallback_fallthrough()
    assert _C._dispatch_has_backend_fallback(DispatchKey.XLA)
    lib._destroy()
    assert not _C._dispatch_has_backend_fallback(DispatchKey.XLA)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: _C._dispatch_library("NOPE", "x", ""), ValueError,
     "kind must be 'DEF', 'IMPL' or 'FRAGMENT', got 'NOPE'"),
    (lambda: _C._dispatch_library("IMPL", "x", "NotAKey"), ValueError, "NotAKey"),
    (lambda: _C._dispatch_library("DEF", "lib_test_c", "").def_("g(Tensor x) -> Tensor", "WRONG"),
     ValueError, "alias must be"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_second_def_library_names_both_sites():
    lib = _C._dispatch_library("DEF", "lib_test_d", "", "first.py", 1)
    with pytest.raises(ValueError, match="first.py:1.*second.py:2"):
        _C._dispatch_library("DEF", "lib_test_d", "", "second.py", 2)
    del lib


def test_destroyed_library_refuses_registrations():
    lib = _C._dispatch_library("FRAGMENT", "lib_test_e", "")
    lib._destroy()
    with pytest.raises(ValueError, match="was destroyed"):
        lib.def_("h(Tensor x) -> Tensor")
