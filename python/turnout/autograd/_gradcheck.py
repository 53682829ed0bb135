"""``turnout.autograd.gradcheck``: gradients against finite differences.

The numerical part is turnout's C++ ``autograd::gradcheck``
(kernels/autograd/gradcheck.h), which ``turnout.library.opcheck`` uses too;
this module binds a Python function to it.

Example::

    >>> import turnout
    >>> from turnout.autograd import gradcheck
    >>> x = turnout.tensor([0.1, -0.7, 1.3], dtype=turnout.float64).requires_grad_()
    >>> gradcheck(lambda t: (t * t).sum(), (x,))
    True
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, List, Sequence, Union

from turnout import _C
from turnout._tensor import Tensor

__all__ = ["GradcheckError", "gradcheck"]


class GradcheckError(RuntimeError):
    """The analytical and numerical Jacobians disagree."""


def _tensors_of(value: Any) -> List[Tensor]:
    """The tensors of an output: a Tensor, or a (nested) tuple or list."""
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors_of(v)]
    return []


def gradcheck(func: Callable[..., Any], inputs: Union[Tensor, Sequence[Any]], *,
              eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True) -> bool:
    """Checks the gradients of ``func`` at ``inputs`` against central finite
    differences, as ``torch.autograd.gradcheck`` does.

    For every tensor output of floating dtype and every input that requires
    grad, the numerical Jacobian ``(f(x + eps) - f(x - eps)) / (2 eps)``
    (one element at a time) must agree with the one backward computes:
    ``|analytical - numerical| <= atol + rtol * |numerical|``. Use double
    inputs: single precision loses ``eps`` in rounding. ``func`` is called
    on copies of the inputs, so their values and ``.grad`` stay as they were.

    Args:
        func: called as ``func(*inputs)``; returns a Tensor or a tuple of
            them.
        inputs: a Tensor or a tuple of arguments; the tensors that require
            grad are differentiated, the other arguments passed as given.
        eps: the finite-difference step.
        atol: the absolute tolerance.
        rtol: the relative tolerance.
        raise_exception: raise :class:`GradcheckError` on a mismatch instead
            of returning False.

    Returns:
        True when the Jacobians agree (else False, or an exception).

    Raises:
        GradcheckError: a mismatch, when ``raise_exception``; the message
            names the output and input and prints both Jacobians.
        ValueError: no input requires grad, or one that does is not a
            floating-point CPU tensor.

    Example::

        >>> import turnout
        >>> from turnout.autograd import gradcheck
        >>> a = turnout.tensor([[1.0, 2.0], [0.5, -1.0]], dtype=turnout.float64).requires_grad_()
        >>> b = turnout.tensor([[0.3], [0.2]], dtype=turnout.float64).requires_grad_()
        >>> gradcheck(turnout.ops.aten.mm.default, (a, b))
        True
    """
    if not callable(func):
        raise TypeError(f"gradcheck: expected func to be callable, got "
                        f"{type(func).__name__}")
    args = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    positions = [i for i, a in enumerate(args)
                 if isinstance(a, Tensor) and a.requires_grad]
    if not positions:
        raise ValueError("gradcheck: expected at least one input tensor that "
                         "requires grad, but none does; call requires_grad_() "
                         "on the inputs to differentiate")
    for i in positions:
        if args[i].dtype != _C.float64:
            warnings.warn(f"gradcheck: input {i} requires grad and is "
                          f"{args[i].dtype}, not float64: finite differences "
                          f"in single precision will likely disagree; pass "
                          f"double inputs", UserWarning, stacklevel=2)

    def call(leaves: List[Tensor]) -> List[Tensor]:
        full = list(args)
        for i, leaf in zip(positions, leaves):
            full[i] = leaf
        return _tensors_of(func(*full))

    ok, message = _C._gradcheck(call, [args[i] for i in positions],
                                float(eps), float(atol), float(rtol))
    if not ok and raise_exception:
        raise GradcheckError(message)
    return ok
