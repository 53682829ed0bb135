"""Tests for bindings/python_mode.cc and turnout._mode: dispatch modes and
tensor subclasses at the Python key, and examples/logging_mode.py."""

import contextlib
import doctest
import io
import threading
import weakref

import pytest

import turnout
import turnout._mode
from turnout import DispatchKey, _C
from turnout._mode import DispatchMode, active_modes, no_dispatch

from example_loader import load_example


class Recorder(DispatchMode):
    """Records (tag, op name, types) for every call, then runs it."""

    def __init__(self, tag="mode", log=None):
        self.tag = tag
        self.log = [] if log is None else log

    def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
        self.log.append((self.tag, func.name(), types))
        return func(*args, **(kwargs or {}))

    def names(self):
        return [name for _, name, _ in self.log]


def python_included():
    return _C._dispatch_tls_is_dispatch_key_included(DispatchKey.Python)


@pytest.fixture(autouse=True)
def clean_thread_state():
    """Every test starts and must end with no mode and the default sets."""
    include = _C._dispatch_tls_local_include_set()
    exclude = _C._dispatch_tls_local_exclude_set()
    assert active_modes() == []
    yield
    assert active_modes() == []
    assert _C._dispatch_tls_local_include_set() == include
    assert _C._dispatch_tls_local_exclude_set() == exclude


# ---- Modes -------------------------------------------------------------------


def test_mode_sees_every_call_with_the_overload_object():
    x = turnout.ones(2)
    with Recorder() as m:
        y = x * 2 + x
        z = turnout.zeros(3)
        s = x.sum()
    # x * 2 is mul.Tensor(x, 2), as torch 1.13's (the 2 a wrapped number).
    assert m.names() == ["aten::mul.Tensor", "aten::add.Tensor", "aten::zeros",
                         "aten::sum"]
    assert y.tolist() == [3.0, 3.0] and z.tolist() == [0.0] * 3
    assert s.item() == 2.0

    funcs = []

    class Funcs(DispatchMode):
        def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
            funcs.append((func, types, args, kwargs))
            return func(*args, **kwargs)

    with Funcs():
        x + x
    func, types, args, kwargs = funcs[0]
    assert func is turnout.ops.aten.add.Tensor
    assert types == ()
    assert len(args) == 2 and args[0] is x and args[1] is x
    assert kwargs == {}  # alpha=1 is its default: left out, as torch's


def test_mode_sees_the_calls_composite_kernels_make():
    a, b = turnout.ones(2, 3), turnout.ones(3, 4)
    with Recorder() as m:
        out = a @ b  # aten::matmul is CompositeImplicitAutograd: mm below it
    assert m.names() == ["aten::mm"]
    assert out.shape == (2, 4)
    with Recorder() as m:
        turnout.ops.aten.linear.default(a, turnout.ones(4, 3), None)
    assert "aten::linear" not in m.names()
    assert any(n in ("aten::mm", "aten::matmul") for n in m.names()) or \
        "aten::mm" in m.names(), m.names()


def test_modes_nest_innermost_first():
    log = []
    with Recorder("outer", log), Recorder("inner", log):
        assert python_included()
        turnout.ones(2).relu()
    assert [(t, n) for t, n, _ in log] == [
        ("inner", "aten::ones"), ("outer", "aten::ones"),
        ("inner", "aten::relu"), ("outer", "aten::relu")]


def test_mode_is_popped_inside_its_handler():
    seen = []

    class Probe(DispatchMode):
        def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((list(active_modes()), python_included()))
            return func(*args, **kwargs)

    outer, inner = Recorder("outer"), Probe()
    with outer:
        with inner:
            turnout.ones(1)
            assert active_modes() == [outer, inner]
        assert active_modes() == [outer]
    # Inside the inner handler only the outer mode was active.
    assert seen == [([outer], True)]
    with Probe():
        turnout.ones(1)
    assert seen[-1] == ([], False)  # last mode popped: Python not included
    assert not python_included()


def test_mode_can_change_results_and_implement_an_operator_without_kernel():
    lib = _C._dispatch_library("DEF", "python_mode_test_a", "")
    lib.def_("pair(Tensor x) -> (Tensor, Tensor)")
    lib.def_("nothing(Tensor x) -> ()")

    class Fake(DispatchMode):
        def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
            if func is turnout.ops.python_mode_test_a.pair.default:
                return args[0], args[0] * 2
            if func is turnout.ops.python_mode_test_a.nothing.default:
                return None
            out = func(*args, **kwargs)
            return out * 10 if func is turnout.ops.aten.relu.default else out

    x = turnout.tensor([-1.0, 2.0])
    with Fake():
        assert x.relu().tolist() == [0.0, 20.0]
        a, b = turnout.ops.python_mode_test_a.pair(x)
        assert turnout.ops.python_mode_test_a.nothing(x) is None
    assert a._is_same(x) and b.tolist() == [-2.0, 4.0]
    # Without the mode there is no kernel.
    with pytest.raises(Exception, match="python_mode_test_a::pair"):
        turnout.ops.python_mode_test_a.pair(x)
    del lib


@pytest.mark.parametrize("result,match", [
    (3, r"Bad.__turnout_dispatch__ for aten::relu returned int where the "
        r"schema returns Tensor"),
    (None, r"for aten::relu returned None where the schema returns Tensor"),
    ("x", r"returned str where the schema returns Tensor"),
    (NotImplemented, r"no implementation found for 'aten::relu' on types "
                     r"that implement __turnout_dispatch__: \[\] nor was it "
                     r"found on the currently active mode <.*Bad object"),
])
def test_wrong_results_raise_type_error(result, match):
    class Bad(DispatchMode):
        def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
            return result

    x = turnout.ones(2)
    with pytest.raises(TypeError, match=match):
        with Bad():
            x.relu()


def test_wrong_result_count_for_several_and_for_no_returns():
    lib = _C._dispatch_library("DEF", "python_mode_test_b", "")
    lib.def_("pair(Tensor x) -> (Tensor, Tensor)")
    lib.def_("nothing(Tensor x) -> ()")
    x = turnout.ones(1)

    class Returns(DispatchMode):
        def __init__(self, value):
            self.value = value

        def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
            if func.name().startswith("python_mode_test_b"):
                return self.value
            return func(*args, **kwargs)

    with pytest.raises(TypeError, match=r"python_mode_test_b::pair returned "
                       r"tuple\[Tensor\]; the operator returns 2 values"):
        with Returns((x,)):
            turnout.ops.python_mode_test_b.pair(x)
    with pytest.raises(TypeError, match=r"python_mode_test_b::pair returned int as "
                       r"value 2 of 2 where the schema returns Tensor"):
        with Returns((x, 1)):
            turnout.ops.python_mode_test_b.pair(x)
    with pytest.raises(TypeError, match=r"python_mode_test_b::nothing returned "
                       r"Tensor; the operator returns nothing, so return None"):
        with Returns(x):
            turnout.ops.python_mode_test_b.nothing(x)
    del lib


class Boom(Exception):
    pass


def test_exception_reaches_the_caller_with_its_type_and_state_is_restored():
    class Raise(DispatchMode):
        def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
            raise Boom(f"no {func.name()}")

    include = _C._dispatch_tls_local_include_set()
    x = turnout.ones(1)
    with pytest.raises(Boom, match="no aten::relu") as info:
        with Raise():
            x.relu()
    assert "__turnout_dispatch__" in str(info.traceback[-1].name)
    assert active_modes() == []
    assert _C._dispatch_tls_local_include_set() == include

    outer = Recorder("outer")
    with outer:
        with pytest.raises(Boom):
            with Raise():
                turnout.ones(1)
        assert active_modes() == [outer]
        assert python_included()
    # Under autograd, whose kernel holds a key guard while it redispatches.
    w = turnout.ones(2, requires_grad=True)
    with pytest.raises(Boom):
        with Raise():
            w * w
    assert not _C._dispatch_tls_is_dispatch_key_excluded(DispatchKey.AutogradCPU)


def test_exception_from_the_real_kernel_passes_through_the_mode():
    with Recorder() as m:
        with pytest.raises(TypeError, match="aten::mm"):
            turnout.ops.aten.mm.default(turnout.ones(2), "nope")
        with pytest.raises(ValueError):
            turnout.ones(2, 3).view(7)
    assert "aten::view" in m.names()


def test_modes_are_per_thread():
    other_calls = []
    other_state = []

    def work():
        other_state.append((active_modes(), python_included()))
        with Recorder("thread", other_calls):
            turnout.ones(1).neg()

    with Recorder("main") as m:
        t = threading.Thread(target=work)
        t.start()
        t.join()
        turnout.ones(1)
    assert other_state == [([], False)]
    assert m.names() == ["aten::ones"]
    assert [n for _, n, _ in other_calls] == ["aten::ones", "aten::neg"]


def test_modes_on_many_threads_at_once_see_only_their_own_calls():
    x = turnout.ones(4)
    results = {}
    errors = []

    def work(i):
        try:
            with Recorder(f"t{i}") as m:
                for _ in range(50):
                    x.neg() if i % 2 else x + i
            results[i] = m.log
        except Exception as e:  # reported below, with the thread
            errors.append((i, e))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for i, log in results.items():
        assert len(log) == 50
        assert {tag for tag, _, _ in log} == {f"t{i}"}
        assert {name for _, name, _ in log} == (
            {"aten::neg"} if i % 2 else {"aten::add.Tensor"})


def test_leaving_modes_out_of_order_is_an_error():
    a, b = Recorder("a"), Recorder("b")
    a.__enter__()
    b.__enter__()
    with pytest.raises(RuntimeError, match="Recorder is not the innermost"):
        a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    a.__exit__(None, None, None)
    with pytest.raises(RuntimeError, match="innermost is none"):
        a.__exit__(None, None, None)


def test_push_and_pop_errors():
    with pytest.raises(TypeError, match="has no __turnout_dispatch__ method"):
        _C._push_dispatch_mode(object())
    with pytest.raises(ValueError, match="no dispatch mode is active"):
        _C._pop_dispatch_mode()


def test_no_dispatch_skips_modes():
    class Fail(DispatchMode):
        def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
            raise AssertionError(f"saw {func.name()}")

    with Fail():
        with no_dispatch():
            assert (turnout.ones(1) + 1).tolist() == [2.0]


def test_autograd_runs_above_the_mode():
    w = turnout.tensor([1.0, 2.0], requires_grad=True)
    with Recorder() as m:
        loss = (w * w).sum()
    assert m.names() == ["aten::mul.Tensor", "aten::sum"]
    loss.backward()
    assert w.grad.tolist() == [2.0, 4.0]


# ---- Tensor subclasses -----------------------------------------------------------


class Sub(turnout.Tensor):
    """Shares memory with a plain tensor; logs and runs every call."""

    log = []

    @classmethod
    def __turnout_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.log.append((cls.__name__, func.name(), types))
        with no_dispatch():
            return func(*args, **(kwargs or {}))


class SubSub(Sub):
    pass


class Declines(turnout.Tensor):
    @classmethod
    def __turnout_dispatch__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


class Plain(turnout.Tensor):
    pass


@pytest.fixture(autouse=True)
def clear_sub_log():
    Sub.log.clear()


def test_subclass_gets_every_call_on_its_instances():
    base = turnout.tensor([1.0, 2.0])
    s = turnout.Tensor._make_subclass(Sub, base)
    assert type(s) is Sub
    assert _C._dispatch_keys(s).has(DispatchKey.Python)
    assert not _C._dispatch_keys(base).has(DispatchKey.Python)
    assert s.data_ptr() == base.data_ptr()  # shares memory
    r = s * 3
    assert Sub.log == [("Sub", "aten::mul.Tensor", (Sub,))]
    assert type(r) is turnout.Tensor and r.tolist() == [3.0, 6.0]
    # In place: the same Python object comes back through C++.
    out = turnout.ops.aten.add_.Scalar(s, 1)
    assert out is s and base.tolist() == [2.0, 3.0]
    # Plain tensors are untouched.
    Sub.log.clear()
    base + base
    assert Sub.log == []


def test_most_derived_subclass_goes_first():
    a = turnout.Tensor._make_subclass(Sub, turnout.ones(1))
    b = turnout.Tensor._make_subclass(SubSub, turnout.ones(1))
    a + b
    assert Sub.log == [("SubSub", "aten::add.Tensor", (SubSub, Sub))]


def test_every_handler_declining_is_a_type_error():
    d = turnout.Tensor._make_subclass(Declines, turnout.ones(1))
    with pytest.raises(TypeError, match=r"no implementation found for "
                       r"'aten::neg' on types that implement "
                       r"__turnout_dispatch__: \[Declines\]"):
        d.neg()


def test_subclass_without_handler_dispatches_as_usual():
    p = turnout.Tensor._make_subclass(Plain, turnout.ones(2), True)
    assert type(p) is Plain and p.requires_grad
    assert not _C._dispatch_keys(p).has(DispatchKey.Python)
    assert (p + 1).tolist() == [2.0, 2.0]


def test_mode_goes_before_the_subclass():
    s = turnout.Tensor._make_subclass(Sub, turnout.ones(1))
    with Recorder() as m:
        s.neg()
    assert m.log == [("mode", "aten::neg", (Sub,))]
    assert Sub.log == [("Sub", "aten::neg", (Sub,))]


class Wrapper(turnout.Tensor):
    """Holds an inner tensor; the wrapper itself has no memory."""

    @staticmethod
    def __new__(cls, elem):
        r = turnout.Tensor._make_wrapper_subclass(
            cls, elem.shape, dtype=elem.dtype, device=elem.device)
        r.elem = elem
        return r

    def __repr__(self):
        return f"Wrapper({self.elem!r})"

    @classmethod
    def __turnout_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(x):
            return x.elem if isinstance(x, Wrapper) else x

        out = func(*[unwrap(a) for a in args],
                   **{k: unwrap(v) for k, v in (kwargs or {}).items()})
        return Wrapper(out) if isinstance(out, turnout.Tensor) else out


def test_wrapper_subclass():
    w = Wrapper(turnout.tensor([1.0, 2.0]))
    assert w.shape == (2,) and w.dtype is turnout.float32
    assert str(w.device) == "cpu"
    v = w * 3 + w
    assert type(v) is Wrapper and v.elem.tolist() == [4.0, 8.0]
    mixed = w + turnout.ones(2)
    assert type(mixed) is Wrapper and mixed.elem.tolist() == [2.0, 3.0]
    assert (w * 2).sum().elem.item() == 6.0
    same = turnout.ops.aten.add_.Tensor(w, w)
    assert same is w and w.elem.tolist() == [2.0, 4.0]
    # Below the Python key the wrapper dispatches as its device (CPU), as
    # torch 1.13's: the kernel's read of the memory it does not have is an
    # error naming the fix, not a crash or a tensor of garbage.
    with no_dispatch():
        with pytest.raises(RuntimeError, match="has no storage"):
            w * 2


def test_preservation_is_available():
    # The probe of CPython's finalizer bookkeeping passed on this interpreter.
    assert _C._python_tensor_preservation


def test_wrapper_object_dies_with_its_last_reference():
    w = Wrapper(turnout.ones(3))
    v = w + w
    inner = weakref.ref(v.elem)
    wv, ww = weakref.ref(v), weakref.ref(w)
    del v                       # no gc.collect(), no sweep: freed right here
    assert wv() is None and inner() is None
    assert ww() is w
    del w
    assert ww() is None


def test_subclass_object_dies_with_its_last_reference():
    s = turnout.Tensor._make_subclass(Sub, turnout.ones(2))
    r = weakref.ref(s)
    t = s.neg()
    rt = weakref.ref(t)
    del s, t
    assert r() is None and rt() is None


class Tagged(Wrapper):
    """A wrapper whose handler marks the objects it makes."""

    made = []

    @classmethod
    def __turnout_dispatch__(cls, func, types, args=(), kwargs=None):
        out = super().__turnout_dispatch__(func, types, args, kwargs)
        if isinstance(out, Wrapper):
            out = Tagged(out.elem)
            out.note = f"made by {func.name()}"
            cls.made.append(id(out))
        return out


def test_round_trip_through_cpp_keeps_class_attributes_and_identity():
    Tagged.made.clear()
    w = Tagged(turnout.tensor([1.0, 2.0]))
    # The handler's object loses its last Python reference on the way back
    # through the dispatcher (its tensor is on a C++ stack): C++ keeps it.
    v = w * 2
    assert type(v) is Tagged and v.note == "made by aten::mul.Tensor"
    assert id(v) == Tagged.made[-1]
    assert v.elem.tolist() == [2.0, 4.0]
    r = weakref.ref(v)
    del v
    assert r() is None


def test_object_held_by_cpp_only_is_kept_and_handed_back():
    fut = turnout.jit.Future()
    w = Wrapper(turnout.tensor([3.0]))
    w.note = "kept"
    r = weakref.ref(w)
    fut.set_result(w)
    assert _C._python_tensor_is_held_by_cpp(w)
    del w
    # Python has no reference left, C++ holds the tensor: the object lives.
    assert r() is not None
    for _ in range(3):          # C++ holds it again after each round
        back = fut.value()
        assert back is r() and back.note == "kept" and type(back) is Wrapper
        del back
        assert r() is not None
    del fut                     # C++ lets go: the object goes with it
    assert r() is None


def test_object_freed_when_cpp_lets_go_from_another_thread():
    fut = turnout.jit.Future()
    w = Wrapper(turnout.tensor([1.0]))
    r = weakref.ref(w)
    fut.set_result(w)
    del w
    assert r() is not None
    box = [fut]
    del fut
    t = threading.Thread(target=box.clear)   # the last C++ reference goes there
    t.start()
    t.join()
    assert r() is None


def test_plain_tensor_object_held_by_cpp_only_is_kept_and_freed_after():
    # turnout.Tensor itself flips without a finalizer (tensorClassDealloc).
    fut = turnout.jit.Future()
    x = turnout.tensor([3.0])
    x.note = "kept"
    r = weakref.ref(x)
    fut.set_result(x)
    del x
    assert r() is not None and r().note == "kept"
    for _ in range(3):
        back = fut.value()
        assert back is r() and back.note == "kept"
        assert type(back) is turnout.Tensor
        del back
    del fut
    assert r() is None


class Slotted(turnout.Tensor):
    __slots__ = ["elem"]


def test_subclass_with_slots_and_a_cycle_keeps_its_state_while_cpp_holds_it():
    import gc
    fut = turnout.jit.Future()
    s = turnout.Tensor._make_subclass(Slotted, turnout.ones(1))
    s.elem = turnout.zeros(1)
    fut.set_result(s)
    plain = turnout.ones(1)
    plain.me = plain               # a cycle through the object's __dict__
    fut2 = turnout.jit.Future()
    fut2.set_result(plain)
    rs = weakref.ref(s)
    plain_id = id(plain)
    del s, plain
    gc.collect()       # (the collector clears weak references to a cycle)
    assert rs() is not None and rs().elem.tolist() == [0.0]
    assert fut.value() is rs()
    back = fut2.value()
    assert id(back) == plain_id and back.me is back
    del back.me, back
    del fut, fut2
    gc.collect()
    assert rs() is None


def test_held_by_cpp_query_errors():
    assert not _C._python_tensor_is_held_by_cpp(turnout.ones(1))
    with pytest.raises(TypeError, match="expected a turnout.Tensor, got int"):
        _C._python_tensor_is_held_by_cpp(3)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: turnout.Tensor._make_wrapper_subclass(Plain, [2]), TypeError,
     "has no __turnout_dispatch__ classmethod"),
    (lambda: turnout.Tensor._make_wrapper_subclass(Wrapper, [2], dtype="f"),
     TypeError, "dtype must be a turnout.dtype"),
    (lambda: turnout.Tensor._make_wrapper_subclass(Wrapper, [2], device=3),
     TypeError, "device must be a turnout.device"),
    (lambda: turnout.Tensor._make_wrapper_subclass(Wrapper, [2, 3], strides=[1]),
     ValueError, "2 sizes but 1 strides"),
    (lambda: turnout.Tensor._make_wrapper_subclass(
        Wrapper, [2], dispatch_sizes_strides_policy="bad"),
     ValueError, "Unknown sizes_strides_policy: bad; expected 'strides' or 'sizes'"),
    (lambda: turnout.Tensor._make_wrapper_subclass(Wrapper, [2], layout=1),
     TypeError, "layout must be a turnout.layout"),
    (lambda: turnout.Tensor._make_wrapper_subclass(Wrapper, [2], memory_format=1),
     TypeError, "memory_format must be a turnout.memory_format"),
    (lambda: turnout.Tensor._make_wrapper_subclass(Wrapper, [2], storage_offset=-1),
     ValueError, ""),
    (lambda: turnout.Tensor._make_subclass(Plain, turnout.ones(1), dispatch_device=True),
     TypeError, "has no __turnout_dispatch__ of its own"),
    (lambda: turnout.Tensor._make_wrapper_subclass(Wrapper, [-1]),
     ValueError, ""),
    (lambda: turnout.Tensor._make_subclass(int, turnout.ones(1)), TypeError,
     "cls must be a subclass of turnout.Tensor"),
])
def test_subclass_constructor_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ---- The logging example and the docstrings -----------------------------------


def test_logging_example_prints_every_call_with_shapes():
    example = load_example("logging_mode")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        example.main()
    assert out.getvalue().splitlines() == [
        # As torch's handlers see them: defaulted arguments left out, but
        # the device and pin_memory a Python factory always passes.
        "aten::ones([2, 3], device=device(type='cpu'), pin_memory=False) -> "
        "Tensor[2, 3]",
        "aten::full([3, 2], 0.5, device=device(type='cpu'), pin_memory=False)"
        " -> Tensor[3, 2]",
        "aten::mm(Tensor[2, 3], Tensor[3, 2]) -> Tensor[2, 2]",
        "aten::sub.Tensor(Tensor[2, 2], 1) -> Tensor[2, 2]",
        "aten::relu(Tensor[2, 2]) -> Tensor[2, 2]",
        "aten::sum(Tensor[2, 2]) -> Tensor[]",
        "total: 2.0",
    ]
    failures, attempted = doctest.testmod(example)
    assert failures == 0 and attempted > 0


def test_docstring_examples():
    failures, attempted = doctest.testmod(turnout._mode)
    assert failures == 0 and attempted > 0
