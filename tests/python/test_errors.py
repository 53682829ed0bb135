"""Tests for bindings/errors.cc: turnout::Error kinds become Python
exceptions, with the C++ message unchanged."""

import pytest

import turnout
from turnout import _C


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
        _C._dispatch_dump("nope::op")
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
