"""The operators kernels are written with (issue 18: kernels/pointwise_ternary.cc,
kernels/select_ops.cc) through the Python API, against torch 1.13: Tensor
methods and turnout.<op> functions, in-place identity, Meta results,
errors and their messages, warnings, and what a dispatch mode sees. Values
and gradients over many inputs: tests/python/op_db.py's samples."""

import warnings

import numpy as np
import pytest
import torch

import turnout
from turnout._mode import DispatchMode
from torch.utils._python_dispatch import TorchDispatchMode


def arg(lib, a, dtype="float32"):
    t = lib.from_numpy(np.array(a, dtype=dtype))
    return t.clone()


def values(t):
    if isinstance(t, (bool, int, float)):
        return t
    return (str(t.dtype).split(".")[-1], tuple(t.shape), tuple(t.stride()),
            np.asarray(t.detach().numpy()).tolist())


X = [[1.0, -2.0, 3.0, 0.5], [4.0, 5.0, -6.0, 2.0], [7.0, 8.5, 9.0, -1.0]]
Y = [[0.5, 2.0, -1.0, 3.0], [1.0, -0.5, 2.0, 4.0], [3.0, 1.5, 0.25, 2.0]]
M = [[True, False, True, True], [False, False, True, False],
     [True, True, False, True]]

METHOD_CASES = {
    "tril": lambda L, x, y: x.tril(),
    "tril diagonal": lambda L, x, y: x.tril(1),
    "triu": lambda L, x, y: x.triu(-1),
    "tril_ identity": lambda L, x, y: x.tril_(-1) is x,
    "triu_": lambda L, x, y: (x.triu_(), x)[1],
    "roll": lambda L, x, y: x.roll(1, 0),
    "roll dims": lambda L, x, y: x.roll((1, -1), (0, 1)),
    "roll flat": lambda L, x, y: x.roll(5),
    "addcmul": lambda L, x, y: x.addcmul(y, y, value=0.5),
    "addcmul_ identity": lambda L, x, y: x.addcmul_(y, x, value=2) is x,
    "addcmul_": lambda L, x, y: (x.addcmul_(y, x, value=2), x)[1],
    "addcdiv": lambda L, x, y: x.addcdiv(x, y, value=-1),
    "addcdiv_": lambda L, x, y: (x.addcdiv_(x, y), x)[1],
    "lerp": lambda L, x, y: x.lerp(y, 0.25),
    "lerp tensor": lambda L, x, y: x.lerp(y, y / 4),
    "lerp_": lambda L, x, y: (x.lerp_(y, 0.75), x)[1],
    "masked_select": lambda L, x, y: x.masked_select(x > 1),
    "masked_select broadcast": lambda L, x, y: x.masked_select(
        L.tensor([True, False, False, True])),
    "equal": lambda L, x, y: x.equal(x.clone()),
    "equal other": lambda L, x, y: x.equal(y),
    "functional tril": lambda L, x, y: L.tril(x, -1),
    "functional triu": lambda L, x, y: L.triu(x, 2),
    "functional roll": lambda L, x, y: L.roll(x, [2], [1]),
    "functional addcmul": lambda L, x, y: L.addcmul(x, x, y, value=3),
    "functional addcdiv": lambda L, x, y: L.addcdiv(x, x, y),
    "functional lerp": lambda L, x, y: L.lerp(x, y, 0.5),
    "functional masked_select": lambda L, x, y: L.masked_select(
        x, arg(L, M, "bool")),
    "functional equal": lambda L, x, y: L.equal(x, x),
    "functional out": lambda L, x, y: L.addcmul(x, x, y, out=L.empty(0)),
    "lerp out": lambda L, x, y: L.lerp(x, y, y, out=L.empty(3, 4)),
    "tril out": lambda L, x, y: L.tril(x, out=L.empty(0)),
    # torch.roll has no out= (torch 1.13's Python binding hides roll.out).
    "roll out": lambda L, x, y: L.ops.aten.roll.out(x, [1], [1], out=L.empty(0)),
    "masked_select out": lambda L, x, y: L.masked_select(
        x, x < 0, out=L.empty(0)),
}


@pytest.mark.parametrize("name", list(METHOD_CASES))
def test_methods_and_functions_as_torchs(name):
    results = []
    for lib in (torch, turnout):
        x, y = arg(lib, X), arg(lib, Y)
        results.append(values(METHOD_CASES[name](lib, x, y)))
    assert results[1] == results[0]


META_CASES = {
    "tril": lambda L, x, y: L.tril(x.t(), 1),
    "triu_": lambda L, x, y: x.triu_(),
    "roll": lambda L, x, y: L.roll(x.t(), 1, 0),
    "addcmul": lambda L, x, y: L.addcmul(x.t(), y.t(), y.t()[0]),
    "addcdiv": lambda L, x, y: L.addcdiv(x, y, y.double()),
    "lerp": lambda L, x, y: L.lerp(x, y[0], 0.5),
    "lerp tensor": lambda L, x, y: L.lerp(x.t(), y.t(), y.t()[0]),
    "lerp out": lambda L, x, y: L.lerp(x, y, 0.5, out=L.empty(0, device="meta")),
}


def _meta(lib, rows):
    return lib.from_numpy(np.array(rows, dtype=np.float32)).to("meta")


@pytest.mark.parametrize("name", list(META_CASES))
def test_meta_results_as_torchs(name):
    shapes = []
    for lib in (torch, turnout):
        r = META_CASES[name](lib, _meta(lib, X), _meta(lib, Y))
        shapes.append((str(r.dtype).split(".")[-1], tuple(r.shape),
                       tuple(r.stride()), r.device.type))
    assert shapes[1] == shapes[0]


@pytest.mark.parametrize("op", ["masked_select", "equal"])
def test_no_meta_kernel_as_torch(op):
    # torch 1.13 has no Meta kernel for either: a result that depends on the
    # values cannot be computed without them.
    for lib in (torch, turnout):
        x = _meta(lib, X)
        other = x > 0 if op == "masked_select" else x
        with pytest.raises(NotImplementedError, match="Meta"):
            getattr(lib, op)(x, other)


ERRORS = {
    # what, call, a phrase both messages hold
    "tril of a vector": (lambda L: L.tril(L.ones(3)), "Dimension out of range"),
    "triu of a 0-dim": (lambda L: L.triu(L.ones(())), "no dimensions"),
    "masked_select shapes": (
        lambda L: L.masked_select(L.ones(3, 4), L.ones(2, 4, dtype=L.bool)),
        "must match the size"),
    "masked_select mask dtype": (
        lambda L: L.masked_select(L.ones(3), L.ones(3)),
        "expected BoolTensor or ByteTensor for mask"),
    "masked_select out dtype": (
        lambda L: L.masked_select(L.ones(3), L.ones(3, dtype=L.bool),
                                  out=L.empty(3, dtype=L.float64)),
        "self and result must have the same scalar type"),
    "lerp end dtype": (
        lambda L: L.lerp(L.ones(3), L.ones(3, dtype=L.float64), 0.5),
        "expected dtype float for `end` but got dtype double"),
    "lerp weight dtype": (
        lambda L: L.lerp(L.ones(3), L.ones(3), L.ones(3, dtype=L.float64)),
        "expected dtype float for `weight` but got dtype double"),
    "lerp of integers": (
        lambda L: L.lerp(L.ones(3, dtype=L.int64), L.ones(3, dtype=L.int64), 0.5),
        "\"lerp_kernel_scalar\" not implemented for 'Long'"),
    "lerp.Tensor_out dtype": (
        lambda L: L.lerp(L.ones(3), L.ones(3), L.ones(3),
                         out=L.empty(3, dtype=L.float64)),
        "Found dtype Double but expected Float"),
    "addcdiv of integers": (
        lambda L: L.addcdiv(L.ones(3), L.ones(3, dtype=L.int64),
                            L.ones(3, dtype=L.int64)),
        "Integer division with addcdiv is no longer supported"),
    "addcmul of Bool": (
        lambda L: L.addcmul(*[L.ones(3, dtype=L.bool)] * 3),
        "\"addcmul_cpu_out\" not implemented for 'Bool'"),
    "addcmul_ into int": (
        lambda L: L.ones(3, dtype=L.int64).addcmul_(L.ones(3), L.ones(3)),
        "result type Float can't be cast to the desired output type Long"),
    "addcmul_ shapes": (
        lambda L: L.ones(3).addcmul_(L.ones(2, 3), L.ones(3)),
        "doesn't match the broadcast shape"),
    "roll without shifts": (lambda L: L.roll(L.ones(2, 3), [], []),
                            "`shifts` required"),
    "roll shifts and dims": (
        lambda L: L.roll(L.ones(2, 3), [1, 2], [0]),
        "shifts and dimensions must align. shifts: 2, dims:1"),
    "roll dim": (lambda L: L.roll(L.ones(2, 3), 1, 2), "Dimension out of range"),
    "tril out dtype": (
        lambda L: L.tril(L.ones(3, 3), out=L.empty(3, 3, dtype=L.int64)),
        "Expected out tensor to have dtype float, but got long int instead"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_torchs(name):
    call, phrase = ERRORS[name]
    for lib in (torch, turnout):
        with pytest.raises(Exception) as info:
            call(lib)
        assert isinstance(info.value, (RuntimeError, IndexError, TypeError)), (
            lib.__name__, info.value)
        assert phrase in str(info.value), (lib.__name__, str(info.value))


def test_a_wider_inplace_result_is_refused_clearly():
    # torch 1.13 fails an internal assert computing addcmul_ into self of
    # a narrower floating dtype than the promoted one; turnout says why.
    with pytest.raises(RuntimeError):
        torch.ones(3).addcmul_(torch.ones(3, dtype=torch.float64), torch.ones(3))
    x = turnout.ones(3)
    with pytest.raises(RuntimeError, match="has dtype Double but self has dtype "
                                           "Float"):
        x.addcmul_(turnout.ones(3, dtype=turnout.float64), turnout.ones(3))
    assert x.tolist() == [1.0, 1.0, 1.0]  # nothing written


def test_uint8_mask_warns_as_torch():
    for lib in (torch, turnout):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = lib.masked_select(lib.arange(4.0),
                                  lib.tensor([1, 0, 1, 1], dtype=lib.uint8))
        assert r.tolist() == [0.0, 2.0, 3.0]
        assert any("uint8" in str(w.message) and "deprecated" in str(w.message)
                   for w in caught), lib.__name__


def _logged(lib, fn):
    log = []
    base = TorchDispatchMode if lib is torch else DispatchMode
    hook = "__torch_dispatch__" if lib is torch else "__turnout_dispatch__"

    def handler(self, func, types, args=(), kwargs=None):
        log.append(str(func).replace("aten.", ""))
        return func(*args, **(kwargs or {}))

    mode = type("Log", (base,), {hook: handler})()
    x, y = arg(lib, X), arg(lib, Y)
    with mode:
        fn(lib, x, y)
    return log


@pytest.mark.parametrize("name", ["addcmul", "addcdiv_", "lerp tensor", "tril",
                                  "roll dims", "masked_select", "equal",
                                  "roll out"])
def test_a_mode_sees_what_torchs_sees(name):
    # Explicit kernels in both (not CompositeImplicitAutograd): the mode
    # sees the operator itself, as in torch 1.13.
    fn = METHOD_CASES[name]
    theirs = _logged(torch, fn)
    ours = _logged(turnout, fn)
    assert ours == theirs


def test_gradients_through_an_optimizer_step():
    # The Adam-like update kernel writers compose from these operators.
    results = []
    for lib in (torch, turnout):
        p = arg(lib, X).requires_grad_()
        m = arg(lib, Y)
        v = arg(lib, Y).abs() + 0.1
        g = p * 2.0
        step = lib.addcdiv(p, m.lerp(g, 0.1), v.addcmul(g, g, value=0.001).sqrt(),
                           value=-0.01)
        loss = step.tril().roll(1, 0).masked_select(step > 0).sum()
        loss.backward()
        results.append(np.asarray(p.grad.numpy()).round(5).tolist())
    assert results[1] == results[0]


ROUNDING = {
    "addcmul": lambda L, a, b, c: L.addcmul(a, b, c, value=0.3),
    "addcmul_": lambda L, a, b, c: a.clone().addcmul_(b, c, value=-1.3),
    "addcdiv": lambda L, a, b, c: L.addcdiv(a, b, c.abs() + 0.5, value=-0.7),
    "lerp": lambda L, a, b, c: L.lerp(a, b, 0.3),
    "lerp negative weight": lambda L, a, b, c: L.lerp(a, b, -0.8),
    "lerp large weight": lambda L, a, b, c: L.lerp(a, b, 0.8),
    "lerp tensor": lambda L, a, b, c: L.lerp(a, b, c),
    "lerp_ tensor": lambda L, a, b, c: a.clone().lerp_(b, c),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("name", list(ROUNDING))
def test_rounding_is_torchs_to_the_bit(name, dtype):
    # torch 1.13's CPU kernels fuse addcmul's and lerp's last multiply-add
    # and choose lerp's form by w < 0.5; turnout's give the same bits (1003
    # elements: the vectorised body and a tail).
    rng = np.random.default_rng(7)
    data = [rng.uniform(-3, 3, (1003,)).astype(np.float32) for _ in range(3)]
    results = []
    for lib in (torch, turnout):
        args = [lib.from_numpy(d).to(getattr(lib, dtype)) for d in data]
        r = ROUNDING[name](lib, *args)
        results.append(np.asarray(r.double().numpy()))
    np.testing.assert_array_equal(results[1], results[0])


SECOND_ORDER = {
    "addcmul": lambda L, a, b, c: L.addcmul(a * a, b, c, value=0.3) * b,
    "addcdiv": lambda L, a, b, c: L.addcdiv(a, b, c, value=0.7) * a,
    "addcdiv_": lambda L, a, b, c: (a * 1).addcdiv_(b * a, c) * b,
    "lerp": lambda L, a, b, c: L.lerp(a * b, b, 0.3) * a,
    "lerp tensor": lambda L, a, b, c: L.lerp(a, b, c) * c,
    "lerp_ tensor": lambda L, a, b, c: (a * b).lerp_(b, c * a),
    "tril_": lambda L, a, b, c: (a * b).tril_(0) * a,
    "roll, triu": lambda L, a, b, c: (a * b).triu(-1).roll((1, 1), (0, 1)) * c,
    "masked_select": lambda L, a, b, c: (a * b).masked_select((c > 1)[0]).pow(2),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_gradients_of_gradients_as_torchs(name):
    # The formulas are written over differentiable operators (and in-place
    # forms save self's old value with its history), so double backward
    # gives torch's.
    rng = np.random.default_rng(3)
    data = [rng.uniform(0.5, 2.0, (2, 3)) for _ in range(3)]
    results = []
    for lib in (torch, turnout):
        a, b, c = [lib.from_numpy(d.copy()).requires_grad_() for d in data]
        y = SECOND_ORDER[name](lib, a, b, c)
        first = lib.autograd.grad(y.sum(), [a, b, c], create_graph=True,
                                  allow_unused=True)
        total = sum((g * g).sum() for g in first if g is not None)
        second = lib.autograd.grad(total, [a, b, c], allow_unused=True)
        results.append([None if g is None else
                        np.round(np.asarray(g.detach().numpy()), 6).tolist()
                        for g in list(first) + list(second)])
    assert results[1] == results[0]
