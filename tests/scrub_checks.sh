# Scrub end to end, driven by the `verity` CLI: sourced by gc_file_test.sh (the file store) and
# gc_s3_test.sh (a radosgw bucket that two replicas share), after verityd_test_lib.sh and
# init_test. The driver defines store_flags and replica_count (as for gc_checks.sh), and:
#   damage_data DIGEST OFFSET: flips a byte of the blob's stored data, behind the server's back;
#   repair_is_stored DIGEST FILE: true if the store holds the repair: the file store's data is
#     FILE's bytes again; an S3 object cannot be written into, so the blob is marked damaged for a
#     new Put (the repaired block is served from memory meanwhile).
# run_scrub_checks runs them all.

# sc_serve NAME PORT [FLAGS...]: a server on the store (FEC as given), listening on PORT (0:
# any); sets sc_srv=(--server=...), sc_pid, sc_port and sc_metrics.
sc_serve() {
  local name=$1 port=$2
  shift 2
  start_server "$name" --listen="127.0.0.1:$port" "${store_flags[@]}" \
    --on_corruption=quarantine "$@"
  sc_pid=$server_pid sc_port=$server_port sc_metrics=$metrics_port
  sc_srv=(--server="127.0.0.1:$server_port")
}

# sc_put FILE: stores FILE through the server; prints its digest.
sc_put() { vc put "${sc_srv[@]}" "$1" | cut -d' ' -f1; }

# thread_of PID NAME: the id of PID's thread named NAME.
thread_of() {
  local task
  for task in /proc/"$1"/task/*; do
    [[ $(cat "$task/comm" 2>/dev/null) == "$2" ]] && { basename "$task"; return 0; }
  done
  return 1
}

run_scrub_checks() {
  local dir=$work/scrub
  mkdir -p "$dir"
  head -c 300000 /dev/urandom >"$dir/bare"
  head -c 1000000 /dev/urandom >"$dir/protected"

  # ---- a flipped byte in a blob nobody reads: repaired from FEC (FEC on), quarantined and
  # counted (FEC off), and both found by the scrub alone.
  sc_serve scrub-nofec 0 --fec_roots=0
  local bare
  bare=$(sc_put "$dir/bare")
  stop_server "$sc_pid" || true
  sc_serve scrub 0 --fec_roots=2 --scrub_bytes_per_second=0
  local protected
  protected=$(sc_put "$dir/protected")
  damage_data "$protected" 654321
  damage_data "$bare" 123456
  expect_exit 0 "scrub --wait" vc scrub "${sc_srv[@]}" --wait >"$dir/pass"
  check "the pass found both, repaired one, reported one: $(head -c 300 "$dir/pass")" \
    grep -qE "^checked 2 blobs \([0-9]+ bytes\): 2 bad blocks, 1 repaired, 1 blobs unrepairable, 0 unread" \
    "$dir/pass"
  # Before any read: on S3 a read repairs the block again (the scrub's repair is in its memory).
  check "the repair went through the server's FEC repairs" \
    [ "$(metric "$sc_metrics" verityd_fec_repaired_blocks_total)" -eq 1 ]
  check "the pass is on record: $(tail -n 1 "$dir/pass")" \
    grep -qE "^no pass is under way; last complete pass: 20" "$dir/pass"
  check "the repaired blob reads byte-exact" cmp -s "$dir/protected" \
    <(vc get "${sc_srv[@]}" "$protected")
  check "the store holds the repair as it can" repair_is_stored "$protected" "$dir/protected"
  vc stat "${sc_srv[@]}" "$bare" >/dev/null 2>"$dir/bare.err" || true
  check "the blob FEC could not repair is quarantined: $(head -c 200 "$dir/bare.err")" \
    grep -qi quarantine "$dir/bare.err"
  check "the scrub's repair is counted" \
    [ "$(metric "$sc_metrics" verityd_scrub_repaired_blocks_total)" -eq 1 ]
  check "the unrepairable blob is counted" \
    [ "$(metric "$sc_metrics" verityd_scrub_unrepairable_blobs_total)" -eq 1 ]
  check "and reported as a read reports it" \
    [ "$(metric "$sc_metrics" verityd_corruption_detected_total)" -eq 1 ]

  # ---- the scrub's thread runs at SCHED_IDLE and the IDLE I/O class.
  local tid
  if tid=$(thread_of "$sc_pid" scrub); then
    check "the scrub thread is SCHED_IDLE: $(chrt -p "$tid")" \
      bash -c "chrt -p $tid | grep -q SCHED_IDLE"
    check "the scrub thread reads at the idle I/O class: $(ionice -p "$tid")" \
      bash -c "ionice -p $tid | grep -q '^idle'"
  else
    fail "verityd $sc_pid has no thread named scrub"
  fi
  stop_server "$sc_pid" || true

  # ---- a pass cut short by SIGKILL resumes where it stopped when the replica restarts; reads
  # during a slow pass are served, byte-exact.
  local i
  for i in $(seq 1 12); do head -c 1000000 /dev/urandom >"$dir/many-$i"; done
  # 300 KB/s: the pass over ~13 MB takes ~45 s, past the reads and the checks below however
  # slow the machine (`verity scrub` asks for a pass: one that ended would start another).
  sc_serve scrub-slow 0 --fec_roots=2 --scrub_bytes_per_second=300000
  local port=$sc_port
  for i in $(seq 1 12); do sc_put "$dir/many-$i" >/dev/null; done
  expect_exit 0 "scrub (no wait) starts a pass" vc scrub "${sc_srv[@]}"
  local reads=0 exact=0
  for i in $(seq 1 6); do
    reads=$((reads + 1))
    cmp -s "$dir/many-$i" <(vc get "${sc_srv[@]}" "$("$verity" digest "$dir/many-$i" | cut -d' ' -f1)") &&
      exact=$((exact + 1))
  done
  check "reads during the pass are served byte-exact ($exact of $reads)" [ "$exact" -eq "$reads" ]
  sleep 6  # past the first save of the pass's position (every 5 s)
  expect_exit 0 "scrub says a pass is under way" vc scrub "${sc_srv[@]}" >"$dir/running"
  check "a pass is under way on this server: $(cat "$dir/running")" \
    grep -q "^a pass is under way since .* (on this server)" "$dir/running"
  kill -9 "$sc_pid"
  wait_for_exit "$sc_pid" 10 || true
  sc_serve scrub-slow "$port" --fec_roots=2 --scrub_bytes_per_second=0
  check "the restarted replica resumes the pass by itself" \
    wait_for_log "$server_log" "scrub pass completed: .* resumed" "$sc_pid" 30
  local resumed
  resumed=$(sed -nE 's/.*scrub pass completed: blobs=([0-9]+) .* resumed.*/\1/p' "$server_log")
  check "the resumed pass checked only what was left (${resumed:-none} of 13 blobs)" \
    [ "${resumed:-99}" -lt 13 ]
  stop_server "$sc_pid" || true

  # ---- --scrub_interval: passes every interval; replicas sharing a store take turns by the
  # lease (one asked to wait while another scrubs says who holds it).
  local -a pids=() mports=() srvs=()
  for ((r = 0; r < replica_count; r++)); do
    sc_serve "scrub-interval-$r" 0 --fec_roots=2 --scrub_interval=1s \
      --scrub_bytes_per_second=20000000
    pids+=("$sc_pid") mports+=("$sc_metrics") srvs+=("${sc_srv[0]}")
  done
  sleep 8
  local ok=0 busy=0 m
  for m in "${mports[@]}"; do
    ok=$((ok + $(metric "$m" 'verityd_scrub_passes_total{result="ok"}')))
    busy=$((busy + $(metric "$m" 'verityd_scrub_passes_total{result="busy"}')))
  done
  echo "scrub interval: $ok passes completed, $busy found the store busy"
  check "passes ran every interval ($ok)" [ "$ok" -ge 2 ]
  check "no pass failed but for a busy store" bash -c \
    '! cat "$@" | grep "scrub pass did not complete" | grep -qv ABORTED' _ \
    "$work"/scrub-interval-*.log
  if ((replica_count > 1)); then
    # One replica asked to wait finds the other's pass under way, or runs its own.
    local rc=0
    vc scrub "${srvs[1]}" --wait >"$dir/second" 2>&1 || rc=$?
    check "a replica asked to wait scrubs or names the holder (exit $rc): $(head -c 200 "$dir/second")" \
      bash -c "[[ $rc -eq 0 ]] || grep -q 'a scrub by .* holds the store' '$dir/second'"
  fi
  for pid in "${pids[@]}"; do expect_stop "scrub interval replica stops" "$pid"; done
}
