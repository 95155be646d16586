#!/usr/bin/env bash
# Garbage collection at scale: RELEASES releases of FILES small distinct files each, put with
# `verity put DIR --name=bench/release` (the name keeps 5), then `verity gc`: its time, what it
# freed, and on S3 the requests it made per stored blob; dry runs before it and collections with
# nothing to free after it, in rounds.
# On the file store, and on a real single-node radosgw (tests/testing/ceph_cluster.sh). Writes OUT.
# Usage: tests/bench/gc_bench.sh [RELEASES=100] [FILES=1000] [ROUNDS=3] [OUT=docs/bench-gc.md]
# (GC_BENCH_STORES="s3 file": the stores, in that order.)
set -euo pipefail
cd "$(dirname "$0")/../.."
releases=${1:-100}
files=${2:-1000}
rounds=${3:-3}
out=${4:-docs/bench-gc.md}

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

rows=() said=()
for store in ${GC_BENCH_STORES:-s3 file}; do
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
  # timed OUT [FLAGS...]: one `verity gc`; prints its seconds and S3 requests.
  timed() {
    local out=$1 a b r
    shift
    r=$(s3_requests)
    a=$(date +%s.%N)
    "$verity" gc "${srv[@]}" "$@" >"$out"
    b=$(date +%s.%N)
    echo "$(seconds "$a" "$b") $(($(s3_requests) - r))"
  }
  dry=() gc2=()
  for ((i = 0; i < rounds; i++)); do
    read -r secs requests < <(timed "$work/dry" --dry-run)
    dry+=("$secs")
  done
  dry_requests=$requests
  read -r gc_secs gc_requests < <(timed "$work/gc")
  for ((i = 0; i < rounds; i++)); do
    read -r secs requests < <(timed "$work/gc2")
    gc2+=("$secs")
  done
  stored=$(sed -nE 's/.* of ([0-9]+) stored.*/\1/p' "$work/gc")
  freed=$(sed -nE 's/^freed ([0-9]+) blobs.*/\1/p' "$work/gc")
  per() { if [[ $store == s3 ]]; then ratio "$1" "$2"; else echo "-"; fi; }
  rows+=("| $store | $((releases * (files + 1))) | $(seconds "$t0" "$t1") | $(echo "${dry[@]}" | median) / $(echo "${dry[@]}" | maximum) | $(per "$dry_requests" "$stored") | $gc_secs | $(per "$gc_requests" "$stored") | $(per "$gc_requests" "$freed") | $(echo "${gc2[@]}" | median) / $(echo "${gc2[@]}" | maximum) | $(per "$requests" "$((stored - freed))") |")
  said+=("- $store: $(sed -E 's/; took.*//' "$work/gc")")
  kill "$server_pid"
  wait "$server_pid" || true
  server_pid=
done

{
  echo "# Garbage collection at scale"
  echo
  echo "Command: \`tests/bench/gc_bench.sh $releases $files $rounds\` ($(machine); load average"
  echo "$(load_average)). $releases releases of $files distinct 512-byte files each (and each"
  echo "release's manifest), put with \`verity put DIR --name=bench/release\`; the name keeps 5"
  echo "(\`--name_history=5\`), so all but 5 releases are garbage. After a dry run that times"
  echo "every S3 blob and a 2 s wait (the grace is 1 s): $rounds dry runs (median / worst), one"
  echo "\`verity gc\`, then $rounds more with nothing left to free (median / worst)."
  echo
  echo "| store | blobs put | put, s | dry run, s | S3 requests per stored blob | gc, s | S3 requests per stored blob | per freed blob | gc with nothing to free, s | S3 requests per stored blob |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${rows[@]}"
  echo
  echo "What gc said:"
  echo
  printf '%s\n' "${said[@]}"
} >"$out"
cat "$out"
