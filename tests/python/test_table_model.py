"""turnout's dispatch tables against the reference model of c10's rules
(c10_table_model.py), on random registration sets applied and removed in
random orders (table_model_cases.py). The model itself is checked against
torch 1.13 by test_table_model_torch.py."""

from hypothesis import given, strategies as st

import turnout
import table_model_cases as cases

IMPL = cases.Impl(turnout._C, "turnout", fallthrough_kernels=True,
                  extra_alias_keys=("FuncTorchBatchedDecomposition",))


@cases.SETTINGS
@given(cases.cases(IMPL))
def test_tables_agree_with_the_model(case):
    cases.check_case(IMPL, case)


def test_autograd_cpu_of_a_math_kernel_with_a_quantized_kernel():
    """c10: a QuantizedCPU kernel makes AutogradOther ambiguous but leaves
    AutogradCPU to the math kernel (only CPU stands behind AutogradCPU)."""
    case = ([("def",), ("kernel", cases.model.Kernel(
                "CompositeImplicitAutograd", "fn_math")),
             ("kernel", cases.model.Kernel("QuantizedCPU", "fn_q"))],
            [0, 1, 2], [2, 1, 0])
    cases.check_case(IMPL, case)
    table = cases.model.compute_table(
        ["AutogradCPU", "AutogradOther"],
        [k for _, k in case[0][1:]], {})
    assert table["AutogradCPU"].kind == "math kernel"
    assert table["AutogradOther"].kind == "ambiguous autogradother"
