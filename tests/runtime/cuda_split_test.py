"""The CUDA kernels apart from the shared runtime: libturnout.so links no
CUDA library; libturnout_cuda.so (where @local_cuda found nvcc) holds the
CUDA kernels only and links libturnout.so; `import turnout` loads it, with
cudart and cuBLAS, only where an NVIDIA driver is present or TURNOUT_CUDA=1
asks for it, and then its kernels register into the one registry.

The libraries checked are the Python package's (//python:turnout's
turnout/lib), the files a process loads.
"""

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CUDA_BUILT = os.environ["TURNOUT_TEST_CUDA_FOUND"] == "1"
SONAME = os.environ["TURNOUT_TEST_SONAME"]
CUDA_SONAME = os.environ["TURNOUT_TEST_CUDA_SONAME"]
DRIVER = any(os.path.exists(p) for p in ("/proc/driver/nvidia/version",
                                          "/dev/nvidiactl"))
# The CUDA libraries libturnout_cuda links; libcublasLt comes with cuBLAS.
CUDA_LIBRARIES = re.compile(r"lib(cuda|cudart|cublas|cublasLt)\.so")

needs_cuda_build = pytest.mark.skipif(not CUDA_BUILT,
                                      reason="built without CUDA (no nvcc)")


def package() -> Path:
    """The package folder (//python:turnout), found without importing it."""
    for p in sys.path:
        if (Path(p) / "turnout" / "_C.so").is_file():
            return Path(p) / "turnout"
    raise AssertionError(f"no turnout/_C.so on {sys.path}")


def tool(*args: str) -> str:
    return subprocess.run(args, capture_output=True, text=True,
                          check=True).stdout


def needed(library: Path) -> list:
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]",
                      tool("readelf", "-d", str(library)))


def symbols(library: Path, *flags: str) -> list:
    """(type, name) of the defined symbols `nm` lists with `flags`."""
    rows = []
    for line in tool("nm", "--defined-only", *flags, str(library)).splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3:
            rows.append((parts[1], parts[2]))
    return rows


def run(script: str, turnout_cuda=None) -> str:
    """Runs `script` in a fresh interpreter with this test's sys.path and
    TURNOUT_CUDA set to `turnout_cuda` (None: unset); returns its stdout."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    env.pop("TURNOUT_CUDA", None)
    if turnout_cuda is not None:
        env["TURNOUT_CUDA"] = turnout_cuda
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# What a process has mapped after `import turnout`, and the CUDA rows of
# aten::add.Tensor's table.
_IMPORT = """
    import re, sys, turnout
    maps = {line.split()[-1] for line in open("/proc/self/maps")
            if "/" in line}
    names = sorted({m.rsplit("/", 1)[1] for m in maps})
    print("maps", " ".join(names))
    print("runtimes", len([m for m in maps if m.endswith("/%s")]))
    print("module", "turnout._C_cuda" in sys.modules)
    table = turnout._C._dispatch_dump_table("aten::add.Tensor")
    print("cuda_row", re.search(r"^CUDA: .*$", table, re.M) is not None)
    print("available", turnout.cuda.is_available(), turnout.cuda.device_count())
""" % SONAME


def import_turnout(turnout_cuda=None) -> dict:
    out = run(_IMPORT, turnout_cuda)
    return dict(line.split(" ", 1) for line in out.splitlines())


def cuda_loaded(state: dict) -> bool:
    """True when the CUDA half is in the process, checked every way: the
    module, the library, cuBLAS and the kernels' rows."""
    maps = state["maps"].split()
    parts = [state["module"] == "True", CUDA_SONAME in maps,
             any(CUDA_LIBRARIES.match(m) for m in maps),
             state["cuda_row"] == "True"]
    assert len(set(parts)) == 1, f"half loaded: {parts}, {state}"
    return parts[0]


# ---- The libraries ------------------------------------------------------------

def test_the_runtime_links_no_cuda_library():
    lib = package() / "lib" / SONAME
    assert not [n for n in needed(lib) if CUDA_LIBRARIES.match(n)], needed(lib)
    # No CUDA kernel in it either.
    assert not [s for _, s in symbols(lib, "-D", "-C") if "turnout::cuda::" in s]


@needs_cuda_build
def test_the_cuda_library_links_the_runtime_and_holds_only_cuda_code():
    lib = package() / "lib" / CUDA_SONAME
    deps = needed(lib)
    assert SONAME in deps, deps
    assert "libcudart.so" in " ".join(deps) and "libcublas.so" in " ".join(deps)
    assert f"Library soname: [{CUDA_SONAME}]" in tool("readelf", "-d", str(lib))
    # What it defines for others, strongly, is CUDA's; the rest it exports
    # is header code every user's library holds (inline functions, vtables,
    # type infos: weak, and bound to the runtime's copies where they must
    # be one).
    strong = [s for t, s in symbols(lib, "-D", "-C") if t in "TDBR"]
    assert strong and all("turnout::cuda::" in s for s in strong), [
        s for s in strong if "turnout::cuda::" not in s]
    # No object of the runtime's, exported or hidden: one registry.
    runtime = {s for t, s in symbols(package() / "lib" / SONAME, "-D")
               if t in "TDBR"}
    copies = {s for t, s in symbols(lib) if t in "TtDdBbRr"} & runtime
    assert not copies, sorted(copies)[:20]


@needs_cuda_build
def test_the_cuda_extension_links_the_cuda_library_and_c_does_not():
    assert CUDA_SONAME in needed(package() / "_C_cuda.so")
    c = needed(package() / "_C.so")
    assert SONAME in c and CUDA_SONAME not in c
    assert not [n for n in c if CUDA_LIBRARIES.match(n)], c


# ---- import turnout ------------------------------------------------------------

def test_import_loads_cuda_only_where_a_driver_is_present():
    state = import_turnout()
    assert state["runtimes"] == "1"
    assert cuda_loaded(state) == (CUDA_BUILT and DRIVER), state
    if not cuda_loaded(state):
        assert state["available"] == "False 0"


def test_turnout_cuda_0_loads_nothing():
    state = import_turnout("0")
    assert not cuda_loaded(state) and state["available"] == "False 0"
    out = run("""
        import turnout
        try:
            turnout.cuda.Stream()
        except RuntimeError as e:
            print(e)
        turnout.cuda.empty_cache()  # nothing to free: no error
        """, "0")
    if CUDA_BUILT:
        assert out.startswith("turnout.cuda.Stream: turnout's CUDA kernels "
                              "were not loaded: TURNOUT_CUDA=0 was set"), out
    else:
        assert "turnout was built without CUDA" in out, out


@needs_cuda_build
def test_turnout_cuda_1_loads_the_kernels_into_the_one_registry():
    state = import_turnout("1")
    assert cuda_loaded(state), state
    assert state["runtimes"] == "1"  # libturnout_cuda bound to _C's runtime
    out = run("""
        import turnout
        table = turnout._C._dispatch_dump_table("aten::add.Tensor")
        print([l for l in table.splitlines() if l.startswith("CUDA: ")])
        add = turnout.ops.aten.add.Tensor
        print(add.has_kernel_for_dispatch_key(turnout.DispatchKey.CUDA))
        if turnout.cuda.is_available():
            print(turnout.tensor([1.0]).cuda().is_cuda)
        else:
            # The CUDA kernels answer themselves, as they did in libturnout.
            try:
                turnout.tensor([1.0]).cuda()
            except NotImplementedError as e:
                print("no CUDA device is available" in str(e))
        """, "1")
    rows, has_kernel, answered = out.splitlines()
    assert re.fullmatch(r"\['CUDA: registered at kernels/cuda/\w+\.cc:\d+ "
                        r"\[kernel\]'\]", rows), rows
    assert has_kernel == "True" and answered == "True", out


@needs_cuda_build
def test_c_cuda_takes_c_tensors_and_raises_through_c_translators():
    # _C_cuda's Tensor caster knows _C's TensorBase, and the turnout::Error
    # its functions throw becomes _C's InvalidArgumentError (a ValueError).
    out = run("""
        import turnout
        try:
            turnout._C_cuda._cuda_recordStream(turnout.ones(2), 0, 0)
        except ValueError as e:
            print(type(e).__name__, e)
        """, "1")
    assert out.strip() == ("InvalidArgumentError record_stream(): expected a "
                           "CUDA tensor, got a cpu tensor"), out


@needs_cuda_build
@pytest.mark.skipif(DRIVER, reason="an NVIDIA driver is present")
def test_without_a_driver_turnout_cuda_says_so():
    out = run("""
        import turnout
        print(turnout.cuda.is_available(), turnout.cuda.device_count())
        for f in (turnout.cuda.Stream, turnout.cuda.current_device,
                  turnout.cuda.memory_stats, turnout.cuda.Event):
            try:
                f()
            except RuntimeError as e:
                print(e)
        """)
    lines = out.splitlines()
    assert lines[0] == "False 0"
    assert len(lines) == 5
    for name, line in zip(["Stream", "current_device", "memory_stats",
                           "Event"], lines[1:]):
        assert line.startswith(
            f"turnout.cuda.{name}: turnout was built with CUDA, but no NVIDIA "
            f"driver was found"), line
        assert "TURNOUT_CUDA=1" in line


@pytest.mark.skipif(CUDA_BUILT, reason="built with CUDA")
def test_without_cuda_turnout_cuda_1_fails_the_import():
    env = dict(os.environ, TURNOUT_CUDA="1",
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, "-c", "import turnout"],
                          capture_output=True, text=True, env=env)
    assert proc.returncode != 0
    assert ("ImportError: turnout: TURNOUT_CUDA=1 asks for the CUDA kernels, "
            "but turnout was built without CUDA") in proc.stderr, proc.stderr


def test_an_unknown_turnout_cuda_value_warns_and_is_taken_as_unset():
    out = run("""
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import turnout
        print([str(w.message) for w in caught])
        """, "yes")
    assert "TURNOUT_CUDA='yes' is not one of '0'" in out, out


# ---- A driver without CUDA's libraries ------------------------------------------
# A copy of the package whose CUDA library is missing stands for a machine
# with a driver but without the CUDA libraries (the wheel on another
# machine): forced, the import fails and says why; by default (a driver
# found) turnout imports, warns once, and turnout.cuda says why.

@needs_cuda_build
def test_a_cuda_library_that_fails_to_load(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(package(), site / "turnout",
                    ignore=shutil.ignore_patterns("include", "__pycache__"))
    (site / "turnout" / "lib" / CUDA_SONAME).unlink()
    env = dict(os.environ, PYTHONPATH=str(site), TURNOUT_CUDA="1")
    forced = subprocess.run([sys.executable, "-c", "import turnout"],
                            capture_output=True, text=True, env=env)
    assert forced.returncode != 0
    assert (f"ImportError: turnout: TURNOUT_CUDA=1: turnout's CUDA kernels "
            f"failed to load: {CUDA_SONAME}: cannot open shared object file"
            ) in forced.stderr, forced.stderr

    del env["TURNOUT_CUDA"]
    script = textwrap.dedent("""
        import warnings
        import turnout
        from turnout import _cuda_loader
        _cuda_loader.DRIVER_FILES = ("/proc/self/maps",)  # "a driver"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _cuda_loader.load_at_import()
        print([str(w.message) for w in caught])
        print(turnout.cuda.is_available())
        try:
            turnout.cuda.Stream()
        except RuntimeError as e:
            print(e)
        """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True,
                         text=True, env=env)
    assert out.returncode == 0, out.stderr
    warned, available, error = out.stdout.splitlines()
    assert ("turnout: an NVIDIA driver is present but turnout's CUDA kernels "
            f"failed to load: {CUDA_SONAME}: cannot open shared object file"
            ) in warned, warned
    assert available == "False"
    assert error.startswith("turnout.cuda.Stream: turnout's CUDA kernels "
                            "failed to load: "), error
