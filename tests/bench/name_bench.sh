#!/usr/bin/env bash
# What checking a name's signed statement adds to `verity get NAME`: one 4 KiB blob put under a
# signed name, then alternating rounds of GETS gets by name without trusted keys and with them
# (the order flips every round), against one verityd over loopback; per-get latency of each,
# the ratio per round, its median and worst. Then the in-process cost of the check itself
# (//tests/bench:name_statement_bench). Writes docs/bench-names.md.
# Usage: tests/bench/name_bench.sh [ROUNDS=7] [GETS=200] [OUT=docs/bench-names.md]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/bench_lib.sh
rounds=${1:-7}
gets=${2:-200}
out=${3:-docs/bench-names.md}

bench_binaries //server:verityd //client/cli:verity //tests/bench:name_statement_bench
verityd=$bin/server/verityd
verity=$bin/client/cli/verity
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null; rm -rf "$work"' EXIT

"$verityd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --store_dir="$work/store" \
  2>"$work/verityd.log" &
server=$!
for _ in $(seq 200); do grep -q "serving" "$work/verityd.log" 2>/dev/null && break; sleep 0.05; done
addr=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$work/verityd.log" | cut -d' ' -f3)
"$verity" keygen --out="$work/key.pem" >/dev/null
head -c 4096 /dev/urandom >"$work/blob"
"$verity" put --server="$addr" "$work/blob" --name=bench/blob --sign-key="$work/key.pem" >/dev/null
plain=(--server="$addr" bench/blob -o /dev/null)
trusted=("${plain[@]}" --trusted-keys="$work/key.pem.pub" --state-dir="$work/state")
"$verity" get "${trusted[@]}"  # records the version once, as any client's first get does

# per_get_ms ARGS...: mean milliseconds of GETS `verity get ARGS...`, run back to back.
per_get_ms() {
  local t0 t1
  t0=$(date +%s.%N)
  for _ in $(seq "$gets"); do "$verity" get "$@"; done
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v n="$gets" 'BEGIN {printf "%.3f", (b - a) * 1000 / n}'
}

rows=""
: >"$work/ratios"
for r in $(seq "$rounds"); do
  if ((r % 2)); then
    p=$(per_get_ms "${plain[@]}")
    t=$(per_get_ms "${trusted[@]}")
  else
    t=$(per_get_ms "${trusted[@]}")
    p=$(per_get_ms "${plain[@]}")
  fi
  ratio=$(awk -v t="$t" -v p="$p" 'BEGIN {printf "%.3f", t / p}')
  echo "$ratio" >>"$work/ratios"
  rows+="| $r | $p | $t | $ratio |"$'\n'
  echo "round $r: without keys $p ms, with keys $t ms, ratio $ratio" >&2
done
median_ratio=$(median <"$work/ratios")
worst_ratio=$(maximum <"$work/ratios")
micro=$("$bin/tests/bench/name_statement_bench" --benchmark_min_time=0.5 2>/dev/null |
  grep -E '^BM_')

machine="$(machine), load average $(load_average) at the end"
cat >"$out" <<EOF
# Signed names: what the check costs

Command: \`tests/bench/name_bench.sh $rounds $gets\` (${machine}).

\`verity get bench/blob -o /dev/null\` of one 4 KiB blob by name from one verityd over
loopback, $gets gets back to back per cell, rounds alternating which goes first. Without keys
the CLI takes the server's word for the name; with \`--trusted-keys\` it parses the key file,
checks the statement the Stat returned (Ed25519, one signer), takes the state file's lock and
reads it (the version was recorded by a first get before the rounds, so no round writes it),
then reads by the statement's digest. Each get is a whole process: start-up, a plaintext
channel, a Stat and a Read.

| round | ms per get, no keys | ms per get, trusted keys | ratio |
| --- | --- | --- | --- |
${rows}
Ratio with keys / without: median **${median_ratio}**, worst **${worst_ratio}**.

The check itself, in process (\`bazel run -c opt //tests/bench:name_statement_bench\`):
parse and verify a statement with 1 and 3 trusted signers, and sign one:

\`\`\`
${micro}
\`\`\`
EOF
echo "wrote $out: median ratio $median_ratio, worst $worst_ratio"
