#!/usr/bin/env bash
# Concurrent reads of one damaged 4 KiB block on radosgw (a real single-node Ceph on this
# machine, tests/testing/ceph_cluster.sh): READERS `verity get --offset --length=4096` of the
# block started together through a fresh replica, which repairs the block's RS group from the
# blob's fec object. Counts, per round, from the replica's /metrics before and after: the
# repairs run (verityd_fec_repairs_total), the reads that waited for a repair under way
# (verityd_fec_repair_joins_total), and the S3 GETs (verityd_s3_requests_total{op=Get*});
# and the wall time until every reader has its verified block. With OLD_BIN=DIR (a directory
# with server/verityd and client/cli/verity of another build, as tests/bench/keep_binaries.sh
# lays them out), the same rounds through that build too, alternating which goes first.
# Reports the median and worst of the rounds. Writes OUT. Reports figures; never fails on a goal.
# Usage: tests/bench/fec_repair_share_bench.sh [READERS=8] [ROUNDS=5]
#          [OUT=docs/bench-fec-repair-share.md]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/bench_lib.sh
source tests/testing/ceph_cluster.sh
readers=${1:-8}
rounds=${2:-5}
out=${3:-docs/bench-fec-repair-share.md}
load_at_start=$(load_average)

bench_binaries //server:verityd //client/cli:verity
builds=(new)
declare -A verityd=([new]=$bin/server/verityd) verity=([new]=$bin/client/cli/verity)
if [[ -n ${OLD_BIN:-} ]]; then
  builds+=(old)
  verityd[old]=$OLD_BIN/server/verityd verity[old]=$OLD_BIN/client/cli/verity
fi
work=$(mktemp -d)
server_pid=
trap '[[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null; ceph_stop "$work/ceph"; rm -rf "$work"' EXIT
ceph_start "$work/ceph" >/dev/null

start_server() {  # BUILD: a replica of BUILD over s3://BUCKET/bench/; sets server_pid, addr, mport
  local log=$work/server.log
  "${verityd[$1]}" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 \
    --store="s3://$S3_BUCKET/bench" --s3_endpoint="$S3_ENDPOINT" 2>"$log" &
  server_pid=$!
  for _ in $(seq 400); do grep -q "metrics on" "$log" 2>/dev/null && break; sleep 0.05; done
  addr=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$log" | cut -d' ' -f3)
  mport=$(grep -o 'metrics on http://127.0.0.1:[0-9]*' "$log" | sed 's/.*://')
}
stop_server() { kill "$server_pid"; wait "$server_pid" || true; server_pid=; }
metric() {  # NAME [LABEL]: the sum of NAME's samples (with LABEL, those that have it)
  curl -sf "http://127.0.0.1:$mport/metrics" | awk -v n="$1" -v l="${2:-}" '
    ($1 == n || index($1, n "{") == 1) && index($1, l) {s += $2} END {printf "%.0f\n", s}'
}
s3_curl() {  # ARGS...: curl signed for the test bucket's credentials
  curl -sf --aws-sigv4 "aws:amz:$AWS_REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"
}

# 64 MiB: 16,384 data blocks and 130 tree blocks in 66 RS groups (2 roots, k = 253), so blocks
# 1..66 are each in a group of their own. Each round damages a new block for each build in the
# data object, as a bad disk under the gateway would return it: a replica cannot write the
# repair into the object, so a block once repaired stays damaged in the bucket.
head -c $((64 << 20)) /dev/urandom >"$work/blob"
start_server new
digest=$("${verity[new]}" put --server="$addr" "$work/blob" | cut -d' ' -f1)
stop_server
key="bench/blobs/sha256/${digest#sha256:}/data"
cp "$work/blob" "$work/damaged"
needed=$((rounds * ${#builds[@]}))
((needed <= 65)) || { echo "at most 65 rounds x builds" >&2; exit 2; }
for block in $(seq "$needed"); do
  printf '\x5a' | dd of="$work/damaged" bs=1 seek=$((block * 4096 + 17)) conv=notrunc status=none
done
s3_curl -T "$work/damaged" "$S3_ENDPOINT/$S3_BUCKET/$key" >/dev/null

declare -A repairs joins gets seconds
next_block=1
round() {  # BUILD: one round; appends to repairs[BUILD], joins[BUILD], gets[BUILD], seconds[BUILD]
  local build=$1 block=$next_block i pids=() t0 t1 r0 j0 g0 r1 j1 g1
  next_block=$((next_block + 1))
  start_server "$build"
  r0=$(metric verityd_fec_repairs_total) j0=$(metric verityd_fec_repair_joins_total)
  g0=$(metric verityd_s3_requests_total 'op="Get')
  t0=$(date +%s.%N)
  for ((i = 0; i < readers; i++)); do
    "${verity[$build]}" get --server="$addr" "$digest" --offset=$((block * 4096)) --length=4096 \
      -o "$work/out.$i" 2>"$work/reader.$i.log" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { echo "reader $i of $build failed:" >&2; cat "$work/reader.$i.log" >&2; exit 1; }
    cmp -s "$work/out.$i" <(tail -c +$((block * 4096 + 1)) "$work/blob" | head -c 4096) ||
      { echo "reader $i of $build got a wrong block" >&2; exit 1; }
  done
  t1=$(date +%s.%N)
  r1=$(metric verityd_fec_repairs_total) j1=$(metric verityd_fec_repair_joins_total)
  g1=$(metric verityd_s3_requests_total 'op="Get')
  stop_server
  repairs[$build]+="$((r1 - r0)) " joins[$build]+="$((j1 - j0)) " gets[$build]+="$((g1 - g0)) "
  seconds[$build]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}') "
  echo "round: $build, block $block: repairs $((r1 - r0)), joins $((j1 - j0)), GETs $((g1 - g0))" >&2
}

for ((r = 0; r < rounds; r++)); do
  if ((r % 2 == 0)); then
    for b in "${builds[@]}"; do round "$b"; done
  else
    for ((k = ${#builds[@]} - 1; k >= 0; k--)); do round "${builds[$k]}"; done
  fi
done
load_at_end=$(load_average)

row() {  # BUILD LABEL: the old build has no repair counters
  local b=$1 counted=("n/a" "n/a")
  if [[ $b == new ]]; then
    counted=("$(median <<<"${repairs[$b]}") / $(maximum <<<"${repairs[$b]}")"
      "$(median <<<"${joins[$b]}") / $(maximum <<<"${joins[$b]}")")
  fi
  echo "| $2 | ${counted[0]} | ${counted[1]} |" \
    "$(median <<<"${gets[$b]}") / $(maximum <<<"${gets[$b]}") |" \
    "$(median <<<"${seconds[$b]}") / $(maximum <<<"${seconds[$b]}") |"
}
{
  cat <<REPORT
# Concurrent reads of one damaged block on radosgw: one repair

Command: \`${OLD_BIN:+OLD_BIN=$OLD_BIN }tests/bench/fec_repair_share_bench.sh $readers $rounds\` on
$(machine); load average $load_at_start at the start, $load_at_end at the end.
$(shared_note $load_at_start $load_at_end) A single-node Ceph 16 (memstore OSD, radosgw) on the
same machine over loopback.

A 64 MiB random blob with FEC (2 roots: 66 RS groups of 253 blocks), its data object damaged in
the bucket at one 4 KiB block per round and build. Per round, a fresh replica (default caches),
then $readers \`verity get DIGEST --offset --length=4096\` of the damaged block started together;
each checks its block against the digest (every reader got the right bytes in every round).
Counted from the replica's /metrics before and after the readers: the repairs run, the reads
that waited for a repair already queued or under way, and the GETs the replica sent
(the readers' slab reads, tree blocks and the repairs' one-block reads); and the wall time
until the last reader was done. Median / worst of $rounds rounds.

| build | repairs run | reads that joined one | S3 GETs | seconds |
| --- | --- | --- | --- | --- |
REPORT
  row new "this one (a repair coordinator)"
  if [[ -n ${OLD_BIN:-} ]]; then
    row old "before it (one FIFO repair thread)"
  fi
  echo
  echo "Per round:"
  echo
  echo "- new: repairs ${repairs[new]}; joins ${joins[new]}; GETs ${gets[new]}; seconds ${seconds[new]}"
  if [[ -n ${OLD_BIN:-} ]]; then
    echo "- old: GETs ${gets[old]}; seconds ${seconds[old]}"
  fi
} >"$out"
echo "wrote $out" >&2
