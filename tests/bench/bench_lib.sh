# Helpers the benchmark scripts share. Source it.

# peak_rss_kib PID WHILE_PID: PID's largest VmRSS (KiB), sampled every 0.2 s while WHILE_PID
# runs (call it in $(...): it returns once WHILE_PID is gone; the caller reaps it).
peak_rss_kib() {
  local peak=0 rss
  while kill -0 "$2" 2>/dev/null; do
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$1/status")
    ((rss > peak)) && peak=$rss
    sleep 0.2
  done
  echo "$peak"
}

# hwm_mib PID: PID's VmHWM, the peak resident memory the kernel recorded, in MiB.
hwm_mib() { awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$1/status"; }

# median, minimum, maximum: of the numbers on stdin, one per line (or separated by spaces).
median() { tr -s ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
minimum() { tr -s ' ' '\n' | grep . | sort -g | head -n 1; }
maximum() { tr -s ' ' '\n' | grep . | sort -g | tail -n 1; }

# ratio A B: A / B, to DIGITS (default 2) decimals.
ratio() { awk -v a="$1" -v b="$2" -v d="${3:-2}" 'BEGIN {printf "%.*f", d, a / b}'; }

# ratios "A1 A2 ..." "B1 B2 ...": A1/B1, A2/B2, ... one per line (2 decimals): per-round ratios of
# two series measured in the same rounds, for their median and worst.
ratios() {
  awk -v a="$1" -v b="$2" 'BEGIN {n = split(a, x, " "); split(b, y, " ")
    for (i = 1; i <= n; i++) printf "%.2f\n", x[i] / y[i]}'
}

# machine: "DATE, N CPUs, CPU MODEL", for a report's command line; add load_average.
machine() {
  echo "$(date -u +%Y-%m-%d), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 |
    sed 's/^ *//')"
}
# load_average: the 1, 5 and 15 minute load averages: the machine may be shared, so say it.
load_average() { cut -d' ' -f1-3 /proc/loadavg; }
# shared_note LOAD...: a sentence for a report if any of the load averages given (the fields of
# load_average at the start and at the end of a run) exceeds the CPU count, else nothing.
shared_note() {
  awk -v n="$(nproc)" 'BEGIN {for (i = 1; i < ARGC; i++) if (ARGV[i] > n) busy = 1
    if (busy) print "A load average above the machine'"'"'s " n " CPUs was seen (it counts this" \
      " benchmark'"'"'s own clients and servers, a run just before it, and any other work): the" \
      " figures may be lower and noisier than a quiet machine gives, and the ratios, each" \
      " taken within a round, are the figures to compare."}' "$@"
}

# need_gnu_time: installs GNU time (Debian's `time`) if /usr/bin/time is missing.
need_gnu_time() { [[ -x /usr/bin/time ]] || apt-get install -y -q time >/dev/null; }

# with_minor_faults FILE COMMAND...: runs COMMAND, its output passed through, under GNU time,
# which writes the minor page faults of COMMAND's whole process (start-up included) to FILE.
# minor_faults FILE: that count (GNU time puts a line about a failed command first).
with_minor_faults() {
  local file=$1
  shift
  /usr/bin/time -f %R -o "$file" "$@"
}
minor_faults() { tail -n 1 "$1"; }

# seconds_of COMMAND...: its wall time in seconds, its output discarded.
seconds_of() {
  local t0 t1
  t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}'
}

# bench_binaries TARGET...: builds the Bazel targets and sets bin to the directory that holds
# them (bazel-bin), unless BENCH_BIN names a directory with builds of the same targets at the
# same relative paths: a copy made by tests/bench/keep_binaries.sh before a change, so that a
# change and its parent can be measured side by side in one session.
bench_binaries() {
  if [[ -n ${BENCH_BIN:-} ]]; then
    bin=$BENCH_BIN
    return
  fi
  bazel build "$@" >/dev/null 2>&1
  bin=$PWD/bazel-bin
}

# start_nginx ROOT WORK: Debian's nginx-light (installed if missing) serving ROOT on a free
# loopback port with sendfile, its files in WORK; sets nginx_pid and nginx_port once it answers.
start_nginx() {
  local root=$1 work=$2
  command -v nginx >/dev/null || apt-get install -y -q nginx-light >/dev/null
  nginx_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  cat >"$work/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events {}
http {
  access_log off;
  sendfile on;
  client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work;
  uwsgi_temp_path $work; scgi_temp_path $work;
  server { listen 127.0.0.1:$nginx_port; root $root; }
}
CONF
  nginx -c "$work/nginx.conf" -e "$work/error.log" &
  nginx_pid=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$nginx_port/" && break; sleep 0.05; done
}
