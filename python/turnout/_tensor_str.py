"""repr() of tensors, in PyTorch's format: ``tensor([[1., 2.],\\n [3., 4.]])``.

Floats print with four decimals, or as ``1.`` when every value is whole, or
in scientific notation when the values span a wide range; a dtype suffix is
added when the dtype is not float32, int64 or bool, and a device suffix off
the CPU. Tensors with more than 1000 elements print the first and last three
entries of each dimension around ``...``.
"""

from __future__ import annotations

import math
from typing import Any, Callable, List

__all__: List[str] = []

_THRESHOLD = 1000
_EDGE = 3
_LINEWIDTH = 80


def _float_formatter(values: List[float]) -> Callable[[float], str]:
    finite = [abs(v) for v in values if math.isfinite(v)]
    nonzero = [v for v in finite if v != 0]
    lo = min(nonzero) if nonzero else 1.0
    hi = max(nonzero) if nonzero else 1.0
    if finite and all(v == math.floor(v) for v in finite):
        if hi / lo > 1000.0 or hi > 1e8:
            return lambda v: _nonfinite(v) or f"{v:.4e}"
        return lambda v: _nonfinite(v) or f"{v:.0f}."
    if hi / lo > 1000.0 or hi > 1e8 or lo < 1e-4:
        return lambda v: _nonfinite(v) or f"{v:.4e}"
    return lambda v: _nonfinite(v) or f"{v:.4f}"


def _nonfinite(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return ""


def _flatten(data: Any, out: List[Any]) -> None:
    if isinstance(data, list):
        for x in data:
            _flatten(x, out)
    else:
        out.append(data)


def _summarize(data: Any, shape: List[int], summarize: bool) -> Any:
    """Keeps the edges of each dimension, with Ellipsis in between."""
    if not shape:
        return data
    if summarize and shape[0] > 2 * _EDGE:
        rows = data[:_EDGE] + [Ellipsis] + data[-_EDGE:]
    else:
        rows = data
    return [r if r is Ellipsis else _summarize(r, shape[1:], summarize)
            for r in rows]


def _format(data: Any, fmt: Callable[[Any], str], width: int, indent: int,
            ndim: int) -> str:
    if ndim == 0:
        return fmt(data).rjust(width)
    if ndim == 1:
        items = [" ..." if x is Ellipsis else fmt(x).rjust(width) for x in data]
        per_line = max(1, (_LINEWIDTH - indent) // (width + 2))
        lines = [", ".join(items[i:i + per_line])
                 for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    sep = "," + "\n" * (ndim - 1) + " " * (indent + 1)
    rows = ["..." if r is Ellipsis else _format(r, fmt, width, indent + 1, ndim - 1)
            for r in data]
    return "[" + sep.join(rows) + "]"


def tensor_repr(t: Any, tensor_contents: Any = None) -> str:
    """The repr of turnout tensor `t`; `tensor_contents` (a string), when
    given, stands for the values, as torch's (a subclass that holds its
    data elsewhere prints its own). A subclass prints its class name."""
    import turnout

    prefix = ("tensor(" if type(t) is turnout.Tensor
              else f"{type(t).__name__}(")
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default_dtype = t.dtype in (turnout.float32, turnout.int64, turnout.bool)
    if t.is_meta:
        body = "..." if tensor_contents is None else str(tensor_contents)
        suffixes.append(f"size={tuple(t.shape)}")
        if not default_dtype:
            suffixes.append(f"dtype={t.dtype!r}")
    elif t.numel() == 0:
        body = "[]" if tensor_contents is None else str(tensor_contents)
        if tuple(t.shape) != (0,):
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype is not turnout.float32:
            suffixes.append(f"dtype={t.dtype!r}")
    elif tensor_contents is not None:
        body = str(tensor_contents)
        if not default_dtype:
            suffixes.append(f"dtype={t.dtype!r}")
    else:
        summarize = t.numel() > _THRESHOLD
        data = _summarize(t.detach().tolist(), list(t.shape), summarize)
        flat: List[Any] = []
        _flatten(data, flat)
        flat = [x for x in flat if x is not Ellipsis]
        if t.dtype.is_floating_point:
            fmt = _float_formatter([float(x) for x in flat])
            # As PyTorch: the column width comes from the finite non-zero
            # values; nan, inf and zeros are padded to it, never widen it.
            measured = [x for x in flat if x != 0 and math.isfinite(x)]
        else:
            fmt, measured = str, flat
        width = max([len(fmt(x)) for x in measured], default=1)
        body = _format(data, fmt, width, len(prefix), t.dim())
        if not default_dtype:
            suffixes.append(f"dtype={t.dtype!r}")
    grad_fn = t._grad_fn_name
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return prefix + ", ".join([body] + suffixes) + ")"
