"""Tests for examples/quickstart.py: it runs, and README.md shows its real
output (the block after the "quickstart.py output" marker)."""

import contextlib
import importlib.util
import io
from pathlib import Path

import turnout

ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- examples/quickstart.py output -->"


def find(relative):
    for base in (Path.cwd(), ROOT):   # Bazel runfiles, then the source tree
        if (base / relative).exists():
            return base / relative
    raise FileNotFoundError(relative)


def run_quickstart():
    spec = importlib.util.spec_from_file_location(
        "quickstart", find("examples/quickstart.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        module.main()
    return out.getvalue()


def readme_block():
    text = find("README.md").read_text()
    assert MARKER in text, f"README.md has no {MARKER} line"
    after = text.split(MARKER, 1)[1]
    start = after.index("```\n") + len("```\n")
    return after[start:after.index("```", start)]


def test_quickstart_output_is_the_readme_block():
    assert run_quickstart() == readme_block()


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
