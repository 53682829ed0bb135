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


def test_to_functionality_key():
    assert _C._to_functionality_key(DispatchKey.AutogradCPU) == \
        DispatchKey.AutogradFunctionality
    assert _C._to_functionality_key(DispatchKey.CUDA) == DispatchKey.Dense
    assert _C._to_functionality_key(DispatchKey.Python) == DispatchKey.Python


def test_functionality_to_backend_keys():
    keys = _C._functionality_to_backend_keys(DispatchKey.Dense)
    assert len(keys) == _C._dispatch_num_backends()
    assert keys[:2] == [DispatchKey.CPU, DispatchKey.CUDA]
    assert keys[-1] == DispatchKey.Meta
    autograd = _C._functionality_to_backend_keys(DispatchKey.AutogradFunctionality)
    assert autograd[0] == DispatchKey.AutogradCPU
    assert _C._functionality_to_backend_keys(DispatchKey.Python) == \
        [DispatchKey.Python]


def test_dispatch_key_for_device():
    assert _C._dispatch_key_for_device("cpu") == "CPU"
    assert _C._dispatch_key_for_device("cuda") == "CUDA"
    assert _C._dispatch_key_for_device("meta") == "Meta"
    with pytest.raises((ValueError, RuntimeError), match="gpu"):
        _C._dispatch_key_for_device("gpu")


def test_backend_keyset_from_autograd():
    ks = _C._dispatch_get_backend_keyset_from_autograd(DispatchKey.AutogradCPU)
    assert ks.has(DispatchKey.CPU) and not ks.has(DispatchKey.CUDA)


@pytest.mark.parametrize("key", ["AutogradCPU", "AutogradCUDA", "AutogradXLA",
                                 "AutogradMeta", "CPU"])
def test_backend_keyset_from_autograd_is_torchs(key):
    """As torch 1.13's: an autograd key stands in front of its dense backend
    only (QuantizedCPU and SparseCPU are under AutogradOther)."""
    import torch

    theirs = torch._C._dispatch_keyset_to_string(
        torch._C._dispatch_get_backend_keyset_from_autograd(
            getattr(torch._C.DispatchKey, key)))
    ours = _C._dispatch_get_backend_keyset_from_autograd(
        getattr(DispatchKey, key))
    assert str(ours) == theirs


def test_after_autograd_keysets():
    after = _C._after_autograd_keyset
    assert isinstance(after, DispatchKeySet)
    assert after.has(DispatchKey.CPU) and after.has(DispatchKey.ADInplaceOrView)
    assert not after.has(DispatchKey.AutogradCPU)
    after_view = _C._after_ADInplaceOrView_keyset
    assert after_view.has(DispatchKey.CPU)
    assert not after_view.has(DispatchKey.ADInplaceOrView)
