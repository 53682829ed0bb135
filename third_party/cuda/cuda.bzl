"""Detects the CUDA toolkit and wraps it as an external repository.

`cuda_configure(name = "local_cuda")` in WORKSPACE creates `@local_cuda` with:
- `defs.bzl`: `CUDA_FOUND` (bool), `NVCC` (absolute path or ""),
  `CUDA_VERSION` ("13.0" or ""), `NVCC_FLAGS` (the flags every .cu is
  compiled with);
- `//:cuda`: a cc_library with cudart's and cuBLAS's headers and link flags
  (empty when no toolkit was found).

The toolkit is the first of: $TURNOUT_CUDA_PATH, $CUDA_HOME, $CUDA_PATH,
/usr/local/cuda, the folder above the `nvcc` on the PATH, that holds
bin/nvcc. `TURNOUT_CUDA_PATH=none` (or `--repo_env=TURNOUT_CUDA_PATH=none`)
disables CUDA even where it is installed: that is how the no-nvcc build is
tested. Without a toolkit the build still succeeds; the CUDA kernels and
their device tests are left out and the rule prints why.
"""

# nvcc's flags: the C++ standard of the rest of the build (.bazelrc's
# -std=c++17), position-independent code for the shared test binaries, and
# machine code for Ampere (sm_80) and Hopper (sm_90, the H100) plus
# compute_90 PTX, which newer GPUs JIT-compile (forward compatibility).
_NVCC_FLAGS = [
    "-std=c++17",
    "-O2",
    "-Xcompiler=-fPIC",
    "-Xcompiler=-Wall",
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_90,code=compute_90",
]

def _find_toolkit(rctx):
    candidates = []
    for var in ["TURNOUT_CUDA_PATH", "CUDA_HOME", "CUDA_PATH"]:
        value = rctx.os.environ.get(var, "")
        if value == "none" and var == "TURNOUT_CUDA_PATH":
            return None, "TURNOUT_CUDA_PATH=none"
        if value:
            candidates.append(value)
    candidates.append("/usr/local/cuda")
    nvcc_on_path = rctx.which("nvcc")
    if nvcc_on_path:
        candidates.append(str(nvcc_on_path.dirname.dirname))
    for root in candidates:
        if rctx.path(root + "/bin/nvcc").exists:
            return root, None
    return None, "no bin/nvcc under " + ", ".join(candidates)

def _cuda_version(rctx, nvcc):
    result = rctx.execute([nvcc, "--version"])
    if result.return_code != 0:
        return ""
    for line in result.stdout.splitlines():
        if "release " in line:
            return line.split("release ")[1].split(",")[0]
    return ""

def _skip(rctx, why):
    # buildifier: disable=print
    print(("CUDA kernels are skipped: {}. Everything else builds and tests " +
           "as usual; install the CUDA toolkit (nvcc) or set " +
           "TURNOUT_CUDA_PATH to build them.").format(why))
    rctx.file("defs.bzl", "\n".join([
        "CUDA_FOUND = False",
        "NVCC = \"\"",
        "CUDA_VERSION = \"\"",
        "NVCC_FLAGS = []",
        "",
    ]))
    rctx.file("BUILD.bazel", """
package(default_visibility = ["//visibility:public"])

# No CUDA toolkit was found: an empty library, so that targets naming it
# still build.
cc_library(name = "cuda")
""")

def _cuda_configure_impl(rctx):
    rctx.file("WORKSPACE", "workspace(name = \"{}\")\n".format(rctx.attr.name))
    root, why = _find_toolkit(rctx)
    if root == None:
        _skip(rctx, why)
        return
    nvcc = root + "/bin/nvcc"
    include = rctx.path(root + "/include")
    if not include.get_child("cuda_runtime_api.h").exists:
        _skip(rctx, "{} has no cuda_runtime_api.h".format(include))
        return
    lib = root + "/lib64"
    if not rctx.path(lib).exists:
        lib = root + "/lib"
    rctx.symlink(include, "include")
    rctx.file("defs.bzl", "\n".join([
        "CUDA_FOUND = True",
        "NVCC = {}".format(repr(nvcc)),
        "CUDA_VERSION = {}".format(repr(_cuda_version(rctx, nvcc))),
        "NVCC_FLAGS = {}".format(repr(_NVCC_FLAGS)),
        "",
    ]))
    rctx.file("BUILD.bazel", """
package(default_visibility = ["//visibility:public"])

# cudart and cuBLAS from {root}. Only the top-level headers (and crt/, nv/) are
# declared: the C++ side includes cuda_runtime_api.h and cublas_v2.h; the
# .cu files are compiled by nvcc, which finds its own headers.
cc_library(
    name = "cuda",
    hdrs = glob(["include/*.h", "include/*.hpp", "include/crt/**", "include/nv/**"]),
    includes = ["include"],
    linkopts = [
        "-L{lib}",
        "-Wl,-rpath,{lib}",
        "-lcublas",
        "-lcudart",
    ],
)
""".format(root = root, lib = lib))

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["TURNOUT_CUDA_PATH", "CUDA_HOME", "CUDA_PATH", "PATH"],
    local = True,
)
