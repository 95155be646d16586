#!/usr/bin/env bash
# What verityd's metrics cost a 4 KiB Read: the metric work of one Read timed alone
# (metrics_bench), against the server's whole CPU time per 4 KiB Read under load (from its own
# process_cpu_seconds_total and Read count, 8 RT clients reading at random), and the cost of one
# scrape. Writes docs/bench-metrics.md.
# Usage: tests/bench/metrics_bench.sh [SECONDS=10] [OUT=docs/bench-metrics.md]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-10}
out=${2:-docs/bench-metrics.md}

bazel build //server:verityd //client/cli:verity //tests/bench:dispatch_load \
  //tests/bench:metrics_bench >/dev/null 2>&1
verityd=$PWD/bazel-bin/server/verityd
verity=$PWD/bazel-bin/client/cli/verity
work=$(mktemp -d)
server_pid=
trap '[[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT

"$verityd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --store_dir="$work/store" \
  2>"$work/log" &
server_pid=$!
for _ in $(seq 200); do grep -q "serving" "$work/log" 2>/dev/null && break; sleep 0.05; done
addr=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$work/log" | cut -d' ' -f3)
metrics=$(grep -o 'metrics on http://[^ ]*' "$work/log" | cut -d' ' -f3)
head -c $((64 << 20)) /dev/urandom >"$work/blob"
digest=$("$verity" put --server="$addr" "$work/blob" | cut -d' ' -f1)

sample() { curl -sf "$metrics" | awk -v m="$1" '$1 == m {print $2}'; }
reads='verityd_rpc_duration_seconds_count{code="OK",method="Read",priority_class="rt"}'
cpu0=$(sample process_cpu_seconds_total); n0=$(sample "$reads")
load=$(bazel-bin/tests/bench/dispatch_load --server="$addr" --digest="$digest" \
  --seconds="$seconds" --warmup_seconds=0 --load=rt:random:4096:8)
cpu1=$(sample process_cpu_seconds_total); n1=$(sample "$reads")
scrape_ms=$(curl -sf -o "$work/scrape" -w '%{time_total}' "$metrics" | awk '{printf "%.2f", $1 * 1000}')
scrape_kib=$(($(stat -c %s "$work/scrape") / 1024))
kill "$server_pid"; wait "$server_pid" || true; server_pid=

bazel-bin/tests/bench/metrics_bench >"$work/micro" 2>/dev/null
micro=$(awk '/^BM_/ {printf "| %s | %s |\n", $1, $2}' "$work/micro")
inline_ns=$(awk '/^BM_InlineReadMetrics/ {print $2}' "$work/micro")
read -r per_read_us share <<<"$(awk -v c0="$cpu0" -v c1="$cpu1" -v n0="$n0" -v n1="$n1" -v m="$inline_ns" \
  'BEGIN {us = (c1 - c0) / (n1 - n0) * 1e6; printf "%.1f %.2f", us, 100 * m / 1000 / us}')"
report=$(cat <<REPORT
# What the metrics cost

Command: \`tests/bench/metrics_bench.sh $seconds\` on $(date -u +%Y-%m-%d), $(nproc) CPUs
($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), Linux $(uname -r).

The metric work of one Read, alone (Google Benchmark, \`tests/bench/metrics_bench\`): the
call's latency (two clock reads, one histogram), its bytes, its dispatch placement and its
verification time (two more clock reads, one histogram); on the pool also its queue wait.

| benchmark | ns per Read |
| --- | --- |
$micro

The server's CPU per 4 KiB Read, under 8 RT clients reading at random for ${seconds} s (its own
\`process_cpu_seconds_total\` and Read count, before and after): $((n1 - n0)) Reads in
$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN {printf "%.2f", b - a}') CPU seconds, **${per_read_us} µs per Read**.

| | |
| --- | --- |
| metric work per inline 4 KiB Read | ${inline_ns} ns |
| share of the server's CPU per Read | **${share}%** (goal: under 2%) |
| one scrape of /metrics | ${scrape_ms} ms, ${scrape_kib} KiB |

The load generator's own line: \`$load\`

Where the server is CPU-bound, throughput falls by at most the metrics' share of its CPU. A
scrape every 15 s (Prometheus's default) costs ${scrape_ms} ms every 15 s.
REPORT
)
echo "$report"
echo "$report" >"$out"
