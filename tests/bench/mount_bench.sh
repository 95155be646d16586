#!/usr/bin/env bash
# `verity mount` against the mounts a user would pick instead, side by side over one radosgw
# bucket (a real single-node Ceph on this machine, tests/testing/ceph_cluster.sh), the same files
# in it: verityd with --store=s3:// (a fresh replica, empty cache, for each cold run) under
# `verity mount`, and `rclone mount` and `s3fs` (Debian's, unverified) on the same objects.
# ROUNDS alternating rounds (the tool order rotates), median and worst:
# - cold sequential read of a 1 GiB file (`dd bs=1M` to /dev/null, page cache dropped, each
#   mount fresh) against rclone, s3fs and `verity get` of the same file from a fresh replica;
# - warm re-read (page cache) against the same file read from local disk (also cached), from
#   tmpfs, whose page cache is made of 4 KiB pages as a FUSE file's is on this kernel, and
#   through rclone and s3fs;
# - 4 KiB random reads, cold, one thread (python pread at 200 4 KiB-aligned random offsets): p50
#   against the SDK's (//tests/bench:random_reads: ReadRange at the same offsets, one client, a
#   fresh replica);
# - a re-read after the page cache let go of the file (posix_fadvise DONTNEED): verity mount
#   with --cache-dir (from its disk cache), without (fetched again), and the local file;
# - a safetensors-like access of a 2 GiB file (the 8-byte header length, the header, three 1 MiB
#   tensors at random offsets) against `verity get` of the whole file;
# - verity mount's peak RSS while `dd` reads the 2 GiB file.
# Reports figures; never fails on a goal. Writes OUT.
# Usage: tests/bench/mount_bench.sh [ROUNDS=7] [OUT=docs/bench-mount.md]
#   Smoke run (a 64 MiB file, a 128 MiB model): BIG_MIB=64 TENSORS=4 tests/bench/mount_bench.sh 1 /tmp/m.md
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-7}
out=${2:-docs/bench-mount.md}
big_mib=${BIG_MIB:-1024}
tensors=${TENSORS:-64}  # of 32 MiB: the model's size
source tests/bench/bench_lib.sh
load_at_start=$(load_average)
for tool in rclone s3fs; do command -v $tool >/dev/null || apt-get install -y -q $tool >/dev/null; done
bench_binaries //server:verityd //client/cli:verity //tests/bench:random_reads
verityd=$bin/server/verityd verity=$bin/client/cli/verity random_reads=$bin/tests/bench/random_reads
source tests/testing/ceph_cluster.sh
work=$(mktemp -d /var/tmp/mount-bench.XXXXXX)
shm=$(mktemp -d /dev/shm/mount-bench.XXXXXX)
server_pid="" mount_pid=""
mounts=()
cleanup() {
  local m
  for m in "${mounts[@]}"; do mountpoint -q "$m" && { fusermount3 -u -z "$m" 2>/dev/null || umount -l "$m"; }; done
  [[ -z $server_pid ]] || kill "$server_pid" 2>/dev/null
  wait 2>/dev/null || true
  ceph_stop "$work/ceph"
  rm -rf "$work" "$shm"
}
trap cleanup EXIT
# The OSD keeps objects in RAM: the plain copies (3 GiB) and verityd's (3 GiB with trees and FEC).
CEPH_MEMSTORE_BYTES=$((8 << 30)) ceph_start "$work/ceph" >/dev/null

# ---- the files: a 1 GiB file, and a safetensors-like 2 GiB one (u64 header length, a JSON
# header naming 64 tensors of 32 MiB, the tensors)
src=$work/src
mkdir -p "$src"
head -c $((big_mib << 20)) /dev/urandom >"$src/big.bin"
python3 - "$src/model.safetensors" "$tensors" <<'PY'
import json, os, struct, sys
tensor, count = 32 << 20, int(sys.argv[2])
header = {f"layer.{i}.weight": {"dtype": "F16", "shape": [tensor // 2],
          "data_offsets": [i * tensor, (i + 1) * tensor]} for i in range(count)}
h = json.dumps(header).encode()
h += b" " * (-len(h) % 8)
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h)
    for _ in range(count):
        f.write(os.urandom(tensor))
PY
sync
cp "$src/big.bin" "$shm/big.bin"

# rclone and s3fs read the same files as plain objects under plain/. The endpoint is plain
# HTTP: rclone 1.60 fails on an AWS_CA_BUNDLE it cannot load into its own transport.
unset AWS_CA_BUNDLE
export RCLONE_CONFIG_CEPH_TYPE=s3 RCLONE_CONFIG_CEPH_PROVIDER=Ceph \
  RCLONE_CONFIG_CEPH_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID \
  RCLONE_CONFIG_CEPH_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY \
  RCLONE_CONFIG_CEPH_ENDPOINT=$S3_ENDPOINT RCLONE_CONFIG_CEPH_REGION=$AWS_REGION
rclone copy "$src" "ceph:$S3_BUCKET/plain"
echo "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" >"$work/s3fs.passwd"
chmod 0600 "$work/s3fs.passwd"

start_replica() {  # a verityd over the bucket with an empty cache; sets server_pid, srv
  [[ -z $server_pid ]] || { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; }
  rm -rf "$work/cache"
  "$verityd" --listen=127.0.0.1:0 --metrics_listen= --store="s3://$S3_BUCKET/verity" \
    --s3_endpoint="$S3_ENDPOINT" --cache_dir="$work/cache" 2>"$work/verityd.log" &
  server_pid=$!
  for _ in $(seq 400); do grep -q "verityd: serving" "$work/verityd.log" 2>/dev/null && break; sleep 0.05; done
  srv=--server=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$work/verityd.log" | cut -d' ' -f3)
}
start_replica
"$verity" put "$srv" "$src" --name=bench/model >/dev/null
big_digest=$("$verity" digest "$src/big.bin" | cut -d' ' -f1)
model_digest=$("$verity" digest "$src/model.safetensors" | cut -d' ' -f1)

wait_mounted() {  # MNT PID
  for _ in $(seq 600); do mountpoint -q "$1" && return 0; kill -0 "$2" 2>/dev/null || break; sleep 0.05; done
  echo "mount_bench: $1 did not mount" >&2
  exit 1
}
# mount_fresh TOOL: TOOL's mount of the files at $work/mnt-TOOL, fresh (a new replica for
# verity), the page cache dropped; sets mnt and mount_pid.
mount_flags=()  # more flags for verity mount
mount_fresh() {
  unmount_current
  mnt=$work/mnt-$1
  mkdir -p "$mnt"
  mounts+=("$mnt")
  case $1 in
    verity)
      start_replica
      "$verity" mount "$srv" bench/model "$mnt" "${mount_flags[@]}" 2>"$work/mount.log" &
      ;;
    rclone)
      rclone mount "ceph:$S3_BUCKET/plain" "$mnt" --read-only 2>"$work/rclone.log" &
      ;;
    s3fs)
      s3fs "$S3_BUCKET:/plain" "$mnt" -f -o ro,url="$S3_ENDPOINT",use_path_request_style \
        -o passwd_file="$work/s3fs.passwd",endpoint="$AWS_REGION" 2>"$work/s3fs.log" &
      ;;
  esac
  mount_pid=$!
  wait_mounted "$mnt" "$mount_pid"
  sync
  echo 3 >/proc/sys/vm/drop_caches
}
unmount_current() {
  [[ -n $mount_pid ]] || return 0
  fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"
  wait "$mount_pid" 2>/dev/null || true
  mount_pid=""
}
dd_seconds() {  # FILE
  seconds_of dd if="$1" of=/dev/null bs=1M status=none
}
# The 200 random aligned 4 KiB offsets of big.bin that both the mount and the SDK read, cold.
python3 -c '
import random, sys
blocks = (int(sys.argv[1]) << 20) // 4096
for b in random.Random(7).sample(range(blocks), 200):
    print(b * 4096)' "$big_mib" >"$work/offsets"
# random_p50_us FILE: p50 of cold 4 KiB preads of FILE at $work/offsets, in microseconds.
random_p50_us() {  # FILE
  python3 - "$1" "$work/offsets" <<'PY'
import os, statistics, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
lat = []
for offset in map(int, open(sys.argv[2])):
    t = time.perf_counter()
    assert len(os.pread(fd, 4096, offset)) == 4096
    lat.append((time.perf_counter() - t) * 1e6)
print(f"{statistics.median(lat):.0f}")
PY
}
# evict FILE: drops FILE's pages from the page cache.
evict() {
  python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1"
}
safetensors_seconds() {  # FILE
  python3 - "$1" <<'PY'
import json, os, random, struct, sys, time
t = time.perf_counter()
fd = os.open(sys.argv[1], os.O_RDONLY)
n = struct.unpack("<Q", os.pread(fd, 8, 0))[0]
header = json.loads(os.pread(fd, n, 8))
names = random.Random(time.time_ns()).sample(sorted(header), 3)
for name in names:
    begin = 8 + n + header[name]["data_offsets"][0] + random.randrange(0, 31) * (1 << 20)
    assert len(os.pread(fd, 1 << 20, begin)) == 1 << 20
print(f"{time.perf_counter() - t:.4f}")
PY
}

declare -A times
for ((r = 1; r <= rounds; r++)); do
  case $((r % 3)) in 1) order="verity rclone s3fs" ;; 2) order="rclone s3fs verity" ;; 0) order="s3fs verity rclone" ;; esac
  for tool in $order; do
    mount_fresh "$tool"
    times[cold-$tool]+="$(dd_seconds "$mnt/big.bin") "
    times[warm-$tool]+="$(dd_seconds "$mnt/big.bin") "
    if [[ $tool == verity ]]; then
      cat "$src/big.bin" >/dev/null
      times[warm-local]+="$(dd_seconds "$src/big.bin") "
      times[warm-tmpfs]+="$(dd_seconds "$shm/big.bin") "
      mount_fresh verity
      times[random-mount]+="$(random_p50_us "$mnt/big.bin") "
      mount_fresh verity
      times[safetensors]+="$(safetensors_seconds "$mnt/model.safetensors") "
      # What the page cache let go of: from --cache-dir's disk, against fetched again (from
      # the replica's warm slab cache) and against the local file, each evicted alike.
      mount_flags=(--cache-dir="$work/mount-cache")
      mount_fresh verity
      mount_flags=()
      dd if="$mnt/big.bin" of=/dev/null bs=1M status=none
      sleep 2  # the cache's writer lands the last slabs
      evict "$mnt/big.bin"
      times[evicted-cache]+="$(dd_seconds "$mnt/big.bin") "
      unmount_current
      echo "round $r, verity mount --cache-dir: $(grep -o "[0-9]* slabs read from it, [0-9]* fetched" "$work/mount.log")"
      "$verity" mount "$srv" bench/model "$mnt" 2>"$work/mount.log" &
      mount_pid=$!
      wait_mounted "$mnt" "$mount_pid"
      dd if="$mnt/big.bin" of=/dev/null bs=1M status=none
      evict "$mnt/big.bin"
      times[evicted-fetch]+="$(dd_seconds "$mnt/big.bin") "
      evict "$src/big.bin"
      times[evicted-local]+="$(dd_seconds "$src/big.bin") "
      unmount_current
    fi
  done
  start_replica
  times[cold-get]+="$(seconds_of "$verity" get "$srv" "$big_digest") "
  start_replica
  times[whole-model]+="$(seconds_of "$verity" get "$srv" "$model_digest") "
  start_replica
  line=$("$random_reads" "--server=${srv#--server=}" --digest="$big_digest" --offsets="$work/offsets")
  times[random-sdk]+="$(sed -nE 's/.*p50_us=([0-9.]+).*/\1/p' <<<"$line") "
done
# Memory: verity mount's peak RSS while dd reads the 2 GiB file through it.
mount_fresh verity
dd if="$mnt/model.safetensors" of=/dev/null bs=1M status=none
rss_mib=$(hwm_mib "$mount_pid")
diff <(dd if="$mnt/model.safetensors" bs=1M status=none | sha256sum) <(sha256sum <"$src/model.safetensors") >/dev/null ||
  echo "WARNING: the mounted model differs" >&2
unmount_current

med() { median <<<"$1"; }
worst() { maximum <<<"$1"; }
faster_baseline=""  # per round, the faster of rclone and s3fs
read -ra rc <<<"${times[cold-rclone]}"
read -ra sf <<<"${times[cold-s3fs]}"
for ((i = 0; i < rounds; i++)); do
  faster_baseline+="$(awk -v a="${rc[i]}" -v b="${sf[i]}" 'BEGIN {print (a < b) ? a : b}') "
done
row() {  # LABEL SERIES
  echo "| $1 | $(med "$2") | $(worst "$2") |"
}
ratio_row() {  # LABEL NUMERATORS DENOMINATORS [max]: per-round ratios; the worst is the
  # smallest, or with "max" (goals that are upper bounds) the largest
  local r
  r=$(ratios "$2" "$3")
  if [[ ${4:-} == max ]]; then
    echo "| $1 | $(median <<<"$r")x | $(maximum <<<"$r")x |"
  else
    echo "| $1 | $(median <<<"$r")x | $(minimum <<<"$r")x |"
  fi
}
{
  echo "# verity mount against rclone mount, s3fs and local disk, over one radosgw bucket"
  echo
  echo "\`tests/bench/mount_bench.sh $rounds\` on $(machine); load average at start $load_at_start, at end $(load_average)."
  note=$(shared_note $load_at_start $(load_average))
  [[ -z $note ]] || { echo; echo "$note"; }
  echo
  echo "One real single-node Ceph on this machine (radosgw, memstore OSD, loopback); verityd with \`--store=s3://\` and its slab cache, a fresh replica with an empty cache for every cold run; rclone $(rclone version 2>/dev/null | head -n 1 | cut -d' ' -f2) and s3fs $(s3fs --version 2>/dev/null | head -n 1 | awk '{print $NF}') (Debian's, defaults, read-only, no end-to-end check) on the same files as plain objects. Every cold run mounts afresh and drops the page cache. $rounds alternating rounds (the tool order rotates)."
  echo
  echo "Seconds (median, worst):"
  echo
  echo "| what | median | worst |"
  echo "| --- | --- | --- |"
  row "cold \`dd bs=1M\` of $big_mib MiB: verity mount" "${times[cold-verity]}"
  row "cold \`dd bs=1M\` of $big_mib MiB: rclone mount" "${times[cold-rclone]}"
  row "cold \`dd bs=1M\` of $big_mib MiB: s3fs" "${times[cold-s3fs]}"
  row "cold \`verity get\` of the same $big_mib MiB" "${times[cold-get]}"
  row "warm re-read of $big_mib MiB: verity mount (page cache)" "${times[warm-verity]}"
  row "warm re-read of $big_mib MiB: local disk (page cache)" "${times[warm-local]}"
  row "warm re-read of $big_mib MiB: tmpfs (4 KiB pages, like a FUSE file's page cache here)" "${times[warm-tmpfs]}"
  row "warm re-read of $big_mib MiB: rclone mount" "${times[warm-rclone]}"
  row "warm re-read of $big_mib MiB: s3fs" "${times[warm-s3fs]}"
  row "re-read of $big_mib MiB after the page cache let go of it: verity mount --cache-dir (its disk)" "${times[evicted-cache]}"
  row "the same without --cache-dir (fetched again, from the replica's slab cache)" "${times[evicted-fetch]}"
  row "the same from local disk" "${times[evicted-local]}"
  row "safetensors-like access of $((tensors * 32)) MiB through verity mount" "${times[safetensors]}"
  row "\`verity get\` of the whole $((tensors * 32)) MiB file" "${times[whole-model]}"
  echo
  echo "4 KiB random reads, cold, one thread, p50 in µs (median, worst of the rounds' p50s): verity mount $(med "${times[random-mount]}"), $(worst "${times[random-mount]}"); the SDK's small read (\`random_reads\`: one client, \`ReadRange\` of the same 200 offsets, cold: a fresh replica, nothing read before) $(med "${times[random-sdk]}"), $(worst "${times[random-sdk]}")."
  echo
  echo "Per-round ratios (median, worst):"
  echo
  echo "| goal | median | worst |"
  echo "| --- | --- | --- |"
  ratio_row "cold read: the faster of rclone and s3fs / verity mount (goal ≥ 1.0x)" "$faster_baseline" "${times[cold-verity]}"
  ratio_row "cold read: verity get / verity mount (goal ≥ 0.8x)" "${times[cold-get]}" "${times[cold-verity]}"
  ratio_row "warm re-read: local disk / verity mount (goal ≥ 0.9x)" "${times[warm-local]}" "${times[warm-verity]}"
  ratio_row "warm re-read: tmpfs / verity mount (the same 4 KiB-page path; context, not a goal)" "${times[warm-tmpfs]}" "${times[warm-verity]}"
  ratio_row "4 KiB random p50: verity mount / SDK small read (goal ≤ 1.5x)" "${times[random-mount]}" "${times[random-sdk]}" max
  ratio_row "safetensors-like / whole-file get (goal ≤ 0.05)" "${times[safetensors]}" "${times[whole-model]}" max
  echo
  echo "verity mount's peak RSS while \`dd\` read the $((tensors * 32)) MiB file through it: $rss_mib MiB (goal < 150 MiB)."
} >"$out"
cat "$out"
