#!/usr/bin/env bash
# FEC in the file store, measured: Put of one blob with --fec_roots=0 and with the default (2)
# side by side (two servers, alternating which goes first, the blob deleted after each Put), as
# `verity put` (local hash, upload, server tree and parity, fsyncs); then the latency of a 4 KiB
# read that the server repairs from FEC against a clean one (tests/bench/fec_read_bench.cc).
# Reports the median and worst of the per-round ratios. Writes docs/bench-fec-store.md.
# Reports figures; never fails on a goal.
# Usage: tests/bench/fec_store_bench.sh [SIZE_MIB=1024] [ROUNDS=5] [OUT=docs/bench-fec-store.md]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/bench_lib.sh
size_mib=${1:-1024}
rounds=${2:-5}
out=${3:-docs/bench-fec-store.md}
load_at_start=$(load_average)

bench_binaries //server:verityd //client/cli:verity //tests/bench:fec_read_bench
verityd=$bin/server/verityd
verity=$bin/client/cli/verity
read_bench=$bin/tests/bench/fec_read_bench
work=$(mktemp -d)
declare -A pid addr
trap 'for p in "${pid[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT

start_server() {  # NAME FLAGS...: a server on its own store; sets pid[NAME] and addr[NAME]
  local name=$1 log=$work/$1.log
  shift
  "$verityd" --listen=127.0.0.1:0 --metrics_listen= --store_dir="$work/$name" "$@" 2>"$log" &
  pid[$name]=$!
  for _ in $(seq 200); do grep -q "serving" "$log" 2>/dev/null && break; sleep 0.05; done
  addr[$name]=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$log" | cut -d' ' -f3)
}
put_seconds() {  # SERVER: one Put of the blob, timed, then the blob deleted
  local seconds
  seconds=$(seconds_of "$verity" put --server="${addr[$1]}" "$work/blob")
  "$verity" rm --server="${addr[$1]}" "$digest" >/dev/null
  echo "$seconds"
}

head -c $((size_mib << 20)) /dev/urandom >"$work/blob"
start_server off --fec_roots=0
start_server on
digest=$("$verity" put --server="${addr[on]}" "$work/blob" | cut -d' ' -f1)
"$verity" rm --server="${addr[on]}" "$digest" >/dev/null
off=() on=()
for ((r = 0; r < rounds; r++)); do
  if ((r % 2 == 0)); then
    off+=("$(put_seconds off)"); on+=("$(put_seconds on)")
  else
    on+=("$(put_seconds on)"); off+=("$(put_seconds off)")
  fi
  echo "round $((r + 1)): Put without FEC ${off[-1]} s, with FEC ${on[-1]} s" >&2
done
put_ratios=$(ratios "${on[*]}" "${off[*]}")

# The repaired reads: the blob stored once more, with its FEC area.
"$verity" put --server="${addr[on]}" "$work/blob" >/dev/null
hex=${digest#sha256:}
dir=$work/on/blobs/sha256/${hex:0:2}/$hex
fec_bytes=$(stat -c %s "$dir/fec")
reads=$("$read_bench" --server="${addr[on]}" --digest="$digest" --data_file="$dir/data" \
  --samples=51)
load_at_end=$(load_average)

mb_per_s() { awk -v s="$1" -v m="$size_mib" 'BEGIN {printf "%.1f", m * 1048576 / s / 1e6}'; }
cat >"$out" <<REPORT
# FEC in the file store: Put and repaired reads

Command: \`tests/bench/fec_store_bench.sh $size_mib $rounds\` on $(machine); load average
$load_at_start at the start, $load_at_end at the end. $(shared_note $load_at_start $load_at_end)

## Put with FEC (2 roots, the default) against Put without

One ${size_mib} MiB random blob, \`verity put\` (the client hashes the file, then uploads it; the
server builds the tree as the data arrives, then writes the FEC area by reading the staged data
back, fsyncs and commits), to two servers on stores on the same disk, $rounds rounds, the order
alternating, the blob deleted after each Put.

| | median | best | worst |
| --- | --- | --- | --- |
| Put without FEC (\`--fec_roots=0\`) | $(median <<<"${off[*]}") s ($(mb_per_s "$(median <<<"${off[*]}")") MB/s) | $(minimum <<<"${off[*]}") s | $(maximum <<<"${off[*]}") s |
| Put with FEC (\`--fec_roots=2\`) | $(median <<<"${on[*]}") s ($(mb_per_s "$(median <<<"${on[*]}")") MB/s) | $(minimum <<<"${on[*]}") s | $(maximum <<<"${on[*]}") s |
| with / without, per round | $(median <<<"$put_ratios")x | $(minimum <<<"$put_ratios")x | $(maximum <<<"$put_ratios")x |

The FEC area is $fec_bytes bytes, $(awk -v f="$fec_bytes" -v m="$size_mib" 'BEGIN {printf "%.2f", 100 * f / (m * 1048576)}')% of the blob.

## A repaired 4 KiB read against a clean one

\`fec_read_bench\` (SDK, tree cached, so each read is one ReadSmall call) over the same server:
51 blocks, each in its own RS group: a clean read, a byte flipped in the stored data file, the
read the server repairs before it answers (it reads the block's RS group, 253 blocks of 4 KiB
spread over the blob, from the page cache here, checks each against the tree, rebuilds the bad
one with ISA-L, checks it, writes it back and fsyncs the data file), and a read after it.

\`\`\`
$reads
\`\`\`
REPORT
echo "wrote $out" >&2
