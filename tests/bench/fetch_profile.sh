#!/usr/bin/env bash
# Where the CPU of a verified fetch goes, stage by stage, on this machine: `perf record -a`
# (cpu-clock, 2,000 samples a second per CPU, no hardware counters needed) over ROUNDS fetches,
# each sample put in one stage by its thread (the client `verity`, the server's threads, the
# kernel's workers, idle) and its function (SHA-256, the kernel's copies to and from user
# memory, the hypervisor's interrupt enabling, the rest; a thread of no process listed is the
# client's). Reported per byte fetched: CPU ns and
# cycles at the CPU's clock (/proc/cpuinfo MHz; a virtual CPU has no cycle counter). Two
# workloads: `blob`, `verity get DIGEST > /dev/null` of a 512 MiB random blob, and `tree`,
# `verity get NAME -o DIR` of 10,000 files of 16 KiB in 100 folders (`sync` before each).
# verityd runs on a file store in a new folder on the same disk; the page cache holds the blobs.
# Reports figures; never fails on a goal. Appends its tables to OUT.
# Usage: tests/bench/fetch_profile.sh [ROUNDS=3] [OUT=docs/bench-fetch-profile.md]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/bench_lib.sh
rounds=${1:-3}
out=${2:-docs/bench-fetch-profile.md}
load_at_start=$(load_average)

command -v perf >/dev/null || apt-get install -y -q linux-perf >/dev/null
bench_binaries //server:verityd //client/cli:verity
verityd=$bin/server/verityd verity=$bin/client/cli/verity
work=$(mktemp -d /var/tmp/fetch-profile.XXXXXX)
server_pid=""
trap 'kill $server_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

"$verityd" --listen=127.0.0.1:0 --store_dir="$work/store" --metrics_listen= 2>"$work/verityd.log" &
server_pid=$!
for _ in $(seq 400); do grep -q "serving" "$work/verityd.log" 2>/dev/null && break; sleep 0.05; done
srv=--server=$(sed -nE 's/.*listening on ([^ ]*).*/\1/p' "$work/verityd.log" | head -n 1)
mhz=$(awk -F: '/cpu MHz/ {print $2; exit}' /proc/cpuinfo)

head -c $((512 << 20)) /dev/urandom >"$work/blob"
digest=$("$verity" put "$srv" "$work/blob" | cut -d' ' -f1)
small=$work/small
for d in $(seq -w 0 99); do
  mkdir -p "$small/d$d"
  for f in $(seq -w 0 99); do head -c 16384 /dev/urandom >"$small/d$d/f$f"; done
done
"$verity" put "$srv" "$small" --name=profile/small >/dev/null
rm -f "$work/blob"
rm -rf "$small"
sync

prepare_blob() { :; }
blob_fetch() { "$verity" get "$srv" "$digest" >/dev/null; }
prepare_tree() {
  rm -rf "$work/out"
  sync
}
tree_fetch() { "$verity" get "$srv" profile/small -o "$work/out" >/dev/null; }

# samples WORKLOAD: ROUNDS fetches of WORKLOAD, each alone under perf (its preparation is not
# recorded), after one warm-up (blobs in the page cache); prints "SAMPLES;TID:COMM;DSO;SYMBOL"
# lines of all of them, and sets wall to the seconds recorded.
samples() {
  local t0 t1 round
  "prepare_$1"
  "$1_fetch"
  wall=0
  for round in $(seq "$rounds"); do
    "prepare_$1"
    t0=$(date +%s.%N)
    perf record -q -F 2000 -a -o "$work/perf.$round" -- bash -c "
      $(declare -f "$1_fetch"); verity=$verity srv=$srv digest=$digest work=$work; $1_fetch" \
      2>/dev/null
    t1=$(date +%s.%N)
    wall=$(awk -v w="$wall" -v a="$t0" -v b="$t1" 'BEGIN {print w + b - a}')
  done
  for round in $(seq "$rounds"); do
    perf report -i "$work/perf.$round" --no-children --sort pid,dso,sym -g none --stdio \
      -F sample,pid,dso,sym -t ';' 2>/dev/null | grep -v '^#' | grep .
  done >"$work/samples"
}

# profile WORKLOAD BYTES: the table rows of ROUNDS fetches of WORKLOAD.
profile() {
  local wall
  samples "$1"
  <"$work/samples" \
    awk -F';' -v bytes="$(($2 * rounds))" -v mhz="$mhz" \
      -v server="$(ls /proc/"$server_pid"/task | tr '\n' ';')" \
      -v wall="$wall" '
      function trim(s) { gsub(/^ +| +$/, "", s); return s }
      function stage(thread, dso, sym) {  # thread: "TID:COMM"
        tid = thread; sub(/:.*/, "", tid); comm = thread; sub(/^[^:]*:/, "", comm)
        side = index(";" server, ";" tid ";") ? "server" : comm == "swapper" ? "idle" : \
          comm ~ /^(kworker|ksoftirqd|kswapd|jbd2|kdamond|rcu)/ ? "kernel workers" : \
          comm ~ /^(perf|bash|rm|sync|seq|sleep|date)$/ ? "the benchmark (perf, rm, sync)" : \
          "client"
        if (side != "client" && side != "server") return side
        if (sym ~ /[Ss]ha256|sha256_block/) return side ": SHA-256"
        if (sym ~ /copy_(folio_)?(to|from)_iter|copy_user|memmove|memcpy/) return side ": copies"
        if (sym ~ /pvm_irq_enable/) return side ": interrupts enabled (hypervisor)"
        return side ": the rest, " (dso ~ /kernel/ ? "kernel" : "user")
      }
      { n = trim($1) + 0; samples[stage(trim($2), trim($3), trim($4))] += n; total += n }
      END {
        seconds = total / 2000
        for (s in samples) {
          ns = samples[s] / 2000 * 1e9 / bytes
          printf "| %s | %.1f%% | %.3f | %.2f |\n", s, 100 * samples[s] / total, ns, ns * mhz / 1000
        }
        printf "| **all CPUs, idle included** (%.2f s of wall time) | 100%% | %.3f | %.2f |\n", \
          wall, seconds * 1e9 / bytes, seconds * 1e9 / bytes * mhz / 1000
      }' | sort -t'|' -k3 -r -g
}

# top_kernel: the six kernel functions with the most samples outside verityd and idle, in the
# last workload profiled, with their share of its samples.
top_kernel() {
  awk -F';' -v server="$(ls /proc/"$server_pid"/task | tr '\n' ';')" '
    { total += $1; tid = $2; gsub(/^ +|:.*/, "", tid) }
    $3 ~ /kernel/ && !index(";" server, ";" tid ";") && $2 !~ /swapper/ {
      sym = $4; gsub(/^ *\[k\] +| +$/, "", sym); n[sym] += $1 }
    END { for (s in n) printf "%.1f%% %s\n", 100 * n[s] / total, s }' "$work/samples" |
    sort -g -r | head -n 6 | awk '{printf "%s`%s` %s", sep, $2, $1; sep = ", "} END {print ""}'
}

blob_rows=$(profile blob $((512 << 20)))
tree_rows=$(profile tree $((10000 * 16384)))
tree_kernel=$(top_kernel)

{
  echo "# Where a verified fetch's CPU goes"
  echo
  echo "Command: \`tests/bench/fetch_profile.sh $rounds\` ($(machine), load average" \
    "$load_at_start at the start and $(load_average) at the end, cpu MHz $mhz): $rounds" \
    "fetches of each workload under \`perf record -a -F 2000\` (cpu-clock), after one warm-up."
  shared_note $load_at_start $(load_average)
  echo
  echo "Per byte fetched. A stage is a thread's side (client: \`verity\`; server: verityd's"
  echo "threads; idle: no thread ran) and its function. Cycles are CPU time at the clock above."
  for w in blob tree; do
    echo
    if [[ $w == blob ]]; then
      echo "## \`verity get DIGEST > /dev/null\`, one 512 MiB blob (SHA-256, 4 KiB blocks)"
    else
      echo "## \`verity get NAME -o DIR\`, 10,000 files of 16 KiB (sync before each)"
    fi
    echo
    echo "| stage | share of samples | CPU ns/byte | cycles/byte |"
    echo "| --- | --- | --- | --- |"
    if [[ $w == blob ]]; then echo "$blob_rows"; else echo "$tree_rows"; fi
  done
  echo
  echo "The tree's kernel functions with the most samples outside verityd and idle: $tree_kernel."
} >"$out"
cat "$out"
