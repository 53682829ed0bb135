"""Is my operator right? turnout.library.opcheck on three operators: one
right, one whose kernel writes into an argument its schema says it only
reads, and one whose Meta kernel disagrees with its CPU kernel.

Run it with ``bazel run //examples:opcheck``, or with Debian's
``/usr/bin/python3 examples/opcheck.py`` once turnout is installed
(``bazel run //:install_python``). README.md ("Is my operator right?")
shows its output, and //tests/python:opcheck_example_test checks that the
two agree.
"""

from __future__ import annotations

import turnout
from turnout.library import Library, opcheck


def scale_cpu(x: turnout.Tensor, factor: float) -> turnout.Tensor:
    """Right: a new tensor, as the schema says."""
    return x * factor


def scale_meta(x: turnout.Tensor, factor: float) -> turnout.Tensor:
    return turnout.empty_like(x)


def scale_backward(ctx, grad: turnout.Tensor):
    return grad * ctx.factor, None


def scale_setup(ctx, inputs, output) -> None:
    ctx.factor = inputs[1]


def scale_twice_backward(ctx, grad: turnout.Tensor):
    return grad * (2 * ctx.factor), None


def scale_twice_cpu(x: turnout.Tensor, factor: float) -> turnout.Tensor:
    """Wrong: scales its argument in place, though the schema reads 'Tensor x'."""
    x.mul_(factor)
    return x * 2


def flatten_cpu(x: turnout.Tensor) -> turnout.Tensor:
    return x.reshape(-1).clone()


def flatten_setup(ctx, inputs, output) -> None:
    ctx.shape = list(inputs[0].shape)


def flatten_backward(ctx, grad: turnout.Tensor):
    return grad.reshape(ctx.shape)


def flatten_meta(x: turnout.Tensor) -> turnout.Tensor:
    """Wrong: keeps the input's shape."""
    return turnout.empty_like(x)


def main() -> None:
    lib = Library("checked", "DEF")
    lib.define("scale(Tensor x, float factor) -> Tensor")
    lib.impl("scale", scale_cpu, "CPU")
    lib.impl("scale", scale_meta, "Meta")
    turnout.library.register_autograd("checked::scale", scale_backward,
                                      setup_context=scale_setup, lib=lib)
    lib.define("scale_twice(Tensor x, float factor) -> Tensor")
    lib.impl("scale_twice", scale_twice_cpu, "CPU")
    lib.impl("scale_twice", scale_meta, "Meta")
    turnout.library.register_autograd("checked::scale_twice", scale_twice_backward,
                                      setup_context=scale_setup, lib=lib)
    lib.define("flatten(Tensor x) -> Tensor")
    lib.impl("flatten", flatten_cpu, "CPU")
    lib.impl("flatten", flatten_meta, "Meta")
    turnout.library.register_autograd("checked::flatten", flatten_backward,
                                      setup_context=flatten_setup, lib=lib)

    x = turnout.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    for name, args in [("checked::scale", (x, 3.0)),
                       ("checked::scale_twice", (x, 3.0)),
                       ("checked::flatten", (x,))]:
        print(f"== {name} ==")
        result = opcheck(name, args, raise_exception=False)
        for test, verdict in result.items():
            print(f"{test}: {verdict}")
    lib._destroy()


if __name__ == "__main__":
    main()
