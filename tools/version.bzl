"""turnout's version: the one place it is written.

The shared runtime's soname, the Python package's __version__, the wheel's
name, turnout.pc and the CMake package all take it from here; the in-tree
build backend (python/build_backend.py) reads VERSION from this file too.
"""

VERSION = "0.1.0"

# The shared runtime is libturnout.so.<SOVERSION>. Before 1.0 every minor
# release may break the ABI, so the soname carries major.minor.
SOVERSION = "0.1"
