# `verity mount`, mounted for real (FUSE; needs root and /dev/fuse), against the store a driver
# gives: a signed tree's files read back byte-exact (read, pread, mmap), modes, symlinks and
# folders as stored, writes refused; one blob as a single file; a block flipped in the store
# gives EIO for the reads that need it and nothing else, no byte of it returned, logged; a lost
# server fails reads within the deadline; --cache-dir and --prefetch serve a tree with the
# server gone and refuse a slab changed on the disk; --follow shows a new version to new opens
# (an open file keeps its own) and never a rolled-back one; a store writer's rollback and
# escaping manifests refused before anything is mounted; SIGTERM, SIGINT and fusermount3 -u
# unmount and leave no process behind. Sourced by mount_file_test.sh (the file store) and mount_s3_test.sh (radosgw)
# after verityd_test_lib.sh, tree_attacks.sh and init_test, with VERITYD_FEC_ROOTS=0 (a flipped
# byte stays flipped). The driver defines start_guarded KEYS_FILE (sets guarded_pid and
# guarded=(--server=...)), store_read NAME FILE, store_write NAME FILE and store_blob_write
# DIGEST FILE, as file_store_writer.sh does.
[[ -c /dev/fuse ]] || { echo "FAIL: /dev/fuse is missing"; exit 1; }
command -v fusermount3 >/dev/null || { echo "FAIL: fusermount3 is missing: install fuse3"; exit 1; }

# The mountpoints live outside Bazel's output base ($work is under TEST_TMPDIR): Bazel's
# linux-sandbox bind-mounts the output base for the actions it runs beside this test, and a FUSE
# mount beneath it made that fail (EINVAL) in CI.
mounts=$(mktemp -d /tmp/verity-mount-test.XXXXXX)
mounted=()
unmount_all() {
  local m
  for m in "${mounted[@]}"; do
    if mountpoint -q "$m"; then fusermount3 -u -z "$m" 2>/dev/null || umount -l "$m" || true; fi
  done
  for m in "${mounted[@]}"; do rmdir "$m" 2>/dev/null || true; done
  rmdir "$mounts" 2>/dev/null || true
}
trap 'rc=$?; unmount_all; (exit $rc); on_exit' EXIT

# start_mount MNT ARGS...: `verity mount ARGS MNT` in the background, logging to
# $work/mount-K.log; true once MNT is mounted, false if the command exits first (mount_rc then
# holds its code). Sets mount_pid and mount_log.
mount_count=0
start_mount() {
  local mnt=$1 i
  shift
  mkdir -p "$mnt"
  mounted+=("$mnt")
  mount_count=$((mount_count + 1))
  mount_log=$work/mount-$mount_count.log
  "$verity" mount "$@" "$mnt" 2>"$mount_log" &
  mount_pid=$!
  tracked_pids+=("$mount_pid")
  for ((i = 0; i < 300; i++)); do
    mountpoint -q "$mnt" && return 0
    if ! is_running "$mount_pid"; then
      mount_rc=0
      wait "$mount_pid" || mount_rc=$?
      untrack "$mount_pid"
      return 1
    fi
    sleep 0.05
  done
  return 1
}

# stop_mount MNT HOW: unmounts MNT by HOW (TERM, INT or fusermount3) and checks that the
# command exits 0 and leaves nothing mounted.
stop_mount() {
  local mnt=$1 how=$2 pid=$mount_pid
  if [[ $how == fusermount3 ]]; then fusermount3 -u "$mnt"; else kill -"$how" "$pid"; fi
  check "$how: verity mount exits" wait_for_exit "$pid" 10
  check "$how: exit 0 (got ${exit_rc:-none})" [ "${exit_rc:-1}" -eq 0 ]
  check "$how: nothing left mounted" eval "! mountpoint -q '$mnt' && ! grep -qF ' $mnt ' /proc/mounts"
}

# evict DIR: drops the page cache of every file under DIR (posix_fadvise DONTNEED), so that
# reads go to verity mount again.
evict() {
  find "$1" -type f -exec python3 -c '
import os, sys
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)' {} +
}

# flip_byte FILE OFFSET: FILE as a new file (a new inode) with that byte's bits inverted.
flip_byte() {
  python3 -c '
import os, sys
b = bytearray(open(sys.argv[1], "rb").read())
b[int(sys.argv[2])] ^= 0xff
os.unlink(sys.argv[1])
open(sys.argv[1], "wb").write(b)' "$1" "$2"
}

run_mount_tests() {
  # ---- a release, signed, mounted
  src=$work/src
  mkdir -p "$src/model/shards" "$src/empty"
  head -c $((5 * 1024 * 1024 + 123)) /dev/urandom >"$src/model/weights.bin"
  head -c 70000 /dev/urandom >"$src/model/shards/a"
  echo '{"layers": 2}' >"$src/model/config.json"
  printf '#!/bin/sh\necho ran\n' >"$src/run.sh"
  chmod 0755 "$src/run.sh"
  : >"$src/empty.txt"
  ln -s model/config.json "$src/config"
  keys=$work/keys
  mkdir -p "$keys"
  vc keygen --out="$keys/k.pem" >/dev/null
  start_guarded "$keys/k.pem.pub"
  publish=(--sign-key="$keys/k.pem" --state-dir="$work/publisher")
  trust=(--trusted-keys="$keys/k.pem.pub" --state-dir="$work/client")
  expect_exit 0 "put the release" vc put "${guarded[@]}" "$src" --name=rel/latest "${publish[@]}"
  mnt=$mounts/mnt
  check "mount the release" start_mount "$mnt" "${guarded[@]}" "${trust[@]}" rel/latest
  check "the files, folders and symlink as stored" diff -r --no-dereference "$src" "$mnt"
  check "modes as stored" [ "$(stat -c %a "$mnt/run.sh" "$mnt/model/config.json" "$mnt/model" \
    "$mnt/empty" | tr '\n' ' ')" = "755 644 755 755 " ]
  check "the symlink" [ "$(readlink "$mnt/config")" = "model/config.json" ]
  check "an executable runs" [ "$("$mnt/run.sh")" = "ran" ]
  check "pread and mmap read the stored bytes" python3 - "$src/model/weights.bin" \
    "$mnt/model/weights.bin" <<'PY'
import mmap, os, sys
want = open(sys.argv[1], 'rb').read()
fd = os.open(sys.argv[2], os.O_RDONLY)
for offset, size in [(0, 1), (4095, 2), (1234567, 300000), (len(want) - 10, 100), (len(want), 5)]:
    assert os.pread(fd, size, offset) == want[offset:offset + size], (offset, size)
with mmap.mmap(fd, 0, prot=mmap.PROT_READ) as m:
    assert m[:] == want
PY
  check "statfs answers" df "$mnt"
  local device
  device=$(awk -v m="$(realpath "$mnt")" '$5 == m {print $3}' /proc/self/mountinfo | tail -n 1)
  check "read-ahead raised to 16 MiB (device $device)" \
    [ "$(cat "/sys/class/bdi/$device/read_ahead_kb" 2>/dev/null)" = 16384 ]
  check "a new file is refused" eval "! touch '$mnt/new' 2>'$work/err' && grep -q 'Read-only' '$work/err'"
  check "a write is refused" eval "! (echo x >>'$mnt/model/config.json') 2>/dev/null"
  check "mkdir is refused" eval "! mkdir '$mnt/d' 2>/dev/null"
  check "rm is refused" eval "! rm -f '$mnt/run.sh' 2>/dev/null"
  stop_mount "$mnt" TERM

  # ---- SIGTERM with a file open: the mount is detached at once (new opens do not find it), the
  # open file is served to its end byte-exact (its pages dropped first, so every byte is asked
  # of the mount after the signal), and the process exits once it is closed
  check "mount again" start_mount "$mnt" "${guarded[@]}" "${trust[@]}" rel/latest
  local held_pid=$mount_pid
  python3 - "$mnt" "$src/model/weights.bin" "$held_pid" "$work/held.out" <<'PY' &
import os, signal, sys, time
mnt, want, pid, out = sys.argv[1], open(sys.argv[2], 'rb').read(), int(sys.argv[3]), sys.argv[4]
fd = os.open(mnt + '/model/weights.bin', os.O_RDONLY)
got = os.read(fd, 4096)
os.kill(pid, signal.SIGTERM)
for _ in range(50):
    if not os.path.ismount(mnt):
        break
    time.sleep(0.1)
detached = not os.path.ismount(mnt)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
try:
    while True:
        b = os.read(fd, 1 << 20)
        if not b:
            break
        got += b
    result = 'ok' if got == want else 'differs: %d of %d bytes' % (len(got), len(want))
except OSError as e:
    result = 'read failed: %s' % e
os.close(fd)
open(out, 'w').write('detached %s, %s' % (detached, result))
PY
  local reader=$!
  check "SIGTERM with a file open: the reader is done" wait_for_exit "$reader" 30
  check "SIGTERM with a file open: detached, then read whole ($(cat "$work/held.out"))" \
    [ "$(cat "$work/held.out")" = "detached True, ok" ]
  check "SIGTERM with a file open: verity mount exits once it is closed" \
    wait_for_exit "$held_pid" 10
  check "SIGTERM with a file open: exit 0 (got ${exit_rc:-none})" [ "${exit_rc:-1}" -eq 0 ]
  check "SIGTERM with a file open: nothing left mounted" eval "! mountpoint -q '$mnt'"

  # ---- reads waiting on a stalled server hold up no lookup, stat, readlink or listing; and a
  # stop while they wait ends within their --read-timeout
  check "mount with --threads=2" start_mount "$mounts/stall" "${guarded[@]}" "${trust[@]}" \
    --threads=2 --read-timeout=5s rel/latest
  local stall_pid=$mount_pid
  kill -STOP "$guarded_pid"
  local stalled=() i
  for i in 1 2 3 4; do
    timeout 60 dd if="$mounts/stall/model/weights.bin" of=/dev/null bs=4k skip=$((i * 300)) \
      count=1 2>/dev/null &
    stalled+=($!)
  done
  sleep 1
  t0=$(date +%s%N)
  stat "$mounts/stall/model/shards/a" "$mounts/stall/run.sh" >/dev/null
  ls "$mounts/stall/model" "$mounts/stall/empty" >/dev/null
  readlink "$mounts/stall/config" >/dev/null
  elapsed_ms=$((($(date +%s%N) - t0) / 1000000))
  check "metadata answered with 4 reads stalled on 2 threads (${elapsed_ms} ms)" \
    [ "$elapsed_ms" -lt 3000 ]
  t0=$(date +%s)
  kill -TERM "$stall_pid"
  check "a stop with reads stalled: verity mount exits" wait_for_exit "$stall_pid" 30
  elapsed=$(($(date +%s) - t0))
  check "a stop with reads stalled: within the read timeout and the grace ($elapsed s)" \
    [ "$elapsed" -le 12 ]
  check "a stop with reads stalled: nothing left mounted" eval "! mountpoint -q '$mounts/stall'"
  kill -CONT "$guarded_pid"
  for i in "${stalled[@]}"; do wait "$i" || true; done

  # ---- a relative mountpoint: unmounted by the path resolved at the start, quietly
  mkdir -p "$mounts/relative"
  (cd "$mounts" && exec "$verity" mount "${guarded[@]}" "${trust[@]}" rel/latest relative \
    2>"$work/relative.log") &
  mount_pid=$!
  tracked_pids+=("$mount_pid")
  mounted+=("$mounts/relative")
  for i in $(seq 100); do mountpoint -q "$mounts/relative" && break; sleep 0.05; done
  check "a relative mountpoint: mounted" mountpoint -q "$mounts/relative"
  # A file held open across the stop: the session outlives the detach.
  python3 -c 'import sys, time; f = open(sys.argv[1], "rb"); time.sleep(2); f.read()' \
    "$mounts/relative/run.sh" &
  local holder=$!
  sleep 0.5
  stop_mount "$mounts/relative" TERM
  wait "$holder" || true
  check "a relative mountpoint: no unmount error ($(grep -i 'unmount' "$work/relative.log" | head -2))" \
    eval "! grep -qiE 'failed to unmount|Invalid argument' '$work/relative.log'"

  # ---- one blob, by digest, as a single file (on a mountpoint whose path has a space)
  digest=$("$verity" digest "$src/model/shards/a" | cut -d' ' -f1)
  check "mount one blob" start_mount "$mounts/one blob" "${guarded[@]}" "$digest"
  check "one file, named by the digest's hex" [ "$(ls "$mounts/one blob")" = "${digest#sha256:}" ]
  check "its bytes" cmp "$src/model/shards/a" "$mounts/one blob/${digest#sha256:}"
  stop_mount "$mounts/one blob" fusermount3

  # ---- a flipped block: EIO for the reads that need it, no byte of it, the rest readable
  weights=$("$verity" digest "$src/model/weights.bin" | cut -d' ' -f1)
  bad=300  # the 4 KiB block flipped
  cp "$src/model/weights.bin" "$work/flipped"
  flip_byte "$work/flipped" $((bad * 4096 + 7))
  store_blob_write "$weights" "$work/flipped"
  check "mount over the damaged store" start_mount "$mounts/bad" "${guarded[@]}" "${trust[@]}" \
    rel/latest
  w=$mounts/bad/model/weights.bin
  rc=0
  dd if="$w" of="$work/block" bs=4096 skip=$bad count=1 status=none 2>"$work/err" || rc=$?
  check "the flipped block: EIO (exit $rc: $(cat "$work/err"))" \
    eval "[ $rc -ne 0 ] && grep -q 'Input/output error' '$work/err'"
  for block in $((bad - 1)) $((bad + 1)) 0 1000; do
    check "block $block reads and is right" \
      cmp <(dd if="$w" bs=4096 skip=$block count=1 status=none) \
      <(dd if="$src/model/weights.bin" bs=4096 skip=$block count=1 status=none)
  done
  rc=0
  cat "$w" >"$work/whole" 2>/dev/null || rc=$?
  check "reading the whole file fails" [ "$rc" -ne 0 ]
  check "what it gave is a true prefix, short of the flipped block" \
    eval "is_prefix '$work/whole' '$src/model/weights.bin' && \
      [ \$(stat -c %s '$work/whole') -le $((bad * 4096)) ]"
  rc=0
  python3 - "$w" $((bad * 4096)) <<'PY' 2>/dev/null || rc=$?
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
with mmap.mmap(fd, 0, prot=mmap.PROT_READ) as m:
    print(m[int(sys.argv[2])])
PY
  check "mmap of the flipped block: SIGBUS, not its bytes (exit $rc)" [ "$rc" -eq 135 ]
  check "other files read" cmp "$src/model/shards/a" "$mounts/bad/model/shards/a"
  check "the failure is logged with the file, range and digest" \
    grep -qE "read of model/weights.bin \[[0-9]+, [0-9]+\) \($weights\) failed, EIO: DATA_LOSS" \
    "$mount_log"
  stop_mount "$mounts/bad" INT
  check "the failures are counted" grep -qE "unmounted; [1-9][0-9]* reads failed" "$mount_log"
  store_blob_write "$weights" "$src/model/weights.bin"

  # ---- --cache-dir and --prefetch: every file fetched into the cache, then read from it with
  # the server gone; a slab changed on the disk is refused, never handed out
  mount_rc=0
  start_mount "$mounts/no-cache" "${guarded[@]}" --prefetch rel/latest || true
  check "--prefetch without --cache-dir: refused (exit $mount_rc)" \
    eval "[ $mount_rc -ne 0 ] && grep -q -- '--prefetch needs --cache-dir' '$mount_log'"
  check "mount with --cache-dir and --prefetch" start_mount "$mounts/cached" "${guarded[@]}" \
    "${trust[@]}" --cache-dir="$work/mount-cache" --prefetch rel/latest
  local fetched=$((5 * 1024 * 1024 + 123 + 70000 + 14 + 19))
  check "the prefetch ends, every file in the cache" wait_for_log "$mount_log" \
    "prefetch done: 5 files in the cache, $fetched bytes fetched, 0 files failed" "$mount_pid" 30
  # weights.bin is 6 slabs; shards/a, config.json and run.sh one each; empty.txt none.
  check "its slabs on the disk" [ "$(ls "$work/mount-cache/slabs" | wc -l)" -eq 9 ]
  local cached_pid=$mount_pid cached_log=$mount_log
  mount_rc=0
  start_mount "$mounts/cached-twice" "${guarded[@]}" --cache-dir="$work/mount-cache" \
    rel/latest || true
  check "a second mount on the same --cache-dir: refused (exit $mount_rc)" \
    eval "[ $mount_rc -ne 0 ] && grep -q 'is in use by another cache' '$mount_log'"
  check "... leaving the first one's slabs" [ "$(ls "$work/mount-cache/slabs" | wc -l)" -eq 9 ]
  mount_pid=$cached_pid mount_log=$cached_log
  stop_server "$guarded_pid"
  guarded_pid=""
  evict "$mounts/cached"
  check "with the server gone, every file reads from the cache" \
    diff -r --no-dereference "$src" "$mounts/cached"
  local slab
  slab=$(ls "$work/mount-cache/slabs" | grep "^sha256-${digest#sha256:}\.0\.")
  flip_byte "$work/mount-cache/slabs/$slab" 100
  evict "$mounts/cached"
  rc=0
  cat "$mounts/cached/model/shards/a" >/dev/null 2>"$work/err" || rc=$?
  check "a slab changed on the disk: EIO, not its bytes (exit $rc)" \
    eval "[ $rc -ne 0 ] && grep -q 'Input/output error' '$work/err'"
  check "the other files still read from the cache" cmp "$src/model/weights.bin" \
    "$mounts/cached/model/weights.bin"
  stop_mount "$mounts/cached" TERM
  check "the change is counted" grep -q "1 refused as changed on the disk" "$mount_log"
  start_guarded "$keys/k.pem.pub"

  # ---- a lost server: reads fail within --read-timeout, never hang
  check "mount with --read-timeout=2s" start_mount "$mounts/lost" "${guarded[@]}" "${trust[@]}" \
    --read-timeout=2s rel/latest
  stop_server "$guarded_pid"
  guarded_pid=""
  t0=$(date +%s)
  rc=0
  timeout 60 cat "$mounts/lost/model/shards/a" >/dev/null 2>"$work/err" || rc=$?
  elapsed=$(($(date +%s) - t0))
  check "a read with the server gone fails with EIO (exit $rc: $(cat "$work/err"))" \
    eval "[ $rc -ne 0 -a $rc -ne 124 ] && grep -q 'Input/output error' '$work/err'"
  check "within the deadline and its retries ($elapsed s)" [ "$elapsed" -le 20 ]
  stop_mount "$mounts/lost" TERM
  start_guarded "$keys/k.pem.pub"

  # ---- a store writer's rollback: refused before anything is mounted
  store_read rel/latest "$work/v1.object"
  echo "release 2" >"$src/model/config.json"
  expect_exit 0 "put release 2" vc put "${guarded[@]}" "$src" --name=rel/latest "${publish[@]}"
  check "mount release 2" start_mount "$mounts/v2" "${guarded[@]}" "${trust[@]}" rel/latest
  check "release 2's config" grep -q "release 2" "$mounts/v2/model/config.json"
  stop_mount "$mounts/v2" TERM
  store_write rel/latest "$work/v1.object"
  mount_rc=0
  start_mount "$mounts/rolled" "${guarded[@]}" "${trust[@]}" rel/latest || true
  check "the rolled-back name: exit 3 (got $mount_rc)" [ "$mount_rc" -eq 3 ]
  check "the rolled-back name: the message says rollback" grep -q "rollback" "$mount_log"
  check "the rolled-back name: nothing mounted" eval "! mountpoint -q '$mounts/rolled'"

  # ---- --follow: each new version shown to new opens in verity sync's layout; a file open
  # across a switch keeps its version; a store writer's rollback never shown
  mount_rc=0
  start_mount "$mounts/follow-digest" "${guarded[@]}" --follow "$digest" || true
  check "--follow with a digest: refused (exit $mount_rc)" \
    eval "[ $mount_rc -ne 0 ] && grep -q -- '--follow needs a NAME' '$mount_log'"
  local fsrc=$work/follow-src f=$mounts/follow held v1 v2
  mkdir -p "$fsrc/conf"
  echo "version 1" >"$fsrc/conf/app.conf"
  echo one >"$fsrc/only-in-1"
  echo same >"$fsrc/keep"
  v1=$(vc put "${guarded[@]}" "$fsrc" --name=rel/follow "${publish[@]}" | cut -d' ' -f1)
  check "mount --follow (and --prefetch)" start_mount "$f" "${guarded[@]}" "${trust[@]}" \
    --follow --interval=1s --cache-dir="$work/follow-cache" --prefetch rel/follow
  check "the first version prefetched" wait_for_log "$mount_log" \
    "prefetch done: 3 files in the cache, 19 bytes fetched" "$mount_pid" 15
  check "..data points at the version" [ "$(readlink "$f/..data")" = "..${v1/:/-}" ]
  check "a top-level name links through ..data" [ "$(readlink "$f/conf")" = "..data/conf" ]
  check "files read through the links" [ "$(cat "$f/conf/app.conf")" = "version 1" ]
  exec {held}<"$f/conf/app.conf"
  store_read rel/follow "$work/follow-v1.object"
  echo "version 2" >"$fsrc/conf/app.conf"
  rm "$fsrc/only-in-1"
  echo two >"$fsrc/only-in-2"
  v2=$(vc put "${guarded[@]}" "$fsrc" --name=rel/follow "${publish[@]}" | cut -d' ' -f1)
  check "the new version is shown" wait_for_log "$mount_log" "now showing $v2" "$mount_pid" 15
  check "and prefetched, the file it kept not fetched again" wait_for_log "$mount_log" \
    "prefetch done: 3 files in the cache, 14 bytes fetched" "$mount_pid" 15
  check "new opens read it" [ "$(cat "$f/conf/app.conf")" = "version 2" ]
  check "..data points at it" [ "$(readlink "$f/..data")" = "..${v2/:/-}" ]
  check "a name it dropped is gone, a name it added is there" \
    eval "[ ! -e '$f/only-in-1' ] && [ \"\$(cat '$f/only-in-2')\" = two ]"
  check "the version before stays for readers inside it" [ -d "$f/..${v1/:/-}" ]
  check "a file open across the switch reads its own version" [ "$(cat <&"$held")" = "version 1" ]
  exec {held}<&-
  store_write rel/follow "$work/follow-v1.object"
  check "a rolled-back name is refused and logged" wait_for_log "$mount_log" \
    "rel/follow: not followed, still showing ${v2/:/-}: .*rollback" "$mount_pid" 15
  check "the rolled-back version is never shown" [ "$(cat "$f/conf/app.conf")" = "version 2" ]
  stop_mount "$f" TERM

  # ---- manifests that escape, marked as trees by a writer of the store (the server refuses
  # them as trees): refused before anything is mounted
  for kind in dotdot symlink; do
    evil_manifest "$work/evil-$kind" "$kind"
    evil=$(vc put "${guarded[@]}" "$work/evil-$kind" | cut -d' ' -f1)
    store_mark_tree "$evil"
    mount_rc=0
    start_mount "$mounts/evil-mnt-$kind" "${guarded[@]}" "$evil" || true
    check "a $kind manifest: refused (exit $mount_rc)" [ "$mount_rc" -ne 0 ]
    check "a $kind manifest: the message says so" grep -q "not a valid tree manifest" "$mount_log"
    check "a $kind manifest: nothing mounted" eval "! mountpoint -q '$mounts/evil-mnt-$kind'"
  done
  check "nothing written outside" [ ! -e "$work/escaped" -a ! -e "$work/outside" ]
  check "no verity mount process left" eval "! pgrep -f 'verity mount .*$mounts' >/dev/null"
}
