#!/usr/bin/env bash
# Interop: the transparency log verityd writes, checked by an independent implementation
# (tests/interop/tlog_check.py, from the C2SP texts and RFC 6962, with python3-cryptography):
# the checkpoint's signed note and verifier key, every entry bundle and tile of a log of 270
# statements (full and partial tiles, two levels), and its root. A changed tile fails the check.
# Usage: tlog_interop_test.sh VERITYD VERITY CHECKER
set -euo pipefail
here=$(dirname "$0")
source "$here/verityd_test_lib.sh"
init_test tlog_interop_test "$1" "$2"
checker=$(realpath "$3")
for var in $(compgen -v VERITYD_) $(compgen -v VERITY_); do unset "$var"; done

keys=$work/keys
mkdir -p "$keys"
expect_exit 0 "keygen the log's key" vc keygen --out="$keys/log.pem" --log-origin=interop.test/log
expect_exit 0 "keygen the publisher's key" vc keygen --out="$keys/pub.pem"
start_server logged --listen=127.0.0.1:0 --store="$work/store" --log_key="$keys/log.pem" \
  --log_origin=interop.test/log --checkpoint_interval=20ms
server=--server="127.0.0.1:$server_port"
head -c 5000 /dev/urandom >"$work/blob"
digest=$(vc put "$server" "$work/blob" | cut -d" " -f1)
# 270 names signed and stored by 8 processes at once: batches of several statements.
seq 0 269 | xargs -P 8 -I{} timeout -k 5 120 "$verity" sign "$server" "name-{}" "$digest" \
  --key="$keys/pub.pem" --state-dir="$work/publisher" --store >/dev/null
expect_stop "stop the server" "$server_pid"

out=$(python3 "$checker" "$keys/log.pem.vkey" "$work/store/log") && rc=0 || rc=$?
echo "$out"
if [[ $rc -eq 0 ]]; then pass; else fail "the independent checker refuses verityd's log"; fi
check "the checker saw every statement" grep -q "270 entries, 3 tiles" <<<"$out"

cp -r "$work/store/log" "$work/changed"
printf '\x01' | dd of="$work/changed/tile/0/000" bs=1 seek=100 conv=notrunc status=none
expect_exit 1 "the checker refuses a changed tile" python3 "$checker" "$keys/log.pem.vkey" \
  "$work/changed"
