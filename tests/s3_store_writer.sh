# A writer of a radosgw bucket, for the attack scripts (tree_attacks.sh, mount_checks.sh) on the
# S3 store, as file_store_writer.sh is for the file store: it edits objects with a plain S3 client
# (curl --aws-sigv4) while verityd runs, and after a blob's data is replaced restarts the server,
# so that no copy cached before the edit answers for it. Source it after verityd_test_lib.sh and
# init_test, in a test run through tests/testing/with_ceph.sh (S3_*, AWS_* and CEPH_DIR). Defines
# what the attack scripts take:
#   start_guarded KEYS_FILE: (re)starts the server over s3://BUCKET/PREFIX with
#     --name_keys=KEYS_FILE, sets guarded=(--server=...);
#   store_read NAME FILE, store_write NAME FILE: the name's object;
#   store_blob_write DIGEST FILE: the blob's data replaced by FILE's bytes;
#   store_mark_tree DIGEST: the blob marked as a tree manifest, as a tree Put marks one.
[[ -n ${S3_ENDPOINT:-} && -n ${CEPH_DIR:-} ]] || { echo "FAIL: run through with_ceph.sh"; exit 1; }
prefix="writer-$$-$RANDOM"
s3=(--store="s3://$S3_BUCKET/$prefix" --s3_endpoint="$S3_ENDPOINT")
# Objects (docs/storage.md): names/<hex SHA-256 of the name>, blobs/<alg>/<hex>/data, or, for a
# small blob, its record at blobs/<alg>/<hex>/descriptor.
name_key() { echo "$prefix/names/$(printf '%s' "$1" | sha256sum | cut -d' ' -f1)"; }
store_read() { s3_get "$(name_key "$1")" "$2"; }
store_write() { s3_put "$(name_key "$1")" "$2"; }
store_blob_write() {  # as write_stored_data does: a record's content overwritten in place
  local key
  key=$(s3_content_key "$prefix" "$1")
  if [[ $key == */descriptor ]]; then
    s3_get "$key" "$work/record" && dd if="$2" of="$work/record" conv=notrunc status=none &&
      s3_put "$key" "$work/record"
  else
    s3_put "$key" "$2"
  fi
  start_guarded "$guarded_keys"
}
store_mark_tree() {
  local key
  key=$(s3_content_key "$prefix" "$1")
  if [[ $key == */descriptor ]]; then
    s3_get "$key" "$work/record" && mark_record_tree "$work/record" && s3_put "$key" "$work/record"
  else
    : >"$work/empty-object"
    s3_put "$prefix/blobs/sha256/${1#sha256:}/tree_manifest" "$work/empty-object"
  fi
}
guarded_pid="" guarded_keys=""
start_guarded() {
  [[ -z $guarded_pid ]] || stop_server "$guarded_pid"
  guarded_keys=$1
  start_server guarded --listen=127.0.0.1:0 "${s3[@]}" --name_keys="$guarded_keys"
  guarded_pid=$server_pid guarded=(--server="127.0.0.1:$server_port")
}
