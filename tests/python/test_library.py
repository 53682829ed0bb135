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
     "could not parse NOPE: _dispatch_library.* takes kind 'DEF', 'IMPL' or "
     "'FRAGMENT'"),
    (lambda: _C._dispatch_library("IMPL", "x", "NotAKey"), ValueError, "NotAKey"),
    (lambda: _C._dispatch_library("DEF", "lib_test_c", "").def_("g(Tensor x) -> Tensor", "WRONG"),
     ValueError, "could not parse WRONG: def_.* takes alias"),
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


def test_define_keeps_tags():
    lib = _C._dispatch_library("FRAGMENT", "lib_test_tags", "")
    lib.define("f(Tensor x) -> Tensor", tags=("pointwise",))
    lib.define("g(Tensor x) -> Tensor")
    assert turnout.ops.lib_test_tags.f.default.tags == ["pointwise"]
    assert turnout.ops.lib_test_tags.g.default.tags == []
    lib._destroy()


def test_library_define_keeps_tags_and_forgets_them_when_dropped():
    from turnout.library import Library
    lib = Library("lib_test_tags2", "DEF")
    lib.define("f(Tensor x) -> Tensor", tags=["core", "pointwise"])
    lib.define("g(Tensor x) -> Tensor", tags="inplace_view")   # one tag
    lib.define("h(Tensor x) -> Tensor", tags=iter(["core"]))    # any iterable
    ops = turnout.ops.lib_test_tags2
    assert ops.f.default.tags == ["core", "pointwise"]
    assert ops.g.default.tags == ["inplace_view"]
    assert ops.h.default.tags == ["core"]
    lib._destroy()
    lib = Library("lib_test_tags2", "DEF")
    lib.define("f(Tensor x) -> Tensor")
    assert turnout.ops.lib_test_tags2.f.default.tags == []
    lib._destroy()


@pytest.mark.parametrize("tags,exc,match", [
    ((1,), TypeError, r"expected every tag to be a str, got int \(tag 0\)"),
    (("core", None), TypeError, r"expected every tag to be a str, got None \(tag 1\)"),
    (3, TypeError, "expected tags to be a tuple or list of str, got int"),
    (("two words",), ValueError, "tag 0 is 'two words', which is not a tag"),
    (("",), ValueError, "tag 0 is '', which is not a tag"),
    (("core", "core"), ValueError, "tag 'core' is given twice"),
])
def test_bad_tags_are_errors_and_define_nothing(tags, exc, match):
    lib = _C._dispatch_library("FRAGMENT", "lib_test_badtag", "")
    with pytest.raises(exc, match=match):
        lib.define("f(Tensor x) -> Tensor", tags=tags)
    assert not _C._dispatch_has_kernel("lib_test_badtag::f") or \
        "lib_test_badtag::f" not in _C._dispatch_get_all_op_names()
    lib.define("f(Tensor x) -> Tensor")   # the failed define left nothing behind
    lib._destroy()


@pytest.mark.parametrize("tags,exc,match", [
    ((1,), TypeError, "expected every tag to be a str, got int"),
    (3, TypeError, "expected tags to be a str or a sequence of str, got int"),
    (("a b",), ValueError, "def of lib_test_badtag2::f: tag 0 is 'a b'"),
])
def test_library_define_bad_tags(tags, exc, match):
    from turnout.library import Library
    lib = Library("lib_test_badtag2", "FRAGMENT")
    with pytest.raises(exc, match=match):
        lib.define("f(Tensor x) -> Tensor", tags=tags)
    assert lib.define("f(Tensor x) -> Tensor") == "lib_test_badtag2::f"
    lib._destroy()
