"""The reference operators carry torch's tags (kernels/aten_tags.h), read
as torch's OpOverload.tags; checked against torch 1.13 for every aten
operator turnout registers."""

import pytest
import torch

import turnout

# Tags torch 2.x added after 1.13, which turnout carries too.
_TORCH2_TAGS = {"core", "pointwise"}


def _aten_ops():
    return sorted(n for n in turnout._C._dispatch_get_all_op_names()
                  if n.startswith("aten::"))


def _torch_overload(name):
    base, _, overload = name[len("aten::"):].partition(".")
    packet = getattr(torch.ops.aten, base, None)
    if packet is None:
        return None
    try:
        return getattr(packet, overload or "default")
    except (AttributeError, RuntimeError):
        return None


def _turnout_overload(name):
    base, _, overload = name[len("aten::"):].partition(".")
    return getattr(getattr(turnout.ops.aten, base), overload or "default")


def test_every_aten_operator_has_torch_1_13s_tags():
    compared = 0
    for name in _aten_ops():
        theirs = _torch_overload(name)
        if theirs is None:
            continue
        compared += 1
        mine = _turnout_overload(name).tags
        assert len(mine) == len(set(mine)), name
        assert set(mine) - _TORCH2_TAGS == {t.name for t in theirs.tags}, name
    assert compared >= 100  # turnout's reference operators are torch's


@pytest.mark.parametrize("name,tags", [
    ("aten::add.Tensor", ["core", "pointwise"]),
    ("aten::mul.Scalar", ["core", "pointwise"]),
    ("aten::relu", ["core", "pointwise"]),
    ("aten::add_.Tensor", ["pointwise"]),
    ("aten::mm", ["core"]),
    ("aten::rand", ["nondeterministic_seeded"]),
    ("aten::item", ["data_dependent_output"]),
    ("aten::reshape", []),
    ("aten::add.int", []),
])
def test_known_tags(name, tags):
    assert _turnout_overload(name).tags == tags


def test_tags_are_not_per_call_state():
    # Calling an operator leaves its tags as they are, and a Library's own
    # define keeps the tags it was given (the aten table is not consulted).
    x = turnout.ones(2)
    turnout.ops.aten.add.Tensor(x, x)
    assert turnout.ops.aten.add.Tensor.tags == ["core", "pointwise"]
    with turnout.library.scoped_library("tagtest", "FRAGMENT") as lib:
        lib.define("add.Tensor(Tensor self, Tensor other) -> Tensor")
        assert turnout.ops.tagtest.add.Tensor.tags == []
