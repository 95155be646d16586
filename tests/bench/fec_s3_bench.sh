#!/usr/bin/env bash
# FEC in the S3 store, measured on one radosgw (a real single-node Ceph on this machine,
# tests/testing/ceph_cluster.sh): Put of one blob through a replica with --fec_roots=0 and one
# with the default (2), side by side (alternating which goes first, the blob deleted after each
# Put), as `verity put` (local hash, upload in parts, the server's tree and parity, the objects
# committed); then the latency of a 4 KiB read that a fresh replica repairs from the blob's fec
# object (the data object damaged in the bucket) against a clean first read
# (tests/bench/fec_read_bench.cc). Reports the median and worst of the per-round ratios. Writes
# OUT. Reports figures; never fails on a goal.
# Usage: tests/bench/fec_s3_bench.sh [SIZE_MIB=512] [ROUNDS=5] [OUT=docs/bench-fec-s3.md]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/bench_lib.sh
source tests/testing/ceph_cluster.sh
size_mib=${1:-512}
rounds=${2:-5}
out=${3:-docs/bench-fec-s3.md}
load_at_start=$(load_average)

bench_binaries //server:verityd //client/cli:verity //tests/bench:fec_read_bench
verityd=$bin/server/verityd
verity=$bin/client/cli/verity
read_bench=$bin/tests/bench/fec_read_bench
work=$(mktemp -d)
declare -A pid addr
trap 'for p in "${pid[@]}"; do kill "$p" 2>/dev/null; done; ceph_stop "$work/ceph"; rm -rf "$work"' EXIT
# The OSD keeps everything in RAM, and radosgw frees deleted objects only hours later: room for
# every copy the rounds store (2 per round, 3 more), with headroom.
CEPH_MEMSTORE_BYTES=$(((size_mib * (3 + 2 * rounds) * 3 / 2) << 20)) ceph_start "$work/ceph" >/dev/null

start_server() {  # NAME FLAGS...: a replica over s3://BUCKET/NAME/; sets pid[NAME], addr[NAME]
  local name=$1 log=$work/$1.log
  shift
  "$verityd" --listen=127.0.0.1:0 --metrics_listen= --store="s3://$S3_BUCKET/$name" \
    --s3_endpoint="$S3_ENDPOINT" "$@" 2>"$log" &
  pid[$name]=$!
  for _ in $(seq 200); do grep -q "verityd: serving" "$log" 2>/dev/null && break; sleep 0.05; done
  addr[$name]=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$log" | cut -d' ' -f3)
}
stop_server() { kill "${pid[$1]}"; wait "${pid[$1]}" || true; unset "pid[$1]"; }
put_seconds() {  # SERVER: the wall time of one Put of the blob, then deletes it
  local seconds
  seconds=$(seconds_of "$verity" put --server="${addr[$1]}" "$work/blob")
  "$verity" rm --server="${addr[$1]}" "$digest" >/dev/null
  echo "$seconds"
}
s3_curl() {  # ARGS...: curl signed for the test bucket's credentials
  curl -sf --aws-sigv4 "aws:amz:$AWS_REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"
}

head -c $((size_mib << 20)) /dev/urandom >"$work/blob"
start_server off --fec_roots=0
start_server on
# One Put each first: a server's first Put pays for its start-up (memory, threads).
digest=$("$verity" put --server="${addr[on]}" "$work/blob" | cut -d' ' -f1)
"$verity" rm --server="${addr[on]}" "$digest" >/dev/null
"$verity" put --server="${addr[off]}" "$work/blob" >/dev/null
"$verity" rm --server="${addr[off]}" "$digest" >/dev/null
off=() on=()
for ((r = 0; r < rounds; r++)); do
  if ((r % 2 == 0)); then
    off+=("$(put_seconds off)") on+=("$(put_seconds on)")
  else
    on+=("$(put_seconds on)") off+=("$(put_seconds off)")
  fi
  echo "round $((r + 1)): Put without FEC ${off[-1]} s, with FEC ${on[-1]} s" >&2
done
put_ratios=$(ratios "${on[*]}" "${off[*]}")

# The repaired reads: the blob stored once more, then its data object replaced in the bucket by
# a copy with byte 17 of blocks 1..51 flipped (each block in its own RS group), as a bad disk
# under the gateway would return it; a fresh replica reads.
"$verity" put --server="${addr[on]}" "$work/blob" >/dev/null
stop_server on
key="on/blobs/sha256/${digest#sha256:}"
fec_bytes=$(s3_curl -I "$S3_ENDPOINT/$S3_BUCKET/$key/fec" | tr -d '\r' |
  awk -F': ' 'tolower($1) == "content-length" {print $2}')
cp "$work/blob" "$work/damaged"
for block in $(seq 51); do
  printf '\x5a' | dd of="$work/damaged" bs=1 seek=$((block * 4096 + 17)) conv=notrunc status=none
done
s3_curl -T "$work/damaged" "$S3_ENDPOINT/$S3_BUCKET/$key/data" >/dev/null
start_server on
reads=$("$read_bench" --server="${addr[on]}" --digest="$digest" --samples=51)
repairs=$(grep -c "FEC repaired" "$work/on.log" || true)
load_at_end=$(load_average)

mb_per_s() { awk -v s="$1" -v m="$size_mib" 'BEGIN {printf "%.1f", m * 1048576 / s / 1e6}'; }
cat >"$out" <<REPORT
# FEC in the S3 store: Put and repaired reads

Command: \`tests/bench/fec_s3_bench.sh $size_mib $rounds\` on $(machine); load average
$load_at_start at the start, $load_at_end at the end. $(shared_note $load_at_start $load_at_end)
A single-node Ceph 16 (memstore OSD, radosgw with \`tcp_nodelay=1\`) on the same machine over
loopback.

## Put with FEC (2 roots, the default) against Put without

One ${size_mib} MiB random blob, \`verity put\` (the client hashes the file, then uploads it;
the server uploads the data in 8 MiB parts as it arrives, builds the tree and encodes the FEC
area as it goes, then puts the tree, the \`fec\` object and the descriptor), through two
replicas on two prefixes of one bucket, $rounds rounds, the order alternating, the blob deleted
after each Put, after one untimed Put through each. Wall time is the client's.

| | median | best | worst |
| --- | --- | --- | --- |
| Put without FEC (\`--fec_roots=0\`) | $(median <<<"${off[*]}") s ($(mb_per_s "$(median <<<"${off[*]}")") MB/s) | $(minimum <<<"${off[*]}") s | $(maximum <<<"${off[*]}") s |
| Put with FEC (\`--fec_roots=2\`) | $(median <<<"${on[*]}") s ($(mb_per_s "$(median <<<"${on[*]}")") MB/s) | $(minimum <<<"${on[*]}") s | $(maximum <<<"${on[*]}") s |
| with / without, per round | $(median <<<"$put_ratios")x | $(minimum <<<"$put_ratios")x | $(maximum <<<"$put_ratios")x |

The \`fec\` object is $fec_bytes bytes, $(awk -v f="$fec_bytes" -v m="$size_mib" 'BEGIN {printf "%.2f", 100 * f / (m * 1048576)}')% of the blob.

## A repaired 4 KiB read against a clean one

\`fec_read_bench\` (SDK, tree cached, so each read is one ReadSmall call) through a fresh
replica (default caches: 4 MiB slabs, 64 MiB of memory), the blob's data object damaged in the
bucket at 51 blocks (1 to 51, each in its own RS group, all in the first slab). Per sample: a
clean read of an undamaged block in a slab not read yet (one 4 MiB ranged GET), then the read
of a damaged block, then that read again. The damaged read: the slab fetched, the block fails
verification, the slab dropped and fetched again, fails again, then the repair (one ranged GET
per block of the group: 253 blocks of 4 KiB spread over the blob, and the parity, checks,
ISA-L rebuild, the block kept in memory over the object and, once, the damage mark PUT), then
the slab fetched a third time, and the block served. The server logged $repairs repairs.

\`\`\`
$reads
\`\`\`
REPORT
echo "wrote $out" >&2
