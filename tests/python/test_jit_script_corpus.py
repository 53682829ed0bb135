"""A corpus of small TorchScript functions, scripted by torch 1.13 at test
time: each graph as torch prints it parses in turnout, prints back exactly,
and runs (interpreter, GraphExecutor twice, and inlined) to torch's results,
including the caller's lists that the function mutates.

Categories: containers (lists, tuples, dicts), strings, optionals and
unions, scalars and ranges, tensor metadata, CallFunction, traced graphs
(refined tensor types inside tuples), fork/wait.
Functions that turnout cannot run yet are listed in ``KNOWN_FAILURES`` with
the reason; they are strict xfails, so one that starts to pass fails the
test until it is taken off the list. ``test_summary`` prints the counts by
category (pytest -s).
"""

from __future__ import annotations

import math
import re
import warnings
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import pytest
import torch

import turnout
import turnout.jit as tj

CASES: list[tuple[str, Callable[..., Any], Callable[[], tuple]]] = []


def case(category: str, make_args: Callable[[], tuple] = lambda: (),
         trace: bool = False):
    def register(fn):
        fn._trace = trace
        CASES.append((category, fn, make_args))
        return fn
    return register


def t23() -> torch.Tensor:
    return torch.arange(6.0).reshape(2, 3)


# ---- containers: lists ----------------------------------------------------

@case("containers", lambda: ([1, 2, 3],))
def list_append_pop(x: List[int]):
    x.append(4)
    y = x.pop()
    z = x.pop(0)
    return x, y, z


@case("containers", lambda: ([5, 1, 4],))
def list_set_item_negative(x: List[int]):
    x[-1] = 7
    x[0] = x[1] + 1
    return x


@case("containers", lambda: ([1, 2],))
def list_insert_clamps(x: List[int]):
    x.insert(0, 9)
    x.insert(-1, 8)
    x.insert(100, 7)
    x.insert(-100, 6)
    return x


@case("containers", lambda: ([3, 1, 2],))
def list_contains_index(x: List[int]):
    return 2 in x, 5 in x, x.index(1)


@case("containers", lambda: ([3.5, -1.0, 2.0],))
def list_min_max_float(x: List[float]):
    return min(x), max(x)


@case("containers", lambda: ([3, 1, 2], [3, 1, 5]))
def list_min_max_lists(a: List[int], b: List[int]):
    return min(a, b), max(a, b), min(a), max(b)


@case("containers", lambda: ([1, 2, 3],))
def list_alias_mutation(x: List[int]):
    y = x
    y.append(10)
    y[0] = -1
    return len(x)


@case("containers", lambda: ([1, 2, 3],))
def list_loop_sum(x: List[int]):
    s = 0
    for v in x:
        s += v
    return s


@case("containers", lambda: ([1, 2, 3],))
def list_loop_build(x: List[int]):
    out: List[int] = []
    for i in range(len(x)):
        out.append(x[i] * i)
    return out


@case("containers", lambda: (["a", "b"],))
def list_of_str(x: List[str]):
    x.append("c")
    return "b" in x, x.index("c"), len(x)


@case("containers", lambda: ([1, 2], [3]))
def list_concat_extend(a: List[int], b: List[int]):
    c = a + b
    a.extend(b)
    return c, a


@case("containers", lambda: ([1, 2, 3],))
def list_clear_reverse(x: List[int]):
    y = list(x)
    x.reverse()
    y.clear()
    return x, y


@case("containers", lambda: ([1, 2, 3],))
def list_pop_empty_raises(x: List[int]):
    y: List[int] = []
    return y.pop()


@case("containers", lambda: ([1, 2, 3],))
def list_index_out_of_range(x: List[int]):
    x[5] = 1
    return x


@case("containers", lambda: ((1, 2.5, "s"),))
def tuple_index(t: Tuple[int, float, str]):
    return t[0], t[1], t[-1]


@case("containers", lambda: (t23(),))
def tuple_constant(x: torch.Tensor):
    a = (2.5, "s")
    b = ((1, 2.0), True, None)
    return a, b


@case("containers", lambda: (t23(),))
def tuple_loop_index(x: torch.Tensor):
    t = (1, 2, 3)
    s = 0
    for i in range(3):
        s += t[i]
    return s


# (A graph's inputs carry no defaults: the argument is passed.)
@case("containers", lambda: (1,))
def dict_construct_set(x: int = 1):
    d = {"a": 1}
    d["b"] = 2
    return d


@case("containers", lambda: (3,))
def dict_contains_getitem(x: int):
    d = {"a": x, "b": 2}
    return "a" in d, d["a"], len(d)


@case("containers", lambda: (3,))
def dict_keys_values(x: int):
    d = {"a": x, "b": 2}
    return list(d.keys()), list(d.values())


# ---- containers: dicts --------------------------------------------------------

@case("dicts", lambda: ({"a": 1, "b": 2},))
def dict_str_keys_methods(d: Dict[str, int]):
    d["c"] = 3
    g = d.get("z")
    h = d.get("a", 9)
    p = d.pop("b")
    q = d.pop("zz", -1)
    s = d.setdefault("a", 100)
    t = d.setdefault("n", 7)
    return d, g, h, p, q, s, t, list(d.items()), list(d.values())


@case("dicts", lambda: ({1: 1.5, 7: -2.0},))
def dict_int_keys_float_values(d: Dict[int, float]):
    d[3] = 0.25
    total = 0.0
    for k in d:
        total += d[k] * k
    return total, list(d.keys()), 7 in d, 8 in d, len(d)


@case("dicts", lambda: (t23(),))
def dict_tensor_values(x: torch.Tensor):
    d: Dict[str, torch.Tensor] = {"x": x, "y": x * 2}
    d["z"] = d["x"] + d["y"]
    out = torch.zeros(3)
    for k, v in d.items():
        out = out + v.sum(0)
    return d, out


@case("dicts", lambda: (t23(),))
def dict_tensor_keys_identity(x: torch.Tensor):
    y = x.clone()
    d = {x: 1}
    d[y] = 2
    return d[x], d[y], len(d), x in d


@case("dicts", lambda: (1,))
def dict_alias_mutation(x: int):
    d = {"a": x}
    e = d
    e["b"] = 2
    e.pop("a")
    return d, len(d)


def helper_fill(d: Dict[str, int], n: int) -> int:
    for i in range(n):
        d[str(i)] = i
    return len(d)


@case("dicts", lambda: (3,))
def dict_mutation_seen_by_caller(n: int):
    d: Dict[str, int] = {}
    m = helper_fill(d, n)
    return m, d


@case("dicts", lambda: (2,))
def dict_insertion_order(x: int):
    d = {"b": 1, "a": 2, "c": 3}
    del d["a"]
    d["a"] = x
    d["b"] = 10
    return list(d.keys()), list(d.values()), str(d)


@case("dicts", lambda: ({"a": 1},))
def dict_update_clear_copy(d: Dict[str, int]):
    e = d.copy()
    f = dict(d)
    d.update({"b": 2, "a": 5})
    e.clear()
    return d, e, f


@case("dicts", lambda: (2.5, True))
def dict_float_bool_keys(x: float, b: bool):
    d = {1.0: "one", x: "x"}
    e = {True: 1, False: 0}
    return d[x], d[1.0], e[b], e[not b], list(e.items())


@case("dicts", lambda: (3,))
def dict_from_pairs(x: int):
    d = dict([("a", x), ("b", 2), ("a", 4)])
    return d


@case("dicts", lambda: ({"a": 1},))
def dict_missing_key_raises(d: Dict[str, int]):
    return d["missing"]


@case("dicts", lambda: ({1: 2},))
def dict_pop_missing_raises(d: Dict[int, int]):
    return d.pop(3)


@case("dicts", lambda: ({"a": 1},))
def dict_delete_missing_raises(d: Dict[str, int]):
    del d["q"]
    return d


@case("dicts", lambda: (1,))
def dict_popitem(x: int):
    d = {"a": x, "b": 2}
    k, v = d.popitem()
    e: Dict[str, int] = {}
    return k, v, d, e.popitem()


@case("dicts", lambda: ({"a": 1, "b": 2},))
def dict_isinstance_in_union(x: Union[Dict[str, int], int]):
    if isinstance(x, Dict[str, int]):
        return len(x)
    return x


@case("dicts", lambda: (5,))
def dict_isinstance_in_union_int(x: Union[Dict[str, int], int]):
    if isinstance(x, Dict[str, int]):
        return len(x)
    return x


@case("dicts", lambda: ({"k": [1, 2]},))
def dict_of_lists(d: Dict[str, List[int]]):
    d["k"].append(3)
    d["j"] = [0]
    return d


# ---- strings ----------------------------------------------------------------

@case("strings", lambda: (2.5, 3))
def str_of_numbers(a: float, b: int):
    return str(a), str(b), str(True), str(1.0), str(0.1), str(1e20)


@case("strings", lambda: ([1.5, 2.0], ["a", "b"]))
def str_of_lists(a: List[float], b: List[str]):
    return str(a), str(b), str([True, False])


@case("strings", lambda: ((1, "x"), None))
def str_of_tuple_optional(t: Tuple[int, str], o: Optional[int]):
    return str(t), str(o)


@case("strings", lambda: (2.5, ["a"], (1, "x")))
def format_mixed(a: float, c: List[str], d: Tuple[int, str]):
    return "{} {} {}!".format(a, c, d), "x{}y".format(1), "{}".format(None)


@case("strings", lambda: ("ab", "cd"))
def str_ops(a: str, b: str):
    c = a + b
    return c, len(c), a == b, a != b, a < b


@case("strings", lambda: ("  Hello, World , x ", ","))
def str_methods(s: str, sep: str):
    t = s.strip()
    out: List[str] = []
    for p in t.split(sep):
        if not p.isspace():
            out.append(p.strip().lower())
    return ("-".join(out), t.startswith("Hello"), t.find("o"), t[1:4],
            t.replace("l", "L", 2), ord(t[0]), "lo" in t, t.zfill(20),
            t.count("o"), t.split(), t.upper().center(21, "*"))


@case("strings", lambda: (3,))
def warn_runs(x: int):
    warnings.warn("careful")
    return x + 1


@case("strings", lambda: (t23(),))
def str_of_dtype_device(x: torch.Tensor):
    return str(x.dtype), str(x.device)


# ---- optionals and unions ---------------------------------------------------

@case("optionals", lambda: (t23(), None))
def optional_is_none(x: torch.Tensor, k: Optional[int]):
    if k is None:
        return x
    return x * k


@case("optionals", lambda: (t23(), 3))
def optional_is_not_none(x: torch.Tensor, k: Optional[int]):
    if k is not None:
        return x * k
    return x


@case("optionals", lambda: (None,))
def optional_default(k: Optional[float]):
    v = 2.0
    if k is not None:
        v = k
    return v


@case("optionals", lambda: (4,))
def union_isinstance_int(x: Union[torch.Tensor, int]):
    if isinstance(x, int):
        return x + 1
    return 3


@case("optionals", lambda: (t23(),))
def union_isinstance_tensor(x: Union[torch.Tensor, int]):
    if isinstance(x, torch.Tensor):
        return x.sum()
    return torch.zeros(1)


@case("optionals", lambda: (2.5,))
def union_of_three(x: Union[torch.Tensor, int, float]):
    if isinstance(x, (int, float)):
        return 1
    return 2


@case("optionals", lambda: (None, [1, 2]))
def optional_list(a: Optional[List[int]], b: Optional[List[int]]):
    n = 0
    if a is not None:
        n += len(a)
    if b is not None:
        n += len(b)
    return n


# ---- scalars and ranges -------------------------------------------------------

@case("scalars", lambda: (-7, 3))
def python_mod_floordiv_int(a: int, b: int):
    return a % b, a // b, -a % b, a % -b, a // -b


@case("scalars", lambda: (-7.5, 2.0))
def python_mod_floordiv_float(a: float, b: float):
    return a % b, a // b, a % 3, 7 // b


@case("scalars", lambda: (2.7, -2.2))
def floor_ceil(a: float, b: float):
    return math.floor(a), math.floor(b), math.ceil(a), math.ceil(b)


@case("scalars", lambda: (0.75, 3))
def math_functions_of_numbers(x: float, n: int):
    return (math.sqrt(x), math.sqrt(n), math.exp(x), math.exp(n), math.log(x),
            math.log(n), math.log10(x), math.log1p(n), math.expm1(x),
            math.sin(x), math.cos(n), math.tan(x), math.asin(x), math.acos(x),
            math.atan(n), math.sinh(x), math.cosh(x), math.tanh(n),
            math.asinh(x), math.acosh(n), math.atanh(x), math.erf(x),
            math.erfc(n), math.fabs(-n), math.gamma(x), math.lgamma(n),
            math.degrees(x), math.radians(n), round(x), round(n),
            math.isnan(x), math.isinf(x), math.isfinite(x),
            math.factorial(n), torch.angle(x), torch.angle(-n))


@case("scalars", lambda: (-1.0, 21))
def math_domain_errors_are_nan_or_inf(x: float, n: int):
    # C's semantics, as TorchScript's: nan and inf, not ValueError; round
    # half to even; factorial past 20 wraps around int64.
    return (math.sqrt(x), math.log(x + 1.0), math.log(0.0 * x), math.acos(-2.0 * x),
            math.gamma(0.0 * x), round(-0.5 * x), round(2.5), round(-2.5),
            torch.angle(0.0 * x), math.isnan(math.sqrt(x)),
            math.isinf(math.exp(-1000.0 * x)), math.factorial(n))


@case("scalars", lambda: (-3,))
def math_factorial_of_negative_raises(n: int):
    return math.factorial(n)


@case("scalars", lambda: (-3, -2.5))
def abs_min_max_numbers(a: int, b: float):
    return abs(a), abs(b), min(a, 2), max(b, 1.0), min(a, b), max(a, b)


@case("scalars", lambda: (True, False))
def bool_ne(a: bool, b: bool):
    return a != b, a == b, a != a


@case("scalars", lambda: (0, 2.0, t23()))
def bool_of(a: int, b: float, x: torch.Tensor):
    return bool(a), bool(b), bool(x[0, 1])


@case("scalars", lambda: (3, 2.5))
def mixed_arithmetic(a: int, b: float):
    return a + b, a - b, a * b, a / b, b < a, a == 3.0, a ** 2, b ** 2


@case("scalars", lambda: (2, 11, 3))
def range_with_step(lo: int, hi: int, step: int):
    out: List[int] = []
    for i in range(lo, hi, step):
        out.append(i)
    return out


@case("scalars", lambda: (10, 2, -3))
def range_negative_step(lo: int, hi: int, step: int):
    s = 0
    for i in range(lo, hi, step):
        s = s * 10 + i
    return s


# (int // 0 and int % 0 are left out: torch 1.13's interpreter dies of
# SIGFPE on them; turnout raises, see script_builtins_test.)


# ---- tensor metadata -------------------------------------------------------------

@case("metadata", lambda: (t23(),))
def numel_contiguous(x: torch.Tensor):
    return x.numel(), x.is_contiguous(), x.t().is_contiguous(), x.dim()


@case("metadata", lambda: (t23(),))
def dtype_device(x: torch.Tensor):
    return x.dtype, x.device


@case("metadata", lambda: (3,))
def tensor_from_list(n: int):
    a = torch.tensor([1, 2, n])
    b = torch.tensor([[1.5, 2.0], [3.0, 4.0]])
    c = torch.tensor([True, False])
    return a, b, c


@case("metadata", lambda: (2.5,))
def tensor_from_scalar(v: float):
    return torch.tensor(v), torch.tensor(3), torch.tensor([v], dtype=torch.float64)


# ---- CallFunction ----------------------------------------------------------------


def helper_double(x: torch.Tensor) -> torch.Tensor:
    return x + x


def helper_scale(x: torch.Tensor, k: int) -> torch.Tensor:
    return helper_double(x) * k


def helper_count(xs: List[int]) -> int:
    xs.append(0)
    return len(xs)


@case("callfunction", lambda: (t23(),))
def call_helper(x: torch.Tensor):
    return helper_double(x)


@case("callfunction", lambda: (t23(),))
def call_nested_helpers(x: torch.Tensor):
    return helper_scale(x, 3) - helper_double(x)


@case("callfunction", lambda: ([1, 2],))
def call_mutates_callers_list(xs: List[int]):
    n = helper_count(xs)
    return n, xs


@case("callfunction", lambda: (torch.arange(6.0).reshape(2, 3),))
def call_layer_norm(x: torch.Tensor):
    return torch.nn.functional.layer_norm(x, [3])


@case("callfunction", lambda: (t23(),))
def call_relu_functional(x: torch.Tensor):
    return torch.nn.functional.relu(x)


# ---- traced (refined tensor types, inside tuples too) -----------------------


@case("traced", lambda: (torch.arange(24.0).reshape(3, 8),), trace=True)
def traced_tuple(x: torch.Tensor):
    return x + 1, x * 2


@case("traced", lambda: (torch.arange(6.0).reshape(2, 3),), trace=True)
def traced_nested_tuple(x: torch.Tensor):
    return (x.sum(), (x.t(), x.relu()))


# ---- fork / wait -------------------------------------------------------------------


def forked(x: torch.Tensor) -> torch.Tensor:
    return x.neg()


@case("fork", lambda: (t23(),))
def fork_wait(x: torch.Tensor):
    fut = torch.jit.fork(forked, x)
    return torch.jit.wait(fut)


@case("fork", lambda: (t23(),))
def fork_two(x: torch.Tensor):
    a = torch.jit.fork(forked, x)
    b = torch.jit.fork(forked, x + 1)
    return torch.jit.wait(a) + torch.jit.wait(b)


@case("fork", lambda: (t23(),))
def fork_list_of_futures(x: torch.Tensor):
    futs = [torch.jit.fork(forked, x)]
    return torch.jit.wait(futs[0])


@case("fork", lambda: (t23(),))
def fork_futures_in_loop(x: torch.Tensor):
    futs: List[torch.jit.Future[torch.Tensor]] = []
    for i in range(3):
        futs.append(torch.jit.fork(forked, x + i))
    out = torch.zeros(2, 3)
    for f in futs:
        out = out + torch.jit.wait(f)
    return out


def forked_pair(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    return x.neg(), x * 2


@case("fork", lambda: (t23(),))
def fork_tuple_result(x: torch.Tensor):
    fut = torch.jit.fork(forked_pair, x)
    a, b = torch.jit.wait(fut)
    return a + b


def wait_first(futs: List[torch.jit.Future[torch.Tensor]]) -> torch.Tensor:
    return torch.jit.wait(futs[0])


@case("fork", lambda: (t23(),))
def fork_futures_passed_to_callee(x: torch.Tensor):
    futs = [torch.jit.fork(forked, x), torch.jit.fork(forked, x * 3)]
    return wait_first(futs) + torch.jit.wait(futs[1])


# Why the others fail (strict xfails: one that passes must come off the list).
KNOWN_FAILURES = {
}


# ---- the checks --------------------------------------------------------------------

def to_turnout(v: Any) -> Any:
    if isinstance(v, torch.Tensor):
        dtype = {torch.float32: turnout.float32, torch.float64: turnout.float64,
                 torch.int64: turnout.int64, torch.bool: turnout.bool}[v.dtype]
        return turnout.tensor(v.tolist(), dtype=dtype)
    if isinstance(v, list):
        return [to_turnout(e) for e in v]
    if isinstance(v, tuple):
        return tuple(to_turnout(e) for e in v)
    if isinstance(v, dict):
        return {to_turnout(k): to_turnout(e) for k, e in v.items()}
    return v


def normalize(v: Any) -> Any:
    """Comparable plain Python: tensors as (dtype name, values)."""
    if isinstance(v, torch.Tensor):
        return ("tensor", str(v.dtype).replace("torch.", ""), v.tolist())
    if isinstance(v, turnout.Tensor):
        return ("tensor", str(v.dtype).replace("turnout.", ""), v.tolist())
    if isinstance(v, torch.dtype):
        return ("dtype", str(v).replace("torch.", ""))
    if isinstance(v, torch.device):
        return ("device", str(v))
    if type(v).__name__ == "device":
        return ("device", str(v))
    if isinstance(v, (list, tuple)):
        return type(v)(normalize(e) for e in v)
    if isinstance(v, dict):  # in order: the order is part of the result
        return ("dict", tuple((normalize(k), normalize(e))
                              for k, e in v.items()))
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return v


def same(a: Any, b: Any) -> bool:
    a, b = normalize(a), normalize(b)
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


_FUNCTION_NAME = re.compile(r'prim::Constant\[name="([A-Za-z_0-9]+)"\]')


def define_callees(cu: tj.CompilationUnit, text: str, scope: dict) -> None:
    """Defines in ``cu`` every function a Function constant of ``text``
    names, from torch's own graph of it (recursively)."""
    for name in _FUNCTION_NAME.findall(text):
        if name in cu.function_names():
            continue
        fn = scope.get(name) or getattr(torch.nn.functional, name, None)
        if fn is None:
            raise LookupError(f"no Python function named {name}")
        callee = str(torch.jit.script(fn).graph)
        cu.define(name, callee)
        define_callees(cu, callee, scope)


def torch_result(fn: Callable[..., Any], args: tuple) -> tuple[str, Any]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", fn(*args)
    except Exception as e:  # torch.jit.Error and friends
        return "error", e


def check(fn: Callable[..., Any], make_args: Callable[[], tuple]) -> None:
    if fn._trace:
        scripted = torch.jit.trace(fn, make_args())
    else:
        scripted = torch.jit.script(fn)
    text = str(scripted.graph)
    cu = tj.CompilationUnit()
    define_callees(cu, text, fn.__globals__)
    g = tj.Graph.parse(text, compilation_unit=cu)
    # Round trip: exactly torch's text.
    assert str(g) == text
    # torch's own inlined graph parses and prints back too.
    torch_inlined_text = str(scripted.inlined_graph)
    torch_inlined = tj.Graph.parse(torch_inlined_text, compilation_unit=cu)
    assert str(torch_inlined) == torch_inlined_text
    torch_args = make_args()
    kind, expected = torch_result(scripted, torch_args)
    inlined = g.copy()
    tj.passes.inline_calls(inlined)
    executor = tj.GraphExecutor(g)
    runners = [("interpreter", lambda *a: tj.run(g, *a)),
               ("executor", executor), ("executor again", executor),
               ("inlined", lambda *a: tj.run(inlined, *a)),
               ("torch's inlined", lambda *a: tj.run(torch_inlined, *a))]
    for label, run in runners:
        args = to_turnout(make_args())
        if kind == "error":
            with pytest.raises(Exception):
                run(*args)
            continue
        got = run(*args)
        assert same(got, expected), (label, got, expected)
        # Mutations of the caller's values, as torch's.
        assert same(args, torch_args), (label, "mutated inputs", args,
                                        torch_args)


def params():
    out = []
    for category, fn, make_args in CASES:
        marks = []
        if fn.__name__ in KNOWN_FAILURES:
            marks.append(pytest.mark.xfail(reason=KNOWN_FAILURES[fn.__name__],
                                           strict=True))
        out.append(pytest.param(fn, make_args, id=f"{category}-{fn.__name__}",
                                marks=marks))
    return out


@pytest.mark.parametrize("fn,make_args", params())
def test_corpus(fn, make_args):
    check(fn, make_args)


def test_summary(capsys):
    """Counts by category, printed; every failure is a known one."""
    counts: dict[str, list[int]] = {}
    unexpected = []
    for category, fn, make_args in CASES:
        c = counts.setdefault(category, [0, 0])
        c[1] += 1
        try:
            check(fn, make_args)
            c[0] += 1
        except Exception as e:  # noqa: BLE001 - a summary of every failure
            if fn.__name__ not in KNOWN_FAILURES:
                unexpected.append((fn.__name__, repr(e)[:300]))
    with capsys.disabled():
        print("\ncorpus: " + ", ".join(
            f"{k} {v[0]}/{v[1]}" for k, v in counts.items()))
    assert not unexpected


# The builtins jit/runtime/script_builtins.cc registers, each with torch
# 1.13's schema (torch._C._jit_get_all_schemas() is the oracle).
BUILTINS = [
    "aten::append.t", "aten::_set_item.t", "aten::insert.t", "aten::pop.t",
    "aten::clear.t", "aten::reverse.t", "aten::extend.t", "aten::list.t",
    "aten::copy.t", "aten::add.t", "aten::__contains__.int_list",
    "aten::__contains__.float_list", "aten::__contains__.str_list",
    "aten::index.list_int", "aten::index.list_str", "aten::count.int",
    "aten::str", "aten::format", "aten::warn", "aten::len.str",
    "aten::add.str", "aten::eq.str", "aten::__is__", "aten::__isnot__",
    "aten::Bool.Tensor", "aten::Bool.int", "aten::Bool.float",
    "aten::remainder.int", "aten::remainder.float", "aten::floordiv.int_float",
    "aten::floor.float", "aten::ceil.float", "aten::add.int_float",
    "aten::lt.float_int", "aten::eq.bool", "aten::ne.bool", "aten::pow.int",
    "aten::numel", "aten::is_contiguous", "aten::__range_length",
    "aten::__derive_index", "aten::tensor", "aten::tensor.float",
    "prim::unchecked_cast", "prim::TupleIndex", "prim::device", "prim::dtype",
    "prim::abs.int", "prim::min.int", "prim::max.self_int",
    "prim::min.int_list", "prim::max.float_int",
    "aten::dict",
] + [
    # TorchScript's math functions of numbers (jit/runtime/math_builtins.cc).
    f"aten::{name}.{t}"
    for name in ["acos", "acosh", "angle", "asin", "asinh", "atan", "atanh",
                 "cos", "cosh", "degrees", "erf", "erfc", "exp", "expm1",
                 "fabs", "gamma", "lgamma", "log", "log10", "log1p",
                 "radians", "round", "sin", "sinh", "sqrt", "tan", "tanh"]
    for t in ["int", "float"]
] + ["aten::isnan.float", "aten::isinf.float", "aten::isfinite.float",
     "aten::factorial.int"] + [
    # The dict builtins (jit/runtime/dict_builtins.cc), for every key type
    # but complex.
    f"aten::{name}{k}"
    for k in ["str", "int", "bool", "float", "Tensor"]
    for name in ["__getitem__.Dict_", "_set_item.", "__contains__.",
                 "len.Dict_", "keys.", "values.", "items.", "get.",
                 "get.default_", "pop.Dict_", "pop.Dict_default_", "popitem.",
                 "Delete.Dict_", "setdefault.", "update.", "clear.",
                 "copy.Dict_", "dict.", "dict.Dict_"]
]


def test_builtins_have_torchs_schemas():
    torch_schemas = {}
    for s in torch._C._jit_get_all_schemas():
        name = s.name + ("." + s.overload_name if s.overload_name else "")
        torch_schemas[name] = str(s)
    for qualified in BUILTINS:
        ns_name, _, overload = qualified.partition(".")
        ns, name = ns_name.split("::")
        packet = getattr(getattr(turnout.ops, ns), name)
        op = getattr(packet, overload or "default")
        assert str(op._schema) == torch_schemas[qualified], qualified


# torch 1.13's errors for dicts, message for message: torch's interpreter
# ends its error with "RuntimeError: <message>"; turnout's names the node.
DICT_ERRORS = [dict_missing_key_raises, dict_pop_missing_raises,
               dict_delete_missing_raises]


@pytest.mark.parametrize("fn", DICT_ERRORS, ids=lambda f: f.__name__)
def test_dict_errors_as_torch(fn):
    scripted = torch.jit.script(fn)
    args = next(make for _, f, make in CASES if f is fn)
    with pytest.raises(Exception) as torch_error:
        scripted(*args())
    torch_message = str(torch_error.value).strip().splitlines()[-1]
    torch_message = torch_message.removeprefix("RuntimeError: ")
    g = tj.Graph.parse(str(scripted.graph))
    with pytest.raises(Exception) as ours:
        tj.run(g, *to_turnout(args()))
    text = str(ours.value)
    assert torch_message in text, (torch_message, text)
    # The position: the node that failed, as the graph prints it.
    assert "aten::" in text, text


def test_dict_popitem_empty_as_torch():
    def popitem_empty(d: Dict[str, int]):
        return d.popitem()
    scripted = torch.jit.script(popitem_empty)
    with pytest.raises(Exception) as torch_error:
        scripted({})
    torch_message = str(torch_error.value).strip().splitlines()[-1]
    torch_message = torch_message.removeprefix("RuntimeError: ")
    with pytest.raises(IndexError, match=re.escape(torch_message)):
        tj.run(tj.Graph.parse(str(scripted.graph)), {})


def test_dict_python_conversion_errors():
    g = tj.Graph.parse(str(torch.jit.script(dict_missing_key_raises).graph))
    # Wrong key type for Dict(str, int): refused before running, naming it.
    with pytest.raises(TypeError, match=r"Dict\(str, int\)"):
        tj.run(g, {1: 2})
    # A key TorchScript dicts cannot have, through an untyped conversion.
    with pytest.raises(TypeError, match="dict key of type tuple"):
        turnout.ops.aten.str({(1, 2): 3})
    with pytest.raises(TypeError, match="keys of two types"):
        turnout.ops.aten.str({"a": 1, 2: 3})
    # str() of a dict as torch's: {a: 1, b: 2}
    assert turnout.ops.aten.str({"a": 1, "b": 2}) == "{a: 1, b: 2}"
