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
declare -A pid addr
trap 'for p in "${pid[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT

start_server() {  # NAME FLAGS...: a server on its own store; sets pid[NAME] and addr[NAME]
  local name=$1 log=$work/$1.log
  shift
  "$verityd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --store_dir="$work/$name" "$@" 2>"$log" &
  pid[$name]=$!
  for _ in $(seq 200); do grep -q "serving" "$log" 2>/dev/null && break; sleep 0.05; done
  addr[$name]=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$log" | cut -d' ' -f3)
}
stop_server() { kill "${pid[$1]}"; wait "${pid[$1]}" || true; unset "pid[$1]"; }
rates() { grep -o '[0-9.]* MB/s' | cut -d' ' -f1; }
sdk() {  # SERVER STREAMS: one SDK fetch's MB/s
  "$bench" --server="${addr[$1]}" --digest="$digest" --mode=sdk --streams="$2" --rounds=1 | rates
}

chmod 755 "$work"  # nginx's workers run unprivileged
head -c $((size_mib << 20)) /dev/urandom >"$work/blob"
want_sha=$(sha256sum "$work/blob" | cut -d' ' -f1)
# mb_per_s SECONDS: the blob's size over SECONDS, in MB/s.
mb_per_s() { awk -v s="$1" -v m="$size_mib" 'BEGIN {printf "%.1f", m * 1048576 / s / 1e6}'; }

# Three servers at once, so that every pipeline runs in every round and machine noise hits all
# alike: the default (verifies every read), --verify_once (the server remembers verified
# blocks, dm-verity's check_at_most_once: after one warm-up fetch only the client hashes) and
# --verify_on_read=false (read as stored; raw stream, no client hashing either).
start_server default
start_server once --verify_once
start_server raw --verify_on_read=false
# Put builds the tree as the data arrives: its floor is fsverity digest of the same file.
put_seconds=$(seconds_of "$verity" put --server="${addr[default]}" "$work/blob")
"$verity" put --server="${addr[once]}" "$work/blob" >/dev/null
"$verity" put --server="${addr[raw]}" "$work/blob" >/dev/null
digest=$("$verity" digest "$work/blob" | cut -d' ' -f1)
fsverity_seconds=$(seconds_of fsverity digest "$work/blob")
# Put also writes the blob durably: the other floor is a copy of it fsynced on the same disk.
dd_seconds=$(seconds_of dd if="$work/blob" of="$work/copy" bs=1M conv=fsync status=none)
rm "$work/copy"
sdk once 1 >/dev/null

rows=(sdk1 get sdk2 get2 once1 once2 raw nginx)
declare -A rounds_of
for ((r = 0; r < rounds; r++)); do
  rounds_of[sdk1]+=" $(sdk default 1)"
  rounds_of[get]+=" $(mb_per_s "$(seconds_of "$verity" get --server="${addr[default]}" "$digest")")"
  rounds_of[sdk2]+=" $(sdk default 2)"
  rounds_of[get2]+=" $(mb_per_s "$(seconds_of "$verity" get --parallel=2 --server="${addr[default]}" "$digest")")"
  rounds_of[once1]+=" $(sdk once 1)"
  rounds_of[once2]+=" $(sdk once 2)"
  rounds_of[raw]+=" $("$bench" --server="${addr[raw]}" --digest="$digest" --mode=raw --rounds=1 | rates)"
  read -r seconds sha < <(bash tests/bench/nginx_pipeline.sh "$work/blob")
  [[ $sha == "$want_sha" ]] || { echo "nginx pipeline returned the wrong content" >&2; exit 1; }
  rounds_of[nginx]+=" $(mb_per_s "$seconds")"
done
declare -A med
for row in "${rows[@]}"; do
  med[$row]=$(printf '%s\n' ${rounds_of[$row]} | median)
done
stop_server once
stop_server raw

# 200 readers taking one message every 100 ms, for 10 s: peak server RSS.
"$bench" --server="${addr[default]}" --digest="$digest" --mode=slow_readers --readers=200 --seconds=10 >/dev/null &
readers=$!
peak=$(peak_rss_kib "${pid[default]}" "$readers")
wait "$readers" || true
hwm=$(hwm_mib "${pid[default]}")
stop_server default

declare -A label=(
  [sdk1]="SDK verified fetch, 1 stream (server verifies too)"
  [get]="\`verity get DIGEST > /dev/null\` (server verifies too)"
  [sdk2]="SDK verified fetch, 2 parallel streams"
  [get2]="\`verity get --parallel=2 DIGEST > /dev/null\`"
  [once1]="SDK verified fetch, 1 stream, server --verify_once (warm)"
  [once2]="SDK verified fetch, 2 streams, server --verify_once (warm)"
  [raw]="unverified: server --verify_on_read=false, raw stream, no client hashing"
  [nginx]="nginx (sendfile) + \`curl \| openssl dgst -sha256\`"
)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
report=$(cat <<REPORT
# Verified fetch throughput and server memory

Command: \`tests/bench/fetch_bench.sh $size_mib $rounds\` on $(date -u +%Y-%m-%d), $(nproc) CPUs
($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), one ${size_mib} MiB random blob
(SHA-256, 4 KiB blocks) over loopback; medians of $rounds rounds; MB/s = 10^6 bytes/s.

| pipeline | MB/s | vs nginx | vs unverified |
| --- | --- | --- | --- |
$(for row in "${rows[@]}"; do
  echo "| ${label[$row]} | ${med[$row]} | $(ratio "${med[$row]}" "${med[nginx]}") | $(ratio "${med[$row]}" "${med[raw]}") |"
done)

Rounds (MB/s), one of each row per round, in the table's order:
$(for row in "${rows[@]}"; do echo "- ${label[$row]}:${rounds_of[$row]}"; done)

The client verifies every block in every row but the unverified one. With \`--verify_once\` the
server hashes each block once per process lifetime (while the blob stays in its cache), so
only the client hashes on later reads.

Put of the blob (\`verity put\`, the tree built as the data arrives, fsynced): $(mb_per_s "$put_seconds") MB/s;
\`fsverity digest\` of the same file, the tree-building floor: $(mb_per_s "$fsverity_seconds") MB/s
(Put = $(ratio "$fsverity_seconds" "$put_seconds")x the digest's speed); \`dd bs=1M conv=fsync\` of the file to the
same disk, the durable-write floor: $(mb_per_s "$dd_seconds") MB/s (Put = $(ratio "$dd_seconds" "$put_seconds")x).

Server memory with 200 concurrent readers of the blob, each taking one message every 100 ms
for 10 s: peak RSS sampled every 0.2 s ${peak} KiB ($((peak / 1024)) MiB), VmHWM ${hwm} MiB.
REPORT
)
echo "$report"
echo "$report" >"$out"
