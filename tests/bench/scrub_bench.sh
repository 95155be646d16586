#!/usr/bin/env bash
# Scrub: its throughput against the SHA-256 limit of one core, and what it costs the RT class.
#
# Throughput: a file store of 8 blobs of 128 MiB (FEC on, 2 roots), one `verity scrub --wait`
# at no byte limit on an otherwise idle machine (the scrub thread runs at SCHED_IDLE and the idle
# I/O class), in the same rounds as `sha256sum` of the same 8 files (what a user would run to
# check them; it reads from the page cache too) and `openssl speed -evp sha256 -bytes 4096` (one
# core's hashing limit at the block size). The scrub also reads the tree and FEC area, encodes
# the parity again and compares it: its bytes/s counts everything it read.
#
# RT reads: 4 RT clients x 250 random 4 KiB reads per second (dispatch_load) against a warm
# blob for SECONDS, with no scrub, with a scrub looping over the store (--scrub_interval=1s) at
# the default --scrub_bytes_per_second (64 MiB/s), and with one at no byte limit, alternately,
# ROUNDS times; the client's p99 and the server's.
# Writes OUT (markdown). Reports figures; never fails on a goal.
# Usage: tests/bench/scrub_bench.sh [SECONDS=20] [ROUNDS=3] [OUT=docs/bench-scrub.md]
#   Smoke run: tests/bench/scrub_bench.sh 3 1 /tmp/scrub.md
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/bench_lib.sh
seconds=${1:-20}
rounds=${2:-3}
# SCRUB_BENCH_MODES: the RT rounds' scrub modes, in each round's order.
modes=${SCRUB_BENCH_MODES:-off 64MiB/s unlimited}
out=${3:-docs/bench-scrub.md}
blobs=8
blob_mib=128
rt_load=rt:random:4096:4:250

bazel build //server:verityd //client/cli:verity //tests/bench:dispatch_load >/dev/null 2>&1
verityd=$PWD/bazel-bin/server/verityd
verity=$PWD/bazel-bin/client/cli/verity
load=$PWD/bazel-bin/tests/bench/dispatch_load
work=$(mktemp -d "${BENCH_DIR:-$PWD}/.scrub-bench.XXXXXX")
server_pid=
cleanup() {
  [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_server() {  # LOG FLAGS...: sets server_pid and addr, over $work/store (kept)
  local log=$1
  shift
  # No pass under way from the run before: a server resumes one it finds.
  rm -f "$work/store/upkeep/scrub" "$work/store/upkeep/scrub-lease"
  "$verityd" --listen=127.0.0.1:0 --metrics_listen= --store_dir="$work/store" \
    --max_streams=4096 --fec_roots=2 "$@" 2>"$log" &
  server_pid=$!
  for _ in $(seq 400); do grep -q "serving" "$log" 2>/dev/null && break; sleep 0.05; done
  addr=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$log" | cut -d' ' -f3)
  [[ -n $addr ]] || { cat "$log" >&2; exit 1; }
}
stop_server() { kill "$server_pid"; wait "$server_pid" || true; server_pid=; }

for ((i = 0; i < blobs; i++)); do head -c $((blob_mib << 20)) /dev/urandom >"$work/blob-$i"; done
start_server "$work/fill.log" --scrub_bytes_per_second=0
for ((i = 0; i < blobs; i++)); do "$verity" put --server="$addr" "$work/blob-$i" >/dev/null; done
digest=$("$verity" digest "$work/blob-0" | cut -d' ' -f1)
stop_server

load_start=$(load_average)
scrub_mbs=() sum_mbs=() ssl_mbs=() ratio_ssl=() ratio_sum=()
for ((r = 1; r <= rounds; r++)); do
  start_server "$work/scrub-$r.log" --scrub_bytes_per_second=0
  "$verity" scrub --server="$addr" --wait >"$work/scrub-$r.out"
  stop_server
  # "checked N blobs (B bytes): ... took 1.234s"
  bytes=$(sed -nE 's/^checked [0-9]+ blobs \(([0-9]+) bytes\).*/\1/p' "$work/scrub-$r.out")
  took=$(sed -nE 's/.*; took ([0-9.]+)(m?s)$/\1 \2/p' "$work/scrub-$r.out" |
    awk '{print ($2 == "ms") ? $1 / 1000 : $1}')
  scrub_mbs+=("$(awk -v b="$bytes" -v t="$took" 'BEGIN {printf "%.0f", b / t / 1e6}')")
  start=$(date +%s.%N)
  sha256sum "$work"/blob-* >/dev/null
  end=$(date +%s.%N)
  sum_mbs+=("$(awk -v s="$start" -v e="$end" -v b=$((blobs * blob_mib << 20)) \
    'BEGIN {printf "%.0f", b / (e - s) / 1e6}')")
  # "sha256 ... <bytes/s for 4096-byte blocks>k" (in 1000s of bytes per second).
  ssl_mbs+=("$(openssl speed -seconds 3 -bytes 4096 -evp sha256 2>/dev/null |
    awk '/^sha256/ {v = $NF; sub(/k$/, "", v); printf "%.0f", v / 1000}')")
  ratio_ssl+=("$(ratio "${scrub_mbs[-1]}" "${ssl_mbs[-1]}")")
  ratio_sum+=("$(ratio "${scrub_mbs[-1]}" "${sum_mbs[-1]}")")
  echo "throughput round $r: scrub ${scrub_mbs[-1]} MB/s, sha256sum ${sum_mbs[-1]} MB/s, openssl ${ssl_mbs[-1]} MB/s" >&2
done

# RT reads with and without a scrub looping over the store.
rt_table="| round | scrub | RT reads | client p50 µs | client p99 µs | client p999 µs | server p99 µs |
| --- | --- | --- | --- | --- | --- | --- |"
lf() { grep "^load class=rt " "$work/$1.out" | grep -o " $2=[^ ]*" | cut -d= -f2; }
srv() {
  local v
  v=$(grep -o "stats rpc method=Read class=rt code=OK .*" "$work/$1.log" | grep -o " $2=[^ ]*" |
    cut -d= -f2 || true)
  echo "${v:--}"
}
declare -A p99s server_p99s
for ((r = 1; r <= rounds; r++)); do
  for scrub in $modes; do
    name=rt-${scrub%%/*}-$r
    flags=()
    [[ $scrub != off ]] && flags+=(--scrub_interval=1s)
    [[ $scrub == unlimited ]] && flags+=(--scrub_bytes_per_second=0)
    start_server "$work/$name.log" "${flags[@]}"
    "$load" --server="$addr" --digest="$digest" --seconds="$seconds" --warmup_seconds=2 \
      --load="$rt_load" >"$work/$name.out" || { cat "$work/$name.out" >&2; exit 1; }
    stop_server
    passes=$(grep -c "scrub pass completed" "$work/$name.log" || true)
    rt_table+=$'\n'"| $r | $scrub ($passes passes) | $(lf "$name" requests) | $(lf "$name" p50_us) | $(lf "$name" p99_us) | $(lf "$name" p999_us) | $(srv "$name" p99_us) |"
    p99s[$scrub]+=" $(lf "$name" p99_us)"
    server_p99s[$scrub]+=" $(srv "$name" p99_us)"
    echo "$name: p99 $(lf "$name" p99_us) µs, $passes passes" >&2
  done
done
rt_ratios=$(ratios "${p99s[64MiB/s]}" "${p99s[off]}")
rt_ratios_unlimited=$(ratios "${p99s[unlimited]:-}" "${p99s[off]}")
server_ratios=$(ratios "${server_p99s[64MiB/s]}" "${server_p99s[off]}")
load_end=$(load_average)
command="tests/bench/scrub_bench.sh $seconds $rounds $out"
[[ -n ${SCRUB_BENCH_MODES:-} ]] && command="SCRUB_BENCH_MODES=\"$modes\" $command"
unlimited_note=
if [[ -n $rt_ratios_unlimited ]]; then
  unlimited_note="At no byte limit (client p99): $(echo "$rt_ratios_unlimited" | tr '\n' ' ')(median
$(echo "$rt_ratios_unlimited" | median), worst $(echo "$rt_ratios_unlimited" | maximum))."
fi

cat >"$out" <<EOF
# Scrub: throughput and the RT class's latency

\`$command\`, on $(machine).
Load average at the start $load_start, at the end $load_end. $(shared_note $load_start $load_end)

## Throughput

A file store of $blobs blobs of $blob_mib MiB (FEC on, 2 roots), in the page cache; one
\`verity scrub --wait\` at no byte limit per round, in the same rounds as \`sha256sum\` of the
same files and \`openssl speed -evp sha256 -bytes 4096\` (one core's SHA-256 at the block size).
The scrub's MB/s counts every byte it read (data, tree, FEC area); besides hashing every block
it verifies each tree block, encodes the FEC parity again and compares it.

| round | scrub MB/s | sha256sum MB/s | openssl sha256 MB/s (one core) | scrub / openssl | scrub / sha256sum |
| --- | --- | --- | --- | --- | --- |
$(for ((r = 0; r < rounds; r++)); do
  echo "| $((r + 1)) | ${scrub_mbs[r]} | ${sum_mbs[r]} | ${ssl_mbs[r]} | ${ratio_ssl[r]} | ${ratio_sum[r]} |"
done)

Scrub against one core's SHA-256: median $(printf '%s\n' "${ratio_ssl[@]}" | median), worst
$(printf '%s\n' "${ratio_ssl[@]}" | minimum); against \`sha256sum\`: median
$(printf '%s\n' "${ratio_sum[@]}" | median), worst $(printf '%s\n' "${ratio_sum[@]}" | minimum).

## RT reads while a scrub runs

4 RT clients, each 250 random 4 KiB reads per second of a warm $blob_mib MiB blob (paced,
latency from each read's scheduled start), for ${seconds} s after a 2 s warm-up, with no scrub,
with passes over the whole store (\`--scrub_interval=1s\`) at the default
\`--scrub_bytes_per_second\` (64 MiB/s), and with passes at no byte limit, alternately
(the modes of this run: $modes).
"server" is verityd's own Read latency from its shutdown stats line.

$rt_table

RT client p99 with a scrub at 64 MiB/s / without, per round: $(echo "$rt_ratios" | tr '\n' ' ')
(median $(echo "$rt_ratios" | median), worst $(echo "$rt_ratios" | maximum); the goal is at most
1.10). The server's own RT Read p99 (no client or network in it), the same ratio per round:
$(echo "$server_ratios" | tr '\n' ' ')(median $(echo "$server_ratios" | median), worst
$(echo "$server_ratios" | maximum)). $unlimited_note
EOF
echo "wrote $out" >&2
