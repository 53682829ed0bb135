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

__all__ = ["OpCheckError", "opcheck"]

DEFAULT_TEST_UTILS = (
    "test_schema",
    "test_autograd_registration",
    "test_faketensor",
    "test_graph",
)


class OpCheckError(Exception):
    """A test of :func:`opcheck` failed; the message says which rule broke."""


def _binds(qualname: str, overload: str, args: tuple, kwargs: dict) -> bool:
    try:
        _C._opcheck(qualname, overload, args, kwargs, [], 1e-6, 1e-5, 1e-3)
    except (TypeError, ValueError):
        return False
    return True


def _resolve(op: Any, args: tuple, kwargs: dict) -> Tuple[str, str]:
    """The (qualified name, overload) that ``op`` names for these arguments.

    ``op`` is anything ``turnout.library`` takes for an operator (its
    ``_resolve_op``). A packet, or a name without an overload, of an
    operator with several overloads means the one overload that accepts
    ``args`` (the default one where several do).
    """
    from turnout.library import _resolve_op  # turnout.library imports this module

    ref = _resolve_op(op, "opcheck(op)", several=True)
    overloads = list(ref.overloads)
    if len(overloads) > 1:
        fitting = [o for o in overloads
                   if _binds(ref.name, o or "default", args, kwargs)]
        if "" in fitting:
            fitting = [""]
        if len(fitting) != 1:
            shown = ", ".join(o or "default" for o in fitting) or "none"
            first = (fitting or overloads)[0] or "default"
            raise ValueError(
                f"opcheck: {ref.name} has {len(overloads)} overloads and "
                f"{len(fitting)} of them accept these arguments ({shown}); "
                f"pass one overload, e.g. "
                f"turnout.ops.{ref.name.replace('::', '.')}.{first}")
        overloads = fitting
    return ref.name, overloads[0] or "default"


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
