#!/usr/bin/env bash
# Garbage collection (tests/gc_checks.sh) and scrub (tests/scrub_checks.sh) on the file store.
# Usage: gc_file_test.sh VERITYD VERITY
set -euo pipefail
here=$(dirname "$0")
source "$here/verityd_test_lib.sh"
source "$here/gc_checks.sh"
source "$here/scrub_checks.sh"
init_test gc_file_test "$1" "$2"
for var in $(compgen -v VERITYD_) $(compgen -v VERITY_); do unset "$var"; done
replica_count=1
damage_data() { flip "$(data_file "$store_dir" "$1")" "$2"; }
repair_is_stored() { cmp -s <(stored_data "$store_dir" "$1") "$2"; }
# The file store empties its staging when it opens: what it keeps is the transparency log's
# staged batch of an append whose server stopped before committing it, which gc sweeps past the
# grace (no log state names it).
plant_leftover() {
  mkdir -p "$store_dir/log/batches" && printf x >"$store_dir/log/batches/left-$1" &&
    echo "$1" >>"$work/leftovers"
}
leftover_exists() { [[ -e $store_dir/log/batches/left-$1 ]]; }
store_dir=$work/store
store_flags=(--store_dir="$store_dir")
run_gc_checks
store_dir=$work/scrub-store
store_flags=(--store_dir="$store_dir")
run_scrub_checks
