"""``turnout.utils._pytree``: nested containers as a flat list of leaves plus
their shape, so that a function can be applied to every tensor in ``args``.

It is torch 1.13's ``torch.utils._pytree`` for turnout: a wrapper subclass
or a dispatch mode written for torch that imports ``tree_map`` (or
``tree_flatten``, ``tree_map_only``, ...) from there runs on turnout once
``torch`` is renamed ``turnout`` and ``__torch_dispatch__``
``__turnout_dispatch__``. Same functions, same leaf order, same
:class:`TreeSpec` text and equality, same exception types.

What is a node and what is a leaf:

- nodes: ``list``, ``tuple``, ``dict`` (in insertion order), namedtuples
  and ``collections.OrderedDict``, and the types registered with
  :func:`_register_pytree_node`. The type must match exactly: a subclass
  of ``list`` or ``dict`` (``defaultdict``, ``turnout.Size``) is a leaf, and
  a namedtuple is a class whose only base is ``tuple`` and whose
  ``_fields`` are strs.
- leaves: everything else, ``None`` and empty-looking values included. An
  empty container is a node with no leaves.

A tree must not contain itself (a list holding itself recurses until
Python's recursion limit raises RecursionError).

Thread safety: flattening, mapping and unflattening share nothing but
:data:`SUPPORTED_NODES`; register node types at import time, before other
threads flatten.

Example::

    >>> import turnout
    >>> from turnout.utils._pytree import tree_flatten, tree_map_only, tree_unflatten
    >>> leaves, spec = tree_flatten({"a": [1, 2], "b": (None, 3)})
    >>> leaves
    [1, 2, None, 3]
    >>> spec
    TreeSpec(dict, ['a', 'b'], [TreeSpec(list, None, [*, *]), TreeSpec(tuple, None, [*, *])])
    >>> tree_unflatten([10, 20, 30, 40], spec)
    {'a': [10, 20], 'b': (30, 40)}
    >>> tree_map_only(turnout.Tensor, lambda t: t * 2, {"x": turnout.ones(2), "n": 3})
    {'x': tensor([2., 2.]), 'n': 3}
"""

from __future__ import annotations

import functools
from collections import OrderedDict, namedtuple
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

__all__ = [
    "Context", "FlattenFunc", "LeafSpec", "NodeDef", "PyTree",
    "SUPPORTED_NODES", "TreeSpec", "UnflattenFunc", "map_only", "tree_all",
    "tree_all_only", "tree_any", "tree_any_only", "tree_flatten", "tree_map",
    "tree_map_only", "tree_unflatten",
]

#: What a node's flatten function returns beside its children, and what its
#: unflatten function gets back (a dict's keys, a namedtuple's class).
Context = Any
#: A leaf, or a node holding pytrees.
PyTree = Any
#: ``flatten_fn(node) -> (children, context)``.
FlattenFunc = Callable[[PyTree], Tuple[List[Any], Context]]
#: ``unflatten_fn(children, context) -> node``.
UnflattenFunc = Callable[[List[Any], Context], PyTree]


class NodeDef(NamedTuple):
    """How one node type splits into its children and is rebuilt from them."""

    flatten_fn: FlattenFunc
    unflatten_fn: UnflattenFunc


#: Node type -> its :class:`NodeDef`. Namedtuples are all under the key
#: ``collections.namedtuple``, with their class as the context.
SUPPORTED_NODES: Dict[Any, NodeDef] = {}


def _register_pytree_node(typ: Any, flatten_fn: FlattenFunc,
                          unflatten_fn: UnflattenFunc) -> None:
    """Makes instances of ``typ`` (exactly that type, not its subclasses)
    nodes: ``flatten_fn(node)`` returns ``(children, context)`` with the
    children a list, and ``unflatten_fn(children, context)`` rebuilds the
    node from a list of as many children. The context must compare with
    ``==``: a :class:`TreeSpec` holds it, and two specs are equal only when
    their contexts are.

    Registering a type again replaces its functions, as torch 1.13 does.

    Args:
        typ: the node type.
        flatten_fn: node -> (list of children, context).
        unflatten_fn: (list of children, context) -> node.

    Raises:
        TypeError: ``typ`` is not a type, or a function is not callable.

    Example::

        >>> from turnout.utils._pytree import (
        ...     SUPPORTED_NODES, _register_pytree_node, tree_flatten, tree_unflatten)
        >>> class Pair:
        ...     def __init__(self, first, second):
        ...         self.first, self.second = first, second
        >>> _register_pytree_node(Pair, lambda p: ([p.first, p.second], None),
        ...                       lambda children, _: Pair(*children))
        >>> leaves, spec = tree_flatten([Pair(1, (2, 3))])
        >>> leaves, spec
        ([1, 2, 3], TreeSpec(list, None, [TreeSpec(Pair, None, [*, TreeSpec(tuple, None, [*, *])])]))
        >>> tree_unflatten([4, 5, 6], spec)[0].second
        (5, 6)
        >>> del SUPPORTED_NODES[Pair]  # Pair instances are leaves again
    """
    if not isinstance(typ, type) and typ is not namedtuple:
        raise TypeError(
            f"_register_pytree_node(typ, flatten_fn, unflatten_fn): expected "
            f"typ to be a type, got {type(typ).__name__} {typ!r}")
    for what, fn in (("flatten_fn", flatten_fn), ("unflatten_fn", unflatten_fn)):
        if not callable(fn):
            raise TypeError(
                f"_register_pytree_node({typ.__name__}, ...): expected {what} "
                f"to be callable, got {type(fn).__name__}")
    SUPPORTED_NODES[typ] = NodeDef(flatten_fn, unflatten_fn)


# ---- The built-in nodes ---------------------------------------------------------


def _dict_flatten(d: Dict[Any, Any]) -> Tuple[List[Any], Context]:
    return list(d.values()), list(d.keys())


def _dict_unflatten(children: List[Any], keys: Context) -> Dict[Any, Any]:
    return dict(zip(keys, children))


def _list_flatten(d: List[Any]) -> Tuple[List[Any], Context]:
    # The list itself: tree_flatten only reads it.
    return d, None


def _list_unflatten(children: List[Any], context: Context) -> List[Any]:
    return list(children)


def _tuple_flatten(d: Tuple[Any, ...]) -> Tuple[List[Any], Context]:
    return list(d), None


def _tuple_unflatten(children: List[Any], context: Context) -> Tuple[Any, ...]:
    return tuple(children)


def _namedtuple_flatten(d: Tuple[Any, ...]) -> Tuple[List[Any], Context]:
    return list(d), type(d)


def _namedtuple_unflatten(children: List[Any], cls: Context) -> Tuple[Any, ...]:
    return cls(*children)


def _odict_flatten(d: "OrderedDict[Any, Any]") -> Tuple[List[Any], Context]:
    return list(d.values()), list(d.keys())


def _odict_unflatten(children: List[Any], keys: Context) -> "OrderedDict[Any, Any]":
    return OrderedDict(zip(keys, children))


_register_pytree_node(dict, _dict_flatten, _dict_unflatten)
_register_pytree_node(list, _list_flatten, _list_unflatten)
_register_pytree_node(tuple, _tuple_flatten, _tuple_unflatten)
_register_pytree_node(namedtuple, _namedtuple_flatten, _namedtuple_unflatten)
_register_pytree_node(OrderedDict, _odict_flatten, _odict_unflatten)


def _is_namedtuple_instance(pytree: Any) -> bool:
    """True for an instance of a class whose only base is ``tuple`` and whose
    ``_fields`` is a tuple of strs (what ``namedtuple`` and
    ``typing.NamedTuple`` make; not ``turnout.Size`` nor a subclass of a
    namedtuple)."""
    cls = type(pytree)
    if cls.__bases__ != (tuple,):
        return False
    fields = getattr(cls, "_fields", None)
    return isinstance(fields, tuple) and all(type(f) is str for f in fields)


def _get_node_type(pytree: Any) -> Any:
    """The key of ``pytree``'s entry in :data:`SUPPORTED_NODES`:
    ``collections.namedtuple`` for a namedtuple, else its type."""
    return namedtuple if _is_namedtuple_instance(pytree) else type(pytree)


def _is_leaf(pytree: PyTree) -> bool:
    """True unless ``pytree``'s node type is in :data:`SUPPORTED_NODES`."""
    return _get_node_type(pytree) not in SUPPORTED_NODES


def _type_name(typ: Any) -> str:
    return getattr(typ, "__name__", repr(typ))


# ---- TreeSpec ----------------------------------------------------------------------


class TreeSpec:
    """The shape of a pytree without its leaves: what :func:`tree_flatten`
    returns beside the leaves and :func:`tree_unflatten` rebuilds from.

    Its text is torch's, ``TreeSpec(<type name>, <context>, [<children>])``
    with ``*`` for a leaf, e.g. ``TreeSpec(dict, ['a', 'b'], [*, *])``. Two
    specs are equal when their types, contexts, children and leaf counts
    are, so a dict's key order counts. A spec is mutable and so unhashable.

    Attributes:
        type: the node's key in :data:`SUPPORTED_NODES` (None for a leaf).
        context: what the node's flatten function returned beside its
            children.
        children_specs: one spec per child.
        num_leaves: the leaves under this node.

    Example::

        >>> from turnout.utils._pytree import LeafSpec, TreeSpec, tree_flatten
        >>> tree_flatten([1, (2, 3)])[1]
        TreeSpec(list, None, [*, TreeSpec(tuple, None, [*, *])])
        >>> tree_flatten({"b": 1, "a": 2})[1] == tree_flatten({"a": 2, "b": 1})[1]
        False
        >>> tree_flatten((7, 8))[1] == TreeSpec(tuple, None, [LeafSpec(), LeafSpec()])
        True
    """

    def __init__(self, typ: Any, context: Context,
                 children_specs: List["TreeSpec"]) -> None:
        self.type = typ
        self.context = context
        self.children_specs = children_specs
        self.num_leaves: int = sum(spec.num_leaves for spec in children_specs)

    def __repr__(self) -> str:
        return (f"TreeSpec({_type_name(self.type)}, {self.context}, "
                f"{self.children_specs})")

    def __eq__(self, other: Any) -> bool:
        # torch 1.13 raises AttributeError against a non-spec; False is what
        # == means there.
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (self.type == other.type and self.context == other.context
                and self.num_leaves == other.num_leaves
                and self.children_specs == other.children_specs)

    __hash__ = None  # type: ignore[assignment]


class LeafSpec(TreeSpec):
    """The spec of one leaf: no type, no context, no children, one leaf;
    its text is ``*``."""

    def __init__(self) -> None:
        super().__init__(None, None, [])
        self.num_leaves = 1

    def __repr__(self) -> str:
        return "*"


# ---- Flatten, unflatten, map ---------------------------------------------------------


def _flatten_into(pytree: PyTree, leaves: List[Any]) -> TreeSpec:
    """Appends ``pytree``'s leaves to ``leaves`` (one list for the whole
    tree, not one per node) and returns its spec."""
    node_type = _get_node_type(pytree)
    node_def = SUPPORTED_NODES.get(node_type)
    if node_def is None:
        leaves.append(pytree)
        return LeafSpec()
    flattened = node_def.flatten_fn(pytree)
    try:
        children, context = flattened
    except (TypeError, ValueError) as e:
        kind = TypeError if isinstance(e, TypeError) else ValueError
        raise kind(
            f"tree_flatten: the flatten_fn registered for "
            f"{_type_name(node_type)} returned {type(flattened).__name__} "
            f"{flattened!r}; expected a pair (list of children, context)") from e
    return TreeSpec(node_type, context,
                    [_flatten_into(child, leaves) for child in children])


def tree_flatten(pytree: PyTree) -> Tuple[List[Any], TreeSpec]:
    """Splits a pytree into its leaves, depth first and left to right (a
    dict's in insertion order), and the :class:`TreeSpec` that
    :func:`tree_unflatten` rebuilds it from.

    Args:
        pytree: any value; a leaf gives ``[pytree]`` and ``*``.

    Returns:
        ``(leaves, spec)``.

    Example::

        >>> from turnout.utils._pytree import tree_flatten
        >>> tree_flatten([1, {"k": None}, ()])
        ([1, None], TreeSpec(list, None, [*, TreeSpec(dict, ['k'], [*]), TreeSpec(tuple, None, [])]))
        >>> tree_flatten(5)
        ([5], *)
    """
    leaves: List[Any] = []
    spec = _flatten_into(pytree, leaves)
    return leaves, spec


def _unflatten_from(leaves: Iterator[Any], spec: TreeSpec) -> PyTree:
    if isinstance(spec, LeafSpec):
        return next(leaves)
    node_def = SUPPORTED_NODES.get(spec.type)
    if node_def is None:
        raise KeyError(
            f"tree_unflatten: the spec's node type {_type_name(spec.type)} is "
            f"not registered; register it with _register_pytree_node before "
            f"unflattening (spec: {spec})")
    children = [_unflatten_from(leaves, child) for child in spec.children_specs]
    return node_def.unflatten_fn(children, spec.context)


def tree_unflatten(values: List[Any], spec: TreeSpec) -> PyTree:
    """Rebuilds a pytree of ``spec``'s shape with ``values`` as its leaves,
    in :func:`tree_flatten`'s order: the inverse of :func:`tree_flatten`.
    Every container is new; the leaves are the objects given.

    Args:
        values: a list (or tuple) of exactly ``spec.num_leaves`` leaves.
        spec: a :class:`TreeSpec`, as :func:`tree_flatten` returns.

    Returns:
        The pytree.

    Raises:
        ValueError: ``spec`` is not a TreeSpec, or ``values`` holds another
            number of leaves than it (both ValueError, as in torch).
        TypeError: ``values`` has no length.
        KeyError: the spec names a node type that is not registered.

    Example::

        >>> from turnout.utils._pytree import tree_flatten, tree_unflatten
        >>> leaves, spec = tree_flatten((1, [2, 3]))
        >>> tree_unflatten(["a", "b", "c"], spec)
        ('a', ['b', 'c'])
        >>> tree_unflatten([1], spec)
        Traceback (most recent call last):
        ...
        ValueError: tree_unflatten(values, spec): got 1 value but the spec holds 3 leaves: TreeSpec(tuple, None, [*, TreeSpec(list, None, [*, *])]); pass one value per leaf, in tree_flatten's order
    """
    if not isinstance(spec, TreeSpec):
        raise ValueError(
            f"tree_unflatten(values, spec): expected spec to be a TreeSpec (as "
            f"tree_flatten returns), got {type(spec).__name__}")
    try:
        count = len(values)
    except TypeError:
        raise TypeError(
            f"tree_unflatten(values, spec): expected values to be a list of "
            f"leaves, got {type(values).__name__} (which has no length)") from None
    if count != spec.num_leaves:
        raise ValueError(
            f"tree_unflatten(values, spec): got {count} "
            f"value{'' if count == 1 else 's'} but the spec holds "
            f"{spec.num_leaves} lea{'f' if spec.num_leaves == 1 else 'ves'}: "
            f"{spec}; pass one value per leaf, in tree_flatten's order")
    return _unflatten_from(iter(values), spec)


def tree_map(fn: Callable[[Any], Any], pytree: PyTree) -> PyTree:
    """A pytree of the same shape with ``fn(leaf)`` for every leaf, called
    once per leaf in :func:`tree_flatten`'s order; the containers are new.

    Args:
        fn: called on every leaf, whatever its type (see
            :func:`tree_map_only` to touch only some types).
        pytree: the tree.

    Returns:
        The mapped tree.

    Example::

        >>> from turnout.utils._pytree import tree_map
        >>> tree_map(lambda x: x is None, {"a": None, "b": [0, None]})
        {'a': True, 'b': [False, True]}
    """
    leaves, spec = tree_flatten(pytree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)


def _check_types(where: str, ty: Any) -> None:
    # What isinstance takes: a type, a tuple of them (nested too), a union.
    try:
        isinstance(None, ty)
    except TypeError:
        raise TypeError(
            f"{where}: expected ty to be a type or a tuple of types, got "
            f"{type(ty).__name__} {ty!r}") from None


def map_only(ty: Any) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """A decorator: the function it wraps is applied to the values that are
    instances of ``ty``, and every other value is returned as it is.

    Args:
        ty: a type or a tuple of types, as ``isinstance`` takes.

    Returns:
        The decorator.

    Raises:
        TypeError: ``ty`` is not something ``isinstance`` takes.

    Example::

        >>> from turnout.utils._pytree import map_only, tree_map
        >>> @map_only(int)
        ... def double(x):
        ...     return 2 * x
        >>> tree_map(double, [1, "a", (2.5, 3)])
        [2, 'a', (2.5, 6)]
    """
    _check_types("map_only(ty)", ty)

    def decorate(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        @functools.wraps(fn)
        def only(x: Any) -> Any:
            return fn(x) if isinstance(x, ty) else x
        return only

    return decorate


def tree_map_only(ty: Any, fn: Callable[[Any], Any], pytree: PyTree) -> PyTree:
    """:func:`tree_map` that applies ``fn`` only to the leaves that are
    instances of ``ty`` and keeps the others.

    Args:
        ty: a type or a tuple of types.
        fn: applied to the matching leaves.
        pytree: the tree.

    Returns:
        The mapped tree.

    Raises:
        TypeError: ``ty`` is not something ``isinstance`` takes.

    Example::

        >>> from turnout.utils._pytree import tree_map_only
        >>> tree_map_only((int, float), lambda x: -x, {"a": 1, "b": ("s", 2.0)})
        {'a': -1, 'b': ('s', -2.0)}
    """
    _check_types("tree_map_only(ty, fn, pytree)", ty)
    return tree_map(map_only(ty)(fn), pytree)


def tree_all(pred: Callable[[Any], bool], pytree: PyTree) -> bool:
    """True when ``pred`` holds for every leaf (True for no leaves);
    stops at the first leaf it fails for.

    Example::

        >>> from turnout.utils._pytree import tree_all
        >>> tree_all(lambda x: x > 0, [1, (2, {"k": 3})]), tree_all(bool, [])
        (True, True)
    """
    leaves, _ = tree_flatten(pytree)
    return all(map(pred, leaves))


def tree_any(pred: Callable[[Any], bool], pytree: PyTree) -> bool:
    """True when ``pred`` holds for some leaf (False for no leaves); stops
    at the first leaf it holds for.

    Example::

        >>> from turnout.utils._pytree import tree_any
        >>> tree_any(lambda x: x is None, {"a": 1, "b": [None]})
        True
    """
    leaves, _ = tree_flatten(pytree)
    return any(map(pred, leaves))


def tree_all_only(ty: Any, pred: Callable[[Any], bool], pytree: PyTree) -> bool:
    """:func:`tree_all` over the leaves that are instances of ``ty`` only.

    Raises:
        TypeError: ``ty`` is not something ``isinstance`` takes.

    Example::

        >>> from turnout.utils._pytree import tree_all_only
        >>> tree_all_only(int, lambda x: x > 0, [1, "skipped", (2,)])
        True
    """
    _check_types("tree_all_only(ty, pred, pytree)", ty)
    leaves, _ = tree_flatten(pytree)
    return all(pred(leaf) for leaf in leaves if isinstance(leaf, ty))


def tree_any_only(ty: Any, pred: Callable[[Any], bool], pytree: PyTree) -> bool:
    """:func:`tree_any` over the leaves that are instances of ``ty`` only.

    Raises:
        TypeError: ``ty`` is not something ``isinstance`` takes.

    Example::

        >>> from turnout.utils._pytree import tree_any_only
        >>> tree_any_only(str, lambda s: s.startswith("x"), [1, "ab", ("xy",)])
        True
    """
    _check_types("tree_any_only(ty, pred, pytree)", ty)
    leaves, _ = tree_flatten(pytree)
    return any(pred(leaf) for leaf in leaves if isinstance(leaf, ty))


def _broadcast_to_and_flatten(pytree: PyTree, spec: TreeSpec) -> Optional[List[Any]]:
    """``pytree`` broadcast to ``spec``'s shape, flattened: a leaf stands for
    every leaf of the subtree it sits in place of, and a node must match the
    spec's node (type, context, number of children). None when it does not
    fit. (What vmap uses to spread ``in_dims`` over its inputs.)

    Args:
        pytree: the tree to broadcast, usually smaller than the spec.
        spec: the shape to broadcast to.

    Returns:
        ``spec.num_leaves`` values, or None.

    Raises:
        TypeError: ``spec`` is not a TreeSpec (torch 1.13 asserts).

    Example::

        >>> from turnout.utils._pytree import _broadcast_to_and_flatten, tree_flatten
        >>> spec = tree_flatten(([1, 2], {"k": 3}))[1]
        >>> _broadcast_to_and_flatten((0, None), spec)
        [0, 0, None]
        >>> _broadcast_to_and_flatten(([0], 1), spec) is None
        True
    """
    if not isinstance(spec, TreeSpec):
        raise TypeError(
            f"_broadcast_to_and_flatten(pytree, spec): expected spec to be a "
            f"TreeSpec, got {type(spec).__name__}")
    node_type = _get_node_type(pytree)
    node_def = SUPPORTED_NODES.get(node_type)
    if node_def is None:
        return [pytree] * spec.num_leaves
    if isinstance(spec, LeafSpec) or node_type != spec.type:
        return None
    children, context = node_def.flatten_fn(pytree)
    if len(children) != len(spec.children_specs) or context != spec.context:
        return None
    result: List[Any] = []
    for child, child_spec in zip(children, spec.children_specs):
        flat = _broadcast_to_and_flatten(child, child_spec)
        if flat is None:
            return None
        result += flat
    return result
