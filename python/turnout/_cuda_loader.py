"""Whether turnout loads its CUDA half, and the one way to reach it.

The CUDA kernels live in a library of their own, ``lib/libturnout_cuda.so``,
with the extension module ``turnout._C_cuda`` that links it; both are in the
package only where turnout was built with the CUDA toolkit. Importing
``_C_cuda`` loads cudart and cuBLAS (about 0.1 s and 200 MB) and registers
the CUDA kernels, so ``import turnout`` does it only where it can be used:

- where the package has ``_C_cuda`` and an NVIDIA driver is present
  (``/proc/driver/nvidia/version`` or ``/dev/nvidiactl`` exists: checked
  without loading any CUDA library);
- or always, with ``TURNOUT_CUDA=1`` in the environment (a driver the
  check does not see; tests); ``TURNOUT_CUDA=0`` never loads it.

The variable is read once, when turnout is imported. turnout.cuda and
Tensor's CUDA methods reach ``_C_cuda`` through :func:`module`, which names
the reason when it was not loaded.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import types
import warnings
from typing import Optional

__all__: list = []

#: The environment variable: "1" loads the CUDA kernels, "0" does not;
#: unset or empty: they are loaded when a driver is present.
ENV = "TURNOUT_CUDA"

#: The files an NVIDIA driver creates; either means "a driver is present".
DRIVER_FILES = ("/proc/driver/nvidia/version", "/dev/nvidiactl")

_NAME = "turnout._C_cuda"

# turnout._C_cuda once loaded; else None and _why_not says why, for errors.
_module: Optional[types.ModuleType] = None
_why_not = "turnout was not imported yet"


def is_built() -> bool:
    """True when the package holds turnout._C_cuda (built with CUDA)."""
    return importlib.util.find_spec(_NAME) is not None


def driver_present() -> bool:
    """True when an NVIDIA driver is installed (loads nothing)."""
    return any(os.path.exists(p) for p in DRIVER_FILES)


def load_at_import() -> None:
    """Loads turnout._C_cuda if it is built and wanted: turnout's
    ``__init__`` calls it once, after ``_C``.

    Raises:
        ImportError: ``TURNOUT_CUDA=1`` and the module is missing or fails
            to load.
    """
    global _module, _why_not
    setting = os.environ.get(ENV, "")
    if setting not in ("", "0", "1"):
        warnings.warn(
            f"turnout: {ENV}={setting!r} is not one of '0' (do not load the "
            f"CUDA kernels), '1' (load them) or unset (load them when an "
            f"NVIDIA driver is present); taken as unset", RuntimeWarning,
            stacklevel=2)
        setting = ""
    if not is_built():
        _why_not = ("turnout was built without CUDA (no nvcc was found); "
                    "install the CUDA toolkit and rebuild, or use the CPU")
        if setting == "1":
            raise ImportError(f"turnout: {ENV}=1 asks for the CUDA kernels, "
                              f"but {_why_not}")
        return
    if setting == "0":
        _why_not = (f"turnout's CUDA kernels were not loaded: {ENV}=0 was set "
                    f"when turnout was imported; unset it to use CUDA")
        return
    if setting == "" and not driver_present():
        _why_not = (
            f"turnout was built with CUDA, but no NVIDIA driver was found "
            f"(neither {' nor '.join(DRIVER_FILES)} exists), so its CUDA "
            f"kernels were not loaded; use the CPU, or set {ENV}=1 before "
            f"importing turnout to load them anyway")
        return
    try:
        _module = importlib.import_module(_NAME)
    except ImportError as e:  # a CUDA library missing or too old, ...
        _why_not = f"turnout's CUDA kernels failed to load: {e}"
        if setting == "1":
            raise ImportError(f"turnout: {ENV}=1: {_why_not}") from e
        warnings.warn(
            f"turnout: an NVIDIA driver is present but {_why_not}; "
            f"turnout.cuda is unavailable (set {ENV}=0 to not try)",
            RuntimeWarning, stacklevel=2)


def loaded() -> Optional[types.ModuleType]:
    """turnout._C_cuda if it was loaded, else None."""
    return _module


def module(what: str) -> types.ModuleType:
    """turnout._C_cuda, for `what` (the caller's name, e.g.
    ``"turnout.cuda.Stream"``).

    Raises:
        RuntimeError: it was not loaded; the message names `what` and why
            (built without CUDA, no driver, TURNOUT_CUDA=0, a failed load).
    """
    if _module is None:
        raise RuntimeError(f"{what}: {_why_not}")
    return _module
