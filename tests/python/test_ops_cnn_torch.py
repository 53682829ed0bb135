"""Convolution, pooling and batch norm (issue 20 item 3) against torch 1.13:
schemas, a CNN block's forward and backward (conv -> batch_norm in training
-> relu -> max_pool -> avg_pool -> adaptive_avg_pool) over a grid of
strides, paddings, dilations and groups, the running statistics batch_norm
updates in place, error messages, and Meta shapes. (Every operator's
samples are also in op_db.py, for the differential test.)"""

import itertools

import numpy as np
import pytest
import torch

import turnout

OPS = ["convolution", "convolution.out", "convolution_backward", "conv2d",
       "conv1d", "conv_transpose1d", "conv_transpose2d.input", "_convolution", "_convolution.deprecated", "max_pool2d",
       "max_pool2d_with_indices", "max_pool2d_with_indices.out",
       "max_pool2d_with_indices_backward",
       "max_pool2d_with_indices_backward.grad_input", "avg_pool2d",
       "avg_pool2d.out", "avg_pool2d_backward", "avg_pool2d_backward.grad_input",
       "adaptive_avg_pool2d", "adaptive_avg_pool2d.out", "_adaptive_avg_pool2d",
       "_adaptive_avg_pool2d.out", "_adaptive_avg_pool2d_backward",
       "_adaptive_avg_pool2d_backward.out", "batch_norm", "native_batch_norm",
       "native_batch_norm_backward"]


def _overload(lib, qualname):
    base, _, overload = qualname.partition(".")
    return getattr(getattr(lib.ops.aten, base), overload or "default")


def _tt(x, requires_grad=False):
    t = turnout.from_numpy(x.detach().numpy().copy()).clone()
    if requires_grad:
        t.requires_grad_(True)
    return t


def _close(mine, theirs, tol):
    assert tuple(mine.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(np.asarray(mine.detach().numpy()),
                               theirs.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("qualname", OPS)
def test_schemas_are_torchs(qualname):
    assert str(_overload(turnout, qualname)._schema) == str(
        _overload(torch, qualname)._schema)


# (stride, padding, dilation, groups) of the block's convolution.
_GRID = list(itertools.product([1, 2], [0, 1], [1, 2], [1, 2]))


@pytest.mark.parametrize("stride,padding,dilation,groups", _GRID)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cnn_block_forward_backward(stride, padding, dilation, groups, dtype):
    g = torch.Generator().manual_seed(stride * 100 + padding * 10 + dilation + groups)
    x = torch.randn(2, 4, 11, 10, generator=g, dtype=dtype)
    w = torch.randn(6, 4 // groups, 3, 3, generator=g, dtype=dtype) * 0.3
    b = torch.randn(6, generator=g, dtype=dtype)
    gamma = torch.rand(6, generator=g, dtype=dtype) + 0.5
    beta = torch.randn(6, generator=g, dtype=dtype)
    rm = torch.randn(6, generator=g, dtype=dtype)
    rv = torch.rand(6, generator=g, dtype=dtype) + 0.5
    leaves_t = [t.clone().requires_grad_() for t in (x, w, b, gamma, beta)]
    leaves_u = [_tt(t, requires_grad=True) for t in (x, w, b, gamma, beta)]
    stats_t = [rm.clone(), rv.clone()]
    stats_u = [_tt(rm), _tt(rv)]

    def block(lib, leaves, stats):
        xx, ww, bb, ga, be = leaves
        a = lib.ops.aten
        y = a.conv2d.default(xx, ww, bb, [stride, stride], [padding, padding],
                             [dilation, dilation], groups)
        y = a.batch_norm.default(y, ga, be, stats[0], stats[1], True, 0.1, 1e-5,
                                 False)
        y = a.relu.default(y)
        y = a.max_pool2d.default(y, [2, 2], [], [1, 1], [1, 1], True)
        y = a.avg_pool2d.default(y, [2, 2], [1, 1], [0, 0], False, True, None)
        return a.adaptive_avg_pool2d.default(y, [2, 3])

    tol = 1e-4 if dtype == torch.float32 else 1e-9
    out_t = block(torch, leaves_t, stats_t)
    out_u = block(turnout, leaves_u, stats_u)
    _close(out_u, out_t, tol)
    for mine, theirs in zip(stats_u, stats_t):  # updated in place
        _close(mine, theirs, tol)
    weights = torch.randn(out_t.shape, generator=g, dtype=dtype)
    (out_t * weights).sum().backward()
    (out_u * _tt(weights)).sum().backward()
    for mine, theirs in zip(leaves_u, leaves_t):
        _close(mine.grad, theirs.grad, 10 * tol)


def test_batch_norm_eval_leaves_running_stats():
    x = torch.randn(3, 2, 4)
    rm, rv = torch.randn(2), torch.rand(2) + 0.5
    ours_rm, ours_rv = _tt(rm), _tt(rv)
    y = turnout.ops.aten.batch_norm.default(_tt(x), None, None, ours_rm, ours_rv,
                                            False, 0.1, 1e-5, False)
    _close(y, torch.batch_norm(x, None, None, rm, rv, False, 0.1, 1e-5, False), 1e-5)
    _close(ours_rm, rm, 0)
    _close(ours_rv, rv, 0)


@pytest.mark.parametrize("values", [
    [[1.0, float("nan"), 3.0], [4.0, 5.0, float("nan")], [7.0, 8.0, 9.0]],
    [[1.0, 1.0, 2.0], [1.0, 0.0, 2.0], [2.0, 2.0, 2.0]]], ids=["nan", "ties"])
def test_max_pool_indices_nan_and_ties(values):
    # Ties are here rather than in op_db: gradcheck's finite differences
    # split a tie's gradient, autograd (torch's too) gives it to one input.
    x = torch.tensor([[values]])
    x.requires_grad_()
    xu = _tt(x, requires_grad=True)
    for args in ([2, 2], [], [0, 0], [1, 1], False), ([2, 2], [1, 1], [1, 1], [1, 1], True):
        v_t, i_t = torch.ops.aten.max_pool2d_with_indices.default(x, *args)
        v_u, i_u = turnout.ops.aten.max_pool2d_with_indices.default(xu, *args)
        np.testing.assert_array_equal(np.asarray(i_u.numpy()), i_t.numpy())
        np.testing.assert_array_equal(np.asarray(v_u.detach().numpy()),
                                      v_t.detach().numpy())
        v_t.sum().backward()
        v_u.sum().backward()
        np.testing.assert_array_equal(np.asarray(xu.grad.numpy()), x.grad.numpy())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(2, 3, 8, 8), (1, 2, 7, 9)])
def test_max_pool_2x2_with_nan_inf_and_ties(dtype, shape):
    # The 2x2 / stride 2 windows have a path of their own (kernels/pool.cc):
    # values from a few levels, so that ties are common, with NaN, -inf and
    # inf sprinkled in; an odd size leaves the last row/column out.
    gen = torch.Generator().manual_seed(7)
    levels = torch.tensor([-float("inf"), -1.0, 0.0, 0.0, 1.0, 2.0,
                           float("inf"), float("nan")], dtype=dtype)
    x = levels[torch.randint(0, len(levels), shape, generator=gen)]
    for ceil_mode in (False, True):
        v_t, i_t = torch.ops.aten.max_pool2d_with_indices.default(
            x, [2, 2], [2, 2], [0, 0], [1, 1], ceil_mode)
        v_u, i_u = turnout.ops.aten.max_pool2d_with_indices.default(
            _tt(x), [2, 2], [2, 2], [0, 0], [1, 1], ceil_mode)
        np.testing.assert_array_equal(np.asarray(i_u.numpy()), i_t.numpy())
        np.testing.assert_array_equal(np.asarray(v_u.numpy()), v_t.numpy())


# (call, the start of torch's message): turnout raises with the same words.
_A = turnout.ops.aten


def _x(*shape):
    return turnout.ones(*shape)


_ERRORS = [
    (lambda: _A.conv2d.default(_x(1, 2, 6, 6), _x(4, 3, 3, 3)),
     "Given groups=1, weight of size [4, 3, 3, 3], expected input[1, 2, 6, 6] "
     "to have 3 channels, but got 2 channels instead"),
    (lambda: _A.conv2d.default(_x(1, 3, 2, 2), _x(4, 3, 3, 3)),
     "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). "
     "Kernel size can't be greater than actual input size"),
    (lambda: _A.conv2d.default(_x(1, 3, 6, 6), _x(4, 3, 3, 3), _x(3)),
     "Given weight of size [4, 3, 3, 3], expected bias to be 1-dimensional with 4 "
     "elements, but got bias of size [3] instead"),
    (lambda: _A.conv2d.default(_x(6, 6), _x(4, 3, 3, 3)),
     "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of "
     "size: [6, 6]"),
    (lambda: _A.convolution.default(_x(3, 6, 6), _x(4, 3, 3, 3), None, [1], [0], [1],
                                    False, [0], 1),
     "Expected 4-dimensional input for 4-dimensional weight [4, 3, 3, 3], but got "
     "3-dimensional input of size [3, 6, 6] instead"),
    (lambda: _A.max_pool2d.default(_x(1, 3, 2, 2), [3, 3]),
     "max_pool2d: Given input size: (3x2x2). Calculated output size: (3x0x0). "
     "Output size is too small"),
    (lambda: _A.avg_pool2d.default(_x(1, 3, 6, 6), [3, 3], [1, 1], [2, 2]),
     "avg_pool2d: pad should be at most half of kernel size, but got pad=2 and "
     "kernel_size=3"),
    (lambda: _A.adaptive_avg_pool2d.default(_x(2, 3, 0, 8), [3, 3]),
     "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
     "dimensions, but input has sizes [2, 3, 0, 8] with dimension 2 being empty"),
    (lambda: _A.batch_norm.default(_x(4, 3, 2), None, None, _x(4), _x(3), True, 0.1,
                                   1e-5, False),
     "running_mean should contain 3 elements not 4"),
    (lambda: _A.native_batch_norm.default(_x(4, 3), None, None, None, None, False,
                                          0.1, 1e-5),
     "native_batch_norm(): running_mean and running_var must be given when "
     "training=False"),
]


@pytest.mark.parametrize("i", range(len(_ERRORS)))
def test_errors(i):
    call, message = _ERRORS[i]
    with pytest.raises((RuntimeError, IndexError)) as info:
        call()
    assert message in str(info.value)


# (stride, padding, output_padding, dilation, groups) of a transposed
# convolution; output_padding is below the stride or the dilation.
_TRANSPOSED_GRID = [(1, 0, 0, 1, 1), (2, 1, 1, 1, 1), (2, 0, 1, 2, 2),
                    (3, 2, 2, 1, 1), (1, 1, 1, 2, 1), (2, 1, 0, 1, 3)]


@pytest.mark.parametrize("stride,padding,output_padding,dilation,groups",
                         _TRANSPOSED_GRID)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("nsp", [1, 2])
def test_conv_transpose_forward_backward(stride, padding, output_padding, dilation,
                                         groups, dtype, nsp):
    g = torch.Generator().manual_seed(stride * 1000 + padding * 100 + output_padding * 10
                                      + dilation + groups * 7 + nsp)
    spatial = (5, 4)[:nsp] if nsp == 2 else (7,)
    kernel = (3, 2)[:nsp] if nsp == 2 else (3,)
    x = torch.randn(2, 3 * groups, *spatial, generator=g, dtype=dtype)
    w = torch.randn(3 * groups, 2, *kernel, generator=g, dtype=dtype) * 0.3
    b = torch.randn(2 * groups, generator=g, dtype=dtype)
    leaves_t = [t.clone().requires_grad_() for t in (x, w, b)]
    leaves_u = [_tt(t, requires_grad=True) for t in (x, w, b)]
    name = "conv_transpose2d" if nsp == 2 else "conv_transpose1d"

    def call(lib, leaves):
        op = getattr(lib.ops.aten, name)
        op = op.input if nsp == 2 else op.default
        return op(*leaves, [stride] * nsp, [padding] * nsp, [output_padding] * nsp,
                  groups, [dilation] * nsp)

    tol = 1e-4 if dtype == torch.float32 else 1e-9
    out_t = call(torch, leaves_t)
    out_u = call(turnout, leaves_u)
    _close(out_u, out_t, tol)
    assert out_u.grad_fn.name() == out_t.grad_fn.name()
    weights = torch.randn(out_t.shape, generator=g, dtype=dtype)
    (out_t * weights).sum().backward()
    (out_u * _tt(weights)).sum().backward()
    for mine, theirs in zip(leaves_u, leaves_t):
        _close(mine.grad, theirs.grad, 10 * tol)


def test_conv_transpose_unbatched_and_module():
    m = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1,
                                 groups=2)
    x = torch.randn(4, 5, 5)
    y = turnout.ops.aten.conv_transpose2d.input(
        _tt(x), _tt(m.weight), _tt(m.bias), [2, 2], [1, 1], [1, 1], 2)
    _close(y, m(x), 1e-5)


_TRANSPOSED_ERRORS = [
    ((1, 1), (0, 0), (1, 1), (1, 1), 1, (4, 3, 3, 3), (1, 4, 5, 5),
     "output padding must be smaller than either stride or dilation"),
    ((1, 1), (5, 5), (0, 0), (1, 1), 1, (4, 3, 3, 3), (1, 4, 5, 5),
     "Given input size per channel: (5 x 5). Calculated output size per channel: "
     "(-3 x -3). Output size is too small"),
    ((1, 1), (0, 0), (0, 0), (1, 1), 1, (4, 3, 3, 3), (1, 5, 5, 5),
     "Given transposed=1, weight of size [4, 3, 3, 3], expected input[1, 5, 5, 5] "
     "to have 4 channels, but got 5 channels instead"),
    ((1, 1), (0, 0), (-1, 0), (1, 1), 1, (4, 3, 3, 3), (1, 4, 5, 5),
     "negative output_padding is not supported"),
    ((1, 1), (0, 0), (0, 0), (1, 1), 3, (4, 3, 3, 3), (1, 4, 5, 5),
     "expected weight to be divisible by 3 at dimension 0"),
]


@pytest.mark.parametrize("i", range(len(_TRANSPOSED_ERRORS)))
def test_conv_transpose_errors_are_torchs(i):
    stride, padding, output_padding, dilation, groups, wshape, xshape, message = (
        _TRANSPOSED_ERRORS[i])
    for lib, make in ((torch, torch.ones), (turnout, turnout.ones)):
        with pytest.raises(RuntimeError) as info:
            lib.ops.aten.convolution.default(make(*xshape), make(*wshape), None,
                                             list(stride), list(padding),
                                             list(dilation), True,
                                             list(output_padding), groups)
        # torch prints the weight's size in double brackets in the groups
        # message; the words are the same.
        assert message in str(info.value).replace("[[", "[").replace("]]", "]")


def test_conv_transpose_bias_size_is_checked():
    with pytest.raises(RuntimeError, match="expected bias to be 1-dimensional with 3 "
                       "elements, but got bias of size \\[4\\]"):
        _A.convolution.default(_x(1, 4, 5, 5), _x(4, 3, 3, 3), _x(4), [1, 1], [0, 0],
                               [1, 1], True, [0, 0], 1)


def test_three_d_is_refused_clearly():
    with pytest.raises(NotImplementedError, match="only 1-d and 2-d convolutions"):
        _A.convolution.default(_x(1, 3, 4, 4, 4), _x(2, 3, 2, 2, 2), None, [1], [0],
                               [1], False, [0], 1)


def test_meta_shapes():
    m = dict(device="meta")
    x = turnout.empty(2, 3, 9, 8, **m)
    w = turnout.empty(4, 3, 3, 3, **m)
    y = _A.conv2d.default(x, w, None, [2, 2], [1, 1])
    assert y.device.type == "meta" and tuple(y.shape) == (2, 4, 5, 4)
    v, i = _A.max_pool2d_with_indices.default(x, [3, 3], [2, 2], [1, 1], [1, 1], True)
    assert tuple(v.shape) == (2, 3, 5, 5) and i.dtype == turnout.int64
    assert tuple(_A.avg_pool2d.default(x, [2, 2]).shape) == (2, 3, 4, 4)
    assert tuple(_A._adaptive_avg_pool2d.default(x, [3, 5]).shape) == (2, 3, 3, 5)
    out, mean, invstd = _A.native_batch_norm.default(x, None, None, None, None, True,
                                                     0.1, 1e-5)
    assert tuple(out.shape) == (2, 3, 9, 8) and tuple(mean.shape) == (3,)
    gi, gw, gb = _A.convolution_backward.default(
        turnout.empty(2, 4, 5, 4, **m), x, w, [4], [2, 2], [1, 1], [1, 1], False,
        [0, 0], 1, [True, True, True])
    assert tuple(gi.shape) == (2, 3, 9, 8) and tuple(gw.shape) == (4, 3, 3, 3)
    assert tuple(gb.shape) == (4,)
    yt = _A.conv_transpose2d.input(y, w, None, [2, 2], [1, 1], [1, 0])
    assert yt.device.type == "meta" and tuple(yt.shape) == (2, 3, 10, 7)


@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_gradients_with_running_stats(training):
    # op_db's gradient test cannot cover these (its running stats are float
    # leaves that require grad, which both libraries refuse).
    g = torch.Generator().manual_seed(7)
    x = torch.randn(3, 4, 5, generator=g, dtype=torch.float64)
    w, b = torch.rand(4, generator=g, dtype=torch.float64) + 0.5, torch.randn(4, generator=g, dtype=torch.float64)
    rm, rv = torch.randn(4, generator=g, dtype=torch.float64), torch.rand(4, generator=g, dtype=torch.float64) + 0.5
    leaves_t = [t.clone().requires_grad_() for t in (x, w, b)]
    leaves_u = [_tt(t, requires_grad=True) for t in (x, w, b)]
    y_t = torch.ops.aten.batch_norm.default(*leaves_t, rm.clone(), rv.clone(), training,
                                            0.1, 1e-5, False)
    y_u = turnout.ops.aten.batch_norm.default(*leaves_u, _tt(rm), _tt(rv), training,
                                              0.1, 1e-5, False)
    weights = torch.randn(y_t.shape, generator=g, dtype=torch.float64)
    (y_t * weights).sum().backward()
    (y_u * _tt(weights)).sum().backward()
    _close(y_u, y_t, 1e-10)
    for mine, theirs in zip(leaves_u, leaves_t):
        _close(mine.grad, theirs.grad, 1e-10)


def test_running_stats_that_require_grad_are_refused():
    rm = turnout.zeros(3)
    rm.requires_grad_(True)
    with pytest.raises(RuntimeError, match="not differentiable with respect to "
                       "argument 'running_mean'"):
        _A.native_batch_norm.default(_x(4, 3), None, None, rm, turnout.ones(3), True,
                                     0.1, 1e-5)


def _traced_block(x, w, b, gamma, beta, rm, rv):
    y = torch.nn.functional.conv2d(x, w, b, 1, 1)
    y = torch.nn.functional.batch_norm(y, rm, rv, gamma, beta, True, 0.1, 1e-5)
    y = torch.nn.functional.max_pool2d(torch.relu(y), 2)
    y = torch.nn.functional.avg_pool2d(y, 2, ceil_mode=True)
    return torch.nn.functional.adaptive_avg_pool2d(y, 1)


def test_traced_cnn_block_runs_in_the_graph_executor():
    # What torch.jit.trace prints for a CNN block (aten::_convolution,
    # batch_norm, max_pool2d, avg_pool2d, adaptive_avg_pool2d) runs to
    # torch's result and running statistics.
    import turnout.jit as tj
    g = torch.Generator().manual_seed(3)
    make = lambda: [torch.randn(2, 3, 8, 8, generator=g), torch.randn(4, 3, 3, 3, generator=g),
                    torch.randn(4, generator=g), torch.rand(4, generator=g) + 0.5,
                    torch.randn(4, generator=g), torch.zeros(4), torch.ones(4)]  # noqa: E731
    args = make()
    text = str(torch.jit.trace(_traced_block, [a.clone() for a in args]).graph)
    assert "aten::_convolution" in text
    expected = _traced_block(*args)  # updates args' running stats
    executor = tj.GraphExecutor(tj.Graph.parse(text))
    for _ in range(2):
        fresh = make()
        ours = [_tt(a) for a in fresh]
        theirs = [a.clone() for a in fresh]
        _close(executor(*ours), _traced_block(*theirs), 1e-5)
        _close(ours[5], theirs[5], 1e-6)
        _close(ours[6], theirs[6], 1e-6)
    assert expected.shape == (2, 4, 1, 1)
