"""turnout.autograd: custom differentiable functions and backward, as
torch.autograd."""

from typing import Optional, Sequence, Union

from turnout import _C
from turnout._tensor import Tensor
from turnout.autograd._gradcheck import GradcheckError, gradcheck
from turnout.autograd.function import Function, FunctionCtx, once_differentiable

__all__ = ["Function", "FunctionCtx", "GradcheckError", "backward", "gradcheck",
           "once_differentiable"]


def backward(tensors: Union[Tensor, Sequence[Tensor]],
             grad_tensors: Union[None, Tensor, Sequence[Optional[Tensor]]] = None) -> None:
    """Accumulates the gradients of ``tensors`` into the leaves' ``.grad``
    (``Tensor.backward`` for several roots at once); ``grad_tensors`` may be
    omitted for one-element tensors."""
    roots = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if grad_tensors is None:
        grads = []
    elif isinstance(grad_tensors, Tensor):
        grads = [grad_tensors]
    else:
        grads = list(grad_tensors)
    _C._backward(roots, grads)
