#!/usr/bin/env bash
# verityd's S3 store against the downloads and uploads a user would script instead, side by side
# on one radosgw (a real single-node Ceph on this machine, tests/testing/ceph_cluster.sh), one
# random blob: a verified fetch through verityd (cold: the replica's first read; warm: its disk
# cache, and its memory cache) vs `curl --aws-sigv4 | openssl dgst -sha256` and `s3cmd get` +
# `sha256sum`; a Put through verityd vs `s3cmd put`; the server's memory under 200 slow readers.
# Every figure is a whole command's wall time, the median of ROUNDS. Writes OUT.
# Usage: tests/bench/s3_bench.sh [SIZE_MIB=512] [ROUNDS=3] [OUT=docs/bench-s3.md]
set -euo pipefail
cd "$(dirname "$0")/../.."
size_mib=${1:-512}
rounds=${2:-3}
out=${3:-docs/bench-s3.md}

command -v s3cmd >/dev/null || apt-get install -y -q s3cmd >/dev/null  # a baseline
bazel build //server:verityd //client/cli:verity //tests/bench:fetch_bench >/dev/null 2>&1
verityd=$PWD/bazel-bin/server/verityd
verity=$PWD/bazel-bin/client/cli/verity
bench=$PWD/bazel-bin/tests/bench/fetch_bench
source tests/bench/bench_lib.sh
source tests/testing/ceph_cluster.sh
work=$(mktemp -d)
server_pid=
trap '[[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null; ceph_stop "$work/ceph"; rm -rf "$work"' EXIT
# The OSD keeps everything in RAM, and radosgw frees deleted objects only hours later: room for
# every copy the rounds store (2 + 2 per round), with headroom.
CEPH_MEMSTORE_BYTES=$(((size_mib * (2 + 2 * rounds) * 3 / 2) << 20)) ceph_start "$work/ceph" >/dev/null

cat >"$work/s3cfg" <<EOF
[default]
access_key = $AWS_ACCESS_KEY_ID
secret_key = $AWS_SECRET_ACCESS_KEY
host_base = ${S3_ENDPOINT#http://}
host_bucket = ${S3_ENDPOINT#http://}
use_https = False
signature_v2 = False
bucket_location = $AWS_REGION
EOF
s3cmd=(s3cmd -q -c "$work/s3cfg")

start_server() {  # PREFIX FLAGS...: a replica over s3://BUCKET/PREFIX; sets server_pid, addr
  local prefix=$1
  shift
  "$verityd" --listen=127.0.0.1:0 --metrics_listen= --store="s3://$S3_BUCKET/$prefix" \
    --s3_endpoint="$S3_ENDPOINT" "$@" 2>"$work/log" &
  server_pid=$!
  for _ in $(seq 200); do grep -q "verityd: serving" "$work/log" 2>/dev/null && break; sleep 0.05; done
  addr=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$work/log" | cut -d' ' -f3)
}
stop_server() { kill "$server_pid"; wait "$server_pid" || true; server_pid=; }
timed() {  # NAME COMMAND...: runs COMMAND, its output dropped; appends its wall time to $work/NAME
  local name=$1 start
  shift
  start=$(date +%s.%N)
  "$@" >/dev/null
  echo "$(date +%s.%N) - $start" | bc >>"$work/$name"
}
# The pipelines. verity checks every block against the digest itself; the baselines check the
# SHA-256 of what they received, as a user of each would.
verified_get() { "$verity" get --server="$addr" "$digest"; }
curl_get() {
  curl -sf --aws-sigv4 "aws:amz:$AWS_REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$S3_ENDPOINT/$S3_BUCKET/plain/blob" |
    openssl dgst -sha256 | grep -q "$want_sha"
}
s3cmd_get() {
  "${s3cmd[@]}" get --force "s3://$S3_BUCKET/plain/blob" "$work/got"
  sha256sum "$work/got" | grep -q "$want_sha"
  rm -f "$work/got"
}

head -c $((size_mib << 20)) /dev/urandom >"$work/blob"
want_sha=$(sha256sum "$work/blob" | cut -d' ' -f1)
"${s3cmd[@]}" put "$work/blob" "s3://$S3_BUCKET/plain/blob"
start_server main
digest=$("$verity" put --server="$addr" "$work/blob" | cut -d' ' -f1)
# Once, untimed: what verityd serves is the blob.
"$verity" get --server="$addr" "$digest" | sha256sum | grep -q "$want_sha"
stop_server

for round in $(seq "$rounds"); do
  # Cold, then warm from the disk cache (memory holds 64 MiB of it).
  start_server main --cache_dir="$work/cache"
  timed cold verified_get
  sleep 1  # the disk cache's writer catches up
  timed warm_disk verified_get
  stop_server
  # Cold, then warm from a memory cache that holds it all.
  start_server main --memory_cache_bytes=$(((size_mib + 64) << 20))
  timed cold_mem verified_get
  timed warm_mem verified_get
  stop_server
  timed curl curl_get
  timed s3cmd_get s3cmd_get
  # Puts of the same bytes to fresh keys: nothing is already there.
  start_server "put$round"
  timed verity_put "$verity" put --server="$addr" "$work/blob"
  stop_server
  timed s3cmd_put "${s3cmd[@]}" put "$work/blob" "s3://$S3_BUCKET/plain/put$round"
done

# 200 readers taking one message every 100 ms, for 10 s, from a cold replica: peak server RSS.
start_server main
"$bench" --server="$addr" --digest="$digest" --mode=slow_readers --readers=200 --seconds=10 >/dev/null &
readers=$!
peak=$(peak_rss_kib "$server_pid" "$readers")
wait "$readers" || true
hwm=$(hwm_mib "$server_pid")
stop_server

m() { median <"$work/$1"; }
timed sha256sum sha256sum "$work/blob"
rate() { printf '%.1f' "$(echo "$size_mib * 1.048576 / $1" | bc -l)"; }
ratio() { printf '%.2f' "$(echo "$2 / $1" | bc -l)"; }  # how many times faster A is than B
secs() { printf '%.2f' "$1"; }
curl_s=$(m curl)
s3cmd_s=$(m s3cmd_get)
row() {  # NAME SECONDS
  echo "| $1 | $(secs "$2") | $(rate "$2") | $(ratio "$2" "$curl_s") | $(ratio "$2" "$s3cmd_s") |"
}
cat >"$out" <<EOF
# verityd's S3 store on radosgw

Command: \`tests/bench/s3_bench.sh $size_mib $rounds\` on $(date -u +%F), $(nproc) CPUs
($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), one ${size_mib} MiB
random blob (SHA-256, 4 KiB blocks), a single-node Ceph 16 (memstore OSD, radosgw) on the same
machine over loopback; medians of $rounds rounds, wall time of the whole command;
MB/s = 10^6 bytes/s.

| download | s | MB/s | × curl | × s3cmd |
| --- | --- | --- | --- | --- |
$(row "verityd verified fetch, cold (first read, slab cache empty)" "$(m cold)")
$(row "verityd verified fetch, cold (memory cache sized for the blob)" "$(m cold_mem)")
$(row "verityd verified fetch, warm from the disk cache (\`--cache_dir\`)" "$(m warm_disk)")
$(row "verityd verified fetch, warm from the memory cache" "$(m warm_mem)")
$(row "\`curl --aws-sigv4 \| openssl dgst -sha256\`" "$curl_s")
$(row "\`s3cmd get\` + \`sha256sum\`" "$s3cmd_s")

The verified fetch is \`verity get --server=ADDR DIGEST >/dev/null\`: verityd verifies every
block it reads from the bucket or its cache, and the client verifies every block again against
the digest. The baselines hash what they received: \`openssl dgst\` with SHA-NI, Debian's
\`sha256sum\` (coreutils 9.1) without it, at $(rate "$(m sha256sum)") MB/s on its own here.

| upload | s | MB/s | × s3cmd put |
| --- | --- | --- | --- |
| \`verity put\` through verityd (tree built on both sides, multipart parts of 8 MiB) | $(secs "$(m verity_put)") | $(rate "$(m verity_put)") | $(ratio "$(m verity_put)" "$(m s3cmd_put)") |
| \`s3cmd put\` | $(secs "$(m s3cmd_put)") | $(rate "$(m s3cmd_put)") | 1.00 |

Server memory with 200 concurrent readers of the blob on a cold replica, each taking one
message every 100 ms for 10 s: peak RSS sampled every 0.2 s ${peak} KiB ($((peak / 1024)) MiB),
VmHWM ${hwm} MiB.
EOF
cat "$out"
