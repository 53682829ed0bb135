"""The installed turnout package as the tools that ship it see it.

//python:package_opt lays the package out once, as it is installed
(site-packages/turnout/...): the .py files, _C.so, lib/libturnout.so.V,
include/turnout/... and _version.py, and where CUDA was built _C_cuda.so
and lib/libturnout_cuda.so.V. Three tools take that folder as it is:

    //:install_python           copies it into a site folder (install_python.py)
    //:wheel                    zips it into a wheel (build_wheel.py)
    pip install .               the same, through pyproject.toml's in-tree
                                backend (build_backend.py)

This module is what they share: where the folder is, which files it holds,
the mode each file is installed with, and its version.

    pkg = package_layout.runfiles_package(__file__, "wheel")
    for rel, path in package_layout.package_files(pkg):
        ...  # rel: "lib/libturnout.so.0.1", mode: file_mode(rel)
"""

import os
import re
from pathlib import Path
from typing import List, Tuple

__all__ = [
    "PACKAGE",
    "PackageError",
    "check_package",
    "file_mode",
    "package_files",
    "package_version",
    "runfiles_package",
    "user_path",
]

# The import name, and the folder's name in site-packages.
PACKAGE = "turnout"

# What a folder must hold to be an installed turnout package: the Python
# face, the extension module and the version the build wrote.
_REQUIRED = ("__init__.py", "_C.so", "_version.py")


class PackageError(Exception):
    """A folder that should hold the installed package does not."""


def check_package(pkg: Path, hint: str) -> Path:
    """Returns `pkg` if it is an installed turnout package.

    Raises:
        PackageError: `pkg` is missing or lacks one of __init__.py, _C.so
            and _version.py; the message ends with `hint` (how to get one).
    """
    if not pkg.is_dir():
        raise PackageError(f"{pkg} is not a folder; {hint}")
    missing = [f for f in _REQUIRED if not (pkg / f).is_file()]
    if missing:
        raise PackageError(f"{pkg} is not an installed turnout package (it "
                           f"lacks {', '.join(missing)}); {hint}")
    return pkg


def runfiles_package(script: str, tool: str) -> Path:
    """The optimised package in the runfiles of the Bazel tool `tool`
    (//:install_python, //:wheel) whose script is `script` (its __file__).

    The script lives in python/, and //python:package_opt puts the package
    beside it, in python/site/turnout. abspath, not realpath: the runfiles
    are symlinks into the source tree, which has no site/ folder.
    """
    here = Path(os.path.abspath(script)).parent
    return check_package(
        here / "site" / PACKAGE,
        f"run me with `bazel run //:{tool}`, which builds the package")


def package_files(pkg: Path) -> List[Tuple[str, Path]]:
    """The files of the package `pkg`, sorted, as pairs (path relative to
    `pkg` with "/" separators, path on disk). Bytecode caches are left out:
    the installer compiles for its own interpreter."""
    files = []
    for f in pkg.rglob("*"):
        if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc":
            files.append((f.relative_to(pkg).as_posix(), f))
    return sorted(files)


def file_mode(rel: str) -> int:
    """The permission bits a package file is installed with: shared objects
    (_C.so, lib/libturnout.so.V, ...) executable, the rest read-write for the
    owner and readable. Bazel marks every output executable, so the mode in
    the build folder says nothing."""
    name = rel.rsplit("/", 1)[-1]
    shared_object = name.endswith(".so") or ".so." in name
    return 0o755 if shared_object else 0o644


def package_version(pkg: Path) -> str:
    """The version in the package's _version.py (written by the build from
    tools/version.bzl).

    Raises:
        PackageError: _version.py does not say `__version__ = "..."`.
    """
    text = (pkg / "_version.py").read_text()
    m = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    if not m:
        raise PackageError(f"{pkg / '_version.py'} does not set __version__; "
                           f"it holds {text!r}")
    return m.group(1)


def user_path(arg: str) -> Path:
    """A path given on the command line of a `bazel run` tool, made absolute.

    `bazel run` runs the tool in its runfiles; a relative path means the
    user's directory, which Bazel passes as BUILD_WORKING_DIRECTORY.
    """
    path = Path(arg).expanduser()
    if not path.is_absolute():
        path = Path(os.environ.get("BUILD_WORKING_DIRECTORY", ".")) / path
    return path
