# Helpers for the shell end-to-end tests: check counting, and verityd servers on 127.0.0.1:0
# that are killed, with any background clients, when the test exits however it exits.
# Source it after `set -euo pipefail`; then call init_test NAME VERITYD VERITY.

passed=0
failed=0
server_pid=""   # set by start_server
server_port=""
server_log=""
tracked_pids=()  # every verityd and background client started; SIGKILLed on exit
server_count=0

# init_test NAME VERITYD VERITY: sets $verityd, $verity and $work, and the EXIT trap.
init_test() {
  verityd=$(realpath "$2")
  verity=$(realpath "$3")
  work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/$1.XXXXXX")
  trap on_exit EXIT
}

on_exit() {
  local rc=$? pid log
  for pid in "${tracked_pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for pid in "${tracked_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [[ $rc -ne 0 ]]; then
    echo "FAIL: the script stopped early (exit $rc) after the checks above"
    failed=$((failed + 1))
  fi
  if [[ $failed -ne 0 ]]; then
    # A sanitizer's report first, whole (a server that died of one exits 1,
    # silently), then the server logs, which explain most failures.
    grep -l -E "^(==[0-9]+==ERROR|WARNING: ThreadSanitizer)|runtime error:" "$work"/*.log \
      2>/dev/null | while read -r log; do
      echo "--- a sanitizer's report in $log"
      grep -E -A 40 "^(==[0-9]+==ERROR|WARNING: ThreadSanitizer)|runtime error:" "$log" | head -n 80
    done
    for log in "$work"/*.log; do [[ -e $log ]] && { echo "--- $log"; tail -n 20 "$log"; }; done
  fi
  [[ -n ${KEEP_TEST_WORK:-} ]] || rm -rf "$work"  # kept for a look if set
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]] || exit 1
}

pass() { passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# check DESCRIPTION COMMAND...: passes if COMMAND succeeds.
check() {
  local what=$1
  shift
  if "$@"; then pass; else fail "$what"; fi
}

# expect_exit WANT DESCRIPTION COMMAND...: passes if COMMAND exits with WANT.
expect_exit() {
  local want=$1 what=$2 rc=0
  shift 2
  "$@" || rc=$?
  if [[ $rc -eq $want ]]; then pass; else fail "$what: exit $rc, want $want"; fi
}

# is_prefix FILE OF: FILE is a strict prefix of OF (what a failed get may leave on stdout).
is_prefix() {
  local size
  size=$(stat -c %s "$1")
  [[ $size -lt $(stat -c %s "$2") ]] && cmp -s "$1" <(head -c "$size" "$2")
}

# vc ARGS...: the CLI, bounded, so that a hung call fails the check instead of the test run.
vc() { timeout -k 5 60 "$verity" "$@"; }

# metric PORT NAME: the sum of NAME's series at verityd's metrics endpoint PORT.
metric() {
  curl -sf "http://127.0.0.1:$1/metrics" |
    awk -v n="$2" '$1 == n || index($1, n "{") == 1 {s += $2} END {printf "%.0f\n", s}'
}

# name_record FILE: the version a name file or object FILE points at now, as a name file from
# before histories holds it: "DIGEST\nNAME", then NUL and the statement if it has one
# (server/store/name_history.h). A store writer that writes it back writes that older format,
# which the server still reads.
name_record() {
  python3 - "$1" <<'EOF'
import sys
b = open(sys.argv[1], 'rb').read()
magic = b'verity-name-history 1\n'
if b.startswith(magic):
    header, _, rest = b[len(magic):].partition(b'\n')
    b = rest[:int(header.split(b' ')[1])]
sys.stdout.buffer.write(b)
EOF
}

# only_in_out FILE...: $out holds exactly these names (no partial or temporary files).
only_in_out() {
  local want got
  want=$(printf '%s\n' "$@" | sed '/^$/d' | sort)
  got=$(ls -A "$out" | sort)
  [[ $got == "$want" ]] || { echo "  $out holds: ${got//$'\n'/ }"; return 1; }
}

# is_running PID: true while PID exists and is not a zombie. Bash reaps its children at any
# moment, so /proc/PID/stat is read once: a failed read means the process is gone.
is_running() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $stat && $(awk '{print $3}' <<<"$stat") != Z ]]
}

# wait_for_log LOG REGEX PID SECONDS: true once LOG has a line matching REGEX; false if PID
# exits first or SECONDS pass.
wait_for_log() {
  local i
  for ((i = 0; i < $4 * 10; i++)); do
    grep -qE "$2" "$1" 2>/dev/null && return 0
    is_running "$3" || break
    sleep 0.1
  done
  grep -qE "$2" "$1" 2>/dev/null
}

# wait_for_exit PID SECONDS: reaps PID and sets exit_rc, or returns 1 if it still runs.
wait_for_exit() {
  local i
  for ((i = 0; i <= $2 * 10; i++)); do
    if ! is_running "$1"; then
      exit_rc=0
      wait "$1" || exit_rc=$?
      untrack "$1"
      return 0
    fi
    sleep 0.1
  done
  return 1
}

untrack() {
  local kept=() pid
  for pid in "${tracked_pids[@]}"; do [[ $pid == "$1" ]] || kept+=("$pid"); done
  tracked_pids=("${kept[@]}")
}

# start_server NAME [FLAGS...]: runs verityd with FLAGS (and the caller's VERITYD_* variables),
# logging to $work/NAME-K.log, and waits until it serves. Its metrics go to a free port unless
# the caller says otherwise (tests run in parallel; the default port is one). Sets server_pid,
# server_port, metrics_port (empty without metrics) and server_log; returns 1 with the log
# printed if it does not come up within 30 s.
start_server() {
  local name=$1
  shift
  server_count=$((server_count + 1))
  server_log="$work/$name-$server_count.log"
  VERITYD_METRICS_LISTEN=${VERITYD_METRICS_LISTEN-127.0.0.1:0} "$verityd" "$@" 2>"$server_log" &
  server_pid=$!
  tracked_pids+=("$server_pid")
  # "serving N blobs", or "serving" for a store that keeps no count (S3).
  if ! wait_for_log "$server_log" 'verityd: serving( [0-9]+ blobs)?$' "$server_pid" 30; then
    echo "verityd $* did not start serving; its log:"
    cat "$server_log"
    return 1
  fi
  server_port=$(sed -nE 's/.*listening on [^ ]*:([0-9]+).*/\1/p' "$server_log" | head -n 1)
  metrics_port=$(sed -nE 's|.*metrics on http://[^ ]*:([0-9]+)/metrics.*|\1|p' "$server_log" | head -n 1)
  [[ -n $server_port ]]
}

# stop_server PID [SIGNAL]: signals PID (TERM by default) and reaps it within 20 s; sets
# exit_rc. SIGKILLs it and returns 1 if it does not exit.
stop_server() {
  kill -"${2:-TERM}" "$1"
  wait_for_exit "$1" 20 && return 0
  kill -9 "$1"
  wait_for_exit "$1" 5 || true
  return 1
}

# expect_stop WHAT PID: passes if PID exits 0 within 20 s of SIGTERM.
expect_stop() {
  if ! stop_server "$2"; then
    fail "$1: verityd did not stop within 20 s of SIGTERM"
  elif [[ $exit_rc -ne 0 ]]; then
    fail "$1: verityd exited $exit_rc after SIGTERM, want 0"
  else
    pass
  fi
}

# gets_in_background N ORIGINAL GET_ARGS...: runs `verity get GET_ARGS... -o FILE` N times in a
# row in the background, appending "K EXIT IDENTICAL(yes|no)" per get to $work/gets.results;
# sets gets_pid (tracked).
gets_in_background() {
  local n=$1 original=$2
  shift 2
  : >"$work/gets.results"
  (
    for i in $(seq "$n"); do
      rc=0
      vc get "$@" -o "$work/get$i" || rc=$?
      same=no
      cmp -s "$original" "$work/get$i" 2>/dev/null && same=yes
      echo "$i $rc $same" >>"$work/gets.results"
      rm -f "$work/get$i"
    done
  ) &
  gets_pid=$!
  tracked_pids+=("$gets_pid")
}

# check_gets N WHAT: the gets of gets_in_background finish within 120 s, all N of them, each
# exiting 0 with the original's bytes.
check_gets() {
  if wait_for_exit "$gets_pid" 120; then pass; else fail "the gets $2 finish within 120 s"; fi
  echo "gets $2 (number, exit, identical): $(tr '\n' ';' <"$work/gets.results")"
  check "$1 gets ran $2" [ "$(wc -l <"$work/gets.results")" -eq "$1" ]
  while read -r i rc same; do
    check "get $i $2 exits 0 (got $rc)" [ "$rc" -eq 0 ]
    check "get $i $2 is byte-identical" [ "$same" = yes ]
  done <"$work/gets.results"
}

# start_version_reader FOLDER: in the background, a reader of a folder that `verity sync` keeps
# (each version has docs/readme "release N" and docs/check "N"): resolves FOLDER/docs once a
# round and reads both files there, counting the rounds and those whose two files disagree (a
# mix of two versions). stop_version_reader ends it and sets reader_rounds and reader_mixed.
start_version_reader() {
  local folder=$1
  rm -f "$work/stop-reader" "$work/reader.out"
  (
    mixed=0 rounds=0
    while [[ ! -e $work/stop-reader ]]; do
      d=$(readlink -f "$folder/docs") || continue
      a=$(cat "$d/readme" 2>/dev/null) && b=$(cat "$d/check" 2>/dev/null) || continue
      [[ $a == "release $b" ]] || mixed=$((mixed + 1))
      rounds=$((rounds + 1))
    done
    echo "$rounds $mixed" >"$work/reader.out"
  ) &
  reader_pid=$!
  tracked_pids+=("$reader_pid")
}
stop_version_reader() {
  touch "$work/stop-reader"
  wait_for_exit "$reader_pid" 10 || true
  reader_rounds=0 reader_mixed=1
  [[ -s $work/reader.out ]] && read -r reader_rounds reader_mixed <"$work/reader.out"
  return 0
}

# flip FILE OFFSET: one byte XOR 1, in place.
flip() {
  local byte
  byte=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "$(printf '\\%03o' $((byte ^ 1)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# blob_path STORE DIGEST: where the file store in STORE keeps blob DIGEST ("sha256:<hex>"): a
# directory (data, tree, ...), or, for a blob of at most 1 MiB put with its size, one record
# file whose first bytes are the content (server/store/blob_record.h).
blob_path() { local hex=${2#*:}; echo "$1/blobs/${2%%:*}/${hex:0:2}/$hex"; }
# data_file STORE DIGEST: the file whose first bytes are the blob's content: a flip there is a
# flip of the content at the same offset.
data_file() {
  local path
  path=$(blob_path "$1" "$2")
  if [[ -d $path ]]; then echo "$path/data"; else echo "$path"; fi
}
# stored_data STORE DIGEST: the blob's content as stored (a record's count of content bytes is
# the u64 at offset 16 of its 64-byte footer).
stored_data() {
  local path size
  path=$(blob_path "$1" "$2")
  if [[ -d $path ]]; then
    cat "$path/data"
    return
  fi
  size=$(stat -c %s "$path")
  head -c "$(od -An -tu8 -j $((size - 48)) -N8 "$path" | tr -d ' ')" "$path"
}
# write_stored_data STORE DIGEST FILE: the blob's content overwritten with FILE's bytes, in
# place (behind the server's back; the server must be stopped).
write_stored_data() {
  local path
  path=$(blob_path "$1" "$2")
  if [[ -d $path ]]; then
    cp "$3" "$path/data"
  else
    dd if="$3" of="$path" conv=notrunc status=none
  fi
}
# mark_stored_tree STORE DIGEST: the blob marked as a tree manifest, as a tree Put marks one: a
# directory's empty tree_manifest file, or a record's footer flag (its check made again).
mark_stored_tree() {
  local path
  path=$(blob_path "$1" "$2")
  if [[ -d $path ]]; then
    touch "$path/tree_manifest"
    return
  fi
  mark_record_tree "$path"
}
# mark_record_tree FILE: the record in FILE (server/store/blob_record.h) flagged as a tree
# manifest in its footer, its check made again.
mark_record_tree() {
  python3 -c 'import hashlib, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(-64, 2); footer = bytearray(f.read(64))
    footer[12] |= 1
    footer[56:64] = hashlib.sha256(bytes(footer[:56])).digest()[:8]
    f.seek(-64, 2); f.write(footer)' "$1"
}

# s3_curl CURL_ARGS..., s3_put KEY FILE, s3_get KEY FILE: the bucket of the Ceph cluster that
# tests/testing/with_ceph.sh started (its S3_* and AWS_* variables), as anyone with its
# credentials sees it: plain curl --aws-sigv4.
s3_curl() {
  curl -sf --aws-sigv4 "aws:amz:$AWS_REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"
}
s3_put() { s3_curl -T "$2" "$S3_ENDPOINT/$S3_BUCKET/$1" >/dev/null; }
s3_get() { s3_curl -o "$2" "$S3_ENDPOINT/$S3_BUCKET/$1"; }
# s3_content_key PREFIX DIGEST: the key of the object whose first bytes are blob DIGEST's content
# in the S3 store under PREFIX: its data object, or, for a small blob stored as one record
# (server/store/blob_record.h), the record at its descriptor's key.
s3_content_key() {
  local blob=$1/blobs/${2%%:*}/${2#*:}
  s3_get "$blob/descriptor" "$work/s3-commit-object" || return 1
  if [[ $(tail -c 64 "$work/s3-commit-object" | head -c 8) == VRTYRECD ]]; then
    echo "$blob/descriptor"
  else
    echo "$blob/data"
  fi
}
