"""grad_fn's saved values and retain_graph against torch 1.13 as the oracle
(issue 18 item 5): the same code on torch and on turnout, comparing the
``_saved_<name>`` attributes of the backward nodes (names, what they hold),
the error once backward has freed them, and a second backward with and
without ``retain_graph``.
"""

from types import SimpleNamespace

import pytest

import turnout

torch = pytest.importorskip("torch")

TORCH = SimpleNamespace(lib=torch, Tensor=torch.Tensor)
TURNOUT = SimpleNamespace(lib=turnout, Tensor=turnout.Tensor)


def both(case):
    return case(TORCH), case(TURNOUT)


_KINDS = (NotImplementedError, TypeError, IndexError, RuntimeError,
          ValueError, AttributeError)


def outcome(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 -- the kind is what is compared
        kind = next((k for k in _KINDS if isinstance(e, k)), type(e))
        return f"raised {kind.__name__}"


def rounded(values):
    """Nested lists of floats to 5 significant digits, tiny ones to 0 (the
    two libraries' float32 exp may differ in the last bit)."""
    if isinstance(values, list):
        return [rounded(v) for v in values]
    return 0.0 if abs(values) < 1e-6 else float(f"{values:.5g}")


def describe(api, value, known):
    """A saved value as plain data: tensors by shape and by which of the
    case's tensors they are (identity for inputs; outputs are new objects
    in both libraries), sizes as tuples."""
    if isinstance(value, api.Tensor):
        who = next((k for k, t in known.items() if t is value), None)
        return ("tensor", tuple(value.shape), who, rounded(value.tolist()))
    return value


# Operators whose backward node has the same name in both libraries.
CASES = {
    "mul": lambda L, x, w, c: x * c,
    "mul self": lambda L, x, w, c: x * x,
    "add": lambda L, x, w, c: x + c,
    "add alpha": lambda L, x, w, c: L.add(x, c, alpha=3),
    "sub": lambda L, x, w, c: x - c,
    "div": lambda L, x, w, c: x / c,
    "exp": lambda L, x, w, c: x.exp(),
    "log": lambda L, x, w, c: x.log(),
    "sin": lambda L, x, w, c: x.sin(),
    "cos": lambda L, x, w, c: x.cos(),
    "tanh": lambda L, x, w, c: x.tanh(),
    "sigmoid": lambda L, x, w, c: x.sigmoid(),
    "relu": lambda L, x, w, c: x.relu(),
    "sqrt": lambda L, x, w, c: x.sqrt(),
    "abs": lambda L, x, w, c: x.abs(),
    "neg": lambda L, x, w, c: -x,
    "mm": lambda L, x, w, c: x.mm(w),
    "matmul": lambda L, x, w, c: x @ w,
    "bmm": lambda L, x, w, c: x.unsqueeze(0).bmm(w.unsqueeze(0)),
    "addmm": lambda L, x, w, c: L.addmm(L.ones(2), x, w),
    "sum": lambda L, x, w, c: x.sum(),
    "sum dim": lambda L, x, w, c: x.sum(1),
    "mean": lambda L, x, w, c: x.mean(),
    "mean dim": lambda L, x, w, c: x.mean(1, True),
    "softmax": lambda L, x, w, c: x.softmax(1),
}


@pytest.mark.parametrize("name", list(CASES))
def test_saved_values_as_torchs(name):
    def case(api):
        L = api.lib
        x = L.arange(1.0, 7.0).view(2, 3).requires_grad_()
        w = L.arange(1.0, 7.0).view(3, 2).requires_grad_()
        c = L.full((2, 3), 2.0)
        y = CASES[name](L, x, w, c)
        g = y.grad_fn
        names = sorted(n for n in dir(g) if n.startswith("_saved_"))
        known = {"x": x, "w": w, "c": c}
        return (g.name(), names,
                {n: describe(api, getattr(g, n), known) for n in names})
    theirs, ours = both(case)
    assert ours == theirs


@pytest.mark.parametrize("name", ["mul self", "mul", "exp", "mm", "softmax",
                                  "add"])
def test_backward_frees_saved_tensors_unless_retain_graph(name):
    def case(api):
        L = api.lib
        x = L.arange(1.0, 7.0).view(2, 3).requires_grad_()
        w = L.arange(1.0, 7.0).view(3, 2).requires_grad_()
        c = L.full((2, 3), 2.0)
        y = CASES[name](L, x, w, c)
        g = y.grad_fn
        tensors = [n for n in dir(g) if n.startswith("_saved_")
                   and isinstance(getattr(g, n), api.Tensor)]
        values = [n for n in dir(g) if n.startswith("_saved_")
                  and n not in tensors]
        s = y.sum()
        s.backward(retain_graph=True)
        kept = [outcome(lambda: tuple(getattr(g, n).shape)) for n in tensors]
        s.backward()
        freed = [outcome(lambda: getattr(g, n)) for n in tensors]
        still = [getattr(g, n) for n in values]
        again = outcome(lambda: s.backward())
        return kept, freed, still, again, rounded(x.grad.tolist())
    theirs, ours = both(case)
    assert ours == theirs


def test_the_freed_error_is_torchs():
    def case(api):
        x = api.lib.ones(2, requires_grad=True)
        s = (x * x).sum()
        s.backward()
        with pytest.raises(RuntimeError) as info:
            s.backward()
        return str(info.value).split(" (")[0].split(". Specify")[0]
    theirs, ours = both(case)
    assert ours == theirs
    assert theirs.startswith("Trying to backward through the graph a second "
                             "time")


def test_autograd_grad_retain_graph():
    def case(api):
        L = api.lib
        x = L.ones(2, 3, requires_grad=True)
        y = x.exp().sum()
        first = L.autograd.grad(y, [x], retain_graph=True)[0].shape
        second = L.autograd.grad(y, [x])[0].shape
        third = outcome(lambda: L.autograd.grad(y, [x]))
        z = (x * x).sum()
        (gz,) = L.autograd.grad(z, [x], create_graph=True)
        again = L.autograd.grad(z, [x])[0].tolist()  # kept by create_graph
        return (tuple(first), tuple(second), third, again,
                outcome(lambda: L.autograd.backward([(x * x).sum()],
                                                    retain_graph=False)))
    theirs, ours = both(case)
    assert ours == theirs


def test_an_unknown_saved_name_is_an_attribute_error():
    x = turnout.ones(2, requires_grad=True)
    g = (x * x).grad_fn
    with pytest.raises(AttributeError, match="'MulBackward0' object has no "
                       "attribute '_saved_nope'"):
        g._saved_nope  # noqa: B018
