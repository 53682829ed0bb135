"""What the wheel tests check, shared by test_wheel.py (`bazel run //:wheel`)
and test_build_backend.py (`pip install .`): a wheel's name, RECORD and
METADATA against the package it was made from, and an installed turnout
imported by a clean process outside any source tree.

    whl = ...                                    # turnout-V-TAG.whl
    check_wheel(whl, package_opt())
    pip("install", "--no-index", "--target", str(t), str(whl), env=clean_env(tmp))
    check_import(t, tmp / "work")
"""

import base64
import csv
import email.parser
import hashlib
import io
import os
import re
import stat
import subprocess
import zipfile
from pathlib import Path
from typing import Dict, Optional

__all__ = [
    "PYTHON",
    "check_import",
    "check_wheel",
    "clean_env",
    "package_opt",
    "package_version",
    "pip",
    "runfiles",
]

PYTHON = "/usr/bin/python3"

# Whether turnout was built with CUDA (@local_cuda's CUDA_FOUND, which the
# test's BUILD rule passes): the package then holds _C_cuda.so and
# lib/libturnout_cuda.so.V.
CUDA_BUILT = os.environ.get("TURNOUT_TEST_CUDA_FOUND") == "1"


def runfiles() -> Path:
    """This test's runfiles root (the workspace's folder in it)."""
    return Path(os.environ["TEST_SRCDIR"]) / os.environ["TEST_WORKSPACE"]


def package_opt() -> Path:
    """The optimised package, //python:package_opt, from the runfiles."""
    return runfiles() / "python" / "site" / "turnout"


def package_version() -> str:
    """The version the build wrote into the package (tools/version.bzl)."""
    text = (package_opt() / "_version.py").read_text()
    return re.search(r'__version__ = "([^"]+)"', text).group(1)


def clean_env(home: Path, **extra: str) -> Dict[str, str]:
    """An environment with nothing of this test's in it (no PYTHONPATH to
    the runfiles, no pip settings of the machine's), so that what a process
    finds it finds through `extra` alone."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "PIP_NO_CACHE_DIR": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    env.update(extra)
    return env


def pip(*args: str, env: Dict[str, str], python: str = PYTHON,
        cwd: Optional[Path] = None) -> str:
    """Runs `python -m pip ARGS`; it must succeed. Returns its stdout."""
    run = subprocess.run([python, "-m", "pip", *args], capture_output=True,
                         text=True, env=env, cwd=cwd)
    assert run.returncode == 0, f"pip {' '.join(args)}:\n{run.stdout}{run.stderr}"
    return run.stdout


def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _wheel_tag_supported(tag: str) -> bool:
    # pip's own list of the tags /usr/bin/python3 installs (its vendored
    # packaging): the name is right if pip takes it.
    script = ("import sys\n"
              "from pip._vendor.packaging import tags\n"
              "print(sys.argv[1] in {str(t) for t in tags.sys_tags()})\n")
    out = subprocess.run([PYTHON, "-c", script, tag], capture_output=True,
                         text=True, check=True)
    return out.stdout.strip() == "True"


def check_wheel(whl: Path, pkg: Path) -> None:
    """Checks that `whl` holds exactly the package folder `pkg` (bytes and
    modes) under turnout/, and a dist-info folder that describes it: RECORD
    (every file, with its sha256 and size), METADATA, WHEEL, LICENSE and
    top_level.txt."""
    version = package_version()
    m = re.fullmatch(rf"turnout-{re.escape(version)}-(cp3\d+-cp3\d+d?-linux_\w+)\.whl",
                     whl.name)
    assert m, whl.name
    tag = m.group(1)
    assert _wheel_tag_supported(tag), f"{tag} is not a tag {PYTHON} installs"
    dist_info = f"turnout-{version}.dist-info"

    with zipfile.ZipFile(whl) as z:
        names = z.namelist()
        assert len(names) == len(set(names)), "duplicate entries"
        data = {n: z.read(n) for n in names}
        modes = {i.filename: i.external_attr >> 16 for i in z.infolist()}

    # The package, file for file, byte for byte.
    expected = {
        f"turnout/{f.relative_to(pkg).as_posix()}": f
        for f in pkg.rglob("*") if f.is_file()
    }
    packaged = {n for n in names if n.startswith("turnout/")}
    assert packaged == set(expected), packaged ^ set(expected)
    for name, f in expected.items():
        assert data[name] == f.read_bytes(), name
        assert stat.S_ISREG(modes[name]), name
        so = name.endswith(".so") or ".so." in name
        assert stat.S_IMODE(modes[name]) == (0o755 if so else 0o644), name
    for must in ("_C.so", "_version.py", "__init__.py"):
        assert f"turnout/{must}" in packaged
    assert any(n.startswith("turnout/lib/libturnout.so.") for n in packaged)
    cuda = {n for n in packaged if n == "turnout/_C_cuda.so" or
            n.startswith("turnout/lib/libturnout_cuda.so.")}
    assert len(cuda) == (2 if CUDA_BUILT else 0), cuda
    assert any(n.startswith("turnout/include/turnout/dispatcher/")
               for n in packaged)

    # dist-info: these files and no others.
    meta_files = {n for n in names if not n.startswith("turnout/")}
    assert meta_files == {f"{dist_info}/{f}" for f in (
        "METADATA", "WHEEL", "LICENSE", "top_level.txt", "RECORD")}

    # RECORD: every entry once, with its hash and size; itself unhashed.
    rows = list(csv.reader(io.StringIO(data[f"{dist_info}/RECORD"].decode())))
    assert sorted(r[0] for r in rows) == sorted(names)
    for path, digest, size in rows:
        if path == f"{dist_info}/RECORD":
            assert (digest, size) == ("", "")
        else:
            assert digest == _record_hash(data[path]), path
            assert int(size) == len(data[path]), path

    metadata = email.parser.BytesParser().parsebytes(data[f"{dist_info}/METADATA"])
    assert metadata["Metadata-Version"] == "2.1"
    assert metadata["Name"] == "turnout"
    assert metadata["Version"] == version
    assert "operator dispatcher" in metadata["Summary"]
    assert metadata["License"] == "BSD-3-Clause"
    major_minor = tag[2] + "." + tag[3:tag.index("-")]  # cp311 -> 3.11
    assert metadata["Requires-Python"] == f"=={major_minor}.*"
    assert metadata["Provides-Extra"] == "numpy"
    assert metadata["Requires-Dist"] == 'numpy; extra == "numpy"'
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata.get_payload().startswith("# turnout\n")

    wheel = email.parser.BytesParser().parsebytes(data[f"{dist_info}/WHEEL"])
    assert wheel["Wheel-Version"] == "1.0"
    assert wheel["Root-Is-Purelib"] == "false"
    assert wheel["Tag"] == tag
    assert data[f"{dist_info}/top_level.txt"] == b"turnout\n"
    assert data[f"{dist_info}/LICENSE"].startswith(b"BSD 3-Clause License")


def check_import(site: Path, work: Path, python: str = PYTHON,
                 pythonpath: bool = True) -> None:
    """Imports turnout with `python` from a script in `work` (made here,
    outside any source tree), with `site` on PYTHONPATH (or not, for a venv
    whose own site it is), and checks that the package, _C and the shared
    runtime all come from `site`, optimised, at the package's version."""
    work.mkdir(parents=True, exist_ok=True)
    script = work / "user_script.py"
    script.write_text(
        "import turnout\n"
        "print(turnout.__file__)\n"
        "print(turnout._C.__file__)\n"
        "maps = open('/proc/self/maps').read().split()\n"
        "print(sorted({p for p in maps if '/libturnout.so.' in p}))\n"
        "print(turnout.__version__)\n"
        "info = turnout._C._build_info()\n"
        "print(info['optimized'], info['assertions'], info['version'])\n"
        "x = turnout.tensor([1.0, 2.0])\n"
        "print(turnout.ops.aten.add(x, x).tolist())\n")
    lines = run_script(script, site, work, python, pythonpath)
    version = package_version()
    lib = next((site / "turnout" / "lib").glob("libturnout.so.*"))
    assert lines == [
        str(site / "turnout" / "__init__.py"),
        str(site / "turnout" / "_C.so"),
        str([str(lib)]),
        version,
        f"True False {version}",  # optimised, without assertions
        "[2.0, 4.0]",
    ]
    if CUDA_BUILT:
        check_cuda_import(site, work, python, pythonpath)


def run_script(script: Path, site: Path, work: Path, python: str,
               pythonpath: bool, **env: str) -> list:
    """Runs `script` from `work` in a clean environment (with `site` on
    PYTHONPATH if `pythonpath`); its output lines. It must succeed."""
    if pythonpath:
        env["PYTHONPATH"] = str(site)
    run = subprocess.run([python, str(script)], cwd=work, capture_output=True,
                         text=True, env=clean_env(work, **env))
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


def check_cuda_import(site: Path, work: Path, python: str,
                      pythonpath: bool) -> None:
    """Imports turnout with TURNOUT_CUDA=1 (this machine may have no
    driver): _C_cuda, libturnout_cuda and libturnout all come from `site`,
    found through the package's own rpaths, and the CUDA kernels are in
    the one registry."""
    script = work / "cuda_script.py"
    script.write_text(
        "import re, turnout\n"
        "print(turnout._C_cuda.__file__)\n"
        "maps = open('/proc/self/maps').read().split()\n"
        "print(sorted({p for p in maps if '/libturnout' in p}))\n"
        "table = turnout._C._dispatch_dump_table('aten::add.Tensor')\n"
        "print(re.search(r'^CUDA: registered at kernels/cuda/', table, re.M)"
        " is not None)\n")
    lines = run_script(script, site, work, python, pythonpath,
                       TURNOUT_CUDA="1")
    lib = site / "turnout" / "lib"
    assert lines == [
        str(site / "turnout" / "_C_cuda.so"),
        str(sorted(str(p) for p in lib.glob("libturnout*.so.*"))),
        "True",
    ]
