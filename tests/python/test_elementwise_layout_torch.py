"""The layout of elementwise results against torch 1.13 as the oracle: the
strides (and values) of functional results, of out= tensors the kernel
resizes, of out= tensors it does not, and of Meta results, for a table of
input layouts (transposed, permuted 3-d and 4-d, channels-last, with gaps,
expanded, broadcast against smaller operands, size-1 and size-0
dimensions, 0-dim and Scalar operands, operands that disagree) times the
unary, binary, comparison, Scalar, clamp, pow and where operators; and the
strides empty_like / clone / *_like give a copy of each layout. The rule
itself is written in kernels/output_layout.h."""

import itertools
import warnings

import pytest

import turnout

torch = pytest.importorskip("torch")


# ---- Layouts ---------------------------------------------------------------------
# name -> (base shape, view): view(base) makes the layout from a contiguous
# base with the same calls in both libraries.
LAYOUTS = {
    "contiguous": ((3, 4), lambda b: b),
    "transposed": ((4, 3), lambda b: b.t()),
    "gaps": ((3, 8), lambda b: b[:, ::2]),
    "gaps_transposed": ((8, 3), lambda b: b[::2].t()),
    "expanded_row": ((4,), lambda b: b.expand(3, 4)),
    "expanded_col": ((3, 1), lambda b: b.expand(3, 4)),
    "expanded_t": ((4, 1), lambda b: b.expand(4, 3).t()),
    "row": ((4,), lambda b: b),
    "col": ((3, 1), lambda b: b),
    "col_t": ((1, 3), lambda b: b.t()),
    "row_2d_odd": ((4,), lambda b: b.as_strided((1, 4), (1, 1))),
    "zero_dim": ((), lambda b: b),
    "size1_odd": ((3,), lambda b: b.as_strided((3, 1), (1, 100))),
    "permuted3": ((2, 3, 4), lambda b: b.permute(2, 0, 1)),
    "permuted3_b": ((3, 2, 4), lambda b: b.permute(2, 1, 0)),
    "contiguous3": ((4, 2, 3), lambda b: b),
    "size1_3d": ((12,), lambda b: b.as_strided((4, 1, 3), (1, 100, 4))),
    "contiguous413": ((4, 1, 3), lambda b: b),
    "channels_last": ((2, 4, 5, 3), lambda b: b.permute(0, 3, 1, 2)),
    "contiguous4": ((2, 3, 4, 5), lambda b: b),
    "permuted4": ((2, 3, 4, 5), lambda b: b.permute(3, 1, 0, 2)),
    "channels_last_gaps": ((2, 4, 5, 6), lambda b: b.permute(0, 3, 1, 2)[:, ::2]),
    "channels_last_c1": ((2, 4, 5, 1), lambda b: b.permute(0, 3, 1, 2)),
    "channels_last_h1": ((2, 1, 5, 3), lambda b: b.permute(0, 3, 1, 2)),
    "bias_c11": ((3, 1, 1), lambda b: b),
    "empty_t": ((0, 3), lambda b: b.t()),
    "empty_3d": ((3, 0, 4), lambda b: b.permute(2, 0, 1)),
    "empty_01": ((0, 1), lambda b: b),
    "empty_1": ((1,), lambda b: b[:0]),
    "one_element_t": ((1, 1), lambda b: b.t()),
}


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def make(lib, name, dtype="float64", seed=0):
    """The layout `name` in `lib`, with values from seed (the same in both)."""
    shape, view = LAYOUTS[name]
    g = torch.Generator().manual_seed(seed + 1000 * len(name))
    if dtype == "int64":
        values = torch.randint(-5, 6, (numel(shape),), generator=g)
    else:
        values = torch.randn(numel(shape), generator=g, dtype=torch.float64)
    base = lib.tensor(values.tolist(), dtype=getattr(lib, dtype))
    return view(base.reshape(shape))


def shape_of(name):
    return tuple(make(torch, name).shape)


def broadcasts(a, b):
    try:
        torch.broadcast_shapes(a, b)
        return True
    except RuntimeError:
        return False


def summary(t):
    """What is compared: shape, strides, dtype name and the values."""
    values = t.tolist()
    if isinstance(values, list):
        values = [round(v, 9) if isinstance(v, float) else v
                  for v in _flat(values)]
    return (tuple(t.shape), tuple(t.stride()), str(t.dtype).split(".")[-1],
            values)


def _flat(v):
    if isinstance(v, list):
        for x in v:
            yield from _flat(x)
    else:
        yield round(v, 9) if isinstance(v, float) else v


# ---- Operators ---------------------------------------------------------------------

UNARY = {
    "sin": lambda lib, x: lib.sin(x),
    "neg": lambda lib, x: -x,
    "abs": lambda lib, x: lib.abs(x),
    "exp": lambda lib, x: lib.exp(x),
    "sqrt_abs": lambda lib, x: lib.sqrt(lib.abs(x)),
    "sigmoid": lambda lib, x: lib.sigmoid(x),
    "relu": lambda lib, x: lib.relu(x),
    "floor": lambda lib, x: lib.floor(x),
    "round_decimals": lambda lib, x: lib.round(x, decimals=1),
    "clamp": lambda lib, x: lib.clamp(x, -0.5, 0.5),
    "clamp_min": lambda lib, x: lib.clamp(x, min=0.0),
    "pow_scalar": lambda lib, x: lib.pow(x, 2),
    "add_scalar": lambda lib, x: x + 1,
    "mul_scalar": lambda lib, x: x * 2,
    "rsub_scalar": lambda lib, x: 3 - x,
    "div_scalar": lambda lib, x: x / 4,
    "gt_scalar": lambda lib, x: x > 0,
    "eq_scalar": lambda lib, x: lib.eq(x, 0),
    "add_zero_dim": lambda lib, x: x + lib.tensor(2.0, dtype=lib.float64),
    "where_scalar_mask": lambda lib, x: lib.where(x > 0, x, x * 0),
    "where_scalar_other": lambda lib, x: lib.where(x > 0, x, 0.5),
    "remainder_scalar": lambda lib, x: lib.remainder(x, 0.7),
    "fmod_scalar": lambda lib, x: lib.fmod(x, 0.7),
    "logical_not": lambda lib, x: lib.logical_not(x),
    "pow_scalar_base": lambda lib, x: lib.pow(2.5, x),
}

BINARY = {
    "add": lambda lib, a, b: a + b,
    "sub_alpha": lambda lib, a, b: lib.sub(a, b, alpha=2),
    "mul": lambda lib, a, b: a * b,
    "div": lambda lib, a, b: a / b,
    "lt": lambda lib, a, b: lib.lt(a, b),
    "ne": lambda lib, a, b: lib.ne(a, b),
    "where_b_mask": lambda lib, a, b: lib.where(b > 0, a, b),
    "where_a_mask": lambda lib, a, b: lib.where(a > 0, a, b),
    "maximum": lambda lib, a, b: lib.maximum(a, b),
    "fmod": lambda lib, a, b: lib.fmod(a, b),
    "remainder": lambda lib, a, b: lib.remainder(a, b),
    "pow": lambda lib, a, b: lib.pow(lib.abs(a), b),
}

UNARY_LAYOUTS = list(LAYOUTS)
PAIRS = [(a, b) for a, b in itertools.product(LAYOUTS, repeat=2)
         if broadcasts(shape_of(a), shape_of(b))]


def run(lib, fn, *names, dtype="float64"):
    args = [make(lib, n, dtype, seed=i) for i, n in enumerate(names)]
    return summary(fn(lib, *args))


def test_the_table_covers_what_it_should():
    # Non-trivial layouts meet each other, and broadcasting happens.
    assert ("transposed", "contiguous") in PAIRS
    assert ("contiguous", "transposed") in PAIRS
    assert ("channels_last", "bias_c11") in PAIRS
    assert ("permuted3", "permuted3_b") in PAIRS
    assert len(PAIRS) > 100


@pytest.mark.parametrize("op", list(UNARY))
@pytest.mark.parametrize("layout", UNARY_LAYOUTS)
def test_unary_and_scalar_results_have_torchs_strides(op, layout):
    assert run(turnout, UNARY[op], layout) == run(torch, UNARY[op], layout)


# gelu and silu of a non-contiguous input are composites of the operators
# above in turnout: they agree with torch except for the stride of a size-1
# dimension whose input stride is odd (size1_3d), which torch keeps.
COMPOSITE_LAYOUTS = ["contiguous", "transposed", "gaps", "gaps_transposed",
                     "expanded_row", "permuted3", "channels_last", "permuted4",
                     "channels_last_gaps", "empty_t", "zero_dim"]


@pytest.mark.parametrize("op", ["gelu", "silu"])
@pytest.mark.parametrize("layout", COMPOSITE_LAYOUTS)
def test_activation_results_have_torchs_strides(op, layout):
    def fn(lib, x):
        return getattr(lib.ops.aten, op).default(x)

    assert run(turnout, fn, layout) == run(torch, fn, layout)


@pytest.mark.parametrize("layout", UNARY_LAYOUTS)
def test_integer_unary_results_have_torchs_strides(layout):
    for fn in (lambda lib, x: lib.bitwise_not(x), lambda lib, x: -x,
               lambda lib, x: lib.bitwise_xor(x, 3),
               lambda lib, x: lib.floor_divide(x, 2),
               lambda lib, x: lib.abs(x), lambda lib, x: lib.sin(x),
               lambda lib, x: x + 1.5):
        assert (run(turnout, fn, layout, dtype="int64")
                == run(torch, fn, layout, dtype="int64"))


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("pair", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_binary_results_have_torchs_strides(op, pair):
    assert run(turnout, BINARY[op], *pair) == run(torch, BINARY[op], *pair)


@pytest.mark.parametrize("pair", [p for p in PAIRS if "zero_dim" not in p][::3])
def test_mixed_dtypes_follow_the_first_deciding_operand(pair):
    def add(lib, a, b):
        return a.to(lib.float32) + b

    assert run(turnout, add, *pair) == run(torch, add, *pair)


TERNARY = [
    ("transposed", "contiguous", "contiguous"),
    ("contiguous", "transposed", "contiguous"),
    ("contiguous", "contiguous", "transposed"),
    ("expanded_row", "transposed", "contiguous"),
    ("row", "col", "transposed"),
    ("zero_dim", "permuted3", "contiguous3"),
    ("bias_c11", "channels_last", "contiguous4"),
    ("contiguous4", "bias_c11", "channels_last"),
    ("size1_3d", "contiguous413", "size1_3d"),
]


@pytest.mark.parametrize("names", TERNARY, ids=["-".join(n) for n in TERNARY])
def test_where_follows_condition_then_self_then_other(names):
    def where(lib, c, a, b):
        return lib.where(c > 0, a, b)

    assert run(turnout, where, *names) == run(torch, where, *names)


# ---- out= ---------------------------------------------------------------------------

OUT_OPS = {
    "add": lambda lib, a, b, out: lib.add(a, b, out=out),
    "mul": lambda lib, a, b, out: lib.mul(a, b, out=out),
    "sin": lambda lib, a, b, out: lib.sin(a, out=out),
    "exp": lambda lib, a, b, out: lib.exp(a, out=out),
    "neg": lambda lib, a, b, out: lib.neg(a, out=out),
    "floor": lambda lib, a, b, out: lib.floor(a, out=out),
    "where": lambda lib, a, b, out: lib.ops.aten.where.self_out(b > 0, a, b,
                                                                 out=out),
    "remainder": lambda lib, a, b, out: lib.remainder(a, b, out=out),
    "pow": lambda lib, a, b, out: lib.pow(lib.abs(a), b, out=out),
    "pow_scalar_base": lambda lib, a, b, out: lib.pow(2.5, a, out=out),
}

OUT_PAIRS = [p for p in PAIRS if "zero_dim" not in p][::2]


@pytest.mark.parametrize("op", list(OUT_OPS))
@pytest.mark.parametrize("pair", OUT_PAIRS, ids=["-".join(p) for p in OUT_PAIRS])
def test_out_resized_from_empty_is_laid_out_as_a_new_result(op, pair):
    def call(lib, a, b):
        out = lib.empty(0, dtype=lib.float64)
        r = OUT_OPS[op](lib, a, b, out)
        assert r is out
        return out

    assert run(turnout, call, *pair) == run(torch, call, *pair)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "gaps"])
def test_out_of_the_right_shape_keeps_its_strides(layout):
    def call(lib, a, b):
        out = make(lib, layout, seed=7)
        lib.add(a, b, out=out)
        return out

    for pair in [("transposed", "transposed"), ("contiguous", "contiguous"),
                 ("transposed", "row")]:
        assert run(turnout, call, *pair) == run(torch, call, *pair)


def test_out_resized_from_a_wrong_shape_gets_the_layout():
    def call(lib, a, b):
        out = lib.empty(2, 2, dtype=lib.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the deprecation warning
            lib.add(a, b, out=out)
        return out

    assert (run(turnout, call, "transposed", "transposed")
            == run(torch, call, "transposed", "transposed"))


def test_in_place_keeps_self_layout():
    for lib in (torch, turnout):
        x = make(lib, "transposed")
        y = make(lib, "contiguous", seed=1)
        x.add_(y)
        x.mul_(2)
        assert tuple(x.stride()) == (1, 3)
    assert (run(turnout, lambda lib, x, y: x.add_(y), "transposed", "row")
            == run(torch, lambda lib, x, y: x.add_(y), "transposed", "row"))


# ---- Meta ----------------------------------------------------------------------------


def meta(lib, name):
    x = make(torch, name)
    return lib.empty_strided(tuple(x.shape), tuple(x.stride()),
                             dtype=lib.float64, device="meta")


def cpu(lib, name):
    return make(lib, name)


META_OPS = {
    "add": lambda lib, a, b: a + b,
    "lt": lambda lib, a, b: lib.lt(a, b),
    "where": lambda lib, a, b: lib.where(a > 0, a, b),
    "sin": lambda lib, a, b: lib.sin(a),
    "mul_scalar": lambda lib, a, b: a * 2,
    "clamp": lambda lib, a, b: lib.clamp(a, 0.0),
    "add_out": lambda lib, a, b: lib.add(
        a, b, out=lib.empty(0, dtype=lib.float64, device=a.device)),
    "sin_out": lambda lib, a, b: lib.sin(
        a, out=lib.empty(0, dtype=lib.float64, device=a.device)),
}


def layout_of(t):
    return tuple(t.shape), tuple(t.stride())


@pytest.mark.parametrize("op", list(META_OPS))
def test_meta_results_have_the_cpu_results_strides(op):
    # turnout's Meta kernels lay out what its CPU kernels do, which is what
    # torch's CPU kernels do (the CUDA kernels allocate from the Meta
    # result). torch 1.13's own Meta where leaves the condition out of the
    # layout, unlike its CPU where: there torch's meta is not the oracle.
    for pair in PAIRS:
        mine = META_OPS[op](turnout, meta(turnout, pair[0]), meta(turnout, pair[1]))
        assert str(mine.device) == "meta"
        theirs_cpu = META_OPS[op](torch, cpu(torch, pair[0]), cpu(torch, pair[1]))
        assert layout_of(mine) == layout_of(theirs_cpu), pair
        if op != "where":
            theirs = META_OPS[op](torch, meta(torch, pair[0]), meta(torch, pair[1]))
            assert layout_of(mine) == layout_of(theirs), pair


def test_torch_meta_where_differs_from_its_cpu_where():
    # Why the test above does not compare where with torch's Meta kernel:
    # if this starts failing, torch's Meta where was fixed, and the
    # exception above can go.
    def where(dev):
        c = torch.empty_strided((3, 4), (4, 1), device=dev) > 0
        a = torch.empty_strided((3, 4), (1, 3), device=dev)
        return tuple(torch.where(c, a, a).stride())

    assert where("cpu") == (4, 1)
    assert where("meta") == (1, 3)


# ---- Copies "like" a tensor -------------------------------------------------------------

LIKE = {
    "empty_like": lambda lib, x: lib.empty_like(x),
    "zeros_like": lambda lib, x: lib.zeros_like(x),
    "ones_like": lambda lib, x: lib.ones_like(x),
    "full_like": lambda lib, x: lib.full_like(x, 2.5),
    "rand_like": lambda lib, x: lib.rand_like(x),
    "randn_like": lambda lib, x: lib.randn_like(x, dtype=lib.float32),
    "randint_like": lambda lib, x: lib.randint_like(x, 3, 9),
    "zeros_like_contiguous": lambda lib, x: lib.zeros_like(
        x, memory_format=lib.contiguous_format),
    "ones_like_preserve": lambda lib, x: lib.ones_like(
        x, memory_format=lib.preserve_format),
    "empty_like_channels_last": lambda lib, x: lib.empty_like(
        x, memory_format=lib.channels_last),
    "full_like_channels_last": lambda lib, x: lib.full_like(
        x, 1, memory_format=lib.channels_last),
    "rand_like_contiguous": lambda lib, x: lib.rand_like(
        x, memory_format=lib.contiguous_format),
    "randint_like_channels_last": lambda lib, x: lib.randint_like(
        x, 5, dtype=lib.int32, memory_format=lib.channels_last),
    "clone": lambda lib, x: x.clone(),
    "clone_preserve": lambda lib, x: x.clone(memory_format=lib.preserve_format),
    "contiguous_then_clone": lambda lib, x: x.contiguous().clone(),
    # Tensor.to(memory_format=): a copy in that format unless the tensor's
    # strides suggest it already (then the tensor itself).
    "to_contiguous": lambda lib, x: x.to(memory_format=lib.contiguous_format),
    "to_channels_last": lambda lib, x: x.to(memory_format=lib.channels_last),
    "to_preserve": lambda lib, x: x.to(memory_format=lib.preserve_format),
    "to_dtype_channels_last": lambda lib, x: x.to(
        lib.float32, memory_format=lib.channels_last),
}


@pytest.mark.parametrize("fn", list(LIKE))
@pytest.mark.parametrize("layout", UNARY_LAYOUTS)
def test_like_copies_have_torchs_strides(fn, layout):
    x_mine, x_theirs = make(turnout, layout), make(torch, layout)
    try:
        theirs = LIKE[fn](torch, x_theirs)
    except RuntimeError as e:  # channels_last of a tensor not 4-d
        with pytest.raises((RuntimeError, ValueError), match="rank 4|4-d|4 dim"):
            LIKE[fn](turnout, x_mine)
        assert "rank 4" in str(e)
        return
    mine = LIKE[fn](turnout, x_mine)
    assert (tuple(mine.shape), tuple(mine.stride())) == (
        tuple(theirs.shape), tuple(theirs.stride()))
    assert mine.dtype == getattr(turnout, str(theirs.dtype).split(".")[-1])
    assert (mine is x_mine) == (theirs is x_theirs), "a copy in one library only"
    assert not mine.requires_grad
    if fn.startswith(("clone", "contiguous", "to_")):
        assert summary(mine) == summary(theirs)
    if fn.startswith("clone") or fn == "contiguous_then_clone":
        assert summary(mine) == summary(theirs)


def test_overlapping_input_gets_a_dense_copy_in_its_order():
    for lib in (torch, turnout):
        base = lib.tensor([float(i) for i in range(10)], dtype=lib.float64)
        x = base.as_strided((3, 4), (1, 2))  # overlapping
        assert tuple(x.clone().stride()) == (1, 3)
        assert tuple(lib.empty_like(x).stride()) == (1, 3)
        assert tuple((x + 1).stride()) == (1, 3)


# ---- The like-factories' dtypes, requires_grad and errors ----------------------------

LIKE_CALLS = {
    "full_like int 1.5": lambda lib: lib.full_like(lib.zeros(2, dtype=lib.int64), 1.5),
    "full_like uint8 300": lambda lib: lib.full_like(lib.zeros(2, dtype=lib.uint8), 300),
    "full_like int inf": lambda lib: lib.full_like(
        lib.zeros(2, dtype=lib.int64), float("inf")),
    "full_like requires_grad": lambda lib: lib.full_like(
        lib.zeros(2), 1.0, requires_grad=True),
    "full_like int requires_grad": lambda lib: lib.full_like(
        lib.zeros(2, dtype=lib.int64), 1, requires_grad=True),
    "rand_like int": lambda lib: lib.rand_like(lib.zeros(2, dtype=lib.int64)),
    "randn_like bool": lambda lib: lib.randn_like(lib.zeros(2, dtype=lib.bool)),
    "rand_like requires_grad": lambda lib: lib.rand_like(
        lib.zeros(2, dtype=lib.int64), dtype=lib.float64, requires_grad=True),
    "randint_like float": lambda lib: lib.randint_like(lib.zeros(2), 4),
    "randint_like bool 3": lambda lib: lib.randint_like(
        lib.zeros(2, dtype=lib.bool), 3),
    "randint_like empty range": lambda lib: lib.randint_like(lib.zeros(2), 5, 5),
    "randint_like int8 from": lambda lib: lib.randint_like(
        lib.zeros(2, dtype=lib.int8), -200, 5),
    "randint_like requires_grad int": lambda lib: lib.randint_like(
        lib.zeros(2, dtype=lib.int64), 4, requires_grad=True),
}


@pytest.mark.parametrize("case", list(LIKE_CALLS))
def test_like_factories_dtypes_and_errors_are_torchs(case):
    try:
        theirs = LIKE_CALLS[case](torch)
    except RuntimeError as e:
        with pytest.raises((RuntimeError, ValueError, TypeError,
                            NotImplementedError)) as mine:
            LIKE_CALLS[case](turnout)
        # The same problem named (turnout's words may differ).
        keys = [k for k in ("overflow", "out of bounds", "not implemented",
                            "'from' to be less than 'to'", "gradients")
                if k in str(e)]
        assert keys and keys[0] in str(mine.value), (str(mine.value), str(e))
        return
    mine = LIKE_CALLS[case](turnout)
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert mine.requires_grad == theirs.requires_grad
    assert tuple(mine.shape) == tuple(theirs.shape)
    if case.startswith("full_like"):
        assert mine.tolist() == theirs.tolist()
    if case.startswith("randint_like"):
        assert all(0 <= v < 4 for v in mine.tolist())


def test_random_like_factories_follow_manual_seed():
    x = turnout.zeros(2, 3)
    for fn in (turnout.rand_like, turnout.randn_like,
               lambda t: turnout.randint_like(t, 100)):
        turnout.manual_seed(7)
        a = fn(x).tolist()
        turnout.manual_seed(7)
        assert fn(x).tolist() == a
