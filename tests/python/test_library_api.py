"""turnout.library's module-level registration API (torch 2.x's
torch.library): register_fake / impl_abstract, register_kernel,
register_autograd, register_torch_dispatch, get_ctx; the operator forms
they (and explain, the profiler) take; ownership by a Library; custom_op's
mutates_args="unknown" and tags; the __torch_dispatch__ warning; and
profile().key_averages() against torch 1.13's."""

import gc
import os
import warnings
from pathlib import Path

import pytest
import torch

import turnout
from turnout import Tensor
from turnout.library import (Library, custom_op, get_ctx, impl_abstract,
                             register_autograd, register_fake, register_kernel,
                             register_torch_dispatch, scoped_library)
from turnout.utils import DispatchMode

aten = turnout.ops.aten


def _names():
    return set(turnout._C._dispatch_get_all_op_names())


@pytest.fixture
def lib():
    lib = Library("apitest", "FRAGMENT")
    lib.define("twice(Tensor x) -> Tensor")
    lib.define("pair(Tensor x) -> Tensor")
    lib.define("pair.other(Tensor x, int n) -> Tensor")
    lib.impl("twice", lambda x: aten.cat([x, x]), "CPU")
    yield lib
    lib._destroy()


def test_all_names_are_exported():
    for name in ("register_fake", "impl_abstract", "register_autograd",
                 "register_kernel", "register_torch_dispatch", "get_ctx",
                 "infer_schema", "custom_op", "Library"):
        assert name in turnout.library.__all__
        assert hasattr(turnout.library, name)
    assert impl_abstract is register_fake


# ---- every form of op ------------------------------------------------------------


@pytest.mark.parametrize("form", ["str", "str_default", "overload", "packet"])
def test_register_fake_takes_every_form_of_op(lib, form):
    op = {"str": "apitest::twice", "str_default": "apitest::twice.default",
          "overload": turnout.ops.apitest.twice.default,
          "packet": turnout.ops.apitest.twice}[form]
    with scoped_library("apitest", "FRAGMENT") as owner:
        @register_fake(op, lib=owner)
        def _(x):
            return turnout.empty(2 * x.shape[0], device="meta")

        out = turnout.ops.apitest.twice(turnout.empty(3, device="meta"))
        assert out.shape == (6,) and out.device.type == "meta"
    # Gone with its owner.
    assert not turnout._C._dispatch_has_kernel_for_dispatch_key(
        "apitest::twice", turnout.DispatchKey.Meta)


def test_custom_op_form_goes_to_the_custom_op():
    @custom_op("apitest_c::neg", mutates_args=())
    def neg(x: Tensor) -> Tensor:
        return -x

    try:
        register_fake(neg)(lambda x: turnout.empty_like(x))
        assert neg(turnout.empty(2, device="meta")).device.type == "meta"
        # A custom op's register_* replace (torch 2.x's CustomOpDef).
        register_kernel(neg, "cpu", lambda x: x * 10)
        register_kernel("apitest_c::neg", "cpu", lambda x: x * 20)
        assert neg(turnout.ones(1)).tolist() == [20.0]
        register_autograd(neg, lambda ctx, g: -g)
        x = turnout.ones(2, requires_grad=True)
        neg(x).sum().backward()
        assert x.grad.tolist() == [-1.0, -1.0]
        # explain takes it (it raised TypeError before).
        e = turnout.debug.explain(neg, turnout.ones(1))
        assert e.op == "apitest_c::neg"
        assert e.entry.kind == "autograd kernel"
    finally:
        neg._destroy()


def test_a_packet_with_no_default_must_be_named(lib):
    lib.define("only.a(Tensor x) -> Tensor")
    lib.define("only.b(Tensor x) -> Tensor")
    with pytest.raises(ValueError, match="several overloads .*a, b.*none is the "
                       "default; name one, e.g. 'apitest::only.a'"):
        register_fake("apitest::only", lambda x: x)
    with pytest.raises(ValueError, match="no overload 'c'; its overloads are: a, b"):
        register_fake("apitest::only.c", lambda x: x)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: register_fake(42, lambda x: x), TypeError,
     r"register_fake\(op\): expected op to be an operator name .* got int"),
    (lambda: register_kernel(3.5, "cpu", lambda x: x), TypeError, "got float"),
    (lambda: register_autograd(None, lambda c, g: g), TypeError, "got NoneType"),
    (lambda: register_torch_dispatch(object(), DispatchMode, lambda *a: 0),
     TypeError, "got object"),
    (lambda: register_fake("apitest::no_such_op", lambda x: x), ValueError,
     "no operator named 'apitest::no_such_op' has a schema"),
    (lambda: register_fake("no_namespace", lambda x: x), ValueError,
     "expected a qualified operator name"),
    (lambda: register_kernel("apitest::twice", "tpu", lambda x: x), ValueError,
     "unknown device type or dispatch key 'tpu'"),
    (lambda: register_kernel("apitest::twice", ["cpu", 3], lambda x: x), TypeError,
     "expected device types or dispatch keys as str, got int"),
    (lambda: register_kernel("apitest::twice", "cpu", 5), TypeError,
     "expected fn to be callable, got int"),
    (lambda: register_fake("apitest::twice", "f"), TypeError,
     "expected fn to be callable, got str"),
    (lambda: register_autograd("apitest::twice", 1), TypeError,
     "expected backward to be callable, got int"),
    (lambda: register_autograd("apitest::twice", lambda c, g: g, setup_context=2),
     TypeError, "expected setup_context to be callable or None, got int"),
    (lambda: register_fake("apitest::twice", lambda x: x, lib="mylib"), TypeError,
     "expected lib to be a turnout.library.Library or None, got str"),
    (lambda: register_torch_dispatch("apitest::twice", int, lambda *a: 0),
     TypeError, "expected a DispatchMode subclass or a subclass of turnout.Tensor"),
    (lambda: register_fake("aten::relu", lambda x: x), RuntimeError,
     "aten::relu already has a Meta kernel"),
    (lambda: register_autograd("aten::add_.Tensor", lambda c, g: g), RuntimeError,
     "mutates or aliases its arguments"),
    (lambda: turnout.debug.explain(42), TypeError, "got int"),
    (lambda: turnout.debug.explain("aten::no_such_op"), ValueError,
     "no operator named 'aten::no_such_op'"),
])
def test_errors(lib, call, exc, match):
    before = _names()
    with pytest.raises(exc, match=match):
        call()
    assert _names() == before


def test_registering_twice_names_the_first_site(lib):
    with scoped_library("apitest", "FRAGMENT") as owner:
        register_kernel("apitest::pair", "cpu", lambda x: x + 1, lib=owner)
        with pytest.raises(RuntimeError, match=r"apitest::pair already has a kernel "
                           r"for CPU, registered at .*test_library_api.py:\d+; "
                           r"destroy the Library that owns it"):
            register_kernel("apitest::pair", "cpu", lambda x: x + 2, lib=owner)
        # Another device type is another registration.
        register_kernel("apitest::pair", "meta", lambda x: x, lib=owner)
        assert turnout.ops.apitest.pair(turnout.zeros(1)).tolist() == [1.0]
    # Once the owner is gone, registering again is fine.
    with scoped_library("apitest", "FRAGMENT") as owner:
        register_kernel("apitest::pair", "cpu", lambda x: x + 2, lib=owner)
        assert turnout.ops.apitest.pair(turnout.zeros(1)).tolist() == [2.0]


def test_dropping_the_owner_deregisters(lib):
    owner = Library("apitest", "FRAGMENT")
    register_kernel("apitest::pair.other", "cpu", lambda x, n: x + n, lib=owner)
    assert turnout.ops.apitest.pair.other(turnout.zeros(1), 3).tolist() == [3.0]
    del owner
    gc.collect()
    assert not turnout._C._dispatch_has_kernel_for_dispatch_key(
        "apitest::pair.other", turnout.DispatchKey.CPU)


def test_a_destroyed_library_refuses(lib):
    owner = Library("apitest", "FRAGMENT")
    owner._destroy()
    with pytest.raises(RuntimeError, match="was destroyed; make a new one"):
        register_kernel("apitest::pair", "cpu", lambda x: x, lib=owner)
    with pytest.raises(RuntimeError, match="was destroyed; make a new one"):
        register_torch_dispatch("apitest::pair", _Log, lambda *a: 0, lib=owner)
    assert "_turnout_dispatch_rules" not in _Log.__dict__
    assert not turnout._C._dispatch_has_kernel_for_dispatch_key(
        "apitest::pair", turnout.DispatchKey.CPU)


def test_decorator_forms(lib):
    with scoped_library("apitest", "FRAGMENT") as owner:
        @register_kernel("apitest::pair", ["cpu"], lib=owner)
        def k(x):
            return x * 3

        assert k(turnout.ones(1)).tolist() == [3.0]  # returns the function
        assert register_fake("apitest::pair", lib=owner)(
            lambda x: turnout.empty_like(x)) is not None
        assert turnout.ops.apitest.pair(turnout.ones(2)).tolist() == [3.0, 3.0]
        assert turnout.ops.apitest.pair(
            turnout.empty(2, device="meta")).device.type == "meta"


def test_register_kernel_default_is_every_device(lib):
    with scoped_library("apitest", "FRAGMENT") as owner:
        register_kernel("apitest::pair", None, lambda x: x - 1, lib=owner)
        assert turnout._C._dispatch_has_kernel_for_dispatch_key(
            "apitest::pair", turnout.DispatchKey.CompositeExplicitAutograd)
        assert turnout.ops.apitest.pair(turnout.zeros(1)).tolist() == [-1.0]


def test_without_lib_the_registration_lasts(lib):
    lib.define("kept(Tensor x) -> Tensor")
    register_kernel("apitest::kept", "cpu", lambda x: x + 5)
    gc.collect()
    assert turnout.ops.apitest.kept(turnout.zeros(1)).tolist() == [5.0]
    with pytest.raises(RuntimeError, match="lasts for the process: pass lib="):
        register_kernel("apitest::kept", "cpu", lambda x: x)


def test_register_fake_refuses_composite_implicit(lib):
    lib.define("comp(Tensor x) -> Tensor")
    lib.impl("comp", lambda x: x + x, "CompositeImplicitAutograd")
    with pytest.raises(RuntimeError, match="CompositeImplicitAutograd kernel"):
        register_fake("apitest::comp", lambda x: x)


# ---- get_ctx ---------------------------------------------------------------------


def test_get_ctx_gives_data_dependent_sizes(lib):
    lib.define("positive(Tensor x) -> Tensor")
    lib.impl("positive", lambda x: turnout.tensor([v for v in x.tolist() if v > 0]),
             "CPU")
    seen = []
    with scoped_library("apitest", "FRAGMENT") as owner:
        @register_fake("apitest::positive", lib=owner)
        def _(x):
            ctx = get_ctx()
            n = ctx.new_dynamic_size(max=x.numel())
            seen.append((ctx, n))
            return turnout.empty(n, device="meta")

        assert turnout.ops.apitest.positive(
            turnout.tensor([1.0, -1.0, 2.0])).tolist() == [1.0, 2.0]
        out = turnout.ops.apitest.positive(turnout.empty(5, device="meta"))
        assert out.shape == (2,)
        ctx, n = seen[-1]
        assert isinstance(n, int) and (n.min, n.max) == (0, 5)
        assert ctx.dynamic_sizes == [n]
        assert ctx.new_dynamic_size(min=7).__int__() == 7
        assert ctx.new_dynamic_size(min=0, max=1) == 1
        with pytest.raises(ValueError, match="min must be >= 0"):
            ctx.new_dynamic_size(min=-1)
        with pytest.raises(ValueError, match=r"max \(1\) is below min \(3\)"):
            ctx.new_dynamic_size(min=3, max=1)
        with pytest.raises(TypeError, match="expected max to be an int, got float"):
            ctx.new_dynamic_size(max=2.5)


def test_get_ctx_outside_a_fake_kernel():
    with pytest.raises(RuntimeError, match="no fake kernel is running"):
        get_ctx()


def test_get_ctx_in_a_custom_op_fake_kernel():
    @custom_op("apitest_c::nz", mutates_args=())
    def nz(x: Tensor) -> Tensor:
        return turnout.tensor([v for v in x.tolist() if v != 0])

    try:
        @nz.register_fake
        def _(x):
            return turnout.empty(get_ctx().new_dynamic_size(), device="meta")

        assert nz(turnout.empty(4, device="meta")).shape == (2,)
    finally:
        nz._destroy()


# ---- register_autograd on operators defined elsewhere ----------------------------


def _backward_twice(ctx, grad):
    return grad[: grad.shape[0] // 2] + grad[grad.shape[0] // 2:]


def test_register_autograd_on_a_library_define(lib):
    with scoped_library("apitest", "FRAGMENT") as owner:
        register_autograd("apitest::twice", _backward_twice, lib=owner)
        x = turnout.tensor([1.0, 2.0], requires_grad=True)
        y = turnout.ops.apitest.twice(x)
        (y * turnout.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        assert x.grad.tolist() == [4.0, 6.0]
    assert not turnout._C._dispatch_has_kernel_for_dispatch_key(
        "apitest::twice", turnout.DispatchKey.Autograd)


def test_register_autograd_with_setup_context(lib):
    lib.define("sq(Tensor x) -> Tensor")
    lib.impl("sq", lambda x: x * x, "CPU")

    def setup(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad

    with scoped_library("apitest", "FRAGMENT") as owner:
        register_autograd(turnout.ops.apitest.sq.default, backward,
                          setup_context=setup, lib=owner)
        x = turnout.tensor([3.0], requires_grad=True)
        turnout.ops.apitest.sq(x).sum().backward()
        assert x.grad.tolist() == [6.0]
        with pytest.raises(RuntimeError, match="already has a backward"):
            register_autograd("apitest::sq", backward, lib=owner)


def test_register_autograd_wrong_gradient_count(lib):
    with scoped_library("apitest", "FRAGMENT") as owner:
        register_autograd("apitest::twice", lambda ctx, g: (g, g), lib=owner)
        x = turnout.ones(1, requires_grad=True)
        with pytest.raises(TypeError, match="returned 2 gradient"):
            turnout.ops.apitest.twice(x).sum().backward()


def test_register_autograd_on_a_cpp_operator():
    path = (Path(os.environ["TEST_SRCDIR"]) / os.environ["TEST_WORKSPACE"]
            / "tests" / "python" / "load_library" / "libgood_ops.so")
    turnout.ops.load_library(path)
    twice = turnout.ops.loadtest.twice
    assert not turnout._C._dispatch_has_kernel_for_dispatch_key(
        "loadtest::twice", turnout.DispatchKey.Autograd)
    with scoped_library("loadtest", "FRAGMENT") as owner:
        # 3 * g, not twice's true 2 * g: shows which backward ran.
        register_autograd("loadtest::twice", lambda ctx, g: 3 * g, lib=owner)
        x = turnout.tensor([1.0, 2.0], requires_grad=True)
        twice(x).sum().backward()
        assert x.grad.tolist() == [3.0, 3.0]
    assert not turnout._C._dispatch_has_kernel_for_dispatch_key(
        "loadtest::twice", turnout.DispatchKey.Autograd)
    x = turnout.tensor([1.0, 2.0], requires_grad=True)
    twice(x).sum().backward()  # through the kernel's own aten::add
    assert x.grad.tolist() == [2.0, 2.0]


def test_register_autograd_overrides_an_aten_backward_while_it_lives():
    calls = []

    def backward(ctx, grad):
        calls.append(1)
        return grad * 0, None

    with scoped_library("aten", "FRAGMENT") as owner:
        register_autograd("aten::neg", lambda ctx, g: -g * 100, lib=owner)
        x = turnout.ones(1, requires_grad=True)
        aten.neg(x).sum().backward()
        assert x.grad.tolist() == [-100.0]
    x = turnout.ones(1, requires_grad=True)
    aten.neg(x).sum().backward()
    assert x.grad.tolist() == [-1.0]


# ---- register_torch_dispatch -----------------------------------------------------


class _Log(DispatchMode):
    def __init__(self):
        self.seen = []

    def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(func.name())
        return func(*args, **(kwargs or {}))


def test_register_torch_dispatch_on_a_mode():
    class Mode(_Log):
        pass

    with scoped_library("_", "IMPL") as owner:
        @register_torch_dispatch("aten::mul.Tensor", Mode, lib=owner)
        def rule(mode, func, types, args, kwargs):
            assert isinstance(mode, Mode) and func is aten.mul.Tensor
            assert turnout.utils.active_modes() == []  # popped, as the handler
            return func(*args, **kwargs) + 100

        a = turnout.ones(1)
        with Mode() as m:
            out = a * a + 1
        assert out.tolist() == [102.0]
        assert m.seen == ["aten::add.Tensor"]  # mul went to the rule
        with pytest.raises(RuntimeError, match="already has a rule for"):
            register_torch_dispatch("aten::mul.Tensor", Mode, rule, lib=owner)

        class Sub(Mode):  # the rule is for exactly Mode
            pass

        with Sub() as s:
            out = a * a
        assert out.tolist() == [1.0] and s.seen == ["aten::mul.Tensor"]
    with Mode() as m:
        out = a * a
    assert out.tolist() == [1.0] and m.seen == ["aten::mul.Tensor"]


class _Wrapped(turnout.Tensor):
    @classmethod
    def __turnout_dispatch__(cls, func, types, args=(), kwargs=None):
        with turnout.utils.no_dispatch():
            return func(*args, **(kwargs or {}))


def test_register_torch_dispatch_on_a_subclass():
    t = _Wrapped._make_subclass(_Wrapped, turnout.tensor([1.0, 2.0]))
    with scoped_library("_", "IMPL") as owner:
        seen = []

        def rule(cls, func, types, args, kwargs):
            seen.append((cls, func.name(), types))
            return turnout.zeros(2)

        assert register_torch_dispatch(aten.add.Tensor, _Wrapped, rule,
                                       lib=owner) is rule
        assert (t + t).tolist() == [0.0, 0.0]
        assert seen == [(_Wrapped, "aten::add.Tensor", (_Wrapped,))]
        assert (t * t).tolist() == [1.0, 4.0]  # other ops: the handler
    assert (t + t).tolist() == [2.0, 4.0]


# ---- custom_op: mutates_args="unknown", tags -------------------------------------


def test_custom_op_mutates_args_unknown():
    @custom_op("apitest_c::scale_", mutates_args="unknown")
    def scale_(x: Tensor, ys: list[Tensor], s: float) -> None:
        x.mul_(s)

    try:
        schema = turnout.ops.apitest_c.scale_.default._schema
        assert str(schema) == ("apitest_c::scale_(Tensor(a!) x, Tensor(b!)[] ys, "
                               "float s) -> ()")
        assert schema.is_mutable
        x = turnout.ones(2)
        scale_(x, [], 3.0)
        assert x.tolist() == [3.0, 3.0]
    finally:
        scale_._destroy()
    with pytest.raises(TypeError, match='names or "unknown", got the str \'x\''):
        custom_op("apitest_c::bad", lambda x: x, mutates_args="x")

    def f(x: Tensor, n: int) -> Tensor: ...
    assert turnout.library.infer_schema(f, mutates_args="unknown") == (
        "(Tensor(a!) x, int n) -> Tensor")


def test_custom_op_tags():
    @custom_op("apitest_c::tagged", mutates_args=(), tags=("pointwise", "core"))
    def tagged(x: Tensor) -> Tensor:
        return x + 1

    try:
        assert turnout.ops.apitest_c.tagged.default.tags == ["pointwise", "core"]
    finally:
        tagged._destroy()
    with pytest.raises(TypeError, match="expected every tag to"):
        custom_op("apitest_c::tagged2", lambda x: x, schema="(Tensor x) -> Tensor",
                  tags=(1,))
    assert "apitest_c::tagged2" not in _names()


# ---- __torch_dispatch__ without __turnout_dispatch__ -----------------------------


def test_torch_dispatch_only_mode_warns_once():
    with pytest.warns(UserWarning, match="TorchStyle defines __torch_dispatch__ but "
                      "not __turnout_dispatch__.*Define __turnout_dispatch__"):
        class TorchStyle(DispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TorchStyle()  # no warning per instance or use
        with TorchStyle():
            turnout.ones(1) + 1

        class Both(DispatchMode):  # defines both: no warning
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
            __turnout_dispatch__ = __torch_dispatch__


def test_torch_dispatch_only_subclass_warns():
    with pytest.warns(UserWarning, match="TorchSub defines __torch_dispatch__ .*"
                      "tensor subclass's handler would never run"):
        class TorchSub(turnout.Tensor):
            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
    with pytest.raises(TypeError, match="it defines __torch_dispatch__, which turnout "
                       "never calls: define __turnout_dispatch__"):
        TorchSub._make_wrapper_subclass(TorchSub, [2])


def test_pushing_a_torch_style_object_says_what_to_define():
    class NotAMode:
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return None

    with pytest.raises(TypeError, match="it defines __torch_dispatch__"):
        turnout._C._push_dispatch_mode(NotAMode())
    assert turnout.utils.active_modes() == []


# ---- the profiler ----------------------------------------------------------------


def _torch_table_shape(text):
    lines = text.rstrip("\n").split("\n")
    header = [c for c in lines[1].split("  ") if c.strip()]
    return ([c.strip() for c in header], lines[0] == lines[2] == lines[-2],
            lines[-1].split(":")[0])


def test_key_averages_as_torch():
    x = turnout.ones(3, requires_grad=True)
    with turnout.profiler.profile() as prof:
        y = (x * x).sum()
        y.backward()
        x * x
    tx = torch.ones(3, requires_grad=True)
    with torch.profiler.profile() as tprof:
        ty = (tx * tx).sum()
        ty.backward()
        tx * tx
    ka, tka = prof.key_averages(), tprof.key_averages()
    mine = {e.key: e for e in ka}
    theirs = {e.key: e for e in tka}
    # The same operator names and call counts, for the operators both ran.
    for name in ("aten::mul", "aten::sum"):
        assert mine[name].count == theirs[name].count, name
    e = mine["aten::mul"]
    # Sums of the same times in another order: equal up to rounding.
    assert 0 < e.self_cpu_time_total <= e.cpu_time_total * (1 + 1e-9)
    assert e.cpu_time == pytest.approx(e.cpu_time_total / e.count)
    # The same table shape: columns, rules, the total line.
    table = ka.table(sort_by="cpu_time_total", row_limit=3)
    assert _torch_table_shape(table) == _torch_table_shape(
        tka.table(sort_by="cpu_time_total", row_limit=3))
    assert len(table.rstrip("\n").split("\n")) == 3 + 3 + 2
    rows = [line.split()[0] for line in table.split("\n")[3:6]]
    by_total = sorted(ka, key=lambda r: r.cpu_time_total, reverse=True)[:3]
    assert rows == [r.key for r in by_total]
    assert ka.self_cpu_time_total == pytest.approx(
        sum(r.self_cpu_time_total for r in ka))


def test_key_averages_filters_and_errors():
    x = turnout.ones(3)
    with turnout.profiler.profile() as prof:
        x * x
        x + x
    assert [e.key for e in prof.key_averages(op="aten::mul")] == ["aten::mul"]
    assert [e.key for e in prof.key_averages(op=aten.add.Tensor)] == ["aten::add"]
    assert {s["name"] for s in prof.stats(op=aten.mul)} == {"aten::mul.Tensor"}
    assert {e["name"] for e in prof.events(op="aten::add.Tensor")} == {
        "aten::add.Tensor"}
    with pytest.raises(ValueError, match="unknown column"):
        prof.key_averages().table(sort_by="bogus")
    with pytest.raises(TypeError, match="expected an int, got str"):
        prof.key_averages().table(row_limit="3")
    with pytest.raises(TypeError, match=r"profile.stats\(op=...\): expected op"):
        prof.stats(op=12)
    with pytest.raises(ValueError, match="no operator named 'aten::nope'"):
        prof.key_averages(op="aten::nope")


def test_profiler_filter_takes_a_custom_op():
    @custom_op("apitest_c::inc", mutates_args=())
    def inc(x: Tensor) -> Tensor:
        return x + 1

    try:
        with turnout.profiler.profile() as prof:
            inc(turnout.ones(1))
        assert [e.key for e in prof.key_averages(op=inc)] == ["apitest_c::inc"]
    finally:
        inc._destroy()
