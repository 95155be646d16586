#!/usr/bin/env bash
# Interop: the transparency log verityd writes, checked by an independent implementation
# (tests/interop/tlog_check.py, from the C2SP texts and RFC 6962, with python3-cryptography):
# the checkpoint's signed note and the verifier key `verity keygen` wrote, every entry bundle and
# tile of a log of 270 statements (full and partial tiles, two levels), and its root. A changed
# tile fails the check.
# Usage: tlog_interop_test.sh VERITYD VERITY CHECKER WRITE_TLOG
set -euo pipefail
here=$(dirname "$0")
source "$here/verityd_test_lib.sh"
init_test tlog_interop_test "$1" "$2"
checker=$(realpath "$3")
write_tlog=$(realpath "$4")
for var in $(compgen -v VERITYD_) $(compgen -v VERITY_); do unset "$var"; done

keys=$work/keys
mkdir -p "$keys"
expect_exit 0 "keygen the log's key" vc keygen --out="$keys/log.pem" --log-origin=interop.test/log
# 270 statements appended by 8 threads at once through verityd's StatementLog: checkpoints
# over batches of several (transparency_log_cli_test covers the log through the binaries).
expect_exit 0 "write the log" "$write_tlog" "$keys/log.pem" interop.test/log "$work/store" 270

out=$(python3 "$checker" "$keys/log.pem.vkey" "$work/store/log") && rc=0 || rc=$?
echo "$out"
if [[ $rc -eq 0 ]]; then pass; else fail "the independent checker refuses verityd's log"; fi
check "the checker saw every statement" grep -q "270 entries, 3 tiles" <<<"$out"

cp -r "$work/store/log" "$work/changed"
printf '\x01' | dd of="$work/changed/tile/0/000" bs=1 seek=100 conv=notrunc status=none
expect_exit 1 "the checker refuses a changed tile" python3 "$checker" "$keys/log.pem.vkey" \
  "$work/changed"
