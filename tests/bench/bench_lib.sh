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

# median: the median of the numbers on stdin, one per line.
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

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
