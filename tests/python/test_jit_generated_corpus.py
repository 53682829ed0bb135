"""A generated corpus of TorchScript functions (issue 20 item 4): a seeded
generator writes small functions in each category of the hand-written
corpus (test_jit_script_corpus.py): elementwise chains, reductions and
views, control flow, scalars and lists, optionals, strings and dicts,
in-place operations, fork/wait, small models, and error paths. torch 1.13 compiles each source at test time
(``torch.jit.CompilationUnit``); turnout parses torch's inlined graph, prints it
back exactly, and runs it in the GraphExecutor (optimised twice, and
size-specialised) and the interpreter, to torch's results (tensors: rtol
1e-5, atol 1e-6; everything else exactly), the caller's tensors the
function mutates, and torch's errors.

The sources are fixed by the seeds: a failure names its case, and
``generate(category, seed)`` prints the function again.
"""

from __future__ import annotations

import random
from typing import Any, Callable, List, Tuple

import numpy as np
import pytest
import torch

import turnout
import turnout.jit as tj

SEEDS_PER_CATEGORY = 20
TOL = dict(rtol=1e-5, atol=1e-6)


# ---- The generator ------------------------------------------------------------------

# Unary expressions on a float tensor, each defined everywhere (no NaN from
# a value the chain produced) and smooth enough that float32 rounding
# differences stay within TOL.
UNARY = [
    "torch.relu({})", "torch.sigmoid({})", "torch.tanh({})", "torch.abs({})",
    "torch.neg({})", "torch.sin({})", "torch.cos({})", "({} * {})",
    "torch.clamp({}, -1.5, 2.0)", "torch.nn.functional.gelu({})",
    "torch.nn.functional.silu({})", "torch.sqrt(torch.abs({}) + 1.0)",
    "torch.log1p(torch.abs({}))", "torch.rsqrt(torch.abs({}) + 0.5)",
    "torch.reciprocal(torch.abs({}) + 1.0)", "torch.exp(torch.tanh({}))",
    "({} * 0.5 + 1.0)", "(2.0 - {})", "torch.nn.functional.leaky_relu({}, 0.1)",
    "torch.nn.functional.softplus({})", "torch.nn.functional.elu({})",
]
BINARY = [
    "({} + {})", "({} - {})", "({} * {})", "({} / (torch.abs({}) + 1.0))",
    "torch.maximum({}, {})", "torch.minimum({}, {})",
    "torch.where({} > {}, {}, {})", "torch.add({}, {}, alpha=0.5)",
]


def _unary(rng: random.Random, a: str) -> str:
    template = rng.choice(UNARY)
    return template.format(*([a] * template.count("{}")))


def _binary(rng: random.Random, a: str, b: str) -> str:
    template = rng.choice(BINARY)
    if template.startswith("torch.where"):
        return template.format(a, b, a, b)
    if "torch.abs" in template:
        return template.format(a, b)
    return template.format(a, b)


def _elementwise(rng: random.Random) -> Tuple[str, Callable[[], tuple]]:
    lines, names = [], ["x", "y"]
    for i in range(rng.randint(3, 7)):
        a = rng.choice(names)
        if rng.random() < 0.5:
            expr = _unary(rng, a)
        else:
            expr = _binary(rng, a, rng.choice(names))
        lines.append(f"t{i} = {expr}")
        names.append(f"t{i}")
    ret = ", ".join(rng.sample(names[2:], min(2, len(names) - 2)))
    src = "def f(x: Tensor, y: Tensor):\n    " + "\n    ".join(lines) + f"\n    return {ret}\n"
    broadcast = rng.choice([(3, 4), (1, 4), (4,), ()])
    return src, lambda: (torch.randn(3, 4), torch.randn(list(broadcast)))


# Shape-changing steps on a tensor of known shape: (source, new shape).
def _view_step(rng: random.Random, v: str, shape: List[int]) -> Tuple[str, List[int]]:
    n = len(shape)
    choices = []
    if n >= 2:
        choices += [(f"{v}.transpose(0, {n - 1})", [shape[-1]] + shape[1:-1] + [shape[0]]),
                    (f"{v}.flatten(0, 1)", [shape[0] * shape[1]] + shape[2:]),
                    (f"{v}.sum({n - 1})", shape[:-1]),
                    (f"{v}.mean(0, keepdim=True)", [1] + shape[1:]),
                    (f"{v}.amax([0])", shape[1:]),
                    (f"torch.softmax({v}, {n - 1})", shape),
                    (f"torch.log_softmax({v}, 0)", shape),
                    (f"{v}.cumsum(1)", shape),
                    (f"torch.cat([{v}, {v} * 2.0], 1)", [shape[0], shape[1] * 2] + shape[2:]),
                    (f"{v}.max(0)[0]", shape[1:]),
                    (f"{v}.permute({', '.join(str(d) for d in reversed(range(n)))})",
                     list(reversed(shape)))]
        if shape[0] > 1:
            choices.append((f"{v}[1:]", [shape[0] - 1] + shape[1:]))
            choices.append((f"{v}.narrow(0, 1, {shape[0] - 1})", [shape[0] - 1] + shape[1:]))
    if n <= 3:
        choices += [(f"{v}.unsqueeze({n})", shape + [1]),
                    (f"torch.stack([{v}, {v} + 1.0], 0)", [2] + shape)]
    numel = int(np.prod(shape)) if shape else 1
    choices += [(f"{v}.reshape([-1])", [numel]),
                (f"{v}.view([{numel}, 1])", [numel, 1]),
                (f"{v}.contiguous() * 1.5", shape)]
    if numel % 2 == 0:
        choices.append((f"{v}.reshape([2, -1])", [2, numel // 2]))
    if n >= 1 and shape[-1] % 2 == 0:
        choices.append((f"{v}[..., ::2]", shape[:-1] + [shape[-1] // 2]))
    return rng.choice(choices)


def _reductions_views(rng: random.Random) -> Tuple[str, Callable[[], tuple]]:
    first = rng.choice([[2, 3, 4], [4, 6], [3, 2, 2]])
    shape, lines, v = first, [], "x"
    for i in range(rng.randint(2, 5)):
        expr, shape = _view_step(rng, v, shape)
        lines.append(f"v{i} = {expr}")
        v = f"v{i}"
        if not shape:
            break
    lines.append(f"s = {v}.sum()")
    src = ("def f(x: Tensor):\n    " + "\n    ".join(lines)
           + f"\n    return {v}, s, {v}.dim(), {v}.size()\n")
    return src, lambda: (torch.randn(*first),)


def _control_flow(rng: random.Random) -> Tuple[str, Callable[[], tuple]]:
    body = _unary(rng, "x")
    other = _unary(rng, "x")
    kind = rng.choice(["if", "for", "while", "nested"])
    if kind == "if":
        lines = [f"if bool(x.sum() > {rng.uniform(-1, 1):.2f}):",
                 f"    x = {body}", "else:", f"    x = {other}"]
    elif kind == "for":
        lines = [f"for i in range(n):", f"    x = {body} + i"]
    elif kind == "while":
        lines = ["i = 0", f"while i < n and bool(x.abs().max() < {rng.randint(5, 50)}.0):",
                 f"    x = {body} * 1.5 + 1.0", "    i += 1"]
    else:
        lines = ["for i in range(n):", f"    if i % 2 == {rng.randint(0, 1)}:",
                 f"        x = {body}", "    else:", f"        x = {other} - i",
                 f"    if i == {rng.randint(1, 3)}:", "        break"]
    src = ("def f(x: Tensor, n: int):\n    " + "\n    ".join(lines)
           + "\n    return x\n")
    n = rng.randint(0, 5)
    return src, lambda: (torch.randn(2, 3), n)


def _scalars_lists(rng: random.Random) -> Tuple[str, Callable[[], tuple]]:
    a, b = rng.randint(-9, 9), rng.randint(1, 7)
    exprs = [f"a {op} b" for op in ("+", "-", "*", "//", "%")] + [
        "a / b", "float(a) ** 2", "abs(a - b)", "min(a, b)", "max(a, b) * 2",
        "int(a > b)", "a == b", "str(a) + str(b)"]
    picked = rng.sample(exprs, 4)
    lines = [f"r{i} = {e}" for i, e in enumerate(picked)]
    lines += ["xs: List[int] = []", f"for i in range({rng.randint(1, 5)}):",
              "    xs.append(i * a - b)",
              f"xs.insert(0, {rng.randint(0, 9)})", "xs.reverse()",
              f"t = (xs[0], len(xs), {rng.randint(0, 9)} in xs)",
              "d = {'a': a, 'b': b}", "d['c'] = len(xs)",
              "m = x.numel() + int(x.sum() > 0.0)"]
    src = ("def f(x: Tensor, a: int, b: int):\n    " + "\n    ".join(lines)
           + f"\n    return {', '.join(f'r{i}' for i in range(4))}, xs, t, d, m\n")
    return src, lambda: (torch.randn(2, 2), a, b)


def _in_place(rng: random.Random) -> Tuple[str, Callable[[], tuple]]:
    steps = rng.sample([
        "x.add_(y)", "x.mul_(0.5)", "x.clamp_(-1.0, 1.0)", "x.relu_()", "x.sub_(y, alpha=2.0)",
        "x.tanh_()", "x.sigmoid_()", "x[0] = y[0] * 2.0", "x[:, 1] += 1.0",
        "x.div_(2.0)", "z = x.view([-1])\n    z.mul_(3.0)", "x.neg_()", "x.exp_()",
        "x.copy_(y)", "x.zero_()", "x.fill_(1.5)", "x.masked_fill_(y > 0.0, 0.25)"],
        rng.randint(2, 4))
    src = ("def f(x: Tensor, y: Tensor):\n    " + "\n    ".join(steps)
           + "\n    return x.sum(), y\n")
    return src, lambda: (torch.randn(3, 4), torch.randn(3, 4))


def _errors(rng: random.Random) -> Tuple[str, Callable[[], tuple]]:
    bad = rng.choice([
        "x.view([5, 7])", "torch.cat([x, y.t()], 0)", "x + y[:, :2]",
        "torch.mm(x, y)", "x.sum(5)", "x.transpose(0, 3)", "x[7]",
        "torch.stack([x, y[0]])", "x.reshape([-1, -1])", "x.narrow(0, 2, 5)",
        "torch.softmax(x, 4)", "x.expand([2, 3])"])
    prefix = _unary(rng, "x")
    src = f"def f(x: Tensor, y: Tensor):\n    x = {prefix}\n    return {bad}\n"
    return src, lambda: (torch.randn(3, 4), torch.randn(3, 4))


def _optionals_strings(rng: random.Random) -> Tuple[str, Callable[[], tuple]]:
    k = rng.choice(["None", str(rng.randint(-3, 3))])
    sep = rng.choice(["-", ":", ""])
    lines = ["n = 0", "if o is not None:", f"    n = o * {rng.randint(1, 4)}",
             f"s = '{{}}{sep}{{}}'.format(a, n)", "parts = [s, a + s, str(n)]",
             f"u: Optional[Tensor] = None", f"if n > {rng.randint(-2, 2)}:", "    u = x * n",
             "y = x", "if u is not None:", "    y = u + 1.0",
             "d: Dict[str, int] = {}", "for p in parts:", "    d[p] = len(p)"]
    src = ("def f(x: Tensor, a: str, o: Optional[int]):\n    " + "\n    ".join(lines)
           + "\n    return s, parts, y, d, str(o), len(s) > 2\n")
    word = rng.choice(["ab", "xyz", "q"])
    return src, lambda: (torch.randn(2, 2), word, None if k == "None" else int(k))


def _fork_wait(rng: random.Random) -> Tuple[str, Callable[[], tuple]]:
    body = _unary(rng, "x")
    n = rng.randint(1, 4)
    src = ("def g(x: Tensor, k: float) -> Tensor:\n"
           f"    return {body} * k\n\n"
           "def f(x: Tensor):\n"
           "    futs: List[torch.jit.Future[Tensor]] = []\n"
           f"    for i in range({n}):\n"
           "        futs.append(torch.jit.fork(g, x + i, float(i) + 0.5))\n"
           "    out = torch.zeros_like(x)\n"
           "    for fut in futs:\n"
           "        out = out + torch.jit.wait(fut)\n"
           "    return out\n")
    return src, lambda: (torch.randn(3, 2),)


def _small_model(rng: random.Random) -> Tuple[str, Callable[[], tuple]]:
    act = rng.choice(["torch.relu", "torch.tanh", "torch.nn.functional.gelu",
                      "torch.sigmoid", "torch.nn.functional.silu"])
    norm = rng.choice(["torch.nn.functional.layer_norm(h, [6])", "h",
                       "torch.nn.functional.normalize(h, dim=-1)"])
    head = rng.choice(["torch.softmax(y, -1)", "torch.log_softmax(y, -1)", "y",
                       "torch.nn.functional.cross_entropy(y, t)"])
    src = ("def f(x: Tensor, w1: Tensor, b1: Tensor, w2: Tensor, t: Tensor):\n"
           f"    h = {act}(torch.nn.functional.linear(x, w1, b1))\n"
           f"    h = {norm}\n"
           "    y = torch.nn.functional.linear(h, w2)\n"
           f"    return {head}\n")
    return src, lambda: (torch.randn(4, 5), torch.randn(6, 5), torch.randn(6),
                         torch.randn(3, 6), torch.randint(0, 3, (4,)))


GENERATORS = {
    "elementwise": _elementwise,
    "reductions_views": _reductions_views,
    "control_flow": _control_flow,
    "scalars_lists": _scalars_lists,
    "in_place": _in_place,
    "optionals_strings": _optionals_strings,
    "fork_wait": _fork_wait,
    "small_models": _small_model,
    "errors": _errors,
}


def generate(category: str, seed: int) -> Tuple[str, Callable[[], tuple]]:
    """The source of case (category, seed) and its arguments' maker."""
    rng = random.Random(f"{category}/{seed}")
    return GENERATORS[category](rng)


# ---- Running and comparing -------------------------------------------------------------


def to_turnout(v: Any) -> Any:
    if isinstance(v, torch.Tensor):
        return turnout.from_numpy(v.numpy().copy()).clone()
    if isinstance(v, (list, tuple)):
        return type(v)(to_turnout(e) for e in v)
    return v


def assert_same(mine: Any, theirs: Any, what: str) -> None:
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, turnout.Tensor), (what, mine)
        assert tuple(mine.shape) == tuple(theirs.shape), (what, mine, theirs)
        assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], what
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), err_msg=what, **TOL)
    elif isinstance(theirs, (list, tuple)):
        assert type(mine) is type(theirs) and len(mine) == len(theirs), (what, mine, theirs)
        for i, (m, t) in enumerate(zip(mine, theirs)):
            assert_same(m, t, f"{what}[{i}]")
    elif isinstance(theirs, dict):
        assert isinstance(mine, dict) and list(mine) == list(theirs), (what, mine, theirs)
        for k in theirs:
            assert_same(mine[k], theirs[k], f"{what}[{k!r}]")
    elif isinstance(theirs, float):
        assert isinstance(mine, float) and np.isclose(mine, theirs, **TOL), (what, mine, theirs)
    else:
        assert type(mine) is type(theirs) and mine == theirs, (what, mine, theirs)


def check(category: str, seed: int) -> None:
    src, make_args = generate(category, seed)
    torch_cu = torch.jit.CompilationUnit(src)
    fn = torch_cu.f
    # Inlined: the torch.nn.functional calls are bodies, as in the models
    # test (test_jit_script_corpus covers prim::CallFunction). A forked
    # function stays a call, found in turnout's CompilationUnit.
    cu = tj.CompilationUnit()
    for callee in torch_cu.get_functions():
        if callee.name != "f":
            cu.define(callee.name, str(callee.inlined_graph))
    text = str(fn.inlined_graph)
    g = tj.Graph.parse(text, compilation_unit=cu)
    assert str(g) == text, src
    torch.manual_seed(seed)
    args = make_args()
    torch_args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    try:
        expected, error = fn(*torch_args), None
    except Exception as e:  # torch.jit.Error: the function's error path
        expected, error = None, e
    optimized = tj.GraphExecutor(g)
    sized = tj.GraphExecutor(g, specialize_sizes=True)
    runners = [("optimised", optimized), ("optimised again", optimized),
               ("size-specialised", sized), ("interpreter", lambda *a: tj.run(g, *a))]
    for label, run in runners:
        mine_args = to_turnout(args)
        what = f"{category}/{seed} {label}\n{src}"
        if error is not None:
            with pytest.raises(Exception):
                run(*mine_args)
            continue
        got = run(*mine_args)
        assert_same(got, expected, what)
        assert_same(tuple(mine_args), tuple(torch_args), what + " (mutated inputs)")


CASES = [(c, s) for c in GENERATORS for s in range(SEEDS_PER_CATEGORY)]


@pytest.mark.parametrize("category,seed", CASES, ids=[f"{c}-{s}" for c, s in CASES])
def test_generated(category: str, seed: int) -> None:
    check(category, seed)


def test_generator_is_deterministic_and_varied() -> None:
    for category in GENERATORS:
        sources = [generate(category, s)[0] for s in range(SEEDS_PER_CATEGORY)]
        assert sources == [generate(category, s)[0] for s in range(SEEDS_PER_CATEGORY)]
        assert len(set(sources)) >= SEEDS_PER_CATEGORY // 2, category
