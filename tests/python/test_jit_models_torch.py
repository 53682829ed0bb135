"""Small real models through turnout's GraphExecutor (issue 20 item 4).

Each model (an MLP, a CNN block, LSTM and GRU cells, an embedding
classifier, a transformer block written with nn.Linear q/k/v,
nn.MultiheadAttention with and without masks) is scripted and traced by
torch 1.13 at test time, in eval mode and, where it has batch norm or
dropout, train mode. torch's inlined graph (whose first input is the
module) is printed, parsed by turnout and printed back exactly, then lowered
by turnout (``turnout.jit.passes.lower_graph``: the module's parameters and
buffers become graph inputs after the model's own, its other attributes
constants); then it runs in turnout's
GraphExecutor optimised (twice: the second call reuses the plan), with size
specialisation (two batch sizes for scripted models: two plans), and
unoptimised, and each run is compared with torch running the same scripted
or traced module:

- the outputs (float32: rtol 1e-4, atol 1e-5);
- the buffers the model mutates (batch norm's running statistics and
  num_batches_tracked in train mode: the same tolerances, the count exactly);
- the gradients of a weighted sum of the outputs with respect to the float
  inputs and every parameter (rtol 1e-4, atol 1e-4).
"""

from __future__ import annotations

import copy
import io
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import turnout
import turnout.jit as tj

OUT_TOL = dict(rtol=1e-4, atol=1e-5)
GRAD_TOL = dict(rtol=1e-4, atol=1e-4)


# ---- The models ----------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l1 = nn.Linear(8, 16)
        self.l2 = nn.Linear(16, 16)
        self.l3 = nn.Linear(16, 4)
        self.drop = nn.Dropout(0.25)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.drop(torch.relu(self.l1(x)))
        y = torch.tanh(self.l2(y)) + y
        return F.log_softmax(self.l3(y), dim=-1)


class CNNBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(6)
        self.conv2 = nn.Conv2d(6, 8, 3, stride=2, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.pool(F.relu(self.bn1(self.conv1(x))))
        y = F.relu(self.bn2(self.conv2(y)))
        y = F.avg_pool2d(y, 2, ceil_mode=True)
        y = F.adaptive_avg_pool2d(y, 1).flatten(1)
        return self.fc(y)


class RecurrentCells(nn.Module):
    """Two steps of an LSTM cell feeding a GRU cell."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTMCell(5, 6)
        self.gru = nn.GRUCell(6, 4)

    def forward(self, x: torch.Tensor, h: torch.Tensor,
                c: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        h1, c1 = self.lstm(x, (h, c))
        h2, c2 = self.lstm(x * 0.5, (h1, c1))
        g = self.gru(h2)
        return h2, c2, self.gru(torch.tanh(h1), g)


class EmbeddingClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(12, 8, padding_idx=0)
        self.norm = nn.LayerNorm(8)
        self.fc = nn.Linear(8, 3)

    def forward(self, tokens: torch.Tensor, labels: torch.Tensor
                ) -> Tuple[torch.Tensor, torch.Tensor]:
        e = F.gelu(self.norm(self.emb(tokens)))
        logits = self.fc(e.mean(1))
        return logits, F.cross_entropy(logits, labels, label_smoothing=0.1)


class TransformerBlock(nn.Module):
    """Pre-norm self-attention and MLP, with residuals, as small models
    write it."""

    def __init__(self, d: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d)
        self.ln2 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, 4 * d)
        self.ff2 = nn.Linear(4 * d, d)
        self.drop = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        hd = d // self.heads
        y = self.ln1(x)
        q = self.q(y).view(b, t, self.heads, hd).transpose(1, 2)
        k = self.k(y).view(b, t, self.heads, hd).transpose(1, 2)
        v = self.v(y).view(b, t, self.heads, hd).transpose(1, 2)
        att = torch.matmul(q, k.transpose(-2, -1)) / (hd ** 0.5)
        att = self.drop(F.softmax(att, dim=-1))
        z = torch.matmul(att, v).transpose(1, 2).contiguous().view(b, t, d)
        x = x + self.o(z)
        return x + self.drop(self.ff2(F.gelu(self.ff1(self.ln2(x)))))


class SelfAttention(nn.Module):
    """nn.MultiheadAttention as self-attention: query, key and value are one
    tensor (the packed in-projection path)."""

    def __init__(self, batch_first: bool, need_weights: bool) -> None:
        super().__init__()
        self.need_weights = need_weights
        self.attn = nn.MultiheadAttention(8, 2, dropout=0.1, batch_first=batch_first)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        out, w = self.attn(x, x, x, need_weights=self.need_weights)
        if w is None:
            return out, out.sum(-1)
        return out, w


class CrossAttentionMasked(nn.Module):
    """Cross-attention (batch first, key and value one tensor) with a bool
    key padding mask and a float 2-D attention mask; per-head weights."""

    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, dropout=0.1, batch_first=True)

    def forward(self, q: torch.Tensor, kv: torch.Tensor, key_padding_mask: torch.Tensor,
                attn_mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        out, w = self.attn(q, kv, kv, key_padding_mask=key_padding_mask,
                           attn_mask=attn_mask, average_attn_weights=False)
        assert w is not None
        return out, w


class AttentionBoolMask(nn.Module):
    """Sequence first, query, key and value apart (kdim/vdim as embed_dim),
    a 3-D bool attention mask (one per batch and head) and a float key
    padding mask; no weights."""

    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, dropout=0.1)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                attn_mask: torch.Tensor, key_padding_mask: torch.Tensor) -> torch.Tensor:
        return self.attn(q, k, v, key_padding_mask=key_padding_mask, attn_mask=attn_mask,
                         need_weights=False)[0]


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


def _padding_mask(n: int, s: int) -> torch.Tensor:
    """Bool (n, s): the last key of every other sequence masked out."""
    m = torch.zeros(n, s, dtype=torch.bool)
    m[::2, -1] = True
    return m


def _bool_attn_mask(n: int, t: int, s: int) -> torch.Tensor:
    """Bool (n, t, s), random, the first key never masked (no row is all
    masked: torch's slow path makes such rows NaN)."""
    m = torch.rand(n, t, s) < 0.3
    m[..., 0] = False
    return m


# name -> (module factory, inputs for a batch size, modes, how torch compiles
# it). Dropout is random (turnout's generator is not torch's), so models with
# dropout run in train mode with p = 0 (the train-mode code path,
# deterministic).
BOTH = ("script", "trace")
MODELS: Dict[str, Tuple[Callable[[], nn.Module], Callable[[int], List[torch.Tensor]],
                        Sequence[str], Sequence[str]]] = {
    "mlp": (MLP, lambda n: [_randn(n, 8)], ("eval", "train"), BOTH),
    "cnn": (CNNBlock, lambda n: [_randn(n, 3, 10, 9)], ("eval", "train"), BOTH),
    "cells": (RecurrentCells, lambda n: [_randn(n, 5), _randn(n, 6), _randn(n, 6)],
              ("eval",), BOTH),
    "embedding": (EmbeddingClassifier,
                  lambda n: [torch.randint(0, 12, (n, 5)), torch.randint(0, 3, (n,))],
                  ("eval", "train"), BOTH),
    "transformer": (TransformerBlock, lambda n: [_randn(n, 5, 8)], ("eval", "train"), BOTH),
    # nn.MultiheadAttention, in eval mode (dropout inert; grad is enabled
    # and the parameters require grad, so the fast path is not taken: see
    # test_mha_fast_path_as_torch).
    "mha_self": (lambda: SelfAttention(batch_first=False, need_weights=True),
                 lambda n: [_randn(5, n, 8)], ("eval",), BOTH),
    "mha_self_batch_first": (lambda: SelfAttention(batch_first=True, need_weights=False),
                             lambda n: [_randn(n, 5, 8)], ("eval",), BOTH),
    "mha_masked": (CrossAttentionMasked,
                   lambda n: [_randn(n, 4, 8), _randn(n, 6, 8), _padding_mask(n, 6),
                              _randn(4, 6)], ("eval",), BOTH),
    "mha_bool_mask": (AttentionBoolMask,
                      lambda n: [_randn(4, n, 8), _randn(6, n, 8), _randn(6, n, 8),
                                 _bool_attn_mask(2 * n, 4, 6), _randn(n, 6)],
                      ("eval",), BOTH),
}


def make_model(name: str, mode: str) -> nn.Module:
    torch.manual_seed(sum(map(ord, name)))
    m = MODELS[name][0]()
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):  # statistics that are not 0 and 1
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 1.5)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.5, 0.5)
        if isinstance(mod, nn.Dropout) and mode == "train":
            mod.p = 0.0
    return m.train(mode == "train")


def make_inputs(name: str, batch: int, seed: int) -> List[torch.Tensor]:
    torch.manual_seed(seed)
    return MODELS[name][1](batch)


# ---- Lowering a module's graph ----------------------------------------------------


class ModuleView:
    """``module`` as turnout.jit.passes.lower_graph reads it: each tensor
    attribute a turnout tensor (one per dotted path; ``names`` maps its id to
    the path), each submodule a view, other attributes as they are."""

    def __init__(self, module: nn.Module, prefix: str, names: Dict[int, str],
                 tensors: Dict[str, Any]) -> None:
        self._module, self._prefix = module, prefix
        self._names, self._tensors = names, tensors

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._module, name)
        key = self._prefix + name
        if isinstance(value, nn.Module):
            return ModuleView(value, key + ".", self._names, self._tensors)
        if isinstance(value, torch.Tensor):
            if key not in self._tensors:
                self._tensors[key] = to_turnout(value)
                self._names[id(self._tensors[key])] = key
            return self._tensors[key]
        return value


def lower(text: str, module: nn.Module) -> Tuple[Any, List[Tuple[str, Any]]]:
    """torch's printed graph of ``module.forward`` (``%self`` first), parsed
    by turnout (and printed back exactly), then lowered by turnout's
    lower_graph: parameters and buffers become inputs after the model's
    own. Returns the lowered graph and the (dotted name, tensor) of the
    inputs it added."""
    graph = tj.Graph.parse(text)
    assert str(graph) == text  # printed back exactly as torch printed it
    names: Dict[int, str] = {}
    lowered, values = tj.passes.lower_graph(graph, ModuleView(module, "", names, {}))
    return lowered, [(names[id(v)], v) for v in values]


# ---- Running and comparing ----------------------------------------------------------


def to_turnout(t: torch.Tensor, requires_grad: bool = False) -> turnout.Tensor:
    u = turnout.from_numpy(t.detach().numpy().copy()).clone()
    if requires_grad:
        u.requires_grad_(True)
    return u


def close(mine: Any, theirs: torch.Tensor, what: str, tol: Dict[str, float]) -> None:
    assert mine is not None, f"{what}: turnout computed no value"
    assert tuple(mine.shape) == tuple(theirs.shape), what
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], what
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(),
                               err_msg=what, **tol)


def as_tuple(v: Any) -> tuple:
    return v if isinstance(v, tuple) else (v,)


class Reference:
    """torch's run of the scripted or traced module on one set of inputs:
    outputs, buffers afterwards, gradients of sum(out_i * w_i)."""

    def __init__(self, scripted: Any, module: nn.Module, state: Dict[str, torch.Tensor],
                 inputs: List[torch.Tensor], weights_seed: int):
        with torch.no_grad():
            for k, v in module.state_dict().items():
                v.copy_(state[k])
        module.zero_grad(set_to_none=True)
        leaves = [x.clone().requires_grad_(x.is_floating_point()) for x in inputs]
        self.outputs = as_tuple(scripted(*leaves))
        g = torch.Generator().manual_seed(weights_seed)
        self.weights = [torch.randn(o.shape, generator=g) for o in self.outputs]
        loss = sum((o * w).sum() for o, w in zip(self.outputs, self.weights))
        loss.backward()
        self.input_grads = [x.grad for x in leaves]
        self.param_grads = {n: p.grad for n, p in module.named_parameters()}
        self.buffers = {n: b.detach().clone() for n, b in module.named_buffers()}


def run_turnout(executor: Any, inputs: List[torch.Tensor],
                params: List[Tuple[str, torch.Tensor]], state: Dict[str, torch.Tensor],
                module: nn.Module, ref: Reference, label: str) -> None:
    names = dict(module.named_parameters())
    xs = [to_turnout(x, x.is_floating_point()) for x in inputs]
    ps = [to_turnout(state[n], n in names) for n, _ in params]
    outputs = as_tuple(executor(*xs, *ps))
    assert len(outputs) == len(ref.outputs), label
    for i, (mine, theirs) in enumerate(zip(outputs, ref.outputs)):
        close(mine, theirs, f"{label}: output {i}", OUT_TOL)
    for (n, _), p in zip(params, ps):  # mutated buffers (running statistics)
        if n in ref.buffers:
            close(p, ref.buffers[n], f"{label}: buffer {n}", OUT_TOL)
    loss = None
    for o, w in zip(outputs, ref.weights):
        term = (o * to_turnout(w)).sum()
        loss = term if loss is None else loss + term
    loss.backward()
    for i, (x, g) in enumerate(zip(xs, ref.input_grads)):
        if g is not None:
            close(x.grad, g, f"{label}: gradient of input {i}", GRAD_TOL)
    for (n, _), p in zip(params, ps):
        if n in names:
            g = ref.param_grads[n]
            if g is None:  # unused by this mode's graph: no gradient either
                assert p.grad is None or not p.grad.numpy().any(), (label, n)
                continue
            close(p.grad, g, f"{label}: gradient of {n}", GRAD_TOL)


def scripted_and_lowered(name: str, how: str, mode: str):
    module = make_model(name, mode)
    example = make_inputs(name, 3, 0)
    if how == "script":
        scripted = torch.jit.script(module)
    else:
        scripted = torch.jit.trace(module, tuple(example), check_trace=False)
    graph, params = lower(str(scripted.inlined_graph), module)
    return module, scripted, graph, params


CASES = [(name, how, mode) for name, (_, _, modes, hows) in MODELS.items()
         for how in hows for mode in modes]


@pytest.mark.parametrize("name,how,mode", CASES,
                         ids=[f"{n}-{h}-{m}" for n, h, m in CASES])
def test_model(name: str, how: str, mode: str, capsys) -> None:
    module, scripted, graph, params = scripted_and_lowered(name, how, mode)
    text = str(graph)
    with capsys.disabled():
        print(f"\n---- {name}, {how}d, {mode} mode: torch 1.13's graph, lowered\n{text}")
    assert str(tj.Graph.parse(text)) == text
    state = {k: v.detach().clone() for k, v in module.state_dict().items()}

    optimized = tj.GraphExecutor(graph)
    sized = tj.GraphExecutor(graph, specialize_sizes=True)
    plain = tj.GraphExecutor(graph, optimize=False)
    # Traced graphs hold the example's sizes (view shapes, loop counts):
    # they run on the example's batch size only.
    batches = [3, 3] if how == "trace" else [3, 5]
    runs = [(optimized, 3, "optimised"), (optimized, 3, "optimised again"),
            (sized, batches[0], "size-specialised"),
            (sized, batches[1], "size-specialised, another batch"),
            (plain, 3, "unoptimised")]
    for k, (executor, batch, label) in enumerate(runs):
        inputs = make_inputs(name, batch, seed=100 + k)
        ref = Reference(scripted, module, state, inputs, weights_seed=k)
        run_turnout(executor, inputs, params, state, module, ref,
                    f"{name} {how} {mode}, {label}")
    assert len(optimized.get_debug_state().plans) == 1
    assert all(p.optimized for p in optimized.get_debug_state().plans)
    assert len(sized.get_debug_state().plans) == len(set(batches))
    assert not plain.get_debug_state().plans[0].optimized


class TensorOnlyNet(nn.Module):
    """Reads only tensors, through submodules (torch's lower_graph refuses
    other attributes), one of them twice."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 5), nn.Linear(5, 3))
        self.scale = nn.Parameter(torch.rand(3) + 0.5)
        self.register_buffer("shift", torch.randn(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x) * self.scale + self.shift + self.scale


def test_lower_graph_as_torchs() -> None:
    # turnout's lower_graph and torch's _jit_pass_lower_graph on the same
    # graph: the same attributes become inputs (once each), after the
    # graph's own, and the two lowered graphs compute the same. (The order
    # differs: turnout's is the order of first reads, torch's that of its
    # work list.)
    torch.manual_seed(3)
    module = TensorOnlyNet()
    scripted = torch.jit.script(module)
    graph = scripted.inlined_graph
    theirs, their_values = torch._C._jit_pass_lower_graph(graph, scripted._c)
    mine, params = lower(str(graph), module)
    assert [n for n, _ in params] == ["body.0.weight", "body.0.bias", "body.1.weight",
                                      "body.1.bias", "scale", "shift"]
    state = module.state_dict(keep_vars=True)
    assert sorted(id(v) for v in their_values) == sorted(id(state[n]) for n, _ in params)
    assert len(list(theirs.inputs())) == len(mine.inputs()) == 1 + len(params)
    assert "prim::GetAttr" not in str(mine)
    x = torch.randn(2, 4)
    fn = torch._C._create_function_from_graph("lowered_by_torch", theirs)
    expected = fn(x, *their_values)
    got = tj.GraphExecutor(mine)(to_turnout(x), *[v for _, v in params])
    close(got, expected, "lowered by turnout and by torch", OUT_TOL)


class FastPathAttention(nn.Module):
    """Self-attention that nn.MultiheadAttention's fast path takes when no
    gradient is wanted: batch first, dropout 0, an even number of heads."""

    def __init__(self, need_weights: bool) -> None:
        super().__init__()
        self.need_weights = need_weights
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x: torch.Tensor, key_padding_mask: Optional[torch.Tensor]
                ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        return self.attn(x, x, x, key_padding_mask=key_padding_mask,
                         need_weights=self.need_weights)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_fast_path_as_torch(need_weights: bool) -> None:
    # Without grad, the scripted graph calls aten::_native_multi_head_attention
    # in turnout (the dispatch trace shows it), as torch's module does; with
    # grad, it does not. Outputs as torch's, a row whose keys are all masked
    # NaN in both (then the weights too).
    torch.manual_seed(11)
    module = FastPathAttention(need_weights).eval()
    scripted = torch.jit.script(module)
    graph, params = lower(str(scripted.inlined_graph), module)
    executor = tj.GraphExecutor(graph)
    x = torch.randn(3, 5, 8)
    mask = torch.zeros(3, 5, dtype=torch.bool)
    mask[0, 3:] = True
    mask[2, :] = True  # every key of the third sequence masked
    # torch's eager module is the reference: torch 1.13's scripted fast path
    # fails without a mask or without weights ("strides() called on an
    # undefined Tensor").
    state = module.state_dict()
    for kpm in (None, mask):
        with torch.no_grad():
            expected = module(x, kpm)
        args = [to_turnout(x), None if kpm is None else to_turnout(kpm)]
        for grad in (False, True):
            # With grad, the parameters require it (no fast path).
            ps = [to_turnout(state[n], grad) for n, _ in params]
            with turnout.debug.dispatch_trace(io.StringIO()) as trace:
                if grad:
                    got = executor(*args, *ps)
                else:
                    with turnout.no_grad():
                        got = executor(*args, *ps)
            ops = {e["op"] for e in trace.events}
            assert ("aten::_native_multi_head_attention" in ops) == (not grad), ops
            label = f"need_weights={need_weights}, mask={kpm is not None}, grad={grad}"
            close(got[0], expected[0], label, OUT_TOL)
            if need_weights:
                close(got[1], expected[1], label + ": weights", OUT_TOL)
            else:
                assert expected[1] is None and got[1] is None, label


def test_unchecked_cast_of_none_in_cross_entropy_parses() -> None:
    # Regression: torch's inlined F.cross_entropy holds
    # `%b : bool = prim::unchecked_cast(%none)` in a branch that never runs;
    # turnout's lint refused the graph.
    def loss(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(x, y)

    text = str(torch.jit.script(loss).inlined_graph)
    assert "prim::unchecked_cast" in text
    g = tj.Graph.parse(text)
    x, y = torch.randn(4, 3), torch.tensor([0, 2, 1, 1])
    got = tj.GraphExecutor(g)(to_turnout(x), to_turnout(y))
    close(got, loss(x, y), "cross_entropy", OUT_TOL)


def test_traced_scopes_round_trip() -> None:
    # Regression: traced module graphs print ", scope: __module.l1" after a
    # node's inputs; turnout's parser refused them.
    module = MLP().eval()
    traced = torch.jit.trace(module, (torch.randn(2, 8),))
    text = str(traced.inlined_graph)
    assert ", scope: __module.l1" in text
    assert str(tj.Graph.parse(text)) == text
    assert ", scope: __module.l1" in str(lower(text, module)[0])


def test_cell_operators_have_torchs_schemas() -> None:
    for qualname in ("lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"):
        mine = getattr(turnout.ops.aten, qualname).default._schema
        theirs = getattr(torch.ops.aten, qualname).default._schema
        assert str(mine) == str(theirs)


def test_cell_errors_as_torch() -> None:
    x, h = torch.randn(3, 5), torch.randn(3, 6)
    w_ih, w_hh = torch.randn(24, 5), torch.randn(24, 6)
    cases = [
        ("lstm_cell", (torch.randn(3, 4), [h, h], w_ih, w_hh)),
        ("lstm_cell", (x, [torch.randn(2, 6), h], w_ih, w_hh)),
        ("lstm_cell", (x, [h, torch.randn(3, 7)], w_ih, w_hh)),
        ("lstm_cell", (x, [h], w_ih, w_hh)),
        ("gru_cell", (x, torch.randn(3, 7), torch.randn(18, 5), torch.randn(18, 6))),
    ]
    for op, args in cases:
        with pytest.raises(RuntimeError) as theirs:
            getattr(torch.ops.aten, op)(*args)
        mine_args = [[to_turnout(t) for t in a] if isinstance(a, list) else to_turnout(a)
                     for a in args]
        with pytest.raises(Exception) as mine:
            getattr(turnout.ops.aten, op)(*mine_args)
        assert str(theirs.value).splitlines()[0] in str(mine.value), (op, mine.value)


def test_unsafe_chunk_pieces_modified_in_place_as_torch() -> None:
    # Regression: a traced nn.LSTMCell runs sigmoid_ on each piece of
    # unsafe_chunk; turnout refused the in-place change of a view, then
    # reported the pieces' shared version counter as a modified saved value.
    def step(lib: Any, x: Any) -> List[Any]:
        pieces = lib.ops.aten.unsafe_chunk.default(x * 2.0, 3, 1)
        a = pieces[0].sigmoid_()
        b = pieces[1].tanh_()
        c = pieces[2].sigmoid_()
        return [a * b + c, a]

    x = torch.randn(2, 6)
    ours_x = to_turnout(x, requires_grad=True)
    theirs_x = x.clone().requires_grad_()
    ours, theirs = step(turnout, ours_x), step(torch, theirs_x)
    for o, t in zip(ours, theirs):
        close(o, t, "unsafe_chunk pieces", OUT_TOL)
    (ours[0] * ours[1]).sum().backward()
    (theirs[0] * theirs[1]).sum().backward()
    close(ours_x.grad, theirs_x.grad, "gradient through the pieces", GRAD_TOL)
