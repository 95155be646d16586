#!/usr/bin/env bash
# The `verity` CLI against a lying server: a tamper proxy in front of a real verityd corrupts
# every Read stream in one way per mode. `get` must then exit 3 (verification failed), leave no
# -o file (or the old one untouched) and write only a prefix of the content to stdout, for the
# whole blob, a range and four parallel streams; mode none must fetch the content intact.
# Usage: cli_tamper_test.sh PATH_TO_VERITYD PATH_TO_VERITY PATH_TO_TAMPER_PROXY_MAIN
set -euo pipefail
source "$(dirname "$0")/../verityd_test_lib.sh"
init_test cli-tamper "$1" "$2"
proxy_bin=$(realpath "$3")

# is_prefix_or_all FILE OF: FILE is a prefix of OF, perhaps empty, perhaps all of it (when the
# stream broke the protocol only after the last byte).
is_prefix_or_all() { cmp -s "$1" "$2" || is_prefix "$1" "$2"; }

d=$work/data
out=$work/out  # holds only what a check expects; a leftover temporary file shows up here
mkdir "$d" "$out" "$work/proxy"
size=$((3 * 1048576 + 123))  # 769 blocks of 4 KiB, the last short: a 2-level tree
head -c "$size" /dev/urandom >"$d/blob"
head -c "$size" /dev/urandom >"$d/other"
range=(--offset=$((5 * 4096 + 123)) --length=$((1048576 + 999)))
dd if="$d/blob" iflag=skip_bytes,count_bytes skip=$((5 * 4096 + 123)) count=$((1048576 + 999)) \
  status=none >"$d/range"

start_server verityd --listen=127.0.0.1:0 --store_dir="$work/store"
verityd_pid=$server_pid
upstream=127.0.0.1:$server_port
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
  "$proxy_bin" --upstream="$upstream" --mode="$1" --listen=127.0.0.1:0 2>"$proxy_log" &
  proxy_pid=$!
  tracked_pids+=("$proxy_pid")
  wait_for_log "$proxy_log" 'listening on ' "$proxy_pid" 30 || { cat "$proxy_log"; return 1; }
  srv=(--server="127.0.0.1:$(sed -nE 's/.*listening on [^ ]*:([0-9]+).*/\1/p' "$proxy_log")")
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
  check "$mode: stdout is a prefix of the content" is_prefix_or_all "$work/stdout" "$d/blob"
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
  expect_stop "$label: the proxy" "$proxy_pid"
done
expect_stop verityd "$verityd_pid"
