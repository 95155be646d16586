#!/usr/bin/env bash
# Builds every binary the benchmarks run and copies them to DIR, for BENCH_BIN=DIR later (see
# bench_binaries in bench_lib.sh): measure a change against the binaries of its parent.
# Usage: tests/bench/keep_binaries.sh DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:?usage: keep_binaries.sh DIR}
binaries=(server/verityd client/cli/verity tests/bench/fetch_bench tests/bench/dispatch_load
  tests/bench/echo_server tests/bench/hash_bench)
bazel build //server:verityd //client/cli:verity //tests/bench:fetch_bench \
  //tests/bench:dispatch_load //tests/bench:echo_server //tests/bench:hash_bench
mkdir -p "$dir"
(cd bazel-bin && cp --parents "${binaries[@]}" "$dir")
echo "kept ${#binaries[@]} binaries in $dir"
