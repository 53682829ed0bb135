"""Small models from Python: turnout's GraphExecutor against TorchScript 1.13.

    bazel run --config=opt //:install_python -- --target /tmp/turnout_py
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 TURNOUT_NUM_THREADS=1 \\
      PYTHONPATH=/tmp/turnout_py taskset -c 1 /usr/bin/python3 \\
      bench/jit_models_bench.py

Issue 20 item 5. Two blocks, each at a small input (batch 1: the per-call
overhead dominates) and a larger one (the kernels dominate):
  - a transformer block: layer_norm, q/k/v projections (``nn.Linear``),
    scaled dot-product attention over heads (matmul, softmax), the output
    projection and a residual, then layer_norm, a GELU MLP and a residual;
  - a CNN block: conv2d, batch_norm (eval), relu, max_pool2d.
Each block's parameters come from ``torch.nn`` modules (``Linear``,
``LayerNorm``, ``Conv2d``, ``BatchNorm2d`` in eval mode); the block is a
function of its input and those parameters, so that its graph has them as
inputs (a module's graph reads them with ``prim::GetAttr`` on ``self``,
which a graph alone cannot carry). torch 1.13 scripts it
(``torch.jit.script``, the inlined graph) and traces it
(``torch.jit.trace``); turnout parses each printed graph and runs it in an
optimised ``turnout.jit.GraphExecutor``. TorchScript's side calls the
scripted or traced function itself (its profiling executor, warmed up).
Both get the same values: turnout's tensors are copies of torch's, and
the outputs are checked (allclose) before anything is timed. No tensor
requires grad on either side.

Timing: --rounds rounds; in each, turnout's calls and then TorchScript's
(--seconds of calls each, the count fixed by a first measurement), so
the two sides see the same load. Per figure: the mean ± standard
deviation over the rounds of the time per call, and of the per-round ratio
turnout / TorchScript. Run on one pinned core with BLAS, OpenMP and
turnout's pool single-threaded, as tools/bench.sh does.
"""

import argparse
import json
import math
import statistics
import sys
import time

# turnout before numpy and torch: `import turnout` chooses OpenBLAS's
# kernels for this CPU (turnout/_openblas_env.py), and numpy and torch,
# which load the same libopenblas, get them too; after either, all keep
# OpenBLAS's own choice. In both orders both sides run the same BLAS.
import turnout
import turnout.jit as tj

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

# (name, sizes): the transformer's (batch, seq, d_model, heads, d_ff) and
# the CNN's (batch, in channels, height = width, out channels).
TRANSFORMER_SIZES = {
    "small": (1, 16, 64, 4, 256),
    "large": (4, 64, 256, 8, 1024),
}
CNN_SIZES = {
    "small": (1, 16, 32, 32),
    "large": (4, 64, 28, 64),
}

# Targets, turnout's time over TorchScript's (issue 20 item 5).
TARGET = {"small": 0.5, "large": 1.0}


def transformer_block(x: torch.Tensor, heads: int,
                      ln1_w: torch.Tensor, ln1_b: torch.Tensor,
                      q_w: torch.Tensor, q_b: torch.Tensor,
                      k_w: torch.Tensor, k_b: torch.Tensor,
                      v_w: torch.Tensor, v_b: torch.Tensor,
                      o_w: torch.Tensor, o_b: torch.Tensor,
                      ln2_w: torch.Tensor, ln2_b: torch.Tensor,
                      fc1_w: torch.Tensor, fc1_b: torch.Tensor,
                      fc2_w: torch.Tensor, fc2_b: torch.Tensor) -> torch.Tensor:
    b, s, d = x.shape
    hd = d // heads
    y = F.layer_norm(x, [d], ln1_w, ln1_b)
    q = F.linear(y, q_w, q_b).view(b, s, heads, hd).transpose(1, 2)
    k = F.linear(y, k_w, k_b).view(b, s, heads, hd).transpose(1, 2)
    v = F.linear(y, v_w, v_b).view(b, s, heads, hd).transpose(1, 2)
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(hd)
    z = torch.matmul(torch.softmax(scores, dim=-1), v)
    x = x + F.linear(z.transpose(1, 2).reshape(b, s, d), o_w, o_b)
    h = F.gelu(F.linear(F.layer_norm(x, [d], ln2_w, ln2_b), fc1_w, fc1_b))
    return x + F.linear(h, fc2_w, fc2_b)


def cnn_block(x: torch.Tensor, conv_w: torch.Tensor, conv_b: torch.Tensor,
              bn_w: torch.Tensor, bn_b: torch.Tensor,
              bn_mean: torch.Tensor, bn_var: torch.Tensor) -> torch.Tensor:
    y = F.conv2d(x, conv_w, conv_b, 1, 1)
    y = F.batch_norm(y, bn_mean, bn_var, bn_w, bn_b, False, 0.1, 1e-5)
    return F.max_pool2d(F.relu(y), 2)


def _detached(module):
    """The module's parameters and buffers, as tensors that need no grad."""
    return [t.detach().clone() for t in module.parameters()]


def transformer_inputs(size, gen):
    batch, seq, d, heads, ff = size
    torch.manual_seed(int(torch.randint(1 << 30, (1,), generator=gen)))
    ln1, ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
    for ln in (ln1, ln2):  # not the identity: random affine parameters
        torch.nn.init.normal_(ln.weight, 1.0, 0.1)
        torch.nn.init.normal_(ln.bias, 0.0, 0.1)
    linears = [torch.nn.Linear(d, d) for _ in range(4)]
    fc1, fc2 = torch.nn.Linear(d, ff), torch.nn.Linear(ff, d)
    params = _detached(ln1)
    for lin in linears:
        params += _detached(lin)
    params += _detached(ln2) + _detached(fc1) + _detached(fc2)
    x = torch.randn(batch, seq, d, generator=gen)
    return [x, heads] + params


def cnn_inputs(size, gen):
    batch, c_in, hw, c_out = size
    torch.manual_seed(int(torch.randint(1 << 30, (1,), generator=gen)))
    conv = torch.nn.Conv2d(c_in, c_out, 3, padding=1)
    bn = torch.nn.BatchNorm2d(c_out).eval()
    with torch.no_grad():  # running statistics as after some training
        bn.running_mean.normal_(0.0, 0.5, generator=gen)
        bn.running_var.uniform_(0.5, 1.5, generator=gen)
        bn.weight.normal_(1.0, 0.1, generator=gen)
        bn.bias.normal_(0.0, 0.1, generator=gen)
    x = torch.randn(batch, c_in, hw, hw, generator=gen)
    return [x] + _detached(conv) + _detached(bn) + [
        bn.running_mean.clone(), bn.running_var.clone()]


def to_turnout(v):
    if isinstance(v, torch.Tensor):
        return turnout.from_numpy(v.numpy().copy())
    return v


def torch_function(fn, how, example):
    """The function scripted or traced by torch 1.13, and its graph's text."""
    if how == "scripted":
        f = torch.jit.script(fn)
        return f, str(f.inlined_graph)
    # A traced graph keeps ints as constants: trace a closure over them.
    tensors = [a for a in example if isinstance(a, torch.Tensor)]
    consts = {i: a for i, a in enumerate(example) if not isinstance(a, torch.Tensor)}

    def tensors_only(*ts):
        it = iter(ts)
        args = [consts[i] if i in consts else next(it) for i in range(len(example))]
        return fn(*args)

    f = torch.jit.trace(tensors_only, tensors)
    return f, str(f.inlined_graph)


def close(ours, theirs, tol):
    got = torch.from_numpy(np.array(ours))
    return got.shape == theirs.shape and torch.allclose(got, theirs, rtol=tol, atol=tol)


def prepare(model, how, size):
    """(turnout's call, TorchScript's call), both checked against eager torch;
    raises when turnout cannot parse or run the graph, or differs."""
    fn, make = {"transformer": (transformer_block, transformer_inputs),
                "cnn": (cnn_block, cnn_inputs)}[model]
    sizes = TRANSFORMER_SIZES if model == "transformer" else CNN_SIZES
    gen = torch.Generator().manual_seed(20)
    args = make(sizes[size], gen)
    ts_fn, text = torch_function(fn, how, args)
    graph = tj.Graph.parse(text)
    executor = tj.GraphExecutor(graph)
    # The traced graph's inputs are the tensors only (ints are constants).
    ts_args = args if how == "scripted" else [
        a for a in args if isinstance(a, torch.Tensor)]
    ours_args = [to_turnout(a) for a in ts_args]
    expected = fn(*args)
    for _ in range(5):  # TorchScript's profiling executor specialises
        theirs = ts_fn(*ts_args)
    if not torch.allclose(theirs, expected, rtol=1e-4, atol=1e-4):
        raise AssertionError(f"{model}/{how}/{size}: TorchScript differs from eager")
    for _ in range(2):  # the first call makes the plan
        ours = executor(*ours_args)
    if not close(ours, expected, 1e-4):
        raise AssertionError(f"{model}/{how}/{size}: turnout's result differs "
                             f"from torch's (allclose, 1e-4)")

    def run_ours():
        return executor(*ours_args)

    def run_theirs():  # no grad mode needed: no input requires grad
        return ts_fn(*ts_args)
    return run_ours, run_theirs


def time_calls(fn, number):
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def measure(run_ours, run_theirs, rounds, seconds):
    """Per-round seconds per call for each side, alternating in each round."""
    counts = []
    for fn in (run_ours, run_theirs):
        once = time_calls(fn, 3)
        counts.append(max(3, int(seconds / max(once, 1e-9))))
    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(time_calls(run_ours, counts[0]))
        theirs.append(time_calls(run_theirs, counts[1]))
    return ours, theirs


def mean_sd(values):
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=0.3,
                        help="time per side per round (the call count is set "
                             "from a first measurement)")
    parser.add_argument("--how", choices=["scripted", "traced", "both"], default="both")
    parser.add_argument("--json", metavar="FILE",
                        help="also write {figure: {turnout_us, torch_us, ratio, "
                             "..._sd, target}}")
    args = parser.parse_args()
    torch.set_num_threads(1)
    hows = ["scripted", "traced"] if args.how == "both" else [args.how]

    results = {}
    failed = False
    print(f"{'figure':30} {'turnout us':>18} {'TorchScript us':>18} "
          f"{'turnout/TS':>14} {'target':>7}")
    for model in ("transformer", "cnn"):
        for size in ("small", "large"):
            for how in hows:
                key = f"{model} {size} {how}"
                try:
                    run_ours, run_theirs = prepare(model, how, size)
                except Exception as e:  # a graph turnout cannot run yet: say so
                    print(f"{key:30} not run: {type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''}")
                    results[key] = {"error": f"{type(e).__name__}: {e}"}
                    failed = True
                    continue
                ours, theirs = measure(run_ours, run_theirs, args.rounds, args.seconds)
                ratios = [a / b for a, b in zip(ours, theirs)]
                (om, osd), (tm, tsd), (rm, rsd) = (
                    mean_sd([v * 1e6 for v in ours]), mean_sd([v * 1e6 for v in theirs]),
                    mean_sd(ratios))
                print(f"{key:30} {om:10.1f} ± {osd:<6.1f} {tm:10.1f} ± {tsd:<6.1f} "
                      f"{rm:6.2f} ± {rsd:<5.2f} {'<= ' + str(TARGET[size]):>7}")
                results[key] = {"turnout_us": om, "turnout_us_sd": osd,
                                "torch_us": tm, "torch_us_sd": tsd,
                                "ratio": rm, "ratio_sd": rsd,
                                "target": TARGET[size], "rounds": args.rounds}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
