"""turnout: an operator dispatcher and kernel-registration framework.

The C++ core is the extension module ``turnout._C``; this package is its
Python face.

Example::

    >>> import turnout
    >>> turnout.DispatchKeySet([turnout.DispatchKey.AutogradCPU, turnout.DispatchKey.CPU])
    DispatchKeySet(CPU, AutogradCPU)
"""

from turnout import _C
from turnout._C import DispatchKey, DispatchKeySet

__all__ = ["DispatchKey", "DispatchKeySet"]
