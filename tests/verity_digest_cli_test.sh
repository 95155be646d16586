#!/usr/bin/env bash
# `verity digest` against `fsverity digest` as the oracle: the same command lines must print the
# same lines and write byte-identical tree and descriptor files; bad input must fail clearly.
# Usage: verity_digest_cli_test.sh PATH_TO_VERITY
set -euo pipefail
verity=$(realpath "$1")
fsverity=/usr/bin/fsverity
[[ -x $fsverity ]] || { echo "FAIL: $fsverity is missing (apt-get install fsverity)"; exit 1; }

work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/digest-cli.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
checks=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

compare() {  # FILE... -- OPTIONS...   ($threads, if set, goes to verity only)
  local files=() opts=()
  while [[ $1 != -- ]]; do files+=("$1"); shift; done
  shift
  opts=("$@")
  checks=$((checks + 1))
  local want got
  want=$(cd "$work" && "$fsverity" digest "${files[@]}" "${opts[@]}" \
    --out-merkle-tree=want.tree --out-descriptor=want.desc)
  got=$(cd "$work" && "$verity" digest "${files[@]}" "${opts[@]}" ${threads:+--threads=$threads} \
    --out-merkle-tree=got.tree --out-descriptor=got.desc)
  [[ -n "$want" && "$want" == "$got" ]] ||
    fail "output differs for ${files[*]} ${opts[*]}: '$want' vs '$got'"
  cmp -s "$work/want.tree" "$work/got.tree" || fail "tree differs for ${files[*]} ${opts[*]}"
  cmp -s "$work/want.desc" "$work/got.desc" || fail "descriptor differs for ${files[*]} ${opts[*]}"
}

# Random data, new each run; a failure names the sizes and options involved.
head -c $((3 << 20)) /dev/urandom >"$work/big"
sizes=(0 1 1023 1024 1025 4095 4096 4097 131071 131072 131073 300000)
for size in "${sizes[@]}"; do head -c "$size" "$work/big" >"$work/f$size"; done

salts=("" "--salt=a1b2c3" "--salt=$(printf '5a%.0s' {1..32})")
for alg in sha256 sha512; do
  for bs in 1024 4096 65536; do
    for salt in "${salts[@]}"; do
      compare "${sizes[@]/#/f}" -- --hash-alg=$alg --block-size=$bs $salt
      threads=2 compare big -- --hash-alg=$alg --block-size=$bs $salt
    done
  done
done
for size in "${sizes[@]}"; do compare "f$size" --; done
compare f4097 big -- --compact
compare f131073 -- --for-builtin-sig
compare f131073 -- --for-builtin-sig --compact --hash-alg=sha512
compare f300000 -- --block-size=128 --hash-alg=sha512
compare f300000 -- --salt=
threads=1 compare big --
threads=3 compare big --

expect_error() {  # WANT_EXIT DESCRIPTION ARGS...
  local want=$1 what=$2
  shift 2
  checks=$((checks + 1))
  local rc=0 err
  err=$(cd "$work" && "$verity" digest "$@" 2>&1 >/dev/null) || rc=$?
  [[ $rc -eq $want ]] || fail "$what: exit $rc, want $want"
  [[ -n $err ]] || fail "$what: no error message"
}
expect_error 2 "missing file" no-such-file
expect_error 1 "block size not a power of two" f1 --block-size=3000
expect_error 1 "block size too small" f1 --block-size=32
expect_error 1 "block size not a number" f1 --block-size=abc
expect_error 1 "salt too long" f1 --salt="$(printf 'ab%.0s' {1..33})"
expect_error 1 "odd-length salt" f1 --salt=abc
expect_error 1 "salt not hex" f1 --salt=zz
expect_error 1 "unknown algorithm" f1 --hash-alg=md5
expect_error 1 "no file" --compact
expect_error 1 "unknown option" f1 --frobnicate
expect_error 1 "repeated option" f1 --salt=ab --salt=cd
expect_error 1 "bad thread count" f1 --threads=0
expect_error 5 "a directory" .

echo "$checks checks, $failures failed"
[[ $failures -eq 0 ]]
