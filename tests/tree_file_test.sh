#!/usr/bin/env bash
# Trees (tests/tree_attacks.sh) on the file store: its writer edits names/<h> and blob files
# while verityd is stopped, and the server is started again.
# Usage: tree_file_test.sh VERITYD VERITY
set -euo pipefail
here=$(dirname "$0")
source "$here/verityd_test_lib.sh"
source "$here/tree_attacks.sh"
init_test tree_file_test "$1" "$2"
for var in $(compgen -v VERITYD_) $(compgen -v VERITY_); do unset "$var"; done

store=$work/store
guarded_pid="" guarded_keys=""
start_guarded() {
  [[ -z $guarded_pid ]] || stop_server "$guarded_pid"
  guarded_keys=$1
  start_server guarded --listen=127.0.0.1:0 --store_dir="$store" --name_keys="$guarded_keys"
  guarded_pid=$server_pid guarded=(--server="127.0.0.1:$server_port")
}
name_file() { echo "$store/names/$(printf '%s' "$1" | sha256sum | cut -d' ' -f1)"; }
store_read() { cp "$(name_file "$1")" "$2"; }
# A writer of the disk: between two runs of the server.
store_write() {
  stop_server "$guarded_pid"
  guarded_pid=""
  cp "$2" "$(name_file "$1")"
  start_guarded "$guarded_keys"
}
store_blob_write() {
  local hex=${1#sha256:}
  stop_server "$guarded_pid"
  guarded_pid=""
  cp "$2" "$store/blobs/sha256/${hex:0:2}/$hex/data"
  start_guarded "$guarded_keys"
}

run_tree_tests
