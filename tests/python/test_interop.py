"""Tests for the zero-copy exchange in bindings/tensor.cc: NumPy and DLPack."""

import gc
import weakref

import numpy as np
import pytest

import turnout
from script_runner import run_script


@pytest.mark.parametrize("np_dtype,dtype", [
    (np.float32, turnout.float32), (np.float64, turnout.float64),
    (np.float16, turnout.float16), (np.int64, turnout.int64),
    (np.int32, turnout.int32), (np.int16, turnout.int16),
    (np.int8, turnout.int8), (np.uint8, turnout.uint8), (np.bool_, turnout.bool),
])
def test_numpy_round_trip_shares_memory(np_dtype, dtype):
    a = np.arange(6).astype(np_dtype).reshape(2, 3)
    t = turnout.from_numpy(a)
    assert t.dtype is dtype and t.shape == (2, 3)
    assert t.tolist() == a.tolist()
    back = t.numpy()
    assert back.dtype == a.dtype
    assert np.shares_memory(back, a)


def test_from_numpy_writes_are_seen_both_ways():
    a = np.zeros((2, 3))
    t = turnout.from_numpy(a)
    a[0, 1] = 5.0
    assert t[0, 1].item() == 5.0
    t[1, 2] = 7.0
    assert a[1, 2] == 7.0


def test_from_numpy_keeps_strides_of_views():
    a = np.arange(12.0).reshape(3, 4)[:, ::2]
    t = turnout.from_numpy(a)
    assert t.stride() == (4, 2)
    assert t.tolist() == a.tolist()


class _Array(np.ndarray):
    """An ndarray that can be weakly referenced."""


def test_from_numpy_keeps_the_array_alive_and_then_frees_it():
    a = np.arange(4.0).view(_Array)
    alive = weakref.ref(a)
    t = turnout.from_numpy(a)
    view = t[1:]
    del a, t
    gc.collect()
    assert alive() is not None
    assert view.tolist() == [1.0, 2.0, 3.0]
    del view
    gc.collect()
    assert alive() is None


def test_numpy_view_keeps_the_tensor_alive_and_then_frees_it():
    t = turnout.arange(4)
    alive = weakref.ref(t)
    a = t.numpy()
    del t
    gc.collect()
    assert alive() is not None
    assert a.tolist() == [0, 1, 2, 3]
    del a
    gc.collect()
    assert alive() is None


_FIRST_ARRAYS_AT_ONCE = """
import threading, turnout
tensors = [turnout.ones(3) for _ in range(4)]
threads = [threading.Thread(target=t.numpy) for t in tensors]
for th in threads: th.start()
for th in threads: th.join()
print("done")
"""


def test_first_numpy_calls_from_several_threads_do_not_deadlock():
    # A fresh interpreter: the first array of the process is the one that
    # used to deadlock (NumPy's C API loaded lazily with the GIL let go).
    run_script(_FIRST_ARRAYS_AT_ONCE, timeout=60)


@pytest.mark.parametrize("make,match", [
    (lambda: np.arange(3.0)[::-1], "non-negative multiples of the element size"),
    (lambda: np.zeros(2, dtype=np.complex64), "can't convert an array of dtype complex64"),
    (lambda: np.zeros(2, dtype=">f4"), "can't convert an array of dtype >f4"),
    (lambda: np.zeros(2, dtype=np.uint16), "can't convert an array of dtype uint16"),
])
def test_from_numpy_errors(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        turnout.from_numpy(make())


def test_from_numpy_needs_an_array():
    with pytest.raises(TypeError, match=r"expected a numpy.ndarray, got list"):
        turnout.from_numpy([1, 2])


def test_numpy_errors():
    with pytest.raises(TypeError, match="NumPy has no bfloat16 type"):
        turnout.zeros(1, dtype=turnout.bfloat16).numpy()
    with pytest.raises(TypeError, match="tensor.cpu\\(\\).numpy\\(\\)"):
        turnout.zeros(1, device="meta").numpy()
    with pytest.raises(ValueError, match="detach\\(\\).numpy\\(\\)"):
        turnout.zeros(1, requires_grad=True).numpy()
    assert np.asarray(turnout.tensor([1, 2])).tolist() == [1, 2]


def test_from_dlpack_of_a_numpy_array_shares_memory():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    t = turnout.from_dlpack(a)
    assert t.shape == (2, 3) and t.dtype is turnout.float32
    a[1, 1] = -1.0
    assert t[1, 1].item() == -1.0


def test_dlpack_export_to_numpy_shares_memory():
    t = turnout.arange(6.0).view(2, 3)
    a = np.from_dlpack(t)
    assert a.tolist() == t.tolist()
    t[0, 0] = 42.0
    assert a[0, 0] == 42.0
    assert t.__dlpack_device__() == (1, 0)


def test_dlpack_of_a_view():
    t = turnout.arange(12).view(3, 4)[:, 1::2]
    a = np.from_dlpack(t)
    assert a.tolist() == t.tolist()
    assert turnout.from_dlpack(t.__dlpack__()).tolist() == t.tolist()


def test_dlpack_capsule_round_trip_and_single_use():
    t = turnout.tensor([1, 2, 3])
    capsule = t.__dlpack__()
    u = turnout.from_dlpack(capsule)
    assert u.tolist() == [1, 2, 3]
    assert u.data_ptr() == t.data_ptr()
    with pytest.raises(ValueError, match="already consumed"):
        turnout.from_dlpack(capsule)


def test_unconsumed_capsule_frees_its_tensor():
    t = turnout.tensor([1.0])
    capsule = t.__dlpack__()
    del capsule  # the capsule destructor drops its reference; nothing leaks
    gc.collect()
    assert t.tolist() == [1.0]


def test_from_dlpack_of_a_tensor_is_itself():
    t = turnout.ones(1)
    assert turnout.from_dlpack(t) is t


def test_from_dlpack_errors():
    with pytest.raises(TypeError, match="expected an object with __dlpack__.*got list"):
        turnout.from_dlpack([1])
    with pytest.raises(TypeError, match="can't be exported"):
        turnout.zeros(1, device="meta").__dlpack__()
    with pytest.raises(ValueError, match="requires grad"):
        turnout.zeros(1, requires_grad=True).__dlpack__()


def test_torch_dlpack_both_ways():
    torch = pytest.importorskip("torch")
    x = torch.arange(6, dtype=torch.float32).view(2, 3)
    t = turnout.from_dlpack(x)
    x[0, 0] = 9.0
    assert t[0, 0].item() == 9.0
    y = torch.from_dlpack(turnout.arange(4))
    assert y.tolist() == [0, 1, 2, 3]
