"""The reference model of c10's table rules (c10_table_model.py) against
torch 1.13 itself, on the cases test_table_model.py draws for turnout (less
what torch's _dispatch_library cannot register: per-operator fallthrough
kernels, FuncTorchBatchedDecomposition).

torch's own _dispatch_check_invariants is not called: torch 1.13 updates
its runtime table incrementally and fails it on some registration orders
(e.g. a QuantizedCPU kernel after CPU and CompositeImplicitAutograd ones:
"expected_k._equalsBoxedAndUnboxed(dispatchTable_[idx]) INTERNAL ASSERT
FAILED"); its dumps are computed afresh from the registrations, and those
are what is compared."""

from hypothesis import given

import torch
import table_model_cases as cases

IMPL = cases.Impl(torch._C, "torch", fallthrough_kernels=False)


def test_torch_is_1_13():
    assert torch.__version__.startswith("1.13"), torch.__version__


@cases.SETTINGS
@given(cases.cases(IMPL))
def test_torch_agrees_with_the_model(case):
    cases.check_case(IMPL, case, check_invariants=False)
