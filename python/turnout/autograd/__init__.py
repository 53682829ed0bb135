"""turnout.autograd: custom differentiable functions and backward, as
torch.autograd."""

from typing import Optional, Sequence, Tuple, Union

from turnout import _C
from turnout._tensor import Tensor
from turnout.autograd._gradcheck import GradcheckError, gradcheck
from turnout.autograd.function import Function, FunctionCtx, once_differentiable

__all__ = ["Function", "FunctionCtx", "GradcheckError", "backward", "grad",
           "gradcheck", "once_differentiable"]


def backward(tensors: Union[Tensor, Sequence[Tensor]],
             grad_tensors: Union[None, Tensor, Sequence[Optional[Tensor]]] = None,
             retain_graph: Optional[bool] = None,
             create_graph: bool = False,
             inputs: Union[None, Tensor, Sequence[Tensor]] = None) -> None:
    """Accumulates the gradients of ``tensors`` into the leaves' ``.grad``
    (``Tensor.backward`` for several roots at once), as
    ``torch.autograd.backward``.

    Args:
        tensors: the tensors to differentiate (one, or a sequence).
        grad_tensors: the gradient of each tensor; may be omitted for
            one-element tensors.
        retain_graph: keep the graph's saved tensors for another backward
            (default: ``create_graph``); without it they are freed, so a
            second backward through the graph raises, as torch's.
        create_graph: run the backward formulas with grad mode on, so that
            the accumulated gradients have a graph of their own (double
            backward). That graph holds the leaves, and each leaf holds its
            ``.grad``: a reference cycle, so the first such call of the
            process warns (a UserWarning, as torch 1.13's); :func:`grad`
            with ``create_graph=True`` returns the gradients instead and
            makes no cycle, and setting ``.grad`` to None breaks one.
        inputs: accumulate into these tensors' ``.grad`` only (leaves or
            not; each must require grad); by default every leaf reached.

    Raises:
        RuntimeError: ``inputs`` is empty, or one of them does not require
            grad.

    Example::

        >>> import turnout, warnings
        >>> x = turnout.tensor([1.0, 2.0], requires_grad=True)
        >>> w = turnout.tensor([3.0, 4.0], requires_grad=True)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")  # the create_graph warning
        ...     turnout.autograd.backward((x * x * w).sum(), inputs=[x],
        ...                               create_graph=True)
        >>> x.grad.tolist(), w.grad
        ([6.0, 16.0], None)
        >>> x.grad.requires_grad
        True
        >>> x.grad = None  # breaks the cycle
    """
    roots = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if grad_tensors is None:
        grads = []
    elif isinstance(grad_tensors, Tensor):
        grads = [grad_tensors]
    else:
        grads = list(grad_tensors)
    if inputs is None:
        ins = []
    else:
        ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        if not ins:
            raise RuntimeError("'inputs' argument to backward() cannot be "
                               "empty.")
        for i, t in enumerate(ins):
            if not isinstance(t, Tensor) or not t.requires_grad:
                raise RuntimeError(
                    f"backward(inputs=...): element {i} of inputs does not "
                    f"require grad; pass tensors that require grad")
    _C._backward(roots, grads,
                 create_graph if retain_graph is None else bool(retain_graph),
                 bool(create_graph), ins)


def grad(outputs: Union[Tensor, Sequence[Tensor]],
         inputs: Union[Tensor, Sequence[Tensor]],
         grad_outputs: Union[None, Tensor, Sequence[Optional[Tensor]]] = None,
         retain_graph: Optional[bool] = None, create_graph: bool = False,
         allow_unused: bool = False) -> Tuple[Optional[Tensor], ...]:
    """The gradients of ``outputs`` with respect to ``inputs``, as
    ``torch.autograd.grad``: returned, not accumulated into any ``.grad``.

    Args:
        outputs: the tensors to differentiate (one, or a sequence).
        inputs: the tensors to differentiate with respect to; each must
            require grad.
        grad_outputs: the gradient of each output; None (or a None entry)
            for a one-element output means 1.
        retain_graph: keep the graph's saved tensors for another backward
            (default: ``create_graph``); without it they are freed, and a
            second backward through the graph raises, as torch's.
        create_graph: run the backward formulas with grad mode on, so that
            the gradients have a graph of their own (higher derivatives).
        allow_unused: return None for an input no gradient reaches, instead
            of raising.

    Returns:
        A tuple with one gradient per input.

    Raises:
        RuntimeError: an input is not reached and ``allow_unused`` is False
            (torch's message).
        ValueError: an output or an input does not require grad.

    Example::

        >>> import turnout
        >>> x = turnout.tensor([2.0, 3.0], requires_grad=True)
        >>> (g,) = turnout.autograd.grad((x * x).sum(), x)
        >>> g
        tensor([4., 6.])
        >>> x.grad is None
        True
    """
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if grad_outputs is None:
        grads: list = [None] * len(outs)
    elif isinstance(grad_outputs, Tensor):
        grads = [grad_outputs]
    else:
        grads = list(grad_outputs)
    if len(grads) != len(outs):
        raise RuntimeError(
            f"grad(): grad_outputs has {len(grads)} tensors but outputs has "
            f"{len(outs)}; give one gradient (or None) per output")
    result = _C._autograd_grad(outs, grads, ins, create_graph,
                               create_graph if retain_graph is None
                               else bool(retain_graph))
    if not allow_unused and any(g is None for g in result):
        raise RuntimeError(
            "One of the differentiated Tensors appears to not have been used "
            "in the graph. Set allow_unused=True if this is the desired "
            "behavior.")
    return tuple(result)
