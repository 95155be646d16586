#!/usr/bin/env bash
# Garbage collection at scale: RELEASES releases of FILES small distinct files each, put with
# `verity put DIR --name=bench/release` (the name keeps 5), then `verity gc`: its time, what it
# freed, and on S3 the requests it made per stored blob; then a second gc with nothing to free.
# On the file store, and on a real single-node radosgw (tests/testing/ceph_cluster.sh). Writes OUT.
# Usage: tests/bench/gc_bench.sh [RELEASES=100] [FILES=1000] [OUT=docs/bench-gc.md]
set -euo pipefail
cd "$(dirname "$0")/../.."
releases=${1:-100}
files=${2:-1000}
out=${3:-docs/bench-gc.md}

source tests/bench/bench_lib.sh
bench_binaries //server:verityd //client/cli:verity
verityd=$bin/server/verityd
verity=$bin/client/cli/verity
source tests/testing/ceph_cluster.sh
work=$(mktemp -d)
server_pid=
trap '[[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null; ceph_stop "$work/ceph"; rm -rf "$work"' EXIT
CEPH_MEMSTORE_BYTES=$((4 << 30)) ceph_start "$work/ceph" >/dev/null

# serve FLAGS...: verityd on the store FLAGS name; sets srv, metrics.
serve() {
  "$verityd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --name_history=5 \
    --gc_grace=1s "$@" 2>"$work/verityd.log" &
  server_pid=$!
  for _ in $(seq 600); do grep -q "verityd: serving" "$work/verityd.log" && break; sleep 0.1; done
  srv=(--server="$(grep -o 'listening on 127.0.0.1:[0-9]*' "$work/verityd.log" | cut -d' ' -f3)")
  metrics=$(sed -nE 's|.*metrics on http://[^ ]*:([0-9]+)/metrics.*|\1|p' "$work/verityd.log")
}
s3_requests() {
  curl -sf "http://127.0.0.1:$metrics/metrics" |
    awk '/^verityd_s3_requests_total/ {s += $2} END {printf "%.0f", s}'
}
# release DIR: FILES distinct 512-byte files in folders of 100.
release() {
  python3 - "$1" "$files" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%03d" % (i // 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%04d" % i), "wb") as f:
        f.write(os.urandom(512))
PY
}
seconds() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b - a}'; }

rows=()
for store in file s3; do
  if [[ $store == file ]]; then
    serve --store_dir="$work/store"
  else
    serve --store="s3://$S3_BUCKET/gc-bench" --s3_endpoint="$S3_ENDPOINT"
  fi
  t0=$(date +%s.%N)
  for ((r = 0; r < releases; r++)); do
    rm -rf "$work/release"
    release "$work/release"
    "$verity" put "${srv[@]}" "$work/release" --name=bench/release >/dev/null
  done
  t1=$(date +%s.%N)
  # An S3 blob is timed when a collection first sees it: a dry run times them all.
  "$verity" gc "${srv[@]}" --dry-run >/dev/null
  sleep 2
  r0=$(s3_requests)
  t2=$(date +%s.%N)
  "$verity" gc "${srv[@]}" >"$work/gc"
  t3=$(date +%s.%N)
  r1=$(s3_requests)
  "$verity" gc "${srv[@]}" >"$work/gc2"
  t4=$(date +%s.%N)
  stored=$(sed -nE 's/.* of ([0-9]+) stored.*/\1/p' "$work/gc")
  per_blob="-"
  [[ $store == s3 ]] && per_blob=$(ratio $((r1 - r0)) "$stored")
  rows+=("| $store | $((releases * (files + 1))) | $(seconds "$t0" "$t1") | $(seconds "$t2" "$t3") | $(cat "$work/gc" | sed -E 's/;.*//') | $per_blob | $(seconds "$t3" "$t4") |")
  kill "$server_pid"
  wait "$server_pid" || true
  server_pid=
done

{
  echo "# Garbage collection at scale"
  echo
  echo "Command: \`tests/bench/gc_bench.sh $releases $files\` ($(machine); load average"
  echo "$(load_average)). $releases releases of $files distinct 512-byte files each (and each"
  echo "release's manifest), put with \`verity put DIR --name=bench/release\`; the name keeps 5"
  echo "(\`--name_history=5\`), so all but 5 releases are garbage. One \`verity gc\` (after a"
  echo "dry run that times every S3 blob, and a 1 s grace), then a second with nothing to free."
  echo
  echo "| store | blobs put | put, s | gc, s | what gc said | S3 requests per stored blob | second gc, s |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${rows[@]}"
} >"$out"
cat "$out"
