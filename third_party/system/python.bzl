"""Debian's Python headers (python3-dev) as @python_headers//:python_headers.

The version is Debian's /usr/bin/python3's, so the extension module builds
for the interpreter that Debian's Python packages import under. Fails with
the `apt-get install` line when the headers are missing.
"""

def _python_headers_impl(rctx):
    python = rctx.attr.interpreter
    result = rctx.execute([python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"])
    if result.return_code != 0:
        fail("python_headers: {} failed: {}. Install it with: apt-get install -y python3".format(python, result.stderr))
    include = result.stdout.strip()
    if not rctx.path(include + "/Python.h").exists:
        fail("python_headers: {}/Python.h is missing. Install it with: apt-get install -y python3-dev".format(include))
    rctx.symlink(include, "include")
    rctx.file("WORKSPACE", "workspace(name = \"{}\")\n".format(rctx.attr.name))
    rctx.file("BUILD.bazel", """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "python_headers",
    hdrs = glob(["include/**/*.h"]),
    includes = ["include"],
)
""")

python_headers = repository_rule(
    implementation = _python_headers_impl,
    attrs = {"interpreter": attr.string(default = "/usr/bin/python3")},
    local = True,
)
