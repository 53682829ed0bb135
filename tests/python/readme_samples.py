"""The sample outputs of README.md (and examples/privateuse1/README.md),
for the tests that check them against the programs in examples/ that print
them.

A checked block in a README is a fenced block right after a marker line
that names the program and, for part of its output, the section:

    <!-- examples/quickstart.py output -->           the whole output
    <!-- examples/debugging.py output: explain -->  its section "== explain =="

A program's sections are the lines after a line "== TITLE ==", up to the
next such line; blank lines at a section's end are not part of it.

    >>> text = "intro\\n== a ==\\nline 1\\n\\n== b ==\\nline 2\\n"
    >>> sections(text)
    {'a': 'line 1\\n', 'b': 'line 2\\n'}

When a program's output changes (a kernel moved, so a registration site's
line did), write its new output into the README's blocks and review the
diff:

    bazel run //examples:debugging > /tmp/out.txt
    /usr/bin/python3 tests/python/readme_samples.py examples/debugging.py /tmp/out.txt
    bazel run //examples/privateuse1:demo > /tmp/out.txt
    /usr/bin/python3 tests/python/readme_samples.py examples/privateuse1/demo.cc \\
        /tmp/out.txt examples/privateuse1/README.md
"""

import os
import re
import sys
from pathlib import Path
from typing import Dict, List

__all__ = ["find", "readme_block", "readme_markers", "sections", "update_readme"]

ROOT = Path(__file__).resolve().parents[2]
_MARKER = re.compile(r"^<!-- (examples/\S+ output(?:: .*?)?) -->$", re.M)
_HEADER = re.compile(r"^== (.*) ==$")


def find(relative: str) -> Path:
    """A file of the workspace: in the test's runfiles under Bazel, else in
    the source tree."""
    runfiles = Path(os.environ.get("TEST_SRCDIR", "")) / os.environ.get(
        "TEST_WORKSPACE", "")
    for base in (runfiles, Path.cwd(), ROOT):
        if (base / relative).exists():
            return base / relative
    raise FileNotFoundError(relative)


def readme_markers(readme: str = "README.md") -> List[str]:
    """Every marker in ``readme`` (a path in the workspace), e.g.
    'examples/debugging.py output: explain'."""
    return _MARKER.findall(find(readme).read_text())


def readme_block(marker: str, readme: str = "README.md") -> str:
    """The text of the fenced block after ``<!-- marker -->`` in ``readme``."""
    text = find(readme).read_text()
    line = f"<!-- {marker} -->\n"
    assert line in text, f"{readme} has no line {line.strip()}"
    after = text.split(line, 1)[1]
    assert after.lstrip("\n").startswith("```"), (
        f"{readme}: no fenced block right after {line.strip()}")
    start = after.index("\n", after.index("```")) + 1
    return after[start:after.index("```", start)]


def sections(output: str) -> Dict[str, str]:
    """A program's output split at its "== TITLE ==" lines: title -> text."""
    found: Dict[str, List[str]] = {}
    current = None
    for line in output.splitlines():
        header = _HEADER.match(line)
        if header:
            current = found.setdefault(header.group(1), [])
        elif current is not None:
            current.append(line)
    out = {}
    for title, lines in found.items():
        while lines and not lines[-1].strip():
            lines.pop()
        out[title] = "".join(l + "\n" for l in lines)
    return out


def update_readme(readme: Path, program: str, output: str) -> List[str]:
    """Rewrites the blocks of the README at ``readme`` that show
    ``program``'s output with ``output``; returns the markers rewritten."""
    text = readme.read_text()
    parts = sections(output)
    done = []
    for marker in _MARKER.findall(text):
        name, _, title = marker.partition(": ")
        if name != f"{program} output":
            continue
        new = parts.get(title) if title else output
        if new is None:
            raise KeyError(f"{program} printed no section '== {title} =='")
        line = f"<!-- {marker} -->\n"
        head, rest = text.split(line, 1)
        fence = rest.index("```")
        start = rest.index("\n", fence) + 1
        end = rest.index("```", start)
        text = head + line + rest[:start] + new + rest[end:]
        done.append(marker)
    readme.write_text(text)
    return done


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: readme_samples.py examples/PROGRAM OUTPUT_FILE [README]")
    readme = sys.argv[3] if len(sys.argv) == 4 else "README.md"
    rewritten = update_readme(ROOT / readme, sys.argv[1],
                              Path(sys.argv[2]).read_text())
    print("\n".join(f"rewrote <!-- {m} -->" for m in rewritten)
          or "no block shows that program's output")
