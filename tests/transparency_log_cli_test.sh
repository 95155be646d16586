#!/usr/bin/env bash
# The transparency log as a publisher and its users run it, with the real binaries: `verity
# keygen --log-origin` makes the log's key, verityd logs with it, `verity put --sign-key`
# journals what it signs, `verity get --log-key` checks the log's proof, and `verity audit`
# passes, then names the statement a stolen key signed for one victim (exit 3), with its
# Prometheus text file.
# Usage: transparency_log_cli_test.sh VERITYD VERITY
set -euo pipefail
here=$(dirname "$0")
source "$here/verityd_test_lib.sh"
init_test transparency_log_cli_test "$1" "$2"
for var in $(compgen -v VERITYD_) $(compgen -v VERITY_); do unset "$var"; done

keys=$work/keys
mkdir -p "$keys"
expect_exit 0 "keygen the log's key" vc keygen --out="$keys/log.pem" \
  --log-origin=verityd.test/log
check "keygen wrote the verifier key" grep -q '^verityd.test/log+[0-9a-f]\{8\}+' \
  "$keys/log.pem.vkey"
expect_exit 0 "keygen the publisher's key" vc keygen --out="$keys/pub.pem"
expect_exit 1 "verityd needs --log_origin with --log_key" \
  timeout -k 5 20 "$verityd" --listen=127.0.0.1:0 --store="$work/store" --log_key="$keys/log.pem"
start_server logged --listen=127.0.0.1:0 --store="$work/store" --log_key="$keys/log.pem" \
  --log_origin=verityd.test/log --checkpoint_interval=50ms --name_keys="$keys/pub.pem.pub"
check "the server logs its verifier key" grep -qF "$(cat "$keys/log.pem.vkey")" "$server_log"
server=(--server="127.0.0.1:$server_port")

head -c 100000 /dev/urandom >"$work/v1"
head -c 100000 /dev/urandom >"$work/evil"
publisher=(--sign-key="$keys/pub.pem" --state-dir="$work/publisher")
expect_exit 0 "publish v1" vc put "${server[@]}" "$work/v1" --name=app "${publisher[@]}"
check "the publisher journaled it" test -s "$(ls "$work/publisher"/signed-*.journal)"

client=(--log-key="$keys/log.pem.vkey" --trusted-keys="$keys/pub.pem.pub"
  --state-dir="$work/client")
expect_exit 0 "get checks the log's proof" vc get "${server[@]}" app -o "$work/got" "${client[@]}"
check "get wrote v1" cmp -s "$work/v1" "$work/got"
check "the client kept the checkpoint" ls "$work/client"/log-*.checkpoint
expect_exit 0 "stat checks the log's proof" vc stat "${server[@]}" app "${client[@]}"
audit=(audit "${server[@]}" --log-key="$keys/log.pem.vkey" --key="$keys/pub.pem.pub"
  --state-dir="$work/publisher" --metrics-file="$work/audit.prom")
first=$(vc "${audit[@]}") && rc=0 || rc=$?
if [[ $rc -eq 0 ]]; then pass; else fail "the audit knows every statement: exit $rc"; fi
check "the audit lists the publisher's statement" \
  grep -q "^known   entry 0: \"app\" version" <<<"$first"
check "the audit's metrics" grep -qx 'verity_audit_unknown_statements 0' "$work/audit.prom"
check "the audit's metrics: statements" grep -qx 'verity_audit_statements 1' "$work/audit.prom"
check "the audit's metrics: last checked" \
  grep -qE '^verity_audit_last_checked_seconds [0-9]{10}$' "$work/audit.prom"

# A thief with the publisher's key signs a release for one victim, from its own state.
expect_exit 0 "the stolen key publishes" vc put "${server[@]}" "$work/evil" --name=app \
  --sign-key="$keys/pub.pem" --state-dir="$work/thief"
expect_exit 0 "the victim accepts it: signed and logged" \
  vc get "${server[@]}" app -o "$work/victim" "${client[@]}"
out=$(vc "${audit[@]}" 2>"$work/audit.err") && rc=0 || rc=$?
if [[ $rc -eq 3 ]]; then pass; else fail "the audit exits 3 on an unknown statement: $rc"; fi
check "the audit names it" grep -q "^UNKNOWN entry 1: \"app\" version" <<<"$out"
check "the next audit starts where the last stopped" \
  grep -q "^audited entries 1 to 2: 1 statements by the key, 1 unknown" <<<"$out"
check "the audit's metrics count it" grep -qx 'verity_audit_unknown_statements 1' \
  "$work/audit.prom"
check "the audit's metrics: the log's size" grep -qx 'verity_audit_log_size 2' "$work/audit.prom"

# A client with the log's key refuses a server that logs nothing.
expect_stop "stop the logged server" "$server_pid"
start_server unlogged --listen=127.0.0.1:0 --store="$work/store"
expect_exit 3 "no proof from an unlogged server" \
  vc get --server="127.0.0.1:$server_port" app -o "$work/refused" "${client[@]}"
check "nothing written" test ! -e "$work/refused"
expect_exit 3 "stat refuses it too" \
  vc stat --server="127.0.0.1:$server_port" app "${client[@]}"
