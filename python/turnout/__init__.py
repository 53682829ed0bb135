"""turnout: an operator dispatcher and kernel-registration framework.

The C++ core is the extension module ``turnout._C``; this package is its
Python face: tensors (:class:`Tensor`, :func:`tensor`, :func:`zeros`, ...),
every registered operator under :data:`ops`, dtypes (``turnout.float32``,
...), devices, and the dispatch keys. The CUDA kernels are in
``turnout._C_cuda``, imported here only where turnout was built with CUDA
and an NVIDIA driver is present (``TURNOUT_CUDA=1`` in the environment:
always; ``TURNOUT_CUDA=0``: never; see :mod:`turnout.cuda`).

Example::

    >>> import turnout
    >>> turnout.DispatchKeySet([turnout.DispatchKey.AutogradCPU, turnout.DispatchKey.CPU])
    DispatchKeySet(CPU, AutogradCPU)
    >>> x = turnout.ones(2, 2)
    >>> turnout.ops.aten.mm(x, x)
    tensor([[2., 2.],
            [2., 2.]])
    >>> turnout.mm(x, x).sum().item()      # turnout.<op>: turnout._functional
    8.0
"""

# Before turnout._C loads OpenBLAS: its kernels for this CPU (_openblas_env).
from turnout import _openblas_env

_openblas_env.choose_core_type()
from turnout import _C  # noqa: E402
from turnout._version import __version__
from turnout import _cuda_loader

_cuda_loader.load_at_import()  # turnout._C_cuda: the CUDA kernels
from turnout._C import (
    DispatchKey,
    DispatchKeySet,
    bfloat16,
    bool,
    channels_last,
    contiguous_format,
    device,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    from_dlpack,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    is_grad_enabled,
    layout,
    long,
    memory_format,
    preserve_format,
    short,
    sparse_coo,
    strided,
    uint8,
)
from turnout._ops import ops
from turnout._tensor import Size, Tensor, TypedStorage
from turnout._factories import (
    arange,
    as_tensor,
    empty,
    empty_like,
    enable_grad,
    full,
    full_like,
    no_grad,
    ones,
    ones_like,
    rand,
    rand_like,
    randint_like,
    randn,
    randn_like,
    tensor,
    zeros,
    zeros_like,
)
from turnout._random import linspace, manual_seed, randint, randperm
from turnout import debug, profiler, utils  # noqa: E402  (turnout.debug, ...)
from turnout import library
from turnout import autograd  # noqa: E402  (turnout.autograd)
from turnout import cuda  # noqa: E402  (turnout.cuda)
from turnout import jit  # noqa: E402  (turnout.jit)
from turnout import special  # noqa: E402  (turnout.special)


def from_numpy(ndarray) -> Tensor:
    """A tensor sharing the memory of a NumPy array.

    Writes through either are seen by the other; the array stays alive as
    long as the tensor (or a view of it) does. As torch 1.13's, the new
    tensor is announced to dispatch modes by one ``aten.lift_fresh``.

    Example::

        >>> import numpy as np, turnout
        >>> a = np.array([1.0, 2.0])
        >>> t = turnout.from_numpy(a)
        >>> a[0] = 5.0
        >>> t
        tensor([5., 2.], dtype=turnout.float64)
    """
    return ops.aten.lift_fresh.default(_C.from_numpy(ndarray))


from turnout._functional import function_names as _function_names  # noqa: E402
from turnout._functional import lookup as _lookup_function  # noqa: E402


def __getattr__(name: str):
    """``turnout.<op>``: the functional namespace (turnout._functional), made
    on first access from the operators registered then, and cached."""
    fn = None if name.startswith("__") else _lookup_function(name)
    if fn is None:
        raise AttributeError(f"module 'turnout' has no attribute '{name}'")
    globals()[name] = fn
    return fn


def __dir__():
    return sorted(set(globals()) | set(_function_names()))


__all__ = [
    "DispatchKey", "DispatchKeySet", "Size", "Tensor", "TypedStorage",
    "arange", "as_tensor", "autograd",
    "bfloat16",
    "bool", "channels_last", "contiguous_format", "cuda", "device", "double",
    "dtype",
    "empty", "empty_like", "enable_grad", "float", "float16", "float32",
    "float64", "from_dlpack", "from_numpy", "full", "full_like", "half", "int", "int8",
    "int16", "int32", "int64", "is_grad_enabled", "layout", "library", "long",
    "memory_format", "no_grad", "ones", "ones_like", "ops", "preserve_format",
    "rand", "rand_like", "randint_like", "randn", "randn_like", "short", "special",
    "linspace", "manual_seed", "randint", "randperm", "sparse_coo", "strided", "tensor", "uint8", "zeros",
    "zeros_like",
]
