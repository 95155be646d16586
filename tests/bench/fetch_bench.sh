#!/usr/bin/env bash
# Verified fetch vs unverified stream vs nginx, in one run on one blob over loopback, and the
# server's memory under 200 slow readers. Every pipeline runs once per round, in an order that
# rotates from round to round; each is reported as the median, best and worst of the rounds,
# with its client's minor page faults per GiB fetched, and its ratio to nginx as the median and
# worst of the per-round ratios. Writes docs/bench-fetch.md. Reports figures; never fails on a goal.
# Usage: tests/bench/fetch_bench.sh [SIZE_MIB=512] [ROUNDS=7] [OUT=docs/bench-fetch.md]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/bench_lib.sh
size_mib=${1:-512}
rounds=${2:-7}
out=${3:-docs/bench-fetch.md}
load_at_start=$(load_average)

command -v nginx >/dev/null || apt-get install -y -q nginx-light >/dev/null  # the baseline
command -v fsverity >/dev/null || apt-get install -y -q fsverity >/dev/null  # Put's floor
need_gnu_time                                                               # page faults
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
# Each pipeline below prints "<MB/s> <client minor page faults>" for one fetch of the blob.
sdk() {  # SERVER STREAMS: one SDK fetch
  local rate
  rate=$(with_minor_faults "$work/faults" "$bench" --server="${addr[$1]}" --digest="$digest" \
    --mode=sdk --streams="$2" --rounds=1 | rates)
  echo "$rate $(minor_faults "$work/faults")"
}
get() {  # SERVER VERITY-GET-FLAGS...: one `verity get DIGEST > /dev/null`
  local server=$1 seconds
  shift
  seconds=$(seconds_of with_minor_faults "$work/faults" "$verity" get "$@" \
    --server="${addr[$server]}" "$digest")
  echo "$(mb_per_s "$seconds") $(minor_faults "$work/faults")"
}
raw() {  # one unverified raw stream
  local rate
  rate=$(with_minor_faults "$work/faults" "$bench" --server="${addr[raw]}" --digest="$digest" \
    --mode=raw --rounds=1 | rates)
  echo "$rate $(minor_faults "$work/faults")"
}
nginx_fetch() {  # nginx + curl | openssl, checked
  local seconds sha faults
  read -r seconds sha faults < <(bash tests/bench/nginx_pipeline.sh "$work/blob")
  [[ $sha == "$want_sha" ]] || { echo "nginx pipeline returned the wrong content" >&2; exit 1; }
  echo "$(mb_per_s "$seconds") $faults"
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

# The pipelines, each a command printing "<MB/s> <faults>"; the table keeps this order.
rows=(sdk1 get sdk2 get2 once1 once2 raw nginx)
declare -A run_row=(
  [sdk1]="sdk default 1" [get]="get default" [sdk2]="sdk default 2"
  [get2]="get default --parallel=2" [once1]="sdk once 1" [once2]="sdk once 2" [raw]=raw
  [nginx]=nginx_fetch
)
declare -A rounds_of faults_of
gib=$(awk -v m="$size_mib" 'BEGIN {print m / 1024}')
for ((r = 0; r < rounds; r++)); do
  for ((i = 0; i < ${#rows[@]}; i++)); do  # round r starts with row r: no row is always first
    row=${rows[(i + r) % ${#rows[@]}]}
    measured=$(${run_row[$row]})  # a failed fetch ends the script (set -e)
    read -r rate faults <<<"$measured"
    rounds_of[$row]+=" $rate"
    faults_of[$row]+=" $(awk -v f="$faults" -v g="$gib" 'BEGIN {printf "%.0f", f / g}')"
  done
  echo "round $((r + 1)) of $rounds done" >&2
done
# What a client process faults in with no fetch at all (start-up and a client created): the
# floor under each row's faults, which the per-GiB figures include.
with_minor_faults "$work/faults" "$bench" --server="${addr[default]}" --digest="$digest" \
  --mode=sdk --rounds=0
startup_faults=$(minor_faults "$work/faults")
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
# One table row: median, best, worst, the per-round ratios to nginx and to the raw stream, faults.
table_row() {
  local row=$1 mbs=${rounds_of[$1]} vs_nginx vs_raw
  vs_nginx=$(ratios "$mbs" "${rounds_of[nginx]}")
  vs_raw=$(ratios "$mbs" "${rounds_of[raw]}")
  printf '| %s | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f | %.0f | %.0f |\n' "${label[$row]}" \
    "$(median <<<"$mbs")" "$(maximum <<<"$mbs")" "$(minimum <<<"$mbs")" \
    "$(median <<<"$vs_nginx")" "$(minimum <<<"$vs_nginx")" "$(median <<<"$vs_raw")" \
    "$(median <<<"${faults_of[$row]}")" "$(maximum <<<"${faults_of[$row]}")"
}
load_at_end=$(load_average)
report=$(cat <<REPORT
# Verified fetch throughput and server memory

Command: \`tests/bench/fetch_bench.sh $size_mib $rounds\` ($(machine), load average
$load_at_start at the start and $load_at_end at the end), one ${size_mib} MiB random blob
(SHA-256, 4 KiB blocks) over loopback; $rounds rounds, each running every pipeline once, the
order rotating from round to round; MB/s = 10^6 bytes/s.

$(shared_note $load_at_start $load_at_end)

The ratios are per round (a pipeline's MB/s over nginx's, or over the raw stream's, in the same
round): their median, and the worst of them. Faults are the client's minor page faults per GiB
fetched, whole processes counted by GNU time (\`%R\`, start-up included): \`verity get\`, the
fetch_bench program (one fetch per process), and curl plus openssl for nginx (the server's own
are in no row). A fetch_bench process that fetches nothing faults ${startup_faults} times
(start-up and a client created; $(ratio "$startup_faults" "$gib" 0) per GiB of this blob).

| pipeline | MB/s median | best | worst | vs nginx median | vs nginx worst | vs unverified median | faults/GiB median | faults/GiB worst |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
$(for row in "${rows[@]}"; do table_row "$row"; done)

Rounds (MB/s), one of each row per round, in round order:
$(for row in "${rows[@]}"; do echo "- ${label[$row]}:${rounds_of[$row]}"; done)

Minor page faults per GiB, the same rounds:
$(for row in "${rows[@]}"; do echo "- ${label[$row]}:${faults_of[$row]}"; done)

The client verifies every block in every row but the unverified one. With \`--verify_once\` the
server hashes each block once per process lifetime (while the blob stays in its cache), so
only the client hashes on later reads.

Put of the blob (\`verity put\`, the tree built as the data arrives, fsynced): $(mb_per_s "$put_seconds") MB/s;
\`fsverity digest\` of the same file, the tree-building floor: $(mb_per_s "$fsverity_seconds") MB/s
(Put = $(ratio "$fsverity_seconds" "$put_seconds")x the digest's speed); \`dd bs=1M conv=fsync\` of the file to the
same disk, the durable-write floor: $(mb_per_s "$dd_seconds") MB/s (Put = $(ratio "$dd_seconds" "$put_seconds")x).
One measurement each.

Server memory with 200 concurrent readers of the blob, each taking one message every 100 ms
for 10 s: peak RSS sampled every 0.2 s ${peak} KiB ($((peak / 1024)) MiB), VmHWM ${hwm} MiB.
REPORT
)
echo "$report"
echo "$report" >"$out"
