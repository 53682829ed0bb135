"""``turnout.debug.PythonDispatcher``: what would the dispatcher do if...?

A what-if tool for the dispatch table: register named kernels at a few keys
on a scratch operator and read the table that the real dispatcher computes
from them, as aligned columns. Nothing here re-implements the dispatcher's
rules: the kernels are C++ identity kernels registered through
``_C._dispatch_library``, and the tables are parsed from
``_C._dispatch_dump_table`` and ``_C._dispatch_dump``.

Example::

    >>> from turnout._python_dispatcher import PythonDispatcher
    >>> d = PythonDispatcher()
    >>> d.register(["CPU", "XLA", "CompositeImplicitAutograd"])
    >>> print(d.dispatchTable())
    Computed Dispatch Table
    key            kernel                        source
    -------------  ----------------------------  ----------------
    CPU            fn_CPU                        kernel
    AutogradCPU    fallthrough                   backend fallback
    FPGA           fn_CompositeImplicitAutograd  math kernel
    AutogradOther  fn_CompositeImplicitAutograd  math kernel
    XLA            fn_XLA                        kernel
    AutogradXLA    fallthrough                   backend fallback
    Lazy           fn_CompositeImplicitAutograd  math kernel
    AutogradLazy   fn_CompositeImplicitAutograd  math kernel
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
# "CPU: fn_CPU :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]" -- dumpState.
_REGISTRATION_LINE = re.compile(
    r"^(?P<key>\w+(?:\[alias\])?)(?P<inactive> \(inactive\))?: "
    r"(?P<kernel>.*?) :: .*\[ [a-z ]*\]$")

_FRAMEWORK_FALLTHROUGH = "fallthrough registered by turnout as a framework default"


def _columns(title: str, header: Sequence[str],
             rows: Sequence[Sequence[str]]) -> str:
    widths = [max([len(header[i])] + [len(r[i]) for r in rows])
              for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    out = [title, line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join(out) + "\n"


class PythonDispatcher:
    """Registers named kernels on a scratch operator and shows the result.

    Each instance owns one operator, ``_python_dispatcher::opN(Tensor x) ->
    Tensor``. :meth:`register` puts a C++ identity kernel named ``fn_<KEY>``
    at each given key (runtime keys such as ``CPU`` and alias keys such as
    ``CompositeImplicitAutograd`` or ``Autograd``), replacing what the last
    call registered. :meth:`dispatchTable` shows what the dispatcher
    computed for the runtime keys in :attr:`runtime_keys` and for every key
    registered; :meth:`registrations` shows the kernels as registered.

    Raises:
        ValueError: from :meth:`register`, for a name that is not a
            dispatch key, a repeated key, or a registration the dispatcher
            refuses; the previous registrations then stay in place.
        TypeError: from :meth:`register`, for keys that are not a list of
            str.

    Example::

        >>> from turnout._python_dispatcher import PythonDispatcher
        >>> d = PythonDispatcher()
        >>> d.register(["CPU", "Autograd"])
        >>> print(d.registrations())
        Registered Kernels
        key              kernel
        ---------------  -----------
        CPU              fn_CPU
        Autograd[alias]  fn_Autograd
        <BLANKLINE>
        >>> d.kernelFor("AutogradXLA")
        'fn_Autograd'
        >>> d.close()
    """

    #: The runtime keys every table shows, as in PyTorch's tool: two
    #: backends with an autograd key of their own, one without (FPGA, whose
    #: autograd key is AutogradOther) and Lazy.
    runtime_keys: Tuple[str, ...] = ("CPU", "AutogradCPU", "FPGA",
                                     "AutogradOther", "XLA", "AutogradXLA",
                                     "Lazy", "AutogradLazy")

    def __init__(self) -> None:
        self._name = f"op{next(_ids)}"
        self.qualname = f"{_NAMESPACE}::{self._name}"
        self._def = _C._dispatch_library("FRAGMENT", _NAMESPACE, "", __file__, 0)
        self._def.def_(f"{self._name}(Tensor x) -> Tensor")
        self._impls = None
        self._keys: List[str] = []

    # ---- Registration --------------------------------------------------------
    def register(self, dispatch_keys: Sequence[str]) -> None:
        """Registers ``fn_<KEY>`` at each key, replacing the last call's.

        Args:
            dispatch_keys: key names, e.g. ``["CPU", "XLA",
                "CompositeImplicitAutograd"]``; each at most once.
        """
        if isinstance(dispatch_keys, str) or not all(
                isinstance(k, str) for k in dispatch_keys):
            raise TypeError(
                f"PythonDispatcher.register(dispatch_keys): expected a list "
                f"of key names such as ['CPU', 'Autograd'], got "
                f"{dispatch_keys!r}")
        keys = list(dispatch_keys)
        seen = set()
        for k in keys:
            if k in seen:
                raise ValueError(
                    f"PythonDispatcher.register(): key '{k}' is listed twice "
                    f"in {keys}; give each key once")
            seen.add(k)
            try:
                _C._dispatch_key_parse(k)
            except ValueError:
                raise ValueError(
                    f"PythonDispatcher.register(): '{k}' is not a dispatch "
                    f"key; use a name of turnout.DispatchKey, e.g. 'CPU', "
                    f"'AutogradCPU', 'CompositeImplicitAutograd'") from None
        old = self._keys
        self._drop()
        try:
            self._impls = self._registerAll(keys)
        except Exception:
            # Put the previous registrations back (they succeeded before).
            self._impls = self._registerAll(old)
            self._keys = old
            raise
        self._keys = keys

    def _registerAll(self, keys: Sequence[str]):
        lib = _C._dispatch_library("FRAGMENT", _NAMESPACE, "", __file__, 0)
        try:
            for k in keys:
                lib.impl_t_t(self._name, dispatch=k, debug=f"fn_{k}")
        except Exception:
            lib._destroy()
            raise
        return lib

    def _drop(self) -> None:
        if self._impls is not None:
            self._impls._destroy()
            self._impls = None
        self._keys = []

    def close(self) -> None:
        """Removes the scratch operator and its kernels."""
        self._drop()
        if self._def is not None:
            self._def._destroy()
            self._def = None

    def keys(self) -> List[str]:
        """The keys registered by the last :meth:`register`."""
        return list(self._keys)

    # ---- Inspection ----------------------------------------------------------
    def rawDispatchTable(self) -> str:
        """``_C._dispatch_dump_table`` of the scratch operator, unparsed."""
        return _C._dispatch_dump_table(self.qualname)

    def rawRegistrations(self) -> str:
        """``_C._dispatch_dump`` of the scratch operator, unparsed."""
        return _C._dispatch_dump(self.qualname)

    def computedTable(self) -> Dict[str, Tuple[str, str]]:
        """Runtime key -> (kernel, source) for every key the dispatcher
        resolves to something; keys that are missing are left out."""
        out = {}
        for line in self.rawDispatchTable().splitlines():
            m = _TABLE_LINE.match(line)
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
        return "fallthrough" if kernel == _FRAMEWORK_FALLTHROUGH else kernel

    def _shownKeys(self) -> List[str]:
        shown = list(self.runtime_keys)
        for k in self._keys:
            if k not in shown and not _C._dispatch_is_alias_key(
                    _C._dispatch_key_parse(k)):
                shown.append(k)
        return shown

    def dispatchTable(self) -> str:
        """The computed table for :attr:`runtime_keys` and the registered
        runtime keys, as aligned columns: key, kernel, and where the
        dispatcher says the entry came from (kernel, math kernel, backend
        fallback, ...). A framework fallthrough shows as ``fallthrough``."""
        table = self.computedTable()
        rows = []
        for k in self._shownKeys():
            kernel, source = table.get(k, ("missing", "missing"))
            if kernel == _FRAMEWORK_FALLTHROUGH:
                kernel = "fallthrough"
            rows.append((k, kernel, source))
        return _columns("Computed Dispatch Table", ("key", "kernel", "source"),
                        rows)

    def registrations(self) -> str:
        """The kernels as registered, one row per key (alias keys marked
        ``[alias]``), in the order the dispatcher lists them."""
        rows = []
        for line in self.rawRegistrations().splitlines():
            m = _REGISTRATION_LINE.match(line)
            if m is None:
                continue  # the name/schema/debug header
            key = m["key"] + (" (inactive)" if m["inactive"] else "")
            rows.append((key, m["kernel"]))
        return _columns("Registered Kernels", ("key", "kernel"), rows)
