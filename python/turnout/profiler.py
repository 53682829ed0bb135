"""``turnout.profiler``: where the time of operator calls goes.

Per (operator, dispatch key): calls, total and self time, the part of the
self time spent in Python code (Python kernels, dispatch modes' and tensor
subclasses' ``__turnout_dispatch__``) and the redispatch depths, as an
aligned table; and a Chrome trace (Perfetto,
chrome://tracing) of every dispatch with redispatches nested inside the
call that made them. Spans of your own (:class:`record_function`, and the
phases of :func:`turnout.utils.timed`) appear in both.

Example::

    >>> import turnout
    >>> x = turnout.ones(4, requires_grad=True)
    >>> with turnout.profiler.profile() as prof:
    ...     y = (x * x).sum()
    >>> print(prof.table(sort_by="self", row_limit=3))   # doctest: +ELLIPSIS
    ---...
    Name ... Key ... Calls ... Total ... Self ... Self % ... Python ... Avg  Depth
    ...
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Union

from turnout import _C

__all__ = ["profile", "record_function"]


class profile:
    """Records every dispatch in the process inside a ``with`` block.

    One profile runs at a time. Results are read after the block ends.
    Overhead while recording: two clock reads and one buffer append per
    dispatch.

    Raises:
        ValueError: another profile is running (on entry), or results are
            asked for while this one still runs.
        RuntimeError: results are asked for before the profile ran.
    """

    def __init__(self) -> None:
        self._prof: Optional[Any] = None

    def __enter__(self) -> "profile":
        if self._prof is not None:
            raise RuntimeError(
                "profile: this profile already ran; make a new one with "
                "turnout.profiler.profile()")
        self._prof = _C._Profiler()
        return self

    def __exit__(self, *exc: Any) -> bool:
        if self._prof is not None:
            self._prof.stop()
        return False

    def _done(self, what: str) -> Any:
        if self._prof is None:
            raise RuntimeError(
                f"profile.{what}(): nothing was recorded yet; use "
                f"`with turnout.profiler.profile() as prof:` first")
        return self._prof

    def table(self, sort_by: str = "total", row_limit: int = -1) -> str:
        """An aligned table, one row per (operator, key).

        Args:
            sort_by: ``"total"`` (time), ``"self"``, ``"python"``,
                ``"calls"``, ``"avg"`` or ``"name"`` (PyTorch's
                ``"cpu_time_total"``, ``"self_cpu_time_total"`` and
                ``"count"`` work too).
            row_limit: the number of rows; negative means all.

        Raises:
            ValueError: an unknown ``sort_by``, naming the accepted ones.
        """
        if not isinstance(row_limit, int) or isinstance(row_limit, bool):
            raise TypeError(
                f"profile.table(row_limit=...): expected an int, got "
                f"{type(row_limit).__name__}")
        return self._done("table").table(sort_by, row_limit)

    def stats(self, sort_by: str = "total") -> List[Dict[str, Any]]:
        """The rows of :meth:`table` as dicts: name, key, is_scope, calls,
        total_ns, self_ns, python_ns (the part of self_ns spent in Python
        code), min_depth, max_depth."""
        return self._done("stats").stats(sort_by)

    def events(self) -> List[Dict[str, Any]]:
        """Every span: name, key, call, thread, depth, start_ns, end_ns,
        self_ns, python_ns (ordered by thread, then start)."""
        return self._done("events").events()

    def chrome_trace(self) -> str:
        """The Chrome trace JSON that :meth:`export_chrome_trace` writes."""
        return self._done("chrome_trace").chrome_trace()

    def export_chrome_trace(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the Chrome trace JSON to ``path`` (open it in Perfetto or
        chrome://tracing)."""
        self._done("export_chrome_trace").export_chrome_trace(os.fspath(path))


class record_function:
    """A named span of your own, shown by the profiler and the dispatch
    trace: ``with turnout.profiler.record_function("my_phase"): ...``.

    Example::

        >>> import turnout
        >>> with turnout.profiler.profile() as prof:
        ...     with turnout.profiler.record_function("setup"):
        ...         x = turnout.ones(2)
        >>> [s["name"] for s in prof.stats() if s["is_scope"]]
        ['setup']
    """

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(
                f"record_function(name): expected name to be a str, got "
                f"{type(name).__name__}")
        self._name = name
        self._scope = _C._RecordScope(name)

    def __enter__(self) -> "record_function":
        self._scope.__enter__()
        return self

    def __exit__(self, *exc: Any) -> bool:
        self._scope.__exit__(None, None, None)
        return False
