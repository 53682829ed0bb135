"""`import turnout` chooses OpenBLAS's kernels from the CPU's features
(turnout/_openblas_env.py): OPENBLAS_CORETYPE is set before OpenBLAS loads,
and left alone when the user set it or OpenBLAS was loaded already. Each
case runs in a fresh interpreter: OpenBLAS reads the variable once, when it
loads."""

import os
import subprocess
import sys
import textwrap

import pytest

from turnout import _openblas_env as oe

# Prints what the process ended up with: the variable, and the kernels the
# OpenBLAS turnout linked reports.
_PROBE = """
    {before}
    import ctypes, os
    import turnout
    lib = ctypes.CDLL("libopenblas.so.0")
    lib.openblas_get_corename.restype = ctypes.c_char_p
    print(os.environ.get("OPENBLAS_CORETYPE"))
    print(lib.openblas_get_corename().decode())
"""


def probe(before="", **env_changes):
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    env.pop("OPENBLAS_CORETYPE", None)
    env.update(env_changes)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_PROBE.format(before=before))],
        capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    variable, corename = proc.stdout.split()
    return variable, corename


def test_core_type_from_flags():
    avx2 = {"sse3", "avx", "avx2", "fma"}
    avx512 = avx2 | {"avx512f", "avx512cd", "avx512bw", "avx512dq",
                     "avx512vl"}
    assert oe.core_type_for(avx512) == "SkylakeX"
    assert oe.core_type_for(avx2) == "Haswell"
    # AVX-512 without one of its parts is only AVX2; AVX2 without FMA or
    # SSE only: OpenBLAS's own choice.
    assert oe.core_type_for(avx512 - {"avx512vl"}) == "Haswell"
    assert oe.core_type_for(avx2 - {"fma"}) is None
    assert oe.core_type_for({"sse2", "sse3"}) is None
    assert oe.core_type_for(set()) is None


def test_cpu_flags_and_maps_of_missing_files(tmp_path):
    assert oe.cpu_flags(str(tmp_path / "none")) == set()
    assert oe.openblas_loaded(str(tmp_path / "none")) is False
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu avx2 fma\n\n"
                       "processor\t: 1\nflags\t\t: fpu\n")
    assert oe.cpu_flags(str(cpuinfo)) == {"fpu", "avx2", "fma"}


def test_sets_the_core_type_before_openblas_loads():
    want = oe.core_type_for(oe.cpu_flags())
    variable, corename = probe()
    if want is None:
        pytest.skip("this CPU has neither AVX2 nor AVX-512: nothing to set")
    assert variable == want
    assert corename == want


def test_keeps_the_users_choice():
    variable, corename = probe(OPENBLAS_CORETYPE="Prescott")
    assert (variable, corename) == ("Prescott", "Prescott")


def test_leaves_an_openblas_loaded_before_alone():
    # libopenblas is loaded before turnout: setting the variable now would
    # change nothing, so turnout does not.
    variable, _ = probe(before='ctypes_ = __import__("ctypes"); '
                        'ctypes_.CDLL("libopenblas.so.0")')
    assert variable == "None"
