#!/usr/bin/env bash
# Verified fetch vs unverified stream vs nginx, in one run on one blob over loopback, and the
# server's memory under 200 slow readers. Writes docs/bench-fetch.md.
# Usage: tests/bench/fetch_bench.sh [SIZE_MIB=1024] [ROUNDS=3] [OUT=docs/bench-fetch.md]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/bench_lib.sh
size_mib=${1:-1024}
rounds=${2:-3}
out=${3:-docs/bench-fetch.md}

command -v nginx >/dev/null || apt-get install -y -q nginx-light >/dev/null  # the baseline
command -v fsverity >/dev/null || apt-get install -y -q fsverity >/dev/null  # Put's floor
bench_binaries //server:verityd //client/cli:verity //tests/bench:fetch_bench
verityd=$bin/server/verityd
verity=$bin/client/cli/verity
bench=$bin/tests/bench/fetch_bench
work=$(mktemp -d)
server_pid=
trap '[[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT

start_server() {  # FLAGS...: sets server_pid and addr
  "$verityd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --store_dir="$work/store" "$@" 2>"$work/log" &
  server_pid=$!
  for _ in $(seq 200); do grep -q "serving" "$work/log" 2>/dev/null && break; sleep 0.05; done
  addr=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$work/log" | cut -d' ' -f3)
}
stop_server() { kill "$server_pid"; wait "$server_pid" || true; server_pid=; }
rates() { grep -o '[0-9.]* MB/s' | cut -d' ' -f1 | median; }

chmod 755 "$work"  # nginx's workers run unprivileged
head -c $((size_mib << 20)) /dev/urandom >"$work/blob"
want_sha=$(sha256sum "$work/blob" | cut -d' ' -f1)
# mb_per_s SECONDS: the blob's size over SECONDS, in MB/s.
mb_per_s() { awk -v s="$1" -v m="$size_mib" 'BEGIN {printf "%.1f", m * 1048576 / s / 1e6}'; }

# Put builds the tree as the data arrives: its floor is fsverity digest of the same file.
start_server
put_seconds=$(seconds_of "$verity" put --server="$addr" "$work/blob")
digest=$("$verity" digest "$work/blob" | cut -d' ' -f1)
fsverity_seconds=$(seconds_of fsverity digest "$work/blob")

# The default server (verifies every read), round by round against the nginx pipeline, so that
# machine noise hits both alike.
sdk1_rates=() get_rates=() nginx_rates=()
for ((r = 0; r < rounds; r++)); do
  sdk1_rates+=("$("$bench" --server="$addr" --digest="$digest" --mode=sdk --streams=1 --rounds=1 | rates)")
  get_rates+=("$(mb_per_s "$(seconds_of "$verity" get --server="$addr" "$digest")")")
  read -r seconds sha < <(bash tests/bench/nginx_pipeline.sh "$work/blob")
  [[ $sha == "$want_sha" ]] || { echo "nginx pipeline returned the wrong content" >&2; exit 1; }
  nginx_rates+=("$(mb_per_s "$seconds")")
done
sdk1=$(printf '%s\n' "${sdk1_rates[@]}" | median)
get=$(printf '%s\n' "${get_rates[@]}" | median)
nginx=$(printf '%s\n' "${nginx_rates[@]}" | median)
sdk2=$("$bench" --server="$addr" --digest="$digest" --mode=sdk --streams=2 --rounds="$rounds" | rates)
stop_server

# The server remembers verified blocks (dm-verity's check_at_most_once): after one warm-up
# fetch only the client hashes.
start_server --verify_once
once1=$("$bench" --server="$addr" --digest="$digest" --mode=sdk --streams=1 --rounds=$((rounds + 1)) | tail -n +2 | rates)
once2=$("$bench" --server="$addr" --digest="$digest" --mode=sdk --streams=2 --rounds="$rounds" | rates)
stop_server

start_server --verify_on_read=false
raw=$("$bench" --server="$addr" --digest="$digest" --mode=raw --rounds="$rounds" | rates)
stop_server

# 200 readers taking one message every 100 ms, for 10 s: peak server RSS.
start_server
"$bench" --server="$addr" --digest="$digest" --mode=slow_readers --readers=200 --seconds=10 >/dev/null &
readers=$!
peak=$(peak_rss_kib "$server_pid" "$readers")
wait "$readers" || true
hwm=$(hwm_mib "$server_pid")
stop_server

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
report=$(cat <<REPORT
# Verified fetch throughput and server memory

Command: \`tests/bench/fetch_bench.sh $size_mib $rounds\` on $(date -u +%Y-%m-%d), $(nproc) CPUs
($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), one ${size_mib} MiB random blob
(SHA-256, 4 KiB blocks) over loopback; medians of $rounds rounds; MB/s = 10^6 bytes/s.

| pipeline | MB/s | vs nginx | vs unverified |
| --- | --- | --- | --- |
| SDK verified fetch, 1 stream (server verifies too) | $sdk1 | $(ratio "$sdk1" "$nginx") | $(ratio "$sdk1" "$raw") |
| \`verity get DIGEST > /dev/null\` (server verifies too) | $get | $(ratio "$get" "$nginx") | $(ratio "$get" "$raw") |
| SDK verified fetch, 2 parallel streams | $sdk2 | $(ratio "$sdk2" "$nginx") | $(ratio "$sdk2" "$raw") |
| SDK verified fetch, 1 stream, server --verify_once (warm) | $once1 | $(ratio "$once1" "$nginx") | $(ratio "$once1" "$raw") |
| SDK verified fetch, 2 streams, server --verify_once (warm) | $once2 | $(ratio "$once2" "$nginx") | $(ratio "$once2" "$raw") |
| unverified: server --verify_on_read=false, raw stream, no client hashing | $raw | $(ratio "$raw" "$nginx") | 1.00 |
| nginx (sendfile) + \`curl \| openssl dgst -sha256\` | $nginx | 1.00 | $(ratio "$nginx" "$raw") |

Rounds (MB/s): SDK 1 stream ${sdk1_rates[*]}; verity get ${get_rates[*]}; nginx ${nginx_rates[*]}
(one of each per round, in that order).

The client verifies every block in every row but the unverified one. With \`--verify_once\` the
server hashes each block once per process lifetime (while the blob stays in its cache), so
only the client hashes on later reads.

Put of the blob (\`verity put\`, the tree built as the data arrives, fsynced): $(mb_per_s "$put_seconds") MB/s;
\`fsverity digest\` of the same file, the tree-building floor: $(mb_per_s "$fsverity_seconds") MB/s
(Put = $(ratio "$fsverity_seconds" "$put_seconds")x the digest's speed).

Server memory with 200 concurrent readers of the blob, each taking one message every 100 ms
for 10 s: peak RSS sampled every 0.2 s ${peak} KiB ($((peak / 1024)) MiB), VmHWM ${hwm} MiB.
REPORT
)
echo "$report"
echo "$report" >"$out"
