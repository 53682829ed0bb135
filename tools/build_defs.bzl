"""Targets every layer package declares the same way."""

# The root of turnout's tree as actions see it: "." in turnout's own
# workspace, "external/turnout" where turnout is a repository of another
# (deps.bzl). Commands that include headers by their tree paths (nvcc's -I)
# need it.
REPOSITORY_ROOT = Label("//:BUILD.bazel").workspace_root or "."

def layer_sources():
    """`sources`: the package's C++ and CUDA files, for //tests:layering_test.

    The test reads their include lines to keep the folders' order.
    """
    native.filegroup(
        name = "sources",
        srcs = native.glob(["**/*.h", "**/*.cc", "**/*.cu", "**/*.cuh"]),
        visibility = ["//tests:__pkg__"],
    )

def _cc_headers_impl(ctx):
    merged = cc_common.merge_cc_infos(cc_infos = [d[CcInfo] for d in ctx.attr.deps])
    return [CcInfo(compilation_context = merged.compilation_context)]

cc_headers = rule(
    implementation = _cc_headers_impl,
    doc = """The headers, include paths and defines of `deps`, without their
    objects: for code that gets those objects from a shared library instead
    (//runtime:turnout links libturnout.so), so that no process holds two
    copies of the registry.""",
    attrs = {"deps": attr.label_list(providers = [CcInfo])},
)

def _copy_into_folder(ctx, copies, mnemonic, message):
    """Declares the folder ctx.attr.out and one action that fills it:
    `copies` is a list of (File, path in the folder); a File that is itself
    a folder (a tree artifact) is copied whole."""
    out = ctx.actions.declare_directory(ctx.attr.out)
    lines = ["set -e"]
    for f, rel in copies:
        if f.is_directory:
            lines.append("mkdir -p {o}/{r} && cp -RL {s}/. {o}/{r}/".format(o = out.path, r = rel, s = f.path))
        else:
            lines.append("mkdir -p $(dirname {o}/{r}) && cp -L {s} {o}/{r}".format(o = out.path, r = rel, s = f.path))
    ctx.actions.run_shell(
        inputs = [f for f, _ in copies],
        outputs = [out],
        command = "\n".join(lines),
        mnemonic = mnemonic,
        progress_message = message + " " + out.short_path,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

def _headers_tree_impl(ctx):
    merged = cc_common.merge_cc_infos(cc_infos = [d[CcInfo] for d in ctx.attr.deps])

    # A header's short_path is its path in the tree, under "../NAME/" when
    # this workspace is the repository NAME of another one.
    repo_prefix = "../{}/".format(ctx.label.workspace_name) if ctx.label.workspace_name else ""
    headers = [
        h
        for h in merged.compilation_context.headers.to_list()
        if h.owner.workspace_name == ctx.label.workspace_name and
           h.short_path.startswith(repo_prefix)
    ]
    # Generated headers live under bazel-out; short_path is the path in the
    # tree either way.
    copies = [(h, h.short_path[len(repo_prefix):]) for h in headers]
    return _copy_into_folder(ctx, copies, "HeadersTree", "Collecting turnout's headers into")

headers_tree = rule(
    implementation = _headers_tree_impl,
    doc = """A folder `out` holding this workspace's headers among those of
    `deps`, at their paths in the tree (external repositories' headers are
    left out): what `#include "dispatcher/library.h"` finds once `out` is on
    the include path. The install prefix, the wheel and cpp_extension ship it.""",
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
        "out": attr.string(mandatory = True),
    },
)

def _opt_transition_impl(settings, attr):
    return {"//command_line_option:compilation_mode": "opt"}

_opt_transition = transition(
    implementation = _opt_transition_impl,
    inputs = [],
    outputs = ["//command_line_option:compilation_mode"],
)

def _optimized_impl(ctx):
    files = depset(transitive = [t[DefaultInfo].files for t in ctx.attr.srcs])
    runfiles = ctx.runfiles(transitive_files = files)
    for t in ctx.attr.srcs:
        runfiles = runfiles.merge(t[DefaultInfo].default_runfiles)
    return [DefaultInfo(files = files, runfiles = runfiles)]

optimized = rule(
    implementation = _optimized_impl,
    doc = """`srcs` built with -c opt (-O2 -DNDEBUG), whatever the command line
    says: what a user installs or runs is optimised even when they forget
    the flag.""",
    attrs = {
        "srcs": attr.label_list(cfg = _opt_transition, allow_files = True),
        "_allowlist_function_transition": attr.label(
            default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
        ),
    },
)

def _package_tree_impl(ctx):
    strip = ctx.label.package + "/" + ctx.attr.strip_prefix + "/"
    copies = []
    for t in ctx.attr.srcs:
        for f in t[DefaultInfo].files.to_list():
            if not f.short_path.startswith(strip):
                fail("%s is not under %s" % (f.short_path, strip))
            copies.append((f, f.short_path[len(strip):]))
    return _copy_into_folder(ctx, copies, "PackageTree", "Laying out")

package_tree = rule(
    implementation = _package_tree_impl,
    doc = """A folder `out` holding `srcs` (files and folders) at their paths
    below `strip_prefix` (relative to the package): an installed layout that
    installers and the wheel builder copy as it is.""",
    attrs = {
        "srcs": attr.label_list(allow_files = True),
        "strip_prefix": attr.string(mandatory = True),
        "out": attr.string(mandatory = True),
    },
)
