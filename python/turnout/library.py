"""``turnout.library``: define operators and register kernels from Python.

A :class:`Library` registers schemas, kernels and fallbacks with the
dispatcher and deregisters all of them when it is dropped (or
``_destroy()``-ed, or when a :func:`scoped_library` block ends), so that
re-running a notebook cell replaces what the previous run registered.
:func:`custom_op` builds an operator from a type-annotated Python function.
As torch 2.x's ``torch.library``, :func:`register_kernel`,
:func:`register_fake` (:func:`impl_abstract`), :func:`register_autograd`
and :func:`register_torch_dispatch` add to any operator (a custom op, one
from :meth:`Library.define`, or one defined in C++), named as a string, an
OpOverload, a packet or a custom op; :func:`get_ctx` serves fake kernels.

A Python kernel receives the operator's arguments as Python objects (the
keyword-only ones as keywords), and its result is checked against the
schema's returns. An exception it raises reaches the caller unchanged, with
its traceback.

Example::

    >>> import turnout
    >>> from turnout.library import Library
    >>> lib = Library("doc_lib", "DEF")
    >>> lib.define("scale(Tensor x, float s) -> Tensor")
    'doc_lib::scale'
    >>> lib.impl("scale", lambda x, s: x * s, "CPU")
    >>> turnout.ops.doc_lib.scale(turnout.ones(2), 3.0)
    tensor([3., 3.])
    >>> lib._destroy()
"""

from __future__ import annotations

import builtins
import collections.abc
import contextlib
import functools
import inspect
import sys
import threading
import typing
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from turnout import _C
from turnout._opcheck import opcheck
from turnout._ops import OpOverload, OpOverloadPacket, ops
from turnout._tensor import Tensor

__all__ = [
    "CustomOpDef", "Library", "custom_op", "define", "fallthrough_kernel",
    "get_ctx", "impl", "impl_abstract", "infer_schema", "opcheck",
    "register_autograd", "register_fake", "register_kernel",
    "register_torch_dispatch", "scoped_library",
]

_KINDS = ("DEF", "IMPL", "FRAGMENT")
_ALIAS_ANALYSIS_KINDS = ("", "FROM_SCHEMA", "CONSERVATIVE", "PURE_FUNCTION")
# Namespaces no DEF library may take (torch.library's list).
_RESERVED_NAMESPACES = ("prim",)

# Device types as custom_op / impl take them, to dispatch keys.
_DEVICE_TO_KEY = {
    "cpu": "CPU",
    "cuda": "CUDA",
    "meta": "Meta",
    "xla": "XLA",
    "privateuseone": "PrivateUse1",
}


def fallthrough_kernel() -> None:
    """A marker kernel: ``lib.impl(name, fallthrough_kernel, key)`` makes
    the dispatcher skip ``key`` for that operator (and ``lib.fallback(
    fallthrough_kernel, key)`` for every operator)."""
    raise NotImplementedError("fallthrough_kernel is a marker; it is never called")


def _caller_site() -> Tuple[str, int]:
    """The user's file and line: the first frame outside this module and
    contextlib (scoped_library)."""
    frame = sys._getframe(1)
    skip = (__file__, contextlib.__file__)
    while frame is not None and frame.f_code.co_filename in skip:
        frame = frame.f_back
    if frame is None:
        return "/dev/null", 0
    return frame.f_code.co_filename, frame.f_lineno


def _forget_cached_packet(qualname: str) -> None:
    # turnout.ops caches packets with a copy of the schema; a redefinition
    # (a notebook cell run again) must not call through a stale copy.
    ns, _, name = qualname.partition("::")
    namespace = ops.__dict__.get(ns)
    if namespace is not None:
        namespace.__dict__.pop(name.split(".", 1)[0], None)


def _op_name(op: Any, where: str) -> str:
    if isinstance(op, OpOverload):
        return op.name()
    if isinstance(op, OpOverloadPacket):
        return op._qualified_op_name
    if isinstance(op, str):
        return op
    raise TypeError(f"{where}: expected the operator name to be a str (or an "
                    f"OpOverload), got {type(op).__name__}")


def _find_schema(qualname: str) -> Optional[Any]:
    name, _, overload = qualname.partition(".")
    try:
        return _C._OpOverload(name, overload or "default")._schema
    except ValueError:
        return None


def _check_kernel_signature(fn: Callable, schema: Any, with_keyset: bool,
                            where: str) -> None:
    """Raises TypeError when ``fn`` cannot take the schema's arguments."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # a builtin without a signature: checked at call time
    positional: List[Any] = [None] * (1 if with_keyset else 0)
    keywords: Dict[str, Any] = {}
    for arg in schema.arguments:
        if arg.kwarg_only:
            keywords[arg.name] = None
        else:
            positional.append(None)
    try:
        sig.bind(*positional, **keywords)
    except TypeError as e:
        takes = ("the DispatchKeySet, then " if with_keyset else "")
        raise TypeError(
            f"{where}: the kernel {getattr(fn, '__qualname__', fn)}{sig} cannot "
            f"take the arguments of {schema} ({e}); it is called with "
            f"{takes}the positional arguments in order and the keyword-only "
            f"ones by name") from None


class Library:
    """A set of registrations that lives as long as this object.

    Args:
        ns: the namespace, e.g. ``"mylib"`` (``"_"`` with ``"IMPL"`` for
            fallbacks that apply to every namespace).
        kind: ``"DEF"`` (defines the namespace; one per namespace),
            ``"FRAGMENT"`` (more definitions for a namespace defined
            elsewhere, any number) or ``"IMPL"`` (kernels only).
        dispatch_key: the key that ``impl`` and ``fallback`` use when they
            are given none, e.g. ``"CPU"``.

    Dropping the object, calling :meth:`_destroy` or leaving a
    :func:`scoped_library` block deregisters everything it registered.
    A kernel that refers to its own Library keeps it alive through the
    dispatcher; call ``_destroy()`` (or use ``scoped_library``) to be sure.

    Raises:
        ValueError: a bad kind or key, a reserved namespace (``prim``) for
            a DEF library, or a second DEF library for ``ns`` (the message
            names both registration sites).

    Example::

        >>> import turnout
        >>> from turnout.library import Library
        >>> lib = Library("doc_lib2", "FRAGMENT")
        >>> lib.define("twice(Tensor x) -> Tensor")
        'doc_lib2::twice'
        >>> lib.impl("twice", lambda x: x + x, "CompositeExplicitAutograd")
        >>> turnout.ops.doc_lib2.twice(turnout.tensor([1.0, 2.0]))
        tensor([2., 4.])
        >>> del lib   # deregisters both
        >>> "doc_lib2::twice" in turnout._C._dispatch_get_all_op_names()
        False
    """

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if not isinstance(ns, str):
            raise TypeError(f"Library(ns, kind): expected ns to be a str, got "
                            f"{type(ns).__name__}")
        if kind not in _KINDS:
            # As torch.library.Library: "Unsupported kind" and the kind.
            raise ValueError(f"Unsupported kind: {kind!r}; Library({ns!r}, "
                             f"kind) takes kind {', '.join(_KINDS)}")
        if kind == "DEF" and ns in _RESERVED_NAMESPACES:
            raise ValueError(f"{ns} is a reserved namespace. Choose another "
                             f"name for the library.")
        if not isinstance(dispatch_key, str):
            raise TypeError(f"Library({ns!r}, {kind!r}, dispatch_key): expected "
                            f"dispatch_key to be a str, got "
                            f"{type(dispatch_key).__name__}")
        file, line = _caller_site()
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._site = (file, line)
        self._lib: Any = _C._dispatch_library(kind, ns, dispatch_key, file, line)
        self._fallback_libs: Dict[str, Any] = {}
        self._defined: List[str] = []
        # What the module-level register_* functions registered with lib=self.
        self._owned: List[_Registration] = []

    def __repr__(self) -> str:
        state = "" if self._lib is not None else ", destroyed"
        return (f"Library(kind={self.kind}, ns={self.ns}, "
                f"dispatch_key={self.dispatch_key}{state})")

    def _get(self, what: str) -> Any:
        if self._lib is None:
            raise RuntimeError(f"{what}: this Library ({self.ns}, {self.kind}) was "
                               f"destroyed; make a new one")
        return self._lib

    def define(self, schema: str, alias_analysis: str = "",
               tags: Sequence[str] = ()) -> str:
        """Declares an operator by its schema.

        Args:
            schema: e.g. ``"scale(Tensor x, float s) -> Tensor"``; the
                namespace, when given, must be the library's.
            alias_analysis: ``""`` / ``"FROM_SCHEMA"``, ``"CONSERVATIVE"`` or
                ``"PURE_FUNCTION"``.
            tags: a tag or a sequence of tags, each an identifier string
                such as ``"pointwise"`` (torch.library's ``torch.Tag``
                values, spelled as strings). They are kept with the schema:
                ``turnout.ops.<ns>.<name>.<overload>.tags``.

        Returns:
            The qualified name, ``"ns::name"``.

        Raises:
            ValueError: the schema does not parse, the operator already has
                a schema, the library is an IMPL one, or a tag is not an
                identifier or is given twice.
            TypeError: a tag is not a str.
            RuntimeError: ``alias_analysis`` is not one of the kinds above.

        Example::

            >>> from turnout.library import Library
            >>> lib = Library("doc_lib3", "DEF")
            >>> lib.define("f(Tensor x, *, int n=2) -> Tensor")
            'doc_lib3::f'
            >>> lib.define("g(Tensor x) -> Tensor", tags=("pointwise", "core"))
            'doc_lib3::g'
            >>> import turnout
            >>> turnout.ops.doc_lib3.g.default.tags
            ['pointwise', 'core']
        """
        if not isinstance(schema, str):
            raise TypeError(f"define(schema): expected schema to be a str, got "
                            f"{type(schema).__name__}")
        lib = self._get(f"define({schema!r})")
        if alias_analysis not in _ALIAS_ANALYSIS_KINDS:
            # As torch.library: RuntimeError "Invalid alias_analysis type".
            raise RuntimeError(
                f"Invalid alias_analysis type {alias_analysis!r}; define() "
                f"takes one of {', '.join(map(repr, _ALIAS_ANALYSIS_KINDS))}")
        if isinstance(tags, str):
            tags = (tags,)
        elif tags is not None and not isinstance(tags, (tuple, list)):
            try:
                tags = tuple(tags)
            except TypeError:
                raise TypeError(f"define({schema!r}): expected tags to be a str "
                                f"or a sequence of str, got "
                                f"{type(tags).__name__}") from None
        lib.define(schema, alias_analysis, tags=tags)
        name = _C.parse_schema(schema).name
        qualname = name if "::" in name else f"{self.ns}::{name}"
        self._defined.append(qualname)
        _forget_cached_packet(qualname)
        return qualname

    def impl(self, op_name: Union[str, OpOverload], fn: Callable,
             dispatch_key: str = "", *, with_keyset: bool = False) -> None:
        """Registers the Python callable ``fn`` as a kernel of ``op_name``.

        Args:
            op_name: ``"name"``, ``"name.overload"``, ``"ns::name"`` or an
                :class:`OpOverload`.
            fn: called as ``fn(*args, **kwarg_only_args)``, or with
                ``with_keyset`` as ``fn(keyset, *args, **kwarg_only_args)``;
                returns what the schema's returns say (one value, a tuple of
                several, or None). :func:`fallthrough_kernel` registers a
                fallthrough.
            dispatch_key: e.g. ``"CPU"``, ``"Meta"``, ``"Autograd"``,
                ``"CompositeImplicitAutograd"``; ``""`` for the library's
                key, or CompositeImplicitAutograd when it has none.
            with_keyset: pass the call's DispatchKeySet first, so that the
                kernel can call ``op.redispatch(keyset - ..., *args)`` to run
                the kernels below its own key.

        Raises:
            TypeError: ``fn`` is not callable or cannot take the schema's
                arguments.
            ValueError: a bad key, or a key that differs from an IMPL
                library's.

        Example::

            >>> import turnout
            >>> from turnout.library import Library
            >>> lib = Library("doc_lib4", "DEF")
            >>> lib.define("neg2(Tensor x) -> Tensor")
            'doc_lib4::neg2'
            >>> lib.impl("neg2", lambda x: -x, "CPU")
            >>> turnout.ops.doc_lib4.neg2(turnout.ones(1))
            tensor([-1.])
        """
        name = _op_name(op_name, "impl(op_name, fn)")
        where = f"impl({name!r})"
        lib = self._get(where)
        if fn is fallthrough_kernel:
            lib.impl_fallthrough(name, dispatch_key)
            return
        if not callable(fn):
            raise TypeError(f"{where}: the kernel must be a callable, but found "
                            f"type {type(fn)}")
        qualname = name if "::" in name else f"{self.ns}::{name}"
        schema = _find_schema(qualname)
        if schema is not None:
            _check_kernel_signature(fn, schema, with_keyset, where)
        lib.impl(name, dispatch_key, fn, with_keyset)

    def fallback(self, fn: Callable, dispatch_key: str = "", *,
                 with_keyset: bool = False) -> None:
        """Registers ``fn`` as the backend fallback of ``dispatch_key``: it
        runs for every operator that has no kernel of its own at that key.

        Args:
            fn: called as ``fn(op, *args, **kwarg_only_args)``, or with
                ``with_keyset`` as ``fn(op, keyset, *args, **kwarg_only_args)``,
                where ``op`` is the called operator's :class:`OpOverload`
                (``op.redispatch(keyset.remove(key), *args, **kwargs)`` passes
                the call on). :func:`fallthrough_kernel` makes the key a
                fallthrough for every operator.
            dispatch_key: the key; ``""`` for the library's own.
            with_keyset: pass the call's DispatchKeySet first.

        Raises:
            ValueError: no key given and the library has none.

        Example::

            >>> import turnout
            >>> from turnout.library import Library, fallthrough_kernel
            >>> lib = Library("_", "IMPL")
            >>> lib.fallback(fallthrough_kernel, "XLA")
            >>> turnout._C._dispatch_has_backend_fallback(turnout.DispatchKey.XLA)
            True
            >>> lib._destroy()
        """
        key = dispatch_key or self.dispatch_key
        where = f"fallback(fn, {key!r})"
        lib = self._get(where)
        if not key:
            raise ValueError(f"{where}: no dispatch key: pass one (e.g. "
                             f"fallback(fn, 'CPU')) or make the Library with one")
        if fn is not fallthrough_kernel and not callable(fn):
            raise TypeError(f"{where}: the kernel must be a callable, but found "
                            f"type {type(fn)}")
        if self.kind == "IMPL" and self.dispatch_key == key:
            target = lib
        else:
            # The dispatcher takes fallbacks from IMPL libraries of their key
            # only: keep one per key, owned by this Library.
            target = self._fallback_libs.get(key)
            if target is None:
                target = _C._dispatch_library("IMPL", "_", key, *self._site)
                self._fallback_libs[key] = target
        if fn is fallthrough_kernel:
            target.fallback_fallthrough(key)
        else:
            target.fallback(key, fn, with_keyset)

    def _destroy(self) -> None:
        """Deregisters everything this library registered, now."""
        owned, self._owned = self._owned, []
        for registration in reversed(owned):
            registration.destroy()
        for lib in self._fallback_libs.values():
            lib._destroy()
        self._fallback_libs.clear()
        if self._lib is not None:
            self._lib._destroy()
            self._lib = None
        for qualname in self._defined:
            _forget_cached_packet(qualname)
        self._defined.clear()


@contextlib.contextmanager
def scoped_library(ns: str, kind: str, dispatch_key: str = "") -> Iterator[Library]:
    """A :class:`Library` whose registrations end with the ``with`` block.

    Example::

        >>> import turnout
        >>> from turnout.library import scoped_library
        >>> with scoped_library("doc_lib5", "FRAGMENT") as lib:
        ...     lib.define("one(Tensor x) -> Tensor")
        ...     lib.impl("one", lambda x: x * 0 + 1, "CPU")
        ...     turnout.ops.doc_lib5.one(turnout.zeros(2))
        'doc_lib5::one'
        tensor([1., 1.])
        >>> "doc_lib5::one" in turnout._C._dispatch_get_all_op_names()
        False
    """
    lib = Library(ns, kind, dispatch_key)
    try:
        yield lib
    finally:
        lib._destroy()


# Libraries made by the module-level define/impl, alive for the process.
_global_libraries: Dict[str, Library] = {}


def _global_library(ns: str) -> Library:
    lib = _global_libraries.get(ns)
    if lib is None:
        lib = Library(ns, "FRAGMENT")
        _global_libraries[ns] = lib
    return lib


def _split_qualname(qualname: Any, where: str) -> Tuple[str, str]:
    if not isinstance(qualname, str):
        raise TypeError(f"{where}: expected qualname to be a str, got "
                        f"{type(qualname).__name__}")
    ns, sep, name = qualname.partition("::")
    if not sep or not ns or not name:
        raise ValueError(f"{where}: expected a qualified name 'namespace::name', "
                         f"got {qualname!r}")
    return ns, name


def define(qualname: str, schema: str, *, lib: Optional[Library] = None,
           tags: Sequence[str] = ()) -> str:
    """Defines operator ``qualname`` with ``schema`` (no name in it).

    Without ``lib`` the definition lives for the rest of the process.

    Args:
        qualname: ``"ns::name"`` (or ``"ns::name.overload"``).
        schema: the arguments and returns, e.g. ``"(Tensor x) -> Tensor"``.
        lib: the Library that owns the definition.
        tags: as in :meth:`Library.define`.

    Returns:
        The qualified name without the overload.

    Example::

        >>> import turnout
        >>> from turnout.library import Library, define, impl
        >>> lib = Library("doc_lib6", "FRAGMENT")
        >>> define("doc_lib6::sq", "(Tensor x) -> Tensor", lib=lib)
        'doc_lib6::sq'
        >>> @impl("doc_lib6::sq", "cpu", lib=lib)
        ... def sq(x):
        ...     return x * x
        >>> turnout.ops.doc_lib6.sq(turnout.tensor([3.0]))
        tensor([9.])
    """
    ns, name = _split_qualname(qualname, "define(qualname, schema)")
    if not isinstance(schema, str):
        raise TypeError(f"define(qualname, schema): expected schema to be a str, "
                        f"got {type(schema).__name__}")
    if lib is None:
        lib = _global_library(ns)
    elif lib.ns != ns:
        raise ValueError(f"define({qualname!r}): the namespace differs from lib's "
                         f"({lib.ns!r})")
    return lib.define(name + schema, tags=tags)


def _keys_of(types: Union[str, Sequence[str], None], where: str) -> List[str]:
    if types is None:
        return ["CompositeExplicitAutograd"]
    if isinstance(types, str):
        types = [types]
    keys = []
    for t in types:
        if not isinstance(t, str):
            raise TypeError(f"{where}: expected device types or dispatch keys as "
                            f"str, got {type(t).__name__}")
        if t in ("default", "CompositeExplicitAutograd"):
            keys.append("CompositeExplicitAutograd")
            continue
        key = _DEVICE_TO_KEY.get(t, t)
        try:
            _C._dispatch_key_parse(key)
        except ValueError:
            raise ValueError(
                f"{where}: unknown device type or dispatch key {t!r}; use one of "
                f"{', '.join(sorted(_DEVICE_TO_KEY))} or a key name such as "
                f"'CPU' or 'CompositeImplicitAutograd'") from None
        keys.append(key)
    return keys


def impl(qualname: str, types: Union[str, Sequence[str]],
         func: Optional[Callable] = None, *, lib: Optional[Library] = None,
         with_keyset: bool = False) -> Any:
    """Registers a kernel of ``qualname`` for device types or dispatch keys;
    a decorator when ``func`` is omitted.

    Args:
        qualname: ``"ns::name"`` or ``"ns::name.overload"``.
        types: ``"cpu"``, ``"cuda"``, ``"meta"``, ``"default"`` (every
            device: CompositeExplicitAutograd), a key name (``"CPU"``,
            ``"Autograd"``, ...) or a list of them.
        func: the kernel.
        lib: the Library that owns the registration (else it lives for the
            rest of the process).
        with_keyset: as in :meth:`Library.impl`.

    Returns:
        ``func`` (or a decorator that returns its argument).

    Example::

        >>> import turnout
        >>> from turnout.library import Library, define, impl
        >>> lib = Library("doc_lib7", "FRAGMENT")
        >>> define("doc_lib7::plus1", "(Tensor x) -> Tensor", lib=lib)
        'doc_lib7::plus1'
        >>> _ = impl("doc_lib7::plus1", "default", lambda x: x + 1, lib=lib)
        >>> turnout.ops.doc_lib7.plus1(turnout.zeros(1))
        tensor([1.])
    """
    where = f"impl({qualname!r}, {types!r})"
    ns, name = _split_qualname(qualname, where)
    keys = _keys_of(types, where)

    def register(fn: Callable) -> Callable:
        owner = lib if lib is not None else _global_library(ns)
        for key in keys:
            owner.impl(qualname, fn, key, with_keyset=with_keyset)
        return fn

    if func is None:
        return register
    return register(func)


# ---- Operators as users name them ------------------------------------------------


class _OpRef(typing.NamedTuple):
    """An operator as :func:`_resolve_op` found it."""

    name: str                    # "ns::name"
    overloads: Tuple[str, ...]   # "" for the default overload
    custom: Optional["CustomOpDef"]

    @property
    def qualname(self) -> str:
        """``"ns::name"`` or ``"ns::name.overload"`` (one overload only)."""
        (overload,) = self.overloads
        return self.name + ("." + overload if overload else "")

    @property
    def opoverload(self) -> OpOverload:
        (overload,) = self.overloads
        ns, name = self.name.split("::", 1)
        return getattr(getattr(getattr(ops, ns), name), overload or "default")


def _overloads_with_schema(name: str) -> List[str]:
    """The overload names ("" for the default) of ``name`` ("ns::op")."""
    found = []
    prefix = name + "."
    for full in _C._dispatch_get_all_op_names():
        if full == name:
            found.append("")
        elif full.startswith(prefix):
            found.append(full[len(prefix):])
    return sorted(found)


def _resolve_op(op: Any, where: str, *, several: bool = False) -> _OpRef:
    """The one place where an operator argument is understood.

    ``op`` may be ``"ns::name"``, ``"ns::name.overload"``, an
    :class:`OpOverload`, an :class:`OpOverloadPacket` or what
    :func:`custom_op` returns. A name without an overload, and a packet,
    mean the default overload (or the only one); with ``several`` they mean
    every overload, in the order explain tries them.

    Raises:
        TypeError: ``op`` is none of these.
        ValueError: the name is not qualified, or no such operator (or
            overload) has a schema, or a packet has several overloads and
            none is the default.
    """
    custom = None
    overload: Optional[str]
    if isinstance(op, CustomOpDef):
        custom = op
        name, overload = op._qualname, ""
    elif isinstance(op, OpOverload):
        name = op._overloadpacket._qualified_op_name
        overload = "" if op._overloadname == "default" else op._overloadname
    elif isinstance(op, OpOverloadPacket):
        name, overload = op._qualified_op_name, None
    elif isinstance(op, str):
        ns, sep, rest = op.partition("::")
        if not sep or not ns or not rest:
            raise ValueError(
                f"{where}: expected a qualified operator name such as "
                f"'aten::add.Tensor' or 'mylib::my_op', got '{op}'")
        base, dot, overload_text = rest.partition(".")
        name = f"{ns}::{base}"
        overload = ("" if overload_text == "default" else overload_text) if dot else None
    else:
        raise TypeError(
            f"{where}: expected op to be an operator name ('ns::name' or "
            f"'ns::name.overload'), an OpOverload (turnout.ops.aten.add.Tensor), "
            f"an OpOverloadPacket (turnout.ops.aten.add) or what custom_op "
            f"returns, got {type(op).__name__}")
    existing = _overloads_with_schema(name)
    if not existing:
        raise ValueError(
            f"{where}: no operator named '{name}' has a schema; check the "
            f"name, or define it first (Library.define, define or custom_op)")
    if overload is not None:
        if overload not in existing:
            shown = ", ".join(o or "default" for o in existing)
            raise ValueError(
                f"{where}: the operator {name} has no overload "
                f"'{overload}'; its overloads are: {shown}")
        overloads: Tuple[str, ...] = (overload,)
    elif several:
        overloads = tuple(existing)
    elif "" in existing or len(existing) == 1:
        overloads = ("" if "" in existing else existing[0],)
    else:
        raise ValueError(
            f"{where}: {name} has several overloads "
            f"({', '.join(existing)}) and none is the default; name one, e.g. "
            f"'{name}.{existing[0]}'")
    if custom is None and overloads == ("",):
        custom = _custom_ops.get(name)
    return _OpRef(name, overloads, custom)


# ---- Registrations owned by a Library --------------------------------------------


class _Registration:
    """One registration of the module-level register_* functions.

    Owned by a :class:`Library` (``lib=``) or by one that turnout keeps for
    the process; undone when the owner is destroyed or dropped.
    """

    def __init__(self, key: Tuple[str, str], site: Tuple[str, int],
                 undo: Callable[[], None]) -> None:
        self.key = key
        self.site = site
        self._undo: Optional[Callable[[], None]] = undo

    def destroy(self) -> None:
        undo, self._undo = self._undo, None
        if undo is None:
            return
        entry = _active.get(self.key)
        if entry is not None and entry() is self:
            del _active[self.key]
        undo()

    def __del__(self) -> None:
        try:
            self.destroy()
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass


# Live registrations by (operator, what), for "registered twice" errors.
_active: Dict[Tuple[str, str], "weakref.ref[_Registration]"] = {}


def _check_not_registered(key: Tuple[str, str], where: str, what: str) -> None:
    entry = _active.get(key)
    earlier = entry() if entry is not None else None
    if earlier is None or earlier._undo is None:
        return
    file, line = earlier.site
    raise RuntimeError(
        f"{where}: {key[0]} already has {what}, registered at {file}:{line}; "
        f"destroy the Library that owns it first (lib._destroy(), or leave "
        f"its scoped_library block). A registration made without lib= lasts "
        f"for the process: pass lib= to be able to replace it")


def _owner(lib: Optional[Library], ns: str, where: str) -> Library:
    """The Library that will own a registration; refuses a destroyed one
    before anything is registered."""
    owner = lib if lib is not None else _global_library(ns)
    owner._get(where)
    return owner


def _own(owner: Library, registration: _Registration) -> None:
    owner._owned.append(registration)
    _active[registration.key] = weakref.ref(registration)


def _check_lib(lib: Any, where: str) -> None:
    if lib is not None and not isinstance(lib, Library):
        raise TypeError(f"{where}: expected lib to be a turnout.library.Library "
                        f"or None, got {type(lib).__name__}")


def _register_kernel_owned(ref: _OpRef, key: str, fn: Callable,
                           lib: Optional[Library], where: str, what: str,
                           with_keyset: bool = False) -> None:
    """Registers ``fn`` at ``key`` in a Library of its own, owned by ``lib``."""
    qualname = ref.qualname
    reg_key = (qualname, key)
    _check_not_registered(reg_key, where, what)
    ns = ref.name.split("::", 1)[0]
    owner = _owner(lib, ns, where)
    own = Library(ns, "FRAGMENT")
    own.impl(qualname, fn, key, with_keyset=with_keyset)
    _own(owner, _Registration(reg_key, own._site, own._destroy))


def register_kernel(op: Any, device_types: Union[str, Sequence[str], None],
                    fn: Optional[Callable] = None, *,
                    lib: Optional[Library] = None) -> Any:
    """Registers ``fn`` as the kernel of ``op`` for ``device_types``; a
    decorator without ``fn``.

    As torch 2.x's ``torch.library.register_kernel``: for what
    :func:`custom_op` returns (or its name) this is its
    ``register_kernel`` (a later call replaces the earlier kernel); for any
    other operator (``Library.define``, C++) the kernel is registered in a
    Library owned by ``lib``, or by one turnout keeps for the process.

    Args:
        op: ``"ns::name"``, ``"ns::name.overload"``, an OpOverload, a packet
            or a custom op.
        device_types: ``"cpu"``, ``"cuda"``, ``"meta"``, a key name, a list
            of them, or None (every device: CompositeExplicitAutograd).
        fn: the kernel, called with the operator's arguments.
        lib: the Library that owns the registration.

    Returns:
        ``fn``, or a decorator that registers its argument and returns it.

    Raises:
        TypeError: ``op`` is not an operator, ``fn`` is not callable or
            cannot take the schema's arguments.
        ValueError: no such operator, or an unknown device type.
        RuntimeError: a kernel registered by this function for the same
            operator and device type is still alive.

    Example::

        >>> import turnout
        >>> from turnout.library import define, register_kernel, scoped_library
        >>> with scoped_library("doc_rk", "FRAGMENT") as lib:
        ...     define("doc_rk::inc", "(Tensor x) -> Tensor", lib=lib)
        ...     @register_kernel("doc_rk::inc", "cpu", lib=lib)
        ...     def _(x):
        ...         return x + 1
        ...     turnout.ops.doc_rk.inc(turnout.zeros(2))
        'doc_rk::inc'
        tensor([1., 1.])
    """
    where = "register_kernel(op, device_types)"
    ref = _resolve_op(op, where)
    where = f"register_kernel({ref.qualname!r}, {device_types!r})"
    _check_lib(lib, where)
    keys = _keys_of(device_types, where)

    def register(f: Callable) -> Callable:
        if not callable(f):
            raise TypeError(f"{where}: expected fn to be callable, got "
                            f"{type(f).__name__}")
        if ref.custom is not None:
            return ref.custom.register_kernel(device_types, f)
        for key in keys:
            _register_kernel_owned(ref, key, f, lib, where,
                                   f"a kernel for {key}")
        return f

    if fn is None:
        return register
    return register(fn)


# ---- Fake (Meta) kernels and get_ctx ---------------------------------------------


class DynamicSize(int):
    """What :meth:`FakeImplCtx.new_dynamic_size` returns: a stand-in int
    for a size that depends on the input's data, with its bounds."""

    min: int
    max: Optional[int]

    def __new__(cls, value: int, min: int, max: Optional[int]) -> "DynamicSize":
        obj = super().__new__(cls, value)
        obj.min = min
        obj.max = max
        return obj

    def __repr__(self) -> str:
        return f"DynamicSize({int(self)}, min={self.min}, max={self.max})"


class FakeImplCtx:
    """The context :func:`get_ctx` returns inside a fake kernel.

    turnout has no symbolic sizes: a fake kernel is a Meta kernel and runs
    on meta tensors whose sizes are ints. A size that depends on the data
    (nonzero's row count) is therefore a stand-in: :meth:`new_dynamic_size`
    returns a :class:`DynamicSize`, an int with the bounds attached, and
    records it in :attr:`dynamic_sizes`, so that the caller of the Meta
    kernel knows that these sizes are not facts.
    """

    def __init__(self, op: str) -> None:
        self._op = op
        self.dynamic_sizes: List[DynamicSize] = []

    def new_dynamic_size(self, *, min: int = 0, max: Optional[int] = None) -> DynamicSize:
        """A new size whose value depends on the data, in ``[min, max]``.

        The stand-in value is ``min`` raised to 2 (so that the kernel's
        output is not mistaken for a size-0 or size-1 special case), and
        lowered to ``max`` when ``max`` is smaller.

        Raises:
            TypeError: ``min`` or ``max`` is not an int.
            ValueError: ``min`` is negative or ``max`` is below ``min``.
        """
        where = f"{self._op}: get_ctx().new_dynamic_size(min={min!r}, max={max!r})"
        for label, v in (("min", min), ("max", max)):
            if v is not None and (not isinstance(v, int) or isinstance(v, bool)):
                raise TypeError(f"{where}: expected {label} to be an int, got "
                                f"{type(v).__name__}")
        if min < 0:
            raise ValueError(f"{where}: min must be >= 0 (a size is never negative)")
        if max is not None and max < min:
            raise ValueError(f"{where}: max ({max}) is below min ({min})")
        value = builtins.max(min, 2)
        if max is not None:
            value = builtins.min(value, max)
        size = DynamicSize(value, min, max)
        self.dynamic_sizes.append(size)
        return size

    # torch 2.x's older spelling.
    create_unbacked_symint = new_dynamic_size


_fake_ctx = threading.local()


def get_ctx() -> FakeImplCtx:
    """The :class:`FakeImplCtx` of the fake kernel running on this thread.

    Raises:
        RuntimeError: no fake kernel registered by :func:`register_fake`
            (or a custom op's ``register_fake``) is running.

    Example::

        >>> import turnout
        >>> from turnout import Tensor
        >>> from turnout.library import custom_op, get_ctx, register_fake
        >>> @custom_op("doc_ctx::positive", mutates_args=())
        ... def positive(x: Tensor) -> Tensor:
        ...     return turnout.tensor([v for v in x.tolist() if v > 0])
        >>> @register_fake("doc_ctx::positive")
        ... def _(x):
        ...     n = get_ctx().new_dynamic_size(max=x.numel())
        ...     return turnout.empty(n, device="meta")
        >>> positive(turnout.empty(5, device="meta")).shape
        turnout.Size([2])
        >>> positive._destroy()
    """
    stack = getattr(_fake_ctx, "stack", None)
    if not stack:
        raise RuntimeError(
            "get_ctx(): no fake kernel is running on this thread; call it "
            "inside a function registered with register_fake")
    return stack[-1]


def _with_fake_ctx(fn: Callable, op: str) -> Callable:
    """``fn`` run with a fresh :class:`FakeImplCtx` for :func:`get_ctx`."""

    @functools.wraps(fn)
    def fake_kernel(*args: Any, **kwargs: Any) -> Any:
        stack = getattr(_fake_ctx, "stack", None)
        if stack is None:
            stack = _fake_ctx.stack = []
        stack.append(FakeImplCtx(op))
        try:
            return fn(*args, **kwargs)
        finally:
            stack.pop()

    return fake_kernel


def register_fake(op: Any, fn: Optional[Callable] = None, *,
                  lib: Optional[Library] = None) -> Any:
    """Registers ``fn`` as the fake kernel of ``op``: it computes the
    outputs' sizes, strides and dtypes from meta tensors (``device="meta"``,
    no data); a decorator without ``fn``.

    As torch 2.x's ``torch.library.register_fake`` (``impl_abstract`` is the
    same function). turnout's fake kernels are its ``Meta`` kernels.
    Inside ``fn``, :func:`get_ctx` gives sizes that depend on the data.
    For a :func:`custom_op` this is its ``register_fake`` (a later call
    replaces); for any other operator the kernel belongs to ``lib``, or to a
    Library turnout keeps for the process.

    Args:
        op: ``"ns::name"``, ``"ns::name.overload"``, an OpOverload, a packet
            or a custom op.
        fn: the fake kernel.
        lib: the Library that owns the registration.

    Returns:
        ``fn``, or a decorator that registers its argument and returns it.

    Raises:
        TypeError: ``op`` is not an operator, or ``fn`` is not callable.
        ValueError: no such operator.
        RuntimeError: the operator is CompositeImplicitAutograd (its
            decomposition already runs on meta tensors), it has a Meta
            kernel from C++, or a fake kernel registered here for it is
            still alive.

    Example::

        >>> import turnout
        >>> from turnout.library import Library, register_fake
        >>> lib = Library("doc_rf", "DEF")
        >>> lib.define("twice(Tensor x) -> Tensor")
        'doc_rf::twice'
        >>> lib.impl("twice", lambda x: turnout.ops.aten.cat([x, x]), "CPU")
        >>> @register_fake("doc_rf::twice", lib=lib)
        ... def _(x):
        ...     return turnout.empty(2 * x.shape[0], device="meta")
        >>> turnout.ops.doc_rf.twice(turnout.empty(3, device="meta")).shape
        turnout.Size([6])
        >>> lib._destroy()
    """
    where = "register_fake(op)"
    ref = _resolve_op(op, where)
    where = f"register_fake({ref.qualname!r})"
    _check_lib(lib, where)

    def register(f: Callable) -> Callable:
        if not callable(f):
            raise TypeError(f"{where}: expected fn to be callable, got "
                            f"{type(f).__name__}")
        if ref.custom is not None:
            return ref.custom.register_fake(f)
        qualname = ref.qualname
        if _C._dispatch_has_kernel_for_dispatch_key(
                qualname, _C.DispatchKey.CompositeImplicitAutograd):
            raise RuntimeError(
                f"{where}: {qualname} has a CompositeImplicitAutograd kernel: "
                f"it decomposes into other operators, which compute its "
                f"sizes on meta tensors already. It needs no fake kernel")
        if (_active.get((qualname, "Meta")) is None
                and _C._dispatch_has_kernel_for_dispatch_key(
                    qualname, _C.DispatchKey.Meta)):
            raise RuntimeError(
                f"{where}: {qualname} already has a Meta kernel (see "
                f"turnout._C._dispatch_dump_table({qualname!r})); a fake "
                f"kernel would override it. Use Library.impl(..., 'Meta') "
                f"to override on purpose")
        _register_kernel_owned(ref, "Meta", _with_fake_ctx(f, qualname), lib,
                               where, "a fake kernel")
        return f

    if fn is None:
        return register
    return register(fn)


impl_abstract = register_fake


# ---- Autograd --------------------------------------------------------------------


def _autograd_kernel(op: OpOverload, backward: Callable,
                     setup_context: Optional[Callable]) -> Callable:
    """An Autograd kernel of ``op`` that records a node calling ``backward``."""
    schema = op._schema
    arg_names = [a.name for a in schema.arguments]
    short = schema.name.split("::", 1)[1]
    node_name = "".join(p.capitalize() for p in short.split("_")) + "Backward"
    qualname = schema.name + ("." + schema.overload_name if schema.overload_name else "")

    def autograd_kernel(*args: Any, **kwargs: Any) -> Any:
        with _C._AutoDispatchBelowAutograd():
            output = op(*args, **kwargs)
        values = list(args) + [kwargs[n] for n in arg_names[len(args):]]
        needs = tuple(isinstance(v, Tensor) and v.requires_grad for v in values)
        if not (_C.is_grad_enabled() and any(needs)):
            return output
        ctx = _AutogradContext(needs)
        if setup_context is not None:
            setup_context(ctx, tuple(values), output)
        outputs = output if isinstance(output, tuple) else (output,)
        tensors = [o for o in outputs if isinstance(o, Tensor)]

        def node_backward(*grads: Optional[Tensor]) -> Any:
            result = backward(ctx, *grads)
            if not isinstance(result, (tuple, list)):
                result = (result,)
            if len(result) != len(values):
                raise TypeError(
                    f"the backward of {qualname} returned {len(result)} "
                    f"gradient(s) for its {len(values)} argument(s) "
                    f"({', '.join(arg_names)}); return one Tensor or None "
                    f"per argument")
            return tuple(result)

        inputs = [v if isinstance(v, Tensor) else None for v in values]
        _C._autograd_record_python_node(node_name, inputs, tensors, node_backward)
        return output

    return autograd_kernel


def _check_autograd_functions(backward: Any, setup_context: Any, where: str) -> None:
    if not callable(backward):
        raise TypeError(f"{where}: expected backward to be callable, got "
                        f"{type(backward).__name__}")
    if setup_context is not None and not callable(setup_context):
        raise TypeError(f"{where}: expected setup_context to be callable or "
                        f"None, got {type(setup_context).__name__}")


def register_autograd(op: Any, backward: Callable, *,
                      setup_context: Optional[Callable] = None,
                      lib: Optional[Library] = None) -> None:
    """Makes ``op`` differentiable with a backward written in Python: any
    operator, including one defined in C++.

    As torch 2.x's ``torch.library.register_autograd``. The forward runs
    the operator's kernels below autograd; with grad mode on and a Tensor
    argument that requires grad, ``setup_context(ctx, inputs, output)``
    saves what backward needs (``ctx.save_for_backward(...)``, attributes),
    and ``backward(ctx, *grads)`` returns one gradient (a Tensor or None)
    per argument of the operator. For a :func:`custom_op` this is its
    ``register_autograd`` (a later call replaces); otherwise the Autograd
    kernel belongs to ``lib``, or to a Library turnout keeps for the
    process, and overrides an Autograd kernel from C++ while it lives.

    Raises:
        TypeError: ``op`` is not an operator, or ``backward`` /
            ``setup_context`` is not callable.
        ValueError: no such operator.
        RuntimeError: the operator mutates or aliases an argument (its
            schema has ``(a!)`` or ``(a)``): register a functional operator
            instead; or a backward registered here for it is still alive.

    Example::

        >>> import turnout
        >>> from turnout.library import Library, register_autograd
        >>> lib = Library("doc_ra", "DEF")
        >>> lib.define("cube(Tensor x) -> Tensor")
        'doc_ra::cube'
        >>> lib.impl("cube", lambda x: x * x * x, "CPU")
        >>> def setup(ctx, inputs, output):
        ...     ctx.save_for_backward(inputs[0])
        >>> def backward(ctx, grad):
        ...     (x,) = ctx.saved_tensors
        ...     return grad * 3 * x * x
        >>> register_autograd("doc_ra::cube", backward, setup_context=setup, lib=lib)
        >>> x = turnout.tensor([2.0], requires_grad=True)
        >>> turnout.ops.doc_ra.cube(x).sum().backward()
        >>> x.grad
        tensor([12.])
        >>> lib._destroy()
    """
    where = "register_autograd(op, backward)"
    ref = _resolve_op(op, where)
    where = f"register_autograd({ref.qualname!r})"
    _check_lib(lib, where)
    _check_autograd_functions(backward, setup_context, where)
    if ref.custom is not None:
        ref.custom.register_autograd(backward, setup_context=setup_context)
        return
    overload = ref.opoverload
    schema = overload._schema
    aliased = [a.name for a in list(schema.arguments) + list(schema.returns)
               if a.alias_info is not None]
    if aliased:
        raise RuntimeError(
            f"{where}: {schema} mutates or aliases its arguments ("
            f"{', '.join(n or 'a return' for n in aliased)} carry alias "
            f"annotations); a backward can be registered for a functional "
            f"operator only: define one that returns new tensors and "
            f"register the backward for it")
    _register_kernel_owned(ref, "Autograd",
                           _autograd_kernel(overload, backward, setup_context),
                           lib, where, "a backward (an Autograd kernel)")


# ---- Rules for dispatch modes and tensor subclasses ------------------------------

# The attribute of a class (its own __dict__, never inherited, as torch
# matches the exact type) that maps "ns::name.overload" to a rule; read by
# the Python key's fallback (bindings/python_mode.cc).
_RULES_ATTR = "_turnout_dispatch_rules"


def register_torch_dispatch(op: Any, torch_dispatch_class: Any,
                            fn: Optional[Callable] = None, *,
                            lib: Optional[Library] = None) -> Any:
    """Registers a rule for one operator on a dispatch mode class or a
    tensor subclass with ``__turnout_dispatch__``; a decorator without
    ``fn``.

    As torch 2.x's ``torch.library.register_torch_dispatch``: where the
    class's handler would be called for ``op``, ``fn`` is called instead,
    as ``fn(mode, func, types, args, kwargs)`` for a mode (the mode is
    popped while it runs, as for the handler) and ``fn(cls, func, types,
    args, kwargs)`` for a subclass. Only instances of exactly that class
    use the rule (not of its subclasses). The rule belongs to ``lib``, or
    to a Library turnout keeps for the process.

    Raises:
        TypeError: ``op`` is not an operator, ``fn`` is not callable, or
            the class is neither a :class:`~turnout.utils.DispatchMode`
            nor a subclass of :class:`turnout.Tensor` with
            ``__turnout_dispatch__``.
        ValueError: no such operator.
        RuntimeError: a rule for the same operator and class is still
            alive.

    Example::

        >>> import turnout
        >>> from turnout.library import register_torch_dispatch, scoped_library
        >>> from turnout.utils import DispatchMode
        >>> class Quiet(DispatchMode):
        ...     pass
        >>> with scoped_library("_", "IMPL") as lib:
        ...     @register_torch_dispatch("aten::relu", Quiet, lib=lib)
        ...     def _(mode, func, types, args, kwargs):
        ...         return args[0] * 0
        ...     with Quiet():
        ...         turnout.tensor([2.0]).relu()
        tensor([0.])
    """
    where = "register_torch_dispatch(op, torch_dispatch_class)"
    ref = _resolve_op(op, where)
    qualname = ref.qualname
    cls = torch_dispatch_class
    where = f"register_torch_dispatch({qualname!r}, {getattr(cls, '__name__', cls)!r})"
    _check_lib(lib, where)
    from turnout._mode import DispatchMode
    if not (isinstance(cls, type)
            and (issubclass(cls, DispatchMode)
                 or (issubclass(cls, Tensor) and _C._tensor_class_has_handler(cls)))):
        raise TypeError(
            f"{where}: expected a DispatchMode subclass or a subclass of "
            f"turnout.Tensor that defines __turnout_dispatch__, got "
            f"{cls!r}")

    def register(f: Callable) -> Callable:
        if not callable(f):
            raise TypeError(f"{where}: expected fn to be callable, got "
                            f"{type(f).__name__}")
        reg_key = (qualname, f"torch_dispatch {cls.__module__}.{cls.__qualname__} {id(cls)}")
        _check_not_registered(reg_key, where, f"a rule for {cls.__qualname__}")
        owner = _owner(lib, ref.name.split("::", 1)[0], where)
        rules = cls.__dict__.get(_RULES_ATTR)
        if rules is None:
            rules = {}
            setattr(cls, _RULES_ATTR, rules)
        rules[qualname] = f

        def undo() -> None:
            if rules.get(qualname) is f:
                del rules[qualname]

        _own(owner, _Registration(reg_key, _caller_site(), undo))
        return f

    if fn is None:
        return register
    return register(fn)


# ---- custom_op -------------------------------------------------------------------

_NONE_TYPE = type(None)


def _schema_type(hint: Any, where: str) -> str:
    """The schema type of a parameter annotation."""
    if hint is Tensor or hint is _C.TensorBase:
        return "Tensor"
    if hint is int:
        return "int"
    if hint is float:
        return "float"
    if hint is bool:
        return "bool"
    if hint is str:
        return "str"
    if hint is _C.dtype:
        return "ScalarType"
    if hint is _C.device:
        return "Device"
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Union:
        rest = [a for a in args if a is not _NONE_TYPE]
        if len(rest) == 1 and len(args) == 2:
            return _schema_type(rest[0], where) + "?"
    if origin in (list, collections.abc.Sequence) and len(args) == 1:
        inner = _schema_type(args[0], where)
        if inner in ("Tensor", "Tensor?", "int", "float", "bool"):
            return inner + "[]"
    raise TypeError(
        f"{where}: cannot infer a schema type from the annotation {hint!r}; "
        f"supported: Tensor, int, float, bool, str, turnout.dtype, "
        f"turnout.device, Optional[T], and List[T] / list[T] / Sequence[T] of "
        f"Tensor, Optional[Tensor], int, float, bool; or pass schema=...")


def _return_types(hint: Any, where: str) -> str:
    if hint is None or hint is _NONE_TYPE:
        return "()"
    origin = typing.get_origin(hint)
    if origin is tuple:
        args = typing.get_args(hint)
        if not args or args[-1] is Ellipsis:
            raise TypeError(f"{where}: a tuple return needs its element types, "
                            f"e.g. Tuple[Tensor, Tensor]; got {hint!r}")
        return "(" + ", ".join(_schema_type(a, where) for a in args) + ")"
    return _schema_type(hint, where)


def _default_text(value: Any, where: str, name: str) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise TypeError(f"{where}: the default of parameter '{name}' ({value!r}) "
                    f"cannot be written in a schema; use None, a bool, int, "
                    f"float or str")


def infer_schema(fn: Callable, *, mutates_args: Union[str, Sequence[str]] = (),
                 op_name: str = "custom_op") -> str:
    """The schema (without a name) of a type-annotated function.

    Args:
        fn: a function whose parameters and return are annotated.
        mutates_args: names of the Tensor parameters it writes to; they get
            an alias annotation ``Tensor(a!)``. ``"unknown"`` (torch 2.x's
            pessimistic choice) marks every Tensor parameter so.
        op_name: for error messages.

    Returns:
        e.g. ``"(Tensor x, float s=1.0) -> Tensor"``.

    Example::

        >>> from typing import List, Optional
        >>> from turnout import Tensor
        >>> from turnout.library import infer_schema
        >>> def f(x: Tensor, ys: List[Tensor], s: Optional[float] = None,
        ...       *, flag: bool = False) -> Tensor: ...
        >>> infer_schema(f)
        '(Tensor x, Tensor[] ys, float? s=None, *, bool flag=False) -> Tensor'
    """
    where = f"custom_op({op_name})"
    unknown_mutations = mutates_args == "unknown"
    if isinstance(mutates_args, str) and not unknown_mutations:
        raise TypeError(f"{where}: mutates_args must be a sequence of parameter "
                        f"names or \"unknown\", got the str {mutates_args!r}")
    if unknown_mutations:
        mutates_args = ()
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn)
    except Exception as e:  # noqa: BLE001 (NameError, TypeError, ...)
        raise TypeError(f"{where}: cannot evaluate the type hints of "
                        f"{fn.__qualname__}: {e}") from None
    parts: List[str] = []
    star = False
    mutated = set(mutates_args)
    alias_names = iter("abcdefghijklmnopqrstuvwxyz")
    for param in sig.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"{where}: *args and **kwargs cannot be described by "
                            f"a schema; name every parameter")
        if param.name not in hints:
            raise TypeError(f"{where}: parameter '{param.name}' has no type "
                            f"annotation; annotate it (e.g. {param.name}: Tensor) "
                            f"or pass schema=...")
        type_text = _schema_type(hints[param.name], where)
        if unknown_mutations and type_text.startswith("Tensor"):
            type_text = f"Tensor({next(alias_names)}!)" + type_text[len("Tensor"):]
        elif param.name in mutated:
            if not type_text.startswith("Tensor"):
                raise TypeError(f"{where}: mutates_args names '{param.name}', "
                                f"which is a {type_text}; only Tensor "
                                f"parameters can be mutated")
            type_text = f"Tensor({next(alias_names)}!)" + type_text[len("Tensor"):]
        if param.kind is param.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        text = f"{type_text} {param.name}"
        if param.default is not param.empty:
            text += "=" + _default_text(param.default, where, param.name)
        parts.append(text)
    unknown = mutated - set(sig.parameters)
    if unknown:
        raise ValueError(f"{where}: mutates_args names {sorted(unknown)}, which "
                         f"are not parameters of {fn.__qualname__}")
    if "return" not in hints:
        raise TypeError(f"{where}: the return type is not annotated; annotate it "
                        f"(-> Tensor, -> None, -> Tuple[Tensor, Tensor]) or pass "
                        f"schema=...")
    returns = _return_types(hints["return"], where)
    return f"({', '.join(parts)}) -> {returns}"


class _AutogradContext:
    """The ``ctx`` of ``register_autograd``: what setup_context saves for
    backward."""

    def __init__(self, needs_input_grad: Tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self.saved_tensors: Tuple[Optional[Tensor], ...] = ()

    def save_for_backward(self, *tensors: Optional[Tensor]) -> None:
        # Detached: an output saved with its grad_fn would make a cycle
        # through C++ (output -> node -> backward -> ctx -> output) that
        # Python's garbage collector cannot see.
        self.saved_tensors = tuple(None if t is None else t.detach()
                                   for t in tensors)


class CustomOpDef:
    """An operator made by :func:`custom_op`; calling it calls the operator.

    Attributes:
        _qualname: ``"ns::name"``.
        _opoverload: ``turnout.ops.ns.name.default``.
        _schema: the schema text.
    """

    def __init__(self, qualname: str, schema: str, fn: Callable,
                 mutates_args: Union[str, Sequence[str]], device_types: Any,
                 tags: Sequence[str] = ()) -> None:
        ns, name = _split_qualname(qualname, "custom_op(name)")
        self._qualname = qualname
        self._ns = ns
        self._name = name
        self._schema = schema
        self._init_fn = fn
        self._lib = Library(ns, "FRAGMENT")
        self._lib.define(name + schema, tags=tags)
        # One Library per key, so that registering again replaces.
        self._kernel_libs: Dict[str, Library] = {}
        self._opoverload: OpOverload = getattr(getattr(ops, ns), name).default
        self.__name__ = name
        self.__doc__ = fn.__doc__
        self.register_kernel(device_types, fn)

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._opoverload(*args, **kwargs)

    def _register(self, key: str, fn: Callable, with_keyset: bool = False) -> None:
        old = self._kernel_libs.pop(key, None)
        if old is not None:
            old._destroy()
        lib = Library(self._ns, "FRAGMENT")
        lib.impl(self._name, fn, key, with_keyset=with_keyset)
        self._kernel_libs[key] = lib

    def register_kernel(self, device_types: Union[str, Sequence[str], None],
                        fn: Optional[Callable] = None) -> Any:
        """Registers ``fn`` as the kernel for ``device_types`` (``"cpu"``,
        ``"cuda"``, ``"meta"``, a key name, a list, or None for every
        device), replacing an earlier one; a decorator without ``fn``.

        Example::

            >>> import turnout
            >>> from turnout import Tensor
            >>> from turnout.library import custom_op
            >>> @custom_op("doc_lib8::half", mutates_args=())
            ... def half(x: Tensor) -> Tensor:
            ...     return x / 2
            >>> @half.register_kernel("cpu")
            ... def _(x):
            ...     return x * 0.5
            >>> half(turnout.tensor([4.0]))
            tensor([2.])
            >>> half._destroy()
        """
        keys = _keys_of(device_types, f"{self._qualname}.register_kernel")

        def register(f: Callable) -> Callable:
            if not callable(f):
                raise TypeError(f"{self._qualname}.register_kernel: expected a "
                                f"callable, got {type(f).__name__}")
            for key in keys:
                self._register(key, f)
            return f

        if fn is None:
            return register
        return register(fn)

    def register_fake(self, fn: Callable) -> Callable:
        """Registers ``fn`` as the Meta kernel: it computes the output's
        shape and dtype from meta tensors (``device="meta"``, no data).

        Example::

            >>> import turnout
            >>> from turnout import Tensor
            >>> from turnout.library import custom_op
            >>> @custom_op("doc_lib9::dup", mutates_args=())
            ... def dup(x: Tensor) -> Tensor:
            ...     return turnout.ops.aten.cat([x, x])
            >>> @dup.register_fake
            ... def _(x):
            ...     return turnout.empty(2 * x.shape[0], device="meta")
            >>> dup(turnout.empty(3, device="meta")).shape
            turnout.Size([6])
            >>> dup._destroy()
        """
        if not callable(fn):
            raise TypeError(f"{self._qualname}.register_fake: expected a callable, "
                            f"got {type(fn).__name__}")
        self._register("Meta", _with_fake_ctx(fn, self._qualname))
        return fn

    def register_autograd(self, backward: Callable, *,
                          setup_context: Optional[Callable] = None) -> None:
        """Makes the operator differentiable with a backward written in
        Python.

        The forward runs the operator's kernels below autograd; when grad
        mode is on and a Tensor argument requires grad,
        ``setup_context(ctx, inputs, output)`` may save what backward needs
        (``ctx.save_for_backward(...)``, or attributes), and
        ``backward(ctx, *grads)`` later returns one gradient (a Tensor or
        None) per argument of the operator. Gradients are summed to their
        input's shape (broadcasting) and cast to its dtype.

        Raises:
            TypeError: ``backward`` or ``setup_context`` is not callable.

        Example::

            >>> import turnout
            >>> from turnout import Tensor
            >>> from turnout.library import custom_op
            >>> @custom_op("doc_lib10::square", mutates_args=())
            ... def square(x: Tensor) -> Tensor:
            ...     return x * x
            >>> def setup(ctx, inputs, output):
            ...     ctx.save_for_backward(inputs[0])
            >>> def backward(ctx, grad):
            ...     (x,) = ctx.saved_tensors
            ...     return grad * 2 * x
            >>> square.register_autograd(backward, setup_context=setup)
            >>> x = turnout.tensor([3.0], requires_grad=True)
            >>> square(x).sum().backward()
            >>> x.grad
            tensor([6.])
            >>> square._destroy()
        """
        _check_autograd_functions(backward, setup_context,
                                  f"{self._qualname}.register_autograd")
        self._register("Autograd",
                       _autograd_kernel(self._opoverload, backward, setup_context))

    def _destroy(self) -> None:
        """Deregisters the operator and all its kernels."""
        if _custom_ops.get(self._qualname) is self:
            del _custom_ops[self._qualname]
        for lib in self._kernel_libs.values():
            lib._destroy()
        self._kernel_libs.clear()
        self._lib._destroy()


# custom_op definitions by name, so that running a definition again (a
# notebook cell) replaces the previous one.
_custom_ops: Dict[str, CustomOpDef] = {}


def custom_op(name: str, fn: Optional[Callable] = None, *,
              mutates_args: Union[str, Sequence[str]] = (),
              device_types: Union[str, Sequence[str], None] = None,
              schema: Optional[str] = None,
              tags: Sequence[str] = ()) -> Any:
    """Makes an operator from a Python function; a decorator without ``fn``.

    The schema is inferred from the function's type hints (see
    :func:`infer_schema`) unless ``schema`` is given. The function becomes
    the kernel for ``device_types`` (every device when None). Defining the
    same name again replaces the earlier definition and its kernels.

    Args:
        name: ``"ns::name"``.
        fn: the implementation.
        mutates_args: names of the Tensor parameters the function writes
            to, or ``"unknown"`` (as torch 2.x: every Tensor parameter is
            assumed written to, each with an alias set of its own).
        device_types: ``"cpu"``, ``"cuda"``, ``"meta"``, a list, or None.
        schema: the schema without a name, e.g. ``"(Tensor x) -> Tensor"``.
        tags: tags of the operator, as in :meth:`Library.define`.

    Returns:
        A :class:`CustomOpDef`, callable like the operator, with
        ``register_kernel``, ``register_fake`` and ``register_autograd``.

    Example::

        >>> import turnout
        >>> from turnout import Tensor
        >>> from turnout.library import custom_op
        >>> @custom_op("doc_lib11::add_n", mutates_args=())
        ... def add_n(x: Tensor, n: int = 1) -> Tensor:
        ...     return x + n
        >>> add_n(turnout.zeros(2), 3)
        tensor([3., 3.])
        >>> str(turnout.ops.doc_lib11.add_n.default._schema)
        'doc_lib11::add_n(Tensor x, int n=1) -> Tensor'
        >>> add_n._destroy()
    """
    _split_qualname(name, "custom_op(name)")

    def build(f: Callable) -> CustomOpDef:
        if not callable(f):
            raise TypeError(f"custom_op({name}): expected a function, got "
                            f"{type(f).__name__}")
        text = schema if schema is not None else infer_schema(
            f, mutates_args=mutates_args, op_name=name)
        old = _custom_ops.pop(name, None)
        if old is not None:
            old._destroy()
        op = CustomOpDef(name, text, f, mutates_args, device_types, tags)
        _custom_ops[name] = op
        return op

    if fn is None:
        return build
    return build(fn)
