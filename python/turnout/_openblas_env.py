"""OpenBLAS's kernels chosen from the CPU's features, before OpenBLAS loads.

Debian's OpenBLAS (0.3.21, built for every x86-64 CPU) picks its kernels at
load time from the CPU's family and model numbers. A model it does not know
(a Xeon newer than it, or a VM that reports a generic "Intel(R) Xeon(R)
Processor") gets its SSE3 kernels, "Prescott": every ``mm``, ``linear``
and small convolution then runs 2.5-4 times slower than the CPU can
(bench/README.md, "Idle figures, 2026-12-05"). OpenBLAS reads
``OPENBLAS_CORETYPE`` once, when it is loaded, so ``import turnout`` sets it
before loading ``turnout._C`` (which links OpenBLAS) when all of these hold:

- ``OPENBLAS_CORETYPE`` is not set (a value of the user's is kept: setting
  it, even to OpenBLAS's own choice, is how to opt out);
- ``libopenblas`` is not loaded in this process yet (``import numpy`` or
  ``import torch`` before ``import turnout`` loads it, and the variable
  would change nothing: import turnout first);
- the CPU has AVX-512 (F, CD, BW, DQ, VL: ``SkylakeX``) or AVX2 and FMA
  (``Haswell``); otherwise OpenBLAS's own choice stands.

The variable stays set, so child processes get the same kernels, as do
numpy and torch imported later (they use the same library). C++
programs linking libturnout load OpenBLAS before any turnout code runs:
they set ``OPENBLAS_CORETYPE`` themselves (the README says how).
"""

import os

_AVX512 = ("avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl")
_AVX2 = ("avx2", "fma")


def cpu_flags(cpuinfo="/proc/cpuinfo"):
    """The first processor's feature flags (an empty set where unknown)."""
    try:
        with open(cpuinfo, encoding="ascii", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "flags":
                    return set(value.split())
    except OSError:
        pass
    return set()


def core_type_for(flags):
    """The OPENBLAS_CORETYPE for these CPU flags, or None for OpenBLAS's own
    choice."""
    if all(f in flags for f in _AVX512):
        return "SkylakeX"
    if all(f in flags for f in _AVX2):
        return "Haswell"
    return None


def openblas_loaded(maps="/proc/self/maps"):
    """Whether a libopenblas is mapped into this process."""
    try:
        with open(maps, encoding="ascii", errors="replace") as f:
            return any(os.path.basename(line.split()[-1]).startswith(
                "libopenblas") for line in f if "/" in line)
    except OSError:
        return False


def choose_core_type():
    """Sets OPENBLAS_CORETYPE as the module docstring says; returns what it
    set, or None when it left the environment alone."""
    if os.environ.get("OPENBLAS_CORETYPE"):
        return None
    core = core_type_for(cpu_flags())
    if core is None or openblas_loaded():
        return None
    os.environ["OPENBLAS_CORETYPE"] = core
    return core
