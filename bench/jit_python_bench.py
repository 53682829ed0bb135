"""Graph calls from Python: turnout's GraphExecutor against TorchScript 1.13.

    bazel run -c opt //:install_python -- --target /tmp/turnout_py
    PYTHONPATH=/tmp/turnout_py /usr/bin/python3 bench/jit_python_bench.py

Issue 5's from-Python rows. Both sides run the same graph text in the same
process:
  - a chain of 100 operators (add, mul, sub, div, repeated; as
    bench/jit_bench.cc) on 1-element float tensors, reported per operator;
  - an "empty" graph that returns its one tensor input, per call.
turnout runs them with ``turnout.jit.GraphExecutor(graph)(x, y)`` (and, for
reference, the interpreter alone with ``turnout.jit.Code``); TorchScript with
``torch._C._create_function_from_graph`` on ``torch._C.parse_ir`` of the same
text, i.e. its GraphExecutor (the profiling executor, warmed up first).
Each figure is the best of --repeat runs of --number calls. Without torch
the TorchScript column is "-".
"""

import argparse
import json
import timeit

CHAIN = 100


def chain_graph():
    """The text of jit_bench's chain: 100 nodes, y = 1 keeps it finite."""
    lines = ["graph(%x : Tensor,", "      %y : Tensor):",
             "  %one : int = prim::Constant[value=1]()"]
    prev = "x"
    for i in range(1, CHAIN + 1):
        v = f"v{i}"
        op = {1: f"aten::add(%{prev}, %y, %one)",
              2: f"aten::mul(%{prev}, %y)",
              3: f"aten::sub(%{prev}, %y, %one)",
              0: f"aten::div(%{prev}, %y)"}[i % 4]
        lines.append(f"  %{v} : Tensor = {op}")
        prev = v
    lines.append(f"  return (%{prev})")
    return "\n".join(lines) + "\n"


EMPTY_GRAPH = "graph(%x : Tensor):\n  return (%x)\n"


def best_ns(fn, number, repeat):
    """The fastest of `repeat` runs of `number` calls, in ns per call."""
    times = timeit.repeat(fn, number=number, repeat=repeat)
    return min(times) / number * 1e9


def turnout_cases():
    import turnout
    import turnout.jit as jit

    x, y = turnout.ones(1), turnout.ones(1)
    chain = jit.GraphExecutor(jit.Graph.parse(chain_graph()))
    chain_code = jit.Code(jit.Graph.parse(chain_graph()))
    empty = jit.GraphExecutor(jit.Graph.parse(EMPTY_GRAPH))
    chain(x, y)
    empty(x)
    expected = (((x + y) * y - y) / y).tolist()
    assert chain(x, y).tolist() == expected
    return {
        "chain": lambda: chain(x, y),
        "chain_code": lambda: chain_code(x, y),
        "empty": lambda: empty(x),
    }


def torch_cases():
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    x, y = torch.ones(1), torch.ones(1)
    chain = torch._C._create_function_from_graph(
        "chain", torch._C.parse_ir(chain_graph()))
    empty = torch._C._create_function_from_graph(
        "empty", torch._C.parse_ir(EMPTY_GRAPH))
    for _ in range(10):  # the profiling executor specialises after runs
        chain(x, y)
        empty(x)
    return {
        "chain": lambda: chain(x, y),
        "empty": lambda: empty(x),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--number", type=int, default=20000,
                        help="calls per run of the empty graph (the chain "
                             "makes 1/20 as many)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", metavar="FILE",
                        help="also write {figure: {turnout, torch}} in ns")
    args = parser.parse_args()
    n_empty, n_chain = args.number, max(args.number // 20, 1)

    ours = turnout_cases()
    theirs = torch_cases()

    def fmt(v):
        return "-" if v is None else f"{v:8.1f}"

    rows = [
        ("chain of 100 ops, GraphExecutor, per op (ns)", "chain", n_chain,
         CHAIN),
        ("chain of 100 ops, interpreter (Code), per op (ns)", "chain_code",
         n_chain, CHAIN),
        ("empty graph call (ns)", "empty", n_empty, 1),
    ]
    results = {}
    print(f"{'figure':52} {'turnout':>9} {'torch':>9} {'torch/turnout':>14}")
    for label, key, number, per in rows:
        t = best_ns(ours[key], number, args.repeat) / per
        tt = None
        if theirs is not None and key in theirs:
            tt = best_ns(theirs[key], number, args.repeat) / per
        ratio = "-" if tt is None else f"{tt / t:.2f}"
        print(f"{label:52} {fmt(t):>9} {fmt(tt):>9} {ratio:>14}")
        results[key] = {"turnout": t, "torch": tt}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
