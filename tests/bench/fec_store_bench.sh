#!/usr/bin/env bash
# FEC in the file store, measured: Put of one blob with --fec_roots=0 and with the default (2)
# side by side (two servers, alternating which goes first, the blob deleted after each Put and
# the disk synced before the next), as
# `verity put` (local hash, upload, server tree and parity, fsyncs); then the latency of a 4 KiB
# read that the server repairs from FEC against a clean one (tests/bench/fec_read_bench.cc).
# Reports the median and worst of the per-round ratios of wall time and of the server's CPU
# time. The stores go under STORE_PARENT (default: a new directory in /tmp): a tmpfs such as
# /dev/shm takes the disk out, leaving FEC's cost at its largest share. Writes OUT.
# Reports figures; never fails on a goal.
# Usage: tests/bench/fec_store_bench.sh [SIZE_MIB=1024] [ROUNDS=5] [OUT=docs/bench-fec-store.md]
#        [STORE_PARENT]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/bench_lib.sh
size_mib=${1:-1024}
rounds=${2:-5}
out=${3:-docs/bench-fec-store.md}
store_parent=${4:-}
load_at_start=$(load_average)

bench_binaries //server:verityd //client/cli:verity //tests/bench:fec_read_bench
verityd=$bin/server/verityd
verity=$bin/client/cli/verity
read_bench=$bin/tests/bench/fec_read_bench
work=$(mktemp -d)
stores=$(mktemp -d ${store_parent:+-p "$store_parent"})
declare -A pid addr
trap 'for p in "${pid[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work" "$stores"' EXIT

start_server() {  # NAME FLAGS...: a server on its own store; sets pid[NAME] and addr[NAME]
  local name=$1 log=$work/$1.log
  shift
  "$verityd" --listen=127.0.0.1:0 --metrics_listen= --store_dir="$stores/$name" "$@" 2>"$log" &
  pid[$name]=$!
  for _ in $(seq 200); do grep -q "serving" "$log" 2>/dev/null && break; sleep 0.05; done
  addr[$name]=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$log" | cut -d' ' -f3)
}
# cpu_seconds PID: the user and system CPU time PID has used.
cpu_seconds() {
  awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"
}
put_seconds() {  # SERVER: "WALL CPU" of one Put of the blob (CPU: the server's), then deletes it
  local seconds cpu0 cpu1
  # The last Put's writeback done first: each Put pays for its own.
  sync
  cpu0=$(cpu_seconds "${pid[$1]}")
  seconds=$(seconds_of "$verity" put --server="${addr[$1]}" "$work/blob")
  cpu1=$(cpu_seconds "${pid[$1]}")
  "$verity" rm --server="${addr[$1]}" "$digest" >/dev/null
  echo "$seconds $(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN {printf "%.2f", b - a}')"
}

head -c $((size_mib << 20)) /dev/urandom >"$work/blob"
start_server off --fec_roots=0
start_server on
# One Put each first: a server's first Put pays for its start-up (memory, threads).
digest=$("$verity" put --server="${addr[on]}" "$work/blob" | cut -d' ' -f1)
"$verity" rm --server="${addr[on]}" "$digest" >/dev/null
"$verity" put --server="${addr[off]}" "$work/blob" >/dev/null
"$verity" rm --server="${addr[off]}" "$digest" >/dev/null
off=() on=() off_cpu=() on_cpu=()
put_off() { read -r wall cpu < <(put_seconds off); off+=("$wall"); off_cpu+=("$cpu"); }
put_on() { read -r wall cpu < <(put_seconds on); on+=("$wall"); on_cpu+=("$cpu"); }
for ((r = 0; r < rounds; r++)); do
  if ((r % 2 == 0)); then put_off; put_on; else put_on; put_off; fi
  echo "round $((r + 1)): Put without FEC ${off[-1]} s (server CPU ${off_cpu[-1]} s)," \
    "with FEC ${on[-1]} s (${on_cpu[-1]} s)" >&2
done
put_ratios=$(ratios "${on[*]}" "${off[*]}")
cpu_ratios=$(ratios "${on_cpu[*]}" "${off_cpu[*]}")

# The repaired reads: the blob stored once more, with its FEC area.
"$verity" put --server="${addr[on]}" "$work/blob" >/dev/null
hex=${digest#sha256:}
dir=$stores/on/blobs/sha256/${hex:0:2}/$hex
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
server builds the tree and the FEC area as the data arrives, fsyncs and commits), to two servers with their stores in
$(df --output=fstype "$stores" | tail -n 1) ($(df --output=source "$stores" | tail -n 1)), $rounds rounds, the order
alternating, the blob deleted after each Put and \`sync\` run before the next, after one
untimed Put to each server. Wall time is the client's; CPU time is the server's (user + system)
for the Put. The client sends the content's size (\`content_size\`), so the server encodes the
FEC area as the content arrives.

| | median | best | worst |
| --- | --- | --- | --- |
| Put without FEC (\`--fec_roots=0\`) | $(median <<<"${off[*]}") s ($(mb_per_s "$(median <<<"${off[*]}")") MB/s) | $(minimum <<<"${off[*]}") s | $(maximum <<<"${off[*]}") s |
| Put with FEC (\`--fec_roots=2\`) | $(median <<<"${on[*]}") s ($(mb_per_s "$(median <<<"${on[*]}")") MB/s) | $(minimum <<<"${on[*]}") s | $(maximum <<<"${on[*]}") s |
| with / without, per round | $(median <<<"$put_ratios")x | $(minimum <<<"$put_ratios")x | $(maximum <<<"$put_ratios")x |
| server CPU without FEC | $(median <<<"${off_cpu[*]}") s | $(minimum <<<"${off_cpu[*]}") s | $(maximum <<<"${off_cpu[*]}") s |
| server CPU with FEC | $(median <<<"${on_cpu[*]}") s | $(minimum <<<"${on_cpu[*]}") s | $(maximum <<<"${on_cpu[*]}") s |
| server CPU with / without, per round | $(median <<<"$cpu_ratios")x | $(minimum <<<"$cpu_ratios")x | $(maximum <<<"$cpu_ratios")x |

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
