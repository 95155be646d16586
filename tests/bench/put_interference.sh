#!/usr/bin/env bash
# 4 KiB RT reads while other clients Put 64 MiB blobs: does the Put path (hashing, writing,
# fsync, rename, Delete) take the gRPC threads that verify RT reads inline? Paced RT reads
# (4 clients x 250/s, dispatch_load) run against a warm blob while PUTTERS loops put a fresh
# 64 MiB file and delete it again. Reports the RT reads' latency at the client and at the server
# (verityd_rpc_duration_seconds via the shutdown stats lines), and the Puts completed. With a
# second verityd binary (and its verity CLI), the two run alternately, ROUNDS times each, in one
# run on one machine. Writes OUT (markdown). Reports figures; never fails on a goal.
# Usage: tests/bench/put_interference.sh [SECONDS=20] [ROUNDS=3] [OUT=docs/bench-put-interference.md]
#          [BEFORE_VERITYD BEFORE_VERITY]
#   Smoke run: tests/bench/put_interference.sh 3 1 /tmp/put-interference.md
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-20}
rounds=${2:-3}
out=${3:-docs/bench-put-interference.md}
before_verityd=${4:-}
before_verity=${5:-}
putters=2
put_mib=64
rt_load=rt:random:4096:4:250

bazel build //server:verityd //client/cli:verity //tests/bench:dispatch_load >/dev/null 2>&1
load=$PWD/bazel-bin/tests/bench/dispatch_load
declare -A verityd_of verity_of
variants=(current)
verityd_of[current]=$PWD/bazel-bin/server/verityd
verity_of[current]=$PWD/bazel-bin/client/cli/verity
if [[ -n $before_verityd ]]; then
  variants=(before current)
  verityd_of[before]=$before_verityd
  verity_of[before]=${before_verity:?give the CLI that goes with BEFORE_VERITYD}
fi
# The store must be on a disk, where fsync costs what it costs in production.
work=$(mktemp -d "${BENCH_DIR:-$PWD}/.put-interference.XXXXXX")
server_pid=
loop_pids=()
cleanup() {
  for p in "${loop_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_server() {  # VARIANT LOG: sets server_pid and addr
  rm -rf "$work/store"
  "${verityd_of[$1]}" --listen=127.0.0.1:0 --metrics_listen= --store_dir="$work/store" \
    --max_streams=4096 2>"$2" &
  server_pid=$!
  for _ in $(seq 200); do grep -q "serving" "$2" 2>/dev/null && break; sleep 0.05; done
  addr=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$2" | cut -d' ' -f3)
  [[ -n $addr ]] || { cat "$2" >&2; exit 1; }
}
stop_server() { kill "$server_pid"; wait "$server_pid" || true; server_pid=; }

# Putter I: put its own file and delete it again, until killed; one line per completed Put.
put_loop() {  # VARIANT I
  local verity=${verity_of[$1]} file=$work/put-$2 digest
  digest=$("$verity" digest "$file" | cut -d' ' -f1)
  while true; do
    "$verity" put --server="$addr" "$file" >/dev/null && echo put >>"$work/puts-$2"
    "$verity" rm --server="$addr" "$digest" >/dev/null
  done
}

# One run: RUN VARIANT PUTTERS.
run() {
  local name=$1 variant=$2 n=$3
  start_server "$variant" "$work/$name.log"
  digest=$("${verity_of[$variant]}" put --server="$addr" "$work/blob" | cut -d' ' -f1)
  rm -f "$work"/puts-*
  loop_pids=()
  for ((i = 0; i < n; i++)); do
    put_loop "$variant" "$i" &
    loop_pids+=($!)
  done
  "$load" --server="$addr" --digest="$digest" --seconds="$seconds" --warmup_seconds=2 \
    --load="$rt_load" >"$work/$name.out" || { cat "$work/$name.out" >&2; exit 1; }
  for p in "${loop_pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  loop_pids=()
  pkill -f -- "--server=$addr" 2>/dev/null || true
  stop_server
  { cat "$work"/puts-* 2>/dev/null || true; } | wc -l >"$work/$name.puts"
}

lf() { grep "^load class=rt " "$work/$1.out" | grep -o " $2=[^ ]*" | cut -d= -f2; }
srv() {  # NAME METHOD CLASS KEY: the server's own latency
  local v
  v=$(grep -o "stats rpc method=$2 class=$3 code=OK .*" "$work/$1.log" | grep -o " $4=[^ ]*" | cut -d= -f2 || true)
  echo "${v:--}"
}

head -c $((put_mib << 20)) /dev/urandom >"$work/blob"
for ((i = 0; i < putters; i++)); do head -c $((put_mib << 20)) /dev/urandom >"$work/put-$i"; done

table="| round | binary | putters | Puts done | RT reads | client p50 µs | client p99 µs | client p999 µs | server p50 µs | server p99 µs | server p999 µs |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for ((r = 1; r <= rounds; r++)); do
  for v in "${variants[@]}"; do
    for n in 0 "$putters"; do
      name=$v-$n-$r
      run "$name" "$v" "$n"
      table+=$'\n'"| $r | $v | $n | $(cat "$work/$name.puts") | $(lf "$name" requests) | $(lf "$name" p50_us) | $(lf "$name" p99_us) | $(lf "$name" p999_us) | $(srv "$name" Read rt p50_us) | $(srv "$name" Read rt p99_us) | $(srv "$name" Read rt p999_us) |"
      echo "$v $n $(lf "$name" p99_us) $(srv "$name" Read rt p99_us) $(cat "$work/$name.puts")" >>"$work/summary"
      echo "$name done" >&2
    done
  done
done

# Means over the rounds: BINARY PUTTERS -> client p99, server p99, Puts per run.
summary="| binary | putters | mean client p99 µs | mean server p99 µs | mean Puts per run |
| --- | --- | --- | --- | --- |"
for v in "${variants[@]}"; do
  for n in 0 "$putters"; do
    summary+=$'\n'"| $v | $n | $(awk -v v="$v" -v n="$n" '$1 == v && $2 == n {c += $3; s += $4; p += $5; k++}
      END {printf "%.0f | %.0f | %.1f", c / k, s / k, p / k}' "$work/summary") |"
  done
done

cat >"$out" <<EOF
# RT reads during concurrent Puts

\`tests/bench/put_interference.sh $seconds $rounds $out${before_verityd:+ BEFORE_VERITYD BEFORE_VERITY}\`, on $(nproc) CPUs
($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(date -u +%Y-%m-%d).

Each run: a fresh store on disk, a warm 64 MiB blob read by 4 RT clients, each 250 random 4 KiB
reads per second (paced, latency counted from each read's scheduled start), for ${seconds} s
after a 2 s warm-up; meanwhile ${putters} clients in a loop Put a 64 MiB file and delete it
again (or none, the baseline row). "server" is verityd's own Read latency
(verityd_rpc_duration_seconds, interpolated within its buckets) from the shutdown stats lines;
"Puts" counts the Puts completed during the run.

$summary

Every run:

$table
EOF
echo "wrote $out" >&2
