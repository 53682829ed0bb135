"""The external repositories turnout builds with, declared in one place.

turnout's own WORKSPACE calls turnout_deps(), and so does a workspace that
uses turnout as a Bazel repository:

    # WORKSPACE
    local_repository(name = "turnout", path = "/path/to/turnout")
    load("@turnout//:deps.bzl", "turnout_deps")
    turnout_deps()

    # BUILD.bazel
    cc_binary(
        name = "libmy_ops.so",
        srcs = ["my_ops.cc"],
        linkshared = 1,
        deps = ["@turnout//runtime:turnout"],   # or "@turnout//:turnout"
    )

Everything is offline: Bazel's helper repositories (rules_cc, rules_java,
remote_coverage_tools) are small stand-ins under turnout's third_party/, and
every library is a Debian package wrapped by system_libs.bzl (missing ones
fail with the `apt-get install` line that fixes it). See
examples/external/README.md.

A repository already declared under one of these names (before
turnout_deps() is called) is left as it is: turnout's BUILD files then use
that one, which must offer the same targets (`@absl//:absl`, ...).
"""

load("//third_party/cuda:cuda.bzl", "cuda_configure")
load("//third_party/system:python.bzl", "python_headers")
load("//third_party/system:system_libs.bzl", "system_library")

def _turnout_local_repository_impl(rctx):
    # turnout's root, wherever the calling workspace has it: the folder of
    # turnout's WORKSPACE file. (local_repository's path would be taken from
    # the calling workspace's root, which does not know where turnout is.)
    root = rctx.path(Label("//:WORKSPACE")).dirname
    src = rctx.path("{}/{}".format(root, rctx.attr.path))
    if not src.exists:
        fail("turnout_deps: {} is missing from turnout's tree at {}".format(
            rctx.attr.path,
            root,
        ))
    for child in src.readdir():
        rctx.symlink(child, child.basename)

_turnout_local_repository = repository_rule(
    implementation = _turnout_local_repository_impl,
    doc = """A folder of turnout's tree (`path`, relative to its root) as a
    repository of its own, as local_repository would make it.""",
    attrs = {"path": attr.string(mandatory = True)},
    local = True,
)

def _maybe(rule, name, **kwargs):
    if not native.existing_rule(name):
        rule(name = name, **kwargs)

def turnout_deps(register_python_toolchain = True):
    """Declares every repository turnout's BUILD files name, unless declared.

    Args:
      register_python_toolchain: registers turnout's Python toolchain, which
        runs py_binary and py_test with Debian's /usr/bin/python3 (Debian's
        pytest, numpy and pybind11 import only there). Pass False to keep a
        toolchain of your own; turnout's C++ targets do not need it.
    """

    # Offline stand-ins for the helper repositories Bazel itself asks for.
    _maybe(_turnout_local_repository, "rules_cc", path = "third_party/rules_cc")
    _maybe(_turnout_local_repository, "rules_java", path = "third_party/rules_java")
    _maybe(
        _turnout_local_repository,
        "remote_coverage_tools",
        path = "third_party/remote_coverage_tools",
    )

    _maybe(
        system_library,
        "absl",
        apt_package = "libabsl-dev",
        headers = ["absl"],
        pkg_config = [
            "absl_base",
            "absl_flat_hash_map",
            "absl_flat_hash_set",
            "absl_hash",
            "absl_inlined_vector",
            "absl_span",
            "absl_str_format",
            "absl_strings",
            "absl_synchronization",
        ],
    )

    # Abseil's command-line flags, apart from @absl so that only the tools
    # that parse flags (//tools:inspect) link their libraries.
    _maybe(
        system_library,
        "absl_flags",
        apt_package = "libabsl-dev",
        headers = ["absl/flags"],
        pkg_config = [
            "absl_flags",
            "absl_flags_parse",
            "absl_flags_reflection",
            "absl_flags_usage",
        ],
    )

    # For turnout's tests and benchmarks: fetched only when one is built.
    _maybe(
        system_library,
        "gtest",
        apt_package = "libgtest-dev libgmock-dev",
        headers = ["gtest", "gmock"],
        linkopts = ["-lgmock", "-lgtest", "-lpthread"],
    )
    _maybe(
        system_library,
        "benchmark",
        apt_package = "libbenchmark-dev",
        headers = ["benchmark"],
        linkopts = ["-lbenchmark", "-lpthread"],
    )

    # OpenBLAS's CBLAS (the pthread build, which Debian's libopenblas-dev
    # pulls in): `#include <cblas.h>`; mm, bmm, addmm and matmul call it for
    # Float and Double.
    _maybe(
        system_library,
        "openblas",
        apt_package = "libopenblas-dev",
        headers = ["cblas.h", "openblas_config.h"],
        include_root = "/usr/include/{multiarch}/openblas-pthread",
        linkopts = ["-lopenblas", "-lpthread"],
    )

    # SLEEF's vectorised float math (erf, exp, tanh): the contiguous fast
    # paths of GELU and softmax (kernels/vec_math.h). `#include <sleef.h>`.
    _maybe(
        system_library,
        "sleef",
        apt_package = "libsleef-dev",
        headers = ["sleef.h"],
        include_root = "/usr/include/{multiarch}",
        linkopts = ["-lsleef"],
    )

    # oneDNN 2.6 (Debian's libdnnl, torch 1.13's CPU convolution library):
    # the forward of large float32 convolutions (kernels/onednn_conv.h).
    # `#include <oneapi/dnnl/dnnl.hpp>`.
    _maybe(
        system_library,
        "onednn",
        apt_package = "libdnnl-dev",
        headers = ["oneapi/dnnl"],
        linkopts = ["-ldnnl"],
    )

    # nlohmann/json 3.11 (header-only): the registry snapshot's reader and
    # writer and the profiler's Chrome trace. `#include "nlohmann/json.hpp"`.
    _maybe(
        system_library,
        "nlohmann_json",
        apt_package = "nlohmann-json3-dev",
        headers = ["nlohmann"],
    )

    # The Python extension turnout._C: Debian's pybind11 and Python headers.
    _maybe(python_headers, "python_headers")
    _maybe(
        system_library,
        "pybind11",
        apt_package = "pybind11-dev",
        headers = ["pybind11"],
    )

    # The CUDA toolkit (nvcc, cudart, cuBLAS) when it is installed; without
    # it the CUDA kernels are skipped with a message. See
    # third_party/cuda/cuda.bzl.
    _maybe(cuda_configure, "local_cuda")

    if register_python_toolchain:
        native.register_toolchains(str(Label("//tools/python:python_toolchain")))
