"""turnout.jit: graphs of operator calls, the tracer, and fork/wait.

A :class:`Graph` is TorchScript's IR: parse one from its text form, print
it, walk its nodes, run it with :func:`run` (the interpreter) or with a
:class:`GraphExecutor` (plans specialised to the inputs, optimised by the
passes of :mod:`turnout.jit.passes`). :func:`trace`
records what a Python function does with turnout operators into a graph.
:func:`fork` runs a function on the inter-op thread pool and returns a
:class:`Future`; :func:`wait` (or ``Future.wait``) gets its value.

Example::

    >>> import turnout, turnout.jit
    >>> g = turnout.jit.Graph.parse('''
    ...     graph(%x : Tensor):
    ...       %1 : Tensor = aten::relu(%x)
    ...       return (%1)''')
    >>> [n.kind() for n in g.nodes()]
    ['aten::relu']
    >>> turnout.jit.run(g, turnout.tensor([-1.0, 2.0]))
    tensor([0., 2.])
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Sequence

from turnout._C import _jit
from turnout.jit import passes

Graph = _jit.Graph
Node = _jit.Node
Value = _jit.Value
Future = _jit.Future
Code = _jit.Code
CompilationUnit = _jit.CompilationUnit
GraphExecutorState = _jit.GraphExecutorState
ExecutionPlanState = _jit.ExecutionPlanState

Graph.__doc__ = """A graph in TorchScript's form.

``Graph.parse(text)`` reads the text form (as ``str(graph)`` and PyTorch
print it: ``Future[T]``, ``Union(...)``, tuple constants, forks as
``prim::fork_N`` with their ``with`` subgraphs), resolving operator names
against the registered schemas; ``compilation_unit=cu`` names the
:class:`CompilationUnit` its ``prim::CallFunction`` calls resolve in;
``graph.nodes()`` lists the top-level nodes, ``graph.inputs()`` and
``graph.outputs()`` its values.

Example::

    >>> import turnout.jit
    >>> g = turnout.jit.Graph.parse('''
    ...     graph(%a : Tensor, %b : Tensor):
    ...       %c : int = prim::Constant[value=1]()
    ...       %d : Tensor = aten::add(%a, %b, %c)
    ...       return (%d)''')
    >>> print(g.nodes()[1])
    %d : Tensor = aten::add(%a, %b, %c)
    >>> [str(v) for v in g.nodes()[1].inputs()]
    ['%a : Tensor', '%b : Tensor', '%c : int']
"""


CompilationUnit.__doc__ = """Graph functions defined by name, as a
TorchScript compilation unit: a graph's Function constants
(``%f : Function = prim::Constant[name="inner"]()``) name them and
``prim::CallFunction(%f, ...)`` calls them. A function may name functions
defined after it (names are looked up when a graph is compiled or inlined).

``define(name, text)`` parses a graph into the unit and returns a copy of
it (still calling into the unit); ``define_graph(name, graph)`` takes a
parsed one; ``graph(name)`` returns a copy of a defined function (or None);
``run(name, *inputs)`` runs one; ``function_names()`` lists them.
``Graph.parse(text, compilation_unit=cu)`` makes a graph whose calls resolve
in ``cu`` without defining it; :func:`turnout.jit.passes.inline_calls`
replaces the calls by the bodies.

Raises ValueError for a name defined twice (functions are never replaced)
and, when compiling, for a call to a function the unit lacks.

Example::

    >>> import turnout, turnout.jit
    >>> cu = turnout.jit.CompilationUnit()
    >>> _ = cu.define("inner", '''
    ...     graph(%x : Tensor):
    ...       %y : Tensor = aten::neg(%x)
    ...       return (%y)''')
    >>> _ = cu.define("outer", '''
    ...     graph(%x : Tensor):
    ...       %f : Function = prim::Constant[name="inner"]()
    ...       %y : Tensor = prim::CallFunction(%f, %x)
    ...       return (%y)''')
    >>> cu.run("outer", turnout.tensor([1.0, -2.0]))
    tensor([-1.,  2.])
    >>> cu.function_names()
    ['inner', 'outer']
"""


def run(graph: Graph, *inputs: Any) -> Any:
    """Runs ``graph`` with the interpreter on ``inputs``.

    The graph is compiled on each call; keep a :class:`Code` (``Code(graph)``,
    then call it) to run one graph many times.

    Args:
        graph: the graph to run.
        *inputs: one value per graph input, converted by the input's type.

    Returns:
        The graph's one output, or a tuple when it has several.

    Raises:
        TypeError: an input does not fit its type.
        ValueError: wrong number of inputs, or a graph that does not compile.

    Example::

        >>> import turnout, turnout.jit
        >>> g = turnout.jit.Graph.parse('''
        ...     graph(%x : Tensor, %n : int):
        ...       %y : Tensor = aten::mul(%x, %n)
        ...       return (%y, %n)''')
        >>> turnout.jit.run(g, turnout.tensor([1, 2]), 3)
        (tensor([3, 6]), 3)
    """
    if not isinstance(graph, Graph):
        raise TypeError(
            f"run(graph, *inputs): expected graph to be a turnout.jit.Graph, "
            f"got {type(graph).__name__}")
    return _jit.run(graph, *inputs)


GraphExecutor = _jit.GraphExecutor
GraphExecutor.__doc__ = """Runs a graph with a plan specialised to its inputs' types.

Each call computes the inputs' spec -- per tensor its dtype, device,
rank and requires_grad (and its sizes and strides with
``specialize_sizes``), per other value its kind -- and runs the plan
made for that spec on first use: the graph with its inputs typed by the
spec, optimised (shape propagation, peephole, constant propagation,
constant-branch inlining, CSE, dead code elimination: see
:func:`turnout.jit.passes.optimize_graph`) and compiled for the
interpreter. The executor keeps a copy of ``graph``: changing ``graph``
afterwards changes nothing here. Calls from several threads at once are
safe; the GIL is released while the graph runs.

Args:
    graph: the graph to run.
    optimize: run the passes on each plan's graph. With False, or inside
        ``with turnout.jit.optimized_execution(False):`` when a plan is
        made, the plan runs the graph as written.
    specialize_sizes: specialise plans to sizes and strides too.

Calling it with one value per graph input returns the graph's one
output, or a tuple when it has several.

Raises:
    TypeError: ``graph`` is not a :class:`Graph`; or, when called, an
        input does not fit its type, or inputs were passed by keyword.
    ValueError: the graph fails ``lint()``; or, when called, a wrong
        number of inputs, a graph that does not compile, or a failing
        operator (named with the node's source location).

Example::

    >>> import turnout, turnout.jit
    >>> g = turnout.jit.Graph.parse('''
    ...     graph(%x : Tensor):
    ...       %one : int = prim::Constant[value=1]()
    ...       %zero : int = prim::Constant[value=0]()
    ...       %y : Tensor = aten::add(%x, %zero, %one)
    ...       %z : Tensor = aten::mul(%y, %x)
    ...       return (%z, %one)''')
    >>> ex = turnout.jit.GraphExecutor(g)
    >>> ex(turnout.tensor([2.0, 3.0]))
    (tensor([4., 9.]), 1)
    >>> print(ex.last_executed_optimized_graph())
    graph(%x : Float(*, requires_grad=0, device=cpu)):
      %one : int = prim::Constant[value=1]()
      %z : Float(*, requires_grad=0, device=cpu) = aten::mul(%x, %x)
      return (%z, %one)
    <BLANKLINE>
    >>> [p.spec for p in ex.get_debug_state().plans]
    ['(Float(*, requires_grad=0, device=cpu)) optimized']

``ex.get_debug_state()`` lists the plans made so far, in the order they
were made: ``state.plans`` holds one ``ExecutionPlanState`` per plan,
with its ``spec`` (a string), ``optimized``, its ``graph`` (a copy of
the graph it compiled) and ``code`` (the interpreter's listing);
``state.graph`` is the graph as given; ``str(state)`` prints every
plan's spec and graph. ``ex.last_executed_optimized_graph()`` is a copy
of the graph of the plan that ran last, from any thread (None before the
first call): TorchScript's ``torch.jit.last_executed_optimized_graph()``,
per executor. ``ex.graph``, ``ex.optimize`` and ``ex.specialize_sizes``
are what it was made with.

    >>> g = turnout.jit.Graph.parse('''
    ...     graph(%x : Tensor):
    ...       %y : Tensor = aten::neg(%x)
    ...       return (%y)''')
    >>> ex = turnout.jit.GraphExecutor(g)
    >>> _ = ex(turnout.tensor([1.0])), ex(turnout.tensor([[1]]))
    >>> print(ex.get_debug_state())
    GraphExecutor: 2 plans
    plan 0: (Float(*, requires_grad=0, device=cpu)) optimized
    graph(%x : Float(*, requires_grad=0, device=cpu)):
      %y : Float(*, requires_grad=0, device=cpu) = aten::neg(%x)
      return (%y)
    plan 1: (Long(*, *, requires_grad=0, device=cpu)) optimized
    graph(%x : Long(*, *, requires_grad=0, device=cpu)):
      %y : Long(*, *, requires_grad=0, device=cpu) = aten::neg(%x)
      return (%y)
    <BLANKLINE>
"""


def set_graph_executor_optimize(optimize: bool) -> None:
    """Sets whether plans this thread makes from now on are optimised.

    True unless set. Executors made with ``optimize=False`` never optimise.
    Prefer :func:`optimized_execution`, which restores the setting.
    """
    _jit.set_graph_executor_optimize(bool(optimize))


def get_graph_executor_optimize() -> bool:
    """Whether plans this thread makes are optimised (True unless set)."""
    return _jit.get_graph_executor_optimize()


@contextlib.contextmanager
def optimized_execution(should_optimize: bool) -> Iterator[None]:
    """Within the block, plans this thread makes are optimised or not.

    As ``torch.jit.optimized_execution``. Optimisation is part of a plan's
    spec: a plan made inside the block is used again only inside such a
    block, and the plans made outside it stay.

    Example::

        >>> import turnout, turnout.jit
        >>> g = turnout.jit.Graph.parse('''
        ...     graph(%x : Tensor):
        ...       %one : int = prim::Constant[value=1]()
        ...       %y : Tensor = aten::mul(%x, %one)
        ...       return (%y)''')
        >>> ex = turnout.jit.GraphExecutor(g)
        >>> with turnout.jit.optimized_execution(False):
        ...     ex(turnout.tensor([5.0]))
        tensor([5.])
        >>> print(ex.last_executed_optimized_graph())
        graph(%x : Float(*, requires_grad=0, device=cpu)):
          %one : int = prim::Constant[value=1]()
          %y : Tensor = aten::mul(%x, %one)
          return (%y)
        <BLANKLINE>
    """
    previous = _jit.get_graph_executor_optimize()
    _jit.set_graph_executor_optimize(bool(should_optimize))
    try:
        yield
    finally:
        _jit.set_graph_executor_optimize(previous)


def trace(fn: Callable[..., Any], example_inputs: Any,
          input_names: Sequence[str] | None = None) -> Graph:
    """Records the operators ``fn`` calls on ``example_inputs`` into a graph.

    ``fn`` runs once, eagerly, with the inputs as arguments. Every operator
    call it makes through the dispatcher (``turnout.ops``, Tensor methods,
    factories, Python kernels alike) becomes a node; non-tensor arguments
    become constants; what ``fn`` returns (a tensor, or a tuple of values)
    becomes the graph's outputs. Only the outermost call of a composite
    operator is recorded. Control flow is not: the graph follows the path
    the example took.

    Args:
        fn: the function to trace.
        example_inputs: a tensor, or a tuple/list of tensors, passed to ``fn``.
        input_names: names for the graph inputs; by default ``fn``'s
            parameter names when it has one per input.

    Returns:
        The traced :class:`Graph`; :func:`run` runs it.

    Raises:
        TypeError: an example input is not a tensor, or ``fn`` returned a
            value a graph cannot hold.
        ValueError: tracing while already tracing, or repeated inputs.

    Example::

        >>> import turnout, turnout.jit
        >>> def f(x, y):
        ...     return (x * y).relu() + 1
        >>> x, y = turnout.tensor([1.0, -2.0]), turnout.tensor([3.0, 4.0])
        >>> g = turnout.jit.trace(f, (x, y))
        >>> print(g)
        graph(%x : Tensor,
              %y : Tensor):
          %2 : Tensor = aten::mul.Tensor(%x, %y)
          %3 : Tensor = aten::relu(%2)
          %4 : Long(requires_grad=0, device=cpu) = prim::Constant[value={1}]()
          %5 : int = prim::Constant[value=1]()
          %6 : Tensor = aten::add.Tensor(%3, %4, %5)
          return (%6)
        <BLANKLINE>
        >>> turnout.jit.run(g, x, y)
        tensor([4., 1.])
    """
    if not callable(fn):
        raise TypeError(
            f"trace(fn, example_inputs): expected fn to be callable, got "
            f"{type(fn).__name__}")
    if isinstance(example_inputs, (tuple, list)):
        inputs = tuple(example_inputs)
    else:
        inputs = (example_inputs,)
    if input_names is None:
        input_names = _parameter_names(fn, len(inputs))
    return _jit.trace(fn, inputs, list(input_names))


def _parameter_names(fn: Callable[..., Any], count: int) -> list[str]:
    import inspect
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []
    names = [p.name for p in params
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names if len(names) == count else []


def fork(fn: Callable[..., Any], *args: Any) -> Future:
    """Runs ``fn(*args)`` on the inter-op thread pool.

    The work runs with the caller's thread-local dispatch state: the
    included and excluded dispatch keys and the grad mode (so work forked
    under ``turnout.no_grad()`` records no autograd history). An exception it raises is raised again by :func:`wait`.
    Its result must be a value a graph can hold (tensors, numbers, bools,
    str, None, and lists and tuples of them).

    Args:
        fn: the function to run.
        *args: its arguments.

    Returns:
        A :class:`Future` of ``fn``'s result.

    Example::

        >>> import turnout, turnout.jit
        >>> fut = turnout.jit.fork(lambda t: t * 2, turnout.tensor([1, 2]))
        >>> turnout.jit.wait(fut)
        tensor([2, 4])
    """
    if not callable(fn):
        raise TypeError(
            f"fork(fn, *args): expected fn to be callable, got "
            f"{type(fn).__name__}")
    return _jit.fork(fn, *args)


def wait(future: Future) -> Any:
    """Waits for ``future`` and returns its value.

    Raises the exception of failed work, unchanged (type and traceback).
    The GIL is released while waiting.

    Example::

        >>> import turnout.jit
        >>> turnout.jit.wait(turnout.jit.fork(lambda: 6 * 7))
        42
    """
    if not isinstance(future, Future):
        raise TypeError(
            f"wait(future): expected a turnout.jit.Future, got "
            f"{type(future).__name__}")
    return future.wait()


def collect_all(futures: Sequence[Future]) -> Future:
    """A future completed, once every one of ``futures`` is, with the list
    of those futures.

    As ``torch.futures.collect_all``: waiting on it gives back the futures
    themselves, each complete, so that each one's value (or error) is read
    from it. When one of them fails, the combined future fails at once with
    that error, without waiting for the others.

    Args:
        futures: the futures to wait for.

    Returns:
        A :class:`Future` whose value is the list ``futures``.

    Raises:
        TypeError: an element is not a :class:`Future`.

    Example::

        >>> import turnout.jit
        >>> fs = [turnout.jit.fork(lambda i=i: i * i) for i in range(4)]
        >>> done = turnout.jit.collect_all(fs).wait()
        >>> done == fs
        True
        >>> [f.value() for f in done]
        [0, 1, 4, 9]
    """
    futures = list(futures)
    for i, f in enumerate(futures):
        if not isinstance(f, Future):
            raise TypeError(
                f"collect_all(futures): element {i} is a "
                f"{type(f).__name__}, expected a turnout.jit.Future")
    return _jit.collect_all(futures)


__all__ = [
    "Code", "CompilationUnit", "ExecutionPlanState", "Future", "Graph",
    "GraphExecutor",
    "GraphExecutorState", "Node", "Value", "collect_all", "fork",
    "get_graph_executor_optimize", "optimized_execution", "passes", "run",
    "set_graph_executor_optimize", "trace", "wait",
]
