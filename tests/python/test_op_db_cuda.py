"""Every op_db sample on CUDA against the same sample on the CPU: turnout's
CUDA kernels (and the composite ones over them) give the CPU kernels'
dtypes, shapes, strides and values (within float tolerances: the GPU sums
in another order), write the same arguments, raise where the CPU raises,
and give the same gradients; and turnout.library.opcheck passes on every
sample with its tensors on CUDA. An operator with no kernel for CUDA (the
table says so) must refuse CUDA tensors with an error, never crash.

Needs no torch: the CPU kernels are the oracle here, and
test_op_db_torch.py checks those against torch 1.13. Two differences are
torch's own: pin_memory refuses a CUDA tensor, and an integer division by
zero raises on the CPU only (the CUDA kernel does not read the divisor
back). Skips without a GPU.
"""

from __future__ import annotations

import zlib
from typing import Any, List, Optional, Tuple

import numpy as np
import pytest

import turnout
from turnout import _C
from turnout._opcheck import DEFAULT_TEST_UTILS
from turnout.library import opcheck
from op_db import (OP_DB, OpInfo, Sample, assert_values, build_call,
                   has_float_tensor)

pytestmark = pytest.mark.skipif(not turnout.cuda.is_available(),
                                reason="no CUDA device")

CASES = [(info, i, s) for info in OP_DB.values() for i, s in enumerate(info.samples())]

# float tolerances (rtol, atol) of CUDA against the CPU, by dtype.
_TOLERANCE = {"float32": (1e-4, 1e-5), "float64": (1e-9, 1e-12),
              "float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2)}

# Operators that refuse CUDA tensors where the CPU accepts them, as torch's do.
_REFUSED_ON_CUDA = {
    "aten::pin_memory": "only CPU tensors can be pinned",
    "aten::_pin_memory": "only CPU tensors can be pinned",
}

_ERRORS = (RuntimeError, ValueError, TypeError, IndexError, ZeroDivisionError,
           NotImplementedError)


def _params(cases):
    return [pytest.param(info, s, id=f"{info.name}[{i}]") for info, i, s in cases]


def _on_cuda(info: OpInfo) -> bool:
    """Whether a call with CUDA tensors reaches a kernel: one for CUDA, or a
    composite one (which runs over other operators' CUDA kernels)."""
    return _C._dispatch_has_computed_kernel_for_dispatch_key(info.name, "CUDA")


def _is_factory(info: OpInfo) -> bool:
    """Whether the operator takes a `device` argument (a factory)."""
    return "Device? device" in str(info.op(turnout)._schema)


def _reaches_cuda(info: OpInfo, sample: Sample) -> bool:
    """Whether the sample's CUDA call differs from its CPU call: it has a
    tensor argument, or a factory's `device` (see _with_device)."""
    def walk(v: Any) -> bool:
        if isinstance(v, (list, tuple)):
            return any(walk(x) for x in v)
        return type(v).__name__ in ("T", "Dev")
    return walk(list(sample.args) + list(sample.kwargs.values())) or _is_factory(info)


def _call(fn, args, kwargs) -> Tuple[Any, Optional[BaseException]]:
    try:
        return fn(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 -- compared with the CPU's
        return None, e


def _with_device(info: OpInfo, kwargs: dict) -> dict:
    """A factory (a `device` argument the sample leaves out) asked for CUDA."""
    if _is_factory(info) and "device" not in kwargs:
        kwargs = dict(kwargs, device=turnout.device("cuda"))
    return kwargs


def _tensors(value: Any) -> List[Any]:
    if isinstance(value, turnout.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _numpy(x: Any) -> np.ndarray:
    x = x.detach().cpu()
    if str(x.dtype).split(".")[-1] in ("float16", "bfloat16"):
        x = x.to(turnout.float32)
    return np.asarray(x.numpy())


def _same(gpu: Any, cpu: Any, where: str, info: OpInfo, values: bool = True) -> None:
    if isinstance(cpu, turnout.Tensor):
        assert isinstance(gpu, turnout.Tensor), f"{where}: {gpu!r}, the CPU's is a tensor"
        assert str(gpu.dtype) == str(cpu.dtype), f"{where}: dtype {gpu.dtype}, CPU {cpu.dtype}"
        assert tuple(gpu.shape) == tuple(cpu.shape), (
            f"{where}: shape {tuple(gpu.shape)}, CPU {tuple(cpu.shape)}")
        strides = lambda x: [(d, x.stride(d)) for d in range(x.dim())  # noqa: E731
                             if x.size(d) > 1] if x.numel() else []
        assert strides(gpu) == strides(cpu), (
            f"{where}: strides {gpu.stride()}, CPU {cpu.stride()}")
        if not values:
            return
        rtol, atol = _TOLERANCE.get(str(cpu.dtype).split(".")[-1], (1e-4, 1e-5))
        assert_values(_numpy(gpu), _numpy(cpu), max(rtol, info.rtol),
                      max(atol, info.atol), f"{where}: CUDA differs from the CPU")
        return
    if isinstance(cpu, (list, tuple)):
        assert isinstance(gpu, (list, tuple)) and len(gpu) == len(cpu), (
            f"{where}: {gpu!r}, the CPU's {cpu!r}")
        for i, (g, c) in enumerate(zip(gpu, cpu)):
            _same(g, c, f"{where}[{i}]", info, values)
        return
    if isinstance(cpu, float):
        assert gpu == pytest.approx(cpu, rel=1e-4, abs=1e-5, nan_ok=True), (
            f"{where}: {gpu!r}, the CPU's {cpu!r}")
        return
    if isinstance(cpu, turnout.device):
        return  # the CUDA call's device is CUDA's
    assert type(gpu) is type(cpu) and gpu == cpu, f"{where}: {gpu!r}, the CPU's {cpu!r}"


@pytest.mark.parametrize("info, sample", _params(
    [c for c in CASES if _reaches_cuda(c[0], c[2])]))
def test_cuda_as_cpu(info: OpInfo, sample: Sample):
    c_args, c_kwargs, _ = build_call(sample, turnout)
    g_args, g_kwargs, _ = build_call(sample, turnout, device="cuda")
    g_kwargs = _with_device(info, g_kwargs)
    cpu, c_err = _call(info.op(turnout), c_args, c_kwargs)
    gpu, g_err = _call(info.op(turnout), g_args, g_kwargs)
    if not _on_cuda(info):
        assert g_err is not None, (
            f"{info.name} has no CUDA kernel, yet a CUDA call returns {gpu!r}")
        assert isinstance(g_err, _ERRORS), g_err
        return
    if info.name in _REFUSED_ON_CUDA and c_err is None:
        assert isinstance(g_err, _ERRORS), (
            f"CUDA returns {gpu!r}; expected a refusal: "
            f"{_REFUSED_ON_CUDA[info.name]}")
        return
    if c_err is not None and g_err is None and "ZeroDivisionError" in str(c_err):
        # An integer division by zero: the CPU kernel checks the divisor's
        # values; the CUDA kernel does not read them back (torch's neither).
        assert info.base in ("fmod", "fmod_", "floor_divide", "floor_divide_",
                             "remainder", "remainder_", "div", "div_"), c_err
        return
    if c_err is not None:
        assert g_err is not None, (
            f"the CPU raises {type(c_err).__name__}: {str(c_err)[:300]}\n"
            f"CUDA returns {gpu!r}")
        assert isinstance(g_err, _ERRORS), g_err
        return
    assert g_err is None, f"CUDA raises {type(g_err).__name__}: {g_err}"
    _same(gpu, cpu, "result", info, values=info.values)
    _same(list(g_args), list(c_args), "argument", info)
    for k in c_kwargs:
        _same(g_kwargs[k], c_kwargs[k], f"argument {k}", info)


def _grad_cases():
    return [(info, i, s) for info, i, s in CASES
            if info.grad and s.grad and not s.error and has_float_tensor(s)
            and "!" not in str(info.op(turnout)._schema) and _on_cuda(info)
            and info.name not in _REFUSED_ON_CUDA]


@pytest.mark.parametrize("info, sample", _params(_grad_cases()))
def test_cuda_gradients_as_cpu(info: OpInfo, sample: Sample):
    c_args, c_kwargs, c_leaves = build_call(sample, turnout, requires_grad=True)
    g_args, g_kwargs, g_leaves = build_call(sample, turnout, requires_grad=True,
                                            device="cuda")
    cpu, c_err = _call(info.op(turnout), c_args, c_kwargs)
    gpu, g_err = _call(info.op(turnout), g_args, g_kwargs)
    if c_err is not None:
        assert g_err is not None, f"the CPU raises {c_err!r}; CUDA returns {gpu!r}"
        return
    assert g_err is None, f"CUDA raises {g_err!r}"
    rng = np.random.default_rng(zlib.crc32(f"{info.name}{sample!r}".encode()))
    c_loss = g_loss = None
    for c, g in zip(_tensors(cpu), _tensors(gpu)):
        assert g.requires_grad == c.requires_grad
        if not c.requires_grad:
            continue
        w = turnout.from_numpy(rng.uniform(0.5, 1.5, tuple(c.shape))).to(c.dtype)
        c_term, g_term = (c * w).sum(), (g * w.cuda()).sum()
        c_loss = c_term if c_loss is None else c_loss + c_term
        g_loss = g_term if g_loss is None else g_loss + g_term
    if c_loss is None:
        return  # no output requires grad, on either device (checked above)
    c_loss.backward()
    g_loss.backward()
    for i, (c, g) in enumerate(zip(c_leaves, g_leaves)):
        if c.grad is None:
            assert g.grad is None, f"input {i}: a gradient on CUDA, none on the CPU"
            continue
        assert g.grad is not None, f"input {i}: no gradient on CUDA"
        assert g.grad.is_cuda, f"input {i}: the gradient is on {g.grad.device}"
        _same(g.grad, c.grad, f"gradient of input {i}", info)


@pytest.mark.parametrize("info, sample", _params(
    [c for c in CASES if not c[2].error and c[0].opcheck != ()
     and _reaches_cuda(c[0], c[2]) and _on_cuda(c[0])
     and c[0].name not in _REFUSED_ON_CUDA]))
def test_opcheck_on_cuda(info: OpInfo, sample: Sample):
    """turnout.library.opcheck with the sample's tensors on CUDA: the
    schema, the autograd registration, the Meta kernel against the CUDA
    one, and the rest of test_op_db_opcheck.py's checks."""
    args, kwargs, _ = build_call(sample, turnout, device="cuda")
    kwargs = _with_device(info, kwargs)
    tests = DEFAULT_TEST_UTILS if info.opcheck is None else info.opcheck
    if not sample.grad:
        tests = tuple(t for t in tests if t != "test_autograd_registration")
    opcheck(info.op(turnout), args, kwargs, test_utils=tests)
