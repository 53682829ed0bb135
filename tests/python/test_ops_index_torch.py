"""The shape and indexing operators, advanced indexing and the functional
namespace, against torch 1.13 as the oracle: the same calls on both, and
their values, shapes, strides, storage sharing, gradients, errors, what a
dispatch mode sees, and the schemas."""

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import turnout
from turnout._mode import DispatchMode

# ---- Helpers ---------------------------------------------------------------------


def _lib(lib, obj):
    """`obj` with every numpy array made a tensor of `lib` (turnout or
    torch) and every lambda-free value kept."""
    if isinstance(obj, tuple):
        return tuple(_lib(lib, o) for o in obj)
    if isinstance(obj, list):
        return [_lib(lib, o) for o in obj]
    if isinstance(obj, np.ndarray):
        dtype = {"bool": lib.bool, "int64": lib.int64, "float32": lib.float32,
                 "float64": lib.float64}[str(obj.dtype)]
        return lib.tensor(obj.tolist(), dtype=dtype)
    return obj


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _same_tensor(a, b, check_strides=True):
    assert isinstance(a, turnout.Tensor), type(a)
    assert list(a.shape) == list(b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    if check_strides:
        assert a.stride() == tuple(b.stride())
        assert a.storage_offset() == b.storage_offset()
    np.testing.assert_array_equal(_np(a), _np(b))


def _same(a, b, check_strides=True):
    if isinstance(b, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y, check_strides)
    elif isinstance(b, torch.Tensor):
        _same_tensor(a, b, check_strides)
    else:
        assert a == b


def _x(lib):
    return lib.arange(60).view(3, 4, 5).float()


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001: the oracle's error is the result
        return type(e), str(e)


# torch raises RuntimeError where turnout's InvalidArgumentError is both a
# RuntimeError and a ValueError; turnout's message may add a detail at the
# end ("too many indices for tensor of dimension 3 (got 4)").
def _same_error(mine, theirs):
    assert mine[0] != "ok" and theirs[0] != "ok", (mine, theirs)
    assert issubclass(mine[0], theirs[0]), (mine, theirs)
    assert mine[1].split("\n")[0].startswith(theirs[1].split("\n")[0])


# ---- Advanced indexing: x[key] ------------------------------------------------------

_MASK = np.array([[True, False, True, True], [False] * 4, [True] * 4])
_KEYS = [
    [0, 2],
    (slice(None), [0, 2]),
    (slice(1, None), [0, 2]),
    (0, [0, 2]),
    _MASK,
    (None, [1]),
    (Ellipsis, [1]),
    ([0, 1], slice(None), [1, 2]),
    ([0, 1], 0),
    True,
    False,
    np.array(1),
    np.array(True),
    [True, False, True],
    [[0, 1]],
    [],
    [-1, -3],
    (np.array([[0, 1], [1, 2]]),),
    (slice(None), np.array([True, False, True, True])),
    (Ellipsis, None, [0, 1], 0),
    (np.array([[0], [2]]), np.array([1, 3])),
    (1, slice(None, None, 2), [4, 0]),
]


@pytest.mark.parametrize("key", _KEYS, ids=[repr(k)[:40] for k in _KEYS])
def test_getitem_matches_torch(key):
    x, tx = _x(turnout), _x(torch)
    _same(x[_lib(turnout, key)], tx[_lib(torch, key)])


# torch lays a result out as its operands are (TensorIterator): indexing a
# permuted tensor gives a permuted result.
_PERMUTED = [
    ((2, 0, 1), (slice(None), [0, 1])),
    ((2, 0, 1), ([0, 1],)),
    ((2, 1, 0), (Ellipsis, [2, 0])),
    ((1, 2, 0), (slice(None), [[0], [2]], [1, 2])),
    ((0, 2, 1), ([0, 1], slice(None), [1, 1])),
    ((2, 1, 0), (slice(None), np.array([True, False, True, True]))),
]


@pytest.mark.parametrize("perm,key", _PERMUTED)
def test_getitem_on_permuted_tensors_matches_torch(perm, key):
    x, tx = _x(turnout).permute(*perm), _x(torch).permute(*perm)
    _same(x[_lib(turnout, key)], tx[_lib(torch, key)])
    _same(x[::2][_lib(turnout, key)], tx[::2][_lib(torch, key)])


@pytest.mark.parametrize("key,view", [
    ((0, slice(1, 3)), True), ((None, Ellipsis, 1), True), ([0, 2], False),
    (_MASK, False), ((slice(None), [1]), False),
])
def test_basic_indexing_makes_views_advanced_copies(key, view):
    x, tx = _x(turnout), _x(torch)
    r, tr = x[_lib(turnout, key)], tx[_lib(torch, key)]
    assert (tr._base is not None) == view
    assert (r._base is x) == view and r._is_view() == view
    assert x._shares_storage(r) == view


def _setitem(key, value):
    def run(lib, x):
        x[_lib(lib, key)] = value(lib) if callable(value) else value
        return x
    return run


_SET_CASES = [
    ([0, 2], 1.0),
    (_MASK, 0),
    (_MASK, lambda L: L.arange(5).float()),
    ((slice(None), [0, 2]), lambda L: L.ones(2, 5)),
    ((0, [1, 1]), lambda L: L.ones(5) * 7),
    (0, 3.0),
    (([0, 1], slice(None), [1, 2]), lambda L: L.arange(8).view(2, 4).float()),
    ((Ellipsis, [0]), lambda L: L.zeros(3, 4, 1)),
    (np.array([[0, 1], [2, 0]]), -1.5),
]


@pytest.mark.parametrize("key,value", _SET_CASES,
                         ids=[repr(k)[:40] for k, _ in _SET_CASES])
def test_setitem_matches_torch(key, value):
    x, tx = _x(turnout), _x(torch)
    _setitem(key, value)(turnout, x)
    _setitem(key, value)(torch, tx)
    _same(x, tx)


_INDEX_ERRORS = [
    lambda L, x: x[[5]],
    lambda L, x: x[[-4]],
    lambda L, x: x[L.tensor([1.0])],
    lambda L, x: x[[0], [0], [0], [0]],
    lambda L, x: x[1.5],
    lambda L, x: x[[0, 1], [0, 1, 2]],
    lambda L, x: x[L.ones(2, dtype=L.bool)],
    lambda L, x: x.__setitem__([0], L.tensor([1])),
    lambda L, x: x.__setitem__([0], L.ones(3)),
    lambda L, x: x.__setitem__(L.ones(3, 4, dtype=L.bool), L.ones(2)),
]


@pytest.mark.parametrize("case", _INDEX_ERRORS)
def test_indexing_errors_match_torch(case):
    x, tx = _x(turnout), _x(torch)
    before = x.clone()
    _same_error(_outcome(lambda: case(turnout, x)),
                _outcome(lambda: case(torch, tx)))
    np.testing.assert_array_equal(_np(x), _np(before))  # nothing half-written


def test_indexing_gradients_match_torch():
    def run(lib):
        w = lib.arange(12).view(3, 4).double().requires_grad_()
        y = w * 1.0
        r = y[lib.tensor([[0, 0], [2, 1]])].sum() * 2 + y[y > 5].sum() \
            + y[:, [3, 3]].sum()
        y2 = w * 1.0
        y2[lib.tensor([True, False, True])] = lib.tensor([5.0]).double()
        (r + (y2 * y2).sum()).backward()
        return w.grad
    _same(run(turnout), run(torch))


# ---- Operators -------------------------------------------------------------------------

def _ops_cases():
    m = np.array([[True, False, True, True, False]] * 4)
    return {
        "split int": lambda L, x: L.split(x, 2),
        "split list dim 1": lambda L, x: L.split(x, [1, 3], 1),
        "split method": lambda L, x: x.split(2, -1),
        "split_with_sizes": lambda L, x: L.split_with_sizes(x, [1, 2]),
        "chunk": lambda L, x: L.chunk(x, 2, 1),
        "chunk uneven": lambda L, x: x.chunk(3, 2),
        "chunk empty": lambda L, x: L.chunk(L.zeros(0, 2), 3),
        "unbind": lambda L, x: L.unbind(x, 1),
        "flatten": lambda L, x: L.flatten(x),
        "flatten 1..2": lambda L, x: x.flatten(1, 2),
        "flatten transposed": lambda L, x: L.flatten(x.transpose(0, 1)),
        "flatten 0-dim": lambda L, x: L.flatten(x[0, 0, 0]),
        "diagonal": lambda L, x: L.diagonal(x),
        "diagonal offsets": lambda L, x: x.diagonal(-1, 2, 0),
        "diagonal past": lambda L, x: L.diagonal(x[0], 9),
        "as_strided": lambda L, x: L.as_strided(x, [2, 3], [1, 2], 3),
        "as_strided method": lambda L, x: x[1].as_strided([4], [5]),
        "index_select": lambda L, x: L.index_select(x, 1, L.tensor([3, 0, 3])),
        "index_select int32": lambda L, x: x.index_select(
            2, L.tensor([1], dtype=L.int32)),
        "index_select 0-dim index": lambda L, x: x.index_select(0, L.tensor(2)),
        "masked_fill": lambda L, x: L.masked_fill(x, _lib(L, m), -1.0),
        "masked_fill tensor": lambda L, x: x.masked_fill(_lib(L, m),
                                                         L.tensor(7)),
        "masked_fill broadcast": lambda L, x: x[0, 0].masked_fill(
            _lib(L, m), 0.0),
        "masked_fill_": lambda L, x: x.clone().masked_fill_(_lib(L, m), 2),
        "where": lambda L, x: L.where(x > 20, x, x * 2),
        "where ScalarOther": lambda L, x: L.where(x > 20, x.long(), 0.5),
        "where ScalarSelf": lambda L, x: L.where(x > 20, 1, x),
        "where Scalar": lambda L, x: L.where(x > 20, 1, 0),
        "where Scalar float": lambda L, x: L.where(x > 20, 1.0, 0),
        "where condition": lambda L, x: L.where(x[0] > 7),
        "where 0-dim": lambda L, x: L.where(x[0, 0, 1] > 0),
        "nonzero": lambda L, x: L.nonzero(x[0] > 7),
        "nonzero out": lambda L, x: L.nonzero(x[0] > 7, out=L.empty(0).long()),
        "index out": lambda L, x: L.ops.aten.index.Tensor_out(
            x, [None, L.tensor([1, 1])], out=L.empty(0)),
        "index_put": lambda L, x: L.index_put(
            x, (L.tensor([0, 2]),), L.tensor(9.0)),
        "index_put_ accumulate": lambda L, x: x.clone().index_put_(
            (L.tensor([0, 0]), L.tensor([1, 1])), L.ones(5), accumulate=True),
        "cat": lambda L, x: L.cat([x, x[:1]]),
        "cat out": lambda L, x: L.cat([x, x], 2, out=L.empty(0)),
        "stack": lambda L, x: L.stack([x, x], -1),
        "stack out": lambda L, x: L.stack([x[0], x[1]], out=L.zeros(3)),
        "allclose": lambda L, x: L.allclose(x, x + 1e-7),
        "allclose far": lambda L, x: L.allclose(x, x + 1),
        "allclose inf nan": lambda L, x: (
            L.allclose(L.tensor([float("inf")]), L.tensor([float("inf")])),
            L.allclose(L.tensor([float("nan")]), L.tensor([float("nan")])),
            L.allclose(L.tensor([float("nan")]), L.tensor([float("nan")]),
                       equal_nan=True)),
        "allclose broadcast ints": lambda L, x: L.allclose(
            L.tensor([[1, 2]]), L.tensor([1, 2])),
    }


_OPS = _ops_cases()


@pytest.mark.parametrize("name", sorted(_OPS))
def test_operator_matches_torch(name):
    x, tx = _x(turnout), _x(torch)
    _same(_OPS[name](turnout, x), _OPS[name](torch, tx))


@pytest.mark.parametrize("name", ["split int", "chunk", "unbind", "diagonal",
                                  "as_strided", "flatten"])
def test_view_operators_share_storage(name):
    x = _x(turnout)
    out = _OPS[name](turnout, x)
    for t in out if isinstance(out, tuple) else (out,):
        assert x._shares_storage(t), name


_OP_ERRORS = {
    "split negative": lambda L, x: L.split(x, -1),
    "split zero": lambda L, x: L.split(x, 0),
    "split_with_sizes sum": lambda L, x: L.split(x, [1, 1]),
    "split_with_sizes negative": lambda L, x: L.split(x, [-1, 4]),
    "chunk zero": lambda L, x: L.chunk(x, 0),
    "chunk 0-dim": lambda L, x: L.chunk(x[0, 0, 0], 1),
    "unbind 0-dim": lambda L, x: L.unbind(x[0, 0, 0]),
    "flatten order": lambda L, x: L.flatten(x, 2, 1),
    "diagonal same dims": lambda L, x: L.diagonal(x, 0, 1, 1),
    "as_strided lengths": lambda L, x: L.as_strided(x, [2], [1, 1]),
    "as_strided negative": lambda L, x: L.as_strided(x, [2], [-1]),
    "index_select float": lambda L, x: L.index_select(x, 0, L.tensor([1.0])),
    "index_select 2-d": lambda L, x: L.index_select(x, 0, L.tensor([[1]])),
    "index_select range": lambda L, x: L.index_select(x, 0, L.tensor([7])),
    "index_select dim": lambda L, x: L.index_select(x, 3, L.tensor([0])),
    "masked_fill value dims": lambda L, x: L.masked_fill(
        x, x > 3, L.ones(2)),
    "masked_fill_ broadcast": lambda L, x: x.masked_fill_(
        L.ones(2, 3, 4, 5, dtype=L.bool), 1.0),
    "index_put dtype": lambda L, x: L.index_put(
        x, (L.tensor([0]),), L.tensor([1])),
    "index_put shape": lambda L, x: L.index_put(
        x, (L.tensor([0]),), L.ones(3)),
    "allclose dtypes": lambda L, x: L.allclose(x, x.double()),
}


@pytest.mark.parametrize("name", sorted(_OP_ERRORS))
def test_operator_errors_match_torch(name):
    _same_error(_outcome(lambda: _OP_ERRORS[name](turnout, _x(turnout))),
                _outcome(lambda: _OP_ERRORS[name](torch, _x(torch))))


_GRAD_CASES = {
    "split": lambda L, w: sum((p * (i + 1)).sum()
                              for i, p in enumerate(L.split(w, 2, 1))),
    "split_with_sizes": lambda L, w: sum(
        (p * p).sum() for p in L.split(w, [1, 2])),
    "chunk": lambda L, w: L.chunk(w, 2)[1].sum() * 3,
    "unbind": lambda L, w: sum((p * i).sum() for i, p in enumerate(L.unbind(w, 1))),
    "flatten": lambda L, w: (L.flatten(w.t()) * L.arange(12).double()).sum(),
    "diagonal": lambda L, w: (L.diagonal(w, 1) * 5).sum(),
    "as_strided overlapping": lambda L, w: (L.as_strided(w, [3, 3], [1, 1], 2)
                                            * L.arange(9).view(3, 3).double()).sum(),
    "index_select": lambda L, w: (L.index_select(w, 1, L.tensor([3, 3, 0])) ** 2).sum(),
    "masked_fill": lambda L, w: (L.masked_fill(w, w > 4, 0.0) * w).sum(),
    "masked_fill tensor value": lambda L, w: L.masked_fill(
        w, w > 4, w[0, 1]).sum(),
    "where scalar": lambda L, w: (L.where(w > 4, w, 1.0) * w).sum(),
    "index_put": lambda L, w: (L.index_put(
        w, (L.tensor([2, 0]),), w[1] * 2) ** 2).sum(),
    "index_put accumulate": lambda L, w: (L.index_put(
        w, (L.tensor([2, 2]),), w[1], accumulate=True) ** 2).sum(),
    "cat and stack": lambda L, w: (L.cat([w, w * 2], 1) ** 2).sum()
    + L.stack([w, w]).sum(),
}


@pytest.mark.parametrize("name", sorted(_GRAD_CASES))
def test_gradients_match_torch(name):
    def run(lib):
        w = (lib.arange(12).view(3, 4).double() * 0.37 - 1).requires_grad_()
        _GRAD_CASES[name](lib, w).backward()
        return w.grad
    _same(run(turnout), run(torch), check_strides=False)


def test_grad_fn_names_match_torch():
    def names(lib):
        w = lib.ones(3, 4, requires_grad=True)
        outs = [lib.split(w, 2)[0], lib.unbind(w)[0], lib.diagonal(w),
                w.as_strided([2], [1]), w[lib.tensor([0])],
                lib.index_select(w, 0, lib.tensor([1])),
                lib.masked_fill(w, w > 0, 1.0)]
        fns = [o.grad_fn for o in outs]
        return [f if isinstance(f, str) else f.name() for f in fns]
    assert names(turnout) == names(torch)


# ---- What a dispatch mode sees ---------------------------------------------------------


class _TorchLog(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.log = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.log.append(str(func).replace("aten.", "", 1))
        return func(*args, **(kwargs or {}))


class _TurnoutLog(DispatchMode):
    def __init__(self):
        super().__init__()
        self.log = []

    def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
        name = f"{func.overloadpacket.__name__}.{func._overloadname}"
        self.log.append(name)
        return func(*args, **(kwargs or {}))


# Index and value tensors made from Python values pass through lift_fresh,
# as torch 1.13's do.
_MODE_CASES = {
    "x[[0, 2]]": lambda L, x, m: x[[0, 2]],
    "x[:, [0, 2]]": lambda L, x, m: x[:, [0, 2]],
    "x[0, [0, 2]]": lambda L, x, m: x[0, [0, 2]],
    "x[mask]": lambda L, x, m: x[m],
    "x[..., [1]]": lambda L, x, m: x[..., [1]],
    "x[mask] = 0": lambda L, x, m: x.__setitem__(m, 0.0),
    "x[[0, 2]] = 1": lambda L, x, m: x.__setitem__([0, 2], 1.0),
    "chunk": lambda L, x, m: L.chunk(x, 2),
    "split list": lambda L, x, m: L.split(x, [1, 2]),
    "where(c)": lambda L, x, m: L.where(m),
    "masked_fill": lambda L, x, m: x.masked_fill(m[..., None], 1.0),
}


@pytest.mark.parametrize("name", sorted(_MODE_CASES))
def test_dispatch_mode_sees_torchs_operators(name):
    logs = []
    for lib, mode in ((turnout, _TurnoutLog), (torch, _TorchLog)):
        x = _x(lib)
        m = x[..., 0] > 20
        with mode() as log:
            _MODE_CASES[name](lib, x, m)
        logs.append(log.log)
    assert logs[0] == logs[1]


# ---- Schemas and the functional namespace ----------------------------------------------

_NEW_OPERATORS = [
    "index.Tensor", "index.Tensor_out", "nonzero.out", "lift_fresh.default",
    "index_put_.default", "index_put.default",
    "index_select.default", "index_select.out", "nonzero.default",
    "masked_fill.Scalar", "masked_fill.Tensor", "masked_fill_.Scalar",
    "masked_fill_.Tensor", "split.Tensor", "split.sizes",
    "split_with_sizes.default", "chunk.default", "unbind.int",
    "flatten.using_ints", "as_strided.default", "diagonal.default", "cat.out",
    "stack.out", "where.ScalarSelf", "where.ScalarOther", "where.Scalar",
    "where.default", "where.self_out", "scalar_tensor.default",
]


@pytest.mark.parametrize("name", _NEW_OPERATORS)
def test_schemas_are_torchs(name):
    op, overload = name.split(".")
    mine = getattr(getattr(turnout.ops.aten, op), overload)._schema
    theirs = getattr(getattr(torch.ops.aten, op), overload)._schema
    assert str(mine) == str(theirs)


def test_functional_namespace_covers_torchs_functions():
    names = turnout._functional.function_names()
    for n in ["cat", "stack", "where", "relu", "allclose", "split", "chunk",
              "index_select", "masked_fill", "flatten", "diagonal", "nonzero",
              "mm", "softmax", "clamp"]:
        assert n in names and n in dir(turnout), n
    for n in names:  # each is a torch 1.13 function too
        assert hasattr(torch, n), n
    # Method-only operators and internal ones stay off the namespace.
    for n in ["view", "expand", "copy_", "contiguous", "item", "index",
              "slice", "_to_copy", "size"]:
        assert not hasattr(turnout, n), n
        assert n not in names
    with pytest.raises(AttributeError, match="has no attribute 'view'"):
        turnout.view  # noqa: B018


def test_functional_namespace_shadows_nothing():
    from turnout import _factories
    assert turnout.zeros is _factories.zeros
    assert turnout.tensor is _factories.tensor
    assert turnout.arange is _factories.arange
    assert turnout.float is turnout._C.float
    assert isinstance(turnout.ops, type(turnout.ops))


def test_functions_have_schemas_as_docstrings_and_cache():
    doc = turnout.index_select.__doc__
    assert "aten::index_select(Tensor self, int dim, Tensor index) -> Tensor" in doc
    assert turnout.index_select.__module__ == "turnout"
    assert turnout.index_select is turnout.index_select


def test_operators_registered_later_appear():
    lib = turnout.library.Library("aten", "FRAGMENT")
    try:
        lib.define("h18_probe_op(Tensor self) -> Tensor")
        lib.impl("h18_probe_op", lambda x: x * 2, "CPU")
        assert "h18_probe_op" in dir(turnout)
        assert turnout.h18_probe_op(turnout.ones(2)).tolist() == [2.0, 2.0]
    finally:
        lib._destroy()
        turnout.__dict__.pop("h18_probe_op", None)
