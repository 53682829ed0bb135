"""Tests for examples/debugging.py: it runs, and README.md ("Debugging
dispatch") shows its real output, section by section: the block after
<!-- examples/debugging.py output: TITLE --> is what it prints under
"== TITLE ==". The profile's table is compared with its durations and
percentages normalised (and its rows, sorted by self time, in any order):
its names, keys, call counts and depths are checked, its times are not."""

import contextlib
import io
import re

import pytest

from example_loader import load_example
from readme_samples import readme_block, readme_markers, sections

PROGRAM = "examples/debugging.py"
# 1.557ms, 977.955us, 0ns, 1.2s; 29.4%.
DURATION = re.compile(r"^\d+(\.\d+)?(ns|us|ms|s)$")
PERCENT = re.compile(r"^\d+(\.\d+)?%$")


@pytest.fixture(scope="module")
def output():
    module = load_example("debugging")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        module.main()
    return sections(out.getvalue())


def normalised_table(text):
    """A profile table without its times: each line's fields, a duration as
    <t>, a percentage as <p> and a rule as ---; the data rows sorted (they
    are ordered by time)."""
    def fields(line):
        out = []
        for f in line.split():
            if DURATION.match(f):
                f = "<t>"
            elif PERCENT.match(f):
                f = "<p>"
            elif set(f) == {"-"}:
                f = "---"
            out.append(f)
        return out

    lines = [fields(l) for l in text.splitlines()]
    rules = [i for i, l in enumerate(lines) if l and set(l) == {"---"}]
    assert len(rules) == 3, f"not a profile table (three rules):\n{text}"
    first_row, end = rules[1] + 1, rules[2]
    return lines[:first_row] + sorted(lines[first_row:end]) + lines[end:]


def test_every_section_is_checked_by_the_readme(output):
    markers = [m for m in readme_markers() if m.startswith(PROGRAM + " ")]
    assert sorted(m.split(": ", 1)[1] for m in markers) == sorted(output)


@pytest.mark.parametrize("title", [
    "explain", "dispatch_trace", "dispatch_trace with a dispatch mode",
])
def test_readme_block_is_the_output(output, title):
    block = readme_block(f"{PROGRAM} output: {title}")
    assert output[title] == block, (
        f"README.md's block after <!-- {PROGRAM} output: {title} --> is not "
        f"what {PROGRAM} prints; it prints:\n{output[title]}")


def test_readme_profile_has_the_outputs_rows_and_columns(output):
    block = readme_block(f"{PROGRAM} output: profile")
    assert normalised_table(output["profile"]) == normalised_table(block), (
        f"README.md's profile table differs from what {PROGRAM} prints "
        f"(times apart); it prints:\n{output['profile']}")


def test_the_normalised_table_still_sees_names_counts_and_depths(output):
    table = normalised_table(output["profile"])
    assert ["Name", "Key", "Calls", "Total", "Self", "Self", "%", "Python",
            "Avg", "Depth"] in table
    rows = {(r[0], r[1]): r for r in table if r and r[0].startswith("aten::")}
    assert rows[("aten::mul.Tensor", "Python")] == [
        "aten::mul.Tensor", "Python", "100", "<t>", "<t>", "<p>", "<t>", "<t>", "2"]
    assert rows[("aten::sum", "CPU")][2] == "200"
    assert rows[("aten::sum", "CPU")][-1] == "1-3"
    assert table[-1] == ["Self", "time", "total:", "<t>"]
    # A changed count or depth is a difference.
    changed = output["profile"].replace(" 100 ", " 101 ", 1)
    assert normalised_table(changed) != table


def test_trace_names_registration_sites_with_line_numbers(output):
    for title in ("dispatch_trace", "dispatch_trace with a dispatch mode"):
        for line in output[title].splitlines():
            if "registered at" in line:
                assert re.search(r"registered at \S+\.cc:\d+$", line), line
    assert "(examples/logging_mode.py:" in output["dispatch_trace with a dispatch mode"]


def test_readme_samples_examples():
    import doctest
    import readme_samples
    failures, attempted = doctest.testmod(readme_samples)
    assert failures == 0 and attempted > 0
