"""Tensor.register_hook, retain_grad and retains_grad against torch 1.13:
which gradients the hooks see, what replacing one does, their order, and
what grad() captures."""

import gc

import pytest
import torch

import turnout


def _both(case):
    return case(turnout), case(torch)


def _l(t):
    return None if t is None else t.tolist()


def test_non_leaf_hooks_and_retain_grad_in_order():
    def case(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 3
        y.retain_grad()
        y.register_hook(lambda g: g * 2)  # after retain_grad: .grad sees g
        (y * y).sum().backward()
        return _l(y.grad), _l(x.grad), y.retains_grad, x.retains_grad
    ours, theirs = _both(case)
    assert ours == theirs == ([6.0, 6.0], [36.0, 36.0], True, False)


def test_leaf_hooks_see_and_replace_the_gradient_before_accumulation():
    def case(lib):
        x = lib.ones(2, requires_grad=True)
        seen = []
        x.register_hook(lambda g: seen.append(g.tolist()))  # None: keeps it
        x.register_hook(lambda g: g + 1)
        (x * 2).sum().backward()
        (x * 2).sum().backward()
        return _l(x.grad), seen
    ours, theirs = _both(case)
    assert ours == theirs == ([6.0, 6.0], [[2.0, 2.0], [2.0, 2.0]])


def test_removed_hook_is_not_called():
    def case(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 3
        y.register_hook(lambda g: g * 10).remove()
        h = x.register_hook(lambda g: g * 10)
        h.remove()
        h.remove()  # twice: nothing
        y.sum().backward()
        return _l(x.grad)
    ours, theirs = _both(case)
    assert ours == theirs == [3.0, 3.0]


def test_grad_captures_before_the_inputs_hooks():
    def case(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 3
        y.register_hook(lambda g: g * 10)
        gy, gx = lib.autograd.grad(y.sum(), [y, x])
        x2 = lib.ones(2, requires_grad=True)
        x2.register_hook(lambda g: g * 10)
        (g2,) = lib.autograd.grad((x2 * 2).sum(), [x2])
        return _l(gy), _l(gx), _l(g2), x2.grad
    ours, theirs = _both(case)
    assert ours == theirs == ([1.0, 1.0], [30.0, 30.0], [2.0, 2.0], None)


def test_retained_grad_accumulates_over_backward_calls():
    def case(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 3
        y.retain_grad()
        y.retain_grad()  # twice: one hook
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        leaf = lib.ones(1, requires_grad=True)
        leaf.retain_grad()
        return _l(y.grad), leaf.retains_grad
    ours, theirs = _both(case)
    assert ours == theirs == ([2.0, 2.0], False)


@pytest.mark.parametrize("what", ["no grad", "retain no grad", "bad shape",
                                  "bad return", "raises"])
def test_errors_as_torch(what):
    def case(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 3
        try:
            if what == "no grad":
                lib.ones(2).register_hook(lambda g: g)
            elif what == "retain no grad":
                lib.ones(2).retain_grad()
            else:
                hook = {"bad shape": lambda g: lib.ones(3),
                        "bad return": lambda g: 3,
                        "raises": lambda g: 1 / 0}[what]
                y.register_hook(hook)
                y.sum().backward()
        except Exception as e:  # noqa: BLE001 -- compared with torch's
            return type(e).__name__ if not isinstance(e, RuntimeError) else "RuntimeError"
        return "ok"
    ours, theirs = _both(case)
    assert ours == theirs != "ok"


def test_a_hook_does_not_keep_its_tensor_alive():
    x = turnout.ones(2, requires_grad=True)
    y = x * 3
    y.retain_grad()
    y.register_hook(lambda g: None)
    before = len(gc.get_objects())
    for _ in range(200):
        z = x * 3
        z.retain_grad()
        z.register_hook(lambda g: None)
    del z
    gc.collect()
    assert len(gc.get_objects()) - before < 50
