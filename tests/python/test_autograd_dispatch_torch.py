"""Autograd as a Python-dispatch user porting torch 1.13 code sees it,
against torch 1.13:

- the aten.detach call a mode (or a subclass's handler) sees when an
  operator's backward saves its output (exp, tanh, sigmoid, ...; not sin,
  which saves its input), and when backward unpacks that output again;
- ``Tensor._is_view()`` and ``Tensor._base``;
- ``Tensor.data = value`` (torch's set_data): the tensor takes the value's
  memory, dtype and shape and keeps its identity, grad, hooks and version
  counter; its errors change nothing.

Each case runs the same code on both libraries and compares logs and
results."""

import warnings

import pytest
import torch

import turnout
from turnout._mode import DispatchMode
from torch.utils._python_dispatch import TorchDispatchMode


def _mode(lib, log):
    def handler(self, func, types, args=(), kwargs=None):
        log.append(str(func).replace("aten.", ""))
        return func(*args, **(kwargs or {}))
    if lib is torch:
        return type("M", (TorchDispatchMode,), {"__torch_dispatch__": handler})()
    return type("M", (DispatchMode,), {"__turnout_dispatch__": handler})()


def _no_grad_exp(L, x):
    with L.no_grad():
        return x.exp()


def _clone_then(op):
    def run(L, x, m):
        y = x.clone()
        getattr(y, op)()
        return y
    return run


def _grad(create_graph, op="exp"):
    def run(L, x):
        y = getattr(x, op)()
        return L.autograd.grad(y.sum(), x, create_graph=create_graph)[0]
    return run


# Run under a logging mode, x = [3] floats requiring grad, m = [3, 4] too.
SAVED_OUTPUT = {
    # The backward saves the output: one detach after the operator.
    "exp": lambda L, x, m: x.exp(),
    "tanh": lambda L, x, m: x.tanh(),
    "sigmoid": lambda L, x, m: x.sigmoid(),
    "sqrt": lambda L, x, m: x.sqrt(),
    "rsqrt": lambda L, x, m: x.rsqrt(),
    "reciprocal": lambda L, x, m: x.reciprocal(),
    "relu": lambda L, x, m: x.relu(),
    "max all": lambda L, x, m: x.max(),
    "softmax": lambda L, x, m: m.softmax(1),
    "log_softmax": lambda L, x, m: m.log_softmax(1),
    "exp then exp": lambda L, x, m: x.exp().exp(),
    "exp float64": lambda L, x, m: x.double().exp(),
    # In place: the saved output is self, after the write.
    "exp_ on a clone": _clone_then("exp_"),
    "sigmoid_ on a clone": _clone_then("sigmoid_"),
    # Only inputs saved, or nothing recorded: no detach.
    "sin": lambda L, x, m: x.sin(),
    "mul": lambda L, x, m: x * x,
    "exp of a tensor not requiring grad": lambda L, x, m: x.detach().exp(),
    "exp under no_grad": lambda L, x, m: _no_grad_exp(L, x),
    "exp_ on a fresh tensor": lambda L, x, m: L.ones(3).exp_(),
    # Outputs the node does not attach (indices, statistics): no detach.
    "max dim": lambda L, x, m: m.max(1),
    "native_layer_norm": lambda L, x, m: L.ops.aten.native_layer_norm(
        m, [4], None, None, 1e-5),
    "nll_loss_forward": lambda L, x, m: L.ops.aten.nll_loss_forward(
        m, L.tensor([0, 1, 2]), None, 1, -100),
    # Backward unpacks the saved output: one detach more, before its use.
    "grad of exp": lambda L, x, m: _grad(False)(L, x),
    "grad of exp, create_graph": lambda L, x, m: _grad(True)(L, x),
    "grad of sin": lambda L, x, m: _grad(False, "sin")(L, x),
    # tanh's and sigmoid's formulas call tanh_backward / sigmoid_backward:
    # the mode sees them, and a first gradient taken with create_graph is
    # their node (TanhBackwardBackward0, SigmoidBackwardBackward0).
    # reshape of a tensor it cannot view: _unsafe_view(clone), whose node is
    # UnsafeViewBackward0.
    "reshape copying": lambda L, x, m: m.t().reshape(12),
    "_unsafe_view": lambda L, x, m: L.ops.aten._unsafe_view(m, [2, 6]),
    "grad of tanh": lambda L, x, m: _grad(False, "tanh")(L, x),
    "grad of tanh, create_graph": lambda L, x, m: _grad(True, "tanh")(L, x),
    "grad of sigmoid": lambda L, x, m: _grad(False, "sigmoid")(L, x),
    "grad of sigmoid, create_graph": lambda L, x, m: _grad(True, "sigmoid")(L, x),
    "grad of tanh_, create_graph": lambda L, x, m: L.autograd.grad(
        x.clone().tanh_().sum(), x, create_graph=True)[0],
    "grad of sigmoid_": lambda L, x, m: L.autograd.grad(
        x.clone().sigmoid_().sum(), x)[0],
    "grad of grad of tanh": lambda L, x, m: L.autograd.grad(
        _grad(True, "tanh")(L, x).sum(), x)[0],
    "grad of grad of sigmoid": lambda L, x, m: L.autograd.grad(
        _grad(True, "sigmoid")(L, x).sum(), x)[0],
}


def _run_logged(lib, name):
    lib.manual_seed(0)
    x = lib.rand(3, dtype=lib.float32) + 0.5
    x.requires_grad_()
    m = (lib.rand(3, 4) + 0.5).requires_grad_()
    log = []
    with _mode(lib, log):
        r = SAVED_OUTPUT[name](lib, x, m)
    rs = r if isinstance(r, tuple) else (r,)
    return log, [(t.requires_grad, t._grad_fn_name if lib is turnout else
                  (type(t.grad_fn).__name__ if t.grad_fn else None))
                 for t in rs]


@pytest.mark.parametrize("name", sorted(SAVED_OUTPUT))
def test_mode_sees_the_detach_of_a_saved_output_as_torchs(name):
    ours, theirs = _run_logged(turnout, name), _run_logged(torch, name)
    assert ours == theirs


def test_saved_output_still_checks_in_place_writes_and_gives_exp_grad():
    def case(L):
        x = L.tensor([0.0, 1.0], requires_grad=True)
        log = []
        with _mode(L, log):
            y = x.exp()
            g = L.autograd.grad(y.sum(), x, retain_graph=True)[0]
            y.add_(1)
            try:
                y.sum().backward()
                err = None
            except RuntimeError as e:
                err = "modified by an inplace operation" in str(e)
        return log, [round(v, 4) for v in g.tolist()], err
    assert case(turnout) == case(torch)


def _subclass(L, log):
    """A subclass whose handler logs, runs the call with super() and wraps
    tensor results in the subclass again."""
    handler_name = "__torch_dispatch__" if L is torch else "__turnout_dispatch__"

    def handler(cls, func, types, args=(), kwargs=None):
        log.append(str(func).replace("aten.", ""))
        out = getattr(super(sub, cls), handler_name)(func, types, args, kwargs)
        if isinstance(out, L.Tensor) and not isinstance(out, sub):
            out = L.Tensor._make_subclass(sub, out)
        return out

    extra = ({"__torch_function__": torch._C._disabled_torch_function_impl}
             if L is torch else {})
    sub = type("Logged", (L.Tensor,),
               {handler_name: classmethod(handler), **extra})
    return sub


def test_subclass_handler_sees_the_detach_of_a_saved_output():
    def case(L):
        log = []
        sub = _subclass(L, log)
        s = L.Tensor._make_subclass(sub, L.tensor([0.5, 1.0]), True)
        y = s.exp()
        z = s.sin()
        g = L.autograd.grad(y.sum(), s)[0]
        return log, type(y).__name__, type(z).__name__, type(g).__name__
    ours, theirs = case(turnout), case(torch)
    assert ours == theirs
    assert theirs[0][:3] == ["exp.default", "detach.default", "sin.default"]


# ---- Accumulation into .grad ---------------------------------------------------

def _twice(L, x, first, second, **kw):
    first(L, x).sum().backward(**kw)
    g = x.grad
    second(L, x).sum().backward(**kw)
    return g is x.grad


def _seeded(L, x):
    x.grad = L.ones(3)
    g = x.grad
    (x * 2).sum().backward()
    return g is x.grad


def _hooked(L, x):
    x.register_hook(lambda g: g * 1)
    (x * 2).sum().backward()


def _post_hooked(L, x):
    y = x * 1
    y.grad_fn.next_functions[0][0].register_hook(lambda *a: None)
    (y * 2).sum().backward()


def _kept_alive(L, x):
    # The gradient given to backward reaches the leaf unchanged: the caller
    # still holds it, so .grad is a copy.
    v = L.ones(3)
    (x + 0).backward(v)
    return x.grad is v, x.grad.tolist() == v.tolist()


# Run under a logging mode with x = [3] floats requiring grad (a leaf);
# each returns what it checks of .grad's identity, if anything.
ACCUMULATE = {
    # First gradient, not held elsewhere, x's layout, no create_graph: kept
    # as it is (torch: two detach calls).
    "one backward": lambda L, x: (x * 2).sum().backward(),
    "x * x (two gradients summed first)": lambda L, x: (x * x).sum().backward(),
    "exp (a saved output)": lambda L, x: x.exp().sum().backward(),
    "leaf hook": _hooked,
    "AccumulateGrad post hook": _post_hooked,
    # Later gradients: added in place, .grad stays the same tensor.
    "two backwards": lambda L, x: _twice(L, x, lambda L, x: x * 2, lambda L, x: x * 3),
    "retain_graph twice": lambda L, x: _retained(L, x),
    "a .grad set by hand": _seeded,
    # With create_graph: a copy first, then out of place (a new .grad).
    "create_graph once": lambda L, x: (x * 2).sum().backward(create_graph=True),
    "create_graph twice": lambda L, x: _twice(L, x, lambda L, x: x * 2,
                                              lambda L, x: x.exp(), create_graph=True),
    "create_graph, then plain": lambda L, x: _cg_then_plain(L, x),
    # A gradient that may not be kept: an expanded one, one the caller holds.
    "sum (an expanded gradient)": lambda L, x: x.sum().backward(),
    "a gradient the caller holds": _kept_alive,
}


def _retained(L, x):
    y = x * 2
    y.sum().backward(retain_graph=True)
    g = x.grad
    y.sum().backward()
    return g is x.grad


def _cg_then_plain(L, x):
    x.exp().sum().backward(create_graph=True)
    g = x.grad
    x.exp().sum().backward()
    return g is x.grad, x.grad.requires_grad, x.grad.grad_fn is not None


# turnout's copy of a gradient into .grad's layout is empty_like + copy_
# where torch 1.13's is new_empty_strided + copy_ (an operator turnout has,
# not used there yet). And torch's Python backward() checks a given
# gradient's shape with is_same_size, which turnout's does in C++.
_TORCH_ONLY = {"new_empty_strided.default": "empty_like.default",
               "is_same_size.default": None}


def _accumulated(L, name):
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    log = []
    with _mode(L, log):
        seen = ACCUMULATE[name](L, x)
    if L is torch:
        log = [_TORCH_ONLY.get(f, f) for f in log if _TORCH_ONLY.get(f, f)]
    return (log, seen, x.grad.tolist(), x.grad.requires_grad, x.grad._is_view(),
            x.grad._base is None)


@pytest.mark.parametrize("name", sorted(ACCUMULATE))
def test_accumulation_into_grad_as_torchs(name):
    """What a mode sees while backward() accumulates into a leaf's .grad
    (detach for a gradient kept as it is, add_ in place, add out of place
    under create_graph, a copy where the gradient may not be kept), and
    whether .grad stays the same tensor, as torch 1.13."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # backward(create_graph=True)'s
        ours, theirs = _accumulated(turnout, name), _accumulated(torch, name)
    assert ours == theirs


# ---- _is_view() and _base ------------------------------------------------------

# reshape's copy path is torch 1.13's _unsafe_view(clone): not a view
# ("reshape (a copy)"), as _unsafe_view itself.
VIEWS = {
    "view": lambda L, s: s.view(12),
    "view of a view": lambda L, s: s.view(12).view(3, 4),
    "slice": lambda L, s: s[1:],
    "select": lambda L, s: s[0],
    "index list (a copy)": lambda L, s: s[[0]],
    "detach": lambda L, s: s.detach(),
    "data": lambda L, s: s.data,
    "t": lambda L, s: s.t(),
    "transpose": lambda L, s: s.transpose(0, 1),
    "permute": lambda L, s: s.permute(1, 0),
    "expand": lambda L, s: s[0:1].expand(2, 4),
    "reshape as a view": lambda L, s: s.reshape(12),
    "reshape (a copy)": lambda L, s: s.t().reshape(12),
    "reshape of a copy, reshaped again": lambda L, s: s.t().reshape(12).reshape(3, 4),
    "_unsafe_view": lambda L, s: L.ops.aten._unsafe_view(s, [4, 3]),
    "contiguous (itself)": lambda L, s: s.contiguous(),
    "contiguous (a copy)": lambda L, s: s.t().contiguous(),
    "flatten": lambda L, s: s.flatten(),
    "split": lambda L, s: s.split(2),
    "unbind": lambda L, s: s.unbind(),
    "chunk": lambda L, s: s.chunk(2),
    "narrow": lambda L, s: s.narrow(0, 0, 1),
    "diagonal": lambda L, s: s.diagonal(),
    "unsqueeze": lambda L, s: s.unsqueeze(0),
    "squeeze": lambda L, s: s[0:1].squeeze(),
    "squeeze dim": lambda L, s: s[0:1].squeeze(0),
    "as_strided": lambda L, s: s.as_strided((2,), (1,)),
    "view_as": lambda L, s: s.view_as(s),
    "movedim": lambda L, s: s.movedim(0, 1),
    "T": lambda L, s: s.T,
    "unflatten": lambda L, s: s.unflatten(1, (2, 2)),
    "clone": lambda L, s: s.clone(),
    "to the same dtype (itself)": lambda L, s: s.to(L.float32),
    "to another dtype": lambda L, s: s.to(L.float64),
    "exp": lambda L, s: s.exp(),
    "view of a detached tensor": lambda L, s: s.detach().view(12),
}


def _views(L, name, requires_grad, no_grad=False):
    s = L.ones(3, 4, requires_grad=requires_grad)
    if no_grad:
        with L.no_grad():
            out = VIEWS[name](L, s)
    else:
        out = VIEWS[name](L, s)
    outs = out if isinstance(out, (tuple, list)) else [out]
    return [(o._is_view(), None if o._base is None else
             "s" if o._base is s else "another") for o in outs]


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name", sorted(VIEWS))
def test_is_view_and_base_as_torchs(name, requires_grad):
    assert _views(turnout, name, requires_grad) == _views(
        torch, name, requires_grad)


@pytest.mark.parametrize("name", ["view", "slice", "split", "t"])
def test_views_made_under_no_grad_keep_their_base(name):
    assert _views(turnout, name, True, True) == _views(torch, name, True, True)


def test_base_survives_in_place_and_metadata_ops():
    def case(L):
        x = L.zeros(3, 4)
        v = x[1:]
        v.add_(1)
        w = x.view(12)
        x.mul_(2)
        base_alive = v._base is x and w._base is x
        leaf = L.ones(3, requires_grad=True)[0]
        return (base_alive, v._is_view(), x._is_view(), leaf.is_leaf,
                leaf._base is None)
    assert case(turnout) == case(torch)


# ---- Tensor.data = value ----------------------------------------------------------


def _dt(t):
    return str(t.dtype).split(".")[-1]


def _set_data_param(L):
    p = L.ones(4, requires_grad=True)
    flat = L.zeros(10)
    seen = []
    p.register_hook(lambda g: seen.append(g.tolist()))
    before = id(p)
    p.grad = L.full((4,), 5.0)
    p.data = flat[2:6]
    p.data.add_(1)     # written through p: flat sees it
    (p * 2).sum().backward()
    return (id(p) == before, list(p.shape), p.requires_grad, p.is_leaf,
            p.grad.tolist(), seen, flat.tolist(), p._version,
            p._is_view(), p._base is None)


def _set_data_dtype(L):
    x = L.ones(3, requires_grad=True)
    x.data = L.zeros(2, 2, dtype=L.float64)
    y = (x * 3).sum()
    y.backward()
    return _dt(x), list(x.shape), x.grad.tolist(), _dt(x.grad)


def _set_data_int_no_grad(L):
    x = L.ones(3)
    x.data = L.arange(5)
    return _dt(x), x.tolist(), x.requires_grad


def _set_data_value_requires_grad(L):
    x = L.ones(3, requires_grad=True)
    v = L.full((2,), 2.0, requires_grad=True)
    x.data = v
    return x.requires_grad, x.tolist(), x.data.requires_grad, x.is_leaf


def _set_data_non_leaf(L):
    x = L.ones(3, requires_grad=True)
    y = x * 2
    y.data = L.zeros(4)
    return y.is_leaf, list(y.shape), y.requires_grad


def _set_data_versions(L):
    x = L.ones(3)
    v = L.zeros(3)
    v.add_(1)
    v.add_(1)
    x.add_(1)
    x.data = v
    after = (x._version, v._version)
    x.add_(1)
    return after, (x._version, v._version), v.tolist()


def _set_data_saved_input(L):
    x = L.ones(3, requires_grad=True)
    y = x * x
    x.data = L.full((3,), 4.0)
    y.sum().backward()
    return x.grad.tolist()


def _set_data_views_stay(L):
    x = L.zeros(3)
    b = x[1:]
    x.data = L.ones(5)
    y = L.zeros(4)[1:]
    y.data = L.ones(2)
    return b._base is x, x._is_view(), b.tolist(), y._is_view(), y.tolist()


def _set_data_itself(L):
    x = L.arange(3.0)
    x.data = x
    return x.tolist()


def _set_data_subclass_stays(L):
    sub = type("Plain", (L.Tensor,),
               {"__torch_function__": torch._C._disabled_torch_function_impl}
               if L is torch else {})
    s = L.Tensor._make_subclass(sub, L.ones(2))
    s.data = L.zeros(3)
    return type(s).__name__, s.tolist()


def _raises(fn):
    def run(L):
        x = L.ones(3, requires_grad=True)
        x.grad = L.ones(3)
        try:
            fn(L, x)
        except Exception as e:  # noqa: BLE001 -- compared with torch's
            # Nothing changed: same shape, dtype, values, grad.
            kind = ("RuntimeError" if isinstance(e, RuntimeError)
                    else type(e).__name__)
            return (kind, list(x.shape), _dt(x),
                    x.tolist(), x.grad.tolist(), x.requires_grad)
        return "no error"
    return run


def _meta_value(L, x):
    x.data = L.zeros(2, device="meta")


SET_DATA = {
    "param-like": _set_data_param,
    "new dtype and shape": _set_data_dtype,
    "int value, no grad": _set_data_int_no_grad,
    "value requiring grad": _set_data_value_requires_grad,
    "non-leaf": _set_data_non_leaf,
    "version counters": _set_data_versions,
    "a saved input sees the new data": _set_data_saved_input,
    "views stay views": _set_data_views_stay,
    "itself": _set_data_itself,
    "subclass stays": _set_data_subclass_stays,
    "int value on a tensor requiring grad": _raises(
        lambda L, x: setattr(x, "data", L.arange(3))),
    "not a tensor": _raises(lambda L, x: setattr(x, "data", 5)),
    "None": _raises(lambda L, x: setattr(x, "data", None)),
    "meta value for a CPU tensor": _raises(_meta_value),
}


@pytest.mark.parametrize("name", sorted(SET_DATA))
def test_set_data_as_torchs(name):
    assert SET_DATA[name](turnout) == SET_DATA[name](torch)


def test_set_data_error_messages_say_what_and_how():
    x = turnout.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point or complex.*Long"):
        x.data = turnout.arange(3)
    with pytest.raises(TypeError, match="has to be a tensor, but got int"):
        x.data = 5
    with pytest.raises(RuntimeError, match=r"value \(meta.*incompatible tensor types"):
        x.data = turnout.zeros(2, device="meta")
