#!/usr/bin/env bash
# tests/testing/ceph_cluster.sh end to end: a real single-node Ceph whose radosgw serves plain
# `curl --aws-sigv4` the S3 semantics a store builds on (put-if-absent, ranges, multipart,
# prefix listing), keeps its objects across a radosgw restart, and leaves no process behind.
# Prints how long start-up, the radosgw restart and the stop took, and the daemons' RSS.
# Usage: ceph_cluster_test.sh
set -euo pipefail
source "$(dirname "$0")/verityd_test_lib.sh"
source "$(dirname "$0")/testing/ceph_cluster.sh"

for tool in ceph-mon ceph-osd radosgw radosgw-admin ceph monmaptool curl python3; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (scripts/setup.sh installs it)"; exit 1; }
done

work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/ceph_cluster_test.XXXXXX")
cluster=$work/cluster
completed=false

finish() {
  local rc=$?
  set +e
  ceph_stop "$cluster"
  if [[ $rc -ne 0 || $completed != true ]]; then
    echo "FAIL: the script stopped early (exit $rc) after the checks above"
    failed=$((failed + 1))
  fi
  [[ $failed -eq 0 ]] || ceph_print_logs "$cluster"
  rm -rf "$work"
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]] || exit 1
}
trap finish EXIT

now_us() { echo "${EPOCHREALTIME/./}"; }
# since START_US: seconds since START_US, with two decimals.
since() {
  local us=$(($(now_us) - $1))
  printf '%d.%02d' $((us / 1000000)) $((us / 10000 % 100))
}

# s3 METHOD KEY_AND_QUERY [CURL_ARGS...]: a signed request on the bucket; prints the HTTP status
# (000 if there was no answer). The body goes to $work/body, the headers to $work/headers.
s3() {
  local method=(-X "$1")
  [[ $1 == HEAD ]] && method=(--head)  # -X HEAD would wait for a body
  curl -sS --max-time 30 "${method[@]}" -o "$work/body" -D "$work/headers" -w '%{http_code}' \
    --aws-sigv4 "aws:amz:$AWS_REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "${@:3}" "$S3_ENDPOINT/$S3_BUCKET/$2" || true
}

# expect_http WANT WHAT METHOD KEY_AND_QUERY [CURL_ARGS...]: passes if s3 answers WANT.
expect_http() {
  local want=$1 what=$2 got
  shift 2
  got=$(s3 "$@")
  if [[ $got == "$want" ]]; then
    pass
  else
    fail "$what: HTTP $got, want $want: $(head -c 300 "$work/body" 2>/dev/null)"
  fi
}

# header NAME: NAME's value in the last answer.
header() { sed -n "s/^$1: *//Ip" "$work/headers" | tr -d '\r' | tail -n 1; }

# xml_values TAG: the text of every TAG element of the last answer, one a line.
xml_values() {
  python3 -c '
import sys, xml.etree.ElementTree as ET
for e in ET.parse(sys.argv[1]).iter():
    if e.tag.rsplit("}", 1)[-1] == sys.argv[2]:
        print(e.text or "")' "$work/body" "$1"
}

same_body() { cmp -s "$work/body" "$1"; }
# For check, which runs a command ([[ is none):
is() { [[ $1 == "$2" ]]; }           # is GOT WANT
# shellcheck disable=SC2053 # the right side is a glob
is_like() { [[ $1 == $2 ]]; }        # is_like GOT GLOB
is_gone() { ! is_running "$1"; }     # is_gone PID

# ---- start-up
check "ceph_stop of a directory without a cluster does nothing" ceph_stop "$work/nothing"
start=$(now_us)
ceph_start "$cluster"
echo "start-up until S3 answers (with user, bucket, first multipart upload): $(since "$start") s"
check "S3_ENDPOINT is on 127.0.0.1: $S3_ENDPOINT" is_like "$S3_ENDPOINT" "http://127.0.0.1:[0-9]*"
mon_pid=$CEPH_MON_PID osd_pid=$CEPH_OSD_PID rgw_pid=$CEPH_RGW_PID
for pid in "$mon_pid" "$osd_pid" "$rgw_pid"; do check "daemon $pid runs" is_running "$pid"; done
run_dir=$(cat "$cluster/run_dir")
echo "cluster in $cluster (admin sockets in $run_dir), S3 at $S3_ENDPOINT"
# Unix socket paths have at most 107 bytes: each daemon's admin socket answers.
asok_answers() { timeout 10 ceph --admin-daemon "$1" version >/dev/null; }
for name in ceph-mon.a ceph-osd.0 ceph-client.rgw.a.; do
  sock=$(compgen -G "$run_dir/$name*.asok" | head -n 1) || true
  check "the admin socket $name* answers: ${sock:-none}" asok_answers "${sock:-/nonexistent}"
done

# ---- objects: put, put-if-absent, ranges, head
size=$((1024 * 1024 + 7))
head -c "$size" /dev/urandom >"$work/obj"
head -c 1000 /dev/urandom >"$work/other"
expect_http 200 "PUT dir/obj" PUT dir/obj -T "$work/obj"
check "PUT's ETag is the MD5 of the data" \
  is "$(header ETag)" "\"$(md5sum <"$work/obj" | cut -d' ' -f1)\""
expect_http 412 "PUT If-None-Match: * over an existing key" PUT dir/obj -T "$work/other" \
  -H "If-None-Match: *"
expect_http 200 "PUT If-None-Match: * of a new key" PUT dir/absent -T "$work/other" \
  -H "If-None-Match: *"
expect_http 200 "GET dir/obj" GET dir/obj
check "GET dir/obj gives the first PUT's bytes (the refused PUT changed nothing)" same_body "$work/obj"

expect_http 206 "ranged GET" GET dir/obj -H "Range: bytes=1000-1999"
check "ranged GET gives bytes 1000-1999" cmp -s "$work/body" <(tail -c +1001 "$work/obj" | head -c 1000)
check "ranged GET's Content-Range" is "$(header Content-Range)" "bytes 1000-1999/$size"
expect_http 206 "GET of the last byte" GET dir/obj -H "Range: bytes=$((size - 1))-"
check "GET of the last byte gives it" cmp -s "$work/body" <(tail -c 1 "$work/obj")
expect_http 416 "GET of a range past the end" GET dir/obj -H "Range: bytes=$size-$((size + 10))"

expect_http 200 "HEAD dir/obj" HEAD dir/obj
check "HEAD's Content-Length" is "$(header Content-Length)" "$size"
expect_http 404 "HEAD of a missing key" HEAD dir/missing

# ---- multipart: two 5 MiB parts and a small last one. curl 7.88 signs `?uploads` wrongly: `?uploads=`.
part_size=$((5 * 1024 * 1024))
head -c "$part_size" /dev/urandom >"$work/part1"
head -c "$part_size" /dev/urandom >"$work/part2"
head -c 12345 /dev/urandom >"$work/part3"
cat "$work/part1" "$work/part2" "$work/part3" >"$work/multi"
expect_http 200 "create a multipart upload" POST "big/multi?uploads="
upload_id=$(xml_values UploadId)
check "the UploadId is URL-safe: $upload_id" grep -qxE '[A-Za-z0-9._~-]+' <<<"$upload_id"
complete="<CompleteMultipartUpload>"
for n in 1 2 3; do
  expect_http 200 "upload part $n" PUT "big/multi?partNumber=$n&uploadId=$upload_id" -T "$work/part$n"
  complete+="<Part><PartNumber>$n</PartNumber><ETag>$(header ETag)</ETag></Part>"
done
complete+="</CompleteMultipartUpload>"
expect_http 200 "complete the multipart upload" POST "big/multi?uploadId=$upload_id" \
  --data-binary "$complete"
check "CompleteMultipartUploadResult names the key" is "$(xml_values Key)" big/multi
# radosgw 16.2.15 answers with an empty <ETag> here (Red Hat BZ 2266579); HEAD has the ETag.
[[ -n $(xml_values ETag) ]] || echo "note: CompleteMultipartUploadResult has an empty ETag"
expect_http 200 "GET big/multi" GET big/multi
check "GET big/multi gives the three parts" same_body "$work/multi"
# A multipart ETag is the MD5 of the parts' binary MD5s, then -PARTS.
multi_etag=$(python3 -c '
import hashlib, sys
print(hashlib.md5(b"".join(hashlib.md5(open(f, "rb").read()).digest() for f in sys.argv[1:])).hexdigest())
' "$work/part1" "$work/part2" "$work/part3")
check "GET big/multi's ETag is the multipart ETag: $(header ETag)" is "$(header ETag)" "\"$multi_etag-3\""

# ---- listing: ListObjectsV2 with a prefix. The query is written in canonical order and form
# (sorted, / as %2F), which is what curl 7.88 signs.
expect_http 200 "ListObjectsV2 prefix=dir/" GET "?list-type=2&prefix=dir%2F"
check "listing dir/ gives dir/absent dir/obj: $(xml_values Key | tr '\n' ' ')" \
  is "$(xml_values Key | tr '\n' ' ')" "dir/absent dir/obj "
expect_http 200 "ListObjectsV2 prefix=big/" GET "?list-type=2&prefix=big%2F"
check "listing big/ gives big/multi" is "$(xml_values Key)" big/multi
check "listing big/ gives its size" is "$(xml_values Size)" $((2 * part_size + 12345))

# ---- delete
expect_http 204 "DELETE dir/obj" DELETE dir/obj
expect_http 404 "GET of a deleted key" GET dir/obj
expect_http 200 "ListObjectsV2 after the delete" GET "?list-type=2&prefix=dir%2F"
check "listing dir/ gives dir/absent" is "$(xml_values Key)" dir/absent

for pid in "$mon_pid" "$osd_pid" "$rgw_pid"; do
  echo "RSS of $(cat "/proc/$pid/comm"): $(awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$pid/status") MiB"
done

# ---- radosgw stopped: requests fail at once; restarted: same port, same objects
start=$(now_us)
check "ceph_rgw_stop" ceph_rgw_stop "$cluster"
echo "radosgw stop: $(since "$start") s"
check "radosgw $rgw_pid exited" is_gone "$rgw_pid"
check "the monitor still runs" is_running "$mon_pid"
check "the OSD still runs" is_running "$osd_pid"
start=$(now_us)
expect_exit 7 "a request to the stopped radosgw is refused (curl exit 7)" \
  curl -s -o /dev/null --max-time 10 "$S3_ENDPOINT/"
refused_us=$(($(now_us) - start))
check "the refusal took ${refused_us} us, under 1 s" [ "$refused_us" -lt 1000000 ]

endpoint=$S3_ENDPOINT
start=$(now_us)
check "ceph_rgw_start" ceph_rgw_start "$cluster"
echo "radosgw restart until S3 answers: $(since "$start") s"
check "radosgw is back on the same endpoint" is "$S3_ENDPOINT" "$endpoint"
check "CEPH_RGW_PID is the new radosgw" [ "$CEPH_RGW_PID" != "$rgw_pid" ]
check "the new radosgw runs" is_running "$CEPH_RGW_PID"
expect_http 200 "GET big/multi after the restart" GET big/multi
check "big/multi is intact after the restart" same_body "$work/multi"
expect_http 200 "GET dir/absent after the restart" GET dir/absent
check "dir/absent is intact after the restart" same_body "$work/other"

# ---- stop: nothing of this cluster remains
start=$(now_us)
check "ceph_stop" ceph_stop "$cluster"
echo "stop: $(since "$start") s"
left=$(ceph_cluster_pids "$cluster")
check "no process of the cluster remains: ${left//$'\n'/ }" [ -z "$left" ]
for pid in "$mon_pid" "$osd_pid" "$CEPH_RGW_PID"; do check "daemon $pid exited" is_gone "$pid"; done
check "ceph_stop again does nothing" ceph_stop "$cluster"
if [[ $run_dir == /tmp/ceph.* ]]; then check "the short run directory is gone" [ ! -e "$run_dir" ]; fi
completed=true
