#!/usr/bin/env bash
# Times `verity digest` (1 and 2 threads) against `fsverity digest` on one file, in one run,
# interleaved so machine noise hits all three alike, and reports medians and ratios.
# Usage: tests/bench/digest_bench.sh [SIZE_MIB=1024] [ROUNDS=5] [OUT=docs/bench-digest.md]
#        [HASH_ALG=sha256]
set -euo pipefail
cd "$(dirname "$0")/../.."
size_mib=${1:-1024}
rounds=${2:-5}
out=${3:-docs/bench-digest.md}
alg=${4:-sha256}

source tests/bench/bench_lib.sh
bench_binaries //client/cli:verity
verity=$bin/client/cli/verity
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
file=$work/data
head -c $((size_mib << 20)) /dev/urandom >"$file"
cat "$file" >/dev/null  # warm the page cache: this measures hashing, not the disk


declare -A times
for ((r = 0; r < rounds; r++)); do
  times[fsverity]+="$(seconds_of fsverity digest --hash-alg="$alg" "$file") "
  times[verity1]+="$(seconds_of "$verity" digest --hash-alg="$alg" --threads=1 "$file") "
  times[verity2]+="$(seconds_of "$verity" digest --hash-alg="$alg" --threads=2 "$file") "
done
[[ $("$verity" digest --hash-alg="$alg" "$file") == $(fsverity digest --hash-alg="$alg" "$file") ]] ||
  { echo "digests differ" >&2; exit 1; }

med() { tr ' ' '\n' <<<"${times[$1]}" | grep . | median; }
fs=$(med fsverity); v1=$(med verity1); v2=$(med verity2)
ratio() { awk -v a="$fs" -v b="$1" 'BEGIN {printf "%.2f", a / b}'; }
mibs() { awk -v a="$size_mib" -v b="$1" 'BEGIN {printf "%.0f", a / b}'; }
report=$(cat <<REPORT
# \`verity digest\` vs \`fsverity digest\`

Command: \`tests/bench/digest_bench.sh $size_mib $rounds $out $alg\` on $(date -u +%Y-%m-%d), $(nproc) CPUs
($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(grep -qw sha_ni /proc/cpuinfo && echo "SHA-NI present" || echo "no SHA-NI"),
one ${size_mib} MiB file of random data in the page cache, ${alg^^}, 4096-byte blocks, no salt.
Median of $rounds interleaved rounds; speed-up is fsverity's time divided by verity's.

| tool | median seconds | MiB/s | speed-up vs fsverity |
| --- | --- | --- | --- |
| fsverity digest | $fs | $(mibs "$fs") | 1.00 |
| verity digest --threads=1 | $v1 | $(mibs "$v1") | $(ratio "$v1") |
| verity digest --threads=2 | $v2 | $(mibs "$v2") | $(ratio "$v2") |

All rounds (seconds): fsverity ${times[fsverity]}; verity --threads=1 ${times[verity1]};
verity --threads=2 ${times[verity2]}.
REPORT
)
echo "$report"
mkdir -p "$(dirname "$out")"
echo "$report" >"$out"
