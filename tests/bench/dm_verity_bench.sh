#!/usr/bin/env bash
# Times `verity digest --format=dm-verity` (one thread) against `veritysetup format` on one cached
# file, both writing the hash device with its superblock, in alternating rounds, and reports the
# median and worst per-round speed-up; the two hash devices must be identical. Reports figures;
# never fails on a goal.
# Usage: tests/bench/dm_verity_bench.sh [SIZE_MIB=1024] [ROUNDS=7] [OUT=docs/bench-dm-verity.md]
#   Smoke run: tests/bench/dm_verity_bench.sh 64 2 /tmp/bench-dm-verity.md
set -euo pipefail
cd "$(dirname "$0")/../.."
size_mib=${1:-1024}
rounds=${2:-7}
out=${3:-docs/bench-dm-verity.md}
source tests/bench/bench_lib.sh
command -v veritysetup >/dev/null || { echo "veritysetup is missing (cryptsetup-bin)" >&2; exit 1; }
bench_binaries //client/cli:verity
verity=$bin/client/cli/verity
load_at_start=$(load_average)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
file=$work/data
head -c $((size_mib << 20)) /dev/urandom >"$file"
cat "$file" >/dev/null  # in the page cache: this measures hashing, not the disk
# veritysetup's default: SHA-256, 4 KiB blocks, a 32-byte salt (given here, so the outputs match).
salt=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
uuid=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0
ours=("$verity" digest --format=dm-verity "$file" --salt="$salt" --uuid="$uuid"
  --out-hash-tree="$work/ours.img")
theirs=(veritysetup format "$file" "$work/theirs.img" --salt="$salt" --uuid="$uuid")

t_ours="" t_theirs=""
for ((r = 0; r < rounds; r++)); do
  rm -f "$work/ours.img" "$work/theirs.img"
  if ((r % 2 == 0)); then
    t_ours+="$(seconds_of "${ours[@]}") "; t_theirs+="$(seconds_of "${theirs[@]}") "
  else
    t_theirs+="$(seconds_of "${theirs[@]}") "; t_ours+="$(seconds_of "${ours[@]}") "
  fi
done
cmp -s "$work/ours.img" "$work/theirs.img" || { echo "the hash devices differ" >&2; exit 1; }
speedups=$(ratios "$t_theirs" "$t_ours")
med_ours=$(median <<<"$t_ours"); med_theirs=$(median <<<"$t_theirs")
mibs() { awk -v a="$size_mib" -v b="$1" 'BEGIN {printf "%.0f", a / b}'; }
note=$(shared_note $load_at_start $(load_average))
report=$(cat <<REPORT
# \`verity digest --format=dm-verity\` vs \`veritysetup format\`

Command: \`tests/bench/dm_verity_bench.sh $size_mib $rounds $out\` on $(date -u +%Y-%m-%d), $(nproc) CPUs
($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(veritysetup --version | cut -d' ' -f1-2),
one ${size_mib} MiB file of random data in the page cache; SHA-256, 4096-byte data and hash
blocks, a 32-byte salt and the superblock (veritysetup's defaults), each writing its hash device
to a file (identical, checked). One thread each. $rounds rounds, the order alternating.
${note}

| tool | median seconds | MiB/s | worst seconds |
| --- | --- | --- | --- |
| veritysetup format | $med_theirs | $(mibs "$med_theirs") | $(maximum <<<"$t_theirs") |
| verity digest --format=dm-verity | $med_ours | $(mibs "$med_ours") | $(maximum <<<"$t_ours") |

Speed-up (veritysetup's time over verity's, per round): median $(median <<<"$speedups"), worst
$(minimum <<<"$speedups").

All rounds (seconds): veritysetup $t_theirs; verity $t_ours.
REPORT
)
echo "$report"
mkdir -p "$(dirname "$out")"
echo "$report" >"$out"
