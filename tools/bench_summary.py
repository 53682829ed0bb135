"""One line per headline figure of turnout's benchmarks (tools/bench.sh).

    /usr/bin/python3 tools/bench_summary.py DIR

DIR holds what tools/bench.sh wrote: Google Benchmark JSON files
(dispatch.json, kernels.json, aten.json, jit.json, memory.json,
threads.json) and the Python benchmarks' JSON (python.json,
jit_python.json, jit_models.json). Each line gives turnout's figure, its
baseline from the same run (the direct call, memcpy, BLAS, or torch 1.13 /
c10 / TorchScript), their ratio, and the target from bench/README.md. A file that is missing (its benchmark
was skipped or failed) leaves its lines out with a note; the summary never
invents a figure.
"""

import json
import os
import sys


def load_gbench(path):
    """{benchmark name: its counters and times}, the mean where repeated."""
    with open(path) as f:
        data = json.load(f)
    rows = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "mean":
            continue
        name = b.get("run_name", b["name"])
        rows[name] = b
    return rows


def counter(rows, name, key):
    row = rows.get(name)
    if row is None or key not in row:
        return None
    return float(row[key])


class Summary:
    def __init__(self):
        self.lines = []

    def add(self, figure, value, unit, base=None, base_label="", target=""):
        if value is None:
            self.lines.append(f"{figure:<46} (not measured)")
            return
        text = f"{figure:<46} {value:>10.2f} {unit:<6}"
        if base is not None and base > 0:
            text += f" {base_label} {base:.2f} {unit}  ratio {value / base:.2f}"
        if target:
            text += f"  [target {target}]"
        self.lines.append(text)

    def note(self, text):
        self.lines.append(f"  ({text})")


def dispatch_lines(s, rows):
    direct = counter(rows, "BM_DirectCallTensor", "ns")
    unboxed = counter(rows, "BM_UnboxedCallTensor/off", "ns")
    boxed = counter(rows, "BM_BoxedCallTensor/off", "ns")
    c10_direct = counter(rows, "BM_C10DirectCallTensor", "ns")
    c10_unboxed = counter(rows, "BM_C10UnboxedCallTensor", "ns")
    c10_boxed = counter(rows, "BM_C10BoxedCallTensor", "ns")
    s.add("unboxed call, 1 Tensor arg", unboxed, "ns", c10_unboxed, "c10")
    s.add("boxed call, 1 Tensor arg", boxed, "ns", c10_boxed, "c10", "<= 0.45 of c10")
    # The kernel alone (a new reference to its argument: one atomic
    # increment and one decrement) is the direct call; what the dispatcher
    # adds is the call minus it, on each side.
    if unboxed is not None and direct is not None:
        s.add("unboxed call over the direct call", unboxed - direct, "ns",
              c10_unboxed - c10_direct if c10_unboxed and c10_direct else None,
              "c10")
    if boxed is not None and direct is not None:
        s.add("boxed call over the direct call", boxed - direct, "ns",
              c10_boxed - c10_direct if c10_boxed and c10_direct else None,
              "c10", "<= 5 ns")
    s.add("include/exclude guard", counter(rows, "BM_IncludeExcludeGuard", "ns_per_guard"),
          "ns", counter(rows, "BM_C10IncludeExcludeGuard", "ns_per_guard"), "c10")
    s.add("findSchemaOrThrow", counter(rows, "BM_FindSchemaOrThrow", "ns"), "ns",
          counter(rows, "BM_C10FindSchemaOrThrow", "ns"), "c10")
    s.add("def + impl, per op", counter(rows, "BM_DefImpl1000", "def_impl_us_per_op"),
          "us", counter(rows, "BM_C10DefImpl1000", "def_impl_us_per_op"), "c10")
    s.add("deregister, per op", counter(rows, "BM_DefImpl1000", "deregister_us_per_op"),
          "us", counter(rows, "BM_C10DefImpl1000", "deregister_us_per_op"), "c10")


def threads_lines(s, rows):
    for case in ("same", "different", "same_churn", "different_churn"):
        for prefix, who in (("BM_CallsThreads", "turnout"), ("BM_C10CallsThreads", "c10")):
            one = counter(rows, f"{prefix}/{case}/real_time/threads:1", "items_per_second")
            two = counter(rows, f"{prefix}/{case}/real_time/threads:2", "items_per_second")
            scale = two / one if one and two else None
            s.add(f"2 threads / 1, {case}, {who}", scale, "x",
                  target=">= 1.8" if who == "turnout" else "")


def kernels_lines(s, rows):
    s.add("add 16M floats into out, of memcpy", counter(rows, "BM_Add16MOut", "ratio"),
          "x", target=">= 0.8")
    s.add("add 16M floats, new output, of memcpy", counter(rows, "BM_Add16M", "ratio"),
          "x", target=">= 0.8")
    s.add("sum of 16M floats, of memcpy", counter(rows, "BM_Sum16M", "ratio"), "x",
          target=">= 0.8")
    s.add("mm 1024^2, of cblas_sgemm", counter(rows, "BM_Mm1024", "ratio"), "x",
          target=">= 0.95")


def aten_lines(s, rows):
    s.add("add of 1-element tensors, C++", counter(rows, "BM_TurnoutAddOneElement", "ns"),
          "ns", counter(rows, "BM_AtenAddOneElement", "ns"), "ATen", "<= 0.10 of ATen")
    def us(name):
        ns = counter(rows, name, "ns")
        return None if ns is None else ns / 1000

    s.add("MLP forward + backward", us("BM_TurnoutMlpForwardBackward"), "us",
          us("BM_AtenMlpForwardBackward"), "ATen", "< 1")


def jit_lines(s, rows):
    unboxed = counter(rows, "BM_UnboxedChain100", "ns_per_op")
    graph = counter(rows, "BM_GraphChain100", "ns_per_op")
    s.add("graph of 100 ops, interpreter, per op", graph, "ns",
          counter(rows, "BM_TorchScriptInterpreterChain100", "ns_per_op"), "TorchScript")
    s.add("graph of 100 ops, executor, per op",
          counter(rows, "BM_ExecutorChain100", "ns_per_op"), "ns",
          counter(rows, "BM_TorchScriptExecutorChain100", "ns_per_op"), "TorchScript")
    if graph is not None and unboxed is not None:
        s.add("interpreter overhead per op over unboxed", graph - unboxed, "ns",
              target="<= 10 ns")


def first_row(rows, prefix):
    """The first benchmark whose name starts with `prefix` (names carry
    their arguments: BM_X/parked:1/cycles:100000/iterations:1)."""
    return next((row for name, row in rows.items() if name.startswith(prefix)), None)


def memory_lines(s, rows):
    row = first_row(rows, "BM_RemovedOperatorBytes/")
    s.add("bytes left per removed operator",
          None if row is None else float(row["left_bytes_per_op"]), "B",
          target="<= 300 B")
    row = first_row(rows, "BM_ChurnWithParkedReader/parked:1/cycles:100000")
    if row is None:
        s.add("churn with a parked reader, peak growth", None, "MB")
        return
    s.add("100k define/remove cycles, parked reader: peak",
          float(row["peak_growth_MB"]), "MB", target="<= 10 MB")
    s.add("  left after the reader leaves", float(row["left_after_leave_MB"]), "MB")


def python_lines(s, data):
    rows = [
        ("a + b, 1-element tensors", "Python a + b, 1 element", "<= 0.30 of torch"),
        ("ops.ns.op(t), C++ identity kernel", "Python op, C++ kernel", ""),
        ("ops.ns.op(t), Python kernel, whole call", "Python op, Python kernel", ""),
    ]
    for key, label, target in rows:
        row = data.get(key)
        if row is None:
            s.add(label, None, "ns")
        else:
            s.add(label, row["turnout"], "ns", row.get("torch"), "torch", target)


def jit_python_lines(s, data):
    row = data.get("chain")
    if row is not None:
        s.add("Python graph of 100 ops, per op", row["turnout"], "ns", row.get("torch"),
              "TorchScript")


def jit_models_lines(s, data):
    """Issue 20's small models: one line per block, input size and graph form
    (scripted or traced), turnout's executor against TorchScript's time."""
    for model, label in (("transformer", "transformer block"), ("cnn", "CNN block")):
        for size, inputs in (("small", "batch 1"), ("large", "large")):
            for how in ("scripted", "traced"):
                row = data.get(f"{model} {size} {how}")
                if row is None:
                    continue
                figure = f"{label}, {inputs}, {how}"
                if "error" in row:
                    s.add(figure, None, "us")
                    s.note(row["error"].splitlines()[0][:100])
                    continue
                s.add(figure, row["turnout_us"], "us", row["torch_us"], "TorchScript",
                      f"<= {row['target']} of TorchScript")


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: bench_summary.py DIR (the folder tools/bench.sh wrote)")
    folder = argv[1]
    s = Summary()
    sections = [
        ("dispatch.json", load_gbench, dispatch_lines),
        ("threads.json", load_gbench, threads_lines),
        ("kernels.json", load_gbench, kernels_lines),
        ("aten.json", load_gbench, aten_lines),
        ("jit.json", load_gbench, jit_lines),
        ("memory.json", load_gbench, memory_lines),
        ("python.json", lambda p: json.load(open(p)), python_lines),
        ("jit_python.json", lambda p: json.load(open(p)), jit_python_lines),
        ("jit_models.json", lambda p: json.load(open(p)), jit_models_lines),
    ]
    for file, loader, lines in sections:
        path = os.path.join(folder, file)
        if not os.path.exists(path):
            s.note(f"{file} missing: its benchmark did not run")
            continue
        try:
            data = loader(path)
        except (OSError, ValueError) as e:
            s.note(f"{file} unreadable: {e}")
            continue
        lines(s, data)
    print("\n".join(s.lines))


if __name__ == "__main__":
    main(sys.argv)
