#!/usr/bin/env bash
# verityd's Read dispatch (--dispatch=inline|pool|pool_unbound|adaptive) under load, in one run
# on one blob over loopback: a request-size sweep of RT random reads, and a mixed RT/BE/IDLE
# workload, with the pool's queue wait from the server's shutdown stats. Writes
# docs/bench-dispatch.md and docs/bench-dispatch.png. Reports figures; never fails on a goal.
# Usage: tests/bench/dispatch_bench.sh [SECONDS=10] [BLOB_MIB=256] [OUT=docs/bench-dispatch.md]
#   SECONDS is each sweep run's measured time; mixed runs measure twice as long.
#   Smoke run: tests/bench/dispatch_bench.sh 2 64 /tmp/bench-dispatch.md
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/bench_lib.sh
seconds=${1:-10}
blob_mib=${2:-256}
out=${3:-docs/bench-dispatch.md}
png=${out%.md}.png
mixed_seconds=$((2 * seconds))
warmup=$((seconds >= 5 ? 2 : 1))
sizes=(4096 8192 16384 32768 65536 131072 262144 524288)
sweep_modes=(inline pool pool_unbound adaptive)
mixed_modes=(inline pool pool_unbound adaptive)
# The RT reads are paced (250 per second per client, an application's synchronous reads), so
# their CPU use is the same in every mode and their latency shows the dispatch, not a closed
# loop's feedback; BE and IDLE read back to back and take what is left.
rt_rate=250
rt_load=rt:random:4096:4:$rt_rate
mixed_load=$rt_load,be:stream:131072:2,idle:scan:1048576:1

command -v gnuplot >/dev/null || apt-get install -y -q gnuplot-nox >/dev/null  # the plot
bench_binaries //server:verityd //client/cli:verity //tests/bench:dispatch_load
verityd=$bin/server/verityd
verity=$bin/client/cli/verity
load=$bin/tests/bench/dispatch_load
grep -q -- '--dispatch' <("$verityd" --help 2>&1) || { echo "verityd has no --dispatch flag" >&2; exit 1; }
work=$(mktemp -d)
server_pid=
trap '[[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid"; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

start_server() {  # LOG FLAGS...: sets server_pid and addr
  local log=$1; shift
  "$verityd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --store_dir="$work/store" "$@" 2>"$log" &
  server_pid=$!
  for _ in $(seq 200); do grep -q "serving" "$log" 2>/dev/null && break; sleep 0.05; done
  addr=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$log" | cut -d' ' -f3)
  [[ -n $addr ]] || { cat "$log" >&2; exit 1; }
}
stop_server() { kill "$server_pid"; wait "$server_pid" || true; server_pid=; }
# One server start, one load run: NAME MODE LOAD writes $work/NAME.out (load lines) and
# $work/NAME.log (the server's log with its shutdown stats lines).
# --max_streams is raised because a stream's slot is freed only when the server's reactor is
# done, which can lag the client's next call by a scheduling stall; admission is not measured.
run() {
  start_server "$work/$1.log" --dispatch="$2" --max_streams=4096
  "$load" --server="$addr" --digest="$digest" --seconds="$4" --warmup_seconds="$warmup" \
    --load="$3" >"$work/$1.out" || {
    echo "$1: reads failed" >&2; cat "$work/$1.out" >&2; stop_server; tail "$work/$1.log" >&2; exit 1; }
  stop_server
}
# A load line's field: NAME CLASS KEY.
lf() { grep "^load class=$2 " "$work/$1.out" | grep -o " $3=[^ ]*" | cut -d= -f2 || true; }
# A queue-wait stats field: NAME CLASS KEY ("-" if the run had none, e.g. inline).
qw() {
  local v
  v=$(grep -o "stats queue_wait class=$2 .*" "$work/$1.log" | grep -o " $3=[^ ]*" | cut -d= -f2 || true)
  echo "${v:--}"
}
# The server's own latency of CLASS's Reads (arrival to end): NAME CLASS KEY.
srv() {
  local v
  v=$(grep -o "stats rpc method=Read class=$2 code=OK .*" "$work/$1.log" | grep -o " $3=[^ ]*" | cut -d= -f2 || true)
  echo "${v:--}"
}
# Requests of CLASS the pool served in run NAME, in percent of all of that class.
pool_pct() {
  { grep -o "stats dispatch .*class=$2 .*" "$work/$1.log" || true; } | awk '
    {n = $NF; sub("count=", "", n); all += n; if ($3 == "path=pool") pool += n}
    END {if (all) printf "%.0f%%", 100 * pool / all; else printf "-"}'
}
calc() { awk "BEGIN {printf \"%.${2:-1}f\", ($1)}"; }  # parenthesized: ">" is not a redirect
# CLASS's inline limit at the end of run NAME (the online tuner's last change, else the
# calibrated start), and the seconds from the server's start to that last change ("-": none).
final_limit() {
  local l
  l=$(grep -o "$2 inline limit [0-9]* -> [0-9]*" "$work/$1.log" | tail -1 | awk '{print $NF}')
  [[ -n $l ]] || l=$(grep -o 'inline limits [^ ]*' "$work/$1.log" | grep -o "$2=[0-9]*" | cut -d= -f2)
  echo "$l"
}
settled_after() {
  local first last
  last=$(grep "$2 inline limit" "$work/$1.log" | tail -1 | cut -d' ' -f1)
  [[ -n $last ]] || { echo -; return; }
  first=$(head -1 "$work/$1.log" | cut -d' ' -f1)
  calc "$(date -d "$last" +%s.%N) - $(date -d "$first" +%s.%N)"
}
# A against B in words: "12.3% lower" or "4.5% higher".
change() { awk -v a="$1" -v b="$2" 'BEGIN {d = 100 * (a / b - 1); printf "%.1f%% %s", d < 0 ? -d : d, d < 0 ? "lower" : "higher"}'; }

# --- Set-up: one random blob in a fresh store, page cache warm. ---
mkdir -p "$work/store"
head -c $((blob_mib << 20)) /dev/urandom >"$work/blob"
start_server "$work/put.log"
digest=$("$verity" put --server="$addr" "$work/blob" | cut -d' ' -f1)
stop_server
rm "$work/blob"
find "$work/store" -type f -exec cat {} + >/dev/null

# --- The sweep: 8 RT clients reading SIZE at random offsets, one server start per run. ---
for mode in "${sweep_modes[@]}"; do
  for size in "${sizes[@]}"; do run "sweep-$mode-$size" "$mode" "rt:random:$size:8" "$seconds"; done
done

# --- The mixed workload, and the RT part alone and with only the IDLE scan (adaptive). ---
for mode in "${mixed_modes[@]}"; do run "mixed-$mode" "$mode" "$mixed_load" "$mixed_seconds"; done
run rt-alone adaptive "$rt_load" "$mixed_seconds"
run rt-idle adaptive "$rt_load,idle:scan:1048576:1" "$mixed_seconds"

# --- Tables. ---
sweep_table="| size | $(for m in "${sweep_modes[@]}"; do printf '%s MiB/s | %s p50 µs | %s p99 µs | ' "$m" "$m" "$m"; done)best MiB/s | best p99 |
| --- |$(printf ' --- | --- | --- |%.0s' "${sweep_modes[@]}") --- | --- |"
tuned_table="| size | RT limit at the end | last change after (s) |
| --- | --- | --- |"
queue_table="| size | inline server p50 / p99 µs | pool server p50 / p99 µs | pool_unbound server p50 / p99 µs | pool queue wait p50 / p99 µs | pool_unbound queue wait p50 / p99 µs |
| --- | --- | --- | --- | --- | --- |"
: >"$work/sweep.dat"
for size in "${sizes[@]}"; do
  row="| $((size >> 10)) KiB |"; dat="$((size >> 10))"; best_t=; best_p=
  for mode in "${sweep_modes[@]}"; do
    r=sweep-$mode-$size; t=$(lf "$r" rt mib_s); p=$(lf "$r" rt p99_us)
    row+=" $t | $(lf "$r" rt p50_us) | $p |"; dat+=" $t $p"
    if [[ -z $best_t ]] || (($(calc "$t > $bt" 0))); then best_t=$mode; bt=$t; fi
    if [[ -z $best_p ]] || (($(calc "$p < $bp" 0))); then best_p=$mode; bp=$p; fi
  done
  sweep_table+=$'\n'"$row $best_t | $best_p |"
  tuned_table+=$'\n'"| $((size >> 10)) KiB | $(final_limit "sweep-adaptive-$size" rt) | $(settled_after "sweep-adaptive-$size" rt) |"
  row="| $((size >> 10)) KiB |"
  for mode in inline pool pool_unbound; do
    row+=" $(srv "sweep-$mode-$size" rt p50_us) / $(srv "sweep-$mode-$size" rt p99_us) |"
  done
  for mode in pool pool_unbound; do
    row+=" $(qw "sweep-$mode-$size" rt p50_us) / $(qw "sweep-$mode-$size" rt p99_us) |"
  done
  queue_table+=$'\n'"$row"
  echo "$dat" >>"$work/sweep.dat"
done

mixed_table="| mode | class | load | MiB/s | p50 µs | p99 µs | p999 µs | server p50 µs | server p99 µs | served by the pool |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
mixed_qw="| mode | class | chunks queued | p50 µs | p99 µs | p999 µs |
| --- | --- | --- | --- | --- | --- |"
mixed_row() {  # NAME LABEL CLASS WHAT
  mixed_table+=$'\n'"| $2 | $3 | $4 | $(lf "$1" "$3" mib_s) | $(lf "$1" "$3" p50_us) | $(lf "$1" "$3" p99_us) | $(lf "$1" "$3" p999_us) | $(srv "$1" "$3" p50_us) | $(srv "$1" "$3" p99_us) | $(pool_pct "$1" "$3") |"
  mixed_qw+=$'\n'"| $2 | $3 | $(qw "$1" "$3" count) | $(qw "$1" "$3" p50_us) | $(qw "$1" "$3" p99_us) | $(qw "$1" "$3" p999_us) |"
}
for mode in "${mixed_modes[@]}"; do
  mixed_row "mixed-$mode" "$mode" rt "4 KiB random ×4 at ${rt_rate}/s"
  mixed_row "mixed-$mode" "$mode" be "128 KiB stream ×2"
  mixed_row "mixed-$mode" "$mode" idle "1 MiB scan ×1"
done
mixed_row rt-alone "adaptive, RT alone" rt "4 KiB random ×4 at ${rt_rate}/s"
mixed_row rt-idle "adaptive, RT + IDLE scan" rt "4 KiB random ×4 at ${rt_rate}/s"
mixed_row rt-idle "adaptive, RT + IDLE scan" idle "1 MiB scan ×1"

# --- Goal checks (reported, never enforced). ---
verdict() { (($(calc "$1" 0))) && echo met || echo "not met"; }
a99=$(lf mixed-adaptive rt p99_us); p99=$(lf mixed-pool rt p99_us); u99=$(lf mixed-pool_unbound rt p99_us)
vs_unbound=$(calc "100 * (1 - $a99 / $u99)")
vs_pool=$(calc "100 * ($a99 / $p99 - 1)")
a_be=$(lf mixed-adaptive be mib_s); p_be=$(lf mixed-pool be mib_s); u_be=$(lf mixed-pool_unbound be mib_s)
best_be=$(calc "$p_be > $u_be ? $p_be : $u_be"); best_be_mode=$( (($(calc "$p_be > $u_be" 0))) && echo pool || echo pool_unbound)
be_gap=$(calc "100 * (1 - $a_be / $best_be)")
sa99=$(srv mixed-adaptive rt p99_us); sp99=$(srv mixed-pool rt p99_us); su99=$(srv mixed-pool_unbound rt p99_us)
svs_unbound=$(calc "100 * (1 - $sa99 / $su99)")
svs_pool=$(calc "100 * ($sa99 / $sp99 - 1)")
salone99=$(srv rt-alone rt p99_us); sidle99=$(srv rt-idle rt p99_us)
alone99=$(lf rt-alone rt p99_us); idle99=$(lf rt-idle rt p99_us); mixed99=$a99
goals="| check | figures | goal | |
| --- | --- | --- | --- |
| 4 KiB RT p99, adaptive vs pool_unbound (mixed) | $a99 vs $u99 µs: $(change "$a99" "$u99") | ≥ 25% lower | $(verdict "$vs_unbound >= 25") |
| 4 KiB RT p99, adaptive vs pool (mixed) | $a99 vs $p99 µs: $(change "$a99" "$p99") | no worse | $(verdict "$vs_pool <= 0") |
| 4 KiB RT p99 at the server, adaptive vs pool_unbound (mixed) | $sa99 vs $su99 µs: $(change "$sa99" "$su99") | ≥ 25% lower | $(verdict "$svs_unbound >= 25") |
| 4 KiB RT p99 at the server, adaptive vs pool (mixed) | $sa99 vs $sp99 µs: $(change "$sa99" "$sp99") | no worse | $(verdict "$svs_pool <= 0") |
| 128 KiB BE MiB/s, adaptive vs the better pool mode ($best_be_mode) | $a_be vs $best_be MiB/s: $(change "$a_be" "$best_be") | within 5% | $(verdict "$be_gap <= 5") |
| 4 KiB RT p99 under adaptive: alone → + IDLE scan → + IDLE scan + BE streams | $alone99 → $idle99 → $mixed99 µs (+IDLE: $(change "$idle99" "$alone99")) | reported | |
| the same at the server | $salone99 → $sidle99 → $sa99 µs (+IDLE: $(change "$sidle99" "$salone99")) | reported | |"

# --- The plot: the sweep, throughput and p99 against request size. ---
gnuplot <<PLOT
set terminal pngcairo size 1200,480 font ",10"
set output "$png"
set multiplot layout 1,2 title "8 RT clients, random reads of one ${blob_mib} MiB blob (verityd --dispatch)"
set logscale x 2
set xlabel "request size (KiB)"
set key top left
set grid
set xrange [3.5:600]
set xtics (4,8,16,32,64,128,256,512)
set ylabel "MiB/s"
plot "$work/sweep.dat" u 1:2 w lp t "inline", "" u 1:4 w lp t "pool", "" u 1:6 w lp t "pool\\\\_unbound", "" u 1:8 w lp t "adaptive"
set ylabel "p99 latency (µs)"
set logscale y 10
plot "$work/sweep.dat" u 1:3 w lp t "inline", "" u 1:5 w lp t "pool", "" u 1:7 w lp t "pool\\\\_unbound", "" u 1:9 w lp t "adaptive"
unset multiplot
PLOT

dispatch_lines=$(for mode in "${mixed_modes[@]}"; do
  grep -o 'dispatch:.*' "$work/mixed-$mode.log" | sed "s/^/--dispatch=$mode → /"; done)
mixed_stats=$(for mode in "${mixed_modes[@]}"; do
  echo "# --dispatch=$mode"; grep -o 'stats .*' "$work/mixed-$mode.log"; done)
report=$(cat <<REPORT
# Read dispatch: inline, pinned pool, unbound pool, adaptive

Command: \`tests/bench/dispatch_bench.sh $seconds $blob_mib\` on $(date -u +%Y-%m-%d), $(nproc) CPUs
($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), Linux $(uname -r); one
${blob_mib} MiB random blob (SHA-256, 4 KiB blocks) in a fresh store, page cache warm, read
over loopback by \`tests/bench/dispatch_load\` (one thread and one connection per client, each
client synchronous, no client-side verification). One server start per run; each run has a
${warmup} s warm-up, then ${seconds} s measured (sweep) or ${mixed_seconds} s (mixed). Latency is
request start to last message; MiB/s = 2^20 bytes/s. Queue wait is the server's own figure
(its shutdown \`stats\` lines, warm-up included), counted per verification chunk (a request
is split into chunks of 256 KiB, growing up to 2 MiB while its client keeps up).

The load generator shares the $(nproc) CPUs with the server, and its client threads (up to 8)
outnumber them: a client's latency includes waiting for a CPU on its own side, and a heavier
load in another class (the BE streams and the IDLE scan receive hundreds of MiB/s) takes CPU
from the RT clients too. The server's own view is its Read latency per class (arrival to the
end of the call, \`verityd_rpc_duration_seconds\`, estimated from histogram buckets √2 apart)
and the pool's queue wait.

Start-up lines (\`dispatch:\`) of the mixed runs:

\`\`\`
$dispatch_lines
\`\`\`

## Sweep: 8 RT clients, random reads, by request size

$sweep_table

![throughput and p99 against request size]($(basename "$png"))

The RT inline limit the online tuner held at the end of each adaptive run (it starts from the
calibration and moves one power of two per three agreeing 1 s periods; limits between 4 and
64 KiB), and when it last changed:

$tuned_table

In the mixed runs (adaptive): RT $(final_limit mixed-adaptive rt) bytes (last change after
$(settled_after mixed-adaptive rt) s), BE $(final_limit mixed-adaptive be) bytes (after
$(settled_after mixed-adaptive be) s). Its changes there:

\`\`\`
$(grep -o 'dispatch: [a-z]* inline limit.*' "$work/mixed-adaptive.log" || echo "(none)")
\`\`\`

The server's Read latency and the pool's queue wait of the RT requests in the same runs
(inline has no queue):

$queue_table

## Mixed: 4 KiB RT random + 128 KiB BE streams + 1 MiB IDLE scan

Loads (CLASS:KIND:SIZE:CLIENTS) $(echo "$mixed_load" | sed 's/,/, /g'), all at once. The
last rows run the RT part under adaptive alone, and with only the IDLE scan. "Served by the
pool" is the share of that class's requests the server sent to the pool (its dispatch stats).

$mixed_table

Pool queue wait per class:

$mixed_qw

## Goals

$goals

The server's shutdown stats of the mixed runs:

\`\`\`
$mixed_stats
\`\`\`
REPORT
)
echo "$report"
echo "$report" >"$out"
