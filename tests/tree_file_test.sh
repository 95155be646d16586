#!/usr/bin/env bash
# Trees (tests/tree_attacks.sh) on the file store: its writer edits names/<h> and blob files
# while verityd is stopped (tests/file_store_writer.sh), and the server is started again.
# Usage: tree_file_test.sh VERITYD VERITY
set -euo pipefail
here=$(dirname "$0")
source "$here/verityd_test_lib.sh"
source "$here/tree_attacks.sh"
init_test tree_file_test "$1" "$2"
for var in $(compgen -v VERITYD_) $(compgen -v VERITY_); do unset "$var"; done
source "$here/file_store_writer.sh"

run_tree_tests
