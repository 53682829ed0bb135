"""Tests for bindings/tensor.cc (TensorBase), turnout/_tensor.py,
turnout/_tensor_str.py and turnout/_factories.py."""

import gc
import math

import pytest

import turnout
from turnout import _C
from script_runner import run_script


# ---- Factories ---------------------------------------------------------------

@pytest.mark.parametrize("data,dtype,shape,values", [
    ([[1.0, 2.0], [3.0, 4.0]], turnout.float32, (2, 2), [[1.0, 2.0], [3.0, 4.0]]),
    ([1, 2, 3], turnout.int64, (3,), [1, 2, 3]),
    ([True, False], turnout.bool, (2,), [True, False]),
    (2.5, turnout.float32, (), 2.5),
    (7, turnout.int64, (), 7),
    ((1, 2.5), turnout.float32, (2,), [1.0, 2.5]),
    ([], turnout.float32, (0,), []),
])
def test_tensor_infers_dtype_and_shape(data, dtype, shape, values):
    x = turnout.tensor(data)
    assert x.dtype is dtype
    assert x.shape == shape
    assert x.tolist() == values


def test_tensor_options():
    x = turnout.tensor([1, 2], dtype=turnout.float64)
    assert x.dtype is turnout.float64
    assert turnout.tensor([1.0], device="meta").is_meta
    assert turnout.tensor([1.0], requires_grad=True).requires_grad


def test_tensor_with_a_dtype_converts_the_values_once():
    # As torch's: no rounding through the default float32 first.
    assert turnout.tensor([0.1], dtype=turnout.float64).tolist() == [0.1]
    assert turnout.tensor(2**60 + 1, dtype=turnout.float64).item() == float(2**60 + 1)
    assert turnout.tensor([1.7, -1.7], dtype=turnout.int32).tolist() == [1, -1]
    assert turnout.tensor(0.1).tolist() == pytest.approx(0.1, rel=1e-7)
    assert turnout.tensor(0.1).dtype is turnout.float32


def test_local_scalar_dense_of_an_empty_tensor_is_an_error():
    # torch 1.13 reads past the storage here.
    with pytest.raises(ValueError, match="no element to read"):
        turnout.ops.aten._local_scalar_dense(turnout.empty(0))


def test_tensor_copies_its_data():
    src = turnout.tensor([1.0, 2.0])
    copy = turnout.tensor(src)
    copy[0] = 5.0
    assert src.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("data,match", [
    (["a"], "expected numbers"),
    ([[1, 2], [3]], "cannot read data of type list"),
    ([1 + 2j], "expected numbers|complex"),
])
def test_tensor_rejects_non_numbers(data, match):
    with pytest.raises(TypeError, match=match):
        turnout.tensor(data)


@pytest.mark.parametrize("make", [
    lambda: turnout.zeros(2, 3), lambda: turnout.zeros([2, 3]),
    lambda: turnout.zeros((2, 3)), lambda: turnout.ones(2, 3),
    lambda: turnout.empty(2, 3), lambda: turnout.rand(2, 3),
    lambda: turnout.randn([2, 3]), lambda: turnout.full((2, 3), 1.5),
])
def test_factories_take_sizes_as_varargs_or_a_sequence(make):
    x = make()
    assert x.shape == (2, 3)
    assert x.dtype is turnout.float32


def test_factory_values():
    assert turnout.zeros(2).tolist() == [0.0, 0.0]
    assert turnout.ones(2, dtype=turnout.int32).tolist() == [1, 1]
    assert turnout.full([2], 7).tolist() == [7, 7]
    assert turnout.full([2], 7).dtype is turnout.int64
    assert turnout.arange(4).tolist() == [0, 1, 2, 3]
    assert turnout.arange(1, 3).tolist() == [1, 2]
    assert turnout.arange(0, 1, 0.5).tolist() == [0.0, 0.5]
    r = turnout.rand(1000)
    assert 0.0 <= min(r.tolist()) and max(r.tolist()) < 1.0
    assert turnout.zeros_like(r).shape == (1000,)
    assert turnout.ones_like(r, dtype=turnout.int8).dtype is turnout.int8
    assert turnout.empty_like(r).shape == (1000,)
    assert turnout.zeros(2, requires_grad=True).requires_grad


def test_factory_size_errors():
    with pytest.raises(TypeError, match=r"zeros\(\): sizes must be ints, got float \(2.5\)"):
        turnout.zeros(2.5)
    with pytest.raises(ValueError):
        turnout.zeros(-1)


def test_tensor_base_cannot_be_constructed_directly():
    with pytest.raises(TypeError, match="cannot be constructed directly"):
        _C.TensorBase()


# ---- Metadata ------------------------------------------------------------------

def test_metadata():
    x = turnout.zeros(2, 3, dtype=turnout.float64)
    assert isinstance(x, turnout.Tensor) and isinstance(x, _C.TensorBase)
    assert x.shape == turnout.Size([2, 3]) and repr(x.shape) == "turnout.Size([2, 3])"
    assert x.size() == (2, 3) and x.size(1) == 3 and x.size(-1) == 3
    assert x.stride() == (3, 1) and x.stride(0) == 3
    assert x.dim() == 2 and x.ndim == 2
    assert x.numel() == 6
    assert x.element_size() == 8
    assert x.is_contiguous() and not x.t().is_contiguous()
    assert x.is_cpu and not x.is_cuda and not x.is_meta
    assert len(x) == 2
    with pytest.raises(IndexError, match=r"dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        x.size(2)
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(turnout.tensor(1.0))


def test_item_and_tolist():
    assert turnout.tensor([[1, 2]]).tolist() == [[1, 2]]
    assert turnout.tensor(3.5).item() == 3.5
    assert turnout.tensor([True]).item() is True
    assert turnout.tensor([1.0, 2.0], dtype=turnout.bfloat16).tolist() == [1.0, 2.0]
    with pytest.raises(ValueError):
        turnout.tensor([1, 2]).item()
    assert float(turnout.tensor(2)) == 2.0 and int(turnout.tensor(2.7)) == 2
    assert [10, 20, 30][turnout.tensor(1)] == 20
    assert bool(turnout.tensor([1]))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(turnout.tensor([1, 2]))


# ---- repr ----------------------------------------------------------------------

@pytest.mark.parametrize("make,text", [
    (lambda: turnout.tensor([[1.0, 2.0], [3.0, 4.0]]),
     "tensor([[1., 2.],\n        [3., 4.]])"),
    (lambda: turnout.tensor([1.5, -2.25]), "tensor([ 1.5000, -2.2500])"),
    (lambda: turnout.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: turnout.tensor([1.0, math.nan, -math.inf]), "tensor([1., nan, -inf])"),
    (lambda: turnout.tensor([1.5, math.nan]), "tensor([1.5000,    nan])"),
    (lambda: turnout.tensor([0.0, 10.0]), "tensor([ 0., 10.])"),
    (lambda: turnout.tensor([1e9, 1.0]), "tensor([1.0000e+09, 1.0000e+00])"),
    (lambda: turnout.zeros(2, 3, device="meta", dtype=turnout.int32),
     "tensor(..., device='meta', size=(2, 3), dtype=turnout.int32)"),
    (lambda: turnout.zeros(0, 3, dtype=turnout.int32),
     "tensor([], size=(0, 3), dtype=turnout.int32)"),
    (lambda: turnout.tensor(2.5, dtype=turnout.float64), "tensor(2.5000, dtype=turnout.float64)"),
    (lambda: turnout.tensor([1, 20, 300]), "tensor([  1,  20, 300])"),
    (lambda: turnout.tensor([True, False]), "tensor([ True, False])"),
    (lambda: turnout.tensor(2.0), "tensor(2.)"),
    (lambda: turnout.tensor(3), "tensor(3)"),
    (lambda: turnout.tensor([1, 2], dtype=turnout.int32), "tensor([1, 2], dtype=turnout.int32)"),
    (lambda: turnout.tensor([1.0], dtype=turnout.float64), "tensor([1.], dtype=turnout.float64)"),
    (lambda: turnout.tensor([]), "tensor([])"),
    (lambda: turnout.zeros(0, 3), "tensor([], size=(0, 3))"),
    (lambda: turnout.zeros(0, dtype=turnout.int64), "tensor([], dtype=turnout.int64)"),
    (lambda: turnout.zeros(2, 3, device="meta"), "tensor(..., device='meta', size=(2, 3))"),
    (lambda: turnout.zeros(2, 2, 1),
     "tensor([[[0.],\n         [0.]],\n\n        [[0.],\n         [0.]]])"),
    (lambda: turnout.tensor([1.0], requires_grad=True), "tensor([1.], requires_grad=True)"),
    (lambda: turnout.arange(2000.0),
     "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
     "        1.9990e+03])"),
])
def test_repr_like_pytorch(make, text):
    assert repr(make()) == text


def test_repr_summarizes_rows():
    text = repr(turnout.arange(3000).view(30, 100))
    lines = text.split("\n")
    assert lines[0] == "tensor([[   0,    1,    2,  ...,   97,   98,   99],"
    assert lines[3] == "        ...,"
    assert lines[-1] == "        [2900, 2901, 2902,  ..., 2997, 2998, 2999]])"


# ---- Operators and methods ---------------------------------------------------

def test_arithmetic_operators():
    a = turnout.tensor([1.0, 2.0])
    b = turnout.tensor([4.0, 8.0])
    assert (a + b).tolist() == [5.0, 10.0]
    assert (a + 1).tolist() == [2.0, 3.0] and (1 + a).tolist() == [2.0, 3.0]
    assert (b - a).tolist() == [3.0, 6.0] and (10 - a).tolist() == [9.0, 8.0]
    assert (a * b).tolist() == [4.0, 16.0] and (2 * a).tolist() == [2.0, 4.0]
    assert (b / a).tolist() == [4.0, 4.0] and (1 / b).tolist() == [0.25, 0.125]
    assert (-a).tolist() == [-1.0, -2.0]
    assert abs(-a).tolist() == [1.0, 2.0]
    assert (a ** 2).tolist() == [1.0, 4.0]
    m = turnout.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert (m @ m).tolist() == [[7.0, 10.0], [15.0, 22.0]]


def test_in_place_operators_keep_the_object():
    a = turnout.tensor([1.0, 2.0])
    before = id(a)
    a += 1
    a *= turnout.tensor([2.0, 2.0])
    a -= 1
    a /= 2
    assert a.tolist() == [1.5, 2.5]
    assert id(a) == before
    assert a.add_(1) is a and a.mul_(turnout.tensor([1.0, 1.0])) is a
    assert a.fill_(3) is a and a.tolist() == [3.0, 3.0]
    assert a.copy_(turnout.tensor([1, 2])) is a and a.tolist() == [1.0, 2.0]


def test_comparisons():
    a = turnout.tensor([1, 2, 3])
    assert (a == 2).tolist() == [False, True, False]
    assert (a != a).tolist() == [False, False, False]
    assert (a < 2).tolist() == [True, False, False]
    assert (a <= turnout.tensor([1, 1, 1])).tolist() == [True, False, False]
    assert (a > 2).tolist() == [False, False, True]
    assert (a >= 2).tolist() == [False, True, True]
    assert len({a, a}) == 1  # hashable by identity


def test_reference_operator_methods():
    x = turnout.tensor([[1.0, -2.0], [3.0, 4.0]])
    assert x.t().tolist() == [[1.0, 3.0], [-2.0, 4.0]]
    assert x.sum().item() == 6.0
    assert x.sum(0).tolist() == [4.0, 2.0]
    assert x.mean().item() == 1.5
    assert x.relu().tolist() == [[1.0, 0.0], [3.0, 4.0]]
    assert x.view(4).tolist() == [1.0, -2.0, 3.0, 4.0]
    assert x.view(-1, 1).shape == (4, 1)
    assert x.reshape([1, 4]).shape == (1, 4)
    assert x.permute(1, 0).tolist() == x.t().tolist()
    assert x.transpose(0, 1).tolist() == x.t().tolist()
    assert x.unsqueeze(0).shape == (1, 2, 2)
    assert x.unsqueeze(0).squeeze().shape == (2, 2)
    assert x.unsqueeze(0).squeeze(0).shape == (2, 2)
    assert x[0].expand(3, 2).shape == (3, 2)
    assert x.T.tolist() == x.t().tolist()
    assert x.amax(1).tolist() == [1.0, 4.0]
    assert x.argmax().item() == 3
    assert x.clamp(min=0.0).tolist() == [[1.0, 0.0], [3.0, 4.0]]
    assert x.abs().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert x.mm(x).tolist() == (x @ x).tolist()
    assert x.softmax(1).sum(1).tolist() == pytest.approx([1.0, 1.0])
    assert x.clone().tolist() == x.tolist()
    assert x.abs().sqrt().tolist()[1] == pytest.approx([3.0 ** 0.5, 2.0])
    assert x[1].exp().log().tolist() == pytest.approx([3.0, 4.0])
    assert x.tanh().sigmoid().shape == (2, 2)


def test_conversions():
    x = turnout.tensor([1.5, 2.5])
    assert x.to(turnout.float64).dtype is turnout.float64
    assert x.to(turnout.int32).tolist() == [1, 2]
    assert x.to("cpu") is x and x.cpu() is x
    assert x.to(x) is x
    assert x.to(dtype=turnout.float32, copy=True) is not x
    assert x.to("meta").is_meta
    assert x.long().dtype is turnout.int64 and x.double().dtype is turnout.float64
    assert x.half().dtype is turnout.float16 and x.int().dtype is turnout.int32
    assert x.bool().dtype is turnout.bool and x.long().float().dtype is turnout.float32
    t = turnout.zeros(2, 3).t()
    assert t.contiguous().is_contiguous() and t.contiguous().tolist() == t.tolist()
    c = turnout.zeros(2)
    assert c.contiguous() is c
    with pytest.raises(TypeError, match=r"Tensor.to\(\): expected a dtype, a device or a Tensor, got int"):
        x.to(3)


def test_cuda_without_a_device_fails_cleanly():
    x = turnout.tensor([1.0])
    try:
        y = x.cuda()
    except (NotImplementedError, RuntimeError, ValueError) as e:
        assert "CUDA" in str(e) or "cuda" in str(e)
    else:  # a machine with a GPU and turnout's CUDA kernels
        assert y.is_cuda and y.cpu().tolist() == [1.0]


# ---- Indexing ------------------------------------------------------------------

def test_basic_indexing_returns_views():
    x = turnout.arange(12).view(3, 4)
    assert x[1].tolist() == [4, 5, 6, 7]
    assert x[-1, -1].item() == 11
    assert x[1:, ::2].tolist() == [[4, 6], [8, 10]]
    assert x[:, 1].tolist() == [1, 5, 9]
    assert x[None].shape == (1, 3, 4)
    assert x[..., None].shape == (3, 4, 1)
    assert x[..., 0].tolist() == [0, 4, 8]
    assert x[1, ...].tolist() == [4, 5, 6, 7]
    assert x[0:0].shape == (0, 4)
    v = x[1:, 1:3]
    v[0, 0] = 100
    assert x[1, 1].item() == 100
    assert v._shares_storage(x)
    x[0] = turnout.tensor([9, 9, 9, 9])
    assert x[0].tolist() == [9, 9, 9, 9]
    assert [row.tolist() for row in x[:2, :1]] == [[9], [4]]


@pytest.mark.parametrize("key,exc,match", [
    ((0, 0, 0), IndexError, r"too many indices for tensor of dimension 2 \(got 3\)"),
    (5, IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    ((Ellipsis, Ellipsis), IndexError, "single ellipsis"),
    (slice(None, None, -1), ValueError, "slice step must be positive, got -1"),
    ("a", TypeError, r"tensor indices must be ints, slices, None or \.\.\., "
     r"bools, lists or tensors, got str"),
    (1.5, IndexError, "valid indices \\(got float\\)"),  # as torch's
])
def test_bad_indices(key, exc, match):
    with pytest.raises(exc, match=match):
        turnout.zeros(3, 4)[key]


def test_float_tensor_index_is_refused():
    # Advanced indexing: tests/python/test_ops_index_torch.py.
    with pytest.raises(IndexError, match="tensors used as indices must be "
                       "long, byte or bool tensors"):
        turnout.zeros(3)[turnout.tensor([0.0])]


# ---- Autograd state ---------------------------------------------------------------

def test_requires_grad_property():
    w = turnout.zeros(2)
    assert not w.requires_grad and w.is_leaf and w.grad is None
    assert w.requires_grad_() is w and w.requires_grad
    w.requires_grad = False
    assert not w.requires_grad
    with pytest.raises(ValueError, match="floating point"):
        turnout.zeros(2, dtype=turnout.int64).requires_grad_()


def test_grad_can_be_set_and_cleared():
    w = turnout.zeros(2, requires_grad=True)
    w.grad = turnout.ones(2)
    assert w.grad.tolist() == [1.0, 1.0]
    w.grad = None
    assert w.grad is None
    with pytest.raises(TypeError, match="must be a Tensor or None, got int"):
        w.grad = 3


def test_backward_of_a_non_differentiable_tensor_is_an_error():
    with pytest.raises(ValueError, match="does not require grad"):
        turnout.ones(1).backward()


def _autograd_kernels_registered():
    w = turnout.ones(1, requires_grad=True)
    return (w * w).grad_fn is not None


@pytest.mark.skipif(not _autograd_kernels_registered(),
                    reason="the Autograd kernels of aten::mul are not registered yet")
def test_backward_accumulates_grads():
    w = turnout.tensor([1.0, 2.0], requires_grad=True)
    y = (w * w).sum()
    assert y.grad_fn is not None and "grad_fn=<" in repr(y)
    y.backward()
    assert w.grad.tolist() == [2.0, 4.0]
    with turnout.no_grad():
        assert (w * 2).grad_fn is None


def test_no_grad_and_enable_grad():
    assert turnout.is_grad_enabled()
    with turnout.no_grad():
        assert not turnout.is_grad_enabled()
        with turnout.enable_grad():
            assert turnout.is_grad_enabled()
        assert not turnout.is_grad_enabled()
    assert turnout.is_grad_enabled()

    @turnout.no_grad()
    def f():
        return turnout.is_grad_enabled()

    assert f() is False and turnout.is_grad_enabled()
    with pytest.raises(KeyError):
        with turnout.no_grad():
            raise KeyError("x")
    assert turnout.is_grad_enabled()


# ---- Object lifetime -----------------------------------------------------------

def test_tensor_subclass_instances_are_made_and_freed():
    class Sub(turnout.Tensor):
        pass

    _C._set_tensor_class(Sub)
    try:
        x = turnout.ones(2)
        assert type(x) is Sub
        x.note = "subclass instances have a __dict__"
        del x
        gc.collect()
    finally:
        _C._set_tensor_class(turnout.Tensor)
    assert type(turnout.ones(1)) is turnout.Tensor
    with pytest.raises(TypeError, match="expected a subclass of turnout._C.TensorBase"):
        _C._set_tensor_class(int)


def test_dispatch_keys_of_a_tensor():
    ks = _C._dispatch_keys(turnout.ones(1))
    assert ks.has(turnout.DispatchKey.CPU)
    assert ks.has(turnout.DispatchKey.AutogradCPU)


def test_arithmetic_operators_promote_broadcast_and_record_grad():
    i = turnout.tensor([1, 2])
    assert (i + 1).dtype is turnout.int64 and (i + 0.5).dtype is turnout.float32
    assert (i / 2).tolist() == [0.5, 1.0]
    assert (1.5 * i).tolist() == [1.5, 3.0] and (3 - i).tolist() == [2, 1]
    m = turnout.ones(2, 2)
    assert (m + turnout.tensor([1.0, 2.0])).tolist() == [[2.0, 3.0], [2.0, 3.0]]
    w = turnout.tensor([1.0, 2.0], requires_grad=True)
    (w * w + w - 1 / w).sum().backward()
    assert w.grad.tolist() == [4.0, 5.25]


def test_arithmetic_operator_errors_name_the_operator():
    a = turnout.tensor([1.0])
    # As torch 1.13's, the operators call the Tensor overloads, which take
    # tensors and Python numbers.
    with pytest.raises(TypeError, match=r"aten::add.Tensor\(\): argument 'other' "
                                        r"\(position 2\) must be Tensor, but got str"):
        a + "x"
    with pytest.raises(TypeError, match=r"aten::mul.Tensor\(\): argument 'other'"):
        [1] * a
    with pytest.raises(TypeError, match=r"aten::div.Tensor\(\): argument 'other'"):
        a / None
    with pytest.raises(TypeError, match=r"aten::floor_divide\(\): argument 'self'"):
        "x" // a


def test_set_tensor_operators_errors():
    with pytest.raises(TypeError, match=r"_set_tensor_operators\(\): unknown operator "
                                        r"'pow'; expected keywords among add_Tensor"):
        turnout._C._set_tensor_operators(pow=abs)
    with pytest.raises(TypeError, match=r"_set_tensor_operators\(\): 'add_Tensor' must "
                                        r"be callable, got int"):
        turnout._C._set_tensor_operators(add_Tensor=1)
    a = turnout.tensor([1.0])
    assert (a + a).tolist() == [2.0]  # the failed calls changed nothing


def test_backward_on_a_daemon_thread_at_interpreter_shutdown_does_not_abort():
    # backward() runs without the GIL. A daemon thread still inside it when
    # the interpreter exits must not abort the process as it asks for the
    # GIL back (CPython ends such a thread; it must wait for the exit).
    script = ("""
        import threading, turnout
        x = turnout.ones(10000, requires_grad=True)
        y = x
        for _ in range(50):
            y = y * 1.0001
        y = y.sum()
        started = threading.Event()
        def train():
            # Nearly all its time in backward(), without the GIL.
            while True:
                started.set()
                y.backward()
        threading.Thread(target=train, daemon=True).start()
        started.wait()
        print("done")
    """)
    run_script(script, times=3)
