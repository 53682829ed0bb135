"""turnout_fuzz_target: a libFuzzer target and its corpus replay test."""

def turnout_fuzz_target(name, srcs, deps = [], corpus = None, size = "small", **kwargs):
    """Declares, for the harness `srcs` (defining LLVMFuzzerTestOneInput):

    - `<name>_fuzzer`: the fuzzer. Under --config=fuzz (clang-14, ASan +
      UBSan, tools/fuzz.sh) a libFuzzer binary; otherwise a plain driver that
      runs the files and folders given as arguments once. Tagged manual:
      `bazel build //...` leaves it alone.
    - `<name>_corpus_test`: a GoogleTest that runs every input of
      corpus/<corpus or name> through the harness, in the ordinary suite.
    """
    corpus = corpus or name
    native.cc_library(
        name = name + "_harness",
        testonly = 1,
        srcs = srcs,
        deps = deps + ["//tests/fuzz:fuzz_support"],
        alwayslink = 1,
    )
    native.cc_binary(
        name = name + "_fuzzer",
        testonly = 1,
        deps = [":" + name + "_harness"] + select({
            "//tests/fuzz:fuzzing": [],
            "//conditions:default": ["//tests/fuzz:replay_main"],
        }),
        linkopts = select({
            "//tests/fuzz:fuzzing": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        tags = ["manual", "fuzz"],
    )
    native.cc_test(
        name = name + "_corpus_test",
        size = size,
        srcs = [],
        deps = [
            ":" + name + "_harness",
            "//tests/fuzz:replay_test",
        ],
        args = ["tests/fuzz/corpus/" + corpus],
        data = native.glob(["corpus/%s/**" % corpus]),
        **kwargs
    )
