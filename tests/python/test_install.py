"""Tests for //:install_python: install into a temporary directory, then
import turnout from a script outside the source tree."""

import os
import subprocess
import sys
from pathlib import Path


def _installer() -> Path:
    # The py_binary launcher, in this test's runfiles.
    runfiles = Path(os.environ["TEST_SRCDIR"]) / os.environ["TEST_WORKSPACE"]
    return runfiles / "install_python"


def test_install_into_a_target_and_import_from_elsewhere(tmp_path):
    target = tmp_path / "site"
    out = subprocess.run([str(_installer()), "--target", str(target)],
                         capture_output=True, text=True, check=True)
    assert f"installed turnout into {target / 'turnout'}" in out.stdout
    assert (target / "turnout" / "_C.so").is_file()
    assert not (target / "turnout" / "_C.so").is_symlink()
    # The CUDA kernels, where built: loaded only where a driver is present.
    cuda = [target / "turnout" / "_C_cuda.so",
            *(target / "turnout" / "lib").glob("libturnout_cuda.so.*")]
    built = os.environ["TURNOUT_TEST_CUDA_FOUND"] == "1"
    assert [p.is_file() for p in cuda] == ([True, True] if built else [False])

    script = tmp_path / "work" / "user_script.py"
    script.parent.mkdir()
    script.write_text(
        "import turnout\n"
        "x = turnout.tensor([1.0, 2.0])\n"
        "print(turnout.__file__)\n"
        "print(turnout.ops.aten.add(x, x).tolist())\n"
        "info = turnout._C._build_info()\n"
        "print(info['optimized'], info['assertions'], "
        "info['extension_optimized'])\n"
        "print(turnout.__version__ == info['version'])\n")
    env = {"PYTHONPATH": str(target), "PATH": os.environ.get("PATH", "")}
    run = subprocess.run(["/usr/bin/python3", str(script)], cwd=script.parent,
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == str(target / "turnout" / "__init__.py")
    assert lines[1] == "[2.0, 4.0]"
    # Optimised, whatever flags `bazel run` was given.
    assert lines[2] == "True False True"
    assert lines[3] == "True"

    # Installing again replaces the package.
    (target / "turnout" / "stale.py").write_text("")
    subprocess.run([str(_installer()), "--target", str(target)], check=True,
                   capture_output=True)
    assert not (target / "turnout" / "stale.py").exists()


def test_install_refuses_to_replace_a_foreign_directory(tmp_path):
    (tmp_path / "turnout").mkdir()
    (tmp_path / "turnout" / "precious.txt").write_text("keep")
    out = subprocess.run([str(_installer()), "--target", str(tmp_path)],
                         capture_output=True, text=True)
    assert out.returncode != 0
    assert "is not a turnout package" in out.stderr
    assert (tmp_path / "turnout" / "precious.txt").exists()
