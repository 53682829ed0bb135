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
    "aten::pow.Tensor_Tensor[10]": "an integer base with zeros: torch 1.13's "
                                   "second derivative in the exponent is NaN "
                                   "there (log(0) * 0), turnout's 0",
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


def _weights(key: str, shapes: List[tuple]) -> List[np.ndarray]:
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    return [rng.uniform(0.5, 1.5, s).astype(np.float64) for s in shapes]


def _np(x: Any) -> np.ndarray:
    # torch's zero gradients may be ZeroTensors, with no memory to read.
    if isinstance(x, torch.Tensor) and x._is_zerotensor():
        return np.zeros(tuple(x.shape), to_numpy(torch.zeros((), dtype=x.dtype)).dtype)
    return to_numpy(x)


def second_order(lib: Any, info, sample) -> Optional[dict]:
    """What the test compares, for one library; None when no output
    requires grad."""
    args, kwargs, leaves = build_call(sample, lib, requires_grad=True)
    fn = info.op(lib) if lib is turnout else info.torch_fn(torch)
    outs = [t for t in tensors(fn(*args, **kwargs)) if t.requires_grad]
    if not outs:
        return None
    key = f"{info.name}{sample!r}"
    vs = [lib.from_numpy(w).to(o.dtype).requires_grad_()
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
    wrt = leaves + vs
    seconds = lib.autograd.grad(loss, wrt, allow_unused=True)
    result["second"] = [np.zeros(tuple(x.shape)) if g is None else _np(g)
                        for g, x in zip(seconds, wrt)]
    result["dtypes"] = [dtype_name(x.dtype) for x in wrt]
    return result


def _param(info, i, s):
    key = f"{info.name}[{i}]"
    marks = []
    if key in KNOWN_DIFFERENCES:
        marks.append(pytest.mark.xfail(reason=KNOWN_DIFFERENCES[key], strict=True))
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
    for i, (o, t, dt) in enumerate(zip(ours["second"], theirs["second"],
                                       theirs["dtypes"])):
        rtol, atol = _TOLERANCE.get(dt, (1e-7, 1e-7))
        np.testing.assert_allclose(
            o, t, rtol=rtol, atol=atol, equal_nan=True,
            err_msg=f"second gradient with respect to {'input' if i < len(ours['first']) else 'v'} {i}")
