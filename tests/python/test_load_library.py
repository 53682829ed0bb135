"""turnout.ops.load_library: libraries of operators built against the shared
runtime register into the registry turnout._C uses, all or nothing, and the
errors name the file and the cause."""

import os
import shutil
from pathlib import Path

import pytest

import turnout
import turnout.jit
from turnout._C import InvalidArgumentError


def _lib(name: str) -> Path:
    runfiles = Path(os.environ["TEST_SRCDIR"]) / os.environ["TEST_WORKSPACE"]
    return runfiles / "tests" / "python" / "load_library" / name


def test_load_then_call_everywhere():
    path = _lib("libgood_ops.so")
    assert not hasattr(turnout.ops.loadtest, "twice")
    turnout.ops.load_library(path)
    assert os.path.realpath(path) in turnout.ops.loaded_libraries

    x = turnout.tensor([1.0, 2.0])
    assert turnout.ops.loadtest.twice(x).tolist() == [2.0, 4.0]
    table = turnout._C._dispatch_dump_table("loadtest::twice")
    assert "CPU: registered at tests/python/load_library/good_ops.cc" in table
    assert "loadtest::twice" in turnout.ops.namespaces() or \
        "loadtest" in turnout.ops.namespaces()

    report = str(turnout.debug.explain(turnout.ops.loadtest.twice.default, x))
    assert "good_ops.cc" in report

    g = turnout.jit.Graph.parse("""
        graph(%x : Tensor):
          %y : Tensor = loadtest::twice(%x)
          return (%y)""")
    assert turnout.jit.run(g, x).tolist() == [2.0, 4.0]
    assert turnout.jit.GraphExecutor(g)(x).tolist() == [2.0, 4.0]

    with turnout.profiler.profile() as prof:
        turnout.ops.loadtest.twice(x)
    assert "loadtest::twice" in prof.table()

    # Loading the same file again (by another spelling) does nothing.
    other_spelling = str(path.parent) + "/./" + path.name
    turnout.ops.load_library(other_spelling)
    assert sum(p.endswith("libgood_ops.so")
               for p in turnout.ops.loaded_libraries) == 1


def test_a_failing_block_leaves_nothing_registered():
    path = _lib("libfailing_ops.so")
    with pytest.raises(InvalidArgumentError) as e:
        turnout.ops.load_library(path)
    message = str(e.value)
    assert str(os.path.realpath(path)) in message
    assert "TURNOUT_LIBRARY_FRAGMENT(aten) at " \
        "tests/python/load_library/failing_ops.cc:" in message
    assert "aten::add.Tensor" in message
    assert "Nothing of the library stays registered" in message
    # The two blocks before the failing one were undone.
    assert "loadbad::first" not in turnout._C._dispatch_get_all_op_names()
    assert os.path.realpath(path) not in turnout.ops.loaded_libraries
    # aten::add is untouched.
    x = turnout.tensor([1.0])
    assert turnout.ops.aten.add.Tensor(x, x).tolist() == [2.0]
    # Again: the same error, not a silent success.
    with pytest.raises((InvalidArgumentError, OSError)) as again:
        turnout.ops.load_library(path)
    assert "TURNOUT_LIBRARY_FRAGMENT(aten)" in str(again.value)
    assert "loadbad::first" not in turnout._C._dispatch_get_all_op_names()


def test_missing_symbol_is_explained():
    path = _lib("libmissing_symbol_ops.so")
    with pytest.raises(OSError) as e:
        turnout.ops.load_library(path)
    message = str(e.value)
    assert "undefined symbol" in message
    assert "turnout_test::definedNowhere(turnout::Tensor const&)" in message
    assert "loadmissing::f" not in turnout._C._dispatch_get_all_op_names()


def test_missing_file():
    with pytest.raises(OSError) as e:
        turnout.ops.load_library("/nonexistent/libnothing.so")
    assert "load_library(/nonexistent/libnothing.so)" in str(e.value)
    assert "No such file or directory" in str(e.value)
    with pytest.raises(OSError, match="the path is empty"):
        turnout.ops.load_library("")


def test_not_a_shared_library(tmp_path):
    bogus = tmp_path / "libbogus.so"
    bogus.write_text("not an ELF file")
    with pytest.raises(OSError) as e:
        turnout.ops.load_library(bogus)
    assert str(bogus) in str(e.value)


def test_another_version_is_explained(tmp_path):
    # The same library copied away from the runtime it was linked against:
    # libturnout.so.9.9 is not found.
    copy = tmp_path / "libother_version_ops.so"
    shutil.copy(_lib("libother_version_ops.so"), copy)
    with pytest.raises(OSError) as e:
        turnout.ops.load_library(copy)
    message = str(e.value)
    assert "built against another turnout version" in message
    assert "it needs libturnout.so.9.9" in message
    assert f"this process runs libturnout.so.{turnout.__version__.rsplit('.', 1)[0]}" in message


def test_a_second_runtime_is_refused():
    # Linked against libturnout.so.9.9, found beside it: the process would
    # get a second registry. (After test_another_version_is_explained: once
    # libturnout.so.9.9 is mapped, the copy would find it by its soname.)
    with pytest.raises(OSError) as e:
        turnout.ops.load_library(_lib("libother_version_ops.so"))
    message = str(e.value)
    assert "second turnout runtime" in message
    assert "libturnout.so.9.9" in message
