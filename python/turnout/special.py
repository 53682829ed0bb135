"""``turnout.special``: the functions of ``torch.special`` that turnout
computes.

Each calls its ``aten::special_*`` operator (``special.psi(x)`` is
``turnout.ops.aten.special_psi(x)``), a CompositeImplicitAutograd alias
of the operator that computes it (``aten::digamma``), as torch 1.13's do:
a dispatch mode sees the same calls as torch's, and gradients are the
computing operator's. torch.special's other functions (``i0``, ``ndtr``,
``xlogy``, ``zeta``, ``logit``, ``sinc``, ``exp2``, the Bessel functions,
...) have no operator in turnout yet and are not here.

Example::

    >>> import turnout
    >>> x = turnout.tensor([0.5, 2.0], dtype=turnout.float64)
    >>> turnout.special.psi(x)
    tensor([-1.9635,  0.4228], dtype=turnout.float64)
    >>> turnout.special.polygamma(1, x)
    tensor([4.9348, 0.6449], dtype=turnout.float64)
    >>> turnout.special.expit(turnout.tensor([0.0]))
    tensor([0.5000])
"""

from __future__ import annotations

from typing import Any, List, Optional, Union

from turnout._ops import ops

__all__ = [
    "digamma", "erf", "erfc", "expit", "expm1", "gammaln", "log1p",
    "log_softmax", "logsumexp", "polygamma", "psi", "round", "softmax",
]


def _unary(name: str, doc: str):
    packet = getattr(ops.aten, f"special_{name}")

    def fn(input: Any, *, out: Any = None) -> Any:
        if out is None:
            return packet.default(input)
        return packet.out(input, out=out)

    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    fn.__doc__ = (f"{doc}, as ``torch.special.{name}``: "
                  f"``aten::special_{name}`` (``out=``: its ``.out`` "
                  "overload).\n\nArgs:\n    input: a tensor.\n    out: "
                  "optional, the tensor to write the result into.\n\n"
                  "Returns:\n    The result tensor (`out` when given).\n")
    return fn


digamma = _unary("digamma", "psi(x), the logarithmic derivative of Gamma")
psi = _unary("psi", "psi(x), the logarithmic derivative of Gamma (digamma)")
gammaln = _unary("gammaln", "ln |Gamma(x)| (lgamma)")
erf = _unary("erf", "The error function")
erfc = _unary("erfc", "The complementary error function 1 - erf(x)")
expit = _unary("expit", "The logistic sigmoid 1 / (1 + exp(-x))")
expm1 = _unary("expm1", "exp(x) - 1")
log1p = _unary("log1p", "ln(1 + x)")


def polygamma(n: int, input: Any, *, out: Any = None) -> Any:
    """psi^(n)(x), the n-th derivative of digamma, as
    ``torch.special.polygamma``: ``aten::special_polygamma``.

    Args:
        n: the order, 0 or more (0: digamma, 1: trigamma).
        input: a tensor (integers compute in the default float dtype).
        out: optional, the tensor to write the result into.

    Returns:
        The result tensor (`out` when given).

    Raises:
        RuntimeError: n < 0.

    Example::

        >>> import turnout
        >>> turnout.special.polygamma(2, turnout.tensor([1.0]))
        tensor([-2.4041])
    """
    if out is None:
        return ops.aten.special_polygamma.default(n, input)
    return ops.aten.special_polygamma.out(n, input, out=out)


def round(input: Any, *, decimals: int = 0, out: Any = None) -> Any:
    """Rounded half to even to `decimals` places, as
    ``torch.special.round``: ``aten::special_round``.

    Example::

        >>> import turnout
        >>> turnout.special.round(turnout.tensor([1.25, 2.5]), decimals=1)
        tensor([1.2000, 2.5000])
    """
    if out is None:
        return ops.aten.special_round.default(input, decimals=decimals)
    return ops.aten.special_round.out(input, decimals=decimals, out=out)


def log_softmax(input: Any, dim: int, *, dtype: Optional[Any] = None) -> Any:
    """log(softmax(input)) along `dim`, computed in `dtype` when given, as
    ``torch.special.log_softmax``: ``aten::special_log_softmax``."""
    return ops.aten.special_log_softmax.default(input, dim, dtype=dtype)


def softmax(input: Any, dim: int, *, dtype: Optional[Any] = None) -> Any:
    """exp(x) / sum(exp(x)) along `dim`, computed in `dtype` when given, as
    ``torch.special.softmax``: ``aten::special_softmax``."""
    return ops.aten.special_softmax.default(input, dim, dtype)


def logsumexp(input: Any, dim: Union[int, List[int]], keepdim: bool = False,
              *, out: Any = None) -> Any:
    """log(sum(exp(x))) over `dim`, as ``torch.special.logsumexp``:
    ``aten::special_logsumexp``."""
    dims = [dim] if isinstance(dim, int) else list(dim)
    if out is None:
        return ops.aten.special_logsumexp.default(input, dims, keepdim)
    return ops.aten.special_logsumexp.out(input, dims, keepdim, out=out)
