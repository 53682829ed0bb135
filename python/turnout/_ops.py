"""``turnout.ops``: every registered operator, callable from Python.

``turnout.ops.<ns>.<name>`` is an :class:`OpOverloadPacket` (all overloads
of a name); ``.<overload>`` (``.default`` for the unnamed one) is an
:class:`OpOverload`. Both are looked up on first access and cached.

Example::

    >>> import turnout
    >>> a = turnout.tensor([1.0, 2.0])
    >>> turnout.ops.aten.add.Tensor(a, a, alpha=2)
    tensor([3., 6.])
    >>> turnout.ops.aten.add(a, 1)          # resolves to aten::add.Scalar
    tensor([2., 3.])
    >>> str(turnout.ops.aten.relu.default._schema)
    'aten::relu(Tensor self) -> Tensor'
    >>> turnout.ops.aten.relu.default.tags      # torch's (kernels/aten_tags.h)
    ['core', 'pointwise']
"""

from __future__ import annotations

import os
import types
from typing import Any, Dict, List, Set, Union

from turnout import _C

__all__ = ["OpOverload", "OpOverloadPacket", "ops"]


class OpOverload(_C._OpOverload):
    """One overload of an operator, e.g. ``turnout.ops.aten.add.Tensor``.

    Calling it binds the positional and keyword arguments to the schema
    (defaults filled in, keyword-only arguments enforced), converts them
    and calls the operator through the dispatcher with the GIL released.

    Raises:
        TypeError: an argument does not fit the schema; the message names
            the operator, the argument, the type the schema expects and what
            was given.

    Example::

        >>> import turnout
        >>> relu = turnout.ops.aten.relu.default
        >>> relu.name(), relu.overloadpacket
        ('aten::relu', <OpOverloadPacket(op='aten.relu')>)
        >>> relu(turnout.tensor([-1.0, 2.0]))
        tensor([0., 2.])
        >>> relu.has_kernel_for_dispatch_key(turnout.DispatchKey.CPU)
        True
    """

    def __init__(self, packet: "OpOverloadPacket", overload_name: str) -> None:
        _C._OpOverload.__init__(self, packet._qualified_op_name, overload_name)
        self._overloadpacket = packet
        self._overloadname = overload_name
        self.__name__ = f"{packet.__name__}.{overload_name}"
        # As torch's: "torch._ops.aten" there, "turnout._ops.aten" here.
        self.__module__ = packet.__module__
        self.py_kernels: Dict[Any, Any] = {}

    def py_impl(self, key: Any) -> Any:
        """Registers a Python kernel for `key` with the Python dispatcher.

        As torch's ``OpOverload.py_impl``: used as a decorator; the kernel
        runs instead of the dispatcher's only while
        ``_C._EnablePythonDispatcher`` (or
        ``turnout._python_dispatcher.enable_python_dispatcher()``) is
        active, for calls whose key :func:`~turnout._python_dispatcher.resolve_key`
        resolves to `key`.

        Raises:
            TypeError: `key` is not a DispatchKey, or is ``Python`` (the
                key of modes and subclasses, which have their own handlers).
        """
        if not isinstance(key, _C.DispatchKey):
            raise TypeError(f"{self.__name__}.py_impl(key): expected a "
                            f"turnout.DispatchKey, got {type(key).__name__}")
        if key == _C.DispatchKey.Python:
            raise TypeError(f"{self.__name__}.py_impl(DispatchKey.Python): "
                            f"the Python key belongs to dispatch modes and "
                            f"tensor subclasses; define __turnout_dispatch__")

        def inner(fn: Any) -> Any:
            self.py_kernels[key] = fn
            return fn
        return inner

    def _get_dispatch(self, key: Any) -> Any:
        """The Python kernel the Python dispatcher runs for a call at
        runtime key `key`, or None for the dispatcher's own. Resolved on
        each call (not cached), so that registrations made since count."""
        if not self.py_kernels:
            return None
        from turnout._python_dispatcher import resolve_key
        return self.py_kernels.get(resolve_key(self, key))

    @property
    def overloadpacket(self) -> "OpOverloadPacket":
        """The packet this overload belongs to."""
        return self._overloadpacket

    @property
    def tags(self) -> List[str]:
        """The tags given when the operator was defined, in order.

        As torch's ``OpOverload.tags``, with tags as strings. Read from the
        dispatcher on each access, so a re-definition shows its own tags.

        Example::

            >>> import turnout
            >>> lib = turnout.library.Library("tagdoc", "DEF")
            >>> lib.define("scale(Tensor x) -> Tensor", tags=("pointwise",))
            'tagdoc::scale'
            >>> turnout.ops.tagdoc.scale.default.tags
            ['pointwise']
            >>> lib._destroy()
        """
        qualname = self._overloadpacket._qualified_op_name
        if self._overloadname != "default":
            qualname += "." + self._overloadname
        return _C._dispatch_get_tags(qualname)

    def __repr__(self) -> str:
        ns, name = self._overloadpacket._qualified_op_name.split("::", 1)
        return f"<OpOverload(op='{ns}.{name}', overload='{self._overloadname}')>"

    def __str__(self) -> str:
        # As torch's: "aten.add.Tensor", what logging handlers print.
        ns, name = self._overloadpacket._qualified_op_name.split("::", 1)
        return f"{ns}.{name}.{self._overloadname}"


class OpOverloadPacket(_C._OpPacket):
    """Every overload of one operator name, e.g. ``turnout.ops.aten.add``.

    Calling the packet picks the first overload (the default one first, then
    the others by name) whose schema accepts the arguments' types. As in
    torch 1.13, the Tensor arguments of add, sub, mul, div, floor_divide (and
    their aliases and in-place forms), to, _to_copy and copy_ also take a
    Python number, as a wrapped number, and those packets try their Tensor
    overloads before their Scalar ones: ``mul(x, 3)`` is ``mul.Tensor``.

    Example::

        >>> import turnout
        >>> turnout.ops.aten.relu.overloads()
        ['default', 'out']
        >>> {'Scalar', 'Tensor', 'out'} <= set(turnout.ops.aten.mul.overloads())
        True
        >>> turnout.ops.aten.mul.Scalar
        <OpOverload(op='aten.mul', overload='Scalar')>
        >>> turnout.ops.aten.mul(turnout.tensor([1, 2]), 3)
        tensor([3, 6])
    """

    def __init__(self, qualified_op_name: str, op_name: str) -> None:
        _C._OpPacket.__init__(self, qualified_op_name)
        self._qualified_op_name = qualified_op_name
        self.__name__ = op_name
        self.__module__ = f"{__name__}.{qualified_op_name.split('::', 1)[0]}"

    def __getattr__(self, key: str) -> OpOverload:
        if key.startswith("__"):
            raise AttributeError(key)
        try:
            overload = OpOverload(self, key)
        except ValueError as e:
            raise AttributeError(
                f"The operator {self._qualified_op_name} has no overload "
                f"named '{key}': {e}") from None
        setattr(self, key, overload)
        return overload

    def __repr__(self) -> str:
        ns, name = self._qualified_op_name.split("::", 1)
        return f"<OpOverloadPacket(op='{ns}.{name}')>"

    def __str__(self) -> str:
        return self._qualified_op_name.replace("::", ".", 1)


class _OpNamespace(types.ModuleType):
    """``turnout.ops.<ns>``: the operators of one namespace."""

    def __init__(self, name: str) -> None:
        super().__init__("turnout.ops." + name)
        self.name = name

    def __getattr__(self, op_name: str) -> OpOverloadPacket:
        # Dunder names are looked up too: aten::__getitem__ is an operator.
        qualified = f"{self.name}::{op_name}"
        try:
            packet = OpOverloadPacket(qualified, op_name)
        except ValueError:
            raise AttributeError(
                f"'turnout.ops.{self.name}' has no operator named '{op_name}' "
                f"(no schema for {qualified} is registered); check the name, "
                f"or define it first") from None
        setattr(self, op_name, packet)
        return packet


class _Ops(types.ModuleType):
    """``turnout.ops``: one attribute per operator namespace."""

    def __init__(self) -> None:
        super().__init__("turnout.ops")

    def __getattr__(self, name: str) -> _OpNamespace:
        if name.startswith("__"):
            raise AttributeError(name)
        namespace = _OpNamespace(name)
        setattr(self, name, namespace)
        return namespace

    def load_library(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Loads a shared library of operators into this process.

        As ``torch.ops.load_library``: the library (``libmy_ops.so``, built
        against turnout's shared runtime with ``pkg-config turnout``,
        CMake's ``turnout::turnout``, ``@turnout//runtime:turnout`` or
        :mod:`turnout.utils.cpp_extension`) is opened with ``dlopen``, and
        its ``TURNOUT_LIBRARY`` blocks register into the registry this
        package uses. Its operators are then ``turnout.ops.<ns>.<op>``, and
        ``_dispatch_dump_table``, ``turnout.debug.explain``, the profiler
        and the graph executor see them. Loading a path again does nothing.

        All or nothing: when a block of the library throws (a duplicate
        definition, a schema that does not parse, a kernel that does not
        match its schema), the blocks before it are undone and the error is
        raised, naming the file and the block.

        Raises:
            OSError: the file cannot be loaded (missing, not a shared
                library, a missing symbol, built against another turnout
                version or a second copy of the runtime); the message says
                which and how to fix it.
            InvalidArgumentError, TypeError, ...: a registration failed.

        Example::

            >>> import turnout
            >>> turnout.ops.load_library("/nonexistent/libmy_ops.so")
            Traceback (most recent call last):
            ...
            OSError: load_library(/nonexistent/libmy_ops.so): could not load it: No such file or directory. Give the path of a shared library of operators (relative paths are from the current directory)
        """
        _C._load_library(os.fspath(path))

    @property
    def loaded_libraries(self) -> Set[str]:
        """The canonical paths :meth:`load_library` has loaded."""
        return set(_C._loaded_libraries())

    def namespaces(self) -> List[str]:
        """The namespaces that have operators with a schema."""
        return sorted({n.split("::", 1)[0] for n in _C._dispatch_get_all_op_names()})


ops: Any = _Ops()
