"""Builds turnout's wheel for Debian's /usr/bin/python3.

    bazel run //:wheel -- --out DIR    # DIR/turnout-V-cp311-cp311-linux_x86_64.whl

The wheel holds the package exactly as //python:package_opt lays it out
(optimised whatever the flags: the .py files, _C.so, lib/libturnout.so.V,
with CUDA _C_cuda.so and lib/libturnout_cuda.so.V, include/turnout/...,
_version.py) and its turnout-V.dist-info/ (METADATA,
WHEEL, LICENSE, top_level.txt, RECORD), so that pip installs, shows and
uninstalls it:

    /usr/bin/python3 -m pip install --no-index --target T DIR/turnout-*.whl

It is written with zipfile alone, reproducibly: the same package gives the
same bytes. The in-tree build backend (build_backend.py, which `pip install .`
runs) imports this module and calls build_wheel() on the package it builds.
"""

import argparse
import base64
import csv
import functools
import hashlib
import io
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Dict, Tuple

import package_layout
from package_layout import PACKAGE

__all__ = [
    "PYTHON",
    "build_wheel",
    "dist_info_files",
    "dist_info_name",
    "python_tag",
    "requires_python",
    "wheel_name",
    "write_dist_info",
]

# The interpreter _C.so is built for (against Debian's python3-dev), which
# the wheel's tags and Requires-Python describe.
PYTHON = "/usr/bin/python3"

# The metadata that is not the version (tools/version.bzl) or the
# description (README.md).
SUMMARY = ("An operator dispatcher and kernel-registration framework in C++, "
           "with Python bindings")
LICENSE = "BSD-3-Clause"

# The zip entries' timestamp when SOURCE_DATE_EPOCH is unset: the earliest
# a zip can hold, so that a rebuild of the same package is byte-identical.
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)

# Asks an interpreter for its wheel tag parts and version: the interpreter
# tag (cp311), the ABI tag (cp311, from SOABI "cpython-311-x86_64-linux-gnu";
# cp311d for a debug build) and the platform tag (linux_x86_64).
_TAG_SCRIPT = """
import sys, sysconfig
if sys.implementation.name != "cpython":
    sys.exit(f"turnout's wheel holds a CPython extension; {sys.executable} "
             f"is {sys.implementation.name}")
soabi = sysconfig.get_config_var("SOABI") or ""
abi = "cp" + soabi.split("-")[1] if soabi.startswith("cpython-") else "none"
plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
print(f"cp{sys.version_info[0]}{sys.version_info[1]}", abi, plat,
      f"{sys.version_info[0]}.{sys.version_info[1]}")
"""


@functools.lru_cache(maxsize=None)
def _ask(python: str) -> Tuple[str, ...]:
    # Once per interpreter and process: the answers do not change.
    try:
        out = subprocess.run([python, "-I", "-c", _TAG_SCRIPT],
                             capture_output=True, text=True)
    except OSError as e:
        raise RuntimeError(f"cannot run {python} to compute the wheel's tags: "
                           f"{e}; install it (apt-get install python3)") from e
    if out.returncode != 0:
        raise RuntimeError(f"{python} could not compute the wheel's tags: "
                           f"{out.stderr.strip()}")
    return tuple(out.stdout.split())


def python_tag(python: str = PYTHON) -> str:
    """The wheel tag `python`'s extensions need, e.g. "cp311-cp311-linux_x86_64"
    (interpreter, ABI, platform; PEP 425).

    Raises:
        RuntimeError: `python` cannot be run or is not CPython.
    """
    return "-".join(_ask(python)[:3])


def requires_python(python: str = PYTHON) -> str:
    """Requires-Python for `python`'s minor version, e.g. "==3.11.*": _C.so is
    built against that version's headers, and pip says so plainly on another
    one (rather than failing on the import)."""
    return f"=={_ask(python)[3]}.*"


def dist_info_name(version: str) -> str:
    """The wheel's metadata folder, e.g. "turnout-0.1.0.dist-info"."""
    return f"{PACKAGE}-{version}.dist-info"


def wheel_name(version: str, tag: str) -> str:
    """The wheel's file name (PEP 427), e.g.
    "turnout-0.1.0-cp311-cp311-linux_x86_64.whl"."""
    return f"{PACKAGE}-{version}-{tag}.whl"


def _metadata(version: str, readme: str, requires: str) -> str:
    # Core metadata 2.1: what pip 23 reads; the README is the description,
    # in the body, as the format asks for a long one.
    headers = [
        ("Metadata-Version", "2.1"),
        ("Name", PACKAGE),
        ("Version", version),
        ("Summary", SUMMARY),
        ("License", LICENSE),
        ("Classifier", "License :: OSI Approved :: BSD License"),
        ("Classifier", "Programming Language :: C++"),
        ("Classifier", "Programming Language :: Python :: 3"),
        ("Classifier", "Operating System :: POSIX :: Linux"),
        ("Requires-Python", requires),
        # numpy is imported lazily (tensor() from data, tolist(), repr) and
        # not required: a --target install resolves every requirement anew,
        # and offline there is no numpy to fetch. Debian's python3-numpy,
        # or turnout[numpy] where an index is at hand.
        ("Provides-Extra", "numpy"),
        ("Requires-Dist", 'numpy; extra == "numpy"'),
        ("Description-Content-Type", "text/markdown"),
    ]
    head = "".join(f"{k}: {v}\n" for k, v in headers)
    return head + "\n" + readme.rstrip("\n") + "\n"


def dist_info_files(version: str, readme: str, license_text: str,
                    python: str = PYTHON) -> Dict[str, bytes]:
    """The files of the dist-info folder but RECORD, by name: METADATA,
    WHEEL, LICENSE and top_level.txt, for the package version `version` with
    the README `readme` as its description.

    Raises:
        RuntimeError: `python` cannot give the tags (see python_tag).
    """
    tag = python_tag(python)
    wheel = ("Wheel-Version: 1.0\n"
             "Generator: turnout (python/build_wheel.py)\n"
             # Not pure Python: pip installs it into platlib.
             "Root-Is-Purelib: false\n"
             f"Tag: {tag}\n")
    return {
        "METADATA": _metadata(version, readme, requires_python(python)).encode(),
        "WHEEL": wheel.encode(),
        "LICENSE": license_text.encode(),
        "top_level.txt": f"{PACKAGE}\n".encode(),
    }


def write_dist_info(out_dir: Path, version: str, readme: str,
                    license_text: str, python: str = PYTHON) -> str:
    """Writes the dist-info folder (without RECORD) into `out_dir`, as PEP 517's
    prepare_metadata_for_build_wheel asks, and returns its name."""
    name = dist_info_name(version)
    folder = out_dir / name
    folder.mkdir(parents=True, exist_ok=True)
    for file, data in dist_info_files(version, readme, license_text,
                                      python).items():
        (folder / file).write_bytes(data)
    return name


def _record_hash(data: bytes) -> str:
    # RECORD's form (PEP 376/427): sha256=, urlsafe base64 without padding.
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _zip_time() -> Tuple[int, ...]:
    # The reproducible-builds convention: SOURCE_DATE_EPOCH, if set, dates
    # every entry.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        return _ZIP_EPOCH
    if not epoch.isdigit():
        raise RuntimeError(f"SOURCE_DATE_EPOCH must be seconds since 1970, "
                           f"got {epoch!r}")
    return max(_ZIP_EPOCH, time.gmtime(int(epoch))[:6])


def build_wheel(pkg: Path, out_dir: Path, readme: Path, license_file: Path,
                python: str = PYTHON) -> Path:
    """Writes the wheel of the installed package folder `pkg` (a folder
    named turnout/, as //python:package_opt lays it out) into `out_dir`
    (made if missing) and returns its path. An earlier wheel of the same
    name is replaced; a failure leaves no partial wheel behind.

    Args:
        pkg: the package folder; its _version.py gives the version.
        out_dir: where the wheel goes.
        readme: README.md, the description in METADATA.
        license_file: LICENSE, copied into the dist-info folder.
        python: the interpreter whose tags the wheel carries.

    Raises:
        package_layout.PackageError: `pkg` is not an installed package.
        FileNotFoundError: `readme` or `license_file` is missing.
        RuntimeError: `python` cannot give the tags.
    """
    package_layout.check_package(
        pkg, "build it with `bazel build //python:package_opt`")
    version = package_layout.package_version(pkg)
    meta = dist_info_files(version, readme.read_text(), license_file.read_text(),
                           python)
    tag = python_tag(python)
    dist_info = dist_info_name(version)

    # (name in the zip, content, mode): the package, then the dist-info
    # folder with RECORD at the very end, as PEP 427 recommends.
    entries = [(f"{PACKAGE}/{rel}", path.read_bytes(),
                package_layout.file_mode(rel))
               for rel, path in package_layout.package_files(pkg)]
    entries += [(f"{dist_info}/{name}", data, 0o644)
                for name, data in sorted(meta.items())]
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for name, data, _ in entries:
        writer.writerow([name, _record_hash(data), len(data)])
    writer.writerow([f"{dist_info}/RECORD", "", ""])  # RECORD lists itself, unhashed
    entries.append((f"{dist_info}/RECORD", record.getvalue().encode(), 0o644))

    out_dir.mkdir(parents=True, exist_ok=True)
    whl = out_dir / wheel_name(version, tag)
    partial = whl.with_name(whl.name + ".partial")
    date_time = _zip_time()
    try:
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data, mode in entries:
                info = zipfile.ZipInfo(name, date_time)
                info.compress_type = zipfile.ZIP_DEFLATED
                # A regular file with `mode`: pip keeps the executable bit.
                info.external_attr = (0o100000 | mode) << 16
                z.writestr(info, data)
        os.replace(partial, whl)
    finally:
        partial.unlink(missing_ok=True)
    return whl


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True,
                        help="directory to write the wheel into (made if "
                        "missing; relative to where `bazel run` was started)")
    args = parser.parse_args()

    out_dir = package_layout.user_path(args.out)
    if out_dir.exists() and not out_dir.is_dir():
        sys.exit(f"wheel: --out {out_dir} exists and is not a directory")
    # README.md and LICENSE are data of //:wheel, at the runfiles' root,
    # one level above this script.
    root = Path(os.path.abspath(__file__)).parent.parent
    try:
        pkg = package_layout.runfiles_package(__file__, "wheel")
        whl = build_wheel(pkg, out_dir, root / "README.md", root / "LICENSE")
    except (package_layout.PackageError, RuntimeError, OSError) as e:
        sys.exit(f"wheel: {e}")
    print(f"wrote {whl}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
