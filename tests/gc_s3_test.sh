#!/usr/bin/env bash
# Garbage collection (tests/gc_checks.sh) on a real radosgw (run through
# tests/testing/with_ceph.sh, which exports S3_*, AWS_* and CEPH_DIR), two replicas sharing the
# bucket for --gc_interval.
# Usage: with_ceph.sh gc_s3_test.sh VERITYD VERITY
set -euo pipefail
here=$(dirname "$0")
source "$here/verityd_test_lib.sh"
source "$here/gc_checks.sh"
init_test gc_s3_test "$1" "$2"
for var in $(compgen -v VERITYD_) $(compgen -v VERITY_); do unset "$var"; done
store_flags=(--store="s3://$S3_BUCKET/gc-$$-$RANDOM" --s3_endpoint="$S3_ENDPOINT")
replica_count=2
run_gc_checks
