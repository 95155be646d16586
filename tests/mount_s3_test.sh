#!/usr/bin/env bash
# `verity mount` (tests/mount_checks.sh) over a real radosgw (run through
# tests/testing/with_ceph.sh, which exports S3_*, AWS_* and CEPH_DIR), edited by a writer of the
# bucket (tests/s3_store_writer.sh).
# Usage: with_ceph.sh mount_s3_test.sh VERITYD VERITY
set -euo pipefail
here=$(dirname "$0")
source "$here/verityd_test_lib.sh"
source "$here/tree_attacks.sh"  # evil_manifest
init_test mount_s3_test "$1" "$2"
for var in $(compgen -v VERITYD_) $(compgen -v VERITY_); do unset "$var"; done
export VERITYD_FEC_ROOTS=0  # a flipped byte stays flipped (no repair)
source "$here/s3_store_writer.sh"
source "$here/mount_checks.sh"
run_mount_tests
