"""What the shared runtime holds and what it is called, for the packages that
ship it (//runtime, //python, the install prefix and the wheel)."""

load("//tools:version.bzl", "SOVERSION")

SONAME = "libturnout.so." + SOVERSION

# The CUDA kernels' library, built only where @local_cuda found nvcc. It
# links libturnout.so and cudart/cuBLAS, so that a process loads CUDA's
# libraries only when it asks for the CUDA kernels (turnout._C_cuda, or a
# C++ program that links it).
CUDA_SONAME = "libturnout_cuda.so." + SOVERSION

# Everything the runtime holds: the dispatcher with its tools, the reference
# kernels (CPU, Meta, autograd; CUDA's are in CUDA_SONAME), the jit layer,
# opcheck and gradcheck.
# Each is alwayslink, so the library holds every object of theirs, not only
# those its own code references.
RUNTIME_LIBRARIES = [
    "//dispatcher",
    "//dispatcher:call_section",
    "//dispatcher:local_dispatch_key_set",
    "//dispatcher:stack",
    "//dispatcher/core:version",
    "//dispatcher/debug:counters",
    "//dispatcher/debug:dispatch_trace",
    "//dispatcher/debug:explain",
    "//dispatcher/debug:profiler",
    "//dispatcher/debug:registry_snapshot",
    "//dispatcher/schema:default_ivalue",
    "//dispatcher/schema:schema_parser",
    "//jit/ir",
    "//jit/passes",
    "//jit/runtime:future",
    "//jit/runtime:graph_executor",
    "//jit/runtime:interpreter",
    "//jit/tracer",
    "//kernels:autograd",
    "//kernels:autograd_fallback",
    "//kernels:autograd_kernels",
    "//kernels:blas",
    "//kernels:caching_allocator",
    "//kernels:cnn",
    "//kernels:cnn_autograd",
    "//kernels:attention",
    "//kernels:attention_autograd",
    "//kernels:copy",
    "//kernels:custom_function",
    "//kernels:dtype_dispatch",
    "//kernels:elementwise",
    "//kernels:factory",
    "//kernels:factory_utils",
    "//kernels:generator",
    "//kernels:indexing",
    "//kernels:gradcheck",
    "//kernels:linalg",
    "//kernels:loops",
    "//kernels:math",
    "//kernels:math_autograd",
    "//kernels:mem_overlap",
    "//kernels:nn",
    "//kernels:nn_autograd",
    "//kernels:misc_ops",
    "//kernels:misc_ops_autograd",
    "//kernels:onednn_conv",
    "//kernels:out_variants",
    "//kernels:ops",
    "//kernels:parallel",
    "//kernels:reduce",
    "//kernels:reduce_utils",
    "//kernels:rnn_cell",
    "//kernels:scalar_ops",
    "//kernels:shape",
    "//kernels:shape_autograd",
    "//kernels:shape_ops",
    "//kernels:shape_utils",
    "//kernels:strided_walk",
    "//kernels:tensor_methods",
    "//kernels:tensor_utils",
    "//kernels:type_promotion",
    "//kernels:vec_math",
    "//kernels:vec_math_avx2",
    "//testing:opcheck",
]

# Headers installed with the runtime that hold no code of theirs: the
# GoogleTest assertions over opcheck (a program that includes them links
# GoogleTest itself).
HEADER_ONLY_LIBRARIES = [
    "//testing:opcheck_gtest",
]

# What libturnout_cuda holds (alwayslink too): the CUDA kernels, compiled
# against the headers of RUNTIME_LIBRARIES and not their objects. Empty
# libraries without CUDA.
CUDA_LIBRARIES = [
    "//kernels/cuda:for_shared_runtime",
]

# The Abseil libraries whose headers turnout's public headers include: a
# program that includes turnout's headers needs their headers, and the
# libraries behind their inline code. turnout.pc requires absl_<name>, the
# CMake package links absl::<name>. //tests/tools:install_prefix_test checks
# this list against the installed headers' include lines.
PUBLIC_ABSL_LIBRARIES = [
    "flat_hash_map",
    "inlined_vector",
    "span",
]
