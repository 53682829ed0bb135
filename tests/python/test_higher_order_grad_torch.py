"""Second derivatives against torch 1.13 as the oracle: every gradient
sample of tests/python/op_db.py (floating-point, not in-place) run on
turnout and on torch, differentiated twice.

For each sample the outputs' gradients are taken with
``autograd.grad(outputs, inputs, v, create_graph=True)`` for weights ``v``
that themselves require grad, and then ``autograd.grad(sum(g * u), inputs +
v)``: the derivative of the first gradient with respect to the inputs (the
second derivative) and with respect to ``v`` (gradgrad). Compared: which
first gradients require grad, and the values of both second gradients (an
absent gradient counts as zeros: torch gives None or zeros depending on its
graph's shape, which is not what this test is about).

The same again with constant weights ``v``: then a first gradient requires
grad only through the inputs' history, and must where torch's does (even
with a zero second derivative, as relu's), or autograd.grad through it would
fail where torch's gives zeros.

Around the sweep: first-order gradients at ties (clamp with Tensor bounds
against maximum / minimum), lift_fresh's node, a saved result's node, and
the second derivatives of in-place forms (which the sweep leaves out).

Where turnout's second derivative is known to differ, KNOWN_DIFFERENCES
says why, per case; such a case is an expected failure, and a strict one
(it fails once fixed, so that the entry goes). A case where torch itself
raises (no double-backward formula, an argument that may not require grad)
is skipped with torch's message.
"""

from __future__ import annotations

import zlib
from typing import Any, List, Optional

import numpy as np
import pytest
import torch

import turnout
from op_db import build_call, has_float_tensor
from op_db_testing import CASES, dtype_name, is_mutating, params, tensors, to_numpy

# Test id -> why turnout's second derivatives differ from torch 1.13's there.
KNOWN_DIFFERENCES = {
    # Edge conventions, not formulas: where torch's double-backward formula
    # divides by zero or takes log(0), it gives NaN (or its zero gradient
    # keeps no graph); turnout's masked formulas give 0 (or a graph).
    "aten::norm.Scalar[6]": "an empty input: turnout's gradgrad of the 2-norm "
                            "is NaN (0/0), torch 1.13's 0",
    "aten::norm.ScalarOpt_dtype[5]": "an empty input: as norm.Scalar[6]",
    "aten::norm.Scalar[7]": "an all-zero input: torch 1.13's second derivative "
                            "of the 2-norm at 0 is NaN, turnout's 0",
    "aten::norm.ScalarOpt_dim[12]": "an all-zero input: as norm.Scalar[7]",
    "aten::prod[9]": "two zeros: torch 1.13's first gradient is zeros without "
                     "a graph; turnout's (zeros too) is differentiable",
    "aten::repeat[5]": "a repeat count of 0 (empty result): torch 1.13's first "
                       "gradient is zeros without a graph; turnout's (zeros "
                       "too) is differentiable",
    # A missing formula.
    "aten::cumprod[8]": "an input with a zero: turnout's cumprod gradient there "
                        "is an exact raw kernel, not differentiable (torch 1.13 "
                        "has a differentiable formula for zeros); inputs "
                        "without zeros use one",
}

_TOLERANCE = {"float64": (1e-7, 1e-7), "float32": (2e-4, 2e-4),
              "float16": (2e-2, 2e-2), "bfloat16": (5e-2, 5e-2)}


def _cases():
    return [(info, i, s) for info, i, s in CASES
            if info.grad and s.grad and not s.error and has_float_tensor(s)
            and not is_mutating(info)]


def _loosest(dtypes: List[str]) -> tuple:
    """The tolerance of the least precise dtype of a call: a float64 input's
    second gradient goes through the float32 arithmetic of a mixed call."""
    return max(_TOLERANCE.get(d, (1e-7, 1e-7)) for d in dtypes)


def _weights(key: str, shapes: List[tuple]) -> List[np.ndarray]:
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    return [rng.uniform(0.5, 1.5, s).astype(np.float64) for s in shapes]


def _np(x: Any) -> np.ndarray:
    # torch's zero gradients may be ZeroTensors, with no memory to read.
    if isinstance(x, torch.Tensor) and x._is_zerotensor():
        return np.zeros(tuple(x.shape), to_numpy(torch.zeros((), dtype=x.dtype)).dtype)
    return to_numpy(x)


def second_order(lib: Any, info, sample, v_requires_grad: bool = True) -> Optional[dict]:
    """What the test compares, for one library; None when no output
    requires grad. v_requires_grad: False to take the first gradients with
    constant weights (then only the inputs' history can make them
    differentiable)."""
    args, kwargs, leaves = build_call(sample, lib, requires_grad=True)
    fn = info.op(lib) if lib is turnout else info.torch_fn(torch)
    outs = [t for t in tensors(fn(*args, **kwargs)) if t.requires_grad]
    if not outs:
        return None
    key = f"{info.name}{sample!r}"
    vs = [lib.from_numpy(w).to(o.dtype).requires_grad_(v_requires_grad)
          for w, o in zip(_weights(key, [tuple(o.shape) for o in outs]), outs)]
    firsts = lib.autograd.grad(outs, leaves, vs, create_graph=True, allow_unused=True)
    differentiable = [g for g in firsts if g is not None and g.requires_grad]
    result = {"first requires grad": [g is not None and g.requires_grad for g in firsts],
              "first": [None if g is None else _np(g) for g in firsts]}
    if not differentiable:
        return result
    us = _weights(key + "u", [tuple(g.shape) for g in differentiable])
    loss = sum((g * lib.from_numpy(u).to(g.dtype)).sum()
               for g, u in zip(differentiable, us))
    wrt = leaves + (vs if v_requires_grad else [])
    seconds = lib.autograd.grad(loss, wrt, allow_unused=True)
    result["second"] = [np.zeros(tuple(x.shape)) if g is None else _np(g)
                        for g, x in zip(seconds, wrt)]
    result["dtypes"] = [dtype_name(x.dtype) for x in wrt]
    return result


# The ones that show with constant weights v too (the others are in the
# derivative with respect to v).
KNOWN_DIFFERENCES_CONSTANT_V = {
    **{k: KNOWN_DIFFERENCES[k] for k in (
        "aten::cumprod[8]", "aten::prod[9]",
        "aten::norm.ScalarOpt_dim[12]", "aten::norm.Scalar[7]")}}


def _param(info, i, s, known=KNOWN_DIFFERENCES):
    key = f"{info.name}[{i}]"
    marks = []
    if key in known:
        marks.append(pytest.mark.xfail(reason=known[key], strict=True))
    return pytest.param(info, s, id=key, marks=marks)


def test_known_differences_name_existing_cases():
    ids = {f"{info.name}[{i}]" for info, i, _ in _cases()}
    assert not set(KNOWN_DIFFERENCES) - ids, "stale KNOWN_DIFFERENCES entries"


@pytest.mark.parametrize("info, sample", [_param(*c) for c in _cases()])
def test_second_derivatives_as_torch(info, sample):
    try:
        theirs = second_order(torch, info, sample)
    except RuntimeError as e:
        # torch 1.13 has no double-backward formula here (or refuses the
        # call): nothing to compare with.
        pytest.skip(f"torch raises: {str(e)[:200]}")
    ours = second_order(turnout, info, sample)
    if theirs is None:
        assert ours is None, "an output requires grad where torch's do not"
        return
    assert ours is not None, "no output requires grad where torch's do"
    assert ours["first requires grad"] == theirs["first requires grad"], (
        "which first gradients require grad (are differentiable): "
        f"{ours['first requires grad']}, torch's {theirs['first requires grad']}")
    for i, (o, t) in enumerate(zip(ours["first"], theirs["first"])):
        if t is not None and o is not None:
            rtol, atol = _TOLERANCE.get(str(t.dtype), (1e-7, 1e-7))
            np.testing.assert_allclose(o, t, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"first gradient of input {i}")
    if "second" not in theirs:
        assert "second" not in ours
        return
    for i, (o, t) in enumerate(zip(ours["second"], theirs["second"])):
        rtol, atol = _loosest(theirs["dtypes"])
        n = len(ours["first"])
        what = f"input {i}" if i < n else f"v {i - n}"
        np.testing.assert_allclose(o, t, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=f"second gradient with respect to {what}")


# ---- The first gradients' nodes -----------------------------------------------

# Operator -> why the grad_fn of some of its first gradients (taken with
# create_graph=True) is named otherwise than torch 1.13's. Each is the last
# operator of a backward formula that turnout writes differently: the values
# and second derivatives agree (above).
KNOWN_NAME_DIFFERENCES = {
    "aten::native_batch_norm": "no native_batch_norm_backward operator: a "
                               "composite formula (MulBackward0)",
    "aten::batch_norm": "as aten::native_batch_norm",
    "aten::matmul": "turnout's matmul folds and unfolds batch dimensions with "
                    "view (ViewBackward0) where torch 1.13 uses "
                    "_reshape_alias, squeeze and mv",
    "aten::linear": "as aten::matmul",
    "aten::nll_loss_nd": "its reshape is a view (ViewBackward0), torch's "
                         "_reshape_alias",
    "aten::prod": "prod's gradient is written with views and where; torch's "
                  "with mul, to and a graph-less zeros for two zeros",
    "aten::cumprod": "an input with a zero: turnout's gradient is an exact "
                     "raw kernel (no graph), torch's goes through CopySlices",
    "aten::cross_entropy_loss": "label smoothing and class weights: "
                                "turnout's composite ends in view or a "
                                "Scalar mul where torch's differs",
}


def _first_names(lib: Any, info, sample) -> Optional[list]:
    """The grad_fn names of the first gradients with respect to every
    floating-point input (None: no gradient; "-": one without a node)."""
    args, kwargs, leaves = build_call(sample, lib, requires_grad=True)
    fn = info.op(lib) if lib is turnout else info.torch_fn(torch)
    outs = [t for t in tensors(fn(*args, **kwargs)) if t.requires_grad]
    if not outs:
        return None
    vs = [lib.ones_like(o) for o in outs]
    firsts = lib.autograd.grad(outs, leaves, vs, create_graph=True, allow_unused=True)
    return [None if g is None else g.grad_fn.name() if g.grad_fn is not None else "-"
            for g in firsts]


@pytest.mark.parametrize("info, sample", [_param(*c, known={}) for c in _cases()])
def test_first_gradient_grad_fn_names_as_torchs(info, sample):
    """With create_graph=True, each first gradient's grad_fn is named as
    torch 1.13's (the last operator of its backward formula: tanh_backward,
    threshold_backward, mul, ...), but for KNOWN_NAME_DIFFERENCES."""
    try:
        theirs = _first_names(torch, info, sample)
    except RuntimeError as e:
        pytest.skip(f"torch raises: {str(e)[:200]}")
    ours = _first_names(turnout, info, sample)
    if ours != theirs and info.name in KNOWN_NAME_DIFFERENCES:
        pytest.xfail(KNOWN_NAME_DIFFERENCES[info.name])
    assert ours == theirs


def test_known_name_differences_still_differ():
    """Every KNOWN_NAME_DIFFERENCES entry names an operator of the sweep
    with at least one sample that still differs (else the entry goes)."""
    still = set()
    for info, _, sample in _cases():
        if info.name not in KNOWN_NAME_DIFFERENCES or info.name in still:
            continue
        try:
            theirs = _first_names(torch, info, sample)
        except RuntimeError:
            continue
        if _first_names(turnout, info, sample) != theirs:
            still.add(info.name)
    assert set(KNOWN_NAME_DIFFERENCES) - still == set()


# ---- First-order rules around the sweep -------------------------------------

_TIES = dict(x=[1.0, 2.0, 3.0, 0.5, 0.0], lo=[1.0, 1.0, 5.0, 0.5, 1.0],
             hi=[2.0, 2.0, 4.0, 0.5, 1.0])
_TIE_CALLS = {
    # self == a bound: self gets it all; min > max: max gets it; min == max
    # with self outside: nobody (torch 1.13's formula).
    "clamp.Tensor": lambda L, x, lo, hi: L.clamp(x, lo, hi),
    "clamp.Tensor min": lambda L, x, lo, hi: L.clamp(x, min=lo),
    "clamp.Tensor max": lambda L, x, lo, hi: L.clamp(x, max=hi),
    "clamp_min.Tensor": lambda L, x, lo, hi: x.clamp_min(lo),
    "clamp_max.Tensor": lambda L, x, lo, hi: x.clamp_max(hi),
    # maximum and minimum split a tie between both sides.
    "maximum": lambda L, x, lo, hi: L.maximum(x, lo),
    "minimum": lambda L, x, lo, hi: L.minimum(x, hi),
}


def _tie_gradients(L, call):
    x, lo, hi = (L.tensor(_TIES[k], dtype=L.float64, requires_grad=True)
                 for k in ("x", "lo", "hi"))
    y = call(L, x, lo, hi)
    grads = L.autograd.grad(y, [x, lo, hi], L.ones(5, dtype=L.float64),
                            allow_unused=True)
    return (y.grad_fn.name(), y.tolist(),
            [None if g is None else g.tolist() for g in grads])


@pytest.mark.parametrize("name", list(_TIE_CALLS))
def test_gradients_at_ties_as_torch(name):
    assert _tie_gradients(turnout, _TIE_CALLS[name]) == _tie_gradients(
        torch, _TIE_CALLS[name])


def _lift_fresh(L):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    z = x * 2
    w = L.ops.aten.lift_fresh.default(z)
    seen = [w is z, z.grad_fn.name(), z.grad_fn.next_functions[0][0].name()]
    w.sum().backward()
    seen.append(x.grad.tolist())
    plain = L.ops.aten.lift_fresh.default(L.ones(2))
    seen.append(plain.grad_fn is None)
    with L.no_grad():
        seen.append(L.ops.aten.lift_fresh.default(x) is x)
    return seen


def test_lift_fresh_records_as_torch():
    """torch 1.13's lift_fresh returns its input itself and, given one that
    requires grad, makes LiftFreshBackward0 its grad_fn."""
    assert _lift_fresh(turnout) == _lift_fresh(torch)


def test_lift_fresh_refuses_a_leaf_that_requires_grad():
    """Where torch 1.13 would move the leaf into the graph (a reference
    cycle through its AccumulateGrad, and a backward that then fails with
    "leaf variable has been moved into the graph interior"), turnout
    refuses the call and leaves the leaf as it was."""
    x = turnout.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError, match="lift_fresh: the input is a leaf that "
                                          "requires grad.*detach"):
        turnout.ops.aten.lift_fresh.default(x)
    assert x.is_leaf and x.grad_fn is None
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def _saved_result(L):
    x = L.tensor([0.5, -1.0], dtype=L.float64, requires_grad=True)
    y = x.exp()
    r = y.grad_fn._saved_result
    return [r.grad_fn.name(), r.requires_grad, r.tolist() == y.tolist()]


def test_a_saved_result_shows_its_node_as_torch():
    """A node that saves its own output gives it back attached to itself,
    as torch's SavedVariable does (what makes exp's double backward work)."""
    assert _saved_result(turnout) == _saved_result(torch)


@pytest.mark.parametrize("op", ["sin_", "log_", "cumprod_", "pow_", "exp_",
                                "sigmoid_", "tanh_", "sqrt_", "reciprocal_"])
def test_inplace_second_derivatives_as_torch(op):
    """In-place forms save self's old value (or the result): both must keep
    their history for create_graph."""
    def run(L):
        x = L.tensor([0.5, 1.3, 2.0], dtype=L.float64, requires_grad=True)
        v = L.tensor([1.0, 0.7, 1.2], dtype=L.float64, requires_grad=True)
        y = x * 1
        extra = {"cumprod_": (0,), "pow_": (2.5,)}.get(op, ())
        getattr(y, op)(*extra)
        g, = L.autograd.grad(y, x, v, create_graph=True)
        return [None if a is None else np.round(a.detach().numpy(), 9).tolist()
                for a in L.autograd.grad((g * g).sum(), [x, v], allow_unused=True)]
    assert run(turnout) == run(torch)


@pytest.mark.parametrize("info, sample", [_param(*c, known=KNOWN_DIFFERENCES_CONSTANT_V)
                                          for c in _cases()])
def test_first_gradients_are_differentiable_where_torchs_are(info, sample):
    """With constant weights, a first gradient requires grad where it depends
    on a differentiable input in torch 1.13 (even one with a zero second
    derivative, as relu's): autograd.grad through it must not fail."""
    try:
        theirs = second_order(torch, info, sample, v_requires_grad=False)
    except RuntimeError as e:
        pytest.skip(f"torch raises: {str(e)[:200]}")
    ours = second_order(turnout, info, sample, v_requires_grad=False)
    if theirs is None:
        assert ours is None
        return
    assert ours["first requires grad"] == theirs["first requires grad"]
    if "second" in theirs:
        rtol, atol = _loosest(theirs["dtypes"])
        for i, (o, t) in enumerate(zip(ours["second"], theirs["second"])):
            np.testing.assert_allclose(o, t, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"second gradient of input {i}")
