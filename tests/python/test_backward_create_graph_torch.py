"""backward(create_graph=True)'s reference-cycle warning against torch 1.13
as the oracle: the same script run on torch and on turnout, each in a fresh
process (the warning is given once per process), comparing after each step
how many such warnings it gave and their category.

The leaves' .grad then hold a graph that holds the leaves; torch warns the
first time Tensor.backward / autograd.backward accumulate with
create_graph=True (with inputs= too), and never for autograd.grad.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

_PRELUDE = """
import json, warnings
import {lib} as lib
warnings.simplefilter("always")
results = []

def step(f):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            f()
            raised = None
        except Exception as e:  # noqa: BLE001
            raised = "RuntimeError" if isinstance(e, RuntimeError) else type(e).__name__
    mine = [w for w in caught if "create_graph" in str(w.message)]
    results.append([len(mine), sorted({{w.category.__name__ for w in mine}}), raised])
"""


def run(lib, body):
    script = _PRELUDE.format(lib=lib) + textwrap.dedent(body) + "\nprint(json.dumps(results))\n"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


CASES = {
    # grad() never warns, and does not use up the one warning.
    "grad, then backward twice": """
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        step(lambda: lib.autograd.grad((x * x).sum(), x, create_graph=True))
        step(lambda: (x * x).sum().backward())
        step(lambda: (x * x).sum().backward(create_graph=True))
        step(lambda: (x * x).sum().backward(create_graph=True))
        step(lambda: lib.autograd.backward([(x * x).sum()], create_graph=True))
    """,
    "autograd.backward": """
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        step(lambda: lib.autograd.backward([(x * x).sum()], create_graph=True))
        step(lambda: lib.autograd.grad((x * x).sum(), x, create_graph=True))
    """,
    "inputs= a leaf": """
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        step(lambda: (x * x).sum().backward(create_graph=True, inputs=[x]))
    """,
    "inputs= a non-leaf": """
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        step(lambda: (y * y).sum().backward(create_graph=True, inputs=[y]))
    """,
    "a root that does not require grad": """
        x = lib.tensor([1.0, 2.0])
        step(lambda: x.sum().backward(create_graph=True))
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        step(lambda: (w * w).sum().backward(create_graph=True))
    """,
    "a gradient of the wrong shape": """
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        step(lambda: (x * x).backward(lib.ones(3), create_graph=True))
        step(lambda: (x * x).backward(lib.ones(2), create_graph=True))
    """,
    "the root is a leaf": """
        x = lib.tensor(2.0, requires_grad=True)
        step(lambda: x.backward(create_graph=True))
    """,
    "retain_graph=False and no_grad": """
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        def under_no_grad():
            y = (x * x).sum()
            with lib.no_grad():
                y.backward(create_graph=True)
        step(under_no_grad)
        step(lambda: (x * x).sum().backward(create_graph=True, retain_graph=False))
    """,
    "the second backward through a freed graph": """
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        step(lambda: y.backward())
        step(lambda: y.backward(create_graph=True))
    """,
}


@pytest.mark.parametrize("case", list(CASES))
def test_warns_where_torch_warns(case):
    assert run("turnout", CASES[case]) == run("torch", CASES[case])


def test_the_warning_says_why_and_how_to_avoid_it():
    got = run("turnout", """
        import turnout
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            (x * x).sum().backward(create_graph=True)
        results.append([str(w.message) for w in caught])
    """)
    (text,) = got[0]
    for part in ("backward(create_graph=True)", "reference cycle",
                 "turnout.autograd.grad", ".grad to None"):
        assert part in text, text


def test_an_error_filter_raises_before_any_grad_changes():
    got = run("turnout", """
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        warnings.simplefilter("error")
        try:
            (x * x).sum().backward(create_graph=True)
            results.append("no error")
        except UserWarning as e:
            results.append([type(e).__name__, x.grad is None])
        warnings.simplefilter("always")
        (x * x).sum().backward(create_graph=True)  # given once: no more
        results.append(x.grad.tolist())
    """)
    assert got == [["UserWarning", True], [2.0, 4.0]]


def test_reset_lets_it_warn_again():
    got = run("turnout", """
        x = lib.tensor([1.0], requires_grad=True)
        step(lambda: (x * x).sum().backward(create_graph=True))
        step(lambda: (x * x).sum().backward(create_graph=True))
        lib._C._reset_create_graph_warning()
        step(lambda: (x * x).sum().backward(create_graph=True))
    """)
    assert [n for n, _, _ in got] == [1, 0, 1]
