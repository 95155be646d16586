#!/usr/bin/env bash
# The baseline for verified fetch: nginx (Debian's nginx-light, sendfile) serving a file on
# loopback, piped through `curl | openssl dgst -sha256`. Prints "<seconds> <sha256 hex> <minor
# page faults>", the faults those of the client side: curl's and openssl's processes together.
# Usage: nginx_pipeline.sh FILE
set -euo pipefail
source "$(dirname "$0")/bench_lib.sh"
need_gnu_time
file=$(realpath "$1")
work=$(mktemp -d)
trap 'kill "$nginx_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

start_nginx "$(dirname "$file")" "$work"
url="http://127.0.0.1:$nginx_port/$(basename "$file")"
t0=$(date +%s.%N)
digest=$(with_minor_faults "$work/curl.faults" curl -s "$url" |
  with_minor_faults "$work/openssl.faults" openssl dgst -sha256 -r | cut -d' ' -f1)
t1=$(date +%s.%N)
faults=$(($(minor_faults "$work/curl.faults") + $(minor_faults "$work/openssl.faults")))
awk -v a="$t0" -v b="$t1" -v d="$digest" -v f="$faults" 'BEGIN {printf "%.3f %s %d\n", b - a, d, f}'
