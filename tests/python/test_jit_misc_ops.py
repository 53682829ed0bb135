"""The general operators of issue 20 item 3 (kernels/misc_ops.cc) as
TorchScript uses them: small functions scripted by torch 1.13 at test time,
their graphs parsed, printed back and run by turnout's interpreter and
GraphExecutor (through test_jit_script_corpus.check), compared with
torch's results, errors and the caller's tensors they mutate."""

from __future__ import annotations

from typing import List

import pytest
import torch
import torch.nn.functional as F

from test_jit_script_corpus import check


def t23() -> torch.Tensor:
    return torch.tensor([[1.5, -2.0, 3.0], [0.0, 5.0, -6.0]])


def pointwise(x: torch.Tensor, y: torch.Tensor):
    a = torch.maximum(x, y) + torch.minimum(x, 1.0 - y)
    b = torch.fmod(x, 1.5) + torch.fmod(x, y + 10.0)
    c = torch.floor_divide(x, 0.75)
    d = torch.logical_not(x > 0)
    return a, b, c, d


def integer_ops(i: torch.Tensor, j: torch.Tensor):
    return i ^ j, i ^ 3, torch.bitwise_xor(i, j), i // 2, torch.fmod(i, 4)


# torch.norm is a Python function in torch 1.13 (TorchScript calls it as a
# Function); the Tensor method is the aten operator.
def reductions(x: torch.Tensor):
    return (x.prod(), x.prod(1), torch.prod(x, 0, keepdim=True),
            torch.logsumexp(x, [1]), x.norm(), x.norm(3), x.norm(1, [1], True),
            x.norm(float("inf"), [0]), (x > 0).all(), (x > 0).any(1),
            torch.all(x > -10, 0))


def indexing(x: torch.Tensor, idx: torch.Tensor):
    g = torch.gather(x, 1, idx)
    r = x.repeat([2, 1]).narrow(0, 1, 2)
    f = torch.flip(x, [0, 1])
    return g, r, f, x.unsqueeze(1).squeeze(), x.expand_as(torch.zeros(4, 2, 3))


def linear_algebra(x: torch.Tensor, v: torch.Tensor):
    return torch.dot(v, v), torch.mv(x, v), torch.eye(3), torch.eye(2, 3, dtype=torch.int64)


def factories(x: torch.Tensor, i: torch.Tensor):
    return x.new_zeros([2, 2]), x.type_as(i), i.type_as(x)


def in_place(x: torch.Tensor, v: torch.Tensor):
    y = x.clone()
    y.fmod_(2.0)
    z = x.clone()
    z.zero_()
    w = x.clone()
    w.fill_(v[0])
    u = x.clone()
    u.floor_divide_(2.0)
    m = x > 0
    m.logical_not_()
    x.reciprocal_()
    return y, z, w, u, m


def gather_error(x: torch.Tensor):
    return torch.gather(x, 1, torch.tensor([[0, 7]]))


def norm_of_int_error(i: torch.Tensor):
    return i.norm()


# The operators nn.MultiheadAttention's graphs need (kernels/attention.cc)
# and the builtins its scripted graph calls (issue 20 item 4).
def attention_ops(x: torch.Tensor, i: torch.Tensor, m: torch.Tensor):
    div = (torch.div(x, 0.75, rounding_mode="floor"),
           torch.div(x, x.flip([0]) + 5.0, rounding_mode="trunc"),
           torch.div(i, 3, rounding_mode="trunc"), torch.div(i, -2, rounding_mode="floor"),
           torch.div(i, i.flip([0]) + 10, rounding_mode="trunc"),
           torch.div(x, 2.0, rounding_mode=None))
    b = torch.baddbmm(x[0], x.unsqueeze(0), x.t().unsqueeze(0), beta=0.5, alpha=2.0)
    return (div, torch.logical_or(x > 0, m), b, F.pad(x, [1, 2], value=0.5),
            F.pad(x, [1, -1, 0, 1]), torch.constant_pad_nd(i, [2, 0], 7))


def attention_builtins(x: torch.Tensor, s: str):
    ls = [1, 2, 3, 4]
    found = (s.find("b"), s.find("b", 2), s.find("", 9), s.find("c", -3, -1),
             s.find("a", -100, 100), s.find("zz"))
    truth = (all([True, x.dim() == 2]), any([False, False]), all([1, 0]),
             any([0.0, 2.5]), any(["", "a"]), all([]))
    lists = (ls[1:3], ls[::-1], ls[-3:], ls[1:100:2], ls[3:1], [x.size(0)] == [2],
             [1.5] != [1.5], ["a"] == ["a"], [True] != [False])
    facts = (x.is_floating_point(), torch.is_grad_enabled(), torch.is_autocast_enabled(),
             x.is_cuda, x.requires_grad, x.is_nested)
    return found, truth, lists, facts


def pad_mode_error(x: torch.Tensor):
    return F.pad(x, [1, 2, 3], value=0.5)


# The operators kernels are written with (kernels/pointwise_ternary.cc,
# kernels/select_ops.cc): functions, methods and in-place forms.
def kernel_writer_ops(x: torch.Tensor, y: torch.Tensor):
    a = torch.addcmul(x, x, y, value=0.5) + torch.addcdiv(x, x, y.abs() + 1.0)
    b = torch.lerp(x, y, 0.3) + x.lerp(y, x / 10.0)
    c = x.tril(1) + torch.triu(x, -1) + x.roll(1, 0) + torch.roll(x, [1, 2], [0, 1])
    d = x.masked_select(x > 0)
    e = torch.equal(x, x.clone()), torch.equal(x, y)
    z = x.clone()
    z.addcmul_(y, y, value=2.0)
    z.tril_()
    z.lerp_(y, 0.5)
    return a, b, c, d, e, z


def lerp_dtype_error(x: torch.Tensor):
    return torch.lerp(x, x.double(), 0.5)


CASES = [
    (pointwise, lambda: (t23(), torch.tensor([0.5, -3.0, 3.0]))),
    (integer_ops, lambda: (torch.tensor([[5, -3], [0, 7]]), torch.tensor([1, 6]))),
    (reductions, lambda: (t23(),)),
    (indexing, lambda: (t23(), torch.tensor([[2, 0], [1, 1]]))),
    (linear_algebra, lambda: (t23(), torch.tensor([1.0, 2.0, -1.0]))),
    (factories, lambda: (t23(), torch.tensor([1, 2]))),
    (in_place, lambda: (t23(), torch.tensor([2.5]))),
    (gather_error, lambda: (t23(),)),
    (norm_of_int_error, lambda: (torch.tensor([3, 4]),)),
    (attention_ops, lambda: (t23(), torch.tensor([7, -7, 5]),
                             torch.tensor([[True, False, False], [False, False, True]]))),
    (attention_builtins, lambda: (t23(), "abcabc")),
    (pad_mode_error, lambda: (t23(),)),
    (kernel_writer_ops, lambda: (t23(), torch.tensor([0.5, -3.0, 3.0]))),
    (lerp_dtype_error, lambda: (t23(),)),
]


@pytest.mark.parametrize("fn,make_args", [pytest.param(f, a, id=f.__name__)
                                          for f, a in CASES])
def test_scripted(fn, make_args):
    fn._trace = False
    check(fn, make_args)
