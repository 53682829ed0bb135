"""A dispatch mode that logs every operator call with its arguments' shapes.

Run it with ``bazel run //examples:logging_mode``, or with Debian's
``/usr/bin/python3 examples/logging_mode.py`` once turnout is installed
(``bazel run //:install_python``). It prints one line per call that reaches
the dispatcher's ``Python`` key, after autograd, so composite operators show
as the calls they decompose into (``matmul`` as ``mm``)::

    aten::ones([2, 3], device=device(type='cpu'), pin_memory=False) -> Tensor[2, 3]
    aten::mm(Tensor[2, 3], Tensor[3, 2]) -> Tensor[2, 2]
    ...
"""

from __future__ import annotations

import sys
from typing import Any, Dict, Optional, Sequence, TextIO

import turnout
from turnout._mode import DispatchMode


def describe(value: Any) -> str:
    """A tensor as ``Tensor[2, 3]`` (its shape), a list or tuple element by
    element, anything else as its repr."""
    if isinstance(value, turnout.Tensor):
        return f"Tensor{list(value.shape)}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(describe(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    return repr(value)


class LoggingMode(DispatchMode):
    """Writes ``op(arguments) -> result`` for every call, then runs it.

    Args:
        out: where the lines go (standard output by default).

    Example::

        >>> import io, turnout
        >>> log = io.StringIO()
        >>> x = turnout.ones(2, 2)
        >>> with LoggingMode(log):
        ...     y = x.relu()
        >>> print(log.getvalue(), end="")
        aten::relu(Tensor[2, 2]) -> Tensor[2, 2]
    """

    def __init__(self, out: Optional[TextIO] = None) -> None:
        self.out = out if out is not None else sys.stdout

    def __turnout_dispatch__(self, func: Any, types: Sequence[type],
                             args: Sequence[Any] = (),
                             kwargs: Optional[Dict[str, Any]] = None) -> Any:
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        parts = [describe(a) for a in args]
        parts += [f"{k}={describe(v)}" for k, v in kwargs.items()]
        self.out.write(f"{func.name()}({', '.join(parts)}) -> "
                       f"{describe(result)}\n")
        return result


def main() -> None:
    with LoggingMode():
        a = turnout.ones(2, 3)
        b = turnout.full([3, 2], 0.5)
        c = (a @ b - 1).relu()
        total = c.sum()
    print(f"total: {total.item()}")


if __name__ == "__main__":
    main()
