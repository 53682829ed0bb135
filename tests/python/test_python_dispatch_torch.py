"""Python dispatch against torch 1.13 as the oracle: the same handler code run
on torch (``__torch_dispatch__``) and on turnout (``__turnout_dispatch__``),
comparing what the handlers saw and returned -- log lines, object
identities, keyword arguments -- not only the results.

Each case is a function of an ``api`` namespace (torch's or turnout's) that
returns plain data (strings, bools, ints); names that differ only by the
library ("torch.float64" / "turnout.float64") are normalised to "lib".
"""

import contextlib
import gc
from types import SimpleNamespace

import pytest

import turnout
from turnout import _C
from turnout._mode import DispatchMode, enable_reentrant_dispatch

torch = pytest.importorskip("torch")
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402


@contextlib.contextmanager
def _torch_reentrant():
    # torch 1.13's guard is RAII: alive for the block.
    guard = torch._C._RestorePythonTLSSnapshot()
    try:
        yield
    finally:
        del guard


TORCH = SimpleNamespace(
    name="torch", lib=torch, Tensor=torch.Tensor, Mode=TorchDispatchMode,
    handler="__torch_dispatch__", ops=torch.ops, ones=torch.ones,
    float64=torch.float64, C=torch._C, reentrant=_torch_reentrant,
    extra={"__torch_function__": torch._C._disabled_torch_function_impl})
TURNOUT = SimpleNamespace(
    name="turnout", lib=turnout, Tensor=turnout.Tensor, Mode=DispatchMode,
    handler="__turnout_dispatch__", ops=turnout.ops, ones=turnout.ones,
    float64=turnout.float64, C=_C, reentrant=enable_reentrant_dispatch,
    extra={})


def both(case):
    theirs, ours = case(TORCH), case(TURNOUT)
    return theirs, ours


def norm(text):
    return str(text).replace("torch", "lib").replace("turnout", "lib")


def logging_mode(api, log, tag=""):
    """A mode that logs `$2 = add.Tensor($0, $1)`, naming each tensor object
    by its first appearance (a dict keyed by the objects themselves), and
    returns what func returned."""
    names = {}

    def name(v):
        if isinstance(v, api.Tensor):
            if v not in names:      # hashes and compares by identity
                names[v] = f"${len(names)}"
            return names[v]
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(name(e) for e in v) + "]"
        return norm(repr(v))

    def handler(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        shown = [name(a) for a in args]
        shown += [f"{k}={name(v)}" for k, v in kwargs.items()]
        log.append(f"{tag}{name(out)} = {func.__name__}({', '.join(shown)})")
        return out

    mode = type("Logging", (api.Mode,), {api.handler: handler})
    return mode(), names


def plain_subclass(api):
    """A tensor subclass without a handler (torch: no __torch_function__)."""
    return type("Plain", (api.Tensor,), dict(api.extra))


def handler_subclass(api, log):
    """A subclass whose handler logs, then runs the call with super()."""
    def handler(cls, func, types, args=(), kwargs=None):
        log.append((func.__name__, [type(a).__name__ for a in args],
                    kwargs or {}))
        return getattr(super(sub, cls), api.handler)(func, types, args, kwargs)

    sub = type("Sub", (api.Tensor,),
               {api.handler: classmethod(handler), **api.extra})
    return sub


# ---- Identity and the calling convention -------------------------------------


def test_logging_mode_names_tensors_by_first_appearance():
    def case(api):
        log = []
        mode, names = logging_mode(api, log)
        x, y = api.ones(2), api.ones(2)
        aten = api.ops.aten
        with mode:
            z = x + y
            w = z * x
            s = w.sum()
            aten.add.Tensor(x, y, alpha=1)
            aten.add.Tensor(x, y, alpha=2)
            aten.sum.dim_IntList(w, [0], False)
            aten.sum.dim_IntList(w, [0], True)
            x.add_(y)
            d = x.to(api.float64)
        # The objects the handler saw are the caller's, both ways.
        same = [names.get(t) for t in (x, y, z, w, s, d)]
        return log, same
    theirs, ours = both(case)
    assert ours == theirs
    assert theirs[0][:3] == ["$2 = add.Tensor($0, $1)", "$3 = mul.Tensor($2, $0)",
                             "$4 = sum.default($3)"]


def test_handler_sees_the_callers_objects_and_the_caller_gets_the_handlers():
    def case(api):
        seen = []

        def handler(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            seen.append((args, out))
            return out

        mode = type("M", (api.Mode,), {api.handler: handler})
        x = api.ones(2)
        x.note = "mine"
        with mode():
            y = x * 2
            same = x.add_(x)
        (args0, out0), (args1, out1) = seen
        return (args0[0] is x, args0[0].note, out0 is y, args1[0] is x,
                out1 is x, same is x, len(seen))
    theirs, ours = both(case)
    assert ours == theirs == (True, "mine", True, True, True, True, 2)


def test_a_mode_returning_a_subclass_instance_gives_the_caller_that_instance():
    def case(api):
        plain = plain_subclass(api)
        made = []

        def handler(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if func.__name__ == "neg.default":
                out = api.Tensor._make_subclass(plain, out)
                out.tag = "from the mode"
                made.append(out)
            return out

        mode = type("M", (api.Mode,), {api.handler: handler})
        with mode():
            r = -api.ones(2)
        return type(r).__name__, r is made[0], r.tag, r.tolist()
    theirs, ours = both(case)
    assert ours == theirs == ("Plain", True, "from the mode", [-1.0, -1.0])


def test_func_is_an_op_overload_as_torchs():
    def case(api):
        funcs = []

        def handler(self, func, types, args=(), kwargs=None):
            funcs.append(func)
            return func(*args, **(kwargs or {}))

        mode = type("M", (api.Mode,), {api.handler: handler})
        x = api.ones(2)
        with mode():
            x + x
        f = funcs[0]
        return (type(f).__name__, f.__name__, norm(f.__module__),
                f.overloadpacket.__name__, norm(f.overloadpacket.__module__),
                str(f._schema), f is api.ops.aten.add.Tensor,
                f.overloadpacket is api.ops.aten.add)
    theirs, ours = both(case)
    assert ours == theirs
    assert theirs[:3] == ("OpOverload", "add.Tensor", "lib._ops.aten")


def test_super_dispatch_in_a_subclass_handler():
    def case(api):
        log = []
        sub = handler_subclass(api, log)
        s = api.Tensor._make_subclass(sub, api.ones(2))
        r = api.ops.aten.mul.Tensor(s, s)
        t = api.ops.aten.add.Tensor(s, api.ones(2), alpha=3)
        return (log, type(r).__name__, r.tolist(), type(t).__name__, t.tolist(),
                api.C._dispatch_isTensorSubclassLike(s),
                api.C._dispatch_isTensorSubclassLike(r))
    theirs, ours = both(case)
    assert ours == theirs
    assert theirs[0] == [("mul.Tensor", ["Sub", "Sub"], {}),
                         ("add.Tensor", ["Sub", "Tensor"], {"alpha": 3})]


def test_subclass_without_a_handler_of_its_own_dispatches_as_plain():
    def case(api):
        plain = plain_subclass(api)
        p = api.Tensor._make_subclass(plain, api.ones(2))
        meta = api.lib.empty(2, device="meta")
        return (api.C._dispatch_isTensorSubclassLike(p),
                api.C._dispatch_isTensorSubclassLike(api.ones(2)),
                api.C._dispatch_isTensorSubclassLike(meta),
                type(p * 2).__name__)
    theirs, ours = both(case)
    assert ours == theirs == (False, False, True, "Tensor")


def test_nested_modes_see_calls_inner_first():
    def case(api):
        log = []
        outer, _ = logging_mode(api, log, "outer: ")
        inner, _ = logging_mode(api, log, "inner: ")
        x = api.ones(2)
        with outer, inner:
            y = x * x
            y.relu()
        return log
    theirs, ours = both(case)
    assert ours == theirs == [
        "outer: $1 = mul.Tensor($0, $0)", "inner: $1 = mul.Tensor($0, $0)",
        "outer: $2 = relu.default($1)", "inner: $2 = relu.default($1)"]


def test_mode_returning_not_implemented_defers_to_the_subclass_handler():
    def case(api):
        log = []
        sub = handler_subclass(api, log)

        def handler(self, func, types, args=(), kwargs=None):
            log.append(("mode", func.__name__, [t.__name__ for t in types]))
            return NotImplemented

        mode = type("NI", (api.Mode,), {api.handler: handler})
        s = api.Tensor._make_subclass(sub, api.ones(2))
        one = api.ones(1)
        with mode():
            r = api.ops.aten.mul.Tensor(s, s)
            try:
                api.ops.aten.neg.default(one)
                err = None
            except TypeError as e:
                err = norm(e).split(":")[0]
        return log, type(r).__name__, r.tolist(), err
    theirs, ours = both(case)
    assert ours[:3] == theirs[:3]
    assert theirs[0] == [("mode", "mul.Tensor", ["Sub"]),
                         ("mul.Tensor", ["Sub", "Sub"], {}),
                         ("mode", "neg.default", [])]
    # The same error, naming the operator in each library's spelling.
    assert theirs[3].startswith("no implementation found for")
    assert ours[3].startswith("no implementation found for")


def test_reentrant_dispatch_runs_autograd_inside_a_handler():
    def case(api):
        seen = {}
        w = api.ones(2, requires_grad=True)

        def handler(cls, func, types, args=(), kwargs=None):
            if func.__name__ == "neg.default":
                seen["below"] = (w * 2).requires_grad
                with api.reentrant():
                    u = w * 2
                    seen["restored"] = (u.requires_grad, u.is_leaf)
                seen["after"] = (w * 2).requires_grad
            return getattr(super(sub, cls), api.handler)(func, types, args,
                                                         kwargs)

        # A subclass handler: torch 1.13 fails the snapshot under a mode.
        sub = type("Sub", (api.Tensor,),
                   {api.handler: classmethod(handler), **api.extra})
        s = api.Tensor._make_subclass(sub, api.ones(1))
        api.ops.aten.neg.default(s)
        return seen
    theirs, ours = both(case)
    assert ours == theirs == {"below": False, "restored": (True, False),
                              "after": False}


# ---- turnout only: what the oracle cannot show --------------------------------


def test_restore_snapshot_outside_a_handler_is_an_error():
    with pytest.raises(ValueError, match="no call is being handled"):
        with enable_reentrant_dispatch():
            pass


def test_objects_are_freed_with_their_last_reference():
    """Preservation keeps no object longer than its tensor: many calls
    through a mode, a subclass handler and a Python kernel leave no tensor
    objects behind."""
    log = []
    sub = handler_subclass(TURNOUT, log)
    mode, names = logging_mode(TURNOUT, [])

    def live():
        gc.collect()
        return sum(1 for o in gc.get_objects() if isinstance(o, turnout.Tensor))

    def work():
        x = turnout.ones(3)
        s = turnout.Tensor._make_subclass(sub, x)
        with mode:
            y = (x * 2 + x).sum()
        z = s * s
        return y, z

    work()
    names.clear()
    log.clear()
    before = live()
    for _ in range(50):
        work()
        names.clear()
        log.clear()
    assert live() - before == 0


# ---- The Python dispatcher --------------------------------------------------------


def test_python_dispatcher_runs_py_impl_kernels_only_while_enabled():
    def case(api):
        seen = []
        lib = api.lib.library.Library(f"pyd_{api.name}", "DEF")
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x * 2, "CPU")
        op = getattr(api.ops, f"pyd_{api.name}").f.default
        key = api.C.DispatchKey.CompositeImplicitAutograd

        def composite(x):
            seen.append("py_impl")
            return x * 10

        op.py_impl(api.C.DispatchKey.CPU)(composite)
        op.py_impl(key)(composite)
        x = api.ones(1)
        before = op(x).tolist()
        g = api.C._EnablePythonDispatcher()
        inside = op(x).tolist()
        off = api.C._DisablePythonDispatcher()
        disabled = op(x).tolist()
        del off, g
        after = op(x).tolist()
        lib._destroy() if hasattr(lib, "_destroy") else None
        return before, inside, disabled, after, seen
    # torch 1.13 has no autograd fallback: its autograd keys fall through to
    # the py_impl at CPU. With turnout's default (Warn, torch 2.x's), the
    # call of an operator without an autograd kernel resolves to the
    # fallback at AutogradCPU, which goes on below it in C++, as torch 2.x's
    # Python dispatcher does: compare in torch 1.13's mode.
    mode = turnout._C._get_autograd_fallback_mode()
    turnout._C._set_autograd_fallback_mode("nothing")
    try:
        theirs, ours = both(case)
    finally:
        turnout._C._set_autograd_fallback_mode(mode)
    assert ours == theirs == ([2.0], [10.0], [2.0], [2.0], ["py_impl"])


# ---- Autograd objects ------------------------------------------------------------


def test_grad_fn_is_a_node_with_name_and_next_functions():
    def case(api):
        a = api.ones(2, requires_grad=True)
        b = api.ones(2, requires_grad=True)
        y = (a * b).sum()
        fn = y.grad_fn
        (mul, mul_nr), = fn.next_functions
        # torch (and turnout) spell the leaves' node with its C++ namespace.
        edges = [(None if f is None else f.name(), nr)
                 for f, nr in mul.next_functions]
        return (fn.name(), mul.name(), mul_nr, edges, fn is y.grad_fn,
                y.grad_fn is not None and api.ones(1).grad_fn is None,
                repr(fn).startswith("<SumBackward0 object at 0x"))
    theirs, ours = both(case)
    assert ours == theirs == ("SumBackward0", "MulBackward0", 0,
                              [("torch::autograd::AccumulateGrad", 0),
                               ("torch::autograd::AccumulateGrad", 0)],
                              True, True, True)


def test_a_plain_tensor_held_only_by_cpp_keeps_its_object():
    def case(api):
        w = api.ones(2, requires_grad=True)
        g = api.ones(2)
        g.tag = "kept"
        gid = id(g)
        w.grad = g
        del g                      # only the autograd metadata holds it now
        back = w.grad
        return (back.tag, id(back) == gid, w.grad is back)
    theirs, ours = both(case)
    assert ours == theirs == ("kept", True, True)


def test_autograd_grad_returns_gradients_without_touching_dot_grad():
    def case(api):
        x = api.lib.tensor([2.0, 3.0], requires_grad=True)
        w = api.lib.tensor([5.0, 7.0], requires_grad=True)
        unused = api.lib.tensor([1.0], requires_grad=True)
        z = x * w
        y = (z * x).sum()
        gx, gw, gz = api.lib.autograd.grad(y, [x, w, z], retain_graph=True)
        (gy,) = api.lib.autograd.grad([z], x, grad_outputs=[api.ones(2)],
                                      retain_graph=True)
        _, none = api.lib.autograd.grad(y, [x, unused], allow_unused=True,
                                        retain_graph=True)
        try:
            api.lib.autograd.grad(y, [unused], retain_graph=True)
            err = None
        except RuntimeError as e:
            err = str(e)
        # Second derivative: d/dx (d(x^3)/dx) = 6x.
        c = (x * x * x).sum()
        (g1,) = api.lib.autograd.grad(c, x, create_graph=True)
        (g2,) = api.lib.autograd.grad(g1.sum(), x)
        return (gx.tolist(), gw.tolist(), gz.tolist(), gy.tolist(), none,
                err, x.grad, w.grad, g1.tolist(), g2.tolist())
    theirs, ours = both(case)
    assert ours == theirs
    assert theirs[:4] == ([20.0, 42.0], [4.0, 9.0], [2.0, 3.0], [5.0, 7.0])
    assert theirs[8:] == ([12.0, 27.0], [12.0, 18.0])


def test_grad_fn_register_hook_sees_and_replaces_gradients():
    def case(api):
        a = api.lib.tensor([1.0, 2.0], requires_grad=True)
        b = api.lib.tensor([3.0, 4.0], requires_grad=True)
        y = a * b
        seen = []

        def hook(grad_inputs, grad_outputs):
            seen.append(([g.tolist() for g in grad_inputs],
                         [g.tolist() for g in grad_outputs]))
            return (grad_inputs[0] * 10, grad_inputs[1])

        handle = y.grad_fn.register_hook(hook)
        y.sum().backward(retain_graph=True)
        first = (a.grad.tolist(), b.grad.tolist())
        handle.remove()
        a.grad = None
        y.sum().backward()
        return seen, first, a.grad.tolist()
    theirs, ours = both(case)
    assert ours == theirs == (
        [([[3.0, 4.0], [1.0, 2.0]], [[1.0, 1.0]])],
        ([30.0, 40.0], [1.0, 2.0]), [3.0, 4.0])


def test_node_hook_errors_reach_the_caller():
    x = turnout.tensor([1.0], requires_grad=True)
    y = x * 2

    def boom(grad_inputs, grad_outputs):
        raise ValueError("boom in hook")

    h = y.grad_fn.register_hook(boom)
    with pytest.raises(ValueError, match="boom in hook"):
        y.sum().backward()
    h.remove()
    h = y.grad_fn.register_hook(lambda gi, go: 3)
    with pytest.raises(TypeError, match=r"a hook registered on MulBackward0 "
                                        r"returned int; return None or a tuple"):
        y.sum().backward()
    h.remove()
    with pytest.raises(TypeError, match="expected a callable"):
        y.grad_fn.register_hook(42)
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        turnout.autograd.grad(y.sum(), [turnout.tensor([1.0], requires_grad=True)])
    with pytest.raises(ValueError, match="does not require grad"):
        turnout.autograd.grad(y.sum(), [turnout.ones(1)])


def test_a_subclass_of_the_base_class_has_the_tensor_methods():
    def case(api):
        base = api.C._TensorBase if api.name == "torch" else api.C.TensorBase
        sub = type("OnBase", (base,), dict(api.extra))
        b = api.Tensor._make_subclass(sub, api.ones(2))
        return (type(b).__name__, list(b.shape), b.add(api.ones(2)).tolist(),
                b.sum().item(), b.view(2, 1).size(0), b.mul(3).tolist())
    theirs, ours = both(case)
    assert ours == theirs == ("OnBase", [2], [2.0, 2.0], 2.0, 2, [3.0, 3.0])


# ---- Shallow copies: detach(), .data, numpy() ---------------------------------


def test_detach_data_and_numpy_log_as_torchs():
    """torch makes detach()'s result a shallow copy, which under Python
    dispatch the handler makes too: every detach is logged twice (nested
    modes included); `.data` once; numpy() detaches."""
    def case(api):
        log = []
        mode, names = logging_mode(api, log)
        inner, _ = logging_mode(api, log, tag="inner ")
        x = api.ones(2)
        r = api.ones(2).requires_grad_()
        with mode:
            d = x.detach()
            api.ops.aten.detach.default(r)
            data = r.data
            x.numpy()
            with inner:
                x.detach()
        return (log, names.get(d), names.get(data), data.requires_grad,
                data._version, d._version)
    theirs, ours = both(case)
    assert ours == theirs
    assert theirs[0][:2] == ["$1 = detach.default($0)", "$2 = detach.default($1)"]


def test_data_of_a_version_counter_of_its_own_as_torchs():
    def case(api):
        x = api.ones(2).requires_grad_()
        y = x * 2
        d, data = y.detach(), y.data
        data.add_(1)
        after_data = y._version
        d.add_(1)
        return (after_data, y._version, data.requires_grad, data.grad_fn is None,
                data.tolist(), y.tolist())
    theirs, ours = both(case)
    assert ours == theirs == (0, 1, False, True, [4.0, 4.0], [4.0, 4.0])


def test_detach_and_data_of_a_wrapper_subclass_log_as_torchs():
    def case(api):
        log = []

        def handler(cls, func, types, args=(), kwargs=None):
            log.append(func.__name__)
            unwrap = lambda v: v.elem if isinstance(v, sub) else v  # noqa: E731
            out = func(*[unwrap(a) for a in args],
                       **{k: unwrap(v) for k, v in (kwargs or {}).items()})
            return wrap(out) if isinstance(out, api.Tensor) else out

        def wrap(elem):
            w = api.Tensor._make_wrapper_subclass(sub, elem.shape, dtype=elem.dtype)
            w.elem = elem
            return w

        sub = type("W", (api.Tensor,), {api.handler: classmethod(handler),
                                         **api.extra})
        w = wrap(api.ones(2))
        d = w.detach()
        data = w.data
        return log, type(d).__name__, type(data).__name__, d.elem.tolist()
    theirs, ours = both(case)
    assert ours == theirs
    assert theirs[0] == ["detach.default"] * 3


