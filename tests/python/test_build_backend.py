"""Tests for the in-tree PEP 517 backend (pyproject.toml, python/
build_backend.py): `pip install .` on a copy of the files it needs, with
TURNOUT_PREBUILT_PACKAGE naming //python:package_opt's folder in the
runfiles, since a test under Bazel cannot run Bazel again in its own
workspace. The hooks are also called one by one, as a frontend would."""

import json
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Dict, Optional

import pytest
from wheel_checks import (PYTHON, check_import, check_wheel, clean_env,
                          package_opt, package_version, pip, runfiles)

# What pip reads from a checkout to build turnout's wheel from a built
# package: the backend, the wheel's code, the metadata's sources.
_CHECKOUT_FILES = [
    "pyproject.toml",
    "README.md",
    "LICENSE",
    "tools/version.bzl",
    "python/build_backend.py",
    "python/build_wheel.py",
    "python/package_layout.py",
]


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A copy of the checkout's files the backend reads, outside any tree."""
    src = tmp_path / "src"
    for f in _CHECKOUT_FILES:
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(runfiles() / f, src / f)
    return src


def _prebuilt() -> str:
    # The folder holding turnout/, as TURNOUT_PREBUILT_PACKAGE wants it.
    return str(package_opt().parent)


@pytest.mark.parametrize("isolation", [False, True],
                         ids=["no-build-isolation", "build-isolation"])
def test_pip_install_dot_then_import_from_elsewhere(checkout, tmp_path,
                                                    isolation):
    # `requires = []`: pip needs no index even when it isolates the build.
    target = tmp_path / "site"
    env = clean_env(tmp_path, TURNOUT_PREBUILT_PACKAGE=_prebuilt())
    flags = [] if isolation else ["--no-build-isolation"]
    pip("install", "--no-index", *flags, "--target", str(target), ".",
        env=env, cwd=checkout)
    check_import(target, tmp_path / "work")
    shown = pip("show", "turnout",
                env=clean_env(tmp_path, PYTHONPATH=str(target)))
    assert f"Version: {package_version()}\n" in shown


def _hook(checkout: Path, env: Dict[str, str], hook: str, *args: str):
    """Calls build_backend.HOOK(*args) in a fresh interpreter, as pip does
    (cwd the checkout, backend-path on sys.path); returns (result, stderr),
    result None when the hook raised."""
    script = ("import json, sys, build_backend\n"
              "print(json.dumps(getattr(build_backend, sys.argv[1])"
              "(*sys.argv[2:])))\n")
    run = subprocess.run([PYTHON, "-c", script, hook, *args], cwd=checkout,
                         capture_output=True, text=True,
                         env=dict(env, PYTHONPATH=str(checkout / "python")))
    result: Optional[object] = None
    if run.returncode == 0:
        result = json.loads(run.stdout.splitlines()[-1])
    return result, run.stderr


def test_hooks_make_the_same_wheel_as_bazel_run_wheel(checkout, tmp_path):
    env = clean_env(tmp_path, TURNOUT_PREBUILT_PACKAGE=_prebuilt())
    assert _hook(checkout, env, "get_requires_for_build_wheel")[0] == []

    meta = tmp_path / "meta"
    name, err = _hook(checkout, env, "prepare_metadata_for_build_wheel",
                      str(meta))
    assert name == f"turnout-{package_version()}.dist-info", err
    prepared = {f.name: f.read_bytes() for f in (meta / name).iterdir()}
    assert set(prepared) == {"METADATA", "WHEEL", "LICENSE", "top_level.txt"}

    dist = tmp_path / "dist"
    whl, err = _hook(checkout, env, "build_wheel", str(dist))
    assert whl is not None, err
    check_wheel(dist / whl, package_opt())

    # The metadata pip prepared is the wheel's; the wheel is //:wheel's.
    with zipfile.ZipFile(dist / whl) as z:
        for f, data in prepared.items():
            assert z.read(f"{name}/{f}") == data, f
    out = tmp_path / "bazel_run"
    subprocess.run([str(runfiles() / "wheel"), "--out", str(out)], check=True,
                   capture_output=True)
    assert (out / whl).read_bytes() == (dist / whl).read_bytes()


def test_build_sdist_is_unsupported(checkout, tmp_path):
    result, err = _hook(checkout, clean_env(tmp_path), "build_sdist",
                        str(tmp_path / "sdist"))
    assert result is None
    assert "UnsupportedOperation: turnout has no sdist" in err


def test_a_bad_prebuilt_package_says_what_is_wrong(checkout, tmp_path):
    missing = tmp_path / "nowhere"
    env = clean_env(tmp_path, TURNOUT_PREBUILT_PACKAGE=str(missing))
    result, err = _hook(checkout, env, "build_wheel", str(tmp_path / "dist"))
    assert result is None
    assert f"{missing / 'turnout'} is not a folder; TURNOUT_PREBUILT_PACKAGE " \
           f"must name a folder holding a built turnout/ package" in err

    # A package from another version: stale, and pip would reject it.
    stale = tmp_path / "stale" / "turnout"
    stale.mkdir(parents=True)
    for f in ("__init__.py", "_C.so"):
        (stale / f).write_text("")
    (stale / "_version.py").write_text('__version__ = "9.9.9"\n')
    env = clean_env(tmp_path, TURNOUT_PREBUILT_PACKAGE=str(stale.parent))
    result, err = _hook(checkout, env, "build_wheel", str(tmp_path / "dist"))
    assert result is None
    assert (f"{stale} is turnout 9.9.9, but this checkout is "
            f"{package_version()} (tools/version.bzl)") in err
    assert not (tmp_path / "dist").exists()


def test_without_bazel_or_a_prebuilt_package_says_what_to_do(checkout,
                                                            tmp_path):
    # An empty PATH: no bazel to find (and none started inside this test).
    env = dict(clean_env(tmp_path), PATH="")
    result, err = _hook(checkout, env, "build_wheel", str(tmp_path / "dist"))
    assert result is None
    assert "bazel is not on the PATH" in err
    assert "TURNOUT_PREBUILT_PACKAGE" in err
