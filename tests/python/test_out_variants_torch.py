"""The out= overloads of kernels/out_variants.cc against torch 1.13: each
overload runs on turnout and on torch over the same inputs, with out
tensors of every dtype, on another device and of a wrong shape, and the
two must agree: values, dtypes, shapes, the returned out being the very
object passed, which dtypes and devices are refused (RuntimeError), and the
deprecation warning when an out with elements is resized.

Random and uninitialized results (rand, randn, randint, randperm, empty*)
are compared by dtype, shape and range, not values.
"""

import warnings

import numpy as np

import pytest
import torch

import turnout

# ---- Samples ----------------------------------------------------------------------


class Maker:
    """Arguments for one library from seeded numpy values: the same values
    for turnout and torch when made with the same seed."""

    def __init__(self, lib, seed=0):
        self.lib = lib
        self.rng = np.random.default_rng(seed)

    def _t(self, a):
        return self.lib.from_numpy(np.array(a, copy=True, order="C"))

    def f(self, shape, low=-3.0, high=3.0):
        return self._t(np.asarray(self.rng.uniform(low, high, shape), np.float32))

    def d(self, shape, low=-3.0, high=3.0):
        return self._t(np.asarray(self.rng.uniform(low, high, shape), np.float64))

    def i(self, shape, low=-5, high=5):
        return self._t(np.asarray(self.rng.integers(low, high + 1, shape), np.int64))

    def b(self, shape):
        return self._t(np.asarray(self.rng.random(shape) < 0.5))


def _bn(M):
    return (M.f((2, 3, 4)), M.f((3,)), M.f((3,)), M.f((3,)), M.f((3,), 0.5, 2.0),
            True, 0.1, 1e-5)


SAMPLES = {
    "logical_not.out": lambda M: ((M.f((2, 3)),), {}),
    "logical_or.out": lambda M: ((M.b((2, 3)), M.b((3,))), {}),
    "add.Scalar_out": lambda M: ((M.f((2, 3)), 2.5), {"alpha": 2}),
    "sub.Scalar_out": lambda M: ((M.f((2, 3)), 1.5), {"alpha": 2}),
    "mul.Scalar_out": lambda M: ((M.f((2, 3)), 2.5), {}),
    "rsub.Scalar_out": lambda M: ((M.f((2, 3)), 1.5), {"alpha": 2}),
    "rsub.Tensor_out": lambda M: ((M.f((2, 3)), M.f((3,))), {"alpha": 2}),
    "div.Scalar_out": lambda M: ((M.f((2, 3)), 2.5), {}),
    "div.Scalar_mode_out": lambda M: ((M.f((2, 3)), 0.7), {"rounding_mode": "floor"}),
    "div.out_mode": lambda M: ((M.f((2, 3)), M.f((3,), 0.5, 2.0)), {"rounding_mode": "trunc"}),
    "all.all_out": lambda M: ((M.b((2, 3)),), {}),
    "all.out": lambda M: ((M.b((2, 3)), 1), {"keepdim": True}),
    "any.all_out": lambda M: ((M.b((2, 3)),), {}),
    "any.out": lambda M: ((M.b((2, 3)), 0), {}),
    "arange.out": lambda M: ((5,), {}),
    "arange.start_out": lambda M: ((1, 7, 2), {}),
    "baddbmm.out": lambda M: ((M.f((2, 3, 4)), M.f((2, 3, 5)), M.f((2, 5, 4))),
                              {"beta": 0.5, "alpha": 2}),
    "bitwise_xor.Tensor_out": lambda M: ((M.i((2, 3)), M.i((3,))), {}),
    "bitwise_xor.Scalar_out": lambda M: ((M.i((2, 3)), 6), {}),
    "clamp.out": lambda M: ((M.f((2, 3)), -1.0, 1.5), {}),
    "clamp_max.out": lambda M: ((M.f((2, 3)), 0.5), {}),
    "clamp_min.out": lambda M: ((M.f((2, 3)), 0.5), {}),
    "clone.out": lambda M: ((M.f((2, 3)),), {}),
    "constant_pad_nd.out": lambda M: ((M.f((2, 3)), [1, 2]), {"value": 0.5}),
    "convolution_backward.out": lambda M: (
        (M.f((1, 2, 3, 3)), M.f((1, 3, 5, 5)), M.f((2, 3, 3, 3)), [2], [1, 1], [0, 0],
         [1, 1], False, [0, 0], 1, [True, True, True]), {}),
    "dot.out": lambda M: ((M.f((4,)), M.f((4,))), {}),
    "mv.out": lambda M: ((M.f((3, 4)), M.f((4,))), {}),
    "elu_backward.grad_input": lambda M: ((M.f((2, 3)), 1.0, 1.0, 1.0, False, M.f((2, 3))), {}),
    "gelu_backward.grad_input": lambda M: ((M.f((2, 3)), M.f((2, 3))), {"approximate": "tanh"}),
    "hardtanh_backward.grad_input": lambda M: ((M.f((2, 3)), M.f((2, 3)), -1.0, 1.0), {}),
    "leaky_relu_backward.grad_input": lambda M: ((M.f((2, 3)), M.f((2, 3)), 0.1, False), {}),
    "threshold_backward.grad_input": lambda M: ((M.f((2, 3)), M.f((2, 3)), 0.5), {}),
    "silu_backward.grad_input": lambda M: ((M.f((2, 3)), M.f((2, 3))), {}),
    "tanh_backward.grad_input": lambda M: ((M.f((2, 3)), M.f((3,))), {}),
    "sigmoid_backward.grad_input": lambda M: ((M.f((2, 3)), M.f((2, 3))), {}),
    "softplus_backward.grad_input": lambda M: ((M.f((2, 3)), M.f((2, 3)), 1.0, 20.0), {}),
    "embedding.out": lambda M: ((M.f((5, 3)), M.i((2, 4), 0, 4)), {}),
    "embedding_dense_backward.out": lambda M: ((M.f((2, 4, 3)), M.i((2, 4), 0, 4), 5, -1, False), {}),
    "empty.out": lambda M: (([2, 3],), {}),
    "empty_like.out": lambda M: ((M.f((2, 3)),), {}),
    "empty_strided.out": lambda M: (([2, 3], [1, 2]), {}),
    "new_empty.out": lambda M: ((M.f((2,)), [2, 3]), {}),
    "new_zeros.out": lambda M: ((M.f((2,)), [2, 3]), {}),
    "new_ones.out": lambda M: ((M.f((2,)), [2, 3]), {}),
    "new_full.out": lambda M: ((M.f((2,)), [2, 3], 1.5), {}),
    "zeros.out": lambda M: (([2, 3],), {}),
    "ones.out": lambda M: (([2, 3],), {}),
    "full.out": lambda M: (([2, 3], 2.5), {}),
    "zeros_like.out": lambda M: ((M.f((2, 3)),), {}),
    "ones_like.out": lambda M: ((M.f((2, 3)),), {}),
    "scalar_tensor.out": lambda M: ((2.5,), {}),
    "eye.out": lambda M: ((3,), {}),
    "eye.m_out": lambda M: ((2, 4), {}),
    "rand.out": lambda M: (([2, 3],), {}),
    "randn.out": lambda M: (([2, 3],), {}),
    "randint.out": lambda M: ((7, [2, 3]), {}),
    "randint.low_out": lambda M: ((3, 7, [2, 3]), {}),
    "randperm.out": lambda M: ((6,), {}),
    "full_like.out": lambda M: ((M.f((2, 3)), 2.5), {}),
    "rand_like.out": lambda M: ((M.f((2, 3)),), {}),
    "randn_like.out": lambda M: ((M.d((2, 3)),), {}),
    "randint_like.out": lambda M: ((M.i((2, 3)), 7), {}),
    "randint_like.low_dtype_out": lambda M: ((M.f((2, 3)), 2, 9), {}),
    # The unary .out kernels of kernels/unary_math.cc (not made by
    # out_variants.cc, but checked as those: a cast into out's dtype).
    "acosh.out": lambda M: ((M.f((2, 3), 1.0, 4.0),), {}),
    "asinh.out": lambda M: ((M.f((2, 3)),), {}),
    "atanh.out": lambda M: ((M.d((2, 3), -0.9, 0.9),), {}),
    "erfc.out": lambda M: ((M.i((2, 3)),), {}),
    "lgamma.out": lambda M: ((M.f((2, 3), 0.1, 4.0),), {}),
    "digamma.out": lambda M: ((M.f((2, 3), 0.1, 4.0),), {}),
    "angle.out": lambda M: ((M.i((2, 3)),), {}),
    "eq.Scalar_out": lambda M: ((M.i((2, 3), -2, 2), 1), {}),
    "eq.Tensor_out": lambda M: ((M.i((2, 3), -2, 2), M.i((3,), -2, 2)), {}),
    "ne.Scalar_out": lambda M: ((M.i((2, 3), -2, 2), 1), {}),
    "ne.Tensor_out": lambda M: ((M.i((2, 3), -2, 2), M.i((3,), -2, 2)), {}),
    "ge.Scalar_out": lambda M: ((M.f((2, 3)), 0.5), {}),
    "ge.Tensor_out": lambda M: ((M.f((2, 3)), M.f((3,))), {}),
    "gt.Scalar_out": lambda M: ((M.f((2, 3)), 0.5), {}),
    "gt.Tensor_out": lambda M: ((M.f((2, 3)), M.f((3,))), {}),
    "le.Scalar_out": lambda M: ((M.f((2, 3)), 0.5), {}),
    "le.Tensor_out": lambda M: ((M.f((2, 3)), M.f((3,))), {}),
    "lt.Scalar_out": lambda M: ((M.f((2, 3)), 0.5), {}),
    "lt.Tensor_out": lambda M: ((M.f((2, 3)), M.f((3,))), {}),
    "flip.out": lambda M: ((M.f((2, 3)), [0, 1]), {}),
    "floor_divide.out": lambda M: ((M.f((2, 3)), M.f((3,), 0.5, 2.0)), {}),
    "fmod.Scalar_out": lambda M: ((M.f((2, 3)), 1.5), {}),
    "fmod.Tensor_out": lambda M: ((M.f((2, 3)), M.f((3,), 0.5, 2.0)), {}),
    "gather.out": lambda M: ((M.f((3, 4)), 1, M.i((3, 2), 0, 3)), {}),
    "scatter_add.out": lambda M: ((M.f((3, 4)), 1, M.i((3, 2), 0, 3), M.f((3, 2))), {}),
    "index_put.out": lambda M: ((M.f((4, 3)), [M.i((2,), 0, 3)], M.f((3,))), {"accumulate": True}),
    "logsumexp.out": lambda M: ((M.f((2, 3)), [1]), {}),
    "masked_fill.Scalar_out": lambda M: ((M.f((2, 3)), M.b((3,)), 2.5), {}),
    "masked_fill.Tensor_out": lambda M: ((M.f((2, 3)), M.b((3,)), M.f(())), {}),
    "maximum.out": lambda M: ((M.f((2, 3)), M.f((3,))), {}),
    "minimum.out": lambda M: ((M.f((2, 3)), M.f((3,))), {}),
    "native_batch_norm.out": lambda M: (_bn(M), {}),
    "native_batch_norm_backward.out": lambda M: (
        (M.f((2, 3, 4)), M.f((2, 3, 4)), M.f((3,)), None, None, M.f((3,)),
         M.f((3,), 0.5, 2.0), True, 1e-5, [True, True, True]), {}),
    "native_layer_norm.out": lambda M: ((M.f((2, 3, 4)), [4], M.f((4,)), M.f((4,)), 1e-5), {}),
    "native_layer_norm_backward.out": lambda M: (
        (M.f((2, 3, 4)), M.f((2, 3, 4)), [4], M.f((2, 3, 1)), M.f((2, 3, 1), 0.5, 2.0),
         M.f((4,)), M.f((4,)), [True, True, True]), {}),
    "nll_loss.out": lambda M: ((M.f((4, 3)), M.i((4,), 0, 2), None, 1, -100), {}),
    "nll_loss2d.out": lambda M: ((M.f((2, 3, 2, 2)), M.i((2, 2, 2), 0, 2), None, 1, -100), {}),
    "nll_loss_forward.output": lambda M: ((M.f((4, 3)), M.i((4,), 0, 2), M.f((3,), 0.5, 2.0), 1, -100), {}),
    "nll_loss2d_forward.output": lambda M: ((M.f((2, 3, 2, 2)), M.i((2, 2, 2), 0, 2), None, 1, -100), {}),
    "nll_loss_backward.grad_input": lambda M: (
        (M.f(()), M.f((4, 3)), M.i((4,), 0, 2), None, 1, -100, M.f((), 4.0, 4.0)), {}),
    "nll_loss2d_backward.grad_input": lambda M: (
        (M.f(()), M.f((2, 3, 2, 2)), M.i((2, 2, 2), 0, 2), None, 1, -100, M.f((), 8.0, 8.0)), {}),
    "norm.Scalar_out": lambda M: ((M.f((2, 3)), 3), {}),
    "norm.out": lambda M: ((M.f((2, 3)), 2, [1]), {"keepdim": True}),
    "prod.out": lambda M: ((M.f((2, 3)),), {}),
    "prod.int_out": lambda M: ((M.f((2, 3)), 1), {"keepdim": True}),
    "repeat.out": lambda M: ((M.f((2, 3)), [2, 1, 2]), {}),
    "roll.out": lambda M: ((M.f((2, 3)), [1, -1], [0, 1]), {}),
    "unsafe_split.Tensor_out": lambda M: ((M.f((5, 3)), 2), {}),
    "unsafe_split_with_sizes.out": lambda M: ((M.f((5, 3)), [1, 4]), {}),
    "max.out": lambda M: ((M.f((2, 3)), M.f((3,))), {}),
    "min.out": lambda M: ((M.f((2, 3)), M.f((3,))), {}),
    "clamp.Tensor_out": lambda M: ((M.f((2, 3)), M.f((3,), -2.0, 0.0), M.f((2, 1), 0.0, 2.0)),
                                   {}),
    "clamp_max.Tensor_out": lambda M: ((M.f((2, 3)), M.f((3,))), {}),
    "clamp_min.Tensor_out": lambda M: ((M.f((2, 3)), M.f((3,))), {}),
    "isinf.out": lambda M: ((M.f((2, 3)),), {}),
    "isnan.out": lambda M: ((M.f((2, 3)),), {}),
    "bitwise_xor.Scalar_Tensor_out": lambda M: ((6, M.i((2, 3))), {}),
    "copy.out": lambda M: ((M.f((2, 3)), M.d((3,))), {}),
    "norm.ScalarOpt_dtype_out": lambda M: ((M.f((2, 3)), 2), {"dtype": M.lib.float64}),
    "norm.dtype_out": lambda M: ((M.f((2, 3)), 2, [1], False), {"dtype": M.lib.float64}),
    "where.self_out": lambda M: ((M.b((2, 3)), M.f((2, 3)), M.f((3,))), {}),
}

# Uninitialized or random values: compared by dtype, shape (and range).
_UNCOMPARED = {"empty.out", "empty_like.out", "empty_strided.out", "new_empty.out",
               "rand.out", "randn.out", "randint.out", "randint.low_out",
               "randperm.out", "rand_like.out", "randn_like.out",
               "randint_like.out", "randint_like.low_dtype_out"}
# torch 1.13 has no CPU kernel for it (only CUDA's): compared with the
# functional overload's result instead.
_NO_TORCH_CPU = {"native_batch_norm.out": "native_batch_norm"}

_DTYPES = ["bool", "uint8", "int32", "int64", "float32", "float64"]


def _op(lib, name):
    base, overload = name.split(".")
    return getattr(getattr(lib.ops.aten, base), overload)


def _out_names(name):
    return [a.name for a in _op(torch, name)._schema.arguments
            if a.alias_info is not None and a.alias_info.is_write]


def _is_list_out(name):
    return str(_op(torch, name)._schema.arguments[-1].type) == "List[Tensor]"


def _empty(lib, shape, dtype, device="cpu"):
    return lib.empty(*shape, dtype=getattr(lib, dtype), device=device)


def _outs(lib, name, shape, dtype, device="cpu"):
    if _is_list_out(name):
        # as many pieces as torch's functional overload gives
        args, kw = SAMPLES[name](Maker(torch))
        fn = {"unsafe_split.Tensor_out": torch.ops.aten.unsafe_split.Tensor,
              "unsafe_split_with_sizes.out":
                  torch.ops.aten.unsafe_split_with_sizes.default}[name]
        n = len(fn(*args, **kw))
        return {"out": [_empty(lib, shape, dtype, device) for _ in range(n)]}
    return {k: _empty(lib, shape, dtype, device) for k in _out_names(name)}


def _run(lib, name, outs):
    """(returned, None) or (None, exception) for the call on `lib`."""
    args, kw = SAMPLES[name](Maker(lib))
    try:
        return _op(lib, name)(*args, **kw, **outs), None
    except Exception as e:  # noqa: BLE001: the test compares what was raised
        return None, e


def _torch_run(name, outs):
    if name in _NO_TORCH_CPU:
        args, kw = SAMPLES[name](Maker(torch))
        try:
            results = getattr(torch.ops.aten, _NO_TORCH_CPU[name]).default(*args, **kw)
        except Exception as e:  # noqa: BLE001
            return None, e
        written = []
        for k, r in zip(_out_names(name), results):
            o = outs[k]
            if o.device.type != r.device.type:
                return None, RuntimeError("device")
            if o.dtype != r.dtype:
                return None, RuntimeError("dtype")
            o.resize_(r.shape).copy_(r)
            written.append(o)
        return tuple(written), None
    return _run(torch, name, outs)


def _flat(outs):
    flat = []
    for v in outs.values():
        flat.extend(v if isinstance(v, list) else [v])
    return flat


def _same_values(name, mine, theirs):
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], \
        (mine.dtype, theirs.dtype)
    assert tuple(mine.shape) == tuple(theirs.shape), (mine.shape, theirs.shape)
    if name in _UNCOMPARED or mine.device.type == "meta":
        return
    got = torch.from_numpy(np.array(mine.numpy()))
    if theirs.dtype.is_floating_point:
        torch.testing.assert_close(got.double(), theirs.double(), rtol=1e-5,
                                   atol=1e-5, equal_nan=True)
    else:
        assert torch.equal(got, theirs), (got, theirs)


NAMES = sorted(SAMPLES)

# ---- Tests ------------------------------------------------------------------------


def test_schemas_are_torchs():
    for name in NAMES:
        assert str(_op(turnout, name)._schema) == str(_op(torch, name)._schema), name


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", _DTYPES)
def test_out_of_each_dtype(name, dtype):
    """An empty out of each dtype: both refuse it, or both write the same
    values into it and return it."""
    mine_outs = _outs(turnout, name, (0,), dtype)
    their_outs = _outs(torch, name, (0,), dtype)
    mine, mine_err = _run(turnout, name, mine_outs)
    theirs, their_err = _torch_run(name, their_outs)
    if their_err is not None:
        assert mine_err is not None, f"torch raised {their_err!r}; turnout did not"
        if isinstance(their_err, RuntimeError):
            assert isinstance(mine_err, RuntimeError), repr(mine_err)
        return
    assert mine_err is None, f"turnout raised {mine_err!r}; torch did not"
    mine_flat, their_flat = _flat(mine_outs), _flat(their_outs)
    for m, t in zip(mine_flat, their_flat):
        _same_values(name, m, t)
    if theirs is None:
        assert mine is None
    elif isinstance(theirs, tuple):
        assert isinstance(mine, tuple) and len(mine) == len(theirs)
        assert all(r is o for r, o in zip(mine, mine_flat))
    else:
        assert mine is mine_flat[0]


def _natural_dtype(name):
    """The first dtype of _DTYPES, float32 first, torch accepts for out."""
    for d in ["float32"] + _DTYPES:
        if _torch_run(name, _outs(torch, name, (0,), d))[1] is None:
            return d
    pytest.fail(f"{name}: torch accepts no out dtype")


@pytest.mark.parametrize("name", NAMES)
def test_out_on_another_device(name):
    """An out on the meta device with CPU inputs: refused as torch refuses
    it (RuntimeError), or written as torch writes it."""
    d = _natural_dtype(name)
    theirs, their_err = _torch_run(name, _outs(torch, name, (0,), d, "meta"))
    if their_err is not None and not isinstance(their_err, RuntimeError):
        pytest.skip(f"torch 1.13 fails with {their_err!r}")
    mine_outs = _outs(turnout, name, (0,), d, "meta")
    mine, mine_err = _run(turnout, name, mine_outs)
    if their_err is not None:
        assert isinstance(mine_err, RuntimeError), repr(mine_err)
    else:
        assert mine_err is None, repr(mine_err)
        assert all(o.device.type == "meta" for o in _flat(mine_outs))


@pytest.mark.parametrize("name", NAMES)
def test_out_of_the_right_shape_keeps_its_strides(name):
    """An out of the result's shape is written in place, not resized."""
    d = _natural_dtype(name)
    probe = _outs(torch, name, (0,), d)
    if _torch_run(name, probe)[1] is not None:
        pytest.skip("torch refuses it")
    shapes = [tuple(o.shape) for o in _flat(probe)]
    mine_outs = _outs(turnout, name, (0,), d)
    for k, v in mine_outs.items():
        if isinstance(v, list):
            mine_outs[k] = [_empty(turnout, s, d) for s in shapes]
        else:
            mine_outs[k] = _empty(turnout, shapes[_out_names(name).index(k)], d)
    ptrs = [o.data_ptr() for o in _flat(mine_outs)]
    _, err = _run(turnout, name, mine_outs)
    assert err is None, repr(err)
    assert [o.data_ptr() for o in _flat(mine_outs)] == ptrs
    for o, t in zip(_flat(mine_outs), _flat(probe)):
        _same_values(name, o, t)


@pytest.mark.parametrize("name", NAMES)
def test_resizing_an_out_with_elements_warns(name, capfd):
    """An out with elements and the wrong shape is resized, with the
    deprecation warning torch gives: turnout's a Python UserWarning; torch's
    one too through torch.<name>, but printed by C++ through torch.ops (as
    called here), hence both channels read for torch's."""
    d = _natural_dtype(name)

    def resize_warnings(run):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = run()
        return result, [w for w in caught if "resized" in str(w.message)
                        and issubclass(w.category, UserWarning)]

    their_outs = _outs(torch, name, (7,), d)
    capfd.readouterr()
    (theirs, their_err), their_warnings = resize_warnings(
        lambda: _torch_run(name, their_outs))
    printed = "resized" in capfd.readouterr().err
    mine_outs = _outs(turnout, name, (7,), d)
    (mine, mine_err), my_warnings = resize_warnings(
        lambda: _run(turnout, name, mine_outs))
    assert (mine_err is None) == (their_err is None), (mine_err, their_err)
    warned = bool(their_warnings) or printed or name in _NO_TORCH_CPU
    assert bool(my_warnings) == warned, [str(w.message) for w in my_warnings]
    for m, t in zip(_flat(mine_outs), _flat(their_outs)):
        _same_values(name, m, t)


def test_functional_namespace_reaches_the_out_overloads():
    a = turnout.tensor([1, 2, 3])
    b = turnout.tensor([1, 0, 3])
    o = turnout.empty(0, dtype=turnout.bool)
    assert turnout.eq(a, b, out=o) is o
    assert o.tolist() == [True, False, True]
    x = turnout.tensor([-1.0, 0.5, 2.0])
    o = turnout.empty(0)
    assert turnout.clamp(x, min=0, out=o) is o
    assert o.tolist() == [0.0, 0.5, 2.0]
    o = turnout.empty(0)
    assert turnout.zeros(2, 3, out=o) is o
    assert o.shape == (2, 3) and o.sum().item() == 0
    o = turnout.empty(0, dtype=turnout.int64)
    assert turnout.ones([2], out=o) is o and o.tolist() == [1, 1]
    o = turnout.empty(0, dtype=turnout.float64)
    assert turnout.arange(1, 4, out=o) is o and o.tolist() == [1.0, 2.0, 3.0]
    o = turnout.empty(0)
    assert turnout.full([2], 7.5, out=o) is o and o.tolist() == [7.5, 7.5]
    o = turnout.empty(0)
    assert turnout.floor_divide(x, 2, out=o) is o
    c = turnout.tensor([True, False, True])
    o = turnout.empty(0)
    assert turnout.where(c, x, turnout.zeros(3), out=o) is o
    assert o.tolist() == [-1.0, 0.0, 2.0]
    o = turnout.empty(0, dtype=turnout.int64)
    assert turnout.randint(0, 5, (4,), out=o) is o and o.shape == (4,)
    o = turnout.empty(0, dtype=turnout.int64)
    assert turnout.randperm(4, out=o) is o and sorted(o.tolist()) == [0, 1, 2, 3]
    o = turnout.empty(0)
    assert turnout.rand(3, out=o) is o and o.shape == (3,)
    o = turnout.empty(0)
    assert turnout.randn(3, out=o) is o and o.shape == (3,)
    o = turnout.empty(0, dtype=turnout.int64)
    assert turnout.ops.aten.zeros_like.out(a, out=o) is o and o.tolist() == [0, 0, 0]
    o = turnout.empty(0)
    assert turnout.max(x, turnout.ones(3), out=o) is o and o.tolist() == [1.0, 1.0, 2.0]
    o = turnout.empty(0)
    assert turnout.clamp(x, turnout.zeros(3), turnout.ones(3), out=o) is o
    assert o.tolist() == [0.0, 0.5, 1.0]
    o = turnout.empty(0, dtype=turnout.bool)
    assert turnout.isnan(x, out=o) is o and o.tolist() == [False] * 3
    o = turnout.empty(0)
    assert turnout.linspace(0, 1, 3, out=o) is o and o.tolist() == [0.0, 0.5, 1.0]
    o = turnout.empty(0, dtype=turnout.float64)
    assert turnout.eye(2, out=o) is o and o.tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_factory_out_with_another_dtype_or_device_is_refused():
    o = turnout.empty(0)
    with pytest.raises(RuntimeError, match="does not match the dtype"):
        turnout.zeros(2, dtype=turnout.int64, out=o)
    with pytest.raises(RuntimeError, match="does not match the device"):
        turnout.arange(3, device="meta", out=o)
    assert o.shape == (0,)
    for fn in (lambda: torch.zeros(2, dtype=torch.int64, out=torch.empty(0)),
               lambda: torch.arange(3, device="meta", out=torch.empty(0))):
        with pytest.raises(RuntimeError):
            fn()


def test_refused_out_leaves_it_unchanged():
    a = turnout.tensor([1.5, 2.5])
    o = turnout.tensor([7, 8, 9])
    with pytest.raises(RuntimeError, match="can't be cast"):
        turnout.fmod(a, 1.0, out=o)
    assert o.tolist() == [7, 8, 9]
    o = turnout.tensor([7.0, 8.0, 9.0], dtype=turnout.float64)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype"):
        turnout.mv(turnout.ones(2, 2), a, out=o)
    assert o.tolist() == [7.0, 8.0, 9.0]


def test_partial_overlap_with_an_input_is_refused():
    a = turnout.tensor([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(RuntimeError, match="single memory location"):
        turnout.maximum(a[:3], a[1:], out=a[1:])
    with pytest.raises(RuntimeError):
        t = torch.tensor([1.0, 2.0, 3.0, 4.0])
        torch.maximum(t[:3], t[1:], out=t[1:])


def test_unsafe_split_needs_one_out_per_piece():
    x = turnout.ones(5, 3)
    outs = [turnout.empty(0) for _ in range(2)]
    with pytest.raises(RuntimeError, match="one per result"):
        turnout.ops.aten.unsafe_split.Tensor_out(x, 2, out=outs)
    assert all(o.shape == (0,) for o in outs)


@pytest.mark.parametrize("name", ["eq", "clamp", "maximum", "floor_divide",
                                  "fmod"])
def test_a_resized_out_takes_the_results_layout_as_torch(name):
    def strides(lib):
        x = lib.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]]).t()
        o = lib.empty(0, dtype=lib.bool) if name == "eq" else lib.empty(0)
        call = {"eq": lambda: lib.eq(x, x, out=o),
                "clamp": lambda: lib.clamp(x, 0, out=o),
                "maximum": lambda: lib.maximum(x, x, out=o),
                "floor_divide": lambda: lib.floor_divide(x, x, out=o),
                "fmod": lambda: lib.fmod(x, 2.0, out=o)}[name]
        assert call() is o
        return tuple(o.stride()), o.tolist()
    assert strides(turnout) == strides(torch)
