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
    # As torch 1.13, add, sub, mul, div and floor_divide try their Tensor
    # overloads first, and those take numbers (as wrapped numbers).
    assert ops.aten.add(a, 5).tolist() == [6, 7]          # add.Tensor
    assert ops.aten.add.Scalar(a, 5).tolist() == [6, 7]
    three = ops.aten.add(2, 3)                            # add.Tensor too
    assert (three.dim(), three.dtype, three.item()) == (0, turnout.int64, 5)
    assert ops.aten.add.int(2, 3) == 5
    assert ops.aten.add.float(2.5, 1.0) == 3.5
    half = ops.aten.div(7, 2)                             # div.Tensor
    assert (half.dtype, half.item()) == (turnout.float32, 3.5)
    assert ops.aten.div.int(7, 2) == 3.5
    assert ops.aten.neg(2) == -2                          # neg.int
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
    assert ("aten::mul.Tensor(): argument 'other' (position 2) must be Tensor, "
            "but got str") in msg


def test_unknown_names_are_attribute_errors():
    with pytest.raises(AttributeError, match="'turnout.ops.aten' has no operator named 'nope'"):
        ops.aten.nope
    with pytest.raises(AttributeError, match="aten::add has no overload named 'nope'.*Scalar, Scalar_out, Tensor"):
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


def _python_steps_during(call, times=3):
    """How often a second thread ran Python code while `call` ran `times`
    times: more than zero only if the calls let go of the GIL."""
    progress = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            progress.append(1)

    th = threading.Thread(target=count)
    th.start()
    try:
        before = len(progress)
        for _ in range(times):
            call()
        return len(progress) - before
    finally:
        stop.set()
        th.join()


def test_gil_is_released_during_the_call():
    # The large mm only finishes after the counter thread got the GIL.
    a = turnout.ones(600, 600)
    assert _python_steps_during(lambda: ops.aten.mm.default(a, a)) > 0


def test_large_aten_calls_release_the_gil():
    # ops.cc keeps the GIL only for an aten operator on a few CPU elements
    # (at most 1024 per tensor: the hand-over would cost more than the
    # work); a large elementwise call lets the counter thread run.
    big = turnout.ones(2000, 2000)
    assert _python_steps_during(lambda: ops.aten.add.Tensor(big, big), 5) > 0
    assert _python_steps_during(lambda: big + big, 5) > 0


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


@pytest.mark.parametrize("make,match", [
    (lambda: _C._AutoDispatchBelowAutograd(1),
     r"^_AutoDispatchBelowAutograd\(\) takes no arguments \(1 given\)$"),
    (lambda: _C._ExcludeDispatchKeyGuard(),
     r"^_ExcludeDispatchKeyGuard\(keyset\): expected one DispatchKeySet, got 0 "
     r"arguments; e.g. _ExcludeDispatchKeyGuard\(DispatchKeySet\(DispatchKey.Tracer\)\)$"),
    (lambda: _C._ExcludeDispatchKeyGuard(DispatchKey.Tracer),
     r"^_ExcludeDispatchKeyGuard\(keyset\): expected one DispatchKeySet, got "
     r"turnout._C.DispatchKey;"),
    (lambda: _C._IncludeDispatchKeyGuard("Tracer"),
     r"^_IncludeDispatchKeyGuard\(key\): expected one DispatchKey, got str; "
     r"e.g. _IncludeDispatchKeyGuard\(DispatchKey.Tracer\)$"),
    (lambda: _C._IncludeDispatchKeyGuard(key=DispatchKey.Tracer),
     r"^_IncludeDispatchKeyGuard\(\) takes no keyword arguments$"),
    (lambda: type(_C._AutoDispatchBelowAutograd()).__call__(
        _C._AutoDispatchBelowAutograd, x=1),
     r"^_AutoDispatchBelowAutograd\(\) takes no keyword arguments$"),
])
def test_guard_constructor_errors(make, match):
    before = (_C._dispatch_tls_local_include_set(), _C._dispatch_tls_local_exclude_set())
    with pytest.raises(TypeError, match=match):
        make()
    assert (_C._dispatch_tls_local_include_set(),
            _C._dispatch_tls_local_exclude_set()) == before


def test_guard_calls_without_vectorcall_work_too():
    # type.__call__ goes through tp_new with an argument tuple.
    g = type.__call__(_C._IncludeDispatchKeyGuard, DispatchKey.Tracer)
    with g:
        assert _C._dispatch_tls_is_dispatch_key_included(DispatchKey.Tracer)
    assert not _C._dispatch_tls_is_dispatch_key_included(DispatchKey.Tracer)


def test_guard_dropped_inside_its_block_restores():
    g = _C._ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.Tracer))
    g.__enter__()
    assert _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.Tracer)
    del g
    assert not _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.Tracer)


def test_guard_exit_without_enter_is_harmless():
    g = _C._AutoDispatchBelowAutograd()
    assert g.__exit__(None, None, None) is False
    assert not _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.AutogradCPU)


def test_nested_guards_restore_in_order():
    before = _C._dispatch_tls_local_exclude_set()
    with _C._ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.Tracer)):
        with _C._AutoDispatchBelowAutograd():
            assert _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.Tracer)
            assert _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.AutogradCPU)
        assert _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.Tracer)
        assert not _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.AutogradCPU)
    assert _C._dispatch_tls_local_exclude_set() == before


def test_uninitialized_overload_and_packet_raise():
    o = _C._OpOverload.__new__(_C._OpOverload)
    with pytest.raises(TypeError, match=r"_OpOverload was not initialized; make it "
                                        r"with _C._OpOverload\(qualified_name, overload_name\)"):
        o(turnout.ones(1))
    with pytest.raises(TypeError, match="_OpOverload was not initialized"):
        o.name()
    p = _C._OpPacket.__new__(_C._OpPacket)
    with pytest.raises(TypeError, match=r"_OpPacket was not initialized; make it "
                                        r"with _C._OpPacket\(qualified_name\)"):
        p()
    with pytest.raises(TypeError, match="_OpPacket was not initialized"):
        p.overloads()


def test_overload_constructor_errors_keep_the_old_state():
    o = _C._OpOverload("aten::relu", "default")
    with pytest.raises(ValueError, match=r"no operator aten::relu.nope has a schema; "
                                         r"the overloads of aten::relu are: default"):
        o.__init__("aten::relu", "nope")
    assert o.name() == "aten::relu"  # a failed __init__ leaves it as it was
    with pytest.raises(TypeError):
        _C._OpOverload("aten::relu")
    with pytest.raises(ValueError, match="no operator named aten::nope has a schema"):
        _C._OpPacket("aten::nope")


def test_redispatch_and_has_kernel_argument_errors():
    add = ops.aten.add.Tensor
    with pytest.raises(TypeError, match=r"^aten::add.Tensor.redispatch\(keyset, \*args, "
                                        r"\*\*kwargs\): expected a DispatchKeySet first, "
                                        r"got int$"):
        add.redispatch(1)
    with pytest.raises(TypeError, match="got no arguments"):
        add.redispatch()
    with pytest.raises(TypeError, match=r"^aten::add.Tensor.has_kernel_for_dispatch_key"
                                        r"\(key\): expected a DispatchKey, got str$"):
        add.has_kernel_for_dispatch_key("CPU")


def test_subclass_calls_take_the_vectorcall_path_unless_they_define_call():
    vectorcall_flag = 1 << 11  # Py_TPFLAGS_HAVE_VECTORCALL
    assert type(ops.aten.relu.default).__flags__ & vectorcall_flag
    assert type(ops.aten.relu).__flags__ & vectorcall_flag

    class Logged(_C._OpOverload):
        def __call__(self, *args):
            return ("logged", _C._OpOverload.__call__(self, *args))

    relu = Logged("aten::relu", "default")
    assert not type(relu).__flags__ & vectorcall_flag
    tag, out = relu(turnout.tensor([-1.0, 1.0]))
    assert tag == "logged" and out.tolist() == [0.0, 1.0]


def test_keywords_that_are_not_interned_still_bind():
    a = turnout.tensor([1.0])
    kwargs = {"".join(["al", "pha"]): 3}  # a str built at run time
    assert ops.aten.add.Tensor(a, a, **kwargs).tolist() == [4.0]
    assert ops.aten.add(a, a, **kwargs).tolist() == [4.0]


def test_python_kernels_run_with_the_gil_kept_and_cpp_calls_inside_release_it():
    # ops.cc keeps the GIL when the call goes to a Python kernel first; the C++
    # operators that kernel calls release it again, and a table that changes
    # between calls is followed.
    from turnout.library import Library
    defs = Library("gil_kept", "DEF")
    defs.define("square(Tensor x) -> Tensor")
    impls = Library("gil_kept", "IMPL")
    impls.impl("square", lambda x: ops.aten.mm.default(x, x), "CPU")
    a = turnout.ones(600, 600)
    assert _python_steps_during(lambda: ops.gil_kept.square.default(a)) > 0

    small = turnout.tensor([[1.0, 2.0], [3.0, 4.0]])
    results, errors = [], []

    def worker():
        try:
            for _ in range(200):
                results.append(ops.gil_kept.square(small).tolist())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == [[[7.0, 10.0], [15.0, 22.0]]] * 800

    impls._destroy()
    cpp = _C._dispatch_library("IMPL", "gil_kept", "CPU")
    cpp.impl_t_t("square")  # a C++ identity kernel now
    assert ops.gil_kept.square(small)._is_same(small)
    del cpp
    defs._destroy()


def test_guards_take_subclasses_of_the_key_types():
    # The exact types are read without pybind11's caster; subclasses take
    # the caster's path.
    class Keys(DispatchKeySet):
        pass

    with _C._ExcludeDispatchKeyGuard(Keys(DispatchKey.Tracer)):
        assert _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.Tracer)
    assert not _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.Tracer)
    with pytest.raises(TypeError, match="expected one DispatchKeySet"):
        _C._ExcludeDispatchKeyGuard(DispatchKeySet.__new__(DispatchKeySet))


def test_calls_and_their_errors_keep_reference_counts():
    import sys
    a = turnout.ones(1)
    ks = DispatchKeySet(DispatchKey.Tracer)
    add = ops.aten.add.Tensor

    def calls():
        add(a, a, alpha=2)
        ops.aten.add(a, 1)
        a + a, 1 + a, 1 - a, 2 / a, a * 3
        with _C._ExcludeDispatchKeyGuard(ks):
            pass
        for bad in (lambda: add(a, "x"), lambda: ops.aten.add(a, "x"),
                    lambda: a + "x", lambda: _C._IncludeDispatchKeyGuard(ks)):
            with pytest.raises(TypeError):
                bad()

    calls()
    before = [sys.getrefcount(o) for o in (a, ks, add, ops.aten.add)]
    for _ in range(100):
        calls()
    assert [sys.getrefcount(o) for o in (a, ks, add, ops.aten.add)] == before


def test_size_and_stride_of_a_0_dim_tensor_are_index_errors():
    # torch 1.13 reads past the end for sym_size.int / sym_stride.int here;
    # turnout raises as torch's size.int does.
    x = turnout.zeros(())
    for op in (turnout.ops.aten.size.int, turnout.ops.aten.sym_size.int,
               turnout.ops.aten.sym_stride.int):
        for d in (0, -1):
            with pytest.raises(IndexError, match="tensor has no dimensions"):
                op(x, d)
