"""turnout.utils.cpp_extension: how long a one-op load_inline takes.

    bazel run //:install_python -- --target /tmp/turnout_py
    PYTHONPATH=/tmp/turnout_py /usr/bin/python3 bench/cpp_extension_bench.py

Each run is a fresh interpreter. Cold: an empty cache folder, so the source
is compiled and linked; warm: a second interpreter on the same folder, which
loads the cached library. Both with ninja and with the compiler run
directly. Prints, per case, the load_inline call's wall time and the whole
process's (interpreter start and `import turnout` included), as mean ±
standard deviation and the range over the runs.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

# The child: one load_inline of a one-op library, timed; "direct" hides
# ninja from cpp_extension.
CHILD = r'''
import shutil, sys, time
if sys.argv[1] == "direct":
    which = shutil.which
    shutil.which = lambda cmd, *a, **k: None if cmd == "ninja" else which(cmd, *a, **k)
import turnout
from turnout.utils import cpp_extension
start = time.perf_counter()
ext = cpp_extension.load_inline("bench_scale", cpp_sources="""
turnout::Tensor scale(const turnout::Tensor& x, double f) {
  return turnout::mul(x, f);
}""", functions=["scale"], verbose=True)
took = time.perf_counter() - start
assert ext.scale(turnout.tensor([1.0]), 2.0).tolist() == [2.0]
print("LOAD", took)
'''


def run_child(builder: str, cache: str) -> "tuple[float, float, str]":
    env = dict(os.environ, TURNOUT_EXTENSIONS_DIR=cache)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, builder], env=env,
                          capture_output=True, text=True, check=True)
    total = time.perf_counter() - start
    load = float(proc.stdout.rsplit("LOAD ", 1)[1])
    return load, total, proc.stdout


def describe(values) -> str:
    mean = statistics.mean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean:6.3f} ± {sd:5.3f} s  [{min(values):.3f} .. {max(values):.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    rows = []
    for builder in ("ninja", "direct"):
        cold_load, cold_total, warm_load, warm_total = [], [], [], []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as cache:
                load, total, out = run_child(builder, cache)
                assert "built" in out, out
                cold_load.append(load)
                cold_total.append(total)
                load, total, out = run_child(builder, cache)
                assert "loading the cached" in out, out
                warm_load.append(load)
                warm_total.append(total)
        rows += [(f"cold, {builder}", cold_load, cold_total),
                 (f"warm, {builder}", warm_load, warm_total)]

    print(f"{'case':14}  {'load_inline call':38}  whole process")
    for name, load, total in rows:
        print(f"{name:14}  {describe(load):38}  {describe(total)}")


if __name__ == "__main__":
    main()
