"""``turnout.<op>``: the functional namespace, made from the registry.

As ``torch.cat``, ``torch.where``, ``torch.relu``: every operator of
namespace ``aten`` is a function of the ``turnout`` module, unless torch
1.13 has it as a Tensor method only (``view``, ``copy_``, ``item``, ...),
it is an internal operator torch keeps off its top level (``index``,
``slice``, ``_to_copy``, the ``*_backward`` ones) or in torch.special
(``special_psi``: :mod:`turnout.special`), it takes and returns no
tensor (``len.t``, ``add.int``: TorchScript's number builtins), or the name
is taken already (``turnout.tensor``, ``turnout.zeros`` and the other
factories of :mod:`turnout._factories`, dtypes, submodules): nothing is
shadowed.

The functions are made on first access from the operators registered then
(``turnout.__getattr__``), so operators registered later, by a
``Library`` or :meth:`turnout.ops.load_library`, appear too, and importing
turnout costs nothing for them. Each calls the operator's overload packet
(the first overload whose schema accepts the arguments), so a dispatch mode
sees the same ``aten`` call torch's would; lists of tensors come back as
tuples, as torch's functions return them. Its docstring lists the schemas.

Example::

    >>> import turnout
    >>> x = turnout.tensor([[1.0, -2.0], [3.0, 4.0]])
    >>> turnout.relu(x)
    tensor([[1., 0.],
            [3., 4.]])
    >>> turnout.cat([x, x]).shape
    turnout.Size([4, 2])
    >>> turnout.where(x > 0, x, 0.0)
    tensor([[1., 0.],
            [3., 4.]])
    >>> turnout.allclose(x, x + 1e-9)
    True
    >>> print(turnout.relu.__doc__.splitlines()[0])
    ``turnout.ops.aten.relu``, as a function.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from turnout import _C
from turnout._ops import ops

__all__ = ["allclose", "function_names", "lookup", "split", "where"]

# torch 1.13's aten operators that are Tensor methods but not torch.<name>
# functions (a method-only `variants:` in native_functions.yaml), read from
# torch 1.13 (hasattr(torch.Tensor, n) and not hasattr(torch, n)).
_METHOD_ONLY = frozenset("""
__and__ __contains__ __getitem__ __iand__ __ilshift__ __ior__ __irshift__
__ixor__ __lshift__ __or__ __rshift__ __xor__ _autocast_to_full_precision
_autocast_to_reduced_precision _coalesced_ _dimI _dimV _indices
_nested_tensor_layer_norm _nested_tensor_size _nnz _to_dense _values _version
absolute_ add_ addbmm_ addcdiv_ addcmul_ addmm_ addr_ align_as align_to
arctan2_ atan2_ backward baddbmm_ bernoulli_ bitwise_and_ bitwise_left_shift_
bitwise_not_ bitwise_or_ bitwise_right_shift_ bitwise_xor_ cauchy_
ccol_indices coalesce col_indices contiguous copy_ copysign_ crow_indices
cumprod_ cumsum_ data dense_dim digamma_ dim div_ divide_ element_size eq_
erfinv_ expand expand_as exponential_ fill_diagonal_ float_power_
floor_divide_ fmod_ ge_ geometric_ grad greater_ greater_equal_ gt_
heaviside_ hypot_ igamma_ igammac_ index_add_ index_copy_ index_fill_
index_reduce_ indices is_coalesced is_contiguous is_leaf is_pinned is_set_to
item le_ lerp_ less_ less_equal_ lgamma_ log_normal_ logical_and_
logical_not_ logical_or_ logical_xor_ lt_ mH mT masked_fill_ masked_scatter_
mul_ multiply_ mvlgamma_ ne_ new_empty new_empty_strided new_full new_ones
new_zeros nextafter_ normal_ not_equal_ output_nr pin_memory polygamma_ pow_
put_ random_ record_stream refine_names remainder_ rename rename_ renorm_
repeat requires_grad_ reshape_as resize resize_ resize_as retain_grad
retains_grad row_indices scatter_ scatter_add_ scatter_reduce_ set_ sgn_
sign_ size sparse_dim sparse_mask sparse_resize_ sparse_resize_and_clear_
squeeze_ storage_offset stride sub_ subtract_ sum_to_size swapaxes_
swapdims_ t_ to to_dense to_mkldnn to_padded_tensor to_sparse to_sparse_bsc
to_sparse_bsr to_sparse_csc to_sparse_csr transpose_ tril_ triu_
true_divide_ type_as unfold uniform_ unsqueeze_ values view view_as
""".split())

# Internal operators torch 1.13 has neither as torch.<name> nor as a method.
_INTERNAL = frozenset("""
index slice _to_copy linear lift lift_fresh lift_fresh_copy
_local_scalar_dense _reshape_alias _unsafe_view _index_put_impl
_softmax_backward_data _log_softmax_backward_data
count sym_size sym_stride sym_numel sym_storage_offset
max_pool2d_with_indices avg_pool2d adaptive_avg_pool2d
_set_item clear copy dict get items keys len pop popitem setdefault update
alias
""".split())  # count: TorchScript's list.count (jit/runtime/script_builtins.cc);
# _set_item ... update: its dict builtins (jit/runtime/dict_builtins.cc);
# alias: Tensor(t)'s view, torch.ops.aten.alias only;
# sym_*: metadata queries torch has no torch.<name> for; the pools:
# torch.nn.functional's (torch._C._nn), not torch.<name>


# torch 1.13's operators of torch._C._nn (`python_module: nn`): torch has
# them in torch.nn.functional, not as torch.<name>.
_NN_MODULE = frozenset("""
cross_entropy_loss elu elu_ gelu gelu_ hardtanh hardtanh_ leaky_relu
leaky_relu_ nll_loss nll_loss2d nll_loss2d_forward nll_loss_forward
nll_loss_nd pad silu silu_ softplus
""".split())


def _excluded(name: str) -> bool:
    # special_*: torch.special's (torch._C._special), not torch.<name>;
    # turnout.special calls them.
    return (name in _METHOD_ONLY or name in _INTERNAL or name in _NN_MODULE
            or name.startswith("__") or name.startswith("special_")
            or name[:1].isupper() or name.endswith("_backward")
            or name.endswith("_backward_data"))


def _schemas(packet: Any) -> List[Any]:
    return [getattr(packet, o)._schema for o in packet.overloads()]


def _has_tensors(schemas: Sequence[Any]) -> bool:
    for s in schemas:
        for a in list(s.arguments) + list(s.returns):
            if "Tensor" in str(a.type):
                return True
    return False


def _tuple_if_list(r: Any) -> Any:
    return tuple(r) if isinstance(r, list) else r


def _is_factory(schemas: Sequence[Any]) -> bool:
    """Every overload but the out= ones makes a tensor from no tensor
    argument and takes the TensorOptions keywords (eye, scalar_tensor,
    empty_strided, ...)."""
    functional = [s for s in schemas
                  if not any(a.name == "out" for a in s.arguments)]
    for s in functional:
        names = {a.name for a in s.arguments}
        if not {"dtype", "layout", "device", "pin_memory"} <= names:
            return False
        if any("Tensor" in str(a.type) for a in s.arguments):
            return False
    return bool(functional)


def _make_function(name: str, packet: Any, schemas: Sequence[Any]) -> Callable:
    if _is_factory(schemas):
        from turnout._tensor import _factory_kwargs

        def fn(*args: Any, requires_grad: bool = False, **kwargs: Any) -> Any:
            # What torch's Python factories pass (a mode sees the same).
            t = packet(*args, **(kwargs if kwargs.get("out") is not None
                                 else _factory_kwargs(**kwargs)))
            if requires_grad:
                t.requires_grad_(True)
            return t
    else:
        def fn(*args: Any, **kwargs: Any) -> Any:
            return _tuple_if_list(packet(*args, **kwargs))

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__module__ = "turnout"
    lines = "\n".join(f"    {s}" for s in schemas)
    fn.__doc__ = (f"``turnout.ops.aten.{name}``, as a function.\n\n"
                  f"Calls the first overload whose schema accepts the "
                  f"arguments; a list of tensors comes back as a tuple.\n\n"
                  f"Schemas::\n\n{lines}\n")
    return fn


# ---- Functions written here (torch's Python-level behaviour) -------------------

def split(tensor: Any, split_size_or_sections: Union[int, Sequence[int]],
          dim: int = 0) -> tuple:
    """Splits `tensor` into views along `dim`, as ``torch.split``.

    An int gives pieces of that size (the last one shorter):
    ``aten.split.Tensor``; a list gives pieces of those sizes:
    ``aten.split_with_sizes``.

    Example::

        >>> import turnout
        >>> [p.tolist() for p in turnout.split(turnout.arange(5), 2)]
        [[0, 1], [2, 3], [4]]
        >>> [p.tolist() for p in turnout.split(turnout.arange(5), [1, 4])]
        [[0], [1, 2, 3, 4]]
    """
    if isinstance(split_size_or_sections, (list, tuple)):
        return tuple(ops.aten.split_with_sizes.default(
            tensor, list(split_size_or_sections), dim))
    return tuple(ops.aten.split.Tensor(tensor, split_size_or_sections, dim))


def where(condition: Any, input: Any = None, other: Any = None, *,
          out: Any = None) -> Any:
    """Elements of `input` where `condition` is true, else of `other`, as
    ``torch.where``; ``where(condition)`` is ``condition.nonzero()`` as a
    tuple of index tensors, one per dimension.

    Numbers take part in type promotion as numbers (``where.ScalarOther``,
    ``where.ScalarSelf``, ``where.Scalar``). With `out` (two tensors, as
    torch.where), the result is written into it (``where.self_out``).

    Example::

        >>> import turnout
        >>> c = turnout.tensor([True, False, True])
        >>> turnout.where(c, turnout.tensor([1, 2, 3]), 0)
        tensor([1, 0, 3])
        >>> turnout.where(c)
        (tensor([0, 2]),)
    """
    if out is not None:
        if not (isinstance(input, _C.TensorBase)
                and isinstance(other, _C.TensorBase)):
            raise TypeError("where(condition, input, other, *, out): out= "
                            "needs input and other to be tensors (as "
                            "torch.where)")
        return ops.aten.where.self_out(condition, input, other, out=out)
    if input is None and other is None:
        return tuple(ops.aten.where.default(condition))
    if input is None or other is None:
        raise TypeError("where(condition, input, other): expected both input "
                        "and other, or neither (where(condition))")
    t_in = isinstance(input, _C.TensorBase)
    t_other = isinstance(other, _C.TensorBase)
    if t_in and t_other:
        return ops.aten.where.self(condition, input, other)
    if t_in:
        return ops.aten.where.ScalarOther(condition, input, other)
    if t_other:
        return ops.aten.where.ScalarSelf(condition, input, other)
    return ops.aten.where.Scalar(condition, input, other)


def allclose(input: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """True when ``|input - other| <= atol + rtol * |other|`` everywhere (they
    broadcast), as ``torch.allclose``; equal infinities are close, NaNs only
    with `equal_nan`.

    Raises:
        RuntimeError: the dtypes differ ("Float did not match Double").

    Example::

        >>> import turnout
        >>> turnout.allclose(turnout.tensor([1.0, 2.0]), turnout.tensor([1.0, 2.0 + 1e-6]))
        True
        >>> turnout.allclose(turnout.tensor([1.0]), turnout.tensor([1.1]))
        False
    """
    a = ops.aten
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_dtype_name(input.dtype)} did not match "
                           f"{_dtype_name(other.dtype)}")
    close = a.le.Tensor(a.abs.default(a.sub.Tensor(input, other)),
                        a.add.Scalar(a.mul.Scalar(a.abs.default(other), rtol),
                                     atol))
    close = a.where.ScalarSelf(a.eq.Tensor(input, other), True, close)
    if equal_nan:
        both_nan = a.where.ScalarOther(a.ne.Tensor(input, input),
                                       a.ne.Tensor(other, other), False)
        close = a.where.ScalarSelf(both_nan, True, close)
    return a.sum.default(a.eq.Scalar(close, False)).item() == 0


_DTYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half",
                "bfloat16": "BFloat16", "int64": "Long", "int32": "Int",
                "int16": "Short", "int8": "Char", "uint8": "Byte",
                "bool": "Bool"}


def _dtype_name(dtype: Any) -> str:
    s = str(dtype).rsplit(".", 1)[-1]
    return _DTYPE_NAMES.get(s, s)


_WRITTEN: Dict[str, Callable] = {"split": split, "where": where,
                                 "allclose": allclose}


# ---- Lookup ---------------------------------------------------------------------

def _aten_names() -> List[str]:
    return sorted({n[len("aten::"):].split(".", 1)[0]
                   for n in _C._dispatch_get_all_op_names()
                   if n.startswith("aten::")})


def lookup(name: str) -> Optional[Callable]:
    """The function ``turnout.<name>`` stands for, or None when `name` is no
    operator of the functional namespace (see the module docstring)."""
    if name in _WRITTEN:
        return _WRITTEN[name]
    if _excluded(name):
        return None
    try:
        packet = getattr(ops.aten, name)
    except AttributeError:
        return None
    schemas = _schemas(packet)
    if not _has_tensors(schemas):
        return None
    return _make_function(name, packet, schemas)


def function_names() -> List[str]:
    """The names the functional namespace holds now (for ``dir(turnout)``)."""
    names = set(_WRITTEN)
    for n in _aten_names():
        if not _excluded(n) and _has_tensors(_schemas(getattr(ops.aten, n))):
            names.add(n)
    return sorted(names)
