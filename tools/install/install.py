"""Installs turnout's C++ runtime into a prefix, for builds outside Bazel.

    bazel run //:install -- --prefix DIR

writes (the runtime built optimised, whatever flags `bazel run` was given):

    DIR/include/turnout/...                     the public headers, at their
                                                paths in the tree
    DIR/lib/libturnout.so.SOVERSION             the shared runtime
    DIR/lib/libturnout.so                       -> libturnout.so.SOVERSION
    DIR/lib/pkgconfig/turnout.pc                pkg-config turnout
    DIR/lib/cmake/turnout/turnoutConfig.cmake   find_package(turnout):
    DIR/lib/cmake/turnout/turnoutConfigVersion.cmake   turnout::turnout

and, where turnout was built with CUDA, its CUDA kernels:

    DIR/lib/libturnout_cuda.so.SOVERSION        links libturnout.so.SOVERSION
    DIR/lib/libturnout_cuda.so                  -> libturnout_cuda.so.SOVERSION
    DIR/lib/pkgconfig/turnout-cuda.pc           pkg-config turnout-cuda; CMake:
                                                turnout::cuda (component cuda)

A relative DIR is taken from the directory `bazel run` was called in.
Installing again over the same prefix replaces what an earlier install
wrote there (the headers folder as a whole; the CUDA files, removed by an
install without CUDA) and leaves the rest alone.
"""

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import package_layout

# Where the pieces lie in the runfiles, relative to the workspace's root
# there: what //:install has in its data.
_HEADERS = "runtime/include/turnout"
_TEMPLATES = "tools/install"
_INFO = "tools/install/install_info.json"


class InstallError(Exception):
    """A problem the user can fix; main() prints it without a traceback."""


def runfiles_root() -> Path:
    # This script lies at <root>/tools/install/install.py in the runfiles
    # (abspath keeps the runfiles symlink, where resolve() would follow it
    # into the source tree).
    root = Path(os.path.abspath(__file__)).parent.parent.parent
    if not (root / _INFO).is_file():
        raise InstallError(
            f"{root / _INFO} is missing: run me with `bazel run //:install -- "
            f"--prefix DIR`, which builds what I install")
    return root


def resolve_prefix(prefix: str) -> Path:
    """The absolute prefix; refuses one that exists and is not a folder."""
    path = Path(os.path.normpath(package_layout.user_path(prefix)))
    for p in [path, path / "include", path / "lib"]:
        if p.exists() and not p.is_dir():
            raise InstallError(f"--prefix {prefix}: {p} is a file, not a "
                               f"directory; choose another prefix")
    return path


def copy_file(src: Path, dest: Path, mode: int) -> None:
    """Copies src (following the runfiles symlinks) to dest, replacing it in
    one rename: a process that has the old library mapped keeps its copy,
    where writing over it in place could crash that process."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.")
    os.close(fd)
    try:
        shutil.copyfile(src, tmp)
        os.chmod(tmp, mode)
        os.replace(tmp, dest)
    except BaseException:
        os.unlink(tmp)
        raise


def write_file(dest: Path, text: str) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text)
    dest.chmod(0o644)


def install_headers(src: Path, dest: Path) -> None:
    """Replaces dest (PREFIX/include/turnout) with the headers in src. Refuses
    to remove a dest that does not look like turnout's headers."""
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        raise InstallError(f"{dest} exists and is not a directory; remove it "
                           f"or choose another prefix")
    if dest.exists() and any(dest.iterdir()) and \
            not (dest / "dispatcher" / "library.h").is_file():
        raise InstallError(f"{dest} exists and does not hold turnout's "
                           f"headers; remove it or choose another prefix")
    if dest.exists():
        shutil.rmtree(dest)
    for f in sorted(src.rglob("*")):
        if f.is_file():
            copy_file(f, dest / f.relative_to(src), 0o644)


def link_library(lib: Path, name: str, soname: str) -> Path:
    """lib/name -> soname: the name the linker looks for (-lturnout), as a
    relative link so that the prefix can be moved."""
    link = lib / name
    if link.is_symlink() or link.exists():
        if link.is_dir() and not link.is_symlink():
            raise InstallError(f"{link} is a directory; remove it")
        link.unlink()
    link.symlink_to(soname)
    return link


def remove_cuda_files(lib: Path) -> None:
    """Removes what an earlier install with CUDA wrote (its library would
    link this install's libturnout.so, of another build)."""
    for f in [lib / "pkgconfig" / "turnout-cuda.pc", lib / "libturnout_cuda.so",
              *lib.glob("libturnout_cuda.so.*")]:
        if f.is_symlink() or f.is_file():
            f.unlink()


def fill(template: Path, values: dict) -> str:
    """The template's text with every @KEY@ replaced by values[KEY]."""
    text = template.read_text()
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    unknown = re.findall(r"@[A-Z_]+@", text)
    if unknown:
        raise InstallError(f"{template.name}: no value for {unknown} (a bug "
                           f"in turnout's installer)")
    return text


def install(prefix: Path) -> list:
    """Installs into prefix; returns the paths written, for the summary."""
    root = runfiles_root()
    info = json.loads((root / _INFO).read_text())
    soname = info["soname"]
    cuda_soname = info["cuda_soname"]  # "" without CUDA
    library = root / "runtime" / soname
    headers = root / _HEADERS
    required = [library, headers / "dispatcher" / "library.h"]
    if cuda_soname:
        required.append(root / "runtime" / cuda_soname)
    for p in required:
        if not p.exists():
            raise InstallError(f"{p} is missing from the runfiles; run me with "
                               f"`bazel run //:install -- --prefix DIR`")

    lib = prefix / "lib"
    install_headers(headers, prefix / "include" / "turnout")

    copy_file(library, lib / soname, 0o755)
    written = [prefix / "include" / "turnout", lib / soname,
               link_library(lib, "libturnout.so", soname)]

    values = {
        "PREFIX": str(prefix),
        "VERSION": info["version"],
        "SOVERSION": info["soversion"],
        "SONAME": soname,
        "CUDA_SONAME": cuda_soname,
        "CUDA_INCLUDE": info["cuda_include"],
        "ABSL_PKG_CONFIG": " ".join(f"absl_{n}" for n in info["absl"]),
        "ABSL_CMAKE": ";".join(f"absl::{n}" for n in info["absl"]),
    }
    templates = root / _TEMPLATES
    pc = lib / "pkgconfig" / "turnout.pc"
    write_file(pc, fill(templates / "turnout.pc.in", values))
    written.append(pc)
    if cuda_soname:
        copy_file(root / "runtime" / cuda_soname, lib / cuda_soname, 0o755)
        cuda_pc = lib / "pkgconfig" / "turnout-cuda.pc"
        write_file(cuda_pc, fill(templates / "turnout-cuda.pc.in", values))
        written += [lib / cuda_soname,
                    link_library(lib, "libturnout_cuda.so", cuda_soname),
                    cuda_pc]
    else:
        remove_cuda_files(lib)
    cmake = lib / "cmake" / "turnout"
    for name in ["turnoutConfig.cmake", "turnoutConfigVersion.cmake"]:
        write_file(cmake / name, fill(templates / (name + ".in"), values))
    return written + [cmake]


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="bazel run //:install --",
        description="Installs turnout's C++ runtime, headers, pkg-config file "
                    "and CMake package into a prefix.")
    parser.add_argument("--prefix", required=True,
                        help="directory to install into (relative: to the "
                             "directory bazel was run in)")
    args = parser.parse_args()
    try:
        prefix = resolve_prefix(args.prefix)
        written = install(prefix)
    except (InstallError, OSError) as e:
        print(f"install: {e}", file=sys.stderr)
        return 1
    print(f"installed turnout into {prefix}:")
    for p in written:
        print(f"  {p}")
    print(f"use it with: PKG_CONFIG_PATH={prefix}/lib/pkgconfig pkg-config "
          f"--cflags --libs turnout\n"
          f"         or: cmake -DCMAKE_PREFIX_PATH={prefix} ... and "
          f"find_package(turnout)")
    if (prefix / "lib" / "pkgconfig" / "turnout-cuda.pc").is_file():
        print("the CUDA kernels: pkg-config turnout-cuda, or CMake's "
              "turnout::cuda (find_package(turnout COMPONENTS cuda))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
