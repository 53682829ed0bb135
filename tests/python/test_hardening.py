"""Issue 15, "no input crashes it": inputs that killed the process (SIGSEGV)
now raise clear Python errors. Each case runs in a child process, so that a
crash fails its test instead of ending the test runner.

- values nested too deep or containing themselves, into any converter
  (bindings/ivalue.cc): TypeError with the argument and the path;
- runaway re-entry of Python kernels and handlers (bindings/python_nesting.h):
  RecursionError naming the operator and the fix, on every thread;
- errors at non-ASCII characters (the parsers' excerpts, bindings/errors.cc):
  a message, never an empty one.
"""

import os
import subprocess
import sys
import textwrap

import pytest

import turnout
from turnout import _C, jit


def run_child(script: str, timeout: float = 120) -> str:
    """Runs `script` in a fresh interpreter with this test's sys.path and
    returns its stdout; fails when it dies (a signal: a crash) or exits
    non-zero."""
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script)],
                          capture_output=True, text=True, env=env,
                          timeout=timeout)
    assert proc.returncode == 0, (
        f"the child {'died of signal ' + str(-proc.returncode) if proc.returncode < 0 else 'exited with ' + str(proc.returncode)}"
        f"\n--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}")
    return proc.stdout


# Prints "TypeName: message" for what `fn()` raises, or "ok".
REPORT = """
import sys, threading, turnout
from turnout import ops, _C
from turnout.library import Library
from turnout.utils import DispatchMode, no_dispatch

def report(fn):
    try:
        fn()
        print("ok", flush=True)
    except BaseException as e:
        print(type(e).__name__ + ": " + str(e).replace("\\n", " | "), flush=True)

def on_thread(fn, stack_size=0):
    threading.stack_size(stack_size)
    t = threading.Thread(target=lambda: report(fn))
    t.start()
    t.join()
    threading.stack_size(0)

def selfref():
    l = [1]
    l.append(l)
    return l

def deep(n, kind=list):
    v = 1
    for _ in range(n):
        v = kind([v])
    return v
"""


# ---- 1. Nesting: deep and self-referencing values -------------------------

VALUES = {
    "selfref": "selfref()",
    "selfref_tuple": "(lambda l: (l.append((l,)), l)[1])([])",
    "deep_list": "deep(100_000)",
    "deep_tuple": "deep(100_000, tuple)",
}


@pytest.mark.parametrize("value", sorted(VALUES))
def test_deep_or_self_referencing_arguments_are_type_errors(value):
    out = run_child(REPORT + f"""
v = {VALUES[value]}
report(lambda: ops.aten.add(turnout.ones(2), v))            # packet
report(lambda: ops.aten.add.Tensor(turnout.ones(2), v))     # overload
report(lambda: ops.aten.cat(v))                             # Tensor[]
report(lambda: ops.aten.cat([turnout.ones(1), v]))
report(lambda: ops.aten.view(turnout.ones(4), v))           # int[]
report(lambda: ops.aten.add(turnout.ones(2), other=v))      # keyword
""").splitlines()
    assert len(out) == 6, out
    for line in out:
        assert line.startswith("TypeError: aten::"), line
    # The message describes the value, bounded: "list[list[list[...]]]".
    assert "must be Tensor, but got " in out[1]
    assert len(out[1]) < 400, out[1]


def test_any_typed_arguments_name_the_path_of_a_cycle_or_the_depth():
    out = run_child(REPORT + """
lib = Library("hardening_any", "DEF")
lib.define("echo(Any x) -> Any")
lib.impl("echo", lambda x: x, "CompositeExplicitAutograd")
echo = ops.hardening_any.echo.default
report(lambda: echo(selfref()))
report(lambda: echo([0, (1, selfref())]))
report(lambda: echo(deep(100_000)))
report(lambda: echo(deep(101)))
print(echo(deep(100)) == deep(100))                   # the limit itself works
""").splitlines()
    assert out[0] == (
        "TypeError: hardening_any::echo(): argument 'x' (position 1): x "
        "contains itself: x[1] is x; turnout converts lists and tuples by "
        "value, so a value cannot contain itself")
    assert "x contains itself: x[1][1][1] is x[1][1]" in out[1]
    assert out[2].startswith(
        "TypeError: hardening_any::echo(): argument 'x' (position 1): x is "
        "nested more than 100 levels deep (x[0][0][0][0][0][0]...[0][0][0][0])")
    assert "at most 100 levels of lists and tuples" in out[2]
    assert "x is nested more than 100 levels deep" in out[3]
    assert out[4] == "True"


def test_kernel_and_handler_results_nested_too_deep_are_type_errors():
    out = run_child(REPORT + """
lib = Library("hardening_ret", "DEF")
lib.define("many(Tensor x) -> Tensor[]")
lib.define("anything(Tensor x) -> Any")
lib.impl("many", lambda x: selfref(), "CPU")
lib.impl("anything", lambda x: deep(100_000), "CPU")
report(lambda: ops.hardening_ret.many(turnout.ones(1)))
report(lambda: ops.hardening_ret.anything(turnout.ones(1)))

class Returns(DispatchMode):
    def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
        return selfref()
def in_mode():
    x = turnout.ones(1)
    with Returns():
        ops.aten.cat([x])
report(in_mode)
report(lambda: turnout.jit.wait(turnout.jit.fork(selfref)))
""").splitlines()
    assert out[0].startswith("TypeError: expected the kernel for "
                             "hardening_ret::many to return a Tensor[], got "
                             "list[int, list[int, list["), out[0]
    assert out[1].startswith("TypeError: the kernel for hardening_ret::anything "
                             "returned list[list[list[list[list[...]]]]]: result is "
                             "nested more than 100 levels deep"), out[1]
    assert out[2].startswith("TypeError: Returns.__turnout_dispatch__ for "
                             "aten::cat returned list[int, list["), out[2]
    assert "result contains itself: result[1] is result" in out[3], out[3]


# Shared values: `a = [a, a]` 60 times is 60 levels deep but holds 2**60
# elements by value; converting it took exponential time (a hang). Every
# converter now stops at kMaxConvertedElements (bindings/ivalue.h) elements,
# counting an element each time it is reached. The child's timeout is the
# bound: before the limit, it never ended.
SHARED = REPORT + """
def shared(levels=60):
    a = []
    for _ in range(levels):
        a = [a, a]
    return a

a = shared()
lib = Library("hardening_shared", "DEF")
lib.define("echo(Any x) -> Any")
lib.define("many(Tensor x) -> Tensor[]")
lib.define("anything(Tensor x) -> Any")
lib.impl("echo", lambda x: x, "CompositeExplicitAutograd")
lib.impl("many", lambda x: a, "CPU")
lib.impl("anything", lambda x: a, "CPU")
echo = ops.hardening_shared.echo.default
"""

LIMIT = ("holds more than 4194304 elements in all, counting an element each "
         "time it is reached (a list held twice counts twice; stopped at ")


def test_shared_arguments_are_refused_not_converted_forever():
    out = run_child(SHARED + """
report(lambda: echo(a))                                     # Any
report(lambda: ops.aten.cat(a))                             # Tensor[]
report(lambda: ops.aten.view(turnout.ones(4), a))           # int[]
report(lambda: ops.aten.add(turnout.ones(2), other=a))      # packet, keyword
report(lambda: ops.aten.add.Tensor(turnout.ones(2), a))     # describePyType
g = turnout.jit.Graph.parse("graph(%x : int[][]):\\n  return (%x)\\n")
report(lambda: turnout.jit.run(g, a))                       # a graph input
print(echo(shared(10)) == shared(10))                       # 2046: converts
""", timeout=60).splitlines()
    assert out[0] == (
        "TypeError: hardening_shared::echo(): argument 'x' (position 1): x "
        + LIMIT + "x[0][0][0][0][0][0]...[1][0][1][1]); turnout converts lists "
        "and tuples by value, at most 4194304 elements per value: pass bulk "
        "data as a tensor, and do not nest the same list many times over")
    assert out[1].startswith("TypeError: aten::cat(): argument 'tensors' "
                             "(position 1): tensors " + LIMIT), out[1]
    assert out[2].startswith("TypeError: aten::view(): argument 'size' "
                             "(position 2): size " + LIMIT), out[2]
    # No overload of add takes a list: refused by type, as before.
    assert out[3].startswith("TypeError: aten::add(): no overload matches the "
                             "arguments (Tensor, other=list[list[list["), out[3]
    assert out[4].startswith(
        "TypeError: aten::add.Tensor(): argument 'other' (position 2) must be "
        "Tensor, but got list[list[list[list[list[...]]]]]"), out[4]
    assert out[5].startswith("TypeError: run(): input 0: %x " + LIMIT), out[5]
    assert out[6] == "True"


def test_shared_results_are_refused_not_converted_forever():
    out = run_child(SHARED + """
report(lambda: ops.hardening_shared.many(turnout.ones(1)))
report(lambda: ops.hardening_shared.anything(turnout.ones(1)))

class Returns(DispatchMode):
    def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
        return a
def in_mode():
    x = turnout.ones(1)
    with Returns():
        ops.hardening_shared.many(x)                        # -> Tensor[]
report(in_mode)
report(lambda: turnout.jit.wait(turnout.jit.fork(lambda: a)))

# IValue lists are shared by reference: ListConstruct(%l, %l) 60 times is a
# small graph value and 2**60 Python elements.
lines, prev, t = ["graph(%x : int):"], "%x", "int"
for i in range(60):
    t += "[]"
    lines.append(f"  %l{i} : {t} = prim::ListConstruct({prev}, {prev})")
    prev = f"%l{i}"
g = turnout.jit.Graph.parse("\\n".join(lines + [f"  return ({prev})", ""]))
report(lambda: turnout.jit.run(g, 1))
""", timeout=60).splitlines()
    assert out[0].startswith("TypeError: the kernel for hardening_shared::many "
                             "returned list[list[list[list[list[...]]]]]: "
                             "result " + LIMIT), out[0]
    assert out[1].startswith("TypeError: the kernel for "
                             "hardening_shared::anything returned "
                             "list[list[list[list[list[...]]]]]: result "
                             + LIMIT), out[1]
    assert out[2].startswith("TypeError: Returns.__turnout_dispatch__ for "
                             "hardening_shared::many returned list[list[list[list["
                             "list[...]]]]]: result " + LIMIT), out[2]
    assert "result " + LIMIT in out[3], out[3]
    assert out[4] == (
        "TypeError: a value of more than 4194304 elements in all (counting an "
        "element each time it is reached: a list held twice counts twice) "
        "cannot be converted to Python; return bulk data as a tensor")


def test_a_list_that_grows_while_it_is_converted_stops_at_the_limit():
    """An element's __index__ may run any Python code: here it appends to the
    list being converted, which the conversion re-reads at every step."""
    out = run_child(REPORT + """
class Grows:
    def __index__(self):
        l.append(Grows())
        return 1
l = [Grows()]
report(lambda: ops.aten.view(turnout.ones(1), l))
print(len(l))
""", timeout=60).splitlines()
    assert out[0].startswith("TypeError: aten::view(): argument 'size' "
                             "(position 2): size holds more than 4194304 "
                             "elements in all"), out[0]
    assert out[1] == "4194305"


# ---- 2-4. Runaway re-entry: RecursionError on every thread ----------------

SUBCLASS = REPORT + """
class Bad(turnout.Tensor):
    # The commonest subclass mistake: func(*args) without no_dispatch().
    @classmethod
    def __turnout_dispatch__(cls, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))

def call():
    turnout.Tensor._make_subclass(Bad, turnout.ones(2)) + 1
"""

SELF_REDISPATCH = REPORT + """
lib = Library("hardening_rk", "DEF")
lib.define("k(Tensor x) -> Tensor")
def kernel(ks, x):   # redispatches with its own key set: calls itself
    return ops.hardening_rk.k.default.redispatch(ks, x)
lib.impl("k", kernel, "CPU", with_keyset=True)

def call():
    ops.hardening_rk.k(turnout.ones(1))
"""

WHERE = """
report(call)
on_thread(call)
on_thread(call, 512 * 1024)           # a small stack: the C stack check
turnout.jit.wait(turnout.jit.fork(lambda: report(call)))
sys.setrecursionlimit(1_000_000)      # Python's own counter cannot help
report(call)
on_thread(call)
on_thread(call, 512 * 1024)
turnout.jit.wait(turnout.jit.fork(lambda: report(call)))
"""


def test_subclass_handler_calling_func_without_no_dispatch_is_recursion_error():
    out = run_child(SUBCLASS + WHERE).splitlines()
    assert len(out) == 8, out
    for line in out:
        assert line.startswith("RecursionError: turnout: calling "
                               "Bad.__turnout_dispatch__ for aten::add"), line
        assert "no_dispatch()" in line
    assert "more than 950 levels deep" in out[0]
    assert "more than 1000 levels deep" in out[4]
    assert "too deeply for this thread's C stack" in out[6]


def test_kernel_redispatching_with_its_own_keyset_is_recursion_error():
    out = run_child(SELF_REDISPATCH + WHERE).splitlines()
    assert len(out) == 8, out
    for line in out:
        assert line.startswith("RecursionError"), line
    # With a high recursion limit only turnout's bound stops it, and says how.
    for line in out[4:]:
        assert "python kernel kernel" in line and "hardening_rk::k" in line
        assert "redispatch with its own key removed" in line


MODES = REPORT + """
class M(DispatchMode):
    def __turnout_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))

def nested(n):
    def call():
        modes = [M() for _ in range(n)]
        for m in modes:
            m.__enter__()
        try:
            assert (turnout.ones(2) + 1).tolist() == [2.0, 2.0]
        finally:
            for m in reversed(modes):
                m.__exit__(None, None, None)
    return call

report(nested(900))
report(nested(1000))
on_thread(nested(900))
on_thread(nested(1000))
on_thread(nested(900), 512 * 1024)
"""


def test_deeply_nested_dispatch_modes_work_or_raise_recursion_error():
    out = run_child(MODES).splitlines()
    assert out[0] == "ok" and out[2] == "ok", out
    for line in (out[1], out[3]):
        assert line.startswith("RecursionError: turnout: calling dispatch "
                               "mode M.__turnout_dispatch__ for aten::"), line
    assert out[4].startswith("RecursionError: turnout: calling dispatch mode "
                             "M.__turnout_dispatch__"), out[4]
    assert "C stack" in out[4]


def test_deep_mode_stacks_fail_as_torch_does():
    """torch 1.13 raises RecursionError for 1,000 nested dispatch modes."""
    torch = pytest.importorskip("torch")
    del torch
    out = run_child("""
import torch
from torch.utils._python_dispatch import TorchDispatchMode
class M(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
modes = [M() for _ in range(1000)]
for m in modes:
    m.__enter__()
try:
    torch.ones(2) + 1
    print("ok")
except RecursionError:
    print("RecursionError")
""").split()
    assert out == ["RecursionError"]
    mine = run_child(MODES).splitlines()[1]
    assert mine.split(":")[0] == out[0]


# ---- 10. Errors at non-ASCII characters have their message -----------------

@pytest.mark.parametrize("schema,found", [
    ("foo(Tensor é) -> Tensor", "é"),
    ("fé(Tensor x) -> Tensor", "é"),
    ("foo(Tensor x, ü) -> Tensor", "ü"),
    ("foo(Tensor x) -> Tensor€", "€"),
    ("foo(int x=😀) -> Tensor", "😀"),
    ("ñ::foo(Tensor x) -> Tensor", "ñ"),
    ('foo(str x="\\é") -> Tensor', "\\é"),
])
def test_schema_errors_at_multibyte_characters_have_a_message(schema, found):
    with pytest.raises(_C.InvalidArgumentError) as info:
        _C.parse_schema(schema)
    message = str(info.value)
    assert message.startswith("invalid schema: ")
    assert f"'{found}'" in message
    # The caret stands under the character.
    line, caret = message.splitlines()[1:3]
    assert line[caret.index("^"):].startswith(found), message


@pytest.mark.parametrize("text,found", [
    ("graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x, é)\n"
     "  return (%y)\n", "'é'"),
    ("graph(%x : Tensor):\n  %y : Tensor = aten::relü(%x)\n  return (%y)\n",
     "'ü'"),
    ("graph(%é : Tensor):\n  return (%é)\n", "'é'"),
    ("€graph(%x : Tensor):\n  return (%x)\n", "'€'"),
    ("graph(%x : Tensor):  # ünï\n  %y : Tensor = aten::relu(%x)😀\n"
     "  return (%y)\n", "'😀'"),
    ('graph(%x : Tensor):\n  %s : str = prim::Constant[value="a\\é"]()\n'
     "  return (%x)\n", "\\é"),
])
def test_ir_errors_at_multibyte_characters_have_a_message(text, found):
    with pytest.raises(_C.InvalidArgumentError) as info:
        jit.Graph.parse(text)
    message = str(info.value)
    assert message.startswith("parse error at "), message
    assert found in message


def test_error_translation_keeps_a_message_that_is_not_utf8():
    # bytes reach the C++ parser as they are: its excerpt holds byte 0xff,
    # which the translation decodes as U+FFFD instead of dropping the message.
    with pytest.raises(_C.InvalidArgumentError) as info:
        _C.parse_schema(b"foo(Tensor \xff) -> Tensor")
    assert str(info.value).startswith(
        "invalid schema: unexpected character '\ufffd'")
