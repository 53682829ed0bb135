"""The shared runtime's thread-locals (dispatcher/core/thread_local.h).

The call path reads its thread-locals with the initial-exec TLS model, so
libturnout.so is marked STATIC_TLS: a process that dlopens it (`import
turnout`, any library's dlopen) must place its whole thread-local block in
the static TLS surplus glibc keeps for that, about 1.5 KB shared by every
such library. These tests keep the block small, and check that the hot
variables really are reached initial-exec.

The libraries checked are the Python package's (//python:turnout's
turnout/lib), the files a process loads.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SONAME = os.environ["TURNOUT_TEST_SONAME"]
CUDA_SONAME = os.environ["TURNOUT_TEST_CUDA_SONAME"]

# Bytes of thread-local storage each library may hold (PT_TLS's MemSiz).
# libturnout.so: 328 today (the key sets, CallSection, the allocator's
# cache, ...); libturnout_cuda.so keeps its per-device arrays on the heap.
BUDGET = {SONAME: 512, CUDA_SONAME: 128}

# The variables the call path reads from inline header code, in every module.
HOT_EXPORTED = [
    "_ZN7turnout6detail13thread_readerE",
    "_ZN7turnout6detail18local_included_xorE",
    "_ZN7turnout6detail18local_excluded_xorE",
]


def package() -> Path:
    """The package folder (//python:turnout), found without importing it."""
    for p in sys.path:
        if (Path(p) / "turnout" / "_C.so").is_file():
            return Path(p) / "turnout"
    raise AssertionError(f"no turnout/_C.so on {sys.path}")


def readelf(*args) -> str:
    return subprocess.run(["readelf", "-W", *map(str, args)],
                          capture_output=True, text=True, check=True).stdout


def tls_size(library: Path) -> int:
    """PT_TLS's MemSiz, 0 without thread-locals."""
    for line in readelf("-l", library).splitlines():
        fields = line.split()
        if fields and fields[0] == "TLS":
            return int(fields[5], 16)
    return 0


def libraries():
    lib = package() / "lib"
    return [lib / name for name in (SONAME, CUDA_SONAME)
            if (lib / name).is_file()]


@pytest.mark.parametrize("name", [SONAME, CUDA_SONAME])
def test_thread_local_block_stays_small(name):
    library = package() / "lib" / name
    if not library.is_file():
        pytest.skip(f"{name} is not built here")
    size = tls_size(library)
    assert size <= BUDGET[name], (
        f"{name} holds {size} bytes of thread-locals, over its budget of "
        f"{BUDGET[name]}: a process that dlopens it must fit them in glibc's "
        f"static TLS surplus. Keep large per-thread state on the heap (a "
        f"thread_local pointer or vector), as kernels/cuda/stream.cc does")


def test_runtime_is_static_tls_and_hot_variables_are_initial_exec():
    library = package() / "lib" / SONAME
    assert "STATIC_TLS" in readelf("-d", library)
    relocations = readelf("-r", library)
    for symbol in HOT_EXPORTED:
        kinds = set(re.findall(r"(R_X86_64_\w+)\s+\w+\s+" + symbol,
                               relocations))
        assert kinds == {"R_X86_64_TPOFF64"}, (symbol, kinds)


def test_extension_reaches_them_initial_exec():
    """_C.so inlines the call path: its accesses are initial-exec too (no
    __tls_get_addr module/offset pairs for the hot variables)."""
    relocations = readelf("-r", package() / "_C.so")
    for symbol in HOT_EXPORTED:
        assert not re.search(r"R_X86_64_DTP\w+\s+\w+\s+" + symbol,
                             relocations), symbol


def test_import_with_little_static_tls_left():
    """With glibc's optional surplus cut to the bytes turnout needs, the
    import still works: its block fits in what a crowded process leaves."""
    need = max(tls_size(lib) for lib in libraries())
    env = dict(os.environ,
               GLIBC_TUNABLES=f"glibc.rtld.optional_static_tls={need + 64}")
    out = subprocess.run(
        [sys.executable, "-c",
         "import turnout; x = turnout.ones(3); print((x + x).sum().item())"],
        capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "6.0"
