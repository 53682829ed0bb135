"""Tests for bindings/dispatch_keys.cc: DispatchKey and DispatchKeySet."""

import pytest

import turnout
from turnout import _C
from turnout import DispatchKey, DispatchKeySet


def test_keys_are_named_as_in_c10():
    for name in ["CPU", "CUDA", "AutogradCPU", "QuantizedCPU", "SparseCUDA",
                 "Python", "Tracer", "BackendSelect", "CompositeImplicitAutograd",
                 "AutogradPrivateUse1", "Meta"]:
        key = getattr(DispatchKey, name)
        assert _C._dispatch_key_name(key) == name
        assert _C._dispatch_key_parse(name) == key


def test_unknown_key_is_a_value_error():
    with pytest.raises(ValueError, match="could not parse dispatch key: CPUU"):
        _C._dispatch_key_parse("CPUU")


def test_key_set_repr_and_algebra():
    ks = DispatchKeySet([DispatchKey.AutogradCPU, DispatchKey.CPU])
    assert repr(ks) == "DispatchKeySet(CPU, AutogradCPU)"
    assert ks.highestPriorityTypeId() == DispatchKey.AutogradCPU
    below = ks & _C._dispatch_keyset_full_after(DispatchKey.AutogradCPU)
    assert below == DispatchKeySet(DispatchKey.CPU)
    assert (ks - DispatchKeySet(DispatchKey.AutogradCPU)).has(DispatchKey.CPU)
    assert list(ks) == [DispatchKey.CPU, DispatchKey.AutogradCPU]
    assert DispatchKeySet().empty()


def test_alias_keys():
    assert _C._dispatch_is_alias_key(DispatchKey.CompositeImplicitAutograd)
    assert not _C._dispatch_is_alias_key(DispatchKey.CPU)


def test_package_docstring_example():
    ks = turnout.DispatchKeySet([turnout.DispatchKey.AutogradCPU, turnout.DispatchKey.CPU])
    assert repr(ks) == "DispatchKeySet(CPU, AutogradCPU)"
