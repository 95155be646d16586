#!/usr/bin/env bash
# The product's main job from a fresh Debian 12 machine: set-up, build, run.
# Until the server lands this computes fs-verity digests with `verity digest`: of the files
# given as arguments, or of a generated sample. Extra arguments go to `verity digest`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bazel build //client:verity
verity=bazel-bin/client/verity
if [[ $# -gt 0 ]]; then
  exec "$verity" digest "$@"
fi
sample=$(mktemp -d)
trap 'rm -rf "$sample"' EXIT
head -c $((8 << 20)) /dev/urandom >"$sample/random-8MiB.bin"
cp README.md "$sample/README.md"
"$verity" digest "$sample/README.md" "$sample/random-8MiB.bin"
