"""Tensor factories: ``tensor``, ``zeros``, ``ones``, ``full``, ``empty``,
``arange``, ``rand``, ``randn`` and the ``*_like`` ones; and the grad-mode
context managers ``no_grad`` / ``enable_grad``.

Sizes may be given as varargs or as one list or tuple.

Example::

    >>> import turnout
    >>> turnout.zeros(2, 3, dtype=turnout.int32)
    tensor([[0, 0, 0],
            [0, 0, 0]], dtype=turnout.int32)
    >>> turnout.full([2], 7.5)
    tensor([7.5000, 7.5000])
    >>> turnout.arange(1, 4)
    tensor([1, 2, 3])
    >>> turnout.empty(0, 3)
    tensor([], size=(0, 3))
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional, TypeVar

from turnout import _C
from turnout._ops import ops
from turnout._tensor import Tensor, _size_args

__all__ = [
    "arange", "empty", "empty_like", "enable_grad", "full", "no_grad", "ones",
    "ones_like", "rand", "randn", "tensor", "zeros", "zeros_like",
]


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor(data: Any, dtype: Optional[_C.dtype] = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of `data`.

    Args:
        data: a number, a (nested) list or tuple of numbers, a NumPy array,
            or a tensor.
        dtype: the element type; by default int64 for ints, float32 for
            floats, bool for bools (a NumPy array keeps its dtype).
        device: where to put it, e.g. ``"cpu"`` or ``turnout.device("cuda:0")``.
        requires_grad: make it a leaf that requires grad.

    Returns:
        A new tensor that shares no memory with `data`.

    Raises:
        TypeError: `data` holds something other than numbers.

    Example::

        >>> import turnout
        >>> turnout.tensor([[1, 2], [3, 4]])
        tensor([[1, 2],
                [3, 4]])
        >>> turnout.tensor(2.5, dtype=turnout.float64)
        tensor(2.5000, dtype=turnout.float64)
    """
    import numpy as np

    if isinstance(data, _C.TensorBase):
        src = data.detach()
    else:
        keep_dtype = isinstance(data, np.ndarray)
        try:
            arr = np.array(data)
        except Exception as e:  # ragged lists, objects numpy cannot read
            raise TypeError(f"turnout.tensor(data): cannot read data of type "
                            f"{type(data).__name__}: {e}") from None
        if arr.dtype.kind not in "biuf":
            raise TypeError(
                f"turnout.tensor(data): expected numbers (bool, int, float), "
                f"got elements of NumPy kind {arr.dtype} from {type(data).__name__}")
        if not keep_dtype and dtype is None:
            # The defaults. With a dtype given, the values are converted
            # once, from the full precision NumPy read them in.
            if arr.dtype.kind == "f":
                arr = arr.astype(np.float32)
            elif arr.dtype.kind in "iu":
                arr = arr.astype(np.int64)
        # A C-ordered copy; ascontiguousarray would turn 0-d into 1-d.
        src = _C.from_numpy(np.array(arr, order="C"))
    t = ops.aten._to_copy.default(src, dtype=dtype, device=device)
    return _finish(t, requires_grad)


def empty(*size: Any, dtype: Optional[_C.dtype] = None, device: Any = None,
          requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """A tensor of the given size with uninitialized values."""
    t = ops.aten.empty.memory_format(_size_args("empty", size), dtype=dtype,
                                     device=device, memory_format=memory_format)
    return _finish(t, requires_grad)


def zeros(*size: Any, dtype: Optional[_C.dtype] = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """A tensor of the given size filled with 0 (float32 by default)."""
    t = ops.aten.zeros.default(_size_args("zeros", size), dtype=dtype, device=device)
    return _finish(t, requires_grad)


def ones(*size: Any, dtype: Optional[_C.dtype] = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of the given size filled with 1 (float32 by default).

    Example::

        >>> import turnout
        >>> turnout.ones([2])
        tensor([1., 1.])
    """
    t = ops.aten.ones.default(_size_args("ones", size), dtype=dtype, device=device)
    return _finish(t, requires_grad)


def full(size: Any, fill_value: Any, *, dtype: Optional[_C.dtype] = None,
         device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of `size` filled with `fill_value` (its dtype follows the
    value's type unless `dtype` is given)."""
    t = ops.aten.full.default(_size_args("full", (size,)), fill_value,
                              dtype=dtype, device=device)
    return _finish(t, requires_grad)


def arange(start: Any, end: Any = None, step: Any = 1, *,
           dtype: Optional[_C.dtype] = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """Values from `start` (0 when only one bound is given) up to `end`
    (excluded) by `step`; int64 when all bounds are ints, else float32.

    Example::

        >>> import turnout
        >>> turnout.arange(0, 1, 0.25)
        tensor([0.0000, 0.2500, 0.5000, 0.7500])
    """
    if end is None:
        start, end = 0, start
    t = ops.aten.arange.start_step(start, end, step, dtype=dtype, device=device)
    return _finish(t, requires_grad)


def rand(*size: Any, dtype: Optional[_C.dtype] = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Uniform random values in [0, 1)."""
    t = ops.aten.rand.default(_size_args("rand", size), dtype=dtype, device=device)
    return _finish(t, requires_grad)


def randn(*size: Any, dtype: Optional[_C.dtype] = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Standard normal random values."""
    t = ops.aten.randn.default(_size_args("randn", size), dtype=dtype, device=device)
    return _finish(t, requires_grad)


def empty_like(t: Tensor, *, dtype: Optional[_C.dtype] = None,
               device: Any = None) -> Tensor:
    """An uninitialized tensor shaped like `t`."""
    return ops.aten.empty_like.default(t, dtype=dtype, device=device)


def zeros_like(t: Tensor, *, dtype: Optional[_C.dtype] = None,
               device: Any = None) -> Tensor:
    """Zeros shaped like `t`, with its dtype and device unless given."""
    return ops.aten.zeros_like.default(t, dtype=dtype, device=device)


def ones_like(t: Tensor, *, dtype: Optional[_C.dtype] = None,
              device: Any = None) -> Tensor:
    """Ones shaped like `t`, with its dtype and device unless given."""
    return ops.aten.ones_like.default(t, dtype=dtype, device=device)


F = TypeVar("F", bound=Callable[..., Any])


class _GradModeContext:
    _enabled = True

    def __enter__(self) -> None:
        self._previous = _C.is_grad_enabled()
        _C._set_grad_enabled(self._enabled)

    def __exit__(self, *exc: Any) -> None:
        _C._set_grad_enabled(self._previous)

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class no_grad(_GradModeContext):
    """Turns off autograd recording on this thread inside a ``with`` block
    (or a decorated function); the previous mode comes back on exit.

    Example::

        >>> import turnout
        >>> w = turnout.ones(2, requires_grad=True)
        >>> with turnout.no_grad():
        ...     (w * 2).requires_grad
        False
    """

    _enabled = False


class enable_grad(_GradModeContext):
    """Turns autograd recording back on inside a ``with`` block."""

    _enabled = True
