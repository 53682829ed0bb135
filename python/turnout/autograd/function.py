"""turnout.autograd.Function: a differentiable function written as a forward
and a backward in Python, as torch.autograd.Function.

Example::

    >>> import turnout
    >>> from turnout.autograd import Function
    >>> class Cube(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x * x
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         (x,) = ctx.saved_tensors
    ...         return grad * 3 * x * x
    >>> x = turnout.tensor([2.0], requires_grad=True)
    >>> y = Cube.apply(x)
    >>> y.grad_fn.name()
    'CubeBackward'
    >>> y.sum().backward()
    >>> x.grad
    tensor([12.])
"""

import functools
from typing import Any, Callable, List, Optional, Tuple

from turnout import _C
from turnout._factories import no_grad, zeros
from turnout._tensor import Tensor

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


def _describe(t: Tensor) -> str:
    dtype = str(t.dtype).replace("turnout.", "")
    return f"[{dtype} {list(t.shape)}]"


class FunctionCtx:
    """The ``ctx`` of a :class:`Function`: what forward (or setup_context)
    leaves for backward.

    Attributes:
        needs_input_grad: one bool per argument of forward: True where the
            argument is a Tensor that requires grad.
    """

    def __init__(self, name: str, needs_input_grad: Tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self._name = name
        self._to_save: Optional[Tuple[Optional[Tensor], ...]] = None
        self._saved: Optional[List[Any]] = None  # (alias, version) or None
        self._dirty: Tuple[Tensor, ...] = ()
        self._non_differentiable: Tuple[Tensor, ...] = ()
        self._materialize_grads = True
        self._freed = False  # backward freed the saved tensors

    def save_for_backward(self, *tensors: Optional[Tensor]) -> None:
        """Saves tensors (or None) for backward, where
        :attr:`saved_tensors` gives them back; a tensor modified in place
        after forward returned makes that access fail."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"{self._name}: save_for_backward can only save "
                                f"Tensors or None, got {type(t).__name__} at "
                                f"position {i}; keep other values as "
                                f"attributes of ctx")
        self._to_save = tensors

    @property
    def saved_tensors(self) -> Tuple[Optional[Tensor], ...]:
        """The tensors given to :meth:`save_for_backward`, in order.

        Raises:
            RuntimeError: one was modified in place after forward returned,
                or backward already freed them (no ``retain_graph``), as
                torch's.
        """
        if self._freed:
            raise RuntimeError(_FREED_MESSAGE)
        if self._saved is None:
            return ()
        out = []
        for entry in self._saved:
            if entry is None:
                out.append(None)
                continue
            t, version = entry
            if t._version != version:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has "
                    f"been modified by an inplace operation: {_describe(t)}, "
                    f"which is saved by {self._name}, is at version "
                    f"{t._version}; expected version {version} instead. Hint: "
                    f"make the in-place operation out-of-place, or clone() the "
                    f"tensor before modifying it.")
            out.append(t)
        return tuple(out)

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Marks inputs that forward modified in place; each must also be
        returned by forward. Their history then continues through this
        function."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Marks outputs that get no gradient (indices, masks)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward receives zeros (True, the default) or None for
        the outputs that got no gradient."""
        self._materialize_grads = bool(value)

    def _release(self) -> None:
        # Backward ran through this function without retain_graph.
        self._saved = None
        self._freed = True

    def _save(self) -> None:
        # Detached, so that an output saved here makes no cycle through C++
        # (output -> node -> backward -> ctx -> output) that Python's garbage
        # collector cannot see; the alias shares the version counter.
        self._saved = [None if t is None else (t.detach(), t._version)
                       for t in (self._to_save or ())]
        self._to_save = None


_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access "
    "saved tensors after they have already been freed). Saved intermediate "
    "values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors "
    "after calling backward.")


def _is(a: Any, b: Any) -> bool:
    return isinstance(a, Tensor) and isinstance(b, Tensor) and a._is_same(b)


def _contains(ts: Tuple[Any, ...], t: Any) -> bool:
    return any(_is(x, t) for x in ts)


class Function:
    """A differentiable function with a custom backward: subclass it, define
    static ``forward`` and ``backward``, and call ``apply``.

    ``forward(ctx, *args)`` computes the outputs (a Tensor, or a tuple) with
    grad mode off. Alternatively ``forward(*args)`` without ctx plus
    ``setup_context(ctx, inputs, output)`` which saves what backward needs.
    ``backward(ctx, *grads)`` gets one gradient per output and returns one
    per argument of forward (None for non-Tensor arguments and those that
    need none). Gradients are summed to their input's shape and cast to its
    dtype. See :class:`FunctionCtx` for what ``ctx`` holds.
    """

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function of a custom "
            "turnout.autograd.Function.")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: Tuple[Any, ...],
                      output: Any) -> None:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the backward (or vjp) function of a custom "
            "turnout.autograd.Function to use it with backward.")

    @staticmethod
    def vjp(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the backward (or vjp) function of a custom "
            "turnout.autograd.Function to use it with backward.")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            f"{type(self).__name__}: a turnout.autograd.Function is not "
            f"instantiated; call {type(self).__name__}.apply(*args)")

    @classmethod
    def apply(cls, *args: Any) -> Any:
        """Runs forward on ``args`` and, when grad mode is on and a Tensor
        argument requires grad, records backward for the outputs."""
        name = cls.__name__ + "Backward"
        # As torch's: from requires_grad alone, whatever the grad mode.
        needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx = FunctionCtx(name, needs)
        uses_setup = cls.setup_context is not Function.setup_context
        with no_grad():
            if uses_setup:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        return _wrap_outputs(cls, ctx, name, args, output,
                             _C.is_grad_enabled() and any(needs))


def _backward_of(cls: type) -> Callable:
    if cls.backward is not Function.backward:
        return cls.backward
    if cls.vjp is not Function.vjp:
        return cls.vjp
    return cls.backward  # raises NotImplementedError


def _wrap_outputs(cls: type, ctx: FunctionCtx, name: str,
                  args: Tuple[Any, ...], output: Any, recording: bool) -> Any:
    is_tuple = isinstance(output, tuple)
    outputs = list(output if is_tuple else (output,))
    for d in ctx._dirty:
        if not any(_is(o, d) for o in outputs):
            raise RuntimeError(
                f"{name}: a tensor marked dirty (mark_dirty) was not returned "
                f"by forward; return every tensor forward modified in place")
    inputs = tuple(a for a in args if isinstance(a, Tensor))
    if recording:
        attached = []  # output indices whose grad_fn is the node
        dirty = []
        for i, o in enumerate(outputs):
            if not isinstance(o, Tensor):
                continue
            if (_contains(ctx._non_differentiable, o)
                    or not o.dtype.is_floating_point):
                continue
            if _contains(ctx._dirty, o) and _contains(inputs, o):
                dirty.append(o)
            elif _contains(inputs, o) or o.requires_grad:
                # An input returned unchanged (or a tensor with history of its
                # own) keeps its history: the output is a new tensor over the
                # same memory.
                outputs[i] = o = o.detach()
            attached.append(i)
        metas = [(o.shape, o.dtype, o.device) if isinstance(o, Tensor) else None
                 for o in outputs]
        backward = _backward_of(cls)
        num_args = len(args)
        tensor_arg = [isinstance(a, Tensor) for a in args]

        def node_backward(*grads: Optional[Tensor]) -> Tuple[Any, ...]:
            full: List[Any] = [None] * len(metas)
            for slot, i in enumerate(attached):
                full[i] = grads[slot]
            if ctx._materialize_grads:
                for i, meta in enumerate(metas):
                    if full[i] is None and meta is not None:
                        full[i] = zeros(meta[0], dtype=meta[1], device=meta[2])
            result = backward(ctx, *full)
            if not isinstance(result, tuple):
                result = (result,)
            if len(result) > num_args and all(r is None for r in result[num_args:]):
                result = result[:num_args]
            if len(result) != num_args:
                raise RuntimeError(
                    f"function {name} returned an incorrect number of gradients "
                    f"(expected {num_args}, got {len(result)})")
            for i, g in enumerate(result):
                if g is not None and not tensor_arg[i]:
                    raise RuntimeError(
                        f"function {name} returned a gradient different than "
                        f"None at position {i + 1}, but the corresponding "
                        f"forward input was not a Tensor")
            return result

        node_inputs = [a if isinstance(a, Tensor) else None for a in args]
        # Checks the dirty inputs before any history changes.
        _C._autograd_record_python_node(name, node_inputs,
                                        [outputs[i] for i in attached],
                                        node_backward, dirty=dirty,
                                        release=ctx._release)
    for d in ctx._dirty:
        _C._bump_version(d)
    ctx._save()
    return tuple(outputs) if is_tuple else outputs[0]


def once_differentiable(fn: Callable) -> Callable:
    """Decorates a backward that is not itself differentiable: it runs with
    grad mode off. (turnout's backward() always runs so; the decorator is
    for code shared with torch.)"""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            return fn(ctx, *args)

    return wrapper
