#!/usr/bin/env bash
# verityd's /metrics end to end: a scrape that promtool accepts, counters that agree with what
# the test did (reads per class, bytes, one injected corruption), and a real Prometheus server
# scraping it every second whose HTTP API answers histogram_quantile() per class and
# verityd_dispatch_total consistently with that load.
# Usage: metrics_test.sh VERITYD VERITY
set -euo pipefail
source "$(dirname "$0")/verityd_test_lib.sh"
init_test metrics_test "$1" "$2"
for var in $(compgen -v VERITYD_) VERITY_SERVER; do unset "$var"; done

for tool in promtool prometheus curl python3; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (scripts/setup.sh installs it)"; exit 1; }
done

size=$((256 * 1024 + 5))  # 65 blocks: a Read of it goes to the pool (too big to go inline)
head -c "$size" /dev/urandom >"$work/blob"
head -c 20000 /dev/urandom >"$work/victim"

# A free TCP port on 127.0.0.1, for Prometheus (which cannot pick one itself).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# scrape: the metrics page now.
scrape() { curl -sf "http://127.0.0.1:$metrics_port/metrics"; }
# sample NAME_WITH_LABELS: its value in a scrape, e.g. 'verityd_put_bytes_total'.
sample() { scrape | awk -v m="$1" '$1 == m {print $2}'; }
# query PROMQL: Prometheus's answer as "labels value" lines, e.g. "priority_class=rt 0.0123"
# ("-" for no labels).
query() {
  curl -sf "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
answer = json.load(sys.stdin)
assert answer["status"] == "success", answer
for r in answer["data"]["result"]:
    labels = ",".join(f"{k}={v}" for k, v in sorted(r["metric"].items()) if k not in ("__name__", "instance", "job"))
    print(labels or "-", r["value"][1])'
}
# value_of LABELS: the value of the line of $answer whose labels are LABELS.
value_of() { awk -v l="$1" '$1 == l {print $2}' <<<"$answer"; }
same_number() { python3 -c 'import sys; sys.exit(float(sys.argv[1]) != float(sys.argv[2]))' "$1" "$2"; }
between() { python3 -c 'import sys; sys.exit(not float(sys.argv[2]) < float(sys.argv[1]) < float(sys.argv[3]))' "$@"; }

start_server metrics --listen=127.0.0.1:0 --store_dir="$work/store"
srv=(--server="127.0.0.1:$server_port")
check "the log names the metrics endpoint" [ -n "$metrics_port" ]

# ---- a real Prometheus, scraping every second
prom_port=$(free_port)
cat >"$work/prometheus.yml" <<CONFIG
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: verityd
    static_configs:
      - targets: ["127.0.0.1:$metrics_port"]
CONFIG
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" 2>"$work/prometheus.log" &
tracked_pids+=($!)
up() { answer=$(query 'up{job="verityd"}' 2>/dev/null) && [[ $(value_of -) == 1 ]]; }
for _ in $(seq 100); do up && break; sleep 0.2; done
check "Prometheus scrapes verityd" up

# ---- the load: 12 RT reads and 4 IDLE reads of the blob, then one corrupt read
dig=$(vc put "${srv[@]}" "$work/blob" | cut -d' ' -f1)
victim=$(vc put "${srv[@]}" "$work/victim" | cut -d' ' -f1)
for i in $(seq 12); do
  expect_exit 0 "rt get $i" vc get "${srv[@]}" --priority=rt "$dig" -o "$work/out"
  sleep 0.2  # spread over scrapes, so rate() has something to see
done
for i in $(seq 4); do
  expect_exit 0 "idle get $i" vc get "${srv[@]}" --priority=idle "$dig" -o "$work/out"
  sleep 0.2
done
check "the reads returned the blob" cmp -s "$work/blob" "$work/out"
flip() {  # OFFSET...: flips a bit of the victim's stored data at each offset
  python3 -c '
import sys
with open(sys.argv[1], "r+b") as f:
    for at in map(int, sys.argv[2:]):
        f.seek(at); b = f.read(1); f.seek(at); f.write(bytes([b[0] ^ 1]))' \
    "$(data_file "$work/store" "$victim")" "$@"
}
# One bad block: FEC (2 roots by default) repairs it. Three in the victim's one RS group: beyond
# repair.
flip 4096
expect_exit 0 "a get of the repaired blob" vc get "${srv[@]}" --priority=be "$victim" -o "$work/good"
check "the repaired read is the blob" cmp -s "$work/victim" "$work/good"
flip 0 4096 8192
expect_exit 3 "a get of the corrupted blob" vc get "${srv[@]}" --priority=be "$victim" -o "$work/bad"

# ---- the scrape: well-formed, and counting what the test did
scrape >"$work/scrape.txt"
check "promtool check metrics reports nothing" \
  bash -c 'out=$(promtool check metrics <"$1" 2>&1) && [[ -z $out ]] || { echo "$out"; false; }' _ \
  "$work/scrape.txt"
check "RT bytes read" same_number "$(sample 'verityd_read_bytes_total{priority_class="rt"}')" $((12 * size))
check "IDLE bytes read" same_number "$(sample 'verityd_read_bytes_total{priority_class="idle"}')" $((4 * size))
check "bytes put" same_number "$(sample verityd_put_bytes_total)" $((size + 20000))
check "one data corruption" same_number "$(sample 'verityd_corruption_detected_total{kind="data"}')" 1
check "no tree corruption" same_number "$(sample 'verityd_corruption_detected_total{kind="tree"}')" 0
check "one block repaired" same_number "$(sample verityd_fec_repaired_blocks_total)" 1
check "one repair failed" same_number "$(sample verityd_fec_repair_failures_total)" 1
check "Read OK per class" same_number \
  "$(sample 'verityd_rpc_duration_seconds_count{code="OK",method="Read",priority_class="rt"}')" 12
check "the repaired Read is OK" same_number \
  "$(sample 'verityd_rpc_duration_seconds_count{code="OK",method="Read",priority_class="be"}')" 1
check "the failed Read is DATA_LOSS" same_number \
  "$(sample 'verityd_rpc_duration_seconds_count{code="DATA_LOSS",method="Read",priority_class="be"}')" 1
check "two blobs stored" same_number "$(sample verityd_blobs)" 2
# Too few reads here for the online tuner to judge a period: the calibrated limits stand.
rt_limit=$(grep -o 'inline limits [^ ]*' "$server_log" | grep -o 'rt=[0-9]*' | cut -d= -f2)
check "the RT inline limit gauge is the logged limit (${rt_limit:-none})" same_number \
  "$(sample 'verityd_dispatch_inline_limit_bytes{priority_class="rt"}')" "${rt_limit:--1}"
check "the IDLE inline limit gauge is 0" same_number \
  "$(sample 'verityd_dispatch_inline_limit_bytes{priority_class="idle"}')" 0
check "process metrics" bash -c '[[ $(awk "\$1 == \"process_resident_memory_bytes\" {print \$2}" "$1") != "" ]]' _ "$work/scrape.txt"

# ---- Prometheus's view, once it has scraped everything above
want_bytes=$((12 * size))
scraped() { answer=$(query 'verityd_read_bytes_total{priority_class="rt"}') && [[ $(value_of priority_class=rt) == "$want_bytes" ]]; }
for _ in $(seq 50); do scraped && break; sleep 0.2; done
check "Prometheus holds the RT bytes" scraped
answer=$(query 'histogram_quantile(0.99, sum by (le, priority_class) (rate(verityd_rpc_duration_seconds_bucket{method="Read"}[1m])))')
echo "p99 by class: ${answer//$'\n'/; }"
check "an RT Read p99, between 1 µs and 10 s" between "$(value_of priority_class=rt)" 1e-6 10
check "an IDLE Read p99, between 1 µs and 10 s" between "$(value_of priority_class=idle)" 1e-6 10
answer=$(query 'sum by (path, priority_class) (verityd_dispatch_total)')
echo "dispatch: ${answer//$'\n'/; }"
# Every read is 65 blocks: beyond any inline limit, so each is placed on the pool once.
check "12 RT reads placed on the pool" same_number "$(value_of path=pool,priority_class=rt)" 12
check "4 IDLE reads placed on the pool" same_number "$(value_of path=pool,priority_class=idle)" 4
check "no read went inline" same_number "$(value_of path=inline,priority_class=rt)" 0
answer=$(query 'sum by (priority_class) (verityd_verify_queue_wait_seconds_count)')
check "the pool's queue wait counts every RT chunk" bash -c '(( $(printf "%.0f" "$1") >= 12 ))' _ \
  "$(value_of priority_class=rt)"
answer=$(query 'verityd_corruption_detected_total{kind="data"}')
check "Prometheus holds the corruption" same_number "$(value_of kind=data)" 1
expect_stop metrics "$server_pid"
