#!/usr/bin/env bash
# Garbage collection (tests/gc_checks.sh) and scrub (tests/scrub_checks.sh) on a real radosgw
# (run through tests/testing/with_ceph.sh, which exports S3_*, AWS_* and CEPH_DIR), two replicas
# sharing the bucket for --gc_interval and --scrub_interval.
# Usage: with_ceph.sh gc_s3_test.sh VERITYD VERITY
set -euo pipefail
here=$(dirname "$0")
source "$here/verityd_test_lib.sh"
source "$here/gc_checks.sh"
source "$here/scrub_checks.sh"
init_test gc_s3_test "$1" "$2"
for var in $(compgen -v VERITYD_) $(compgen -v VERITY_); do unset "$var"; done
replica_count=2
blob_key() { echo "$prefix/blobs/${1%%:*}/${1#*:}/$2"; }
damage_data() {  # in its data object or its record, whose first bytes are the content
  local key
  key=$(s3_content_key "$prefix" "$1") && s3_get "$key" "$work/damaged" &&
    flip "$work/damaged" "$2" && s3_put "$key" "$work/damaged"
}
# An object is not written into: the blob is marked for a new Put (docs/storage.md).
repair_is_stored() { s3_get "$prefix/damaged/${1%%:*}-${1#*:}" "$work/mark"; }
# A Put cut short before its commit point: a one-byte data object of a blob with no descriptor.
leftover_key() { blob_key "sha256:$(printf '%s' "$prefix $1" | sha256sum | cut -d' ' -f1)" data; }
plant_leftover() {
  printf x >"$work/leftover" && s3_put "$(leftover_key "$1")" "$work/leftover" &&
    echo "$1" >>"$work/leftovers"
}
leftover_exists() { s3_get "$(leftover_key "$1")" "$work/leftover.got"; }
prefix="gc-$$-$RANDOM"
store_flags=(--store="s3://$S3_BUCKET/$prefix" --s3_endpoint="$S3_ENDPOINT")
run_gc_checks
prefix="scrub-$$-$RANDOM"
store_flags=(--store="s3://$S3_BUCKET/$prefix" --s3_endpoint="$S3_ENDPOINT")
run_scrub_checks
