#!/usr/bin/env bash
# Scaling out: three verityd replicas, each with its own store filled by the same --import_dir,
# behind one multi-address gRPC target (what dns:/// of a headless Service resolves to). The CLI
# balances over all three (each one's verityd_read_bytes_total grows), and a parallel get of a
# 64 MiB blob survives SIGKILL of a replica mid-transfer: the cut streams resume on the others
# and the output is byte-identical.
# Usage: scale_out_test.sh VERITYD VERITY
set -euo pipefail
source "$(dirname "$0")/verityd_test_lib.sh"
init_test scale_out_test "$1" "$2"
for var in $(compgen -v VERITYD_) VERITY_SERVER; do unset "$var"; done
command -v curl >/dev/null || { echo "FAIL: curl is missing (scripts/setup.sh installs it)"; exit 1; }

# The import: one 64 MiB blob and a few small ones, new each run.
imp=$work/import
mkdir -p "$imp/sub"
big_size=$((64 * 1048576))
head -c "$big_size" /dev/urandom >"$imp/big"
head -c 1 /dev/urandom >"$imp/one"
head -c 4097 /dev/urandom >"$imp/page"
head -c 20000 /dev/urandom >"$imp/sub/small"

# ---- three replicas; start_server returns once each has imported and serves
pids=() ports=() mports=()
for i in 1 2 3; do
  start_server "replica$i" --listen=127.0.0.1:0 --store_dir="$work/store$i" --import_dir="$imp"
  pids+=("$server_pid") ports+=("$server_port") mports+=("$metrics_port")
  check "replica $i imported 4 files" grep -q 'serving 4 blobs' "$server_log"
done
# gRPC's ipv4: scheme lists every address, as DNS does for a headless Service.
target="ipv4:127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}"
srv=(--server="$target")
echo "target $target"

# read_bytes K: replica K's verityd_read_bytes_total, all priority classes.
read_bytes() {
  curl -sf "http://127.0.0.1:${mports[$1]}/metrics" |
    awk '$1 ~ /^verityd_read_bytes_total[{]/ {s += $2} END {printf "%.0f\n", s}'
}
active_streams() {
  curl -sf "http://127.0.0.1:${mports[$1]}/metrics" | awk '$1 == "verityd_active_streams" {print $2}'
}

# ---- every replica takes part
for i in $(seq 10); do
  for f in one page sub/small; do
    expect_exit 0 "get $f ($i)" vc get "${srv[@]}" "$f" -o "$work/out"
    check "get $f ($i) is byte-identical" cmp -s "$imp/$f" "$work/out"
  done
done
# Round robin picks among the replicas a client is connected to already, and each `verity`
# process connects anew: its first calls go to the replicas whose handshake finished first. So
# a get's six streams can all miss a replica that was slower to answer (seen under ASan); up to
# ten parallel gets give every replica its turn.
all_served() {
  local k
  for k in 0 1 2; do [[ $(read_bytes "$k") -gt 0 ]] || return 1; done
}
for i in $(seq 10); do
  expect_exit 0 "parallel get of big ($i)" vc get "${srv[@]}" --parallel=6 big -o "$work/out"
  check "parallel get of big ($i) is byte-identical" cmp -s "$imp/big" "$work/out"
  ((i >= 2)) && all_served && break
done
rm -f "$work/out"
for k in 0 1 2; do
  bytes=$(read_bytes "$k")
  echo "replica $((k + 1)) read $bytes bytes"
  check "replica $((k + 1)) served reads (verityd_read_bytes_total > 0)" [ "${bytes:-0}" -gt 0 ]
done

# ---- SIGKILL of a replica amid parallel gets: six in a row, in the background, each
# checked against the original; replica 2 dies while it streams part of one of them.
victim=1
before=($(read_bytes 0) $(read_bytes 2))
gets_in_background 6 "$imp/big" "${srv[@]}" --parallel=4 big
streaming=no
for _ in $(seq 300); do
  n=$(active_streams "$victim" || true)
  if [[ ${n:-0} -ge 1 && -s $work/gets.results ]]; then streaming=yes; break; fi
  sleep 0.02
done
kill -9 "${pids[$victim]}"
check "replica 2 was streaming when it was killed" [ "$streaming" = yes ]
wait_for_exit "${pids[$victim]}" 10 || true
check_gets 6 "around the kill"
after=($(read_bytes 0) $(read_bytes 2))
check "the surviving replicas served the rest" \
  [ $((after[0] - before[0] + after[1] - before[1])) -ge $((6 * big_size / 2)) ]

# ---- the dead address stays in the target: gets go to the live replicas
expect_exit 0 "get with one replica down" vc get "${srv[@]}" --parallel=4 big -o "$work/out"
check "get with one replica down is byte-identical" cmp -s "$imp/big" "$work/out"
expect_stop "replica 1" "${pids[0]}"
expect_stop "replica 3" "${pids[2]}"
