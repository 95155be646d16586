#!/usr/bin/env bash
# 4 KiB random reads at the gRPC limit: verityd's small reads against a bare gRPC C++ callback
# server answering 4 KiB out of memory (tests/bench/echo_server.cc), in one run, under one client
# harness (//tests/bench:dispatch_load: a thread and a connection per client, back-to-back reads
# at random block-aligned offsets). Rounds alternate: each runs every mode with 1 and with 8
# clients, the mode order rotating from round to round; each figure is reported as the median
# and worst of the rounds, and as per-round ratios to the echo server's unary call; with the
# reads verityd refuses (RESOURCE_EXHAUSTED: --max_call_rate, whose default two of the modes
# keep). The SDK modes read each 4 KiB with one ReadSmall call (its tree is cached). Writes docs/bench-small-reads.md. Reports figures; never fails on a goal.
# Usage: tests/bench/small_read_bench.sh [ROUNDS=7] [SECONDS=5] [BLOB_MIB=256] [OUT=docs/bench-small-reads.md]
#   Smoke run: tests/bench/small_read_bench.sh 2 1 32 /tmp/bench-small-reads.md
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/bench_lib.sh
rounds=${1:-7}
seconds=${2:-5}
blob_mib=${3:-256}
out=${4:-docs/bench-small-reads.md}
clients=(1 8)
read_size=4096
load_at_start=$(load_average)

# The modes, one a line: NAME|TARGET|VERITYD FLAGS|LABEL. TARGET is a dispatch_load --target;
# an echo_* one reads from the echo server, any other from a verityd started with VERITYD FLAGS
# (none: the defaults; one server per distinct set of flags, each holding the blob). The first
# mode is the baseline every ratio is taken to.
modes=(
  "echo_unary|echo_unary||bare gRPC unary echo"
  "echo_stream|echo_stream||bare gRPC one-message stream"
  "verified|verityd_verified|--max_call_rate=0|verityd, SDK verifying each read (tree cached)"
  "unverified|verityd|--max_call_rate=0|verityd Read stream, client not verifying"
  "small|verityd_small|--max_call_rate=0|verityd ReadSmall (unary), client not verifying"
  "verified_default|verityd_verified||verityd default flags, SDK verifying each read (tree cached)"
  "unverified_default|verityd||verityd default flags, Read stream, client not verifying"
)

bench_binaries //server:verityd //client/cli:verity //tests/bench:dispatch_load \
  //tests/bench:echo_server
verityd=$bin/server/verityd
verity=$bin/client/cli/verity
load=$bin/tests/bench/dispatch_load
echo_server=$bin/tests/bench/echo_server
work=$(mktemp -d)
declare -A server_addr  # by VERITYD FLAGS ("default" for none), "echo" for the echo server
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

start() {  # KEY LOG COMMAND...: a server; sets server_addr[KEY] once it is serving
  local key=$1 log=$2
  shift 2
  "$@" 2>"$log" &
  pids+=($!)
  for _ in $(seq 600); do grep -q "serving" "$log" 2>/dev/null && break; sleep 0.05; done
  server_addr[$key]=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$log" | cut -d' ' -f3)
  [[ -n ${server_addr[$key]} ]] || { cat "$log" >&2; exit 1; }
}
start_verityd() {  # FLAGS: a verityd with FLAGS (word-split) on its own store, the blob put
  local n=${#server_addr[@]}
  # shellcheck disable=SC2086
  start "${1:-default}" "$work/verityd$n.log" "$verityd" --listen=127.0.0.1:0 \
    --metrics_listen=127.0.0.1:0 --store_dir="$work/store$n" $1
  "$verity" put --server="${server_addr[${1:-default}]}" "$work/blob" >/dev/null
}
field() { grep -o " $2=[^ ]*" "$1" | cut -d= -f2; }  # FILE KEY: a dispatch_load line's field

head -c $((blob_mib << 20)) /dev/urandom >"$work/blob"
digest=$("$verity" digest "$work/blob" | cut -d' ' -f1)
start echo "$work/echo.log" "$echo_server" --listen=127.0.0.1:0 --bytes=$((blob_mib << 20))
for mode in "${modes[@]}"; do
  IFS='|' read -r _ target flags _ <<<"$mode"
  [[ $target == echo_* || -v server_addr[${flags:-default}] ]] || start_verityd "$flags"
done

# run MODE CLIENTS OUT: one dispatch_load run of MODE's target; fails if a read failed for
# another reason than a refusal (RESOURCE_EXHAUSTED).
run() {
  local name target flags server
  IFS='|' read -r name target flags _ <<<"$1"
  if [[ $target == echo_* ]]; then server=(--server="${server_addr[echo]}" --echo_bytes=$((blob_mib << 20)))
  else server=(--server="${server_addr[${flags:-default}]}" --digest="$digest"); fi
  "$load" --target="$target" "${server[@]}" --seconds="$seconds" --warmup_seconds=1 \
    --load="none:random:$read_size:$2" >"$3" 2>"$3.err" ||
    [[ -s $3 && $(field "$3" errors) == "$(field "$3" refused)" ]]
}

declare -A reads p50 p99 refused retries tree_blocks  # by NAME.CLIENTS: one figure per round
for ((r = 0; r < rounds; r++)); do
  for ((i = 0; i < ${#modes[@]}; i++)); do  # round r starts with mode r: none is always first
    mode=${modes[(i + r) % ${#modes[@]}]}
    name=${mode%%|*}
    for c in "${clients[@]}"; do
      run "$mode" "$c" "$work/run" || {
        echo "$name, $c clients: reads failed" >&2; cat "$work/run" "$work/run.err" >&2; exit 1; }
      reads[$name.$c]+=" $(field "$work/run" reads_s)"
      p50[$name.$c]+=" $(field "$work/run" p50_us)"
      p99[$name.$c]+=" $(field "$work/run" p99_us)"
      refused[$name.$c]+=" $(field "$work/run" refused)"
      retries[$name.$c]+=" $(field "$work/run" retries)"
      tree_blocks[$name.$c]+=" $(field "$work/run" tree_blocks)"
    done
  done
  echo "round $((r + 1)) of $rounds done" >&2
done

sum() { tr -s ' ' '\n' | grep . | awk '{s += $1} END {print s + 0}'; }
baseline=${modes[0]%%|*}
# One table row for MODE with C clients: medians and worsts, per-round ratios to the baseline,
# refusals and the SDK's retries.
table_row() {
  local name label key=$2 vs_reads vs_p99
  IFS='|' read -r name _ _ label <<<"$1"
  key=$name.$2
  vs_reads=$(ratios "${reads[$key]}" "${reads[$baseline.$2]}")
  vs_p99=$(ratios "${p99[$key]}" "${p99[$baseline.$2]}")
  printf '| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f | %.0f (%.0f) | %.0f (%.0f) |\n' \
    "$label" "$(median <<<"${reads[$key]}")" "$(minimum <<<"${reads[$key]}")" \
    "$(median <<<"${p50[$key]}")" "$(maximum <<<"${p50[$key]}")" \
    "$(median <<<"${p99[$key]}")" "$(maximum <<<"${p99[$key]}")" \
    "$(median <<<"$vs_reads")" "$(minimum <<<"$vs_reads")" \
    "$(median <<<"$vs_p99")" "$(maximum <<<"$vs_p99")" \
    "$(median <<<"${refused[$key]}")" "$(maximum <<<"${refused[$key]}")" \
    "$(median <<<"${retries[$key]}")" "$(maximum <<<"${retries[$key]}")"
}
tables() {
  local c mode
  for c in "${clients[@]}"; do
    echo
    echo "$c client$( ((c > 1)) && echo s):"
    echo
    echo "| mode | reads/s median | reads/s worst | p50 µs median | p50 worst | p99 µs median | p99 worst | reads/s vs echo unary, median | worst | p99 vs echo unary, median | worst | refused per run, median (worst) | SDK retries per run, median (worst) |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    for mode in "${modes[@]}"; do table_row "$mode" "$c"; done
  done
}
round_lists() {
  local c mode name label
  for c in "${clients[@]}"; do
    for mode in "${modes[@]}"; do
      IFS='|' read -r name _ _ label <<<"$mode"
      echo "- $label, $c: reads/s${reads[$name.$c]}; p99 µs${p99[$name.$c]};" \
        "refused${refused[$name.$c]}"
    done
  done
}
tree_blocks_note() {
  local mode name target c t=0
  for mode in "${modes[@]}"; do
    IFS='|' read -r name target _ <<<"$mode"
    [[ $target == verityd_verified ]] || continue
    for c in "${clients[@]}"; do t=$((t + $(sum <<<"${tree_blocks[$name.$c]}"))); done
  done
  echo "Tree blocks the SDK clients received after their warm-up fetch, over every run: $t."
}
load_at_end=$(load_average)
machine_line="$(machine), load average $load_at_start at the start and $load_at_end at the end"
cat >"$out" <<EOF
# Small reads at the gRPC limit

Command: \`tests/bench/small_read_bench.sh $rounds $seconds $blob_mib\` (${machine_line}).

$(shared_note $load_at_start $load_at_end)

4 KiB reads at random block-aligned offsets of one ${blob_mib} MiB random blob, back to back, by
1 and by 8 clients, each a thread with its own connection, over loopback, all driven by
\`//tests/bench:dispatch_load\` (its \`--target\` picks what is read). The baseline is
\`//tests/bench:echo_server\`: a gRPC C++ callback server (the API verityd uses) answering each
read with 4 KiB copied out of a ${blob_mib} MiB buffer in memory, with no store, no
verification and no limits, as a unary call and as a server stream of one message (written
with the status, \`StartWriteAndFinish\`). verityd serves from its store (the blob in the page
cache) with its default flags, or with \`--max_call_rate=0\` where the mode says so. In the SDK
modes each client thread is one \`verity::sdk::Client\` (\`ReadRange\`) that first fetched the
whole blob, so its tree cache holds every tree block: each read then fits one message and is one
ReadSmall call (unary) whose 4 KiB the client verifies against the cached tree. In the Read
stream and ReadSmall modes the client verifies nothing (it asks for no tree blocks); the server
still verifies every block it reads.

$rounds rounds; each runs every mode with 1 and then 8 clients, ${seconds} s measured after 1 s of
warm-up, the order of the modes rotating from round to round. Median and worst of the rounds;
the ratios are per round (a mode's figure over the echo unary call's with as many clients in
the same round): their median, and the worst of them (reads/s: the lowest; p99: the highest).
Refused: reads that ended in RESOURCE_EXHAUSTED (\`--max_call_rate\`, per connection), warm-up
included, all clients together; the SDK backs off and retries those (its retried streams are
counted apart: a refusal it retried is not in "refused"), the bare Read stream does not.
$(tables)

Rounds, in round order:
$(round_lists)

$(tree_blocks_note)
EOF
cat "$out"
