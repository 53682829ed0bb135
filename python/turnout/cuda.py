"""CUDA devices, streams and events, as ``torch.cuda``'s.

Each thread has a current stream per device (the device's default stream
until changed); every turnout CUDA kernel is queued on the current stream of
its device. Streams come from a pool of non-blocking streams, so work on one
is ordered against the default stream only by events or synchronisation.

The CUDA kernels and these functions are in a module of their own,
``turnout._C_cuda``, that ``import turnout`` loads (with cudart and cuBLAS)
only where turnout was built with CUDA and an NVIDIA driver is present;
``TURNOUT_CUDA=1`` in the environment loads it even without a driver,
``TURNOUT_CUDA=0`` never. Without it :func:`is_available` is False and the
other functions raise a RuntimeError that says why.

Example::

    >>> import turnout
    >>> if turnout.cuda.is_available():
    ...     s = turnout.cuda.Stream()
    ...     x = turnout.ones(4, device="cuda")
    ...     with turnout.cuda.stream(s):
    ...         y = x * 2                      # queued on s
    ...     done = s.record_event()
    ...     turnout.cuda.current_stream().wait_event(done)
    ...     total = (y + 1).sum().item()       # ordered after x * 2
    ... else:
    ...     total = 12.0
    >>> total
    12.0
"""

from __future__ import annotations

import operator
import types
from typing import Any, Dict, Optional

from turnout import _C, _cuda_loader

__all__ = [
    "Event", "Stream", "StreamContext", "current_device", "current_stream",
    "default_stream", "device_count", "empty_cache", "is_available",
    "memory_allocated", "memory_reserved", "memory_stats", "set_device",
    "set_stream", "stream", "synchronize",
]


def is_available() -> bool:
    """True when turnout's CUDA kernels are loaded and a device is visible."""
    return device_count() > 0


def device_count() -> int:
    """The number of visible CUDA devices: 0 without CUDA, without a
    driver or with TURNOUT_CUDA=0 (then nothing is loaded to find out)."""
    cuda = _cuda_loader.loaded()
    return cuda._cuda_getDeviceCount() if cuda is not None else 0


def _cuda(what: str) -> types.ModuleType:
    """turnout._C_cuda, for turnout.cuda.`what`; a RuntimeError that says
    why when it was not loaded."""
    return _cuda_loader.module(f"turnout.cuda.{what}")


def _device_index(device: Any, what: str) -> int:
    """The index of `device` (None: the current device; an int, 'cuda',
    'cuda:N' or a turnout.device of type cuda)."""
    cuda = _cuda(what)
    if device is None:
        return cuda._cuda_getDevice()
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device):
        if device.type != "cuda":
            raise ValueError(
                f"turnout.cuda.{what}: expected a CUDA device, got {device}")
        return cuda._cuda_getDevice() if device.index is None else device.index
    try:
        index = operator.index(device)
    except TypeError:
        raise TypeError(
            f"turnout.cuda.{what}: expected a device (int, str or "
            f"turnout.device) or None, got {type(device).__name__}") from None
    if index < 0:
        raise ValueError(
            f"turnout.cuda.{what}: device index must be >= 0, got {index}")
    return index


def current_device() -> int:
    """The calling thread's current CUDA device index."""
    return _cuda("current_device")._cuda_getDevice()


def set_device(device: Any) -> None:
    """Makes `device` the calling thread's current CUDA device."""
    index = _device_index(device, "set_device")
    _cuda("set_device")._cuda_setDevice(index)


def synchronize(device: Any = None) -> None:
    """Waits until every stream of `device` (default: current) is idle."""
    index = _device_index(device, "synchronize")
    _cuda("synchronize")._cuda_synchronize(index)


class Stream:
    """A CUDA stream: a queue of work on one device.

    ``Stream()`` takes one from the device's pool of non-blocking streams
    (round-robin, as torch's); ``priority < 0`` takes a high-priority one.
    Streams are never destroyed.

    Args:
        device: the device (default: current).
        priority: 0 (default) or negative for high priority.
    """

    def __init__(self, device: Any = None, priority: int = 0,
                 *, _handle: Optional[tuple] = None) -> None:
        if _handle is None:
            index = _device_index(device, "Stream")
            _handle = _cuda("Stream")._cuda_streamFromPool(priority < 0, index)
        self.cuda_stream, self.device_index = _handle

    @property
    def device(self) -> _C.device:
        return _C.device("cuda", self.device_index)

    @property
    def stream_id(self) -> int:
        return self.cuda_stream

    @property
    def priority(self) -> int:
        return _cuda("Stream.priority")._cuda_streamPriority(
            self.cuda_stream, self.device_index)

    def query(self) -> bool:
        """True when all work queued on this stream has finished."""
        return _cuda("Stream.query")._cuda_streamQuery(
            self.cuda_stream, self.device_index)

    def synchronize(self) -> None:
        """Waits until all work queued on this stream has finished."""
        _cuda("Stream.synchronize")._cuda_streamSynchronize(
            self.cuda_stream, self.device_index)

    def wait_event(self, event: "Event") -> None:
        """Makes work queued on this stream from now on wait for `event`."""
        event.wait(self)

    def wait_stream(self, stream: "Stream") -> None:
        """Makes work queued on this stream from now on wait for the work
        queued on `stream` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event: Optional["Event"] = None) -> "Event":
        """Records `event` (a new one by default) on this stream; returns it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Stream)
                and self.cuda_stream == other.cuda_stream
                and self.device_index == other.device_index)

    def __hash__(self) -> int:
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self) -> str:
        return (f"<turnout.cuda.Stream device=cuda:{self.device_index} "
                f"cuda_stream={self.cuda_stream:#x}>")


class Event:
    """A CUDA event: marks a point in a stream's work that other streams
    (``wait``) or the host (``synchronize``) can wait for.

    Args:
        enable_timing: ``elapsed_time`` works (off by default: cheaper).
        blocking: ``synchronize`` sleeps instead of spinning.
    """

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        cuda = _cuda("Event")
        if interprocess:
            raise NotImplementedError(
                "turnout.cuda.Event: interprocess events are not supported")
        self._event = cuda._CudaEvent(enable_timing, blocking)

    def record(self, stream: Optional[Stream] = None) -> None:
        """Captures the work queued on `stream` (default: current) so far."""
        if stream is None:
            stream = current_stream()
        self._event.record(stream.cuda_stream, stream.device_index)

    def wait(self, stream: Optional[Stream] = None) -> None:
        """Makes future work on `stream` (default: current) wait for this
        event."""
        if stream is None:
            stream = current_stream()
        self._event.block(stream.cuda_stream, stream.device_index)

    def query(self) -> bool:
        """True when the captured work has finished (or nothing was
        recorded)."""
        return self._event.query()

    def synchronize(self) -> None:
        """Waits on the host until the captured work has finished."""
        self._event.synchronize()

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds between this event and `end_event` (both recorded,
        completed, and created with ``enable_timing=True``)."""
        return self._event.elapsed_time(end_event._event)

    @property
    def cuda_event(self) -> int:
        return self._event.cuda_event

    def __repr__(self) -> str:
        state = "recorded" if self._event.was_recorded else "not recorded"
        return f"<turnout.cuda.Event {state}>"


def current_stream(device: Any = None) -> Stream:
    """The calling thread's current stream on `device` (default: current)."""
    index = _device_index(device, "current_stream")
    return Stream(_handle=_cuda("current_stream")._cuda_getCurrentStream(
        index))


def default_stream(device: Any = None) -> Stream:
    """The default stream of `device` (default: current)."""
    index = _device_index(device, "default_stream")
    return Stream(_handle=_cuda("default_stream")._cuda_getDefaultStream(
        index))


def set_stream(stream: Stream) -> None:
    """Makes `stream` the current stream of its device for this thread."""
    if not isinstance(stream, Stream):
        raise TypeError(f"turnout.cuda.set_stream: expected a Stream, got "
                        f"{type(stream).__name__}")
    _cuda("set_stream")._cuda_setStream(stream.cuda_stream,
                                        stream.device_index)


class StreamContext:
    """Makes `stream` (and its device) current inside a ``with`` block and
    restores both after; ``None`` does nothing. See :func:`stream`."""

    def __init__(self, stream: Optional[Stream]) -> None:
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError(f"turnout.cuda.stream: expected a Stream or None, "
                            f"got {type(stream).__name__}")
        self.stream = stream

    def __enter__(self) -> Optional[Stream]:
        s = self.stream
        if s is None:
            return None
        cuda = _cuda("stream")
        self._device = cuda._cuda_getDevice()
        self._previous = cuda._cuda_getCurrentStream(s.device_index)
        if s.device_index != self._device:
            cuda._cuda_setDevice(s.device_index)
        cuda._cuda_setStream(s.cuda_stream, s.device_index)
        return s

    def __exit__(self, *exc: Any) -> None:
        s = self.stream
        if s is None:
            return
        cuda = _cuda("stream")
        cuda._cuda_setStream(*self._previous)
        if s.device_index != self._device:
            cuda._cuda_setDevice(self._device)


def stream(stream: Optional[Stream]) -> StreamContext:
    """``with turnout.cuda.stream(s):`` queues the block's CUDA work on `s`."""
    return StreamContext(stream)


def empty_cache() -> None:
    """Frees the caching allocator's unused blocks (cudaFree); nothing to
    do when the CUDA kernels were not loaded."""
    cuda = _cuda_loader.loaded()
    if cuda is not None:
        cuda._cuda_emptyCache()


def memory_stats() -> Dict[str, int]:
    """The caching allocator's counters over all devices: allocated_bytes
    (held by tensors), cached_bytes (free, kept for reuse), pending_bytes
    (freed, waiting for other streams), num_device_allocs, num_cache_hits."""
    return dict(_cuda("memory_stats")._cuda_memoryStats())


def memory_allocated() -> int:
    """Bytes in blocks that tensors hold."""
    return memory_stats()["allocated_bytes"]


def memory_reserved() -> int:
    """Bytes the allocator holds from the device (held, cached or pending)."""
    s = memory_stats()
    return s["allocated_bytes"] + s["cached_bytes"] + s["pending_bytes"]
