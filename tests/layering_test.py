"""The layers, from the include lines: no file includes one of a higher layer.

turnout's folders, lowest first. A file may include its own folder and the
folders of lower layers; two folders of the same layer may not include each
other. This table is the one place the order is written (README "Layout"
draws it):

    0 dispatcher/core     the values of a call and their keys
    1 dispatcher/schema   the schema language
    2 dispatcher          the registry and the call path
    3 dispatcher/debug    the tools that watch calls (explain, trace, profiler)
    4 kernels             the reference operators (kernels/cuda, kernels/autograd)
    5 jit/ir              graphs, their parser and printer
    6 jit/passes, jit/tracer
    7 jit/runtime         interpreter, graph executor, futures
    8 testing             opcheck: tools that test an operator library
    9 bindings            turnout._C
   10 tests, bench, tools, examples: clients, which nothing above includes

The files come from each package's "sources" filegroup (the test's data).
"""

import os
import re
import sys

import pytest

LAYERS = [
    ("dispatcher/core", 0),
    ("dispatcher/schema", 1),
    ("dispatcher", 2),
    ("dispatcher/debug", 3),
    ("kernels", 4),
    ("jit/ir", 5),
    ("jit/passes", 6),
    ("jit/tracer", 6),
    ("jit/runtime", 7),
    ("testing", 8),
    ("bindings", 9),
    ("tests", 10),
    ("bench", 10),
    ("tools", 10),
    ("examples", 10),
]

# Every package whose sources the test reads (the data of the BUILD rule).
CHECKED = [folder for folder, rank in LAYERS if rank < 10]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(path):
    """The layer folder of a repository path (longest prefix), or None."""
    best = None
    for folder, _ in LAYERS:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def rank_of(folder):
    return dict(LAYERS)[folder]


def violations(files):
    """(file, line, included, why) for each include that runs upward.

    `files` maps a repository path to its text.
    """
    found = []
    for path, text in sorted(files.items()):
        here = folder_of(path)
        if here is None:
            continue
        for m in INCLUDE.finditer(text):
            included = m.group(1)
            there = folder_of(included)
            if there is None or there == here:
                continue
            line = text.count("\n", 0, m.start()) + 1
            if rank_of(there) > rank_of(here):
                found.append((path, line, included,
                              f"{here} (layer {rank_of(here)}) is below "
                              f"{there} (layer {rank_of(there)})"))
            elif rank_of(there) == rank_of(here):
                found.append((path, line, included,
                              f"{here} and {there} are peers (layer "
                              f"{rank_of(here)}): neither includes the other"))
    return found


def source_files():
    """The repository's checked files, read from the test's runfiles."""
    root = os.path.join(os.environ["TEST_SRCDIR"],
                        os.environ.get("TEST_WORKSPACE", "turnout"))
    files = {}
    for folder in CHECKED:
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for name in names:
                if name.endswith((".h", ".cc", ".cu", ".cuh")):
                    full = os.path.join(dirpath, name)
                    rel = os.path.relpath(full, root)
                    with open(full, encoding="utf-8") as f:
                        files[rel] = f.read()
    return files


def test_every_layer_has_files():
    files = source_files()
    for folder in CHECKED:
        mine = [p for p in files if folder_of(p) == folder]
        assert mine, (f"no sources of {folder} reached the test: add its "
                      f"package's 'sources' filegroup to the data of "
                      f"//tests:layering_test")


def test_no_include_runs_upward():
    found = violations(source_files())
    message = "\n".join(f"{p}:{line}: includes \"{inc}\": {why}"
                        for p, line, inc, why in found)
    assert not found, ("includes that run from a lower layer to a higher "
                       "one (see the table in tests/layering_test.py):\n"
                       + message)


@pytest.mark.parametrize("path, text, expected", [
    ("dispatcher/core/tensor.h", '#include "dispatcher/dispatcher.h"\n',
     "dispatcher/core (layer 0) is below dispatcher (layer 2)"),
    ("dispatcher/dispatch_observer.cc",
     'x\n#include "dispatcher/debug/profiler.h"\n',
     "dispatcher (layer 2) is below dispatcher/debug (layer 3)"),
    ("jit/passes/dce.cc", '#include "jit/tracer/tracer.h"\n',
     "jit/passes and jit/tracer are peers (layer 6)"),
    ("kernels/cuda/add.cu", '#  include "tests/error_of.h"\n',
     "kernels (layer 4) is below tests (layer 10)"),
    ("jit/runtime/x.cc", '#include "testing/opcheck.h"\n',
     "jit/runtime (layer 7) is below testing (layer 8)"),
])
def test_the_check_finds_upward_includes(path, text, expected):
    found = violations({path: text})
    assert len(found) == 1
    assert expected in found[0][3]


@pytest.mark.parametrize("path, text", [
    ("dispatcher/debug/explain.cc", '#include "dispatcher/operator_entry.h"\n'),
    ("dispatcher/dispatcher.cc", '#include "dispatcher/call_section.h"\n'),
    ("kernels/cuda/add.cu", '#include "kernels/loops.h"\n#include <cuda.h>\n'),
    ("jit/runtime/x.cc", '#include "absl/strings/str_cat.h"\n'),
    ("bindings/x.cc", '// #include "tests/error_of.h" in a comment\n'),
])
def test_the_check_allows_downward_includes(path, text):
    assert violations({path: text}) == []


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
