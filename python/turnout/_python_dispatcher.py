"""``turnout.debug.PythonDispatcher``: what would the dispatcher do if...?

A what-if tool for the dispatch table, as torch's ``torch._python_dispatcher``
is: register named kernels at a few keys on a scratch operator and read the
table that the real dispatcher computes from them. Nothing here
re-implements the dispatcher's rules: the kernels are C++ identity kernels
registered through ``_C._dispatch_library``, and the tables are read from
``_C._dispatch_dump_table`` and ``_C._dispatch_dump``. The tables print as
torch's do (same layout, same rows in the same order), so that what compares
or parses torch's output reads turnout's.

Example::

    >>> from turnout._python_dispatcher import PythonDispatcher
    >>> d = PythonDispatcher()
    >>> d.register(["CPU", "XLA", "CompositeImplicitAutograd"])
    >>> print(d.dispatchTable())
    <BLANKLINE>
    Computed Dispatch Table
    key             kernel
    ---------------------------
    CPU             fn_CPU [kernel]
    XLA             fn_XLA [kernel]
    Lazy            fn_CompositeImplicitAutograd [math kernel]
    FPGA            fn_CompositeImplicitAutograd [math kernel]
    AutogradOther   fn_CompositeImplicitAutograd [math kernel]
    AutogradCPU     fallthrough [backend fallback]
    AutogradXLA     fallthrough [backend fallback]
    AutogradLazy    fn_CompositeImplicitAutograd [math kernel]
    <BLANKLINE>
    >>> d.close()
"""

from __future__ import annotations

import itertools
import re
from typing import Dict, List, Sequence, Tuple

from turnout import _C

__all__ = ["PythonDispatcher"]

_NAMESPACE = "_python_dispatcher"
_ids = itertools.count()

# "CPU: fn_CPU [kernel]" -- one line of OperatorHandle::dumpComputedTable.
_TABLE_LINE = re.compile(r"^(?P<key>\w+): (?P<kernel>.*) \[(?P<source>[^\]]*)\]$")

# Where the framework's own fallbacks say they come from; the tables leave it
# out ("fallthrough [backend fallback]"), as torch's leave out theirs.
_FRAMEWORK_SITE = "registered in turnout framework "


def _row(key: str, kernel: str) -> str:
    """One row of a table: the key left-aligned in 15 columns, a space, the
    kernel (torch's layout)."""
    return f"{key:<15} {kernel}\n"


def _header(title: str) -> str:
    return "\n" + title + "\n" + _row("key", "kernel") + "-" * 27 + "\n"


class PythonDispatcher:
    """Registers named kernels on a scratch operator and shows the result.

    Each instance owns one operator, ``_python_dispatcher::opN(Tensor x) ->
    Tensor`` (so that instances are independent). :meth:`register` puts a
    C++ identity kernel named ``fn_<KEY>`` at each given key, one of
    :attr:`supported_keys`: the runtime keys of :attr:`runtime_keys` and the
    alias keys of :attr:`alias_keys`. Registrations add up, as in torch's
    tool. :meth:`dispatchTable` shows what the dispatcher computed for the
    runtime keys, :meth:`registrations` the kernels as registered, both in
    torch's layout (a leading blank line, the title, ``key`` and ``kernel``
    in 15 + 1 columns, a rule of 27 dashes, then one row per key in the
    dispatcher's order).

    Raises:
        RuntimeError: from :meth:`register`, for a key given twice, for
            both CompositeImplicitAutograd and CompositeExplicitAutograd,
            or for a key that is not one of :attr:`supported_keys` (as
            torch's); nothing of that call is registered then.

    Example::

        >>> from turnout._python_dispatcher import PythonDispatcher
        >>> d = PythonDispatcher()
        >>> d.register(["CPU", "Autograd"])
        >>> print(d.registrations())
        <BLANKLINE>
        Registered Kernels
        key             kernel
        ---------------------------
        CPU             fn_CPU
        Autograd[alias] fn_Autograd
        <BLANKLINE>
        >>> d.kernelFor("AutogradXLA")
        'fn_Autograd'
        >>> d.close()
    """

    #: The runtime keys the tables show, as in torch's tool: two backends
    #: with an autograd key of their own, one without (FPGA, whose autograd
    #: key is AutogradOther) and Lazy.
    runtime_keys: List[str] = ["CPU", "AutogradCPU", "FPGA", "AutogradOther",
                               "XLA", "AutogradXLA", "Lazy", "AutogradLazy"]
    #: The alias keys kernels may be registered at.
    alias_keys: List[str] = ["CompositeExplicitAutograd", "Autograd",
                             "CompositeImplicitAutograd"]
    supported_keys: List[str] = runtime_keys + alias_keys

    def __init__(self) -> None:
        self.namespace = _NAMESPACE
        self.name = f"op{next(_ids)}"
        self.qualname = f"{_NAMESPACE}::{self.name}"
        self.ref = _C._dispatch_library("FRAGMENT", _NAMESPACE, "", __file__, 0)
        self.ref.def_(f"{self.name}(Tensor x) -> Tensor")
        self._impls: List[object] = []

    # ---- Registration --------------------------------------------------------
    def keys(self) -> List[str]:
        """The keys :meth:`register` accepts (:attr:`supported_keys`)."""
        return list(self.supported_keys)

    def register(self, dispatchKeys: Sequence[str]) -> None:
        """Registers ``fn_<KEY>`` at each key, on top of earlier calls'.

        Args:
            dispatchKeys: key names of :attr:`supported_keys`, e.g.
                ``["CPU", "XLA", "CompositeImplicitAutograd"]``; each at
                most once.

        Raises:
            RuntimeError: a key is given twice, both composite keys are
                given, or a key is not supported; nothing is registered.
        """
        keys = list(dispatchKeys)
        if len(set(keys)) != len(keys):
            raise RuntimeError(
                f"Overriding is not allowed, but found duplicates in {keys}.")
        if ("CompositeImplicitAutograd" in keys
                and "CompositeExplicitAutograd" in keys):
            raise RuntimeError(
                "Registering to both CompositeImplicitAutograd and "
                "CompositeExplicitAutograd is not allowed.")
        for k in keys:
            if k not in self.supported_keys:
                raise RuntimeError(
                    f"{k} is not supported; select a dispatch key in "
                    f"{self.supported_keys}.")
        lib = _C._dispatch_library("FRAGMENT", _NAMESPACE, "", __file__, 0)
        try:
            for k in keys:
                lib.impl_t_t(self.name, dispatch=k, debug=f"fn_{k}")
        except Exception:
            lib._destroy()
            raise
        self._impls.append(lib)

    def close(self) -> None:
        """Removes the scratch operator and its kernels."""
        for lib in reversed(self._impls):
            lib._destroy()
        self._impls = []
        if self.ref is not None:
            self.ref._destroy()
            self.ref = None

    # ---- Inspection ----------------------------------------------------------
    def rawDispatchTable(self) -> str:
        """``_C._dispatch_dump_table`` of the scratch operator, unparsed."""
        return _C._dispatch_dump_table(self.qualname)

    def rawRegistrations(self) -> str:
        """``_C._dispatch_dump`` of the scratch operator, unparsed."""
        return _C._dispatch_dump(self.qualname)

    def computedTable(self) -> Dict[str, Tuple[str, str]]:
        """Runtime key -> (kernel, source) for every key the dispatcher
        resolves to something; keys that are missing are left out. The
        framework's fallthroughs read ``fallthrough``."""
        out = {}
        for line in self.rawDispatchTable().splitlines():
            m = _TABLE_LINE.match(line.replace(_FRAMEWORK_SITE, ""))
            if m is None:
                raise RuntimeError(
                    f"PythonDispatcher: can't parse the dispatcher's table "
                    f"line {line!r}; turnout bug: _dispatch_dump_table "
                    f"changed format")
            out[m["key"]] = (m["kernel"], m["source"])
        return out

    def kernelFor(self, key: str) -> str:
        """The kernel a call with runtime key `key` runs: ``fn_<KEY>``,
        ``fallthrough``, ``ambiguous_autogradother`` or ``missing``."""
        _C._dispatch_key_parse(key)
        kernel, _ = self.computedTable().get(key, ("missing", "missing"))
        return kernel

    def dispatchTable(self) -> str:
        """The computed table of :attr:`runtime_keys` (alias keys are shown
        as the runtime keys they reach), in the dispatcher's order; missing
        entries are left out. A row reads ``CPU             fn_CPU
        [kernel]``: the kernel, then why the dispatcher chose it."""
        out = _header("Computed Dispatch Table")
        for line in self.rawDispatchTable().splitlines():
            key, _, entry = line.partition(": ")
            if key in self.runtime_keys:
                out += _row(key, entry.replace(_FRAMEWORK_SITE, ""))
        return out

    def registrations(self) -> str:
        """The kernels as registered, runtime and alias keys (``[alias]``),
        in the dispatcher's order."""
        out = _header("Registered Kernels")
        for line in self.rawRegistrations().splitlines():
            key = line.split(":", 1)[0]
            if any(key.startswith(k) for k in self.supported_keys):
                kernel = line.split(": ", 1)[1].split(" :: ", 1)[0]
                out += _row(key, kernel)
        return out
