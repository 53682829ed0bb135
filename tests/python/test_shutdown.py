"""Process exit and interpreter shutdown while other threads are busy in
turnout: inside OpenBLAS (mm), in Python kernels, under a Python dispatch
mode, in GraphExecutor runs. Each case runs a fresh interpreter with daemon
threads still working when the main thread ends (normally or by
sys.exit); the child must end with its own exit status, neither hanging
(bounded by a timeout) nor crashing."""

import os
import subprocess
import sys
import textwrap

import pytest

# Generous for a loaded 2-core machine: a child that does not hang ends in
# about a second.
TIMEOUT = 60

# The end of every script: wait until every worker has started (and is
# looping), then leave as the case says.
_EPILOGUE = """
import sys as _sys
for _ev in STARTED:
    _ev.wait()
print("done", flush=True)
if END == "exit":
    _sys.exit(3)
"""


def run_child(body: str, end: str) -> None:
    """Runs `body` and the epilogue in a new interpreter; `end` is "return"
    (the script just ends: status 0) or "exit" (sys.exit(3))."""
    script = textwrap.dedent(body) + _EPILOGUE.replace("END", repr(end))
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    try:
        proc = subprocess.run([sys.executable, "-c", script],
                              capture_output=True, text=True, env=env,
                              timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the child hung at exit ({TIMEOUT} s); output: "
                    f"{e.stdout!r} {e.stderr!r}")
    expected = 3 if end == "exit" else 0
    assert proc.returncode == expected, (proc.returncode, proc.stderr)
    assert proc.stdout.strip() == "done", proc.stdout


# Daemon threads multiplying 1500 x 1500 floats: OpenBLAS uses its own
# threads, and a product (a few hundred ms) is in flight when the process
# exits. OpenBLAS's exit handler used to hang joining its workers then.
_MM = """
import threading, turnout
STARTED = []
def worker(started):
    x = turnout.ones(1500, 1500)
    while True:
        started.set()
        turnout.ops.aten.mm(x, x)
for _ in range(2):
    STARTED.append(threading.Event())
    threading.Thread(target=worker, args=(STARTED[-1],), daemon=True).start()
"""

# Python kernels called from daemon threads (each call takes the GIL back
# inside the dispatcher, and gives it up around the call).
_PYTHON_KERNEL = """
import threading, turnout
from turnout.library import Library
lib = Library("shutdown_pk", "DEF")
lib.define("f(Tensor x) -> Tensor")
def f(x):
    total = 0
    for i in range(100):
        total += i
    return x + 1
lib.impl("f", f, "CPU")
STARTED = []
def worker(started):
    x = turnout.ones(10)
    while True:
        started.set()
        turnout.ops.shutdown_pk.f(x)
for _ in range(3):
    STARTED.append(threading.Event())
    threading.Thread(target=worker, args=(STARTED[-1],), daemon=True).start()
"""

# A Python dispatch mode active on daemon threads: every operator call
# re-enters Python, mm included.
_MODE = """
import threading, turnout
from turnout._mode import DispatchMode
class Passthrough(DispatchMode):
    def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
STARTED = []
def worker(started):
    x = turnout.ones(1000, 1000)
    with Passthrough():
        while True:
            started.set()
            turnout.ops.aten.mm((x + 1).neg(), x)
for _ in range(3):
    STARTED.append(threading.Event())
    threading.Thread(target=worker, args=(STARTED[-1],), daemon=True).start()
"""

# GraphExecutor runs on daemon threads, directly and forked onto the
# inter-op pool, with Python kernels and mm inside the graph.
_GRAPH_EXECUTOR = """
import threading, turnout
from turnout import jit
from turnout.library import Library
lib = Library("shutdown_ge", "DEF")
lib.define("f(Tensor x) -> Tensor")
lib.impl("f", lambda x: x + 1, "CPU")
body = "".join(
    f"  %y{i + 1} : Tensor = "
    f"{'shutdown_ge::f' if i % 3 == 0 else 'aten::neg'}(%y{i})\\n"
    for i in range(30))
g = jit.Graph.parse("graph(%y0 : Tensor):\\n" + body +
                    "  %z : Tensor = aten::mm(%y30, %y30)\\n"
                    "  return (%z)\\n")
ex = jit.GraphExecutor(g)
x = turnout.ones(1000, 1000)
STARTED = []
def worker(started, call):
    while True:
        started.set()
        call()
for call in (lambda: ex(x), lambda: jit.fork(ex, x).wait(),
             lambda: jit.run(g, x)):
    STARTED.append(threading.Event())
    threading.Thread(target=worker, args=(STARTED[-1], call),
                     daemon=True).start()
"""

_CASES = {
    "mm": _MM,
    "python_kernel": _PYTHON_KERNEL,
    "mode": _MODE,
    "graph_executor": _GRAPH_EXECUTOR,
}


@pytest.mark.parametrize("end", ["return", "exit"])
@pytest.mark.parametrize("case", sorted(_CASES))
def test_exit_while_daemon_threads_work(case, end):
    # Three runs: the moment of exit falls at a different point each time.
    for _ in range(3):
        run_child(_CASES[case], end)
