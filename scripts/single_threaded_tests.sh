#!/usr/bin/env bash
# Which C++ tests start no thread, and whether the "single_threaded" tag says so: runs every
# cc_test (but e2e ones) of --config=asan under strace, counting clone() calls that make a thread,
# and lists each test whose tag disagrees with what it did. CI's TSan run skips the tagged tests
# (.ci/run), since a test with one thread has no race to find; run this after adding tests or
# threads, and tag or untag what it lists. Exit 1 if anything disagrees.
# Usage: scripts/single_threaded_tests.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v strace >/dev/null || { echo "single_threaded_tests.sh: strace is missing" >&2; exit 1; }
mapfile -t tests < <(bazel query 'kind(cc_test, //...) except attr(tags, "e2e", //...)' 2>/dev/null)
mapfile -t tagged < <(bazel query 'attr(tags, "single_threaded", //...)' 2>/dev/null)
bazel build --config=asan "${tests[@]}" >/dev/null 2>&1
bin=$(bazel info --config=asan bazel-bin 2>/dev/null)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
wrong=0
for test in "${tests[@]}"; do
  path=${test#//}
  binary=$bin/${path/://}
  # As `bazel test` runs it: from its runfiles, with its arguments (the fuzz replays' corpora).
  args=$(bazel query --output=build "$test" 2>/dev/null | sed -n 's/^ *args = \[\(.*\)\],$/\1/p' |
    tr -d '",')
  (cd "$binary.runfiles/verityd" && TEST_TMPDIR=$work timeout 600 strace -f -qq \
    -e trace=clone,clone3 -o "$work/trace" "$binary" $args >/dev/null 2>&1) || true
  threads=$(grep -c CLONE_THREAD "$work/trace" || true)
  is_tagged=no
  for t in "${tagged[@]}"; do [[ $t == "$test" ]] && is_tagged=yes; done
  if [[ $threads -eq 0 && $is_tagged == no ]]; then
    echo "untagged, starts no thread: $test"; wrong=1
  elif [[ $threads -gt 0 && $is_tagged == yes ]]; then
    echo "tagged single_threaded, starts $threads threads: $test"; wrong=1
  fi
done
[[ $wrong -eq 0 ]] && echo "single_threaded_tests.sh: the tags agree with what the tests do"
exit "$wrong"
