#!/usr/bin/env bash
# Trees side by side with what a user would pick instead, on this machine, in one run:
# - `verity get NAME -o DIR` (every block of every file verified against the signed root; files
#   of at most 256 KiB in BatchRead calls of up to 1 MiB, larger ones fetched alone, 8 calls at a
#   time; the folder renamed into place at the end) against nginx (Debian's nginx-light,
#   sendfile) serving a tarball of the same files on loopback, piped through `curl | tar x`,
#   then `sha256sum -c --quiet` of a checksum list. Two trees: 10,000 files of 16 KiB in 100
#   folders, and a model-like one (three files of 512 MiB, twenty small ones). ROUNDS
#   alternating rounds (which tool goes first alternates too), median and worst.
# - `verity put DIR` of the 10,000-file tree into an empty store (files/s; a new verityd and store
#   each round) against `cp -a DIR DEST && sync` of it, ROUNDS alternating rounds, and a second put
#   of the same tree (blobs and bytes sent, from its own report).
# Every timed command starts after a `sync`, so that none pays for the writes another left; the
# nginx baseline is timed as it is and with `&& sync` (as durable as `get -o DIR`).
# - `verity sync --once` of the 10,000-file tree into a new folder, then ROUNDS updates after 1%
#   of the files (100) got new content: a running sidecar's (SIGHUP to its hook) and `--once`'s,
#   against a full get and `cp -al` of the tree; the bytes fetched against the bytes changed.
# verityd runs on a file store in a new folder on the same disk. Reports figures; never fails
# on a goal. Writes OUT.
# Usage: tests/bench/tree_bench.sh [ROUNDS=5] [OUT=docs/bench-trees.md]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/bench_lib.sh
rounds=${1:-5}
out=${2:-docs/bench-trees.md}
load_at_start=$(load_average)

bench_binaries //server:verityd //client/cli:verity
verityd=$bin/server/verityd verity=$bin/client/cli/verity
work=$(mktemp -d /var/tmp/tree-bench.XXXXXX)
chmod 0755 "$work"  # nginx's workers (www-data) read the tarballs
server_pid="" nginx_pid=""
trap 'kill $server_pid $nginx_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

"$verityd" --listen=127.0.0.1:0 --store_dir="$work/store" --metrics_listen= 2>"$work/verityd.log" &
server_pid=$!
for _ in $(seq 400); do grep -q "serving" "$work/verityd.log" 2>/dev/null && break; sleep 0.05; done
srv=--server=$(sed -nE 's/.*listening on ([^ ]*).*/\1/p' "$work/verityd.log" | head -n 1)

# ---- the trees
small=$work/src/small model=$work/src/model
for d in $(seq -w 0 99); do
  mkdir -p "$small/d$d"
  for f in $(seq -w 0 99); do head -c 16384 /dev/urandom >"$small/d$d/f$f"; done
done
mkdir -p "$model/weights" "$model/tokenizer"
for i in 1 2 3; do head -c $((512 << 20)) /dev/urandom >"$model/weights/part-$i.bin"; done
for i in $(seq -w 1 20); do head -c $((1000 + RANDOM)) /dev/urandom >"$model/tokenizer/t$i.json"; done
# Written back before anything is timed: no tool pays for the benchmark's own inputs (a Put's
# syncfs, a get's, would otherwise flush 1.7 GB of them).
sync

# ---- put: 10,000 files into an empty store against `cp -a DIR DEST && sync` of the same tree
# on the same disk, ROUNDS alternating rounds. Each put goes to a new verityd on a new store,
# each cp to a new folder; everything is written back (sync) before either is timed.
put_round() {  # ROUND: seconds of one put into an empty store
  local dir=$work/put-$1 pid port t
  mkdir -p "$dir"
  "$verityd" --listen=127.0.0.1:0 --store_dir="$dir/store" --metrics_listen= 2>"$dir/verityd.log" &
  pid=$!
  for _ in $(seq 400); do grep -q "serving" "$dir/verityd.log" 2>/dev/null && break; sleep 0.05; done
  port=$(sed -nE 's/.*listening on [^:]*:([0-9]+).*/\1/p' "$dir/verityd.log" | head -n 1)
  sync
  t=$(seconds_of "$verity" put --server="127.0.0.1:$port" "$small" --name=bench/small 2>"$work/put1.err")
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  echo "$t"
}
cp_round() {  # ROUND: seconds of cp -a and sync
  sync
  seconds_of bash -c 'cp -a "$1" "$2" && sync' _ "$small" "$work/cp-$1"
}
declare -A times
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then order="put cp"; else order="cp put"; fi
  for tool in $order; do times[put-$tool]+="$("${tool}_round" "$r") "; done
done
rm -rf "$work"/put-* "$work"/cp-*
"$verity" put "$srv" "$small" --name=bench/small >/dev/null 2>&1
t_put2=$(seconds_of "$verity" put "$srv" "$small" --name=bench/small 2>"$work/put2.err")
"$verity" put "$srv" "$model" --name=bench/model >/dev/null 2>&1

# ---- the baseline's tarballs, checksum lists and nginx
mkdir -p "$work/www"
for t in small model; do
  tar -C "$work/src/$t" -cf "$work/www/$t.tar" .
  (cd "$work/src/$t" && find . -type f -print0 | xargs -0 sha256sum) >"$work/$t.sums"
done
mkdir -p "$work/nginx"
start_nginx "$work/www" "$work/nginx"

# Where a get writes. Each get of the small tree writes into a folder no get
# used, all removed after the last round: ext4 (without a journal, as here)
# skips inodes deleted in the last minute or so when it allocates, one
# lookup each, so 10,000 files created just after 10,000 were deleted cost
# either tool several times what they cost otherwise. The model tree's few
# files do not meet this; its folder is reused.
out_of() {  # TREE TOOL ROUND
  if [[ $1 == small ]]; then echo "$work/out-$2-$3"; else echo "$work/out"; fi
}
verity_get() {  # TREE OUT
  "$verity" get "$srv" "bench/$1" -o "$2"
}
nginx_get() {  # TREE OUT
  mkdir "$2"
  curl -sf "http://127.0.0.1:$nginx_port/$1.tar" | tar -C "$2" -xf - &&
    (cd "$2" && sha256sum -c --quiet "$work/$1.sums") || { echo "nginx_get $1 failed" >&2; exit 1; }
}
# The baseline made as durable as `get -o DIR` leaves its folder.
nginx_sync_get() { nginx_get "$@" && sync; }
# Each timed get starts on a written-back disk (sync, untimed): no tool pays for the writes the
# one before it left dirty.
timed_get() {  # TOOL TREE OUT
  rm -rf "$3"
  sync
  seconds_of "${1}_get" "$2" "$3"
}
for t in small model; do
  for ((r = 1; r <= rounds; r++)); do
    if ((r % 2)); then order="verity nginx nginx_sync"; else order="nginx_sync nginx verity"; fi
    for tool in $order; do
      times[$t-$tool]+="$(timed_get "$tool" "$t" "$(out_of "$t" "$tool" "$r")") "
    done
  done
  diff -r "$work/src/$t" "$(out_of "$t" verity "$rounds")" >/dev/null || echo "WARNING: $t: the last get differs" >&2
  rm -rf "$work"/out*
done

# ---- sync: a full one, then ROUNDS updates after 1% of the files changed each time. Each round
# times the same change two ways, in alternating order: a sidecar (`verity sync`, running, woken
# by SIGHUP) until its --exec-on-update hook runs (the app told: the new version is in place),
# and `verity sync --once` into a folder of its own (a process from start to exit: connection,
# both versions' manifests read, old versions pruned). `cp -al` of the 10,000 files, the hard
# links the layout makes for unchanged files, is timed each round beside them.
timed() {  # ERR_FILE COMMAND...: wall seconds; its stderr to ERR_FILE
  local file=$1 t0 t1
  shift
  t0=$(date +%s.%N); "$@" >/dev/null 2>"$file"; t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}'
}
t_full_sync=$(timed "$work/sync-full.err" "$verity" sync "$srv" --once bench/small "$work/sync-once")
"$verity" sync "$srv" bench/small "$work/sync-sidecar" --interval=24h \
  --exec-on-update="date +%s.%N >>$work/switched" 2>"$work/sidecar.err" &
sidecar_pid=$!
trap 'kill $server_pid $nginx_pid $sidecar_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
switches() { if [[ -f $work/switched ]]; then wc -l <"$work/switched"; else echo 0; fi; }
for _ in $(seq 600); do [[ $(switches) -ge 1 ]] && break; sleep 0.05; done
sidecar_update() {
  local before t0
  before=$(switches)
  t0=$(date +%s.%N)
  kill -HUP "$sidecar_pid"
  for _ in $(seq 2000); do [[ $(switches) -gt $before ]] && break; sleep 0.005; done
  awk -v a="$t0" -v b="$(tail -n 1 "$work/switched")" 'BEGIN {printf "%.3f", b - a}'
}
once_update() { timed "$work/sync-update.err" "$verity" sync "$srv" --once bench/small "$work/sync-once"; }
changed_bytes=0
for ((r = 1; r <= rounds; r++)); do
  changed_bytes=0
  for d in $(seq -w 0 99); do
    head -c 16384 /dev/urandom >"$small/d$d/f$(printf %02d $((r % 100)))"
    changed_bytes=$((changed_bytes + 16384))
  done
  "$verity" put "$srv" "$small" --name=bench/small >/dev/null 2>&1
  sync
  if ((r % 2)); then order="sidecar once"; else order="once sidecar"; fi
  for how in $order; do times[update-$how]+="$("${how}"_update) "; done
  t0=$(date +%s.%N); cp -al "$work/sync-once/..data/" "$work/cpal-$r"; t1=$(date +%s.%N)
  times[cpal]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}') "
done
update_line=$(grep -o '[0-9]* files, .*' "$work/sync-update.err" || echo "(no switch logged)")
update_bytes=$(grep -oE 'fetched \([0-9]+ bytes\)' "$work/sync-update.err" | tr -dc 0-9)
grep -q "$update_line" "$work/sidecar.err" || echo "WARNING: the sidecar's last update differs" >&2

med() { median <<<"$1"; }
worst() { maximum <<<"$1"; }
{
  echo "# Trees: verity get -o DIR, put DIR and sync against nginx + curl | tar x + sha256sum -c"
  echo
  echo "\`tests/bench/tree_bench.sh $rounds\` on $(machine); load average at start $load_at_start, at end $(load_average)."
  note=$(shared_note $load_at_start $(load_average))
  [[ -z $note ]] || { echo; echo "$note"; }
  echo
  echo "Seconds for a whole tree into a new folder, $rounds alternating rounds (median, worst):"
  echo
  echo "| tree | verity get -o DIR | nginx + curl \\| tar x + sha256sum -c | ratio | the same && sync | ratio |"
  echo "| --- | --- | --- | --- | --- | --- |"
  for t in small model; do
    r=$(ratios "${times[$t-nginx]}" "${times[$t-verity]}")
    rs=$(ratios "${times[$t-nginx_sync]}" "${times[$t-verity]}")
    label=$([[ $t == small ]] && echo "10,000 files of 16 KiB" || echo "3 x 512 MiB + 20 small")
    echo "| $label | $(med "${times[$t-verity]}") s, $(worst "${times[$t-verity]}") s | $(med "${times[$t-nginx]}") s, $(worst "${times[$t-nginx]}") s | $(median <<<"$r")x, $(minimum <<<"$r")x | $(med "${times[$t-nginx_sync]}") s, $(worst "${times[$t-nginx_sync]}") s | $(median <<<"$rs")x, $(minimum <<<"$rs")x |"
  done
  echo
  echo "Each cell: median, worst. A ratio (baseline / verity, median and worst) above 1 means verity was faster; the worst is the round least in verity's favour. Every timed command starts after a \`sync\`, so none pays for the writes another left. Each \`get -o DIR\` ends with a syncfs(2) of the new folder's file system before it renames the folder into place (what it wrote is durable when it returns); the plain baseline writes nothing back, the second one ends with \`sync\`, as durable as \`get -o DIR\`."
  echo
  rp=$(ratios "${times[put-cp]}" "${times[put-put]}")
  echo "**put DIR**, 10,000 files of 16 KiB into an empty store (a new verityd each round) against \`cp -a DIR DEST && sync\` of the same tree on the same disk, $rounds alternating rounds:"
  echo
  echo "| | median | worst |"
  echo "| --- | --- | --- |"
  echo "| \`verity put DIR\` | $(med "${times[put-put]}") s ($(awk -v t="$(med "${times[put-put]}")" 'BEGIN {printf "%.0f", 10000 / t}') files/s) | $(worst "${times[put-put]}") s ($(awk -v t="$(worst "${times[put-put]}")" 'BEGIN {printf "%.0f", 10000 / t}') files/s) |"
  echo "| \`cp -a && sync\` | $(med "${times[put-cp]}") s | $(worst "${times[put-cp]}") s |"
  echo "| ratio cp / put | $(median <<<"$rp")x | $(minimum <<<"$rp")x |"
  echo
  echo "The last put: $(tail -n 1 "$work/put1.err" | sed 's/.*: //'). A second put of the same tree into a store holding it: $t_put2 s ($(tail -n 1 "$work/put2.err" | sed 's/.*: //'))."
  echo
  full_get=$(med "${times[small-verity]}")
  echo "**sync**: a full \`verity sync --once\` of the 10,000-file tree into a new folder took $t_full_sync s. Then $rounds rounds, each after 100 other files (1%, $changed_bytes bytes) got new content and were put (seconds, median and worst; the share of the median full \`get -o DIR\`, $full_get s):"
  echo
  echo "| update | median | worst | median / full get |"
  echo "| --- | --- | --- | --- |"
  for how in sidecar once; do
    label=$([[ $how == sidecar ]] && echo "sidecar, SIGHUP to its --exec-on-update hook" || echo "\`verity sync --once\`, start to exit")
    echo "| $label | $(med "${times[update-$how]}") | $(worst "${times[update-$how]}") | $(ratio "$(med "${times[update-$how]}")" "$full_get" 3) |"
  done
  echo "| \`cp -al\` of the 10,000 files (the layout's links alone) | $(med "${times[cpal]}") | $(worst "${times[cpal]}") | $(ratio "$(med "${times[cpal]}")" "$full_get" 3) |"
  echo
  echo "The last update fetched ${update_bytes:-?} bytes, $(ratio "${update_bytes:-0}" "$changed_bytes" 2)x the bytes changed ($update_line)."
} >"$out"
cat "$out"
