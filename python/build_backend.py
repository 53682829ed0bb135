"""turnout's PEP 517 build backend, in the tree: what `pip install .` runs.

pyproject.toml names it (build-backend = "build_backend", backend-path =
["python"]) and requires nothing, so pip needs no index, with or without
build isolation:

    /usr/bin/python3 -m pip install --no-index --target T .
    /usr/bin/python3 -m pip install --no-index --no-build-isolation --target T .

build_wheel runs `bazel build //python:package_opt` in the checkout (the
package built optimised through a configuration transition, whatever the
flags), then zips that folder with build_wheel.py, the code of `bazel run
//:wheel`. Two environment variables change that:

    TURNOUT_BAZEL_ARGS="--disk_cache=DIR ..."   more arguments for bazel build
    TURNOUT_PREBUILT_PACKAGE=DIR                pack DIR/turnout as it is,
                                                without Bazel (DIR holds the
                                                package, as python/site does
                                                in //python:package_opt's
                                                output)

The second is for the tests, which run under Bazel and cannot start Bazel
again in the same workspace. There is no sdist: build_sdist raises
UnsupportedOperation (a turnout build needs the whole checkout and Bazel).
"""

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Optional

import build_wheel as wheel_builder
import package_layout

__all__ = [
    "UnsupportedOperation",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_wheel",
]

# The checkout: this file is python/build_backend.py.
ROOT = Path(__file__).resolve().parent.parent

PACKAGE_TARGET = "//python:package_opt"


class UnsupportedOperation(Exception):
    """The hook cannot do this (PEP 517 names the exception so)."""


def _version() -> str:
    # tools/version.bzl is the one place the version is written.
    bzl = ROOT / "tools" / "version.bzl"
    m = re.search(r'^VERSION = "([^"]+)"$', bzl.read_text(), re.MULTILINE)
    if not m:
        raise RuntimeError(f'{bzl} has no line VERSION = "..."')
    return m.group(1)


def _readme() -> str:
    return (ROOT / "README.md").read_text()


def _license() -> str:
    return (ROOT / "LICENSE").read_text()


def _bazel_env() -> Dict[str, str]:
    # pip's build isolation puts its temporary environment's bin folders
    # (/tmp/pip-build-env-XXXX/...) in front of PATH. Bazel hands PATH to
    # every action and keys its caches on it, so a new random folder on each
    # `pip install .` would rebuild everything. Drop them: the build needs
    # nothing from that environment.
    env = dict(os.environ)
    path = env.get("PATH", "").split(os.pathsep)
    env["PATH"] = os.pathsep.join(p for p in path if "pip-build-env-" not in p)
    return env


def _bazel(args: List[str], capture: bool = False) -> str:
    bazel = shutil.which("bazel", path=_bazel_env()["PATH"])
    if bazel is None:
        raise RuntimeError(
            "bazel is not on the PATH; install it (tools/install_deps.sh), or "
            "set TURNOUT_PREBUILT_PACKAGE to a folder holding a built "
            "turnout/ package")
    cmd = [bazel] + args
    # Bazel's progress goes to stderr, which pip shows with -v or on failure.
    out = subprocess.run(cmd, cwd=ROOT, env=_bazel_env(), text=True,
                         stdout=subprocess.PIPE if capture else None)
    if out.returncode != 0:
        raise RuntimeError(f"`{shlex.join(cmd)}` failed with exit status "
                           f"{out.returncode} in {ROOT}; its output is above")
    return out.stdout if capture else ""


def _built_package() -> Path:
    """Builds //python:package_opt and returns its folder (turnout/)."""
    extra = shlex.split(os.environ.get("TURNOUT_BAZEL_ARGS", ""))
    _bazel(["build"] + extra + [PACKAGE_TARGET])
    # The transition puts the output under a configuration folder of its own
    # (bazel-out/k8-opt-ST-<hash>/), which no bazel-bin link names: ask.
    rel = _bazel(["cquery"] + extra + [
        PACKAGE_TARGET, "--output=starlark",
        "--starlark:expr=target.files.to_list()[0].path"
    ], capture=True).strip()
    execroot = _bazel(["info", "execution_root"], capture=True).strip()
    return package_layout.check_package(
        Path(execroot) / rel, f"`bazel build {PACKAGE_TARGET}` did not make it")


def _package() -> Path:
    """The package folder to pack: prebuilt, or built now."""
    prebuilt = os.environ.get("TURNOUT_PREBUILT_PACKAGE")
    if not prebuilt:
        return _built_package()
    pkg = package_layout.check_package(
        Path(prebuilt).absolute() / package_layout.PACKAGE,
        "TURNOUT_PREBUILT_PACKAGE must name a folder holding a built turnout/ "
        "package (bazel build //python:package_opt makes one, in "
        "bazel-out/*-opt-*/bin/python/site)")
    # pip checks the wheel against the metadata prepared earlier, from
    # tools/version.bzl; say which side is stale rather than let it.
    if package_layout.package_version(pkg) != _version():
        raise RuntimeError(
            f"TURNOUT_PREBUILT_PACKAGE: {pkg} is turnout "
            f"{package_layout.package_version(pkg)}, but this checkout is "
            f"{_version()} (tools/version.bzl); rebuild the package")
    return pkg


# PEP 517 hooks.


def get_requires_for_build_wheel(
        config_settings: Optional[dict] = None) -> List[str]:
    """Nothing beyond the standard library (and Bazel, which pip cannot
    install)."""
    return []


def prepare_metadata_for_build_wheel(
        metadata_directory: str, config_settings: Optional[dict] = None) -> str:
    """Writes turnout-V.dist-info into `metadata_directory` without building,
    so that pip can check the name, version and Requires-Python first."""
    return wheel_builder.write_dist_info(Path(metadata_directory), _version(),
                                         _readme(), _license())


def build_wheel(wheel_directory: str,
                config_settings: Optional[dict] = None,
                metadata_directory: Optional[str] = None) -> str:
    """Builds the package (or takes TURNOUT_PREBUILT_PACKAGE's) and writes
    its wheel into `wheel_directory`; returns the wheel's file name. Its
    metadata is the same as prepare_metadata_for_build_wheel's."""
    whl = wheel_builder.build_wheel(_package(), Path(wheel_directory),
                                    ROOT / "README.md", ROOT / "LICENSE")
    return whl.name


def build_sdist(sdist_directory: str,
                config_settings: Optional[dict] = None) -> str:
    """Not supported: install from the checkout (`pip install .`) or from a
    wheel (`bazel run //:wheel -- --out DIR`)."""
    raise UnsupportedOperation(
        "turnout has no sdist: a build needs the whole checkout and Bazel; "
        "install from the checkout (pip install .) or build a wheel "
        "(bazel run //:wheel -- --out DIR)")
