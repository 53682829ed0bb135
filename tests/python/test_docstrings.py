"""Runs the examples in the docstrings of every public turnout module."""

import doctest

import pytest

import turnout
import turnout._factories
import turnout._functional
import turnout._ops
import turnout._tensor
import turnout._tensor_str
import turnout.cuda
import turnout.special


@pytest.mark.parametrize("module", [
    turnout, turnout._ops, turnout._tensor, turnout._factories,
    turnout._tensor_str, turnout.cuda, turnout._functional, turnout.special,
], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    failures, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0
    if module is not turnout._tensor_str:
        assert attempted > 0, f"{module.__name__} has no examples"
