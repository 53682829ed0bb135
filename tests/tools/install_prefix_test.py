"""Tests for //:install and turnout used from outside its tree.

Installs turnout into a prefix under TEST_TMPDIR once (the `prefix`
fixture), then copies examples/external out of the source tree and builds
it against that prefix as README.md ("Use turnout from your project") tells
users: with make and pkg-config, and with CMake's find_package. Each build
runs the example's main and checks its output: the operator's result, its
Meta and autograd kernels, and a dispatch table that names my_ops.cc as the
registration site. The Bazel way (turnout as a repository) builds the whole
runtime from source with a Bazel server of its own, so it runs outside
`bazel test`: tools/check_bazel_repository.sh, which tools/test.sh runs.

The builds are fixtures (`make_build`, `cmake_build`: a Build with the
library's path) so that more checks of the same libraries can be added
below, such as loading them into Python (see the end of this file).
"""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest

EXAMPLE_FILES = [".bazelrc", "BUILD.bazel", "CMakeLists.txt", "Makefile",
                 "README.md", "WORKSPACE", "main.cc", "my_ops.cc", "my_ops.h"]


def _runfiles() -> Path:
    return Path(os.environ["TEST_SRCDIR"]) / os.environ["TEST_WORKSPACE"]


def _tmp() -> Path:
    return Path(os.environ["TEST_TMPDIR"])


def _info() -> dict:
    # VERSION, SOVERSION and SONAME from //tools:version.bzl, as install.py
    # gets them.
    return json.loads((_runfiles() / "tools/install/install_info.json").read_text())


def _env(**extra) -> dict:
    # What a user's shell would have: no LD_LIBRARY_PATH (rpaths must do),
    # no PKG_CONFIG_PATH or CMAKE_PREFIX_PATH but what a command sets.
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_LIBRARY_PATH", "PKG_CONFIG_PATH", "CMAKE_PREFIX_PATH")}
    env.update(extra)
    return env


def run(args, cwd=None, env=None, check=True) -> subprocess.CompletedProcess:
    """Runs a command; on failure, the assertion shows its whole output."""
    tool = shutil.which(args[0], path=(env or os.environ).get("PATH"))
    if tool is None and not os.path.isabs(str(args[0])):
        pytest.fail(f"{args[0]} is not installed; run tools/install_deps.sh")
    out = subprocess.run([str(a) for a in args], cwd=cwd, env=env or _env(),
                         capture_output=True, text=True)
    if check:
        assert out.returncode == 0, (
            f"{' '.join(map(str, args))} failed ({out.returncode}):\n"
            f"{out.stdout}\n{out.stderr}")
    return out


def install(prefix, cwd=None, env=None, check=True) -> subprocess.CompletedProcess:
    # The py_binary's launcher, in this test's runfiles.
    return run([_runfiles() / "install", "--prefix", prefix], cwd=cwd,
               env=env, check=check)


def copy_example(dest: Path) -> Path:
    """examples/external copied to dest, out of the source tree."""
    src = _runfiles() / "examples" / "external"
    dest.mkdir(parents=True)
    for name in EXAMPLE_FILES:
        shutil.copyfile(src / name, dest / name)  # follows the runfiles links
    return dest


class Build(NamedTuple):
    """A build of examples/external: its folder, libmy_ops.so and main."""
    source: Path
    library: Path
    main: Path


# ---- The install -------------------------------------------------------------

@pytest.fixture(scope="module")
def prefix() -> Path:
    """One install shared by every test of this module."""
    prefix = _tmp() / "prefix"
    out = install(prefix)
    assert f"installed turnout into {prefix}" in out.stdout
    return prefix


def test_install_layout(prefix):
    soname = _info()["soname"]
    lib = prefix / "lib"
    assert (prefix / "include/turnout/dispatcher/library.h").is_file()
    assert (prefix / "include/turnout/dispatcher/core/version.h").is_file()
    assert (prefix / "include/turnout/kernels/ops.h").is_file()
    assert (lib / soname).is_file() and not (lib / soname).is_symlink()
    assert os.readlink(lib / "libturnout.so") == soname
    dynamic = run(["readelf", "-d", lib / soname]).stdout
    assert f"Library soname: [{soname}]" in dynamic
    assert (lib / "pkgconfig/turnout.pc").is_file()
    assert (lib / "cmake/turnout/turnoutConfig.cmake").is_file()
    assert (lib / "cmake/turnout/turnoutConfigVersion.cmake").is_file()


def test_pkg_config(prefix):
    env = _env(PKG_CONFIG_PATH=str(prefix / "lib/pkgconfig"))
    assert run(["pkg-config", "--modversion", "turnout"], env=env).stdout.strip() \
        == _info()["version"]
    flags = run(["pkg-config", "--cflags", "--libs", "turnout"], env=env).stdout.split()
    assert f"-I{prefix}/include/turnout" in flags
    assert f"-L{prefix}/lib" in flags
    assert f"-Wl,-rpath,{prefix}/lib" in flags
    assert "-lturnout" in flags


# A C++ operator library's GoogleTest over opcheck, built against the
# prefix (testing/opcheck_gtest.h is installed; GoogleTest comes from the
# system): a right operator passes, a kernel that mutates its argument fails
# with opcheck's message.
_OPCHECK_PROGRAM = """\
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/ops.h"
#include "testing/opcheck_gtest.h"

using turnout::IValue;
using turnout::Tensor;

Tensor twice(const Tensor& x) { return turnout::mul(x, 2); }
Tensor sneaky(const Tensor& x) {
  turnout::mul_(x, 2);
  return turnout::clone(x);
}

TURNOUT_LIBRARY(user_ops, m) {
  m.def("twice(Tensor x) -> Tensor", TURNOUT_FN(twice));
  m.def("sneaky(Tensor x) -> Tensor");
}
TURNOUT_LIBRARY_IMPL(user_ops, CPU, m) { m.impl("sneaky", TURNOUT_FN(sneaky)); }

TEST(UserOps, Twice) {
  auto op = turnout::Dispatcher::singleton().findSchemaOrThrow("user_ops::twice", "");
  EXPECT_OPCHECK_OK(op, {IValue(turnout::ones({2, 3}))});
}
TEST(UserOps, Sneaky) {
  auto op = turnout::Dispatcher::singleton().findSchemaOrThrow("user_ops::sneaky", "");
  EXPECT_OPCHECK_OK(op, {IValue(turnout::ones({2, 3}))});
}
"""


def test_opcheck_gtest_program(prefix, tmp_path):
    assert (prefix / "include/turnout/testing/opcheck_gtest.h").is_file()
    env = _env(PKG_CONFIG_PATH=str(prefix / "lib/pkgconfig"))
    flags = run(["pkg-config", "--cflags", "--libs", "turnout"], env=env).stdout.split()
    (tmp_path / "main.cc").write_text(_OPCHECK_PROGRAM)
    run(["g++", "-std=c++17", "-o", tmp_path / "ops_test", tmp_path / "main.cc",
         *flags, "-lgtest", "-lgtest_main", "-pthread"])
    out = run([tmp_path / "ops_test"], check=False)
    assert out.returncode != 0
    assert "[       OK ] UserOps.Twice" in out.stdout
    assert ("argument 'x' was mutated (its values changed (element 0 was 1, "
            "is 2)) but its schema type is 'Tensor', not 'Tensor(a!)'"
            in out.stdout)
    assert "[  FAILED  ] UserOps.Sneaky" in out.stdout


def test_abseil_requirements_cover_the_headers(prefix):
    # Every Abseil header that an installed header includes is covered by
    # turnout.pc's Requires (absl_<name>, from PUBLIC_ABSL_LIBRARIES in
    # runtime/runtime.bzl), and the CMake package links absl::<name>.
    included = set()
    for h in (prefix / "include/turnout").rglob("*.h"):
        included |= set(re.findall(r'#include "absl/\w+/(\w+)\.h"', h.read_text()))
    assert included, "no installed header includes Abseil: update this test"
    pc = (prefix / "lib/pkgconfig/turnout.pc").read_text()
    requires = re.search(r"^Requires: (.*)$", pc, re.M).group(1).split()
    assert sorted(f"absl_{n}" for n in included) == sorted(requires)
    config = (prefix / "lib/cmake/turnout/turnoutConfig.cmake").read_text()
    for n in included:
        assert f"absl::{n}" in config


def test_cmake_version_compatibility(prefix, tmp_path):
    # Before 1.0 the soname carries major.minor: a request for X.Y[.Z]
    # accepts the installed X.Y.Z' only for the same X.Y and Z <= Z'.
    major, minor, patch = (int(p) for p in _info()["version"].split("."))
    v = f"{major}.{minor}"
    cases = {
        "": True,
        v: True,
        f"{v}.{patch} EXACT": True,
        f"{v}.{patch + 1}": False,        # newer than installed
        f"{major}.{minor + 1}": False,    # another ABI
        f"{major + 1}.0": False,
        f"{v}...{major}.{minor + 1}": True,
        f"{major}.{minor + 1}...{major}.{minor + 2}": False,
    }
    if minor > 0:
        cases[f"{major}.{minor - 1}"] = False
    requests = " ".join(f'"{r}"' for r in cases)
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.19)\n"
        "project(version_check LANGUAGES CXX)\n"
        f"foreach(request IN ITEMS {requests})\n"
        "  separate_arguments(args UNIX_COMMAND \"${request}\")\n"
        "  unset(turnout_DIR CACHE)\n"
        "  find_package(turnout ${args} QUIET)\n"
        "  message(STATUS \"request [${request}]: ${turnout_FOUND}\")\n"
        "endforeach()\n")
    out = run(["cmake", "-S", tmp_path, "-B", tmp_path / "build",
               f"-DCMAKE_PREFIX_PATH={prefix}"]).stdout
    found = dict(re.findall(r"request \[(.*)\]: (\S*)", out))
    assert {r: found.get(r) == "1" for r in cases} == cases, out


# ---- The CUDA kernels: libturnout_cuda.so, turnout-cuda.pc, turnout::cuda ---
# Installed where turnout was built with CUDA (install_info's cuda_soname);
# a program gets the CUDA kernels by linking it, and not without.

CUDA_SONAME = _info()["cuda_soname"]
needs_cuda_build = pytest.mark.skipif(not CUDA_SONAME,
                                      reason="built without CUDA (no nvcc)")

# Whether the registry of the program holds aten::add.Tensor's CUDA kernel.
_CUDA_PROGRAM = """\
#include <iostream>
#include <string>

#include "dispatcher/dispatcher.h"

int main() {
  const std::string table = turnout::Dispatcher::singleton()
                                .findSchemaOrThrow("aten::add", "Tensor")
                                .dumpComputedTable();
  std::cout << "cuda kernels: "
            << (table.find("\\nCUDA: registered at kernels/cuda/") !=
                std::string::npos)
            << std::endl;
}
"""

_CUDA_CMAKE = """\
cmake_minimum_required(VERSION 3.16)
project(cuda_user LANGUAGES CXX)
find_package(turnout REQUIRED COMPONENTS cuda)
add_executable(with_cuda main.cc)
target_link_libraries(with_cuda PRIVATE turnout::cuda)
add_executable(without_cuda main.cc)
target_link_libraries(without_cuda PRIVATE turnout::turnout)
"""


def test_cuda_files_installed_where_built(prefix):
    lib = prefix / "lib"
    cuda = [lib / "libturnout_cuda.so", lib / "pkgconfig/turnout-cuda.pc"]
    if not CUDA_SONAME:
        assert not [p for p in cuda + list(lib.glob("libturnout_cuda*"))
                    if p.exists() or p.is_symlink()]
        return
    assert (lib / CUDA_SONAME).is_file() and not (lib / CUDA_SONAME).is_symlink()
    assert os.readlink(lib / "libturnout_cuda.so") == CUDA_SONAME
    assert all(p.is_file() for p in cuda)
    dynamic = run(["readelf", "-d", lib / CUDA_SONAME]).stdout
    assert f"Library soname: [{CUDA_SONAME}]" in dynamic
    assert f"Shared library: [{_info()['soname']}]" in dynamic
    assert "Library runpath: [$ORIGIN" in dynamic  # finds libturnout beside it
    assert (prefix / "include/turnout/kernels/cuda/stream.h").is_file()


@needs_cuda_build
def test_a_program_gets_the_cuda_kernels_by_linking_them(prefix, tmp_path):
    (tmp_path / "main.cc").write_text(_CUDA_PROGRAM)
    env = _env(PKG_CONFIG_PATH=str(prefix / "lib/pkgconfig"))
    builds = {}
    for package in ["turnout-cuda", "turnout"]:
        flags = run(["pkg-config", "--cflags", "--libs", package],
                    env=env).stdout.split()
        out = tmp_path / f"make_{package}"
        run(["g++", "-std=c++17", "main.cc", *flags, "-o", out],
            cwd=tmp_path, env=env)
        builds[package] = out
    (tmp_path / "CMakeLists.txt").write_text(_CUDA_CMAKE)
    run(["cmake", "-S", tmp_path, "-B", tmp_path / "build",
         f"-DCMAKE_PREFIX_PATH={prefix}"])
    run(["cmake", "--build", tmp_path / "build"])
    builds["turnout::cuda"] = tmp_path / "build/with_cuda"
    builds["turnout::turnout"] = tmp_path / "build/without_cuda"
    got = {name: run([path], cwd=_tmp()).stdout.strip()  # no LD_LIBRARY_PATH
           for name, path in builds.items()}
    assert got == {"turnout-cuda": "cuda kernels: 1",
                   "turnout": "cuda kernels: 0",
                   "turnout::cuda": "cuda kernels: 1",
                   "turnout::turnout": "cuda kernels: 0"}


def test_cmake_component_cuda_found_iff_built(prefix, tmp_path):
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\n"
        "project(component_check LANGUAGES CXX)\n"
        "find_package(turnout REQUIRED OPTIONAL_COMPONENTS cuda)\n"
        "message(STATUS \"cuda: [${turnout_cuda_FOUND}]\")\n"
        "find_package(turnout QUIET COMPONENTS cuda gpu)\n"
        "message(STATUS \"gpu: [${turnout_FOUND}] ${turnout_NOT_FOUND_MESSAGE}\")\n")
    out = run(["cmake", "-S", tmp_path, "-B", tmp_path / "build",
               f"-DCMAKE_PREFIX_PATH={prefix}"]).stdout
    assert f"cuda: [{'TRUE' if CUDA_SONAME else 'FALSE'}]" in out, out
    assert re.search(r"gpu: \[(0|FALSE)\] the component gpu of turnout in "
                     r"\S+ is missing: turnout has no such component", out), out


# ---- Installing again, and what the installer refuses ------------------------

def test_install_twice_over_the_same_prefix():
    prefix = _tmp() / "twice"
    install(prefix)
    stale = prefix / "include/turnout/dispatcher/stale.h"
    stale.write_text("")
    install(prefix)
    assert not stale.exists()  # the headers folder is replaced as a whole
    assert os.readlink(prefix / "lib/libturnout.so") == _info()["soname"]
    assert (prefix / "include/turnout/dispatcher/library.h").is_file()


def test_relative_prefix_is_taken_from_where_bazel_ran():
    where = _tmp() / "cwd"
    where.mkdir()
    install("relative/prefix", env=_env(BUILD_WORKING_DIRECTORY=str(where)))
    assert (where / "relative/prefix/lib/pkgconfig/turnout.pc").is_file()


def test_refuses_a_prefix_that_is_a_file():
    file = _tmp() / "a_file"
    file.write_text("keep")
    out = install(file, check=False)
    assert out.returncode != 0
    assert f"install: --prefix {file}: {file} is a file, not a directory" \
        in out.stderr
    assert "Traceback" not in out.stderr
    assert file.read_text() == "keep"


def test_refuses_to_replace_a_foreign_include_folder():
    prefix = _tmp() / "foreign"
    (prefix / "include/turnout").mkdir(parents=True)
    (prefix / "include/turnout/precious.h").write_text("keep")
    out = install(prefix, check=False)
    assert out.returncode != 0
    assert "does not hold turnout's headers" in out.stderr
    assert (prefix / "include/turnout/precious.h").read_text() == "keep"


# ---- examples/external built out of the tree ---------------------------------

@pytest.fixture(scope="module")
def make_build(prefix) -> Build:
    """examples/external built with make and pkg-config (README.md's commands)."""
    source = copy_example(_tmp() / "make" / "my_ops")
    run(["make"], cwd=source,
        env=_env(PKG_CONFIG_PATH=str(prefix / "lib/pkgconfig")))
    return Build(source, source / "libmy_ops.so", source / "main")


@pytest.fixture(scope="module")
def cmake_build(prefix) -> Build:
    """examples/external built with CMake's find_package (README.md's commands)."""
    source = copy_example(_tmp() / "cmake" / "my_ops")
    run(["cmake", "-S", ".", "-B", "build", f"-DCMAKE_PREFIX_PATH={prefix}"],
        cwd=source)
    run(["cmake", "--build", "build"], cwd=source)
    return Build(source, source / "build/libmy_ops.so", source / "build/main")


def registration_line(source: Path, key: str) -> int:
    """The line of my_ops.cc's TURNOUT_LIBRARY_IMPL block for `key`."""
    lines = (source / "my_ops.cc").read_text().splitlines()
    return 1 + next(i for i, line in enumerate(lines)
                    if line.startswith(f"TURNOUT_LIBRARY_IMPL(myops, {key}, m)"))


def check_main(build: Build) -> None:
    out = run([build.main], cwd=_tmp()).stdout  # no LD_LIBRARY_PATH
    lines = out.splitlines()
    assert lines[:5] == [
        "scaled_add(a, b, 0.5) = [0.5, 1.5, 2.5, 3.5]",
        "on meta: Tensor(sizes=[4], dtype=Float, device=meta)",
        "grad_fn: ScaledAddBackward",
        "a.grad = [1, 1, 1, 1]",
        "b.grad = [0.5, 0.5, 0.5, 0.5]",
    ], out
    assert "myops::scaled_add(Tensor a, Tensor b, float alpha) -> Tensor" in lines
    # The dispatch table names my_ops.cc (a relative or absolute path, as
    # the compiler saw it) and the line of each registration.
    site = r"registered at (\S*/)?my_ops\.cc:{} \[{}\]"
    for key, runtime_key, kind in [("CPU", "CPU", "kernel"),
                                   ("Meta", "Meta", "kernel"),
                                   ("Autograd", "AutogradCPU", "autograd kernel")]:
        pattern = f"{runtime_key}: " + site.format(
            registration_line(build.source, key), re.escape(kind))
        assert any(re.fullmatch(pattern, line) for line in lines), \
            f"no line matches {pattern}:\n{out}"


def check_links_the_runtime(build: Build) -> None:
    # One registry per process: the library links the shared runtime.
    dynamic = run(["readelf", "-d", build.library]).stdout
    assert f"Shared library: [{_info()['soname']}]" in dynamic, dynamic


def test_make_and_pkg_config(make_build):
    check_links_the_runtime(make_build)
    check_main(make_build)


def test_cmake_find_package(cmake_build):
    check_links_the_runtime(cmake_build)
    check_main(cmake_build)


# ---- Python: the same libraries loaded with turnout.ops.load_library ---------
# The library make built is loaded into this process (its turnout comes from
# //python:turnout): it links libturnout.so.V by soname, so it binds to the
# runtime turnout._C already loaded, and its operator is everyone's.

def test_load_library_into_python(make_build, cmake_build):
    import turnout
    import turnout.jit

    turnout.ops.load_library(make_build.library)
    assert str(make_build.library.resolve()) in turnout.ops.loaded_libraries
    a = turnout.tensor([0.0, 1.0, 2.0, 3.0], requires_grad=True)
    b = turnout.tensor([1.0, 1.0, 1.0, 1.0], requires_grad=True)

    # Eager, through the autograd kernel and its backward.
    y = turnout.ops.myops.scaled_add(a, b, 0.5)
    assert y.tolist() == [0.5, 1.5, 2.5, 3.5]
    y.sum().backward()
    assert a.grad.tolist() == [1.0] * 4 and b.grad.tolist() == [0.5] * 4

    # The graph executor (its shape propagation runs the Meta kernel).
    g = turnout.jit.Graph.parse("""
        graph(%a : Tensor, %b : Tensor):
          %alpha : float = prim::Constant[value=2.]()
          %y : Tensor = myops::scaled_add(%a, %b, %alpha)
          return (%y)""")
    with turnout.no_grad():
        assert turnout.jit.GraphExecutor(g)(a, b).tolist() == [2.0, 3.0, 4.0, 5.0]

    table = turnout._C._dispatch_dump_table("myops::scaled_add")
    for key, runtime_key in [("CPU", "CPU"), ("Meta", "Meta"),
                             ("Autograd", "AutogradCPU")]:
        line = registration_line(make_build.source, key)
        assert re.search(rf"^{runtime_key}: registered at (\S*/)?my_ops\.cc:{line} ",
                         table, re.M), table

    # The CMake build of the same sources defines myops again: refused, all
    # or nothing, and the first library's operator is untouched.
    from turnout._C import InvalidArgumentError
    with pytest.raises(InvalidArgumentError) as e:
        turnout.ops.load_library(cmake_build.library)
    assert "TURNOUT_LIBRARY(myops) at " in str(e.value)
    assert "Nothing of the library stays registered" in str(e.value)
    assert turnout.ops.myops.scaled_add(b, b, 1.0).tolist() == [2.0] * 4
