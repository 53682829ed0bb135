"""The Python quickstart: define an operator, give it a CPU kernel written in
Python, call it, watch calls with a dispatch mode, and ask the dispatcher
what each key would run.

Run it with ``bazel run //examples:quickstart_py``, or with Debian's
``/usr/bin/python3 examples/quickstart.py`` once turnout is installed
(``bazel run //:install_python``). README.md ("From Python") shows its
output, and //tests/python:quickstart_test checks that the two agree.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Optional, Sequence

import turnout
from turnout import _C
from turnout.library import Library
from turnout.utils import DispatchMode


class PrintCalls(DispatchMode):
    """A dispatch mode: sees every operator call at the ``Python`` key."""

    def __turnout_dispatch__(self, func: Any, types: Sequence[type],
                             args: Sequence[Any] = (),
                             kwargs: Optional[Dict[str, Any]] = None) -> Any:
        print(f"  call {func.name()} on shapes "
              f"{[list(a.shape) for a in args if isinstance(a, turnout.Tensor)]}")
        return func(*args, **(kwargs or {}))


def scale_cpu(x: turnout.Tensor, factor: float) -> turnout.Tensor:
    """The CPU kernel of quickstart::scale, in Python."""
    return x * factor


def main() -> None:
    # 1. Define an operator by its schema, and register a CPU kernel for it.
    lib = Library("quickstart", "DEF")
    lib.define("scale(Tensor x, float factor=2.0) -> Tensor", tags=("pointwise",))
    lib.impl("scale", scale_cpu, "CPU")
    scale = turnout.ops.quickstart.scale

    # 2. Call it like any operator: schema-checked arguments, defaults filled.
    x = turnout.tensor([1.0, 2.0, 3.0])
    print("scale(x, 10.0) =", scale(x, 10.0))
    print("scale(x)       =", scale(x))
    print("tags:", scale.default.tags)

    # 3. A dispatch mode sees every call made while it is active. (It is
    #    popped while its handler runs, so the kernel's own `x * factor`
    #    goes straight to the CPU kernel.)
    print("with PrintCalls():")
    with PrintCalls():
        scale(x, 0.5)

    # 4. What each dispatch key of the operator runs, and why.
    table = _C._dispatch_dump_table("quickstart::scale")
    # Keep the lines for the keys a CPU call meets; shorten this file's path.
    keep = ("CPU", "AutogradCPU")
    print("dispatch table (excerpt):")
    for line in table.splitlines():
        if line.split(":", 1)[0] in keep:
            print("  " + re.sub(r"\(\S*quickstart\.py", "(quickstart.py", line))

    # 5. Dropping the library deregisters the operator and its kernel.
    lib._destroy()
    print("defined after _destroy():",
          "quickstart::scale" in _C._dispatch_get_all_op_names())


if __name__ == "__main__":
    main()
