#!/usr/bin/env bash
# verityd's life cycle through the CLI: configuration by VERITYD_* variables and flags, refused
# configurations, draining on SIGTERM/SIGINT, and crash safety when SIGKILLed amid Puts.
# Usage: server_lifecycle_test.sh PATH_TO_VERITYD PATH_TO_VERITY
set -euo pipefail
source "$(dirname "$0")/verityd_test_lib.sh"
init_test server-lifecycle "$1" "$2"
for var in $(compgen -v VERITYD_) VERITY_SERVER; do unset "$var"; done

head -c 100000 /dev/urandom >"$work/small"
small_digest=$(/usr/bin/fsverity digest "$work/small" | cut -d' ' -f1)

# stored_in STORE: the small file's blob is in STORE.
stored_in() { cmp -s "$work/small" <(stored_data "$1" "$small_digest"); }

# ---- (a) configuration through the environment; flags win
VERITYD_LISTEN=127.0.0.1:0 VERITYD_STORE_DIR="$work/env-store" start_server env
check "env: the listening line names the env store" grep -q "(store $work/env-store)" "$server_log"
check "env: the store is created" [ -f "$work/env-store/VERSION" ]
expect_exit 0 "env: put" vc put --server="127.0.0.1:$server_port" "$work/small" >/dev/null
check "env: the blob is in the env store" stored_in "$work/env-store"
expect_stop env "$server_pid"
check "env: the log shows the shutdown" grep -q "received Terminated; shutting down" "$server_log"
check "env: the log shows the stop" grep -q "verityd: stopped" "$server_log"
check "env: the log names the dispatch, its calibration and the online tuning" \
  grep -qE "dispatch: adaptive, inline limits none=[0-9]+,rt=[0-9]+,be=[0-9]+,idle=0, tuned online \(calibrated: hash" \
  "$server_log"
check "env: shutdown logs the Put's latency" \
  grep -qE "stats rpc method=Put class=none code=OK count=1 " "$server_log"

# The dispatch flags from the environment; a Read's placement shows in the shutdown stats.
VERITYD_LISTEN=127.0.0.1:0 VERITYD_STORE_DIR="$work/env-store" VERITYD_DISPATCH=pool \
  VERITYD_INLINE_LIMIT_BYTES=rt=65536 start_server env-dispatch
check "env: VERITYD_DISPATCH and VERITYD_INLINE_LIMIT_BYTES" \
  grep -qE "dispatch: pool, inline limits none=[0-9]+,rt=65536," "$server_log"
expect_exit 0 "env-dispatch: get" vc get --server="127.0.0.1:$server_port" --priority=idle \
  "$(vc put --server="127.0.0.1:$server_port" "$work/small" | cut -d' ' -f1)" -o "$work/small.out"
expect_stop env-dispatch "$server_pid"
check "env-dispatch: the Read was forced to the pool" \
  grep -qE "stats dispatch path=pool class=idle reason=forced count=[1-9]" "$server_log"
check "env-dispatch: the pool's queue wait is logged" \
  grep -qE "stats queue_wait class=idle count=[1-9]" "$server_log"

# A non-loopback VERITYD_LISTEN would be refused without TLS: --listen must replace it.
VERITYD_LISTEN=0.0.0.0:0 VERITYD_STORE_DIR="$work/dirA" VERITYD_VERIFY_ON_READ=false \
  start_server override --listen=127.0.0.1:0 --store_dir="$work/dirB" --verify_on_read=true
check "override: listens where --listen says" grep -q "listening on 127.0.0.1:" "$server_log"
check "override: the store is in dirB" [ -f "$work/dirB/VERSION" ]
check "override: dirA is not created" [ ! -e "$work/dirA" ]
check "override: --verify_on_read=true wins" bash -c '! grep -q WARNING "$1"' _ "$server_log"
expect_exit 0 "override: put" vc put --server="127.0.0.1:$server_port" "$work/small" >/dev/null
check "override: the blob is in dirB" stored_in "$work/dirB"
expect_stop override "$server_pid"

# --store names the same directory as --store_dir, as a path or a file:// URL.
start_server store-url --listen=127.0.0.1:0 --store="file://$work/dirB"
check "--store=file://: the existing store is served" grep -q "serving 1 blobs" "$server_log"
expect_stop store-url "$server_pid"

VERITYD_LISTEN=127.0.0.1:0 VERITYD_STORE_DIR="$work/dirB" VERITYD_VERIFY_ON_READ=false \
  start_server env-bool
check "env: a boolean from the environment" grep -q "WARNING: --verify_on_read=false" "$server_log"
check "env: the existing store is served" grep -q "serving 1 blobs" "$server_log"
expect_stop env-bool "$server_pid"

# ---- (b) configurations verityd must refuse, with a message that says why
refused() {  # WHAT REGEX [VERITYD FLAGS...]: verityd exits non-zero at once, logging REGEX
  local what=$1 regex=$2 rc=0
  shift 2
  VERITYD_METRICS_LISTEN=${VERITYD_METRICS_LISTEN-127.0.0.1:0} \
    timeout -k 5 20 "$verityd" "$@" 2>"$work/refused.log" || rc=$?
  if [[ $rc -eq 0 || $rc -ge 124 ]]; then
    fail "$what: exit $rc, want a refusal"
  elif ! grep -qE -- "$regex" "$work/refused.log"; then
    fail "$what: exit $rc but the message lacks /$regex/: $(cat "$work/refused.log")"
  else
    pass
  fi
}
refused "plaintext on 0.0.0.0" "--allow_insecure" --listen=0.0.0.0:0 --store_dir="$work/open"
check "a refused start creates no store" [ ! -e "$work/open" ]
VERITYD_LISTEN=0.0.0.0:0 refused "plaintext on 0.0.0.0 from the environment" "--allow_insecure" \
  --store_dir="$work/open"
refused "bad --on_corruption" "on_corruption" --listen=127.0.0.1:0 --store_dir="$work/s" \
  --on_corruption=ignore
VERITYD_ON_CORRUPTION=ignore refused "bad VERITYD_ON_CORRUPTION" "on_corruption" \
  --listen=127.0.0.1:0 --store_dir="$work/s"
refused "bad --dispatch" "pool_unbound" --listen=127.0.0.1:0 --store_dir="$work/s" \
  --dispatch=unbound
refused "bad --inline_limit_bytes" "rt=8192" --listen=127.0.0.1:0 --store_dir="$work/s" \
  --inline_limit_bytes=rt=8k
refused "a certificate without a key" "tls_key" --listen=127.0.0.1:0 --store_dir="$work/s" \
  --tls_cert="$work/small"
refused "a message limit below a Read message" "max_message_bytes must be at least 3145728" \
  --listen=127.0.0.1:0 --store_dir="$work/s" --max_message_bytes=1048576
refused "an unknown flag" "frobnicate" --listen=127.0.0.1:0 --store_dir="$work/s" --frobnicate
refused "a bad duration" "grace_period" --listen=127.0.0.1:0 --store_dir="$work/s" \
  --grace_period=soon
refused "an unknown store scheme" "--store=ftp://.*unknown scheme" --listen=127.0.0.1:0 \
  --store=ftp://host/x
refused "--store and --store_dir both" "not both" --listen=127.0.0.1:0 --store="$work/s" \
  --store_dir="$work/t"
refused "a directory that is not a store" "not a verityd blob store" --listen=127.0.0.1:0 \
  --store_dir="$work/env-store/blobs"

start_server insecure --listen=0.0.0.0:0 --allow_insecure --store_dir="$work/dirB"
check "--allow_insecure: listens on 0.0.0.0" \
  grep -q "listening on 0.0.0.0:$server_port" "$server_log"
check "--allow_insecure: serves" cmp -s "$work/small" \
  <(vc get --server="127.0.0.1:$server_port" "$small_digest")
refused "a store in use" "in use" --listen=127.0.0.1:0 --store_dir="$work/dirB"
expect_stop insecure "$server_pid"

# ---- (c) draining: a get held back by a slow reader, then SIGTERM or SIGINT
big=$work/big
head -c $((100 << 20)) /dev/urandom >"$big"

# held_get PORT HOLD_SECONDS TAG: in the background, `verity get big` into a reader that takes
# one byte, touches $work/TAG.started, stalls HOLD_SECONDS, then reads the rest. The get stays in
# flight meanwhile: the pipe, the sockets and gRPC's flow-control windows hold far less than
# 100 MiB. Writes what the get output to TAG.data and its exit code to TAG.rc; sets held_pid.
held_get() {
  local port=$1 hold=$2 tag=$3
  (
    rc=0
    vc get --server="127.0.0.1:$port" big 2>"$work/$tag.err" |
      { dd bs=1 count=1 status=none >"$work/$tag.data" && touch "$work/$tag.started"
        sleep "$hold"
        cat >>"$work/$tag.data"; } || rc=$?
    echo "$rc" >"$work/$tag.rc"
  ) &
  held_pid=$!
  tracked_pids+=("$held_pid")
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

wait_for_file() {  # FILE SECONDS
  local i
  for ((i = 0; i < $2 * 10; i++)); do [[ -e $1 ]] && return 0; sleep 0.1; done
  [[ -e $1 ]]
}

start_server drain --listen=127.0.0.1:0 --store_dir="$work/drain-store" --grace_period=15s
drain_port=$server_port
expect_exit 0 "drain: put 100 MiB" \
  vc put --server="127.0.0.1:$drain_port" --name=big "$big" >/dev/null
held_get "$drain_port" 3 held
if wait_for_file "$work/held.started" 20; then
  sent=$(now_ms)
  kill -TERM "$server_pid"
  check "drain: the log shows SIGTERM" \
    wait_for_log "$server_log" "received Terminated" "$server_pid" 5
  sleep 0.3
  expect_exit 4 "drain: a new call is refused" vc ls --server="127.0.0.1:$drain_port" --timeout=5
  if wait_for_exit "$held_pid" 30; then
    check "drain: the held get succeeds (exit $(cat "$work/held.rc"): $(cat "$work/held.err"))" \
      [ "$(cat "$work/held.rc")" == 0 ]
    check "drain: the held get output the whole blob" cmp -s "$work/held.data" "$big"
  else
    fail "drain: the held get did not end"
  fi
  if wait_for_exit "$server_pid" 20; then
    elapsed=$(($(now_ms) - sent))
    check "drain: exit 0 (got $exit_rc)" [ "$exit_rc" -eq 0 ]
    # Within the grace and the shutdown after it (a slow build, TSan's, drains for all of it).
    check "drain: exited within the 15 s grace (took $elapsed ms)" [ "$elapsed" -lt 17000 ]
    check "drain: the log shows the stop" grep -q "verityd: stopped" "$server_log"
    check "drain: the streams drained before gRPC closed the connections" \
      grep -q "verityd: drained in" "$server_log"
  else
    fail "drain: verityd still runs 20 s after the get ended"
  fi
else
  fail "drain: the get never started; $(cat "$work/held.err")"
fi

# A grace period too short for the held get: verityd must still stop and exit 0, and the
# cut-off get must fail, having output only verified content. (How long verityd takes to stop
# here is checked by shutdown_stalled_client_test: see there.)
start_server cutoff --listen=127.0.0.1:0 --store_dir="$work/drain-store" --grace_period=1s
held_get "$server_port" 4 cut
if wait_for_file "$work/cut.started" 20; then
  sent=$(now_ms)
  kill -INT "$server_pid"
  if wait_for_exit "$server_pid" 20; then
    echo "cutoff: verityd stopped $(($(now_ms) - sent)) ms after SIGINT with a 1 s grace"
    check "cutoff: exit 0 on SIGINT (got $exit_rc)" [ "$exit_rc" -eq 0 ]
    check "cutoff: the log shows SIGINT" \
      grep -q "received Interrupt; shutting down within 1s" "$server_log"
    check "cutoff: the log shows the stop" grep -qE "verityd: (stopped|in-flight calls did not end)" "$server_log"
  else
    fail "cutoff: verityd still runs 20 s after SIGINT with a 1 s grace"
  fi
  if wait_for_exit "$held_pid" 30; then
    cut_rc=$(cat "$work/cut.rc")
    check "cutoff: the cut-off get fails (exit $cut_rc)" [ "$cut_rc" -ne 0 ]
    check "cutoff: the cut-off get output a strict prefix of the blob" \
      is_prefix "$work/cut.data" "$big"
  else
    fail "cutoff: the held get did not end"
  fi
else
  fail "cutoff: the get never started; $(cat "$work/cut.err")"
fi
rm -f "$big" "$work"/*.data

# With nothing in flight, SIGTERM stops verityd at once, not after the grace period: gRPC's
# shutdown used to wait for an executor thread asleep until its next timer, about every other
# time after a 200 MiB get. A 60 s grace makes the difference plain; four rounds.
head -c $((200 << 20)) /dev/urandom >"$work/idle-big"
start_server idle-put --listen=127.0.0.1:0 --store_dir="$work/idle-store"
idle_digest=$(vc put --server="127.0.0.1:$server_port" "$work/idle-big" | cut -d' ' -f1)
expect_stop idle-put "$server_pid"
for round in 1 2 3 4; do
  start_server idle-stop --listen=127.0.0.1:0 --store_dir="$work/idle-store" --grace_period=60s
  expect_exit 0 "idle-stop $round: get" vc get --server="127.0.0.1:$server_port" \
    "$idle_digest" -o /dev/null
  kill -TERM "$server_pid"
  if wait_for_exit "$server_pid" 20; then
    check "idle-stop $round: exit 0" [ "$exit_rc" -eq 0 ]
  else
    fail "idle-stop $round: verityd still running 20 s after SIGTERM with nothing in flight"
    stop_server "$server_pid" KILL || true
  fi
done
rm -rf "$work/idle-big" "$work/idle-store"

# ---- (d) SIGKILL amid concurrent Puts, three times on one store
store=$work/crash-store
declare -A known  # digest -> the file it was made from (files of earlier cycles are deleted)
verified=()      # digests read back intact after an earlier restart
start_server crash --listen=127.0.0.1:0 --store_dir="$store"
for cycle in 1 2 3; do
  files=()
  for i in 1 2 3 4 5 6 7 8; do
    f=$work/c$cycle-$i
    head -c $(((20 << 20) + RANDOM * 640 + RANDOM % 4096)) /dev/urandom >"$f"
    files+=("$f")
  done
  declare -A digest_of=()
  while read -r digest f; do digest_of[$f]=$digest; known[$digest]=$f; done \
    < <(/usr/bin/fsverity digest "${files[@]}")
  put_pids=()
  for f in "${files[@]}"; do
    vc put --server="127.0.0.1:$server_port" "$f" >"$f.out" 2>"$f.err" &
    put_pids+=($!)
    tracked_pids+=($!)
  done
  # The eight puts share two cores and take about 1-2 s. Cycle 1 kills 0.2-1.0 s after they
  # start, usually before any is done; the others 0-0.2 s after the first reports success, so
  # that some are done and some not however fast this machine is.
  if [[ $cycle -eq 1 ]]; then
    delay=$(printf '0.%03d' $((200 + RANDOM % 800)))
    when="$delay s after the puts started"
  else
    for ((i = 0; i < 300; i++)); do
      [[ -n $(cat "${files[@]/%/.out}") ]] && break
      sleep 0.05
    done
    delay=$(printf '0.%03d' $((RANDOM % 200)))
    when="$delay s after the first success"
  fi
  sleep "$delay"
  killed=$(now_ms)
  kill -9 "$server_pid"
  # A process in an uninterruptible fsync dies only when it returns: allow for a loaded disk.
  wait_for_exit "$server_pid" 60 || fail "cycle $cycle: verityd still exists 60 s after SIGKILL"
  killed=$(($(now_ms) - killed))
  staged=$(ls -A "$store/tmp" | wc -l)
  succeeded=()
  for n in "${!files[@]}"; do
    f=${files[$n]}
    if ! wait_for_exit "${put_pids[$n]}" 70; then
      fail "cycle $cycle: put of $f hangs after the server died"
    elif [[ $exit_rc -eq 0 ]]; then
      if [[ $(cat "$f.out") == "${digest_of[$f]} $f" ]]; then
        succeeded+=("${digest_of[$f]}")
      else
        fail "cycle $cycle: put of $f exited 0 but printed '$(cat "$f.out")'"
      fi
    elif [[ -s $f.out ]]; then
      fail "cycle $cycle: put of $f failed (exit $exit_rc) but printed '$(cat "$f.out")'"
    fi
  done
  echo "cycle $cycle: SIGKILL $when (gone in $killed ms), with $staged entries in tmp/;" \
    "${#succeeded[@]} of 8 puts had succeeded"
  if [[ $cycle -ne 1 ]]; then
    check "cycle $cycle: some put succeeded before the kill" [ ${#succeeded[@]} -gt 0 ]
  fi

  start_server crash --listen=127.0.0.1:0 --store_dir="$store"
  srv=(--server="127.0.0.1:$server_port")
  check "cycle $cycle: tmp/ is empty after restart" [ -z "$(ls -A "$store/tmp")" ]
  check "cycle $cycle: nothing quarantined" [ -z "$(ls -A "$store/quarantine")" ]
  check "cycle $cycle: recovery logged no damage" \
    bash -c '! grep -qE "quarantin|dropping|ignoring" "$1"' _ "$server_log"
  listed=$(vc ls "${srv[@]}" | cut -d' ' -f1) || fail "cycle $cycle: ls failed"
  count=$(grep -c . <<<"$listed" || true)
  check "cycle $cycle: 'serving N blobs' counts what ls lists ($count)" \
    grep -q "serving $count blobs" "$server_log"
  check "cycle $cycle: one blob directory per listed blob" \
    [ "$(find "$store/blobs" -mindepth 3 -maxdepth 3 -type d | wc -l)" -eq "$count" ]
  for digest in "${succeeded[@]}"; do
    check "cycle $cycle: a put that succeeded is listed ($digest)" grep -qx "$digest" <<<"$listed"
  done
  for digest in "${verified[@]}"; do
    check "cycle $cycle: a blob of an earlier cycle is still listed ($digest)" \
      grep -qx "$digest" <<<"$listed"
  done
  for digest in $listed; do
    if [[ -z ${known[$digest]:-} ]]; then
      fail "cycle $cycle: ls lists $digest, which is no file's digest"
    elif [[ " ${verified[*]} " == *" $digest "* ]]; then
      # Read back in full at an earlier restart, and its file is gone: its first and last
      # blocks must still verify.
      size=$(vc stat "${srv[@]}" "$digest" | sed -n 's/^size: //p')
      check "cycle $cycle: a blob of an earlier cycle still verifies ($digest)" \
        vc get "${srv[@]}" "$digest" --length=4097 -o "$work/readback"
      check "cycle $cycle: ... and its last byte ($digest)" \
        vc get "${srv[@]}" "$digest" --offset=$((size - 1)) -o "$work/readback"
    elif ! vc get "${srv[@]}" "$digest" -o "$work/readback"; then
      fail "cycle $cycle: get $digest failed"
    elif ! cmp -s "$work/readback" "${known[$digest]}"; then
      fail "cycle $cycle: $digest reads back different from ${known[$digest]}"
    else
      pass
      verified+=("$digest")
    fi
    rm -f "$work/readback"
  done
  rm -f "${files[@]}"
done
expect_stop crash "$server_pid"
