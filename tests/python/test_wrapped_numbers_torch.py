"""Python numbers as operands of the tensor operators, against torch 1.13
(issue 18): `x * 4` calls mul.Tensor with the 4 as a wrapped number (a 0-dim
CPU tensor that promotes as a number), a dispatch mode sees the 4 as the
Python number, and autograd records MulBackward0. The same code runs on
torch and on turnout; each case returns plain data to compare.
"""

import math
from types import SimpleNamespace

import numpy as np
import pytest

import turnout
from turnout._mode import DispatchMode

torch = pytest.importorskip("torch")
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

TORCH = SimpleNamespace(lib=torch, Tensor=torch.Tensor, Mode=TorchDispatchMode,
                        handler="__torch_dispatch__")
TURNOUT = SimpleNamespace(lib=turnout, Tensor=turnout.Tensor, Mode=DispatchMode,
                          handler="__turnout_dispatch__")


def both(case):
    return case(TORCH), case(TURNOUT)


def norm(text):
    return str(text).replace("torch", "lib").replace("turnout", "lib")


def recording_mode(api, log):
    """A mode logging `name.overload(kinds...)`: a tensor argument as
    T<dim>, anything else as its Python type name."""
    def kind(a):
        if isinstance(a, api.Tensor):
            return f"T{a.dim()}"
        return type(a).__name__

    def handler(self, func, types, args=(), kwargs=None):
        # torch's autograd detaches a saved output when a mode is on;
        # turnout makes no such call.
        if func.__name__ != "detach.default":
            log.append(f"{func.__name__}({', '.join(kind(a) for a in args)})")
        return func(*args, **(kwargs or {}))

    return type("Recording", (api.Mode,), {api.handler: handler})()


# The expressions turnout computes as torch does: x a float tensor that
# requires grad, i an int64 one, y a fresh float tensor for the in-place
# forms.
EXPRESSIONS = [
    "x + 4", "4 + x", "x - 4", "4 - x", "2.5 - i", "x * 4", "4 * x", "x / 4",
    "4 / x", "lib.rsub(x, x, alpha=2)", "lib.ops.aten.rsub(x, 3, 2)",
    "x // 4", "4 // x", "x + True", "x * 2.5", "2.5 * x", "i * 2.5",
    "i / 2", "i // 2", "7 // i", "x - i", "x * i", "x + x",
    "x.mul(4)", "x.add(4)", "x.sub(4)", "x.div(4)", "x.add(4, alpha=2)",
    "lib.ops.aten.mul(x, 4)", "lib.ops.aten.mul.Tensor(x, 4)",
    "lib.ops.aten.mul.Tensor(4, x)", "lib.ops.aten.add(x, 2.5)",
    "lib.ops.aten.mul.Scalar(x, 4)", "lib.ops.aten.floor_divide(x, 4)",
    "lib.ops.aten.sub(4, x)",
    # % and ** (remainder and pow, with their Scalar overloads).
    "x % 4", "4 % x", "x % x", "x % -2.5", "i % 3", "i % -3", "7 % i",
    "2.5 % i", "i % 2.5", "x.remainder(2)", "lib.remainder(2, x)",
    "lib.remainder(x, x)", "x ** 2", "2 ** x", "x ** x", "2.5 ** i", "2 ** i",
    "True ** i", "i ** 2", "i ** i", "lib.pow(2, x)", "lib.pow(x, x)",
    "x.pow(x)", "x ** True",
    # A one-element integer tensor goes to the Tensor overload, not (through
    # its __index__) to a Scalar one.
    "lib.remainder(five, x)", "lib.pow(two, x)", "x.remainder(two)",
    "x.pow(two)", "lib.remainder(five, 3)",
    # NumPy scalars, as torch 1.13 reads them (numpy.bool_ as a float).
    "x * np.float64(2)", "np.float64(2) * x", "x % np.int64(3)",
    "np.int64(3) % x", "x + np.bool_(True)", "i + np.bool_(True)",
    "i * np.float32(2)", "i * np.int32(3)", "np.float64(2) ** x",
    "x ** np.float64(2)", "np.float32(2) - x", "i // np.int64(2)",
    "x.pow(np.float32(3))", "lib.clamp(x, np.float64(-1.5), np.int64(1))",
]
IN_PLACE = ["y += 4", "y -= 4", "y *= 4", "y /= 4", "y //= 4", "y += True",
            "y *= 2.5", "y.add_(4)", "y.mul_(4)", "y += x",
            "y %= 2", "y %= -2.5", "y %= x", "y.remainder_(3)", "y **= 2",
            "y **= 2.0", "y **= x", "y.pow_(3)", "y.pow_(x)",
            "y *= np.float64(2)", "y %= np.int64(2)", "y += np.bool_(True)"]


def values(api):
    lib = api.lib
    return dict(x=lib.tensor([1.0, 2.0, -3.0], requires_grad=True),
                i=lib.tensor([3, 4, -5]),
                y=lib.tensor([1.0, 2.0, -3.0]), lib=lib, np=np,
                five=lib.tensor(5), two=lib.tensor(2))


def run_expression(api, expr):
    env = values(api)
    log = []
    with recording_mode(api, log):
        r = eval(expr, {}, env)
    fn = r.grad_fn
    return (log, norm(r.dtype), r.tolist(), fn and fn.name(),
            fn and [f and f.name() for f, _ in fn.next_functions])


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_overloads_nodes_and_values_as_torchs(expr):
    theirs, ours = both(lambda api: run_expression(api, expr))
    assert ours == theirs


@pytest.mark.parametrize("stmt", IN_PLACE)
def test_in_place_operators_as_torchs(stmt):
    def case(api):
        env = values(api)
        log = []
        y = env["y"]
        with recording_mode(api, log):
            exec(stmt, {}, env)
        return log, env["y"] is y, y.tolist(), norm(y.dtype), y._version
    theirs, ours = both(case)
    assert ours == theirs


def test_the_handler_sees_the_python_number():
    def case(api):
        seen = []

        def handler(self, func, types, args=(), kwargs=None):
            seen.append((func.__name__,
                         [a if isinstance(a, (bool, int, float)) else "T"
                          for a in args],
                         [type(a).__name__ for a in args
                          if not isinstance(a, api.Tensor)]))
            return func(*args, **(kwargs or {}))

        mode = type("M", (api.Mode,), {api.handler: handler})()
        x = api.lib.ones(2)
        with mode:
            x * 4, 4.5 + x, x - 2, x / True, 3 // x
        return seen
    theirs, ours = both(case)
    assert ours == theirs
    assert ours[0] == ("mul.Tensor", ["T", 4], ["int"])


# ---- Result dtypes over a grid -------------------------------------------------

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16",
          "bfloat16", "float32", "float64"]
NUMBERS = [True, False, 0, 3, -2, 1000, 2.5, -0.5, 1e10]
OPERATORS = {
    "add": lambda t, n: t + n, "radd": lambda t, n: n + t,
    "sub": lambda t, n: t - n, "rsub": lambda t, n: n - t,
    "mul": lambda t, n: t * n, "rmul": lambda t, n: n * t,
    "div": lambda t, n: t / n, "rdiv": lambda t, n: n / t,
    "floordiv": lambda t, n: t // n, "rfloordiv": lambda t, n: n // t,
    "mod": lambda t, n: t % n, "rmod": lambda t, n: n % t,
    "pow": lambda t, n: t ** n, "rpow": lambda t, n: n ** t,
    "method_mul": lambda t, n: t.mul(n), "method_add": lambda t, n: t.add(n),
    # A 0-dim tensor (a view) with a number: both rank below dimensions.
    "0dim_mul": lambda t, n: t[1] * n, "0dim_radd": lambda t, n: n + t[1],
}


def grid_outcome(api, op, dtype, number):
    lib = api.lib
    t = lib.tensor([1, 2, 0], dtype=getattr(lib, dtype))
    try:
        r = OPERATORS[op](t, number)
    except (RuntimeError, TypeError, ValueError, ZeroDivisionError) as e:
        return ("error", type(e).__name__)
    vals = r.tolist()
    if not isinstance(vals, list):
        vals = [vals]
    # NaN and infinities compare by their text; float16 rounding as torch's.
    return (norm(r.dtype), [repr(v) if isinstance(v, float) and
                            not math.isfinite(v) else v for v in vals])


@pytest.mark.parametrize("op", list(OPERATORS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_result_dtypes_and_values_as_torchs(op, dtype):
    mismatches = []
    for number in NUMBERS:
        theirs, ours = both(lambda api: grid_outcome(api, op, dtype, number))
        if theirs[0] == "error":  # the same refusal; messages differ
            theirs, ours = theirs[0], ours[0]
        if ours != theirs:
            mismatches.append((number, theirs, ours))
    assert mismatches == []


@pytest.mark.parametrize("dtype", DTYPES)
def test_in_place_dtypes_as_torchs(dtype):
    def case(api, number, op):
        lib = api.lib
        t = lib.tensor([1, 2, 3], dtype=getattr(lib, dtype))
        try:
            if op == "+=":
                t += number
            elif op == "*=":
                t *= number
            else:
                t //= number
        except (RuntimeError, TypeError):  # turnout: TypeError for casts
            return "error"
        return norm(t.dtype), t.tolist()
    for number in NUMBERS:
        for op in ["+=", "*=", "//="]:
            if op == "//=" and number in (0, False):
                continue  # integer division by zero: torch raises, or not
            theirs, ours = both(lambda api: case(api, number, op))
            assert (number, op, ours) == (number, op, theirs)


# ---- Gradients -----------------------------------------------------------------

GRADIENTS = ["x * 4", "4 * x", "x / 4", "4 / x", "x + 4", "4 + x", "x - 4",
             "4 - x", "lib.rsub(x, x * x, alpha=3)", "lib.rsub(x, 2.5, 2)",
             "x * 2.5 + x / True", "(x * x) * 3", "x.mul(4)", "x.div(2)",
             "x % 2.5", "x % -4", "(x * 3) % x", "x % (x * x + 5)",
             "x ** 3", "(x * x) ** 2.5", "x ** -2", "2 ** x", "2.5 ** x", "lib.pow(0.5, x)",
             "(x * x + 1) ** x", "(x * x).pow(x)", "x * np.float64(3)",
             "np.float32(2) ** x", "x % np.float64(1.5)"]


@pytest.mark.parametrize("expr", GRADIENTS)
def test_gradients_as_torchs(expr):
    def case(api):
        env = values(api)
        x = env["x"]
        r = eval(expr, {}, env)
        r.sum().backward()
        return [round(g, 6) for g in x.grad.tolist()]
    theirs, ours = both(case)
    assert ours == theirs


def test_saved_number_is_a_0dim_tensor_as_torchs():
    def case(api):
        x = api.lib.ones(2, requires_grad=True)
        other = (x * 4).grad_fn._saved_other
        return type(other).__name__, other.dim(), other.item()
    theirs, ours = both(case)
    assert ours == theirs == ("Tensor", 0, 4)


def test_accumulate_grad_is_named_as_torchs():
    def case(api):
        x = api.lib.ones(2, requires_grad=True)
        y = x * 4
        (acc, nr), (none, _) = y.grad_fn.next_functions
        return acc.name(), nr, none
    theirs, ours = both(case)
    assert ours == theirs == ("torch::autograd::AccumulateGrad", 0, None)


# ---- What stays as it was ------------------------------------------------------


def test_numbers_are_tensors_only_for_torchs_operators():
    # torch 1.13 takes a number for a Tensor argument of add, sub, mul, div,
    # floor_divide, ... only; another operator refuses it.
    def case(api):
        out = []
        for call in [lambda: api.lib.ops.aten.exp.default(2.0),
                     lambda: api.lib.ops.aten.neg.default(3),
                     lambda: api.lib.ops.aten.maximum.default(
                         api.lib.ones(2), 2.0),
                     lambda: api.lib.ops.aten.mul.Tensor(api.lib.ones(2), "a"),
                     lambda: api.lib.ops.aten.mul.Tensor(api.lib.ones(2), None)]:
            try:
                call()
                out.append("ok")
            except (RuntimeError, TypeError) as e:
                out.append("error")
        r = api.lib.ops.aten.mul.Tensor(4, 5)
        out.append((r.dim(), norm(r.dtype), r.item()))
        return out
    theirs, ours = both(case)
    assert ours == theirs


def test_turnout_errors_name_the_argument():
    x = turnout.ones(2)
    with pytest.raises(TypeError, match=r"aten::exp\(\): argument 'self' "
                                        r"\(position 1\) must be Tensor, but "
                                        r"got float"):
        turnout.ops.aten.exp.default(2.0)
    with pytest.raises(TypeError, match=r"argument 'other' \(position 2\) "
                                        r"must be Tensor, but got str"):
        x * "a"
    with pytest.raises(TypeError, match=r"must be Tensor, but got int"):
        x * (1 << 70)  # outside int64: no wrapped number
    assert x.tolist() == [1.0, 1.0]


def test_overload_listing_is_unchanged():
    # Only the order in which a packet tries them changed.
    names = turnout.ops.aten.mul.overloads()
    assert names == sorted(names, key=lambda n: (n != "default", n))


def test_rsub_nodes_save_alpha_as_torchs():
    def case(api):
        x = api.lib.ones(2, requires_grad=True)
        out = []
        for r in [4 - x, api.lib.rsub(x, x * 2, alpha=3)]:
            fn = r.grad_fn
            out.append((fn.name(), sorted(n for n in dir(fn)
                                          if n.startswith("_saved_")),
                        fn._saved_alpha))
        return out
    theirs, ours = both(case)
    assert ours == theirs == [("RsubBackward1", ["_saved_alpha"], 1),
                              ("RsubBackward0", ["_saved_alpha"], 3)]


# ---- % and ** (issue 18) -------------------------------------------------------


@pytest.mark.parametrize("expr", ["x % 4", "x % x", "2 ** x", "x ** x",
                                  "lib.pow(2, x)", "x ** 2"])
def test_pow_and_remainder_nodes_save_as_torchs(expr):
    def case(api):
        env = values(api)
        fn = eval(expr, {}, env).grad_fn
        saved = sorted(n for n in dir(fn) if n.startswith("_saved_"))
        return fn.name(), saved, [
            v.tolist() if isinstance(v, api.Tensor) else v
            for v in (getattr(fn, n) for n in saved)]
    theirs, ours = both(case)
    assert ours == theirs


@pytest.mark.parametrize("stmt", ["y %= 2", "y %= x", "y **= 2", "y **= x"])
def test_in_place_pow_and_remainder_nodes_as_torchs(stmt):
    def case(api):
        env = values(api)
        env["y"] = env["x"] * env["x"] + 1  # positive: log(y) is finite
        exec(stmt, {}, env)
        y = env["y"]
        y.sum().backward()
        return y.grad_fn.name(), [round(g, 6) for g in env["x"].grad.tolist()]
    theirs, ours = both(case)
    assert ours == theirs


ERRORS = [
    "i % 0", "i % lib.tensor([1, 0, 2])", "lib.tensor([True]) % True",
    "lib.tensor([True]) % lib.tensor([True])", "True % lib.tensor([True])",
    "lib.remainder(lib.tensor([1, 2]), lib.ones(3))",
    "lib.tensor([True]) ** lib.tensor([True])", "i ** -1",
    "lib.pow(True, lib.tensor([True]))", "i.pow_(-2)",
    "(4 % x).sum().backward()", "i.remainder_(2.5)",
    "lib.tensor([1, 2]).pow_(lib.tensor([1.5, 2.0]))",
    "lib.tensor([1, 2]).pow_(2.5)", "lib.tensor([True]) ** True",
    "lib.tensor([1], dtype=lib.uint8) ** 1000",
    "lib.tensor([1], dtype=lib.int32) ** 2 ** 40",
    "lib.tensor([1.0], dtype=lib.float16) ** 1e10",
    "lib.tensor([1], dtype=lib.uint8).pow_(300)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_as_torchs(expr):
    def case(api):
        env = values(api)
        try:
            eval(expr, {}, env)
        except (RuntimeError, TypeError) as e:
            return norm(str(e).split("\n")[0])
        return "no error"
    theirs, ours = both(case)
    assert ours == theirs != "no error"


def test_unsupported_operands_answer_not_implemented():
    def case(api):
        x = api.lib.ones(2)
        out = []
        for f in [lambda: x % "a", lambda: x ** "a", lambda: "a" ** x,
                  lambda: [1, 2] ** x, lambda: x % None]:
            try:
                f()
                out.append("ok")
            except TypeError as e:
                out.append(norm(str(e)))
        return out
    theirs, ours = both(case)
    assert ours == theirs


def test_numpy_scalars_reach_a_handler_as_python_numbers():
    def case(api):
        log = []
        x = api.lib.ones(2)
        with recording_mode(api, log):
            x * np.float64(2), x - np.float32(1.5), x % np.int64(3)
            np.int32(2) + x, x / np.bool_(True), x ** np.float64(2)
        return log
    theirs, ours = both(case)
    assert ours == theirs
    assert ours[0] == "mul.Tensor(T1, float)"
