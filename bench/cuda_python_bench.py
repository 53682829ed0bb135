"""Per-call cost of a tiny CUDA add from Python (compare with cuda_bench's
BM_CudaLaunchEmpty, the bare launch, and BM_CudaAddSmall, the same add
from C++).

    bazel run -c opt //:install_python -- --target /tmp/turnout_py
    PYTHONPATH=/tmp/turnout_py /usr/bin/python3 bench/cuda_python_bench.py
    turnout-gpu/run.sh python bench/cuda_python_bench.py   # GPU bundle

Prints ns per call, the best of several runs, for `a + b` and
`turnout.ops.aten.add.Tensor(a, b)` on 1-element float CUDA tensors. Each
run ends with a device synchronisation, so queued launches are paid for.
"""

import argparse
import time

import turnout


def synchronizer(t):
    """A function that waits for the device: turnout.cuda.synchronize where
    it exists, else a device-to-host copy of `t` (which waits for the
    queue)."""
    sync = getattr(getattr(turnout, "cuda", None), "synchronize", None)
    return sync if sync is not None else t.cpu


def best_ns(call, sync, number: int, repeat: int) -> float:
    """The fastest of `repeat` runs of `number` calls, ns per call."""
    best = float("inf")
    for _ in range(repeat):
        sync()
        start = time.perf_counter_ns()
        for _ in range(number):
            call()
        sync()
        best = min(best, (time.perf_counter_ns() - start) / number)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    if not turnout.cuda.is_available():
        try:
            turnout.cuda.current_device()  # says why
        except (RuntimeError, NotImplementedError) as e:
            raise SystemExit(f"cuda_python_bench needs a CUDA device: {e}")
    a = turnout.ones(1, device="cuda")
    b = turnout.ones(1, device="cuda")
    sync = synchronizer(a)
    add = turnout.ops.aten.add.Tensor
    cases = {
        "a + b, 1-element CUDA tensors": lambda: a + b,
        "ops.aten.add.Tensor(a, b), 1-element CUDA tensors": lambda: add(a, b),
    }
    for name, call in cases.items():
        call()  # warm-up: first-use costs (context, caches)
        ns = best_ns(call, sync, args.number, args.repeat)
        print(f"{ns:10.0f} ns  {name}")

if __name__ == "__main__":
    main()
