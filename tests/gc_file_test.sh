#!/usr/bin/env bash
# Garbage collection (tests/gc_checks.sh) on the file store.
# Usage: gc_file_test.sh VERITYD VERITY
set -euo pipefail
here=$(dirname "$0")
source "$here/verityd_test_lib.sh"
source "$here/gc_checks.sh"
init_test gc_file_test "$1" "$2"
for var in $(compgen -v VERITYD_) $(compgen -v VERITY_); do unset "$var"; done
store_flags=(--store_dir="$work/store")
replica_count=1
run_gc_checks
