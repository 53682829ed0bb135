"""turnout.utils.cpp_extension: C++ operator libraries built at run time
against the package's headers and shared runtime, cached by content, with
errors that show the compiler's own output."""

import doctest
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import turnout
import turnout.utils
from turnout.utils import cpp_extension
from turnout.utils.cpp_extension import BuildError

ROOT = Path(__file__).resolve().parents[2]

SCALE = """
turnout::Tensor scale(const turnout::Tensor& x, double f) {
  return turnout::mul(x, f);
}
"""


@pytest.fixture(autouse=True)
def extensions_dir(tmp_path, monkeypatch):
    """Every test builds into its own cache, never the user's."""
    path = tmp_path / "extensions"
    monkeypatch.setenv("TURNOUT_EXTENSIONS_DIR", str(path))
    return path


@pytest.fixture(params=["ninja", "direct"])
def builder(request, monkeypatch):
    """Builds with ninja, and without it (the compiler run directly)."""
    if request.param == "direct":
        which = shutil.which
        monkeypatch.setattr(
            shutil, "which",
            lambda cmd, *a, **k: None if cmd == "ninja" else which(cmd, *a, **k))
    elif shutil.which("ninja") is None:
        pytest.skip("ninja is not on the PATH (apt-get install ninja-build)")
    return request.param


def run_python(script: str, env=None) -> subprocess.CompletedProcess:
    """Runs `script` in a fresh interpreter with this test's sys.path."""
    env = dict(os.environ if env is None else env,
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_utils_is_a_package_with_its_old_names():
    import turnout.utils.cpp_extension as by_import
    assert by_import is cpp_extension
    for name in ("counters", "timed", "time_report", "same", "DispatchMode",
                 "no_dispatch", "active_modes", "Sameness"):
        assert hasattr(turnout.utils, name), name
    assert "counters" in turnout.utils.__doc__


def test_load_inline_one_op(builder):
    name = f"cppext_scale_{builder}"
    ext = cpp_extension.load_inline(name, cpp_sources=SCALE, functions=["scale"])
    assert ext.__name__ == name
    assert re.fullmatch(rf"lib{name}_[0-9a-f]{{8}}\.so", Path(ext.__file__).name)
    assert Path(ext.__file__).parent == \
        Path(os.environ["TURNOUT_EXTENSIONS_DIR"]) / name
    assert ext.scale is getattr(turnout.ops, name).scale
    x = turnout.tensor([1.0, 2.0])
    assert ext.scale(x, 3.0).tolist() == [3.0, 6.0]
    assert str(ext.scale.default._schema) == \
        f"{name}::scale(Tensor _0, float _1) -> Tensor _0"
    # A composite kernel: autograd goes through the mul it calls.
    w = turnout.tensor([1.0, 2.0], requires_grad=True)
    ext.scale(w, 3.0).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]
    # The same inputs again in this process: the same module, nothing built.
    assert cpp_extension.load_inline(name, SCALE, functions=["scale"]) is ext


def test_functions_with_docstrings_and_their_own_library_block():
    source = """
    turnout::Tensor twice(const turnout::Tensor& x) { return turnout::add(x, x); }
    TURNOUT_LIBRARY(cppext_mixed, m) { m.def("thrice(Tensor x) -> Tensor"); }
    TURNOUT_LIBRARY_IMPL(cppext_mixed, CPU, m) {
      m.impl("thrice", [](const turnout::Tensor& x) { return turnout::mul(x, 3.0); });
    }
    """
    ext = cpp_extension.load_inline("cppext_mixed", [source],
                                    functions={"twice": "2 * x"})
    x = turnout.tensor([1.0])
    assert ext.twice(x).tolist() == [2.0]
    assert ext.thrice(x).tolist() == [3.0]
    assert ext.twice.__doc__ == "2 * x"
    main = Path(ext.__file__).parent / "build" / "main.cpp"
    assert "TURNOUT_LIBRARY_FRAGMENT(cppext_mixed, m)" in main.read_text()


CACHE_SCRIPT = """
    import os, sys, time
    import turnout
    from turnout.utils import cpp_extension
    source = os.environ["CPPEXT_SOURCE"]
    start = time.perf_counter()
    ext = cpp_extension.load_inline("cppext_cache", source, functions=["scale"],
                                    verbose=True)
    print(f"load took {time.perf_counter() - start:.3f} s")
    print("result", ext.scale(turnout.tensor([2.0]), 0.5).tolist())
    print("file", ext.__file__)
"""


def test_the_cache_across_processes():
    env = dict(os.environ, CPPEXT_SOURCE=SCALE)
    first = run_python(CACHE_SCRIPT, env).stdout
    assert "-c " in first and "main.cpp" in first      # the compile command
    assert "result [1.0]" in first
    library = Path(re.search(r"^file (.*)$", first, re.M).group(1))
    mtime = library.stat().st_mtime_ns

    # A fresh process with the same inputs loads the library: no compiler.
    second = run_python(CACHE_SCRIPT, env).stdout
    assert "loading the cached" in second, second
    assert "-c " not in second and "ninja" not in second
    assert "result [1.0]" in second
    assert f"file {library}" in second
    assert library.stat().st_mtime_ns == mtime
    took = float(re.search(r"load took ([\d.]+) s", second).group(1))
    assert took < 1.0, second

    # A changed source rebuilds, to another file.
    env["CPPEXT_SOURCE"] = SCALE + "// changed\n"
    third = run_python(CACHE_SCRIPT, env).stdout
    assert "-c " in third
    changed = Path(re.search(r"^file (.*)$", third, re.M).group(1))
    assert changed != library and changed.parent == library.parent
    assert library.exists()


def test_changed_inputs_in_one_process_say_so():
    name = "cppext_twice_in_process"
    cpp_extension.load_inline(name, SCALE, functions=["scale"])
    with pytest.raises(RuntimeError) as e:
        cpp_extension.load_inline(name, SCALE + "// v2\n", functions=["scale"])
    message = str(e.value)
    assert f"this process already loaded extension '{name}'" in message
    assert "Load it in a new process" in message
    # The new build is ready for the next process.
    assert len(list((Path(os.environ["TURNOUT_EXTENSIONS_DIR"]) / name)
                    .glob(f"lib{name}_*.so"))) == 2


def test_concurrent_builds_of_one_extension():
    script = CACHE_SCRIPT
    env = dict(os.environ, CPPEXT_SOURCE=SCALE + "// concurrent\n",
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, out + err
        assert "result [1.0]" in out
    files = {re.search(r"^file (.*)$", out, re.M).group(1) for out, _ in outs}
    assert len(files) == 1
    # One of them compiled; the other waited and loaded its library.
    assert sum("-c " in out for out, _ in outs) == 1, outs
    leftovers = [p.name for p in Path(files.pop()).parent.iterdir()
                 if ".tmp" in p.name]
    assert leftovers == []


def test_a_compile_error_shows_the_compiler_output(builder):
    name = f"cppext_broken_{builder}"
    broken = "turnout::Tensor scale(const turnout::Tensor& x, double f) {\n" \
             "  return turnout::mul(x, f)\n}\n"
    with pytest.raises(BuildError) as e:
        cpp_extension.load_inline(name, broken, functions=["scale"])
    message = str(e.value)
    assert e.value.stage == "compile"
    assert isinstance(e.value, RuntimeError)
    assert message.startswith(f"load_inline('{name}'): compiling failed")
    # The compiler's own line: main.cpp:LINE:COL: error: ... (its quotes
    # follow the locale).
    assert re.search(r"main\.cpp:5:\d+: error: expected .;. before", message), \
        message
    assert re.search(r"\S+ .*-c \S*main\.cpp", message)       # the command
    assert not list((Path(os.environ["TURNOUT_EXTENSIONS_DIR"]) / name)
                    .glob("*.so"))
    # Fixed, the same name builds and loads.
    ext = cpp_extension.load_inline(name, SCALE, functions=["scale"])
    assert ext.scale(turnout.tensor([1.0]), 2.0).tolist() == [2.0]


def test_a_link_error_says_so(builder):
    with pytest.raises(BuildError) as e:
        cpp_extension.load_inline(f"cppext_badlink_{builder}", SCALE,
                                  functions=["scale"],
                                  extra_ldflags=["-lturnout_no_such_library"])
    assert e.value.stage == "link"
    assert "linking failed" in str(e.value)
    assert "cannot find -lturnout_no_such_library" in str(e.value)


def test_a_load_error_says_so():
    # Declared, never defined: the link of a shared library allows it, the
    # load does not.
    with pytest.raises(OSError) as e:
        cpp_extension.load_inline(
            "cppext_undefined",
            "turnout::Tensor scale(const turnout::Tensor& x, double f);",
            functions=["scale"])
    assert "undefined symbol" in str(e.value)
    assert "scale(turnout::Tensor const&, double)" in str(e.value)
    note = "\n".join(getattr(e.value, "__notes__", []))
    assert "load_inline('cppext_undefined') compiled and linked" in note
    assert "loading it failed" in note


def test_load_a_source_with_cpu_and_meta_kernels(tmp_path, builder):
    name = f"cppext_meta_{builder}"
    source = tmp_path / "my_ops.cc"
    source.write_text(textwrap.dedent(f"""\
        #include "dispatcher/library.h"
        #include "kernels/ops.h"

        namespace {{
        turnout::Tensor affine_cpu(const turnout::Tensor& x, double a, double b) {{
          return turnout::add(turnout::mul(x, a), b);
        }}
        turnout::Tensor affine_meta(const turnout::Tensor& x, double a, double b) {{
          return turnout::empty_like(x);
        }}
        }}  // namespace

        TURNOUT_LIBRARY({name}, m) {{
          m.def("affine(Tensor x, float a, float b=0.0) -> Tensor");
        }}
        TURNOUT_LIBRARY_IMPL({name}, CPU, m) {{
          m.impl("affine", TURNOUT_FN(affine_cpu));
        }}
        TURNOUT_LIBRARY_IMPL({name}, Meta, m) {{
          m.impl("affine", TURNOUT_FN(affine_meta));
        }}
        """))
    ext = cpp_extension.load(name, [source], extra_cflags=["-Wall", "-Werror"])
    assert ext.affine(turnout.tensor([1.0, 2.0]), 2.0, b=1.0).tolist() == [3.0, 5.0]
    meta = ext.affine(turnout.empty(3, device="meta"), 2.0)
    assert meta.is_meta and list(meta.shape) == [3]
    table = turnout._C._dispatch_dump_table(f"{name}::affine")
    assert f"CPU: registered at {source}:" in table
    assert f"Meta: registered at {source}:" in table


def test_flags_for_a_plain_compiler_command(tmp_path):
    include, = cpp_extension.include_paths()
    lib, = cpp_extension.library_paths()
    assert (Path(include) / "dispatcher" / "library.h").is_file()
    soname = turnout._C._build_info()["soname"]
    assert (Path(lib) / soname).is_file()

    # A library of operators by hand, from include_paths()/library_paths().
    source = tmp_path / "by_hand.cc"
    source.write_text(textwrap.dedent("""\
        #include "dispatcher/library.h"
        #include "kernels/ops.h"
        turnout::Tensor negate(const turnout::Tensor& x) { return turnout::neg(x); }
        TURNOUT_LIBRARY(cppext_by_hand, m) { m.def("negate", TURNOUT_FN(negate)); }
        """))
    library = tmp_path / "libby_hand.so"
    subprocess.run(["g++", "-std=c++17", "-fPIC", "-shared", f"-I{include}",
                    str(source), "-o", str(library), f"-L{lib}", f"-l:{soname}",
                    f"-Wl,-rpath,{lib}"], check=True)
    turnout.ops.load_library(library)
    assert turnout.ops.cppext_by_hand.negate(turnout.tensor([1.0])).tolist() == [-1.0]

    # A C++ program, from cflags()/ldflags(): it finds the runtime by rpath.
    program = tmp_path / "main.cc"
    program.write_text(textwrap.dedent("""\
        #include <iostream>
        #include "kernels/ops.h"
        int main() {
          turnout::Tensor x = turnout::ones({3});
          std::cout << turnout::sum(turnout::add(x, x)).item<float>() << "\\n";
        }
        """))
    exe = tmp_path / "main"
    subprocess.run(["g++", *cpp_extension.cflags(), str(program), "-o", str(exe),
                    *cpp_extension.ldflags()], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True,
                         env={"PATH": os.environ.get("PATH", "")})
    assert out.stdout == "6\n"


INSTALLED_SCRIPT = """
import turnout
from turnout.utils import cpp_extension
ext = cpp_extension.load_inline("installed", cpp_sources=r'''
    turnout::Tensor scale(const turnout::Tensor& x, double f) {
      return turnout::mul(x, f);
    }''', functions=["scale"])
print(turnout.__file__)
print(cpp_extension.include_paths()[0])
print(ext.scale(turnout.tensor([1.0, 2.0]), 2.0).tolist())
"""


def test_from_the_installed_package(tmp_path):
    # //:install_python's layout (the wheel's too): the headers and the
    # runtime inside site-packages/turnout, used by a script outside the tree.
    runfiles = Path(os.environ["TEST_SRCDIR"]) / os.environ["TEST_WORKSPACE"]
    target = tmp_path / "site"
    subprocess.run([str(runfiles / "install_python"), "--target", str(target)],
                   check=True, capture_output=True)
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(target),
           "TURNOUT_EXTENSIONS_DIR": str(tmp_path / "ext")}
    proc = subprocess.run(["/usr/bin/python3", "-c", INSTALLED_SCRIPT],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    package = target / "turnout"
    assert proc.stdout.splitlines() == [
        str(package / "__init__.py"), str(package / "include" / "turnout"),
        "[2.0, 4.0]"]


def test_arguments_are_checked(tmp_path):
    with pytest.raises(ValueError, match=r"load_inline\(name\): expected a C\+\+ "
                       r"identifier .* got 'my-ops'"):
        cpp_extension.load_inline("my-ops", SCALE)
    with pytest.raises(ValueError, match="the function name 'ns::scale' is not"):
        cpp_extension.load_inline("cppext_args", SCALE, functions=["ns::scale"])
    with pytest.raises(TypeError, match="expected functions to be a list"):
        cpp_extension.load_inline("cppext_args", SCALE, functions=3)
    with pytest.raises(TypeError, match="expected extra_cflags to be a list of str"):
        cpp_extension.load_inline("cppext_args", SCALE, extra_cflags="-O3")
    with pytest.raises(FileNotFoundError, match="the source .*nothing.cc does not"):
        cpp_extension.load("cppext_args", [tmp_path / "nothing.cc"])
    with pytest.raises(NotImplementedError, match="with_cuda=True"):
        cpp_extension.load_inline("cppext_args", SCALE, with_cuda=True)


def test_default_build_root(monkeypatch):
    monkeypatch.delenv("TURNOUT_EXTENSIONS_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere/cache")
    assert cpp_extension.get_default_build_root() == \
        "/somewhere/cache/turnout_extensions"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", "/home/someone")
    assert cpp_extension.get_default_build_root() == \
        "/home/someone/.cache/turnout_extensions"


def find(relative):
    for base in (Path.cwd(), ROOT):   # Bazel runfiles, then the source tree
        if (base / relative).exists():
            return base / relative
    raise FileNotFoundError(relative)


def test_readme_example_runs(capsys):
    text = find("README.md").read_text()
    marker = "<!-- cpp_extension example -->"
    assert marker in text
    after = text.split(marker, 1)[1]
    start = after.index("```python\n") + len("```python\n")
    code = after[start:after.index("```", start)]
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert out == "tensor([3., 6.])\nmy_ops::scale(Tensor _0, float _1) -> Tensor _0\n"


def test_docstring_examples():
    failures, attempted = doctest.testmod(cpp_extension,
                                          optionflags=doctest.ELLIPSIS)
    assert failures == 0
    assert attempted > 0
