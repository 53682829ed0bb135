"""Tests for bindings/dispatcher.cc: the _dispatch_* inspection functions."""

import threading

import pytest

from turnout import _C
from turnout import DispatchKey


def test_unknown_operator_dumps_as_torchs_do():
    """torch 1.13: an operator with no def and no kernel (yet, or any more)
    dumps as '' and has no invariants to break; turnout's own queries
    (_dispatch_get_tags, ...) say it is not registered."""
    import torch

    for C in (torch._C, _C):
        assert C._dispatch_dump("nope::op") == ""
        assert C._dispatch_dump_table("nope::op") == ""
        assert C._dispatch_check_invariants("nope::op") is None
    lib = _C._dispatch_library("FRAGMENT", "dump_gone", "")
    lib.def_("f(Tensor x) -> Tensor")
    assert _C._dispatch_dump("dump_gone::f").startswith("name: dump_gone::f\n")
    lib._destroy()
    assert _C._dispatch_dump("dump_gone::f") == ""
    assert _C._dispatch_dump_table("dump_gone::f") == ""
    with pytest.raises(ValueError, match="no operator named 'nope::op' is registered"):
        _C._dispatch_get_tags("nope::op")


def test_bad_operator_name_is_a_value_error():
    with pytest.raises(ValueError):
        _C._dispatch_dump("not a name(")


def test_thread_local_exclude_set():
    assert not _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.Tracer)
    _C._dispatch_tls_set_dispatch_key_excluded(DispatchKey.Tracer, True)
    try:
        assert _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.Tracer)
        seen = []
        t = threading.Thread(
            target=lambda: seen.append(
                _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.Tracer)))
        t.start()
        t.join()
        assert seen == [False]
    finally:
        _C._dispatch_tls_set_dispatch_key_excluded(DispatchKey.Tracer, False)
    assert repr(_C._dispatch_tls_local_include_set()) == \
        "DispatchKeySet(BackendSelect, ADInplaceOrView)"


def test_framework_fallthroughs_are_visible():
    assert _C._dispatch_has_backend_fallback(DispatchKey.AutogradCPU)
    assert _C._dispatch_has_backend_fallback(DispatchKey.BackendSelect)
    assert not _C._dispatch_has_backend_fallback(DispatchKey.Tracer)


def test_listing_and_invariants():
    assert isinstance(_C._dispatch_get_all_op_names(), list)
    assert isinstance(_C._dispatch_find_dangling_impls(), list)
    assert isinstance(_C._dispatch_get_registrations_for_dispatch_key("CPU"), list)
    _C._dispatch_check_all_invariants()


def test_has_kernel_and_fallthrough_queries():
    assert _C._dispatch_has_kernel("aten::add.Tensor")
    assert not _C._dispatch_has_kernel("nope::op")
    lib = _C._dispatch_library("FRAGMENT", "dispq", "")
    lib.def_("f(Tensor x) -> Tensor")
    lib.impl_t_t("f", "CPU")
    lib.impl_fallthrough("f", "Tracer")
    assert _C._dispatch_kernel_for_dispatch_key_is_fallthrough("dispq::f",
                                                               DispatchKey.Tracer)
    assert not _C._dispatch_kernel_for_dispatch_key_is_fallthrough(
        "dispq::f", DispatchKey.CPU)
    lib._destroy()
    with pytest.raises(ValueError, match="no operator named 'nope::op'"):
        _C._dispatch_kernel_for_dispatch_key_is_fallthrough("nope::op",
                                                            DispatchKey.CPU)


def test_print_registrations_for_dispatch_key(capsys):
    lib = _C._dispatch_library("FRAGMENT", "dispp", "")
    lib.def_("g(Tensor x) -> Tensor")
    lib.impl_t_t("g", "XLA")
    _C._dispatch_print_registrations_for_dispatch_key("XLA")
    lines = capsys.readouterr().out.splitlines()
    assert "dispp::g" in lines
    assert lines == _C._dispatch_get_registrations_for_dispatch_key("XLA")
    with pytest.raises(ValueError, match="could not parse dispatch key: XLAA"):
        _C._dispatch_print_registrations_for_dispatch_key("XLAA")
    lib._destroy()


def test_get_tags():
    lib = _C._dispatch_library("FRAGMENT", "dispt", "")
    lib.define("h(Tensor x) -> Tensor", tags=["core", "pointwise"])
    lib.define("h.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")
    assert _C._dispatch_get_tags("dispt::h") == ["core", "pointwise"]
    assert _C._dispatch_get_tags("dispt::h.out") == []
    assert "tags: core pointwise\n" in _C._dispatch_dump("dispt::h")
    lib._destroy()
    with pytest.raises(ValueError, match="no operator named 'dispt::h'"):
        _C._dispatch_get_tags("dispt::h")
