"""turnout.library.opcheck on every sample of every reference operator
(tests/python/op_db.py), and every aten operator turnout registers has
samples there."""

from __future__ import annotations

import pytest

import turnout
from turnout._opcheck import DEFAULT_TEST_UTILS
from turnout.library import opcheck
from op_db import NOT_SAMPLED, NOT_YET_SAMPLED, OP_DB, build_call
from op_db_testing import CASES, params


def registered_aten_operators():
    return sorted(n for n in turnout._C._dispatch_get_all_op_names()
                  if n.startswith("aten::"))


def test_every_registered_aten_operator_has_samples():
    missing = [n for n in registered_aten_operators()
               if n not in OP_DB and n not in NOT_SAMPLED and n not in NOT_YET_SAMPLED]
    assert not missing, (
        f"aten operators without samples: {missing}; add an entry for each to "
        "tests/python/op_db.py (or, if it cannot be sampled, to NOT_SAMPLED with "
        "the reason)")


def test_op_db_names_only_registered_operators():
    registered = set(registered_aten_operators())
    stale = [n for n in list(OP_DB) + list(NOT_SAMPLED) + list(NOT_YET_SAMPLED)
             if n not in registered]
    assert not stale, f"op_db entries for operators turnout does not register: {stale}"
    assert all(NOT_SAMPLED.values()), "every NOT_SAMPLED entry needs its reason"
    twice = [n for n in NOT_YET_SAMPLED if n in OP_DB or n in NOT_SAMPLED]
    assert not twice, f"sampled operators still listed in NOT_YET_SAMPLED: {twice}"


def test_every_operator_has_a_sample_that_runs():
    for info in OP_DB.values():
        if info.opcheck == ():  # opcheck cannot run it here: skip_opcheck says why
            assert info.skip_opcheck, info.name
            continue
        assert any(not s.error for s in info.samples()), info.name


@pytest.mark.parametrize("info, sample",
                         params([c for c in CASES if not c[2].error
                                 and c[0].opcheck != ()]))
def test_opcheck(info, sample):
    args, kwargs, _ = build_call(sample, turnout)
    tests = DEFAULT_TEST_UTILS if info.opcheck is None else info.opcheck
    if not sample.grad:
        # Left out of gradient comparisons (NaN or infinite inputs, a
        # backward torch itself refuses): no gradcheck either.
        tests = tuple(t for t in tests if t != "test_autograd_registration")
    opcheck(info.op(turnout), args, kwargs, test_utils=tests)
