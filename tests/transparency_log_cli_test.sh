#!/usr/bin/env bash
# The transparency log as a publisher and its users run it, with the real binaries: `verity
# keygen --log-origin` makes the log's key, verityd logs with it, `verity put --sign-key`
# journals what it signs, get, stat and ls `--log-key` check the log's proof, and `verity audit`
# passes, then names the statement a stolen key signed for one victim (exit 3), with its
# Prometheus text file. `verity witness` cosigns the checkpoints verityd --witnesses asks it to,
# and clients with --witness-keys accept only checkpoints K witnesses cosigned.
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

mkdir -p "$work/tree/sub"
echo one >"$work/tree/sub/one"
expect_exit 0 "publish a tree" vc put "${server[@]}" "$work/tree" --name=tree "${publisher[@]}"
expect_exit 0 "ls of a tree by name checks the log's proof" vc ls "${server[@]}" tree "${client[@]}"

# Witnesses: verityd asks `verity witness` to cosign each checkpoint before publishing it.
expect_exit 0 "keygen a witness's key" vc keygen --out="$keys/w1.pem" --witness-name=w1.test
check "keygen wrote the witness's verifier key" grep -q '^w1\.test+[0-9a-f]\{8\}+' \
  "$keys/w1.pem.vkey"
expect_exit 0 "keygen a second witness's key" vc keygen --out="$keys/w2.pem" --witness-name=w2.test
expect_exit 1 "a key is a log's or a witness's" \
  vc keygen --out="$keys/x.pem" --log-origin=a --witness-name=b
mkdir -m 0777 "$work/planted-witness"
expect_exit 5 "a witness will not keep its state where others may write" \
  "$verity" witness --log-key="$keys/log.pem.vkey" --witness-key="$keys/w1.pem" \
  --witness-name=w1.test --listen=127.0.0.1:0 --state-dir="$work/planted-witness" \
  2>"$work/planted.err"
check "it says why: $(head -c 200 "$work/planted.err")" grep -q "writable by group or others" \
  "$work/planted.err"
witness_log=$work/witness.log
"$verity" witness --log-key="$keys/log.pem.vkey" --witness-key="$keys/w1.pem" \
  --witness-name=w1.test --listen=127.0.0.1:0 --state-dir="$work/witness" 2>"$witness_log" &
witness_pid=$!
tracked_pids+=("$witness_pid")
wait_for_log "$witness_log" 'listening on' "$witness_pid" 30 || cat "$witness_log"
witness_url=http://127.0.0.1:$(sed -nE 's/.*listening on [^ ]*:([0-9]+).*/\1/p' "$witness_log")
check "the witness prints its verifier key" grep -qF "$(cat "$keys/w1.pem.vkey")" "$witness_log"
echo "$(cat "$keys/w1.pem.vkey") $witness_url" >"$work/witnesses"
expect_stop "stop the logged server" "$server_pid"
expect_exit 1 "verityd needs --log_key with --witnesses" \
  timeout -k 5 20 "$verityd" --listen=127.0.0.1:0 --store="$work/store" \
  --witnesses="$work/witnesses"
start_server witnessed --listen=127.0.0.1:0 --store="$work/store" --log_key="$keys/log.pem" \
  --log_origin=verityd.test/log --checkpoint_interval=50ms --name_keys="$keys/pub.pem.pub" \
  --witnesses="$work/witnesses"
server=(--server="127.0.0.1:$server_port")
head -c 100000 /dev/urandom >"$work/v2"
expect_exit 0 "publish under a witnessed checkpoint" \
  vc put "${server[@]}" "$work/v2" --name=app2 "${publisher[@]}"
check "the published checkpoint carries the cosignature" \
  grep -q $'^\xe2\x80\x94 w1.test ' "$work/store/log/checkpoint"
expect_exit 0 "get requiring the witness's cosignature" vc get "${server[@]}" app2 \
  -o "$work/got2" "${client[@]}" --witness-keys="$keys/w1.pem.vkey"
check "get wrote v2" cmp -s "$work/v2" "$work/got2"
cat "$keys/w1.pem.vkey" "$keys/w2.pem.vkey" >"$work/two-witnesses"
two=(--witness-keys="$work/two-witnesses" --witness-threshold=2)
expect_exit 3 "two witnesses required, one cosigned" \
  vc stat "${server[@]}" app2 "${client[@]}" "${two[@]}"
check "which check failed" grep -q "cosigned by 1 of the 2 witnesses" <(
  vc stat "${server[@]}" app2 "${client[@]}" "${two[@]}" 2>&1)
# The witness answers a request from a size it is not at with its own (C2SP: 409).
{ printf 'old 1\n\n'; cat "$work/store/log/checkpoint"; } >"$work/stale-request"
code=$(curl -s -o "$work/stale-answer" -w '%{http_code}' --data-binary @"$work/stale-request" \
  "$witness_url/add-checkpoint")
check "a stale request is 409" test "$code" = 409
check "with the witness's size" grep -qx '[0-9][0-9]*' "$work/stale-answer"
# Without its witness, a checkpoint is published uncosigned, and refused by such clients.
expect_stop "stop the witness" "$witness_pid"
expect_exit 0 "publish with the witness down" \
  vc put "${server[@]}" "$work/v1" --name=app3 "${publisher[@]}"
check "the server says why" grep -q "no cosignature" "$server_log"
check "the new checkpoint is published all the same, uncosigned" \
  bash -c '! grep -q "w1\.test" "$1"' _ "$work/store/log/checkpoint"
expect_exit 3 "an uncosigned checkpoint is refused" vc stat "${server[@]}" app3 "${client[@]}" \
  --witness-keys="$keys/w1.pem.vkey"
# Back (on its port, with its state), the witness is asked again and cosigns that checkpoint.
"$verity" witness --log-key="$keys/log.pem.vkey" --witness-key="$keys/w1.pem" \
  --witness-name=w1.test --listen="${witness_url#http://}" --state-dir="$work/witness" \
  2>"$witness_log" &
witness_pid=$!
tracked_pids+=("$witness_pid")
wait_for_log "$witness_log" 'listening on' "$witness_pid" 30 || cat "$witness_log"
for _ in $(seq 1 40); do
  vc stat "${server[@]}" app3 "${client[@]}" --witness-keys="$keys/w1.pem.vkey" >/dev/null 2>&1 &&
    break
  sleep 0.5
done
expect_exit 0 "a witness that missed a checkpoint is asked again" \
  vc stat "${server[@]}" app3 "${client[@]}" --witness-keys="$keys/w1.pem.vkey"
expect_stop "stop the witness again" "$witness_pid"
# A witness that takes the connection and never answers holds a checkpoint up for
# --witness_timeout, no longer: it is published uncosigned.
expect_stop "stop the witnessed server" "$server_pid"
python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16); print("listening", flush=True)
time.sleep(600)' "${witness_url##*:}" >"$work/hung.log" 2>&1 &
hung_pid=$!
tracked_pids+=("$hung_pid")
wait_for_log "$work/hung.log" '^listening' "$hung_pid" 10 || cat "$work/hung.log"
start_server hung --listen=127.0.0.1:0 --store="$work/store" --log_key="$keys/log.pem" \
  --log_origin=verityd.test/log --checkpoint_interval=50ms --name_keys="$keys/pub.pem.pub" \
  --witnesses="$work/witnesses" --witness_timeout=1s
server=(--server="127.0.0.1:$server_port")
head -c 1000 /dev/urandom >"$work/v4"
started=$SECONDS
expect_exit 0 "publish while the witness hangs" \
  vc put "${server[@]}" "$work/v4" --name=app4 "${publisher[@]}"
check "within the witness timeout, not the witness's ($((SECONDS - started)) s)" \
  [ $((SECONDS - started)) -le 5 ]
check "the server says why the checkpoint has no cosignature" \
  grep -q "no cosignature.*Timeout was reached" "$server_log"
expect_exit 0 "a client that needs no witness accepts it" \
  vc stat "${server[@]}" app4 "${client[@]}"
kill -9 "$hung_pid"
wait_for_exit "$hung_pid" 10 || true

# A client with the log's key refuses a server that logs nothing.
expect_stop "stop the logged server" "$server_pid"
start_server unlogged --listen=127.0.0.1:0 --store="$work/store"
expect_exit 3 "no proof from an unlogged server" \
  vc get --server="127.0.0.1:$server_port" app -o "$work/refused" "${client[@]}"
check "nothing written" test ! -e "$work/refused"
expect_exit 3 "stat refuses it too" \
  vc stat --server="127.0.0.1:$server_port" app "${client[@]}"
expect_exit 3 "ls of a tree by name too" \
  vc ls --server="127.0.0.1:$server_port" tree "${client[@]}"
