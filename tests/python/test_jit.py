"""Tests for bindings/jit.cc and turnout.jit: graphs, run, GraphExecutor,
passes, trace, fork/wait."""

import doctest
import threading

import pytest

import turnout
import turnout.jit as jit
from turnout import DispatchKey, _C
from turnout.library import Library
from script_runner import run_script

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
    for cls in (jit.Graph, jit.GraphExecutor, jit.CompilationUnit):
        for test in doctest.DocTestFinder().find(
                cls, cls.__name__, globs={"turnout": turnout}):
            runner.run(test)
    assert runner.failures == 0
    assert runner.tries > 0
    failures, attempted = doctest.testmod(jit.passes,
                                          optionflags=doctest.ELLIPSIS)
    assert failures == 0
    assert attempted >= 8


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
    assert "CallUnboxed aten::add.Tensor" in code.dump()
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


# ---- GraphExecutor

CHAIN_GRAPH = """graph(%x : Tensor,
      %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %a : Tensor = aten::add(%x, %y, %one)
  %b : Tensor = aten::mul(%a, %one)
  %c : Tensor = aten::sub(%b, %zero, %one)
  %d : Tensor = aten::relu(%c)
  %e : Tensor = aten::relu(%c)
  %f : Tensor = aten::div(%d, %e)
  %n : int = aten::dim(%f)
  return (%f, %d, %n)
"""


def test_executor_agrees_with_eager_and_the_interpreter():
    g = jit.Graph.parse(CHAIN_GRAPH)
    ex = jit.GraphExecutor(g)
    plain = jit.GraphExecutor(g, optimize=False)
    inputs = [
        (turnout.tensor([1.0, 5.0]), turnout.tensor([2.0, 3.0])),
        (turnout.tensor([[1, 2], [3, 4]]), turnout.tensor([5, 6])),
        (turnout.tensor([0.5]), turnout.tensor(2.0)),
    ]
    for x, y in inputs:
        d = (((x + y) * 1) - 0).relu()
        eager = (d / d, d, d.dim())
        for got in (ex(x, y), plain(x, y), jit.run(g, x, y)):
            assert isinstance(got, tuple) and len(got) == 3
            assert values(got[0]) == values(eager[0])
            assert got[0].dtype == eager[0].dtype
            assert values(got[1]) == values(eager[1])
            assert got[2] == eager[2]
    assert len(ex.get_debug_state().plans) == 3


def test_executor_single_output_and_traced_graphs():
    for name in sorted(CASES):
        fn = CASES[name]
        x = turnout.arange(6.0).view(2, 3)
        y = turnout.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
        ex = jit.GraphExecutor(jit.trace(fn, (x, y)))
        for args in [(x, y), (y * 3, x - 2), (x, y)]:
            expected = fn(*args)
            got = ex(*args)
            if not isinstance(expected, tuple):
                expected = (expected,)
            if len(expected) == 1:
                assert not isinstance(got, tuple)  # the one output itself
                got = (got,)
            assert len(got) == len(expected), name
            for e, r in zip(expected, got):
                assert r.dtype == e.dtype, name
                assert values(r) == values(e), name
        assert len(ex.get_debug_state().plans) == 1, name


def test_executor_debug_state_and_last_graph():
    g = jit.Graph.parse(CHAIN_GRAPH)
    ex = jit.GraphExecutor(g)
    assert ex.last_executed_optimized_graph() is None
    state = ex.get_debug_state()
    assert state.plans == [] and str(state) == "GraphExecutor: 0 plans\n"
    assert str(state.graph) == CHAIN_GRAPH
    ex(turnout.tensor([1.0]), turnout.tensor([2.0]))
    plan, = ex.get_debug_state().plans
    assert plan.spec == ("(Float(*, requires_grad=0, device=cpu), "
                         "Float(*, requires_grad=0, device=cpu)) optimized")
    assert plan.optimized
    t = "Float(*, requires_grad=0, device=cpu)"
    expected = (f"graph(%x : {t},\n"
                f"      %y : {t}):\n"
                f"  %one : int = prim::Constant[value=1]()\n"
                f"  %a : {t} = aten::add(%x, %y, %one)\n"
                f"  %d : {t} = aten::relu(%a)\n"
                f"  %f : {t} = aten::div(%d, %d)\n"
                f"  return (%f, %d, %one)\n")
    assert str(plan.graph) == expected
    assert str(ex.last_executed_optimized_graph()) == expected
    assert "CallUnboxed aten::div.Tensor" in plan.code
    assert str(ex.get_debug_state()) == (
        "GraphExecutor: 1 plan\nplan 0: " + plan.spec + "\n" + expected)
    # The executor copied the graph; copies come back, changing them
    # changes nothing in the executor.
    jit.passes.eliminate_dead_code(plan.graph)
    assert str(ex.graph) == CHAIN_GRAPH and str(g) == CHAIN_GRAPH
    ex(turnout.tensor([1]), turnout.tensor([2]))
    assert "Long(*" in str(ex.last_executed_optimized_graph())
    assert len(ex.get_debug_state().plans) == 2
    assert "<ExecutionPlanState (Long(*" in repr(
        ex.get_debug_state().plans[1])


def test_optimisation_off_flags():
    g = jit.Graph.parse(CHAIN_GRAPH)
    plain = jit.GraphExecutor(g, optimize=False)
    assert not plain.optimize and not plain.specialize_sizes
    plain(turnout.ones(1), turnout.ones(1))
    plan, = plain.get_debug_state().plans
    assert not plan.optimized and plan.spec.endswith(") unoptimized")
    assert "aten::sub" in str(plan.graph)
    ex = jit.GraphExecutor(g)
    assert jit.get_graph_executor_optimize()
    with jit.optimized_execution(False):
        assert not jit.get_graph_executor_optimize()
        ex(turnout.ones(1), turnout.ones(1))
        assert "aten::sub" in str(ex.last_executed_optimized_graph())
    assert jit.get_graph_executor_optimize()
    ex(turnout.ones(1), turnout.ones(1))
    assert "aten::sub" not in str(ex.last_executed_optimized_graph())
    assert [p.optimized for p in ex.get_debug_state().plans] == [False, True]
    with pytest.raises(KeyError):
        with jit.optimized_execution(False):
            raise KeyError("restored on the way out")
    assert jit.get_graph_executor_optimize()
    jit.set_graph_executor_optimize(False)
    try:
        assert not jit.get_graph_executor_optimize()
    finally:
        jit.set_graph_executor_optimize(True)
    sized = jit.GraphExecutor(g, specialize_sizes=True)
    sized(turnout.ones(2), turnout.ones(2))
    sized(turnout.ones(3), turnout.ones(3))
    assert [p.spec.split(",")[0] for p in sized.get_debug_state().plans] == [
        "(Float(2", "(Float(3"]


def test_executor_errors():
    g = jit.Graph.parse(ADD_GRAPH)
    ex = jit.GraphExecutor(g)
    with pytest.raises(TypeError, match="GraphExecutor\\(graph\\): expected "
                                        "graph to be a turnout.jit.Graph, "
                                        "got str"):
        jit.GraphExecutor(ADD_GRAPH)
    with pytest.raises(ValueError, match=r"GraphExecutor\(\): the graph takes "
                                         r"2 inputs but got 1"):
        ex(turnout.ones(2))
    with pytest.raises(TypeError, match=r"GraphExecutor\(\): input 1 \(%b : "
                                        r"Tensor\) must be Tensor, but got "
                                        r"str"):
        ex(turnout.ones(2), "no")
    with pytest.raises(ValueError, match="aten::add.Tensor failed at "
                                         "model.py:3:4"):
        ex(turnout.ones(2), turnout.ones(3))
    with pytest.raises(TypeError, match="pass the graph's inputs "
                                        "positionally"):
        ex(turnout.ones(2), b=turnout.ones(2))
    with pytest.raises(TypeError, match="not initialised"):
        jit.GraphExecutor.__new__(jit.GraphExecutor)(turnout.ones(2))
    with pytest.raises(TypeError):
        type("Sub", (jit.GraphExecutor,), {})  # final: __call__ is direct
    # The failed calls left it usable.
    assert values(ex(turnout.ones(2), turnout.ones(2))) == [2.0, 2.0]
    unresolved = jit.Graph.parse("graph(%x : Tensor):\n"
                                 "  %y : Tensor = aten::no_such_op(%x)\n"
                                 "  return (%y)\n", allow_unresolved=True)
    bad = jit.GraphExecutor(unresolved)
    with pytest.raises(ValueError, match="no registered operator resolves"):
        bad(turnout.ones(1))
    assert bad.get_debug_state().plans == []  # a failed plan is not kept


def test_executor_from_many_threads():
    g = jit.Graph.parse(CHAIN_GRAPH)
    ex = jit.GraphExecutor(g)
    errors = []

    def worker(k):
        try:
            for i in range(50):
                x = turnout.tensor([float(k + i + 1)])
                f, d, n = ex(x, x)
                assert values(d) == [2.0 * (k + i + 1)] and n == 1
                assert values(f) == [1.0]
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(ex.get_debug_state().plans) == 1


def test_executor_called_from_a_kernel_the_graph_runs():
    # A Python kernel that itself calls an executor: the nested call must
    # not disturb the outer call's stack.
    inner = jit.GraphExecutor(jit.Graph.parse(
        "graph(%x : Tensor, %y : Tensor):\n"
        "  %z : Tensor = aten::mul(%x, %y)\n"
        "  return (%z)\n"))
    lib = Library("jit_test_nested", "DEF")
    try:
        lib.define("square(Tensor x) -> Tensor")
        lib.impl("square", lambda x: inner(x, x), "CPU")
        outer = jit.GraphExecutor(jit.Graph.parse(
            "graph(%a : Tensor, %b : Tensor, %k : int):\n"
            "  %s : Tensor = jit_test_nested::square(%a)\n"
            "  %r : Tensor = aten::add(%s, %b, %k)\n"
            "  return (%r, %k)\n"))
        r, k = outer(turnout.tensor([3.0]), turnout.tensor([1.0]), 2)
        assert values(r) == [11.0] and k == 2
    finally:
        lib._destroy()


# ---- passes

PASS_CASES = {
    "eliminate_dead_code": ("""graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::add_(%x, %x, %one)
  %b : Tensor = aten::mul(%x, %x)
  %c : Tensor = aten::neg(%b)
  %r : Tensor = aten::empty_like(%x, %none, %none, %none, %none, %none)
  return (%x)
""", """graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::add_(%x, %x, %one)
  %r : Tensor = aten::empty_like(%x, %none, %none, %none, %none, %none)
  return (%x)
"""),
    "propagate_constants": ("""graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %a : int = prim::Constant[value=2]()
  %b : int = prim::Constant[value=3]()
  %c : int = aten::mul(%a, %b)
  %t : Tensor = aten::empty_like(%x, %none, %none, %none, %none, %none)
  %y : Tensor = aten::mul(%t, %c)
  return (%y)
""", """graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %a : int = prim::Constant[value=2]()
  %b : int = prim::Constant[value=3]()
  %7 : int = prim::Constant[value=6]()
  %t : Tensor = aten::empty_like(%x, %none, %none, %none, %none, %none)
  %y : Tensor = aten::mul(%t, %7)
  return (%y)
"""),
    "eliminate_common_subexpressions": ("""graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %a : Tensor = aten::relu(%x)
  %b : Tensor = aten::relu(%x)
  %r1 : Tensor = aten::empty_like(%x, %none, %none, %none, %none, %none)
  %r2 : Tensor = aten::empty_like(%x, %none, %none, %none, %none, %none)
  %c : Tensor = aten::mul(%a, %b)
  return (%c, %r1, %r2)
""", """graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %a : Tensor = aten::relu(%x)
  %r1 : Tensor = aten::empty_like(%x, %none, %none, %none, %none, %none)
  %r2 : Tensor = aten::empty_like(%x, %none, %none, %none, %none, %none)
  %c : Tensor = aten::mul(%a, %a)
  return (%c, %r1, %r2)
"""),
    "peephole_optimize": ("""graph(%x : Float(2, 3)):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %p : Tensor = aten::add(%x, %zero, %one)
  %m : Tensor = aten::mul(%p, %one)
  %a : Tensor = aten::t(%m)
  %b : Tensor = aten::t(%a)
  return (%b)
""", """graph(%x : Float(2, 3)):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  return (%x)
"""),
    "inline_constant_branches": ("""graph(%x : Tensor):
  %c : bool = prim::Constant[value=1]()
  %r : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::relu(%x)
      -> (%a)
    block1():
      %b : Tensor = aten::neg(%x)
      -> (%b)
  return (%r)
""", """graph(%x : Tensor):
  %c : bool = prim::Constant[value=1]()
  %a : Tensor = aten::relu(%x)
  return (%a)
"""),
    "propagate_shapes": ("""graph(%x : Float(2, 3, device=cpu),
      %y : Long(3, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %z : Tensor = aten::add(%x, %y, %one)
  %t : Tensor = aten::t(%z)
  return (%t)
""", """graph(%x : Float(2, 3, device=cpu),
      %y : Long(3, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %z : Float(2, 3, strides=[3, 1], device=cpu) = aten::add(%x, %y, %one)
  %t : Float(3, 2, strides=[1, 3], device=cpu) = aten::t(%z)
  return (%t)
"""),
    "erase_shape_information": ("""graph(%x : Float(2, 3)):
  %c : Long(requires_grad=0, device=cpu) = prim::Constant[value={7}]()
  %y : Float(2, 3) = aten::neg(%x)
  %z : Float(2, 3) = aten::mul(%y, %c)
  return (%z)
""", """graph(%x : Float(2, 3)):
  %c : Long(requires_grad=0, device=cpu) = prim::Constant[value={7}]()
  %y : Tensor = aten::neg(%x)
  %z : Tensor = aten::mul(%y, %c)
  return (%z)
"""),
}


@pytest.mark.parametrize("name", sorted(PASS_CASES))
def test_pass_before_after(name):
    before, after = PASS_CASES[name]
    g = jit.Graph.parse(before)
    assert str(g) == before
    changed = getattr(jit.passes, name)(g)
    assert str(g) == after
    assert changed == (after != before)
    g.lint()
    assert getattr(jit.passes, name)(g) is False or name in (
        "propagate_constants",)


def test_passes_leave_graphs_without_work_unchanged():
    for name in sorted(PASS_CASES):
        g = jit.Graph.parse(ADD_GRAPH)
        if name == "propagate_shapes":
            continue  # plain Tensor inputs: nothing to propagate from
        assert getattr(jit.passes, name)(g) is False, name
        assert str(g) == ADD_GRAPH, name


def test_pass_errors_and_stale_nodes():
    for name in sorted(PASS_CASES) + ["optimize_graph"]:
        with pytest.raises(TypeError, match=rf"{name}\(graph\): expected "
                                            r"graph to be a "
                                            r"turnout.jit.Graph, got str"):
            getattr(jit.passes, name)("graph(%x : Tensor)")
    g = jit.Graph.parse(PASS_CASES["eliminate_dead_code"][0])
    mul = g.nodes()[3]
    kept = g.nodes()[2]
    assert mul.kind() == "aten::mul" and kept.kind() == "aten::add_"
    value = mul.outputs()[0]
    assert jit.passes.eliminate_dead_code(g)
    with pytest.raises(ValueError, match="this Node was taken from a graph "
                                         "that a pass has changed since"):
        mul.kind()
    with pytest.raises(ValueError, match="take the Node again"):
        kept.inputs()
    with pytest.raises(ValueError, match="this Value was taken from a graph"):
        value.debug_name()
    assert [n.kind() for n in g.nodes()] == [
        "prim::Constant", "prim::Constant", "aten::add_", "aten::empty_like"]
    # A pass that frees nothing leaves wrappers valid.
    node = g.nodes()[2]
    assert not jit.passes.eliminate_common_subexpressions(g)
    assert node.kind() == "aten::add_"


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
    with pytest.raises(TypeError, match="output 0 of the traced function: "
                                        "a Dict is not recorded by trace"):
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
    combined = jit.collect_all(futures)
    done = combined.wait()
    assert done == futures and all(isinstance(f, jit.Future) for f in done)
    assert all(f.done() for f in done)
    assert [values(f.value()) for f in done] == [[2 * i] for i in range(6)]
    assert combined.value() == futures
    # then() on the combined future sees the list too.
    total = combined.then(lambda c: sum(values(f.wait())[0]
                                        for f in c.value()))
    assert total.wait() == 30
    # A failure fails it at once, without waiting for the others.
    never = jit.Future()
    mixed = [never, jit.fork(lambda: [][0])]
    with pytest.raises(IndexError):
        jit.collect_all(mixed).wait()
    assert not never.done()
    assert jit.collect_all([]).wait() == []
    pending = jit.Future()
    waiting = jit.collect_all([pending])
    with pytest.raises(ValueError, match="not complete yet"):
        waiting.value()
    pending.set_result("x")
    assert waiting.value()[0].value() == "x"


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
    script = ('''
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
    run_script(script, times=5)


def test_graphs_run_on_a_daemon_thread_at_interpreter_shutdown_do_not_abort():
    # run() and Future.wait() release the GIL; a daemon thread still inside
    # them when the interpreter exits must not abort the process as it asks
    # for the GIL back.
    script = ('''
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
    run_script(script, times=5)


INNER = """graph(%x : Tensor):
  %y : Tensor = aten::neg(%x) # inner.py:2:11
  return (%y)
"""

OUTER = """graph(%x.1 : Tensor):
  %1 : Function = prim::Constant[name="inner"]()
  %3 : Tensor = prim::CallFunction(%1, %x.1) # outer.py:7:10
  return (%3)
"""


def test_compilation_unit_defines_runs_and_inlines():
    cu = jit.CompilationUnit()
    outer = cu.define("outer", OUTER)  # before its callee: looked up later
    assert str(outer) == OUTER
    cu.define("inner", INNER)
    assert cu.function_names() == ["inner", "outer"]
    x = turnout.tensor([1.0, -2.0])
    assert values(cu.run("outer", x)) == [-1.0, 2.0]
    assert values(jit.run(outer, x)) == [-1.0, 2.0]
    assert values(jit.GraphExecutor(outer)(x)) == [-1.0, 2.0]
    g = cu.graph("outer")
    assert jit.passes.inline_calls(g)
    assert [n.kind() for n in g.nodes()] == ["aten::neg"]
    assert values(jit.run(g, x)) == [-1.0, 2.0]
    assert cu.graph("missing") is None
    parsed = jit.Graph.parse(OUTER, compilation_unit=cu)
    assert values(jit.run(parsed, x)) == [-1.0, 2.0]
    defined = cu.define_graph("again", parsed)
    assert values(cu.run("again", x)) == [-1.0, 2.0]
    assert str(defined) == OUTER


def test_compilation_unit_errors():
    cu = jit.CompilationUnit()
    outer = cu.define("outer", OUTER)
    with pytest.raises(ValueError, match="function 'inner' is not defined in "
                       "the graph's CompilationUnit"):
        jit.run(outer, turnout.tensor([1.0]))
    with pytest.raises(ValueError, match="at outer.py:7:10"):
        jit.passes.inline_calls(outer)
    with pytest.raises(ValueError, match="function 'outer' is already "
                       "defined"):
        cu.define("outer", INNER)
    with pytest.raises(ValueError, match="no function named 'nope'"):
        cu.run("nope")
    with pytest.raises(ValueError, match="has no CompilationUnit"):
        jit.run(jit.Graph.parse(OUTER), turnout.tensor([1.0]))
    with pytest.raises(TypeError, match="inline_calls"):
        jit.passes.inline_calls("graph")


def test_builtin_list_mutation_stays_in_the_graph_as_torchs():
    g = jit.Graph.parse("""graph(%x.1 : int[]):
  %2 : int = prim::Constant[value=3]()
  %3 : int[] = aten::append(%x.1, %2)
  %4 : int = prim::max(%x.1)
  return (%4)
""")
    xs = [1, 5]
    assert jit.run(g, xs) == 5
    # As torch 1.13's scripted functions: a Python list is converted, so the
    # graph's appends (seen by every alias inside the graph) do not reach it.
    assert xs == [1, 5]


# ---- lower_graph: a module's graph without the module -----------------------

_MODULE_GRAPH = '''graph(%self : __torch__.M,
      %x : Tensor):
  %l : __torch__.Lin = prim::GetAttr[name="l"](%self)
  %w : Tensor = prim::GetAttr[name="weight"](%l)
  %training : bool = prim::GetAttr[name="training"](%self)
  %y : Tensor = prim::If(%training)
    block0():
      %l2 : __torch__.Lin = prim::GetAttr[name="l"](%self)
      %w2 : Tensor = prim::GetAttr[name="weight"](%l2)
      %b : Tensor? = prim::GetAttr[name="bias"](%l2)
      %a : Tensor = aten::mul(%x, %w2)
      -> (%a)
    block1():
      %k : int = prim::GetAttr[name="k"](%self)
      %c : Tensor = aten::mul(%x, %k)
      -> (%c)
  %z : Tensor = aten::mul(%y, %w)
  %s : Tensor = prim::GetAttr[name="scale"](%self)
  %r : Tensor = aten::add(%z, %s, %k0)
  return (%r)
'''


class _Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def _module(**overrides):
    attrs = dict(training=False, k=3, scale=turnout.ones([2]),
                 l=_Obj(weight=turnout.ones([2]) * 2.0, bias=None))
    attrs.update(overrides)
    return _Obj(**attrs)


def _module_graph():
    return jit.Graph.parse(_MODULE_GRAPH.replace(
        "  %r : Tensor", "  %k0 : int = prim::Constant[value=1]()\n  %r : Tensor"))


def test_lower_graph_expected_output():
    g = _module_graph()
    before = str(g)
    m = _module()
    lowered, values = jit.passes.lower_graph(g, m)
    assert str(g) == before  # the pass returns a new graph
    assert values[0] is m.l.weight and values[1] is m.scale and len(values) == 2
    assert str(lowered) == '''graph(%x : Tensor,
      %l_weight : Tensor,
      %scale : Tensor):
  %training : bool = prim::Constant[value=0]()
  %y : Tensor = prim::If(%training)
    block0():
      %b : NoneType = prim::Constant()
      %a : Tensor = aten::mul(%x, %l_weight)
      -> (%a)
    block1():
      %k : int = prim::Constant[value=3]()
      %c : Tensor = aten::mul(%x, %k)
      -> (%c)
  %z : Tensor = aten::mul(%y, %l_weight)
  %k0 : int = prim::Constant[value=1]()
  %r : Tensor = aten::add(%z, %scale, %k0)
  return (%r)
'''
    lowered.lint()
    x = turnout.ones([2]) * 5.0
    out = jit.GraphExecutor(lowered)(x, *values)
    assert out.tolist() == [5.0 * 3 * 2 + 1] * 2


def test_graph_with_get_attr_does_not_run():
    # A module cannot be passed in; a graph that reads attributes of a value
    # passed in does not compile.
    with pytest.raises(TypeError, match=r"must be __torch__.M, but got _Obj \(turnout "
                                        r"holds no module objects: lower the graph first "
                                        r"with turnout.jit.passes.lower_graph"):
        jit.GraphExecutor(_module_graph())(_module(), turnout.ones([2]))
    g = jit.Graph.parse('graph(%self : __torch__.M):\n'
                        '  %k : int = prim::GetAttr[name="k"](%self)\n'
                        '  return (%k)\n')
    with pytest.raises(ValueError, match=r"prim::GetAttr reads an attribute of a module "
                                         r"object, and turnout holds none: lower the graph "
                                         r"first \(Python: turnout.jit.passes.lower_graph"):
        jit.GraphExecutor(g)(None)


@pytest.mark.parametrize("text,module,message", [
    # The first input is not a module.
    ("graph(%x : Tensor):\n  return (%x)\n", _module(),
     r"first input must be the module, a class type \(%self : __torch__.M\), "
     r"but it is %x : Tensor"),
    ("graph():\n  %c : int = prim::Constant[value=1]()\n  return (%c)\n", _module(),
     "but it is absent"),
    # The module used other than by prim::GetAttr.
    ("graph(%self : __torch__.M, %x : Tensor):\n"
     "  %t : (Tensor, __torch__.M) = prim::TupleConstruct(%x, %self)\n"
     "  return (%x)\n", _module(),
     r"self is used by prim::TupleConstruct \(input 1\); only prim::GetAttr reads"),
    ("graph(%self : __torch__.M):\n"
     "  %l : __torch__.Lin = prim::GetAttr[name=\"l\"](%self)\n"
     "  return (%l)\n", _module(), r"self.l is returned \(by the graph\)"),
    # Missing attributes, at the top and in a submodule.
    ("graph(%self : __torch__.M):\n"
     "  %w : Tensor = prim::GetAttr[name=\"weights\"](%self)\n"
     "  return (%w)\n", _module(), "the module has no attribute self.weights"),
    ("graph(%self : __torch__.M):\n"
     "  %l : __torch__.Lin = prim::GetAttr[name=\"l\"](%self)\n"
     "  %w : Tensor = prim::GetAttr[name=\"w\"](%l)\n"
     "  return (%w)\n", _module(), r"no attribute self.l.w\b"),
    # What the object holds does not fit what the graph reads.
    ("graph(%self : __torch__.M):\n"
     "  %k : int = prim::GetAttr[name=\"scale\"](%self)\n"
     "  return (%k)\n", _module(), "self.scale is a tensor, but the graph reads it as int"),
    ("graph(%self : __torch__.M):\n"
     "  %w : Tensor = prim::GetAttr[name=\"l\"](%self)\n"
     "  return (%w)\n", _module(), "self.l is a _Obj, but the graph reads it as Tensor"),
    ("graph(%self : __torch__.M):\n"
     "  %k : int[] = prim::GetAttr[name=\"k\"](%self)\n"
     "  return (%k)\n", _module(k=[1, 2]), "self.k is a list, but the graph reads it as int"),
    ("graph(%self : __torch__.M):\n"
     "  %k : float = prim::GetAttr[name=\"k\"](%self)\n"
     "  return (%k)\n", _module(), "self.k is a int, but the graph reads it as float"),
    ("graph(%self : __torch__.M):\n"
     "  %l : __torch__.Lin = prim::GetAttr[name=\"k\"](%self)\n"
     "  return (%self)\n", _module(), r"self.k is a int, but the graph reads it as __torch__.Lin"),
])
def test_lower_graph_errors(text, module, message):
    g = jit.Graph.parse(text)
    before = str(g)
    with pytest.raises(ValueError, match=message):
        jit.passes.lower_graph(g, module)
    assert str(g) == before


def test_lower_graph_argument_errors():
    with pytest.raises(TypeError, match=r"lower_graph\(graph\): expected graph to be a "
                                        r"turnout.jit.Graph, got str"):
        jit.passes.lower_graph("graph", _module())


@pytest.mark.parametrize("text,message", [
    ("graph(%self : __torch__):\n  return ()\n", r"needs its qualified name"),
    ("graph(%self : __torch__.):\n  return ()\n", r"a name after '.'"),
    ("graph(%self : __torch__.M[]):\n  return ()\n", r"cannot be a list element"),
    ("graph(%x : Tensor):\n  %w : Tensor = prim::GetAttr[name=\"w\"](%x)\n  return (%w)\n",
     r"prim::GetAttr reads an attribute of a module object .*not of %x : Tensor"),
    ("graph(%self : __torch__.M):\n  %w : Tensor = prim::GetAttr(%self)\n  return (%w)\n",
     r"prim::GetAttr needs the attribute's name"),
])
def test_class_types_and_get_attr_parse_errors(text, message):
    with pytest.raises(ValueError, match=message):
        jit.Graph.parse(text)


def test_class_types_round_trip():
    text = ('graph(%self : __torch__.torch.nn.modules.linear.___torch_mangle_0.Linear,\n'
            '      %x : Tensor):\n'
            '  %w : Tensor = prim::GetAttr[name="weight"](%self)\n'
            '  %t : (Tensor, __torch__.torch.nn.modules.linear.___torch_mangle_0.Linear)'
            ' = prim::TupleConstruct(%w, %self)\n'
            '  return (%t)\n')
    assert str(jit.Graph.parse(text)) == text
