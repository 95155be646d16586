#!/usr/bin/env bash
# `verity sync` against a real verityd on the file store: --once for an init container; the
# kubelet's layout (..data, a folder per version, top-level links); a reader that never sees
# two versions mixed while versions switch; unchanged files hard-linked, only changed ones
# fetched; --exec-on-update, the status file and the metrics; and what it must never switch
# to: a rolled-back statement (a store writer restores an older name object) and a version
# with a swapped blob. SIGTERM stops it with exit 0; a sidecar started before its server
# switches once it serves.
# Usage: tree_sync_test.sh VERITYD VERITY
set -euo pipefail
here=$(dirname "$0")
source "$here/verityd_test_lib.sh"
source "$here/tree_attacks.sh"  # make_release
init_test tree_sync_test "$1" "$2"
for var in $(compgen -v VERITYD_) $(compgen -v VERITY_); do unset "$var"; done

store=$work/store keys=$work/keys name=app/config
mkdir -p "$keys"
openssl genpkey -algorithm ed25519 -out "$keys/publisher.pem" 2>/dev/null
openssl pkey -in "$keys/publisher.pem" -pubout -out "$keys/publisher.pub"
# The server takes statements by a second key too; the clients trust only the publisher's.
openssl genpkey -algorithm ed25519 -out "$keys/other.pem" 2>/dev/null
openssl pkey -in "$keys/other.pem" -pubout -out "$keys/other.pub"
cat "$keys/publisher.pub" "$keys/other.pub" >"$keys/server.pub"
publish=(--sign-key="$keys/publisher.pem" --state-dir="$work/publisher")
trust=(--trusted-keys="$keys/publisher.pub" --state-dir="$work/client")

start_server first --listen=127.0.0.1:0 --store_dir="$store" --name_keys="$keys/server.pub"
port=$server_port srv=(--server="127.0.0.1:$server_port")
# A writer of the disk edits the store between two runs of the server, on the same port.
restart_with() {  # COMMAND...: run it with the server stopped
  stop_server "$server_pid"
  "$@"
  start_server again --listen="127.0.0.1:$port" --store_dir="$store" \
    --name_keys="$keys/server.pub"
}
name_file="$store/names/$(printf '%s' "$name" | sha256sum | cut -d' ' -f1)"
publish_tree() {  # DIR: put it as the name's next version; prints its digest
  vc put "${srv[@]}" "$1" --name="$name" "${publish[@]}" 2>/dev/null | cut -d' ' -f1
}
status_of() { sed -n "s/^$2: //p" "$1/..verity-sync.status"; }

# ---- v1, and --once into a new folder (an init container)
make_release "$work/v1" 1
echo "1" >"$work/v1/docs/check"
v1=$(publish_tree "$work/v1")
cp "$name_file" "$work/name-v1"
expect_exit 0 "--once" vc sync "${srv[@]}" "${trust[@]}" --once "$name" "$work/once"
check "--once: the tree is there" diff -r --no-dereference "$work/v1" "$work/once/..data/"
check "--once: a top-level link per name" \
  test "$(readlink "$work/once/bin")" == ..data/bin -a "$(readlink "$work/once/current")" == ..data/current
check "--once: read through the links" cmp -s "$work/v1/bin/tool" "$work/once/bin/tool"
check "--once: ..data points at the version's folder" \
  test "$(readlink "$work/once/..data")" == "..${v1/:/-}"
check "--once: the status says ok" test "$(status_of "$work/once" state)" == ok
check "--once: the status names the digest" test "$(status_of "$work/once" digest)" == "$v1"
expect_exit 0 "--once again: nothing to do" \
  vc sync "${srv[@]}" "${trust[@]}" --once "$name" "$work/once"
check "--once again: no switch" test "$(status_of "$work/once" switches)" == 0
expect_exit 0 "--probe: a version is in place" vc sync --probe "$name" "$work/once"
expect_exit 0 "--probe --max-age=1h: a recent success" \
  vc sync --probe --max-age=1h "$name" "$work/once"
sleep 2
expect_exit 1 "--probe --max-age=1s: no success since" \
  vc sync --probe --max-age=1s "$name" "$work/once"
expect_exit 1 "--probe: nothing synced yet" vc sync --probe "$name" "$work/never"
mkdir -p "$work/foreign"
echo mine >"$work/foreign/app.conf"
expect_exit 5 "a folder holding other files is refused" \
  vc sync "${srv[@]}" "${trust[@]}" --once "$name" "$work/foreign"

# ---- the sidecar: a long interval, woken by SIGHUP
dir=$work/live
"$verity" sync "${srv[@]}" "${trust[@]}" --interval=1h --metrics-listen=127.0.0.1:0 \
  --exec-on-update="echo \"\$VERITY_SYNC_DIGEST\" >>$work/hooks" "$name" "$dir" \
  2>"$work/sync.log" &
sync_pid=$!
tracked_pids+=("$sync_pid")
wait_for_log "$work/sync.log" "switched to $v1" "$sync_pid" 30 || fail "sync never switched to v1"
mport=$(sed -nE 's|.*metrics on http://[^ ]*:([0-9]+)/metrics.*|\1|p' "$work/sync.log")
sync_metric() {
  curl -sf "http://127.0.0.1:$mport/metrics" | awk -v m="$1" '$1 == m {print $2}'
}
# sync_now: SIGHUP, then wait for the status file to show an attempt after it. An attempt that
# could not reach the server (just restarted: the client's reconnection backoff) is repeated.
sync_now() {
  local before i tries
  for ((tries = 0; tries < 10; tries++)); do
    before=$(status_of "$dir" last_attempt)
    sleep 1.1  # the status's times have whole seconds
    kill -HUP "$sync_pid"
    for ((i = 0; i < 300; i++)); do
      [[ $(status_of "$dir" last_attempt) != "$before" ]] && break
      sleep 0.1
    done
    [[ $(status_of "$dir" last_attempt) != "$before" ]] || { fail "no attempt after SIGHUP"; return; }
    grep -qE "^last_error: .*(connections to all backends failing|UNAVAILABLE)" \
      "$dir/..verity-sync.status" || return 0
  done
}

start_version_reader "$dir"

# ---- v2: two small files changed, published and switched to
cp -a "$work/v1" "$work/v2"
echo "release 2" >"$work/v2/docs/readme"
echo "2" >"$work/v2/docs/check"
v2=$(publish_tree "$work/v2")
tool_inode=$(stat -Lc %i "$dir/bin/tool")
sync_now
check "v2: switched (status: $(status_of "$dir" digest))" test "$(status_of "$dir" digest)" == "$v2"
check "v2: the folder holds v2" diff -r --no-dereference "$work/v2" "$dir/..data/"
check "v2: an unchanged file is hard-linked from v1" \
  test "$(stat -Lc %i "$dir/bin/tool")" == "$tool_inode"
check "v2: the version before is kept for readers inside it" test -d "$dir/..${v1/:/-}"
check "v2: the hook ran for each switch" test "$(cat "$work/hooks")" == "$v1"$'\n'"$v2"
check "v2: 2 switches in the metrics" test "$(sync_metric verity_sync_switches_total)" == 2
check "v2: only the 2 changed files fetched ($(grep "switched to $v2" "$work/sync.log"))" \
  grep -q "switched to $v2 .* 2 fetched (12 bytes)" "$work/sync.log"

# ---- a rolled-back statement (a store writer restores v1's name object): never switched to
cp "$name_file" "$work/name-v2"
restart_with cp "$work/name-v1" "$name_file"
sync_now
check "rollback: the status says failing" test "$(status_of "$dir" state)" == failing
check "rollback: the error says rollback ($(status_of "$dir" last_error))" \
  grep -q "^last_error: .*rollback" "$dir/..verity-sync.status"
check "rollback: still v2" diff -r --no-dereference "$work/v2" "$dir/..data/"
# (At least once: a failed attempt is tried again within seconds.)
check "rollback: counted as data_loss" \
  test "$(sync_metric 'verity_sync_failures_total{reason="data_loss"}')" -ge 1
restart_with cp "$work/name-v2" "$name_file"
# Back to ok: the failed attempts' quick retries stop, and nothing is attempted before the next
# SIGHUP (the interval is 1h). Else a retry could find v3 below before its blob is swapped. The
# pause lets a SIGHUP that sync_now sent just after a retry's attempt be taken first.
sync_now
sleep 2
check "rollback undone: the status says ok" test "$(status_of "$dir" state)" == ok

# ---- v3 with a blob swapped in the store: never switched to, nothing staged left
cp -a "$work/v2" "$work/v3"
head -c 70000 /dev/urandom >"$work/v3/docs/new"
echo "release 3" >"$work/v3/docs/readme"
echo "3" >"$work/v3/docs/check"
v3=$(publish_tree "$work/v3")
new_digest=$("$verity" digest "$work/v3/docs/new" | cut -d' ' -f1)
head -c 70000 /dev/urandom >"$work/swapped"
restart_with write_stored_data "$store" "$new_digest" "$work/swapped"
sync_now
check "a swapped blob: the status says failing" test "$(status_of "$dir" state)" == failing
check "a swapped blob: still v2" diff -r --no-dereference "$work/v2" "$dir/..data/"
check "a swapped blob: no staging folder left" \
  test -z "$(find "$dir" -maxdepth 1 -name '..staging-*')"
check "a swapped blob: the status still names v2" test "$(status_of "$dir" digest)" == "$v2"
rc=0
vc sync "${srv[@]}" "${trust[@]}" --once "$name" "$work/init" 2>/dev/null || rc=$?
check "a swapped blob: --once exits 3 (got $rc)" [ "$rc" -eq 3 ]
check "a swapped blob: --once switched to nothing" test ! -e "$work/init/..data"

# ---- a version signed by a key the clients do not trust: never switched to
cp -a "$work/v2" "$work/other"
echo "release 9" >"$work/other/docs/readme"
echo "9" >"$work/other/docs/check"
vc put "${srv[@]}" "$work/other" --name="$name" --sign-key="$keys/other.pem" \
  --state-dir="$work/other-signer" >/dev/null 2>&1
sync_now
check "an untrusted signer: the status says failing" test "$(status_of "$dir" state)" == failing
check "an untrusted signer: the error says why ($(status_of "$dir" last_error))" \
  grep -q "^last_error: .*valid signatures by trusted keys" "$dir/..verity-sync.status"
check "an untrusted signer: still v2" diff -r --no-dereference "$work/v2" "$dir/..data/"

# ---- the publisher ships v4 without that content: switched to; SIGTERM stops with exit 0
# (The server still holds the damaged blob: a put of the same content would find it present.)
head -c 70000 /dev/urandom >"$work/v3/docs/new"
echo "release 4" >"$work/v3/docs/readme"
echo "4" >"$work/v3/docs/check"
v4=$(publish_tree "$work/v3")
sync_now
check "v4: switched" test "$(status_of "$dir" digest)" == "$v4"
check "v4: the folder holds it" diff -r --no-dereference "$work/v3" "$dir/..data/"
check "v4: v1 pruned, v2 kept" test ! -e "$dir/..${v1/:/-}" -a -d "$dir/..${v2/:/-}"
check "v4: files are read-only, executables 0555 ($(stat -c %a "$dir/..data/docs/readme") $(stat -c %a "$dir/..data/bin/tool"))" \
  test "$(stat -c %a "$dir/..data/docs/readme")" == 444 -a \
  "$(stat -c %a "$dir/..data/bin/tool")" == 555
rc=0
vc sync "${srv[@]}" "${trust[@]}" --once "$name" "$dir" 2>"$work/second.err" || rc=$?
check "a second sync on the folder is refused (exit $rc: $(cat "$work/second.err"))" \
  eval '[ "$rc" -eq 5 ] && grep -q "in use by another process" "$work/second.err"'
stop_version_reader
check "the reader never saw two versions mixed ($reader_rounds rounds, $reader_mixed mixed)" \
  [ "$reader_rounds" -gt 0 -a "$reader_mixed" -eq 0 ]
kill -TERM "$sync_pid"
if wait_for_exit "$sync_pid" 20; then
  check "SIGTERM: exit 0 (got $exit_rc)" [ "$exit_rc" -eq 0 ]
else
  fail "sync still runs 20 s after SIGTERM"
fi

# ---- a restart takes nothing on trust: the version in place, changed on the disk since (a
# file made writable and edited, same size), is checked whole and fetched again
rel=docs/readme
chmod u+w "$dir/..data/$rel"
echo "release 5" >"$dir/..data/$rel"
expect_exit 0 "a restart over an edited version" \
  vc sync "${srv[@]}" "${trust[@]}" --once "$name" "$dir" 2>"$work/restart.err"
check "the edit was found ($(head -c 300 "$work/restart.err"))" \
  grep -q "not its tree, fetching it again" "$work/restart.err"
check "the folder holds v4 again" diff -r --no-dereference "$work/v3" "$dir/..data/"

# ---- a version folder planted in DIR under the next version's name: replaced, never used
cp -a "$work/v3" "$work/v5"
echo "release 5" >"$work/v5/docs/readme"
v5_digest=$(vc put "${srv[@]}" "$work/v5" 2>/dev/null | cut -d' ' -f1)
mkdir "$dir/..${v5_digest/:/-}"
cp -a "$work/v5/." "$dir/..${v5_digest/:/-}/"
echo planted >"$dir/..${v5_digest/:/-}/docs/readme"
vc put "${srv[@]}" "$work/v5" --name="$name" "${publish[@]}" >/dev/null 2>&1
expect_exit 0 "sync past a planted version folder" \
  vc sync "${srv[@]}" "${trust[@]}" --once "$name" "$dir" 2>/dev/null
check "the planted bytes are not what the app reads" \
  test "$(cat "$dir/docs/readme")" == "release 5"

# ---- a tree whose top-level names the layout cannot show: refused before anything is staged
cp -a "$work/v5" "$work/v6"
echo data >"$work/v6/..data"
vc put "${srv[@]}" "$work/v6" --name="$name" "${publish[@]}" >/dev/null 2>&1
rc=0
vc sync "${srv[@]}" "${trust[@]}" --once "$name" "$dir" 2>"$work/v6.err" || rc=$?
check "a top-level ..data: refused (exit $rc: $(cat "$work/v6.err"))" \
  eval '[ "$rc" -eq 1 ] && grep -q "cannot be a top-level name" "$work/v6.err"'
check "a top-level ..data: nothing staged" \
  test -z "$(find "$dir" -maxdepth 1 -name '..staging-*')"
check "a top-level ..data: still v5" test "$(cat "$dir/docs/readme")" == "release 5"

# ---- a folder others can write into is refused
mkdir -m 0777 "$work/shared"
rc=0
vc sync "${srv[@]}" "${trust[@]}" --once "$name" "$work/shared" 2>"$work/shared.err" || rc=$?
check "a world-writable folder: refused (exit $rc: $(cat "$work/shared.err"))" \
  eval '[ "$rc" -eq 5 ] && grep -q "writable by group or others" "$work/shared.err"'

# ---- a fresh state (a new pod's) takes a first statement only if it is recent (here 1 s; 24h
# by default); the state that has seen the name takes it whatever its age
vc put "${srv[@]}" "$work/v5" --name="$name" "${publish[@]}" >/dev/null 2>&1
expect_exit 0 "v5 signed again, seen" vc sync "${srv[@]}" "${trust[@]}" --once "$name" "$dir"
sleep 2
rc=0
vc sync "${srv[@]}" --trusted-keys="$keys/publisher.pub" --state-dir="$work/fresh-state" \
  --max-statement-age=1s --once "$name" "$work/fresh" 2>"$work/fresh.err" || rc=$?
check "a fresh state and an older statement: refused (exit $rc: $(cat "$work/fresh.err"))" \
  eval '[ "$rc" -eq 3 ] && grep -q "has no record of it" "$work/fresh.err"'
expect_exit 0 "the state that has seen it takes it" \
  vc sync "${srv[@]}" "${trust[@]}" --max-statement-age=1s --once "$name" "$dir"

# ---- a sidecar that starts before its server (a pod's containers start together): its first
# attempts fail, and it tries again within seconds, not after its interval (here 1h)
stop_server "$server_pid"
"$verity" sync "${srv[@]}" "${trust[@]}" --interval=1h "$name" "$work/early" \
  2>"$work/early.log" &
early_pid=$!
tracked_pids+=("$early_pid")
wait_for_log "$work/early.log" "failed, keeping nothing" "$early_pid" 30 ||
  fail "the sidecar made no attempt"
start_server later --listen="127.0.0.1:$port" --store_dir="$store" \
  --name_keys="$keys/server.pub"
check "a sidecar started before its server switches once it serves, no SIGHUP" \
  wait_for_log "$work/early.log" "switched to " "$early_pid" 20
kill -TERM "$early_pid"
wait_for_exit "$early_pid" 20 || fail "the early sidecar still runs 20 s after SIGTERM"

expect_stop later "$server_pid"
