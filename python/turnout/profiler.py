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

__all__ = ["EventList", "FunctionEventAvg", "profile", "record_function"]


def _op_names(op: Any, where: str) -> Optional[set]:
    """The span names ("ns::name.overload") an ``op=`` filter keeps."""
    if op is None:
        return None
    from turnout.library import _resolve_op  # turnout.library imports turnout._ops

    ref = _resolve_op(op, where, several=True)
    return {ref.name + ("." + o if o else "") for o in ref.overloads}


def _format_us(us: float) -> str:
    """A time in microseconds as torch's tables write it."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class FunctionEventAvg:
    """One row of :meth:`profile.key_averages`: the calls of one operator
    (all its overloads and dispatch keys) or one :class:`record_function`
    span, as torch's ``FunctionEventAvg``.

    Attributes:
        key: the operator's name without overload (``"aten::mul"``), or the
            span's name.
        count: the calls (a call that passes from one key to the next, e.g.
            AutogradCPU then CPU, counts once).
        cpu_time_total: microseconds inside those calls, nested calls of
            other operators included.
        self_cpu_time_total: microseconds in the operator's own kernels,
            nested calls of other operators excluded.
        python_time_total: the part of ``self_cpu_time_total`` spent in
            Python code (Python kernels, modes' and subclasses' handlers).
        cpu_time: ``cpu_time_total / count``.
    """

    def __init__(self, key: str) -> None:
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.python_time_total = 0.0

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"cpu_time_total={_format_us(self.cpu_time_total)} "
                f"self_cpu_time_total={_format_us(self.self_cpu_time_total)}>")


# sort_by as torch's EventList.table takes it: the attribute, descending.
_AVG_SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time",
                  "count", "python_time_total")


class EventList(list):
    """What :meth:`profile.key_averages` returns: a list of
    :class:`FunctionEventAvg`, with :meth:`table` as torch's."""

    @property
    def self_cpu_time_total(self) -> float:
        """Microseconds of self time over every row."""
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by: Optional[str] = None, row_limit: int = 100,
              max_name_column_width: int = 55) -> str:
        """The rows as torch's ``key_averages().table()`` prints them:
        Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg,
        # of Calls, then ``Self CPU time total``.

        Args:
            sort_by: None (the order of first calls) or one of
                ``cpu_time_total``, ``self_cpu_time_total``, ``cpu_time``,
                ``count``, ``python_time_total`` (descending).
            row_limit: the number of rows; negative means all.
            max_name_column_width: longer names are cut, ending in "...".

        Raises:
            ValueError: an unknown ``sort_by``.
            TypeError: ``row_limit`` is not an int.
        """
        if sort_by is not None and sort_by not in _AVG_SORT_KEYS:
            raise ValueError(
                f"key_averages().table(sort_by={sort_by!r}): unknown column; "
                f"use None or one of {', '.join(_AVG_SORT_KEYS)}")
        if not isinstance(row_limit, int) or isinstance(row_limit, bool):
            raise TypeError(f"key_averages().table(row_limit=...): expected an "
                            f"int, got {type(row_limit).__name__}")
        rows = list(self)
        if sort_by is not None:
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if row_limit >= 0:
            rows = rows[:row_limit]
        total = self.self_cpu_time_total
        headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                   "CPU time avg", "# of Calls"]

        def cut(name: str) -> str:
            if len(name) <= max_name_column_width:
                return name
            return name[:max_name_column_width - 3] + "..."

        def percent(us: float) -> str:
            return f"{100.0 * us / total:.2f}%" if total > 0 else "0.00%"

        body = [[cut(e.key), percent(e.self_cpu_time_total),
                 _format_us(e.self_cpu_time_total), percent(e.cpu_time_total),
                 _format_us(e.cpu_time_total), _format_us(e.cpu_time),
                 str(e.count)] for e in rows]
        name_width = min(max([len(r[0]) for r in body] + [len("Name")]) + 4,
                         max_name_column_width)
        widths = [name_width] + [12] * (len(headers) - 1)
        rule = "".join("-" * w + "  " for w in widths)

        def line(cells: List[str]) -> str:
            return "".join(c.rjust(w) + "  " for c, w in zip(cells, widths))

        out = [rule, line(headers), rule] + [line(r) for r in body] + [rule]
        out.append(f"Self CPU time total: {_format_us(total)}")
        return "\n".join(out) + "\n"

    def __str__(self) -> str:
        return self.table()


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

    def stats(self, sort_by: str = "total", *, op: Any = None) -> List[Dict[str, Any]]:
        """The rows of :meth:`table` as dicts: name, key, is_scope, calls,
        total_ns, self_ns, python_ns (the part of self_ns spent in Python
        code), min_depth, max_depth.

        Args:
            op: keep only the rows of this operator: a name
                (``"aten::add"``: every overload, ``"aten::add.Tensor"``),
                an OpOverload, a packet or a custom op.
        """
        names = _op_names(op, "profile.stats(op=...)")
        rows = self._done("stats").stats(sort_by)
        return rows if names is None else [r for r in rows if r["name"] in names]

    def events(self, *, op: Any = None) -> List[Dict[str, Any]]:
        """Every span: name, key, call, thread, depth, start_ns, end_ns,
        self_ns, python_ns (ordered by thread, then start); with ``op``
        (as in :meth:`stats`) only that operator's."""
        names = _op_names(op, "profile.events(op=...)")
        events = self._done("events").events()
        return events if names is None else [e for e in events if e["name"] in names]

    def key_averages(self, *, op: Any = None) -> EventList:
        """The calls grouped by operator (overloads and dispatch keys
        together) and by span name, as torch's ``key_averages()``: an
        :class:`EventList` of :class:`FunctionEventAvg` in the order of
        first calls, whose ``table(sort_by=..., row_limit=...)`` prints
        torch's table.

        A span nested directly in a span of the same name on the same
        thread (autograd passing the call to the CPU kernel) is the same
        call: it adds its self time, not a call or total time.

        Args:
            op: keep only this operator's row (as in :meth:`stats`).

        Example::

            >>> import turnout
            >>> x = turnout.ones(4, requires_grad=True)
            >>> with turnout.profiler.profile() as prof:
            ...     y = (x * x).sum()
            >>> [(e.key, e.count) for e in prof.key_averages()]
            [('aten::mul', 1), ('aten::sum', 1)]
            >>> print(prof.key_averages().table(sort_by="count", row_limit=1))
            ... # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
            -...
            Name Self CPU % Self CPU CPU total % CPU total CPU time avg # of Calls
            -...
            aten::mul ... 1
            -...
            Self CPU time total: ...
        """
        names = _op_names(op, "profile.key_averages(op=...)")
        rows: Dict[str, FunctionEventAvg] = {}
        open_spans: Dict[int, List[Dict[str, Any]]] = {}
        for e in self._done("key_averages").events():
            stack = open_spans.setdefault(e["thread"], [])
            while stack and stack[-1]["end_ns"] <= e["start_ns"]:
                stack.pop()
            parent = stack[-1] if stack else None
            stack.append(e)
            if names is not None and e["name"] not in names:
                continue
            name = e["name"]
            if e["key"] is not None and "::" in name:
                name = name.split(".", 1)[0]  # torch's keys carry no overload
            row = rows.get(name)
            if row is None:
                row = rows[name] = FunctionEventAvg(name)
            row.self_cpu_time_total += e["self_ns"] / 1e3
            row.python_time_total += e["python_ns"] / 1e3
            if parent is not None and parent["name"] == e["name"]:
                continue  # the same call, one key further down
            row.count += 1
            row.cpu_time_total += (e["end_ns"] - e["start_ns"]) / 1e3
        return EventList(rows.values())

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
