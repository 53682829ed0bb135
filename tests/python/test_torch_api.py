"""turnout's torch-named API (``_C._dispatch_*``, ``_C._dispatch_library``,
``turnout.library.Library``, dispatch modes) against torch 1.13's: the same
code runs on both, and the results, the exception types and the facts and
structure of the messages must agree (not torch's wording word for word).
turnout's own API (C++ errors, OperatorHandle) keeps its hints beyond these:
tests/dispatcher/dispatcher_test.cc."""

import gc
import itertools
import re
import warnings
from types import SimpleNamespace

import pytest
import torch
import torch.library
from torch.utils._python_dispatch import TorchDispatchMode

import turnout
import turnout.library
from turnout.utils import DispatchMode
# Autograd fallback "nothing" in this module: the same code runs on torch 1.13, which has no autograd fallback.
from torch113_tables import autograd_fallback_nothing  # noqa: F401 (autouse)



TORCH = SimpleNamespace(name="torch", C=torch._C, Library=torch.library.Library,
                        Mode=TorchDispatchMode, handler="__torch_dispatch__",
                        ones=torch.ones)
TURNOUT = SimpleNamespace(name="turnout", C=turnout._C,
                          Library=turnout.library.Library, Mode=DispatchMode,
                          handler="__turnout_dispatch__", ones=turnout.ones)
_ids = itertools.count()


def outcome(api, case):
    """(result, None) or (None, (exception type, message)) of case(api, ns),
    ns a namespace of its own. The exception is not kept (its traceback
    would keep registrations alive)."""
    ns = f"api_{api.name}_{next(_ids)}"
    try:
        return case(api, ns), None
    except Exception as e:  # noqa: BLE001 -- compared by the tests
        return None, (type(e), str(e).replace(ns, "NS"))
    finally:
        gc.collect()


def both(case):
    return outcome(TORCH, case), outcome(TURNOUT, case)


# ---- what the _dispatch_* functions return --------------------------------------


def test_unknown_operators_dump_as_empty():
    def case(api, ns):
        C = api.C
        return (C._dispatch_dump(f"{ns}::nope"), C._dispatch_dump_table(
            f"{ns}::nope"), C._dispatch_check_invariants(f"{ns}::nope"))
    theirs, ours = both(case)
    assert ours == theirs == (("", "", None), None)


def test_an_operator_whose_registrations_are_gone_dumps_as_empty():
    def case(api, ns):
        lib = api.C._dispatch_library("FRAGMENT", ns, "")
        lib.def_("f(Tensor x) -> Tensor")
        lib.impl_t_t("f", dispatch="CPU")
        del lib
        gc.collect()
        return (api.C._dispatch_dump(f"{ns}::f"),
                api.C._dispatch_dump_table(f"{ns}::f"))
    theirs, ours = both(case)
    assert ours == theirs == (("", ""), None)


def test_def_from_a_function_is_conservative():
    """c10: a schema inferred from a C++ function says nothing of aliasing."""
    def case(api, ns):
        lib = api.C._dispatch_library("FRAGMENT", ns, "")
        lib.def_name_t_t("f")
        lib.def_("g(Tensor x) -> Tensor")
        return (api.C._dispatch_dump(f"{ns}::f").replace(ns, "NS"),
                api.C._dispatch_dump(f"{ns}::g").replace(ns, "NS"))
    theirs, ours = both(case)
    assert ours == theirs
    assert "alias analysis kind: CONSERVATIVE\n" in ours[0][0]
    assert "alias analysis kind: FROM_SCHEMA\n" in ours[0][1]


@pytest.mark.parametrize("keys,key,entry", [
    # A quantized kernel makes AutogradOther ambiguous; AutogradCPU stands in
    # front of CPU alone and keeps the math kernel.
    (["CompositeImplicitAutograd", "QuantizedCPU"], "AutogradCPU",
     "fn_CompositeImplicitAutograd [math kernel]"),
    (["CompositeImplicitAutograd", "QuantizedCPU"], "AutogradOther",
     "ambiguous_autogradother [ambiguous autogradother]"),
    (["CompositeImplicitAutograd", "SparseCPU"], "AutogradCPU",
     "fn_CompositeImplicitAutograd [math kernel]"),
    (["CompositeImplicitAutograd", "SparseCsrCPU"], "AutogradOther",
     "ambiguous_autogradother [ambiguous autogradother]"),
    # (torch has no fallback at AutogradNestedTensor, turnout a framework
    # fallthrough: neither runs the math kernel.)
    (["CompositeImplicitAutograd", "NestedTensorCPU"], "AutogradNestedTensor",
     "no math kernel"),
    (["CompositeImplicitAutograd"], "NestedTensorCPU",
     "fn_CompositeImplicitAutograd [math kernel]"),
    (["CompositeImplicitAutograd", "CPU"], "AutogradCPU", "fallthrough"),
    (["CompositeImplicitAutograd", "CompositeExplicitAutogradNonFunctional"],
     "AutogradCPU", "fn_CompositeImplicitAutograd [math kernel]"),
    (["CompositeExplicitAutogradNonFunctional"], "Meta",
     "fn_CompositeExplicitAutogradNonFunctional [default backend kernel]"),
    (["CompositeExplicitAutogradNonFunctional"], "XLA", None),
    (["CompositeExplicitAutogradNonFunctional"], "Undefined",
     "fn_CompositeExplicitAutogradNonFunctional [default backend kernel]"),
])
def test_ambiguous_autogradother_and_alias_rules(keys, key, entry):
    def case(api, ns):
        lib = api.C._dispatch_library("FRAGMENT", ns, "")
        lib.def_("f(Tensor x) -> Tensor")
        for k in keys:
            lib.impl_t_t("f", dispatch=k, debug=f"fn_{k}")
        lines = api.C._dispatch_dump_table(f"{ns}::f").splitlines()
        return next((l.split(": ", 1)[1] for l in lines
                     if l.startswith(key + ": ")), None)
    (theirs, _), (ours, _) = both(case)
    if entry == "no math kernel":
        assert "fn_" not in str(theirs) and "fn_" not in str(ours)
    elif entry == "fallthrough":
        # Both fall through to the CPU kernel; the sites differ.
        assert theirs.startswith("fallthrough registered at ")
        assert ours == "fallthrough registered in turnout framework [backend fallback]"
    else:
        assert ours == theirs == entry


# ---- errors ---------------------------------------------------------------------


def assert_same_error(theirs, ours, *patterns):
    """Both raised; turnout's exception is torch's type (or a subclass of
    it), and every pattern (the facts tools match) is found in both."""
    assert theirs[0] is None and ours[0] is None, (theirs, ours)
    (their_type, their_msg), (our_type, our_msg) = theirs[1], ours[1]
    assert issubclass(our_type, their_type), (their_type, our_type, our_msg)
    for p in patterns:
        assert re.search(p, their_msg, re.M), (p, their_msg)
        assert re.search(p, our_msg, re.M), (p, our_msg)


def test_duplicate_def():
    def case(api, ns):
        first = api.C._dispatch_library("FRAGMENT", ns, "", "/dev/null", 1)
        first.def_("f(Tensor x) -> Tensor")
        second = api.C._dispatch_library("FRAGMENT", ns, "", "/dev/null", 2)
        second.def_("f(Tensor x) -> Tensor")
    theirs, ours = both(case)
    assert_same_error(
        theirs, ours,
        r"^Tried to register an operator \(NS::f\(Tensor x\) -> Tensor\) with "
        r"the same name and overload name multiple times\. ",
        r" Duplicate registration: registered at /dev/null:2\. Original "
        r"registration: registered at /dev/null:1$")
    assert "\n" not in ours[1][1]  # no hint: one line, as torch's


def test_duplicate_fallback():
    def case(api, ns):
        keep = [api.C._dispatch_library("IMPL", "_", "XLA", "/dev/null", 1)]
        keep[0].fallback_fallthrough()
        keep.append(api.C._dispatch_library("IMPL", "_", "XLA", "/dev/null", 2))
        keep[1].fallback_fallthrough()
    theirs, ours = both(case)
    assert_same_error(
        theirs, ours,
        r"^Tried to register multiple backend fallbacks for the same dispatch "
        r"key XLA; previous registration registered at /dev/null:1, new "
        r"registration registered at /dev/null:2$")


@pytest.mark.parametrize("schema,reason", [
    ("f(Tensor x, Tensor y) -> Tensor",
     "The number of arguments is different. 2 vs 1."),
    ("f(Tensor x) -> (Tensor, Tensor)",
     "The number of returns is different. 2 vs 1"),
    ("f(int x) -> Tensor", "Type mismatch in argument 1: int vs Tensor"),
    ("f(Tensor x) -> Tensor[]", "Type mismatch in return 1: Tensor[] vs Tensor"),
])
@pytest.mark.parametrize("def_first", [True, False])
def test_schema_mismatch(schema, reason, def_first):
    """Declared vs inferred, and c10's lines in c10's order, nothing more."""
    def case(api, ns):
        lib = api.C._dispatch_library("FRAGMENT", ns, "", "/dev/null", 3)
        if def_first:
            lib.def_(schema)
            lib.impl_t_t("f", dispatch="CPU")
        else:
            lib.impl_t_t("f", dispatch="CPU")
            lib.def_(schema)
    theirs, ours = both(case)
    assert_same_error(theirs, ours, "^  reason: " + re.escape(reason) + "$")
    labels = [re.sub(r":.*", ":", l) for l in ours[1][1].splitlines()]
    assert labels == [re.sub(r":.*", ":", l)
                      for l in theirs[1][1].splitlines()]
    assert ours[1][1].endswith(reason)


@pytest.mark.parametrize("name,case,exc,pattern", [
    ("reserved namespace", lambda api, ns: api.Library("prim", "DEF"),
     ValueError, r"prim.* is a reserved namespace"),
    ("library kind", lambda api, ns: api.Library(ns, "BAD"),
     ValueError, r"Unsupported kind: .*BAD"),
    ("_dispatch_library kind",
     lambda api, ns: api.C._dispatch_library("BAD", ns, ""),
     RuntimeError, r"^could not parse BAD"),
    ("def_ alias analysis",
     lambda api, ns: api.C._dispatch_library("FRAGMENT", ns, "").def_(
         "f(Tensor x) -> Tensor", "BAD"),
     RuntimeError, r"^could not parse BAD"),
    ("define alias analysis",
     lambda api, ns: api.Library(ns, "DEF").define("f(Tensor x) -> Tensor",
                                                   "BAD"),
     RuntimeError, r"^Invalid alias_analysis type .?BAD"),
    ("kernel not callable",
     lambda api, ns: (lambda lib: (lib.define("f(Tensor x) -> Tensor"),
                                   lib.impl("f", 3, "CPU")))(
                                       api.Library(ns, "DEF")),
     TypeError, r"callable,? but found type <class 'int'>"),
])
def test_library_errors(name, case, exc, pattern):
    theirs, ours = both(case)
    assert theirs[1] is not None and theirs[1][0] is exc, theirs
    assert_same_error(theirs, ours, pattern)


@pytest.mark.parametrize("make", [
    lambda api: api.Library("aten", "DEF"),
    lambda api: api.C._dispatch_library("DEF", "aten", "", "/dev/null", 4),
], ids=["Library", "_dispatch_library"])
def test_a_second_def_library_for_aten_is_refused(make):
    """aten has its DEF library (torch's TORCH_LIBRARY(aten), turnout's
    TURNOUT_LIBRARY(aten) in kernels/factory.cc): another is refused, and
    aten's operators are left as they were."""
    theirs, ours = both(lambda api, ns: make(api))
    # Both name the two sites (turnout.library.Library records its caller's
    # file where torch's says /dev/null).
    assert_same_error(theirs, ours, r"namespace aten\b",
                      r"registered at \S+:\d+\b.*registered at \S+:\d+")
    assert (turnout.ones(2) + 1).tolist() == [2.0, 2.0]


def test_classmethod_handler_on_a_mode_is_refused():
    def case(api, ns):
        def handler(cls, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))
        mode = type("M", (api.Mode,), {api.handler: classmethod(handler)})
        with mode():
            api.ones(2)
    theirs, ours = both(case)
    assert_same_error(theirs, ours, r"^<class '.*\.M'>'s ",
                      r"should be a normal method,? not a class method")


# ---- keys by name, and the key helpers torch has ----------------------------------


def test_keys_by_name():
    """A key name stands for a DispatchKey argument, as in torch."""
    def case(api, ns):
        C = api.C
        lib = C._dispatch_library("FRAGMENT", ns, "")
        lib.def_("f(Tensor x) -> Tensor")
        lib.impl_t_t("f", dispatch="CPU")
        return (C._dispatch_has_kernel_for_dispatch_key(f"{ns}::f", "CPU"),
                C._dispatch_has_kernel_for_dispatch_key(f"{ns}::f", "CUDA"),
                C._dispatch_has_computed_kernel_for_dispatch_key(
                    f"{ns}::f", "AutogradCPU"),
                C._dispatch_has_backend_fallback("XLA"),
                C._dispatch_is_included_in_alias(
                    "CPU", "CompositeExplicitAutograd"))
    theirs, ours = both(case)
    assert ours == theirs == ((True, False, True, False, True), None)


@pytest.mark.parametrize("key", ["CPU", "AutogradCPU", "AutogradOther",
                                 "QuantizedCPU", "SparseCPU", "Meta", "XLA",
                                 "Python", "Undefined"])
@pytest.mark.parametrize("alias", ["CompositeExplicitAutograd",
                                   "CompositeExplicitAutogradNonFunctional",
                                   "CompositeImplicitAutograd", "Autograd"])
def test_is_included_in_alias(key, alias):
    def case(api, ns):
        return api.C._dispatch_is_included_in_alias(
            getattr(api.C.DispatchKey, key), getattr(api.C.DispatchKey, alias))
    theirs, ours = both(case)
    assert ours == theirs


def test_autogradother_backends_and_key_set():
    common = {"FPGA", "Vulkan", "Metal", "QuantizedCPU", "SparseCUDA",
              "SparseCsrCPU", "MkldnnCPU", "CustomRNGKeyId", "CPU", "CUDA",
              "AutogradCPU"}

    def case(api, ns):
        text = api.C._dispatch_keyset_to_string(
            api.C._dispatch_autogradother_backends)
        names = set(text[len("DispatchKeySet("):-1].split(", "))
        return names & common, api.C._dispatch_key_set(api.ones(1))
    theirs, ours = both(case)
    assert ours[0][0] == theirs[0][0]
    assert ours[0][1].startswith("DispatchKeySet(CPU, ")
    assert "AutogradCPU" in ours[0][1]


def test_dispatch_module_methods_and_returns():
    """The _DispatchModule methods torch has, with torch's returns: the
    registering ones return the module, define the name as written."""
    def case(api, ns):
        lib = api.C._dispatch_library("FRAGMENT", ns, "")
        out = [lib.def_("a(Tensor x) -> Tensor") is lib,
               lib.impl_t_t("a", "CPU") is lib,
               lib.def_name_t_t("b", "CPU", "dbg_b") is lib,
               lib.def_schema_t_t("c(Tensor x) -> Tensor", "XLA", "",
                                  "dbg_c") is lib,
               lib.def_schema_t_t("d(Tensor x) -> Tensor") is lib,
               lib.def_("e(Tensor x, Tensor y) -> Tensor") is lib,
               lib.impl_tt_t("e", "CPU") is lib,
               lib.define("f(Tensor x) -> Tensor"),
               lib.define(f"{ns}::g.over(Tensor x) -> Tensor").replace(ns, "NS")]
        out += [api.C._dispatch_dump(f"{ns}::{n}").replace(ns, "NS")
                for n in "bcde"]
        fb = api.C._dispatch_library("IMPL", "_", "PrivateUse1")
        out.append(fb.fallback_fallthrough() is fb)
        return out
    theirs, ours = both(case)
    assert ours == theirs
    assert ours[0][:9] == [True] * 7 + ["f", "NS::g"]


def test_dispatch_library_takes_torchs_keywords():
    def case(api, ns):
        lib = api.C._dispatch_library(kind="FRAGMENT", name=ns, dispatch="",
                                      file="/dev/null", linenum=7)
        lib.def_(schema="f(Tensor x) -> Tensor", alias="")
        lib.impl_t_t(name="f", dispatch="CPU", debug="k")
        return api.C._dispatch_dump(f"{ns}::f").replace(ns, "NS")
    theirs, ours = both(case)
    assert ours == theirs
    assert "debug: registered at /dev/null:7\n" in ours[0]


def test_importing_turnout_leaves_torchs_errors_alone():
    """turnout's translator of standard C++ exceptions is local to its
    module: a global one took torch's c10::Error too, and torch's messages
    then carried their C++ backtrace."""
    def case(api, ns):
        lib = api.C._dispatch_library("FRAGMENT", ns, "", "/dev/null", 1)
        lib.def_("f(int x) -> Tensor")
        lib.impl_t_t("f", dispatch="CPU")
    result, (error_type, message) = outcome(TORCH, case)
    assert issubclass(error_type, RuntimeError)
    assert message.startswith("Inferred operator schema"), message
    assert "Exception raised from" not in message
    assert "frame #0" not in message


# ---- warnings ---------------------------------------------------------------


def test_overriding_a_kernel_is_a_python_warning():
    # A kernel registered over another for the same key with
    # _DispatchModule.impl (what Library.impl calls): torch turns c10's
    # warning into a UserWarning at the registering line; so does turnout
    # (not a line on stderr), once the registration has taken effect.
    def case(api, ns):
        lib = api.Library(ns, "DEF")
        lib.define("f(Tensor x) -> Tensor")
        other = api.Library(ns, "IMPL")
        other.impl("f", lambda x: x, "CPU")
        impl = api.C._dispatch_library("IMPL", ns, "")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            impl.impl("f", "CPU", lambda x: x + 1)
        return [(w.category, str(w.message).splitlines()[0], w.filename)
                for w in caught]
    theirs, ours = both(case)
    assert theirs[1] is None and ours[1] is None
    assert ours[0] == theirs[0] == (
        [(UserWarning, "Overriding a previously registered kernel for the "
          "same operator and the same dispatch key", __file__)])


def test_warnings_as_errors_raise_after_the_registration():
    def case(api, ns):
        lib = api.Library(ns, "DEF")
        lib.define("f(Tensor x) -> Tensor")
        other = api.Library(ns, "IMPL")
        other.impl("f", lambda x: x, "CPU")
        impl = api.C._dispatch_library("IMPL", ns, "")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                impl.impl("f", "CPU", lambda x: x + 1)
                raised = None
            except UserWarning as e:
                raised = str(e).splitlines()[0]
        ops = torch.ops if api is TORCH else turnout.ops
        return raised, getattr(ops, ns).f(api.ones(2)).tolist()
    theirs, ours = both(case)
    assert ours == theirs
    assert ours[0][0].startswith("Overriding a previously registered kernel")
