#!/usr/bin/env bash
# `verity mount` (tests/mount_checks.sh) over a real radosgw (run through
# tests/testing/with_ceph.sh, which exports S3_*, AWS_* and CEPH_DIR): the store's writer edits
# objects with a plain S3 client while verityd runs; after a blob's data is replaced the server
# is restarted, so that no copy cached before the edit answers for it.
# Usage: with_ceph.sh mount_s3_test.sh VERITYD VERITY
set -euo pipefail
here=$(dirname "$0")
source "$here/verityd_test_lib.sh"
source "$here/tree_attacks.sh"  # evil_manifest
init_test mount_s3_test "$1" "$2"
for var in $(compgen -v VERITYD_) $(compgen -v VERITY_); do unset "$var"; done
[[ -n ${S3_ENDPOINT:-} && -n ${CEPH_DIR:-} ]] || { echo "FAIL: run through with_ceph.sh"; exit 1; }
export VERITYD_FEC_ROOTS=0

prefix="mount-$$-$RANDOM"
s3=(--store="s3://$S3_BUCKET/$prefix" --s3_endpoint="$S3_ENDPOINT")
# Objects (docs/storage.md): names/<hex SHA-256 of the name>, blobs/<alg>/<hex>/data.
name_key() { echo "$prefix/names/$(printf '%s' "$1" | sha256sum | cut -d' ' -f1)"; }
store_read() { s3_get "$(name_key "$1")" "$2"; }
store_write() { s3_put "$(name_key "$1")" "$2"; }
store_blob_write() {
  s3_put "$prefix/blobs/sha256/${1#sha256:}/data" "$2"
  start_guarded "$guarded_keys"
}
guarded_pid="" guarded_keys=""
start_guarded() {
  [[ -z $guarded_pid ]] || stop_server "$guarded_pid"
  guarded_keys=$1
  start_server guarded --listen=127.0.0.1:0 "${s3[@]}" --name_keys="$guarded_keys"
  guarded_pid=$server_pid guarded=(--server="127.0.0.1:$server_port")
}

source "$here/mount_checks.sh"
run_mount_tests
