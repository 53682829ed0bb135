"""Tests for //:wheel: build the wheel into a temporary folder, check what it
holds, install it with pip (into a --target folder and into a venv), and
import turnout from a script outside the source tree. The commands are the
README's ("Python wheel and pip install .")."""

import os
import subprocess
from pathlib import Path

import pytest
from wheel_checks import (PYTHON, check_import, check_wheel, clean_env,
                          package_opt, package_version, pip, runfiles)


def _builder() -> Path:
    # The py_binary launcher, in this test's runfiles.
    return runfiles() / "wheel"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """bazel run //:wheel -- --out DIR, once for the module."""
    out = tmp_path_factory.mktemp("dist")
    run = subprocess.run([str(_builder()), "--out", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    [whl] = out.glob("*.whl")
    assert run.stdout == f"wrote {whl}\n"
    return whl


def test_wheel_holds_the_package_and_its_metadata(wheel):
    check_wheel(wheel, package_opt())


def test_wheel_is_reproducible(wheel, tmp_path):
    # Relative --out: the folder is taken from where `bazel run` started.
    subprocess.run([str(_builder()), "--out", "again"], check=True,
                   capture_output=True,
                   env=dict(os.environ, BUILD_WORKING_DIRECTORY=str(tmp_path)))
    assert (tmp_path / "again" / wheel.name).read_bytes() == wheel.read_bytes()


def test_install_into_a_target_and_import_from_elsewhere(wheel, tmp_path):
    target = tmp_path / "site"
    env = clean_env(tmp_path)
    pip("install", "--no-index", "--target", str(target), str(wheel), env=env)
    assert (target / f"turnout-{package_version()}.dist-info" / "RECORD").is_file()
    check_import(target, tmp_path / "work")

    # pip knows it, with the folder on the path. Debian's pip (PEP 668)
    # uninstalls outside a venv only with --break-system-packages.
    on_path = clean_env(tmp_path, PYTHONPATH=str(target))
    shown = pip("show", "turnout", env=on_path)
    assert f"Version: {package_version()}\n" in shown
    assert f"Location: {target}\n" in shown
    pip("uninstall", "-y", "--break-system-packages", "turnout", env=on_path)
    assert list(target.iterdir()) == []


def test_install_show_uninstall_in_a_venv(wheel, tmp_path):
    # A venv over Debian's site-packages: Debian's pip serves it (no
    # ensurepip, so python3-venv is not even needed) and so does
    # python3-numpy, which turnout's repr and tolist() use.
    env_dir = tmp_path / "venv"
    env = clean_env(tmp_path)
    subprocess.run([PYTHON, "-m", "venv", "--system-site-packages",
                    "--without-pip", str(env_dir)], check=True, env=env)
    python = str(env_dir / "bin" / "python")
    pip("install", "--no-index", str(wheel), env=env, python=python)
    site = next((env_dir / "lib").glob("python3.*/site-packages"))
    check_import(site, tmp_path / "work", python=python, pythonpath=False)

    shown = pip("show", "turnout", env=env, python=python)
    assert f"Version: {package_version()}\n" in shown
    assert f"Location: {site}\n" in shown
    out = pip("uninstall", "-y", "turnout", env=env, python=python)
    assert f"Successfully uninstalled turnout-{package_version()}" in out
    assert not (site / "turnout").exists()
    assert not list(site.glob("turnout-*.dist-info"))


def test_bad_arguments_say_what_is_wrong(tmp_path):
    run = subprocess.run([str(_builder())], capture_output=True, text=True)
    assert run.returncode != 0
    assert "the following arguments are required: --out" in run.stderr

    a_file = tmp_path / "file"
    a_file.write_text("")
    run = subprocess.run([str(_builder()), "--out", str(a_file)],
                         capture_output=True, text=True)
    assert run.returncode != 0
    assert f"wheel: --out {a_file} exists and is not a directory" in run.stderr
