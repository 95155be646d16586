#!/usr/bin/env bash
# `verity mount` (tests/mount_checks.sh) on the file store: its writer edits the store between
# two runs of the server (tests/file_store_writer.sh).
# Usage: mount_file_test.sh VERITYD VERITY
set -euo pipefail
here=$(dirname "$0")
source "$here/verityd_test_lib.sh"
source "$here/tree_attacks.sh"  # evil_manifest
init_test mount_file_test "$1" "$2"
for var in $(compgen -v VERITYD_) $(compgen -v VERITY_); do unset "$var"; done
export VERITYD_FEC_ROOTS=0
source "$here/file_store_writer.sh"
source "$here/mount_checks.sh"
run_mount_tests

# ---- --log-key: a name is mounted only with its proof in the transparency log.
[[ -z $guarded_pid ]] || stop_server "$guarded_pid"
guarded_pid=""
vc keygen --out="$keys/log.pem" --log-origin=verityd.test/log >/dev/null
start_server logged --listen=127.0.0.1:0 --store_dir="$work/logged-store" \
  --name_keys="$keys/k.pem.pub" --log_key="$keys/log.pem" --log_origin=verityd.test/log \
  --checkpoint_interval=50ms
logged=(--server="127.0.0.1:$server_port")
expect_exit 0 "put a release under the log" \
  vc put "${logged[@]}" "$src" --name=rel/logged "${publish[@]}"
log_trust=("${trust[@]}" --log-key="$keys/log.pem.vkey")
check "mount it, proved in the log" start_mount "$mounts/logged" "${logged[@]}" \
  "${log_trust[@]}" rel/logged
check "its files as stored" diff -r --no-dereference "$src" "$mounts/logged"
stop_mount "$mounts/logged" TERM
expect_stop "stop the logged server" "$server_pid"
start_server unlogged --listen=127.0.0.1:0 --store_dir="$work/logged-store" \
  --name_keys="$keys/k.pem.pub"
mount_rc=""
check "a server that proves nothing: not mounted" eval \
  "! start_mount '$mounts/unlogged' --server=127.0.0.1:$server_port ${log_trust[*]} rel/logged"
check "exit 3 (got ${mount_rc:-none})" [ "${mount_rc:-0}" -eq 3 ]
check "it says which check failed: $(tail -n 1 "$mount_log")" \
  grep -q "transparency log" "$mount_log"
expect_stop "stop the unlogged server" "$server_pid"
