"""verity_fuzzer: one libFuzzer target, built two ways from the same source.

`NAME_fuzzer_test` is an ordinary cc_test of the normal build and of --config=asan and
--config=tsan: replay_main.cc feeds it every file of corpus/NAME/ and regressions/NAME/
(`single_threaded`: the code it feeds starts no thread, so CI's TSan run skips it; .ci/run).
`NAME_fuzzer` is the libFuzzer binary; it builds only under --config=asan (clang-14, every
object -fsanitize=fuzzer-no-link,address,undefined, this binary -fsanitize=fuzzer), which
tests/fuzz/run.sh uses.
"""

def verity_fuzzer(name, srcs, deps = [], size = "small", single_threaded = False, **kwargs):
    corpus = "corpus/" + name
    regressions = "regressions/" + name
    native.cc_test(
        name = name + "_fuzzer_test",
        size = size,
        srcs = srcs + ["replay_main.cc"],
        args = [
            "tests/fuzz/" + corpus,
            "tests/fuzz/" + regressions,
        ],
        data = native.glob([corpus + "/**", regressions + "/**"]),
        deps = deps,
        tags = ["single_threaded"] if single_threaded else [],
        **kwargs
    )
    native.cc_binary(
        name = name + "_fuzzer",
        testonly = True,
        srcs = srcs,
        linkopts = ["-fsanitize=fuzzer"],
        tags = ["manual"],
        target_compatible_with = select({
            "//tests/fuzz:fuzz_build": [],
            "//conditions:default": ["//tests/fuzz:needs_fuzz_build"],
        }),
        deps = deps,
        **kwargs
    )
