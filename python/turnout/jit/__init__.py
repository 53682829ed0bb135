"""turnout.jit: graphs of operator calls, the tracer, and fork/wait.

A :class:`Graph` is TorchScript's IR: parse one from its text form, print
it, walk its nodes, run it with :func:`run` (the interpreter). :func:`trace`
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

from typing import Any, Callable, Sequence

from turnout._C import _jit

Graph = _jit.Graph
Node = _jit.Node
Value = _jit.Value
Future = _jit.Future
Code = _jit.Code

Graph.__doc__ = """A graph in TorchScript's form.

``Graph.parse(text)`` reads the text form (as ``str(graph)`` and PyTorch
print it), resolving operator names against the registered schemas;
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
          %4 : int = prim::Constant[value=1]()
          %5 : int = prim::Constant[value=1]()
          %6 : Tensor = aten::add.Scalar(%3, %4, %5)
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
    """A future completed once every one of ``futures`` is.

    Its value is the list of their values, in order. Unlike
    ``torch.futures.collect_all`` (which gives the futures themselves), a
    failure is reported directly: when some failed, waiting raises the
    error of the first failed one in the list.

    Example::

        >>> import turnout.jit
        >>> fs = [turnout.jit.fork(lambda i=i: i * i) for i in range(4)]
        >>> turnout.jit.collect_all(fs).wait()
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
    "Code", "Future", "Graph", "Node", "Value", "collect_all", "fork", "run",
    "trace", "wait",
]
