#!/usr/bin/env bash
# The attacks on signed names of tests/signed_names_attacks.sh, on the file store: its writer
# edits names/<h> while verityd is stopped (tests/file_store_writer.sh), and the server is
# started again.
# Usage: signed_names_file_test.sh VERITYD VERITY
set -euo pipefail
here=$(dirname "$0")
source "$here/verityd_test_lib.sh"
source "$here/signed_names_attacks.sh"
init_test signed_names_file_test "$1" "$2"
for var in $(compgen -v VERITYD_) $(compgen -v VERITY_); do unset "$var"; done
source "$here/file_store_writer.sh"

run_name_attacks
run_history_checks
