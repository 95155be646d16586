#!/usr/bin/env bash
# The `verity` CLI against a lying server: a tamper proxy in front of a real verityd corrupts
# every Read stream in one way per mode. `get` must then exit 3 (verification failed), leave no
# -o file (or the old one untouched) and write only a prefix of the content to stdout, for the
# whole blob, a range and four parallel streams; mode none must fetch the content intact.
# Usage: cli_tamper_test.sh PATH_TO_VERITYD PATH_TO_VERITY PATH_TO_TAMPER_PROXY_MAIN
set -euo pipefail
verityd=$(realpath "$1")
verity=$(realpath "$2")
proxy_bin=$(realpath "$3")
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/cli-tamper.XXXXXX")

# ---- checks and processes (tests/verityd_test_lib.sh is not visible from this package)
passed=0
failed=0
pids=()  # every process started; SIGKILLed on exit

on_exit() {
  local rc=$? pid
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [[ $rc -ne 0 ]]; then
    echo "FAIL: the script stopped early (exit $rc) after the checks above"
    failed=$((failed + 1))
    [[ -e $work/verityd.log ]] && { echo "--- verityd's log:"; tail -n 20 "$work/verityd.log"; }
  fi
  rm -rf "$work"
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]] || exit 1
}
trap on_exit EXIT

pass() { passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
check() {  # DESCRIPTION COMMAND...: passes if COMMAND succeeds
  local what=$1
  shift
  if "$@"; then pass; else fail "$what"; fi
}
expect_exit() {  # WANT DESCRIPTION COMMAND...: passes if COMMAND exits with WANT
  local want=$1 what=$2 rc=0
  shift 2
  "$@" || rc=$?
  if [[ $rc -eq $want ]]; then pass; else fail "$what: exit $rc, want $want"; fi
}
vc() { timeout -k 5 60 "$verity" "$@"; }  # the CLI, bounded

# start LOG READY COMMAND...: runs COMMAND in the background with stderr to LOG; waits up to
# 30 s for a line matching the regex READY there; sets `pid`, and `port` from the line
# "listening on HOST:PORT".
start() {
  local log=$1 ready=$2 i
  shift 2
  : >"$log"
  "$@" 2>>"$log" &
  pid=$!
  pids+=("$pid")
  for ((i = 0; i < 300; i++)); do
    if grep -qE "$ready" "$log"; then
      port=$(sed -nE 's/.*listening on [^ ]*:([0-9]+).*/\1/p' "$log" | head -n 1)
      [[ -n $port ]] && return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "$* did not start; its log:"
  cat "$log"
  return 1
}

# stop PID: SIGTERM, then true if it exits 0 within 20 s (SIGKILLed otherwise). A reaped PID
# leaves `pids`, so that the exit trap cannot signal a process that reuses it.
stop() {
  local i rc=0 kept=() p
  kill -TERM "$1"
  for ((i = 0; i < 200; i++)); do
    [[ $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null || echo gone) =~ ^(Z|gone)$ ]] && break
    sleep 0.1
  done
  [[ $i -lt 200 ]] || { kill -9 "$1"; rc=1; }
  wait "$1" || rc=$?
  for p in "${pids[@]}"; do [[ $p == "$1" ]] || kept+=("$p"); done
  pids=("${kept[@]}")
  return "$rc"
}

# is_prefix FILE OF: FILE is a prefix of OF, perhaps empty, perhaps all of it (when the stream
# broke the protocol only after the last byte).
is_prefix() {
  local size
  size=$(stat -c %s "$1")
  [[ $size -le $(stat -c %s "$2") ]] && cmp -s "$1" <(head -c "$size" "$2")
}

d=$work/data
out=$work/out  # holds only what a check expects; a leftover temporary file shows up here
mkdir "$d" "$out" "$work/proxy"
size=$((3 * 1048576 + 123))  # 769 blocks of 4 KiB, the last short: a 2-level tree
head -c "$size" /dev/urandom >"$d/blob"
head -c "$size" /dev/urandom >"$d/other"
range=(--offset=$((5 * 4096 + 123)) --length=$((1048576 + 999)))
dd if="$d/blob" iflag=skip_bytes,count_bytes skip=$((5 * 4096 + 123)) count=$((1048576 + 999)) \
  status=none >"$d/range"

# only_in_out FILE...: $out holds exactly these names.
only_in_out() {
  local want got
  want=$(printf '%s\n' "$@" | sed '/^$/d' | sort)
  got=$(find "$out" -mindepth 1 -printf '%f\n' | sort)
  [[ $got == "$want" ]] || { echo "  $out holds: ${got//$'\n'/ }"; return 1; }
}

start "$work/verityd.log" 'serving [0-9]+ blobs' \
  "$verityd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --store_dir="$work/store"
verityd_pid=$pid
upstream=127.0.0.1:$port
put_digest() {  # FILE: puts it with a salt and prints its digest
  vc put --server="$upstream" --salt=5a17 "$1" | cut -d' ' -f1
}
dig=$(put_digest "$d/blob")
dig_other=$(put_digest "$d/other")
[[ $dig == sha256:* && $dig_other == sha256:* ]] || { echo "FAIL: put printed '$dig'"; exit 1; }

# start_proxy MODE: a tamper proxy in front of verityd; sets proxy_pid, proxy_log and srv.
proxy_count=0
start_proxy() {
  proxy_count=$((proxy_count + 1))
  proxy_log="$work/proxy/$proxy_count.log"
  start "$proxy_log" 'listening on ' \
    "$proxy_bin" --upstream="$upstream" --mode="$1" --listen=127.0.0.1:0
  proxy_pid=$pid
  srv=(--server="127.0.0.1:$port")
}

# The proxy serves its mode; mode none must change nothing.
check_untampered() {
  rm -f "$out/got"
  expect_exit 0 "none: get -o" vc get "${srv[@]}" "$dig" -o "$out/got"
  check "none: get -o equals the file" cmp -s "$d/blob" "$out/got"
  check "none: get to stdout" cmp -s "$d/blob" <(vc get "${srv[@]}" "$dig")
  check "none: a range" cmp -s "$d/range" <(vc get "${srv[@]}" "$dig" "${range[@]}")
  check "none: parallel" cmp -s "$d/blob" <(vc get "${srv[@]}" "$dig" --parallel=4)
  rm -f "$out/got"
}

check_refused() {  # MODE
  local mode=$1 failed_before=$failed rc=0
  expect_exit 3 "$mode: get -o" vc get "${srv[@]}" "$dig" -o "$out/got"
  check "$mode: get -o leaves no file" only_in_out
  echo "old content" >"$out/old"
  expect_exit 3 "$mode: get -o over a file" vc get "${srv[@]}" "$dig" -o "$out/old"
  check "$mode: the old file is kept" grep -qx "old content" "$out/old"
  check "$mode: and nothing else is left" only_in_out old
  rm -f "$out/old"
  expect_exit 3 "$mode: get -o of a range" vc get "${srv[@]}" "$dig" "${range[@]}" -o "$out/got"
  expect_exit 3 "$mode: parallel get -o" vc get "${srv[@]}" "$dig" --parallel=4 -o "$out/got"
  check "$mode: range and parallel gets leave no file" only_in_out
  vc get "${srv[@]}" "$dig" >"$work/stdout" || rc=$?
  check "$mode: get to stdout exits 3 (got $rc)" [ "$rc" -eq 3 ]
  check "$mode: stdout is a prefix of the content" is_prefix "$work/stdout" "$d/blob"
  if [[ $failed -ne $failed_before ]]; then
    echo "--- the proxy's log for $mode:"
    cat "$proxy_log"
  fi
}

modes=(none flip-data-bit flip-tree-bit:0 flip-tree-bit:1)
for field in digest hash-algorithm log-block-size salt data-size root-hash; do
  modes+=("flip-descriptor:$field")
done
modes+=(swap-data-blocks swap-chunks drop-message duplicate-message truncate truncate:0
  truncate:1 lie-size-and-salt blocks-beyond-range extend-last-chunk "other-blob:$dig_other"
  "other-blob-relabeled:$dig_other" drop-tree-blocks wrong-data-offset)

for mode in "${modes[@]}"; do
  start_proxy "$mode"
  label=${mode%%:sha*}  # without the other blob's digest
  if [[ $mode == none ]]; then check_untampered; else check_refused "$label"; fi
  check "$label: the proxy stops on SIGTERM" stop "$proxy_pid"
done
check "verityd stops on SIGTERM" stop "$verityd_pid"
