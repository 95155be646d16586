#!/usr/bin/env bash
# Trees (tests/tree_attacks.sh) on a real radosgw (run through tests/testing/with_ceph.sh, which
# exports S3_*, AWS_* and CEPH_DIR), edited by a writer of the bucket (tests/s3_store_writer.sh).
# Usage: with_ceph.sh tree_s3_test.sh VERITYD VERITY
set -euo pipefail
source "$(dirname "$0")/verityd_test_lib.sh"
source "$(dirname "$0")/tree_attacks.sh"
init_test tree_s3_test "$1" "$2"
for var in $(compgen -v VERITYD_) $(compgen -v VERITY_); do unset "$var"; done
source "$(dirname "$0")/s3_store_writer.sh"

run_tree_tests
