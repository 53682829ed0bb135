"""The layout of mm's and addmm's operand gradients against torch 1.13 as
the oracle: a column-major operand (``w.t()`` in a linear layer) gets its
gradient column-major, so the gradient reaching ``w`` is contiguous and its
accumulation into ``w.grad`` copies nothing. The strides of each gradient
and its values are compared with torch's for every mix of row- and
column-major operands."""

import itertools

import pytest

import turnout

torch = pytest.importorskip("torch")


def operand(lib, rows, cols, column_major, seed):
    """A rows x cols float64 matrix, column-major (a transposed view) or not,
    with the same values in both libraries."""
    g = torch.Generator().manual_seed(seed)
    values = torch.randn(rows, cols, generator=g, dtype=torch.float64).tolist()
    m = lib.tensor(values, dtype=lib.float64)
    if column_major:
        m = m.t().contiguous().t()
    return m.requires_grad_()


def gradients(lib, op, layouts):
    a_cm, b_cm = layouts
    a = operand(lib, 5, 3, a_cm, 1)
    b = operand(lib, 3, 4, b_cm, 2)
    if op == "mm":
        out = lib.mm(a, b)
    else:
        bias = lib.tensor([0.5, -1.0, 2.0, 0.25], dtype=lib.float64)
        out = lib.addmm(bias, a, b, alpha=2.0 if op == "addmm_alpha" else 1.0)
    weights = lib.tensor([[float(i * 4 + j) for j in range(4)] for i in range(5)],
                         dtype=lib.float64)
    ga, gb = lib.autograd.grad((out * weights).sum(), (a, b))
    return [(tuple(g.stride()), [[round(v, 9) for v in row] for row in g.tolist()])
            for g in (ga, gb)]


@pytest.mark.parametrize("op", ["mm", "addmm", "addmm_alpha"])
@pytest.mark.parametrize("layouts", list(itertools.product([False, True], repeat=2)))
def test_operand_gradients_have_torchs_layout_and_values(op, layouts):
    assert gradients(turnout, op, layouts) == gradients(torch, op, layouts)


def test_linear_layer_weight_gradient_is_contiguous():
    for lib in (torch, turnout):
        w = operand(lib, 4, 3, False, 3)
        x = operand(lib, 2, 3, False, 4).detach()
        lib.addmm(lib.zeros(4, dtype=lib.float64), x, w.t()).sum().backward()
        assert w.grad.is_contiguous()
        assert tuple(w.grad.stride()) == (3, 1)
