"""torch 1.13's ``torch.utils._python_dispatch`` under turnout's names, so
that a dispatch mode written for torch ports by renaming ``torch`` to
``turnout`` and ``__torch_dispatch__`` to ``__turnout_dispatch__``:
``TorchDispatchMode`` is :class:`turnout.utils.DispatchMode`, and the
mode-stack helpers work on this thread's stack of active modes.

Example::

    >>> import turnout
    >>> from turnout.utils._python_dispatch import (
    ...     TorchDispatchMode, _get_current_dispatch_mode)
    >>> class Names(TorchDispatchMode):
    ...     def __init__(self):
    ...         self.seen = []
    ...     def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
    ...         self.seen.append(str(func))
    ...         return func(*args, **(kwargs or {}))
    >>> x = turnout.ones(2)
    >>> with Names() as m:
    ...     assert _get_current_dispatch_mode() is m
    ...     y = x.neg()
    >>> m.seen
    ['aten.neg.default']
    >>> _get_current_dispatch_mode() is None
    True
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, List, Optional

from turnout import _C
from turnout._mode import DispatchMode

__all__ = ["TorchDispatchMode"]

#: torch's name for :class:`turnout.utils.DispatchMode`.
TorchDispatchMode = DispatchMode


def _get_current_dispatch_mode() -> Optional[Any]:
    """The innermost active mode of this thread, or None."""
    stack = _C._dispatch_mode_stack()
    return stack[-1] if stack else None


def _get_current_dispatch_mode_stack() -> List[Any]:
    """This thread's active modes, innermost last (a new list)."""
    return list(_C._dispatch_mode_stack())


def _len_torch_dispatch_stack() -> int:
    """How many modes are active on this thread."""
    return len(_C._dispatch_mode_stack())


def _get_dispatch_stack_at(i: int) -> Any:
    """The mode at position `i` of this thread's stack (0: the outermost)."""
    return _C._dispatch_mode_stack()[i]


def _push_mode(mode: Any, k: Any = None) -> None:
    """Makes `mode` the innermost active mode of this thread. `k` (torch's
    per-key stacks) must be None: turnout's modes sit at the Python key."""
    if k is not None:
        raise ValueError(
            f"_push_mode(mode, k={k!r}): turnout keeps one mode stack, at the "
            "Python key; call _push_mode(mode)")
    _C._push_dispatch_mode(mode)


def _pop_mode(k: Any = None) -> Any:
    """Removes and returns the innermost active mode of this thread; raises
    RuntimeError, as torch, when none is active."""
    if k is not None:
        raise ValueError(
            f"_pop_mode(k={k!r}): turnout keeps one mode stack, at the Python "
            "key; call _pop_mode()")
    if not _C._dispatch_mode_stack():
        raise RuntimeError(
            "_pop_mode(): no dispatch mode is active on this thread (enter "
            "one with `with mode:` or _push_mode(mode) first)")
    return _C._pop_dispatch_mode()


@contextlib.contextmanager
def _pop_mode_temporarily(k: Any = None) -> Iterator[Any]:
    """Pops the innermost mode for the `with` block and pushes it back after
    it, whatever happens; yields the popped mode."""
    old = _pop_mode(k)
    try:
        yield old
    finally:
        _push_mode(old)
