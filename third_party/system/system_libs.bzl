"""Wraps a library installed by a Debian package as an external repository.

The repository symlinks the package's header folders from /usr/include and
declares one cc_library, `@NAME//:NAME`, with the package's link flags. When
the headers are missing it fails with the `apt-get install` line that fixes
it, so that nothing is ever downloaded.
"""

def _system_library_impl(rctx):
    include_root = rctx.attr.include_root
    for folder in rctx.attr.headers:
        src = rctx.path(include_root + "/" + folder)
        if not src.exists:
            fail(("system library '{name}': {src} is missing. " +
                  "Install it with: apt-get install -y {pkg}").format(
                name = rctx.attr.name,
                src = src,
                pkg = rctx.attr.apt_package,
            ))
        rctx.symlink(src, "include/" + folder)

    linkopts = list(rctx.attr.linkopts)
    if rctx.attr.pkg_config:
        result = rctx.execute(["pkg-config", "--libs"] + rctx.attr.pkg_config)
        if result.return_code != 0:
            fail(("system library '{name}': pkg-config failed: {err}" +
                  "Install it with: apt-get install -y pkg-config {pkg}").format(
                name = rctx.attr.name,
                err = result.stderr,
                pkg = rctx.attr.apt_package,
            ))
        linkopts += result.stdout.strip().split(" ")

    rctx.file("WORKSPACE", "workspace(name = \"{}\")\n".format(rctx.attr.name))
    rctx.file("BUILD.bazel", """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "{name}",
    hdrs = glob(["include/**"]),
    includes = ["include"],
    linkopts = {linkopts},
)
""".format(name = rctx.attr.name, linkopts = repr(linkopts)))

system_library = repository_rule(
    implementation = _system_library_impl,
    attrs = {
        "apt_package": attr.string(mandatory = True),
        "headers": attr.string_list(mandatory = True),
        "include_root": attr.string(default = "/usr/include"),
        "linkopts": attr.string_list(),
        "pkg_config": attr.string_list(),
    },
    local = True,
)
