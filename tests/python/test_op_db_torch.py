"""The differential test: every sample of tests/python/op_db.py run on
turnout and on torch 1.13 (the oracle), comparing results (type, dtype,
shape, strides, values), the arguments after the call (in-place and out=),
which outputs alias which inputs, errors (turnout raises where torch
raises, and only there), and for floating-point samples the gradients of a
random weighted sum of the outputs.

To cover a new operator, add its entry to op_db.py; nothing here changes.
"""

from __future__ import annotations

import zlib
from typing import Any, Callable, List, Optional, Tuple

import numpy as np
import torch

import pytest
import turnout
from op_db import build, build_call, has_float_tensor
from op_db_testing import (CASES, assert_same, is_mutating, params,
                           storage_start, tensors)


def call(fn: Callable[..., Any], args: tuple, kwargs: dict
         ) -> Tuple[Any, Optional[BaseException]]:
    try:
        return fn(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 -- compared with the other library
        return None, e


@pytest.mark.parametrize("info, sample", params(CASES))
def test_same_as_torch(info, sample):
    t_args, t_kwargs, _ = build_call(sample, torch)
    u_args, u_kwargs, _ = build_call(sample, turnout)
    theirs, t_err = call(info.torch_fn(torch), t_args, t_kwargs)
    ours, u_err = call(info.op(turnout), u_args, u_kwargs)
    if sample.error:
        assert t_err is not None, (
            f"{sample!r} is marked error=True but torch returns {theirs!r}: "
            "fix the sample")
    if t_err is not None:
        assert u_err is not None, (
            f"torch raises {type(t_err).__name__}: {str(t_err)[:300]}\n"
            f"turnout returns {ours!r}")
        assert isinstance(u_err, (RuntimeError, ValueError, TypeError, IndexError,
                                  ZeroDivisionError, NotImplementedError)), u_err
        return
    assert u_err is None, (
        f"turnout raises {type(u_err).__name__}: {u_err}\ntorch returns {theirs!r}")
    t_in = tensors([t_args, t_kwargs])
    fresh = not any(storage_start(x) == storage_start(t) for t in tensors(theirs)
                    for x in t_in)
    assert_same(ours, theirs, "result", info, values=info.values, fresh=fresh)
    # What the call wrote (in-place, out=) and what it must not have.
    # (values=False: an out= of random or uninitialised values.)
    assert_same(list(u_args), list(t_args), "argument", info, values=info.values)
    for k in t_kwargs:
        assert_same(u_kwargs[k], t_kwargs[k], f"argument {k}", info,
                    values=info.values)
    # Which outputs share storage with which inputs.
    u_in = tensors([u_args, u_kwargs])
    t_out, u_out = tensors(theirs), tensors(ours)
    for i, (t, u) in enumerate(zip(t_out, u_out)):
        t_alias = [j for j, x in enumerate(t_in) if storage_start(x) == storage_start(t)
                   and t.numel() > 0]
        u_alias = [j for j, x in enumerate(u_in) if storage_start(x) == storage_start(u)
                   and u.numel() > 0]
        assert u_alias == t_alias, (
            f"output {i} shares storage with input tensors {u_alias}; torch's with "
            f"{t_alias}")


def _grad_cases():
    return [(info, i, s) for info, i, s in CASES
            if info.grad and s.grad and not s.error and has_float_tensor(s)
            and not is_mutating(info)]


@pytest.mark.parametrize("info, sample", params(_grad_cases()))
def test_gradients_as_torch(info, sample):
    t_args, t_kwargs, t_leaves = build_call(sample, torch, requires_grad=True)
    u_args, u_kwargs, u_leaves = build_call(sample, turnout, requires_grad=True)
    theirs, t_err = call(info.torch_fn(torch), t_args, t_kwargs)
    ours, u_err = call(info.op(turnout), u_args, u_kwargs)
    if t_err is not None:  # test_same_as_torch compares the errors
        assert u_err is not None, f"torch raises {t_err!r}; turnout returns {ours!r}"
        return
    assert u_err is None, f"turnout raises {u_err!r}; torch returns {theirs!r}"
    t_out, u_out = tensors(theirs), tensors(ours)
    assert len(t_out) == len(u_out)
    for i, (t, u) in enumerate(zip(t_out, u_out)):
        assert u.requires_grad == t.requires_grad, (
            f"output {i}: requires_grad is {u.requires_grad}, torch's "
            f"{t.requires_grad}")
    rng = np.random.default_rng(zlib.crc32(f"{info.name}{sample!r}".encode()))
    t_loss, u_loss = None, None
    for t, u in zip(t_out, u_out):
        if not t.requires_grad:
            continue
        w = rng.uniform(0.5, 1.5, tuple(t.shape)).astype(np.float64)
        t_term = (t * torch.from_numpy(w).to(t.dtype)).sum()
        u_term = (u * turnout.from_numpy(w).to(u.dtype)).sum()
        t_loss = t_term if t_loss is None else t_loss + t_term
        u_loss = u_term if u_loss is None else u_loss + u_term
    if t_loss is None:
        pytest.skip("no output of torch's requires grad")
    t_loss.backward()
    u_loss.backward()
    for i, (t, u) in enumerate(zip(t_leaves, u_leaves)):
        if t.grad is None:
            assert u.grad is None, f"input {i}: a gradient where torch has none"
            continue
        assert u.grad is not None, f"input {i}: no gradient; torch's is {t.grad}"
        assert_same(u.grad, t.grad, f"gradient of input {i}", info)


def _out_names(info) -> List[str]:
    return [a.name for a in info.op(turnout)._schema.arguments if a.is_out]


def _out_grad_cases():
    """The first float sample of each out= overload that torch runs."""
    cases, seen = [], set()
    for info, i, s in CASES:
        if (info.name in seen or s.error or not has_float_tensor(s)
                or not _out_names(info)):
            continue
        seen.add(info.name)
        cases.append((info, i, s))
    return cases


@pytest.mark.parametrize("info, sample", params(_out_grad_cases()))
def test_out_with_grad_as_torch(info, sample):
    """An out= overload refuses inputs that require grad (in grad mode)
    where torch's does: those of differentiable operators; the others run.
    The out tensors themselves do not require grad here."""
    outs = _out_names(info)
    results = []
    for lib in (torch, turnout):
        args, kwargs, _ = build_call(sample, lib, requires_grad=True)
        for k in outs:
            if k in kwargs:
                kwargs[k] = build(sample.kwargs[k], lib)
        results.append(call(info.op(lib) if lib is turnout else info.torch_fn(torch),
                            args, kwargs)[1])
    t_err, u_err = results
    if t_err is None:
        assert u_err is None, f"turnout raises {u_err!r}; torch runs the call"
    else:
        assert isinstance(u_err, RuntimeError), (
            f"torch raises {t_err!r}; turnout gives {u_err!r}")
