"""Tests for bindings/ivalue.cc: Python <-> IValue by schema type, through
operator calls (arguments) and their results (returns)."""

import numpy as np
import pytest

import turnout
from turnout import ops


def t(*values):
    return turnout.tensor(list(values))


@pytest.mark.parametrize("call,expected", [
    # int, from an int or an object with __index__
    (lambda: ops.aten.unsqueeze.default(t(1.0), 0).shape, (1, 1)),
    (lambda: ops.aten.unsqueeze.default(t(1.0), np.int64(0)).shape, (1, 1)),
    # float from float or int
    (lambda: ops.aten.div.float(1, 4), 0.25),
    (lambda: ops.aten.div.float(1.0, 4.0), 0.25),
    # Scalar from bool, int, float
    (lambda: ops.aten.mul.Scalar(t(1, 2), 3).tolist(), [3, 6]),
    (lambda: ops.aten.mul.Scalar(t(1.0), 0.5).tolist(), [0.5]),
    (lambda: ops.aten.add.Scalar(t(1), True).tolist(), [2]),
    # int[] from a list, a tuple, a Size; int[1] from one int
    (lambda: ops.aten.view.default(t(1, 2, 3, 4), [2, 2]).shape, (2, 2)),
    (lambda: ops.aten.view.default(t(1, 2, 3, 4), (4, 1)).shape, (4, 1)),
    (lambda: ops.aten.view.default(t(1, 2, 3, 4), turnout.Size([1, 4])).shape, (1, 4)),
    (lambda: ops.aten.amax.default(turnout.ones(2, 3), 1).shape, (2,)),
    # optional: None or the value
    (lambda: ops.aten.sum.default(t(1, 2), dtype=None).dtype, turnout.int64),
    (lambda: ops.aten.sum.default(t(1, 2), dtype=turnout.float64).dtype, turnout.float64),
    # Device from a device object or a string; ScalarType from a dtype
    (lambda: ops.aten.zeros.default([1], device="meta").is_meta, True),
    (lambda: ops.aten.zeros.default([1], device=turnout.device("cpu")).is_cpu, True),
    # MemoryFormat
    (lambda: ops.aten.clone.default(t(1), memory_format=turnout.contiguous_format).tolist(), [1]),
    # Tensor[]
    (lambda: ops.aten.cat.default((t(1), t(2))).tolist(), [1, 2]),
    (lambda: ops.aten.stack.default([t(1), t(2)], 1).shape, (1, 2)),
    # Tensor? with None
    (lambda: ops.aten.linear.default(turnout.ones(1, 2), turnout.ones(3, 2), None).shape, (1, 3)),
])
def test_arguments_convert(call, expected):
    assert call() == expected


@pytest.mark.parametrize("call,match", [
    (lambda: ops.aten.unsqueeze.default(t(1), 0.5),
     r"aten::unsqueeze\(\): argument 'dim' \(position 2\) must be int, but got float"),
    (lambda: ops.aten.unsqueeze.default(t(1), True),
     r"argument 'dim' \(position 2\) must be int, but got bool"),
    (lambda: ops.aten.relu.default([1.0]),
     r"aten::relu\(\): argument 'self' \(position 1\) must be Tensor, but got list\[float\]"),
    (lambda: ops.aten.view.default(t(1), [1, "a"]),
     r"argument 'size' \(position 2\) must be SymInt\[\], but got list\[int, str\]"),
    (lambda: ops.aten.mul.Scalar(t(1), "2"),
     r"aten::mul.Scalar\(\): argument 'other' \(position 2\) must be Scalar, but got str"),
    (lambda: ops.aten.sum.default(t(1), dtype="float32"),
     r"argument 'dtype' \(position 2\) must be ScalarType\?, but got str"),
    (lambda: ops.aten.cat.default([t(1), None]),
     r"must be Tensor\[\], but got list\[Tensor, None\]"),
    (lambda: ops.aten.zeros.default([1], device=0),
     r"argument 'device' \(position 4\) must be Device\?, but got int"),
    (lambda: ops.aten.view.default(t(1), 2 ** 70),
     r"must be SymInt\[\], but got int"),
])
def test_wrong_argument_is_a_type_error_naming_everything(call, match):
    with pytest.raises(TypeError, match=match):
        call()


def test_malformed_device_string_is_a_value_error():
    with pytest.raises(ValueError, match="Invalid device string: 'cuda:x'"):
        ops.aten.zeros.default([1], device="cuda:x")


@pytest.mark.parametrize("call,expected,type_", [
    (lambda: ops.aten.item.default(t(2)), 2, int),
    (lambda: ops.aten.item.default(t(2.5)), 2.5, float),
    (lambda: ops.aten.item.default(t(True)), True, bool),
    (lambda: ops.aten.size.default(turnout.zeros(2, 3)), [2, 3], list),
    (lambda: ops.aten.dim.default(turnout.zeros(2, 3)), 2, int),
    (lambda: ops.aten.floordiv.int(7, 2), 3, int),
    (lambda: ops.aten.__not__.default(True), False, bool),
])
def test_returns_convert(call, expected, type_):
    v = call()
    assert type(v) is type_
    assert v == expected


def test_tensor_return_is_a_turnout_tensor():
    y = ops.aten.relu.default(t(-1.0, 1.0))
    assert type(y) is turnout.Tensor
    assert y.tolist() == [0.0, 1.0]


def test_generic_list_return():
    # __getitem__.t(t[] list, int idx) -> t: a type variable takes any value.
    assert ops.aten.__getitem__.t([4, 5, 6], 1) == 5
    assert ops.aten.len.t(["a", "b"]) == 2


# ---- Dict (Dict(K, V) arguments and returns; TorchScript's dict builtins) ----

def test_dict_arguments_and_returns_keep_order_and_types():
    d = {"b": 1, "a": 2}
    assert ops.aten.keys.str(d) == ["b", "a"]
    assert ops.aten.values.str(d) == [1, 2]
    assert ops.aten.items.int({3: 1.5, 1: 2.5}) == [(3, 1.5), (1, 2.5)]
    # A dict comes back as a dict, in its order; a copy, not the argument.
    out = ops.aten.copy.Dict_str(d)
    assert out == d and list(out) == ["b", "a"] and out is not d
    x = t(1.0)
    assert ops.aten.__contains__.Tensor({x: 1}, x) is True
    assert ops.aten.__contains__.Tensor({x: 1}, t(1.0)) is False  # identity
    assert ops.aten.len.Dict_bool({True: 1, False: 2}) == 2
    assert ops.aten.dict.default() == {}


def test_dict_argument_errors_name_the_type():
    with pytest.raises(TypeError, match=r"Dict\(str, t\).*got dict\[int, int\]"):
        ops.aten.keys.str({1: 2})
    with pytest.raises(TypeError, match="got list"):
        ops.aten.keys.str([1])
    with pytest.raises(TypeError, match="dict key of type tuple cannot be converted"):
        ops.aten.str({(1, 2): 3})
    with pytest.raises(TypeError, match=r"keys of two types \(String and Int\)"):
        ops.aten.str({"a": 1, 2: 3})


def test_dict_key_error_as_torch():
    with pytest.raises(IndexError, match="KeyError: missing"):
        ops.aten.__getitem__.Dict_str({"a": 1}, "missing")
    assert ops.aten.get.str({"a": 1}, "missing") is None
    assert ops.aten.get.default_str({"a": 1}, "missing", 7) == 7
