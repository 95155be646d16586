#!/usr/bin/env bash
# The monitoring files in deploy/: promtool checks the alerting rules and the example config and
# runs the rules' unit tests; the Grafana dashboard must parse and query only verityd's metrics.
# Usage: prometheus_rules_test.sh ALERTS_YML ALERTS_TEST_YML PROMETHEUS_YML DASHBOARD_JSON
set -euo pipefail
alerts=$1 alerts_test=$2 config=$3 dashboard=$4
promtool=/usr/bin/promtool
[[ -x $promtool ]] || { echo "FAIL: $promtool is missing (apt-get install prometheus)"; exit 1; }
python=$(command -v python3) || { echo "FAIL: python3 is missing"; exit 1; }

failures=0
checks=0

run() {  # DESCRIPTION COMMAND...
  local what=$1 out
  shift
  checks=$((checks + 1))
  if out=$("$@" 2>&1); then
    echo "ok: $what"
  else
    printf '%s\n' "$out"
    echo "FAIL: $what"
    failures=$((failures + 1))
  fi
}

run "promtool check rules" "$promtool" check rules "$alerts"
# Also checks the rule files the config names, relative to the config's directory.
run "promtool check config" "$promtool" check config "$config"
run "promtool test rules" "$promtool" test rules "$alerts_test"

# Every metric the dashboard and the rules name must be one verityd exports; a typo would
# otherwise leave a panel empty or an alert that can never fire.
run "metric names and dashboard structure" "$python" - "$dashboard" "$alerts" "$alerts_test" <<'PY'
import json, re, sys

dashboard_path, alerts_path, alerts_test_path = sys.argv[1:]
HISTOGRAMS = {"verityd_rpc_duration_seconds", "verityd_verify_duration_seconds",
              "verityd_verify_queue_wait_seconds", "verityd_s3_request_duration_seconds"}
PLAIN = {"verityd_read_bytes_total", "verityd_put_bytes_total", "verityd_dispatch_total",
         "verityd_corruption_detected_total", "verityd_fec_repaired_blocks_total",
         "verityd_fec_repair_failures_total", "verityd_active_streams", "verityd_blobs",
         "verityd_store_bytes", "verityd_build_info", "verityd_verify_pool_info",
         "verityd_store_up", "verityd_s3_requests_total", "verityd_s3_received_bytes_total",
         "verityd_cache_hits_total", "verityd_cache_misses_total", "verityd_cache_read_ahead_total",
         "verityd_cache_discarded_total", "verityd_cache_disk_write_failures_total",
         "verityd_cache_bytes", "verityd_gc_runs_total", "verityd_gc_freed_blobs_total",
         "verityd_gc_freed_bytes_total", "verityd_gc_last_success_timestamp_seconds",
         "verityd_gc_duration_seconds", "verityd_gc_stored_blobs", "verityd_gc_stored_bytes",
         "verityd_gc_reachable_blobs", "verityd_scrub_passes_total",
         "verityd_scrub_checked_blobs_total", "verityd_scrub_checked_bytes_total",
         "verityd_scrub_bad_blocks_total", "verityd_scrub_repaired_blocks_total",
         "verityd_scrub_unrepairable_blobs_total", "verityd_scrub_interval_seconds",
         "verityd_scrub_last_complete_timestamp_seconds", "verityd_gc_reachable_bytes",
         "verityd_gc_collectable_blobs", "verityd_gc_collectable_bytes",
         "verityd_store_quota_bytes", "verityd_store_quota_used_bytes",
         "process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds",
         "process_start_time_seconds"}
ALLOWED = PLAIN | {h + s for h in HISTOGRAMS for s in ("_bucket", "_sum", "_count")}
# Aggregations too: `sum by (le) (...)` puts no parenthesis right after `sum`.
KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring",
            "group_left", "group_right", "inf", "nan", "sum", "min", "max", "avg", "group",
            "stddev", "stdvar", "count", "count_values", "bottomk", "topk", "quantile"}
errors = []

def metric_names(expr):
    """The metric names a PromQL expression selects (not functions, labels or keywords)."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    s = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", s)
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", r"\1", s)
    names = []
    for m in re.finditer(r"(?<![\w.$:])([A-Za-z_:][\w:]*)(\s*\()?", s):
        if not m.group(2) and m.group(1).lower() not in KEYWORDS:
            names.append(m.group(1))
    return names

def panels(items):
    for p in items:
        yield p
        yield from panels(p.get("panels", []))

with open(dashboard_path) as f:
    dash = json.load(f)
if dash.get("schemaVersion", 0) < 37:
    errors.append(f"schemaVersion {dash.get('schemaVersion')} < 37")
if not dash.get("description"):
    errors.append("the dashboard has no description")
variables = {v["name"]: v for v in dash.get("templating", {}).get("list", [])}
ds = variables.get("datasource", {})
if ds.get("type") != "datasource" or ds.get("query") != "prometheus":
    errors.append("no Prometheus `datasource` variable")
inst = variables.get("instance", {})
query = inst.get("query")
query = query.get("query") if isinstance(query, dict) else query
if query != "label_values(verityd_build_info, instance)":
    errors.append(f"`instance` variable query is {query!r}")

seen_ids = set()
count = 0
for p in panels(dash.get("panels", [])):
    title = p.get("title", "?")
    if p.get("id") in seen_ids:
        errors.append(f"{title}: duplicate panel id {p.get('id')}")
    seen_ids.add(p.get("id"))
    if p.get("type") == "row":
        continue
    count += 1
    if p.get("datasource", {}).get("uid") != "${datasource}":
        errors.append(f"{title}: datasource is not ${{datasource}}")
    targets = p.get("targets", [])
    if not targets:
        errors.append(f"{title}: no targets")
    for t in targets:
        expr = t.get("expr", "")
        names = metric_names(expr)
        if not names:
            errors.append(f"{title}: no metric in {expr!r}")
        for name in names:
            if name not in ALLOWED:
                errors.append(f"{title}: unknown metric {name} in {expr!r}")
        for m in re.finditer(r"([A-Za-z_:][\w:]*)\s*(\{[^}]*\})?", expr):
            if m.group(1) in ALLOWED and 'instance=~"$instance"' not in (m.group(2) or ""):
                errors.append(f"{title}: {m.group(1)} is not filtered by $instance")
if count == 0:
    errors.append("the dashboard has no panels")

# The rules are YAML; any verityd_ or process_ name anywhere in them must be a real one, and
# every alert must have a unit test.
for path in (alerts_path, alerts_test_path):
    with open(path) as f:
        for name in re.findall(r"\b(?:verityd|process)_\w+", f.read()):
            if name not in ALLOWED:
                errors.append(f"{path}: unknown metric {name}")
with open(alerts_path) as f:
    alerts = set(re.findall(r"^\s*- alert:\s*(\w+)", f.read(), re.M))
with open(alerts_test_path) as f:
    tested = set(re.findall(r"^\s*alertname:\s*(\w+)", f.read(), re.M))
if not alerts:
    errors.append("no alerts found")
for name in sorted(alerts - tested):
    errors.append(f"alert {name} has no unit test")

for e in errors:
    print(e)
print(f"{count} panels, {len(alerts)} alerts checked")
sys.exit(1 if errors else 0)
PY

echo "$checks checks, $failures failed"
[[ $failures -eq 0 ]]
