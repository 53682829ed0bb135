"""Wraps a library installed by a Debian package as an external repository.

The repository symlinks the package's header folders (or single header
files) from /usr/include (or `include_root`) and
declares one cc_library, `@NAME//:NAME`, with the package's link flags. When
the headers are missing it fails with the `apt-get install` line that fixes
it, so that nothing is ever downloaded.
"""

def _multiarch(rctx):
    # The Debian multiarch triplet ("x86_64-linux-gnu"), for packages that
    # keep their headers under /usr/include/<triplet>/.
    result = rctx.execute(["gcc", "-print-multiarch"])
    if result.return_code != 0 or not result.stdout.strip():
        fail("system library '{}': `gcc -print-multiarch` failed: {}".format(
            rctx.attr.name,
            result.stderr,
        ))
    return result.stdout.strip()

def _system_library_impl(rctx):
    include_root = rctx.attr.include_root
    if "{multiarch}" in include_root:
        include_root = include_root.replace("{multiarch}", _multiarch(rctx))
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
        # May contain "{multiarch}", replaced by the Debian triplet.
        "include_root": attr.string(default = "/usr/include"),
        "linkopts": attr.string_list(),
        "pkg_config": attr.string_list(),
    },
    local = True,
)
