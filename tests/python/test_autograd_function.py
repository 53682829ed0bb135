"""turnout.autograd.Function against torch 1.13's torch.autograd.Function:
the same functions, written once for both libraries, give the same values,
gradients, versions and errors."""

import pytest
import torch

import turnout
from turnout import _C
from turnout.autograd import Function, once_differentiable

LIBS = {"torch": (torch, torch.autograd.Function),
        "turnout": (turnout, Function)}


def values(t):
    return None if t is None else t.tolist()


def grad_fn_name(t):
    fn = t.grad_fn
    return None if fn is None else fn.name()


def leaf(lib, data):
    return lib.tensor(data, requires_grad=True)


def make_mul_exp(lib, base):
    class MulExp(base):
        @staticmethod
        def forward(ctx, x, y, alpha):
            e = y.exp()
            ctx.save_for_backward(x, e)
            ctx.alpha = alpha
            return x * e * alpha

        @staticmethod
        def backward(ctx, grad):
            x, e = ctx.saved_tensors
            g = grad * ctx.alpha
            return g * e, g * x * e, None

    return MulExp


def both(build):
    """build(lib, base) -> result, for torch and turnout."""
    return {name: build(lib, base) for name, (lib, base) in LIBS.items()}


def test_values_gradients_and_node_name():
    def run(lib, base):
        fn = make_mul_exp(lib, base)
        x = leaf(lib, [1.0, -2.0, 0.5])
        y = leaf(lib, [0.25, 0.5, -1.0])
        out = fn.apply(x, y, 1.5)
        name = grad_fn_name(out)
        out.sum().backward()
        return values(out), values(x.grad), values(y.grad), name

    r = both(run)
    for a, b in zip(r["torch"][:3], r["turnout"][:3]):
        assert a == pytest.approx(b, rel=1e-6)
    assert r["torch"][3] == r["turnout"][3] == "MulExpBackward"


def test_setup_context_form_matches_torch():
    class Square(Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    class TorchSquare(torch.autograd.Function):  # 1.13: forward takes ctx
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = turnout.tensor([3.0, -1.0], requires_grad=True)
    tx = torch.tensor([3.0, -1.0], requires_grad=True)
    Square.apply(x).sum().backward()
    TorchSquare.apply(tx).sum().backward()
    assert values(x.grad) == values(tx.grad) == [6.0, -2.0]


def test_broadcast_gradient_is_summed_to_the_input_shape():
    def run(lib, base):
        fn = make_mul_exp(lib, base)
        x = leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
        y = leaf(lib, [0.0, 1.0])
        fn.apply(x, y, 2.0).sum().backward()
        return values(x.grad), values(y.grad)

    r = both(run)
    assert r["turnout"][0] == [pytest.approx(row, rel=1e-6) for row in r["torch"][0]]
    assert r["turnout"][1] == pytest.approx(r["torch"][1], rel=1e-6)


def test_needs_input_grad():
    def run(lib, base):
        seen = []

        class F(base):
            @staticmethod
            def forward(ctx, a, k, b):
                seen.append(ctx.needs_input_grad)
                return a * k + b

            @staticmethod
            def backward(ctx, grad):
                seen.append(ctx.needs_input_grad)
                return (grad * 2 if ctx.needs_input_grad[0] else None, None,
                        grad if ctx.needs_input_grad[2] else None)

        a = lib.tensor([1.0])
        b = leaf(lib, [1.0])
        F.apply(a, 2, b).sum().backward()
        with lib.no_grad():
            F.apply(a, 2, b)
        return seen, values(b.grad), a.grad

    r = both(run)
    assert r["torch"] == r["turnout"]
    # As torch's: set from requires_grad, with grad mode on or off.
    assert r["turnout"][0] == [(False, False, True)] * 3


def test_saved_tensor_modified_in_place():
    def run(lib, base):
        fn = make_mul_exp(lib, base)
        x = leaf(lib, [1.0, 2.0]) * 1
        y = lib.tensor([0.0, 0.0])
        out = fn.apply(x, y, 1.0)
        x.add_(1)
        with pytest.raises(RuntimeError) as e:
            out.sum().backward()
        return str(e.value)

    r = both(run)
    for msg in r.values():
        assert msg.startswith("one of the variables needed for gradient "
                              "computation has been modified by an inplace "
                              "operation: ")
        assert "is at version 1; expected version 0 instead" in msg
    assert "which is saved by MulExpBackward" in r["turnout"]


def make_double_in_place(base):
    class DoubleInPlace(base):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    return DoubleInPlace


def test_mark_dirty():
    def run(lib, base):
        a = leaf(lib, [1.0, 2.0])
        y = a * 3
        v0 = y._version
        out = make_double_in_place(base).apply(y)
        same = out is y
        name = grad_fn_name(y)
        y.sum().backward()
        return same, name, y._version - v0, values(y), values(a.grad)

    r = both(run)
    assert r["torch"] == r["turnout"]
    assert r["turnout"][1] == "DoubleInPlaceBackward"


def test_mark_dirty_on_a_leaf_that_requires_grad():
    def run(lib, base):
        a = leaf(lib, [1.0, 2.0])
        with pytest.raises(RuntimeError) as e:
            make_double_in_place(base).apply(a)
        return str(e.value), a.is_leaf

    r = both(run)
    for msg, is_leaf in r.values():
        assert "a leaf Variable that requires grad" in msg
        assert is_leaf


def test_dirty_tensor_not_returned():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad

    x = turnout.tensor([1.0], requires_grad=True) * 1
    with pytest.raises(RuntimeError, match="FBackward: a tensor marked dirty "
                       r"\(mark_dirty\) was not returned by forward"):
        F.apply(x)


@pytest.mark.parametrize("materialize", [True, False])
def test_non_differentiable_outputs(materialize):
    def run(lib, base):
        received = []

        class F(base):
            @staticmethod
            def forward(ctx, x):
                mask = (x > 0).float()
                ctx.mark_non_differentiable(mask)
                ctx.set_materialize_grads(materialize)
                return x * 2, mask, (x > 0).long()

            @staticmethod
            def backward(ctx, g, gmask, glong):
                received.append((values(g), values(gmask), values(glong)))
                return g * 2

        x = leaf(lib, [-1.0, 2.0])
        out, mask, idx = F.apply(x)
        flags = (out.requires_grad, mask.requires_grad, idx.requires_grad)
        out.sum().backward()
        return flags, received, values(x.grad)

    r = both(run)
    assert r["torch"] == r["turnout"]


def test_wrong_number_of_gradients():
    def run(lib, base, result):
        class Bad(base):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, grad):
                return result(grad)

        x = leaf(lib, [1.0])
        with pytest.raises(RuntimeError) as e:
            Bad.apply(x, 2.0).sum().backward()
        return str(e.value)

    for result in (lambda g: g, lambda g: (g, g * 0), lambda g: (g, None, g)):
        r = {name: run(lib, base, result) for name, (lib, base) in LIBS.items()}
        # torch says "Variable" where turnout says "Tensor".
        assert r["torch"].replace("Variable", "Tensor") == r["turnout"], r


def test_extra_none_gradients_are_allowed():
    def run(lib, base):
        class F(base):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2, None, None

        x = leaf(lib, [1.0])
        F.apply(x).sum().backward()
        return values(x.grad)

    r = both(run)
    assert r["torch"] == r["turnout"] == [2.0]


def test_input_returned_unchanged_keeps_its_history():
    def run(lib, base):
        class Identity(base):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad

        x = leaf(lib, [1.0, 2.0])
        out = Identity.apply(x)
        facts = (out is x, x.is_leaf, grad_fn_name(out))
        (out * 5).sum().backward()
        return facts, values(x.grad)

    r = both(run)
    assert r["torch"] == r["turnout"]


def test_nothing_recorded_without_grad():
    def run(lib, base):
        fn = make_mul_exp(lib, base)
        x = lib.tensor([1.0])
        w = leaf(lib, [1.0])
        plain = fn.apply(x, x, 1.0).requires_grad
        with lib.no_grad():
            off = fn.apply(w, x, 1.0).requires_grad
        return plain, off

    r = both(run)
    assert r["torch"] == r["turnout"] == (False, False)


def test_forward_runs_with_grad_mode_off():
    def run(lib, base):
        seen = []

        class F(base):
            @staticmethod
            def forward(ctx, x):
                seen.append(lib.is_grad_enabled())
                y = x * 3
                seen.append(y.requires_grad)
                return y

            @staticmethod
            def backward(ctx, grad):
                return grad * 3

        F.apply(leaf(lib, [1.0]))
        return seen

    r = both(run)
    assert r["torch"] == r["turnout"] == [False, False]


def test_apply_twice_and_chained():
    def run(lib, base):
        fn = make_mul_exp(lib, base)
        x = leaf(lib, [1.0, 2.0])
        y = lib.tensor([0.0, 0.0])
        (fn.apply(x, y, 1.0) + fn.apply(x, y, 2.0)).sum().backward()
        first = values(x.grad)
        x.grad = None
        fn.apply(fn.apply(x, y, 2.0), y, 3.0).sum().backward()
        return first, values(x.grad)

    r = both(run)
    assert r["torch"] == r["turnout"] == ([3.0, 3.0], [6.0, 6.0])


def test_once_differentiable():
    def run(lib, base, decorator):
        class F(base):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @decorator
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return 2 * x * grad

        x = leaf(lib, [3.0])
        F.apply(x).sum().backward()
        return values(x.grad)

    assert (run(torch, torch.autograd.Function,
                torch.autograd.function.once_differentiable)
            == run(turnout, Function, once_differentiable) == [6.0])


def test_save_for_backward_rejects_non_tensors():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2

    with pytest.raises(TypeError, match="save_for_backward can only save "
                       "Tensors or None, got int at position 1"):
        F.apply(turnout.tensor([1.0], requires_grad=True))


def test_missing_backward_and_instantiation():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    y = F.apply(turnout.tensor([1.0], requires_grad=True))
    with pytest.raises(NotImplementedError, match="backward"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match=r"call F.apply\(\*args\)"):
        F()


def test_as_the_autograd_kernel_of_an_operator():
    # A Python operator whose autograd kernel applies a Function that
    # redispatches below autograd.
    lib = turnout.library.Library("autograd_fn_test", "DEF")
    lib.define("cube(Tensor x) -> Tensor")
    lib.impl("cube", lambda x: x * x * x, "CPU")
    op = turnout.ops.autograd_fn_test.cube.default

    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            with _C._AutoDispatchBelowAutograd():
                return op(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * x * x * grad

    lib.impl("cube", Cube.apply, "Autograd")
    try:
        x = turnout.tensor([2.0, -1.0], requires_grad=True)
        y = op(x)
        assert y.grad_fn.name() == "CubeBackward"
        y.sum().backward()
        assert values(x.grad) == [12.0, 3.0]
    finally:
        lib._destroy()


def test_autograd_backward():
    def run(lib):
        x = leaf(lib, [1.0, 2.0])
        lib.autograd.backward([(x * x).sum(), (x * 3).sum()])
        return values(x.grad)

    assert run(torch) == run(turnout) == [5.0, 7.0]


# ---- The autograd fallback: an operator with no autograd kernel -------------

@pytest.fixture
def no_autograd_op():
    assert _C._get_autograd_fallback_mode() == "warn"  # the default
    _C._reset_autograd_fallback_warnings()
    lib = turnout.library.Library("autograd_fb_test", "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.define("twice_nd(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CPU")
    lib.impl("twice_nd", lambda x: x * 2, "CPU")
    lib.impl("twice_nd", turnout.library.fallthrough_kernel, "Autograd")
    try:
        yield turnout.ops.autograd_fb_test
    finally:
        _C._set_autograd_fallback_mode("warn")
        lib._destroy()


def test_no_autograd_kernel_warns_once_at_the_call(no_autograd_op):
    x = turnout.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning) as record:
        no_autograd_op.twice.default(x)
    assert len(record) == 1
    text = str(record[0].message)
    assert text.startswith("autograd_fb_test::twice has no autograd kernel, but "
                           "was called with a Tensor that requires grad")
    assert "register_autograd" in text
    assert ('Library.impl("twice", turnout.library.fallthrough_kernel, '
            '"Autograd")') in text
    assert record[0].filename == __file__  # points at the call
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        no_autograd_op.twice.default(x)  # once per operator
        # Silent: declared non-differentiable, nothing requires grad, grad
        # mode off, the reference operators.
        no_autograd_op.twice_nd.default(x)
        no_autograd_op.twice.default(turnout.tensor([1.0]))
        with turnout.no_grad():
            no_autograd_op.twice.default(x)
        (x > 0, x.detach(), turnout.zeros_like(x), x.argmax(), x * 2)


def test_custom_op_without_autograd_warns_at_the_call(no_autograd_op):
    import warnings
    from turnout.library import custom_op

    @custom_op("autograd_fb_test2::scaled", mutates_args=())
    def scaled(x: turnout.Tensor, alpha: float) -> turnout.Tensor:
        return x * alpha

    try:
        x = turnout.tensor([1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert scaled(turnout.tensor([1.0]), 2.0).tolist() == [2.0]
            with turnout.no_grad():
                scaled(x, 2.0)
        with pytest.warns(UserWarning, match=r"^autograd_fb_test2::scaled has "
                          "no autograd kernel") as record:
            y = scaled(x, 3.0)
        # (Given where the operator is called: in CustomOpDef.__call__.)
        assert len(record) == 1
        assert "register_autograd" in str(record[0].message)
        assert y.tolist() == [3.0, 6.0]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            scaled(x, 3.0)  # once per operator
        # With an autograd kernel it is silent and differentiable.
        scaled.register_autograd(lambda ctx, g: (g * 3.0, None))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            scaled(x, 3.0).sum().backward()
        assert x.grad.tolist() == [3.0, 3.0]
    finally:
        scaled._destroy()


def test_no_autograd_kernel_warning_as_error(no_autograd_op):
    import warnings
    x = turnout.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="has no autograd kernel"):
            no_autograd_op.twice.default(x)


def test_autograd_fallback_mode_nothing(no_autograd_op):
    import warnings
    assert _C._get_autograd_fallback_mode() == "warn"
    assert not _C._dispatch_kernel_for_dispatch_key_is_fallthrough(
        "autograd_fb_test::twice", turnout.DispatchKey.AutogradCPU)
    _C._set_autograd_fallback_mode("nothing")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            no_autograd_op.twice.default(turnout.tensor([1.0], requires_grad=True))
        assert _C._dispatch_kernel_for_dispatch_key_is_fallthrough(
            "autograd_fb_test::twice", turnout.DispatchKey.AutogradCPU)
    finally:
        _C._set_autograd_fallback_mode("warn")
    with pytest.raises(ValueError, match='expected "warn" or "nothing", got "loud"'):
        _C._set_autograd_fallback_mode("loud")


@pytest.mark.parametrize("env, mode, warning", [
    (None, "warn", ""),
    ("warn", "warn", ""),
    ("nothing", "nothing", ""),
    ("loud", "warn", 'TURNOUT_AUTOGRAD_FALLBACK_MODE=loud is neither "warn" nor '
                     '"nothing"; using "warn"'),
])
def test_autograd_fallback_mode_from_the_environment(env, mode, warning):
    import os
    import subprocess
    import sys
    environ = {k: v for k, v in os.environ.items()
               if k != "TURNOUT_AUTOGRAD_FALLBACK_MODE"}
    if env is not None:
        environ["TURNOUT_AUTOGRAD_FALLBACK_MODE"] = env
    proc = subprocess.run(
        [sys.executable, "-c",
         "import turnout; print(turnout._C._get_autograd_fallback_mode())"],
        env=environ, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == mode
    assert warning in proc.stderr


def test_docstring_examples():
    import doctest
    import turnout.autograd.function
    failures, attempted = doctest.testmod(turnout.autograd.function)
    assert failures == 0 and attempted > 0


def test_autograd_backward_with_gradients():
    def run(lib):
        x = leaf(lib, [1.0, 2.0])
        lib.autograd.backward(x * 3, lib.tensor([1.0, 10.0]))
        return values(x.grad)

    assert run(torch) == run(turnout) == [3.0, 30.0]


def first_line(e):
    return str(e).split(". Saved")[0]


def test_backward_frees_saved_tensors_unless_retain_graph():
    # As torch's: backward without retain_graph frees what the function
    # saved; saved_tensors then raises (from backward or directly), even
    # for a function that saved nothing, and a second backward through it
    # raises torch's error. retain_graph keeps them.
    def run(lib, base):
        ctxs = []

        class Square(base):
            @staticmethod
            def forward(ctx, x, keep):
                ctxs.append(ctx)
                if keep:
                    ctx.save_for_backward(x)
                ctx.k = 2
                return x * x

            @staticmethod
            def backward(ctx, grad):
                saved = ctx.saved_tensors
                x = saved[0] if saved else None
                return (grad * 2 * x if x is not None else grad), None

        x = leaf(lib, [1.0, 3.0])
        out = []
        y = Square.apply(x, True).sum()
        y.backward(retain_graph=True)
        out.append(len(ctxs[0].saved_tensors))
        y.backward()
        out.append(values(x.grad))
        for fn in (lambda: ctxs[0].saved_tensors, lambda: y.backward()):
            with pytest.raises(RuntimeError) as e:
                fn()
            out.append(first_line(e.value))
        out.append(ctxs[0].k)  # other attributes stay
        z = Square.apply(x, False).sum()
        z.backward()
        with pytest.raises(RuntimeError) as e:
            z.backward()
        out.append(first_line(e.value))
        (g,) = lib.autograd.grad(Square.apply(x, True).sum(), [x])
        with pytest.raises(RuntimeError) as e:
            ctxs[-1].saved_tensors  # noqa: B018
        out.append((values(g), first_line(e.value)))
        return out

    r = both(run)
    assert r["turnout"] == r["torch"]
    assert r["torch"][2].startswith("Trying to backward through the graph a "
                                    "second time")


# ---- out= overloads of differentiable operators refuse grad, as torch's ----


def _out_call_cases(lib):
    x = lib.ones(2, 3).requires_grad_()
    plain = lib.ones(2, 3)
    return [
        ("input requires grad", lambda: lib.mul(x, 2, out=lib.empty(0))),
        ("out requires grad",
         lambda: lib.add(plain, plain, out=lib.zeros(2, 3).requires_grad_())),
        ("composite out=", lambda: lib.std(x, 0, out=lib.empty(0))),
        ("composite addmv out=",
         lambda: lib.addmv(lib.zeros(2), x, lib.ones(3), out=lib.empty(0))),
    ]


@pytest.mark.parametrize("case", range(4))
def test_out_call_with_grad_refused_as_torch(case):
    for lib in (torch, turnout):
        what, fn = _out_call_cases(lib)[case]
        with pytest.raises(RuntimeError) as info:
            fn()
        if lib is turnout:
            message = str(info.value)
            assert "out=" in message and "no_grad" in message, message
        with lib.no_grad():  # out of grad mode the call runs
            assert fn().grad_fn is None, what


def test_out_call_of_non_differentiable_operator_runs_as_torch():
    for lib in (torch, turnout):
        x = lib.tensor([0.0, 1.5, 0.0]).requires_grad_()
        out = lib.empty(0, dtype=lib.int64)
        assert lib.nonzero(x, out=out) is out
        assert out.tolist() == [[1]]
        assert lib.argmax(x, 0, out=lib.empty(0, dtype=lib.int64)).item() == 1
