"""Python-side call overhead: turnout against PyTorch 1.13, side by side.

    bazel run //:install_python -- --target /tmp/turnout_py
    PYTHONPATH=/tmp/turnout_py /usr/bin/python3 bench/python_bench.py

Prints one row per figure: the best per-call time over several repeats (ns)
for turnout and for torch (when `import torch` works; "-" otherwise), and
torch / turnout (above 1 means turnout is faster). Both run in the same
process, so the machine's state is the same for both columns.
"""

import argparse
import json
import timeit


def best_ns(stmt, number, repeat):
    """The fastest of `repeat` runs of `number` calls, in ns per call."""
    times = timeit.repeat(stmt, number=number, repeat=repeat)
    return min(times) / number * 1e9


def turnout_cases():
    import turnout
    from turnout import _C

    lib = _C._dispatch_library("DEF", "python_bench", "")
    lib.def_name_t_t("identity")
    # A Python kernel that returns its input, at CPU.
    lib.def_("py_identity(Tensor x) -> Tensor")
    lib.impl("py_identity", "CPU", lambda x: x)
    py_op = turnout.ops.python_bench.py_identity
    t = turnout.ones(1)
    a, b = turnout.ones(1), turnout.ones(1)
    op = turnout.ops.python_bench.identity
    guard = _C._AutoDispatchBelowAutograd
    exclude, include = _C._ExcludeDispatchKeyGuard, _C._IncludeDispatchKeyGuard
    python_set = _C.DispatchKeySet(_C.DispatchKey.Python)
    python_key = _C.DispatchKey.Python

    def guard_enter_exit():
        with guard():
            pass

    def exclude_enter_exit():
        with exclude(python_set):
            pass

    def include_enter_exit():
        with include(python_key):
            pass

    cases = {
        "ops.ns.op(t), C++ identity kernel": lambda: op(t),
        "ops.ns.op(t), Python kernel, whole call": lambda: py_op(t),
        "a + b, 1-element tensors": lambda: a + b,
        "enter and leave a key guard": guard_enter_exit,
        "the same, _ExcludeDispatchKeyGuard(ks)": exclude_enter_exit,
        "the same, _IncludeDispatchKeyGuard(k)": include_enter_exit,
        "_dispatch_dump_table('aten::add.Tensor')":
            lambda: _C._dispatch_dump_table("aten::add.Tensor"),
        **indexing_cases(turnout),
    }
    return cases, lib


def indexing_cases(lib):
    """Basic indexing of a 4x3 float tensor: reads and number writes."""
    x = lib.zeros(4, 3)

    def write_row():
        x[1] = 2.0

    def write_column():
        x[:, 1] = 2.0

    return {
        "x[1]": lambda: x[1],
        "x[1:3]": lambda: x[1:3],
        "x[:, 1]": lambda: x[:, 1],
        "x[None, 1, 0:2]": lambda: x[None, 1, 0:2],
        "x[1] = 2.0": write_row,
        "x[:, 1] = 2.0": write_column,
    }


def torch_cases():
    try:
        import torch
    except ImportError:
        return None, None
    lib = torch._C._dispatch_library("DEF", "python_bench", "", "", 0)
    lib.def_name_t_t("identity")
    # torch 1.13 registers Python kernels through torch.library.Library.
    import torch.library
    # (1.13 knows no FRAGMENT libraries: a namespace of its own.)
    py_lib = torch.library.Library("python_bench_py", "DEF")
    py_lib.define("py_identity(Tensor x) -> Tensor")
    py_lib.impl("py_identity", lambda x: x, "CPU")
    py_op = torch.ops.python_bench_py.py_identity
    t = torch.ones(1)
    a, b = torch.ones(1), torch.ones(1)
    op = torch.ops.python_bench.identity
    guard = torch._C._AutoDispatchBelowAutograd

    exclude = torch._C.ExcludeDispatchKeyGuard
    python_set = torch._C.DispatchKeySet(torch._C.DispatchKey.Python)

    def exclude_enter_exit():
        exclude(python_set)  # RAII as well

    def guard_enter_exit():
        # torch 1.13's guard is RAII, not a context manager: made, then
        # dropped at once (its refcount reaches zero at the end of the
        # expression), which enters and leaves it.
        guard()

    cases = {
        "ops.ns.op(t), C++ identity kernel": lambda: op(t),
        "ops.ns.op(t), Python kernel, whole call": lambda: py_op(t),
        "a + b, 1-element tensors": lambda: a + b,
        "enter and leave a key guard": guard_enter_exit,
        "the same, _ExcludeDispatchKeyGuard(ks)": exclude_enter_exit,
        # 1.13 has no include guard in Python.
        "_dispatch_dump_table('aten::add.Tensor')":
            lambda: torch._C._dispatch_dump_table("aten::add.Tensor"),
        **indexing_cases(torch),
    }
    return cases, (lib, py_lib)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20000,
                        help="calls per timed run (dump_table: a tenth)")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs")
    parser.add_argument("--json", metavar="FILE",
                        help="also write {figure: {turnout, torch}} in ns")
    args = parser.parse_args()

    ours, _keep_ours = turnout_cases()
    theirs, _keep_theirs = torch_cases()
    if theirs is None:
        print("torch is not importable: the torch column is left empty")

    results = {}
    width = max(len(name) for name in ours)
    print(f"{'figure':<{width}}  {'turnout ns':>10}  {'torch ns':>9}  {'torch/turnout':>13}")
    for name, fn in ours.items():
        number = args.number // 10 if "dump" in name else args.number
        fn()  # warm up: lookups, caches
        ns = best_ns(fn, number, args.repeat)
        tns = None
        if theirs is not None and name in theirs:
            theirs[name]()
            tns = best_ns(theirs[name], number, args.repeat)
            print(f"{name:<{width}}  {ns:>10.0f}  {tns:>9.0f}  {tns / ns:>13.2f}")
        else:
            print(f"{name:<{width}}  {ns:>10.0f}  {'-':>9}  {'-':>13}")
        results[name] = {"turnout": ns, "torch": tns}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
