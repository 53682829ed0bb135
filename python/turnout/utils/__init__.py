"""``turnout.utils``: counters, phase timers and result comparison.

- :data:`counters`: named event counters, ``counters["jit"]["plans_built"]``,
  shared with C++ (``dispatcher/debug/counters.h``): the C++ side bumps some
  itself, e.g. ``counters["dispatch"]["backend_fallbacks"]`` while a
  dispatch trace is on.
- :class:`timed`: a decorator and context manager accumulating wall time per
  phase; :func:`time_report` prints the phases as a table.
- :func:`same`: compares results (tensors, numbers, nested lists, tuples
  and dicts) with tolerances, saying where they differ.
- :mod:`turnout.utils._pytree`: torch 1.13's pytree helpers (``tree_map``,
  ``tree_flatten``, ``TreeSpec``, ...) for handlers ported from torch.

Example::

    >>> import turnout
    >>> from turnout.utils import counters, same, timed
    >>> counters["demo"]["runs"] += 1
    >>> counters["demo"]["runs"]
    1
    >>> with timed("demo_phase"):
    ...     y = turnout.ones(3) * 2
    >>> bool(same(turnout.tensor([2.0, 2.0, 2.0]), y))
    True
"""

from __future__ import annotations

import functools
import math
import threading
import time
from collections.abc import Mapping, MutableMapping
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, TypeVar

from turnout import _C
from turnout._mode import (DispatchMode, active_modes, enable_reentrant_dispatch,
                           no_dispatch)

__all__ = [
    "Counters", "DispatchMode", "Sameness", "active_modes", "counters",
    "enable_reentrant_dispatch",
    "no_dispatch", "reset_time_report", "same", "time_report",
    "timed",
]


# ---- Counters -------------------------------------------------------------------


def _check_part(what: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(
            f"counters: expected the {what} to be a str, got {type(value).__name__}")
    if not value or (what == "category" and "." in value):
        raise ValueError(
            f"counters: the {what} '{value}' is invalid; use a non-empty name"
            + (" without '.'" if what == "category" else "")
            + ", e.g. counters['jit']['plans_built']")
    return value


def _values() -> Dict[str, Dict[str, int]]:
    out: Dict[str, Dict[str, int]] = {}
    for full, value in _C._counter_values():
        category, event = full.split(".", 1)
        out.setdefault(category, {})[event] = value
    return out


class _Category(MutableMapping):
    """``counters[category]``: event name -> count (0 for an unknown one)."""

    def __init__(self, category: str) -> None:
        self._category = category

    def __getitem__(self, event: str) -> int:
        _check_part("event", event)
        return _values().get(self._category, {}).get(event, 0)

    def __setitem__(self, event: str, value: int) -> None:
        _check_part("event", event)
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(
                f"counters['{self._category}']['{event}']: expected an int "
                f"count, got {type(value).__name__}")
        _C._counter_add(f"{self._category}.{event}", value - self[event])

    def __delitem__(self, event: str) -> None:
        self[event] = 0

    def __iter__(self) -> Iterator[str]:
        return iter(_values().get(self._category, {}))

    def __len__(self) -> int:
        return len(_values().get(self._category, {}))

    def add(self, event: str, n: int = 1) -> None:
        """Adds ``n`` atomically (``+=`` reads then writes)."""
        _check_part("event", event)
        _C._counter_add(f"{self._category}.{event}", n)

    def __repr__(self) -> str:
        return f"Counter({dict(self)!r})"


class Counters(Mapping):
    """A nested counter of named events: ``counters[category][event]``.

    Reading an unknown event gives 0; ``+=`` and assignment set it. The
    values live in C++ and are shared with it, so C++ code bumping
    ``counter("jit.plans_built")`` shows as ``counters["jit"]["plans_built"]``.
    Use :meth:`add` from several threads (``+=`` is a read then a write).
    """

    def __getitem__(self, category: str) -> _Category:
        return _Category(_check_part("category", category))

    def __iter__(self) -> Iterator[str]:
        return iter(_values())

    def __len__(self) -> int:
        return len(_values())

    def add(self, category: str, event: str, n: int = 1) -> None:
        """Adds ``n`` to ``counters[category][event]`` atomically."""
        self[category].add(event, n)

    def clear(self) -> None:
        """Sets every counter, Python's and C++'s, to zero."""
        _C._counter_reset()

    def to_dict(self) -> Dict[str, Dict[str, int]]:
        """The non-zero counts as nested dicts."""
        return {c: {e: v for e, v in events.items() if v}
                for c, events in _values().items()
                if any(events.values())}

    def __repr__(self) -> str:
        return f"Counters({self.to_dict()!r})"


#: The process-wide counters.
counters = Counters()


# ---- Phase timing -----------------------------------------------------------------

_lock = threading.Lock()
_phases: Dict[str, List[float]] = {}  # phase -> [total seconds, calls]
_F = TypeVar("_F", bound=Callable[..., Any])


class timed:
    """Accumulates wall time per phase: a context manager and a decorator.

    Each use adds its duration to the phase's total (see
    :func:`time_report`); it is also a span named after the phase for a
    running :class:`turnout.profiler.profile` and the dispatch trace.

    Args:
        phase: the phase's name; with a function instead (``@timed``), the
            function's qualified name.

    Example::

        >>> import turnout
        >>> from turnout.utils import timed, time_report
        >>> @timed("doc_double")
        ... def double(x):
        ...     return x * 2
        >>> _ = double(turnout.ones(2))
        >>> with timed("doc_double"):
        ...     pass
        >>> "doc_double" in time_report()
        True
    """

    def __new__(cls, phase: Any = None):
        if callable(phase) and not isinstance(phase, str):
            return timed(phase.__qualname__)(phase)
        return super().__new__(cls)

    def __init__(self, phase: str) -> None:
        if not isinstance(phase, str) or not phase:
            raise TypeError(
                f"timed(phase): expected a non-empty str or a function, got "
                f"{phase!r}")
        self.phase = phase
        self._starts: List[Tuple[float, Any]] = []

    def __enter__(self) -> "timed":
        scope = _C._RecordScope(self.phase)
        scope.__enter__()
        self._starts.append((time.perf_counter(), scope))
        return self

    def __exit__(self, *exc: Any) -> bool:
        start, scope = self._starts.pop()
        elapsed = time.perf_counter() - start
        scope.__exit__(None, None, None)
        with _lock:
            entry = _phases.setdefault(self.phase, [0.0, 0])
            entry[0] += elapsed
            entry[1] += 1
        return False

    def __call__(self, fn: _F) -> _F:
        phase = self.phase

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with timed(phase):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


def time_report(reset: bool = False) -> str:
    """The phases :class:`timed` accumulated, as an aligned table sorted by
    total time (most first): phase, calls, total ms, average ms.

    Args:
        reset: forget the phases after reporting them.
    """
    with _lock:
        rows = sorted(_phases.items(), key=lambda kv: -kv[1][0])
        if reset:
            _phases.clear()
    header = ("phase", "calls", "total ms", "avg ms")
    body = [(name, str(int(n)), f"{total * 1e3:.3f}", f"{total * 1e3 / n:.3f}")
            for name, (total, n) in rows]
    widths = [max(len(r[i]) for r in [header] + body) for i in range(4)]
    lines = []
    for r in [header] + body:
        lines.append("  ".join([r[0].ljust(widths[0])]
                               + [r[i].rjust(widths[i]) for i in range(1, 4)]))
    return "\n".join(lines) + "\n"


def reset_time_report() -> None:
    """Forgets every accumulated phase."""
    with _lock:
        _phases.clear()


# ---- Comparing results ---------------------------------------------------------------


class Sameness:
    """The result of :func:`same`: true when the values match; ``str()`` (or
    :attr:`message`) says where they differ."""

    def __init__(self, ok: bool, message: str) -> None:
        self.ok = ok
        self.message = message

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"Sameness({self.ok}, {self.message!r})"


def _is_tensor(x: Any) -> bool:
    return isinstance(x, _C.TensorBase)


def _to_numpy(x: Any) -> Any:
    t = x.detach()
    if not t.is_cpu:
        t = t.cpu()
    if t.dtype is _C.bfloat16 or t.dtype is _C.float16:
        t = t.to(_C.float32)
    return t.numpy()


def _compare_arrays(path: str, ref: Any, res: Any, rtol: float, atol: float,
                    equal_nan: bool) -> Optional[str]:
    import numpy as np

    if ref.shape != res.shape:
        return f"{path}: shapes differ: ref {tuple(ref.shape)}, res {tuple(res.shape)}"
    if ref.dtype == np.bool_ or res.dtype == np.bool_ or (
            np.issubdtype(ref.dtype, np.integer) and np.issubdtype(res.dtype, np.integer)):
        close = ref == res
    else:
        close = np.isclose(res.astype(np.float64), ref.astype(np.float64),
                           rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(np.all(close)):
        return None
    bad = np.argwhere(~close)
    first = tuple(int(i) for i in bad[0]) if ref.ndim else ()
    r, s = ref[first], res[first]
    where = "".join(f"[{i}]" for i in first)
    diff = np.abs(res.astype(np.float64) - ref.astype(np.float64))
    rel = diff / np.maximum(np.abs(ref.astype(np.float64)), np.finfo(np.float64).tiny)
    mask = ~close
    return (f"{path}{where}: ref {r.item()!r}, res {s.item()!r} "
            f"(allowed |diff| <= atol {atol:g} + rtol {rtol:g} * |ref|); "
            f"{int(mask.sum())} of {ref.size} elements differ; max abs diff "
            f"{float(np.nanmax(np.where(mask, diff, 0))):g}, max rel diff "
            f"{float(np.nanmax(np.where(mask, rel, 0))):g}")


def _compare(path: str, ref: Any, res: Any, rtol: float, atol: float,
             equal_nan: bool) -> Optional[str]:
    if _is_tensor(ref) or _is_tensor(res):
        if not (_is_tensor(ref) and _is_tensor(res)):
            return (f"{path}: ref is {type(ref).__name__}, res is "
                    f"{type(res).__name__}")
        if ref.dtype != res.dtype:
            return f"{path}: dtypes differ: ref {ref.dtype}, res {res.dtype}"
        return _compare_arrays(path, _to_numpy(ref), _to_numpy(res), rtol, atol,
                               equal_nan)
    if isinstance(ref, (list, tuple)):
        if not isinstance(res, (list, tuple)):
            return f"{path}: ref is {type(ref).__name__}, res is {type(res).__name__}"
        if len(ref) != len(res):
            return f"{path}: lengths differ: ref {len(ref)}, res {len(res)}"
        for i, (a, b) in enumerate(zip(ref, res)):
            why = _compare(f"{path}[{i}]", a, b, rtol, atol, equal_nan)
            if why:
                return why
        return None
    if isinstance(ref, dict):
        if not isinstance(res, dict):
            return f"{path}: ref is dict, res is {type(res).__name__}"
        if set(ref) != set(res):
            only_ref = sorted(map(repr, set(ref) - set(res)))
            only_res = sorted(map(repr, set(res) - set(ref)))
            return (f"{path}: keys differ: only in ref {only_ref}, only in res "
                    f"{only_res}")
        for k in ref:
            why = _compare(f"{path}[{k!r}]", ref[k], res[k], rtol, atol, equal_nan)
            if why:
                return why
        return None
    if isinstance(ref, bool) or isinstance(res, bool) or ref is None or \
            isinstance(ref, str):
        return None if ref == res and type(ref) is type(res) else \
            f"{path}: ref {ref!r}, res {res!r}"
    if isinstance(ref, (int, float)) and isinstance(res, (int, float)):
        if equal_nan and math.isnan(ref) and math.isnan(res):
            return None
        if math.isclose(res, ref, rel_tol=rtol, abs_tol=0) or abs(res - ref) <= atol + rtol * abs(ref):
            return None
        return (f"{path}: ref {ref!r}, res {res!r} (|diff| {abs(res - ref):g} > "
                f"atol {atol:g} + rtol {rtol:g} * |ref|)")
    try:
        import numpy as np
        if isinstance(ref, np.ndarray) and isinstance(res, np.ndarray):
            return _compare_arrays(path, ref, res, rtol, atol, equal_nan)
    except ImportError:  # pragma: no cover - numpy is a test dependency
        pass
    return None if ref == res else f"{path}: ref {ref!r}, res {res!r}"


def same(ref: Any, res: Any, rtol: float = 1e-5, atol: float = 1e-8,
         equal_nan: bool = False) -> Sameness:
    """Compares two results: tensors (shape, dtype, then values within
    ``|res - ref| <= atol + rtol * |ref|``), numbers, and nested lists,
    tuples and dicts of them; for comparing backends, or eager against
    graph runs.

    Args:
        ref: the reference result.
        res: the result to check.
        rtol, atol: relative and absolute tolerance (exact for integers and
            bools).
        equal_nan: NaN equals NaN.

    Returns:
        A :class:`Sameness`, true when they match; its message names the
        first place they differ (``result[1]['out'][0][2]``), the two
        values, and how many elements differ.

    Example::

        >>> import turnout
        >>> from turnout.utils import same
        >>> r = same(turnout.tensor([1.0, 2.0]), turnout.tensor([1.0, 2.5]))
        >>> bool(r)
        False
        >>> print(r)
        result[1]: ref 2.0, res 2.5 (allowed |diff| <= atol 1e-08 + rtol 1e-05 * |ref|); 1 of 2 elements differ; max abs diff 0.5, max rel diff 0.25
    """
    for name, v in (("rtol", rtol), ("atol", atol)):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
            raise ValueError(f"same(): {name} must be a number >= 0, got {v!r}")
    why = _compare("result", ref, res, float(rtol), float(atol), bool(equal_nan))
    return Sameness(why is None, why or "same")
