"""How Python calls reach operators, against torch 1.13: out= given as a
tuple for the overloads that write several tensors, and the warnings a
kernel gives arriving as Python UserWarnings (so that the warnings module's
filters, catch_warnings and pytest.warns see them)."""

import warnings

import pytest
import torch

import turnout


def _case(lib, name):
    x = lib.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])
    v, i = lib.empty(0), lib.empty(0, dtype=lib.int64)
    calls = {
        "sort": lambda o: lib.sort(x, 1, out=o),
        "sort descending": lambda o: lib.sort(x, 0, True, out=o),
        "max.dim": lambda o: lib.max(x, 1, out=o),
        "min.dim keepdim": lambda o: lib.min(x, 0, keepdim=True, out=o),
        "topk": lambda o: lib.topk(x, 2, out=o),
        "sort into a list": lambda o: lib.sort(x, out=list(o)),
    }
    r = calls[name]((v, i))
    return (r[0] is v, r[1] is i, v.tolist(), i.tolist(), list(v.shape))


@pytest.mark.parametrize("name", ["sort", "sort descending", "max.dim",
                                  "min.dim keepdim", "topk",
                                  "sort into a list"])
def test_out_tuple_as_torch(name):
    assert _case(turnout, name) == _case(torch, name)


@pytest.mark.parametrize("out", [1, 2, 3])
def test_out_tuple_of_the_wrong_length_is_refused_as_torch(out):
    for lib in (torch, turnout):
        x = lib.ones(2, 3)
        outs = tuple(lib.empty(0) for _ in range(out))
        if out == 2:
            lib.sort(x, out=(outs[0], lib.empty(0, dtype=lib.int64)))
            continue
        with pytest.raises(TypeError):
            lib.sort(x, out=outs)


def _resize_warnings(lib, n):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # n elements: the small call keeps the GIL, the large one releases it.
        lib.add(lib.ones(n), 1, out=lib.empty(5))
    return [w.category for w in caught]


@pytest.mark.parametrize("n", [3, 100000])
def test_kernel_warning_is_a_python_user_warning_as_torch(n):
    assert _resize_warnings(turnout, n) == _resize_warnings(torch, n) == [UserWarning]


def test_kernel_warning_as_error_raises_as_torch():
    for lib in (torch, turnout):
        out = lib.empty(5)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(UserWarning, match="resized"):
                lib.add(lib.ones(3), 1, out=out)
        # the call took effect before its warning was raised, as torch's
        assert out.tolist() == [2.0, 2.0, 2.0]
