"""The neural-network operators of issue 20 (kernels/nn.h: activations,
layer_norm, embedding, nll_loss / cross_entropy_loss, dropout) against torch
1.13, for what op_db's per-sample comparison does not cover: schemas, the
error messages of bad input, meta tensors, dropout in training (turnout's
generator is not torch's: the mask's statistics and its gradient), and a
small model's forward and backward end to end.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import turnout

A = turnout.ops.aten

_SCHEMAS = [
    "gelu.default", "gelu_.default", "gelu_backward.default", "silu.default",
    "silu_.default", "silu_backward.default", "elu.default", "elu_.default",
    "elu_backward.default", "leaky_relu.default", "leaky_relu_.default",
    "leaky_relu_backward.default", "hardtanh.default", "hardtanh_.default",
    "hardtanh_backward.default", "softplus.default", "softplus_backward.default",
    "clamp_.default", "dropout.default", "dropout_.default", "layer_norm.default",
    "native_layer_norm.default", "native_layer_norm_backward.default",
    "embedding.default", "embedding_backward.default",
    "embedding_dense_backward.default", "nll_loss_nd.default", "nll_loss.default",
    "nll_loss_forward.default", "nll_loss_backward.default", "nll_loss2d.default",
    "nll_loss2d_forward.default", "nll_loss2d_backward.default",
    "cross_entropy_loss.default", "gelu.out", "silu.out", "elu.out", "leaky_relu.out",
    "hardtanh.out", "softplus.out", "threshold_backward.default",
    "threshold_backward.grad_input",
]


@pytest.mark.parametrize("name", _SCHEMAS)
def test_schemas_are_torchs(name):
    op, overload = name.split(".")
    mine = getattr(getattr(A, op), overload)._schema
    theirs = getattr(getattr(torch.ops.aten, op), overload)._schema
    assert str(mine) == str(theirs)


def _both(values, dtype="float32"):
    arr = np.asarray(values, dtype=dtype)
    return turnout.tensor(arr), torch.from_numpy(arr.copy())


# ---- Errors: the same type and message as torch's -----------------------------------


def _raise_same(mine, theirs):
    with pytest.raises(Exception) as t_err:
        theirs()
    with pytest.raises(Exception) as u_err:
        mine()
    # turnout's message is torch's, sometimes with more after it.
    assert str(u_err.value).splitlines()[0].startswith(str(t_err.value).splitlines()[0])
    return u_err.value, t_err.value


def test_nll_loss_target_out_of_range():
    x, tx = _both(np.zeros((3, 4)))
    t, tt = _both([1, 7, 0], "int64")
    u, th = _raise_same(lambda: A.nll_loss(x, t), lambda: torch.ops.aten.nll_loss(tx, tt))
    assert isinstance(u, IndexError) and isinstance(th, IndexError)
    assert "Target 7 is out of bounds." in str(u)
    # ignore_index may lie outside [0, C).
    t2, tt2 = _both([1, -100, 0], "int64")
    assert float(A.nll_loss(x, t2, None, 2)) == float(torch.ops.aten.nll_loss(tx, tt2, None, 2))
    # cross_entropy reports it too, after log_softmax.
    _raise_same(lambda: A.cross_entropy_loss(x, t),
                lambda: torch.ops.aten.cross_entropy_loss(tx, tt))


@pytest.mark.parametrize("shape, weight", [([], None), ([4], None), ([3, 3], None),
                                           ([3], [4])])
def test_layer_norm_bad_shapes(shape, weight):
    x, tx = _both(np.ones((2, 3)))
    w, tw = (None, None) if weight is None else _both(np.ones(weight))
    _raise_same(lambda: A.layer_norm(x, shape, w), lambda: torch.ops.aten.layer_norm(tx, shape, tw))


def test_other_errors():
    x, tx = _both(np.ones((2, 3)))
    i, ti = _both([0, 5], "int64")
    _raise_same(lambda: A.embedding(x, i), lambda: torch.ops.aten.embedding(tx, ti))
    _raise_same(lambda: A.embedding(x, x), lambda: torch.ops.aten.embedding(tx, tx))
    _raise_same(lambda: A.gelu(x, approximate="erf"),
                lambda: torch.ops.aten.gelu(tx, approximate="erf"))
    _raise_same(lambda: A.dropout(x, 1.5, True), lambda: torch.ops.aten.dropout(tx, 1.5, True))
    _raise_same(lambda: A.cross_entropy_loss(x, i, None, 1, -100, 2.0),
                lambda: torch.ops.aten.cross_entropy_loss(tx, ti, None, 1, -100, 2.0))
    li, tli = _both([[1, 2]], "int64")
    _raise_same(lambda: A.silu(li), lambda: torch.ops.aten.silu(tli))
    t, tt = _both([0, 1, 1], "int64")
    _raise_same(lambda: A.nll_loss_nd(x, t), lambda: torch.ops.aten.nll_loss_nd(tx, tt))


def test_nll_weight_cannot_require_grad():
    x, tx = _both(np.zeros((2, 3)))
    t, tt = _both([0, 2], "int64")
    w, tw = _both([1.0, 2.0, 3.0])
    w.requires_grad_(True)
    tw.requires_grad_(True)
    _raise_same(lambda: A.nll_loss(x, t, w), lambda: torch.ops.aten.nll_loss(tx, tt, tw))


# ---- Meta tensors: shapes and dtypes without data --------------------------------------


def test_meta_shapes_are_torchs():
    def meta(lib, *shape, dtype=None):
        return lib.empty(*shape, dtype=dtype or lib.float32, device="meta")

    cases = [
        lambda L: L.ops.aten.native_layer_norm(meta(L, 2, 3, 4), [3, 4], meta(L, 3, 4), None,
                                               1e-5),
        lambda L: L.ops.aten.gelu(meta(L, 2, 3), approximate="tanh"),
        lambda L: L.ops.aten.leaky_relu(meta(L, 5), 0.1),
        lambda L: L.ops.aten.embedding(meta(L, 10, 4), meta(L, 2, 3, dtype=L.int64)),
        lambda L: L.ops.aten.nll_loss_forward(meta(L, 3, 5), meta(L, 3, dtype=L.int64), None,
                                              0, -100),
    ]
    for case in cases:
        mine, theirs = case(turnout), case(torch)
        mine = mine if isinstance(mine, tuple) else (mine,)
        theirs = theirs if isinstance(theirs, tuple) else (theirs,)
        assert [tuple(m.shape) for m in mine] == [tuple(t.shape) for t in theirs]
        assert all(m.device.type == "meta" for m in mine)
    # torch 1.13 has no Meta kernel for nll_loss2d_forward; turnout's gives
    # the shapes its CPU kernel does.
    out, total = A.nll_loss2d_forward(meta(turnout, 2, 3, 4, 4),
                                      meta(turnout, 2, 4, 4, dtype=turnout.int64), None, 0,
                                      -100)
    assert tuple(out.shape) == (2, 4, 4) and tuple(total.shape) == ()
    assert out.device.type == "meta"


# ---- dropout in training -------------------------------------------------------------------


def test_dropout_training_mask_statistics_and_gradient():
    turnout.manual_seed(20)
    x = turnout.ones(200, 500, requires_grad=True)
    p = 0.3
    y = A.dropout(x, p, True)
    values = np.asarray(y.detach().numpy())
    kept = values != 0
    assert np.allclose(values[kept], 1 / (1 - p))
    assert abs(kept.mean() - (1 - p)) < 0.01
    y.sum().backward()
    # The gradient is the mask scaled by 1 / (1 - p): the same elements.
    assert np.array_equal(np.asarray(x.grad.numpy()), values)


def test_dropout_same_seed_same_mask_and_in_place():
    turnout.manual_seed(7)
    a = np.asarray(A.dropout(turnout.ones(1000), 0.5, True).numpy())
    turnout.manual_seed(7)
    b = turnout.ones(1000)
    assert A.dropout_(b, 0.5, True) is b
    assert np.array_equal(a, np.asarray(b.numpy()))
    assert 0 < (a == 0).sum() < 1000


def test_clamp_in_place_method():
    x, tx = _both([-2.0, 0.5, 3.0])
    assert x.clamp_(-1, 1) is x
    tx.clamp_(-1, 1)
    assert x.tolist() == tx.tolist()
    v = turnout.tensor([0.5, 2.0], requires_grad=True)
    y = v * 1
    y.clamp_(max=1.0)
    y.sum().backward()
    assert v.grad.tolist() == [1.0, 0.0]


def test_dropout_eval_returns_its_input():
    x = turnout.ones(2, 3)
    assert A.dropout(x, 0.5, False) is x
    assert A.dropout(x, 0.0, True) is x


# ---- A small model end to end ------------------------------------------------------------------


def test_embedding_layer_norm_gelu_cross_entropy_as_torch():
    rng = np.random.default_rng(3)
    emb = rng.normal(size=(10, 8)).astype(np.float32)
    ln_w = rng.uniform(0.5, 1.5, 8).astype(np.float32)
    ln_b = rng.normal(size=8).astype(np.float32)
    proj = rng.normal(size=(5, 8)).astype(np.float32)
    tokens = np.array([[1, 0, 3, 9], [2, 2, 7, 0]])
    labels = np.array([[4, 1, 0, 2], [3, -100, 1, 4]])

    def run(lib, F_ln, gelu, cross_entropy, embedding, linear):
        params = [lib.tensor(v).requires_grad_(True) for v in (emb, ln_w, ln_b, proj)]
        e, w, b, p = params
        h = embedding(e, lib.tensor(tokens.tolist()), padding_idx=0)
        h = gelu(F_ln(h, [8], w, b), approximate="tanh")
        logits = linear(h, p)  # (2, 4, 5)
        loss = cross_entropy(logits.permute(0, 2, 1), lib.tensor(labels.tolist()), label_smoothing=0.1)
        loss.backward()
        return loss, [q.grad for q in params]

    t_loss, t_grads = run(torch, F.layer_norm, F.gelu, F.cross_entropy,
                          lambda e, i, padding_idx: F.embedding(i, e, padding_idx=padding_idx),
                          F.linear)
    u_loss, u_grads = run(
        turnout,
        lambda x, s, w, b: A.layer_norm(x, s, w, b),
        lambda x, approximate: A.gelu(x, approximate=approximate),
        lambda x, t, label_smoothing: A.cross_entropy_loss(x, t, None, 1, -100,
                                                           label_smoothing),
        lambda e, i, padding_idx: A.embedding(e, i, padding_idx),
        lambda x, w: A.linear(x, w))
    assert abs(float(u_loss) - float(t_loss)) < 1e-5
    for u, t in zip(u_grads, t_grads):
        np.testing.assert_allclose(np.asarray(u.numpy()), t.numpy(), rtol=1e-4, atol=1e-5)
