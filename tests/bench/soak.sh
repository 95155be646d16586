#!/usr/bin/env bash
# Soak: MINUTES of mixed Put/Read/Delete against one verityd with auth on, while faults are
# injected: gets SIGKILLed mid-stream, clients stopped (SIGSTOP) until the server's idle timeout
# cancels them, Puts cut off midway, calls with a wrong token, and a stored blob corrupted on
# disk (the next read is DATA_LOSS, the blob is quarantined and put again). Every minute it
# records the server's RSS, open fds and threads, and the operations done; they must stay flat.
# Not a test: it reports. Usage: tests/bench/soak.sh [MINUTES=30] [OUT=docs/soak.md]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/bench_lib.sh
minutes=${1:-30}
out=${2:-docs/soak.md}
bench_binaries //server:verityd //client/cli:verity
verityd=$bin/server/verityd
verity=$bin/client/cli/verity
work=$(mktemp -d /tmp/verityd-soak.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

token() { echo "$1-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"; }
read_token=$(token read)
write_token=$(token write)
admin_token=$(token admin)
printf 'read %s\nwrite %s\nadmin %s\n' "$read_token" "$write_token" "$admin_token" \
  >"$work/tokens"

"$verityd" --listen=127.0.0.1:0 --store_dir="$work/store" --metrics_listen= \
  --auth_tokens="$work/tokens" --on_corruption=quarantine --stream_idle_timeout=5s \
  2>"$work/verityd.log" &
server=$!
pids+=("$server")
for _ in $(seq 100); do grep -q "verityd: serving" "$work/verityd.log" && break; sleep 0.1; done
port=$(sed -nE 's/.*listening on [^ ]*:([0-9]+).*/\1/p' "$work/verityd.log" | head -n 1)
srv=(--server="127.0.0.1:$port" --timeout=30)
as() { local t=$1; shift; VERITY_TOKEN=$t timeout -k 5 120 "$verity" "$@"; }

# Files to put: sizes from 1 byte to 8 MiB; "big" is read and interrupted by the faults.
mkdir "$work/files"
for i in $(seq 0 15); do
  head -c $(((RANDOM % 8 + 1) * (1 << (i % 4 * 6)) + i)) /dev/urandom >"$work/files/f$i"
done
head -c $((64 << 20)) /dev/urandom >"$work/files/big"
as "$write_token" put "${srv[@]}" --name=big "$work/files/big" >/dev/null
big=$(as "$read_token" stat "${srv[@]}" big | sed -n 's/^digest: //p')

count() { echo 1 >>"$work/$1.count"; }
# Writer: puts under names (moving names), deletes by name or by digest.
writer() {
  while :; do
    local f=$work/files/f$((RANDOM % 16)) name=n$((RANDOM % 8))
    if as "$write_token" put "${srv[@]}" --name="$name" "$f" >/dev/null 2>&1; then count put
    else count put_failed; fi
    if ((RANDOM % 4 == 0)); then
      as "$write_token" rm "${srv[@]}" "n$((RANDOM % 8))" >/dev/null 2>&1 || true
      count delete
    fi
    if ((RANDOM % 16 == 0)); then
      local d
      d=$(as "$read_token" ls "${srv[@]}" 2>/dev/null | awk '$2 < 1000000 {print $1}' | head -n 1)
      [[ -n $d ]] && as "$admin_token" rm "${srv[@]}" "$d" >/dev/null 2>&1 && count delete
    fi
  done
}
# Reader: whole blobs and ranges by digest, one or two streams.
reader() {
  while :; do
    local d
    d=$(as "$read_token" ls "${srv[@]}" 2>/dev/null | shuf -n 1 | cut -d' ' -f1) || true
    [[ -z $d ]] && { sleep 0.1; continue; }
    if as "$read_token" get "${srv[@]}" "$d" --parallel=$((RANDOM % 2 + 1)) -o /dev/null \
      2>/dev/null; then count get; else count get_failed; fi
  done
}
# Faults, one every few seconds, in turn.
faults() {
  local n=0 pid
  while :; do
    sleep 3
    case $((n++ % 5)) in
      0) as "$read_token" get "${srv[@]}" "$big" -o "$work/killed" 2>/dev/null & pid=$!
         sleep 0.2; kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
         rm -f "$work"/.killed.verity-* ;;
      1) as "$read_token" get "${srv[@]}" "$big" >/dev/null 2>&1 & pid=$!
         sleep 0.1; kill -STOP "$pid" 2>/dev/null || true; sleep 8
         kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true ;;
      2) as "$write_token" put "${srv[@]}" "$work/files/big" >/dev/null 2>&1 & pid=$!
         sleep 0.1; kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true ;;
      3) as "unknown-token-0123456789" ls "${srv[@]}" >/dev/null 2>&1 || true ;;
      4) local data
         data=$(find "$work/store/blobs" -name data -size +4k 2>/dev/null | shuf -n 1)
         if [[ -n $data ]]; then
           printf '\xff' | dd of="$data" bs=1 seek=100 conv=notrunc status=none 2>/dev/null || true
         fi ;;
    esac
    count fault
  done
}
writer & pids+=($!)
reader & pids+=($!)
reader & pids+=($!)
faults & pids+=($!)

ops() { [[ -f $work/$1.count ]] && wc -l <"$work/$1.count" || echo 0; }
{
  echo "# Soak: $minutes minutes of mixed Put/Read/Delete with faults"
  echo
  echo "Command: \`tests/bench/soak.sh $minutes\` on $(date -u +%Y-%m-%d), $(nproc) CPUs"
  echo "($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); one verityd with"
  echo "--auth_tokens, --on_corruption=quarantine and --stream_idle_timeout=5s; one writer, two"
  echo "readers and one fault every 3 s (a get SIGKILLed mid-stream, a get stopped until the"
  echo "server cancels it, a Put SIGKILLed midway, a call with an unknown token, a byte of a stored"
  echo "blob flipped on disk), all through the \`verity\` CLI. The server's figures come from"
  echo "/proc/PID/status and /proc/PID/fd once a minute; operations are cumulative."
  echo
  echo "| minute | RSS MiB | open fds | threads | puts | gets | deletes | faults | failed gets | failed puts | DATA_LOSS logged |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
} >"$work/report.md"
for minute in $(seq 1 "$minutes"); do
  sleep 60
  kill -0 "$server" 2>/dev/null || { echo "verityd died; its log:"; tail -20 "$work/verityd.log"; exit 1; }
  rss=$(awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$server/status")
  threads=$(awk '/Threads/ {print $2}' "/proc/$server/status")
  fds=$(ls "/proc/$server/fd" | wc -l)
  loss=$(grep -c "DATA_LOSS\|corrupt" "$work/verityd.log" || true)
  line="| $minute | $rss | $fds | $threads | $(ops put) | $(ops get) | $(ops delete) | $(ops fault) | $(ops get_failed) | $(ops put_failed) | $loss |"
  echo "$line" | tee -a "$work/report.md"
done
for token in "$read_token" "$write_token" "$admin_token"; do
  if grep -qF "$token" "$work/verityd.log"; then echo "a token is in the log" >&2; exit 1; fi
done
cp "$work/report.md" "$out"
echo "wrote $out"
