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
