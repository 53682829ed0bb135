"""turnout.jit.passes: the graph passes, each usable on its own.

Every pass changes the graph in place and returns whether it changed it,
as the C++ passes of ``jit/passes/`` do (TorchScript's
``torch._C._jit_pass_*``). Passes agree on what a node may do through the
operators' schemas: a node whose schema writes (``Tensor(a!)``) or that is
non-deterministic (``rand``, ``empty``) is never removed, folded or merged.
A :class:`~turnout.jit.Node` or :class:`~turnout.jit.Value` taken from the
graph before a pass removed something from it can no longer be used (it
raises ValueError): take it again from the graph.

Example::

    >>> import turnout.jit
    >>> g = turnout.jit.Graph.parse('''
    ...     graph(%x : Tensor):
    ...       %one : int = prim::Constant[value=1]()
    ...       %unused : Tensor = aten::add(%x, %x, %one)
    ...       return (%x)''')
    >>> turnout.jit.passes.eliminate_dead_code(g)
    True
    >>> print(g)
    graph(%x : Tensor):
      return (%x)
    <BLANKLINE>
"""

from __future__ import annotations

from typing import Any, List, Tuple

from turnout._C import _jit

_passes = _jit.passes


def _check(name: str, graph: object) -> None:
    if not isinstance(graph, _jit.Graph):
        raise TypeError(
            f"{name}(graph): expected graph to be a turnout.jit.Graph, got "
            f"{type(graph).__name__}")


def eliminate_dead_code(graph: _jit.Graph) -> bool:
    """Removes nodes whose outputs are unused and that have no side effects.

    Side effects come from the schemas' alias annotations (a write to an
    input, ``Tensor(a!)``), from CONSERVATIVE registrations and from
    ``prim::RaiseException``; such nodes stay, with what they use. Unused
    outputs of ``prim::If`` and ``prim::Loop`` blocks go too.

    Returns:
        True when it changed the graph.

    Example::

        >>> import turnout.jit
        >>> g = turnout.jit.Graph.parse('''
        ...     graph(%x : Tensor):
        ...       %one : int = prim::Constant[value=1]()
        ...       %a : Tensor = aten::add_(%x, %x, %one)
        ...       %b : Tensor = aten::mul(%x, %x)
        ...       return (%x)''')
        >>> turnout.jit.passes.eliminate_dead_code(g)
        True
        >>> print(g)
        graph(%x : Tensor):
          %one : int = prim::Constant[value=1]()
          %a : Tensor = aten::add_(%x, %x, %one)
          return (%x)
        <BLANKLINE>
    """
    _check("eliminate_dead_code", graph)
    return _passes.eliminate_dead_code(graph)


def propagate_constants(graph: _jit.Graph) -> bool:
    """Evaluates nodes whose inputs are all constants, through the
    dispatcher, and replaces them by constants.

    Operators that write to their inputs or are non-deterministic are never
    evaluated; a node whose evaluation fails is left to fail at run time.
    The constants it no longer uses stay for :func:`eliminate_dead_code`.

    Returns:
        True when it changed the graph.

    Example::

        >>> import turnout.jit
        >>> g = turnout.jit.Graph.parse('''
        ...     graph(%x : Tensor):
        ...       %a : int = prim::Constant[value=2]()
        ...       %b : int = prim::Constant[value=3]()
        ...       %c : int = aten::mul(%a, %b)
        ...       %y : Tensor = aten::mul(%x, %c)
        ...       return (%y)''')
        >>> turnout.jit.passes.propagate_constants(g)
        True
        >>> print(g)
        graph(%x : Tensor):
          %a : int = prim::Constant[value=2]()
          %b : int = prim::Constant[value=3]()
          %5 : int = prim::Constant[value=6]()
          %y : Tensor = aten::mul(%x, %5)
          return (%y)
        <BLANKLINE>
    """
    _check("propagate_constants", graph)
    return _passes.propagate_constants(graph)


def eliminate_common_subexpressions(graph: _jit.Graph) -> bool:
    """Replaces a node by an earlier identical one (same operator,
    attributes and inputs) that dominates it; pure nodes only.

    Returns:
        True when it changed the graph.

    Example::

        >>> import turnout.jit
        >>> g = turnout.jit.Graph.parse('''
        ...     graph(%x : Tensor):
        ...       %a : Tensor = aten::relu(%x)
        ...       %b : Tensor = aten::relu(%x)
        ...       %c : Tensor = aten::mul(%a, %b)
        ...       return (%c)''')
        >>> turnout.jit.passes.eliminate_common_subexpressions(g)
        True
        >>> print(g)
        graph(%x : Tensor):
          %a : Tensor = aten::relu(%x)
          %c : Tensor = aten::mul(%a, %a)
          return (%c)
        <BLANKLINE>
    """
    _check("eliminate_common_subexpressions", graph)
    return _passes.eliminate_common_subexpressions(graph)


def peephole_optimize(graph: _jit.Graph) -> bool:
    """Local simplifications: ``x + 0``, ``x - 0``, ``x * 1``, ``x / 1``
    (when x's dtype is known and the result's would not change),
    ``x.t().t()``, and ``dim``/``size`` of tensors whose rank or sizes are
    known become constants.

    Returns:
        True when it changed the graph.

    Example::

        >>> import turnout.jit
        >>> g = turnout.jit.Graph.parse('''
        ...     graph(%x : Float(2, 3)):
        ...       %a : Tensor = aten::t(%x)
        ...       %b : Tensor = aten::t(%a)
        ...       %d : int = aten::dim(%b)
        ...       return (%b, %d)''')
        >>> turnout.jit.passes.peephole_optimize(g)
        True
        >>> print(g)
        graph(%x : Float(2, 3)):
          %4 : int = prim::Constant[value=2]()
          return (%x, %4)
        <BLANKLINE>
    """
    _check("peephole_optimize", graph)
    return _passes.peephole_optimize(graph)


def inline_constant_branches(graph: _jit.Graph) -> bool:
    """Replaces a ``prim::If`` on a constant condition by the nodes of the
    branch it takes.

    Returns:
        True when it changed the graph.

    Example::

        >>> import turnout.jit
        >>> g = turnout.jit.Graph.parse('''
        ...     graph(%x : Tensor):
        ...       %c : bool = prim::Constant[value=0]()
        ...       %r : Tensor = prim::If(%c)
        ...         block0():
        ...           %a : Tensor = aten::relu(%x)
        ...           -> (%a)
        ...         block1():
        ...           %b : Tensor = aten::neg(%x)
        ...           -> (%b)
        ...       return (%r)''')
        >>> turnout.jit.passes.inline_constant_branches(g)
        True
        >>> print(g)
        graph(%x : Tensor):
          %c : bool = prim::Constant[value=0]()
          %b : Tensor = aten::neg(%x)
          return (%b)
        <BLANKLINE>
    """
    _check("inline_constant_branches", graph)
    return _passes.inline_constant_branches(graph)


def propagate_shapes(graph: _jit.Graph) -> bool:
    """Refines the tensor types of node outputs from the inputs' types, by
    running each node once on meta tensors (through the Meta kernels).

    The graph's input types (``Float(2, 3)``, or ``Float(*, *)`` for a known
    rank only) are what it starts from; a node whose Meta kernel is missing
    or fails keeps its types.

    Returns:
        True when some type changed.

    Example::

        >>> import turnout.jit
        >>> g = turnout.jit.Graph.parse('''
        ...     graph(%x : Float(2, 3, device=cpu), %y : Float(3, device=cpu)):
        ...       %one : int = prim::Constant[value=1]()
        ...       %z : Tensor = aten::add(%x, %y, %one)
        ...       return (%z)''')
        >>> turnout.jit.passes.propagate_shapes(g)
        True
        >>> print(g.nodes()[1])
        %z : Float(2, 3, strides=[3, 1], device=cpu) = aten::add(%x, %y, %one)
    """
    _check("propagate_shapes", graph)
    return _passes.propagate_shapes(graph)


def erase_shape_information(graph: _jit.Graph) -> bool:
    """Makes every refined tensor type plain ``Tensor``, except the graph's
    inputs and constants (whose types are facts).

    Returns:
        True when some type changed.

    Example::

        >>> import turnout.jit
        >>> g = turnout.jit.Graph.parse('''
        ...     graph(%x : Float(2)):
        ...       %y : Float(2) = aten::neg(%x)
        ...       return (%y)''')
        >>> turnout.jit.passes.erase_shape_information(g)
        True
        >>> print(g.nodes()[0])
        %y : Tensor = aten::neg(%x)
    """
    _check("erase_shape_information", graph)
    return _passes.erase_shape_information(graph)


def inline_calls(graph: _jit.Graph) -> bool:
    """Replaces each ``prim::CallFunction`` by the body of the function it
    calls, found by name in the graph's
    :class:`~turnout.jit.CompilationUnit` (as TorchScript's
    ``inlined_graph``); calls in the inlined bodies are inlined too.

    Raises:
        ValueError: a call names a function the unit does not define, the
            graph has no unit, or a function calls itself; the graph is
            then unchanged.

    Example::

        >>> import turnout.jit
        >>> cu = turnout.jit.CompilationUnit()
        >>> _ = cu.define("inner", '''
        ...     graph(%x : Tensor):
        ...       %y : Tensor = aten::neg(%x)
        ...       return (%y)''')
        >>> g = cu.define("outer", '''
        ...     graph(%x : Tensor):
        ...       %f : Function = prim::Constant[name="inner"]()
        ...       %y : Tensor = prim::CallFunction(%f, %x)
        ...       return (%y)''')
        >>> turnout.jit.passes.inline_calls(g)
        True
        >>> [n.kind() for n in g.nodes()]
        ['aten::neg']
    """
    _check("inline_calls", graph)
    return _passes.inline_calls(graph)


def optimize_graph(graph: _jit.Graph) -> None:
    """Runs the GraphExecutor's optimisation sequence on ``graph`` in place:
    ``erase_shape_information``, then, until nothing changes (a few rounds
    at most), ``propagate_shapes``, ``peephole_optimize``,
    ``propagate_constants``, ``inline_constant_branches``,
    ``eliminate_common_subexpressions`` and ``eliminate_dead_code``.

    Example::

        >>> import turnout.jit
        >>> g = turnout.jit.Graph.parse('''
        ...     graph(%x : Float(*, device=cpu)):
        ...       %zero : int = prim::Constant[value=0]()
        ...       %one : int = prim::Constant[value=1]()
        ...       %y : Tensor = aten::sub(%x, %zero, %one)
        ...       %a : Tensor = aten::relu(%y)
        ...       %b : Tensor = aten::relu(%y)
        ...       %c : Tensor = aten::add(%a, %b, %one)
        ...       return (%c)''')
        >>> turnout.jit.passes.optimize_graph(g)
        >>> print(g)
        graph(%x : Float(*, device=cpu)):
          %one : int = prim::Constant[value=1]()
          %a : Float(*, device=cpu) = aten::relu(%x)
          %c : Float(*, device=cpu) = aten::add(%a, %a, %one)
          return (%c)
        <BLANKLINE>
    """
    _check("optimize_graph", graph)
    _passes.optimize_graph(graph)


def lower_graph(graph: _jit.Graph, self: Any) -> Tuple[_jit.Graph, List[Any]]:
    """The graph of a module's method without the module: the analogue of
    torch's ``torch._C._jit_pass_lower_graph(graph, module._c)``.

    ``graph``'s first input is the module (``%self : __torch__.M``, as torch
    prints a scripted module's graph); it reads parameters, buffers and
    settings with ``prim::GetAttr``, through submodules too. ``self`` is any
    Python object whose (nested) attributes hold what the graph reads:
    turnout tensors, submodule-like objects, and plain values. The new
    graph has no module input; instead:

    - each tensor attribute becomes a graph input, after the graph's own
      inputs, in the order of its first read (one input per attribute
      however often it is read), named after its path (``%l_weight`` for
      ``self.l.weight``);
    - each attribute that is None, a bool, an int, a float or a str becomes
      a ``prim::Constant`` where it was read (torch's pass refuses these;
      turnout has no module left to read them from, so they are folded);
    - any other object is a submodule whose attributes are read in turn.

    ``graph`` itself is not changed (unlike the other passes, this one
    returns a new graph, as torch's does). Inline method calls first
    (torch's ``inlined_graph``).

    Args:
        graph: the module's graph, whose first input is the module.
        self: the object standing for the module.

    Returns:
        ``(lowered_graph, values)``: ``values`` are the tensor objects
        themselves, in the order of the inputs added after the graph's own.
        Call the lowered graph with ``(*inputs, *values)``.

    Raises:
        TypeError: ``graph`` is not a Graph.
        ValueError: the first input is not a module (a class type); the
            module or a submodule is used other than by ``prim::GetAttr``
            (passed to an operator, returned); ``self`` lacks an attribute
            the graph reads; an attribute does not fit the type the graph
            reads (a tensor read as an int, an object read as a tensor, a
            list). Each message names the attribute's path and the node.

    Example::

        >>> import types, turnout, turnout.jit
        >>> g = turnout.jit.Graph.parse('''
        ...     graph(%self : __torch__.M, %x : Tensor):
        ...       %l : __torch__.Lin = prim::GetAttr[name="l"](%self)
        ...       %w : Tensor = prim::GetAttr[name="weight"](%l)
        ...       %k : int = prim::GetAttr[name="k"](%self)
        ...       %y : Tensor = aten::mul(%x, %w)
        ...       %z : Tensor = aten::mul(%y, %k)
        ...       return (%z)''')
        >>> m = types.SimpleNamespace(k=3, l=types.SimpleNamespace(
        ...     weight=turnout.ones([2])))
        >>> lowered, values = turnout.jit.passes.lower_graph(g, m)
        >>> print(lowered)
        graph(%x : Tensor,
              %l_weight : Tensor):
          %k : int = prim::Constant[value=3]()
          %y : Tensor = aten::mul(%x, %l_weight)
          %z : Tensor = aten::mul(%y, %k)
          return (%z)
        <BLANKLINE>
        >>> values[0] is m.l.weight
        True
    """
    _check("lower_graph", graph)
    lowered, values, _names = _passes.lower_graph(graph, self)
    return lowered, list(values)


__all__ = [
    "eliminate_common_subexpressions", "eliminate_dead_code",
    "erase_shape_information", "inline_calls", "inline_constant_branches",
    "lower_graph", "optimize_graph",
    "peephole_optimize", "propagate_constants", "propagate_shapes",
]
