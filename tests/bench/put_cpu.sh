#!/usr/bin/env bash
# Where `verity put DIR` of many small files spends its CPU, against `cp -a DIR DEST && sync` of
# the same tree on the same disk: ROUNDS alternating rounds of each, every one timed after a
# `sync`, each put into an empty store of a new verityd. Reports per round the wall time and the
# CPU seconds (user + system) of the client, of verityd (from /proc/PID/stat, its start-up
# excluded) and of cp and sync. Nothing is deleted between rounds: ext4's inode allocation is
# slower for a few minutes after many deletes (docs/bench-trees.md), and the rounds would pay
# for one another's. Prints a Markdown section; never fails on a figure.
# Usage: tests/bench/put_cpu.sh [ROUNDS=5] [FILES=10000]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/bench_lib.sh
rounds=${1:-5} files=${2:-10000}
need_gnu_time
bench_binaries //server:verityd //client/cli:verity
verityd=$bin/server/verityd verity=$bin/client/cli/verity
work=$(mktemp -d /var/tmp/put-cpu.XXXXXX)
pid=""
trap 'kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
load_at_start=$(load_average)

tree=$work/src
for ((i = 0; i < files; i++)); do
  ((i % 100 == 0)) && mkdir -p "$tree/d$((i / 100))"
  head -c 16384 /dev/urandom >"$tree/d$((i / 100))/f$((i % 100))"
done
sync

ticks=$(getconf CLK_TCK)
cpu_of() { awk -v t="$ticks" '{printf "%.2f", ($14 + $15) / t}' "/proc/$1/stat"; }
# GNU time's "%e %U %S" line: wall, then user + system.
wall_of() { awk '{print $1}' "$1"; }
busy_of() { awk '{printf "%.2f", $2 + $3}' "$1"; }

declare -A col
put_round() {
  local dir=$work/put-$1 port before
  mkdir -p "$dir"
  "$verityd" --listen=127.0.0.1:0 --store_dir="$dir/store" --metrics_listen= 2>"$dir/log" &
  pid=$!
  for _ in $(seq 400); do grep -q "serving" "$dir/log" 2>/dev/null && break; sleep 0.05; done
  port=$(sed -nE 's/.*listening on [^:]*:([0-9]+).*/\1/p' "$dir/log" | head -n 1)
  before=$(cpu_of "$pid")
  sync
  /usr/bin/time -o "$dir/time" -f "%e %U %S" \
    "$verity" put --server="127.0.0.1:$port" "$tree" --name=bench/put >/dev/null 2>&1
  col[put_wall]+="$(wall_of "$dir/time") "
  col[put_client]+="$(busy_of "$dir/time") "
  col[put_server]+="$(awk -v a="$(cpu_of "$pid")" -v b="$before" 'BEGIN {printf "%.2f", a - b}') "
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
}
cp_round() {
  sync
  /usr/bin/time -o "$work/cp-time" -f "%e %U %S" \
    bash -c 'cp -a "$1" "$2" && sync' _ "$tree" "$work/cp-$1"
  col[cp_wall]+="$(wall_of "$work/cp-time") "
  col[cp_cpu]+="$(busy_of "$work/cp-time") "
}
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then put_round "$r"; cp_round "$r"; else cp_round "$r"; put_round "$r"; fi
done

row() { echo "| $1 | $(median <<<"${col[$2]}") | $(maximum <<<"${col[$2]}") | ${col[$2]% } |"; }
echo "\`tests/bench/put_cpu.sh $rounds $files\` on $(machine); load average at start $load_at_start, at end $(load_average)."
echo
echo "$files files of 16 KiB in folders of 100, seconds ($rounds alternating rounds):"
echo
echo "| | median | worst | rounds |"
echo "| --- | --- | --- | --- |"
row "\`verity put DIR\`, wall" put_wall
row "its client's CPU (user + system)" put_client
row "verityd's CPU" put_server
row "\`cp -a && sync\`, wall" cp_wall
row "its CPU" cp_cpu
per_round=$(ratios "${col[cp_wall]}" "${col[put_wall]}")
cpu_share=$(ratios "${col[put_client]}" "${col[cp_cpu]}")
echo
echo "cp / put, per round: $(median <<<"$per_round")x median, $(minimum <<<"$per_round")x worst. put's client alone spends $(median <<<"$cpu_share")x the CPU of cp and sync (median of the rounds)."
shared_note $load_at_start $(load_average)
