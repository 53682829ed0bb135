"""Test macros shared by the test packages."""

def turnout_cc_test(name, srcs, deps = [], size = "small", **kwargs):
    """A GoogleTest binary linked with gtest_main from Debian's libgtest-dev."""
    native.cc_test(
        name = name,
        srcs = srcs,
        deps = deps + ["@gtest//:gtest"],
        linkopts = ["-lgtest_main"],
        size = size,
        **kwargs
    )
