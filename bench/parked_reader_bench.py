"""Registration churn while a Python kernel is parked (issue 17, item 4).

One thread calls an operator whose Python kernel waits on an event; the main
thread meanwhile defines and removes a library (a def and a Python CPU
kernel) CYCLES times, then lets the parked thread go. Prints the growth of
the resident set during the churn and what is left once the thread has left
(and a few more registrations have let a reclamation pass run).

Run it against the optimised install, as the other Python benchmarks:

    bazel run //:install_python -- --target /tmp/turnout_py
    PYTHONPATH=/tmp/turnout_py /usr/bin/python3 bench/parked_reader_bench.py 100000
"""

import os
import sys
import threading
import time

import turnout
from turnout.library import Library

__all__ = ["main"]


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main(cycles: int) -> None:
    """Runs the churn with a parked reader and prints one line of figures."""
    park = Library("parked_bench", "DEF")
    park.define("park(Tensor x) -> Tensor")
    release = threading.Event()
    inside = threading.Event()

    def kernel(x):
        inside.set()
        release.wait()
        return x

    park.impl("park", kernel, "CPU")
    x = turnout.ones(1)
    parked = threading.Thread(target=lambda: turnout.ops.parked_bench.park(x))
    parked.start()
    inside.wait()

    before = _resident_bytes()
    start = time.perf_counter()
    for _ in range(cycles):
        lib = Library("parked_bench_churn", "DEF")
        lib.define("churn(Tensor x) -> Tensor")
        lib.impl("churn", lambda y: y, "CPU")
        lib._destroy()
    during = _resident_bytes() - before
    seconds = time.perf_counter() - start
    release.set()
    parked.join()
    for _ in range(200):  # past the reclamation threshold
        lib = Library("parked_bench_churn", "DEF")
        lib.define("churn(Tensor x) -> Tensor")
        lib._destroy()
    after = _resident_bytes() - before
    park._destroy()
    print(f"{cycles} define/remove cycles with a parked Python kernel: "
          f"resident set +{during / 1e6:.1f} MB during, +{after / 1e6:.1f} MB "
          f"after the thread left; {seconds / cycles * 1e6:.1f} us a cycle")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100000)
