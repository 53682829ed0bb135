"""turnout.library.opcheck and turnout.autograd.gradcheck (bindings/testing.cc).

The broken operators are those of tests/testing/opcheck_test.cc, written in
Python; the messages are the same (one C++ implementation serves both).
gradcheck's verdicts are checked against torch.autograd.gradcheck.
"""
import doctest
import sys
import warnings

import pytest
import torch

import turnout
import turnout._opcheck
import turnout.autograd
import turnout.autograd._gradcheck as gradcheck_module
from turnout.autograd import GradcheckError, gradcheck
from turnout.library import Library, custom_op, opcheck
from turnout._opcheck import OpCheckError


def sample():
    return turnout.tensor([[-1.0, -0.5, 0.0], [0.5, 1.0, 1.5]])


@pytest.fixture
def lib():
    lib = Library("opcheck_py", "DEF")
    yield lib
    lib._destroy()


def define(lib, schema, cpu=None, meta=None, autograd=None):
    name = lib.define(schema).split("::")[1]
    if cpu is not None:
        lib.impl(name, cpu, "CPU")
    if meta is not None:
        lib.impl(name, meta, "Meta")
    if autograd is not None:
        lib.impl(name, autograd, "Autograd")
    return getattr(turnout.ops.opcheck_py, name).default


def same_meta(x):
    return turnout.empty_like(x)


def failure(result, test):
    assert isinstance(result[test], OpCheckError), result
    return str(result[test])


# ---- Each rule, broken ------------------------------------------------------


def test_mutated_argument_not_marked_mutable(lib):
    def sneaky(x):
        x.mul_(2)
        return x.clone()
    op = define(lib, "sneaky(Tensor x) -> Tensor", sneaky, same_meta)
    x = sample()
    r = opcheck(op, (x,), raise_exception=False)
    assert ("argument 'x' was mutated (its values changed (element 0 was -1, "
            "is -2)) but its schema type is 'Tensor', not 'Tensor(a!)'"
            in failure(r, "test_schema"))
    assert x.tolist() == sample().tolist()  # opcheck ran on a copy


def test_output_aliases_input_without_annotation(lib):
    op = define(lib, "leaky(Tensor x) -> Tensor", lambda x: x.view(-1),
                lambda x: turnout.empty(x.numel(), device="meta"))
    r = opcheck(op, (sample(),), raise_exception=False)
    assert ("output 0 aliases argument 'x' (they share storage) but its "
            "schema type is 'Tensor', not 'Tensor(a)'" in failure(r, "test_schema"))


def test_declared_alias_that_is_not_one(lib):
    op = define(lib, "fake_view(Tensor(a) x) -> Tensor(a)", lambda x: x.clone(),
                same_meta)
    r = opcheck(op, (sample(),), raise_exception=False)
    assert ("output 0 is declared as an alias of argument 'x' (schema "
            "'Tensor(a) x' -> 'Tensor(a)') but is not a view of it"
            in failure(r, "test_schema"))


def test_declared_mutation_not_in_place(lib):
    def not_in_place(x):
        out = x + 1
        x.copy_(out)
        return out
    op = define(lib, "not_in_place(Tensor(a!) x) -> Tensor(a!)", not_in_place,
                same_meta)
    r = opcheck(op, (sample(),), raise_exception=False)
    assert ("output 0 must be argument 'x' itself, written in place (schema "
            "'Tensor(a!) x' -> 'Tensor(a!)'), but is a new tensor"
            in failure(r, "test_schema"))


@pytest.mark.parametrize("meta, cpu, message", [
    (lambda x: turnout.empty(x.numel() + 1, device="meta"), None,
     "output 0: the Meta kernel gives sizes [7] but the real kernel [2, 3]"),
    (lambda x: turnout.empty_like(x, dtype=turnout.float64), None,
     "output 0: the Meta kernel gives dtype Double but the real kernel Float"),
    (lambda x: turnout.empty_like(x), lambda x: x.t().contiguous().t(),
     "output 0: the Meta kernel gives strides [3, 1] but the real kernel "
     "[1, 2] (sizes [2, 3])"),
    (None, None, "operator opcheck_py::m has no Meta kernel"),
], ids=["sizes", "dtype", "strides", "missing"])
def test_meta_kernel_disagrees(lib, meta, cpu, message):
    op = define(lib, "m(Tensor x) -> Tensor", cpu or (lambda x: x.clone()), meta)
    r = opcheck(op, (sample(),), raise_exception=False)
    assert message in failure(r, "test_faketensor")
    assert r["test_schema"] == "SUCCESS"


def test_meta_kernel_must_raise_where_the_real_one_does(lib):
    def strict_add(a, b):
        if a.shape != b.shape:
            raise ValueError("strict_add: sizes differ")
        return a + b
    op = define(lib, "strict_add(Tensor a, Tensor b) -> Tensor", strict_add,
                lambda a, b: turnout.empty_like(a))
    r = opcheck(op, (sample(), turnout.ones(3, 2)), raise_exception=False)
    # A Python kernel's exception, with its type and traceback.
    assert ("the real kernel raised (ValueError: strict_add: sizes differ"
            in failure(r, "test_faketensor"))
    assert "but the Meta kernel did not" in failure(r, "test_faketensor")


def test_differentiable_operator_without_autograd_kernel(lib):
    op = define(lib, "scale_no_autograd(Tensor x, float s) -> Tensor",
                lambda x, s: x * s, lambda x, s: turnout.empty_like(x))
    r = opcheck(op, (sample(), 2.0), raise_exception=False)
    assert ("operator opcheck_py::scale_no_autograd returns floating-point "
            "tensors and its arguments 'x' may require grad, but it has no "
            "autograd kernel" in failure(r, "test_autograd_registration"))
    assert "turnout.library.register_autograd" in failure(r, "test_autograd_registration")
    assert r["test_faketensor"] == "SUCCESS"


def scale_op(name, factor):
    """A custom op x * s whose backward multiplies by factor(s)."""
    @custom_op(f"opcheck_py2::{name}", mutates_args=())
    def scale(x: turnout.Tensor, s: float) -> turnout.Tensor:
        return x * s

    @scale.register_fake
    def _(x, s):
        return turnout.empty_like(x)

    def setup_context(ctx, inputs, output):
        ctx.s = inputs[1]

    scale.register_autograd(lambda ctx, g: (g * factor(ctx.s), None),
                            setup_context=setup_context)
    return scale


def test_wrong_backward():
    op = scale_op("scale_bad_grad", lambda s: s + 1)
    try:
        r = opcheck(op, (sample(), 2.0), raise_exception=False)
        m = failure(r, "test_autograd_registration")
        assert ("the gradients of opcheck_py2::scale_bad_grad disagree with "
                "finite differences (gradcheck in double; input 0 is 'x'): "
                "Jacobian mismatch for output 0 with respect to input 0" in m)
        assert "(analytical 3, numerical 2)" in m
    finally:
        op._destroy()


def test_right_custom_op_passes():
    op = scale_op("scale", lambda s: s)
    try:
        assert opcheck(op, (sample(), 2.0)) == {
            "test_schema": "SUCCESS",
            "test_autograd_registration": "SUCCESS",
            "test_faketensor": "SUCCESS",
            "test_graph": "SUCCESS",
        }
    finally:
        op._destroy()


def test_non_differentiable_operator_needs_no_autograd_kernel(lib):
    op = define(lib, "count(Tensor x) -> Tensor", lambda x: (x > 0).sum(),
                lambda x: turnout.empty((), dtype=turnout.int64, device="meta"))
    assert opcheck(op, (sample(),)) == dict.fromkeys(
        ["test_schema", "test_autograd_registration", "test_faketensor",
         "test_graph"], "SUCCESS")


def test_fallthrough_at_autograd_declares_non_differentiable(lib):
    op = define(lib, "zeros_of(Tensor x) -> Tensor", turnout.zeros_like,
                same_meta, turnout.library.fallthrough_kernel)
    assert opcheck(op, (sample(),))["test_autograd_registration"] == "SUCCESS"


def test_composite_alias_may_be_a_new_tensor(lib):
    lib.define("maybe_view(Tensor(a) x) -> Tensor(a)")
    lib.impl("maybe_view", lambda x: x.contiguous(), "CompositeImplicitAutograd")
    op = turnout.ops.opcheck_py.maybe_view.default
    for x in (sample(), sample().t()):
        assert opcheck(op, (x,), test_utils="test_schema") == {"test_schema": "SUCCESS"}


# ---- The call: op forms, results, errors --------------------------------------


def test_raise_exception_raises_the_first_failure(lib):
    op = define(lib, "leaky(Tensor x) -> Tensor", lambda x: x.view(-1))
    with pytest.raises(OpCheckError, match=r"opcheck\(opcheck_py::leaky\): "
                       r"test_schema failed: output 0 aliases argument 'x'"):
        opcheck(op, (sample(),))


def test_result_keeps_the_order_and_the_selection(lib):
    x = sample()
    r = opcheck(turnout.ops.aten.add.Tensor, (x, x),
                test_utils=("test_faketensor", "test_schema"))
    assert list(r) == ["test_faketensor", "test_schema"]
    assert opcheck("aten::relu", (x,), test_utils="test_graph") == {
        "test_graph": "SUCCESS"}


@pytest.mark.parametrize("op", [
    "aten::mul.Tensor", turnout.ops.aten.mul.Tensor,
])
def test_op_forms(op):
    x = sample()
    assert opcheck(op, (x, x), test_utils="test_schema") == {"test_schema": "SUCCESS"}


def test_packet_with_one_fitting_overload():
    x = sample()
    assert opcheck(turnout.ops.aten.relu, (x,), test_utils="test_schema") == {
        "test_schema": "SUCCESS"}
    with pytest.raises(ValueError, match=r"aten::sum has \d+ "
                       r"overloads and 0 of them accept these arguments"):
        opcheck(turnout.ops.aten.sum, ("not a tensor",))


def test_bad_calls():
    x = sample()
    with pytest.raises(ValueError, match="unknown test 'test_nothing'"):
        opcheck("aten::relu", (x,), test_utils=("test_nothing",))
    with pytest.raises(TypeError, match="expected op to be an operator name"):
        opcheck(3, (x,))
    with pytest.raises(ValueError, match="expected a qualified operator name"):
        opcheck("relu", (x,))
    with pytest.raises(ValueError, match="aten::relu has no overload 'nope'"):
        opcheck("aten::relu.nope", (x,))
    with pytest.raises(TypeError, match="missing required argument 'other'"):
        opcheck("aten::add.Tensor", (x,))


REFERENCE_CALLS = [
    ("aten::add.Tensor", lambda a, b, sq: ((a, b), {})),
    ("aten::add.Tensor", lambda a, b, sq: ((a, turnout.ones(3)), {"alpha": 2})),
    ("aten::mul.Tensor", lambda a, b, sq: ((a, b), {})),
    ("aten::mul.Scalar", lambda a, b, sq: ((a, 3.0), {})),
    ("aten::sub.Tensor", lambda a, b, sq: ((a, b), {})),
    ("aten::div.Tensor", lambda a, b, sq: ((a, b), {})),
    ("aten::view", lambda a, b, sq: ((a, [3, 2]), {})),
    ("aten::transpose.int", lambda a, b, sq: ((a, 0, 1), {})),
    ("aten::add_.Tensor", lambda a, b, sq: ((a, b), {})),
    ("aten::sum", lambda a, b, sq: ((a,), {})),
    ("aten::mean", lambda a, b, sq: ((a,), {})),
    ("aten::contiguous", lambda a, b, sq: ((a.t(),), {})),
    ("aten::to.dtype", lambda a, b, sq: ((a, turnout.float64), {})),
    ("aten::sum.dim_IntList", lambda a, b, sq: ((a, [1]), {})),
    ("aten::mm", lambda a, b, sq: ((a, sq), {})),
    ("aten::relu", lambda a, b, sq: ((a + 0.1,), {})),
    ("aten::exp", lambda a, b, sq: ((a,), {})),
    ("aten::unsqueeze", lambda a, b, sq: ((a, 0), {})),
    ("aten::matmul", lambda a, b, sq: ((a, sq), {})),
    ("aten::add.out", lambda a, b, sq: ((a, b), {"out": b.clone()})),
    ("aten::gt.Tensor", lambda a, b, sq: ((a, b), {})),
]


@pytest.mark.parametrize("name, make", REFERENCE_CALLS,
                         ids=[c[0] for c in REFERENCE_CALLS])
def test_reference_operators_pass(name, make):
    a = sample()
    b = turnout.tensor([[0.5, 0.75, 1.0], [1.25, 1.5, 1.75]])
    sq = turnout.tensor([[0.1, 0.2, -0.3], [0.4, -0.5, 0.6], [0.7, 0.8, 0.9]])
    args, kwargs = make(a, b, sq)
    opcheck(name, args, kwargs)


# ---- gradcheck, against torch ----------------------------------------------------


def both(values, dtype_t=turnout.float64, dtype_torch=torch.float64):
    return (turnout.tensor(values, dtype=dtype_t).requires_grad_(),
            torch.tensor(values, dtype=dtype_torch).requires_grad_())


def test_gradcheck_agrees_with_torch_on_right_gradients():
    x, tx = both([[0.3, -1.2], [2.0, 0.7]])
    y, ty = both([[1.5], [-0.4]])
    assert torch.autograd.gradcheck(lambda a, b: (a @ b).tanh(), (tx, ty))
    assert gradcheck(lambda a, b: turnout.ops.aten.mm(a, b).tanh(), (x, y))
    assert x.grad is None  # the caller's tensors are untouched
    # A tensor alone and outputs in a tuple, as torch takes them.
    assert torch.autograd.gradcheck(lambda a: (a.exp(), a * 2), tx)
    assert gradcheck(lambda a: (a.exp(), a * 2), x)


def test_gradcheck_agrees_with_torch_on_wrong_gradients():
    class TorchBad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    op = scale_op("scale_wrong", lambda s: s + 1)
    try:
        x, tx = both([0.5, -1.0, 2.0])
        assert torch.autograd.gradcheck(TorchBad.apply, (tx,),
                                        raise_exception=False) is False
        assert gradcheck(lambda t: op(t, 2.0), (x,), raise_exception=False) is False
        torch_gradcheck_error = sys.modules["torch.autograd.gradcheck"].GradcheckError
        with pytest.raises(torch_gradcheck_error):
            torch.autograd.gradcheck(TorchBad.apply, (tx,))
        with pytest.raises(GradcheckError, match=r"Jacobian mismatch for output "
                           r"0 with respect to input 0: the largest difference "
                           r"is 1 \(analytical 3, numerical 2\)"):
            gradcheck(lambda t: op(t, 2.0), (x,))
        assert issubclass(GradcheckError, RuntimeError)
    finally:
        op._destroy()


def test_gradcheck_tolerances_as_torch():
    # f(x) = x * (1 + 3e-5): off by 3e-5 from a backward of 1 -- within
    # atol=1e-4, outside the default atol=1e-5 (rtol 0), in both.
    class TorchNear(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * (1 + 3e-5)

        @staticmethod
        def backward(ctx, g):
            return g

    op = custom_op("opcheck_py2::near", lambda x: x * (1 + 3e-5),
                   schema="(Tensor x) -> Tensor")
    op.register_autograd(lambda ctx, g: (g,))
    try:
        x, tx = both([0.5, 1.0])
        for atol in (1e-5, 1e-4):
            expected = torch.autograd.gradcheck(TorchNear.apply, (tx,), atol=atol,
                                                rtol=0, raise_exception=False)
            assert gradcheck(op, (x,), atol=atol, rtol=0,
                             raise_exception=False) is expected
        assert expected is True
    finally:
        op._destroy()


def test_gradcheck_errors():
    x = turnout.tensor([1.0, 2.0], dtype=turnout.float64)
    with pytest.raises(ValueError, match="expected at least one input tensor "
                       "that requires grad"):
        gradcheck(lambda t: t * 2, (x,))
    with pytest.raises(TypeError, match="expected func to be callable"):
        gradcheck(3, (x,))
    with pytest.raises(ZeroDivisionError):  # func's own error, unchanged
        gradcheck(lambda t: 1 / 0, (x.requires_grad_(),))
    f = turnout.tensor([1.0, 2.0]).requires_grad_()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradcheck(lambda t: t * 2, (f,), atol=1e-2, rtol=1e-2, eps=1e-3)
    assert "input 0 requires grad and is turnout.float32" in str(caught[0].message)


@pytest.mark.parametrize("module", [turnout._opcheck, gradcheck_module])
def test_docstring_examples(module):
    failures, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0 and attempted > 0


def test_exports():
    assert "opcheck" in turnout.library.__all__
    assert turnout.autograd.gradcheck is gradcheck
