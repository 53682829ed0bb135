"""Targets every layer package declares the same way."""

def layer_sources():
    """`sources`: the package's C++ and CUDA files, for //tests:layering_test.

    The test reads their include lines to keep the folders' order.
    """
    native.filegroup(
        name = "sources",
        srcs = native.glob(["**/*.h", "**/*.cc", "**/*.cu", "**/*.cuh"]),
        visibility = ["//tests:__pkg__"],
    )

def plugin_headers():
    """`headers`: the package's headers alone, for //dispatcher:headers_for_plugins."""
    native.cc_library(
        name = "headers",
        hdrs = native.glob(["*.h"]),
        visibility = ["//dispatcher:__pkg__"],
    )
