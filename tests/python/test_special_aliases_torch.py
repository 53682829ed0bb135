"""polygamma, torch 1.13's alias operators, turnout.special and resize_as_
against torch 1.13 (issue 18).

- polygamma: values for n = 0..4 and more over ranges, negative
  non-integers, poles and infinities (torch's edge values), dtypes,
  errors, grad_fn names and saved values, first and second derivatives
  (digamma's and lgamma's too).
- The aliases (kernels/aliases.cc): each is an OpOverloadPacket of its own
  with torch's schemas, a CompositeImplicitAutograd kernel that calls its
  target (the grad_fn and what a dispatch mode sees are the target's), the
  functional names and Tensor methods torch has.
- turnout.special: the torch.special functions turnout computes.
- resize_as_: sizes, memory formats, errors, autograd refusal.
"""

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import turnout
from op_db import ALIASES
from turnout._mode import DispatchMode


def _tt(x: torch.Tensor, requires_grad: bool = False) -> turnout.Tensor:
    dtype = getattr(turnout, str(x.dtype).split(".")[-1])
    base = x.detach()
    if base.dtype == torch.bfloat16:
        t = turnout.tensor(base.float().numpy()).to(dtype)
    else:
        t = turnout.tensor(base.numpy(), dtype=dtype)
    return t.requires_grad_(requires_grad)


def _np(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        if t._is_zerotensor():  # torch's zero gradients: no memory to read
            return np.zeros(tuple(t.shape))
        t = t.detach()
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy()
    t = t.detach()
    if t.dtype == turnout.bfloat16:
        t = t.to(turnout.float32)
    return t.numpy()


def _close(a, b, rtol, atol=0.0):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, equal_nan=True)


# (rtol, atol): atol for the values next to digamma's zero (1.4616...).
_TOL = {torch.float64: (1e-12, 1e-13), torch.float32: (2e-6, 1e-5),
        torch.bfloat16: (1e-2, 1e-2)}

# ---- polygamma -------------------------------------------------------------------


@pytest.mark.parametrize("n", range(5))
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16])
def test_polygamma_values_over_a_range(n, dtype):
    x = torch.cat([torch.linspace(0.01, 30, 301, dtype=torch.float64),
                   torch.linspace(-4.95, -0.05, 50, dtype=torch.float64),
                   torch.tensor([1e-6, 0.5, 1.0, 1.5, 1e3, 1e6], dtype=torch.float64)])
    x = x.to(dtype)
    theirs = torch.polygamma(n, x)
    mine = turnout.polygamma(n, _tt(x))
    assert mine.dtype == _tt(theirs).dtype
    rtol, atol = _TOL[dtype]
    _close(mine, theirs, rtol=rtol, atol=atol)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 10, 25, 60, 170, 171, 200])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_polygamma_edges(n, dtype):
    inf, nan = float("inf"), float("nan")
    x = [0.0, -0.0, -1.0, -2.0, -3.0, 1.0, 2.0, inf, -inf, nan, 1e-8, -1e-8, -0.5,
         -2.5, 1e-30, 2e30]
    x = torch.tensor(x, dtype=dtype)
    theirs = torch.polygamma(n, x)
    mine = turnout.polygamma(n, _tt(x))
    rtol, atol = _TOL[dtype]
    _close(mine, theirs, rtol=rtol * 10, atol=atol)


def test_polygamma_promotes_integers_and_bools_to_float():
    for dtype in (torch.int64, torch.int32, torch.uint8, torch.bool):
        x = torch.tensor([1, 2, 3]).to(dtype)
        for n in range(3):
            theirs = torch.polygamma(n, x)
            mine = turnout.polygamma(n, _tt(x))
            assert mine.dtype == turnout.float32
            _close(mine, theirs, rtol=2e-6)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the message is what is compared
        return type(e), str(e)
    return None


@pytest.mark.parametrize("case", [
    lambda L, x: L.polygamma(-1, x),
    lambda L, x: L.polygamma(-3, x.to(L.int64)),
    lambda L, x: x.clone().polygamma_(-1),
    lambda L, x: L.polygamma(-1, x, out=L.empty(3)),
    lambda L, x: L.ops.aten.polygamma_(x.clone(), -2),
])
def test_polygamma_refuses_negative_n(case):
    theirs = _error(lambda: case(torch, torch.tensor([1.0, 2.0, 3.0])))
    mine = _error(lambda: case(turnout, turnout.tensor([1.0, 2.0, 3.0])))
    assert theirs is not None and mine is not None
    assert issubclass(mine[0], RuntimeError)
    assert mine[1] == theirs[1] == "polygamma(n, x) does not support negative n."


@pytest.mark.parametrize("n", [0, 1, 2])
def test_polygamma_half_refused_on_cpu_under_torchs_names(n):
    theirs = _error(lambda: torch.polygamma(n, torch.ones(2, dtype=torch.float16)))
    mine = _error(lambda: turnout.polygamma(n, turnout.ones(2, dtype=turnout.float16)))
    assert issubclass(mine[0], RuntimeError)
    assert mine[1] == theirs[1]
    # Meta computes no values: it accepts Half, as torch's.
    m = turnout.polygamma(n, turnout.empty(2, dtype=turnout.float16, device="meta"))
    assert m.dtype == turnout.float16 and m.device.type == "meta"


def test_polygamma_inplace_and_out():
    x = torch.tensor([0.3, 1.7, 4.0], dtype=torch.float64)
    t = _tt(x)
    r = t.polygamma_(2)
    assert r is t
    _close(t, x.clone().polygamma_(2), rtol=1e-12)
    out = turnout.empty(0, dtype=turnout.float64)
    r = turnout.polygamma(3, _tt(x), out=out)
    assert r is out
    _close(out, torch.polygamma(3, x), rtol=1e-12)
    # An integer self cannot hold the float result.
    theirs = _error(lambda: torch.tensor([1, 2]).polygamma_(1))
    mine = _error(lambda: turnout.tensor([1, 2]).polygamma_(1))
    assert mine is not None and mine[1] == theirs[1]
    # Tensor.polygamma(n): the tensor comes second in the operator.
    _close(_tt(x).polygamma(1), x.polygamma(1), rtol=1e-12)


def test_polygamma_schemas_are_torchs():
    for name in ("polygamma", "polygamma_"):
        mine = getattr(turnout.ops.aten, name)
        theirs = getattr(torch.ops.aten, name)
        assert sorted(mine.overloads()) == sorted(theirs.overloads())
        for o in theirs.overloads():
            assert str(getattr(mine, o)._schema) == str(getattr(theirs, o)._schema)


@pytest.mark.parametrize("fn,name", [
    (lambda L, x: L.polygamma(0, x), "PolygammaBackward0"),
    (lambda L, x: L.polygamma(3, x), "PolygammaBackward0"),
    (lambda L, x: x.clone().polygamma_(2), "PolygammaBackward1"),
    (lambda L, x: L.digamma(x), "DigammaBackward0"),
    (lambda L, x: x.clone().digamma_(), "DigammaBackward0"),
    (lambda L, x: L.lgamma(x), "LgammaBackward0"),
])
def test_grad_fn_names_are_torchs(fn, name):
    x = torch.tensor([0.5, 2.0], requires_grad=True)
    assert fn(torch, x).grad_fn.name() == name
    assert fn(turnout, _tt(x, True)).grad_fn.name() == name


def test_polygamma_node_saves_n_and_self():
    x = torch.tensor([0.5, 2.0], dtype=torch.float64, requires_grad=True)
    t = _tt(x, True)
    for n in (1, 3):
        theirs = torch.polygamma(n, x).grad_fn
        mine = turnout.polygamma(n, t).grad_fn
        assert mine._saved_n == theirs._saved_n == n
        _close(mine._saved_self, theirs._saved_self, rtol=0)
    # The in-place node saves self's value before the write.
    mine = t.clone().polygamma_(2).grad_fn
    assert mine._saved_n == 2
    _close(mine._saved_self, x, rtol=0)


def _derivatives(lib, fn, x, order):
    """d^k/dx^k sum(fn(x)) for k = 1..order, each taken with create_graph."""
    out = []
    y = fn(lib, x).sum()
    for _ in range(order):
        (g,) = lib.autograd.grad(y, [x], create_graph=True)
        out.append(g)
        y = g.sum()
    return out


@pytest.mark.parametrize("fn", [
    lambda L, x: L.polygamma(0, x), lambda L, x: L.polygamma(1, x),
    lambda L, x: L.polygamma(2, x), lambda L, x: L.polygamma(4, x),
    lambda L, x: L.digamma(x), lambda L, x: L.lgamma(x),
    lambda L, x: x.clone().polygamma_(1), lambda L, x: x.clone().digamma_(),
    lambda L, x: L.special.psi(x), lambda L, x: L.special.gammaln(x),
    lambda L, x: L.special.polygamma(2, x),
])
def test_first_second_and_third_derivatives_are_torchs(fn):
    x = torch.tensor([0.3, 1.0, 2.5, 7.0, -0.5, -2.25], dtype=torch.float64,
                     requires_grad=True)
    t = _tt(x, True)
    theirs = _derivatives(torch, fn, x, 3)
    mine = _derivatives(turnout, fn, t, 3)
    for a, b in zip(mine, theirs):
        _close(a, b, rtol=1e-10)
        assert a.grad_fn.name() == b.grad_fn.name()


# ---- The aliases ------------------------------------------------------------------

def _packets():
    return sorted({a.split("::")[1].split(".")[0] for a in ALIASES})


# Overloads torch 1.13 has whose target turnout lacks (not registered).
_NOT_DONE = {
    "divide_": {"Tensor_mode", "Scalar_mode"},  # div_.Tensor_mode, div_.Scalar_mode
    "clip_": {"Tensor"},                        # clamp_.Tensor
}


@pytest.mark.parametrize("name", _packets())
def test_alias_packets_are_torchs(name):
    mine = getattr(turnout.ops.aten, name)
    theirs = getattr(torch.ops.aten, name)
    assert set(mine.overloads()) == set(theirs.overloads()) - _NOT_DONE.get(name, set())
    for o in mine.overloads():
        qual = f"aten::{name}" + ("" if o == "default" else f".{o}")
        assert str(getattr(mine, o)._schema) == str(getattr(theirs, o)._schema), qual
        assert qual in ALIASES
        assert "CompositeImplicitAutograd[alias]" in turnout._C._dispatch_dump(qual)
        assert torch._C._dispatch_has_kernel_for_dispatch_key(qual, "CompositeImplicitAutograd")
        assert getattr(mine, o).tags == []


def test_an_alias_is_its_own_packet():
    a = turnout.ops.aten
    assert a.arccos is not a.acos and a.arccos.__name__ == "arccos"
    assert a.arccos.default is not a.acos.default
    assert str(a.arccos.default) == "aten.arccos.default"
    assert turnout.arccos is not turnout.acos
    assert turnout.arccos.__name__ == "arccos"
    # torch has the special_* names in torch.special only.
    assert not hasattr(torch, "special_psi")
    assert not hasattr(turnout, "special_psi")
    for name in ("arccos", "arccos_", "clip", "clip_", "fix", "fix_", "negative_",
                 "multiply", "true_divide", "greater", "less_equal", "polygamma",
                 "resize_as_", "absolute"):
        assert hasattr(torch, name) and hasattr(turnout, name), name
    for name in ("absolute_", "multiply_", "divide_", "subtract_", "polygamma_"):
        assert not hasattr(torch, name) and not hasattr(turnout, name), name


def _log_call(self, func, types, args=(), kwargs=None):
    self.calls.append(str(func))
    return func(*args, **(kwargs or {}))


def _log_init(self):
    super(type(self), self).__init__()
    self.calls = []


# One logging mode per library, with the same handler.
_TorchLog = type("_TorchLog", (TorchDispatchMode,),
                 {"__init__": _log_init, "__torch_dispatch__": _log_call})
_TurnoutLog = type("_TurnoutLog", (DispatchMode,),
                   {"__init__": _log_init, "__turnout_dispatch__": _log_call})


_CALLS = [
    lambda L, x: L.arccos(x / 4), lambda L, x: L.arctanh(x / 4),
    lambda L, x: L.fix(x), lambda L, x: x.clone().fix_(),
    lambda L, x: L.clip(x, -1, 1), lambda L, x: x.clone().clip_(max=0.5),
    lambda L, x: L.multiply(x, 2), lambda L, x: L.divide(x, x, rounding_mode="floor"),
    lambda L, x: L.true_divide(x, 2), lambda L, x: L.subtract(x, x, alpha=2),
    lambda L, x: L.greater(x, 0), lambda L, x: L.less_equal(x, x),
    lambda L, x: L.not_equal(x, 0), lambda L, x: L.absolute(x),
    lambda L, x: L.negative(x), lambda L, x: x.arcsinh(), lambda L, x: x.divide(3),
    lambda L, x: x.clone().multiply_(x), lambda L, x: x.clone().subtract_(1.5),
    lambda L, x: x.greater_equal(0), lambda L, x: x.less(0),
    lambda L, x: L.special.expit(x), lambda L, x: L.special.round(x, decimals=1),
    lambda L, x: L.special.log_softmax(x, 0), lambda L, x: L.special.softmax(x, 0),
    lambda L, x: L.special.logsumexp(x, 0), lambda L, x: L.special.erf(x),
    lambda L, x: L.special.erfc(x), lambda L, x: L.special.expm1(x),
    lambda L, x: L.special.log1p(x + 2), lambda L, x: L.special.digamma(x + 3),
    lambda L, x: L.special.polygamma(1, x + 3),
    lambda L, x: L.special.gammaln(x + 3), lambda L, x: L.special.psi(x + 3),
]


@pytest.mark.parametrize("i", range(len(_CALLS)))
def test_alias_values_and_what_a_mode_sees(i):
    call = _CALLS[i]
    x = torch.tensor([-1.5, 0.25, 2.0], dtype=torch.float64)
    theirs = call(torch, x)
    mine = call(turnout, _tt(x))
    _close(mine, theirs, rtol=1e-12)
    t = _tt(x)
    with _TorchLog() as tl:
        call(torch, x)
    with _TurnoutLog() as ml:
        call(turnout, t)
    # The alias decomposes above the mode: the target's call is seen.
    assert ml.calls == tl.calls


@pytest.mark.parametrize("i", range(len(_CALLS)))
def test_alias_gradients_are_the_targets(i):
    call = _CALLS[i]
    x = torch.tensor([-1.5, 0.25, 2.0], dtype=torch.float64, requires_grad=True)
    t = _tt(x, True)
    theirs, mine = call(torch, x), call(turnout, t)
    if not theirs.requires_grad:
        assert not mine.requires_grad
        return
    assert mine.grad_fn.name() == theirs.grad_fn.name()
    (gt,) = torch.autograd.grad(theirs.sum(), [x], create_graph=True)
    (gm,) = turnout.autograd.grad(mine.sum(), [t], create_graph=True)
    _close(gm, gt, rtol=1e-12, atol=1e-15)  # sum(softmax): rounding noise
    if gt.requires_grad:
        (g2t,) = torch.autograd.grad(gt.sum(), [x], allow_unused=True)
        (g2m,) = turnout.autograd.grad(gm.sum(), [t], allow_unused=True)
        if g2t is None:
            assert g2m is None or not np.any(_np(g2m))
        else:
            _close(g2m, g2t, rtol=1e-12, atol=1e-15)


def test_alias_errors_are_the_targets():
    # (the alias's call, its target's call): both raise on torch; on turnout
    # the alias raises exactly what its target raises.
    cases = [
        (lambda L: L.arccos(L.ones(2), out=L.empty(2, dtype=L.int64)),
         lambda L: L.acos(L.ones(2), out=L.empty(2, dtype=L.int64))),
        (lambda L: L.multiply(L.ones(2), L.ones(3)), lambda L: L.mul(L.ones(2), L.ones(3))),
        (lambda L: L.ones(2, dtype=L.int64).divide_(L.ones(2)),
         lambda L: L.ones(2, dtype=L.int64).div_(L.ones(2))),
        (lambda L: L.ones(2).clip(), lambda L: L.ones(2).clamp()),
        (lambda L: L.special.polygamma(-1, L.ones(2)), lambda L: L.polygamma(-1, L.ones(2))),
        (lambda L: L.special.round(L.ones(2, dtype=L.int64)),
         lambda L: L.round(L.ones(2, dtype=L.int64), decimals=0)),
        (lambda L: L.special.logsumexp(L.ones(2), 3), lambda L: L.logsumexp(L.ones(2), [3])),
    ]
    for alias, target in cases:
        assert _error(lambda: alias(torch)) is not None
        assert _error(lambda: target(torch)) is not None
        mine = _error(lambda: alias(turnout))
        assert mine is not None and mine == _error(lambda: target(turnout)), mine


def test_turnout_special_mirrors_torch_special():
    for name in turnout.special.__all__:
        assert hasattr(torch.special, name), name
    x = torch.tensor([[0.3, 1.7, 4.0], [2.5, 0.9, 6.0]], dtype=torch.float64)
    t = _tt(x)
    for name in ("digamma", "psi", "gammaln", "erf", "erfc", "expit", "expm1", "log1p"):
        _close(getattr(turnout.special, name)(t), getattr(torch.special, name)(x),
               rtol=1e-12)
        out = turnout.empty(0, dtype=turnout.float64)
        assert getattr(turnout.special, name)(t, out=out) is out
        _close(out, getattr(torch.special, name)(x), rtol=1e-12)
    _close(turnout.special.polygamma(2, t), torch.special.polygamma(2, x), rtol=1e-12)
    _close(turnout.special.round(t, decimals=0), torch.special.round(x), rtol=0)
    _close(turnout.special.logsumexp(t, [0, 1]), torch.special.logsumexp(x, [0, 1]),
           rtol=1e-12)
    _close(turnout.special.logsumexp(t, 1, keepdim=True),
           torch.special.logsumexp(x, 1, keepdim=True), rtol=1e-12)
    _close(turnout.special.softmax(t, 1, dtype=turnout.float32),
           torch.special.softmax(x, 1, dtype=torch.float32), rtol=1e-6)
    _close(turnout.special.log_softmax(t, 0), torch.special.log_softmax(x, 0),
           rtol=1e-12)


def test_alias_tensor_methods_are_torchs():
    for name in ("arccos", "arccos_", "arcsin", "arctan", "arccosh", "arcsinh_",
                 "arctanh", "absolute", "absolute_", "negative", "negative_",
                 "fix", "fix_", "multiply", "multiply_", "divide", "divide_",
                 "true_divide", "true_divide_", "subtract", "subtract_", "clip",
                 "clip_", "greater", "greater_equal", "less", "less_equal",
                 "not_equal", "polygamma", "polygamma_", "resize_as_"):
        assert hasattr(torch.Tensor, name)
        assert hasattr(turnout.Tensor, name), name
    x = turnout.tensor([0.5, -0.25])
    assert x.arccos_() is x


# ---- resize_as_ -------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    lambda L: L.zeros(2).resize_as_(L.zeros(2, 3)),
    lambda L: L.zeros(6).resize_as_(L.zeros(3)),
    lambda L: L.zeros(2, 3).resize_as_(L.zeros(2, 3)),
    lambda L: L.zeros(2).resize_as_(L.zeros(2, 3, dtype=L.int64)),
    lambda L: L.zeros(2).resize_as_(L.zeros(0, 3)),
    lambda L: L.zeros(2).resize_as_(L.zeros(3, 4).t()),
    lambda L: L.zeros(2).resize_as_(L.zeros(1, 2, 3, 4),
                                    memory_format=L.channels_last),
    lambda L: L.zeros(2).resize_as_(L.zeros(1, 2, 3, 4),
                                    memory_format=L.contiguous_format),
    lambda L: L.zeros(2).resize_as_(
        L.zeros(1, 2, 3, 4).to(memory_format=L.channels_last),
        memory_format=L.preserve_format),
    lambda L: L.zeros(2).resize_as_(L.zeros(1, 2, 3, 4), memory_format=L.preserve_format),
    lambda L: L.zeros(2).resize_as_(L.zeros(3, 4).t(), memory_format=L.preserve_format),
    lambda L: L.resize_as_(L.zeros(2), L.zeros(3, 1)),
    lambda L: L.ops.aten.resize_as_.default(L.zeros(5), L.zeros(2, 2)),
    lambda L: L.zeros(1, 2, 3, 4).to(memory_format=L.channels_last).resize_as_(
        L.zeros(1, 2, 3, 4)),
])
def test_resize_as_is_torchs(case):
    theirs = case(torch)
    mine = case(turnout)
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert tuple(mine.stride()) == tuple(theirs.stride())
    assert mine.dtype == getattr(turnout, str(theirs.dtype).split(".")[-1])


def test_resize_as_returns_self_and_keeps_storage():
    x = turnout.arange(6.0)
    y = x.resize_as_(turnout.zeros(2, 3))
    assert y is x
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


@pytest.mark.parametrize("case", [
    lambda L: L.zeros(2, requires_grad=True).resize_as_(L.zeros(3)),
    lambda L: L.zeros(2).resize_as_(L.zeros(1, 2, 3), memory_format=L.channels_last),
])
def test_resize_as_errors(case):
    theirs = _error(lambda: case(torch))
    mine = _error(lambda: case(turnout))
    assert theirs is not None
    assert mine is not None and issubclass(mine[0], RuntimeError)


def test_resize_as_leaves_a_refused_tensor_alone():
    x = turnout.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="resize_as_.*requires grad"):
        x.resize_as_(turnout.zeros(3))
    assert tuple(x.shape) == (2,) and x.grad_fn is None
    # A template that requires grad is only read: no history, no error.
    y = turnout.zeros(2).resize_as_(turnout.zeros(3, requires_grad=True))
    assert tuple(y.shape) == (3,) and not y.requires_grad


def test_resize_as_schema_and_kind_are_torchs():
    mine = turnout.ops.aten.resize_as_.default
    theirs = torch.ops.aten.resize_as_.default
    assert str(mine._schema) == str(theirs._schema)
    assert "CompositeExplicitAutograd" in turnout._C._dispatch_dump("aten::resize_as_")
    x = turnout.empty(2, device="meta")
    assert tuple(x.resize_as_(turnout.empty(3, 4, device="meta")).shape) == (3, 4)
