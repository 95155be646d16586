#!/usr/bin/env bash
# Fails if the object of //lib/trust:openssl3_pkcs7 refers to any function of OpenSSL 3's
# libcrypto or of BoringSSL directly: the static linker could bind such a name to BoringSSL's copy
# in a binary that links both, so every OpenSSL function must be reached through dlvsym (see
# openssl3_pkcs7.cc).
# Usage: openssl3_pkcs7_linkage_test.sh OPENSSL3_PKCS7_ARCHIVE... -- BORINGSSL_ARCHIVE...
set -euo pipefail

ours=()
while [[ $# -gt 0 && "$1" != "--" ]]; do ours+=("$1"); shift; done
shift
[[ ${#ours[@]} -gt 0 && $# -gt 0 ]] || { echo "usage: $0 ARCHIVE... -- BORINGSSL_ARCHIVE..." >&2; exit 2; }

# No early exit in awk: ldconfig would die of SIGPIPE, which pipefail turns into a silent failure.
libcrypto=$(/sbin/ldconfig -p | awk '$1 == "libcrypto.so.3" && !found {print $NF; found = 1}')
[[ -n "$libcrypto" ]] || { echo "libcrypto.so.3 not found by ldconfig" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -u "${ours[@]}" | awk 'NF == 2 {print $2}' | sed 's/@.*//' | sort -u >"$tmp/undefined"
# Not vacuous: the object is there and does look OpenSSL up.
grep -qx dlvsym "$tmp/undefined" || { echo "no reference to dlvsym in ${ours[*]}" >&2; exit 1; }

nm -D --defined-only "$libcrypto" | awk 'NF == 3 {print $3}' | sed 's/@.*//' | sort -u >"$tmp/openssl"
nm --defined-only --extern-only "$@" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u >"$tmp/boringssl"
for lib in openssl boringssl; do
  count=$(wc -l <"$tmp/$lib")
  [[ $count -gt 1000 ]] || { echo "only $count symbols listed for $lib" >&2; exit 1; }
  grep -qx SHA256 "$tmp/$lib" || { echo "SHA256 not among the $lib symbols" >&2; exit 1; }
  direct=$(comm -12 "$tmp/undefined" "$tmp/$lib")
  if [[ -n "$direct" ]]; then
    echo "FAIL: ${ours[*]} calls $lib directly: $(tr '\n' ' ' <<<"$direct")"
    exit 1
  fi
  echo "ok: none of the $count $lib symbols is referenced directly"
done
