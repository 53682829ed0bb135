"""``turnout.Tensor``: the Python tensor class.

A subclass of ``turnout._C.TensorBase`` (the C++ tensor); every tensor that
turnout returns is an instance. Arithmetic, comparisons, indexing and the
methods named like PyTorch's call the reference operators through
``turnout.ops.aten``, so they dispatch like any other call.

Example::

    >>> import turnout
    >>> x = turnout.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x
    tensor([[1., 2.],
            [3., 4.]])
    >>> x.shape, x.dtype, x.device
    (turnout.Size([2, 2]), turnout.float32, device(type='cpu'))
    >>> (x @ x.t() + 1)[0]
    tensor([ 6., 12.])
    >>> x[:, 1].tolist()
    [2.0, 4.0]
"""

from __future__ import annotations

import operator
from typing import Any, Iterator, List, Optional, Sequence, Tuple, Union

from turnout import _C, _cuda_loader
from turnout._ops import ops
from turnout._tensor_str import tensor_repr

__all__ = ["Size", "Tensor", "TypedStorage"]

_TensorBase = _C.TensorBase
# The keys Tensor.__turnout_dispatch__ skips: the modes' and the handlers'.
_BELOW_PYTHON = _C.DispatchKeySet([_C.DispatchKey.Python,
                                   _C.DispatchKey.PythonTLSSnapshot])


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints as ``turnout.Size([2, 3])``.

    Example::

        >>> import turnout
        >>> turnout.zeros(2, 3).shape
        turnout.Size([2, 3])
        >>> turnout.zeros(2, 3).shape.numel()
        6
    """

    def __repr__(self) -> str:
        return f"turnout.Size([{', '.join(str(s) for s in self)}])"

    def numel(self) -> int:
        """The number of elements of a tensor of this shape."""
        n = 1
        for s in self:
            n *= s
        return n


def _is_int(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    try:
        operator.index(x)
        return True
    except TypeError:
        return False


def _size_args(fn: str, size: Tuple[Any, ...]) -> List[int]:
    """Sizes given as varargs (2, 3) or as one sequence ([2, 3])."""
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    for s in size:
        if not _is_int(s):
            raise TypeError(f"{fn}(): sizes must be ints, got "
                            f"{type(s).__name__} ({s!r}) in {list(size)!r}")
    return [operator.index(s) for s in size]


def _factory_kwargs(dtype: Any = None, layout: Any = None, device: Any = None,
                    pin_memory: Any = None, **given: Any) -> dict:
    """The TensorOptions keywords torch 1.13's Python factories pass to
    their operator (what a dispatch mode sees): dtype and layout when
    given, device (cpu unless given) and pin_memory (False unless given)
    always, then the other keywords given (memory_format, ...) that are not
    None."""
    kwargs = {}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if layout is not None:
        kwargs["layout"] = layout
    kwargs["device"] = (_CPU if device is None else device
                        if isinstance(device, _C.device) else _C.device(device))
    kwargs["pin_memory"] = bool(pin_memory)
    kwargs.update((k, v) for k, v in given.items() if v is not None)
    return kwargs


_CPU = _C.device("cpu")


def _like_kwargs(self: Any, dtype: Any = None, layout: Any = None,
                 device: Any = None, pin_memory: Any = None,
                 **given: Any) -> dict:
    """The TensorOptions keywords torch 1.13's new_* methods and *_like
    factories pass: self's dtype, layout and device unless given,
    pin_memory False unless given, then the other keywords given."""
    return _factory_kwargs(self.dtype if dtype is None else dtype,
                           self.layout if layout is None else layout,
                           self.device if device is None else device,
                           pin_memory, **given)


def _same_device(a: _C.device, b: _C.device) -> bool:
    return a.type == b.type and (a.index is None or b.index is None
                                 or a.index == b.index)


def _refuse_python_dispatch(t: Any, what: str) -> None:
    if _C._tensor_class_has_handler(type(t)):
        raise _C.InvalidArgumentError(
            f".{what}() is not supported for tensor subclasses "
            f"({type(t).__name__} defines __turnout_dispatch__, so its data "
            f"may not be its memory); unwrap the tensor it holds first")


def _legacy_new(cls: type, args: Tuple[Any, ...], kwargs: Any) -> "Tensor":
    from turnout import _factories

    name = cls.__name__
    device = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(
            f"{name}(): unexpected keyword argument(s) {sorted(kwargs)}; the "
            f"legacy constructor takes sizes, a sequence of data or a tensor, "
            f"and device= (use turnout.tensor(data, dtype=...) for a dtype)")
    if device is not None and _C.device(device).type != "cpu":
        raise _C.InvalidArgumentError(
            f"{name}(): the legacy constructor makes CPU tensors, got "
            f"device={device!r}; use turnout.empty(..., device=...) instead")
    if len(args) == 1 and isinstance(args[0], _TensorBase):
        return _C._alias_subclass(cls, args[0])  # a view, as torch's
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    if all(_is_int(a) for a in args):
        base = _factories.empty(*[operator.index(a) for a in args]) if args \
            else _factories.empty(0)
    elif len(args) == 1:
        data = args[0]
        if isinstance(data, (str, bytes)):
            raise TypeError(f"{name}(): invalid data type "
                            f"'{type(data).__name__}'")
        if not hasattr(data, "__len__") and not hasattr(data, "__array__"):
            raise TypeError(f"{name}(): data must be a sequence (got "
                            f"{type(data).__name__})")
        base = _factories.tensor(data, dtype=_C.float32)
    else:
        for i, a in enumerate(args):
            if not _is_int(a):
                raise TypeError(
                    f"{name}(): sizes must be ints, but found element of type "
                    f"{type(a).__name__} at pos {i}; pass sizes as ints, or "
                    f"one sequence of data, or one tensor")
    return _C._make_subclass(cls, base)


class TypedStorage:
    """The memory behind a tensor (``Tensor.storage()``), as torch 1.13's
    ``TypedStorage``: elements of the tensor's dtype, from the start of
    the memory (not the tensor's offset)."""

    __module__ = "turnout"

    def __init__(self, tensor: "Tensor") -> None:
        self._flat = _C._storage_as_tensor(tensor)

    @property
    def dtype(self) -> Any:
        return self._flat.dtype

    @property
    def device(self) -> Any:
        return self._flat.device

    def size(self) -> int:
        """The number of elements."""
        return self._flat.numel()

    def __len__(self) -> int:
        return self._flat.numel()

    def element_size(self) -> int:
        return self._flat.element_size()

    def nbytes(self) -> int:
        return self._flat.numel() * self._flat.element_size()

    def data_ptr(self) -> int:
        return self._flat.data_ptr()

    def tolist(self) -> List[Any]:
        return self._flat.tolist()

    def __getitem__(self, i: int) -> Any:
        return self._flat[i].item()

    def __repr__(self) -> str:
        return (f"turnout.TypedStorage(dtype={self.dtype!r}, "
                f"device={self.device}) of size {self.size()}")


_NO_PYTHON_KEY = _C.DispatchKeySet([_C.DispatchKey.Python])


class Tensor(_C.TensorBase):
    """A multi-dimensional array whose operations go through the dispatcher.

    Make one with a factory: :func:`turnout.tensor`, :func:`turnout.zeros`,
    :func:`turnout.from_numpy`, ... Indexing with ints, slices (step > 0),
    ``None`` and ``...`` returns views that share memory; boolean masks,
    lists and integer tensors index as torch's (``x[mask]``, ``x[[0, 2]]``,
    ``x[mask] = 0``) through ``aten.index.Tensor`` / ``aten.index_put_``.

    Example::

        >>> import turnout
        >>> t = turnout.arange(6).view(2, 3)
        >>> t
        tensor([[0, 1, 2],
                [3, 4, 5]])
        >>> t[1, ::2]
        tensor([3, 5])
        >>> t.sum().item()
        15
        >>> t[t > 3]
        tensor([4, 5])
        >>> t[:, [2, 0]]
        tensor([[2, 0],
                [5, 3]])
    """

    __module__ = "turnout"

    def __new__(cls, *args: Any, **kwargs: Any) -> "Tensor":
        """The legacy constructor, as torch 1.13's ``torch.Tensor(...)``:
        ``Tensor()`` (empty), ``Tensor(2, 3)`` or ``Tensor(Size)``
        (uninitialised float32 of that shape), ``Tensor([1, 2])`` (float32
        data) or ``Tensor(t)`` (``t.alias()``: a view of `t`, with
        ``AliasBackward0`` history when `t` requires grad), each an instance
        of `cls`; ``device=`` may only be the
        CPU. Prefer :func:`turnout.tensor` / :func:`turnout.empty`.

        Example::

            >>> import turnout
            >>> class Sub(turnout.Tensor):
            ...     pass
            >>> Sub(2, 3).shape, type(Sub([1, 2])).__name__, Sub([1, 2]).tolist()
            (turnout.Size([2, 3]), 'Sub', [1.0, 2.0])
        """
        return _legacy_new(cls, args, kwargs)

    # ---- Shape -------------------------------------------------------------
    @property
    def shape(self) -> Size:
        """The sizes, as a :class:`Size`."""
        return Size(self._sizes())

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self.dim()

    def size(self, dim: Optional[int] = None) -> Union[Size, int]:
        """The shape, or the size of dimension `dim` (negative counts from
        the end)."""
        if dim is None:
            return Size(self._sizes())
        d = self._wrap_dim(dim, "size")  # dim() first, as torch asks
        return self._sizes()[d]

    def stride(self, dim: Optional[int] = None) -> Union[Tuple[int, ...], int]:
        """The strides in elements, or the stride of dimension `dim`."""
        strides = self._strides()
        if dim is None:
            return tuple(strides)
        n = len(strides)
        if not -n <= dim < n:
            raise IndexError(
                f"Tensor.stride(): dimension out of range (expected to be in "
                f"range of [{-n}, {n - 1}], but got {dim})")
        return strides[dim]

    def _wrap_dim(self, dim: int, fn: str) -> int:
        n = self.dim()
        if not -n <= dim < n:
            raise IndexError(
                f"Tensor.{fn}(): dimension out of range (expected to be in range "
                f"of [{-n}, {n - 1}], but got {dim})")
        return dim + n if dim < 0 else dim

    def __len__(self) -> int:
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._sizes()[0]

    def __iter__(self) -> Iterator["Tensor"]:
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        # As torch's: one unbind, then its views.
        return iter(self.unbind(0))

    # ---- Values ------------------------------------------------------------
    def item(self) -> Union[int, float, bool]:
        """The value of a one-element tensor as a Python number."""
        return ops.aten.item.default(self)

    def tolist(self) -> Any:
        """The values as (nested) Python lists; a number for a 0-dim tensor.

        Refused, as torch's, for a subclass with ``__turnout_dispatch__``
        (its data may not be its own memory)."""
        if type(self) is not Tensor:
            _refuse_python_dispatch(self, "tolist")
        # Reading the values is no operator call: a mode sees none (as
        # torch's tolist, which reads the memory directly).
        with _C._ExcludeDispatchKeyGuard(_NO_PYTHON_KEY):
            t = self.detach()
            if not t.is_cpu:
                t = t.cpu()
            if t.dtype is _C.bfloat16:
                t = t.to(_C.float32)
            return t.numpy().tolist()

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        return tensor_repr(self, tensor_contents)

    def __deepcopy__(self, memo: Any) -> "Tensor":
        """``copy.deepcopy(t)``, as torch 1.13's: graph leaves only; the
        values in new memory (a wrapper subclass: ``self.clone()``, through
        its handler; another tensor: ``self.new_empty([])``, which must
        return an instance of the same class, then a copy of the memory),
        ``requires_grad``, ``.grad`` and the instance ``__dict__`` copied
        deeply.

        Example::

            >>> import copy, turnout
            >>> x = turnout.ones(2)
            >>> x.note = ["kept"]
            >>> y = copy.deepcopy(x)
            >>> y.tolist(), y.note, y.note is x.note, y.data_ptr() != x.data_ptr()
            ([1.0, 1.0], ['kept'], False, True)
        """
        import copy

        from turnout._factories import no_grad

        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) "
                "support the deepcopy protocol at the moment; deepcopy "
                "t.detach() instead")
        if id(self) in memo:
            return memo[id(self)]
        cls = type(self)
        with no_grad():
            if not _C._has_storage(self):
                new = self.clone()
                if type(new) is not cls:
                    raise RuntimeError(
                        "The default implementation of __deepcopy__() for "
                        "wrapper subclasses only works for subclass types "
                        "that implement clone() and for which that function "
                        f"returns another instance of the same subclass "
                        f"({cls.__name__}.clone() returned "
                        f"{type(new).__name__}); implement clone(), or "
                        f"override __deepcopy__()")
            else:
                probe = self.new_empty([])
                if type(probe) is not cls:
                    raise RuntimeError(
                        "The default implementation of __deepcopy__() for "
                        "non-wrapper subclasses only works for subclass types "
                        "that implement new_empty() and for which that "
                        "function returns another instance of the same "
                        f"subclass ({cls.__name__}.new_empty() returned "
                        f"{type(probe).__name__}); implement new_empty(), or "
                        f"override __deepcopy__()")
                with _C._ExcludeDispatchKeyGuard(_BELOW_PYTHON):
                    flat = _C._storage_as_tensor(self).clone()
                    data = ops.aten.as_strided.default(
                        flat, list(_C.TensorBase._sizes(self)),
                        list(_C.TensorBase._strides(self)),
                        _C.TensorBase.storage_offset(self))
                new = _C._make_subclass(cls, data)
            if self.requires_grad:
                new.requires_grad_(True)
            if self.grad is not None:
                new.grad = copy.deepcopy(self.grad, memo)
            state = getattr(self, "__dict__", None)
            if state:
                new.__dict__ = copy.deepcopy(state, memo)
        memo[id(self)] = new
        return new

    def new_empty(self, *size: Any, dtype: Any = None, layout: Any = None,
                  device: Any = None, pin_memory: Any = None,
                  requires_grad: bool = False) -> "Tensor":
        """An uninitialised tensor of `size` (ints or one sequence) with this
        tensor's dtype and device unless given (``aten.new_empty``)."""
        out = ops.aten.new_empty.default(
            self, _size_args("new_empty", size),
            **_like_kwargs(self, dtype, layout, device, pin_memory))
        if requires_grad:
            out.requires_grad_(True)
        return out

    def new_empty_strided(self, size: Any, stride: Any, *, dtype: Any = None,
                          layout: Any = None, device: Any = None,
                          pin_memory: Any = None,
                          requires_grad: bool = False) -> "Tensor":
        """An uninitialised tensor of `size` and `stride` (sequences of ints)
        with this tensor's dtype and device unless given
        (``aten.new_empty_strided``)."""
        out = ops.aten.new_empty_strided.default(
            self, list(size), list(stride),
            **_like_kwargs(self, dtype, layout, device, pin_memory))
        if requires_grad:
            out.requires_grad_(True)
        return out

    def storage(self) -> "TypedStorage":
        """The memory this tensor views, as torch's ``TypedStorage``: its
        ``size()`` in elements, ``data_ptr()``, ``element_size()``,
        ``nbytes()``, ``dtype``, ``device``, ``tolist()``.

        Raises NotImplementedError for a wrapper subclass (it has no
        memory), as torch 1.13.

        Example::

            >>> import turnout
            >>> x = turnout.zeros(2, 3)
            >>> s = x[1].storage()
            >>> s.size(), s.element_size(), s.data_ptr() == x.data_ptr()
            (6, 4, True)
        """
        if not _C._has_storage(self):
            raise NotImplementedError(
                "Tensor.storage(): this tensor has no memory (made by "
                "_make_wrapper_subclass); storage() of a wrapper subclass is "
                "disabled, as torch's. Ask the tensor it wraps instead")
        return TypedStorage(self)

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {self.numel()} values is ambiguous; "
                f"use .any() / .all() or compare one element")
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be "
                            "converted to an index")
        return int(self.item())

    def __array__(self, dtype: Any = None) -> Any:
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    # As torch's: NumPy's scalars defer to the tensor's reflected operators,
    # so that ``numpy.float64(2) * x`` is ``x * 2.0`` (a tensor, with its
    # graph) rather than NumPy's product of x.numpy().
    __array_priority__ = 1000

    __hash__ = _C.TensorBase.__hash__

    # ---- Subclasses with __turnout_dispatch__ (see turnout._mode) ----------
    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if (getattr(cls, "__torch_dispatch__", None) is not None
                and not _C._tensor_class_has_handler(cls)):
            from turnout._mode import _warn_torch_dispatch
            _warn_torch_dispatch(cls, "tensor subclass")

    @classmethod
    def __turnout_dispatch__(cls, func: Any, types: Tuple[type, ...],
                             args: Any = (), kwargs: Any = None) -> Any:
        """Runs ``func(*args, **kwargs)`` below the ``Python`` key.

        As torch's ``Tensor.__torch_dispatch__``: what
        ``super().__turnout_dispatch__(func, types, args, kwargs)`` in a
        subclass's handler calls to run the operator on its instances'
        own data, with no mode and no subclass handler seeing it. A
        subclass that does not override it has no handler: its tensors
        dispatch as plain ones.

        Example::

            >>> import turnout
            >>> class Logged(turnout.Tensor):
            ...     @classmethod
            ...     def __turnout_dispatch__(cls, func, types, args=(), kwargs=None):
            ...         print(func.__name__)
            ...         return super().__turnout_dispatch__(func, types, args, kwargs)
            >>> x = turnout.Tensor._make_subclass(Logged, turnout.ones(2))
            >>> y = x * 2
            mul.Scalar
            >>> type(y).__name__, y.tolist()
            ('Tensor', [2.0, 2.0])
        """
        with _C._ExcludeDispatchKeyGuard(_BELOW_PYTHON):
            return func(*args, **(kwargs or {}))

    _make_subclass = staticmethod(_C._make_subclass)
    _make_wrapper_subclass = staticmethod(_C._make_wrapper_subclass)

    # ---- Conversion --------------------------------------------------------
    def to(self, *args: Any, dtype: Any = None, device: Any = None,
           non_blocking: bool = False, copy: bool = False,
           memory_format: Any = None) -> "Tensor":
        """This tensor with another dtype and/or on another device.

        Positional arguments may be a dtype, a device (or its string) or a
        tensor whose dtype and device to take. Returns `self` when nothing
        changes and `copy` is False.

        Example::

            >>> import turnout
            >>> turnout.tensor([1, 2]).to(turnout.float64)
            tensor([1., 2.], dtype=turnout.float64)
        """
        for a in args:
            if isinstance(a, _C.dtype):
                dtype = a
            elif isinstance(a, (str, _C.device)):
                device = a
            elif isinstance(a, _C.TensorBase):
                dtype, device = a.dtype, a.device
            else:
                raise TypeError(
                    f"Tensor.to(): expected a dtype, a device or a Tensor, got "
                    f"{type(a).__name__} ({a!r})")
        if isinstance(device, str):
            device = _C.device(device)
        # As torch 1.13: a memory_format other than preserve_format copies
        # unless it is the one this tensor's strides suggest.
        keeps_format = (memory_format is None
                        or memory_format == _C.preserve_format
                        or memory_format == _suggested_memory_format(self))
        if (not copy and keeps_format and (dtype is None or dtype is self.dtype)
                and (device is None or _same_device(device, self.device))):
            return self
        return ops.aten._to_copy.default(
            self, dtype=dtype, device=device, non_blocking=non_blocking,
            memory_format=memory_format)

    def cpu(self) -> "Tensor":
        """This tensor in CPU memory (itself when it is there already)."""
        return self.to("cpu")

    def cuda(self, device: Any = None) -> "Tensor":
        """This tensor on a CUDA device (``cuda`` by default)."""
        if device is None:
            device = "cuda"
        elif _is_int(device):
            device = _C.device("cuda", operator.index(device))
        return self.to(device)

    def pin_memory(self, device: Any = None) -> "Tensor":
        """This CPU tensor in page-locked (pinned) memory, which copies to
        and from CUDA can use asynchronously (``non_blocking=True``);
        itself when it is pinned already."""
        return ops.aten.pin_memory.default(self, device)

    def is_pinned(self, device: Any = None) -> bool:
        """True when this CPU tensor's memory is page-locked (pinned)."""
        return ops.aten.is_pinned.default(self, device)

    def record_stream(self, stream: Any) -> None:
        """Marks this CUDA tensor's memory as used on `stream`, so that when
        it is freed the allocator waits for the work queued on `stream`
        before reusing it (a turnout.cuda.Stream)."""
        cuda = _cuda_loader.module("Tensor.record_stream")
        cuda._cuda_recordStream(self, stream.cuda_stream, stream.device_index)

    def float(self) -> "Tensor":
        return self.to(_C.float32)

    def double(self) -> "Tensor":
        return self.to(_C.float64)

    def half(self) -> "Tensor":
        return self.to(_C.float16)

    def long(self) -> "Tensor":
        return self.to(_C.int64)

    def int(self) -> "Tensor":
        return self.to(_C.int32)

    def bool(self) -> "Tensor":
        return self.to(_C.bool)

    def short(self) -> "Tensor":
        return self.to(_C.int16)

    def char(self) -> "Tensor":
        return self.to(_C.int8)

    def byte(self) -> "Tensor":
        return self.to(_C.uint8)

    def bfloat16(self) -> "Tensor":
        return self.to(_C.bfloat16)

    def as_subclass(self, cls: type) -> "Tensor":
        """A `cls` instance sharing this tensor's data, as torch's: an alias
        of it (AliasBackward0 history when it requires grad)."""
        if not (isinstance(cls, type) and issubclass(cls, _TensorBase)):
            raise RuntimeError(
                f"as_subclass({getattr(cls, '__name__', cls)!s}): a tensor "
                f"subclass must inherit from turnout.Tensor; make the class "
                f"derive from it")
        return _C._alias_subclass(cls, self)

    def contiguous(self, memory_format: Any = _C.contiguous_format) -> "Tensor":
        """This tensor with contiguous memory (itself when it already is)."""
        if memory_format is _C.contiguous_format and self.is_contiguous():
            return self
        return ops.aten.contiguous.default(self, memory_format=memory_format)

    # ---- Autograd ----------------------------------------------------------
    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Sets :attr:`requires_grad` in place and returns self."""
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self) -> Any:
        """The backward node that made this tensor, or None: ``name()``
        (``"MulBackward0"``) and ``next_functions``, as torch's."""
        return self._grad_fn

    def backward(self, gradient: Optional["Tensor"] = None,
                 retain_graph: Optional[bool] = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        """Accumulates the gradient of this tensor into the leaves' ``.grad``.

        `gradient` may be omitted for a one-element tensor. As torch's, the
        graph's saved tensors are freed afterwards unless `retain_graph`
        (default: `create_graph`), so a second backward through it raises.
        With `create_graph` the accumulated gradients have a graph of their
        own (double backward), which makes a reference cycle between each
        leaf and its ``.grad``: the first such call of the process warns,
        as torch's (prefer :func:`turnout.autograd.grad`); with `inputs` (a tensor or a sequence) only
        those tensors' ``.grad`` change. See
        :func:`turnout.autograd.backward`.

        Example::

            >>> import turnout
            >>> w = turnout.tensor([1.0, 2.0], requires_grad=True)
            >>> (w * w).sum().backward()
            >>> w.grad
            tensor([2., 4.])
        """
        from turnout.autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # ---- Views and copies --------------------------------------------------
    def view(self, *size: Any) -> "Tensor":
        return ops.aten.view.default(self, _size_args("view", size))

    def reshape(self, *size: Any) -> "Tensor":
        return ops.aten.reshape.default(self, _size_args("reshape", size))

    def expand(self, *size: Any) -> "Tensor":
        return ops.aten.expand.default(self, _size_args("expand", size))

    def permute(self, *dims: Any) -> "Tensor":
        return ops.aten.permute.default(self, _size_args("permute", dims))

    def squeeze(self, dim: Optional[int] = None) -> "Tensor":
        if dim is not None:
            return ops.aten.squeeze.dim(self, dim)
        # aten.squeeze.default itself, as torch's (a mode sees squeeze, and
        # the grad_fn is SqueezeBackward0).
        return ops.aten.squeeze.default(self)

    @property
    def T(self) -> "Tensor":
        """The dimensions reversed."""
        return self.permute(list(range(self.dim() - 1, -1, -1)))

    # ---- Indexing ----------------------------------------------------------
    # As torch's: ints, slices, None and ... make views (select, slice,
    # unsqueeze); tensors, lists and bools index advanced, through one
    # aten.index.Tensor call (aten.index_put_ for assignment) on the view the
    # basic parts made, with None for the dimensions they leave whole.
    # x[key] and x[key] = value are TensorBase's, in C (bindings/tensor.cc):
    # ints, slices, None and ... there, the other keys in _getitem and
    # _setitem below.

    # ---- Operators ---------------------------------------------------------
    # +, -, *, / and // (and their reflected forms) are TensorBase's number
    # slots, in C: see _set_tensor_operators at the end of this module. As
    # torch 1.13, a Python number goes to the Tensor overload as a wrapped
    # number: ``x += 4`` is add_.Tensor(x, 4).
    def __iadd__(self, other: Any) -> "Tensor":
        _add__Tensor(self, other)
        return self

    def __isub__(self, other: Any) -> "Tensor":
        _sub__Tensor(self, other)
        return self

    def __imul__(self, other: Any) -> "Tensor":
        _mul__Tensor(self, other)
        return self

    def __itruediv__(self, other: Any) -> "Tensor":
        _div__Tensor(self, other)
        return self

    def __ifloordiv__(self, other: Any) -> "Tensor":
        _floor_divide__Tensor(self, other)
        return self

    # % as torch 1.13's: remainder.Tensor for a tensor, remainder.Scalar
    # for a number (RemainderBackward0), remainder.Scalar_Tensor for
    # ``4 % x``; an operand neither takes answers NotImplemented, so Python
    # raises its own TypeError.
    def __mod__(self, other: Any) -> "Tensor":
        try:
            if isinstance(other, _TensorBase):
                return _remainder_Tensor(self, other)
            return _remainder_Scalar(self, other)
        except TypeError:
            return NotImplemented

    def __rmod__(self, other: Any) -> "Tensor":
        try:
            return _remainder_Scalar_Tensor(other, self)
        except TypeError:
            return NotImplemented

    def __imod__(self, other: Any) -> "Tensor":
        if isinstance(other, _TensorBase):
            _remainder__Tensor(self, other)
        else:
            _remainder__Scalar(self, other)
        return self

    def __matmul__(self, other: Any) -> "Tensor":
        return _matmul_default(self, other)

    def __rmatmul__(self, other: Any) -> "Tensor":
        return _matmul_default(other, self)

    def __neg__(self) -> "Tensor":
        return _neg_default(self)

    def __abs__(self) -> "Tensor":
        return ops.aten.abs.default(self)

    def __pow__(self, exponent: Any) -> "Tensor":
        try:
            if isinstance(exponent, _TensorBase):
                return _pow_Tensor_Tensor(self, exponent)
            return _pow_Tensor_Scalar(self, exponent)
        except TypeError:
            return NotImplemented

    def __rpow__(self, other: Any) -> "Tensor":
        """``other ** self`` for a number `other`, as torch 1.13's: `other`
        as a fresh tensor of the promoted dtype (aten.lift_fresh), then
        pow.Tensor_Tensor (PowBackward1), so ``2 ** x`` is differentiable in
        x."""
        dtype = _number_result_type(other, self)
        if dtype is None:
            return NotImplemented
        import numpy as np
        if dtype != _C.bool and not dtype.is_floating_point:
            info = np.iinfo(_NUMPY_DTYPES[dtype])
            # As torch.tensor's check: an unsigned dtype takes -max..max
            # (the negative values wrap).
            low = info.min if info.min < 0 else -info.max
            if not low <= int(other) <= info.max:
                name = str(dtype).rsplit(".", 1)[-1]
                raise _C.InvalidArgumentError(
                    f"value cannot be converted to type {name} without "
                    f"overflow: {other!r} ** a tensor of dtype {name}")
            other = int(other) % (info.max + 1) if info.min == 0 else int(other)
        with np.errstate(over="ignore"):  # 1e10 ** a float16 tensor: inf
            base = _fresh_tensor(other, dtype, self.device)
        return _pow_Tensor_Tensor(base, self)

    def __ipow__(self, exponent: Any) -> "Tensor":
        if isinstance(exponent, _TensorBase):
            _pow__Tensor(self, exponent)
        else:
            _pow__Scalar(self, exponent)
        return self

    def _compare(self, name: str, other: Any) -> "Tensor":
        packet = getattr(ops.aten, name)
        if isinstance(other, _TensorBase):
            return packet.Tensor(self, other)
        return packet.Scalar(self, other)

    def __eq__(self, other: Any) -> "Tensor":  # type: ignore[override]
        return self._compare("eq", other)

    def __ne__(self, other: Any) -> "Tensor":  # type: ignore[override]
        return self._compare("ne", other)

    def __lt__(self, other: Any) -> "Tensor":
        return self._compare("lt", other)

    def __le__(self, other: Any) -> "Tensor":
        return self._compare("le", other)

    def __gt__(self, other: Any) -> "Tensor":
        return self._compare("gt", other)

    def __ge__(self, other: Any) -> "Tensor":
        return self._compare("ge", other)


def _channels_last_like(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether 4-d strides order the dims N, H, W, C from outermost to
    innermost (a channels_last layout, possibly with gaps), as torch 1.13
    reads a layout: C's stride nonzero, no empty dim, each of C, W, H, N at
    least the memory spanned by the dims inside it, and a tie between N and
    C (an N111-like tensor) read as contiguous."""
    if strides[1] == 0:
        return False
    spanned = 0
    for d in (1, 3, 2, 0):
        if sizes[d] == 0 or strides[d] < spanned:
            return False
        if d == 0 and spanned == strides[1]:
            return False
        spanned = strides[d] * sizes[d] if sizes[d] > 1 else strides[d]
    return True


def _suggested_memory_format(t: "Tensor") -> Any:
    """The memory format `t`'s strides suggest (torch's
    suggest_memory_format): channels_last for a 4-d tensor laid out so,
    else contiguous_format."""
    if t.dim() == 4 and _channels_last_like(t.shape, t.stride()):
        return _C.channels_last
    return _C.contiguous_format


def _make_method(name: str) -> Any:
    if name.endswith("_"):
        # In place: the same Python object back, as in PyTorch.
        def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
            getattr(ops.aten, name)(self, *args, **kwargs)
            return self
    else:
        def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
            return getattr(ops.aten, name)(self, *args, **kwargs)

    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = (f"``turnout.ops.aten.{name}(self, ...)``; the overload is "
                      f"chosen from the arguments.")
    return method


# The reference operators that PyTorch also has as Tensor methods.
_METHODS = [
    "abs", "add", "add_", "amax", "amin", "argmax", "bmm", "clamp", "clone",
    "copy_", "detach", "div", "div_", "eq", "exp", "fill_", "ge", "gt", "le",
    "log", "lt", "matmul", "mean", "mm", "mul", "mul_", "ne", "neg", "pow", "pow_",
    "relu", "select", "sigmoid", "softmax", "sqrt", "sub", "sub_", "sum", "t",
    "tanh", "transpose", "unsqueeze",
]
# The math, reduction and random operators of kernels/unary_math.h and
# friends (issue 18), with their in-place forms.
_MATH_METHODS = [
    f"{name}{suffix}"
    for name in (
        "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "expm1",
        "log2", "log10", "log1p", "rsqrt", "reciprocal", "erf", "sign",
        "floor", "ceil", "round", "trunc", "acosh", "asinh", "atanh", "erfc",
        "lgamma", "digamma")
    for suffix in ("", "_")
] + [
    "exp_", "log_", "sqrt_", "tanh_", "sigmoid_", "neg_", "abs_",
    "cumsum", "cumsum_", "cumprod", "cumprod_", "max", "min", "sort", "topk",
    "var", "std", "normal_", "uniform_", "bernoulli_", "argmin", "relu_",
    "bitwise_not", "bitwise_not_", "remainder", "remainder_",
]
for _name in _METHODS + _MATH_METHODS:
    setattr(Tensor, _name, _make_method(_name))
del _name

# The shape and indexing operators' methods (kernels/shape_ops.h,
# kernels/indexing.h); those returning several tensors return a tuple, as
# torch's.
for _name in ["as_strided", "diagonal", "flatten", "index_put", "index_put_",
              "index_select", "masked_fill", "masked_fill_", "nonzero"]:
    setattr(Tensor, _name, _make_method(_name))
del _name

# kernels/nn.h's operator that is also a torch.Tensor method.
Tensor.clamp_ = _make_method("clamp_")

# The other registered aten operators that are torch.Tensor methods of the
# same arguments (`x.all()`, `x.isnan()`, `x.maximum(y)`, ...).
for _name in [
        "addmm", "addmv", "addmv_", "all", "angle", "any",
        "baddbmm", "bitwise_xor", "bitwise_xor_", "clamp_max",
        "clamp_max_", "clamp_min", "clamp_min_", "dot", "expand_as",
        "floor_divide", "floor_divide_", "fmod", "fmod_", "gather",
        "isfinite", "isinf", "isnan", "log_softmax", "logical_not",
        "logical_not_", "logical_or", "logical_or_", "logsumexp", "maximum",
        "minimum", "mv", "narrow", "norm", "prod", "scatter_add",
        "split_with_sizes", "type_as", "unsafe_chunk", "unsafe_split",
        "unsafe_split_with_sizes", "zero_",
        # kernels/pointwise_ternary.cc, kernels/select_ops.cc
        "addcdiv", "addcdiv_", "addcmul", "addcmul_", "equal", "lerp",
        "lerp_", "masked_select", "roll", "tril", "tril_", "triu", "triu_",
        # kernels/unary_math.cc, kernels/misc_ops.cc
        "polygamma_", "resize_as_"]:
    setattr(Tensor, _name, _make_method(_name))
del _name
# torch 1.13's alias operators (kernels/aliases.cc) that are Tensor
# methods; their in-place forms where turnout has the target's.
for _name in [
        "arccos", "arcsin", "arctan", "arccosh", "arcsinh", "arctanh",
        "absolute", "negative", "fix", "multiply", "divide", "true_divide",
        "subtract", "clip"]:
    setattr(Tensor, _name, _make_method(_name))
    setattr(Tensor, _name + "_", _make_method(_name + "_"))
for _name in ["greater", "greater_equal", "less", "less_equal", "not_equal"]:
    setattr(Tensor, _name, _make_method(_name))
del _name


def _polygamma(self: Tensor, n: int) -> Tensor:
    """``turnout.ops.aten.polygamma(n, self)``: psi^(n) of this tensor (the
    tensor comes second in the operator, as torch's Tensor.polygamma)."""
    return ops.aten.polygamma.default(n, self)


Tensor.polygamma = _polygamma
Tensor.__xor__ = _make_method("__xor__")
Tensor.__rxor__ = _make_method("__xor__")
Tensor.__ixor__ = _make_method("__ixor__")


def _is_floating_point(self: Tensor) -> bool:
    """Whether the dtype is a floating-point one (read from the dtype, no
    operator call, as torch's)."""
    return self.dtype.is_floating_point


def _where(self: Tensor, condition: Any, y: Any) -> Tensor:
    """``turnout.where(condition, self, y)``: `self` where `condition` holds,
    `y` elsewhere."""
    return ops.aten.where(condition, self, y)


def _new_filled(name: str, what: str) -> Any:
    """Tensor.new_zeros / new_ones: a tensor of `what` of the given size (ints
    or one sequence) with this tensor's dtype and device unless given."""
    op = getattr(ops.aten, name).default

    def method(self: Tensor, *size: Any, dtype: Any = None, layout: Any = None,
               device: Any = None, pin_memory: Any = None,
               requires_grad: bool = False) -> Tensor:
        t = op(self, _size_args(name, size),
               **_like_kwargs(self, dtype, layout, device, pin_memory))
        if requires_grad:
            t.requires_grad_(True)
        return t

    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = (f"A tensor of {what} of the given size with this "
                      f"tensor's dtype and device unless given.")
    return method


def _new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None,
              layout: Any = None, device: Any = None, pin_memory: Any = None,
              requires_grad: bool = False) -> Tensor:
    """A tensor of the given size (a sequence) filled with `fill_value`,
    with this tensor's dtype and device unless given."""
    if not isinstance(size, (list, tuple)):
        raise TypeError(f"new_full(): size must be a sequence of ints (as "
                        f"torch's), got {type(size).__name__}; write "
                        f"new_full(({size!r},), fill_value)")
    t = ops.aten.new_full.default(self, _size_args("new_full", (size,)),
                                  fill_value,
                                  **_like_kwargs(self, dtype, layout, device,
                                                 pin_memory))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _sizes_method(name: str, what: str) -> Any:
    """A method taking its int list as varargs or as one sequence
    (``x.flip(0, 1)`` or ``x.flip([0, 1])``), as torch's."""
    op = getattr(ops.aten, name).default

    def method(self: Tensor, *sizes: Any, **kwargs: Any) -> Tensor:
        if what in kwargs and not sizes:
            sizes = (kwargs.pop(what),)
        if kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument "
                            f"{next(iter(kwargs))!r}")
        if not sizes:
            raise TypeError(f"{name}() missing 1 required positional "
                            f"argument: {what!r}")
        return op(self, _size_args(name, sizes))

    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = (f"``turnout.ops.aten.{name}(self, {what})``; {what} as "
                      f"ints or as one sequence.")
    return method


def _resize_(self: Tensor, *size: Any, memory_format: Any = None) -> Tensor:
    """Gives this tensor `size` in place (``aten.resize_``): contiguous
    strides (or `memory_format`'s), its storage grown when too small and
    never shrunk; the elements beyond the old ones are uninitialised."""
    if not size:
        raise TypeError("resize_() missing 1 required positional argument: "
                        "'size'")
    ops.aten.resize_.default(self, _size_args("resize_", size),
                             memory_format=memory_format)
    return self


def _contains(self: Tensor, element: Any) -> bool:
    """``element in t``: whether some element equals `element`, as torch's
    (``(t == element).any()``)."""
    if not isinstance(element, (Tensor, int, float, bool)):
        raise RuntimeError(
            f"`x in tensor` compares x with the tensor's elements: x must be "
            f"a tensor or a number, got {type(element).__name__}")
    return bool((self == element).any().item())


Tensor.is_floating_point = _is_floating_point
Tensor.where = _where
Tensor.new_zeros = _new_filled("new_zeros", "zeros")
Tensor.new_ones = _new_filled("new_ones", "ones")
Tensor.new_full = _new_full
Tensor.flip = _sizes_method("flip", "dims")
Tensor.repeat = _sizes_method("repeat", "repeats")
Tensor.sum_to_size = _sizes_method("sum_to_size", "size")
Tensor.resize_ = _resize_
Tensor.__contains__ = _contains


def _tuple_method(name: str) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> tuple:
        return tuple(getattr(ops.aten, name)(self, *args, **kwargs))

    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = (f"``turnout.ops.aten.{name}(self, ...)`` as a tuple; the "
                      f"overload is chosen from the arguments.")
    return method


Tensor.chunk = _tuple_method("chunk")
Tensor.unbind = _tuple_method("unbind")


def _split(self: Tensor, split_size: Any, dim: int = 0) -> tuple:
    """Views of `split_size` entries along `dim` (an int), or of the sizes
    in a list: ``turnout.split(self, split_size, dim)``."""
    from turnout._functional import split
    return split(self, split_size, dim)


Tensor.split = _split


# ---- Methods torch defines over other operators ------------------------------
# Each calls the operators torch 1.13's does, so that a dispatch mode logs the
# same calls (tests/python/test_tensor_methods_torch.py).


def _wrap_dim(dim: int, ndim: int, what: str) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{what}: dimension {dim} is out of range for a "
                         f"tensor of {ndim} dimensions (expected one in "
                         f"[{-n}, {n - 1}])")
    return dim % n


def _view_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.view(other.size())``."""
    return self.view(other.size())


def _reshape_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.reshape(other.size())``."""
    return self.reshape(other.size())


def _swapaxes(self: Tensor, axis0: int, axis1: int) -> Tensor:
    """``self.transpose(axis0, axis1)`` (NumPy's name)."""
    return ops.aten.transpose.int(self, axis0, axis1)


def _movedim(self: Tensor, source: Any, destination: Any) -> Tensor:
    """A view with the dimensions in `source` (an int or a sequence) moved to
    the positions in `destination`, the others keeping their order."""
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: source ({len(src)} dims) and destination "
            f"({len(dst)} dims) must name as many dimensions")
    n = self.dim()
    src = [_wrap_dim(d, n, "movedim") for d in src]
    dst = [_wrap_dim(d, n, "movedim") for d in dst]
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({dims})")
    order = [-1] * n
    for s_dim, d_dim in zip(src, dst):
        order[d_dim] = s_dim
    rest = iter(d for d in range(n) if d not in src)
    order = [d if d >= 0 else next(rest) for d in order]
    return ops.aten.permute.default(self, order)


def _clip(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """``self.clamp(min, max)``."""
    return self.clamp(min, max)


def _clip_(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """``self.clamp_(min, max)``."""
    return self.clamp_(min, max)


def _square(self: Tensor) -> Tensor:
    """``self ** 2`` (``aten.pow.Tensor_Scalar``)."""
    return ops.aten.pow.Tensor_Scalar(self, 2)


def _fliplr(self: Tensor) -> Tensor:
    """A copy with the columns (dimension 1) in reverse order."""
    if self.dim() < 2:
        raise RuntimeError("fliplr: the tensor must have at least 2 "
                           f"dimensions, it has {self.dim()}")
    return ops.aten.flip.default(self, [1])


def _flipud(self: Tensor) -> Tensor:
    """A copy with the rows (dimension 0) in reverse order."""
    if self.dim() < 1:
        raise RuntimeError("flipud: the tensor must have at least 1 "
                           "dimension, it has 0")
    return ops.aten.flip.default(self, [0])


def _unflatten(self: Tensor, dim: int, sizes: Any) -> Tensor:
    """A view with dimension `dim` split into `sizes` (one may be -1)."""
    sizes = list(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    d = _wrap_dim(dim, self.dim(), "unflatten")
    shape = list(self.shape)
    return self.view(shape[:d] + sizes + shape[d + 1:])


def _tile(self: Tensor, dims: Any, *more: int) -> Tensor:
    """``self.repeat(dims)``, `dims` padded with leading 1s to the tensor's
    number of dimensions."""
    reps = [dims, *more] if isinstance(dims, int) else list(dims)
    reps = [1] * (self.dim() - len(reps)) + reps
    return ops.aten.repeat.default(self, reps)


_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor",
               "float16": "HalfTensor", "bfloat16": "BFloat16Tensor",
               "int64": "LongTensor", "int32": "IntTensor",
               "int16": "ShortTensor", "int8": "CharTensor",
               "uint8": "ByteTensor", "bool": "BoolTensor"}


def _type(self: Tensor, dtype: Any = None, non_blocking: bool = False) -> Any:
    """Without `dtype`: the tensor's type name (``'turnout.FloatTensor'``,
    ``'turnout.cuda.FloatTensor'``). With a dtype (or such a name): the
    tensor converted to it, or the tensor itself when it has it already."""
    if dtype is None:
        prefix = "turnout.cuda." if self.is_cuda else "turnout."
        return prefix + _TYPE_NAMES[str(self.dtype).rsplit(".", 1)[-1]]
    device = self.device
    if isinstance(dtype, str):
        prefix, _, name = dtype.rpartition(".")
        by_name = {v: k for k, v in _TYPE_NAMES.items()}
        if name not in by_name or prefix not in ("turnout", "turnout.cuda",
                                                 "torch", "torch.cuda"):
            raise ValueError(f"Tensor.type: invalid type '{dtype}' (expected "
                             f"a dtype or a name like 'turnout.FloatTensor' "
                             f"or 'turnout.cuda.FloatTensor')")
        import turnout
        dtype = getattr(turnout, by_name[name])
        cuda = prefix.endswith(".cuda")
        if cuda != self.is_cuda:
            device = turnout.device("cuda" if cuda else "cpu")
    if dtype == self.dtype and device == self.device:
        return self
    return self.to(device=device, dtype=dtype, non_blocking=non_blocking)


def _is_complex(self: Tensor) -> bool:
    """False: turnout has no complex dtypes."""
    return False


def _is_signed(self: Tensor) -> bool:
    """Whether the dtype holds negative values (not uint8, not bool)."""
    return str(self.dtype).rsplit(".", 1)[-1] not in ("uint8", "bool")


def _new_tensor(self: Tensor, data: Any, dtype: Any = None, device: Any = None,
                requires_grad: bool = False) -> Tensor:
    """``turnout.tensor(data)`` with this tensor's dtype and device unless
    given."""
    import turnout
    return turnout.tensor(data, dtype=self.dtype if dtype is None else dtype,
                          device=self.device if device is None else device,
                          requires_grad=requires_grad)


def _allclose(self: Tensor, other: Tensor, rtol: float = 1e-05,
              atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """``turnout.allclose(self, other, ...)``."""
    from turnout._functional import allclose
    return allclose(self, other, rtol, atol, equal_nan)


Tensor.view_as = _view_as
Tensor.reshape_as = _reshape_as
Tensor.swapaxes = Tensor.swapdims = _swapaxes
Tensor.movedim = Tensor.moveaxis = _movedim
Tensor.clip = _clip
Tensor.clip_ = _clip_
Tensor.square = _square
Tensor.fliplr = _fliplr
Tensor.flipud = _flipud
Tensor.unflatten = _unflatten
Tensor.tile = _tile
Tensor.type = _type
Tensor.is_complex = _is_complex
Tensor.is_signed = _is_signed
Tensor.new_tensor = _new_tensor
Tensor.allclose = _allclose

_index_Tensor = ops.aten.index.Tensor
_index_put_ = ops.aten.index_put_.default

# A list index is read as a tuple of indices (NumPy's legacy rule, which
# torch keeps) when it is short and holds a slice, None, ..., a sequence or
# a tensor: x[[0, slice(None)]] is x[0, :], x[[[0, 1]]] is x[[0, 1]].
_MAX_SEQUENCE_AS_TUPLE = 32


def _as_index_tuple(key: Any) -> Tuple[Any, ...]:
    if isinstance(key, tuple):
        return key
    if isinstance(key, list) and len(key) < _MAX_SEQUENCE_AS_TUPLE and any(
            k is None or k is Ellipsis or isinstance(k, (slice, list, tuple,
                                                         _C.TensorBase))
            for k in key):
        return tuple(key)
    return (key,)


_NUMPY_DTYPES = {
    _C.float32: "float32", _C.float64: "float64", _C.float16: "float16",
    _C.int64: "int64", _C.int32: "int32", _C.int16: "int16", _C.int8: "int8",
    _C.uint8: "uint8", _C.bool: "bool",
}


def _is_advanced(k: Any) -> bool:
    """True for the parts of an index that index.Tensor takes (a 0-dim
    integer tensor selects, as an int)."""
    if isinstance(k, (bool, list, tuple)):
        return True
    if isinstance(k, _C.TensorBase):
        return not (k.dim() == 0 and k.dtype not in (_C.bool, _C.uint8)
                    and not k.dtype.is_floating_point)
    return False


def _number_tensor(value: Any, dtype: Any, device: Any) -> Tensor:
    """A 0-dim tensor of number `value` in `dtype` made below the Python key,
    then passed through aten.lift_fresh, as torch's setitem makes its value
    tensor (a mode sees only the lift_fresh)."""
    with _C._ExcludeDispatchKeyGuard(_BELOW_PYTHON):
        t = ops.aten.scalar_tensor.default(value, dtype=dtype, device=device)
    return ops.aten.lift_fresh.default(t)


def _fresh_tensor(value: Any, dtype: Any, device: Any) -> Tensor:
    """A tensor of Python `value` made outside the dispatcher, then passed
    through aten.lift_fresh, as torch's indexing makes its index and value
    tensors (so a mode sees the same calls). `dtype` None: bool, int64 or
    float32 from the values."""
    import numpy as np
    np_dtype = _NUMPY_DTYPES.get(dtype) if dtype is not None else None
    if dtype is not None and np_dtype is None:  # bfloat16: no NumPy dtype
        from turnout._factories import tensor
        return ops.aten.lift_fresh.default(tensor(value, dtype=dtype,
                                                  device=device))
    arr = np.array(value, dtype=np_dtype)
    if np_dtype is None:
        if arr.size == 0:
            arr = arr.astype(np.int64)
        elif arr.dtype.kind in "iu":
            arr = arr.astype(np.int64)
        elif arr.dtype.kind == "f":
            arr = arr.astype(np.float32)
    t = _C.from_numpy(np.array(arr, order="C"))
    if device is not None and not _same_device(_C.device(device) if isinstance(
            device, str) else device, t.device):
        t = t.to(device)
    return ops.aten.lift_fresh.default(t)


def _index_tensor(k: Any, device: Any) -> Tensor:
    """A list or tuple index as a tensor (long, or bool for bools)."""
    try:
        return _fresh_tensor(k, None, device)
    except (TypeError, ValueError):
        raise IndexError(
            f"only integers, slices (`:`), ellipsis (`...`), None and long or "
            f"byte Variables are valid indices (got {k!r})") from None


_INT64_MAX = 2 ** 63 - 1


def _slice_bound(v: Any, default: int) -> int:
    """A slice's start or stop as torch reads it: None gives `default`,
    anything else an int clamped to int64's range."""
    if v is None:
        return default
    return max(-_INT64_MAX - 1, min(_INT64_MAX, operator.index(v)))


def _copy_to(dst: Tensor, src: Tensor) -> None:
    """``dst[...] = src`` after basic indexing, calling what torch 1.13
    calls: copy_ for the same sizes, fill_ for a 0-dim CPU value, else the
    value without its leading 1s, expanded to dst and copied."""
    if dst.shape == src.shape:
        ops.aten.copy_.default(dst, src)
        return
    if src.dim() == 0 and src.device.type == "cpu":
        ops.aten.fill_.Tensor(dst, src)
        return
    sizes = list(src.shape)
    while sizes and sizes[0] == 1:
        del sizes[0]
    src = ops.aten.view.default(src, sizes)
    if list(src.shape) != list(dst.shape):
        try:
            src = ops.aten.expand.default(src, list(dst.shape))
        except RuntimeError:
            raise RuntimeError(
                f"setitem: the value's shape {list(src.shape)} cannot be "
                f"broadcast to the indexed shape {list(dst.shape)}") from None
    ops.aten.copy_.default(dst, src)


def _getitem(self: Tensor, key: Any) -> Tensor:
    """``self[key]`` for the keys TensorBase's C indexing leaves to Python
    (tensors, lists, bools, objects with __index__, bad keys): the same
    calls, in the same order."""
    result, indices = _apply_index(self, key)
    if indices is None:
        return result
    return _index_Tensor(result, indices)


def _setitem(self: Tensor, key: Any, value: Any) -> None:
    """``self[key] = value`` for what TensorBase's C assignment leaves to
    Python: torch 1.13's calls (a number's value tensor through lift_fresh,
    then copy_ / fill_ / index_put_), but for a plain Tensor with no mode."""
    if not isinstance(value, _C.TensorBase):
        if _number_kind(value) is None and not isinstance(value, complex):
            raise TypeError(
                f"can't assign a {type(value).__name__} to a tensor: "
                f"assign a number or a tensor (turnout.tensor(value))")
        if type(self) is Tensor and not _C._dispatch_mode_stack():
            # Nothing in Python sees the calls or their order: basic
            # indexing fills with fill_.Scalar, without a value tensor.
            view, indices = _apply_index(self, key, for_setitem=True)
            if indices is None:
                ops.aten.fill_.Scalar(view, value)
            else:
                _index_put_(view, indices,
                            _number_tensor(value, self.dtype, self.device))
            return
        # A tensor of self's dtype first, as torch's order of calls.
        value = _number_tensor(value, self.dtype, self.device)
    if isinstance(key, bool):
        # As torch 1.13's: x[False] = v assigns nothing, x[True] = v is
        # x.unsqueeze(0)[...] = v.
        if key:
            _copy_to(ops.aten.unsqueeze.default(self, 0), value)
        return
    view, indices = _apply_index(self, key, for_setitem=True)
    if indices is None:
        _copy_to(view, value)
        return
    _index_put_(view, indices, value)


def _apply_index(self: Tensor, key: Any, for_setitem: bool = False
                 ) -> Tuple[Tensor, Optional[list]]:
    """The view of `self` that key's basic parts make, and the indices
    (``Tensor?[]``, None for whole dimensions) of its advanced parts, or
    None when it has none. As torch 1.13's: a slice of a whole dimension
    (0, its size, step 1) is skipped, but for x[a:b] read alone; a read that
    leaves `self` as it was returns ``aten.alias(self)``."""
    parts = _as_index_tuple(key)
    alone = len(parts) == 1 and parts[0] is key  # not a tuple or sequence
    skip_whole = for_setitem or not alone
    key = parts
    # What each part consumes of self's dimensions.
    consumed = 0
    ellipses = 0
    for k in key:
        if k is None or isinstance(k, bool):
            continue
        if isinstance(k, _C.TensorBase) and k.dim() == 0 and k.dtype in (
                _C.bool, _C.uint8):
            continue
        if k is Ellipsis:
            ellipses += 1
        elif isinstance(k, _C.TensorBase) and k.dtype in (_C.bool, _C.uint8):
            consumed += k.dim()
        else:
            consumed += 1
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > self.dim():
        raise IndexError(f"too many indices for tensor of dimension "
                         f"{self.dim()} (got {consumed})")
    result, dim = self, 0
    indices: list = []
    for k in key:
        if k is None:
            result = ops.aten.unsqueeze.default(result, dim)
            dim += 1
        elif k is Ellipsis:
            dim += self.dim() - consumed
        elif isinstance(k, bool) or (isinstance(k, _C.TensorBase) and k.dim() == 0
                                     and k.dtype in (_C.bool, _C.uint8)):
            # x[True]: a new dimension of size 1; x[False]: of size 0. The
            # index tensor as torch 1.13 makes it: empty.names, [0] filled.
            result = ops.aten.unsqueeze.default(result, dim)
            k = bool(k.item()) if isinstance(k, _C.TensorBase) else k
            idx = ops.aten.empty.names([1 if k else 0], names=None,
                                       dtype=_C.int64, layout=_C.strided,
                                       device=self.device)
            if k:
                ops.aten.fill_.Scalar(idx, 0.0)
            indices.extend([None] * (dim - len(indices)))
            indices.append(idx)
            dim += 1
        elif isinstance(k, slice):
            step = 1 if k.step is None else operator.index(k.step)
            if step <= 0:
                raise ValueError(f"slice step must be positive, got {step}")
            start = _slice_bound(k.start, 0)
            stop = _slice_bound(k.stop, _INT64_MAX)
            if not (skip_whole and start == 0 and step == 1
                    and stop == result.shape[dim]):
                result = ops.aten.slice.Tensor(result, dim, start, stop, step)
            dim += 1
        elif _is_int(k) and not isinstance(k, _C.TensorBase):
            k = operator.index(k)
            size = result.shape[dim]
            if not -size <= k < size:
                # As torch's: refused before select.
                raise IndexError(f"index {k} is out of bounds for dimension "
                                 f"{dim} with size {size}")
            result = ops.aten.select.int(result, dim, k)
        elif isinstance(k, (_C.TensorBase, list, tuple)):
            t = k if isinstance(k, _C.TensorBase) else _index_tensor(k, self.device)
            if t.dim() == 0 and t.dtype not in (_C.bool, _C.uint8) \
                    and not t.dtype.is_floating_point:
                # A 0-dim integer tensor selects, as an int would.
                result = ops.aten.select.int(result, dim, int(t.item()))
                continue
            indices.extend([None] * (dim - len(indices)))
            indices.append(t)
            dim += t.dim() if t.dtype in (_C.bool, _C.uint8) else 1
        elif isinstance(k, float):
            raise IndexError(
                f"only integers, slices (`:`), ellipsis (`...`), None and long "
                f"or byte Variables are valid indices (got {type(k).__name__})")
        else:
            raise TypeError(
                f"tensor indices must be ints, slices, None or ..., bools, lists "
                f"or tensors, got {type(k).__name__} ({k!r})")
    if not indices and result is self and not for_setitem:
        result = ops.aten.alias.default(self)
    return result, (indices if indices else None)


# The overloads behind the arithmetic operators, looked up once: `a + b`
# then costs one global load instead of three attribute lookups. Their
# Tensor arguments take Python numbers (as torch 1.13's wrapped numbers).
_add_Tensor = ops.aten.add.Tensor
_sub_Tensor = ops.aten.sub.Tensor
_rsub_Scalar = ops.aten.rsub.Scalar
_mul_Tensor = ops.aten.mul.Tensor
_div_Tensor = ops.aten.div.Tensor
_floor_divide = ops.aten.floor_divide.default
_add__Tensor = ops.aten.add_.Tensor
_sub__Tensor = ops.aten.sub_.Tensor
_mul__Tensor = ops.aten.mul_.Tensor
_div__Tensor = ops.aten.div_.Tensor
_floor_divide__Tensor = ops.aten.floor_divide_.Tensor
_remainder_Tensor = ops.aten.remainder.Tensor
_pow_Tensor_Tensor = ops.aten.pow.Tensor_Tensor
_pow_Tensor_Scalar = ops.aten.pow.Tensor_Scalar
_pow__Tensor = ops.aten.pow_.Tensor
_pow__Scalar = ops.aten.pow_.Scalar
_remainder_Scalar = ops.aten.remainder.Scalar
_remainder_Scalar_Tensor = ops.aten.remainder.Scalar_Tensor
_remainder__Tensor = ops.aten.remainder_.Tensor
_remainder__Scalar = ops.aten.remainder_.Scalar
_neg_default = ops.aten.neg.default
_reciprocal_default = ops.aten.reciprocal.default
_matmul_default = ops.aten.matmul.default


def _number_kind(value: Any) -> Optional[int]:
    """A number's promotion category as torch 1.13's argument parser reads
    it: 0 for a bool, 1 for an int or NumPy integer, 2 for a float, a NumPy
    floating scalar or numpy.bool_ (torch reads it as a float); None for
    anything else."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, float):
        return 2
    if isinstance(value, int):
        return 1
    module = type(value).__module__
    if module == "numpy":
        import numpy as np
        if isinstance(value, (np.floating, np.bool_)):
            return 2
        if isinstance(value, np.integer):
            return 1
    return None


def _number_result_type(number: Any, t: Tensor) -> Any:
    """torch.result_type(number, t): t's dtype unless the number is of a
    higher category (bool < integer < floating), then that category's
    default (bool, int64, the default float dtype). None for a non-number."""
    kind = _number_kind(number)
    if kind is None:
        return None
    dtype = t.dtype
    tensor_kind = 0 if dtype == _C.bool else (2 if dtype.is_floating_point else 1)
    if kind <= tensor_kind:
        return dtype
    return _C.int64 if kind == 1 else _C.float32


def _rsub(self: Tensor, other: Any) -> Tensor:
    """``other - self`` for a non-tensor `other`: rsub.Scalar, as torch
    1.13's."""
    return _rsub_Scalar(self, other)


def _rtruediv(self: Tensor, other: Any) -> Tensor:
    """``other / self`` for a non-tensor `other`: as torch 1.13,
    ``self.reciprocal() * other`` (reciprocal, then mul.Tensor)."""
    return _mul_Tensor(_reciprocal_default(self), other)


_C._set_tensor_operators(
    add_Tensor=_add_Tensor, sub_Tensor=_sub_Tensor, rsub=_rsub,
    mul_Tensor=_mul_Tensor, div_Tensor=_div_Tensor, rtruediv=_rtruediv,
    floor_divide=_floor_divide, select_int=ops.aten.select.int,
    slice_Tensor=ops.aten.slice.Tensor, unsqueeze=ops.aten.unsqueeze.default,
    alias=ops.aten.alias.default, fill_Scalar=ops.aten.fill_.Scalar,
    getitem=_getitem, setitem=_setitem)
# As torch's _TensorBase: the tensor methods live on the base class too, so
# that a subclass of turnout._C.TensorBase has them.
_NOT_ON_BASE = {"__module__", "__doc__", "__dict__", "__weakref__",
                "__init_subclass__", "__turnout_dispatch__", "__hash__",
                "__qualname__"}
for _name, _value in list(Tensor.__dict__.items()):
    if _name not in _NOT_ON_BASE and _name not in _TensorBase.__dict__:
        setattr(_TensorBase, _name, _value)
del _name, _value

_C._set_tensor_class(Tensor)
