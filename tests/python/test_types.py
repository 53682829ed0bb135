"""Tests for bindings/types.cc: dtype, layout, memory_format and device."""

import pickle

import pytest

import turnout


@pytest.mark.parametrize("name,alias,itemsize,floating", [
    ("float32", "float", 4, True),
    ("float64", "double", 8, True),
    ("float16", "half", 2, True),
    ("bfloat16", None, 2, True),
    ("int64", "long", 8, False),
    ("int32", "int", 4, False),
    ("int16", "short", 2, False),
    ("int8", None, 1, False),
    ("uint8", None, 1, False),
    ("bool", None, 1, False),
])
def test_dtype_objects(name, alias, itemsize, floating):
    d = getattr(turnout, name)
    assert isinstance(d, turnout.dtype)
    assert repr(d) == f"turnout.{name}"
    assert d.itemsize == itemsize
    assert d.is_floating_point == floating
    if alias:
        assert getattr(turnout, alias) is d


def test_dtype_is_compared_by_identity():
    assert turnout.zeros(1).dtype is turnout.float32
    assert turnout.zeros(1, dtype=turnout.int8).dtype is turnout.int8
    assert turnout.float32 != turnout.float64


def test_dtype_cannot_be_constructed():
    with pytest.raises(TypeError):
        turnout.dtype()


def test_dtype_pickles_to_the_same_object():
    assert pickle.loads(pickle.dumps(turnout.float64)) is turnout.float64


def test_layout_and_memory_format():
    assert repr(turnout.strided) == "turnout.strided"
    assert turnout.zeros(1).layout is turnout.strided
    assert repr(turnout.contiguous_format) == "turnout.contiguous_format"
    assert isinstance(turnout.channels_last, turnout.memory_format)


@pytest.mark.parametrize("args,text,rep,type_,index", [
    (("cpu",), "cpu", "device(type='cpu')", "cpu", None),
    (("cuda",), "cuda", "device(type='cuda')", "cuda", None),
    (("cuda:0",), "cuda:0", "device(type='cuda', index=0)", "cuda", 0),
    (("cuda", 1), "cuda:1", "device(type='cuda', index=1)", "cuda", 1),
    (("meta",), "meta", "device(type='meta')", "meta", None),
])
def test_device_prints_like_pytorch(args, text, rep, type_, index):
    d = turnout.device(*args)
    assert str(d) == text
    assert repr(d) == rep
    assert d.type == type_
    assert d.index == index


def test_device_equality_and_hash():
    assert turnout.device("cuda:1") == turnout.device("cuda", 1)
    assert turnout.device("cuda") != turnout.device("cuda:0")
    assert turnout.device("cpu") != "cpu"
    assert len({turnout.device("cpu"), turnout.device("cpu")}) == 1


@pytest.mark.parametrize("args,match", [
    (("cuda:x",), "Invalid device string: 'cuda:x'"),
    (("gpu",), "Invalid device string: 'gpu'"),
    (("cuda:0", 1), "already has an index"),
    (("cuda", -1), r"index must be in \[0, 127\], got -1"),
])
def test_bad_device_is_a_value_error(args, match):
    with pytest.raises(ValueError, match=match):
        turnout.device(*args)


def test_tensor_device_property():
    assert turnout.zeros(1).device == turnout.device("cpu")
    assert str(turnout.empty(2, device="meta").device) == "meta"
