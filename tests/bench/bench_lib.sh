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
