"""Random numbers and value ranges over turnout's default generator:
``manual_seed``, ``randint``, ``randperm`` and ``linspace`` (``rand`` and
``randn`` are in ``turnout._factories``).

The same seed gives the same values on every run. They are not torch's
values: turnout's generator (a 64-bit Mersenne Twister) draws differently
from torch's.

Example::

    >>> import turnout
    >>> _ = turnout.manual_seed(0)
    >>> a = turnout.randint(0, 10, (4,)).tolist()
    >>> _ = turnout.manual_seed(0)
    >>> turnout.randint(0, 10, (4,)).tolist() == a
    True
"""

from typing import Any, Optional

from turnout import _C
from turnout._ops import ops
from turnout._factories import _check_out
from turnout._tensor import Tensor, _factory_kwargs, _size_args

__all__ = ["linspace", "manual_seed", "randint", "randperm"]


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


class _SeedToken:
    """What ``manual_seed`` returns (torch returns its Generator); it has
    ``initial_seed()``."""

    def __init__(self, seed: int) -> None:
        self._seed = seed

    def initial_seed(self) -> int:
        return self._seed


def manual_seed(seed: int) -> _SeedToken:
    """Seeds turnout's default generator (``aten::manual_seed``).

    Args:
        seed: an int; negative values are taken modulo 2**64, as torch does.

    Returns:
        An object whose ``initial_seed()`` is `seed`.

    Raises:
        TypeError: when `seed` is not an int.
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"manual_seed(seed): expected seed to be an int, got "
                        f"{type(seed).__name__}")
    wrapped = seed % (1 << 64)
    # aten::manual_seed takes an int64: the same 64 bits.
    ops.aten.manual_seed.default(wrapped - (1 << 64) if wrapped >= 1 << 63
                                 else wrapped)
    return _SeedToken(seed)


def randint(low: Any, high: Any = None, size: Any = None, *,
            out: Optional[Tensor] = None, dtype: Optional[_C.dtype] = None,
            layout: Any = None, device: Any = None, requires_grad: bool = False,
            pin_memory: bool = False) -> Tensor:
    """Uniform random integers in [low, high) (int64 unless `dtype`);
    ``randint(high, size)`` starts at 0, as torch.randint; into `out`
    when given (``aten.randint.low_out``)."""
    from_zero = size is None
    if from_zero:
        low, high, size = 0, low, high
    if size is None:
        raise TypeError("randint(): missing the size argument (a tuple of ints)")
    if out is not None:
        _check_out("randint", out, dtype, device)
        return _finish(ops.aten.randint.low_out(
            low, high, _size_args("randint", (size,)), out=out), requires_grad)
    kwargs = _factory_kwargs(dtype, layout, device, pin_memory)
    # The overload torch's Python randint calls for the bounds given.
    if from_zero:
        t = ops.aten.randint.default(high, _size_args("randint", (size,)),
                                     **kwargs)
    else:
        t = ops.aten.randint.low(low, high, _size_args("randint", (size,)),
                                 **kwargs)
    return _finish(t, requires_grad)


def randperm(n: int, *, out: Optional[Tensor] = None,
             dtype: Optional[_C.dtype] = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False,
             pin_memory: bool = False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 unless `dtype`); into
    `out` when given (``aten.randperm.out``)."""
    if out is not None:
        _check_out("randperm", out, dtype, device)
        return _finish(ops.aten.randperm.out(n, out=out), requires_grad)
    t = ops.aten.randperm.default(
        n, **_factory_kwargs(dtype, layout, device, pin_memory))
    return _finish(t, requires_grad)


def linspace(start: Any, end: Any, steps: int, *, out: Optional[Tensor] = None,
             dtype: Optional[_C.dtype] = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False,
             pin_memory: bool = False) -> Tensor:
    """`steps` values evenly spaced from `start` to `end`, both included
    (``aten::linspace``; into `out` when given: ``aten::linspace.out``)."""
    if out is not None:
        _check_out("linspace", out, dtype, device)
        return _finish(ops.aten.linspace.out(start, end, steps, out=out),
                       requires_grad)
    t = ops.aten.linspace.default(
        start, end, steps, **_factory_kwargs(dtype, layout, device, pin_memory))
    return _finish(t, requires_grad)
