"""Random registration sets for one operator, applied through a
``_C._dispatch_library`` (turnout's or torch 1.13's) and checked against the
reference model (c10_table_model.py).

A case is a set of registrations: the operator's def, kernels at distinct
keys (runtime and alias keys; fallthrough kernels where the implementation
can register them), and backend fallthrough fallbacks at keys that have no
fallback yet. :func:`check_case` applies them in one drawn order, compares
``_dispatch_dump_table`` and ``_dispatch_dump`` with the model, then removes
them in another drawn order and compares after every step: the tables must
depend on the set of registrations alone.

Hypothesis settings: ``TURNOUT_TABLE_MODEL_EXAMPLES`` (default 150) examples
per test, derandomized and without an example database, so that CI runs the
same cases every time; set it to thousands to run a long local check, e.g.
``TURNOUT_TABLE_MODEL_EXAMPLES=5000 bazel test ... --test_env=...``.
"""

from __future__ import annotations

import itertools
import os
from typing import Dict, List, Sequence, Tuple

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import c10_table_model as model

EXAMPLES = int(os.environ.get("TURNOUT_TABLE_MODEL_EXAMPLES", "150"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    database=None, print_blob=False,
                    suppress_health_check=[HealthCheck.too_slow])

# Runtime keys that kernels are drawn at: backends of each kind (dense, the
# ones under AutogradOther, quantized, sparse, nested, functional ones), their
# autograd keys, and keys that are no backend's.
# (torch 1.13 parses the names of a few per-backend keys only: no
# QuantizedXLA, SparseMeta, NestedTensorXLA.)
KERNEL_KEYS = ("CPU", "CUDA", "XLA", "Lazy", "Meta", "PrivateUse1", "FPGA",
               "SparseCsrCPU", "MkldnnCPU", "QuantizedCPU", "QuantizedCUDA",
               "SparseCPU", "SparseCUDA", "NestedTensorCPU", "NestedTensorCUDA",
               "AutogradCPU", "AutogradXLA", "AutogradMeta", "AutogradOther",
               "AutogradNestedTensor", "Python", "BackendSelect",
               "ADInplaceOrView")
# Alias keys both implementations have; "" is "no key" (CompositeImplicitAutograd).
ALIAS_KEYS = ("CompositeExplicitAutogradNonFunctional",
              "CompositeExplicitAutograd",
              "CompositeImplicitAutogradNestedTensor",
              "CompositeImplicitAutograd", "Autograd", "")
# Keys a backend fallthrough is drawn at (those that already have a
# fallback in the implementation are left out).
FALLBACK_KEYS = ("XLA", "Lazy", "PrivateUse1", "FPGA", "QuantizedCPU",
                 "SparseCPU", "NestedTensorCPU", "Meta", "AutogradPrivateUse1",
                 "Python")

NAMESPACE = "table_model"


class Impl:
    """One implementation's ``_C`` with what the model takes from it as
    data: its runtime keys in table order, its backend fallbacks, and the
    order of its DispatchKey enum (for ``_dispatch_dump``)."""

    def __init__(self, C, name: str, fallthrough_kernels: bool,
                 extra_alias_keys: Sequence[str] = ()) -> None:
        self.C = C
        self.name = name
        self.fallthrough_kernels = fallthrough_kernels
        self.alias_keys = tuple(ALIAS_KEYS) + tuple(extra_alias_keys)
        self._ids = itertools.count()
        # An operator with no kernel: the backend fallbacks alone.
        op, libs = self._op_with([])
        self.fallbacks: Dict[str, model.Fallback] = {}
        for key, line in model.parse_table(
                C._dispatch_dump_table(op)).items():
            text = line.split(": ", 1)[1]
            assert text.endswith(" [backend fallback]"), line
            text = text[:-len(" [backend fallback]")]
            ft = text.startswith("fallthrough ")
            self.fallbacks[key] = model.Fallback(
                key, text[len("fallthrough "):] if ft else text, ft)
        # A kernel at every alias key reaches every backend, nested, autograd
        # and batched key: with the fallbacks, every runtime key a drawn case
        # can show, in table order.
        op, libs = self._op_with([k for k in self.alias_keys if k])
        self.runtime_keys = list(model.parse_table(C._dispatch_dump_table(op)))
        # The DispatchKey enum order of every key a kernel is drawn at.
        op, libs = self._op_with(list(KERNEL_KEYS) + [
            k for k in self.alias_keys if k])
        self.key_order = {}
        for line in C._dispatch_dump(op).splitlines()[4:]:
            key = line.split(":", 1)[0].replace("[alias]", "")
            self.key_order[key] = len(self.key_order)
        assert set(self.key_order) == set(KERNEL_KEYS) | {
            k for k in self.alias_keys if k}, self.key_order
        self.fallback_keys = tuple(k for k in FALLBACK_KEYS
                                   if k not in self.fallbacks)

    def fresh_op(self) -> Tuple[str, str]:
        """A new operator name: (name in the namespace, qualified name)."""
        name = f"{self.name}_op{next(self._ids)}"
        return name, f"{NAMESPACE}::{name}"

    def library(self, kind: str, key: str, line: int):
        ns = "_" if kind == "IMPL" and key else NAMESPACE
        return self.C._dispatch_library(kind, ns, key, "/dev/null", line)

    def _op_with(self, keys: Sequence[str]):
        name, qualname = self.fresh_op()
        lib = self.library("FRAGMENT", "", 0)
        lib.def_(f"{name}(Tensor x) -> Tensor")
        for k in keys:
            lib.impl_t_t(name, dispatch=k, debug=f"fn_{k}")
        return qualname, lib


@st.composite
def cases(draw, impl: Impl):
    """A list of registrations (("def",), ("kernel", Kernel),
    ("fallback", Fallback)) with their registration order, and a removal
    order."""
    keys = draw(st.lists(
        st.sampled_from(KERNEL_KEYS + impl.alias_keys),
        unique_by=lambda k: k or "CompositeImplicitAutograd", max_size=7))
    items: List[tuple] = [("def",)] if draw(st.integers(0, 5)) else []
    for k in keys:
        ft = (impl.fallthrough_kernels and k in KERNEL_KEYS
              and draw(st.integers(0, 3)) == 0)
        items.append(("kernel", model.Kernel(k, f"fn_{k or 'default'}", ft)))
    for k in draw(st.lists(st.sampled_from(impl.fallback_keys), unique=True,
                           max_size=2)):
        items.append(("fallback", model.Fallback(k, "", True)))
    order = draw(st.permutations(range(len(items))))
    removal = draw(st.permutations(range(len(items))))
    return items, list(order), list(removal)


SCHEMA = "(Tensor x) -> Tensor"


def expected(impl: Impl, name: str, qualname: str,
             present: Sequence[Tuple[int, tuple]]) -> Tuple[str, str]:
    """The model's (_dispatch_dump_table, _dispatch_dump) for the
    registrations `present` ((line, item) pairs)."""
    has_def = any(item[0] == "def" for _, item in present)
    kernels = [item[1] for _, item in present if item[0] == "kernel"]
    if not has_def and not kernels:
        return "", ""  # no such operator (any more)
    fallbacks = dict(impl.fallbacks)
    for line, item in present:
        if item[0] == "fallback":
            fallbacks[item[1].key] = model.Fallback(
                item[1].key, f"registered at /dev/null:{line}", True)
    def_line = next((line for line, item in present if item[0] == "def"), None)
    keys = list(impl.runtime_keys)
    keys += [k.dispatch_key for k in kernels if k.dispatch_key not in keys
             and k.dispatch_key not in model.ALIAS_KEYS]
    table = model.compute_table(keys, kernels, fallbacks)
    table_text = "".join(table[k].line(k) + "\n" for k in keys if k in table)
    state = model.dump_state(
        qualname, f"{qualname}{SCHEMA}" if has_def else None,
        f"registered at /dev/null:{def_line}", "FROM_SCHEMA", kernels,
        impl.key_order)
    return table_text, state


def _ordered_like(text: str, keys: Sequence[str]) -> str:
    """`text`'s table lines put in the order of `keys` (the model's order)."""
    lines = model.parse_table(text)
    index = {k: i for i, k in enumerate(keys)}
    return "".join(lines[k] + "\n"
                   for k in sorted(lines, key=lambda k: index.get(k, 10**6)))


def check_case(impl: Impl, case, check_invariants: bool = True) -> None:
    """Applies `case` in its order, removes it in its removal order, and
    compares the dumps with the model after every step."""
    items, order, removal = case
    name, qualname = impl.fresh_op()
    C = impl.C
    libs: Dict[int, object] = {}
    present: List[Tuple[int, tuple]] = []

    def compare(step: str) -> None:
        table, state = expected(impl, name, qualname, present)
        actual_table = C._dispatch_dump_table(qualname)
        actual_state = C._dispatch_dump(qualname)
        context = (f"{impl.name}, {step}; registrations "
                   f"{[item for _, item in present]}")
        # The lines are the model's; their order is the implementation's
        # table order, checked against its own runtime key order.
        assert _ordered_like(actual_table, impl.runtime_keys) == actual_table, (
            f"{context}: table out of order:\n{actual_table}")
        assert model.parse_table(actual_table) == model.parse_table(table), (
            f"{context}:\nactual:\n{actual_table}\nmodel:\n{table}")
        assert actual_state == state, (
            f"{context}:\nactual:\n{actual_state}\nmodel:\n{state}")
        if check_invariants:
            C._dispatch_check_invariants(qualname)

    try:
        for step, i in enumerate(order):
            item = items[i]
            line = 1000 + i
            if item[0] == "def":
                lib = impl.library("FRAGMENT", "", line)
                lib.def_(f"{name}{SCHEMA}")
            elif item[0] == "kernel":
                k = item[1]
                lib = impl.library("FRAGMENT", "", line)
                if k.fallthrough:
                    lib.impl_fallthrough(name, dispatch=k.key)
                    k = model.Kernel(k.key, f"registered at /dev/null:{line}", True)
                    item = ("kernel", k)
                else:
                    lib.impl_t_t(name, dispatch=k.key, debug=k.debug)
            else:
                lib = impl.library("IMPL", item[1].key, line)
                lib.fallback_fallthrough()
            libs[i] = lib
            present.append((line, item))
            compare(f"after registering {item}")
        for i in removal:
            lib = libs.pop(i)
            if hasattr(lib, "_destroy"):
                lib._destroy()
            del lib
            present = [(line, item) for line, item in present if line != 1000 + i]
            compare(f"after removing {items[i]}")
    finally:
        # Whatever failed, leave no registration behind (fallbacks are the
        # process's): newest first.
        for i in sorted(libs, reverse=True):
            lib = libs.pop(i)
            if hasattr(lib, "_destroy"):
                lib._destroy()
            del lib
