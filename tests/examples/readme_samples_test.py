"""The READMEs show what the C++ examples print: each block after a marker
<!-- examples/PROGRAM.cc output: TITLE --> is the section "== TITLE ==" of
the program's output, registration sites and their line numbers included.

  README.md                     examples/quickstart.cc (quickstart::scale's
                                dumpComputedTable(), the lines of three keys)
  examples/privateuse1/README.md  examples/privateuse1/demo.cc (the tables of
                                aten::add.Tensor and aten::mul.Tensor)
"""

import os
import subprocess

import pytest

from readme_samples import find, readme_block, readme_markers, sections

# program -> (its binary in the workspace, the README that shows its output)
PROGRAMS = {
    "examples/quickstart.cc": ("examples/quickstart", "README.md"),
    "examples/privateuse1/demo.cc": ("examples/privateuse1/demo",
                                     "examples/privateuse1/README.md"),
}


def run(binary):
    # The READMEs show the tables as torch 1.13 prints them: the autograd
    # keys fall through (mode "nothing"; the default, "warn", shows torch
    # 2.x's autograd fallback there).
    env = dict(os.environ, TURNOUT_AUTOGRAD_FALLBACK_MODE="nothing")
    proc = subprocess.run([str(find(binary))], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_every_checked_block_is_a_section_of_the_output(program):
    binary, readme = PROGRAMS[program]
    output = sections(run(binary))
    markers = [m for m in readme_markers(readme) if m.startswith(program + " ")]
    assert markers, f"{readme} checks no output of {program}"
    for marker in markers:
        title = marker.split(": ", 1)[1]
        assert title in output, f"{program} prints no section '== {title} =='"
        assert output[title] == readme_block(marker, readme), (
            f"{readme}'s block after <!-- {marker} --> is not what {program} "
            f"prints; it prints:\n{output[title]}")


def test_the_quickstart_table_excerpt_names_the_registration_sites():
    excerpt = sections(run("examples/quickstart"))[
        "quickstart::scale dumpComputedTable() excerpt"]
    lines = excerpt.splitlines()
    assert [l.split(":", 1)[0] for l in lines] == ["CPU", "AutogradCPU", "Tracer"]
    assert lines[0].startswith("CPU: registered at examples/quickstart.cc:")
    assert lines[2].startswith("Tracer: fallthrough registered at examples/quickstart.cc:")


def test_the_privateuse1_readme_checks_both_tables():
    assert sorted(readme_markers("examples/privateuse1/README.md")) == [
        "examples/privateuse1/demo.cc output: aten::add.Tensor dumpComputedTable()",
        "examples/privateuse1/demo.cc output: aten::mul.Tensor dumpComputedTable()",
    ]
