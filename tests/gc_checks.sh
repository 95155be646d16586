# Garbage collection end to end, driven by the `verity` CLI: sourced by gc_file_test.sh (the file
# store) and gc_s3_test.sh (a radosgw bucket that two replicas share), after verityd_test_lib.sh
# and init_test. The driver defines:
#   store_flags: verityd's flags for the store;
#   replica_count: how many servers may share it (1: the file store, 2: S3);
#   plant_leftover NAME: writes a one-byte object no blob or log owns (S3: a Put cut short; the
#   file store: a log's staged batch never committed) and names it in $work/leftovers.
# run_gc_checks runs them all.

# gc_release DIR: a release: a folder with a file in every release, and a file of its own.
gc_release() {
  mkdir -p "$1/lib"
  printf 'shared by every release\n' >"$1/lib/shared"
  head -c 30000 /dev/urandom >"$1/own"
}

# gc_serve NAME PORT [FLAGS...]: a server on the store, listening on PORT (0: any); sets
# gc_srv=(--server=...) and gc_pid.
gc_serve() {
  local name=$1 port=$2
  shift 2
  start_server "$name" --listen="127.0.0.1:$port" "${store_flags[@]}" --name_history=2 "$@"
  gc_pid=$server_pid gc_port=$server_port gc_srv=(--server="127.0.0.1:$server_port")
}

# every_release_fetches WHAT: each version the name app/release keeps fetches whole (get -o DIR
# of its digest), and so does every tree listed in $work/published as still named.
every_release_fetches() {
  local what=$1 digest i=0
  vc history "${gc_srv[@]}" app/release >"$work/history" 2>"$work/history.err"
  check "$what: history lists the name ($(head -c 200 "$work/history.err"))" \
    [ -s "$work/history" ]
  while read -r _ digest _; do
    rm -rf "$work/fetched"
    expect_exit 0 "$what: version $i ($digest) fetches whole" \
      vc get "${gc_srv[@]}" "$digest" -o "$work/fetched"
    i=$((i + 1))
  done <"$work/history"
}

leftover_gone() { ! leftover_exists "$1"; }

run_gc_checks() {
  local dir=$work/gc
  mkdir -p "$dir"
  gc_serve gc 0 --gc_grace=3s

  # ---- three releases, two kept: gc frees what only the first used, nothing else
  local -a trees=()
  for n in 0 1 2; do
    gc_release "$dir/r$n"
    trees+=("$(vc put "${gc_srv[@]}" "$dir/r$n" --name=app/release | cut -d' ' -f1)")
  done
  local own0
  own0=$("$verity" digest "$dir/r0/own" | cut -d' ' -f1)
  local before
  before=$(vc ls "${gc_srv[@]}" | wc -l)
  # An S3 blob is timed when a collection first sees it: the first run times them all.
  expect_exit 0 "a dry run" vc gc "${gc_srv[@]}" --dry-run
  : >"$work/leftovers"
  plant_leftover old
  sleep 4
  expect_exit 0 "a dry run past the grace" vc gc "${gc_srv[@]}" --dry-run >"$dir/dry"
  check "the dry run would free release 0's tree and its own file: $(cat "$dir/dry")" \
    grep -q "^would free 2 blobs (" "$dir/dry"
  expect_exit 0 "du" vc du "${gc_srv[@]}" >"$dir/du"
  local own0_bytes tree0_bytes
  own0_bytes=$(stat -c %s "$dir/r0/own")
  tree0_bytes=$(vc stat "${gc_srv[@]}" "${trees[0]}" | sed -nE 's/^size: ([0-9]+)$/\1/p' | head -n 1)
  check "du counts every blob: $(head -n 1 "$dir/du")" \
    grep -q "^stored: $before blobs, " "$dir/du"
  check "du says the names reach all but two, from one name and its two trees kept" \
    grep -q "^reachable: $((before - 2)) blobs, [0-9]* bytes, from 1 names (2 trees)$" "$dir/du"
  check "du says what gc would free: $(tail -n 1 "$dir/du") ($own0_bytes + ${tree0_bytes:-?})" \
    grep -q "^gc would free: 2 blobs, $((own0_bytes + ${tree0_bytes:-0})) bytes (0 more" "$dir/du"
  check "du's figures are metrics" \
    [ "$(metric "$metrics_port" verityd_gc_collectable_blobs)" -eq 2 ]
  check "a dry run frees nothing" [ "$(vc ls "${gc_srv[@]}" | wc -l)" -eq "$before" ]
  local planted
  planted=$(wc -l <"$work/leftovers")
  check "du counts the leftover past the grace: $(tail -n 1 "$dir/du")" \
    grep -q "^leftovers: $planted objects, $planted bytes," "$dir/du"
  plant_leftover young
  expect_exit 0 "gc" vc gc "${gc_srv[@]}" >"$dir/gc"
  check "gc freed release 0's tree and its own file: $(cat "$dir/gc")" \
    grep -q "^freed 2 blobs (" "$dir/gc"
  check "gc freed the leftover past the grace, not the one within: $(cat "$dir/gc")" \
    grep -q "; $planted leftover objects ($planted bytes) freed;" "$dir/gc"
  if [[ $planted -gt 0 ]]; then
    check "the leftover past the grace is gone" leftover_gone old
    check "the leftover within the grace is kept" leftover_exists young
  fi
  check "gc says what it reached: $(cat "$dir/gc")" grep -q " reachable from 1 names (2 trees)" \
    "$dir/gc"
  check "two blobs fewer" [ "$(vc ls "${gc_srv[@]}" | wc -l)" -eq $((before - 2)) ]
  expect_exit 2 "release 0's tree is gone" vc stat "${gc_srv[@]}" "${trees[0]}"
  expect_exit 2 "release 0's own file is gone" vc stat "${gc_srv[@]}" "$own0"
  every_release_fetches "after gc"
  rm -rf "$work/fetched"
  vc get "${gc_srv[@]}" app/release -o "$work/fetched"
  check "the name fetches release 2" diff -r "$dir/r2" "$work/fetched"
  check "the collection is counted" \
    [ "$(metric "$metrics_port" verityd_gc_freed_blobs_total)" -eq 2 ]
  expect_exit 0 "gc again frees nothing" vc gc "${gc_srv[@]}" >"$dir/gc"
  check "nothing left to free" grep -q "^freed 0 blobs" "$dir/gc"

  # ---- a blob an upload relies on is kept: a file stored alone long ago (past the grace) that
  # `put DIR` finds stored (FindMissing, then the tree Put's check) is marked used, and the gc
  # right after keeps it although no name reaches it.
  mkdir -p "$dir/reuse"
  head -c 9000 /dev/urandom >"$dir/reuse/old"
  vc put "${gc_srv[@]}" "$dir/reuse/old" >/dev/null
  local old_file
  old_file=$("$verity" digest "$dir/reuse/old" | cut -d' ' -f1)
  vc gc "${gc_srv[@]}" --dry-run >/dev/null  # times it on S3
  sleep 4
  expect_exit 0 "put DIR (no name) of a folder holding the old file" \
    vc put "${gc_srv[@]}" "$dir/reuse"
  expect_exit 0 "gc right after" vc gc "${gc_srv[@]}"
  expect_exit 0 "the file the upload relied on is kept" vc stat "${gc_srv[@]}" "$old_file"

  # ---- put DIR in a loop races gc in a loop (a short grace): no name ever points at an
  # incomplete tree; a put may be refused (a file collected under it), never half-done.
  local end=$((SECONDS + ${GC_RACE_SECONDS:-20})) puts=0 refused=0 gcs=0 k=3
  (while ((SECONDS < end)); do vc gc "${gc_srv[@]}" >/dev/null 2>&1 && echo ok; done) \
    >"$dir/gc-loop" &
  local gc_loop=$!
  while ((SECONDS < end)); do
    gc_release "$dir/r$k"
    if vc put "${gc_srv[@]}" "$dir/r$k" --name=app/release >/dev/null 2>"$dir/put.err"; then
      puts=$((puts + 1))
    else
      refused=$((refused + 1))
      check "a refused put says why: $(head -c 300 "$dir/put.err")" \
        grep -qE "not stored|garbage collection|UNAVAILABLE|FAILED_PRECONDITION" "$dir/put.err"
    fi
    rm -rf "$dir/r$k"
    k=$((k + 1))
  done
  wait "$gc_loop" || true
  gcs=$(grep -c ok "$dir/gc-loop" || true)
  echo "race: $puts puts landed, $refused refused, $gcs collections"
  check "puts landed during the race ($puts)" [ "$puts" -gt 0 ]
  check "collections ran during the race ($gcs)" [ "$gcs" -gt 0 ]
  every_release_fetches "after the race"

  # ---- SIGKILL of the collecting server at random points; a restart on the same port (the
  # same replica) takes its lease back; every retained release stays whole.
  for round in 1 2 3 4 5; do
    gc_release "$dir/k$round"
    vc put "${gc_srv[@]}" "$dir/k$round" --name=app/release >/dev/null
    sleep 4  # past the grace: the release before is garbage
    vc gc "${gc_srv[@]}" >/dev/null 2>&1 &
    local gc_client=$!
    sleep "0.0$((RANDOM % 10))"
    kill -9 "$gc_pid"
    wait_for_exit "$gc_pid" 10 || true
    wait "$gc_client" || true
    gc_serve gc "$gc_port" --gc_grace=3s
    every_release_fetches "killed collection $round"
  done
  expect_exit 0 "a collection after the kills completes" vc gc "${gc_srv[@]}"
  every_release_fetches "after the kills"
  stop_server "$gc_pid" || true

  # ---- --gc_interval: each replica collects on its own; sharing a store, one at a time.
  local -a ports=() pids=()
  for ((r = 0; r < replica_count; r++)); do
    gc_serve "interval-$r" 0 --gc_grace=3s --gc_interval=1s
    ports+=("$metrics_port")
    pids+=("$gc_pid")
  done
  sleep 6
  local ok=0 busy=0
  for port in "${ports[@]}"; do
    ok=$((ok + $(metric "$port" 'verityd_gc_runs_total{result="ok"}')))
    busy=$((busy + $(metric "$port" 'verityd_gc_runs_total{result="busy"}')))
  done
  echo "interval: $ok collections completed, $busy found the store busy"
  check "collections ran every interval ($ok)" [ "$ok" -ge 3 ]
  check "no collection failed but for a busy store" bash -c \
    '! cat "$@" | grep "garbage collection did not complete" | grep -qv ABORTED' _ \
    "$work"/interval-*.log
  for pid in "${pids[@]}"; do expect_stop "interval replica stops" "$pid"; done

  # ---- --max_store_bytes: a Put that would pass it is refused and stores nothing; one that
  # fits is stored. The quota counts a store that keeps no count (S3) with a listing at start.
  gc_serve quota 0
  vc du "${gc_srv[@]}" >"$dir/du"
  stop_server "$gc_pid" || true
  local used
  used=$(sed -nE 's/^stored: [0-9]+ blobs, ([0-9]+) bytes$/\1/p' "$dir/du")
  gc_serve quota 0 --max_store_bytes=$((used + 100000))
  local i
  for ((i = 0; i < 100; i++)); do
    (($(metric "$metrics_port" verityd_store_quota_used_bytes) >= used)) && break
    sleep 0.1
  done
  check "the quota counts what is stored ($used bytes)" \
    [ "$(metric "$metrics_port" verityd_store_quota_used_bytes)" -eq "$used" ]
  head -c 150000 /dev/urandom >"$dir/too-big"
  expect_exit 5 "a Put past the quota is refused" \
    vc put "${gc_srv[@]}" "$dir/too-big" 2>"$dir/full.err"
  check "it says the store is full: $(head -c 200 "$dir/full.err")" \
    grep -q "the store is full" "$dir/full.err"
  expect_exit 2 "and stored nothing" \
    vc stat "${gc_srv[@]}" "$("$verity" digest "$dir/too-big" | cut -d' ' -f1)"
  head -c 60000 /dev/urandom >"$dir/fits"
  expect_exit 0 "a Put within the quota is stored" vc put "${gc_srv[@]}" "$dir/fits"
  check "the quota counts it" \
    [ "$(metric "$metrics_port" verityd_store_quota_used_bytes)" -eq $((used + 60000)) ]
  expect_stop "the quota server stops" "$gc_pid"
}
