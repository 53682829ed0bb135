"""The schema language's limits against torch 1.13 as the oracle (issue 15).

`[]` and `?` nest without bound as in torch (which parses `int` and 100,000
`[]`); `T??` prints as `T?` as torch prints it; Dict, Future and tuples nest
at most 256 deep (torch itself crashes at a few thousand) and print as torch
prints them up to there.
"""

import pytest
import torch

from turnout import _C


def same_as_torch(text):
    assert str(_C.parse_schema(text)) == str(torch._C.parse_schema(text))


@pytest.mark.parametrize(
    "type_",
    [
        "int??",
        "int?[]??",
        "int[]??",
        "Tensor(a)??",
        "Tensor?[]?",
        "int" + "[]" * 1000,
        "Tensor" + "?[]" * 500,
    ],
)
def test_suffixes_print_as_torch(type_):
    same_as_torch(f"f({type_} x) -> ()")


def test_hundred_thousand_list_suffixes_parse():
    # torch 1.13 parses this too (its printer overflows past ~30,000).
    text = "f(int" + "[]" * 100000 + " x) -> ()"
    assert str(_C.parse_schema(text)) == text


@pytest.mark.parametrize(
    "open_,close", [("Dict(str, ", ")"), ("Future(", ")"), ("(", ")")]
)
def test_nesting_up_to_the_limit_prints_as_torch(open_, close):
    same_as_torch("f(" + open_ * 256 + "int" + close * 256 + " x) -> ()")
    with pytest.raises(_C.InvalidArgumentError, match="nested more than 256 deep"):
        _C.parse_schema("f(" + open_ * 257 + "int" + close * 257 + " x) -> ()")
