#!/usr/bin/env bash
# A real single-node Ceph for tests: ceph-mon, one memstore ceph-osd and radosgw serving S3 on
# 127.0.0.1, no cephx, every file under one directory DIR (one cluster per DIR; any number of
# clusters at once). Source it and call ceph_start DIR / ceph_stop DIR, or run
# `ceph_cluster.sh start|stop|env|rgw-stop|rgw-start DIR` (by hand, or from a test program).
# Needs ceph-mon, ceph-osd, radosgw, ceph-common,
# curl and python3 (scripts/setup.sh installs them).
#
# ceph_start DIR      starts the cluster (bounded by CEPH_START_TIMEOUT seconds, 45 by default),
#                     creates the S3 user and the bucket, and exports the variables below (also
#                     written to DIR/env, for `source DIR/env`). On failure it prints the daemons'
#                     logs, stops what it started and returns 1.
# ceph_stop DIR       stops every daemon of the cluster (SIGTERM, then SIGKILL); idempotent, and
#                     safe from an EXIT trap whether ceph_start finished, failed or never ran.
# ceph_rgw_stop DIR   stops only radosgw (a fault: S3 then refuses connections).
# ceph_rgw_start DIR  starts radosgw again on the same port and data; returns once S3 answers.
# ceph_cluster_pids DIR [COMM]  the pids of the cluster's live processes: every process with
#                     DIR/ceph.conf as an argument (of COMM only: ceph-mon, ceph-osd, radosgw).
# ceph_print_logs DIR [NAME]  the end of each daemon's log (of NAME's only, e.g. client.rgw.a).
#
# Exported: S3_ENDPOINT (http://127.0.0.1:PORT), S3_BUCKET, AWS_ACCESS_KEY_ID,
# AWS_SECRET_ACCESS_KEY, AWS_REGION, CEPH_CONF, CEPH_DIR, CEPH_MON_PID, CEPH_OSD_PID,
# CEPH_RGW_PID, CEPH_RGW_PORT (ceph_rgw_start keeps the port and updates CEPH_RGW_PID).
# Sign requests with `curl --aws-sigv4 "aws:amz:$AWS_REGION:s3"` and send x-amz-content-sha256
# yourself (UNSIGNED-PAYLOAD or the body's SHA-256). AWS_REGION is "default", the api_name of
# radosgw's default zonegroup: radosgw 16 does not check the region of a SigV4 scope
# (us-east-1, default, anything signs), but CreateBucket accepts no other LocationConstraint.
#
# Knobs, read by ceph_start: CEPH_START_TIMEOUT, CEPH_MEMSTORE_BYTES (the OSD's capacity, in RAM:
# 512 MiB by default), S3_BUCKET (verityd-test by default).

_CEPH_CLUSTER_LIB=$(realpath "${BASH_SOURCE[0]}")
_CEPH_ACCESS_KEY=VERITYDTESTACCESSKEY
_CEPH_SECRET_KEY=verityd-test-secret-key-not-a-secret-00
_CEPH_REGION=default

# ---- public functions

ceph_start() {
  local dir budget rc=0
  [[ $# -eq 1 && -n $1 ]] || { echo "usage: ceph_start DIR" >&2; return 2; }
  mkdir -p "$1" && dir=$(realpath "$1") || return 1
  ceph_stop "$dir"
  budget=${CEPH_START_TIMEOUT:-45}
  # A child process under `timeout`: a step that hangs (radosgw looping before it forks, a
  # librados call waiting for a dead monitor) is killed with the whole process group of the
  # start-up (its steps' own timeouts stay in it: --foreground). The argument is the cluster's
  # ceph.conf, as for every process of the cluster, so that ceph_stop finds and stops a start-up
  # still under way (from an EXIT trap, say).
  timeout -k 3 "$budget" bash "$_CEPH_CLUSTER_LIB" _start "$dir/ceph.conf" || rc=$?
  if [[ $rc -ne 0 ]]; then
    [[ $rc -eq 124 ]] && echo "ceph_start: no cluster within ${budget}s" >&2
    ceph_print_logs "$dir" >&2
    ceph_stop "$dir"
    return 1
  fi
  # shellcheck source=/dev/null
  source "$dir/env"
}

ceph_stop() {
  local dir
  [[ $# -eq 1 && -n $1 ]] || { echo "usage: ceph_stop DIR" >&2; return 2; }
  # Also without DIR (a test removed it): its processes are found by their arguments.
  dir=$(realpath -m "$1")
  local left run
  for _ in 1 2 3; do
    # A start-up under way first (`timeout` and `bash ... _start`), so that it starts nothing
    # more. Then the daemons one by one, each while the ones it talks to still run: an OSD whose
    # monitor is gone waits 5 s (osd_mon_shutdown_timeout) before it exits. The last round takes
    # any other process started with this cluster's ceph.conf (a ceph CLI, radosgw-admin).
    _ceph_kill 5 $(ceph_cluster_pids "$dir" timeout) $(ceph_cluster_pids "$dir" bash) || true
    _ceph_kill 10 $(ceph_cluster_pids "$dir" radosgw) || true
    _ceph_kill 10 $(ceph_cluster_pids "$dir" ceph-osd) || true
    _ceph_kill 10 $(ceph_cluster_pids "$dir") || true
    # A daemon that forked as its start-up was stopped shows up now.
    left=$(ceph_cluster_pids "$dir")
    [[ -z $left ]] && break
  done
  rm -f "$dir"/*.pid
  run=$(cat "$dir/run_dir" 2>/dev/null) || run=""
  [[ $run != /tmp/ceph.* ]] || rm -rf "$run"
  [[ -z $left ]] || { echo "ceph_stop: still running: ${left//$'\n'/ }" >&2; return 1; }
}

ceph_rgw_stop() {
  local dir
  dir=$(realpath "$1") || return 1
  _ceph_kill 10 $(ceph_cluster_pids "$dir" radosgw) || return 1
  rm -f "$dir/client.rgw.a.pid"
}

ceph_rgw_start() {
  local dir port
  dir=$(realpath "$1") || return 1
  port=$(cat "$dir/rgw_port") || return 1
  if [[ -n $(ceph_cluster_pids "$dir" radosgw) ]]; then
    echo "ceph_rgw_start: radosgw of $dir is running" >&2
    return 1
  fi
  if ! _ceph_start_rgw "$dir" "$port" 30; then
    ceph_print_logs "$dir" client.rgw.a >&2
    ceph_rgw_stop "$dir"
    return 1
  fi
  _ceph_write_env "$dir" && source "$dir/env"
}

ceph_cluster_pids() {
  local conf=$1/ceph.conf comm=${2:-} file pid
  # Every process with this cluster's ceph.conf as an argument (all are started with `-c CONF`),
  # also one that forked but has not written its pid file yet. The pattern comes from a file so
  # that grep does not find its own command line.
  for file in $(grep -lzxF -f <(printf '%s\n' "$conf") /proc/[0-9]*/cmdline 2>/dev/null); do
    pid=${file#/proc/}
    pid=${pid%/cmdline}
    if [[ $pid == "$$" ]] || ! _ceph_is_running "$pid"; then continue; fi
    [[ -z $comm || $(cat "/proc/$pid/comm" 2>/dev/null) == "$comm" ]] && echo "$pid"
  done
  return 0
}

# ---- start-up, run as `ceph_cluster.sh _start DIR/ceph.conf` under timeout

_ceph_start_inner() {
  local dir=$1 run fsid osd_uuid osd_id attempt
  set -euo pipefail
  rm -rf "$dir"/{ceph.conf,env,log,mon,osd,rgw,crash,monmap,*_port,run_dir,s3_bucket}
  mkdir -p "$dir"/{log,mon,osd,rgw,crash}
  # Admin sockets are Unix sockets, whose paths have at most 107 bytes; radosgw's is the longest,
  # RUN/ceph-client.rgw.a.PID.CCTID.asok: up to 47 bytes after RUN.
  run=$dir/run
  [[ ${#run} -le 60 ]] || run=$(mktemp -d /tmp/ceph.XXXXXX)
  mkdir -p "$run"
  echo "$run" >"$dir/run_dir"
  echo "${S3_BUCKET:-verityd-test}" >"$dir/s3_bucket"
  fsid=$(cat /proc/sys/kernel/random/uuid)

  # The monitor, on a free port; another process may take the port first, then it is retried.
  for attempt in 1 2 3 fail; do
    [[ $attempt != fail ]] || return 1
    _ceph_free_port >"$dir/mon_port"
    _ceph_write_conf "$dir" "$fsid" "$(cat "$dir/mon_port")" "$run"
    rm -rf "$dir/mon/a" "$dir/monmap"
    monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$(cat "$dir/mon_port")]" \
      "$dir/monmap" >"$dir/log/monmaptool.out" 2>&1
    _ceph_daemon "$dir" mon-mkfs 10 ceph-mon -c "$dir/ceph.conf" --mkfs -i a --monmap "$dir/monmap"
    _ceph_daemon "$dir" mon.a 10 ceph-mon -c "$dir/ceph.conf" -i a && break
    grep -qs 'Address already in use' "$dir/log/mon.a.out" "$dir/log/mon.a.log" || return 1
    echo "ceph_start: monitor port taken, retrying" >&2
  done

  # One OSD. `ceph osd new` registers it; its mkfs and start fetch their config from the monitor.
  osd_uuid=$(cat /proc/sys/kernel/random/uuid)
  osd_id=$(_ceph_cli "$dir" 15 osd new "$osd_uuid")
  [[ $osd_id == 0 ]] || { echo "ceph_start: ceph osd new gave '$osd_id', want 0" >&2; return 1; }
  mkdir -p "$dir/osd/$osd_id"
  _ceph_daemon "$dir" osd-mkfs 15 ceph-osd -c "$dir/ceph.conf" -i 0 --mkfs --osd-uuid "$osd_uuid"
  _ceph_daemon "$dir" osd.0 15 ceph-osd -c "$dir/ceph.conf" -i 0

  # radosgw, which creates its pools once the OSD is up.
  for attempt in 1 2 3 fail; do
    [[ $attempt != fail ]] || return 1
    _ceph_free_port >"$dir/rgw_port"
    _ceph_start_rgw "$dir" "$(cat "$dir/rgw_port")" 40 && break
    grep -qs 'failed to bind address' "$dir/log/client.rgw.a.log" || return 1
    echo "ceph_start: radosgw port taken, retrying" >&2
  done
  _ceph_write_env "$dir"
  source "$dir/env"

  # The S3 user, the bucket, and a first multipart upload: each creates pools (seconds), which
  # is done here rather than in a test that times requests.
  timeout --foreground -k 2 20 radosgw-admin -c "$dir/ceph.conf" user create --uid=verityd-test \
    --display-name=verityd-test --access-key="$AWS_ACCESS_KEY_ID" \
    --secret-key="$AWS_SECRET_ACCESS_KEY" >"$dir/log/user-create.out" 2>&1 ||
    { echo "ceph_start: radosgw-admin user create failed (exit $?)" >&2; return 1; }
  _ceph_s3_expect "$dir" 200 "create bucket $S3_BUCKET" -X PUT "$S3_ENDPOINT/$S3_BUCKET"
  _ceph_s3_expect "$dir" 200 "create a multipart upload" -X POST \
    "$S3_ENDPOINT/$S3_BUCKET/ceph-cluster-warm-up?uploads="
  local upload_id
  upload_id=$(sed -n 's:.*<UploadId>\([^<]*\)</UploadId>.*:\1:p' "$dir/log/s3.out")
  [[ -n $upload_id ]] || { echo "ceph_start: no UploadId in $(cat "$dir/log/s3.out")" >&2; return 1; }
  _ceph_s3_expect "$dir" 204 "abort the multipart upload" -X DELETE \
    "$S3_ENDPOINT/$S3_BUCKET/ceph-cluster-warm-up?uploadId=$upload_id"
}

# _ceph_write_conf DIR FSID MON_PORT RUN_DIR. `\$name` and the like are Ceph's metavariables.
_ceph_write_conf() {
  local dir=$1
  cat >"$dir/ceph.conf" <<CONF
[global]
fsid = $2
mon host = [v2:127.0.0.1:$3]
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind msgr1 = false
# A port taken between choosing and binding it fails at once (3 tries 5 s apart by default), and
# the start-up retries with another.
ms bind retry count = 1
# A throw-away cluster on loopback: no keys.
auth cluster required = none
auth service required = none
auth client required = none
run dir = $4
log file = $dir/log/\$name.log
crash dir = $dir/crash
mon data = $dir/mon/\$id
osd data = $dir/osd/\$id
rgw data = $dir/rgw
# One OSD: pools of one copy, placed on it alone, and few placement groups (radosgw makes ~7
# pools).
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon max pg per osd = 1000

[mon]
pid file = $dir/\$name.pid
mon cluster log file = $dir/log/cluster.log
# A busy CI disk must not raise warnings or stop the monitor.
mon data avail warn = 1
mon data avail crit = 0
# Every pool radosgw creates is one osdmap change, which the monitor batches for 1 s by default:
# 10 s of radosgw's start-up. One monitor has no one to batch for.
paxos propose interval = 0.01
paxos min wait = 0.01

[osd]
pid file = $dir/\$name.pid
osd objectstore = memstore
memstore device bytes = ${CEPH_MEMSTORE_BYTES:-536870912}
# A radosgw that dies without closing its watches (SIGKILL, or a port taken) stalls every metadata
# change (a new user or bucket) until the OSD drops them: 30 s by default. Clients ping their
# watches every objecter tick ([client]).
osd client watch timeout = 5

[client]
# radosgw sets its monitor connections to "secure" mode, which needs cephx: with auth none it
# loops before forking ("get_initial_auth_request returned -13").
ms mon client mode = crc
# librados waits forever by default; a client of a broken cluster fails instead.
client mount timeout = 15
rados mon op timeout = 15
rados osd op timeout = 15
# Watch pings every second, well within the OSD's 5 s watch timeout (5 s by default: equal).
objecter tick interval = 1

[client.rgw.a]
pid file = $dir/\$name.pid
rgw init timeout = 30
rgw exit timeout secs = 5
# 512 threads by default.
rgw thread pool size = 64
rgw run sync thread = false
CONF
}

# _ceph_start_rgw DIR PORT SECONDS: starts radosgw on 127.0.0.1:PORT and waits up to SECONDS for
# S3 to answer.
_ceph_start_rgw() {
  local dir=$1 port=$2 i code
  rm -f "$dir/client.rgw.a.pid"
  # It forks once it has reached the monitor; its frontend starts after its pools exist.
  # tcp_nodelay: without it a GET's body waits on the client's delayed ACK, ~44 ms for a 4 KiB
  # ranged GET, 2-3 ms with it (50 GETs: 2.17 s against 0.15 s; HEADs 2 ms either way).
  _ceph_daemon "$dir" client.rgw.a 15 radosgw -c "$dir/ceph.conf" -n client.rgw.a \
    --rgw-frontends "beast endpoint=127.0.0.1:$port tcp_nodelay=1" || return 1
  for ((i = 0; i < $3 * 10; i++)); do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/") || true
    [[ $code != 000 ]] && return 0
    [[ -n $(ceph_cluster_pids "$dir" radosgw) ]] || { echo "radosgw exited before it answered" >&2; return 1; }
    sleep 0.1
  done
  echo "radosgw did not answer on 127.0.0.1:$port within $3 s" >&2
  return 1
}

# _ceph_daemon DIR NAME SECONDS COMMAND...: runs COMMAND (which forks a daemon, or does a mkfs)
# with its output in DIR/log/NAME.out; fails after SECONDS.
_ceph_daemon() {
  local dir=$1 name=$2 secs=$3 rc=0
  shift 3
  timeout --foreground -k 2 "$secs" "$@" </dev/null >>"$dir/log/$name.out" 2>&1 || rc=$?
  [[ $rc -eq 0 ]] && return 0
  echo "ceph_start: '$*' failed (exit $rc$([[ $rc -eq 124 ]] && echo ", timed out after ${secs}s"))" >&2
  return 1
}

# _ceph_cli DIR SECONDS ARGS...: the ceph CLI against the cluster, bounded.
_ceph_cli() {
  local dir=$1 secs=$2
  shift 2
  timeout --foreground -k 2 "$secs" ceph -c "$dir/ceph.conf" --connect-timeout "$secs" "$@" \
    2>>"$dir/log/ceph-cli.out"
}

# _ceph_s3_expect DIR STATUS WHAT CURL_ARGS...: a signed S3 request whose answer must have STATUS;
# the body goes to DIR/log/s3.out.
_ceph_s3_expect() {
  local dir=$1 want=$2 what=$3 code
  shift 3
  code=$(curl -sS --max-time 20 -o "$dir/log/s3.out" -w '%{http_code}' \
    --aws-sigv4 "aws:amz:$AWS_REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@") || true
  [[ $code == "$want" ]] && return 0
  echo "ceph_start: $what: HTTP $code, want $want: $(cat "$dir/log/s3.out" 2>/dev/null)" >&2
  return 1
}

_ceph_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

_ceph_write_env() {
  local dir=$1 tmp
  tmp=$(mktemp "$dir/env.XXXXXX")
  {
    printf 'export CEPH_DIR=%q CEPH_CONF=%q\n' "$dir" "$dir/ceph.conf"
    printf 'export S3_ENDPOINT=%q S3_BUCKET=%q AWS_REGION=%q\n' \
      "http://127.0.0.1:$(cat "$dir/rgw_port")" "$(cat "$dir/s3_bucket")" "$_CEPH_REGION"
    printf 'export AWS_ACCESS_KEY_ID=%q AWS_SECRET_ACCESS_KEY=%q\n' \
      "$_CEPH_ACCESS_KEY" "$_CEPH_SECRET_KEY"
    printf 'export CEPH_RGW_PORT=%q\n' "$(cat "$dir/rgw_port")"
    printf 'export CEPH_MON_PID=%q CEPH_OSD_PID=%q CEPH_RGW_PID=%q\n' \
      "$(ceph_cluster_pids "$dir" ceph-mon)" "$(ceph_cluster_pids "$dir" ceph-osd)" \
      "$(ceph_cluster_pids "$dir" radosgw)"
  } >"$tmp"
  mv "$tmp" "$dir/env"
}

# ---- stopping

_ceph_is_running() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [[ -n $stat && ${stat%% *} != Z ]]
}

# _ceph_kill SECONDS PID...: SIGTERM, up to SECONDS for them to exit, then SIGKILL. The daemons
# are not our children (they daemonized): wait by polling.
_ceph_kill() {
  local secs=$1 pid i alive
  shift
  [[ $# -gt 0 ]] || return 0
  kill -TERM "$@" 2>/dev/null || true
  for ((i = 0; i <= secs * 20; i++)); do
    alive=()
    for pid in "$@"; do _ceph_is_running "$pid" && alive+=("$pid"); done
    [[ ${#alive[@]} -eq 0 ]] && return 0
    sleep 0.05
  done
  echo "ceph_stop: SIGKILL to ${alive[*]} after ${secs}s" >&2
  kill -KILL "${alive[@]}" 2>/dev/null || true
  for ((i = 0; i <= 100; i++)); do
    alive=()
    for pid in "$@"; do _ceph_is_running "$pid" && alive+=("$pid"); done
    [[ ${#alive[@]} -eq 0 ]] && return 0
    sleep 0.05
  done
  echo "ceph_stop: ${alive[*]} survived SIGKILL" >&2
  return 1
}

# ceph_print_logs DIR [NAME]: the end of each daemon's log and command output (NAME's only).
ceph_print_logs() {
  local file
  for file in "$1"/log/"${2:-}"*; do
    [[ -s $file ]] || continue
    echo "--- $file"
    tail -n 25 "$file"
  done
}

# ---- run as a command

_ceph_main() {
  case ${1:-}:${2:-} in
    start:?*) ceph_start "$2" && cat "$2/env" ;;
    stop:?*) ceph_stop "$2" ;;
    env:?*) cat "$2/env" ;;
    rgw-stop:?*) ceph_rgw_stop "$2" ;;
    rgw-start:?*) ceph_rgw_start "$2" ;;
    _start:?*) _ceph_start_inner "$(dirname "$2")" ;;
    *)
      echo "usage: ${0##*/} start|stop|env|rgw-stop|rgw-start DIR" >&2
      return 2
      ;;
  esac
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  _ceph_main "$@"
fi
