"""Tests for Python kernels (bindings/python_kernel.cc, library.cc) and
turnout.library (python/turnout/library.py)."""

import doctest
import gc
import threading
import traceback
from typing import List, Optional, Sequence, Tuple

import pytest

import turnout
import turnout.library
from turnout import DispatchKey, Tensor, _C
from turnout.library import (
    Library, custom_op, define, fallthrough_kernel, impl, infer_schema,
    scoped_library,
)
from script_runner import run_script


def _ops_names():
    return set(_C._dispatch_get_all_op_names())


def test_docstring_examples():
    failures, attempted = doctest.testmod(turnout.library, optionflags=doctest.ELLIPSIS)
    assert failures == 0
    assert attempted > 40


# ---- Kernels per key -------------------------------------------------------------


def test_cpu_kernel_gets_positional_and_keyword_only_arguments():
    seen = []

    def kernel(x, n, *, scale):
        seen.append((type(x).__name__, n, scale))
        return x * scale

    with scoped_library("pk_a", "DEF") as lib:
        assert lib.define("f(Tensor x, int n=2, *, float scale=1.5) -> Tensor") == "pk_a::f"
        lib.impl("f", kernel, "CPU")
        out = turnout.ops.pk_a.f(turnout.ones(2))
        assert out.tolist() == [1.5, 1.5]
        turnout.ops.pk_a.f(turnout.ones(1), 7, scale=2.0)
        assert seen == [("Tensor", 2, 1.5), ("Tensor", 7, 2.0)]
        dump = _C._dispatch_dump("pk_a::f")
        assert "CPU: python kernel test_cpu_kernel_gets_positional" in dump
        assert "test_python_kernels.py:" in dump


def test_meta_and_cpu_kernels_are_chosen_by_device():
    with scoped_library("pk_b", "DEF") as lib:
        lib.define("g(Tensor x) -> Tensor")
        lib.impl("g", lambda x: x + 1, "CPU")
        lib.impl("g", lambda x: turnout.empty(3 * x.shape[0], device="meta"), "Meta")
        assert turnout.ops.pk_b.g(turnout.zeros(2)).tolist() == [1.0, 1.0]
        m = turnout.ops.pk_b.g(turnout.empty(2, device="meta"))
        assert str(m.device) == "meta" and m.shape == (6,)


def test_composite_implicit_autograd_kernel_is_the_default_for_a_def_library():
    with scoped_library("pk_c", "DEF") as lib:
        lib.define("h(Tensor x) -> Tensor")
        lib.impl("h", lambda x: turnout.ops.aten.relu(x))
        assert "CompositeImplicitAutograd[alias]: python kernel" in _C._dispatch_dump("pk_c::h")
        x = turnout.tensor([-1.0, 2.0], requires_grad=True)
        y = turnout.ops.pk_c.h(x)
        assert y.tolist() == [0.0, 2.0]
        y.sum().backward()  # through relu's own autograd kernel
        assert x.grad.tolist() == [0.0, 1.0]


def test_autograd_kernel_with_keyset_redispatches_below_itself():
    keysets = []

    def autograd_kernel(ks, x):
        keysets.append(ks)
        below = ks - _C.DispatchKeySet([DispatchKey.AutogradCPU])
        return turnout.ops.pk_d.k.default.redispatch(below, x) + 100

    with scoped_library("pk_d", "DEF") as lib:
        lib.define("k(Tensor x) -> Tensor")
        lib.impl("k", lambda x: x * 2, "CPU")
        lib.impl("k", autograd_kernel, "AutogradCPU", with_keyset=True)
        out = turnout.ops.pk_d.k(turnout.ones(1))
        assert out.tolist() == [102.0]
        assert len(keysets) == 1
        assert keysets[0].has(DispatchKey.CPU) and keysets[0].has(DispatchKey.AutogradCPU)


def test_autograd_alias_kernel():
    with scoped_library("pk_e", "DEF") as lib:
        lib.define("k(Tensor x) -> Tensor")
        lib.impl("k", lambda x: x * 2, "CPU")
        lib.impl("k", lambda x: x * 3, "Autograd")
        assert turnout.ops.pk_e.k(turnout.ones(1)).tolist() == [3.0]
        with _C._AutoDispatchBelowAutograd():
            assert turnout.ops.pk_e.k(turnout.ones(1)).tolist() == [2.0]


def test_several_returns_and_no_return():
    calls = []
    with scoped_library("pk_f", "DEF") as lib:
        lib.define("two(Tensor x) -> (Tensor, int)")
        lib.define("none(Tensor x) -> ()")
        lib.impl("two", lambda x: (x + 1, 5), "CPU")
        lib.impl("none", lambda x: calls.append(1), "CPU")
        t, n = turnout.ops.pk_f.two(turnout.zeros(1))
        assert t.tolist() == [1.0] and n == 5
        assert turnout.ops.pk_f.none(turnout.zeros(1)) is None
        assert calls == [1]


def test_dtype_arguments_arrive_as_dtype_objects():
    with scoped_library("pk_g", "DEF") as lib:
        lib.define("cast(Tensor x, ScalarType dtype) -> Tensor")
        got = []

        def kernel(x, dtype):
            got.append(dtype)
            return x.to(dtype)

        lib.impl("cast", kernel, "CPU")
        assert turnout.ops.pk_g.cast(turnout.ones(1), turnout.int32).dtype == turnout.int32
        assert got == [turnout.int32]


# ---- Fallbacks ---------------------------------------------------------------------


def test_python_fallback_gets_the_op_and_redispatches():
    seen = []

    def fallback(op, ks, *args, **kwargs):
        seen.append(op.name())
        return op.redispatch(ks.remove(DispatchKey.TESTING_ONLY_GenericMode), *args, **kwargs)

    lib = Library("_", "IMPL", "TESTING_ONLY_GenericMode")
    lib.fallback(fallback, with_keyset=True)
    assert _C._dispatch_has_backend_fallback(DispatchKey.TESTING_ONLY_GenericMode)
    a = turnout.tensor([1.0, -2.0])
    with _C._IncludeDispatchKeyGuard(DispatchKey.TESTING_ONLY_GenericMode):
        out = turnout.ops.aten.relu(a)
        s = turnout.ops.aten.add.Tensor(a, a, alpha=2)
    assert out.tolist() == [1.0, 0.0]
    assert s.tolist() == [3.0, -6.0]
    # The include set also reaches the calls the kernels make themselves.
    assert seen[0] == "aten::relu" and "aten::add.Tensor" in seen
    n = len(seen)
    turnout.ops.aten.relu(a)  # outside the guard: no fallback
    assert len(seen) == n
    del lib
    gc.collect()
    assert not _C._dispatch_has_backend_fallback(DispatchKey.TESTING_ONLY_GenericMode)


def test_fallback_key_from_argument_and_fallthrough():
    lib = Library("pk_fb", "FRAGMENT")
    lib.fallback(lambda op, *a, **k: None, "TESTING_ONLY_GenericWrapper")
    lib.fallback(fallthrough_kernel, "XLA")
    assert _C._dispatch_has_backend_fallback(DispatchKey.TESTING_ONLY_GenericWrapper)
    assert _C._dispatch_has_backend_fallback(DispatchKey.XLA)
    lib._destroy()
    assert not _C._dispatch_has_backend_fallback(DispatchKey.TESTING_ONLY_GenericWrapper)
    assert not _C._dispatch_has_backend_fallback(DispatchKey.XLA)
    with pytest.raises(ValueError, match="no dispatch key"):
        Library("_", "IMPL").fallback(lambda op: None)


def test_impl_fallthrough_skips_the_key():
    with scoped_library("pk_ft", "DEF") as lib:
        lib.define("k(Tensor x) -> Tensor")
        lib.impl("k", lambda x: x * 2, "CPU")
        lib.impl("k", fallthrough_kernel, "AutogradCPU")
        line = [x for x in _C._dispatch_dump("pk_ft::k").splitlines()
                if x.startswith("AutogradCPU:")]
        assert len(line) == 1 and "fallthrough" in line[0]
        assert "test_python_kernels.py" in line[0]  # the user's site
        assert turnout.ops.pk_ft.k(turnout.ones(1)).tolist() == [2.0]


# ---- Errors ------------------------------------------------------------------------


class MyError(Exception):
    pass


def _raising_kernel(x):
    raise MyError("kernel failed on purpose")


def test_exception_keeps_its_type_and_traceback_and_restores_tls():
    with scoped_library("pk_h", "DEF") as lib:
        lib.define("boom(Tensor x) -> Tensor")
        lib.impl("boom", _raising_kernel, "CPU")
        before_in = _C._dispatch_tls_local_include_set()
        before_ex = _C._dispatch_tls_local_exclude_set()
        with pytest.raises(MyError, match="kernel failed on purpose") as info:
            turnout.ops.pk_h.boom(turnout.ones(1))
        frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
        assert "_raising_kernel" in frames
        # Raised under a guard inside the call: restored on the way out.
        with pytest.raises(MyError):
            with _C._AutoDispatchBelowAutograd():
                turnout.ops.pk_h.boom(turnout.ones(1))
        assert _C._dispatch_tls_local_include_set() == before_in
        assert _C._dispatch_tls_local_exclude_set() == before_ex
        # A kernel that raises under a redispatch from another Python kernel.
        lib.impl("boom", lambda ks, x: turnout.ops.pk_h.boom.default.redispatch(
            ks.remove(DispatchKey.AutogradCPU), x), "AutogradCPU", with_keyset=True)
        with pytest.raises(MyError):
            turnout.ops.pk_h.boom(turnout.ones(1))
        assert _C._dispatch_tls_local_exclude_set() == before_ex


@pytest.mark.parametrize("schema,result,match", [
    ("r1(Tensor x) -> Tensor", 3,
     "expected the kernel for pk_i::r1 to return a Tensor, got int"),
    ("r2(Tensor x) -> int", "s", "expected the kernel for pk_i::r2 to return an int, got str"),
    ("r3(Tensor x) -> (Tensor, Tensor)", None,
     r"to return a tuple of 2 values \(Tensor, Tensor\), got None"),
    ("r4(Tensor x) -> (Tensor, Tensor)", ("a", "b"),
     r"to return \(Tensor, Tensor\), but element 0 is str"),
    ("r5(Tensor x) -> ()", 1, "to return None .*got int"),
    ("r6(Tensor x) -> Tensor[]", [1], r"to return a Tensor\[\], got list\[int\]"),
])
def test_return_is_checked_against_the_schema(schema, result, match):
    with scoped_library("pk_i", "DEF") as lib:
        name = lib.define(schema).split("::")[1]
        lib.impl(name, lambda x: result, "CPU")
        with pytest.raises(TypeError, match=match):
            getattr(turnout.ops.pk_i, name)(turnout.ones(1))


def test_wrong_arity_is_refused_at_registration():
    with scoped_library("pk_j", "DEF") as lib:
        lib.define("f(Tensor x, int n, *, bool flag=False) -> Tensor")
        with pytest.raises(TypeError, match=r"impl\('f'\): the kernel .* cannot take the "
                                            r"arguments of pk_j::f"):
            lib.impl("f", lambda x: x, "CPU")
        with pytest.raises(TypeError, match="keyword-only ones by name"):
            lib.impl("f", lambda x, n: x, "CPU")  # no 'flag' keyword
        with pytest.raises(TypeError, match="the DispatchKeySet"):
            lib.impl("f", lambda x, n, *, flag: x, "CPU", with_keyset=True)
        with pytest.raises(TypeError, match="the kernel must be a callable, but found type <class 'int'>"):
            lib.impl("f", 3, "CPU")
        assert not _C._dispatch_has_kernel_for_dispatch_key("pk_j::f", DispatchKey.CPU)
        lib.impl("f", lambda *args, **kwargs: args[0], "CPU")  # variadic fits


def test_kernel_that_fails_to_take_arguments_at_call_time_raises_typeerror():
    with scoped_library("pk_k", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        with pytest.raises(TypeError, match=r"divmod\(x, y, /\) cannot take"):
            lib.impl("f", divmod, "CPU")
        # A builtin without a signature is checked by Python at call time.
        lib.impl("f", getattr, "CPU")
        with pytest.raises(TypeError, match="getattr expected at least 2 arguments"):
            turnout.ops.pk_k.f(turnout.ones(1))


def test_wrong_argument_type_from_the_caller():
    with scoped_library("pk_l", "DEF") as lib:
        lib.define("f(Tensor x, int n) -> Tensor")
        lib.impl("f", lambda x, n: x, "CPU")
        with pytest.raises(TypeError, match=r"pk_l::f\(\): argument 'n' \(position 2\) "
                                            r"must be int, but got str"):
            turnout.ops.pk_l.f(turnout.ones(1), "3")


@pytest.mark.parametrize("call,exc,match", [
    (lambda: Library("pk_m", "NOPE"), ValueError, "Unsupported kind: 'NOPE'"),
    (lambda: Library(3, "DEF"), TypeError, "expected ns to be a str, got int"),
    (lambda: Library("pk_m", "IMPL", "NotAKey"), ValueError, "NotAKey"),
    (lambda: Library("pk_m", "IMPL", "CPU").define("f(Tensor x) -> Tensor"), ValueError,
     "cannot define an operator inside"),
    (lambda: Library("pk_m", "DEF").define("f(Tensor x) -> Tensor", tags=(1,)), TypeError,
     "expected every tag to be a str, got int"),
    (lambda: Library("pk_m", "DEF").define("f(Tensor x -> Tensor"), ValueError, ""),
    (lambda: define("no_namespace", "(Tensor x) -> Tensor"), ValueError,
     "expected a qualified name 'namespace::name'"),
    (lambda: impl("pk_m::f", "tpu", lambda x: x), ValueError,
     "unknown device type or dispatch key 'tpu'"),
])
def test_library_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_destroyed_library_refuses_registrations():
    lib = Library("pk_n", "FRAGMENT")
    lib._destroy()
    with pytest.raises(RuntimeError, match="was destroyed"):
        lib.define("f(Tensor x) -> Tensor")
    assert "destroyed" in repr(lib)


# ---- Lifetime ----------------------------------------------------------------------


def test_rerunning_a_cell_replaces_the_registrations():
    # The same cell, run twice, with a changed kernel and schema.
    def cell(factor, schema):
        lib = Library("pk_nb", "DEF")
        lib.define(schema)
        lib.impl("f", lambda x, *rest: x * factor, "CPU")
        return lib

    lib = cell(2, "f(Tensor x) -> Tensor")
    assert turnout.ops.pk_nb.f(turnout.ones(1)).tolist() == [2.0]
    del lib
    gc.collect()
    assert "pk_nb::f" not in _ops_names()
    lib = cell(3, "f(Tensor x, int n=0) -> Tensor")
    assert turnout.ops.pk_nb.f(turnout.ones(1), 4).tolist() == [3.0]
    lib._destroy()
    assert "pk_nb::f" not in _ops_names()


def test_kernel_of_a_dropped_library_releases_its_callable():
    import weakref

    class Kernel:
        def __call__(self, x):
            return x

    k = Kernel()
    ref = weakref.ref(k)
    lib = Library("pk_o", "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", k, "CPU")
    del k
    assert ref() is not None  # the dispatcher holds it
    turnout.ops.pk_o.f(turnout.ones(1))
    lib._destroy()
    for _ in range(50):  # freed once no call can still be running it
        _C._reclaim_retired() if hasattr(_C, "_reclaim_retired") else None
        _C._release_pending_pyobjects()
        gc.collect()
        if ref() is None:
            break
        # Registration churn lets the dispatcher reclaim retired tables.
        with scoped_library("pk_o2", "FRAGMENT") as churn:
            churn.define("g(Tensor x) -> Tensor")
    assert ref() is None


def test_calls_from_threads_without_the_gil():
    with scoped_library("pk_p", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x + 1, "CPU")
        errors = []

        def worker():
            try:
                for _ in range(200):
                    assert turnout.ops.pk_p.f(turnout.zeros(1)).tolist() == [1.0]
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []


# ---- Module-level define / impl and custom_op --------------------------------------


def test_module_level_define_and_impl_decorator():
    lib = Library("pk_q", "FRAGMENT")
    assert define("pk_q::sq", "(Tensor x) -> Tensor", lib=lib) == "pk_q::sq"

    @impl("pk_q::sq", ["cpu", "meta"], lib=lib)
    def sq(x):
        return x * x

    assert turnout.ops.pk_q.sq(turnout.tensor([3.0])).tolist() == [9.0]
    assert _C._dispatch_has_kernel_for_dispatch_key("pk_q::sq", DispatchKey.Meta)
    lib._destroy()
    assert "pk_q::sq" not in _ops_names()


def test_infer_schema():
    def f(x: Tensor, ys: Sequence[Tensor], a: List[int], b: list[float],
          c: Optional[Tensor] = None, d: str = "hi", *, e: bool = True,
          g: Optional[turnout.dtype] = None) -> Tuple[Tensor, Tensor]:
        ...

    assert infer_schema(f) == (
        '(Tensor x, Tensor[] ys, int[] a, float[] b, Tensor? c=None, str d="hi", *, '
        'bool e=True, ScalarType? g=None) -> (Tensor, Tensor)')

    def m(x: Tensor, out: Tensor) -> None: ...
    assert infer_schema(m, mutates_args=["out"]) == "(Tensor x, Tensor(a!) out) -> ()"


@pytest.mark.parametrize("fn,mutates,match", [
    (lambda x: x, (), "parameter 'x' has no type annotation"),
    (lambda *xs: xs, (), r"\*args and \*\*kwargs"),
])
def test_infer_schema_errors(fn, mutates, match):
    with pytest.raises(TypeError, match=match):
        infer_schema(fn, mutates_args=mutates)


def test_infer_schema_errors_on_annotations():
    def bad_type(x: dict) -> Tensor: ...
    def no_return(x: Tensor): ...
    def mut_int(x: int) -> None: ...
    with pytest.raises(TypeError, match="cannot infer a schema type from the annotation"):
        infer_schema(bad_type)
    with pytest.raises(TypeError, match="the return type is not annotated"):
        infer_schema(no_return)
    with pytest.raises(TypeError, match="only Tensor parameters can be mutated"):
        infer_schema(mut_int, mutates_args=["x"])
    with pytest.raises(ValueError, match="not parameters"):
        infer_schema(no_return, mutates_args=["y"])
    with pytest.raises(TypeError, match="sequence of parameter names"):
        infer_schema(no_return, mutates_args="x")


def test_custom_op_end_to_end_with_register_fake_on_meta():
    @custom_op("pk_r::dup", mutates_args=())
    def dup(x: Tensor, times: int = 2) -> Tensor:
        return turnout.ops.aten.cat([x] * times)

    assert str(turnout.ops.pk_r.dup.default._schema) == "pk_r::dup(Tensor x, int times=2) -> Tensor"
    assert dup(turnout.tensor([1.0, 2.0])).tolist() == [1.0, 2.0, 1.0, 2.0]
    assert turnout.ops.pk_r.dup(turnout.tensor([1.0]), 3).tolist() == [1.0, 1.0, 1.0]

    fake_calls = []

    @dup.register_fake
    def _(x, times):
        fake_calls.append(times)
        return turnout.empty(x.shape[0] * times, device="meta")

    out = dup(turnout.empty(5, device="meta"), 3)
    assert str(out.device) == "meta" and out.shape == (15,)
    assert fake_calls == [3]

    @dup.register_kernel("cpu")
    def _(x, times):
        return x * 0 + times

    assert dup(turnout.ones(2)).tolist() == [2.0, 2.0]

    @dup.register_kernel("cpu")  # again: replaces, no stacking
    def _(x, times):
        return x * 0 - times

    assert dup(turnout.ones(1)).tolist() == [-2.0]
    dup._destroy()
    assert "pk_r::dup" not in _ops_names()


def test_custom_op_redefinition_replaces_the_previous_one():
    for k in (1, 2):
        @custom_op("pk_s::addk", mutates_args=())
        def addk(x: Tensor) -> Tensor:
            return x + k

        assert turnout.ops.pk_s.addk(turnout.zeros(1)).tolist() == [float(k)]
    addk._destroy()


def test_custom_op_with_mutated_argument_and_device_types():
    @custom_op("pk_t::fill_one", mutates_args=["out"], device_types="cpu")
    def fill_one(out: Tensor) -> None:
        out.fill_(1.0)

    assert str(turnout.ops.pk_t.fill_one.default._schema) == "pk_t::fill_one(Tensor(a!) out) -> ()"
    t = turnout.zeros(2)
    assert fill_one(t) is None
    assert t.tolist() == [1.0, 1.0]
    assert not _C._dispatch_has_kernel_for_dispatch_key("pk_t::fill_one", DispatchKey.Meta)
    fill_one._destroy()


def test_custom_op_register_autograd():
    @custom_op("pk_u::mul_scalar", mutates_args=())
    def mul_scalar(x: Tensor, y: Tensor, s: float) -> Tensor:
        return x * y * s

    def setup_context(ctx, inputs, output):
        x, y, s = inputs
        ctx.save_for_backward(x, y)
        ctx.s = s

    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        assert ctx.needs_input_grad == (True, False, False)
        return grad * y * ctx.s, None, None

    mul_scalar.register_autograd(backward, setup_context=setup_context)
    x = turnout.tensor([1.0, 2.0], requires_grad=True)
    y = turnout.tensor([3.0, 4.0])
    out = mul_scalar(x, y, 2.0)
    assert out.tolist() == [6.0, 16.0]
    assert out.grad_fn is not None and "MulScalarBackward" in out._grad_fn_name
    out.sum().backward()
    assert x.grad.tolist() == [6.0, 8.0]
    # Without grad mode no node is recorded.
    with turnout.no_grad():
        assert mul_scalar(x, y, 1.0).grad_fn is None
    mul_scalar._destroy()


def test_register_autograd_errors():
    @custom_op("pk_v::ident", mutates_args=())
    def ident(x: Tensor) -> Tensor:
        return x

    @custom_op("pk_v::twice", mutates_args=())
    def twice(x: Tensor) -> Tensor:
        return x * 2

    with pytest.raises(TypeError, match="expected backward to be callable"):
        twice.register_autograd(3)
    ident.register_autograd(lambda ctx, g: g)
    with pytest.raises(ValueError, match="returned one of its inputs"):
        ident(turnout.ones(1, requires_grad=True))
    twice.register_autograd(lambda ctx, g: (g, g))
    y = twice(turnout.ones(1, requires_grad=True))
    with pytest.raises(TypeError, match=r"returned 2 gradient\(s\) for its 1 argument"):
        y.sum().backward()

    class BackwardError(Exception):
        pass

    def raising_backward(ctx, g):
        raise BackwardError("backward failed")

    twice.register_autograd(raising_backward)
    y = twice(turnout.ones(1, requires_grad=True))
    with pytest.raises(BackwardError, match="backward failed"):
        y.sum().backward()
    ident._destroy()
    twice._destroy()


def test_kernels_alive_at_interpreter_shutdown_do_not_crash():
    script = ("""
        import threading, turnout
        from turnout.library import Library
        lib = Library("pk_exit", "DEF")
        lib.define("f(Tensor x) -> Tensor")
        # The kernel refers to its library: a cycle through C++ that lives
        # until the process ends.
        lib.impl("f", lambda x: (lib, x)[1] + 1, "CPU")
        assert turnout.ops.pk_exit.f(turnout.zeros(1)).tolist() == [1.0]
        # A thread without the GIL drops a kernel: queued, not decref'd there.
        other = Library("pk_exit2", "DEF")
        other.define("g(Tensor x) -> Tensor")
        other.impl("g", lambda x: x, "CPU")
        def call():
            for _ in range(100):
                turnout.ops.pk_exit.f(turnout.zeros(1))
        t = threading.Thread(target=call, daemon=True)
        t.start()
        del other
        print("done")
    """)
    run_script(script)
