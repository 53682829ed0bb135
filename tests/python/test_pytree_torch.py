"""turnout.utils._pytree against torch 1.13's torch.utils._pytree as the
oracle (issue 18): the same nested structures given to both modules --
the very same Python objects, so leaves compare by identity -- comparing
leaves, TreeSpec text and equality, round trips, tree_map / tree_map_only /
tree_all / tree_any results and call orders, a registered custom node,
_broadcast_to_and_flatten, and the exception types of bad unflattens. Then
a wrapper subclass written for torch with ``tree_map`` run on torch and,
renamed, on turnout.
"""

import doctest
import typing
from collections import OrderedDict, defaultdict, namedtuple

import pytest

import turnout
from turnout.utils import _pytree as ours

torch = pytest.importorskip("torch")
from torch.utils import _pytree as theirs  # noqa: E402

Point = namedtuple("Point", ["x", "y"])
Empty = namedtuple("Empty", [])


class Typed(typing.NamedTuple):
    a: typing.Any
    b: typing.Any = None


class PointChild(Point):
    """A subclass of a namedtuple: its only base is Point, so a leaf."""


class MyList(list):
    pass


class MyDict(dict):
    pass


class FieldsNotStr(tuple):
    _fields = (1, 2)


T1 = torch.ones(2)
T2 = torch.zeros(1, 3)
U1 = turnout.ones(2)
U2 = turnout.zeros(1, 3)


def deep(depth, leaf):
    tree = leaf
    for i in range(depth):
        tree = [tree] if i % 3 == 0 else (tree, i) if i % 3 == 1 else {"k": tree}
    return tree


# name -> a pytree; each holds leaves of several kinds.
CASES = {
    "int leaf": 3,
    "None leaf": None,
    "str leaf": "abc",
    "torch tensor leaf": T1,
    "turnout tensor leaf": U1,
    "empty list": [],
    "empty tuple": (),
    "empty dict": {},
    "empty OrderedDict": OrderedDict(),
    "empty namedtuple": Empty(),
    "list of None": [None, None],
    "flat list": [1, 2.5, "s", None, b"b"],
    "flat tuple": (1, (), [], {}),
    "dict a b": {"a": 1, "b": 2},
    "dict b a": {"b": 2, "a": 1},
    "dict mixed keys": {1: "one", "two": 2, None: [3], (4, 5): (6,)},
    "dict of tensors": {"w": T1, "b": U1, "n": None},
    "OrderedDict a b": OrderedDict([("a", 1), ("b", 2)]),
    "OrderedDict b a": OrderedDict([("b", 2), ("a", 1)]),
    "namedtuple": Point(1, [2, 3]),
    "namedtuple of tensors": Point(T1, U1),
    "typing.NamedTuple": Typed([1], {"c": 2}),
    "namedtuple subclass is a leaf": [PointChild(1, 2)],
    "list subclass is a leaf": [MyList([1, 2])],
    "dict subclass is a leaf": (MyDict(a=1),),
    "defaultdict is a leaf": [defaultdict(int, a=1)],
    "tuple with non-str _fields is a leaf": [FieldsNotStr((1, 2))],
    "sizes are leaves": [torch.Size([2, 3]), turnout.Size([2, 3]), U2.shape],
    "set and range are leaves": [{1, 2}, range(3), frozenset()],
    "tensors mixed": [T1, (U1, [T2, {"u": U2}]), None],
    "nested mix": {"args": (U1, [1, None], Point(T1, {"z": ()})),
                   "kwargs": OrderedDict(alpha=2, out=None)},
    "dispatch args": ((U1, U2, [U1, 3]), {"dim": 0, "keepdim": True}),
    "deep 30": deep(30, U1),
    "deep 200": deep(200, None),
}
IDS = list(CASES)


def plain(tree):
    """A pytree as nested (type name, contents) pairs, dict keys in order,
    leaves by identity (their id) -- comparable across the two modules."""
    cls = type(tree)
    if cls in (list, tuple) or (cls.__bases__ == (tuple,) and hasattr(cls, "_fields")
                                and cls is not FieldsNotStr):
        return (cls.__name__, [plain(v) for v in tree])
    if cls in (dict, OrderedDict):
        return (cls.__name__, [(k, plain(v)) for k, v in tree.items()])
    return ("leaf", id(tree))


_MARKS = {}


def mark(x):
    """One marker object per leaf, the same for both modules' maps (the
    leaves are alive in CASES, so their ids are stable)."""
    return _MARKS.setdefault((id(x), type(x)), object())


def outcome(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 -- the kind is what is compared
        return f"raised {type(e).__name__}"


@pytest.mark.parametrize("name", IDS)
def test_flatten_gives_torchs_leaves_and_spec(name):
    tree = CASES[name]
    their_leaves, their_spec = theirs.tree_flatten(tree)
    our_leaves, our_spec = ours.tree_flatten(tree)
    assert [id(x) for x in our_leaves] == [id(x) for x in their_leaves]
    assert repr(our_spec) == repr(their_spec)
    assert str(our_spec) == str(their_spec)
    assert our_spec.num_leaves == their_spec.num_leaves == len(our_leaves)
    assert ours._is_leaf(tree) == theirs._is_leaf(tree)


@pytest.mark.parametrize("name", IDS)
def test_unflatten_round_trips_as_torchs(name):
    tree = CASES[name]
    leaves, spec = ours.tree_flatten(tree)
    back = ours.tree_unflatten(leaves, spec)
    assert plain(back) == plain(tree)
    # New leaves (and a tuple of them) into both modules' specs.
    fresh = [object() for _ in leaves]
    their_spec = theirs.tree_flatten(tree)[1]
    assert plain(ours.tree_unflatten(fresh, spec)) == \
        plain(theirs.tree_unflatten(fresh, their_spec))
    assert plain(ours.tree_unflatten(tuple(fresh), spec)) == \
        plain(theirs.tree_unflatten(tuple(fresh), their_spec))


def test_spec_equality_is_torchs_over_every_pair():
    their_specs = [theirs.tree_flatten(CASES[n])[1] for n in IDS]
    our_specs = [ours.tree_flatten(CASES[n])[1] for n in IDS]
    their_eq = [[a == b for b in their_specs] for a in their_specs]
    our_eq = [[a == b for b in our_specs] for a in our_specs]
    our_ne = [[a != b for b in our_specs] for a in our_specs]
    assert our_eq == their_eq
    assert our_ne == [[not e for e in row] for row in their_eq]
    # Distinct objects of the same shape are equal; insertion order counts.
    assert ours.tree_flatten({"a": 1, "b": [2]})[1] == ours.tree_flatten({"a": 5, "b": [6]})[1]
    assert ours.tree_flatten(CASES["dict a b"])[1] != ours.tree_flatten(CASES["dict b a"])[1]


def test_spec_construction_and_attributes_are_torchs():
    def case(m):
        leaf = m.LeafSpec()
        spec = m.TreeSpec(dict, ["a", "b"], [leaf, m.TreeSpec(list, None, [leaf, leaf])])
        empty = m.TreeSpec(tuple, None, [])
        return [repr(leaf), leaf.type, leaf.context, leaf.children_specs,
                leaf.num_leaves, repr(spec), spec.num_leaves, repr(empty),
                empty.num_leaves, empty == m.TreeSpec(tuple, None, []),
                leaf == m.TreeSpec(None, None, []),
                spec == m.tree_flatten({"a": 0, "b": [1, 2]})[1],
                outcome(lambda: hash(spec)), outcome(lambda: hash(leaf))]
    assert case(ours) == case(theirs)
    # torch 1.13 raises AttributeError comparing a spec with another value;
    # turnout answers False.
    assert (ours.LeafSpec() == 3) is False
    assert ours.TreeSpec(list, None, []) != [1]


def test_namedtuple_specs_hold_the_class():
    leaves, spec = ours.tree_flatten(Point(1, 2))
    assert spec.type is namedtuple and spec.context is Point
    assert repr(spec) == f"TreeSpec(namedtuple, {Point}, [*, *])"
    assert type(ours.tree_unflatten([3, 4], spec)) is Point
    assert set(ours.SUPPORTED_NODES) == {dict, list, tuple, namedtuple, OrderedDict}
    assert set(ours.SUPPORTED_NODES) <= set(theirs.SUPPORTED_NODES)
    flatten, unflatten = ours.SUPPORTED_NODES[dict]
    assert flatten({"k": 1}) == ([1], ["k"])
    assert unflatten([2], ["k"]) == {"k": 2}


@pytest.mark.parametrize("name", IDS)
def test_tree_map_calls_and_results_are_torchs(name):
    tree = CASES[name]

    def case(m):
        calls = []

        def fn(x):
            calls.append(id(x))
            return mark(x)
        return plain(m.tree_map(fn, tree)), calls

    (their_tree, their_calls), (our_tree, our_calls) = case(theirs), case(ours)
    assert our_calls == their_calls
    assert our_tree == their_tree


TYPES = [int, (int, float), str, type(None), torch.Tensor, turnout.Tensor,
         (torch.Tensor, turnout.Tensor), Point, object, bytes]


@pytest.mark.parametrize("ty", TYPES, ids=repr)
@pytest.mark.parametrize("name", IDS)
def test_only_variants_are_torchs(name, ty):
    tree = CASES[name]

    def case(m):
        seen = []

        def fn(x):
            seen.append(id(x))
            return mark(x)

        def pred(x):
            seen.append(id(x))
            return isinstance(x, (int, turnout.Tensor)) and not isinstance(x, bool)
        mapped = plain(m.tree_map_only(ty, fn, tree))
        decorated = plain(m.tree_map(m.map_only(ty)(fn), tree))
        return (mapped, decorated, m.tree_all(pred, tree), m.tree_any(pred, tree),
                m.tree_all_only(ty, pred, tree), m.tree_any_only(ty, pred, tree),
                seen)
    assert case(ours) == case(theirs)


def test_tree_all_and_any_stop_early_as_torchs():
    def case(m):
        seen = []

        def pred(answer):
            def check(x):
                seen.append(x)
                return x == answer
            return check
        results = (m.tree_all(pred(1), [1, 2, 3]), m.tree_any(pred(2), [1, 2, 3]),
                   m.tree_all_only(int, pred(1), [1, "s", 2, 3]),
                   m.tree_any_only(int, pred(1), [1, 2]),
                   m.tree_all(pred(0), []), m.tree_any(pred(0), {}))
        return results, seen
    assert case(ours) == case(theirs)


def test_map_only_keeps_the_function_name():
    @ours.map_only(int)
    def double(x):
        """Doubles."""
        return 2 * x
    assert (double.__name__, double.__doc__) == ("double", "Doubles.")
    assert double(3) == 6 and double("a") == "a"


class Pair:
    def __init__(self, first, second):
        self.first, self.second = first, second


def _pair_flatten(p):
    return [p.first, p.second], "pair-context"


def _pair_unflatten(children, context):
    assert context == "pair-context"
    return Pair(*children)


@pytest.fixture
def pair_registered():
    for m in (ours, theirs):
        m._register_pytree_node(Pair, _pair_flatten, _pair_unflatten)
    yield
    for m in (ours, theirs):
        m.SUPPORTED_NODES.pop(Pair, None)


def plain_pairs(tree):
    if isinstance(tree, Pair):
        return ("Pair", plain_pairs(tree.first), plain_pairs(tree.second))
    if isinstance(tree, (list, tuple)):
        return (type(tree).__name__, [plain_pairs(v) for v in tree])
    if isinstance(tree, dict):
        return ("dict", [(k, plain_pairs(v)) for k, v in tree.items()])
    return ("leaf", id(tree))


def test_registered_node_flattens_as_torchs(pair_registered):
    tree = {"p": Pair(U1, [Pair(None, 2), ()]), "q": [Pair({}, T1)]}

    def case(m):
        leaves, spec = m.tree_flatten(tree)
        back = m.tree_unflatten(leaves, spec)
        mapped = m.tree_map(mark, tree)
        return ([id(x) for x in leaves], repr(spec), spec.num_leaves,
                plain_pairs(back), plain_pairs(mapped))
    assert case(ours) == case(theirs)
    assert "TreeSpec(Pair, pair-context, [*, TreeSpec(list" in case(ours)[1]
    # Registering again replaces the functions, as torch does.
    ours._register_pytree_node(Pair, lambda p: ([p.first], None),
                               lambda c, _: Pair(c[0], "fixed"))
    assert ours.tree_flatten(Pair(1, 2))[0] == [1]
    assert ours.tree_unflatten([5], ours.tree_flatten(Pair(1, 2))[1]).second == "fixed"


def test_registration_errors():
    cases = [
        ((3, _pair_flatten, _pair_unflatten), "expected typ to be a type, got int"),
        ((Pair, None, _pair_unflatten), "expected flatten_fn to be callable, got NoneType"),
        ((Pair, _pair_flatten, "f"), "expected unflatten_fn to be callable, got str"),
    ]
    for args, message in cases:
        with pytest.raises(TypeError, match=message):
            ours._register_pytree_node(*args)
        assert Pair not in ours.SUPPORTED_NODES


def test_a_bad_flatten_fn_is_named():
    class Bad:
        pass
    ours._register_pytree_node(Bad, lambda b: 7, lambda c, _: Bad())
    try:
        with pytest.raises(TypeError, match=r"the flatten_fn registered for Bad "
                           r"returned int 7; expected a pair \(list of children, context\)"):
            ours.tree_flatten([Bad()])
    finally:
        del ours.SUPPORTED_NODES[Bad]


def _bad_unflattens(m):
    """(what, call) pairs of bad tree_unflatten calls on module m."""
    spec = m.tree_flatten({"a": [1, 2], "b": None})[1]
    leaf = m.LeafSpec()
    unregistered = m.TreeSpec(Pair, "pair-context", [leaf, leaf])
    return [
        ("too few", lambda: m.tree_unflatten([1, 2], spec)),
        ("too many", lambda: m.tree_unflatten([1, 2, 3, 4], spec)),
        ("none for a leaf", lambda: m.tree_unflatten([], leaf)),
        ("two for a leaf", lambda: m.tree_unflatten([1, 2], leaf)),
        ("one for an empty tuple", lambda: m.tree_unflatten([1], m.tree_flatten(())[1])),
        ("spec None", lambda: m.tree_unflatten([1], None)),
        ("spec a list", lambda: m.tree_unflatten([1], [leaf])),
        ("spec and values swapped", lambda: m.tree_unflatten(spec, [1, 2, 3])),
        ("values a generator", lambda: m.tree_unflatten((x for x in [1, 2, 3]), spec)),
        ("values an int", lambda: m.tree_unflatten(3, leaf)),
        ("unregistered node type", lambda: m.tree_unflatten([1, 2], unregistered)),
    ]


def test_bad_unflatten_raises_torchs_kinds():
    theirs_out = {what: outcome(call) for what, call in _bad_unflattens(theirs)}
    ours_out = {what: outcome(call) for what, call in _bad_unflattens(ours)}
    assert ours_out == theirs_out
    assert all(v.startswith("raised") for v in ours_out.values())


def test_bad_unflatten_messages():
    spec = ours.tree_flatten({"a": [1, 2], "b": None})[1]
    with pytest.raises(ValueError, match=(
            r"^tree_unflatten\(values, spec\): got 2 values but the spec holds 3 "
            r"leaves: TreeSpec\(dict, \['a', 'b'\], \[TreeSpec\(list, None, "
            r"\[\*, \*\]\), \*\]\); pass one value per leaf, in tree_flatten's order$")):
        ours.tree_unflatten([1, 2], spec)
    with pytest.raises(ValueError, match="expected spec to be a TreeSpec .*got list"):
        ours.tree_unflatten([1], [1])
    with pytest.raises(TypeError, match="expected values to be a list of leaves, got generator"):
        ours.tree_unflatten((x for x in [1]), ours.LeafSpec())
    with pytest.raises(KeyError, match="node type Pair is not registered"):
        ours.tree_unflatten([1], ours.TreeSpec(Pair, None, [ours.LeafSpec()]))


@pytest.mark.parametrize("ty", [3, "int", [int], None])
def test_bad_types_for_the_only_variants(ty):
    calls = [
        lambda: ours.map_only(ty),
        lambda: ours.tree_map_only(ty, str, [1]),
        lambda: ours.tree_all_only(ty, bool, [1]),
        lambda: ours.tree_any_only(ty, bool, [1]),
    ]
    for call in calls:
        with pytest.raises(TypeError, match="expected ty to be a type or a tuple of types"):
            call()
    # torch raises the same kind once a leaf is checked.
    assert outcome(lambda: theirs.tree_map_only(ty, str, [1])) == "raised TypeError"


BROADCASTS = [
    (0, [1, 2]),
    (None, {"a": 1, "b": (2, 3)}),
    ((0, 1), (5, [6, 7])),
    ((0, 1), [5, 6]),
    ([0, 1], [5, 6, 7]),
    ({"a": 0, "b": 1}, {"a": 5, "b": [6, 7]}),
    ({"b": 0, "a": 1}, {"a": 5, "b": [6, 7]}),
    (Point(0, 1), Point(5, (6, 7))),
    (Point(0, 1), (5, 6)),
    ([0], 5),
    ((), ()),
    ([0, [1]], [5, [6, [7, 8]]]),
    (OrderedDict(a=0), {"a": 5}),
    (U1, [[T1, U1], {"k": None}]),
]


@pytest.mark.parametrize("pytree,target", BROADCASTS, ids=range(len(BROADCASTS)))
def test_broadcast_to_and_flatten_is_torchs(pytree, target):
    def case(m):
        result = m._broadcast_to_and_flatten(pytree, m.tree_flatten(target)[1])
        return None if result is None else [id(x) for x in result]
    assert case(ours) == case(theirs)


def test_broadcast_needs_a_spec():
    with pytest.raises(TypeError, match=r"_broadcast_to_and_flatten\(pytree, spec\): "
                       r"expected spec to be a TreeSpec, got list"):
        ours._broadcast_to_and_flatten(0, [1])


def test_docstring_examples():
    failures, attempted = doctest.testmod(ours)
    assert attempted > 10 and failures == 0


# A wrapper subclass as it is written for torch; turnout runs it after the
# two renames the issue promises, nothing else.
TORCH_SOURCE = '''
import torch
from torch.utils._pytree import tree_any, tree_flatten, tree_map, tree_map_only, tree_unflatten


class LoggingTensor(torch.Tensor):
    """Unwraps its arguments, runs func on them, rewraps the results."""
    log = []

    @staticmethod
    def __new__(cls, elem):
        r = torch.Tensor._make_wrapper_subclass(
            cls, elem.size(), strides=elem.stride(), dtype=elem.dtype,
            device=elem.device)
        r.elem = elem
        return r

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(e):
            return e.elem if isinstance(e, LoggingTensor) else e

        def wrap(e):
            return LoggingTensor(e) if isinstance(e, torch.Tensor) else e

        cls.log.append(str(func))
        out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))
        return tree_map(wrap, out)


class CountingTensor(torch.Tensor):
    """The same with tree_map_only, tree_flatten and tree_unflatten."""
    log = []

    @staticmethod
    def __new__(cls, elem):
        r = torch.Tensor._make_wrapper_subclass(
            cls, elem.size(), dtype=elem.dtype, device=elem.device)
        r.elem = elem
        return r

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        flat, spec = tree_flatten((args, kwargs or {}))
        cls.log.append((str(func), len(flat),
                        tree_any(lambda e: isinstance(e, CountingTensor), flat)))
        flat = [e.elem if isinstance(e, CountingTensor) else e for e in flat]
        args, kwargs = tree_unflatten(flat, spec)
        out = func(*args, **kwargs)
        return tree_map_only(torch.Tensor, CountingTensor, out)


def program(W):
    x = W(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    y = W(torch.tensor([0.5, -1.0]))
    a = x + y
    b = torch.add(a, y, alpha=2)
    c = torch.cat([x, b], dim=1)
    d = torch.stack((a.sum(0), b.mean(1)))
    e = torch.where(x > 2, x, y)
    f = (x.t().contiguous(), x.view(4))
    g = c.split(1, dim=1)
    h = (x * 3).relu().neg()
    return {"a": a, "b": b, "c": c, "d": d, "e": e, "f": list(f), "g": list(g), "h": h}
'''


def port(source):
    return source.replace("__torch_dispatch__", "__turnout_dispatch__") \
                 .replace("torch", "turnout")


def run_source(source, wrapper):
    namespace = {}
    exec(compile(source, f"<{wrapper} example>", "exec"), namespace)
    W = namespace[wrapper]
    out = namespace["program"](W)
    results = {k: [(type(t).__name__, t.elem.tolist()) for t in
                   (v if isinstance(v, list) else [v])] for k, v in out.items()}
    return W.log, results


@pytest.mark.parametrize("wrapper", ["LoggingTensor", "CountingTensor"])
def test_a_torch_wrapper_subclass_runs_renamed(wrapper):
    their_log, their_results = run_source(TORCH_SOURCE, wrapper)
    our_log, our_results = run_source(port(TORCH_SOURCE), wrapper)
    assert "turnout.utils._pytree import" in port(TORCH_SOURCE)
    assert our_log == their_log
    assert our_results == their_results
    assert len(our_log) >= 12
    assert {t for ts in our_results.values() for t, _ in ts} == {wrapper}
