"""Tests for bindings/ops.cc and turnout/_ops.py: turnout.ops."""

import threading

import pytest

import turnout
from turnout import DispatchKey, DispatchKeySet, _C, ops


def test_packet_and_overload_objects():
    packet = ops.aten.add
    assert isinstance(packet, turnout._ops.OpOverloadPacket)
    assert repr(packet) == "<OpOverloadPacket(op='aten.add')>"
    assert ops.aten.add is packet  # cached
    overload = packet.Tensor
    assert repr(overload) == "<OpOverload(op='aten.add', overload='Tensor')>"
    assert packet.Tensor is overload  # cached
    assert overload.overloadpacket is packet
    assert overload.name() == "aten::add.Tensor"
    assert ops.aten.relu.default.name() == "aten::relu"
    assert set(packet.overloads()) >= {"Tensor", "Scalar", "out"}


def test_schema_object():
    s = ops.aten.add.Tensor._schema
    assert str(s) == "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    assert s.name == "aten::add"
    assert s.overload_name == "Tensor"
    assert [a.name for a in s.arguments] == ["self", "other", "alpha"]
    assert [a.kwarg_only for a in s.arguments] == [False, False, True]
    assert s.arguments[2].default_value == 1
    assert s.arguments[2].type == "Scalar"
    assert s.arguments[0].default_value is None
    assert not s.arguments[0].has_default_value
    assert [r.type for r in s.returns] == ["Tensor"]
    out = ops.aten.add.out._schema.arguments[-1]
    assert str(out.alias_info) == "(a!)" and out.is_out
    # As torch._C._AliasInfo: the write flag and the alias sets.
    assert out.alias_info.is_write
    assert out.alias_info.before_set == {"a"} and out.alias_info.after_set == {"a"}
    view = _C.parse_schema("f(Tensor(a) x) -> Tensor(a)").arguments[0].alias_info
    assert not view.is_write and view.before_set == {"a"}
    assert repr(view) == "_AliasInfo((a))"
    assert _C.parse_schema("f(Tensor x) -> Tensor").arguments[0].alias_info is None


def test_parse_schema_round_trips():
    text = "ns::f.o(Tensor(a!) self, int[2] k=1, *, ScalarType? dtype=None) -> Tensor(a!)"
    s = _C.parse_schema(text)
    assert str(s) == text
    assert s.arguments[1].N == 2
    assert s.arguments[1].default_value == [1, 1]
    assert s == _C.parse_schema(text)
    with pytest.raises(ValueError):
        _C.parse_schema("f(Tensor x")


def test_call_with_defaults_and_keywords():
    a = turnout.tensor([1.0, 2.0])
    b = turnout.tensor([10.0, 20.0])
    assert ops.aten.add.Tensor(a, b).tolist() == [11.0, 22.0]
    assert ops.aten.add.Tensor(a, b, alpha=2).tolist() == [21.0, 42.0]
    assert ops.aten.add.Tensor(self=a, other=b).tolist() == [11.0, 22.0]
    assert ops.aten.add.Tensor(a, other=b).tolist() == [11.0, 22.0]


def test_out_overload_writes_out():
    a = turnout.tensor([1.0, 2.0])
    out = turnout.empty(2)
    r = ops.aten.add.out(a, a, out=out)
    assert out.tolist() == [2.0, 4.0]
    assert r._is_same(out)


@pytest.mark.parametrize("call,match", [
    (lambda a: ops.aten.add.Tensor(a, a, 2),
     r"aten::add.Tensor\(\) takes 2 positional arguments but 3 were given; "
     r"the arguments after '\*' are keyword-only"),
    (lambda a: ops.aten.add.Tensor(a),
     r"aten::add.Tensor\(\) missing required argument 'other' \(position 2\)"),
    (lambda a: ops.aten.add.Tensor(a, a, beta=1),
     r"aten::add.Tensor\(\) got an unexpected keyword argument 'beta'"),
    (lambda a: ops.aten.add.Tensor(a, a, other=a),
     r"aten::add.Tensor\(\) got multiple values for argument 'other'"),
    (lambda a: ops.aten.relu.default(a, a),
     r"aten::relu\(\) takes 1 positional argument but 2 were given$"),
])
def test_binding_errors(call, match):
    with pytest.raises(TypeError, match=match):
        call(turnout.tensor([1.0]))


def test_packet_resolves_overload_from_argument_types():
    a = turnout.tensor([1, 2])
    assert ops.aten.add(a, a).tolist() == [2, 4]          # add.Tensor
    assert ops.aten.add(a, 5).tolist() == [6, 7]          # add.Scalar
    assert ops.aten.add(2, 3) == 5                        # add.int
    assert ops.aten.add(2.5, 1.0) == 3.5                  # add.float
    assert ops.aten.div(7, 2) == 3.5                      # div.int
    out = turnout.empty(2, dtype=turnout.int64)
    ops.aten.add(a, a, out=out)                           # add.out
    assert out.tolist() == [2, 4]
    assert ops.aten.sum(turnout.ones(2, 3), 1).tolist() == [3.0, 3.0]  # sum.dim_IntList


def test_packet_with_no_match_lists_every_overload():
    with pytest.raises(TypeError) as e:
        ops.aten.mul(turnout.tensor([1.0]), "x")
    msg = str(e.value)
    assert msg.startswith("aten::mul(): no overload matches the arguments (Tensor, str). Tried:")
    assert "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor\n" in msg
    assert "aten::mul.Scalar(): argument 'other' (position 2) must be Scalar, but got str" in msg


def test_unknown_names_are_attribute_errors():
    with pytest.raises(AttributeError, match="'turnout.ops.aten' has no operator named 'nope'"):
        ops.aten.nope
    with pytest.raises(AttributeError, match="aten::add has no overload named 'nope'.*Scalar, Tensor"):
        ops.aten.add.nope
    assert not hasattr(ops.nonexistent_ns, "op")


def test_namespaces():
    assert "aten" in ops.namespaces()


def test_has_kernel_for_dispatch_key():
    assert ops.aten.relu.default.has_kernel_for_dispatch_key(DispatchKey.CPU)
    assert not ops.aten.relu.default.has_kernel_for_dispatch_key(DispatchKey.XLA)


def test_redispatch_uses_the_given_keys():
    x = turnout.tensor([-1.0, 2.0])
    ks = DispatchKeySet(DispatchKey.CPU)
    assert ops.aten.relu.default.redispatch(ks, x).tolist() == [0.0, 2.0]
    with pytest.raises(NotImplementedError, match="XLA"):
        ops.aten.relu.default.redispatch(DispatchKeySet(DispatchKey.XLA), x)


def test_kernel_errors_propagate_with_their_type():
    with pytest.raises(ValueError, match="mm"):
        ops.aten.mm.default(turnout.ones(2, 3), turnout.ones(2, 3))


def test_gil_is_released_during_the_call():
    # A second thread runs Python code while the first is inside a kernel:
    # the large mm only finishes after the counter thread got the GIL.
    a = turnout.ones(600, 600)
    progress = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            progress.append(1)

    th = threading.Thread(target=count)
    th.start()
    try:
        before = len(progress)
        for _ in range(3):
            ops.aten.mm.default(a, a)
        during = len(progress) - before
    finally:
        stop.set()
        th.join()
    assert during > 0


def test_guards_are_context_managers():
    assert not _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.AutogradCPU)
    with _C._AutoDispatchBelowAutograd():
        assert _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.AutogradCPU)
    assert not _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.AutogradCPU)
    with _C._ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.Tracer)):
        assert _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.Tracer)
    assert not _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.Tracer)
    with _C._IncludeDispatchKeyGuard(DispatchKey.Tracer):
        assert _C._dispatch_tls_is_dispatch_key_included(DispatchKey.Tracer)
    assert not _C._dispatch_tls_is_dispatch_key_included(DispatchKey.Tracer)


def test_guard_restores_on_exception_and_refuses_reentry():
    g = _C._ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.Tracer))
    with pytest.raises(KeyError):
        with g:
            raise KeyError("x")
    assert not _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.Tracer)
    with g:
        with pytest.raises(ValueError, match="already entered"):
            g.__enter__()
