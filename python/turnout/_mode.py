"""Dispatch modes and tensor subclasses: the ``Python`` dispatch key.

A :class:`DispatchMode` sees every operator call made on its thread while it
is active; a subclass of :class:`turnout.Tensor` with a
``__turnout_dispatch__`` classmethod sees every operator called on its
instances. Both are reached through the dispatcher's ``Python`` key, by a
boxed fallback in C++ (``bindings/python_mode.cc``): the call has already
passed the keys above ``Python`` (autograd, so a composite operator has been
decomposed into the calls it makes) and goes on below it when the handler
calls ``func(*args, **kwargs)``.

The handler is called as ``__turnout_dispatch__(func, types, args, kwargs)``:

- ``func``: the :class:`turnout._ops.OpOverload` being called, e.g.
  ``turnout.ops.aten.add.Tensor``;
- ``types``: the tensor subclasses with a handler among the arguments;
- ``args`` / ``kwargs``: the arguments as the schema binds them (keyword-only
  arguments in ``kwargs``).

Its result must fit the schema's returns (one value, a tuple for several,
None for none); anything else raises TypeError naming the operator.

Example::

    >>> import turnout
    >>> from turnout.utils import DispatchMode
    >>> class Count(DispatchMode):
    ...     def __init__(self):
    ...         self.names = []
    ...     def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
    ...         self.names.append(func.name())
    ...         return func(*args, **(kwargs or {}))
    >>> x = turnout.ones(2)
    >>> with Count() as c:
    ...     y = x * 2 + x
    >>> c.names
    ['aten::mul.Tensor', 'aten::add.Tensor']
    >>> y
    tensor([3., 3.])
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from turnout import _C

__all__ = ["DispatchMode", "active_modes", "enable_reentrant_dispatch",
           "no_dispatch"]


class DispatchMode:
    """A context manager that receives every operator call while active.

    Override :meth:`__turnout_dispatch__`. Inside it this mode is popped, so
    ``func(*args, **kwargs)`` goes on to the mode below it (modes nest: the
    innermost sees a call first) or to the real kernel. Modes are per
    thread: a mode entered on one thread does not see another thread's
    calls.

    Raises:
        RuntimeError: on ``__enter__``, when ``__turnout_dispatch__`` is a
            classmethod (as torch's modes); on ``__exit__``, when this mode
            is not the innermost active one (modes must be left in reverse
            order of entry).

    Example::

        >>> import turnout
        >>> from turnout.utils import DispatchMode
        >>> class Double(DispatchMode):
        ...     def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
        ...         out = func(*args, **(kwargs or {}))
        ...         if func is turnout.ops.aten.relu.default:
        ...             return out * 2
        ...         return out
        >>> with Double():
        ...     turnout.tensor([-1.0, 3.0]).relu()
        tensor([0., 6.])
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if (getattr(cls, "__torch_dispatch__", None) is not None
                and cls.__turnout_dispatch__ is DispatchMode.__turnout_dispatch__):
            _warn_torch_dispatch(cls, "mode")

    def __turnout_dispatch__(self, func: Any, types: Tuple[type, ...],
                             args: Sequence[Any] = (),
                             kwargs: Optional[Dict[str, Any]] = None) -> Any:
        """Handles one call; the default runs it unchanged."""
        return func(*args, **(kwargs or {}))

    def __enter__(self) -> "DispatchMode":
        # As torch's modes: the handler is an instance method (a mode has
        # state); a classmethod one is refused, here before any call.
        if getattr(self.__turnout_dispatch__, "__self__", None) is type(self):
            raise RuntimeError(
                f"{type(self)}'s __turnout_dispatch__ should be a normal "
                f"method, not a class method; drop @classmethod and take "
                f"self")
        _C._push_dispatch_mode(self)
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        stack = _C._dispatch_mode_stack()
        if not stack or stack[-1] is not self:
            innermost = type(stack[-1]).__name__ if stack else "none"
            raise RuntimeError(
                f"DispatchMode.__exit__: {type(self).__name__} is not the "
                f"innermost active dispatch mode (the innermost is "
                f"{innermost}); leave modes in reverse order of entering them")
        _C._pop_dispatch_mode()


def _warn_torch_dispatch(cls: type, what: str) -> None:
    """Warns, once per class (at its definition), that ``cls`` defines
    torch's ``__torch_dispatch__``, which turnout never calls."""
    warnings.warn(
        f"{cls.__module__}.{cls.__qualname__} defines __torch_dispatch__ but "
        f"not __turnout_dispatch__: turnout calls only __turnout_dispatch__, "
        f"so this {what}'s handler would never run. Define "
        f"__turnout_dispatch__ (same arguments: func, types, args, kwargs), "
        f"e.g. __turnout_dispatch__ = __torch_dispatch__",
        UserWarning, stacklevel=3)


def active_modes() -> List[DispatchMode]:
    """This thread's active dispatch modes, innermost last.

    Example::

        >>> from turnout.utils import DispatchMode, active_modes
        >>> m = DispatchMode()
        >>> with m:
        ...     active_modes() == [m]
        True
        >>> active_modes()
        []
    """
    return _C._dispatch_mode_stack()


@contextlib.contextmanager
def no_dispatch() -> Iterator[None]:
    """Skips the ``Python`` key inside the block: no mode and no subclass
    handler sees the calls made there.

    What a handler of a :meth:`turnout.Tensor._make_subclass` tensor uses to
    run the real kernel on its own instances.

    Example::

        >>> import turnout
        >>> from turnout.utils import DispatchMode, no_dispatch
        >>> class Fail(DispatchMode):
        ...     def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
        ...         raise AssertionError("not reached")
        >>> with Fail(), no_dispatch():
        ...     turnout.ones(1) + 1
        tensor([2.])
    """
    with _C._ExcludeDispatchKeyGuard(_C.DispatchKeySet([_C.DispatchKey.Python])):
        yield


@contextlib.contextmanager
def enable_reentrant_dispatch() -> Iterator[None]:
    """Inside a ``__turnout_dispatch__`` handler: runs the block with the
    thread's dispatch key sets as they were when the handled call was made,
    so that the handler's own calls record autograd history (torch's
    ``enable_reentrant_dispatch``, over ``_C._RestorePythonTLSSnapshot``).

    A handler runs below the Autograd key: without this, the operators it
    calls on tensors that require grad record nothing.

    Raises:
        ValueError: outside a handler (no call is being handled).

    Example::

        >>> import turnout
        >>> from turnout.utils import DispatchMode, enable_reentrant_dispatch
        >>> w = turnout.ones(2, requires_grad=True)
        >>> class Grad(DispatchMode):
        ...     def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
        ...         if func is turnout.ops.aten.neg.default:
        ...             self.below = (w * 2).requires_grad
        ...             with enable_reentrant_dispatch():
        ...                 self.restored = (w * 2).requires_grad
        ...         return func(*args, **(kwargs or {}))
        >>> with Grad() as m:
        ...     _ = -turnout.ones(1)
        >>> m.below, m.restored
        (False, True)
    """
    with _C._RestorePythonTLSSnapshot():
        yield
