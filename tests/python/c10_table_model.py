"""A reference model of c10's dispatch-table rules, written from its rules.

Given the registrations of one operator (kernels per runtime or alias key,
fallthrough kernels, a schema or none) and the backend fallbacks of the
process, :func:`compute_table` says what each runtime key runs and why, in
the words of ``_dispatch_dump_table``, and :func:`dump_state` gives the
``_dispatch_dump`` text. It knows nothing of turnout's C++ code: the tests
check turnout against it (tests/python/test_table_model.py) and check it
against torch 1.13 itself on the same cases, so that the expectation is
torch's.

What the model takes from the implementation under test is data, not
rules: the names of its runtime keys (torch 1.13 has ORT, turnout MTIA), the
order of its DispatchKey enum (dump order), and its backend fallbacks.

The rules, per runtime key ``k``, first match wins (c10's
OperatorEntry::computeDispatchTableEntryWithDebug):

1. a kernel registered at ``k`` itself: "kernel";
2. CompositeExplicitAutogradNonFunctional, when ``k`` is one of its keys
   (or Undefined): "default backend kernel";
3. CompositeExplicitAutograd, when ``k`` is a backend key (or Undefined):
   "default backend kernel";
4. CompositeImplicitAutogradNestedTensor, when ``k`` is a NestedTensor key
   or AutogradNestedTensor: "nested kernel";
5. CompositeImplicitAutograd, when ``k`` is a backend, NestedTensor or
   autograd key (or Undefined): for AutogradOther, "ambiguous
   autogradother" as soon as any key under AutogradOther has a kernel of
   its own; for any other key, "math kernel" unless the backends under
   ``k``'s autograd key have a kernel of their own or there is a
   CompositeExplicitAutograd kernel (then it falls on to 6);
6. Autograd, when ``k`` is an autograd key: "autograd kernel";
7. FuncTorchBatchedDecomposition, for FuncTorchBatched: "batched kernel";
8. the backend fallback of ``k``: "backend fallback";
9. nothing: missing (no line in the dump).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

__all__ = [
    "ALIAS_KEYS", "BACKENDS", "Entry", "Fallback", "Kernel", "compute_table",
    "dump_state", "dump_table", "parse_table",
]

# Backend components, in both torch 1.13 and turnout (a name not here that
# an implementation has is simply never a backend's).
BACKENDS = ("CPU", "CUDA", "HIP", "XLA", "MPS", "IPU", "XPU", "HPU", "VE",
            "Lazy", "MTIA", "Meta", "PrivateUse1", "PrivateUse2",
            "PrivateUse3")
# Backends with one key each whose autograd is AutogradOther.
OTHER_BACKENDS = frozenset({"FPGA", "ORT", "Vulkan", "Metal", "SparseCsrCPU",
                            "SparseCsrCUDA", "CustomRNGKeyId", "MkldnnCPU"})
# Backends that CompositeExplicitAutogradNonFunctional does not serve: the
# functional ones (they want the functional decomposition).
FUNCTIONAL_BACKENDS = frozenset({"XLA", "Lazy"})
# The per-backend functionalities, as key-name prefixes.
PER_BACKEND = ("Quantized", "Sparse", "NestedTensor", "Autograd")

ALIAS_KEYS = ("CompositeExplicitAutogradNonFunctional",
              "CompositeExplicitAutograd",
              "CompositeImplicitAutogradNestedTensor",
              "CompositeImplicitAutograd", "Autograd",
              "FuncTorchBatchedDecomposition")


def split_key(key: str) -> Tuple[str, Optional[str]]:
    """(functionality, backend) of a runtime key: ("Dense", "CPU"),
    ("Quantized", "CUDA"), ("Autograd", "XLA"); (key, None) for a key that
    is not per backend (FPGA, AutogradOther, Python)."""
    if key in BACKENDS:
        return "Dense", key
    for prefix in PER_BACKEND:
        if key.startswith(prefix) and key[len(prefix):] in BACKENDS:
            return prefix, key[len(prefix):]
    return key, None


def autogradother_backends(key: str) -> bool:
    functionality, backend = split_key(key)
    return key in OTHER_BACKENDS or (
        backend is not None and functionality in ("Quantized", "Sparse"))


def is_backend_key(key: str) -> bool:
    """A key that CompositeExplicitAutograd serves."""
    functionality, backend = split_key(key)
    return functionality == "Dense" or autogradother_backends(key)


def is_non_functional_key(key: str) -> bool:
    """A key that CompositeExplicitAutogradNonFunctional serves."""
    functionality, backend = split_key(key)
    return (is_backend_key(key) and functionality != "Sparse"
            and backend not in FUNCTIONAL_BACKENDS)


def is_autograd_key(key: str) -> bool:
    functionality, backend = split_key(key)
    return functionality == "Autograd" and backend is not None or key in (
        "AutogradOther", "AutogradNestedTensor")


def is_nested_key(key: str) -> bool:
    functionality, backend = split_key(key)
    return functionality == "NestedTensor" or key == "AutogradNestedTensor"


def is_math_key(key: str) -> bool:
    """A key that CompositeImplicitAutograd serves."""
    functionality, backend = split_key(key)
    return (is_backend_key(key) or is_autograd_key(key)
            or functionality == "NestedTensor")


def _under_autograd(key: str, other: str) -> bool:
    """True when runtime key `other` is one of the backends autograd key
    `key` stands in front of: AutogradCPU -> CPU only; AutogradOther -> the
    keys of autogradother_backends; AutogradNestedTensor -> the NestedTensor
    keys; any other key -> none."""
    if key == "AutogradOther":
        return autogradother_backends(other)
    if key == "AutogradNestedTensor":
        return split_key(other)[0] == "NestedTensor"
    functionality, backend = split_key(key)
    return functionality == "Autograd" and backend is not None and other == backend


@dataclass(frozen=True)
class Kernel:
    """A kernel registered for one operator at `key` ("" = no key, i.e.
    CompositeImplicitAutograd), shown in dumps as `debug`."""
    key: str
    debug: str
    fallthrough: bool = False

    @property
    def dispatch_key(self) -> str:
        return self.key or "CompositeImplicitAutograd"


@dataclass(frozen=True)
class Fallback:
    """A backend fallback of the process at runtime key `key`."""
    key: str
    debug: str
    fallthrough: bool = False


@dataclass(frozen=True)
class Entry:
    """One computed entry: what the key runs (`debug`; "ambiguous_autogradother"
    for the ambiguous entry) and why (`kind`)."""
    debug: str
    kind: str
    fallthrough: bool = False

    def line(self, key: str) -> str:
        ft = "fallthrough " if self.fallthrough else ""
        return f"{key}: {ft}{self.debug} [{self.kind}]"


def compute_table(runtime_keys: Iterable[str], kernels: Sequence[Kernel],
                  fallbacks: Mapping[str, Fallback]) -> Dict[str, Entry]:
    """Runtime key -> Entry for every key of `runtime_keys` that is not
    missing. `kernels` are the operator's registrations, oldest first (the
    newest at a key is the active one); `fallbacks` the process's backend
    fallbacks by runtime key."""
    active: Dict[str, Kernel] = {}
    for k in kernels:
        active[k.dispatch_key] = k
    direct = {k: v for k, v in active.items() if k not in ALIAS_KEYS}
    non_functional = active.get("CompositeExplicitAutogradNonFunctional")
    explicit = active.get("CompositeExplicitAutograd")
    nested = active.get("CompositeImplicitAutogradNestedTensor")
    math = active.get("CompositeImplicitAutograd")
    autograd = active.get("Autograd")
    batched = active.get("FuncTorchBatchedDecomposition")

    def from_kernel(k: Kernel, kind: str) -> Entry:
        return Entry(k.debug, kind, k.fallthrough)

    out: Dict[str, Entry] = {}
    for key in runtime_keys:
        undefined = key == "Undefined"
        entry: Optional[Entry] = None
        if key in direct:
            entry = from_kernel(direct[key], "kernel")
        elif non_functional and (undefined or is_non_functional_key(key)):
            entry = from_kernel(non_functional, "default backend kernel")
        elif explicit and (undefined or is_backend_key(key)):
            entry = from_kernel(explicit, "default backend kernel")
        elif nested and is_nested_key(key):
            entry = from_kernel(nested, "nested kernel")
        else:
            if math and (undefined or is_math_key(key)):
                has_backend_kernel = explicit is not None or any(
                    _under_autograd(key, d) for d in direct)
                if key == "AutogradOther" and any(
                        autogradother_backends(d) for d in direct):
                    entry = Entry("ambiguous_autogradother",
                                  "ambiguous autogradother")
                elif not has_backend_kernel:
                    entry = from_kernel(math, "math kernel")
            if entry is None and autograd and is_autograd_key(key):
                entry = from_kernel(autograd, "autograd kernel")
            if entry is None and batched and key == "FuncTorchBatched":
                entry = from_kernel(batched, "batched kernel")
            if entry is None and key in fallbacks:
                f = fallbacks[key]
                entry = Entry(f.debug, "backend fallback", f.fallthrough)
        if entry is not None:
            out[key] = entry
    return out


def dump_table(runtime_keys: Sequence[str], kernels: Sequence[Kernel],
               fallbacks: Mapping[str, Fallback]) -> str:
    """``_dispatch_dump_table``: one line per non-missing runtime key, in
    the order of `runtime_keys` (the implementation's table order)."""
    table = compute_table(runtime_keys, kernels, fallbacks)
    return "".join(table[k].line(k) + "\n" for k in runtime_keys if k in table)


def parse_table(text: str) -> Dict[str, str]:
    """``_dispatch_dump_table`` text -> runtime key -> its line."""
    out = {}
    for line in text.splitlines():
        key = line.split(": ", 1)[0]
        assert key not in out, f"key {key} twice in the table:\n{text}"
        out[key] = line
    return out


# What `_dispatch_dump` says of each kind of registration the tests make:
# impl_t_t's identity kernel (boxed and unboxed, with an inferred schema),
# and a fallthrough (boxed only, no schema).
_IDENTITY_STATE = " :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]"
_FALLTHROUGH_STATE = " :: (none) [ fallthrough boxed ]"


def dump_state(name: str, schema: Optional[str], schema_debug: str,
               alias_analysis: str, kernels: Sequence[Kernel],
               key_order: Mapping[str, int]) -> str:
    """``_dispatch_dump`` of operator `name`: the schema (or "(none)"), then
    per key in the order of the DispatchKey enum (`key_order`) its kernels,
    newest first, all but the newest marked "(inactive)"."""
    lines = [f"name: {name}"]
    if schema is None:
        lines.append("schema: (none)")
    else:
        lines += [f"schema: {schema}", f"debug: {schema_debug}",
                  f"alias analysis kind: {alias_analysis}"]
    by_key: Dict[str, List[Kernel]] = {}
    for k in kernels:
        by_key.setdefault(k.dispatch_key, []).insert(0, k)
    for key in sorted(by_key, key=lambda k: key_order[k]):
        shown = key + ("[alias]" if key in ALIAS_KEYS else "")
        for i, k in enumerate(by_key[key]):
            state = _FALLTHROUGH_STATE if k.fallthrough else _IDENTITY_STATE
            inactive = " (inactive)" if i > 0 else ""
            lines.append(f"{shown}{inactive}: {k.debug}{state}")
    return "\n".join(lines) + "\n"
