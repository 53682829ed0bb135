"""Instructions per call of a benchmark loop, from two callgrind runs.

The inclusive Ir of the benchmark function, difference of a short and a long
run, over the difference of the calls of the kernel it calls once per
iteration: the setup and Google Benchmark's own rounds cancel out.

Calls are counted for the function whose name starts with `kernel` exactly
(`turnout::(anonymous namespace)::kernelIdentity(`): a substring match would
also count the generated wrapper, whose template arguments name the kernel,
and halve every figure.

Example (see bench/README.md, "The autograd fallback, Warn by default")::

    /usr/bin/python3 bench/callgrind_per_call.py short.cg long.cg \\
        BM_UnboxedCallTensor 'turnout::(anonymous namespace)::kernelIdentity('
"""

import re
import subprocess
import sys


def calls_of(path: str, kernel: str) -> int:
    """The calls of `kernel` recorded in callgrind output file `path`."""
    names: dict[str, str] = {}
    callee = None
    calls = 0
    with open(path) as f:
        for line in f:
            key, _, value = line.partition("=")
            if key in ("fn", "cfn"):
                m = re.match(r"\((\d+)\)(?: (.*))?", value.strip())
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                if key == "cfn":
                    callee = names.get(m.group(1), "")
            elif key == "calls" and callee is not None:
                if callee.startswith(kernel):
                    calls += int(value.split()[0])
    return calls


def inclusive_ir(path: str, function: str) -> int:
    """The inclusive Ir of the first function whose name contains
    `function(` (callgrind_annotate --inclusive=yes)."""
    out = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
        capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if function + "(" in line:
            return int(line.split()[0].replace(",", ""))
    raise SystemExit(f"{path}: no function {function}( in the profile")


def main() -> None:
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    short, long, function, kernel = sys.argv[1:]
    ir = inclusive_ir(long, function) - inclusive_ir(short, function)
    calls = calls_of(long, kernel) - calls_of(short, kernel)
    if calls <= 0:
        raise SystemExit(f"no more calls of {kernel} in {long} than in {short}")
    print(f"{ir / calls:.1f} Ir per call ({calls} calls)")


if __name__ == "__main__":
    main()
