#!/usr/bin/env bash
# Signed names over a real radosgw (run through tests/testing/with_ceph.sh, which exports S3_*,
# AWS_* and CEPH_DIR), driven by the `verity` CLI. A publisher signs "model/latest" with an
# Ed25519 key made by openssl; then someone who can write the bucket, with a plain S3 client
# (curl --aws-sigv4), and no key:
# - re-points the signed name at another valid blob, keeping its statement;
# - replays the older signed statement (the first after the client saw the second);
# - flips a byte of the statement; deletes the statement; puts an unsigned name.
# A client with trusted keys refuses each: exit 3, no output file, a message naming the reason;
# restoring the honest object makes the same get pass, so each refusal is the attack's. A server
# run with --name_keys refuses unsigned name writes through its API, and the publisher a stale
# version. A key not trusted is refused; rotation to a newly listed key works. Signatures made by
# `fsverity sign` are stored with the blob and checked against pinned certificates (another
# certificate, none, or a byte flipped in the bucket: exit 3). And no private key or statement
# signature appears in any log or metrics. Then the attacks of signed_names_attacks.sh (induced
# rollback, a planted version, a stolen key, checks that read no byte, empty trust options) by a
# writer of the bucket. Last, two replicas appending to one transparency log, one SIGKILLed
# mid-append (tlog_replica_checks.sh).
# Usage: with_ceph.sh signed_names_s3_test.sh VERITYD VERITY
set -euo pipefail
source "$(dirname "$0")/verityd_test_lib.sh"
source "$(dirname "$0")/signed_names_attacks.sh"
source "$(dirname "$0")/tlog_replica_checks.sh"
init_test signed_names_s3_test "$1" "$2"
for var in $(compgen -v VERITYD_) $(compgen -v VERITY_); do unset "$var"; done
# Where the publishers record the versions they signed (no HOME under Bazel).
export XDG_STATE_HOME=$work/xdg-state
[[ -n ${S3_ENDPOINT:-} && -n ${CEPH_DIR:-} ]] || { echo "FAIL: run through with_ceph.sh"; exit 1; }

prefix="names-$$-$RANDOM"
s3=(--store="s3://$S3_BUCKET/$prefix" --s3_endpoint="$S3_ENDPOINT")
# name_key NAME: the name's object (docs/storage.md): names/<hex SHA-256 of the name>.
name_key() { echo "$prefix/names/$(printf '%s' "$1" | sha256sum | cut -d' ' -f1)"; }
digest_of() { "$verity" digest "$1" | awk '{print $1}'; }

data=$work/data keys=$work/keys state=$work/state
mkdir -p "$data" "$keys" "$state"
for f in a b c d; do head -c 4096 /dev/urandom >"$data/$f"; done

# The publisher's key, as openssl makes it; a second one for rotation, made by verity keygen.
openssl genpkey -algorithm ed25519 -out "$keys/publisher.pem" 2>/dev/null
openssl pkey -in "$keys/publisher.pem" -pubout -out "$keys/publisher.pub"
expect_exit 0 "verity keygen" vc keygen --out="$keys/next.pem"
openssl pkey -in "$keys/next.pem" -pubout -out "$keys/next.pub"
cp "$keys/publisher.pub" "$keys/trusted.pem"

start_server plain --listen=127.0.0.1:0 "${s3[@]}"
plain=(--server="127.0.0.1:$server_port") metrics_ports=("$metrics_port")
start_server guarded --listen=127.0.0.1:0 "${s3[@]}" --name_keys="$keys/trusted.pem"
guarded=(--server="127.0.0.1:$server_port") metrics_ports+=("$metrics_port")
trust=(--trusted-keys="$keys/trusted.pem" --state-dir="$state")

# get_refused WHAT REASON: a trusted get of model/latest exits 3 with REASON in its message and
# leaves no output file.
get_refused() {
  rm -f "$work/out"
  local rc=0
  vc get "${plain[@]}" "${trust[@]}" model/latest -o "$work/out" 2>"$work/err" || rc=$?
  check "$1: get exits 3 (got $rc: $(head -c 300 "$work/err"))" [ "$rc" -eq 3 ]
  check "$1: no output file" [ ! -e "$work/out" ]
  check "$1: the message says '$2'" grep -qF "$2" "$work/err"
}
# get_accepted WHAT FILE: a trusted get of model/latest gives FILE's bytes.
get_accepted() {
  rm -f "$work/out"
  expect_exit 0 "$1: get exits 0" vc get "${plain[@]}" "${trust[@]}" model/latest -o "$work/out"
  check "$1: byte-identical" cmp -s "$2" "$work/out"
}

# ---- the publisher: version 1 -> a, then version 2 -> b, through the guarded server
expect_exit 0 "put a, signed, version 1" vc put "${guarded[@]}" "$data/a" --name=model/latest \
  --sign-key="$keys/publisher.pem"
get_accepted "version 1" "$data/a"
s3_get "$(name_key model/latest)" "$work/v1.object"
expect_exit 0 "put b, signed, the next version" vc put "${guarded[@]}" "$data/b" \
  --name=model/latest --sign-key="$keys/publisher.pem"
get_accepted "version 2" "$data/b"
s3_get "$(name_key model/latest)" "$work/v2.object"
expect_exit 0 "put c, no name" vc put "${plain[@]}" "$data/c"
c=$(digest_of "$data/c")

# ---- someone with the bucket's credentials and no key
# rewrite FILE PYTHON: FILE is a name object, whose current version (name_record: "DIGEST\nNAME",
# then NUL and the statement) PYTHON edits d (digest text, bytes), n (name) and s (statement) and the object is written back.
rewrite() {
  name_record "$1" >"$1.record"
  python3 - "$1" "$2" <<'EOF'
import sys
path, edit = sys.argv[1], sys.argv[2]
head, _, s = open(path + '.record', 'rb').read().partition(b'\0')
d, _, n = head.partition(b'\n')
exec(edit)
open(path + '.new', 'wb').write(d + b'\n' + n + ((b'\0' + s) if s else b''))
EOF
  s3_put "$(name_key model/latest)" "$1.new"
}
check "re-point the name at c, keeping the statement" \
  rewrite "$work/v2.object" "d = b'$c'"
get_refused "re-pointed at another valid blob" "but the signed statement says"
check "replay the version 1 object" s3_put "$(name_key model/latest)" "$work/v1.object"
get_refused "rolled back to version 1" "rollback"
check "flip a byte of the statement" rewrite "$work/v2.object" "s = s[:60] + bytes([s[60] ^ 1]) + s[61:]"
get_refused "a flipped statement byte" "valid signatures by trusted keys"
check "delete the statement" rewrite "$work/v2.object" "s = b''"
get_refused "no statement" "no signed statement"
check "restore the honest object" s3_put "$(name_key model/latest)" "$work/v2.object"
get_accepted "the honest object again" "$data/b"
printf '%s\nmodel/other' "$c" >"$work/unsigned.object"
check "put an unsigned name in the bucket" s3_put "$(name_key model/other)" "$work/unsigned.object"
rm -f "$work/out"
rc=0
vc get "${plain[@]}" "${trust[@]}" model/other -o "$work/out" 2>"$work/err" || rc=$?
check "an unsigned name: exit 3 (got $rc)" [ "$rc" -eq 3 ]
check "an unsigned name: no output file" [ ! -e "$work/out" ]
check "an unsigned name: the message says so" grep -qF "no signed statement" "$work/err"
expect_exit 0 "without trusted keys the unsigned name still works" \
  vc get "${plain[@]}" model/other -o "$work/out"

# ---- the guarded server refuses unsigned and stale name writes through its API
rc=0
vc put "${guarded[@]}" "$data/d" --name=model/latest 2>"$work/err" || rc=$?
check "guarded: an unsigned name write is INVALID_ARGUMENT, exit 1 (got $rc)" [ "$rc" -eq 1 ]
check "guarded: the message says a statement is needed" \
  grep -qF "needs a name statement signed by a key of --name_keys" "$work/err"
rc=0
vc put "${guarded[@]}" "$data/d" --name=model/latest --sign-key="$keys/publisher.pem" \
  --version=1 2>"$work/err" || rc=$?
check "a stale version is refused by the publisher: FAILED_PRECONDITION, exit 5 (got $rc)" \
  [ "$rc" -eq 5 ]
check "the message says it is not above what the key signed" \
  grep -qF "is not above version" "$work/err"
get_accepted "the name is unchanged after the refused writes" "$data/b"

# ---- keys: one not trusted, then rotation
expect_exit 0 "sign the next version with a key not yet trusted" vc put "${plain[@]}" "$data/d" \
  --name=model/latest --sign-key="$keys/next.pem"
get_refused "a key not trusted" "valid signatures by trusted keys"
cat "$keys/publisher.pub" "$keys/next.pub" >"$keys/trusted.pem"
get_accepted "rotation: the new key listed beside the old" "$data/d"
cp "$keys/next.pub" "$keys/trusted.pem"
get_accepted "rotation: the old key removed" "$data/d"
check "replay version 2 (by the removed key)" s3_put "$(name_key model/latest)" "$work/v2.object"
get_refused "a statement by a removed key" "valid signatures by trusted keys"

# ---- fs-verity signatures made by `fsverity sign`, stored with the blob in the bucket
for who in signer other; do
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$who" \
    -keyout "$keys/$who.key" -out "$keys/$who.crt" 2>/dev/null
done
# Over 1 MiB: its signature is an object of its own (a small blob's is in its record).
head -c 1100000 /dev/urandom >"$data/e"
e=$(digest_of "$data/e")
for f in c e; do
  fsverity sign "$data/$f" "$work/$f.sig" --key="$keys/signer.key" --cert="$keys/signer.crt" >/dev/null
  expect_exit 0 "put $f with its fsverity sign signature" \
    vc put "${plain[@]}" "$data/$f" --fsverity-sig="$work/$f.sig"
done
rm -f "$work/out"
expect_exit 0 "a signed blob, its certificate pinned" \
  vc get "${plain[@]}" "$c" --fsverity-cert="$keys/signer.crt" -o "$work/out"
check "the signed blob is byte-identical" cmp -s "$data/c" "$work/out"
rm -f "$work/out"
expect_exit 3 "a signed blob, another certificate pinned" \
  vc get "${plain[@]}" "$c" --fsverity-cert="$keys/other.crt" -o "$work/out"
check "another certificate: no output file" [ ! -e "$work/out" ]
rm -f "$work/out"
expect_exit 3 "an unsigned blob, a certificate pinned" \
  vc get "${plain[@]}" "$(digest_of "$data/d")" --fsverity-cert="$keys/signer.crt" -o "$work/out"
# e's signature object flipped in the bucket, read through the server that never opened e.
sig_key="$prefix/blobs/${e%%:*}/${e#*:}/fsverity_signature"
check "read e's signature object" s3_get "$sig_key" "$work/e.sig.stored"
check "the bucket holds what fsverity sign wrote" cmp -s "$work/e.sig" "$work/e.sig.stored"
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[-20] ^= 1; open(sys.argv[1], "wb").write(b)' \
  "$work/e.sig.stored"
check "flip a byte of e's signature in the bucket" s3_put "$sig_key" "$work/e.sig.stored"
rm -f "$work/out"
expect_exit 3 "a flipped signature byte is refused" \
  vc get "${guarded[@]}" "$e" --fsverity-cert="$keys/signer.crt" -o "$work/out"
check "a flipped signature: no output file" [ ! -e "$work/out" ]

# ---- the attacks of signed_names_attacks.sh, by a writer of the bucket while the servers run
store_read() { s3_get "$(name_key "$1")" "$2"; }
store_write() { s3_put "$(name_key "$1")" "$2"; }
store_delete() { s3_curl -X DELETE "$S3_ENDPOINT/$S3_BUCKET/$(name_key "$1")" >/dev/null; }
attacks_pid=""
start_guarded() {
  [[ -z $attacks_pid ]] || stop_server "$attacks_pid"
  start_server attacks --listen=127.0.0.1:0 "${s3[@]}" --name_keys="$1"
  attacks_pid=$server_pid guarded=(--server="127.0.0.1:$server_port")
}
run_name_attacks
run_history_checks

# ---- the transparency log of two replicas on the bucket (tlog_replica_checks.sh)
tlog_replica_checks --store="s3://$S3_BUCKET/$prefix-tlog" --s3_endpoint="$S3_ENDPOINT"

# ---- nothing secret in the logs or metrics
private=$(grep -v -- ----- "$keys/publisher.pem" | tr -d '\n')
name_record "$work/v2.object" >"$work/v2.record"
python3 - "$work/v2.record" >"$work/signature" <<'EOF'
import base64, sys
s = open(sys.argv[1], 'rb').read().partition(b'\0')[2]
print(s[-64:].hex()); print(base64.b64encode(s[-64:]).decode())
EOF
for port in "${metrics_ports[@]}"; do
  curl -sf "http://127.0.0.1:$port/metrics" >"$work/metrics-$port.log"
  check "metrics of :$port scraped" grep -q verityd_ "$work/metrics-$port.log"
done
for log in "$work"/*.log "$work/err"; do
  check "no private key in $(basename "$log")" bash -c "! grep -qF '$private' '$log'"
  while read -r sig; do
    check "no statement signature in $(basename "$log")" bash -c "! grep -qF '$sig' '$log'"
  done <"$work/signature"
done

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
