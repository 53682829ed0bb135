"""Sizes that overflow int64 and in-place / out= writes over memory that an
input shares: which calls raise, checked against torch 1.13 as the oracle
(kernels/mem_overlap.h, dispatcher/core/size_arithmetic.h)."""

import types

import pytest
import torch

import turnout

TORCH = types.SimpleNamespace(lib=torch, aten=torch.ops.aten)
TURNOUT = types.SimpleNamespace(lib=turnout, aten=turnout.ops.aten)

K31, K62 = 2 ** 31, 2 ** 62


def outcome(call, ns):
    """("ok", value) or ("raise", exception)."""
    try:
        return "ok", call(ns)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return "raise", e


def check_like_torch(call, compare_values=True):
    """Runs `call` with torch and with turnout: both raise a RuntimeError or
    neither does (and then, with `compare_values`, they agree)."""
    t_kind, t_val = outcome(call, TORCH)
    n_kind, n_val = outcome(call, TURNOUT)
    assert n_kind == t_kind, (f"torch: {t_kind} {t_val!r}; "
                              f"turnout: {n_kind} {n_val!r}")
    if t_kind == "raise":
        assert isinstance(t_val, RuntimeError), t_val
        assert isinstance(n_val, RuntimeError), n_val
        return n_val
    if compare_values:
        assert n_val == t_val
    return None


# ---- Sizes whose number of elements or storage bytes overflow int64 -------

# Each returns something comparable (a shape, a numel) when it succeeds.
_SIZE_CASES = {
    "empty": lambda n: n.lib.empty(K31, K31, K31).numel(),
    "empty meta": lambda n: n.lib.empty(K31, K31, K31, device="meta").numel(),
    "zeros": lambda n: n.lib.zeros(K31, K31, K31).numel(),
    "ones meta": lambda n: n.lib.ones(K31, K31, K31, device="meta").numel(),
    "full": lambda n: n.lib.full((K31, K31, K31), 1.0).numel(),
    "rand": lambda n: n.lib.rand(K31, K31, K31).numel(),
    "elements fit, bytes do not": lambda n: n.lib.empty(K62).numel(),
    "bytes meta": lambda n: n.lib.empty(K62 // 2, 4, device="meta").numel(),
    "bytes of uint8 fit": lambda n: n.lib.empty(
        2 ** 63 - 1, dtype=n.lib.uint8, device="meta").numel(),
    "large meta fits": lambda n: n.lib.empty(
        2 ** 40, 2 ** 20, device="meta").numel(),
    "a zero first": lambda n: tuple(n.lib.empty(0, K62, K62).shape),
    "a zero last": lambda n: tuple(n.lib.empty(K62, K62, 0).shape),
    "arange": lambda n: n.lib.arange(K62).numel(),
    "empty_strided stride": lambda n: n.aten.empty_strided(
        [3], [K62]).numel(),
    "empty_strided numel": lambda n: n.aten.empty_strided(
        [K62, K62, 0], [0, 0, 0]).numel(),
    "empty_strided no element": lambda n: n.aten.empty_strided(
        [0, 2], [K62, K62]).numel(),
    "expand": lambda n: n.lib.ones(2, 3).expand(K62, 2, 3).numel(),
    "expand half": lambda n: n.lib.ones(2, 3).expand(K62 // 2, 2, 3).numel(),
    "expand meta": lambda n: n.lib.ones(2, 3, device="meta").expand(
        K62, 2, 3).numel(),
    "expand then sum": lambda n: n.lib.ones(2, 3).expand(K62, 2, 3).sum(
    ).item(),
    "expand fits": lambda n: n.lib.ones(2, 3).expand(2 ** 40, 2, 3).numel(),
    "expand then view": lambda n: tuple(
        n.lib.ones(1).expand(K62).view(-1).shape),
    "view": lambda n: tuple(n.lib.ones(2).view(K31, K31, K31).shape),
    "view inferred": lambda n: tuple(
        n.lib.ones(2).view(K31, K31, K31, -1).shape),
    "reshape": lambda n: tuple(n.lib.ones(2).reshape(K31, K31, K31).shape),
    "broadcast": lambda n: tuple(
        (n.lib.ones(1, 1).expand(2 ** 40, 1) +
         n.lib.ones(1, 1).expand(1, 2 ** 40)).shape),
    "broadcast meta": lambda n: tuple(
        (n.lib.ones(2 ** 40, 1, device="meta") +
         n.lib.ones(1, 2 ** 40, device="meta")).shape),
}


@pytest.mark.parametrize("name", sorted(_SIZE_CASES))
def test_overflowing_sizes_raise_as_in_torch(name):
    check_like_torch(_SIZE_CASES[name])


def test_overflow_errors_say_what_overflowed():
    with pytest.raises(RuntimeError,
                       match=r"empty\(\): the number of elements of sizes "
                             r"\[2147483648, 2147483648, 2147483648\] "
                             r"overflows int64"):
        turnout.empty(K31, K31, K31)
    with pytest.raises(RuntimeError,
                       match=r"expand\(torch.FloatTensor\{\[2, 3\]\}, "
                             r"size=\[4611686018427387904, 2, 3\]\): the "
                             r"number of elements of the expanded sizes "
                             r"\[4611686018427387904, 2, 3\] overflows int64"):
        turnout.ones(2, 3).expand(K62, 2, 3)
    with pytest.raises(RuntimeError,
                       match=r"empty\(\): the storage for sizes "
                             r"\[4611686018427387904\], strides \[1\] and "
                             r"storage offset 0 with 4-byte elements overflows "
                             r"int64 bytes"):
        turnout.empty(K62)


# ---- In-place and out= writes over memory an input shares --------------------

def _z(n):
    return n.lib.arange(8.0)


def _inplace(f):
    """A case on z = arange(8.): runs f(n, z) and returns z's values."""
    def call(n):
        z = _z(n)
        f(n, z)
        return z.tolist()
    return call


# name -> (case, compare values). Values are compared where the result is
# defined; torch's results for layouts whose overlap it does not compute
# (TooHard) depend on its loop order.
_OVERLAP_CASES = {
    # z[1:] += z[:-1] used to give [0, 1, 3, 5, 7, 12, 11, 18].
    "add_ partial": (_inplace(lambda n, z: z[1:].add_(z[:-1])), True),
    "iadd partial": (_inplace(lambda n, z: z[1:].__iadd__(z[:-1])), True),
    "sub_ partial": (_inplace(lambda n, z: z[1:].sub_(z[:-1])), True),
    "mul_ partial": (_inplace(lambda n, z: z[1:].mul_(z[:-1])), True),
    "div_ partial": (_inplace(lambda n, z: z[1:].div_(z[:-1])), True),
    "add_ partial int": (lambda n: (lambda z: (z[1:].add_(z[:-1]),
                                               z.tolist())[1])(
        n.lib.arange(8)), True),
    "add_ partial meta": (lambda n: (lambda z: z[1:].add_(z[:-1]).shape)(
        n.lib.arange(8.0, device="meta")), True),
    "add_ itself": (_inplace(lambda n, z: z.add_(z)), True),
    "add_ the same view": (_inplace(lambda n, z: z[1:].add_(z[1:])), True),
    "add_ disjoint halves": (_inplace(lambda n, z: z[:4].add_(z[4:])), True),
    "add_ transposed": (_inplace(
        lambda n, z: z.view(2, 2, 2).add_(z.view(2, 2, 2).transpose(0, 2))),
        True),
    "add_ interleaved": (_inplace(lambda n, z: z[::2].add_(z[1::2])), True),
    "add_ strided too hard": (_inplace(
        lambda n, z: z[::2][1:].add_(z[::2][:-1])), False),
    "add_ broadcast row": (_inplace(
        lambda n, z: z.view(2, 4).mul_(z.view(2, 4)[0])), True),
    "add_ broadcast outside": (_inplace(lambda n, z: z[1:5].add_(z[0:1])),
                               True),
    "add_ 0-dim inside": (_inplace(lambda n, z: z[:-1].add_(z[3])), True),
    "add_ 0-dim outside": (_inplace(lambda n, z: z[1:].add_(z[0])), True),
    "add_ expanded self": (lambda n: n.lib.ones(1).expand(3).add_(1).tolist(),
                           True),
    "add_ expanded self 2d": (
        lambda n: n.lib.ones(3, 1).expand(3, 4).add_(1).tolist(), True),
    "add_ expanded size 1": (
        lambda n: n.lib.ones(1).expand(1).add_(1).tolist(), True),
    "sub_ scalar expanded": (
        lambda n: n.lib.ones(1).expand(3).sub_(1).tolist(), True),
    "add.out partial": (_inplace(
        lambda n, z: n.aten.add.out(z[:-1], z[:-1], out=z[1:])), True),
    "add.out partial other": (_inplace(
        lambda n, z: n.aten.add.out(n.lib.ones(7), z[:-1], out=z[1:])), True),
    "add.out full": (_inplace(lambda n, z: n.aten.add.out(z, z, out=z)), True),
    "mul.out expanded": (lambda n: n.aten.mul.out(
        n.lib.ones(3), n.lib.ones(3), out=n.lib.ones(1).expand(3)).tolist(),
        True),
    "add.out empty": (_inplace(
        lambda n, z: n.aten.add.out(z[:0], z[:0], out=z[:0])), True),
    "copy_ partial": (_inplace(lambda n, z: z[1:].copy_(z[:-1])), True),
    "copy_ partial int": (lambda n: (lambda z: (z[1:].copy_(z[:-1]),
                                                z.tolist())[1])(
        n.lib.arange(8)), True),
    "copy_ itself": (_inplace(lambda n, z: z.copy_(z)), True),
    "copy_ transposed": (_inplace(
        lambda n, z: z.view(2, 2, 2).copy_(z.view(2, 2, 2).transpose(0, 2))),
        True),
    "copy_ 0-dim inside": (_inplace(lambda n, z: z[:4].copy_(z[2])), True),
    "copy_ interleaved": (_inplace(lambda n, z: z[::2].copy_(z[1::2])), True),
    "copy_ expanded": (lambda n: n.lib.ones(1).expand(3).copy_(
        n.lib.ones(3)).tolist(), True),
    "copy_ expanded from expanded": (lambda n: n.lib.ones(1).expand(3).copy_(
        n.lib.ones(1).expand(3)).tolist(), True),
    "setitem partial": (_inplace(lambda n, z: z.__setitem__(
        slice(1, None), z[:-1])), True),
    "fill_ expanded": (lambda n: n.lib.ones(1).expand(3).fill_(2).tolist(),
                       True),
    "sum.out partial": (_inplace(lambda n, z: n.aten.sum.IntList_out(
        z.view(2, 4), [0], out=z[1:5])), False),
    "mm.out onto an input": (_inplace(lambda n, z: n.aten.mm.out(
        z[:4].view(2, 2), z[4:].view(2, 2), out=z[:4].view(2, 2))), False),
}


@pytest.mark.parametrize("name", sorted(_OVERLAP_CASES))
def test_overlapping_writes_raise_as_in_torch(name):
    call, compare = _OVERLAP_CASES[name]
    check_like_torch(call, compare_values=compare)


def test_overlap_errors_say_what_overlapped():
    z = turnout.arange(8.0)
    with pytest.raises(RuntimeError,
                       match=r"add_\(\): unsupported operation: some elements "
                             r"of the input tensor and the written-to tensor "
                             r"refer to a single memory location"):
        z[1:].add_(z[:-1])
    assert z.tolist() == [0, 1, 2, 3, 4, 5, 6, 7]  # nothing written
    with pytest.raises(RuntimeError,
                       match=r"add_\(\): unsupported operation: more than one "
                             r"element of the written-to tensor refers to a "
                             r"single memory location"):
        turnout.ones(1).expand(3).add_(1)


def test_too_hard_layouts_read_a_copy():
    # PyTorch does not compute whether strided views overlap and runs the
    # loop as is; turnout reads such an input from a copy, so each element
    # gets its old neighbour.
    z = turnout.arange(8.0)
    z[::2][1:].add_(z[::2][:-1])
    assert z.tolist() == [0, 1, 2, 3, 6, 5, 10, 7]
    z = turnout.arange(8.0)
    z[::2][1:].copy_(z[::2][:-1])
    assert z.tolist() == [0, 1, 0, 3, 2, 5, 4, 7]
