"""pytest-based Python tests, run by Debian's /usr/bin/python3."""

def turnout_py_test(name, srcs, deps = [], **kwargs):
    native.py_test(
        name = name,
        srcs = srcs + ["//tests/python:run_pytest.py"],
        main = "//tests/python:run_pytest.py",
        args = ["$(location {})".format(s) for s in srcs],
        deps = deps + ["//python:turnout"],
        python_version = "PY3",
        # An uninstrumented interpreter cannot load a sanitized extension.
        tags = ["python"] + kwargs.pop("tags", []),
        **kwargs
    )
