# A writer of a file store's disk, for the attack scripts (signed_names_attacks.sh,
# tree_attacks.sh): the server they go through runs on $work/store with --name_keys, and the
# writer edits the store between two of its runs (the file store reads names when it opens).
# Source it after verityd_test_lib.sh and init_test. Defines what the attack scripts take:
#   start_guarded KEYS_FILE: (re)starts the server with --name_keys=KEYS_FILE, sets guarded=();
#     a restart between two runs (with_server_stopped) keeps the port, so that a client that
#     stays connected (verity mount --follow) reaches the server again;
#   store_read NAME FILE, store_write NAME FILE, store_delete NAME: the name's file;
#   store_blob_write DIGEST FILE: the blob's content replaced by FILE's bytes;
#   store_mark_tree DIGEST: the blob marked as a tree manifest, as a tree Put marks one.
store=$work/store
guarded_pid="" guarded_keys="" guarded_port=0
start_guarded() {  # KEYS_FILE [PORT]
  [[ -z $guarded_pid ]] || stop_server "$guarded_pid"
  guarded_keys=$1
  start_server guarded --listen="127.0.0.1:${2:-0}" --store_dir="$store" \
    --name_keys="$guarded_keys"
  guarded_pid=$server_pid guarded_port=$server_port guarded=(--server="127.0.0.1:$server_port")
}
# with_server_stopped COMMAND...: runs COMMAND between two runs of the server, on one port.
with_server_stopped() {
  stop_server "$guarded_pid"
  guarded_pid=""
  "$@"
  start_guarded "$guarded_keys" "$guarded_port"
}
name_file() { echo "$store/names/$(printf '%s' "$1" | sha256sum | cut -d' ' -f1)"; }
store_read() { cp "$(name_file "$1")" "$2"; }
store_write() { with_server_stopped cp "$2" "$(name_file "$1")"; }
store_delete() { with_server_stopped rm "$(name_file "$1")"; }
store_blob_write() { with_server_stopped write_stored_data "$store" "$1" "$2"; }
store_mark_tree() { with_server_stopped mark_stored_tree "$store" "$1"; }
