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

import contextlib
import itertools
import re
from typing import Any, Dict, Iterator, List, Sequence, Tuple

from turnout import _C

__all__ = ["PythonDispatcher", "enable_python_dispatcher",
           "no_python_dispatcher", "resolve_key"]

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


# ---- The Python dispatcher: the computed table, in Python --------------------


def _has_key(op: Any, key: Any) -> bool:
    return key in op.py_kernels or _C._dispatch_has_kernel_for_dispatch_key(
        op.name(), key)


def resolve_key(op: Any, key: Any) -> Any:
    """The key whose kernel a call of `op` (an OpOverload) at runtime key
    `key` runs, by the dispatcher's rules, counting the overload's
    :meth:`~turnout._ops.OpOverload.py_impl` kernels as registrations: the
    key itself; else CompositeExplicitAutograd; else
    CompositeImplicitAutograd (when no backend kernel is there); else
    Autograd for an autograd key; else the key (its backend fallback).

    Raises:
        RuntimeError: nothing handles `key` (no kernel, no fallback), or
            the CompositeImplicitAutograd kernel is ambiguous at
            AutogradOther.

    Example::

        >>> import turnout
        >>> from turnout._python_dispatcher import resolve_key
        >>> resolve_key(turnout.ops.aten.add.Tensor, turnout.DispatchKey.CPU).name
        'CPU'
        >>> resolve_key(turnout.ops.aten.matmul.default,
        ...             turnout.DispatchKey.CPU).name
        'CompositeImplicitAutograd'
    """
    DK = _C.DispatchKey
    name = op.name()
    if _has_key(op, key):
        return key
    cand = DK.CompositeExplicitAutograd
    if _C._dispatch_is_included_in_alias(key, cand) and _has_key(op, cand):
        return cand
    has_backend = (_C._dispatch_has_kernel_for_any_dispatch_key(
        name, _C._dispatch_get_backend_keyset_from_autograd(key))
        or _has_key(op, DK.CompositeExplicitAutograd))
    cand = DK.CompositeImplicitAutograd
    if _C._dispatch_is_included_in_alias(key, cand) and _has_key(op, cand):
        if key == DK.AutogradOther and _C._dispatch_has_kernel_for_any_dispatch_key(
                name, _C._dispatch_autogradother_backends):
            raise RuntimeError(
                f"resolve_key({name}, AutogradOther): ambiguous autogradother "
                f"kernel: a backend without an autograd key of its own has a "
                f"kernel, and CompositeImplicitAutograd would decompose it")
        if not has_backend:
            return cand
    cand = DK.Autograd
    if _C._dispatch_is_included_in_alias(key, cand) and _has_key(op, cand):
        return cand
    if _C._dispatch_has_backend_fallback(key):
        return key
    raise RuntimeError(
        f"resolve_key({name}, {key.name}): could not find a kernel (none "
        f"registered at the key, at an alias key that covers it, nor a "
        f"backend fallback); register one, or py_impl({key.name})")


@contextlib.contextmanager
def enable_python_dispatcher() -> Iterator[None]:
    """Calls on this thread choose their kernel in Python inside the block:
    :func:`resolve_key` over the registrations and the overloads'
    ``py_impl`` kernels (torch's ``enable_python_dispatcher``).

    Example::

        >>> import turnout
        >>> from turnout._python_dispatcher import enable_python_dispatcher
        >>> relu = turnout.ops.aten.relu.default
        >>> @relu.py_impl(turnout.DispatchKey.CPU)
        ... def relu_cpu(x):
        ...     return x * 0
        >>> x = turnout.tensor([-1.0, 2.0])
        >>> with enable_python_dispatcher():
        ...     relu(x)
        tensor([-0., 0.])
        >>> relu(x)
        tensor([0., 2.])
        >>> relu.py_kernels.clear()
    """
    with _C._EnablePythonDispatcher():
        yield


@contextlib.contextmanager
def no_python_dispatcher() -> Iterator[None]:
    """Calls on this thread skip the Python dispatcher inside the block."""
    with _C._DisablePythonDispatcher():
        yield
