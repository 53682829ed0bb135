"""``turnout.library.opcheck``: is an operator's registration right?

The checks are turnout's C++ ``testing::opcheck`` (testing/opcheck.h), the
same code a C++ operator library runs in GoogleTest with
``EXPECT_OPCHECK_OK``, so both languages report the same messages.

Example::

    >>> import turnout
    >>> from turnout.library import opcheck
    >>> x = turnout.tensor([[1.0, -2.0], [3.0, 0.5]])
    >>> opcheck(turnout.ops.aten.mm.default, (x, x))
    {'test_schema': 'SUCCESS', 'test_autograd_registration': 'SUCCESS', 'test_faketensor': 'SUCCESS', 'test_graph': 'SUCCESS'}
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple, Union

from turnout import _C
from turnout._ops import OpOverload, OpOverloadPacket

__all__ = ["OpCheckError", "opcheck"]

DEFAULT_TEST_UTILS = (
    "test_schema",
    "test_autograd_registration",
    "test_faketensor",
    "test_graph",
)


class OpCheckError(Exception):
    """A test of :func:`opcheck` failed; the message says which rule broke."""


def _split(qualname: str, where: str) -> Tuple[str, str]:
    """("ns::name", "overload") of "ns::name" or "ns::name.overload"."""
    if "::" not in qualname:
        raise ValueError(f"{where}: expected a qualified operator name "
                         f"'ns::name' or 'ns::name.overload', got {qualname!r}")
    ns, _, rest = qualname.partition("::")
    name, _, overload = rest.partition(".")
    return f"{ns}::{name}", overload or "default"


def _binds(qualname: str, overload: str, args: tuple, kwargs: dict) -> bool:
    try:
        _C._opcheck(qualname, overload, args, kwargs, [], 1e-6, 1e-5, 1e-3)
    except (TypeError, ValueError):
        return False
    return True


def _resolve(op: Any, args: tuple, kwargs: dict) -> Tuple[str, str]:
    """The (qualified name, overload) of whatever names an operator.

    A private stand-in for the library-wide helper that normalises ``op``
    (issue 16): a string, an OpOverload, an OpOverloadPacket with exactly
    one overload accepting ``args``, or what ``custom_op`` returns.
    """
    if isinstance(op, OpOverload):
        return op.overloadpacket._qualified_op_name, op._overloadname
    overload_of = getattr(op, "_opoverload", None)  # a CustomOpDef
    if isinstance(overload_of, OpOverload):
        return _resolve(overload_of, args, kwargs)
    if isinstance(op, OpOverloadPacket):
        qualname = op._qualified_op_name
        overloads = op.overloads()
        fitting = [o for o in overloads if _binds(qualname, o, args, kwargs)]
        if len(fitting) != 1:
            found = ", ".join(fitting) if fitting else "none"
            raise ValueError(
                f"opcheck: the packet {qualname} has {len(overloads)} "
                f"overloads and {len(fitting)} of them accept these arguments "
                f"({found}); pass one overload, e.g. "
                f"turnout.ops.{qualname.replace('::', '.')}."
                f"{(fitting or overloads)[0]}")
        return qualname, fitting[0]
    if isinstance(op, str):
        return _split(op, "opcheck(op)")
    raise TypeError(f"opcheck: expected op to be an OpOverload, an "
                    f"OpOverloadPacket, a custom op or a qualified name str, "
                    f"got {type(op).__name__}")


def opcheck(op: Any, args: Sequence[Any], kwargs: Optional[Dict[str, Any]] = None,
            *, test_utils: Union[str, Sequence[str]] = DEFAULT_TEST_UTILS,
            raise_exception: bool = True) -> Dict[str, Union[str, Exception]]:
    """Checks an operator's registration on sample arguments, as
    ``torch.library.opcheck`` does.

    Each test runs the operator on copies of ``args`` (the caller's tensors
    are never changed):

    - ``test_schema``: from the schema alone, arguments not marked mutable
      (``Tensor(a!)``) are not mutated (values, sizes, strides, storage
      offset, dtype); outputs annotated as aliases (``Tensor(a)``) are views
      of their argument and the others alias no argument; a returned
      ``Tensor(a!)`` is the argument itself.
    - ``test_autograd_registration``: with the floating-point arguments
      requiring grad, the call reaches an autograd kernel (or a
      CompositeImplicitAutograd one), unless the operator returns no
      floating-point tensor; then :func:`turnout.autograd.gradcheck` passes
      (on double copies).
    - ``test_faketensor``: the Meta kernel exists and gives the real
      kernel's sizes, strides, dtype and aliasing on meta copies, and
      raises where the real kernel raises a shape error.
    - ``test_graph``: traced and run by a GraphExecutor, the operator gives
      the eager result, and shape propagation agrees with it.

    Args:
        op: an OpOverload, an OpOverloadPacket with exactly one overload
            accepting ``args``, what ``custom_op`` returns, or a name
            ``"ns::name"`` / ``"ns::name.overload"``.
        args: the positional arguments.
        kwargs: the keyword arguments.
        test_utils: the tests to run (a name or a sequence of names).
        raise_exception: raise the first failure as :class:`OpCheckError`
            instead of returning it in the dict.

    Returns:
        A dict from test name to ``"SUCCESS"`` or the :class:`OpCheckError`
        of its failure, in the order run.

    Raises:
        OpCheckError: a test failed (when ``raise_exception``); the message
            names the argument or output, the rule and the schema annotation.
        ValueError: an unknown test name, or ``op`` names no operator.
        TypeError: ``args`` do not fit the schema.

    Example::

        >>> import turnout
        >>> from turnout.library import Library, opcheck
        >>> lib = Library("opcheck_doc", "DEF")
        >>> lib.define("flat(Tensor x) -> Tensor")
        'opcheck_doc::flat'
        >>> lib.impl("flat", lambda x: x.view(-1), "CPU")
        >>> result = opcheck("opcheck_doc::flat", (turnout.ones(2, 2),),
        ...                  test_utils="test_schema", raise_exception=False)
        >>> print(result["test_schema"])
        output 0 aliases argument 'x' (they share storage) but its schema type is 'Tensor', not 'Tensor(a)': ...
        >>> lib._destroy()
    """
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    tests = list(test_utils)
    for t in tests:
        if t not in DEFAULT_TEST_UTILS:
            raise ValueError(f"opcheck: unknown test {t!r} in test_utils; the "
                             f"tests are {', '.join(DEFAULT_TEST_UTILS)}")
    if kwargs is None:
        kwargs = {}
    if not isinstance(kwargs, dict):
        raise TypeError(f"opcheck: expected kwargs to be a dict or None, got "
                        f"{type(kwargs).__name__}")
    args = tuple(args)
    qualname, overload = _resolve(op, args, kwargs)
    rows = _C._opcheck(qualname, overload, args, kwargs, tests, 1e-6, 1e-5, 1e-3)
    results: Dict[str, Union[str, Exception]] = {}
    name = qualname if overload == "default" else f"{qualname}.{overload}"
    for test, ok, message in rows:
        if ok:
            results[test] = "SUCCESS"
            continue
        error = OpCheckError(message)
        if raise_exception:
            raise OpCheckError(f"opcheck({name}): {test} failed: {message}") from error
        results[test] = error
    return results
