#!/usr/bin/env bash
# Fails if any binary given exports a symbol that the static BoringSSL archive defines: an
# exported BoringSSL symbol would interpose on the OpenSSL 3 that Debian's gRPC loads.
# Usage: no_exported_boringssl_test.sh ARCHIVE... -- BINARY...
set -euo pipefail

archives=()
while [[ $# -gt 0 && "$1" != "--" ]]; do archives+=("$1"); shift; done
shift
[[ ${#archives[@]} -gt 0 && $# -gt 0 ]] || { echo "usage: $0 ARCHIVE... -- BINARY..." >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm --defined-only --extern-only "${archives[@]}" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u >"$tmp/boringssl"
count=$(wc -l <"$tmp/boringssl")
# A broken archive listing would make the check vacuous.
[[ $count -gt 1000 ]] || { echo "only $count symbols found in ${archives[*]}" >&2; exit 1; }
# SHA256 must be among them, or we are not looking at BoringSSL's libcrypto.
grep -qx SHA256 "$tmp/boringssl" || { echo "SHA256 not defined in ${archives[*]}" >&2; exit 1; }

status=0
for bin in "$@"; do
  nm -D --defined-only "$bin" | awk 'NF == 3 {print $3}' | sed 's/@.*//' | sort -u >"$tmp/exported"
  leaked=$(comm -12 "$tmp/boringssl" "$tmp/exported")
  if [[ -n "$leaked" ]]; then
    echo "FAIL: $bin exports $(wc -l <<<"$leaked") BoringSSL symbols, e.g.: $(head -5 <<<"$leaked" | tr '\n' ' ')"
    status=1
  else
    echo "ok: $bin exports none of the $count BoringSSL symbols"
  fi
done
exit $status
