"""What the op_db tests share: the table of (operator, sample) cases and
the comparison of turnout's values with torch's."""

from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np
import pytest
import torch

import turnout
from op_db import OP_DB, OpInfo, Sample, assert_values

# (OpInfo, index, Sample) for every sample of every operator.
CASES: List[Tuple[OpInfo, int, Sample]] = [
    (info, i, s) for info in OP_DB.values() for i, s in enumerate(info.samples())]


def params(cases: List[Tuple[OpInfo, int, Sample]]) -> List[Any]:
    """pytest parameters named aten::op.overload[i]."""
    return [pytest.param(info, s, id=f"{info.name}[{i}]") for info, i, s in cases]


def is_mutating(info: OpInfo) -> bool:
    return "!" in str(info.op(turnout)._schema)


# ---- Comparing a turnout value with torch's -----------------------------------

_TOLERANCE = {"float64": (1e-7, 1e-7), "float16": (1e-3, 1e-3),
              "bfloat16": (1.6e-2, 1e-2)}


def dtype_name(dtype: Any) -> str:
    return str(dtype).split(".")[-1]


def to_numpy(x: Any) -> np.ndarray:
    x = x.detach()
    if dtype_name(x.dtype) == "bfloat16":
        x = x.to(type(x.dtype) is torch.dtype and torch.float32 or turnout.float32)
    return np.asarray(x.numpy())


def _meaningful_strides(x: Any) -> List[Tuple[int, int]]:
    """(dim, stride) of the dims whose stride means something: size > 1."""
    if x.numel() == 0:
        return []
    return [(d, x.stride(d)) for d in range(x.dim()) if x.size(d) > 1]


def assert_same(ours: Any, theirs: Any, where: str, info: OpInfo, *,
                values: bool = True, fresh: bool = False) -> None:
    """turnout's ``ours`` agrees with torch's ``theirs``: type, and for
    tensors dtype, shape, strides (of dims of size > 1) and values.

    fresh: ``theirs`` is a new tensor (no view, no argument written), whose
    strides torch takes from its inputs' layout (TensorIterator keeps a
    permuted input's order) where turnout's kernels may make them
    contiguous: there a contiguous result passes too.
    """
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, turnout.Tensor), (
            f"{where}: torch gives a tensor, turnout {type(ours).__name__} {ours!r}")
        assert dtype_name(ours.dtype) == dtype_name(theirs.dtype), (
            f"{where}: dtype {dtype_name(ours.dtype)}, torch's is "
            f"{dtype_name(theirs.dtype)}")
        assert tuple(ours.shape) == tuple(theirs.shape), (
            f"{where}: shape {tuple(ours.shape)}, torch's is {tuple(theirs.shape)}")
        if fresh and not theirs.is_contiguous() and ours.is_contiguous():
            pass
        else:
            assert _meaningful_strides(ours) == _meaningful_strides(theirs), (
                f"{where}: strides {ours.stride()}, torch's are {theirs.stride()} "
                f"(shape {tuple(theirs.shape)})")
        if not values:
            return
        rtol, atol = _TOLERANCE.get(dtype_name(theirs.dtype), (info.rtol, info.atol))
        assert_values(to_numpy(ours), to_numpy(theirs), rtol, atol,
                      f"{where}: values differ from torch's")
        return
    if isinstance(theirs, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(theirs), (
            f"{where}: {ours!r}, torch gives {theirs!r}")
        for i, (o, t) in enumerate(zip(ours, theirs)):
            assert_same(o, t, f"{where}[{i}]", info, values=values, fresh=fresh)
        return
    if isinstance(theirs, torch.dtype):
        assert dtype_name(ours) == dtype_name(theirs), f"{where}: {ours}, torch's {theirs}"
        return
    if isinstance(theirs, torch.memory_format):
        assert str(ours).split(".")[-1] == str(theirs).split(".")[-1], (
            f"{where}: {ours}, torch's {theirs}")
        return
    if isinstance(theirs, torch.device):
        assert str(ours) == str(theirs), f"{where}: {ours}, torch's {theirs}"
        return
    # Python numbers: the same type (bool, int, float) and value.
    assert type(ours) is type(theirs), (
        f"{where}: {type(ours).__name__} {ours!r}, torch gives "
        f"{type(theirs).__name__} {theirs!r}")
    if isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=1e-6, abs=1e-7, nan_ok=True), (
            f"{where}: {ours!r}, torch gives {theirs!r}")
    else:
        assert ours == theirs, f"{where}: {ours!r}, torch gives {theirs!r}"


def tensors(value: Any) -> List[Any]:
    """The tensors in ``value`` (a tensor, or lists / tuples / dicts of them)."""
    if isinstance(value, (torch.Tensor, turnout.Tensor)):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors(v)]
    return []


def storage_start(x: Any) -> int:
    """The address of x's storage (where offset 0 is), to tell aliasing."""
    return x.data_ptr() - x.storage_offset() * x.element_size()
