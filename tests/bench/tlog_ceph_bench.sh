#!/usr/bin/env bash
# The transparency log's appends on a real radosgw (a single-node Ceph on this machine,
# tests/testing/ceph_cluster.sh): statements sequenced per second by the log alone over an S3
# store, and SetName end to end through a verityd on it (tests/bench/tlog_bench.cc, section
# "ceph"). Prints the figures; never fails on a goal.
# Usage: tests/bench/tlog_ceph_bench.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/bench_lib.sh
source tests/testing/ceph_cluster.sh
bench_binaries //tests/bench:tlog_bench
work=$(mktemp -d)
trap 'ceph_stop "$work/ceph"; rm -rf "$work"' EXIT
ceph_start "$work/ceph" >/dev/null
echo "load average at start: $(load_average)"
"$bin/tests/bench/tlog_bench" "$work" ceph
