#!/usr/bin/env bash
# verityd replicas over one S3 bucket of a real radosgw (run through tests/testing/with_ceph.sh,
# which exports S3_*, AWS_* and CEPH_DIR), driven by the `verity` CLI:
# - three stateless replicas: a Put through one is read, listed, stat'ed and deleted through the
#   others; one SIGKILLed amid parallel gets over all three: the gets resume on the others,
#   byte-identical;
# - objects damaged in the bucket with a plain S3 client (curl --aws-sigv4), FEC off: a flipped
#   data byte, a flipped tree byte, a truncated data object and another blob's data: exit 3, no
#   bad byte, verityd_corruption_detected_total grows; --on_corruption=quarantine takes the blob
#   out of service on every replica;
# - FEC on (the default): the same flips are repaired by another replica, counted, the objects
#   left as they are and the blob marked damaged/ until a Put replaces them; a veritysetup image
#   imported stores veritysetup's --fec-device as its fec object;
# - radosgw stopped mid-read and mid-Put, then started again: exit 4, health NOT_SERVING and
#   back, nothing partial visible, every acknowledged Put readable; a verityd SIGKILLed mid-Put
#   leaves no visible blob;
# - bad configuration fails start-up with a message naming the setting, and no secret.
# Usage: with_ceph.sh s3_e2e_test.sh VERITYD VERITY HEALTH_PROBE
set -euo pipefail
source "$(dirname "$0")/verityd_test_lib.sh"
init_test s3_e2e_test "$1" "$2"
probe=$(realpath "$3")
for var in $(compgen -v VERITYD_) VERITY_SERVER; do unset "$var"; done
[[ -n ${S3_ENDPOINT:-} && -n ${CEPH_DIR:-} ]] || { echo "FAIL: run through with_ceph.sh"; exit 1; }
ceph_lib=${CEPH_CLUSTER_LIB:?}

prefix="e2e-$$-$RANDOM"
s3=(--store="s3://$S3_BUCKET/$prefix" --s3_endpoint="$S3_ENDPOINT" --store_probe_interval=1s)

# blob_key DIGEST OBJECT: the object's key (docs/storage.md).
blob_key() { echo "$prefix/blobs/${1%%:*}/${1#*:}/$2"; }

# replica NAME [FLAGS...]: start_server over the bucket.
replica() {
  local name=$1
  shift
  start_server "$name" --listen=127.0.0.1:0 "${s3[@]}" "$@"
}
# digest_of FILE: what put prints for FILE.
digest_of() { "$verity" digest "$1" | awk '{print $1}'; }

data=$work/data
mkdir -p "$data"
head -c $((48 * 1048576)) /dev/urandom >"$data/big"
head -c 300000 /dev/urandom >"$data/small"
# Over 1 MiB: objects of their own parts (data, tree, fec) to damage; a small blob's record is
# damaged below.
for k in d t x s q; do head -c 1100000 /dev/urandom >"$data/victim-$k"; done

# ---- three stateless replicas (FEC off: the damage below is DATA_LOSS; the FEC section repairs it)
pids=() ports=() mports=()
for i in 1 2 3; do
  replica "replica$i" --fec_roots=0
  pids+=("$server_pid") ports+=("$server_port") mports+=("$metrics_port")
done
r1=(--server="127.0.0.1:${ports[0]}") r2=(--server="127.0.0.1:${ports[1]}")
r3=(--server="127.0.0.1:${ports[2]}")
check "the log names the bucket, not a credential" \
  grep -q "store s3://$S3_BUCKET/$prefix" "$server_log"
check "no secret in the log" bash -c "! grep -qF '$AWS_SECRET_ACCESS_KEY' '$work'/*.log"

big=$(digest_of "$data/big")
small=$(digest_of "$data/small")
expect_exit 0 "put big through replica 1" vc put "${r1[@]}" "$data/big"
expect_exit 0 "put small through replica 1" vc put "${r1[@]}" "$data/small" --name=small
expect_exit 0 "get big through replica 2" vc get "${r2[@]}" "$big" -o "$work/out"
check "big through replica 2 is byte-identical" cmp -s "$data/big" "$work/out"
expect_exit 0 "get small by name through replica 3" vc get "${r3[@]}" small -o "$work/out"
check "small through replica 3 is byte-identical" cmp -s "$data/small" "$work/out"
check "stat through replica 3 shows the size" \
  bash -c "'$verity' stat ${r3[*]} '$big' | grep -q 50331648"
check "ls through replica 2 lists both" \
  bash -c "'$verity' ls ${r2[*]} | grep -c -e '$big' -e '$small' | grep -qx 2"
expect_exit 5 "rm of small, which the name small reaches" vc rm "${r2[@]}" "$small"
expect_exit 0 "rm --force small through replica 2" vc rm "${r2[@]}" --force "$small"
expect_exit 2 "small is gone through replica 1" vc stat "${r1[@]}" "$small"
expect_exit 2 "its name is gone through replica 3" vc get "${r3[@]}" small -o "$work/out"
check "replica 1 counted S3 requests" [ "$(metric "${mports[0]}" verityd_s3_requests_total)" -gt 0 ]
check "replica 2 counted bytes from S3" \
  [ "$(metric "${mports[1]}" verityd_s3_received_bytes_total)" -ge $((48 * 1048576)) ]

# ---- SIGKILL of replica 2 amid parallel gets over all three
target="ipv4:127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}"
gets_in_background 3 "$data/big" --server="$target" --parallel=4 "$big"
streaming=no
for _ in $(seq 500); do
  if [[ $(metric "${mports[1]}" verityd_active_streams) -ge 1 ]]; then streaming=yes; break; fi
  sleep 0.01
done
kill -9 "${pids[1]}"
check "replica 2 was streaming when it was killed" [ "$streaming" = yes ]
wait_for_exit "${pids[1]}" 10 || true
check_gets 3 "around the kill"

# ---- objects damaged in the bucket: each victim read once through replica 3
damage() { # damage KIND DIGEST: rewrites one of the blob's objects
  local d=$work/damaged
  case $1 in
    d) s3_get "$(blob_key "$2" data)" "$d" && flip "$d" 150000 && s3_put "$(blob_key "$2" data)" "$d" ;;
    t) s3_get "$(blob_key "$2" tree)" "$d" && flip "$d" 100 && s3_put "$(blob_key "$2" tree)" "$d" ;;
    x) s3_get "$(blob_key "$2" data)" "$d" && head -c 150000 "$d" >"$d.short" &&
      s3_put "$(blob_key "$2" data)" "$d.short" ;;
    s) s3_put "$(blob_key "$2" data)" "$data/small" ;;
  esac
}
corrupt_before=$(metric "${mports[2]}" verityd_corruption_detected_total)
declare -A what=([d]="a flipped data byte" [t]="a flipped tree byte" [x]="a truncated data object"
  [s]="another blob's data")
for k in d t x s; do
  expect_exit 0 "put victim-$k" vc put "${r1[@]}" "$data/victim-$k"
  v=$(digest_of "$data/victim-$k")
  check "damage the object: ${what[$k]}" damage "$k" "$v"
  rm -f "$work/out"
  expect_exit 3 "${what[$k]}: get exits 3" vc get "${r3[@]}" "$v" -o "$work/out"
  check "${what[$k]}: no output file" [ ! -e "$work/out" ]
  vc get "${r3[@]}" "$v" >"$work/stdout" 2>/dev/null || true
  check "${what[$k]}: stdout is a strict prefix of the blob" is_prefix "$work/stdout" "$data/victim-$k"
done
corrupt_after=$(metric "${mports[2]}" verityd_corruption_detected_total)
check "verityd_corruption_detected_total grew by 8 ($corrupt_before -> $corrupt_after)" \
  [ $((corrupt_after - corrupt_before)) -eq 8 ]

# ---- quarantine: found by a replica that quarantines, refused by every other
replica quarantiner --on_corruption=quarantine
qport=$server_port qpid=$server_pid
expect_exit 0 "put victim-q" vc put "${r1[@]}" "$data/victim-q"
q=$(digest_of "$data/victim-q")
check "damage victim-q's data" damage d "$q"
expect_exit 3 "the quarantining replica finds the damage" vc get --server="127.0.0.1:$qport" "$q"
check "the quarantine marker is in the bucket" \
  s3_get "$prefix/quarantine/${q%%:*}-${q#*:}" "$work/marker"
vc stat "${r3[@]}" "$q" >"$work/stat" 2>&1 || true
check "replica 3 refuses the quarantined blob" grep -qi quarantin "$work/stat"
expect_exit 3 "replica 3's get exits 3" vc get "${r3[@]}" "$q" -o "$work/out"
s3_put "$(blob_key "$q" data)" "$data/victim-q"
expect_exit 0 "a Put of the right content takes it out of quarantine" \
  vc put "${r1[@]}" "$data/victim-q"
expect_exit 0 "then replica 3 serves it" vc get "${r3[@]}" "$q" -o "$work/out"
check "byte-identical" cmp -s "$data/victim-q" "$work/out"
expect_stop quarantiner "$qpid"

# ---- FEC on (the default): the same flips repaired by another replica
# object_is KEY FILE: the bucket's object KEY holds FILE's bytes. no_object KEY: there is none.
object_is() { s3_curl "$S3_ENDPOINT/$S3_BUCKET/$1" | cmp -s - "$2"; }
no_object() { ! s3_curl -o /dev/null "$S3_ENDPOINT/$S3_BUCKET/$1"; }
replica fec
fport=$server_port fpid=$server_pid
f=(--server="127.0.0.1:$fport")
repaired_before=$(metric "${mports[2]}" verityd_fec_repaired_blocks_total)
declare -A object=([d]=data [t]=tree)
for k in d t; do
  cp "$data/victim-$k" "$data/fec-$k"
  printf 'fec' | dd of="$data/fec-$k" conv=notrunc status=none  # not victim-$k's blob
  expect_exit 0 "fec: put fec-$k" vc put "${f[@]}" "$data/fec-$k"
  v=$(digest_of "$data/fec-$k")
  check "fec: the Put wrote the fec object" s3_get "$(blob_key "$v" fec)" "$work/fec"
  check "fec: damage the object: ${what[$k]}" damage "$k" "$v"
  s3_get "$(blob_key "$v" "${object[$k]}")" "$work/damaged-object"
  expect_exit 0 "fec: ${what[$k]}: replica 3 repairs it" vc get "${r3[@]}" "$v" -o "$work/out"
  check "fec: ${what[$k]}: byte-identical" cmp -s "$data/fec-$k" "$work/out"
  check "fec: ${what[$k]}: the object is left as it is" \
    object_is "$(blob_key "$v" "${object[$k]}")" "$work/damaged-object"
  mark=$prefix/damaged/${v%%:*}-${v#*:}
  check "fec: ${what[$k]}: the blob is marked damaged" s3_get "$mark" "$work/mark"
  expect_exit 0 "fec: ${what[$k]}: a Put of it" vc put "${r1[@]}" "$data/fec-$k"
  check "fec: ${what[$k]}: the Put replaced the object" \
    object_is "$(blob_key "$v" data)" "$data/fec-$k"
  check "fec: ${what[$k]}: and lifted the mark" no_object "$mark"
done
repaired_after=$(metric "${mports[2]}" verityd_fec_repaired_blocks_total)
check "fec: verityd_fec_repaired_blocks_total grew ($repaired_before -> $repaired_after)" \
  [ "$repaired_after" -gt "$repaired_before" ]

# ---- a small blob: one object, its record (server/store/blob_record.h) at the descriptor's key
head -c 16384 /dev/urandom >"$data/record"
expect_exit 0 "record: put a 16 KiB file" vc put "${r1[@]}" "$data/record"
rv=$(digest_of "$data/record")
check "record: the blob's one object is its record" s3_get "$(blob_key "$rv" descriptor)" "$work/record"
check "record: no data object" no_object "$(blob_key "$rv" data)"
check "record: it begins with the content" cmp -s -n 16384 "$work/record" "$data/record"
expect_exit 0 "record: replica 3 serves it" vc get "${r3[@]}" "$rv" -o "$work/out"
check "record: byte-identical" cmp -s "$data/record" "$work/out"
head -c 16384 /dev/urandom >"$data/record-2"
expect_exit 0 "record: put another" vc put "${r1[@]}" "$data/record-2"
rv2=$(digest_of "$data/record-2")
s3_get "$(blob_key "$rv2" descriptor)" "$work/record-2"
check "record: flip a content byte in the bucket" flip "$work/record-2" 5000
check "record: write it back" s3_put "$(blob_key "$rv2" descriptor)" "$work/record-2"
rm -f "$work/out"
expect_exit 3 "record: a flipped byte: get exits 3" vc get "${r3[@]}" "$rv2" -o "$work/out"
check "record: a flipped byte: no output file" [ ! -e "$work/out" ]
check "fec: replica 3 logged the repairs" grep -q "FEC repaired" "$work"/replica3-*.log

# ---- FEC of an imported veritysetup image: veritysetup's --fec-device, byte for byte
head -c $((3 * 1048576)) /dev/urandom >"$data/image"
/usr/sbin/veritysetup format "$data/image" "$work/hashdev" --fec-device="$work/fecdev" \
  --fec-roots=2 --salt=0011 >"$work/format.out"
root=$(awk '/^Root hash:/ {print $3}' "$work/format.out")
vc put "${f[@]}" "$data/image" --root-hash="$root" --hash-device="$work/hashdev" >"$work/put.out"
image=$(awk '{print $1}' "$work/put.out")
check "fec: the image was imported" [ -n "$image" ]
check "fec: its fec object is veritysetup's --fec-device" \
  object_is "$(blob_key "$image" fec)" "$work/fecdev"
expect_stop fec "$fpid"

# ---- radosgw stopped mid-read: a cold replica, a reader that stalls after 1 MiB
replica cold
cport=$server_port cpid=$server_pid cmport=$metrics_port
mkfifo "$work/fifo"
(
  rc=0
  vc get --server="127.0.0.1:$cport" "$big" >"$work/fifo" || rc=$?
  echo "$rc" >"$work/read.rc"
) &
reader=$!
tracked_pids+=("$reader")
exec 3<"$work/fifo"
head -c 1048576 <&3 >"$work/partial"
bash "$ceph_lib" rgw-stop "$CEPH_DIR"
cat <&3 >>"$work/partial"
exec 3<&-
wait_for_exit "$reader" 120 || fail "the stalled read ends within 120 s"
check "the read cut by the outage exits 4 (got $(cat "$work/read.rc"))" [ "$(cat "$work/read.rc")" = 4 ]
check "what it wrote is a strict prefix of the blob" is_prefix "$work/partial" "$data/big"
unserving=no
for _ in $(seq 100); do
  if ! "$probe" "127.0.0.1:$cport" >/dev/null; then unserving=yes; break; fi
  sleep 0.1
done
check "health is NOT_SERVING while radosgw is down" [ "$unserving" = yes ]
check "verityd_store_up is 0" [ "$(metric "$cmport" verityd_store_up)" -eq 0 ]
# A Put while it is down fails, and leaves nothing.
head -c 3000000 /dev/urandom >"$data/during"
expect_exit 4 "a Put while radosgw is down exits 4" vc put --server="127.0.0.1:$cport" "$data/during"
check "radosgw starts again" bash "$ceph_lib" rgw-start "$CEPH_DIR"
serving=no
for _ in $(seq 150); do
  if "$probe" "127.0.0.1:$cport" >/dev/null; then serving=yes; break; fi
  sleep 0.1
done
check "health is SERVING again by itself" [ "$serving" = yes ]
check "the cold replica logged both transitions" \
  grep -q "NOT_SERVING" "$work/cold-"*.log
expect_exit 0 "then the get succeeds" vc get --server="127.0.0.1:$cport" "$big" -o "$work/out"
check "byte-identical" cmp -s "$data/big" "$work/out"
expect_exit 2 "the failed Put left no blob" vc stat "${r1[@]}" "$(digest_of "$data/during")"

# ---- radosgw stopped mid-Put
head -c $((64 * 1048576)) /dev/urandom >"$data/put1"
(
  rc=0
  vc put --server="127.0.0.1:$cport" "$data/put1" || rc=$?
  echo "$rc" >"$work/put.rc"
) &
putter=$!
tracked_pids+=("$putter")
put_before=$(metric "$cmport" verityd_put_bytes_total)
for _ in $(seq 500); do
  [[ $(metric "$cmport" verityd_put_bytes_total) -gt $put_before ]] && break
  sleep 0.01
done
bash "$ceph_lib" rgw-stop "$CEPH_DIR"
wait_for_exit "$putter" 120 || fail "the cut Put ends within 120 s"
check "the Put cut by the outage exits 4 (got $(cat "$work/put.rc"))" [ "$(cat "$work/put.rc")" = 4 ]
check "radosgw starts again" bash "$ceph_lib" rgw-start "$CEPH_DIR"
expect_exit 2 "the cut Put left no blob" vc stat "${r1[@]}" "$(digest_of "$data/put1")"
expect_exit 0 "an acknowledged Put is readable after the outages" vc get "${r3[@]}" "$big" -o "$work/out"
check "byte-identical" cmp -s "$data/big" "$work/out"
expect_stop cold "$cpid"

# ---- verityd SIGKILLed mid-Put
replica doomed
dport=$server_port dpid=$server_pid dmport=$metrics_port
(vc put --server="127.0.0.1:$dport" "$data/put1" >/dev/null 2>&1 || true) &
putter=$!
tracked_pids+=("$putter")
for _ in $(seq 500); do
  [[ $(metric "$dmport" verityd_put_bytes_total) -gt 0 ]] && break
  sleep 0.01
done
kill -9 "$dpid"
wait_for_exit "$dpid" 10 || true
wait_for_exit "$putter" 60 || true
expect_exit 2 "a Put cut by SIGKILL left no blob" vc stat "${r1[@]}" "$(digest_of "$data/put1")"
check "ls does not list it" bash -c "! '$verity' ls ${r1[*]} | grep -q '$(digest_of "$data/put1")'"

# ---- bad configuration: start-up fails, naming the setting and no secret
# start_fails NAME REGEX [ENV=VALUE...] -- FLAGS...: verityd exits non-zero (1: the store did
# not open; 2: the settings are invalid) and its log matches REGEX.
start_fails() {
  local name=$1 regex=$2 envs=() log pid
  shift 2
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  log="$work/$name.log"
  env "${envs[@]}" "$verityd" --listen=127.0.0.1:0 --metrics_listen= "$@" 2>"$log" &
  pid=$!
  tracked_pids+=("$pid")
  if ! wait_for_exit "$pid" 60; then fail "$name: verityd still runs after 60 s"; return; fi
  check "$name: exits non-zero" [ "$exit_rc" -ne 0 ]
  check "$name: says $regex" grep -qE -e "$regex" "$log"
  check "$name: no secret in the log" bash -c "! grep -qF '$AWS_SECRET_ACCESS_KEY' '$log'"
}
start_fails unknown-bucket "no-such-bucket-e2e.*--s3_endpoint" -- \
  --store="s3://no-such-bucket-e2e/x" --s3_endpoint="$S3_ENDPOINT"
start_fails wrong-secret "AWS_ACCESS_KEY_ID" AWS_SECRET_ACCESS_KEY=not-the-secret -- "${s3[@]}"
start_fails bad-endpoint "--s3_endpoint=http://127.0.0.1:1" -- \
  --store="s3://$S3_BUCKET/x" --s3_endpoint=http://127.0.0.1:1
start_fails no-credentials "AWS_ACCESS_KEY_ID" AWS_ACCESS_KEY_ID= AWS_SECRET_ACCESS_KEY= \
  AWS_SHARED_CREDENTIALS_FILE=/nonexistent -- "${s3[@]}"

expect_stop "replica 1" "${pids[0]}"
expect_stop "replica 3" "${pids[2]}"
