"""``turnout.debug``: why a call went where it went, and what is registered.

- :func:`explain` reports, without running it, how a call with given
  arguments would be dispatched: each tensor argument's keys, the thread's
  include and exclude sets, the fallthrough keys, the key chosen, its table
  entry (kind and registration site) and the keys a redispatch would visit.
- :func:`dispatch_trace` prints every dispatch while it is active.
- :func:`snapshot` / :meth:`Snapshot.save` / :func:`diff` record the whole
  registry and say what a library import added, overrode or removed.

Example::

    >>> import turnout
    >>> x = turnout.ones(2, requires_grad=True)
    >>> e = turnout.debug.explain(turnout.ops.aten.mul.Tensor, x, x)
    >>> e.entry.key, e.entry.kind
    (<DispatchKey.AutogradCPU: ...>, 'autograd kernel')
    >>> [step.key.name for step in e.redispatch_chain]
    ['CPU']
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, IO, Iterator, List, Optional, Union

from turnout import _C

from turnout._python_dispatcher import PythonDispatcher

__all__ = [
    "DispatchExplanation", "DispatchTrace", "PythonDispatcher", "RegistryDiff",
    "Snapshot", "diff",
    "dispatch_trace", "explain", "load_snapshot", "snapshot",
]

#: The report :func:`explain` returns (see its docstring for the fields).
DispatchExplanation = _C._DispatchExplanation

_PathLike = Union[str, "os.PathLike[str]"]


def explain(op: Any, *args: Any, **kwargs: Any) -> DispatchExplanation:
    """Explains how a call of ``op`` with these arguments would dispatch.

    Nothing runs: the arguments are bound to the schema as a call binds
    them, and the key set is computed from the same table and the calling
    thread's include/exclude sets that a call would use.

    Args:
        op: an :class:`~turnout._ops.OpOverload` (``turnout.ops.aten.add.Tensor``),
            an :class:`~turnout._ops.OpOverloadPacket` (``turnout.ops.aten.add``:
            the first overload the arguments fit), a name
            (``"aten::add.Tensor"``, ``"aten::add"``) or what
            :func:`turnout.library.custom_op` returns.
        *args, **kwargs: the call's arguments.

    Returns:
        A :data:`DispatchExplanation` with fields ``op``, ``schema``,
        ``arguments`` (index, name, type, value, key_set of each tensor
        argument), ``argument_keys``, ``tls_included``, ``tls_excluded``,
        ``fallthrough_keys``, ``before_mask``, ``skipped``,
        ``dispatch_key_set``, ``entry`` (key, kind, site, fallthrough) and
        ``redispatch_chain``; ``str()`` of it is a readable report. The
        entry kinds are ``'kernel'``, ``'math kernel'``, ``'default backend
        kernel'``, ``'autograd kernel'``, ``'backend fallback'``,
        ``'ambiguous autogradother'`` and ``'missing'``.

    Raises:
        ValueError: no such operator.
        TypeError: the arguments fit no overload's schema.

    Example::

        >>> import turnout
        >>> e = turnout.debug.explain("aten::add.Tensor", turnout.ones(2), turnout.ones(2))
        >>> e.entry.key.name, e.entry.kind
        ('AutogradCPU', 'autograd kernel')
        >>> print(e, end="")                            # doctest: +ELLIPSIS
        explain aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
          argument 0 'self' (Tensor): Tensor DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU)
          argument 1 'other' (Tensor): Tensor DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU)
          arguments' keys:  DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU)
          thread included:  DispatchKeySet(BackendSelect, ADInplaceOrView)
          thread excluded:  DispatchKeySet(AutocastCPU, ...)
          fallthrough keys: DispatchKeySet(BackendSelect, ADInplaceOrView)
          skipped (fallthrough): ADInplaceOrView BackendSelect
          dispatch key set: DispatchKeySet(CPU, AutogradCPU)
          chosen: AutogradCPU -> registered at kernels/autograd/... [autograd kernel]
          a redispatch below AutogradCPU would visit:
            CPU -> registered at kernels/... [kernel]
    """
    from turnout.library import _resolve_op  # turnout.library imports this module's users

    ref = _resolve_op(op, "explain(op, ...)", several=True)
    qualname, overloads = ref.name, ref.overloads
    if len(overloads) > 1 and _C._allows_numbers_as_tensors(qualname):
        # In the order a call tries them: Tensor overloads (which take
        # numbers) before Scalar ones, as torch 1.13.
        overloads = tuple(sorted(overloads, key=lambda o: "Scalar" in o))
    if len(overloads) == 1:
        return _C._debug_explain(qualname, overloads[0], tuple(args), dict(kwargs))
    reasons = []
    for o in overloads:
        try:
            return _C._debug_explain(qualname, o, tuple(args), dict(kwargs))
        except TypeError as e:
            reasons.append(f"  {qualname}.{o or 'default'}: {e}")
    raise TypeError(
        f"explain({qualname}): no overload fits the arguments. Tried:\n"
        + "\n".join(reasons))


class DispatchTrace:
    """The context manager :func:`dispatch_trace` returns.

    While active, every dispatch in the process is written as one line:
    operator, how it was entered (call, redispatch, callBoxed, ...), the key
    set the kernel receives, the key chosen, the entry kind and the kernel's
    registration site (``python kernel NAME (file.py:LINE)`` for a Python
    kernel), indented two spaces per redispatch depth. After the block,
    :attr:`lines` and :attr:`events` hold what was traced.
    """

    def __init__(self, file: Union[None, _PathLike, IO[str]] = None) -> None:
        self._stream: Optional[IO[str]] = None
        path: Optional[str] = None
        to_stderr = False
        if file is None:
            to_stderr = True
        elif isinstance(file, (str, os.PathLike)):
            path = os.fspath(file)
        elif hasattr(file, "write"):
            self._stream = file
        else:
            raise TypeError(
                f"dispatch_trace(file=...): expected None (stderr), a path, "
                f"or a file object with write(), got {type(file).__name__}")
        self._impl = _C._DispatchTrace(path, to_stderr)
        self._closed = False

    def __enter__(self) -> "DispatchTrace":
        self._impl.enter()
        return self

    def __exit__(self, *exc: Any) -> bool:
        self._impl.close()
        if self._stream is not None and not self._closed:
            for line in self._impl.lines():
                self._stream.write(line + "\n")
            if hasattr(self._stream, "flush"):
                self._stream.flush()
        self._closed = True
        return False

    @property
    def lines(self) -> List[str]:
        """The formatted lines traced so far."""
        return list(self._impl.lines())

    @property
    def events(self) -> List[Dict[str, Any]]:
        """One dict per line: op, call, key_set, key, entry_kind, site,
        depth, thread. ``call`` is how the dispatch was entered
        (``"call"``, ``"callBoxed"``, ``"redispatch"``, ...), ``"scope"``
        for a :class:`turnout.profiler.record_function`, or ``"handler"``
        for the line saying which dispatch mode or tensor subclass the
        Python key handed the call to (``site`` names it and where its
        ``__turnout_dispatch__`` is defined)."""
        return list(self._impl.events())


def dispatch_trace(file: Union[None, _PathLike, IO[str]] = None) -> DispatchTrace:
    """Traces every dispatch inside a ``with`` block.

    A call that reaches the ``Python`` key also gets a line naming the
    dispatch mode or tensor subclass that handles it, e.g.
    ``[Python] aten::add.Tensor -> mode LoggingMode (logging_mode.py:54)``.

    Args:
        file: ``None`` writes each line to the process's stderr as it
            happens; a path (str or PathLike) is opened for writing and
            each line written as it happens; a file object (anything with
            ``write``, e.g. ``sys.stdout`` or ``io.StringIO``) receives the
            lines when the block ends.

    Returns:
        A :class:`DispatchTrace`; its ``lines`` and ``events`` hold the
        trace.

    Raises:
        TypeError: ``file`` is none of the above.
        ValueError: the path cannot be opened.

    Example::

        >>> import io, turnout
        >>> x = turnout.ones(2, requires_grad=True)
        >>> out = io.StringIO()
        >>> with turnout.debug.dispatch_trace(file=out) as t:
        ...     y = turnout.ops.aten.mul.Tensor(x, x)
        >>> print(out.getvalue(), end="")               # doctest: +ELLIPSIS
        aten::mul.Tensor call DispatchKeySet(CPU, AutogradCPU) -> AutogradCPU [autograd kernel] registered at ...
          aten::mul.Tensor call DispatchKeySet(CPU) -> CPU [kernel] registered at ...
    """
    return DispatchTrace(file)


class Snapshot:
    """Every operator with its schema, what each runtime key runs (entry
    kind and registration site), and every backend fallback.

    ``snap["aten::add.Tensor"]`` is a dict with ``name``, ``schema``,
    ``site``, ``alias_analysis``, ``registered_keys`` and ``table`` (a list
    of ``{"key", "kind", "site", "fallthrough"}``; missing entries and
    entries served by a fallback are left out). ``snap.fallbacks`` lists the
    backend fallbacks the same way.

    Example::

        >>> import turnout
        >>> snap = turnout.debug.snapshot()
        >>> snap["aten::relu"]["schema"]
        'aten::relu(Tensor self) -> Tensor'
        >>> "aten::relu" in snap, len(snap) > 100
        (True, True)
    """

    def __init__(self, json_text: str) -> None:
        self._json = json_text
        data = json.loads(json_text)
        self._operators: Dict[str, Dict[str, Any]] = {
            op["name"]: op for op in data["operators"]}
        self.fallbacks: List[Dict[str, Any]] = data["fallbacks"]

    @property
    def operators(self) -> Dict[str, Dict[str, Any]]:
        """Operator records by name."""
        return self._operators

    def __getitem__(self, name: str) -> Dict[str, Any]:
        try:
            return self._operators[name]
        except KeyError:
            raise KeyError(
                f"no operator '{name}' in this snapshot; names look like "
                f"'aten::add.Tensor'") from None

    def __contains__(self, name: object) -> bool:
        return name in self._operators

    def __iter__(self) -> Iterator[str]:
        return iter(self._operators)

    def __len__(self) -> int:
        return len(self._operators)

    def to_json(self) -> str:
        """The snapshot as JSON (the format ``inspect snapshot`` writes)."""
        return self._json

    def save(self, path: _PathLike) -> None:
        """Writes the snapshot as JSON to ``path``
        (``bazel run //tools:inspect -- diff A B`` reads it)."""
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            f.write(self._json)

    def __repr__(self) -> str:
        return (f"<Snapshot of {len(self._operators)} operators and "
                f"{len(self.fallbacks)} fallbacks>")


def snapshot() -> Snapshot:
    """The registry as it is now; see :class:`Snapshot`."""
    return Snapshot(_C._registry_snapshot_json())


def load_snapshot(path: _PathLike) -> Snapshot:
    """Reads a snapshot written by :meth:`Snapshot.save` or ``inspect
    snapshot``.

    Raises:
        ValueError: the file is not a snapshot; the message gives the line
            and column.
    """
    p = os.fspath(path)
    with open(p, encoding="utf-8") as f:
        text = f.read()
    return Snapshot(_C._registry_snapshot_check(text, p))


class RegistryDiff:
    """What changed between two snapshots; see :func:`diff`.

    ``changes`` is a list of dicts with ``change`` (``'added'``,
    ``'overridden'``, ``'removed'``), ``what`` (``'operator'``, ``'kernel'``,
    ``'fallback'``), ``op``, ``key``, ``before`` / ``after`` (the table
    entries; None where there is none), ``site_before`` / ``site_after``
    and ``schema_before`` / ``schema_after``. ``str()`` gives one line per
    change. A diff is true when something changed.
    """

    def __init__(self, text: str, json_text: str) -> None:
        self._text = text
        self.changes: List[Dict[str, Any]] = json.loads(json_text)["changes"]

    def _select(self, change: str) -> List[Dict[str, Any]]:
        return [c for c in self.changes if c["change"] == change]

    @property
    def added(self) -> List[Dict[str, Any]]:
        return self._select("added")

    @property
    def overridden(self) -> List[Dict[str, Any]]:
        return self._select("overridden")

    @property
    def removed(self) -> List[Dict[str, Any]]:
        return self._select("removed")

    def __bool__(self) -> bool:
        return bool(self.changes)

    def __len__(self) -> int:
        return len(self.changes)

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return (f"<RegistryDiff: {len(self.added)} added, "
                f"{len(self.overridden)} overridden, {len(self.removed)} removed>")


def _as_snapshot(s: Any, which: str) -> Snapshot:
    if isinstance(s, Snapshot):
        return s
    if isinstance(s, (str, os.PathLike)):
        return load_snapshot(s)
    raise TypeError(
        f"diff(before, after): expected {which} to be a Snapshot or the path "
        f"of a saved one, got {type(s).__name__}")


def diff(before: Union[Snapshot, _PathLike],
         after: Union[Snapshot, _PathLike, None] = None) -> RegistryDiff:
    """What was added, overridden or removed from ``before`` to ``after``.

    Args:
        before: a :class:`Snapshot`, or the path of a saved one.
        after: the same; ``None`` means the registry as it is now.

    Returns:
        A :class:`RegistryDiff`: operators (by schema and site), kernels
        (per operator and runtime key) and backend fallbacks that appeared,
        changed kind or site, or went away.

    Example::

        >>> import turnout
        >>> from turnout import _C
        >>> before = turnout.debug.snapshot()
        >>> lib = _C._dispatch_library("DEF", "debug_doc", "", "doc.py", 1)
        >>> _ = lib.def_("f(Tensor x) -> Tensor")
        >>> print(turnout.debug.diff(before), end="")
        added operator debug_doc::f(Tensor x) -> Tensor  registered at doc.py:1
        >>> lib._destroy()
        >>> turnout.debug.diff(before)
        <RegistryDiff: 0 added, 0 overridden, 0 removed>
    """
    b = _as_snapshot(before, "before")
    a = snapshot() if after is None else _as_snapshot(after, "after")
    text, json_text = _C._registry_diff(b.to_json(), a.to_json())
    return RegistryDiff(text, json_text)
