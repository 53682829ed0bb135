"""Tests for examples/opcheck.py: it runs, README.md shows its real output
(the block after the "opcheck.py output" marker), and it leaves nothing
registered."""

import contextlib
import io

import turnout

from example_loader import load_example
from readme_samples import readme_block

MARKER = "examples/opcheck.py output"


def run_example():
    module = load_example("opcheck")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        module.main()
    return out.getvalue()


def test_output_is_the_readme_block():
    assert run_example() == readme_block(MARKER)


def test_each_wrong_operator_fails_only_its_own_check():
    out = run_example()
    verdicts = {}
    for section in out.split("== ")[1:]:
        name, _, body = section.partition(" ==\n")
        verdicts[name] = {line.split(":")[0] for line in body.splitlines()
                          if line.startswith("test_") and not line.endswith("SUCCESS")}
    assert verdicts == {
        "checked::scale": set(),
        "checked::scale_twice": {"test_schema"},
        "checked::flatten": {"test_faketensor", "test_graph"},
    }
    assert not any(n.startswith("checked::")
                   for n in turnout._C._dispatch_get_all_op_names())
