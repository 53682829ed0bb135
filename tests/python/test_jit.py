"""Tests for bindings/jit.cc and turnout.jit: graphs, run, trace, fork/wait."""

import doctest
import threading

import pytest

import turnout
import turnout.jit as jit
from turnout import DispatchKey, _C
from turnout.library import Library

ADD_GRAPH = """graph(%a : Tensor,
      %b : Tensor):
  %c : int = prim::Constant[value=1]()
  %d : Tensor = aten::add(%a, %b, %c) # model.py:3:4
  %e : Tensor = aten::relu(%d)
  return (%e)
"""


def values(t):
    return t.tolist()


def test_docstring_examples():
    failures, attempted = doctest.testmod(jit, optionflags=doctest.ELLIPSIS)
    assert failures == 0
    assert attempted > 0
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(jit.Graph, "Graph",
                                             globs={"turnout": turnout}):
        runner.run(test)
    assert runner.failures == 0
    assert runner.tries > 0


# ---- Graph

def test_parse_print_round_trip_and_nodes():
    g = jit.Graph.parse(ADD_GRAPH)
    assert str(g) == ADD_GRAPH
    assert str(jit.Graph.parse(str(g))) == ADD_GRAPH
    nodes = g.nodes()
    assert [n.kind() for n in nodes] == ["prim::Constant", "aten::add",
                                         "aten::relu"]
    add = nodes[1]
    assert [v.debug_name() for v in add.inputs()] == ["a", "b", "c"]
    assert [v.type() for v in add.inputs()] == ["Tensor", "Tensor", "int"]
    assert [repr(v) for v in add.outputs()] == ["%d : Tensor"]
    assert str(add) == "%d : Tensor = aten::add(%a, %b, %c) # model.py:3:4"
    assert add.source_location() == "model.py:3:4"
    assert add.schema().startswith("aten::add.Tensor(Tensor self")
    assert nodes[0].schema() is None
    assert add.inputs()[0].node().kind() == "prim::Param"
    assert [repr(v) for v in g.inputs()] == ["%a : Tensor", "%b : Tensor"]
    assert [repr(v) for v in g.outputs()] == ["%e : Tensor"]
    assert str(g.copy()) == ADD_GRAPH


def test_nodes_keep_their_graph_alive():
    node = jit.Graph.parse(ADD_GRAPH).nodes()[2]
    value = node.inputs()[0]
    import gc
    gc.collect()
    assert node.kind() == "aten::relu"
    assert repr(value) == "%d : Tensor"


def test_parse_errors_name_line_and_column():
    with pytest.raises(ValueError, match=r"parse error at 2:"):
        jit.Graph.parse("graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x,, )\n"
                        "  return (%y)\n")
    with pytest.raises(ValueError, match="aten::no_such_op"):
        jit.Graph.parse("graph(%x : Tensor):\n"
                        "  %y : Tensor = aten::no_such_op(%x)\n"
                        "  return (%y)\n")
    g = jit.Graph.parse("graph(%x : Tensor):\n"
                        "  %y : Tensor = aten::no_such_op(%x)\n"
                        "  return (%y)\n", allow_unresolved=True)
    with pytest.raises(ValueError, match="no registered operator resolves"):
        jit.run(g, turnout.ones(1))


# ---- run

def test_run_one_and_several_outputs():
    g = jit.Graph.parse(ADD_GRAPH)
    a, b = turnout.tensor([1.0, -5.0]), turnout.tensor([2.0, 3.0])
    assert values(jit.run(g, a, b)) == [3.0, 0.0]
    code = jit.Code(g)
    assert values(code(a, b)) == [3.0, 0.0]
    assert "Call aten::add.Tensor" in code.dump()
    two = jit.Graph.parse("graph(%x : Tensor, %n : int):\n"
                          "  %y : Tensor = aten::mul(%x, %n)\n"
                          "  return (%y, %n)\n")
    y, n = jit.run(two, turnout.tensor([1, 2]), 4)
    assert values(y) == [4, 8] and n == 4


def test_run_errors():
    g = jit.Graph.parse(ADD_GRAPH)
    with pytest.raises(ValueError, match="takes 2 inputs but got 1"):
        jit.run(g, turnout.ones(2))
    with pytest.raises(TypeError, match=r"input 1 \(%b : Tensor\) must be "
                                        r"Tensor, but got str"):
        jit.run(g, turnout.ones(2), "no")
    with pytest.raises(TypeError, match="expected graph to be a "
                                        "turnout.jit.Graph, got str"):
        jit.run("graph", 1)
    with pytest.raises(ValueError, match="aten::add.Tensor failed at "
                                         "model.py:3:4"):
        jit.run(g, turnout.ones(2), turnout.ones(3))


# ---- trace

CASES = {
    "elementwise": lambda x, y: ((x * y - x).relu(),),
    "scalars": lambda x, y: ((x + 1.5) / 4, y * 2, x - 3),
    "views": lambda x, y: (x.view(3, 2).t() + y.sum(), x.transpose(0, 1)),
    "factories": lambda x, y: (x + turnout.zeros(2, 3), y * turnout.ones(2, 3),
                               turnout.arange(6)),
    "ops namespace": lambda x, y: (turnout.ops.aten.cat([x, y], 1),
                                   turnout.ops.aten.softmax(x, 1)),
    "single tensor": lambda x, y: x.mm(y.t()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_trace_agrees_with_eager(name):
    fn = CASES[name]
    x = turnout.arange(6.0).view(2, 3)
    y = turnout.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    g = jit.trace(fn, (x, y))
    assert str(jit.Graph.parse(str(g))) == str(g)
    for args in [(x, y), (y * 3, x - 2)]:
        expected = fn(*args)
        got = jit.run(g, *args)
        if not isinstance(expected, tuple):
            expected = (expected,)
        if len(g.outputs()) == 1:  # run gives the one output itself
            got = (got,)
        assert len(got) == len(expected)
        for e, r in zip(expected, got):
            assert r.dtype == e.dtype
            assert values(r) == values(e)


def test_trace_names_inputs_after_parameters():
    def f(left, right):
        return left * right
    g = jit.trace(f, (turnout.ones(2), turnout.ones(2)))
    assert [v.debug_name() for v in g.inputs()] == ["left", "right"]
    g = jit.trace(f, [turnout.ones(2), turnout.ones(2)], input_names=["p", "q"])
    assert [v.debug_name() for v in g.inputs()] == ["p", "q"]
    single = jit.trace(lambda t: t.neg(), turnout.ones(2))
    assert [n.kind() for n in single.nodes()] == ["aten::neg"]


def test_trace_records_python_kernels_like_any_other():
    lib = Library("jit_test_py", "DEF")
    try:
        lib.define("scale(Tensor x, float s) -> Tensor")
        calls = []

        def scale(x, s):
            calls.append(s)
            return x * s  # not recorded: only the outermost call is
        lib.impl("scale", scale, "CPU")

        def f(x):
            return turnout.ops.jit_test_py.scale(x, 2.5).relu()
        x = turnout.tensor([1.0, -2.0])
        g = jit.trace(f, (x,))
        assert [n.kind() for n in g.nodes()] == [
            "prim::Constant", "jit_test_py::scale", "aten::relu"]
        assert values(jit.run(g, turnout.tensor([4.0, 3.0]))) == [10.0, 7.5]
        assert calls == [2.5, 2.5]
    finally:
        lib._destroy()


def test_trace_captured_tensor_becomes_a_constant():
    bias = turnout.tensor([10.0, 20.0])
    g = jit.trace(lambda x: x + bias, turnout.ones(2))
    assert "prim::Constant[value=<Tensor>]()" in str(g)
    assert values(jit.run(g, turnout.tensor([1.0, 2.0]))) == [11.0, 22.0]


def test_trace_errors_leave_the_thread_as_it_was():
    include = _C._dispatch_tls_local_include_set()
    exclude = _C._dispatch_tls_local_exclude_set()
    with pytest.raises(TypeError, match="example input 1 must be a Tensor, "
                                        "got int"):
        jit.trace(lambda x, y: x, (turnout.ones(1), 3))
    with pytest.raises(TypeError, match="expected fn to be callable"):
        jit.trace(3, (turnout.ones(1),))

    class Boom(Exception):
        pass

    def raises(x):
        x.neg()
        raise Boom("from the traced function")
    with pytest.raises(Boom, match="from the traced function"):
        jit.trace(raises, (turnout.ones(1),))
    with pytest.raises(TypeError, match="the traced function returned a "
                                        "dict"):
        jit.trace(lambda x: {"x": x}, (turnout.ones(1),))
    t = turnout.ones(1)
    with pytest.raises(ValueError, match="are the same tensor"):
        jit.trace(lambda a, b: a + b, (t, t))
    with pytest.raises(ValueError, match="already tracing"):
        jit.trace(lambda x: jit.trace(lambda y: y, (x,)), (turnout.ones(1),))
    assert not _C._jit.is_tracing()
    assert _C._dispatch_tls_local_include_set() == include
    assert _C._dispatch_tls_local_exclude_set() == exclude


# ---- fork / wait / Future

def test_fork_wait_value_done():
    x = turnout.tensor([1, 2, 3])
    fut = jit.fork(lambda t, k: t * k, x, 3)
    assert values(jit.wait(fut)) == [3, 6, 9]
    assert fut.done() and not fut.has_error()
    assert values(fut.value()) == [3, 6, 9]


def test_errors_surface_at_wait_unchanged():
    class MyError(Exception):
        pass

    def fails():
        raise MyError("raised in forked work")
    fut = jit.fork(fails)
    with pytest.raises(MyError, match="raised in forked work") as info:
        jit.wait(fut)
    assert "fails" in "".join(str(t.name) for t in info.traceback)
    assert fut.has_error()
    with pytest.raises(MyError):
        fut.value()
    kernel_error = jit.fork(lambda: turnout.ones(2) + turnout.ones(3))
    with pytest.raises(ValueError, match="must match the size"):
        kernel_error.wait()
    bad_result = jit.fork(lambda: object())
    with pytest.raises(TypeError, match="the forked function returned a "
                                        "object"):
        bad_result.wait()


def test_future_errors():
    f = jit.Future()
    with pytest.raises(ValueError, match="not complete yet"):
        f.value()
    f.set_result(5)
    assert f.wait() == 5
    with pytest.raises(ValueError, match="already complete"):
        f.set_result(6)
    with pytest.raises(TypeError, match="expected a turnout.jit.Future"):
        jit.wait(3)
    with pytest.raises(TypeError, match="element 1 is a int"):
        jit.collect_all([f, 3])
    with pytest.raises(TypeError, match="expected fn to be callable"):
        jit.fork(None)


def test_then_and_collect_all():
    f = jit.Future()
    g = f.then(lambda done: done.value() + 1).then(lambda d: d.value() * 10)
    assert not g.done()
    f.set_result(4)
    assert g.wait() == 50
    failing = jit.fork(lambda: 1 // 0).then(lambda d: d.value() + 1)
    with pytest.raises(ZeroDivisionError):
        failing.wait()
    futures = [jit.fork(lambda i=i: turnout.tensor([i]) * 2) for i in range(6)]
    all_values = jit.collect_all(futures).wait()
    assert [values(v) for v in all_values] == [[2 * i] for i in range(6)]
    mixed = [jit.fork(lambda: 1), jit.fork(lambda: [][0])]
    with pytest.raises(IndexError):
        jit.collect_all(mixed).wait()
    assert jit.collect_all([]).wait() == []


def test_fork_carries_the_dispatch_state():
    key = DispatchKey.AutogradCPU
    outside = jit.fork(lambda: _C._dispatch_tls_is_dispatch_key_excluded(key))
    assert outside.wait() is False
    with _C._AutoDispatchBelowAutograd():
        inside = jit.fork(
            lambda: _C._dispatch_tls_is_dispatch_key_excluded(key))
        assert inside.wait() is True
    after = jit.fork(lambda: _C._dispatch_tls_is_dispatch_key_excluded(key))
    assert after.wait() is False
    with turnout.no_grad():
        assert jit.fork(turnout.is_grad_enabled).wait() is False
    assert jit.fork(turnout.is_grad_enabled).wait() is True


def test_forked_graph_from_python():
    g = jit.Graph.parse("""graph(%x : Tensor):
  %f : Future(Tensor) = prim::fork(%x)
    block0(%a : Tensor):
      %b : Tensor = aten::neg(%a)
      -> (%b)
  %r : Tensor = aten::wait(%f)
  return (%r)
""")
    assert values(jit.run(g, turnout.tensor([1.0, -2.0]))) == [-1.0, 2.0]
    assert "Fork" in jit.Code(g).dump()


def test_many_forks_from_many_threads():
    def nested(depth):
        if depth == 0:
            return 1
        children = [jit.fork(nested, depth - 1) for _ in range(3)]
        return sum(jit.wait(c) for c in children)

    results = []

    def worker():
        results.append(jit.fork(nested, 3).wait())
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [27] * 4
    assert _C._jit.get_num_interop_threads() >= 1


_RAISING_FORK_GRAPH = """graph(%x : Tensor):
  %f : Future(Tensor) = prim::fork(%x)
    block0(%a : Tensor):
      %b : Tensor = jit_test_raise::boom(%a)
      -> (%b)
  %r : Tensor = aten::wait(%f)
  %s : Tensor = aten::wait(%f)
  return (%r, %s)
"""


def test_python_kernel_raising_in_a_forked_graph_raises_at_every_run():
    class KernelError(Exception):
        pass

    lib = Library("jit_test_raise", "DEF")
    try:
        lib.define("boom(Tensor x) -> Tensor")

        def boom(x):
            raise KernelError(f"boom got {x.tolist()}")
        lib.impl("boom", boom, "CPU")
        g = jit.Graph.parse(_RAISING_FORK_GRAPH)
        code = jit.Code(g)
        for run in (lambda x: jit.run(g, x), code):
            for _ in range(3):
                with pytest.raises(KernelError,
                                   match=r"^boom got \[1.0, 2.0\]$") as info:
                    run(turnout.tensor([1.0, 2.0]))
                # The kernel's own frame is still in the traceback.
                assert "boom" in [e.name for e in info.traceback]
    finally:
        lib._destroy()


def test_forked_graph_errors_alive_at_interpreter_shutdown_do_not_crash():
    # The failed future (and the error it holds) may be dropped last by an
    # inter-op pool thread, while the interpreter exits: that must not end
    # the process with an abort.
    import os
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent('''
        import turnout
        from turnout import jit
        from turnout.library import Library
        lib = Library("jit_test_raise", "DEF")
        lib.define("boom(Tensor x) -> Tensor")
        def boom(x):
            raise KeyError("boom")
        lib.impl("boom", boom, "CPU")
        g = jit.Graph.parse(GRAPH)
        for _ in range(10):
            try:
                jit.run(g, turnout.ones(2))
            except KeyError:
                pass
        print("done")
    ''').replace("GRAPH", repr(_RAISING_FORK_GRAPH))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    for _ in range(5):
        proc = subprocess.run([sys.executable, "-c", script],
                              capture_output=True, text=True, env=env,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == "done"


def test_graphs_run_on_a_daemon_thread_at_interpreter_shutdown_do_not_abort():
    # run() and Future.wait() release the GIL; a daemon thread still inside
    # them when the interpreter exits must not abort the process as it asks
    # for the GIL back.
    import os
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent('''
        import threading, turnout
        from turnout import jit
        body = "".join(f"  %y{i + 1} : Tensor = aten::neg(%y{i})\\n"
                       for i in range(200))
        g = jit.Graph.parse("graph(%y0 : Tensor):\\n" + body +
                            "  return (%y200)\\n")
        x = turnout.ones(1000)
        started = threading.Event()
        def loop(call):
            # Nearly all its time in C++, without the GIL.
            while True:
                started.set()
                call()
        threading.Thread(target=loop, args=(lambda: jit.run(g, x),),
                         daemon=True).start()
        threading.Thread(target=loop,
                         args=(lambda: jit.fork(jit.run, g, x).wait(),),
                         daemon=True).start()
        started.wait()
        print("done")
    ''')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    for _ in range(5):
        proc = subprocess.run([sys.executable, "-c", script],
                              capture_output=True, text=True, env=env,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == "done"
