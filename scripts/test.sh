#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: set-up, build, then every test under
# AddressSanitizer and UndefinedBehaviorSanitizer (`bazel test --config=asan //...`, .bazelrc).
# Arguments go to `bazel test`. Ends with a one-line summary and leaves no Bazel server running.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

log=$(mktemp)
trap 'bazel shutdown >/dev/null 2>&1 || true; rm -f "$log"' EXIT
set +e
bazel test --config=asan //... "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
passed=$(grep -cE '^//\S+ .*PASSED' "$log" || true)
failed=$(grep -cE '^//\S+ .*(FAILED|TIMEOUT|NO STATUS|INCOMPLETE|FLAKY)' "$log" || true)
echo "tests: $passed passed, $failed failed"
exit "$rc"
