#!/usr/bin/env bash
# Runs a test program against a real single-node Ceph: starts one with tests/testing/ceph_cluster.sh
# under $TEST_TMPDIR, runs `PROGRAM ARGS...` with S3_ENDPOINT, S3_BUCKET, AWS_REGION and the
# credentials in its environment (and CEPH_DIR, for tests that take radosgw away with
# `tests/testing/ceph_cluster.sh rgw-stop|rgw-start $CEPH_DIR`), stops the cluster by pid, and exits
# with the program's status. Usage: with_ceph.sh PROGRAM [ARGS...]
set -euo pipefail
here=$(dirname "$(realpath "${BASH_SOURCE[0]}")")
lib=${TEST_SRCDIR:+$TEST_SRCDIR/verityd/tests/testing/ceph_cluster.sh}
[[ -n $lib && -f $lib ]] || lib=$here/ceph_cluster.sh
# shellcheck source=tests/testing/ceph_cluster.sh
source "$lib"
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/ceph.XXXXXX")
trap 'ceph_stop "$dir"; rm -rf "$dir"' EXIT
ceph_start "$dir"
export CEPH_CLUSTER_LIB=$lib
rc=0
"$@" || rc=$?
exit "$rc"
