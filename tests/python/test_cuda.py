"""turnout on CUDA tensors from Python (turnout.cuda, turnout._C_cuda):
the quickstart's operators, a Python kernel, a dispatch mode, autograd,
streams, events and pinned memory. Everything but the no-device tests skips
without a GPU."""

import threading

import pytest

import turnout
from turnout import _C
from turnout.library import Library
from turnout.utils import DispatchMode


def _no_gpu_reason() -> str:
    """Why there is no CUDA device: turnout.cuda's own error (no device, or
    the CUDA kernels not loaded and why)."""
    try:
        turnout.cuda.current_device()
    except (RuntimeError, NotImplementedError) as e:
        return str(e)
    return "no CUDA device"


needs_gpu = pytest.mark.skipif(not turnout.cuda.is_available(),
                               reason=_no_gpu_reason())


# ---- Without a device --------------------------------------------------------

def test_is_available_agrees_with_device_count():
    assert turnout.cuda.is_available() == (turnout.cuda.device_count() > 0)
    assert "cuda" in turnout.__all__ and "Stream" in turnout.cuda.__all__


def test_streams_without_a_device_fail_cleanly():
    # Not skipped on a GPU machine (tools/test.sh cuda counts skips as
    # failures): there, the same calls work.
    if turnout.cuda.is_available():
        assert turnout.cuda.Stream().device.type == "cuda"
        assert turnout.cuda.current_stream().cuda_stream == 0
        assert not turnout.tensor([1.0]).is_pinned()
        return
    with pytest.raises((RuntimeError, NotImplementedError),
                       match="CUDA|no CUDA device"):
        turnout.cuda.Stream()
    with pytest.raises((RuntimeError, NotImplementedError)):
        turnout.cuda.current_stream()
    assert not turnout.tensor([1.0]).is_pinned()


# ---- The quickstart's operators, a Python kernel, a mode ---------------------

@needs_gpu
def test_quickstart_operator_with_a_python_cuda_kernel():
    lib = Library("cudatest", "DEF")
    try:
        lib.define("scale(Tensor x, float factor=2.0) -> Tensor")
        seen = []

        def scale_cuda(x, factor):
            seen.append(x.device.type)
            return x * factor

        lib.impl("scale", scale_cuda, "CUDA")
        x = turnout.tensor([1.0, 2.0, 3.0]).cuda()
        y = turnout.ops.cudatest.scale(x, 10.0)
        assert y.is_cuda and y.cpu().tolist() == [10.0, 20.0, 30.0]
        assert turnout.ops.cudatest.scale(x).cpu().tolist() == [2.0, 4.0, 6.0]
        assert seen == ["cuda", "cuda"]
        table = _C._dispatch_dump_table("cudatest::scale")
        assert "CUDA: python kernel" in table and "scale_cuda" in table
        with pytest.raises(NotImplementedError, match="CPU"):
            turnout.ops.cudatest.scale(turnout.tensor([1.0]))
    finally:
        lib._destroy()


@needs_gpu
def test_dispatch_mode_sees_cuda_calls():
    calls = []

    class Record(DispatchMode):
        def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
            calls.append((func.name(), [a.device.type for a in args
                                        if isinstance(a, turnout.Tensor)]))
            return func(*args, **(kwargs or {}))

    x = turnout.ones(4, device="cuda")
    with Record():
        y = (x + x).sum()
    assert y.item() == 8.0
    assert ("aten::add.Tensor", ["cuda", "cuda"]) in calls
    assert ("aten::sum", ["cuda"]) in calls


@needs_gpu
def test_operators_match_the_cpu():
    a = turnout.randn(64, 32)
    b = turnout.randn(32, 16)
    for f in (lambda a, b: a @ b,
              lambda a, b: (a.exp() * 2 - 1).sum(1),
              lambda a, b: a.softmax(1),
              lambda a, b: (a.t() @ a).mean()):
        want = f(a, b).tolist()
        got = f(a.cuda(), b.cuda()).cpu().tolist()
        flat_w = want if isinstance(want, float) else sum(
            (w if isinstance(w, list) else [w] for w in want), [])
        flat_g = got if isinstance(got, float) else sum(
            (g if isinstance(g, list) else [g] for g in got), [])
        assert flat_g == pytest.approx(flat_w, rel=1e-4, abs=1e-4)


@needs_gpu
def test_operators_without_a_cuda_kernel_round_trip_through_the_cpu():
    # cumsum, sort, index_put_, nonzero, batch norm have no CUDA kernel yet:
    # kernels/cuda/cpu_round_trip.cc runs the CPU kernel on host copies.
    assert "cpu_round_trip.cc" in [
        line for line in _C._dispatch_dump_table("aten::cumsum").split("\n")
        if line.startswith("CUDA:")][0]
    x = turnout.tensor([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]])
    g = x.cuda()
    y = g.cumsum(1)
    assert y.is_cuda and y.cpu().tolist() == x.cumsum(1).tolist()
    values, indices = g.sort(1)
    assert values.is_cuda and indices.is_cuda
    assert indices.cpu().tolist() == x.sort(1)[1].tolist()
    # In place: the caller's CUDA tensor is written and returned.
    z = g.clone()
    r = turnout.ops.aten.cumsum_(z, 0)
    assert r is z and z.cpu().tolist() == x.cumsum(0).tolist()
    # out=: resized on the device, with the CPU kernel's strides.
    out = turnout.empty(0, dtype=turnout.int64, device="cuda")
    turnout.ops.aten.nonzero.out(g > 1.0, out=out)
    assert out.is_cuda and out.cpu().tolist() == (x > 1.0).nonzero().tolist()
    assert out.stride() == (x > 1.0).nonzero().stride()
    # Running statistics (written though the schema does not mark them).
    mean, var = turnout.zeros(3, device="cuda"), turnout.ones(3, device="cuda")
    turnout.ops.aten.native_batch_norm(g, None, None, mean, var, True, 0.5, 1e-5)
    assert mean.cpu().tolist() == pytest.approx(
        (x.mean(0) * 0.5).tolist(), rel=1e-5)


@needs_gpu
def test_autograd_on_cuda_matches_the_cpu():
    def run(device):
        w = turnout.tensor([[0.5, -1.0], [2.0, 0.25]], device=device,
                           requires_grad=True)
        x = turnout.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
        loss = ((x @ w).relu() * 3).sum()
        loss.backward()
        return loss.item(), w.grad

    cpu_loss, cpu_grad = run("cpu")
    cuda_loss, cuda_grad = run("cuda")
    assert cuda_grad.is_cuda
    assert cuda_loss == pytest.approx(cpu_loss)
    assert cuda_grad.cpu().tolist() == cpu_grad.tolist()


# ---- Streams and events ------------------------------------------------------

@needs_gpu
def test_current_stream_is_the_default_until_changed():
    default = turnout.cuda.default_stream()
    assert turnout.cuda.current_stream() == default
    assert default.cuda_stream == 0
    s = turnout.cuda.Stream()
    assert s != default and s.device.type == "cuda"
    with turnout.cuda.stream(s):
        assert turnout.cuda.current_stream() == s
    assert turnout.cuda.current_stream() == default
    turnout.cuda.set_stream(s)
    try:
        assert turnout.cuda.current_stream() == s
    finally:
        turnout.cuda.set_stream(default)
    with turnout.cuda.stream(None):
        assert turnout.cuda.current_stream() == default


@needs_gpu
def test_current_stream_is_per_thread():
    s = turnout.cuda.Stream()
    seen = []
    with turnout.cuda.stream(s):
        t = threading.Thread(
            target=lambda: seen.append(turnout.cuda.current_stream()))
        t.start()
        t.join()
    assert seen == [turnout.cuda.default_stream()]


def _slow_chain(x, n=200):
    # Many dependent kernels: long enough that an unordered reader sees the
    # old values.
    for _ in range(n):
        x = x * 1.0001
    return x


@needs_gpu
def test_event_orders_work_across_two_streams():
    big = 1 << 22
    for _ in range(3):
        s1, s2 = turnout.cuda.Stream(), turnout.cuda.Stream()
        src = turnout.zeros(big, device="cuda")
        turnout.cuda.synchronize()
        with turnout.cuda.stream(s1):
            out = _slow_chain(src + 1.0)      # ~1.02 everywhere, on s1
            done = s1.record_event()
        with turnout.cuda.stream(s2):
            done.wait()                       # s2 waits for s1's chain
            total = out.sum()
        s2.synchronize()
        assert total.item() == pytest.approx(big * 1.0001 ** 200, rel=1e-3)
    # The same through wait_stream.
    s1, s2 = turnout.cuda.Stream(), turnout.cuda.Stream()
    with turnout.cuda.stream(s1):
        out = _slow_chain(turnout.ones(big, device="cuda"), 200)
    s2.wait_stream(s1)
    with turnout.cuda.stream(s2):
        total = out.sum()
    # item() copies on the current (default) stream, which does not wait
    # for the non-blocking s2 by itself: as in torch, say so.
    turnout.cuda.current_stream().wait_stream(s2)
    assert total.item() == pytest.approx(big * 1.0001 ** 200, rel=1e-3)


@needs_gpu
def test_kernels_run_on_the_current_stream():
    # 400 kernels over 64 MiB keep the GPU busy for milliseconds after the
    # host has queued them: the stream they went to is still busy, the
    # other one idle. On the default stream only, this fails.
    s = turnout.cuda.Stream()
    x = turnout.ones(1 << 24, device="cuda")
    turnout.cuda.synchronize()
    with turnout.cuda.stream(s):
        y = _slow_chain(x, 400)
        e = s.record_event()
    assert not s.query() and not e.query()
    assert turnout.cuda.default_stream().query()  # nothing went there
    e.synchronize()
    assert e.query() and s.query()
    assert y.sum().item() == pytest.approx((1 << 24) * 1.0001 ** 400, rel=1e-3)


@needs_gpu
def test_event_timing():
    start = turnout.cuda.Event(enable_timing=True)
    end = turnout.cuda.Event(enable_timing=True)
    x = turnout.ones(1 << 20, device="cuda")
    start.record()
    _slow_chain(x, 50)
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) > 0
    untimed = turnout.cuda.Event()
    untimed.record()
    untimed.synchronize()
    with pytest.raises((ValueError, RuntimeError), match="enable_timing"):
        untimed.elapsed_time(end)


@needs_gpu
def test_record_stream_keeps_memory_until_the_other_stream_is_done():
    s = turnout.cuda.Stream()
    x = turnout.ones(1 << 20, device="cuda")  # 4 MiB, of the default stream
    big = turnout.ones(1 << 24, device="cuda")
    turnout.cuda.synchronize()
    with turnout.cuda.stream(s):
        y = x + 0                               # x used on s ...
        _slow_chain(big, 300)                   # ... which stays busy
    x.record_stream(s)
    del x                                       # s is still running
    assert turnout.cuda.memory_stats()["pending_bytes"] == 4 << 20
    s.synchronize()
    hits = turnout.cuda.memory_stats()["num_cache_hits"]
    z = turnout.ones(1 << 20, device="cuda")    # reuses x's block now
    stats = turnout.cuda.memory_stats()
    assert stats["pending_bytes"] == 0
    assert stats["num_cache_hits"] == hits + 1
    assert y.sum().item() == float(1 << 20)
    del z
    with pytest.raises(ValueError, match="expected a CUDA tensor"):
        turnout.ones(2).record_stream(s)


@needs_gpu
def test_stream_argument_errors():
    with pytest.raises(TypeError, match="expected a Stream"):
        turnout.cuda.set_stream(3)
    with pytest.raises(TypeError, match="expected a Stream or None"):
        turnout.cuda.stream("s")
    with pytest.raises(ValueError, match="expected a CUDA device"):
        turnout.cuda.Stream("cpu")
    with pytest.raises((ValueError, RuntimeError), match="invalid device"):
        turnout.cuda.Stream(turnout.cuda.device_count())


# ---- Pinned memory and non_blocking copies -----------------------------------

@needs_gpu
def test_pin_memory_and_non_blocking_copies():
    x = turnout.arange(1 << 16, dtype=turnout.float32)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p.pin_memory().data_ptr() == p.data_ptr()
    assert p.tolist() == x.tolist()
    s = turnout.cuda.Stream()
    with turnout.cuda.stream(s):
        d = p.to("cuda", non_blocking=True)
        back = turnout.empty(1 << 16).pin_memory()
        back.copy_(d * 2, non_blocking=True)
    s.synchronize()
    assert back.tolist() == [2.0 * v for v in x.tolist()]
    # A blocking copy to pageable memory is complete on return.
    assert (d + 1).cpu().tolist()[:3] == [1.0, 2.0, 3.0]
    with pytest.raises((ValueError, RuntimeError), match="only CPU tensors|cannot pin"):
        d.pin_memory()
