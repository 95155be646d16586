#!/usr/bin/env bash
# Trees on verityd's S3 store against rclone, side by side on one radosgw (a real single-node
# Ceph on this machine, tests/testing/ceph_cluster.sh), 10,000 files of 16 KiB in 100 folders:
# - `verity put DIR --name=...` into a new prefix (a new verityd each round) against
#   `rclone copy DIR ceph:BUCKET/PREFIX` of the same folder to the same bucket;
# - `verity get NAME -o DIR` through a replica that never read the tree (every block verified
#   against the tree's digest) against `rclone copy ceph:BUCKET/PREFIX DIR` (which checks each
#   object's MD5 against its ETag), `sync` before each;
# ROUNDS alternating rounds (which tool goes first alternates too), median and worst; and the S3
# requests verityd made per file, from its verityd_s3_requests_total by operation (a PUT, GET,
# HEAD, LIST, DELETE or POST each). Writes OUT.
# Usage: tests/bench/s3_tree_bench.sh [ROUNDS=3] [OUT=docs/bench-s3-trees.md]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
out=${2:-docs/bench-s3-trees.md}
source tests/bench/bench_lib.sh
source tests/testing/ceph_cluster.sh
load_at_start=$(load_average)
files=10000

command -v rclone >/dev/null || apt-get install -y -q rclone >/dev/null  # the baseline
bench_binaries //server:verityd //client/cli:verity
verityd=$bin/server/verityd verity=$bin/client/cli/verity
work=$(mktemp -d /var/tmp/s3-tree-bench.XXXXXX)
server_pid=""
trap '[[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null; ceph_stop "$work/ceph"; rm -rf "$work"' EXIT
# The OSD keeps every object in RAM: each round stores the tree twice (verity, rclone), 160 MiB
# of files in 10,000 objects each; radosgw times out writes (408) well before the store is full.
CEPH_MEMSTORE_BYTES=$(((500 * (2 * rounds + 2)) << 20)) ceph_start "$work/ceph" >/dev/null
export RCLONE_CONFIG_CEPH_TYPE=s3 RCLONE_CONFIG_CEPH_PROVIDER=Ceph
export RCLONE_CONFIG_CEPH_ENDPOINT=$S3_ENDPOINT RCLONE_CONFIG_CEPH_REGION=$AWS_REGION
export RCLONE_CONFIG_CEPH_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID
export RCLONE_CONFIG_CEPH_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY
# rclone's AWS SDK refuses a CA bundle from the environment for its own HTTP transport; the
# endpoint is plain HTTP on loopback.
rclone() { env -u AWS_CA_BUNDLE rclone "$@"; }

start_server() {  # PREFIX: a replica over s3://BUCKET/PREFIX; sets server_pid, addr, mport
  "$verityd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 \
    --store="s3://$S3_BUCKET/$1" --s3_endpoint="$S3_ENDPOINT" 2>"$work/log" &
  server_pid=$!
  for _ in $(seq 200); do grep -q "verityd: serving" "$work/log" 2>/dev/null && break; sleep 0.05; done
  addr=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$work/log" | cut -d' ' -f3)
  mport=$(sed -nE 's|.*metrics on http://[^ ]*:([0-9]+)/metrics.*|\1|p' "$work/log" | head -n 1)
}
stop_server() { kill "$server_pid"; wait "$server_pid" || true; server_pid=; }
# requests: "PUT n GET n ..." the replica has made so far, by the HTTP method of each operation.
requests() {
  curl -sf "http://127.0.0.1:$mport/metrics" | awk '
    /^verityd_s3_requests_total\{/ {
      match($1, /op="?[A-Za-z]+/); op = substr($1, RSTART + 3, RLENGTH - 3); gsub(/"/, "", op)
      m = op ~ /^(Put|Swap|Amend|UploadPart)/ ? "PUT" : op ~ /^(Get|ReadBack)/ ? "GET" : \
        op ~ /^Head/ ? "HEAD" : op ~ /^List/ ? "LIST" : op ~ /^(Delete|Abort)/ ? "DELETE" : "POST"
      n[m] += $2 }
    END { for (m in n) printf "%s %d\n", m, n[m] }'
}
timed() {  # NAME COMMAND...: runs COMMAND after a sync, its output dropped; appends its seconds
  local name=$1
  shift
  sync
  seconds_of "$@" >>"$work/$name"
  echo >>"$work/$name"
}

small=$work/src
for d in $(seq -w 0 99); do
  mkdir -p "$small/d$d"
  for f in $(seq -w 0 99); do head -c 16384 /dev/urandom >"$small/d$d/f$f"; done
done
sync

verity_put() {
  start_server "verity-$1"
  timed verity_put "$verity" put --server="$addr" "$small" --name=bench/small
  requests >"$work/put-requests-$1"
  stop_server
}
verity_get() {
  rm -rf "$work/out"
  start_server "verity-$1"  # a replica that never read the tree
  timed verity_get "$verity" get --server="$addr" bench/small -o "$work/out"
  requests >"$work/get-requests-$1"
  stop_server
  diff -r "$small" "$work/out" >/dev/null || { echo "verity get: wrong tree" >&2; exit 1; }
}
rclone_put() { timed rclone_put rclone copy "$small" "ceph:$S3_BUCKET/rclone-$1"; }
rclone_get() {
  rm -rf "$work/out"
  timed rclone_get rclone copy "ceph:$S3_BUCKET/rclone-$1" "$work/out"
  diff -r "$small" "$work/out" >/dev/null || { echo "rclone: wrong tree" >&2; exit 1; }
}
for round in $(seq "$rounds"); do
  if ((round % 2)); then
    verity_put "$round"; rclone_put "$round"; verity_get "$round"; rclone_get "$round"
  else
    rclone_put "$round"; verity_put "$round"; rclone_get "$round"; verity_get "$round"
  fi
done

seconds() { tr -s '\n' ' ' <"$work/$1" | sed 's/ $//'; }
# per_file FILE METHOD: the requests of METHOD per file, from a requests file.
per_file() { awk -v m="$2" -v f="$files" '$1 == m {n = $2} END {printf "%.2f", n / f}' "$1"; }
request_row() {  # WHAT FILE: a row of requests per file
  echo "| $1 | $(per_file "$2" PUT) | $(per_file "$2" GET) | $(per_file "$2" HEAD) |" \
    "$(per_file "$2" LIST) | $(per_file "$2" DELETE) | $(per_file "$2" POST) |"
}
time_row() {  # WHAT VERITY RCLONE
  local v r
  v=$(seconds "$2") r=$(seconds "$3")
  echo "| $1 | $(median <<<"$v") s, $(maximum <<<"$v") s | $(median <<<"$r") s," \
    "$(maximum <<<"$r") s | $(ratios "$r" "$v" | median)x, $(ratios "$r" "$v" | minimum)x |"
}
{
  echo "# Trees on the S3 store: verity put DIR and get -o DIR against rclone copy"
  echo
  echo "Command: \`tests/bench/s3_tree_bench.sh $rounds\` ($(machine); load average" \
    "$load_at_start at the start and $(load_average) at the end): 10,000 random files of 16 KiB" \
    "in 100 folders, a single-node Ceph (memstore OSD, radosgw) on the same machine over" \
    "loopback, $rounds alternating rounds, \`sync\` before each timed command."
  shared_note $load_at_start $(load_average)
  echo
  echo "| | verity (median, worst) | rclone copy (median, worst) | rclone / verity (median, worst) |"
  echo "| --- | --- | --- | --- |"
  time_row "put: the folder into a new prefix" verity_put rclone_put
  time_row "get: the prefix into a new folder" verity_get rclone_get
  echo
  echo "A ratio above 1 means verity was faster. Seconds of every round, in order: verity put" \
    "$(seconds verity_put); rclone put $(seconds rclone_put); verity get $(seconds verity_get);" \
    "rclone get $(seconds rclone_get)."
  echo
  echo "S3 requests verityd made per file of the tree, the last round (each replica's" \
    "\`verityd_s3_requests_total\`, by the HTTP method of its operation):"
  echo
  echo "| | PUT | GET | HEAD | LIST | DELETE | POST |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  request_row "\`verity put DIR\` into an empty prefix" "$work/put-requests-$rounds"
  request_row "\`verity get NAME -o DIR\`, a replica that never read it" \
    "$work/get-requests-$rounds"
} >"$out"
cat "$out"
