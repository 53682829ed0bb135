"""Tests for examples/quickstart.py: it runs, and README.md shows its real
output (the block after the "quickstart.py output" marker)."""

import contextlib
import io

import pytest

import turnout

from example_loader import load_example
from readme_samples import readme_block
# Autograd fallback "nothing" in this module: README.md shows the quickstart's table as torch 1.13 prints it.
from torch113_tables import autograd_fallback_nothing  # noqa: F401 (autouse)



MARKER = "examples/quickstart.py output"


def run_quickstart():
    module = load_example("quickstart")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        module.main()
    return out.getvalue()


def test_quickstart_output_is_the_readme_block():
    assert run_quickstart() == readme_block(MARKER)


def test_quickstart_cleans_up_and_runs_twice():
    first = run_quickstart()
    assert "quickstart::scale" not in turnout._C._dispatch_get_all_op_names()
    assert run_quickstart() == first


def test_quickstart_shows_each_step():
    out = run_quickstart()
    assert "scale(x, 10.0) = tensor([10., 20., 30.])" in out
    assert "tags: ['pointwise']" in out
    assert "call quickstart::scale on shapes [[3]]" in out
    # The mode is popped while its handler runs: the kernel's mul is unseen.
    assert "aten::mul" not in out
    assert "  CPU: python kernel scale_cpu (quickstart.py:" in out
    assert "defined after _destroy(): False" in out
