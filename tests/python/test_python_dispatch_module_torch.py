"""turnout.utils._python_dispatch against torch 1.13's
torch.utils._python_dispatch (issue 18: dispatch modes written for torch
port by renaming): the same mode code, written once over the library's
module, run on torch with ``__torch_dispatch__`` and on turnout with
``__turnout_dispatch__``, comparing what the handlers saw (the logged
operators and stack depths, the current mode) and the results."""

import doctest
import importlib

import pytest

import turnout
from turnout.utils import _python_dispatch as tpd

torch = pytest.importorskip("torch")
import torch.utils._python_dispatch as torch_pd  # noqa: E402


def run(lib, pd, handler_name):
    log = []

    def handler(self, func, types, args=(), kwargs=None):
        # While a handler runs, its mode is off the stack (both libraries).
        current = pd._get_current_dispatch_mode()
        log.append((self.name, str(func), pd._len_torch_dispatch_stack(),
                    None if current is None else current.name))
        return func(*args, **(kwargs or {}))

    Mode = type("Mode", (pd.TorchDispatchMode,), {
        handler_name: handler,
        "__init__": lambda self, name: setattr(self, "name", name)})

    x = lib.tensor([1.0, -2.0, 3.0])
    y = lib.tensor([0.5, 0.5, 0.5])
    out = []
    assert pd._get_current_dispatch_mode() is None
    with Mode("outer") as outer:
        assert pd._get_current_dispatch_mode() is outer
        assert pd._get_current_dispatch_mode_stack() == [outer]
        with Mode("inner") as inner:
            assert pd._get_current_dispatch_mode_stack() == [outer, inner]
            assert pd._get_dispatch_stack_at(0) is outer
            out.append((x * y).neg().tolist())
        out.append((x + y).tolist())
    with Mode("a"), Mode("b"):
        # Calls made with the innermost mode popped reach the others only.
        with pd._pop_mode_temporarily() as popped:
            assert popped.name == "b"
            assert pd._len_torch_dispatch_stack() == 1
            out.append((x - y).tolist())
        assert pd._get_current_dispatch_mode() is popped
    assert pd._len_torch_dispatch_stack() == 0

    m = Mode("pushed")
    pd._push_mode(m)
    try:
        out.append(x.abs().tolist())
    finally:
        assert pd._pop_mode() is m
    with pytest.raises(RuntimeError):
        pd._pop_mode()
    return log, out


def test_modes_written_for_torch_see_and_return_the_same():
    assert run(turnout, tpd, "__turnout_dispatch__") == run(
        torch, torch_pd, "__torch_dispatch__")


def test_torch_dispatch_mode_is_dispatch_mode():
    assert tpd.TorchDispatchMode is turnout.utils.DispatchMode


def test_per_key_stacks_are_refused_with_a_fix():
    with pytest.raises(ValueError, match="one mode stack"):
        tpd._push_mode(tpd.TorchDispatchMode(), k="CPU")
    with pytest.raises(ValueError, match="one mode stack"):
        tpd._pop_mode(k="CPU")


def test_docstring_examples():
    module = importlib.import_module("turnout.utils._python_dispatch")
    failures, tried = doctest.testmod(module)
    assert tried > 0 and failures == 0


def reads(lib, pd, handler_name):
    """What a logging mode sees while Python reads values: item() and the
    number conversions (torch: _local_scalar_dense), iteration (one
    unbind), `in`, all()/any(), tolist() (nothing)."""
    log = []

    def handler(self, func, types, args=(), kwargs=None):
        log.append(str(func))
        return func(*args, **(kwargs or {}))

    Mode = type("Mode", (pd.TorchDispatchMode,), {handler_name: handler})
    x = lib.tensor([1.5, -2.0])
    s = lib.tensor(3.0)
    g = lib.tensor([1.0, 2.0], requires_grad=True)
    cases = {
        "item": lambda: s.item(), "float": lambda: float(s),
        "bool": lambda: bool(s), "int": lambda: int(s),
        "tolist": lambda: x.tolist(), "tolist_grad": lambda: g.tolist(),
        "iter": lambda: [float(v) for v in x], "in": lambda: 1.5 in x,
        "all": lambda: bool((x == x).all()), "any": lambda: bool((x > 5).any()),
        "is_floating_point": lambda: x.is_floating_point(),
        "len": lambda: len(x), "shape": lambda: tuple(x.shape),
    }
    out = {}
    for name, read in cases.items():
        log.clear()
        with Mode():
            value = read()
        out[name] = (list(log), value)
    return out


def test_reading_values_logs_what_torch_logs():
    assert reads(turnout, tpd, "__turnout_dispatch__") == reads(
        torch, torch_pd, "__torch_dispatch__")
