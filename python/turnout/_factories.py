"""Tensor factories: ``tensor``, ``as_tensor``, ``zeros``, ``ones``, ``full``, ``empty``,
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
import warnings
from typing import Any, Callable, Optional, TypeVar

from turnout import _C
from turnout._ops import ops
from turnout._tensor import (_BELOW_PYTHON, Tensor, _factory_kwargs, _like_kwargs,
                             _same_device, _size_args)

__all__ = [
    "arange", "as_tensor", "empty", "empty_like", "enable_grad", "full", "full_like",
    "no_grad", "ones", "ones_like", "rand", "rand_like", "randint_like", "randn",
    "randn_like", "tensor", "zeros", "zeros_like",
]


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


def _check_out(fn: str, out: Tensor, dtype: Optional[_C.dtype],
               device: Any) -> None:
    """torch's checks of a factory's out= against its dtype= and device=."""
    if not isinstance(out, _C.TensorBase):
        raise TypeError(f"{fn}(): expected out to be a Tensor, got "
                        f"{type(out).__name__}")
    if dtype is not None and dtype != out.dtype:
        raise _C.InvalidArgumentError(
            f"{fn}(): dtype {dtype} does not match the dtype of the out "
            f"tensor ({out.dtype}); pass dtype=None or an out of that dtype")
    if device is not None and not _same_device(_C.device(device), out.device):
        raise _C.InvalidArgumentError(
            f"{fn}(): device {device} does not match the device of the out "
            f"tensor ({out.device}); pass device=None or an out on that device")


def _target(src: Tensor, dtype: Optional[_C.dtype], device: Any) -> tuple:
    """The dtype and device a conversion of `src` asks for: the given ones,
    else `src`'s (a device string read as a device)."""
    if isinstance(device, str):
        device = _C.device(device)
    return (src.dtype if dtype is None else dtype,
            src.device if device is None else device)


def _convert(src: Tensor, dtype: Optional[_C.dtype], device: Any,
             copy: bool) -> Tensor:
    """`src` with `dtype` and on `device` (None: its own), as torch's
    ``Tensor.to(device, dtype, copy=copy)`` from its tensor constructors:
    `src` itself when nothing changes and not `copy`, else one
    ``aten._to_copy`` with the dtype and the device given explicitly."""
    dtype, device = _target(src, dtype, device)
    if not copy and dtype is src.dtype and _same_device(device, src.device):
        return src
    return ops.aten._to_copy.default(src, dtype=dtype, device=device)


def _numpy_values(data: Any, dtype: Optional[_C.dtype]) -> Any:
    """`data` (a number or a nested list or tuple of them) as a C-ordered
    NumPy array: of the dtype torch infers (bool, int64 or float32) when
    `dtype` is None; else as NumPy read them (float64 for floats), so that
    the one conversion to `dtype` starts from full precision."""
    import numpy as np

    try:
        arr = np.array(data)
    except Exception as e:  # ragged lists, objects numpy cannot read
        raise TypeError(f"turnout.tensor(data): cannot read data of type "
                        f"{type(data).__name__}: {e}") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(
            f"turnout.tensor(data): expected numbers (bool, int, float), "
            f"got elements of NumPy kind {arr.dtype} from {type(data).__name__}")
    if dtype is None and arr.dtype.kind == "f":
        arr = arr.astype(np.float32)
    elif arr.dtype.kind in "iu":
        arr = arr.astype(np.int64)
    # A C-ordered copy; ascontiguousarray would turn 0-d into 1-d.
    return np.array(arr, order="C")


def _from_values(data: Any, dtype: Optional[_C.dtype], device: Any) -> Tensor:
    """A tensor of Python values, as torch 1.13's constructors make one: built
    and converted below the Python key (no mode or subclass handler sees
    that), then announced through ``aten.lift_fresh``, the one call a mode
    sees. On the meta device there are no values to keep: torch 1.13 makes
    an empty meta tensor there and announces nothing, and so does this."""
    with _C._ExcludeDispatchKeyGuard(_BELOW_PYTHON):
        src = _C.from_numpy(_numpy_values(data, dtype))
        dtype, target = _target(src, dtype, device)
        if target.type == "meta":
            return ops.aten.empty.memory_format(list(src.shape), dtype=dtype,
                                                device=target)
        t = _convert(src, dtype, target, copy=False)
    return ops.aten.lift_fresh.default(t)


def _from_numpy_array(arr: Any, copy: bool) -> Tensor:
    """A NumPy array as a CPU tensor sharing its memory (a C-ordered copy
    first when `copy`, which also takes arrays of any strides), announced
    through ``aten.lift_fresh`` as :func:`turnout.from_numpy` does."""
    import numpy as np

    if arr.dtype.kind not in "biuf":
        raise TypeError(
            f"turnout.tensor(data): expected an array of numbers (bool, int, "
            f"float), got one of NumPy dtype {arr.dtype}")
    return ops.aten.lift_fresh.default(
        _C.from_numpy(np.array(arr, order="C") if copy else arr))


def tensor(data: Any, dtype: Optional[_C.dtype] = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of `data`.

    As torch 1.13's, what a dispatch mode sees depends on `data`: for
    numbers and lists, one ``aten.lift_fresh`` of the finished tensor
    (nothing on the meta device); for a NumPy array, the ``aten.lift_fresh``
    of :func:`turnout.from_numpy` and the ``aten._to_copy`` that copies it;
    for a tensor, ``aten.detach`` twice and ``aten._to_copy`` (and a
    UserWarning: copying a tensor reads better as ``t.clone().detach()``).

    Args:
        data: a number, a (nested) list or tuple of numbers, a NumPy array,
            or a tensor.
        dtype: the element type; by default int64 for ints, float32 for
            floats, bool for bools (a NumPy array or a tensor keeps its
            dtype).
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
        warnings.warn(
            "turnout.tensor(t) with a tensor t copies it into a new leaf that "
            "shares neither memory nor history with t; write that as "
            "t.clone().detach(), or t.clone().detach().requires_grad_(True) "
            "for a copy that requires grad, which says what it does",
            UserWarning, stacklevel=2)
        # Detached, then copied, as torch 1.13's constructor (a mode logs
        # the detach and its shallow copy: two detaches).
        t = _convert(data.detach(), dtype, device, copy=True)
    elif isinstance(data, np.ndarray):
        t = _convert(_from_numpy_array(data, copy=True), dtype, device,
                     copy=True)
    else:
        t = _from_values(data, dtype, device)
    return _finish(t, requires_grad)


def as_tensor(data: Any, dtype: Optional[_C.dtype] = None,
              device: Any = None) -> Tensor:
    """`data` as a tensor, sharing its memory where it can, as
    ``torch.as_tensor``: a tensor with the requested dtype and device is
    returned itself, and a NumPy array of a supported dtype becomes a CPU
    tensor over its memory; otherwise the data is converted (one
    ``aten._to_copy``, which autograd records for a tensor that requires
    grad). Numbers and lists make a new tensor as :func:`tensor` does.

    Args:
        data: a tensor, a NumPy array, a number or a (nested) list or tuple
            of numbers.
        dtype: the element type (default: `data`'s; for numbers, as
            :func:`tensor` infers it).
        device: where the result lives (default: `data`'s; CPU for
            numbers and arrays).

    Returns:
        `data` itself, a tensor sharing its memory, or a converted copy.

    Raises:
        TypeError: `data` holds something other than numbers.

    Example::

        >>> import numpy as np, turnout
        >>> a = np.array([1.0, 2.0])
        >>> t = turnout.as_tensor(a)
        >>> a[0] = 5.0
        >>> t
        tensor([5., 2.], dtype=turnout.float64)
        >>> turnout.as_tensor(t) is t
        True
        >>> turnout.as_tensor([1, 2], dtype=turnout.float32)
        tensor([1., 2.])
    """
    import numpy as np

    if isinstance(data, _C.TensorBase):
        return _convert(data, dtype, device, copy=False)
    if isinstance(data, np.ndarray):
        return _convert(_from_numpy_array(data, copy=False), dtype, device,
                        copy=False)
    return _from_values(data, dtype, device)


def empty(*size: Any, out: Optional[Tensor] = None,
          dtype: Optional[_C.dtype] = None, layout: Any = None,
          device: Any = None, requires_grad: bool = False,
          pin_memory: bool = False, memory_format: Any = None) -> Tensor:
    """A tensor of the given size with uninitialized values (`out`, resized,
    when given: ``aten.empty.out``)."""
    if out is not None:
        _check_out("empty", out, dtype, device)
        return _finish(ops.aten.empty.out(_size_args("empty", size),
                                          memory_format=memory_format, out=out),
                       requires_grad)
    t = ops.aten.empty.memory_format(
        _size_args("empty", size),
        **_factory_kwargs(dtype, layout, device, pin_memory,
                          memory_format=memory_format))
    return _finish(t, requires_grad)


def zeros(*size: Any, out: Optional[Tensor] = None,
          dtype: Optional[_C.dtype] = None, layout: Any = None,
          device: Any = None, requires_grad: bool = False,
          pin_memory: bool = False) -> Tensor:
    """A tensor of the given size filled with 0 (float32 by default); with
    `out`, out resized and filled (``aten.zeros.out``)."""
    if out is not None:
        _check_out("zeros", out, dtype, device)
        return _finish(ops.aten.zeros.out(_size_args("zeros", size), out=out),
                       requires_grad)
    t = ops.aten.zeros.default(_size_args("zeros", size),
                               **_factory_kwargs(dtype, layout, device, pin_memory))
    return _finish(t, requires_grad)


def ones(*size: Any, out: Optional[Tensor] = None,
         dtype: Optional[_C.dtype] = None, layout: Any = None,
         device: Any = None, requires_grad: bool = False,
         pin_memory: bool = False) -> Tensor:
    """A tensor of the given size filled with 1 (float32 by default); with
    `out`, out resized and filled (``aten.ones.out``).

    Example::

        >>> import turnout
        >>> turnout.ones([2])
        tensor([1., 1.])
    """
    if out is not None:
        _check_out("ones", out, dtype, device)
        return _finish(ops.aten.ones.out(_size_args("ones", size), out=out),
                       requires_grad)
    t = ops.aten.ones.default(_size_args("ones", size),
                              **_factory_kwargs(dtype, layout, device, pin_memory))
    return _finish(t, requires_grad)


def full(size: Any, fill_value: Any, *, out: Optional[Tensor] = None,
         dtype: Optional[_C.dtype] = None, layout: Any = None,
         device: Any = None, requires_grad: bool = False,
         pin_memory: bool = False) -> Tensor:
    """A tensor of `size` filled with `fill_value` (its dtype follows the
    value's type unless `dtype` is given); with `out`, out resized and
    filled (``aten.full.out``)."""
    if out is not None:
        _check_out("full", out, dtype, device)
        return _finish(ops.aten.full.out(_size_args("full", (size,)), fill_value,
                                         out=out), requires_grad)
    t = ops.aten.full.default(_size_args("full", (size,)), fill_value,
                              **_factory_kwargs(dtype, layout, device, pin_memory))
    return _finish(t, requires_grad)


def arange(start: Any, end: Any = None, step: Any = None, *,
           out: Optional[Tensor] = None, dtype: Optional[_C.dtype] = None,
           layout: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """Values from `start` (0 when only one bound is given) up to `end`
    (excluded) by `step`; int64 when all bounds are ints, else float32;
    with `out`, computed in out's dtype into out (``aten.arange.start_out``).

    Example::

        >>> import turnout
        >>> turnout.arange(0, 1, 0.25)
        tensor([0.0000, 0.2500, 0.5000, 0.7500])
    """
    if out is not None:
        if end is None:
            start, end = 0, start
        _check_out("arange", out, dtype, device)
        return _finish(ops.aten.arange.start_out(
            start, end, 1 if step is None else step, out=out), requires_grad)
    # The overload torch's Python arange calls for the bounds given.
    kwargs = _factory_kwargs(dtype, layout, device, pin_memory)
    if end is None and step is None:
        t = ops.aten.arange.default(start, **kwargs)
    elif step is None:
        t = ops.aten.arange.start(start, end, **kwargs)
    else:
        if end is None:
            start, end = 0, start
        t = ops.aten.arange.start_step(start, end, step, **kwargs)
    return _finish(t, requires_grad)


def rand(*size: Any, out: Optional[Tensor] = None,
         dtype: Optional[_C.dtype] = None, layout: Any = None,
         device: Any = None, requires_grad: bool = False,
         pin_memory: bool = False) -> Tensor:
    """Uniform random values in [0, 1) (into `out` when given:
    ``aten.rand.out``)."""
    if out is not None:
        _check_out("rand", out, dtype, device)
        return _finish(ops.aten.rand.out(_size_args("rand", size), out=out),
                       requires_grad)
    t = ops.aten.rand.default(_size_args("rand", size),
                              **_factory_kwargs(dtype, layout, device, pin_memory))
    return _finish(t, requires_grad)


def randn(*size: Any, out: Optional[Tensor] = None,
          dtype: Optional[_C.dtype] = None, layout: Any = None,
          device: Any = None, requires_grad: bool = False,
          pin_memory: bool = False) -> Tensor:
    """Standard normal random values (into `out` when given:
    ``aten.randn.out``)."""
    if out is not None:
        _check_out("randn", out, dtype, device)
        return _finish(ops.aten.randn.out(_size_args("randn", size), out=out),
                       requires_grad)
    t = ops.aten.randn.default(_size_args("randn", size),
                               **_factory_kwargs(dtype, layout, device, pin_memory))
    return _finish(t, requires_grad)


def _like(op: Any, t: Tensor, args: tuple, dtype: Optional[_C.dtype],
          layout: Any, device: Any, requires_grad: bool,
          memory_format: Any) -> Tensor:
    # The keywords torch's Python *_like functions pass (a mode sees them).
    return _finish(op(t, *args, **_like_kwargs(t, dtype, layout, device,
                                               memory_format=memory_format)),
                   requires_grad)


def empty_like(t: Tensor, *, dtype: Optional[_C.dtype] = None,
               layout: Any = None, device: Any = None,
               requires_grad: bool = False,
               memory_format: Any = None) -> Tensor:
    """An uninitialized tensor shaped like `t`, with its dtype and device
    unless given. Its strides: `t`'s when `t` is dense and non-overlapping
    (``memory_format=turnout.preserve_format``, the default), else dense in
    the order of `t`'s; or those of `memory_format`."""
    return _like(ops.aten.empty_like.default, t, (), dtype, layout, device,
                 requires_grad, memory_format)


def zeros_like(t: Tensor, *, dtype: Optional[_C.dtype] = None,
               layout: Any = None, device: Any = None,
               requires_grad: bool = False,
               memory_format: Any = None) -> Tensor:
    """Zeros shaped like `t` (dtype, device and strides as ``empty_like``)."""
    return _like(ops.aten.zeros_like.default, t, (), dtype, layout, device,
                 requires_grad, memory_format)


def ones_like(t: Tensor, *, dtype: Optional[_C.dtype] = None,
              layout: Any = None, device: Any = None,
              requires_grad: bool = False,
              memory_format: Any = None) -> Tensor:
    """Ones shaped like `t` (dtype, device and strides as ``empty_like``)."""
    return _like(ops.aten.ones_like.default, t, (), dtype, layout, device,
                 requires_grad, memory_format)


def full_like(t: Tensor, fill_value: Any, *, dtype: Optional[_C.dtype] = None,
              layout: Any = None, device: Any = None,
              requires_grad: bool = False,
              memory_format: Any = None) -> Tensor:
    """`fill_value` shaped like `t`, in `t`'s dtype unless `dtype` is given
    (not the value's, as ``full``'s); raises when the value does not fit
    the dtype (300 into uint8, inf into an integer dtype).

    Example::

        >>> import turnout
        >>> turnout.full_like(turnout.zeros(2, dtype=turnout.int64), 7)
        tensor([7, 7])
    """
    return _like(ops.aten.full_like.default, t, (fill_value,), dtype, layout,
                 device, requires_grad, memory_format)


def rand_like(t: Tensor, *, dtype: Optional[_C.dtype] = None,
              layout: Any = None, device: Any = None,
              requires_grad: bool = False,
              memory_format: Any = None) -> Tensor:
    """Uniform random values in [0, 1) shaped like `t` (turnout's generator:
    ``turnout.manual_seed``); a floating dtype only."""
    return _like(ops.aten.rand_like.default, t, (), dtype, layout, device,
                 requires_grad, memory_format)


def randn_like(t: Tensor, *, dtype: Optional[_C.dtype] = None,
               layout: Any = None, device: Any = None,
               requires_grad: bool = False,
               memory_format: Any = None) -> Tensor:
    """Standard normal random values shaped like `t`; a floating dtype
    only."""
    return _like(ops.aten.randn_like.default, t, (), dtype, layout, device,
                 requires_grad, memory_format)


def randint_like(t: Tensor, low: Any, high: Any = None, *,
                 dtype: Optional[_C.dtype] = None, layout: Any = None,
                 device: Any = None, requires_grad: bool = False,
                 memory_format: Any = None) -> Tensor:
    """Uniform random integers in [low, high) shaped like `t`, in `t`'s
    dtype unless given; ``randint_like(t, high)`` starts at 0, as torch's.
    Raises when the range is empty or leaves the dtype (as torch's
    ``random_``)."""
    if high is None:
        return _like(ops.aten.randint_like.default, t, (low,), dtype, layout,
                     device, requires_grad, memory_format)
    return _like(ops.aten.randint_like.low_dtype, t, (low, high), dtype,
                 layout, device, requires_grad, memory_format)


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
