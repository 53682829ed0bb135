"""Sample inputs for turnout's reference operators (test-only), in the
spirit of torch's OpInfo.

``OP_DB`` maps every aten operator overload turnout registers
(``"aten::add.Tensor"``) to an :class:`OpInfo`: a generator of
:class:`Sample` s (shapes, dtypes, broadcasting, 0-dim, empty,
non-contiguous inputs, in-place and ``out=`` variants, calls that must
raise) and what the tests may compare. Two tests read it:

- test_op_db_opcheck.py: ``turnout.library.opcheck`` on every sample, and
  every registered aten operator has an entry here (or a reason in
  ``NOT_SAMPLED``);
- test_op_db_torch.py, "the differential test": every sample on turnout and
  on torch 1.13, comparing results, dtypes, shapes, strides of views,
  mutated arguments, gradients, and errors.

Adding an operator is one entry::

    add(OpInfo("aten::foo", unary()))              # shared generators
    add(OpInfo("aten::bar", lambda: [              # or samples written out
        S(T((2, 3)), 1),
        S(T((2, 3)), 5, error=True),               # torch raises: so must turnout
    ]))

Tensors are described, not built: ``T(shape, dtype, layout)`` draws its
values once (seeded by the operator's name), and :func:`build` makes the
matching turnout and torch arguments from the same values, with the same
strides. Placeholders ``D("float64")``, ``Dev("cpu")`` and
``MF("contiguous_format")`` become each library's dtype, device and memory
format.
"""

from __future__ import annotations

import zlib
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

import numpy as np

# ---- Describing arguments ---------------------------------------------------

FLOATS = ("float32", "float64")
_NUMPY = {"float32": np.float32, "float64": np.float64, "int64": np.int64,
          "int32": np.int32, "int16": np.int16, "int8": np.int8,
          "uint8": np.uint8, "bool": np.bool_, "float16": np.float32,
          "bfloat16": np.float32}  # half types: drawn as float32, then cast
LAYOUTS = ("contiguous", "transposed", "strided")

_rng = np.random.default_rng(0)  # reseeded per operator by samples()


class T:
    """A tensor argument: its shape, dtype, layout and values.

    layout: "contiguous"; "transposed" (dims reversed: a permute of a
    contiguous tensor, for 2+ dims); "strided" (every other element of the
    last dim: a slice with step 2). low/high bound the values (ints:
    inclusive); values=[...] gives them explicitly (contiguous layout).
    """

    def __init__(self, shape: Sequence[int], dtype: str = "float32",
                 layout: str = "contiguous", low: float = -3, high: float = 3,
                 values: Any = None):
        if layout not in LAYOUTS:
            raise ValueError(f"T: unknown layout {layout!r}; one of {LAYOUTS}")
        if layout == "transposed" and len(shape) < 2:
            raise ValueError(f"T: layout 'transposed' needs 2+ dims, got {shape}")
        if layout == "strided" and len(shape) < 1:
            raise ValueError("T: layout 'strided' needs 1+ dims")
        self.shape, self.dtype, self.layout = tuple(shape), dtype, layout
        base = list(self.shape)
        if layout == "transposed":
            base.reverse()
        elif layout == "strided":
            base[-1] *= 2
        np_dtype = _NUMPY[dtype]
        if values is not None:
            self.data = np.array(values, dtype=np_dtype).reshape(base)
        elif dtype == "bool":
            self.data = np.asarray(_rng.random(base) < 0.5)
        elif np.issubdtype(np_dtype, np.integer):
            lo = max(int(low), np.iinfo(np_dtype).min)
            self.data = np.asarray(_rng.integers(lo, int(high) + 1, base), np_dtype)
        else:
            self.data = np.asarray(_rng.uniform(low, high, base), np_dtype)

    def __repr__(self) -> str:
        lay = "" if self.layout == "contiguous" else f",{self.layout}"
        return f"T{list(self.shape)}{self.dtype}{lay}"

    def is_float(self) -> bool:
        return self.dtype in ("float32", "float64", "float16", "bfloat16")


class D:
    """A dtype argument, by name: D("float64")."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


class Dev:
    """A device argument: Dev("cpu")."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"device({self.name})"


class MF:
    """A memory format argument: MF("contiguous_format")."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


class Sample:
    """One call: positional and keyword arguments (T/D/Dev/MF placeholders,
    plain values, lists of them).

    error: torch raises on it, so turnout must too (the differential test
    checks that torch does). grad: False to leave this sample out of the
    gradient comparison. desc: what it exercises, shown in test ids.
    """

    def __init__(self, args: Sequence[Any], kwargs: Optional[Dict[str, Any]] = None,
                 *, desc: str = "", error: bool = False, grad: bool = True):
        self.args, self.kwargs = tuple(args), dict(kwargs or {})
        self.desc, self.error, self.grad = desc, error, grad

    def __repr__(self) -> str:
        parts = [repr(a) for a in self.args]
        parts += [f"{k}={v!r}" for k, v in self.kwargs.items()]
        text = "(" + ", ".join(parts) + ")"
        if self.desc:
            text = f"{self.desc}:{text}"
        return ("error:" if self.error else "") + text


def S(*args: Any, desc: str = "", error: bool = False, grad: bool = True,
      **kwargs: Any) -> Sample:
    """Sample(args, kwargs) written as a call: S(T((2, 3)), 1, alpha=2)."""
    return Sample(args, kwargs, desc=desc, error=error, grad=grad)


# ---- Building both libraries' arguments ------------------------------------


def _tensor(lib: Any, spec: T, device: Optional[str] = None) -> Any:
    # clone: storage of the library's own (resizable, as an out= needs).
    x = lib.from_numpy(spec.data.copy()).clone()
    if device is not None:
        x = x.to(device)
    if spec.dtype in ("float16", "bfloat16"):
        x = x.to(getattr(lib, spec.dtype))
    if spec.layout == "transposed":
        x = x.permute(*reversed(range(len(spec.shape))))
    elif spec.layout == "strided":
        x = lib.ops.aten.slice.Tensor(x, -1, 0, None, 2)
    return x


def build(value: Any, lib: Any, *, requires_grad: bool = False,
          leaves: Optional[List[Any]] = None, device: Optional[str] = None) -> Any:
    """``value`` with its placeholders made for ``lib`` (the turnout or the
    torch module). With requires_grad, floating-point tensors are leaves
    that require grad, appended to ``leaves`` in argument order. device:
    tensors (same layout) and Dev placeholders on that device instead."""
    if isinstance(value, T):
        x = _tensor(lib, value, device)
        if requires_grad and value.is_float():
            x = x.detach().requires_grad_()
            leaves.append(x)
        return x
    if isinstance(value, D):
        return getattr(lib, value.name)
    if isinstance(value, Dev):
        return lib.device(device or value.name)
    if isinstance(value, MF):
        return getattr(lib, value.name)
    if isinstance(value, (list, tuple)):
        return type(value)(build(v, lib, requires_grad=requires_grad,
                                 leaves=leaves, device=device) for v in value)
    return value


def build_call(sample: Sample, lib: Any, requires_grad: bool = False,
               device: Optional[str] = None):
    """(args, kwargs, leaves) of ``sample`` for ``lib`` (on ``device``:
    see :func:`build`)."""
    leaves: List[Any] = []
    args = build(list(sample.args), lib, requires_grad=requires_grad, leaves=leaves,
                 device=device)
    kwargs = {k: build(v, lib, requires_grad=requires_grad, leaves=leaves,
                       device=device)
              for k, v in sample.kwargs.items()}
    return tuple(args), kwargs, leaves


def has_float_tensor(sample: Sample) -> bool:
    def walk(v: Any) -> bool:
        if isinstance(v, T):
            return v.is_float()
        if isinstance(v, (list, tuple)):
            return any(walk(x) for x in v)
        return False
    return any(walk(v) for v in list(sample.args) + list(sample.kwargs.values()))


def assert_values(a: np.ndarray, b: np.ndarray, rtol: float, atol: float,
                  err_msg: str) -> None:
    """``a`` equals ``b``: within rtol/atol for floating-point values (NaN
    equal to NaN), exactly for the others."""
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=err_msg)
    else:
        np.testing.assert_array_equal(a, b, err_msg=err_msg)


# ---- Operators --------------------------------------------------------------


class OpInfo:
    """What the tests know of one operator overload.

    name: "aten::name.overload" ("aten::name" for the default overload).
    samples: a function returning the samples (called with the RNG seeded
        by the name, so they are the same on every run).
    ref: torch's function (default: torch.ops.aten.<name>.<overload>).
    values: False where results are not comparable (random, uninitialised
        memory): then only dtype, shape and strides are.
    grad: False where gradients are not compared (no autograd in either).
    opcheck: the opcheck tests to run; skip_opcheck says why others are not.
    atol/rtol: float32 tolerances where the defaults are too tight.
    """

    def __init__(self, name: str, samples: Callable[[], Iterable[Sample]], *,
                 ref: Optional[Callable[..., Any]] = None, values: bool = True,
                 grad: bool = True, opcheck: Optional[Sequence[str]] = None,
                 skip_opcheck: str = "", atol: float = 1e-5, rtol: float = 1.3e-6):
        if (opcheck is not None) != bool(skip_opcheck):
            raise ValueError(f"OpInfo({name}): a restricted opcheck needs its "
                             "reason in skip_opcheck")
        self.name, self._samples, self.ref = name, samples, ref
        self.values, self.grad = values, grad
        self.opcheck, self.skip_opcheck = opcheck, skip_opcheck
        self.atol, self.rtol = atol, rtol
        base, _, overload = name.split("::")[1].partition(".")
        self.base, self.overload = base, overload or "default"

    def samples(self) -> List[Sample]:
        global _rng
        _rng = np.random.default_rng(zlib.crc32(self.name.encode()))
        return list(self._samples())

    def op(self, lib: Any) -> Any:
        """The overload in ``lib`` (turnout or torch)."""
        return getattr(getattr(lib.ops.aten, self.base), self.overload)

    def torch_fn(self, torch: Any) -> Callable[..., Any]:
        return self.ref or self.op(torch)


OP_DB: Dict[str, OpInfo] = {}


def add(info: OpInfo) -> OpInfo:
    if info.name in OP_DB:
        raise ValueError(f"op_db: {info.name} has two entries")
    OP_DB[info.name] = info
    return info


# Registered aten operators that cannot be sampled, each with its reason.
# test_op_db_opcheck fails on a registered operator in neither OP_DB nor here.
NOT_SAMPLED: Dict[str, str] = {}

# Registered aten operators with no entry here yet, each with the test that
# compares it with torch 1.13 today (filled at the end of this file). Folding
# them in is open work: the coverage test accepts these and fails on any
# other operator without samples.
NOT_YET_SAMPLED: Dict[str, str] = {}


# ---- Shared sample generators ----------------------------------------------


def unary(low: float = -3, high: float = 3, ints: bool = True) -> Callable[[], List[Sample]]:
    """A pointwise function of one tensor."""
    def gen() -> List[Sample]:
        out = [S(T((2, 3), low=low, high=high)),
               S(T((3, 4), "float64", "transposed", low=low, high=high)),
               S(T((2, 5), layout="strided", low=low, high=high)),
               S(T((), low=low, high=high), desc="0-dim"),
               S(T((0, 3), low=low, high=high), desc="empty")]
        if ints:
            out.append(S(T((5,), "int64", low=max(low, -5), high=high)))
        return out
    return gen


def binary(alpha: bool = False, div: bool = False,
           compare: bool = False) -> Callable[[], List[Sample]]:
    """A pointwise function of two tensors (broadcasting, promotion)."""
    low = 0.5 if div else -3

    def gen() -> List[Sample]:
        out = [S(T((2, 3)), T((2, 3), low=low)),
               S(T((2, 3)), T((3,), low=low), desc="broadcast"),
               S(T((4, 1), "float64"), T((1, 5), "float64", low=low),
                 desc="broadcast both"),
               S(T((3, 4), layout="transposed"), T((3, 4), layout="strided", low=low)),
               S(T((2, 3)), T((), low=low), desc="0-dim other"),
               S(T(()), T((), low=low), desc="0-dim"),
               S(T((0, 3)), T((3,), low=low), desc="empty"),
               S(T((2, 3), "int64"), T((2, 3), low=low), desc="int+float"),
               S(T((2, 3), "float64"), T((2, 3), "float32", low=low)),
               S(T((2, 3), "int64"), T((2, 3), "int64", low=1, high=4)),
               S(T((2, 3)), T((4,)), desc="shapes", error=True)]
        if alpha:
            out.append(S(T((2, 3)), T((3,)), alpha=2, desc="alpha"))
            out.append(S(T((2, 3), "int64"), T((3,), "int64"), alpha=3))
        if compare:
            out.append(S(T((3,), values=[1.0, 2.0, 3.0]),
                         T((3,), values=[1.0, 0.0, 3.0]), desc="ties"))
        return out
    return gen


def binary_scalar(div: bool = False, alpha: bool = False,
                  bool_error: bool = False) -> Callable[[], List[Sample]]:
    """A pointwise function of a tensor and a Python scalar (bool_error: a
    bool scalar is refused, as sub's)."""
    def gen() -> List[Sample]:
        out = [S(T((2, 3)), 2.5),
               S(T((2, 3)), 2, desc="int scalar"),
               S(T((2, 3), "int64"), 3, desc="int"),
               S(T((2, 3), "int64"), 1.5, desc="int tensor, float scalar"),
               S(T((3, 4), "float64", "transposed"), -1.5),
               S(T(()), 4.0, desc="0-dim"),
               S(T((0, 2)), 2.0, desc="empty")]
        if not div:
            out.append(S(T((2,), "int64"), True, desc="bool scalar", error=bool_error))
        if alpha:
            out.append(S(T((2, 3)), 2.0, 3, desc="alpha"))
        return out
    return gen


def inplace(alpha: bool = False, div: bool = False) -> Callable[[], List[Sample]]:
    """x.op_(tensor): the result keeps self's shape and dtype."""
    low = 0.5 if div else -3

    def gen() -> List[Sample]:
        out = [S(T((2, 3)), T((2, 3), low=low)),
               S(T((2, 3)), T((3,), low=low), desc="broadcast"),
               S(T((3, 4), layout="transposed"), T((4,), low=low)),
               S(T((2, 6), "float64", layout="strided"), T((2, 6), low=low)),
               S(T(()), T((), low=low), desc="0-dim"),
               S(T((2, 3), "float64"), T((2, 3), "int64", low=1), desc="float self, int other"),
               S(T((3,)), T((2, 3), low=low), desc="other broadcasts self", error=True),
               S(T((2, 3), "int64"), T((2, 3), low=low), desc="float into int",
                 error=True)]
        if not div:
            out.append(S(T((2, 3), "int64"), T((2, 3), "int64", low=1)))
        if alpha:
            out.append(S(T((2, 3)), T((3,)), alpha=-2, desc="alpha"))
        return out
    return gen


def inplace_scalar(div: bool = False, alpha: bool = False) -> Callable[[], List[Sample]]:
    def gen() -> List[Sample]:
        out = [S(T((2, 3)), 2.5),
               S(T((3, 4), layout="transposed"), 2),
               S(T(()), 3.0, desc="0-dim"),
               S(T((0, 3)), 3.0, desc="empty"),
               S(T((2, 3), "int64"), 1.5, desc="float into int", error=True)]
        if not div:
            out.append(S(T((2, 3), "int64"), 2))
        if alpha:
            out.append(S(T((2, 3)), 2.0, 3, desc="alpha"))
        return out
    return gen


def out_variant(alpha: bool = False, div: bool = False) -> Callable[[], List[Sample]]:
    """op.out(a, b, out=...): the right shape, a wrong dtype, a resize."""
    low = 0.5 if div else -3

    def gen() -> List[Sample]:
        out = [S(T((2, 3)), T((2, 3), low=low), out=T((2, 3))),
               S(T((2, 3)), T((3,), low=low), out=T((2, 3), layout="transposed"),
                 desc="broadcast, transposed out"),
               S(T((2, 3)), T((2, 3), low=low), out=T((0,)), desc="resized out"),
               S(T((2, 3), "int64"), T((2, 3), "int64", low=1), out=T((2, 3), "float64"),
                 desc="int into float out"),
               S(T((2, 3)), T((2, 3), low=low), out=T((2, 3), "int64"),
                 desc="float into int out", error=True)]
        if alpha:
            out.append(S(T((2, 3)), T((3,)), alpha=2, out=T((2, 3)), desc="alpha"))
        return out
    return gen


def scalar_binary(kind: str, by_zero: Optional[bool] = None) -> Callable[[], List[Sample]]:
    """Two Python numbers (TorchScript's int/float arithmetic); by_zero:
    a sample dividing by zero, which raises when by_zero is True."""
    def gen() -> List[Sample]:
        if kind == "int":
            pairs = [(3, 4), (-7, 2), (7, -2), (0, 5), (5, 5)]
        else:
            pairs = [(3.5, 4.0), (-7.5, 2.0), (7.0, -2.5), (0.0, 1.5), (2.0, 2.0)]
        out = [S(a, b) for a, b in pairs]
        if by_zero is not None:
            out.append(S(pairs[0][0], 0 if kind == "int" else 0.0, desc="by zero",
                         error=by_zero))
        return out
    return gen


def reduce_all(dtype_kw: bool = True) -> Callable[[], List[Sample]]:
    """A reduction over all elements."""
    def gen() -> List[Sample]:
        out = [S(T((2, 3))), S(T((3, 4), "float64", "transposed")),
               S(T((2, 6), layout="strided")), S(T(()), desc="0-dim"),
               S(T((0, 3)), desc="empty")]
        if dtype_kw:
            out.append(S(T((2, 3)), dtype=D("float64")))
        return out
    return gen


def reduce_dims(int_ok: bool = True, empty_ok: bool = True,
                dtype_kw: bool = True) -> Callable[[], List[Sample]]:
    """A reduction over dims (int[1] dim, keepdim)."""
    def gen() -> List[Sample]:
        out = [S(T((2, 3)), [1]),
               S(T((2, 3, 4)), [0, 2], True, desc="keepdim"),
               S(T((3, 4), "float64", "transposed"), [-1]),
               S(T((2, 6), layout="strided"), [0], False),
               S(T(()), [0], desc="0-dim"),
               S(T((2, 3)), [2], desc="dim out of range", error=True)]
        if empty_ok:
            out.append(S(T((0, 3)), [1], desc="empty"))
        if dtype_kw:
            out.append(S(T((2, 3)), [0], dtype=D("float64")))
        if int_ok:
            out.append(S(T((2, 3), "int64"), [1]))
        return out
    return gen


def minmax() -> List[Sample]:
    return [S(T((2, 3)), [1]), S(T((2, 3, 4)), [0, 2], True, desc="keepdim"),
            S(T((3, 4), "float64", "transposed"), [-1]),
            S(T((2, 6), layout="strided")), S(T(()), desc="0-dim"),
            S(T((2, 3), "int64"), [0]),
            S(T((0, 3)), [1], desc="empty along kept dim"),
            S(T((0, 3)), [0], desc="empty reduced", error=True),
            S(T((2, 3)), [3], error=True)]


def out_of(samples: Callable[[], List[Sample]],
           out: Callable[[Sample], Any]) -> Callable[[], List[Sample]]:
    """The same samples with out=out(sample) added (for .out overloads)."""
    def gen() -> List[Sample]:
        result = []
        for s in samples():
            o = out(s)
            if o is None:
                continue
            result.append(Sample(s.args, {**s.kwargs, "out": o}, desc=s.desc,
                                 error=s.error, grad=False))
        return result
    return gen


def factory(floating_only: bool = False) -> Callable[[], List[Sample]]:
    def gen() -> List[Sample]:
        return [S([2, 3]), S([]), S([0, 4]), S([2, 3], dtype=D("float64")),
                S([3], dtype=D("int64"), error=floating_only),
                S([2], dtype=D("float32"), device=Dev("cpu")),
                S([-1, 2], error=True, desc="negative size")]
    return gen


def like() -> List[Sample]:
    """A *_like factory: self's strides when dense (a permutation too),
    contiguous ones for a strided view, or memory_format's."""
    return [S(T((2, 3))), S(T((3, 4), "float64", "transposed")),
            S(T((2, 6), layout="strided")), S(T(())), S(T((0, 2))),
            S(T((2, 3)), dtype=D("int64")), S(T((2, 3), "int64")),
            S(T((2, 3, 4, 5)), memory_format=MF("channels_last")),
            S(T((2, 3, 4, 5), layout="transposed"), memory_format=MF("preserve_format")),
            S(T((2, 3, 4, 5), layout="transposed"), memory_format=MF("channels_last")),
            S(T((3, 4), layout="transposed"), memory_format=MF("contiguous_format")),
            S(T((2, 3, 4, 6), layout="strided"), memory_format=MF("preserve_format")),
            S(T((3, 4)), memory_format=MF("channels_last"), desc="not 4-d", error=True)]


# ---- The entries ------------------------------------------------------------

for _name, _low in (("abs", -3), ("neg", -3), ("exp", -3), ("relu", -3),
                    ("sigmoid", -3), ("tanh", -3), ("log", 0.1), ("sqrt", 0.1)):
    add(OpInfo(f"aten::{_name}", unary(low=_low)))

# torch.ops passes a Python bool as an int Scalar (torch.sub(t, True) raises,
# torch.ops.aten.sub.Scalar(t, True) does not): the Scalar overloads are
# compared with torch's public functions, which keep it a bool.
# torch is imported at the call: op_db itself needs no torch (the CUDA test).
def _scalar_ref(fn: str, alpha: bool = False) -> Callable[..., Any]:
    def torch_fn():
        import torch
        return getattr(torch, fn)
    if alpha:
        return lambda self, other, alpha=1: torch_fn()(self, other, alpha=alpha)
    return lambda self, other: torch_fn()(self, other)


for _name in ("add", "sub"):
    add(OpInfo(f"aten::{_name}.Tensor", binary(alpha=True)))
    add(OpInfo(f"aten::{_name}.Scalar", binary_scalar(alpha=True, bool_error=_name == "sub"),
               ref=_scalar_ref(_name, alpha=True)))
    add(OpInfo(f"aten::{_name}.out", out_variant(alpha=True)))
    add(OpInfo(f"aten::{_name}_.Tensor", inplace(alpha=True)))
    add(OpInfo(f"aten::{_name}_.Scalar", inplace_scalar(alpha=True)))
# rsub: other - alpha * self (`4 - x` is rsub.Scalar(x, 4), as torch's).
add(OpInfo("aten::rsub.Tensor", binary(alpha=True)))
add(OpInfo("aten::rsub.Scalar", binary_scalar(alpha=True, bool_error=True),
           ref=_scalar_ref("rsub", alpha=True)))
add(OpInfo("aten::mul.Tensor", binary()))
add(OpInfo("aten::mul.Scalar", binary_scalar(), ref=_scalar_ref("mul")))
add(OpInfo("aten::mul.out", out_variant()))
add(OpInfo("aten::mul_.Tensor", inplace()))
add(OpInfo("aten::mul_.Scalar", inplace_scalar()))
add(OpInfo("aten::div.Tensor", binary(div=True)))
add(OpInfo("aten::div.Scalar", binary_scalar(div=True), ref=_scalar_ref("div")))
add(OpInfo("aten::div.out", out_variant(div=True)))
add(OpInfo("aten::div_.Tensor", inplace(div=True)))
add(OpInfo("aten::div_.Scalar", inplace_scalar(div=True)))

for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    add(OpInfo(f"aten::{_name}.Tensor", binary(compare=True)))
    add(OpInfo(f"aten::{_name}.Scalar", binary_scalar(), ref=_scalar_ref(_name)))
    add(OpInfo(f"aten::{_name}.int", scalar_binary("int")))
    add(OpInfo(f"aten::{_name}.float", scalar_binary("float")))

for _name in ("add", "sub", "mul"):
    add(OpInfo(f"aten::{_name}.int", scalar_binary("int")))
    add(OpInfo(f"aten::{_name}.float", scalar_binary("float")))
add(OpInfo("aten::div.int", scalar_binary("int", by_zero=False)))  # inf
add(OpInfo("aten::div.float", scalar_binary("float", by_zero=False)))
add(OpInfo("aten::floordiv.int", scalar_binary("int", by_zero=True)))
add(OpInfo("aten::floordiv.float", scalar_binary("float", by_zero=False)))  # inf
add(OpInfo("aten::neg.int", lambda: [S(3), S(-4), S(0)]))
add(OpInfo("aten::neg.float", lambda: [S(3.5), S(-4.0), S(0.0)]))
add(OpInfo("aten::__and__.bool", lambda: [S(a, b) for a in (True, False) for b in (True, False)]))
add(OpInfo("aten::__or__.bool", lambda: [S(a, b) for a in (True, False) for b in (True, False)]))
add(OpInfo("aten::__not__", lambda: [S(True), S(False)]))
add(OpInfo("aten::Float.int", lambda: [S(3), S(-2)]))
add(OpInfo("aten::Int.float", lambda: [S(3.7), S(-2.7), S(0.0)]))
# Data-dependent outputs (a number read from the tensor): no Meta kernel can
# give it, as in torch (FakeTensor raises DataDependentOutputException).
_NO_FAKE = ("test_schema", "test_autograd_registration", "test_graph")
_NO_FAKE_WHY = "data-dependent output: a meta tensor has no value to read"
add(OpInfo("aten::Float.Tensor", lambda: [S(T(())), S(T((), "int64")), S(T((1,))),
                                          S(T((2,)), error=True)],
           opcheck=_NO_FAKE, skip_opcheck=_NO_FAKE_WHY))
add(OpInfo("aten::Int.Tensor", lambda: [S(T((), "int64")), S(T((), low=-5, high=5)),
                                        S(T((1, 1), "int64")), S(T((2,), "int64"), error=True)],
           opcheck=_NO_FAKE, skip_opcheck=_NO_FAKE_WHY))
# grad: torch.ops refuses a tensor that requires grad as a Scalar argument.
add(OpInfo("aten::ScalarImplicit", lambda: [S(T(())), S(T((), "int64")),
                                            S(T((2,)), error=True)], grad=False,
           opcheck=_NO_FAKE, skip_opcheck=_NO_FAKE_WHY))
add(OpInfo("aten::item", lambda: [S(T(())), S(T((), "int64")), S(T((1, 1), "float64")),
                                  S(T((), "bool")), S(T((2,)), error=True)],
           opcheck=_NO_FAKE, skip_opcheck=_NO_FAKE_WHY))
add(OpInfo("aten::_local_scalar_dense",
           # Several elements: the first one, as torch's. No element: an
           # error in turnout, a crash in torch 1.13 (test_tensor.py).
           lambda: [S(T(())), S(T((), "int64")), S(T((1, 1), "float64")),
                    S(T((), "bool")), S(T((2,))), S(T((3, 2), layout="transposed"))],
           opcheck=_NO_FAKE, skip_opcheck=_NO_FAKE_WHY))
add(OpInfo("aten::len.t", lambda: [S([1, 2, 3]), S([]), S([T((2,)), T((3,))])], ref=len))
add(OpInfo("aten::__getitem__.t",
           lambda: [S([1, 2, 3], 0), S([1, 2, 3], -1), S([1.5, 2.5], 1),
                    S([1, 2, 3], 3, error=True)],
           ref=lambda lst, i: lst[i]))
add(OpInfo("aten::dim", lambda: [S(T((2, 3))), S(T(())), S(T((0, 1, 2)))]))
add(OpInfo("aten::size", lambda: [S(T((2, 3))), S(T(())), S(T((0, 4), layout="strided"))],
           ref=lambda x: list(x.shape)))
add(OpInfo("aten::size.int", lambda: [S(T((2, 3)), 1), S(T((2, 3)), -2),
                                      S(T((2, 3)), 2, error=True),
                                      S(T(()), 0, error=True, desc="0-dim")]))
# The metadata queries a Python subclass answers under
# dispatch_sizes_strides_policy (tests/python/test_python_wrapper_torch.py).
add(OpInfo("aten::sym_size", lambda: [S(T((2, 3))), S(T(())), S(T((0, 4)))]))
# torch 1.13's sym_size.int / sym_stride.int read past the end for a
# negative or out-of-range dim (turnout wraps and raises): in-range samples.
add(OpInfo("aten::sym_size.int", lambda: [S(T((2, 3)), 1), S(T((2, 3)), 0)]))
add(OpInfo("aten::sym_stride", lambda: [S(T((2, 3))), S(T((3, 4), layout="transposed")),
                                        S(T(()))]))
add(OpInfo("aten::sym_stride.int", lambda: [S(T((2, 3)), 0),
                                            S(T((3, 4), layout="transposed"), 1)]))
add(OpInfo("aten::sym_numel", lambda: [S(T((2, 3))), S(T(())), S(T((0, 3)))]))
add(OpInfo("aten::sym_storage_offset", lambda: [S(T((2, 3))), S(T(()))]))
add(OpInfo("aten::is_contiguous.memory_format", lambda: [
    S(T((2, 3)), MF("contiguous_format")),
    S(T((3, 4), layout="transposed"), MF("contiguous_format")),
    S(T((2, 3, 4, 5)), MF("channels_last"))]))

add(OpInfo("aten::clamp", lambda: [
    S(T((2, 3)), -1.0, 1.0), S(T((2, 3)), None, 0.5), S(T((2, 3)), -0.5),
    S(T((3, 4), "float64", "transposed"), -1, 2), S(T(()), 0.0, 1.0),
    S(T((0, 3)), 0.0, 1.0), S(T((2, 3), "int64"), -1, 1),
    S(T((2, 3), "int64"), -0.5, 1.5, desc="int tensor, float bounds"),
    S(T((2, 3)), desc="no bound", error=True)]))
add(OpInfo("aten::pow.Tensor_Scalar", lambda: [
    S(T((2, 3), low=0.1), 2), S(T((2, 3), low=0.1), 0.5), S(T((2, 3)), 3),
    S(T((3, 4), "float64", "transposed", low=0.1), -1.5), S(T(()), 2.0),
    S(T((0, 3)), 2), S(T((2, 3), "int64", low=0, high=4), 2),
    S(T((2, 3), "int64", low=0, high=4), 0.5, desc="int tensor, float exponent")]))
add(OpInfo("aten::where.self", lambda: [
    S(T((2, 3), "bool"), T((2, 3)), T((2, 3))),
    S(T((3,), "bool"), T((2, 3)), T((2, 1)), desc="broadcast"),
    S(T((2, 3), "bool", "transposed"), T((2, 3), "float64", "transposed"),
      T((2, 3), "float64")),
    S(T((), "bool"), T(()), T(()), desc="0-dim"),
    S(T((0, 2), "bool"), T((0, 2)), T((0, 2)), desc="empty"),
    S(T((2, 3), "bool"), T((2, 3), "int64"), T((2, 3)), desc="promotion"),
    S(T((2, 3)), T((2, 3)), T((2, 3)), desc="float condition", error=True),
    S(T((2, 3), "bool"), T((2, 3)), T((4,)), desc="shapes", error=True)]))

add(OpInfo("aten::sum", reduce_all()))
add(OpInfo("aten::mean", reduce_all()))
add(OpInfo("aten::sum.dim_IntList", lambda: reduce_dims()() + [
    S(T((2, 3)), None, desc="dim None")]))
add(OpInfo("aten::mean.dim", reduce_dims(int_ok=False)))
def _out_dtype(s: Sample, default: str = "float32") -> str:
    """The dtype= of a sample, for its out= tensor."""
    d = s.kwargs.get("dtype")
    return d.name if isinstance(d, D) else default


add(OpInfo("aten::sum.out", out_of(reduce_all(), lambda s: T((), _out_dtype(s)))))
add(OpInfo("aten::sum.IntList_out", out_of(
    reduce_dims(), lambda s: T((0,), _out_dtype(s, s.args[0].dtype)))))
add(OpInfo("aten::mean.out", out_of(reduce_dims(int_ok=False),
                                    lambda s: T((0,), _out_dtype(s)))))
add(OpInfo("aten::amax", minmax))
add(OpInfo("aten::amin", minmax))
add(OpInfo("aten::amax.out", out_of(minmax, lambda s: T((0,), s.args[0].dtype))))
add(OpInfo("aten::amin.out", out_of(minmax, lambda s: T((0,), s.args[0].dtype))))


def _argmax() -> List[Sample]:
    return [S(T((2, 3))), S(T((2, 3)), 1), S(T((2, 3)), 0, True),
            S(T((3, 4), "float64", "transposed"), -1), S(T((2, 6), layout="strided"), 0),
            S(T(())), S(T((2, 3), "int64"), 1),
            S(T((3,), values=[1.0, 3.0, 3.0]), desc="ties"),
            S(T((0, 3)), desc="empty", error=True), S(T((2, 3)), 2, error=True)]


add(OpInfo("aten::argmax", _argmax))
add(OpInfo("aten::argmax.out", out_of(_argmax, lambda s: T((0,), "int64"))))


def _mm() -> List[Sample]:
    return [S(T((2, 3)), T((3, 4))), S(T((2, 3), "float64", "transposed"),
                                       T((3, 4), "float64", "transposed")),
            S(T((2, 3), layout="strided"), T((3, 2))), S(T((0, 3)), T((3, 2))),
            S(T((2, 0)), T((0, 3)), desc="empty inner"),
            S(T((2, 3)), T((4, 2)), desc="inner sizes", error=True),
            S(T((2, 3)), T((3,)), desc="1-d", error=True),
            S(T((2, 3)), T((3, 2), "float64"), desc="dtypes", error=True)]


def _bmm() -> List[Sample]:
    return [S(T((2, 2, 3)), T((2, 3, 4))),
            S(T((2, 2, 3), "float64", "transposed"), T((2, 3, 4), "float64", "transposed")),
            S(T((0, 2, 3)), T((0, 3, 1))),
            S(T((2, 2, 3)), T((3, 3, 4)), desc="batch sizes", error=True),
            S(T((2, 3)), T((3, 4)), desc="2-d", error=True)]


def _addmm() -> List[Sample]:
    return [S(T((2, 4)), T((2, 3)), T((3, 4))), S(T((4,)), T((2, 3)), T((3, 4)),
                                                  desc="broadcast bias"),
            S(T((2, 4), "float64"), T((2, 3), "float64", "transposed"),
              T((3, 4), "float64"), beta=0.5, alpha=2),
            S(T((1, 4)), T((0, 3)), T((3, 4)), desc="empty"),
            S(T((3,)), T((2, 3)), T((3, 4)), desc="bias shape", error=True)]


def _linear() -> List[Sample]:
    return [S(T((2, 3)), T((4, 3)), T((4,))), S(T((2, 3)), T((4, 3))),
            S(T((5, 2, 3), "float64"), T((4, 3), "float64"), T((4,), "float64"),
              desc="batched"),
            S(T((3,)), T((4, 3)), T((4,)), desc="1-d input"),
            S(T((2, 3), layout="transposed"), T((4, 3), layout="transposed"), None),
            S(T((2, 3)), T((4, 2)), desc="sizes", error=True)]


def _matmul() -> List[Sample]:
    return [S(T((3,)), T((3,)), desc="dot"), S(T((2, 3)), T((3,)), desc="mv"),
            S(T((3,)), T((3, 4)), desc="vm"), S(T((2, 3)), T((3, 4))),
            S(T((5, 2, 3)), T((3, 4)), desc="batched"),
            S(T((2, 2, 3), "float64"), T((1, 3, 4), "float64"), desc="broadcast batch"),
            S(T((2, 3), layout="transposed"), T((3, 4), layout="transposed")),
            S(T((2, 3)), T((4,)), error=True)]


add(OpInfo("aten::mm", _mm))
add(OpInfo("aten::mm.out", out_of(_mm, lambda s: T((0,), s.args[0].dtype))))
add(OpInfo("aten::bmm", _bmm))
add(OpInfo("aten::bmm.out", out_of(_bmm, lambda s: T((0,), s.args[0].dtype))))
add(OpInfo("aten::addmm", _addmm))
add(OpInfo("aten::addmm.out", out_of(_addmm, lambda s: T((0,), s.args[0].dtype))))
add(OpInfo("aten::linear", _linear))
add(OpInfo("aten::linear.out", out_of(_linear, lambda s: T((0,), s.args[0].dtype))))
add(OpInfo("aten::matmul", _matmul))
add(OpInfo("aten::matmul.out", out_of(_matmul, lambda s: T((0,), s.args[0].dtype))))


def _softmax(internal: bool) -> Callable[[], List[Sample]]:
    def gen() -> List[Sample]:
        third: Any = False if internal else None
        out = [S(T((2, 3)), 1, third), S(T((2, 3, 4), "float64"), 0, third),
               S(T((3, 4), layout="transposed"), -1, third),
               S(T((2, 6), layout="strided"), 1, third), S(T(()), 0, third),
               S(T((0, 3)), 1, third),
               S(T((3, 45), low=-30, high=30), 1, third, desc="wide"),
               S(T((2, 3)), 2, third, error=True)]
        if not internal:
            out.append(S(T((2, 3)), 1, D("float64")))
            out.append(S(T((2, 3), "int64"), 1, error=True, desc="int input"))
        return out
    return gen


def _softmax_backward(log: bool) -> List[Sample]:
    out = []
    for shape, dim, dtype in (((2, 3), 1, "float32"), ((2, 3, 4), 0, "float64"),
                              ((3,), 0, "float32")):
        x = _rng.uniform(-2, 2, shape)
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        y = e / e.sum(axis=dim, keepdims=True)
        if log:
            y = np.log(y)
        out.append(S(T(shape, dtype), T(shape, dtype, values=y), dim, D(dtype)))
    return out


add(OpInfo("aten::softmax.int", _softmax(False), atol=1e-6))
add(OpInfo("aten::log_softmax.int", _softmax(False)))
add(OpInfo("aten::_softmax", _softmax(True), atol=1e-6))
add(OpInfo("aten::_log_softmax", _softmax(True)))
def _softmax_out(s: Sample) -> T:
    d = s.args[2] if len(s.args) > 2 else None
    return T((0,), d.name if isinstance(d, D) else s.args[0].dtype)


add(OpInfo("aten::softmax.int_out", out_of(_softmax(False), _softmax_out)))
add(OpInfo("aten::log_softmax.int_out", out_of(_softmax(False), _softmax_out)))
# grad=False: turnout has no double backward of softmax (no autograd kernel
# for the backward ops); torch 1.13 has one. Not done: see issue 16's report.
_NO_DOUBLE_BACKWARD = dict(
    grad=False, opcheck=("test_schema", "test_faketensor", "test_graph"),
    skip_opcheck="no autograd kernel (softmax's double backward) in turnout yet")
add(OpInfo("aten::_softmax_backward_data", lambda: _softmax_backward(False),
           **_NO_DOUBLE_BACKWARD))
add(OpInfo("aten::_log_softmax_backward_data", lambda: _softmax_backward(True),
           **_NO_DOUBLE_BACKWARD))


def _cat() -> List[Sample]:
    return [S([T((2, 3)), T((1, 3))]), S([T((2, 3)), T((2, 4))], 1),
            S([T((2, 3), layout="strided"), T((2, 2), layout="transposed")], -1),
            S([T((2, 3)), T((0,))], desc="legacy empty"),
            S([T((2, 3), "float64"), T((1, 3))], desc="promotion"),
            S([T((3,))], desc="one"),
            S([T((2, 3)), T((2, 4))], 0, error=True), S([], error=True)]


def _stack() -> List[Sample]:
    return [S([T((2, 3)), T((2, 3))]), S([T((2, 3)), T((2, 3))], 2),
            S([T((2, 3), layout="transposed"), T((2, 3))], -1),
            S([T(()), T(())], desc="0-dim"), S([T((0, 2))]),
            S([T((2, 3)), T((3, 2))], error=True), S([], error=True)]


add(OpInfo("aten::cat", _cat))
add(OpInfo("aten::stack", _stack))

add(OpInfo("aten::view", lambda: [
    S(T((2, 3)), [3, 2]), S(T((2, 3)), [-1]), S(T((2, 3, 4)), [6, -1]),
    S(T(()), [1]), S(T((1,)), []), S(T((0, 3)), [3, 0]),
    S(T((3, 4), layout="transposed"), [3, 2, 2]),
    S(T((3, 4), layout="transposed"), [12], desc="not viewable", error=True),
    S(T((2, 3)), [4, 2], error=True), S(T((2, 3)), [-1, -1], error=True)]))
# _unsafe_view: view's result without a view's autograd (reshape's copy).
add(OpInfo("aten::_unsafe_view", lambda: [
    S(T((2, 3)), [3, 2]), S(T((2, 3, 4)), [6, -1]), S(T(()), [1]), S(T((0, 3)), [3, 0]),
    S(T((3, 4), layout="transposed"), [3, 2, 2]),
    S(T((3, 4), layout="transposed"), [12], desc="not viewable", error=True),
    S(T((2, 3)), [4, 2], error=True)],
    opcheck=("test_autograd_registration", "test_faketensor", "test_graph"),
    skip_opcheck="test_schema: its result shares self's storage under a schema "
                 "that declares none, as torch 1.13's (the 'unsafe' of its name: "
                 "its callers pass a tensor nothing else sees)"))
add(OpInfo("aten::reshape", lambda: [
    S(T((2, 3)), [3, 2]), S(T((2, 3)), [-1]), S(T((3, 4), layout="transposed"), [12]),
    S(T((2, 6), layout="strided"), [3, 4]), S(T(()), [1]), S(T((0, 3)), [0, 1, 3]),
    S(T((2, 3)), [4, 2], error=True)]))
add(OpInfo("aten::expand", lambda: [
    S(T((3, 1)), [3, 4]), S(T((3,)), [2, 3]), S(T((3, 1)), [-1, 2]), S(T(()), [2, 2]),
    S(T((1, 3), layout="strided"), [2, 2, 3]), S(T((1, 2)), [0, 2]),
    S(T((3,)), [4], error=True), S(T((2, 3)), [3], error=True)]))
add(OpInfo("aten::permute", lambda: [
    S(T((2, 3, 4)), [2, 0, 1]), S(T((2, 3)), [-1, 0]), S(T(()), []),
    S(T((3, 4), layout="transposed"), [1, 0]),
    S(T((2, 3)), [0, 0], error=True), S(T((2, 3)), [0], error=True)]))
add(OpInfo("aten::transpose.int", lambda: [
    S(T((2, 3)), 0, 1), S(T((2, 3, 4)), -1, 0), S(T((2, 3)), 1, 1), S(T(()), 0, -1),
    S(T((2, 6), layout="strided"), 0, 1), S(T((2, 3)), 0, 2, error=True)]))
add(OpInfo("aten::t", lambda: [
    S(T((2, 3))), S(T((3,))), S(T(())), S(T((3, 4), layout="transposed")),
    S(T((2, 3, 4)), error=True)]))
add(OpInfo("aten::unsqueeze", lambda: [
    S(T((2, 3)), 0), S(T((2, 3)), -1), S(T((2, 3)), 2), S(T(()), 0),
    S(T((3, 4), layout="transposed"), 1), S(T((2, 3)), 3, error=True)]))
add(OpInfo("aten::squeeze.dim", lambda: [
    S(T((2, 1, 3)), 1), S(T((2, 3)), 0), S(T((2, 1)), -1), S(T(()), 0),
    S(T((1, 3), layout="strided"), 0), S(T((2, 3)), 2, error=True)]))
add(OpInfo("aten::select.int", lambda: [
    S(T((2, 3)), 0, 1), S(T((2, 3)), 1, -1), S(T((3, 4), layout="transposed"), 1, 2),
    S(T((2, 6), layout="strided"), 1, 0), S(T((2, 3)), 0, 2, error=True),
    S(T(()), 0, 0, error=True)]))
add(OpInfo("aten::slice.Tensor", lambda: [
    S(T((4, 3))), S(T((4, 3)), 0, 1, 3), S(T((4, 3)), 1, 0, None, 2),
    S(T((4, 3)), 0, -3, -1), S(T((4, 3)), 0, 2, 100), S(T((4, 3)), 0, 3, 1, desc="empty"),
    S(T((3, 4), layout="transposed"), 1, 1, 3), S(T((4, 3)), 0, 0, 4, 0, error=True),
    S(T((4, 3)), 2, 0, 1, error=True)]))
add(OpInfo("aten::detach", lambda: [S(T((2, 3))), S(T(())),
                                    S(T((3, 4), layout="transposed"))], grad=False))
add(OpInfo("aten::alias", lambda: [S(T((2, 3))), S(T(())),
                                   S(T((3, 4), layout="transposed"))]))
add(OpInfo("aten::contiguous", lambda: [
    S(T((2, 3))), S(T((3, 4), layout="transposed")), S(T((2, 6), "int64", layout="strided")),
    S(T(())), S(T((0, 2)))]))
add(OpInfo("aten::clone", lambda: [
    S(T((2, 3))), S(T((3, 4), layout="transposed")), S(T((2, 6), "int64", layout="strided")),
    S(T((3, 4), layout="transposed"), memory_format=MF("contiguous_format")),
    S(T((3, 4), layout="transposed"), memory_format=MF("preserve_format")),
    S(T(())), S(T((0, 2)))]))
# opcheck's gradcheck runs in double; a cast back to float32 or float16 makes
# finite differences meaningless (the gradients are compared with torch's in
# test_op_db_torch instead).
_CAST = dict(opcheck=("test_schema", "test_faketensor", "test_graph"),
             skip_opcheck="gradcheck in double cannot see through a narrowing cast")
add(OpInfo("aten::to.dtype", **_CAST, samples=lambda: [
    S(T((2, 3)), D("float64")), S(T((2, 3)), D("float32")),
    S(T((2, 3)), D("float32"), False, True, desc="copy"),
    S(T((2, 3), low=-100, high=100), D("int64")), S(T((2, 3), "int64"), D("float32")),
    S(T((3, 4), layout="transposed"), D("float64")), S(T((2, 3)), D("bool")),
    S(T((2, 3)), D("float16")), S(T(()), D("int32")), S(T((0, 3)), D("float64"))]))
add(OpInfo("aten::to.device", **_CAST, samples=lambda: [
    S(T((2, 3)), Dev("cpu"), D("float64")), S(T((2, 3)), Dev("cpu"), D("float32")),
    S(T((2, 3)), Dev("cpu"), D("float32"), False, True, desc="copy"),
    S(T((3, 4), layout="transposed"), Dev("cpu"), D("int64"))]))
add(OpInfo("aten::_to_copy", lambda: [
    S(T((2, 3))), S(T((2, 3)), dtype=D("float64")),
    S(T((3, 4), layout="transposed"), dtype=D("int64")),
    S(T((2, 3)), device=Dev("cpu")), S(T(())), S(T((0, 3)), dtype=D("bfloat16"))]))
add(OpInfo("aten::copy_", lambda: [
    S(T((2, 3)), T((2, 3))), S(T((2, 3)), T((3,)), desc="broadcast"),
    S(T((2, 3), "float64"), T((2, 3), "int64"), desc="cast"),
    S(T((3, 4), layout="transposed"), T((3, 4), layout="strided")),
    S(T(()), T(())), S(T((2, 3)), T((4,)), error=True)]))
add(OpInfo("aten::fill_.Scalar", lambda: [
    S(T((2, 3)), 1.5), S(T((2, 3), "int64"), 7), S(T((3, 4), layout="transposed"), -2),
    S(T(()), 3), S(T((0, 3)), 1.0), S(T((2, 3), "bool"), True)]))

add(OpInfo("aten::zeros", factory()))
add(OpInfo("aten::ones", factory()))
# torch.ops makes a bool fill_value an int; torch.full keeps it a bool.
add(OpInfo("aten::full", ref=lambda size, fill, **kw: __import__("torch").full(size, fill, **kw),
           samples=lambda: [
    S([2, 3], 1.5), S([2, 3], 7), S([], 2.0), S([0, 2], 1.0), S([2], True),
    S([2, 3], 1.5, dtype=D("float64")), S([2], 2, dtype=D("float32")),
    S([-1], 1.0, error=True)]))
# Uninitialised memory: test_graph's run and the eager one differ.
_UNINIT = dict(values=False, opcheck=("test_schema", "test_autograd_registration",
                                      "test_faketensor"),
               skip_opcheck="uninitialised values differ from run to run")
add(OpInfo("aten::empty.memory_format", factory(), **_UNINIT))
add(OpInfo("aten::empty.names", lambda: [
    S([2, 3], names=None), S([], names=None), S([0, 4], names=None),
    S([2], names=None, dtype=D("int64")),
    S([2], names=["a"], error=True, desc="named tensors")], **_UNINIT))
_RANDOM = dict(values=False, opcheck=("test_schema", "test_autograd_registration",
                                      "test_faketensor"),
               skip_opcheck="random values differ between test_graph's run and eager")
add(OpInfo("aten::rand", factory(floating_only=True), **_RANDOM))
add(OpInfo("aten::randn", factory(floating_only=True), **_RANDOM))
add(OpInfo("aten::empty_strided", lambda: [
    S([2, 3], [3, 1]), S([2, 3], [1, 2]), S([], []), S([0, 3], [3, 1]),
    S([2, 3], [3, 1], dtype=D("float64")), S([2, 3], [1], error=True)], **_UNINIT))
add(OpInfo("aten::zeros_like", like))
add(OpInfo("aten::ones_like", like))
add(OpInfo("aten::empty_like", like, **_UNINIT))
# full_like: self's dtype (not the value's) unless given; a value that does
# not fit it is refused (fill_'s check), a fraction into integers truncated.
add(OpInfo("aten::full_like", lambda: [
    S(*s.args, 2.5, **s.kwargs, desc=s.desc, error=s.error) for s in like()] + [
    S(T((2, 3), "int64"), 1.5), S(T((2,), "uint8"), -1), S(T((2,), "bool"), 2),
    S(T((2,), "int64"), True), S(T((2,), "float32"), 7, dtype=D("float64")),
    S(T((2,), "uint8"), 300, error=True), S(T((2,), "int64"), float("inf"), error=True),
    S(T((2,), "int64"), float("nan"), error=True), S(T((2,), "float16"), 1e6, error=True)]))
add(OpInfo("aten::new_empty", lambda: [
    S(T((2, 3)), [4, 5]), S(T((2,), "int64"), []), S(T((2,)), [3], dtype=D("float64")),
    S(T((2,)), [0, 2]), S(T((2,)), [-1], error=True)], **_UNINIT))
add(OpInfo("aten::new_empty_strided", lambda: [
    S(T((2, 3)), [4, 5], [1, 4]), S(T((2,), "int64"), [], []),
    S(T((2,)), [3], [2], dtype=D("float64")), S(T((2,)), [0, 2], [2, 1]),
    S(T((2,)), [2, 3], [1], error=True), S(T((2,)), [-1], [1], error=True)], **_UNINIT))
add(OpInfo("aten::arange", lambda: [
    S(5), S(5.0), S(2.5), S(0), S(5, dtype=D("float64")), S(-1, error=True)]))
add(OpInfo("aten::arange.start", lambda: [
    S(2, 7), S(-1.5, 2.0), S(3, 3), S(0, 4, dtype=D("float32")), S(5, 2, error=True)]))
add(OpInfo("aten::arange.start_step", lambda: [
    S(0, 10, 3), S(1.0, 2.0, 0.25), S(5, 0, -1), S(0, 1, 0.3),
    S(0, 5, 0, error=True), S(0, 5, -1, error=True)]))
# Pinned memory needs a CUDA runtime: without one torch 1.13 and turnout
# both say so (pin_memory raises, is_pinned is False).
add(OpInfo("aten::is_pinned", lambda: [S(T((2, 3))), S(T(()))]))
_NEEDS_CUDA = dict(opcheck=(), skip_opcheck="pinning needs a CUDA runtime; without "
                   "one every sample raises, as torch's")
add(OpInfo("aten::pin_memory", lambda: [S(T((2, 3)), error=True)], **_NEEDS_CUDA))
add(OpInfo("aten::_pin_memory", lambda: [S(T((2, 3)), error=True)], **_NEEDS_CUDA))


# ---- Indexing and more shape operators --------------------------------------


def _idx(shape: Sequence[int], high: int) -> T:
    """An int64 index tensor with values in [0, high]."""
    return T(shape, "int64", low=0, high=high)


def _index() -> List[Sample]:
    return [S(T((4, 3)), [_idx((2,), 3)]),
            S(T((4, 3)), [None, _idx((2, 2), 2)], desc="second dim"),
            S(T((4, 3)), [_idx((2,), 3), _idx((2,), 2)], desc="pointwise"),
            S(T((4, 3)), [_idx((2, 1), 3), _idx((3,), 2)], desc="broadcast"),
            S(T((4, 3)), [T((4, 3), "bool")], desc="mask"),
            S(T((4, 3)), [T((4,), "bool")], desc="row mask"),
            S(T((3, 4), layout="transposed"), [_idx((2,), 2)]),
            S(T((4, 6), "int64", layout="strided"), [None, _idx((2,), 2)]),
            S(T((4, 3)), [_idx((0,), 3)], desc="empty index"),
            S(T((4, 3)), [T((2,), "int64", low=4, high=6)], desc="out of range", error=True),
            S(T((4, 3)), [T((3,), "bool")], desc="mask shape", error=True)]


def _index_put() -> List[Sample]:
    # Distinct indices (but in "accumulate"): with a repeated index and
    # accumulate=False, which write wins is unspecified, and gradcheck sees a
    # value whose write was overwritten.
    rows = T((2,), "int64", values=[3, 1])
    return [S(T((4, 3)), [rows], T((2, 3))),
            S(T((4, 3)), [rows], T((3,)), desc="broadcast values"),
            S(T((4, 3)), [rows, T((2,), "int64", values=[0, 2])], T(()), desc="scalar value"),
            S(T((4, 3)), [T((4, 3), "bool")], T(()), desc="mask"),
            S(T((4, 3)), [None, T((2,), "int64", values=[2, 0])], T((4, 2))),
            S(T((4, 3)), [T((2,), "int64", low=4, high=6)], T(()), error=True),
            S(T((4, 3)), [T((3,), "int64", values=[0, 0, 2])], T((3, 3)), True,
              desc="accumulate")]


# A boolean mask (and nonzero) gives a result whose size depends on the
# values: no Meta kernel can compute it (torch's fake tensors raise
# DynamicOutputShapeException), so opcheck leaves out test_faketensor.
_DYNAMIC = dict(opcheck=("test_schema", "test_autograd_registration", "test_graph"),
                skip_opcheck="the output size depends on a mask's values (no Meta kernel)")
add(OpInfo("aten::index.Tensor", _index, **_DYNAMIC))
add(OpInfo("aten::index.Tensor_out", out_of(_index, lambda s: T((0,), s.args[0].dtype)),
           **_DYNAMIC))
add(OpInfo("aten::index_put", _index_put, **_DYNAMIC))
add(OpInfo("aten::index_put_", _index_put, **_DYNAMIC))


def _index_select() -> List[Sample]:
    return [S(T((4, 3)), 0, _idx((2,), 3)), S(T((4, 3)), 1, _idx((4,), 2)),
            S(T((4, 3)), -1, _idx((0,), 2), desc="empty index"),
            S(T((3, 4), layout="transposed"), 0, _idx((2,), 2)),
            S(T((5,), "int64"), 0, _idx((3,), 4)), S(T(()), 0, _idx((1,), 0), desc="0-dim"),
            S(T((4, 3)), 0, T((2,), "int64", low=4, high=6), error=True),
            S(T((4, 3)), 2, _idx((2,), 1), error=True)]


add(OpInfo("aten::index_select", _index_select))
add(OpInfo("aten::index_select.out",
           out_of(_index_select, lambda s: T((0,), s.args[0].dtype))))


def _nonzero() -> List[Sample]:
    return [S(T((4, 3), "int64", low=-1, high=1)), S(T((5,), "int64", low=0, high=1)),
            S(T((3, 4), "bool", layout="transposed")), S(T(())), S(T((0, 3)))]


add(OpInfo("aten::nonzero", _nonzero, grad=False, **_DYNAMIC))
add(OpInfo("aten::nonzero.out", out_of(_nonzero, lambda s: T((0,), "int64")), grad=False,
           **_DYNAMIC))


def _masked_fill(value: Callable[[], Any]) -> Callable[[], List[Sample]]:
    def gen() -> List[Sample]:
        return [S(T((2, 3)), T((2, 3), "bool"), value()),
                S(T((2, 3)), T((3,), "bool"), value(), desc="broadcast mask"),
                S(T((3, 4), layout="transposed"), T((3, 4), "bool"), value()),
                S(T(()), T((), "bool"), value())]
    return gen


add(OpInfo("aten::masked_fill.Scalar", _masked_fill(lambda: 2.5)))
add(OpInfo("aten::masked_fill_.Scalar", _masked_fill(lambda: -1.0)))
add(OpInfo("aten::masked_fill.Tensor", _masked_fill(lambda: T(()))))
add(OpInfo("aten::masked_fill_.Tensor", _masked_fill(lambda: T(()))))

add(OpInfo("aten::split.Tensor", lambda: [
    S(T((5, 3)), 2), S(T((5, 3)), 2, 1), S(T((4, 3)), 4), S(T((3, 4), layout="transposed"), 1, -1),
    S(T((0, 3)), 2), S(T((5, 3)), 0, error=True), S(T(()), 1, error=True)]))
_SPLIT_SIZES = lambda: [  # noqa: E731
    S(T((5, 3)), [2, 3]), S(T((5, 3)), [1, 2], 1), S(T((5, 3)), [5, 0]),
    S(T((3, 4), layout="transposed"), [2, 2], -1), S(T((5, 3)), [2, 2], error=True)]
add(OpInfo("aten::split.sizes", _SPLIT_SIZES))
add(OpInfo("aten::split_with_sizes", _SPLIT_SIZES))
add(OpInfo("aten::chunk", lambda: [
    S(T((5, 3)), 2), S(T((5, 3)), 3, 1), S(T((6,)), 4), S(T((3, 4), layout="transposed"), 2, -1),
    S(T((0, 3)), 2), S(T((5, 3)), 0, error=True)]))
add(OpInfo("aten::unbind.int", lambda: [
    S(T((3, 2))), S(T((3, 2)), 1), S(T((3, 4), layout="transposed"), -1), S(T((0, 2)), 1),
    S(T(()), error=True)]))
add(OpInfo("aten::flatten.using_ints", lambda: [
    S(T((2, 3, 4))), S(T((2, 3, 4)), 1), S(T((2, 3, 4)), 0, 1), S(T(())),
    S(T((3, 4), layout="transposed")), S(T((2, 3)), 1, 0, error=True)]))
add(OpInfo("aten::as_strided", lambda: [
    S(T((4, 3)), [2, 2], [3, 1]), S(T((4, 3)), [3], [4], 1), S(T((4, 3)), [2, 3], [1, 2]),
    S(T((6,)), [2, 2], [1, 1], desc="overlapping view", grad=False),
    S(T((4, 3)), [5, 5], [3, 1], error=True)]))
add(OpInfo("aten::diagonal", lambda: [
    S(T((3, 4))), S(T((3, 4)), 1), S(T((3, 4)), -1), S(T((2, 3, 4)), 0, 1, 2),
    S(T((3, 4), layout="transposed"), 0, -1, -2), S(T((3, 4)), 5),
    S(T((3,)), error=True)]))
add(OpInfo("aten::cat.out", out_of(lambda: [
    S([T((2, 3)), T((1, 3))]), S([T((2, 3)), T((2, 4))], 1),
    S([T((2, 3)), T((2, 4))], 0, error=True)], lambda s: T((0,), "float32"))))
add(OpInfo("aten::stack.out", out_of(lambda: [
    S([T((2, 3)), T((2, 3))]), S([T((2, 3)), T((2, 3))], 2),
    S([T((2, 3)), T((3, 2))], error=True)], lambda s: T((0,), "float32"))))


add(OpInfo("aten::where.ScalarSelf", lambda: [
    S(T((2, 3), "bool"), 1.5, T((2, 3))), S(T((3,), "bool"), 2, T((2, 3), "float64")),
    S(T((2, 3), "bool"), 1.5, T((4,)), error=True)]))
add(OpInfo("aten::where.ScalarOther", lambda: [
    S(T((2, 3), "bool"), T((2, 3)), -1.5), S(T((3,), "bool"), T((2, 3), "int64"), 2),
    S(T((2, 3), "bool"), T((4,)), 0.0, error=True)]))
add(OpInfo("aten::where.Scalar", lambda: [
    S(T((2, 3), "bool"), 1.0, 0.0), S(T((), "bool"), 2, 3)]))
add(OpInfo("aten::where", lambda: [
    S(T((2, 3), "bool")), S(T((4,), "int64", low=0, high=1)), S(T((0, 2), "bool"))],
    grad=False, **_DYNAMIC))
add(OpInfo("aten::where.self_out", out_of(lambda: [
    S(T((2, 3), "bool"), T((2, 3)), T((2, 3))), S(T((3,), "bool"), T((2, 3)), T((3,))),
    S(T((2, 3), "bool"), T((2, 3)), T((4,)), error=True)], lambda s: T((0,), "float32"))))
add(OpInfo("aten::scalar_tensor", lambda: [
    S(1.5), S(3), S(True), S(2.0, dtype=D("float64")), S(2, dtype=D("int64"))]))
add(OpInfo("aten::lift_fresh", lambda: [S(T((2, 3))), S(T(())), S(T((3, 4), layout="transposed"))],
           grad=False))


# ---- Operators kernels are written with (issue 18) --------------------------
# kernels/pointwise_ternary.cc and kernels/select_ops.cc.


def _addc(div: bool) -> Callable[[], List[Sample]]:
    low = 0.5 if div else -3  # a divisor away from 0

    def gen() -> List[Sample]:
        out = [S(T((2, 3)), T((2, 3)), T((2, 3), low=low)),
               S(T((2, 3)), T((3,)), T((2, 1), low=low), value=0.5,
                 desc="broadcast, value"),
               S(T((3, 4), layout="transposed"), T((3, 4), layout="strided"),
                 T((4,), low=low), value=-2),
               S(T(()), T(()), T((), low=low), desc="0-dim"),
               S(T((0, 3)), T((3,)), T((3,), low=low), desc="empty"),
               S(T((2, 3), "float64"), T((2, 3)), T((2, 3), low=low), desc="promotion"),
               S(T((2, 3), "int64"), T((2, 3)), T((), "float64", low=low),
                 desc="int self, 0-dim double"),
               S(T((2, 3)), T((4,)), T((2, 3), low=low), desc="shapes", error=True),
               S(T((2, 3), "float16"), T((2, 3), "float16"), T((2, 3), "float16", low=low),
                 desc="no Half CPU kernel", error=True)]
        if div:
            out.append(S(T((2, 3)), T((2, 3), "int64"), T((2, 3), "int64", low=1),
                         desc="integer division", error=True))
        else:
            out += [S(T((2, 3), "int64"), T((2, 3), "int64"), T((3,), "int64"), value=3,
                      desc="int"),
                    S(T((2, 3), "int64"), T((2, 3), "int64"), T((3,), "int64"),
                      value=2.7, desc="int, float value truncated"),
                    S(T((2, 3), "bool"), T((2, 3), "bool"), T((2, 3), "bool"),
                      desc="no Bool kernel", error=True)]
        return out
    return gen


def _addc_inplace(div: bool) -> Callable[[], List[Sample]]:
    low = 0.5 if div else -3

    def gen() -> List[Sample]:
        return [S(T((2, 3)), T((2, 3)), T((3,), low=low), value=2),
                S(T((3, 4), layout="transposed"), T((4,)), T((3, 4), low=low)),
                S(T(()), T(()), T((), low=low), desc="0-dim"),
                S(T((2, 3), "float64"), T((2, 3)), T((2, 3), low=low),
                  desc="float into double"),
                S(T((3,)), T((2, 3)), T((3,), low=low), desc="other broadcasts self",
                  error=True),
                S(T((2, 3), "int64"), T((2, 3)), T((2, 3), low=low), desc="float into int",
                  error=True)]
    return gen


def _addc_out(div: bool) -> Callable[[], List[Sample]]:
    low = 0.5 if div else -3

    def gen() -> List[Sample]:
        return [S(T((2, 3)), T((2, 3)), T((3,), low=low), out=T((2, 3))),
                S(T((2, 3)), T((3,)), T((2, 1), low=low), value=3,
                  out=T((2, 3), layout="transposed"), desc="transposed out"),
                S(T((2, 3)), T((2, 3)), T((2, 3), low=low), out=T((0,)), desc="resized out"),
                S(T((2, 3)), T((2, 3)), T((2, 3), low=low), out=T((2, 3), "int64"),
                  desc="float into int out", error=True)]
    return gen


for _name, _div in (("addcmul", False), ("addcdiv", True)):
    add(OpInfo(f"aten::{_name}", _addc(_div)))
    add(OpInfo(f"aten::{_name}_", _addc_inplace(_div)))
    add(OpInfo(f"aten::{_name}.out", _addc_out(_div)))


def _lerp(weight: Callable[[Sequence[int]], Any]) -> Callable[[], List[Sample]]:
    """weight(shape): a Python number or a T of that shape."""
    def gen() -> List[Sample]:
        return [S(T((2, 3)), T((2, 3)), weight((2, 3))),
                S(T((2, 3)), T((3,)), weight((2, 1)), desc="broadcast"),
                S(T((3, 4), "float64", "transposed"), T((3, 4), "float64", "strided"),
                  weight(("float64", 4))),
                S(T(()), T(()), weight(()), desc="0-dim"),
                S(T((0, 3)), T((3,)), weight((3,)), desc="empty"),
                S(T((2, 3)), T((2, 3), "float64"), weight((2, 3)), desc="end dtype",
                  error=True),
                S(T((2, 3), "int64"), T((2, 3), "int64"), weight(("int64", 3)),
                  desc="integers", error=True),
                S(T((2, 3)), T((4,)), weight((4,)), desc="shapes", error=True)]
    return gen


def _lerp_weight_scalar(shape: Any) -> Any:
    return {(2, 3): 0.3, (2, 1): 0.75, (): -1.5, (3,): 2}.get(
        tuple(shape) if isinstance(shape, tuple) else shape, 0.5)


def _lerp_weight_tensor(shape: Any) -> Any:
    if shape and isinstance(shape[0], str):  # (dtype, n)
        return T((shape[1],), shape[0], low=-1, high=2)
    return T(shape, low=-1, high=2)


add(OpInfo("aten::lerp.Scalar", _lerp(_lerp_weight_scalar)))
add(OpInfo("aten::lerp.Tensor", lambda: _lerp(_lerp_weight_tensor)() + [
    S(T((2, 3)), T((2, 3)), T((2, 3), "float64"), desc="weight dtype", error=True),
    S(T((2, 3), "float16"), T((2, 3), "float16"), T((2, 3), "float16"),
      desc="no Half CPU kernel", error=True)]))


def _lerp_inplace(weight: Callable[[Sequence[int]], Any]) -> Callable[[], List[Sample]]:
    def gen() -> List[Sample]:
        return [S(T((2, 3)), T((3,)), weight((3,))),
                S(T((3, 4), layout="transposed"), T((3, 4)), weight(())),
                S(T(()), T(()), weight(()), desc="0-dim"),
                S(T((3,)), T((2, 3)), weight((3,)), desc="end broadcasts self", error=True),
                S(T((2, 3)), T((2, 3), "float64"), weight((2, 3)), desc="end dtype",
                  error=True)]
    return gen


add(OpInfo("aten::lerp_.Scalar", _lerp_inplace(_lerp_weight_scalar)))
add(OpInfo("aten::lerp_.Tensor", _lerp_inplace(_lerp_weight_tensor)))
add(OpInfo("aten::lerp.Scalar_out", lambda: [
    S(T((2, 3)), T((3,)), 0.25, out=T((2, 3))),
    S(T((2, 3)), T((2, 3)), 0.75, out=T((0,)), desc="resized out"),
    S(T((2, 3)), T((2, 3)), 0.5, out=T((2, 3), "float64"), desc="float into double out"),
    S(T((2, 3)), T((2, 3)), 0.5, out=T((2, 3), "int64"), desc="float into int out",
      error=True)]))
add(OpInfo("aten::lerp.Tensor_out", lambda: [
    S(T((2, 3)), T((3,)), T((2, 1)), out=T((2, 3))),
    S(T((2, 3)), T((2, 3)), T(()), out=T((0,)), desc="resized out"),
    S(T((2, 3)), T((2, 3)), T((2, 3)), out=T((2, 3), "float64"), desc="out dtype",
      error=True)]))


def _tri() -> List[Sample]:
    return [S(T((3, 4))), S(T((3, 4)), 1), S(T((4, 3)), -1), S(T((2, 3, 4)), 2),
            S(T((3, 4), layout="transposed"), -2), S(T((3, 4), "int64")),
            S(T((3, 3), "bool")), S(T((0, 3))), S(T((3, 4)), 100), S(T((3, 4)), -100),
            S(T((3, 5), layout="strided"), 1),
            S(T((3,)), desc="1-D", error=True), S(T(()), desc="0-dim", error=True)]


for _name in ("tril", "triu"):
    add(OpInfo(f"aten::{_name}", _tri))
    add(OpInfo(f"aten::{_name}_", _tri))
    add(OpInfo(f"aten::{_name}.out", lambda: out_of(
        _tri, lambda s: T((0,), s.args[0].dtype))() + [
        S(T((3, 4)), out=T((3, 4), "int64"), desc="out dtype", error=True),
        S(T((3, 4)), 1, out=T((4, 3), layout="transposed"), desc="transposed out",
          grad=False)]))


add(OpInfo("aten::roll", lambda: [
    S(T((2, 3)), 1), S(T((2, 3)), 1, 0), S(T((2, 3)), [1, -1], [0, 1]), S(T((2, 3)), -7),
    S(T((3, 4), layout="transposed"), 2, 1), S(T((3, 4), layout="strided"), [5, 1], [1, 0]),
    S(T(()), 3, desc="0-dim"), S(T((0, 3)), 1, 0, desc="empty"),
    S(T((2, 3)), [1, 1], [0, 0], desc="a dim twice"), S(T((2, 3), "int64"), 2, -1),
    S(T((2, 3, 4)), [1, 2], [2, 0]),
    S(T((2, 3)), [1, 2], [0], desc="shifts and dims", error=True),
    S(T((2, 3)), [], [], desc="no shifts", error=True),
    S(T((2, 3)), 1, 5, desc="dim", error=True),
    S(T(()), 1, 0, desc="dim of 0-dim", error=True)]))


def _masked_select() -> List[Sample]:
    return [S(T((2, 3)), T((2, 3), "bool")),
            S(T((2, 3)), T((3,), "bool"), desc="broadcast mask"),
            S(T((3,)), T((2, 3), "bool"), desc="broadcast self"),
            # torch 1.13's gradient of a transposed self is scattered in
            # self's memory order (its masked_scatter_ on a non-contiguous
            # tensor), not in the order the values were selected: turnout's
            # is the derivative, so these gradients are not compared.
            S(T((3, 4), layout="transposed"), T((3, 4), "bool"), grad=False),
            S(T((3, 4), layout="strided"), T((3, 4), "bool", "transposed")),
            S(T((2, 3), "int64"), T((2, 3), "bool")),
            S(T(()), T((), "bool"), desc="0-dim"),
            S(T((0, 3)), T((3,), "bool"), desc="empty"),
            S(T((2, 3)), T((2, 3), "uint8", low=0, high=1), desc="uint8 mask"),
            S(T((2, 3)), T((2, 3), "int64", low=0, high=1), desc="long mask", error=True),
            S(T((2, 3)), T((4,), "bool"), desc="shapes", error=True)]


add(OpInfo("aten::masked_select", _masked_select, **_DYNAMIC))
add(OpInfo("aten::masked_select.out", lambda: out_of(
    _masked_select, lambda s: T((0,), s.args[0].dtype))() + [
    S(T((2, 3)), T((2, 3), "bool"), out=T((5, 5)), desc="resized out", grad=False),
    S(T((2, 3)), T((2, 3), "bool"), out=T((2,), "float64"), desc="out dtype",
      error=True)], **_DYNAMIC))

_NAN = float("nan")
add(OpInfo("aten::equal", lambda: [
    S(T((2, 3)), T((2, 3))),
    S(T((3,), values=[1.0, 2.0, 3.0]), T((3,), values=[1.0, 2.0, 3.0]), desc="equal"),
    S(T((3,), values=[1.0, 2.0, 3.0]), T((3,), "int64", values=[1, 2, 3]),
      desc="promoted"),
    S(T((2,), values=[1.5, 2.0]), T((2,), "int64", values=[1, 2]), desc="not equal"),
    S(T((2,), "bool", values=[True, False]), T((2,), "int64", values=[1, 0])),
    S(T((3,)), T((1,)), desc="sizes"), S(T((3,)), T((3, 1)), desc="dims"),
    S(T((1,), values=[_NAN]), T((1,), values=[_NAN]), desc="nan"),
    S(T(()), T(())), S(T((0,)), T((0,), "int64"), desc="empty")],
    grad=False, opcheck=("test_schema", "test_autograd_registration"),
    skip_opcheck="returns a bool computed from the values: no Meta kernel (as torch 1.13)"))


# ---- Math, dim and random operators (issue 18) -------------------------------

# Transcendental functions compute an integer input in float32; the others
# keep the input's dtype (their out= must have it).
_TO_FLOAT = {"acos", "asin", "atan", "cos", "cosh", "erf", "exp", "expm1", "log", "log10",
             "log1p", "log2", "reciprocal", "rsqrt", "sigmoid", "sin", "sinh", "sqrt", "tan",
             "tanh", "acosh", "asinh", "atanh", "erfc", "lgamma", "digamma", "angle"}


def _unary_out_dtype(name: str) -> Callable[[Sample], T]:
    def out(s: Sample) -> T:
        dtype = s.args[0].dtype
        if name in _TO_FLOAT and not s.args[0].is_float():
            dtype = "float32"
        return T((0,), dtype)
    return out


def unary_inplace(name: str, low: float, high: float) -> Callable[[], List[Sample]]:
    """x.op_(): as unary's samples; an integer self of a function computed in
    float is refused (the result cannot be cast back), as torch's."""
    def gen() -> List[Sample]:
        out = []
        for s in unary(low=low, high=high)():
            error = name in _TO_FLOAT and not s.args[0].is_float()
            out.append(Sample(s.args, s.kwargs, desc=s.desc, error=error))
        return out
    return gen


def _unary_for_out(low: float, high: float) -> Callable[[], List[Sample]]:
    """unary's samples but the permuted input: torch 1.13 resizes an empty
    out= to a permuted input's strides, turnout's unary .out kernels to
    contiguous ones (a known difference, not fixed yet)."""
    return lambda: [s for s in unary(low=low, high=high)() if s.args[0].layout != "transposed"]


# lgamma and digamma of negative non-integers (the reflection formulas),
# and at the poles (0, -0, the negative integers: torch's infinities and
# NaNs).
_GAMMA_POLES = lambda: [  # noqa: E731
    S(T((2, 3), low=-4.9, high=-0.1)), S(T((3, 2), "float64", low=-9.9, high=-0.1)),
    S(T((6,), values=[0.0, -0.0, -1.0, -2.0, 1.0, 2.0]), desc="poles", grad=False),
    S(T((5,), "int64", values=[0, -1, -3, 1, 2]), desc="integer poles")]
add(OpInfo("aten::lgamma", lambda: unary(low=0.1, high=4)() + _GAMMA_POLES()))
# digamma's derivative is polygamma(1, x).
add(OpInfo("aten::digamma", lambda: unary(low=0.1, high=4)() + _GAMMA_POLES()))


def _polygamma_samples() -> List[Sample]:
    """polygamma(n, x): n = 0 (digamma), 1 (trigamma, computed in float for
    float32: its values next to the poles are float's), 2..4 and larger
    (the Hurwitz zeta); negative non-integers (the reflection, the direct
    sum over negative q), the poles and infinities, integer and Bool
    inputs (computed in float32), n < 0 refused."""
    inf = float("inf")
    poles = [0.0, -0.0, -1.0, -2.0, 1.0, 2.0, inf, -inf, _NAN]
    out = [S(n, T((2, 3), low=0.1, high=4)) for n in range(5)]
    out += [S(n, T((3, 2), "float64", low=-3.9, high=-0.1), desc="negative")
            for n in range(5)]
    out += [S(n, T((9,), "float64", values=poles), desc="poles", grad=False)
            for n in range(5)]
    out += [S(1, T((9,), values=poles), desc="float poles", grad=False),
            S(1, T((3, 4), "float64", "transposed", low=0.1, high=4)),
            S(2, T((2, 5), layout="strided", low=0.5, high=4)),
            S(3, T((), low=0.5, high=3), desc="0-dim"),
            S(2, T((0, 3)), desc="empty"),
            S(1, T((5,), "int64", low=-2, high=4)),
            S(2, T((4,), "bool")),
            S(0, T((2, 3), "bfloat16", low=0.5, high=3)),
            S(6, T((2, 3), "float64", low=0.2, high=5), desc="n=6"),
            S(25, T((4,), "float64", low=0.5, high=5), desc="n=25", grad=False),
            S(-1, T((2, 3)), desc="negative n", error=True),
            S(2, T((2, 3), "float16"), desc="Half", error=True)]
    return out


def _polygamma_inplace() -> List[Sample]:
    return [S(T((2, 3), low=0.1, high=4), n) for n in range(4)] + [
        S(T((3, 4), "float64", "transposed", low=0.1, high=4), 2),
        S(T((2, 3), "float64", low=-2.9, high=-0.1), 1, desc="negative"),
        S(T(()), 0, desc="0-dim"),
        S(T((5,), "int64", low=1, high=4), 1, desc="float into int", error=True),
        S(T((2, 3)), -2, desc="negative n", error=True)]


# polygamma(n, x)' = polygamma(n + 1, x); large n (25: 25! ~ 1.6e25) makes
# float32 values large, compared relatively.
add(OpInfo("aten::polygamma", _polygamma_samples, atol=1e-4, rtol=2e-5))
add(OpInfo("aten::polygamma_", _polygamma_inplace, atol=1e-4, rtol=2e-5))
add(OpInfo("aten::polygamma.out", lambda: [
    S(2, T((2, 3), low=0.1, high=4), out=T((2, 3))),
    S(1, T((2, 3), "float64", low=0.1, high=4), out=T((0,), "float64"), desc="resized out"),
    S(3, T((5,), "int64", low=1, high=4), out=T((5,), "float64"), desc="int into float out"),
    S(0, T((2, 3)), out=T((2, 3), "int64"), desc="float into int out", error=True),
    S(-1, T((2, 3)), out=T((2, 3)), desc="negative n", error=True)],
    atol=1e-4, rtol=2e-5))
# angle has no in-place form; its gradient of a real input is zero.
add(OpInfo("aten::angle", unary(low=-3, high=3)))
add(OpInfo("aten::angle.out", out_of(_unary_for_out(-3, 3), _unary_out_dtype("angle"))))
for _name, _low, _high in (
        ("abs", -3, 3), ("neg", -3, 3), ("exp", -3, 3), ("sigmoid", -3, 3), ("tanh", -3, 3),
        ("log", 0.1, 3), ("sqrt", 0.1, 3), ("sin", -3, 3), ("cos", -3, 3), ("tan", -1.2, 1.2),
        ("asin", -0.9, 0.9), ("acos", -0.9, 0.9), ("atan", -3, 3), ("sinh", -3, 3),
        ("cosh", -3, 3), ("expm1", -3, 3), ("log2", 0.1, 3), ("log10", 0.1, 3),
        ("log1p", -0.9, 3), ("rsqrt", 0.1, 3), ("reciprocal", 0.5, 3), ("erf", -3, 3),
        ("sign", -3, 3), ("floor", -3, 3), ("ceil", -3, 3), ("round", -3, 3),
        ("trunc", -3, 3), ("acosh", 1.1, 4), ("asinh", -3, 3), ("atanh", -0.9, 0.9),
        ("erfc", -3, 3), ("lgamma", 0.1, 4), ("digamma", 0.1, 4)):
    if f"aten::{_name}" not in OP_DB:
        add(OpInfo(f"aten::{_name}", unary(low=_low, high=_high)))
    if f"aten::{_name}_" not in OP_DB:
        add(OpInfo(f"aten::{_name}_", unary_inplace(_name, _low, _high)))
    add(OpInfo(f"aten::{_name}.out", out_of(_unary_for_out(_low, _high),
                                            _unary_out_dtype(_name))))
add(OpInfo("aten::relu_", unary_inplace("relu", -3, 3)))
add(OpInfo("aten::relu.out", out_of(_unary_for_out(-3, 3), _unary_out_dtype("relu"))))
_ROUND_DECIMALS = lambda: [  # noqa: E731
    S(T((2, 3), low=-30, high=30), decimals=1), S(T((3, 4), "float64", "transposed"), decimals=2),
    S(T(()), decimals=0), S(T((2, 3), low=-300, high=300), decimals=-1)]
add(OpInfo("aten::round.decimals", _ROUND_DECIMALS))
add(OpInfo("aten::round_.decimals", _ROUND_DECIMALS))
add(OpInfo("aten::round.decimals_out",
           out_of(lambda: [s for s in _ROUND_DECIMALS() if s.args[0].layout != "transposed"],
                  lambda s: T((0,), s.args[0].dtype))))
_BITWISE_NOT = lambda: [  # noqa: E731
    S(T((2, 3), "int64", low=-5, high=5)), S(T((3, 4), "bool", "transposed")),
    S(T((), "int32")), S(T((0, 2), "int64")), S(T((2, 3)), desc="float", error=True)]
add(OpInfo("aten::bitwise_not", _BITWISE_NOT))
add(OpInfo("aten::bitwise_not_", _BITWISE_NOT))
add(OpInfo("aten::bitwise_not.out", out_of(
    lambda: [s for s in _BITWISE_NOT() if s.args[0].layout != "transposed"],
    lambda s: T((0,), s.args[0].dtype))))


def _cum() -> List[Sample]:
    return [S(T((2, 3)), 1), S(T((2, 3)), 0), S(T((3, 4), "float64", "transposed"), -1),
            S(T((2, 6), layout="strided"), 1), S(T(()), 0), S(T((0, 3)), 1),
            S(T((2, 3), "int64"), 1), S(T((2, 3)), 0, dtype=D("float64")),
            S(T((3,), values=[2.0, 0.0, 3.0]), 0, desc="zero"),
            S(T((2, 3)), 2, error=True)]


def _cum_out(s: Sample) -> T:
    dtype = s.kwargs.get("dtype")
    if dtype is not None:
        return T((0,), dtype.name)
    return T((0,), s.args[0].dtype if s.args[0].is_float() else "int64")


for _name in ("cumsum", "cumprod"):
    add(OpInfo(f"aten::{_name}", _cum))
    add(OpInfo(f"aten::{_name}.out", out_of(_cum, _cum_out)))
    add(OpInfo(f"aten::{_name}_", lambda: [s for s in _cum()
                                           if s.args[0].is_float() and "dtype" not in s.kwargs]))

add(OpInfo("aten::argmin", _argmax))
add(OpInfo("aten::argmin.out", out_of(_argmax, lambda s: T((0,), "int64"))))


def _max_all() -> List[Sample]:
    return [S(T((2, 3))), S(T((3, 4), "float64", "transposed")), S(T(())),
            S(T((2, 3), "int64")), S(T((0, 3)), desc="empty", error=True)]


def _max_dim() -> List[Sample]:
    return [S(T((2, 3)), 1), S(T((2, 3)), 0, True), S(T((3, 4), "float64", "transposed"), -1),
            S(T((2, 6), layout="strided"), 0), S(T(()), 0), S(T((2, 3), "int64"), 1),
            S(T((2, 3)), 2, error=True)]


for _name in ("max", "min"):
    add(OpInfo(f"aten::{_name}", _max_all))
    add(OpInfo(f"aten::{_name}.dim", _max_dim))


def _sort() -> List[Sample]:
    return [S(T((2, 3))), S(T((2, 3)), 0), S(T((2, 3)), 1, True),
            S(T((3, 4), "float64", "transposed"), -1), S(T((2, 6), layout="strided")),
            S(T(())), S(T((0, 3))), S(T((2, 3)), 2, error=True)]


add(OpInfo("aten::sort", _sort))
add(OpInfo("aten::sort.stable", lambda: [
    S(T((2, 3)), stable=True), S(T((5,), "int64", low=0, high=2), stable=True, dim=0),
    S(T((5,), "int64", low=0, high=2), stable=True, dim=0, descending=True),
    S(T((3, 4), layout="transposed"), stable=False, dim=0)]))
add(OpInfo("aten::topk", lambda: [
    S(T((2, 5)), 2), S(T((2, 5)), 3, 1, False), S(T((4, 3), "float64", "transposed"), 2, 0),
    S(T((2, 10), layout="strided"), 5), S(T((2, 5)), 0), S(T((2, 5), "int64"), 2),
    S(T((2, 5)), 6, error=True)]))


def _var(kind: str) -> Callable[[], List[Sample]]:
    def gen() -> List[Sample]:
        if kind == "all":
            out = [S(T((2, 3))), S(T((2, 3)), False), S(T((3, 4), "float64", "transposed")),
                   S(T((2, 3), "int64"), error=True)]
        elif kind == "dim":
            out = [S(T((2, 3)), [1]), S(T((2, 3, 4)), [0, 2], False, True),
                   S(T((3, 4), "float64", "transposed"), [-1]), S(T((2, 3)), None),
                   S(T((2, 3)), [2], error=True)]
        else:
            # torch 1.13's schema: dim and correction have no defaults.
            out = [S(T((2, 3)), [1], correction=0), S(T((2, 3)), None, correction=2, keepdim=True),
                   S(T((3, 4), "float64", "transposed"), [0], correction=None),
                   S(T((2, 3)), None, correction=None),
                   S(T((2, 3), "int64"), [0], correction=1, error=True)]
        return out
    return gen


for _name in ("var", "std"):
    add(OpInfo(f"aten::{_name}", _var("all")))
    add(OpInfo(f"aten::{_name}.dim", _var("dim")))
    add(OpInfo(f"aten::{_name}.correction", _var("correction")))
    add(OpInfo(f"aten::{_name}.out", out_of(_var("dim"), lambda s: T((0,), s.args[0].dtype))))
    add(OpInfo(f"aten::{_name}.correction_out",
               out_of(_var("correction"), lambda s: T((0,), s.args[0].dtype))))


def _addmv() -> List[Sample]:
    return [S(T((2,)), T((2, 3)), T((3,))),
            S(T((2,)), T((2, 3)), T((3,)), beta=0.5, alpha=2),
            S(T((2,), "float64"), T((2, 3), "float64", "transposed"), T((3,), "float64")),
            # beta=0: torch gives self a zero gradient, turnout none (not fixed yet).
            S(T((2,)), T((2, 6), layout="strided"), T((6,), layout="strided"), beta=0,
              grad=False),
            S(T((2,)), T((2, 3)), T((4,)), error=True)]


add(OpInfo("aten::addmv", lambda: _addmv() + [S(T(()), T((2, 3)), T((3,)), desc="broadcast")]))
add(OpInfo("aten::addmv_", _addmv))
add(OpInfo("aten::addmv.out", out_of(_addmv, lambda s: T((0,), s.args[0].dtype))))

_LINSPACE = lambda: [  # noqa: E731
    S(0, 1, 5), S(-2.0, 2.0, 1), S(0, 10, 0), S(1.0, -1.0, 4, dtype=D("float64")),
    S(0, 1, -1, error=True)]
add(OpInfo("aten::linspace", _LINSPACE))
add(OpInfo("aten::linspace.out", out_of(lambda: [s for s in _LINSPACE() if not s.kwargs],
                                        lambda s: T((0,), "float32"))))

add(OpInfo("aten::randint", lambda: [S(10, [2, 3]), S(5, [4], dtype=D("int32"))], grad=False,
           **_RANDOM))
add(OpInfo("aten::randint.low", lambda: [S(2, 10, [3]), S(-5, 5, [2, 2])], grad=False,
           **_RANDOM))
add(OpInfo("aten::randperm", lambda: [S(5), S(0), S(4, dtype=D("float32"))], grad=False,
           **_RANDOM))
# The random *_like factories: like()'s layouts and memory formats, a
# floating dtype only for rand_like/randn_like; randint_like's range must
# be non-empty and inside the dtype (torch's random_ checks).
_FLOAT_LIKE = lambda: [s for s in like() if s.args[0].is_float()  # noqa: E731
                       and s.kwargs.get("dtype") is None] + [
    S(T((2, 3), "int64"), desc="integral", error=True),
    S(T((2, 3), "int64"), dtype=D("float64")), S(T((2,), "bool"), error=True),
    S(T((2,), "float16"))]
add(OpInfo("aten::rand_like", _FLOAT_LIKE, grad=False, **_RANDOM))
add(OpInfo("aten::randn_like", _FLOAT_LIKE, grad=False, **_RANDOM))
add(OpInfo("aten::randint_like", lambda: [
    S(*s.args, 7, **s.kwargs, desc=s.desc, error=s.error) for s in like()] + [
    S(T((2,), "bool"), 2), S(T((2,), "uint8"), 256), S(T((2,), "float16"), 2048),
    S(T((2,), "bool"), 3, error=True), S(T((2,), "uint8"), 300, error=True),
    S(T((2,), "int32"), 2 ** 40, error=True), S(T((2,), "float16"), 2 ** 20, error=True),
    S(T((2,)), 0, error=True), S(T((2,), "int64"), -3, error=True)],
    grad=False, **_RANDOM))
add(OpInfo("aten::randint_like.low_dtype", lambda: [
    S(T((2, 3)), -5, 5), S(T((3, 4), "int64", "transposed"), 3, 9, dtype=D("int16")),
    S(T((2, 3, 4, 5)), 0, 2, dtype=D("bool"), memory_format=MF("channels_last")),
    S(T((2,), "uint8"), -1, 5, error=True), S(T((2,), "int8"), -129, 5, error=True),
    S(T((2,), "int64"), 5, 5, error=True)], grad=False, **_RANDOM))


# ---- Convolution, pooling, batch norm (issue 20) ------------------------------

# float32 sums of dozens of products: torch's order of summation differs.
_CNN_TOL = dict(atol=1e-4, rtol=1e-4)
# The backward operators: compared by value; no double backward in turnout
# (no autograd kernel for them yet), so no gradients and no opcheck of it.
_CNN_BACKWARD = dict(
    grad=False, opcheck=("test_schema", "test_faketensor", "test_graph"),
    skip_opcheck="no autograd kernel (double backward) in turnout yet", **_CNN_TOL)
# ... and those with an output_mask: the tracer records an undefined output
# tensor (a masked-out gradient) as None, which test_graph then compares
# with the eager undefined tensor.
_MASKED_BACKWARD = dict(
    _CNN_BACKWARD, opcheck=("test_schema", "test_faketensor"),
    skip_opcheck="no double backward in turnout yet; the tracer makes a "
    "masked-out (undefined) output None")
# batch norm: torch 1.13's schema does not mark the in-place update of
# running_mean / running_var (test_schema would flag it), and running stats
# that require grad are refused (gradcheck makes every float input require
# grad). test_ops_cnn_torch.py compares the updates and the gradients.
_BATCH_NORM_OPCHECK = dict(
    opcheck=("test_faketensor", "test_graph"),
    skip_opcheck="running stats: updated in place under an unannotated schema "
    "(as torch 1.13), and refused when they require grad")


def _conv() -> List[Sample]:
    z2 = [0, 0]
    return [
        S(T((2, 3, 6, 6)), T((4, 3, 3, 3)), T((4,)), [1, 1], z2, [1, 1], False, z2, 1),
        S(T((1, 3, 7, 7)), T((4, 3, 3, 3)), None, [2, 2], [1, 1], [1, 1], False, z2, 1,
          desc="stride, padding"),
        S(T((1, 2, 8, 7)), T((3, 2, 3, 2)), T((3,)), [1, 2], [2, 1], [2, 1], False, z2, 1,
          desc="dilation, uneven"),
        S(T((2, 4, 5, 5), "float64"), T((6, 2, 3, 3), "float64"), T((6,), "float64"),
          [1], [1], [1], False, [0], 2, desc="groups"),
        S(T((2, 4, 3, 3)), T((5, 4, 1, 1)), T((5,)), [1, 1], z2, [1, 1], False, z2, 1,
          desc="1x1"),
        S(T((2, 3, 10)), T((4, 3, 3)), T((4,)), [2], [1], [1], False, [0], 1, desc="1-d"),
        S(T((2, 3, 5, 5), layout="transposed"), T((4, 3, 2, 2), layout="strided"), None,
          [1, 1], [1, 1], [1, 1], False, z2, 1, desc="non-contiguous"),
        S(T((0, 3, 6, 6)), T((4, 3, 3, 3)), T((4,)), [1, 1], z2, [1, 1], False, z2, 1,
          desc="empty batch"),
        S(T((1, 2, 6, 6)), T((4, 3, 3, 3)), None, [1, 1], z2, [1, 1], False, z2, 1,
          desc="channels", error=True),
        S(T((1, 3, 2, 2)), T((4, 3, 3, 3)), None, [1, 1], z2, [1, 1], False, z2, 1,
          desc="kernel larger than input", error=True),
        S(T((1, 3, 6, 6)), T((4, 3, 3, 3)), None, [0, 1], z2, [1, 1], False, z2, 1,
          desc="stride 0", error=True),
        S(T((1, 3, 6, 6)), T((4, 3, 3, 3)), None, [1, 1], [-1, 0], [1, 1], False, z2, 1,
          desc="negative padding", error=True),
        S(T((1, 3, 6, 6)), T((4, 3, 3, 3)), None, [1, 1], z2, [0, 1], False, z2, 1,
          desc="dilation 0", error=True),
        S(T((1, 6, 6, 6)), T((3, 3, 3, 3)), None, [1, 1], z2, [1, 1], False, z2, 2,
          desc="groups divide out channels", error=True),
        S(T((1, 3, 6, 6)), T((4, 3, 3, 3)), None, [1, 1], z2, [1, 1], False, z2, 0,
          desc="groups 0", error=True),
        S(T((1, 3, 6, 6)), T((4, 3, 3, 3)), T((3,)), [1, 1], z2, [1, 1], False, z2, 1,
          desc="bias size", error=True),
        S(T((1, 3, 6, 6)), T((4, 3, 3, 3), "float64"), None, [1, 1], z2, [1, 1], False,
          z2, 1, desc="dtypes", error=True),
        S(T((3, 6, 6)), T((4, 3, 3, 3)), None, [1, 1], z2, [1, 1], False, z2, 1,
          desc="unbatched", error=True),
        S(T((1, 3, 6, 6)), T((4, 3, 3, 3)), None, [1, 1, 1], z2, [1, 1], False, z2, 1,
          desc="stride length", error=True),
        S(T((2, 4, 3, 4)), T((4, 3, 3, 2)), T((3,)), [2, 1], [1, 0], [1, 1], True, [1, 0],
          1, desc="transposed"),
        S(T((1, 4, 5)), T((4, 2, 3)), None, [3], [1], [2], True, [2], 2,
          desc="transposed 1-d, groups, dilation"),
        S(T((1, 4, 5, 5)), T((4, 3, 3, 3)), None, [1, 1], z2, [1, 1], True, [1, 1], 1,
          desc="transposed output_padding", error=True),
    ]


add(OpInfo("aten::convolution", _conv, **_CNN_TOL))
add(OpInfo("aten::convolution.out",
           out_of(lambda: [s for s in _conv() if s.desc != "empty batch"],
                  lambda s: T((0,), s.args[0].dtype)), **_CNN_TOL))
add(OpInfo("aten::_convolution", lambda: [
    S(*s.args, False, False, True, True, desc=s.desc, error=s.error) for s in _conv()[:4]],
    **_CNN_TOL))
add(OpInfo("aten::_convolution.deprecated", lambda: [
    S(*s.args, False, False, True, desc=s.desc, error=s.error) for s in _conv()[:2]],
    **_CNN_TOL))
add(OpInfo("aten::conv2d", lambda: [
    S(T((2, 3, 6, 6)), T((4, 3, 3, 3)), T((4,))),
    S(T((3, 6, 6)), T((4, 3, 3, 3)), None, 2, 1, desc="unbatched, int stride"),
    S(T((1, 4, 7, 6), "float64"), T((2, 2, 3, 2), "float64"), None, [2, 1], [1, 0], [1, 2],
      2, desc="groups"),
    S(T((6, 6)), T((4, 3, 3, 3)), desc="2-d input", error=True),
    S(T((1, 3, 2, 2)), T((4, 3, 3, 3)), desc="kernel larger than input", error=True)],
    **_CNN_TOL))
add(OpInfo("aten::conv1d", lambda: [
    S(T((2, 3, 8)), T((4, 3, 3))),
    S(T((3, 8)), T((4, 3, 3)), T((4,)), [2], [1], desc="unbatched"),
    S(T((2, 3, 8)), T((4, 2, 3)), desc="channels", error=True)], **_CNN_TOL))
add(OpInfo("aten::conv_transpose2d.input", lambda: [
    S(T((2, 4, 3, 3)), T((4, 3, 3, 3)), T((3,)), 2, 1, 1),
    S(T((4, 3, 3)), T((4, 1, 2, 2)), None, [1, 2], [0, 1], [0, 1], 2, [2, 1],
      desc="unbatched, groups"),
    S(T((2, 4, 3, 3)), T((3, 3, 3, 3)), desc="channels", error=True)], **_CNN_TOL))
add(OpInfo("aten::conv_transpose1d", lambda: [
    S(T((2, 3, 6)), T((3, 2, 3)), T((2,)), [2], [1], [1]),
    S(T((3, 6), "float64"), T((3, 4, 2), "float64"), desc="unbatched"),
    S(T((2, 3, 6)), T((3, 2, 3)), None, [1], [4], desc="output too small",
      error=True)], **_CNN_TOL))
add(OpInfo("aten::convolution_backward", lambda: [
    S(T((2, 4, 4, 4)), T((2, 3, 6, 6)), T((4, 3, 3, 3)), [4], [1, 1], [0, 0], [1, 1],
      False, [0, 0], 1, [True, True, True]),
    S(T((1, 6, 3, 3), "float64"), T((1, 4, 5, 5), "float64"), T((6, 2, 3, 3), "float64"),
      None, [2, 2], [1, 1], [1, 1], False, [0, 0], 2, [True, True, False],
      desc="groups, stride"),
    S(T((2, 4, 2)), T((2, 3, 8)), T((4, 3, 3)), [4], [2], [0], [2], False, [0], 1,
      [False, True, True], desc="1-d, dilation"),
    S(T((2, 5, 3, 3)), T((2, 4, 3, 3)), T((5, 4, 1, 1)), [5], [1, 1], [0, 0], [1, 1],
      False, [0, 0], 1, [True, False, True], desc="1x1"),
    S(T((2, 3, 8, 6)), T((2, 4, 3, 3)), T((4, 3, 3, 2)), [3], [2, 2], [0, 0], [1, 1],
      True, [1, 0], 1, [True, True, True], desc="transposed"),
    S(T((1, 4, 12), "float64"), T((1, 4, 5), "float64"), T((4, 2, 3), "float64"), [4],
      [2], [1], [2], True, [1], 2, [True, True, True], desc="transposed 1-d, groups"),
    S(T((2, 4, 5, 5)), T((2, 3, 6, 6)), T((4, 3, 3, 3)), [4], [1, 1], [0, 0], [1, 1],
      False, [0, 0], 1, [True, True, True], desc="grad_output size", error=True)],
    **_MASKED_BACKWARD))


def _grad_input_of(samples: Callable[[], List[Sample]]) -> Callable[[], List[Sample]]:
    """The samples of a backward operator with its out= tensor, named
    grad_input (the .grad_input overloads)."""
    def gen() -> List[Sample]:
        return [Sample(s.args, {"grad_input": T((0,), s.args[1].dtype)}, desc=s.desc,
                       error=s.error, grad=False) for s in samples()]
    return gen


def _np_max_pool(x: np.ndarray, k: int, s: int) -> np.ndarray:
    """Indices (flat within each plane) of a k x k, stride s max pool."""
    *lead, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    planes = x.reshape(-1, h, w)
    idx = np.zeros((planes.shape[0], oh, ow), np.int64)
    for p in range(planes.shape[0]):
        for i in range(oh):
            for j in range(ow):
                win = planes[p, i * s:i * s + k, j * s:j * s + k]
                a, b = np.unravel_index(np.argmax(win), win.shape)
                idx[p, i, j] = (i * s + a) * w + j * s + b
    return idx.reshape(*lead, oh, ow)


def _max_pool() -> List[Sample]:
    return [
        S(T((2, 3, 6, 6)), [2, 2]),
        S(T((2, 3, 7, 7)), [3, 3], [2, 2], [1, 1], [1, 1], True, desc="ceil_mode, padding"),
        S(T((3, 7, 6), "float64"), [3, 2], [2, 1], [1, 0], [2, 1], desc="unbatched, dilation"),
        S(T((1, 2, 5, 5), layout="transposed"), [2], [], [0], [1], True, desc="non-contiguous"),
        S(T((1, 3, 2, 2)), [3, 3], desc="output too small", error=True),
        S(T((1, 3, 6, 6)), [3, 3], [1, 1], [2, 2], desc="padding over half", error=True),
        S(T((1, 3, 6, 6)), [3, 3, 3], desc="kernel_size length", error=True),
        S(T((1, 3, 6, 6)), [2, 2], [0, 1], desc="stride 0", error=True),
        S(T((6, 6)), [2, 2], desc="2-d input", error=True),
    ]


add(OpInfo("aten::max_pool2d_with_indices", _max_pool))
add(OpInfo("aten::max_pool2d", _max_pool))
add(OpInfo("aten::max_pool2d_with_indices.out", lambda: [
    S(T((2, 3, 6, 6)), [2, 2], out=T((0,)), indices=T((0,), "int64")),
    S(T((1, 3, 2, 2)), [3, 3], out=T((0,)), indices=T((0,), "int64"), error=True)]))


def _max_pool_backward() -> List[Sample]:
    x = T((2, 3, 6, 6))
    x64 = T((1, 2, 4, 5), "float64")
    return [
        S(T((2, 3, 3, 3)), x, [2, 2], [2, 2], [0, 0], [1, 1], False,
          T((2, 3, 3, 3), "int64", values=_np_max_pool(x.data, 2, 2))),
        S(T((1, 2, 2, 2), "float64"), x64, [3, 3], [1, 2], [0, 0], [1, 1], False,
          T((1, 2, 2, 2), "int64", values=_np_max_pool(x64.data, 3, 1)[..., ::2])),
        S(T((2, 3, 2, 2)), x, [2, 2], [2, 2], [0, 0], [1, 1], False,
          T((2, 3, 2, 2), "int64", low=0, high=5), desc="grad_output size", error=True),
    ]


add(OpInfo("aten::max_pool2d_with_indices_backward", _max_pool_backward, **_CNN_BACKWARD))
add(OpInfo("aten::max_pool2d_with_indices_backward.grad_input",
           _grad_input_of(_max_pool_backward), **_CNN_BACKWARD))


def _avg_pool() -> List[Sample]:
    return [
        S(T((2, 3, 6, 6)), [2, 2]),
        S(T((2, 3, 7, 7)), [3, 3], [2, 2], [1, 1], True, True, desc="ceil_mode, padding"),
        S(T((2, 3, 7, 7)), [3, 3], [2, 2], [1, 1], True, False,
          desc="count_include_pad=False"),
        S(T((3, 5, 6), "float64"), [3, 2], [1, 2], [1, 1], False, True, 5,
          desc="unbatched, divisor_override"),
        S(T((1, 2, 5, 5), layout="transposed"), [2], desc="non-contiguous"),
        S(T((1, 3, 6, 6)), [2, 2], [], [0], False, True, 0, desc="divisor 0", error=True),
        S(T((1, 3, 2, 2)), [3, 3], desc="output too small", error=True),
        S(T((1, 3, 6, 6)), [3, 3], [1, 1], [2, 2], desc="padding over half", error=True),
    ]


add(OpInfo("aten::avg_pool2d", _avg_pool))
add(OpInfo("aten::avg_pool2d.out", out_of(_avg_pool, lambda s: T((0,), s.args[0].dtype))))


def _avg_pool_backward() -> List[Sample]:
    return [
        S(T((2, 3, 3, 3)), T((2, 3, 6, 6)), [2, 2], [2, 2], [0, 0], False, True, None),
        S(T((2, 3, 4, 4)), T((2, 3, 7, 7)), [3, 3], [2, 2], [1, 1], True, False, None,
          desc="ceil_mode, count_include_pad=False"),
        S(T((3, 5, 4), "float64"), T((3, 5, 6), "float64"), [3, 2], [1, 2], [1, 1], False,
          True, 5, desc="unbatched, divisor_override"),
        S(T((2, 3, 2, 2)), T((2, 3, 6, 6)), [2, 2], [2, 2], [0, 0], False, True, None,
          desc="grad_output size", error=True),
    ]


add(OpInfo("aten::avg_pool2d_backward", _avg_pool_backward, **_CNN_BACKWARD))
add(OpInfo("aten::avg_pool2d_backward.grad_input",
           _grad_input_of(_avg_pool_backward), **_CNN_BACKWARD))


def _adaptive(composite: bool) -> Callable[[], List[Sample]]:
    def gen() -> List[Sample]:
        out = [S(T((2, 3, 7, 5)), [3, 2]),
               S(T((2, 3, 6, 6)), [1, 1], desc="1x1"),
               S(T((3, 5, 7), "float64"), [4, 9], desc="unbatched, larger"),
               S(T((1, 2, 5, 5), layout="transposed"), [2, 3], desc="non-contiguous"),
               # torch's backward refuses an empty grad_output.
               S(T((2, 3, 6, 6)), [0, 3], desc="empty output", grad=False),
               S(T((2, 3, 6, 6)), [3], desc="output_size length", error=True),
               S(T((2, 3, 0, 6)), [3, 3], desc="empty input", error=True),
               S(T((6, 6)), [3, 3], desc="2-d input", error=True)]
        if composite:  # torch 1.13 takes the mean for 1x1, whatever the input
            out.append(S(T((6, 6)), [1, 1], desc="2-d input, 1x1"))
        else:
            out.append(S(T((6, 6)), [1, 1], desc="2-d input, 1x1", error=True))
        return out
    return gen


add(OpInfo("aten::adaptive_avg_pool2d", _adaptive(True)))
add(OpInfo("aten::adaptive_avg_pool2d.out",
           out_of(lambda: [s for s in _adaptive(False)() if s.desc != "1x1"],
                  lambda s: T((0,), s.args[0].dtype))))
add(OpInfo("aten::_adaptive_avg_pool2d", _adaptive(False)))
add(OpInfo("aten::_adaptive_avg_pool2d.out",
           out_of(_adaptive(False), lambda s: T((0,), s.args[0].dtype))))


def _adaptive_backward() -> List[Sample]:
    return [S(T((2, 3, 3, 2)), T((2, 3, 7, 5))),
            S(T((3, 4, 9), "float64"), T((3, 5, 7), "float64"), desc="unbatched, larger")]


add(OpInfo("aten::_adaptive_avg_pool2d_backward", _adaptive_backward, **_CNN_BACKWARD))
add(OpInfo("aten::_adaptive_avg_pool2d_backward.out",
           out_of(_adaptive_backward, lambda s: T((0,), s.args[1].dtype)), **_CNN_BACKWARD))


# With running statistics the gradient test raises on both sides (they are
# float leaves there, and torch refuses running stats that require grad);
# tests/python/test_ops_cnn_torch.py compares those gradients.
def _batch_norm(native: bool) -> List[Sample]:
    var = dict(low=0.5, high=2)
    out = [
        S(T((4, 3, 5, 5)), T((3,)), T((3,)), T((3,)), T((3,), **var), True, 0.1, 1e-5,
          desc="training, running stats updated"),
        S(T((4, 3)), None, None, None, None, True, 0.1, 1e-5, desc="training, no stats"),
        S(T((2, 3, 4), "float64"), T((3,), "float64"), T((3,), "float64"),
          T((3,), "float64"), T((3,), "float64", **var), False, 0.1, 1e-3, desc="eval"),
        S(T((4, 3, 5), layout="transposed"), None, T((3,)), T((3,)), T((3,), **var), True,
          0.3, 1e-5, desc="non-contiguous, momentum"),
        S(T((3, 2, 2), "float64"), T((2,), "float64"), None, T((2,), "float64"),
          T((2,), "float64", **var), False, 0.1, 1e-5, desc="eval, no bias"),
        S(T((2, 3), "int64"), None, None, None, None, True, 0.1, 1e-5, desc="int input",
          error=True),
        S(T((3,)), None, None, T((3,)), T((3,), **var), True, 0.1, 1e-5, desc="1-d input",
          error=True),
    ]
    if not native:
        # native_batch_norm reads past a short tensor in torch 1.13.
        out += [
            S(T((4, 3, 2)), None, None, T((4,)), T((3,), **var), True, 0.1, 1e-5, False,
              desc="running_mean size", error=True),
            S(T((4, 3, 2)), T((2,)), None, None, None, True, 0.1, 1e-5, False,
              desc="weight size", error=True),
            S(T((0, 3, 2)), T((3,)), T((3,)), T((3,)), T((3,), **var), True, 0.1, 1e-5,
              False, desc="empty"),
        ]
        out = [S(*s.args, *([False] if len(s.args) == 8 else []), desc=s.desc,
                 error=s.error) for s in out]
    return out


add(OpInfo("aten::native_batch_norm", lambda: _batch_norm(True), **_CNN_TOL,
           **_BATCH_NORM_OPCHECK))
add(OpInfo("aten::batch_norm", lambda: _batch_norm(False), **_CNN_TOL,
           **_BATCH_NORM_OPCHECK))
add(OpInfo("aten::native_batch_norm_backward", lambda: [
    S(T((4, 3, 5)), T((4, 3, 5)), T((3,)), None, None, T((3,)), T((3,), low=0.5, high=2),
      True, 1e-5, [True, True, True], desc="train"),
    S(T((2, 3, 4), "float64"), T((2, 3, 4), "float64"), T((3,), "float64"),
      T((3,), "float64"), T((3,), "float64", low=0.5, high=2), None, None, False, 1e-5,
      [True, True, True], desc="eval"),
    S(T((4, 2)), T((4, 2)), None, None, None, T((2,)), T((2,), low=0.5, high=2), True,
      1e-5, [True, False, False], desc="input only")],
    **_MASKED_BACKWARD))


# ---- Neural-network operators (issue 20) --------------------------------------

def _activation(extra: Callable[[], List[Sample]], int_ok: bool = False,
                inplace: bool = False) -> Callable[[], List[Sample]]:
    """unary's samples (an int64 input is refused unless int_ok, as torch's
    floating-point kernels do), then the operator's own."""
    def gen() -> List[Sample]:
        out = unary(ints=False)()
        out.append(S(T((5,), "int64", low=-5, high=3), error=not int_ok, desc="int"))
        if inplace:  # the in-place form writes self: no broadcasting, no empty
            out = [s for s in out if s.desc != "empty"]
        return out + extra()
    return gen


# leaky_relu_backward and hardtanh_backward read self only to choose where
# the gradient passes: torch 1.13 gives self a zero gradient, turnout none.
_SELF_SELECTS = dict(grad=False)


def _act_backward(*extra: Any, **kw: Any) -> Callable[[], List[Sample]]:
    """(grad_output, self, *extra) for a backward operator."""
    def gen() -> List[Sample]:
        return [S(T((2, 3)), T((2, 3)), *extra, **kw),
                S(T((3, 4), "float64", "transposed"), T((3, 4), "float64"), *extra, **kw),
                S(T(()), T(()), *extra, **kw),
                S(T((2, 3)), T((2, 3), "int64"), *extra, desc="int self", **kw),
                S(T((2, 3), "int64"), T((2, 3), "int64"), *extra, error=True, desc="int",
                  **kw)]
    return gen


# The wide samples go through the contiguous CPU kernel's vector lanes
# (kernels/vec_math.h) and its tail, over erf's and tanh's whole range.
_GELU = lambda: [S(T((2, 3)), approximate="tanh"),  # noqa: E731
                 S(T((3, 43), low=-9, high=9), desc="wide"),
                 S(T((3, 43), low=-9, high=9), approximate="tanh", desc="wide tanh"),
                 S(T((2, 21), "float64", low=-9, high=9), desc="wide double"),
                 S(T((2, 3)), approximate="exact", error=True, desc="bad approximate")]
for _name in ("gelu", "gelu_"):
    add(OpInfo(f"aten::{_name}", _activation(_GELU, inplace=_name.endswith("_"))))
add(OpInfo("aten::gelu_backward", lambda: _act_backward()() + _act_backward(
    approximate="tanh")()[:2]))
for _name in ("silu", "silu_"):
    add(OpInfo(f"aten::{_name}", _activation(lambda: [], inplace=_name.endswith("_"))))
# grad=False: torch 1.13 has no derivative for silu_backward (turnout's,
# a composite, has one).
add(OpInfo("aten::silu_backward", _act_backward(), grad=False))
_ELU = lambda: [S(T((2, 3)), 0.5, 2.0, 1.5), S(T((2, 3)), 2, 1, 0.5)]  # noqa: E731
for _name in ("elu", "elu_"):
    add(OpInfo(f"aten::{_name}", _activation(_ELU, inplace=_name.endswith("_"))))
add(OpInfo("aten::elu_backward", lambda: [
    S(T((2, 3)), 1.0, 1.0, 1.0, False, T((2, 3))),
    S(T((2, 3), "float64"), 0.5, 2.0, 1.5, False, T((2, 3), "float64")),
    S(T((2, 3)), 0.5, 2.0, 1.5, True, T((2, 3), low=-0.9)),
    S(T((2, 3)), -0.5, 1.0, 1.0, True, T((2, 3)), desc="negative alpha, result",
      error=True)]))
# leaky_relu_ with a negative slope runs, but its backward refuses (torch's).
_LEAKY = lambda: [S(T((2, 3)), 0.2), S(T((2, 3)), -0.5)]  # noqa: E731
add(OpInfo("aten::leaky_relu", _activation(_LEAKY)))
add(OpInfo("aten::leaky_relu_", _activation(lambda: [S(T((2, 3)), 0.2)], inplace=True)))
add(OpInfo("aten::leaky_relu_backward", lambda: [
    S(T((2, 3)), T((2, 3)), 0.1, False), S(T((2, 3), "float64"), T((2, 3), "float64"), 0.3, True),
    S(T((2, 3)), T((3,)), 0.1, False, desc="broadcast"),
    S(T((2, 3)), T((2, 3)), -0.1, True, desc="negative slope, result", error=True)],
    **_SELF_SELECTS))
_HARDTANH = lambda: [  # noqa: E731
    S(T((2, 3)), -0.5, 0.5), S(T((2, 3), "int64", low=-5, high=5), -2, 3),
    S(T((2, 3), "bool"), desc="bool", error=True)]
for _name in ("hardtanh", "hardtanh_"):
    add(OpInfo(f"aten::{_name}", _activation(_HARDTANH, int_ok=True,
                                             inplace=_name.endswith("_"))))
add(OpInfo("aten::hardtanh_backward", lambda: [
    S(T((2, 3)), T((2, 3)), -1, 1), S(T((2, 3), "float64"), T((2, 3), "float64"), -0.5, 2.0)],
    **_SELF_SELECTS))
# threshold_backward (relu's gradient): grad_output where self > threshold;
# the promoted dtype of the two; an integral self compares with the
# threshold truncated (-0.5 -> 0, so a zero self is masked); Bool refused.
add(OpInfo("aten::threshold_backward", lambda: [
    S(T((2, 3)), T((2, 3)), 0.0),
    S(T((3, 4), "float64", "transposed"), T((3, 4), "float64"), 0.3),
    S(T((2, 3)), T((3,)), 0.1, desc="broadcast"),
    S(T((2, 3)), T((2, 3), "float64"), -0.5, desc="mixed"),
    S(T(()), T(()), 0.0),
    S(T((2, 3)), T((2, 3), values=[[float("nan"), 1.0, -1.0], [0.0, 2.0, 0.25]]), 0.5,
      desc="nan self passes"),
    S(T((2, 3), "int64", low=-5, high=5), T((2, 3), "int64", low=-2, high=2), -0.5,
      desc="int, fractional threshold"),
    S(T((2, 3)), T((2, 3), "int64", low=-2, high=2), 1, desc="int self"),
    S(T((2, 3), "bool"), T((2, 3), "bool"), 0, desc="bool", error=True)]))
# tanh_backward / sigmoid_backward (grad_output, output): output in tanh's
# and sigmoid's ranges; mixed dtypes promote; integral inputs and Half
# (tanh_backward's CPU kernel) are refused as torch 1.13's.
for _name, _low, _high in (("tanh_backward", -0.95, 0.95), ("sigmoid_backward", 0.05, 0.95)):
    add(OpInfo(f"aten::{_name}", lambda _name=_name, _low=_low, _high=_high: [
        S(T((2, 3)), T((2, 3), low=_low, high=_high)),
        S(T((3, 4), "float64", "transposed"), T((3, 4), "float64", low=_low, high=_high)),
        S(T((2, 3)), T((3,), "float64", low=_low, high=_high), desc="broadcast, mixed"),
        S(T(()), T((), low=_low, high=_high)),
        S(T((2, 3), "bfloat16"), T((2, 3), "bfloat16", low=_low, high=_high)),
        S(T((2, 3), "float16"), T((2, 3), "float16", low=_low, high=_high), desc="half",
          error=_name == "tanh_backward", grad=False),
        S(T((2, 3), "int64"), T((2, 3), "int64"), desc="int", error=True)]))
add(OpInfo("aten::softplus", _activation(lambda: [
    S(T((2, 3)), 2, 1), S(T((2, 3), low=-20, high=20), 0.5, 5)])))
add(OpInfo("aten::softplus_backward", lambda: [
    S(T((2, 3)), T((2, 3)), 1, 20), S(T((2, 3), "float64"), T((2, 3), "float64"), 2, 1),
    S(T((2, 3)), T((2, 3), low=-20, high=20), 0.5, 5)]))
# out=: torch 1.13 resizes an empty out= to a permuted input's strides,
# turnout to contiguous ones (as for the unary math .out overloads).
for _name, _extra, _ints in (("gelu", _GELU, False), ("silu", lambda: [], False),
                             ("elu", _ELU, False), ("leaky_relu", _LEAKY, False),
                             ("hardtanh", _HARDTANH, True), ("softplus", lambda: [
                                 S(T((2, 3)), 2, 1)], False)):
    add(OpInfo(f"aten::{_name}.out", out_of(
        lambda _e=_extra, _i=_ints: [s for s in _activation(_e, int_ok=_i)()
                                     if s.args[0].layout != "transposed"],
        lambda s: T((0,), s.args[0].dtype))))
add(OpInfo("aten::clamp_", lambda: [
    S(T((2, 3)), -1.0, 1.0), S(T((2, 3)), None, 0.5), S(T((2, 3)), -0.5),
    S(T((3, 4), "float64", "transposed"), -1, 2), S(T(()), 0.0, 1.0),
    S(T((2, 3), "int64"), -1, 1),
    S(T((2, 3), "int64"), -0.5, 1.5, desc="float bounds into int", error=True),
    S(T((2, 3)), desc="no bound", error=True)]))
# Training with 0 < p < 1 draws from turnout's generator (not torch's): the
# mask's statistics are checked in tests/python/test_ops_nn_torch.py.
_DROPOUT = lambda: [  # noqa: E731
    S(T((2, 3)), 0.5, False, desc="eval"), S(T((2, 3)), 0.0, True, desc="p=0"),
    S(T((2, 3), "float64"), 1.0, True, desc="p=1"), S(T((0, 3)), 0.5, True, desc="empty"),
    S(T((3, 4), layout="transposed"), 0.3, False),
    S(T((2, 3)), 1.5, False, desc="p > 1", error=True),
    S(T((2, 3)), -0.1, True, desc="p < 0", error=True)]
add(OpInfo("aten::dropout", _DROPOUT, opcheck=("test_autograd_registration",
                                                 "test_faketensor", "test_graph"),
           skip_opcheck="returns input itself in eval mode or with p=0, as torch "
           "1.13's does, which its schema does not annotate"))
add(OpInfo("aten::dropout_", _DROPOUT))


def _layer_norm(native: bool) -> Callable[[], List[Sample]]:
    def gen() -> List[Sample]:
        rest: Any = (None, None, 1e-5) if native else ()
        out = [S(T((2, 3)), [3], *rest),
               S(T((2, 3, 4)), [3, 4], T((3, 4)), T((3, 4)), 1e-5),
               S(T((2, 3)), [3], T((3,)), None, 1e-3),
               S(T((2, 3)), [3], None, T((3,)), 1e-5),
               S(T((4, 3), "float64", "transposed"), [3], T((3,), "float64"),
                 T((3,), "float64"), 1e-5),
               S(T((5,)), [5], *rest, desc="1-d"),
               S(T((3, 2, 40), low=-5, high=7), [40], T((40,)), T((40,)), 1e-5,
                 desc="wide"),
               S(T((2, 3, 5), "float64"), [3, 5], T((3, 5), "float64"), None, 1e-6,
                 desc="double"),
               S(T((2, 3)), [2, 3], *rest, desc="all dims"),
               S(T((2, 3)), [], *rest, desc="empty normalized_shape", error=True),
               S(T((2, 3)), [4], *rest, desc="wrong normalized_shape", error=True),
               S(T((2, 3)), [3], T((4,)), None, 1e-5, desc="weight shape", error=True),
               S(T((2, 3), "int64"), [3], *rest, desc="int", error=True)]
        return out
    return gen


add(OpInfo("aten::layer_norm", _layer_norm(False), atol=1e-4))
# mean and rstd do not require grad (as torch 1.13's), so gradcheck's
# numerical Jacobian of them is not autograd's; output 0's gradients are
# compared with torch's in test_op_db_torch.
add(OpInfo("aten::native_layer_norm", _layer_norm(True), atol=1e-4,
           opcheck=("test_schema", "test_faketensor", "test_graph"),
           skip_opcheck="mean and rstd outputs are not differentiable (torch's)"))


def _layer_norm_backward() -> List[Sample]:
    out = []
    for shape, k, dtype, affine in (((2, 3), 1, "float64", True), ((2, 3, 4), 2, "float32", True),
                                    ((4, 5), 1, "float64", False)):
        x = _rng.uniform(-2, 2, shape)
        dims = tuple(range(len(shape) - k, len(shape)))
        mean = x.mean(axis=dims, keepdims=True)
        rstd = 1 / np.sqrt(x.var(axis=dims, keepdims=True) + 1e-5)
        norm = list(shape[len(shape) - k:])
        w = T(norm, dtype) if affine else None
        b = T(norm, dtype) if affine else None
        mask = [True, affine, affine]
        out.append(S(T(shape, dtype), T(shape, dtype, values=x), norm,
                     T(mean.shape, dtype, values=mean), T(rstd.shape, dtype, values=rstd),
                     w, b, mask))
    out.append(S(T((2, 3)), T((2, 3)), [3], T((2, 1)), T((2, 1)), None, None,
                 [True, True, False], desc="weight's gradient without weight", error=True))
    return out


# grad=False: torch 1.13 has no gradient for native_layer_norm_backward's
# mean and rstd (not_implemented), which every float argument here requires.
# No test_autograd_registration either: its formula (torch's, in
# nn_autograd.cc) takes mean and rstd as input's statistics, so gradcheck's
# finite differences, which move input alone, disagree by design; its
# second derivatives are compared with torch's through layer_norm's
# (test_higher_order_grad_torch.py).
# test_graph: an output left out by output_mask is an undefined tensor, which
# the tracer records as a None constant and test_graph then reports as
# differing from the eager output (an opcheck limitation, not fixed here).
add(OpInfo("aten::native_layer_norm_backward", _layer_norm_backward, grad=False,
           atol=1e-4, opcheck=("test_schema", "test_faketensor"),
           skip_opcheck="undefined (masked-out) outputs fail test_graph's comparison"))


def _embedding() -> List[Sample]:
    return [S(T((5, 3)), _idx((4,), 4)), S(T((5, 3)), _idx((2, 3), 4), desc="2-d indices"),
            S(T((5, 3), "float64"), _idx((6,), 4), 2, desc="padding_idx"),
            S(T((5, 3)), _idx((6,), 4), -1, True, desc="scale_grad_by_freq"),
            S(T((5, 3)), _idx((6,), 4), 1, True, desc="both"),
            S(T((5, 3)), T((3,), "int32", low=0, high=4), desc="int32 indices"),
            S(T((5, 3)), _idx((), 4), desc="0-dim index"),
            S(T((5, 3)), _idx((0,), 4), desc="no index"),
            S(T((4, 5), layout="transposed"), _idx((3,), 3)),
            S(T((5, 3)), T((2,), "int64", low=5, high=7), desc="out of range", error=True),
            S(T((5, 3)), T((2,)), desc="float indices", error=True),
            S(T((5,)), _idx((2,), 4), desc="1-d weight", error=True)]


# padding_idx and scale_grad_by_freq make the gradient differ from the
# derivative on purpose (torch's semantics): gradcheck cannot agree; the
# gradients are compared with torch's in test_op_db_torch.
add(OpInfo("aten::embedding", _embedding,
           opcheck=("test_schema", "test_faketensor", "test_graph"),
           skip_opcheck="padding_idx / scale_grad_by_freq gradients are not derivatives"))
# grad=False where scale_grad_by_freq: torch 1.13's double backward leaves
# the frequency scaling out; turnout's (a composite) keeps it.
add(OpInfo("aten::embedding_backward", lambda: [
    S(T((4, 3)), _idx((4,), 4), 5, -1, False, False),
    S(T((2, 3, 3), "float64"), _idx((2, 3), 4), 5, 2, True, False, grad=False),
    S(T((4, 3)), _idx((4,), 4), 5, 0, False, False)]))
add(OpInfo("aten::embedding_dense_backward", lambda: [
    S(T((4, 3)), _idx((4,), 4), 5, -1, False),
    S(T((2, 3, 3), "float64"), _idx((2, 3), 4), 5, 2, True, grad=False),
    S(T((2, 3, 3), "float64"), _idx((2, 3), 4), 5, 2, False),
    S(T((3, 2)), _idx((3,), 1), 2, 1, True, desc="only padding", grad=False),
    S(T((4, 3)), T((4,)), 5, -1, False, desc="float indices", error=True)]))


def _nll(with_defaults: bool) -> Callable[[], List[Sample]]:
    """(self, target, weight, reduction, ignore_index) of nll_loss /
    nll_loss_forward (which has no defaults)."""
    def gen() -> List[Sample]:
        d: Any = () if with_defaults else (None, 1, -100)
        tgt = _idx((3,), 3)
        return [S(T((3, 4)), tgt, *d),
                S(T((3, 4), "float64"), tgt, T((4,), "float64", low=0.1, high=2), 1, -100,
                  desc="weight"),
                S(T((3, 4)), tgt, None, 0, -100, desc="none"),
                S(T((3, 4)), tgt, T((4,), low=0.1, high=2), 2, -100, desc="sum"),
                S(T((3, 4)), T((3,), "int64", values=[1, -100, 3]), None, 1, -100,
                  desc="ignored"),
                S(T((3, 4)), T((3,), "int64", values=[1, 2, 2]), T((4,), low=0.1), 0, 2,
                  desc="ignore_index is a class"),
                S(T((3, 4), layout="transposed"), tgt, None, 1, -100),
                S(T((4,)), _idx((), 3), *d, desc="no batch"),
                S(T((4,)), _idx((), 3), None, 0, -100, desc="no batch, none"),
                S(T((3, 4)), T((3,), "int64", values=[1, 4, 0]), *d, desc="target too large",
                  error=True),
                S(T((3, 4)), T((3,), "int64", values=[1, -1, 0]), *d, desc="negative target",
                  error=True),
                S(T((3, 4)), _idx((2,), 3), *d, desc="sizes", error=True),
                S(T((3, 4)), T((3,), "int32", low=0, high=3), *d, desc="int32 target",
                  error=True),
                S(T((3, 4)), tgt, T((3,)), 1, -100, desc="weight size", error=True),
                S(T((2, 3, 4)), _idx((2,), 2), *d, desc="3-d", error=True)]
    return gen


# torch's nll_loss refuses a weight that requires grad, and gradcheck makes
# every float argument require it: opcheck leaves gradcheck out (the
# gradients are compared with torch's in test_op_db_torch).
_NLL_WEIGHT = dict(opcheck=("test_schema", "test_faketensor", "test_graph"),
                   skip_opcheck="weight cannot require grad (torch's nll_loss)")
add(OpInfo("aten::nll_loss", _nll(True), **_NLL_WEIGHT))
add(OpInfo("aten::nll_loss_forward", _nll(False), **_NLL_WEIGHT))


def _nll_backward() -> List[Sample]:
    tgt = T((3,), "int64", values=[1, -100, 3])
    # total_weight is an input of the formula, not differentiated (a
    # positive constant here).
    return [S(T(()), T((3, 4)), tgt, None, 1, -100, 2.0),
            S(T((3,), "float64"), T((3, 4), "float64"), tgt, T((4,), "float64", low=0.1), 0,
              -100, 0.0),
            S(T((3,)), T((3, 4), "float64"), tgt, None, 0, -100, 0.0, desc="grad dtype",
              error=True),
            S(T(()), T((3, 4)), tgt, T((4,), low=0.1), 2, -100, 1.5),
            S(T(()), T((4,)), _idx((), 3), None, 1, -100, 1.0, desc="no batch")]


def _with_total(gen: Callable[[], List[Sample]]) -> Callable[[], List[Sample]]:
    """The last argument (a float) made a 0-dim tensor without gradient."""
    def wrap() -> List[Sample]:
        out = []
        for s in gen():
            *rest, total = s.args
            out.append(Sample(rest + [T((), values=total, dtype=s.args[1].dtype)],
                              s.kwargs, desc=s.desc, error=s.error, grad=s.grad))
        return out
    return wrap


# grad=False, and no gradcheck in opcheck: as torch 1.13's, weight and
# total_weight may not require grad (the double backward takes none for
# them); the gradients are compared with torch's in
# test_composite_kinds_torch.
_NLL_BACKWARD = dict(opcheck=("test_schema", "test_faketensor", "test_graph"),
                     skip_opcheck="weight and total_weight cannot require "
                                  "grad (torch's nll_loss_backward)")
add(OpInfo("aten::nll_loss_backward", _with_total(_nll_backward), grad=False,
           **_NLL_BACKWARD))


def _nll2d(with_defaults: bool) -> Callable[[], List[Sample]]:
    def gen() -> List[Sample]:
        d: Any = () if with_defaults else (None, 1, -100)
        tgt = _idx((2, 3, 2), 2)
        return [S(T((2, 3, 3, 2)), tgt, *d),
                S(T((2, 3, 3, 2), "float64"), tgt, T((3,), "float64", low=0.1), 0, -100,
                  desc="none"),
                S(T((2, 3, 3, 2)), tgt, T((3,), low=0.1), 2, 1, desc="sum, ignore 1"),
                S(T((2, 3, 3, 2)), T((2, 3, 2), "int64", low=3, high=4), *d,
                  desc="out of range", error=True),
                S(T((2, 3, 3, 2)), _idx((2, 3), 2), *d, desc="2-d target", error=True),
                S(T((2, 3, 3, 2)), _idx((2, 3, 3), 2), *d, desc="sizes", error=True)]
    return gen


add(OpInfo("aten::nll_loss2d", _nll2d(True), **_NLL_WEIGHT))
add(OpInfo("aten::nll_loss2d_forward", _nll2d(False), **_NLL_WEIGHT))
add(OpInfo("aten::nll_loss2d_backward", _with_total(lambda: [
    S(T(()), T((2, 3, 3, 2)), _idx((2, 3, 2), 2), None, 1, -100, 12.0),
    S(T((2, 3, 2), "float64"), T((2, 3, 3, 2), "float64"), _idx((2, 3, 2), 2), None, 0, 1,
      0.0)]), grad=False, **_NLL_BACKWARD))


def _nll_nd() -> List[Sample]:
    return [S(T((3, 4)), _idx((3,), 3)), S(T((4,)), _idx((), 3), desc="1-d"),
            S(T((2, 3, 4)), _idx((2, 4), 2), desc="3-d"),
            S(T((2, 3, 4)), _idx((2, 4), 2), None, 0, desc="3-d, none"),
            S(T((2, 3, 2, 2)), _idx((2, 2, 2), 2), T((3,), low=0.1), 2, desc="4-d"),
            S(T((2, 3, 2, 2, 2), "float64"), _idx((2, 2, 2, 2), 2), None, 0, desc="5-d"),
            S(T((3, 4)), _idx((2,), 3), desc="batch sizes", error=True),
            S(T(()), _idx((), 3), desc="0-dim", error=True)]


add(OpInfo("aten::nll_loss_nd", _nll_nd, **_NLL_WEIGHT))


def _cross_entropy() -> List[Sample]:
    probs = lambda shape: T(shape, low=0, high=1)  # noqa: E731
    return [S(T((3, 4)), _idx((3,), 3)),
            S(T((3, 4), "float64"), _idx((3,), 3), T((4,), "float64", low=0.1), 0, desc="none"),
            S(T((3, 4)), T((3,), "int64", values=[1, -100, 3]), None, 1, -100, desc="ignored"),
            S(T((4,)), _idx((), 3), desc="1-d"),
            S(T((2, 3, 2, 2)), _idx((2, 2, 2), 2), desc="4-d"),
            S(T((2, 3, 4)), _idx((2, 4), 2), None, 2, desc="3-d, sum"),
            S(T((3, 4)), probs((3, 4)), desc="probabilities"),
            S(T((3, 4)), probs((3, 4)), T((4,), low=0.1), 0, desc="probabilities, weight"),
            S(T((2, 3, 2)), probs((2, 3, 2)), None, 2, desc="probabilities, 3-d"),
            S(T((3, 4)), probs((3, 4)), None, 1, -100, 0.2, desc="probabilities, smoothing"),
            S(T((3, 4)), _idx((3,), 3), None, 1, -100, 0.1, desc="smoothing"),
            S(T((3, 4)), T((3,), "int64", values=[1, -100, 3]), T((4,), low=0.1), 1, -100, 0.2,
              desc="smoothing, weight, ignored"),
            S(T((3, 4)), _idx((3,), 3), None, 0, -100, 0.3, desc="smoothing, none"),
            S(T((3, 4)), _idx((3,), 3), None, 2, -100, 0.3, desc="smoothing, sum"),
            S(T((3, 4)), _idx((3,), 3), None, 1, -100, 1.5, desc="smoothing > 1", error=True),
            S(T((3, 4)), T((3,), "int64", values=[0, 5, 1]), desc="target too large", error=True),
            S(T((3, 4)), _idx((3, 4), 3), desc="int probabilities", error=True)]


add(OpInfo("aten::cross_entropy_loss", _cross_entropy, **_NLL_WEIGHT))


# ---- General operators of small models (issue 20 item 3) ----------------------


def _maxmin() -> List[Sample]:
    # binary()'s samples, ties (half the gradient to each side) and NaN.
    return binary(compare=True)() + [
        S(T((3,), values=[1.0, float("nan"), 2.0]), T((3,), values=[float("nan"), 0.0, 5.0]),
          desc="nan", grad=False),
        S(T((2, 3), "bool"), T((2, 3), "bool"), desc="bool")]


add(OpInfo("aten::maximum", _maxmin))
add(OpInfo("aten::minimum", _maxmin))
add(OpInfo("aten::max.other", _maxmin))
add(OpInfo("aten::min.other", _maxmin))


def _clamp_tensor() -> List[Sample]:
    # No ties (gradcheck cannot take them): test_higher_order_grad_torch.py
    # compares the gradients there with torch's.
    return [S(T((2, 3)), T((3,))), S(T((3, 4), "float64", "transposed"), T((3, 4), "float64")),
            S(T((2, 3), "int64"), T((3,), "int64")), S(T((2, 3), "int64"), T((3,)),
                                                       desc="promotion"),
            S(T(()), T(())), S(T((0, 3)), T((3,)), desc="empty"),
            S(T((3,), values=[1.0, float("nan"), 2.0]), T((3,), values=[float("nan"), 0.0, 5.0]),
              desc="nan", grad=False),
            S(T((2, 3)), T((4,)), desc="shapes", error=True)]


add(OpInfo("aten::clamp_min.Tensor", _clamp_tensor))
add(OpInfo("aten::clamp_max.Tensor", _clamp_tensor))
add(OpInfo("aten::clamp.Tensor", lambda: [
    S(T((2, 3)), T((3,), low=-3, high=-1), T((2, 1), low=1, high=3)),
    S(T((2, 3)), T((3,))), S(T((2, 3)), None, T((3,))), S(T((2, 3)), max=T(())),
    S(T((3, 4), "float64", "transposed"), T((4,), "float64", low=-3, high=-1),
      T((3, 1), "float64", low=1, high=3)),
    S(T((2, 3), "int64"), T((3,), "int64", low=-3, high=-1), T((3,), low=1, high=3),
      desc="promotion"),
    S(T((2,)), T((2,), low=1, high=3), T((2,), low=-3, high=-1), desc="min above max"),

    S(T((0, 3)), T((3,)), None, desc="empty"),
    S(T((2, 3)), None, None, desc="neither", error=True)]))


def _isnan_isinf() -> List[Sample]:
    return [S(T((5,), values=[1.0, float("nan"), float("inf"), -float("inf"), -0.5])),
            S(T((2, 3), "float64", values=[0.0, float("inf"), 1.0, 2.0, float("nan"), 3.0])),
            S(T((2, 3), "int64")), S(T((3,), "bool")), S(T((3, 4), layout="transposed")),
            S(T(())), S(T((0, 3)))]


add(OpInfo("aten::isnan", _isnan_isinf, grad=False))
add(OpInfo("aten::isinf", _isnan_isinf, grad=False))
# torch 1.13's composite copy returns src itself when src already has self's
# shape, dtype and device (an alias its schema does not declare); turnout's
# is always a new tensor, which is what the reference computes.
def _copy_ref(self: Any, src: Any, non_blocking: bool = False) -> Any:
    import torch
    return torch.empty(self.shape, dtype=self.dtype, device=self.device).copy_(src)


add(OpInfo("aten::copy", ref=_copy_ref, samples=lambda: [
    S(T((2, 3)), T((3,))), S(T((2, 3)), T((2, 3), "float64")),
    S(T((3, 2), "int64", "transposed"), T((2,), low=0, high=5), desc="float into int"),
    S(T(()), T(())), S(T((0, 3)), T((3,))), S(T((2, 3)), T((2, 3)), True),
    S(T((2, 3)), T((4,)), desc="shapes", error=True)], grad=False))
add(OpInfo("aten::bitwise_xor.Scalar_Tensor", lambda: [
    S(6, T((2, 3), "int64")), S(True, T((3,), "bool")), S(3, T((2, 3), "int32")),
    S(5, T((3, 4), "int64", "transposed")), S(1, T((0, 3), "int64")),
    S(1.5, T((2, 3), "int64"), error=True)], grad=False,
    # torch.ops makes a bool Scalar an int; torch.bitwise_xor keeps it a bool.
    ref=lambda self, other: __import__("torch").bitwise_xor(self, other)))


def _fmod() -> List[Sample]:
    return [S(T((2, 3)), T((2, 3), low=0.5)),
            S(T((2, 3), low=-5, high=5), T((3,), low=-2, high=-0.5), desc="broadcast, negative"),
            S(T((3, 4), "float64", "transposed"), T((3, 4), "float64", "strided", low=0.5)),
            S(T(()), T((), low=0.5), desc="0-dim"),
            S(T((0, 3)), T((3,), low=0.5), desc="empty"),
            S(T((2, 3), "int64", low=-9, high=9), T((2, 3), "int64", low=1, high=4), desc="int"),
            S(T((2, 3), "int64", low=-9, high=9), T((3,), low=0.5), desc="int+float"),
            S(T((2,), "int64"), T((2,), "int64", values=[1, 0]), desc="int by zero",
              error=True),
            S(T((2,), "bool"), T((2,), "bool"), desc="bool", error=True),
            S(T((2, 3)), T((4,)), desc="shapes", error=True)]


def _fmod_scalar() -> List[Sample]:
    return [S(T((2, 3)), 1.5), S(T((2, 3), low=-5, high=5), -2), S(T((2, 3), "int64", low=-9), 4),
            S(T((2, 3), "int64", low=-9), 2.5, desc="int tensor, float scalar"),
            S(T((3, 4), "float64", "transposed"), 0.7), S(T(()), 2.0), S(T((0, 2)), 2.0),
            S(T((2,), "int64"), 0, desc="int by zero", error=True)]


def _inplace_binary(samples: Callable[[], List[Sample]]) -> Callable[[], List[Sample]]:
    """The samples whose broadcast shape is self's, as in-place calls (torch
    decides which raise: a float result into an int self, ...)."""
    def gen() -> List[Sample]:
        out = []
        for s in samples():
            a, b = s.args[0], s.args[1]
            if isinstance(b, T):
                try:
                    shape = tuple(np.broadcast_shapes(a.shape, b.shape))
                except ValueError:
                    shape = None
                if shape is not None and shape != a.shape:
                    continue
            # A float result cannot be written into an integer self.
            error = s.error or (not a.is_float() and (
                isinstance(b, float) or (isinstance(b, T) and b.is_float())))
            out.append(Sample(s.args, s.kwargs, desc=s.desc, error=error, grad=s.grad))
        return out
    return gen


add(OpInfo("aten::fmod.Tensor", _fmod))
add(OpInfo("aten::fmod_.Tensor", _inplace_binary(_fmod)))
add(OpInfo("aten::fmod.Scalar", _fmod_scalar, ref=_scalar_ref("fmod")))
add(OpInfo("aten::fmod_.Scalar", _inplace_binary(_fmod_scalar),
           ref=lambda self, other: self.fmod_(other)))


def _remainder() -> List[Sample]:
    # fmod's samples (mixed signs: the result takes the divisor's sign) and
    # floats whose remainder is 0 or exact multiples.
    return _fmod() + [
        S(T((2, 3), "int64", low=-9, high=9), T((2, 3), "int64", low=-4, high=-1),
          desc="int, negative divisor"),
        S(T((4,), values=[-3.0, 3.0, -0.0, 6.0]), T((4,), values=[1.5, -1.5, -2.0, -3.0]),
          desc="exact multiples", grad=False),
        S(T((2, 3), "int32", low=-9, high=9), T((), "int64", low=2, high=4),
          desc="0-dim divisor")]


def _remainder_scalar() -> List[Sample]:
    return _fmod_scalar() + [
        S(T((2, 3), "int64", low=-9, high=9), -4, desc="negative divisor"),
        S(T((2, 3), low=-5, high=5), -1.5, desc="float, negative divisor"),
        S(T((2,), "bool"), True, desc="bool", error=True)]


def _remainder_scalar_tensor() -> List[Sample]:
    return [S(4, T((2, 3), low=0.5)), S(-7.5, T((2, 3), low=-5, high=5)),
            S(7, T((2, 3), "int64", low=1, high=5)), S(-7, T((2, 3), "int64", low=-5, high=-1)),
            S(4.5, T((3,), "int64", low=1, high=5), desc="float scalar, int tensor"),
            S(True, T((3,), "int64", low=1, high=5), desc="bool scalar"),
            S(2, T((0, 2)), desc="empty"),
            S(4, T((2,), "int64", values=[0, 1]), desc="int by zero", error=True),
            S(True, T((2,), "bool"), desc="bool", error=True)]


add(OpInfo("aten::remainder.Tensor", _remainder))
add(OpInfo("aten::remainder_.Tensor", _inplace_binary(_remainder)))
add(OpInfo("aten::remainder.Scalar", _remainder_scalar, ref=_scalar_ref("remainder")))
add(OpInfo("aten::remainder_.Scalar", _inplace_binary(_remainder_scalar),
           ref=lambda self, other: self.remainder_(other)))
# `4 % x` has no derivative in torch 1.13 (its backward raises).
# The Scalar_Tensor overloads against torch.remainder / torch.pow: torch
# 1.13's torch.ops reads a bool Scalar as an int, its Python API (and
# turnout's) as a bool.
add(OpInfo("aten::remainder.Scalar_Tensor", _remainder_scalar_tensor, grad=False,
           ref=_scalar_ref("remainder"),
           opcheck=("test_schema", "test_faketensor", "test_graph"),
           skip_opcheck="torch 1.13 has no derivative for remainder.Scalar_Tensor"))


def _pow_tensor() -> List[Sample]:
    return [S(T((2, 3), low=0.1), T((2, 3), low=-2, high=2)),
            S(T((2, 3), low=0.1, high=3), T((3,), low=-1, high=2), desc="broadcast"),
            S(T((3, 4), "float64", "transposed", low=0.1), T((3, 4), "float64", "strided")),
            S(T((), low=0.1), T((), low=0.5), desc="0-dim"), S(T((0, 3)), T((3,)), desc="empty"),
            S(T((2, 3), low=0.1), T((), "int64", low=1, high=4), desc="0-dim int exponent"),
            # 0 ** e has no finite difference in e at 0: values only.
            S(T((4,), values=[0.0, 0.0, 2.0, 1.5]), T((4,), values=[0.0, 2.0, 0.0, 1.0]),
              desc="zero base, zero exponent", grad=False),
            S(T((2, 3), "int64", low=-3, high=4), T((2, 3), "int64", low=0, high=4), desc="int"),
            S(T((6,), "int64", values=[-2, -1, 0, 1, 2, 3]),
              T((6,), "int64", values=[-3, -3, -1, -2, -1, 2]), desc="int, negative exponent"),
            S(T((2,), "int8", values=[2, 3]), T((2,), "int8", values=[7, 7]), desc="int8 wraps"),
            S(T((2, 3), "int64", low=0, high=4), T((3,), low=0.5), desc="int+float"),
            S(T((2,), "bool"), T((2,), "bool"), desc="bool", error=True),
            S(T((2, 3)), T((4,)), desc="shapes", error=True)]


def _pow_scalar_tensor() -> List[Sample]:
    return [S(2, T((2, 3))), S(2.5, T((2, 3), "float64", "transposed")),
            S(0, T((4,), values=[0.0, 1.0, 2.0, -1.0]), desc="zero base", grad=False),
            S(-2.0, T((3,), values=[1.0, 2.0, 3.0]), desc="negative base", grad=False),
            S(2, T((3,), "int64", values=[1, 2, -1]), desc="int"),
            S(2.5, T((3,), "int64", low=0, high=4), desc="float base, int exponent"),
            S(True, T((3,), "int64", low=0, high=4), desc="bool base"),
            S(2, T((2,), "bool"), desc="bool exponent"), S(3, T((0, 2)), desc="empty"),
            S(True, T((2,), "bool"), desc="bool", error=True)]


def _pow_inplace_scalar() -> List[Sample]:
    return [S(T((2, 3), low=0.1), 2), S(T((2, 3), low=0.1), 0.5), S(T((2, 3)), 3),
            S(T((3, 4), "float64", "transposed", low=0.1), -1.5), S(T(()), 2.0),
            S(T((2, 3)), 0, desc="zero exponent"), S(T((2, 3), "int64", low=0, high=4), 2),
            S(T((2, 3), "int64", low=0, high=4), -1, desc="int, negative", error=True),
            S(T((2, 3), "int64", low=0, high=4), 0.5, desc="int tensor, float exponent",
              error=True)]


add(OpInfo("aten::pow.Tensor_Tensor", _pow_tensor))
add(OpInfo("aten::pow_.Tensor", _inplace_binary(_pow_tensor)))
add(OpInfo("aten::pow.Scalar", _pow_scalar_tensor, ref=_scalar_ref("pow")))
add(OpInfo("aten::pow_.Scalar", _pow_inplace_scalar, ref=lambda self, e: self.pow_(e)))



# The out= overloads: out of the result's shape and dtype, transposed, of
# another dtype the result casts to (or does not: torch raises), and empty
# (resized; from contiguous inputs: torch gives an out it resizes the
# strides of a permuted input, turnout contiguous ones). pow.Tensor_Scalar_out
# takes only the result's dtype (torch
# runs it as a unary operator); pow.Scalar_out with a base of 1 fills any
# out with ones; remainder.Scalar_Tensor_out copies into any out.
def _remainder_tensor_out() -> List[Sample]:
    return [S(T((2, 3), low=-5, high=5), T((2, 3), low=0.5), out=T((2, 3))),
            S(T((2, 3), low=-5, high=5), T((3,), low=-2, high=-0.5),
              out=T((2, 3), layout="transposed"), desc="broadcast, transposed out"),
            S(T((2, 3)), T((2, 3), low=0.5), out=T((0,)), desc="resized out"),
            S(T((2, 3), "int64", low=-9, high=9), T((2, 3), "int64", low=-4, high=-1),
              out=T((2, 3), "int64"), desc="int, negative divisor"),
            S(T((2, 3), "int64", low=-9, high=9), T((3,), "int64", low=1, high=4),
              out=T((2, 3), "float64"), desc="int into float out"),
            S(T((2, 3), "int32", low=-9, high=9), T((), "int64", low=2, high=4),
              out=T((2, 3), "int32"), desc="0-dim divisor"),
            S(T((2, 3)), T((2, 3), low=0.5), out=T((2, 3), "int64"),
              desc="float into int out", error=True),
            S(T((2,), "int64"), T((2,), "int64", values=[1, 0]), out=T((2,), "int64"),
              desc="int by zero", error=True),
            S(T((2,), "bool"), T((2,), "bool"), out=T((2,), "bool"), desc="bool",
              error=True),
            S(T((2, 3)), T((4,)), out=T((2, 3)), desc="shapes", error=True)]


def _remainder_scalar_out() -> List[Sample]:
    return [S(T((2, 3)), 1.5, out=T((2, 3))),
            S(T((2, 3), "int64", low=-9, high=9), -4, out=T((2, 3), "int64"),
              desc="negative divisor"),
            S(T((2, 3), "int64", low=-9, high=9), 2.5, out=T((2, 3)),
              desc="int tensor, float scalar"),
            S(T((2, 3), "int64", low=-9, high=9), 4, out=T((2, 3), "float64"),
              desc="int into float out"),
            S(T((3, 4), "float64"), 0.7, out=T((0,), "float64"), desc="resized out"),
            S(T((3, 4), "float64", "transposed"), 0.7, out=T((3, 4), "float64"),
              desc="transposed self"),
            S(T((2, 3), "int64", low=-9, high=9), 2.5, out=T((2, 3), "int64"),
              desc="float into int out", error=True),
            S(T((2,), "int64"), 0, out=T((2,), "int64"), desc="int by zero", error=True)]


# Not against torch.remainder(4, x, out=): torch 1.13's Python API has no
# Scalar-self overload with out= (and its torch.ops reads a bool Scalar as
# an int: no bool Scalar here).
def _remainder_scalar_tensor_out() -> List[Sample]:
    return [S(4, T((2, 3), low=0.5), out=T((2, 3))),
            S(7, T((2, 3), "int64", low=1, high=5), out=T((2, 3), "int64")),
            S(4.5, T((3,), "int64", low=1, high=5), out=T((3,)),
              desc="float scalar, int tensor"),
            S(-7, T((2, 3), "int64", low=-5, high=-1), out=T((0,), "int64"),
              desc="resized out"),
            # torch 1.13 generates this overload: the result is copied into
            # out whatever its dtype.
            S(4.5, T((3,), "int64", low=1, high=5), out=T((3,), "int64"),
              desc="float into int out"),
            S(4, T((2,), "int64", values=[0, 1]), out=T((2,), "int64"),
              desc="int by zero", error=True),
            S(4, T((2,), "int64", low=1, high=5), out=T((2,), "int64", layout="strided"),
              desc="strided out")]


def _pow_tensor_tensor_out() -> List[Sample]:
    return [S(T((2, 3), low=0.1), T((2, 3), low=-2, high=2), out=T((2, 3))),
            S(T((2, 3), low=0.1, high=3), T((3,), low=-1, high=2),
              out=T((2, 3), layout="transposed"), desc="broadcast, transposed out"),
            S(T((2, 3), low=0.1), T((2, 3)), out=T((0,)), desc="resized out"),
            S(T((6,), "int64", values=[-2, -1, 0, 1, 2, 3]),
              T((6,), "int64", values=[-3, -3, -1, -2, -1, 2]), out=T((6,), "int64"),
              desc="int, negative exponent"),
            S(T((2, 3), "int64", low=0, high=4), T((2, 3), "int64", low=0, high=4),
              out=T((2, 3), "float64"), desc="int into float out"),
            S(T((2, 3), low=0.1), T((), "int64", low=1, high=4), out=T((2, 3)),
              desc="0-dim int exponent"),
            S(T((2, 3), low=0.1), T((2, 3)), out=T((2, 3), "int64"),
              desc="float into int out", error=True),
            S(T((2,), "bool"), T((2,), "bool"), out=T((2,), "bool"), desc="bool",
              error=True),
            S(T((2, 3)), T((4,)), out=T((2, 3)), desc="shapes", error=True)]


def _pow_tensor_scalar_out() -> List[Sample]:
    return [S(T((2, 3), low=0.1), 2, out=T((2, 3))),
            S(T((2, 3), low=0.1), 0.5, out=T((2, 3), layout="transposed"),
              desc="transposed out"),
            S(T((3, 4), "float64", low=0.1), -1.5, out=T((0,), "float64"),
              desc="resized out"),
            S(T((3, 4), "float64", "transposed", low=0.1), -1.5, out=T((3, 4), "float64"),
              desc="transposed self"),
            S(T((2, 3)), 0, out=T((2, 3)), desc="zero exponent"),
            S(T((2, 3), "int64", low=0, high=4), 3, out=T((2, 3), "int64")),
            S(T((2, 3), "int64", low=0, high=4), 0.5, out=T((2, 3)),
              desc="int tensor, float exponent"),
            S(T((2, 3)), 2, out=T((2, 3), "float64"), desc="float into double out",
              error=True),
            S(T((2, 3), "int64", low=0, high=4), 2, out=T((2, 3)),
              desc="int into float out", error=True),
            S(T((2, 3), "int64", low=0, high=4), -1, out=T((2, 3), "int64"),
              desc="int, negative", error=True),
            S(T((2,), "bool"), 2, out=T((2,), "bool"), desc="bool", error=True)]


def _pow_scalar_out() -> List[Sample]:
    return [S(2, T((2, 3)), out=T((2, 3))),
            S(2.5, T((2, 3), "float64", "transposed"), out=T((0,), "float64"),
              desc="resized out"),
            S(2, T((3,), "int64", values=[1, 2, -1]), out=T((3,), "int64"), desc="int"),
            S(2.5, T((3,), "int64", low=0, high=4), out=T((3,)),
              desc="float base, int exponent"),
            S(2, T((3,), "int64", low=0, high=4), out=T((3,), "float64"),
              desc="int into float out"),
            S(1, T((2, 3)), out=T((2, 3), "int64"), desc="base 1 into int out"),
            S(1.0, T((4,), values=[float("nan"), 2.0, -1.0, 0.0]), out=T((0,)),
              desc="base 1, resized out", grad=False),
            S(2.5, T((3,), "int64", low=0, high=4), out=T((3,), "int64"),
              desc="float into int out", error=True),
            S(2, T((2, 3)), out=T((2, 3), "int64"), desc="float into int out",
              error=True)]


add(OpInfo("aten::remainder.Tensor_out", _remainder_tensor_out))
add(OpInfo("aten::remainder.Scalar_out", _remainder_scalar_out))
add(OpInfo("aten::remainder.Scalar_Tensor_out", _remainder_scalar_tensor_out))
add(OpInfo("aten::pow.Tensor_Tensor_out", _pow_tensor_tensor_out))
add(OpInfo("aten::pow.Tensor_Scalar_out", _pow_tensor_scalar_out))
add(OpInfo("aten::pow.Scalar_out", _pow_scalar_out))


def _floor_divide() -> List[Sample]:
    return [S(T((2, 3), low=-5, high=5), T((2, 3), low=0.5)),
            S(T((2, 3), low=-5, high=5), T((3,), low=-2, high=-0.5), desc="negative"),
            S(T((3, 4), "float64", "transposed"), T((3, 4), "float64", "strided", low=0.5)),
            S(T(()), T((), low=0.5), desc="0-dim"), S(T((0, 3)), T((3,), low=0.5)),
            S(T((2, 3), "int64", low=-9, high=9), T((2, 3), "int64", low=1, high=4)),
            S(T((2, 3), "int64", low=-9, high=9), T((2, 3), "int64", low=-4, high=-1),
              desc="int, negative divisor"),
            S(T((3,), values=[1.0, -1.0, 0.0]), T((3,), values=[0.0, 0.0, 0.0]),
              desc="float by zero"),
            S(T((2,), "int64"), T((2,), "int64", values=[1, 0]), desc="int by zero",
              error=True),
            S(T((2,), "bool"), T((2,), "bool"), error=True)]


def _floor_divide_scalar() -> List[Sample]:
    return [S(T((2, 3), low=-5, high=5), 1.5), S(T((2, 3), "int64", low=-9), 4),
            S(T((2, 3), "int64", low=-9), -3), S(T((2, 3), "int64", low=-9), 2.5),
            S(T(()), 2.0), S(T((2,), "int64"), 0, error=True)]


# floor_divide has no derivative in torch 1.13 (its backward raises): no
# gradient comparison, and opcheck's gradcheck cannot run.
_NO_DERIVATIVE = dict(grad=False, opcheck=("test_schema", "test_faketensor", "test_graph"),
                      skip_opcheck="torch 1.13 has no derivative for floor_divide")
add(OpInfo("aten::floor_divide", _floor_divide, **_NO_DERIVATIVE))
add(OpInfo("aten::floor_divide_.Tensor", _inplace_binary(_floor_divide), **_NO_DERIVATIVE))
add(OpInfo("aten::floor_divide.Scalar", _floor_divide_scalar, ref=_scalar_ref("floor_divide"),
           **_NO_DERIVATIVE))
add(OpInfo("aten::floor_divide_.Scalar", _inplace_binary(_floor_divide_scalar),
           ref=lambda self, other: self.floor_divide_(other), **_NO_DERIVATIVE))


def _xor() -> List[Sample]:
    return [S(T((2, 3), "int64", low=-9, high=9), T((2, 3), "int64", low=-9, high=9)),
            S(T((2, 3), "bool"), T((3,), "bool"), desc="bool, broadcast"),
            S(T((3, 4), "int32", "transposed"), T((3, 4), "int32")),
            S(T((2, 3), "int64"), T((), "int32"), desc="0-dim other"),
            S(T((2, 3), "uint8", low=0, high=200), T((2, 3), "int64"), desc="promotion"),
            S(T((2, 3)), T((2, 3)), desc="float", error=True),
            S(T((2, 3), "int64"), T((4,), "int64"), error=True)]


def _xor_scalar() -> List[Sample]:
    return [S(T((2, 3), "int64", low=-9, high=9), 5), S(T((2, 3), "bool"), True),
            S(T((2, 3), "int32"), -1), S(T((2, 3), "int64"), 2.5, error=True),
            S(T((2, 3)), 1, error=True)]


for _name in ("bitwise_xor", "__xor__"):
    _ipl = "bitwise_xor_" if _name == "bitwise_xor" else "__ixor__"
    add(OpInfo(f"aten::{_name}.Tensor", _xor))
    add(OpInfo(f"aten::{_name}.Scalar", _xor_scalar,
               ref=lambda self, other: __import__("torch").bitwise_xor(self, other)))
    add(OpInfo(f"aten::{_ipl}.Tensor", _inplace_binary(_xor)))
    add(OpInfo(f"aten::{_ipl}.Scalar", _inplace_binary(_xor_scalar),
               ref=lambda self, other: self.bitwise_xor_(other)))


def _logical_not() -> List[Sample]:
    return [S(T((2, 3), values=[0.0, 1.5, -2.0, 0.0, 3.0, 0.5])), S(T((2, 3), "int64", low=-1, high=1)),
            S(T((3, 4), "bool", "transposed")), S(T(())), S(T((0, 3)))]


add(OpInfo("aten::logical_not", _logical_not))
add(OpInfo("aten::logical_not_", _logical_not))


def _all_any() -> List[Sample]:
    return [S(T((2, 3), "bool")), S(T((3, 4), "int64", "transposed", low=0, high=1)),
            S(T((2, 6), layout="strided")), S(T((2, 3), "uint8", low=0, high=1), desc="uint8"),
            S(T((), "bool")), S(T((0, 3), "bool"), desc="empty")]


def _all_any_dim() -> List[Sample]:
    return [S(T((2, 3), "bool"), 1), S(T((2, 3, 4), "bool"), 0, True),
            S(T((3, 4), "int64", "transposed", low=0, high=1), -1),
            S(T((2, 6), layout="strided", low=-1, high=1), 0),
            S(T((2, 3), "uint8", low=0, high=1), 1, desc="uint8"),
            S(T((), "bool"), 0), S(T((0, 3), "bool"), 0, desc="empty reduced"),
            S(T((0, 3), "bool"), 1, desc="empty kept"),
            S(T((2, 3), "bool"), 2, error=True)]


for _name in ("all", "any"):
    add(OpInfo(f"aten::{_name}", _all_any))
    add(OpInfo(f"aten::{_name}.dim", _all_any_dim))


def _prod() -> List[Sample]:
    return reduce_all()() + [
        S(T((2, 3), "int64", low=-3, high=3)), S(T((2, 3), "bool"), desc="bool"),
        S(T((4,), values=[2.0, 0.0, 3.0, 1.5]), desc="one zero"),
        S(T((4,), values=[2.0, 0.0, 3.0, 0.0]), desc="two zeros")]


def _prod_dim() -> List[Sample]:
    return [S(T((2, 3)), 1), S(T((2, 3, 4)), 0, True), S(T((3, 4), "float64", "transposed"), -1),
            S(T((2, 6), layout="strided"), 0), S(T(()), 0), S(T((0, 3)), 0, desc="empty"),
            S(T((2, 3), "int32"), 1), S(T((2, 3)), 0, dtype=D("float64")),
            S(T((2, 3), values=[1.0, 0.0, 2.0, 0.0, 0.0, 3.0]), 1, desc="zeros"),
            S(T((2, 3)), 2, error=True)]


add(OpInfo("aten::prod", _prod))
add(OpInfo("aten::prod.dim_int", _prod_dim))


def _gather() -> List[Sample]:
    return [S(T((3, 4)), 1, _idx((3, 2), 3)), S(T((3, 4)), 0, _idx((2, 4), 2)),
            S(T((3, 4)), -1, _idx((2, 3), 3), desc="smaller index"),
            S(T((3, 4), layout="transposed"), 0, _idx((3, 4), 2)),
            S(T((3, 4), "int64"), 1, _idx((3, 5), 3), desc="repeats"),
            S(T((5,)), 0, _idx((7,), 4)), S(T(()), 0, _idx((), 0), desc="0-dim"),
            S(T((3, 4)), 1, _idx((0, 2), 3), desc="empty index"),
            S(T((3, 4)), 1, T((3, 2), "int64", low=4, high=6), desc="out of range", error=True),
            S(T((3, 4)), 1, T((3, 2), "int64", low=-2, high=-1), desc="negative", error=True),
            S(T((3, 4)), 1, _idx((2,), 3), desc="dims", error=True),
            S(T((3, 4)), 1, _idx((4, 2), 3), desc="larger", error=True),
            S(T((3, 4)), 1, T((3, 2)), desc="float index", error=True),
            S(T((3, 4)), 2, _idx((3, 2), 3), error=True)]


def _scatter_add() -> List[Sample]:
    return [S(T((3, 4)), 1, _idx((3, 2), 3), T((3, 2))),
            # torch 1.13's backward refuses a src larger than index: grad=False.
            S(T((3, 4)), 0, _idx((2, 4), 2), T((3, 5)), desc="larger src", grad=False),
            S(T((3, 4), "float64", "transposed"), 0, _idx((3, 4), 2), T((3, 4), "float64")),
            S(T((3, 4), "int64"), 1, _idx((3, 5), 3), T((3, 5), "int64"), desc="repeats"),
            S(T((5,)), 0, _idx((7,), 4), T((7,))),
            S(T((3, 4)), 1, _idx((0, 2), 3), T((3, 2)), desc="empty index", grad=False),
            S(T((3, 4)), 1, T((3, 2), "int64", low=4, high=6), T((3, 2)), error=True),
            S(T((3, 4)), 1, _idx((3, 2), 3), T((3, 2), "float64"), desc="dtypes", error=True),
            S(T((3, 4)), 1, _idx((3, 2), 3), T((2, 2)), desc="small src", error=True)]


add(OpInfo("aten::gather", _gather))
add(OpInfo("aten::scatter_add", _scatter_add))


def _logsumexp() -> List[Sample]:
    return [S(T((2, 3)), [1]), S(T((2, 3, 4)), [0, 2], True, desc="keepdim"),
            S(T((3, 4), "float64", "transposed"), [-1]), S(T((2, 6), layout="strided"), [0]),
            S(T(()), [0], desc="0-dim"), S(T((0, 3)), [1], desc="empty kept"),
            S(T((0, 3)), [0], desc="empty reduced"),
            S(T((2, 3), "int64"), [1], desc="int"),
            S(T((3,), values=[float("inf"), 1.0, 2.0]), [0], desc="inf", grad=False),
            S(T((3,), values=[float("-inf"), float("-inf"), float("-inf")]), [0],
              desc="all -inf", grad=False),
            S(T((2, 3), low=50, high=90), [1], desc="large"),
            S(T((2, 3)), [0, 0], error=True), S(T((2, 3)), [2], error=True)]


add(OpInfo("aten::logsumexp", _logsumexp))


def _norm_dim() -> List[Sample]:
    out = []
    for p in (2, 1, 3, 0.5, float("inf"), float("-inf"), 0, None):
        out.append(S(T((2, 3)), p, [1], desc=f"p={p}"))
    return out + [
        S(T((2, 3, 4), "float64"), 2, [0, 2], True, desc="keepdim"),
        S(T((3, 4), layout="transposed"), 2, [-1]), S(T((2, 6), layout="strided"), 1.5, [0]),
        S(T((2, 3)), 2, [], desc="every dim"),
        S(T((2, 3), values=[0.0] * 6), 2, [1], desc="zero norm"),
        S(T((2, 3), values=[1.0, -3.0, 3.0, 0.5, 0.0, -0.5]), float("inf"), [1], desc="ties"),
        S(T((2, 3), "int64"), 2, [1], error=True), S(T((2, 3)), 2, [2], error=True)]


def _norm_scalar() -> List[Sample]:
    return [S(T((2, 3))), S(T((2, 3)), 1), S(T((2, 3)), 3), S(T((2, 3)), float("inf")),
            S(T((3, 4), "float64", "transposed"), 2), S(T(()), 2), S(T((0, 3))),
            S(T((2, 3), values=[0.0] * 6), desc="zero norm"),
            S(T((2, 3), "int64"), error=True)]


add(OpInfo("aten::norm.ScalarOpt_dim", _norm_dim))
add(OpInfo("aten::norm.Scalar", _norm_scalar))
add(OpInfo("aten::norm.ScalarOpt_dtype", lambda: [
    S(T((2, 3)), 2, dtype=D("float64")), S(T((2, 3)), None, dtype=D("float64")),
    S(T((3, 4), "float64", "transposed"), 1, dtype=D("float32"), desc="down",
      grad=False),
    S(T((2, 3)), 3.0, dtype=D("float32"), grad=False), S(T(()), 2, dtype=D("float64")),
    S(T((0, 3)), 2, dtype=D("float64")),
    S(T((2, 3)), 2, dtype=D("int64"), desc="integer dtype", error=True)]))
add(OpInfo("aten::norm.ScalarOpt_dim_dtype", lambda: [
    S(T((2, 3)), 2, [1], False, dtype=D("float64")),
    S(T((2, 3, 4)), None, [0, 2], True, dtype=D("float64")),
    S(T((3, 4), "float64", "transposed"), 1, [-1], False, dtype=D("float32"), desc="down",
      grad=False),
    S(T((2, 3)), 2, [1], False, dtype=D("int64"), desc="integer dtype", error=True),
    S(T((2, 3)), 2, [2], False, dtype=D("float64"), desc="dim", error=True)]))


def _narrow() -> List[Sample]:
    return [S(T((4, 3)), 0, 1, 2), S(T((4, 3)), 1, -2, 2), S(T((4, 3)), -1, 0, 0),
            S(T((3, 4), layout="transposed"), 1, 1, 3), S(T((4, 3)), 0, 4, 0, desc="at end"),
            S(T((4, 3)), 1, 2, 2, error=True), S(T((4, 3)), 0, 0, -1, error=True),
            S(T((4, 3)), 0, 5, 0, error=True), S(T(()), 0, 0, 1, error=True),
            S(T((4, 3)), 2, 0, 1, error=True)]


add(OpInfo("aten::narrow", _narrow))
# narrow.Tensor reads its start from the tensor (item()): no Meta kernel can,
# as in torch.
add(OpInfo("aten::narrow.Tensor", opcheck=_NO_FAKE, skip_opcheck=_NO_FAKE_WHY, samples=lambda: [
    S(s.args[0], s.args[1], T((), "int64", values=s.args[2]), s.args[3], desc=s.desc,
      error=s.error) for s in _narrow()] + [
    S(T((4, 3)), 0, T((), values=1.0), 2, desc="float start", error=True)]))
add(OpInfo("aten::expand_as", lambda: [
    S(T((3, 1)), T((3, 4))), S(T((3,)), T((2, 3), "int64")), S(T(()), T((2, 2))),
    S(T((1, 3), layout="strided"), T((2, 2, 3))), S(T((3,)), T((4,)), error=True),
    S(T((2, 3)), T((3,)), error=True)]))
# As torch's, type_as returns self itself when the dtype already matches
# (its schema says a new Tensor): opcheck's alias test would refuse that.
add(OpInfo("aten::type_as", opcheck=("test_faketensor", "test_graph"),
           skip_opcheck="type_as returns self when the dtype matches, as torch's; and "
           "gradcheck in double cannot see through a narrowing cast", samples=lambda: [
    S(T((2, 3)), T((1,), "float64")), S(T((2, 3)), T((2,), "float32")),
    S(T((2, 3), low=-9, high=9), T((), "int64")), S(T((2, 3), "int64"), T((3,))),
    S(T((3, 4), layout="transposed"), T((1,), "float64"))]))
add(OpInfo("aten::squeeze", lambda: [
    S(T((2, 1, 3, 1))), S(T((1, 1))), S(T((2, 3))), S(T(())), S(T((1, 0, 1))),
    S(T((1, 3), layout="strided")), S(T((4, 1), layout="transposed"))]))
add(OpInfo("aten::repeat", lambda: [
    S(T((2, 3)), [2, 2]), S(T((2, 3)), [1, 1]), S(T((3,)), [2, 1, 2]), S(T(()), [3]),
    S(T(()), []), S(T((2, 3)), [0, 2]), S(T((3, 4), "float64", "transposed"), [1, 2]),
    S(T((2, 6), "int64", layout="strided"), [2, 1, 1]),
    S(T((2, 3)), [2], error=True), S(T((2, 3)), [2, -1], error=True)]))
add(OpInfo("aten::flip", lambda: [
    S(T((2, 3)), [0]), S(T((2, 3, 4)), [0, 2]), S(T((2, 3)), [-1]), S(T((2, 3)), []),
    S(T((3, 4), "float64", "transposed"), [1]), S(T((2, 6), "int64", layout="strided"), [1]),
    S(T(()), [0]), S(T((0, 3)), [0, 1]), S(T((2, 3)), [0, 0], error=True),
    S(T((2, 3)), [2], error=True)]))
add(OpInfo("aten::dot", lambda: [
    S(T((3,)), T((3,))), S(T((4,), "float64", "strided"), T((4,), "float64")),
    S(T((3,), "int64"), T((3,), "int64")), S(T((0,)), T((0,))),
    S(T((3,)), T((4,)), error=True), S(T((3, 1)), T((3,)), error=True),
    S(T((3,)), T((3,), "float64"), error=True)]))
add(OpInfo("aten::mv", lambda: [
    S(T((2, 3)), T((3,))), S(T((2, 3), "float64", "transposed"), T((3,), "float64")),
    S(T((2, 6), layout="strided"), T((6,))), S(T((2, 3), "int64"), T((3,), "int64")),
    S(T((0, 3)), T((3,))), S(T((2, 0)), T((0,))),
    S(T((2, 3)), T((4,)), error=True), S(T((3,)), T((3,)), error=True),
    S(T((2, 3)), T((3,), "float64"), error=True)]))
add(OpInfo("aten::new_zeros", lambda: [
    S(T((2, 3)), [2, 4]), S(T((2, 3), "int64"), [3]), S(T((2, 3)), []),
    S(T((2, 3)), [2], dtype=D("float64")), S(T((2, 3)), [2], device=Dev("cpu")),
    S(T((2, 3)), [-1], error=True)]))
add(OpInfo("aten::new_ones", lambda: [
    S(T((2, 3)), [2, 4]), S(T((2, 3), "int64"), [3]), S(T((2, 3)), []),
    S(T((2, 3)), [2], dtype=D("float64")), S(T((2, 3), "bool"), [2]),
    S(T((2, 3)), [-1], error=True)]))
add(OpInfo("aten::new_full", lambda: [
    S(T((2, 3)), [2, 4], 1.5), S(T((2, 3), "int64"), [3], 7), S(T((2, 3)), [], -2.0),
    S(T((2, 3)), [2], 3, dtype=D("float64")), S(T((2, 3), "int64"), [2], 2.5),
    S(T((2, 3)), [-1], 1.0, error=True)]))
# Shrinking or keeping the element count only: a grown tensor's new
# elements are uninitialised (test_tensor_methods_torch checks growth).
add(OpInfo("aten::resize_", grad=False,
           opcheck=("test_schema", "test_faketensor", "test_graph"),
           skip_opcheck="resize_ refuses a tensor that requires grad, as torch's",
           samples=lambda: [
    S(T((2, 3)), [3, 2]), S(T((2, 3)), [4]), S(T((2, 3), "int64"), [1, 1, 2]),
    S(T((2, 3)), [0]), S(T((3, 4), layout="transposed"), [3, 4]),
    S(T((3, 4), layout="transposed"), [2, 2]), S(T((2, 3)), [2, 3]),
    S(T((2, 3)), [-1], error=True)]))
# resize_as_: resize_ to the template's sizes (shrinking or keeping the
# element count: grown elements are uninitialised), its memory format.
add(OpInfo("aten::resize_as_", grad=False,
           opcheck=("test_schema", "test_faketensor", "test_graph"),
           skip_opcheck="resize_as_ refuses a tensor that requires grad, as torch's",
           samples=lambda: [
    S(T((2, 3)), T((3, 2))), S(T((2, 3)), T((4,), "int64")), S(T((2, 3)), T((0,))),
    S(T((3, 4), layout="transposed"), T((3, 4))), S(T((2, 3)), T((2, 3))),
    S(T((2, 3, 2, 2)), T((1, 2, 3, 2)), memory_format=MF("channels_last")),
    S(T((2, 3, 2, 2)), T((2, 3, 2, 2)), memory_format=MF("contiguous_format")),
    S(T((2, 3, 2, 2)), T((1, 2, 2, 3)), memory_format=MF("preserve_format")),
    S(T((2, 3)), T((2, 3)), memory_format=MF("channels_last"), error=True)]))
add(OpInfo("aten::sum_to_size",
           opcheck=("test_autograd_registration", "test_faketensor", "test_graph"),
           skip_opcheck="sum_to_size returns self when the size is already the "
           "tensor's, as torch's (its schema says 'Tensor')", samples=lambda: [
    S(T((2, 3)), [1, 3]), S(T((2, 3)), [2, 1]), S(T((2, 3)), [3]), S(T((2, 3)), [2, 3]),
    S(T((2, 1, 3), "float64", "strided"), [1, 3]), S(T((4, 3), "int64"), [1]),
    S(T((3, 4), layout="transposed"), [1, 1]), S(T((2, 3)), []),
    S(T((2, 3)), [2, 2], error=True), S(T((2, 3)), [1, 2, 3], error=True)]))
_ZERO = lambda: [  # noqa: E731
    S(T((2, 3))), S(T((2, 3), "int64")), S(T((3, 4), layout="transposed")),
    S(T((2, 6), layout="strided")), S(T(())), S(T((0, 2))), S(T((2, 3), "bool"))]
add(OpInfo("aten::zero_", _ZERO))
add(OpInfo("aten::fill_.Tensor", lambda: [
    S(T((2, 3)), T(())), S(T((2, 3), "int64"), T((), "int64")),
    S(T((2, 3)), T((), "float64"), desc="cast"), S(T((3, 4), layout="transposed"), T(())),
    S(T(()), T(())), S(T((0, 3)), T(())), S(T((2, 3)), T((1,)), error=True),
    S(T((2, 3)), T((2,)), error=True)]))
add(OpInfo("aten::eye", lambda: [
    S(3), S(0), S(1), S(3, dtype=D("int64")), S(2, dtype=D("float64"), device=Dev("cpu")),
    S(-1, error=True)]))
add(OpInfo("aten::eye.m", lambda: [
    S(2, 4), S(4, 2), S(0, 3), S(3, 0), S(2, 3, dtype=D("bool")), S(2, -1, error=True),
    S(-2, 2, error=True)]))


# ---- Not yet sampled here ----------------------------------------------------

# TorchScript's non-tensor builtins (jit/runtime/script_builtins.cc): lists,
# strings, optionals, mixed int/float scalars. torch.ops cannot call most of
# them from Python (torch 1.13 has no Python value for their list and
# optional arguments' aliasing); the graphs that use them run against torch
# in the corpus test.
_BUILTINS_TEST = ("tests/python/test_jit_script_corpus.py, "
                  "tests/jit/script_builtins_test.cc")
for _name in (
        "Bool.Tensor", "Bool.float", "Bool.int", "Int.bool", "__contains__.float_list",
        "__contains__.int_list", "__contains__.str_list", "__derive_index", "__is__",
        "__isnot__", "__range_length", "_set_item.t", "add.float_int", "add.int_float",
        "add.str", "add.t", "append.t", "ceil.float", "ceil.int", "clear.t", "copy.t",
        "count.Tensor", "count.bool", "count.float", "count.int", "count.str",
        "div.float_int", "div.int_float", "eq.bool", "eq.float_int", "eq.int_float", "eq.str",
        "extend.t", "floor.float", "floor.int", "floordiv.float_int", "floordiv.int_float",
        "format", "ge.float_int", "ge.int_float", "gt.float_int", "gt.int_float", "gt.str",
        "index.list_Tensor", "index.list_bool", "index.list_float", "index.list_int",
        "index.list_str", "insert.t", "is_contiguous", "le.float_int", "le.int_float",
        "len.str", "list.t", "lt.float_int", "lt.int_float", "lt.str", "mul.float_int",
        "mul.int_float", "ne.bool", "ne.float_int", "ne.int_float", "ne.str", "numel",
        "pop.t", "pow.float", "pow.float_int", "pow.int", "pow.int_float", "remainder.float",
        "remainder.float_int", "remainder.int", "remainder.int_float", "reverse.t", "str",
        "sub.float_int", "sub.int_float", "tensor", "tensor.bool", "tensor.float",
        "tensor.int", "warn"):
    NOT_YET_SAMPLED[f"aten::{_name}"] = _BUILTINS_TEST
# TorchScript's str methods (jit/runtime/str_builtins.cc): no tensor in or
# out; their values and errors are compared with torch 1.13's over tables of
# inputs in scripted graphs.
_STR_TEST = ("tests/python/test_jit_str_builtins_torch.py, "
             "tests/jit/str_builtins_test.cc")
for _name in (
        "split.str", "rsplit", "splitlines", "join", "partition", "rpartition", "list",
        "strip", "lstrip", "rstrip", "replace", "startswith", "endswith", "find", "rfind",
        "count", "index.str", "rindex", "center", "ljust", "rjust", "zfill", "expandtabs",
        "lower", "upper", "swapcase", "capitalize", "title", "isdigit", "isdecimal",
        "isnumeric", "isalpha", "isalnum", "isspace", "islower", "isupper", "isprintable",
        "istitle", "__getitem__.str", "slice.str", "ord", "chr", "le.str", "ge.str",
        "Int.str", "Float.str", "isidentifier"):
    NOT_YET_SAMPLED[f"aten::{_name}"] = _STR_TEST
# `fmt % value` and the List[str] builtins (jit/runtime/script_builtins.cc),
# against torch 1.13 in the same tables.
for _name in ("percentFormat", "sort.str", "sorted.str", "remove.str"):
    NOT_YET_SAMPLED[f"aten::{_name}"] = (
        "tests/python/test_jit_str_builtins_torch.py, "
        "tests/jit/script_builtins_test.cc")
# TorchScript's math functions of numbers (jit/runtime/math_builtins.cc).
_MATH_TEST = "tests/python/test_jit_script_corpus.py"
for _name in ("acos", "acosh", "angle", "asin", "asinh", "atan", "atanh", "cos",
              "cosh", "degrees", "erf", "erfc", "exp", "expm1", "fabs", "gamma",
              "lgamma", "log", "log10", "log1p", "radians", "round", "sin", "sinh",
              "sqrt", "tan", "tanh"):
    NOT_YET_SAMPLED[f"aten::{_name}.int"] = _MATH_TEST
    NOT_YET_SAMPLED[f"aten::{_name}.float"] = _MATH_TEST
for _name in ("isnan.float", "isinf.float", "isfinite.float", "factorial.int"):
    NOT_YET_SAMPLED[f"aten::{_name}"] = _MATH_TEST
# The dict builtins (jit/runtime/dict_builtins.cc), each key type but complex.
_DICT_TEST = ("tests/python/test_jit_script_corpus.py, "
              "tests/jit/dict_builtins_test.cc")
NOT_YET_SAMPLED["aten::dict"] = _DICT_TEST
for _key in ("str", "int", "bool", "float", "Tensor"):
    for _name in ("__getitem__.Dict_", "_set_item.", "__contains__.", "len.Dict_",
                  "keys.", "values.", "items.", "get.", "get.default_", "pop.Dict_",
                  "pop.Dict_default_", "popitem.", "Delete.Dict_", "setdefault.",
                  "update.", "clear.", "copy.Dict_", "dict.", "dict.Dict_"):
        NOT_YET_SAMPLED[f"aten::{_name}{_key}"] = _DICT_TEST
# Overloads with two out= tensors (out_of adds one), and the generator's seed.
for _name in ("max.dim_max", "min.dim_min", "sort.values", "sort.values_stable",
              "topk.values", "manual_seed",
              # In-place random fills: the values are not torch's (another
              # generator), so the test compares ranges and moments.
              "normal_", "uniform_", "bernoulli_.float"):
    NOT_YET_SAMPLED[f"aten::{_name}"] = "tests/python/test_ops_math_torch.py"


# ---- Recurrent cells (kernels/rnn_cell.cc) ------------------------------------


def _rnn_cell(gates: int, lstm: bool) -> Callable[[], List[Sample]]:
    """Samples of one cell: batch 3, input 5, hidden 4 (gates * 4 rows)."""
    def hx(shape: Sequence[int] = (3, 4), dtype: str = "float32") -> Any:
        return [T(shape, dtype), T(shape, dtype)] if lstm else T(shape, dtype)

    def gen() -> List[Sample]:
        g = gates * 4
        return [
            S(T((3, 5)), hx(), T((g, 5)), T((g, 4)), T((g,)), T((g,))),
            S(T((3, 5), "float64"), hx(dtype="float64"), T((g, 5), "float64"),
              T((g, 4), "float64"), T((g,), "float64"), T((g,), "float64")),
            S(T((3, 5)), hx(), T((g, 5)), T((g, 4)), desc="no biases"),
            S(T((3, 5)), hx(), T((g, 5)), T((g, 4)), None, T((g,)), desc="b_hh only"),
            S(T((3, 5), layout="transposed"), hx(), T((g, 5)),
              T((g, 4), layout="transposed"), T((g,)), T((g,))),
            S(T((0, 5)), hx((0, 4)), T((g, 5)), T((g, 4)), desc="empty batch"),
            S(T((3, 6)), hx(), T((g, 5)), T((g, 4)), desc="input_size", error=True),
            S(T((3, 5)), hx((2, 4)), T((g, 5)), T((g, 4)), desc="batch", error=True),
            S(T((3, 5)), hx((3, 3)), T((g, 5)), T((g, 4)), desc="hidden_size", error=True),
            S(T((5,)), hx(), T((g, 5)), T((g, 4)), desc="1-d input", error=True),
            S(T((3, 5), "float64"), hx(), T((g, 5)), T((g, 4)), desc="dtypes", error=True),
            S(T((3, 5)), hx(), T((g, 5)), T((g, 4)), T((5,)), None, desc="b_ih",
              error=True),
        ] + ([S(T((3, 5)), [T((3, 4))], T((g, 5)), T((g, 4)), desc="one state",
                error=True),
              S(T((3, 5)), [T((3, 4)), T((2, 4))], T((g, 5)), T((g, 4)),
                desc="cell batch", error=True)] if lstm else [])
    return gen


add(OpInfo("aten::lstm_cell", _rnn_cell(4, True), atol=1e-4))
add(OpInfo("aten::gru_cell", _rnn_cell(3, False), atol=1e-4))
add(OpInfo("aten::rnn_tanh_cell", _rnn_cell(1, False), atol=1e-4))
add(OpInfo("aten::rnn_relu_cell", _rnn_cell(1, False), atol=1e-4))
# What a traced cell records for torch's lstm_cell / gru_cell (kernels/shape_ops.cc).
# The pieces share self's memory though torch 1.13's schemas do not say so
# (that is the "unsafe"): opcheck's schema test would refuse them.
_UNSAFE_SPLIT = dict(opcheck=("test_autograd_registration", "test_faketensor", "test_graph"),
                     skip_opcheck="torch 1.13's schema leaves the pieces' aliasing of self "
                     "unannotated")
add(OpInfo("aten::unsafe_chunk", lambda: [
    S(T((5, 3)), 2), S(T((5, 8)), 4, 1), S(T((3, 4), layout="transposed"), 2, -1),
    S(T((0, 3)), 2), S(T((5, 3)), 0, error=True), S(T(()), 1, error=True)], **_UNSAFE_SPLIT))
add(OpInfo("aten::unsafe_split.Tensor", lambda: [
    S(T((5, 3)), 2), S(T((5, 3)), 1, 1), S(T((3, 4), layout="transposed"), 3, -1),
    S(T((5, 3)), -1, error=True)], **_UNSAFE_SPLIT))
add(OpInfo("aten::unsafe_split_with_sizes", _SPLIT_SIZES, **_UNSAFE_SPLIT))
# F.normalize's clamp_min (kernels/activation.cc), and clamp_max.
_CLAMP_ONE = lambda: [  # noqa: E731
    S(T((2, 3)), 0.5), S(T((2, 3), "float64"), -1), S(T((3, 4), layout="transposed"), 0),
    S(T((2, 3), "int64"), 1), S(T((2, 3), "int64"), 1.5, desc="int tensor, float bound"),
    S(T(()), 2.0), S(T((0, 2)), 1.0)]
add(OpInfo("aten::clamp_min", _CLAMP_ONE))
add(OpInfo("aten::clamp_max", _CLAMP_ONE))
_CLAMP_ONE_INPLACE = lambda: [  # noqa: E731
    S(T((2, 3)), 0.5), S(T((2, 3), "float64"), -1), S(T((3, 4), layout="transposed"), 0),
    S(T((2, 3), "int64"), 1), S(T(()), 2.0), S(T((0, 2)), 1.0),
    S(T((2, 3), "int64"), 1.5, desc="float result into an int tensor", error=True)]
add(OpInfo("aten::clamp_min_", _CLAMP_ONE_INPLACE))
add(OpInfo("aten::clamp_max_", _CLAMP_ONE_INPLACE))


# ---- nn.MultiheadAttention's operators (kernels/attention.cc) -----------------


def _div_mode() -> List[Sample]:
    out = []
    for mode in (None, "trunc", "floor"):
        out += [S(T((2, 3), low=-5, high=5), T((2, 3), low=0.5), rounding_mode=mode),
                S(T((2, 3), low=-5, high=5), T((3,), low=-2, high=-0.5), rounding_mode=mode,
                  desc="negative divisor, broadcast"),
                S(T((3, 4), "float64", "transposed"), T((3, 4), "float64", "strided", low=0.5),
                  rounding_mode=mode),
                S(T(()), T((), low=0.5), rounding_mode=mode, desc="0-dim"),
                S(T((2, 3), "int64", low=-9, high=9), T((2, 3), "int64", low=1, high=4),
                  rounding_mode=mode),
                S(T((2, 3), "int64", low=-9, high=9), T((3,), "int64", low=-4, high=-1),
                  rounding_mode=mode, desc="int, negative divisor"),
                S(T((2, 3), "int64", low=-9, high=9), T((2, 3), low=0.5), rounding_mode=mode,
                  desc="int by float")]
    return out + [
        S(T((2,), "int64"), T((2,), "int64", values=[1, 0]), rounding_mode="trunc",
          desc="int by zero", error=True),
        S(T((2,)), T((2,), low=0.5), rounding_mode="round", desc="unknown mode", error=True),
        S(T((2, 3)), T((4,)), rounding_mode="trunc", error=True)]


def _div_scalar_mode() -> List[Sample]:
    out = []
    for mode in (None, "trunc", "floor"):
        out += [S(T((2, 3), low=-5, high=5), 1.5, rounding_mode=mode),
                S(T((2, 3), "int64", low=-9, high=9), -4, rounding_mode=mode),
                S(T((2, 3), "int64", low=-9, high=9), 2.5, rounding_mode=mode),
                S(T(()), 2.0, rounding_mode=mode)]
    return out + [S(T((2,)), 2.0, rounding_mode="ceil", error=True)]


add(OpInfo("aten::div.Tensor_mode", _div_mode))
add(OpInfo("aten::div.Scalar_mode", _div_scalar_mode))


def _logical_or() -> List[Sample]:
    return [S(T((2, 3), values=[0.0, 1.5, -2.0, 0.0, 3.0, 0.0]), T((2, 3), "int64", low=-1, high=1)),
            S(T((2, 3), "bool"), T((3,), "bool"), desc="bool, broadcast"),
            S(T((3, 4), "bool", "transposed"), T((3, 4), "float64", low=-1, high=1)),
            S(T((2, 3), "int32"), T((), "bool"), desc="0-dim other"),
            S(T(()), T((0, 3)), desc="empty"),
            S(T((2, 3)), T((4,)), error=True)]


def _logical_or_inplace() -> List[Sample]:
    return [S(T((2, 3), values=[0.0, 1.5, -2.0, 0.0, 3.0, 0.0]), T((2, 3), "int64", low=-1, high=1)),
            S(T((2, 3), "bool"), T((3,), "bool"), desc="bool, broadcast"),
            S(T((3, 4), "int64", "transposed", low=-1, high=1), T((3, 4), "float64", low=-1, high=1)),
            S(T((3,), "bool"), T((2, 3), "bool"), desc="broadcast past self", error=True)]


add(OpInfo("aten::logical_or", _logical_or))
add(OpInfo("aten::logical_or_", _logical_or_inplace))

# No beta=0 sample: torch 1.13's result then holds NaN at random (from
# memory it did not initialise), depending on what ran before.
add(OpInfo("aten::baddbmm", lambda: [
    S(T((2, 3, 5)), T((2, 3, 4)), T((2, 4, 5))),
    S(T((5,)), T((2, 3, 4)), T((2, 4, 5)), desc="broadcast self"),
    S(T((1, 3, 1), "float64"), T((2, 3, 4), "float64", "transposed"), T((2, 4, 5), "float64"),
      beta=0.5, alpha=2, desc="beta, alpha"),
    S(T((2, 3, 5)), T((2, 3, 0)), T((2, 0, 5)), desc="empty inner dimension"),
    S(T((4, 5)), T((3, 3, 4)), T((2, 4, 5)), desc="batches differ", error=True),
    S(T((2, 3, 4)), T((2, 3, 4)), T((2, 4, 5)), desc="self not broadcastable", error=True),
], atol=1e-4))


def _pad() -> Callable[[], List[Sample]]:
    def gen() -> List[Sample]:
        return [S(T((2, 3)), [1, 2]),
                S(T((2, 3, 4)), [1, 0, 2, 1], value=1.5),
                S(T((3, 5), "float64", "transposed"), [-1, 2, 1, -1], desc="negative pads"),
                S(T((2, 3), "int64"), [1, 1], value=3),
                S(T((2, 3)), [0, 0]),
                S(T((2, 3)), [1], desc="odd length", error=True),
                S(T((2,)), [1, 1, 1, 1], desc="longer than twice the dims", error=True),
                S(T((2, 3)), [-2, -2], desc="negative size", error=True)]
    return gen


add(OpInfo("aten::constant_pad_nd", _pad()))
# Mode "constant" only: turnout refuses the others (NotImplemented).
add(OpInfo("aten::pad", _pad()))


def _native_mha() -> List[Sample]:
    weights = (T((12, 4), low=-1, high=1), T((12,)), T((4, 4), low=-1, high=1), T((4,)))
    qkv = (T((2, 3, 4)), T((2, 3, 4)), T((2, 3, 4)))
    kpm = T((2, 3), "bool", values=[False, False, True, False, True, False])
    return [S(*qkv, 4, 2, *weights),
            S(*qkv, 4, 2, *weights, None, True, False, desc="per-head weights"),
            S(*qkv, 4, 2, *weights, kpm, True, True, 1, desc="key padding mask"),
            S(*qkv, 4, 2, *weights, T((2, 3), values=[0.0, 0.0, 1.0, 0.0, 2.0, 0.0]), True,
              True, 1, desc="float key padding mask"),
            S(*qkv, 4, 4, *weights, kpm, True, False, 1, desc="four heads"),
            S(*qkv, 5, 2, *weights, desc="embed_dim not the query's", error=True),
            S(*qkv, 4, 3, *weights, desc="heads do not divide embed_dim", error=True),
            S(T((2, 3, 4)), T((2, 2, 4)), T((2, 2, 4)), 4, 2, *weights,
              desc="query and key shapes differ", error=True),
            S(*qkv, 4, 2, *weights, kpm, desc="mask without mask_type", error=True)]


# torch 1.13 has no derivative for _native_multi_head_attention (turnout's,
# a composite, has one): no gradient comparison, and opcheck's gradcheck
# cannot run.
add(OpInfo("aten::_native_multi_head_attention", _native_mha, atol=1e-4, grad=False,
           opcheck=("test_schema", "test_faketensor", "test_graph"),
           skip_opcheck="torch 1.13 has no derivative for _native_multi_head_attention"))
add(OpInfo("aten::is_floating_point", lambda: [
    S(T((2, 3))), S(T((2,), "float64")), S(T((2,), "int64")), S(T((), "bool"))]))

# The builtins of scripted nn.MultiheadAttention without tensors
# (jit/runtime/script_builtins.cc), run against torch in scripted functions.
for _name in ("find", "is_grad_enabled", "is_autocast_enabled", "all.int", "all.float",
              "all.bool", "any.int", "any.float", "any.bool", "any.str", "slice.t",
              "eq.int_list", "eq.float_list", "eq.bool_list", "eq.str_list", "ne.int_list",
              "ne.float_list", "ne.bool_list", "ne.str_list"):
    NOT_YET_SAMPLED[f"aten::{_name}"] = "tests/python/test_jit_misc_ops.py"

# ---- The out= overloads of kernels/out_variants.cc ---------------------------


def _out_variant(name: str, call: Callable[[Dict[str, Any]], Sample], dtype: str,
                 refused: Optional[str] = None, *, outs: Sequence[str] = ("out",),
                 pieces: int = 0, **opts: Any) -> None:
    """aten::<name> (an out= overload made from its functional one): call(o)
    is the sample with the out arguments o; an empty out of `dtype`, one
    with elements and the wrong shape (resized), and one of the `refused`
    dtype, which torch refuses."""
    if isinstance(outs, str):
        raise TypeError(f"_out_variant({name}): outs is a tuple of names, got {outs!r}")

    def o(d: str, shape: Sequence[int] = (0,)) -> Dict[str, Any]:
        if pieces:
            return {"out": [T(shape, d) for _ in range(pieces)]}
        return {k: T(shape, d) for k in outs}

    def gen() -> List[Sample]:
        samples = [call(o(dtype))]
        resized = call(o(dtype, (7,)))
        resized.desc = "resized out"
        samples.append(resized)
        if refused is not None:
            bad = call(o(refused))
            bad.desc, bad.error = "refused out dtype", True
            samples.append(bad)
        for s in samples:
            s.grad = False
        return samples
    add(OpInfo(f"aten::{name}", gen, grad=False, **opts))


def _native_batch_norm_out(*args: Any, out: Any, save_mean: Any, save_invstd: Any,
                           **kwargs: Any) -> Any:
    """torch 1.13 has native_batch_norm.out for CUDA only: its functional
    result written into the outs, which must have its dtype."""
    import torch
    outs = (out, save_mean, save_invstd)
    results = torch.ops.aten.native_batch_norm.default(*args, **kwargs)
    for o, r in zip(outs, results):
        if o.dtype != r.dtype or o.device != r.device:
            raise RuntimeError(f"native_batch_norm.out: out of {o.dtype} on {o.device} "
                               f"for a result of {r.dtype} on {r.device}")
    for o, r in zip(outs, results):
        o.resize_(r.shape).copy_(r)
    return outs


_out_variant("_unsafe_view.out", lambda o: S(T((2, 3)), [3, 2], **o), "float32")
_out_variant("add.Scalar_out", lambda o: S(T((2, 3)), 2.5, alpha=2, **o), "float32")
_out_variant("all.all_out", lambda o: S(T((2, 3), "bool"), **o), "bool", "int64")
_out_variant(
    "all.out", lambda o: S(T((2, 3), "bool"), 1, keepdim=True, **o), "bool", "int64")
_out_variant("any.all_out", lambda o: S(T((2, 3), "bool"), **o), "bool", "int64")
_out_variant("any.out", lambda o: S(T((2, 3), "bool"), 0, **o), "bool", "int64")
_out_variant("arange.out", lambda o: S(5, **o), "int64", "bool")
_out_variant("arange.start_out", lambda o: S(1, 7, 2, **o), "int64", "bool")
_out_variant(
    "baddbmm.out", lambda o: S(T((2, 3, 4)), T((2, 3, 5)), T((2, 5, 4)), beta=0.5, alpha=2,
        **o),
    "float32", "bool", **_CNN_TOL)
_out_variant(
    "bitwise_xor.Scalar_out", lambda o: S(T((2, 3), "int64", low=-5, high=5), 6, **o),
    "int64", "bool")
_out_variant(
    "bitwise_xor.Tensor_out", lambda o: S(T((2, 3), "int64", low=-5, high=5),
        T((3,), "int64", low=-5, high=5), **o),
    "int64", "bool")
_out_variant("clamp.out", lambda o: S(T((2, 3)), -1.0, 1.5, **o), "float32", "bool")
_out_variant("clamp_max.out", lambda o: S(T((2, 3)), 0.5, **o), "float32", "bool")
_out_variant("clamp_min.out", lambda o: S(T((2, 3)), 0.5, **o), "float32", "bool")
_out_variant("clone.out", lambda o: S(T((2, 3)), **o), "float32")
_out_variant(
    "constant_pad_nd.out", lambda o: S(T((2, 3)), [1, 2], value=0.5, **o), "float32")
_out_variant(
    "convolution_backward.out", lambda o: S(T((1, 2, 3, 3)), T((1, 3, 5, 5)), T((2, 3, 3, 3)),
        [2], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, True], **o),
    "float32", outs=("out0", "out1", "out2"), **_CNN_TOL)
_out_variant(
    "div.Scalar_mode_out", lambda o: S(T((2, 3)), 0.7, rounding_mode='floor', **o),
    "float32")
_out_variant("div.Scalar_out", lambda o: S(T((2, 3)), 2.5, **o), "float32")
_out_variant(
    "div.out_mode", lambda o: S(T((2, 3)), T((3,), low=0.5, high=2.0), rounding_mode='trunc',
        **o),
    "float32", "bool")
_out_variant("dot.out", lambda o: S(T((4,)), T((4,)), **o), "float32", "bool")
_out_variant(
    "elu_backward.grad_input", lambda o: S(T((2, 3)), 1.0, 1.0, 1.0, False, T((2, 3)), **o),
    "float32", "bool", outs=("grad_input",))
_out_variant(
    "embedding.out", lambda o: S(T((5, 3)), T((2, 4), "int64", low=0, high=4), **o),
    "float32")
_out_variant(
    "embedding_dense_backward.out", lambda o: S(T((2, 4, 3)),
        T((2, 4), "int64", low=0, high=4), 5, -1, False, **o),
    "float32")
_out_variant("empty.out", lambda o: S([2, 3], **o), "float32", **_UNINIT)
_out_variant("empty_like.out", lambda o: S(T((2, 3)), **o), "float32", **_UNINIT)
_out_variant(
    "empty_strided.out", lambda o: S([2, 3], [1, 2], **o), "float32", **_UNINIT)
_out_variant(
    "eq.Scalar_out", lambda o: S(T((2, 3), "int64", low=-2, high=2), 1, **o), "bool")
_out_variant(
    "eq.Tensor_out", lambda o: S(T((2, 3), "int64", low=-2, high=2),
        T((3,), "int64", low=-2, high=2), **o),
    "bool")
_out_variant("eye.m_out", lambda o: S(2, 4, **o), "float32")
_out_variant("eye.out", lambda o: S(3, **o), "float32")
_out_variant("flip.out", lambda o: S(T((2, 3)), [0, 1], **o), "float32")
_out_variant(
    "floor_divide.out", lambda o: S(T((2, 3)), T((3,), low=0.5, high=2.0), **o),
    "float32", "bool")
_out_variant("fmod.Scalar_out", lambda o: S(T((2, 3)), 1.5, **o), "float32", "bool")
_out_variant(
    "fmod.Tensor_out", lambda o: S(T((2, 3)), T((3,), low=0.5, high=2.0), **o),
    "float32", "bool")
_out_variant("full.out", lambda o: S([2, 3], 2.5, **o), "float32")
_out_variant(
    "gather.out", lambda o: S(T((3, 4)), 1, T((3, 2), "int64", low=0), **o),
    "float32", "bool")
_out_variant("ge.Scalar_out", lambda o: S(T((2, 3)), 0.5, **o), "bool")
_out_variant("ge.Tensor_out", lambda o: S(T((2, 3)), T((3,)), **o), "bool")
_out_variant(
    "gelu_backward.grad_input", lambda o: S(T((2, 3)), T((2, 3)), approximate='tanh', **o),
    "float32", "bool", outs=("grad_input",))
for _name in ("tanh_backward.grad_input", "sigmoid_backward.grad_input"):
    _out_variant(_name, lambda o: S(T((2, 3)), T((2, 3), low=0.1, high=0.9), **o),
                 "float32", "bool", outs=("grad_input",))
_out_variant("gt.Scalar_out", lambda o: S(T((2, 3)), 0.5, **o), "bool")
_out_variant("gt.Tensor_out", lambda o: S(T((2, 3)), T((3,)), **o), "bool")
_out_variant(
    "hardtanh_backward.grad_input", lambda o: S(T((2, 3)), T((2, 3)), -1.0, 1.0, **o),
    "float32", "bool", outs=("grad_input",))
_out_variant(
    "index_put.out", lambda o: S(T((4, 3)), [T((2,), "int64", low=0)], T((3,)),
        accumulate=True, **o),
    "float32")
_out_variant("le.Scalar_out", lambda o: S(T((2, 3)), 0.5, **o), "bool")
_out_variant("le.Tensor_out", lambda o: S(T((2, 3)), T((3,)), **o), "bool")
_out_variant(
    "leaky_relu_backward.grad_input", lambda o: S(T((2, 3)), T((2, 3)), 0.1, False, **o),
    "float32", "bool", outs=("grad_input",))
_out_variant(
    "threshold_backward.grad_input", lambda o: S(T((2, 3)), T((2, 3)), 0.5, **o),
    "float32", "bool", outs=("grad_input",))
_out_variant("logical_not.out", lambda o: S(T((2, 3)), **o), "bool")
_out_variant(
    "logical_or.out", lambda o: S(T((2, 3), "bool"), T((3,), "bool"), **o), "bool")
_out_variant("logsumexp.out", lambda o: S(T((2, 3)), [1], **o), "float32", "bool")
_out_variant("lt.Scalar_out", lambda o: S(T((2, 3)), 0.5, **o), "bool")
_out_variant("lt.Tensor_out", lambda o: S(T((2, 3)), T((3,)), **o), "bool")
_out_variant(
    "masked_fill.Scalar_out", lambda o: S(T((2, 3)), T((3,), "bool"), 2.5, **o),
    "float32")
_out_variant(
    "masked_fill.Tensor_out", lambda o: S(T((2, 3)), T((3,), "bool"), T(()), **o),
    "float32")
_out_variant("maximum.out", lambda o: S(T((2, 3)), T((3,)), **o), "float32", "bool")
_out_variant("minimum.out", lambda o: S(T((2, 3)), T((3,)), **o), "float32", "bool")
_out_variant("mul.Scalar_out", lambda o: S(T((2, 3)), 2.5, **o), "float32")
_out_variant("mv.out", lambda o: S(T((3, 4)), T((4,)), **o), "float32", "bool")
_out_variant(
    "native_batch_norm.out", lambda o: S(T((2, 3, 4)), T((3,)), T((3,)), T((3,)),
        T((3,), low=0.5, high=2.0), True, 0.1, 1e-05, **o),
    "float32", outs=("out", "save_mean", "save_invstd"), ref=_native_batch_norm_out,
    **_CNN_TOL, **_BATCH_NORM_OPCHECK)
_out_variant(
    "native_batch_norm_backward.out", lambda o: S(T((2, 3, 4)), T((2, 3, 4)), T((3,)), None,
        None, T((3,)), T((3,), low=0.5, high=2.0), True, 1e-05, [True, True, True], **o),
    "float32", outs=("out0", "out1", "out2"), **_CNN_TOL)
_out_variant(
    "native_layer_norm.out", lambda o: S(T((2, 3, 4)), [4], T((4,)), T((4,)), 1e-05, **o),
    "float32", outs=("out0", "out1", "out2"), **_CNN_TOL)
_out_variant(
    "native_layer_norm_backward.out", lambda o: S(T((2, 3, 4)), T((2, 3, 4)), [4],
        T((2, 3, 1)), T((2, 3, 1), low=0.5, high=2.0), T((4,)), T((4,)), [True, True, True],
        **o),
    "float32", outs=("out0", "out1", "out2"), **_CNN_TOL)
_out_variant(
    "ne.Scalar_out", lambda o: S(T((2, 3), "int64", low=-2, high=2), 1, **o), "bool")
_out_variant(
    "ne.Tensor_out", lambda o: S(T((2, 3), "int64", low=-2, high=2),
        T((3,), "int64", low=-2, high=2), **o),
    "bool")
_out_variant("new_empty.out", lambda o: S(T((2,)), [2, 3], **o), "float32", **_UNINIT)
_out_variant("new_empty_strided.out", lambda o: S(T((2,)), [2, 3], [1, 2], **o), "float32",
             **_UNINIT)
_out_variant("new_zeros.out", lambda o: S(T((2,)), [2, 3], **o), "float32")
_out_variant("new_ones.out", lambda o: S(T((2,)), [2, 3], **o), "float32")
_out_variant("new_full.out", lambda o: S(T((2,)), [2, 3], 1.5, **o), "float32")
_out_variant(
    "nll_loss.out", lambda o: S(T((4, 3)), T((4,), "int64", low=0, high=2), None, 1, -100,
        **o),
    "float32", "bool")
_out_variant(
    "nll_loss2d.out", lambda o: S(T((2, 3, 2, 2)), T((2, 2, 2), "int64", low=0, high=2), None,
        1, -100, **o),
    "float32", "bool")
_out_variant(
    "nll_loss2d_backward.grad_input", lambda o: S(T(()), T((2, 3, 2, 2)),
        T((2, 2, 2), "int64", low=0, high=2), None, 1, -100, T((), low=8.0, high=8.0), **o),
    "float32", "bool", outs=("grad_input",))
_out_variant(
    "nll_loss2d_forward.output", lambda o: S(T((2, 3, 2, 2)),
        T((2, 2, 2), "int64", low=0, high=2), None, 1, -100, **o),
    "float32", "bool", outs=("output", "total_weight"))
_out_variant(
    "nll_loss_backward.grad_input", lambda o: S(T(()), T((4, 3)),
        T((4,), "int64", low=0, high=2), None, 1, -100, T((), low=4.0, high=4.0), **o),
    "float32", "bool", outs=("grad_input",))
_out_variant(
    "nll_loss_forward.output", lambda o: S(T((4, 3)), T((4,), "int64", low=0, high=2),
        T((3,), low=0.5, high=2.0), 1, -100, **o),
    "float32", "bool", outs=("output", "total_weight"))
_out_variant("norm.Scalar_out", lambda o: S(T((2, 3)), 3, **o), "float32")
_out_variant(
    "norm.out", lambda o: S(T((2, 3)), 2, [1], keepdim=True, **o), "float32", "bool")
_out_variant("ones.out", lambda o: S([2, 3], **o), "float32")
_out_variant("ones_like.out", lambda o: S(T((2, 3)), **o), "float32")
_out_variant("full_like.out", lambda o: S(T((2, 3)), 2.5, **o), "float32")
_out_variant("rand_like.out", lambda o: S(T((2, 3)), **o), "float32", **_RANDOM)
_out_variant("randn_like.out", lambda o: S(T((2, 3)), **o), "float64", **_RANDOM)
_out_variant("randint_like.out", lambda o: S(T((2, 3), "int64"), 9, **o), "int64",
             **_RANDOM)
_out_variant("randint_like.low_dtype_out", lambda o: S(T((2, 3)), -4, 4, **o),
             "float32", **_RANDOM)
_out_variant("prod.int_out", lambda o: S(T((2, 3)), 1, keepdim=True, **o), "float32")
_out_variant("prod.out", lambda o: S(T((2, 3)), **o), "float32")
_out_variant("rand.out", lambda o: S([2, 3], **o), "float32", "bool", **_RANDOM)
_out_variant(
    "randint.low_out", lambda o: S(3, 7, [2, 3], **o), "int64", "bool", **_RANDOM)
_out_variant("randint.out", lambda o: S(7, [2, 3], **o), "int64", "bool", **_RANDOM)
_out_variant("randn.out", lambda o: S([2, 3], **o), "float32", "bool", **_RANDOM)
_out_variant("randperm.out", lambda o: S(6, **o), "int64", "bool", **_RANDOM)
_out_variant("repeat.out", lambda o: S(T((2, 3)), [2, 1, 2], **o), "float32")
_out_variant("roll.out", lambda o: S(T((2, 3)), [1, -1], [0, 1], **o), "float32")
_out_variant("rsub.Scalar_out", lambda o: S(T((2, 3)), 1.5, alpha=2, **o), "float32")
_out_variant(
    "rsub.Tensor_out", lambda o: S(T((2, 3)), T((3,)), alpha=2, **o), "float32")
_out_variant("scalar_tensor.out", lambda o: S(2.5, **o), "float32")
_out_variant(
    "scatter_add.out", lambda o: S(T((3, 4)), 1, T((3, 2), "int64", low=0), T((3, 2)), **o),
    "float32", "bool")
_out_variant(
    "silu_backward.grad_input", lambda o: S(T((2, 3)), T((2, 3)), **o),
    "float32", "bool", outs=("grad_input",))
_out_variant(
    "softplus_backward.grad_input", lambda o: S(T((2, 3)), T((2, 3)), 1.0, 20.0, **o),
    "float32", "bool", outs=("grad_input",))
_out_variant("sub.Scalar_out", lambda o: S(T((2, 3)), 1.5, alpha=2, **o), "float32")
_out_variant(
    "unsafe_split.Tensor_out", lambda o: S(T((5, 3)), 2, **o), "float32", pieces=3)
_out_variant(
    "unsafe_split_with_sizes.out", lambda o: S(T((5, 3)), [1, 4], **o),
    "float32", pieces=2)
_out_variant("zeros.out", lambda o: S([2, 3], **o), "float32")
_out_variant("zeros_like.out", lambda o: S(T((2, 3)), **o), "float32")
_out_variant("max.out", lambda o: S(T((2, 3)), T((3,)), **o), "float32", "bool")
_out_variant("min.out", lambda o: S(T((2, 3)), T((3,)), **o), "float32", "bool")
_out_variant(
    "clamp.Tensor_out", lambda o: S(T((2, 3)), T((3,), low=-2.0, high=0.0),
                                    T((2, 1), low=0.0, high=2.0), **o), "float32", "int64")
_out_variant("clamp_max.Tensor_out", lambda o: S(T((2, 3)), T((3,)), **o), "float32", "int64")
_out_variant("clamp_min.Tensor_out", lambda o: S(T((2, 3)), T((3,)), **o), "float32", "int64")
_out_variant("isinf.out", lambda o: S(T((4,), values=[1.0, float("inf"), -float("inf"), 0.0]),
                                      **o), "bool")
_out_variant("isnan.out", lambda o: S(T((3,), values=[1.0, float("nan"), 0.0]), **o), "bool")
_out_variant("bitwise_xor.Scalar_Tensor_out", lambda o: S(6, T((2, 3), "int64"), **o), "int64")
_out_variant("copy.out", lambda o: S(T((2, 3)), T((3,), "float64"), **o), "float32")

_out_variant("norm.ScalarOpt_dtype_out", lambda o: S(T((2, 3)), 2, dtype=D("float64"), **o),
             "float64")
_out_variant("norm.dtype_out", lambda o: S(T((2, 3)), 2, [1], False, dtype=D("float64"), **o),
             "float64", "int64")


# ---- torch 1.13's alias operators (kernels/aliases.cc) -----------------------

# Alias overload -> the overload it calls (its CompositeImplicitAutograd
# kernel). Each alias takes its target's samples (drawn again under its own
# name) and settings.
ALIASES: Dict[str, str] = {}
for _alias, _target in (("arccos", "acos"), ("arcsin", "asin"), ("arctan", "atan"),
                        ("arccosh", "acosh"), ("arcsinh", "asinh"),
                        ("arctanh", "atanh"), ("absolute", "abs"),
                        ("negative", "neg"), ("fix", "trunc")):
    ALIASES[f"aten::{_alias}"] = f"aten::{_target}"
    ALIASES[f"aten::{_alias}_"] = f"aten::{_target}_"
    ALIASES[f"aten::{_alias}.out"] = f"aten::{_target}.out"
for _alias, _target, _overloads in (
        ("multiply", "mul", ("Tensor", "Scalar", "out")),
        ("multiply_", "mul_", ("Tensor", "Scalar")),
        ("divide", "div", ("Tensor", "Scalar", "Tensor_mode", "Scalar_mode", "out",
                           "out_mode")),
        ("divide_", "div_", ("Tensor", "Scalar")),
        ("true_divide", "div", ("Tensor", "Scalar", "out")),
        ("true_divide_", "div_", ("Tensor", "Scalar")),
        ("subtract", "sub", ("Tensor", "Scalar", "out")),
        ("subtract_", "sub_", ("Tensor", "Scalar")),
        ("greater", "gt", ("Tensor", "Scalar", "Tensor_out", "Scalar_out")),
        ("greater_equal", "ge", ("Tensor", "Scalar", "Tensor_out", "Scalar_out")),
        ("less", "lt", ("Tensor", "Scalar", "Tensor_out", "Scalar_out")),
        ("less_equal", "le", ("Tensor", "Scalar", "Tensor_out", "Scalar_out")),
        ("not_equal", "ne", ("Tensor", "Scalar", "Tensor_out", "Scalar_out")),
        ("clip", "clamp", ("", "Tensor", "out", "Tensor_out")),
        ("clip_", "clamp_", ("",))):
    for _o in _overloads:
        _dot = f".{_o}" if _o else ""
        ALIASES[f"aten::{_alias}{_dot}"] = f"aten::{_target}{_dot}"
for _alias, _target in (("digamma", "digamma"), ("psi", "digamma"),
                        ("polygamma", "polygamma"), ("gammaln", "lgamma"),
                        ("erf", "erf"), ("erfc", "erfc"), ("expit", "sigmoid"),
                        ("expm1", "expm1"), ("log1p", "log1p"),
                        ("logsumexp", "logsumexp")):
    ALIASES[f"aten::special_{_alias}"] = f"aten::{_target}"
    ALIASES[f"aten::special_{_alias}.out"] = f"aten::{_target}.out"
ALIASES["aten::special_round"] = "aten::round.decimals"
ALIASES["aten::special_round.out"] = "aten::round.decimals_out"
ALIASES["aten::special_log_softmax"] = "aten::log_softmax.int"
ALIASES["aten::special_softmax"] = "aten::softmax.int"


def _dtype_keyword(samples: Callable[[], List[Sample]]) -> Callable[[], List[Sample]]:
    """softmax.int's samples for special_log_softmax, whose dtype is
    keyword-only."""
    def gen() -> List[Sample]:
        out = []
        for s in samples():
            args, kwargs = list(s.args), dict(s.kwargs)
            if len(args) > 2:
                kwargs["dtype"] = args.pop(2)
            out.append(Sample(args, kwargs, desc=s.desc, error=s.error, grad=s.grad))
        return out
    return gen


# Samples of an alias's own: arguments its target has no default for
# (special_round's decimals) or passes another way.
_ALIAS_SAMPLES: Dict[str, Callable[[], List[Sample]]] = {
    "aten::special_round": lambda: OP_DB["aten::round.decimals"]._samples() + [
        S(T((2, 3), low=-30, high=30), desc="decimals=0"),
        S(T((3,), "int64"), desc="int, decimals=0", error=True)],
    "aten::special_log_softmax": _dtype_keyword(_softmax(False)),
}


def _alias_info(alias: str, target: OpInfo) -> OpInfo:
    # A target compared through torch's Python function (the .Scalar ones:
    # _scalar_ref) has its alias compared through the alias's (torch.subtract
    # refuses a bool scalar as torch.sub does; torch.ops.aten's do not).
    ref = None
    if target.ref is not None:
        base = alias.split("::")[1].split(".")[0]
        if not alias.endswith(".Scalar"):
            raise ValueError(f"op_db: no reference function for the alias {alias}")
        ref = _scalar_ref(base, alpha=base == "subtract")
    return OpInfo(alias, _ALIAS_SAMPLES.get(alias, target._samples), ref=ref,
                  values=target.values, grad=target.grad, opcheck=target.opcheck,
                  skip_opcheck=target.skip_opcheck, atol=target.atol, rtol=target.rtol)


for _alias, _target in ALIASES.items():
    if _target not in OP_DB:
        raise ValueError(f"op_db: the alias {_alias}'s target {_target} has no samples")
    add(_alias_info(_alias, OP_DB[_target]))
