#!/usr/bin/env bash
# `verity digest --format=dm-verity` against `veritysetup format` (cryptsetup-bin), the reference:
# the lines it prints (but the first, which names the device) and the hash device it writes, byte
# for byte, with and without the superblock, for both formats, both algorithms, block-size pairs,
# a given salt, none, and the random salt both make by default; the FEC device and its lines with
# 2 and 24 roots; `veritysetup verify` accepts our device (and not once damaged), and our FEC
# device; then refused command lines.
# Usage: dm_verity_cli_test.sh PATH_TO_VERITY
set -euo pipefail
verity=$(realpath "$1")
veritysetup=/usr/sbin/veritysetup
[[ -x $veritysetup ]] || { echo "FAIL: $veritysetup is missing (apt-get install cryptsetup-bin)"; exit 1; }
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/dm-verity-cli.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# A partial block at the end, which neither covers.
head -c $((3 * 1048576 + 100)) /dev/urandom >"$work/data"
uuid=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0

# compare NAME "VERITY OPTIONS" "VERITYSETUP OPTIONS": both on the data, the same outputs.
compare() {
  local name=$1
  read -ra ours <<<"$2"
  read -ra theirs <<<"$3"
  rm -f "$work/ours.img" "$work/theirs.img"
  "$verity" digest --format=dm-verity "$work/data" --out-hash-tree="$work/ours.img" "${ours[@]}" \
    >"$work/ours.txt" || { fail "$name: verity digest exited $?"; return; }
  "$veritysetup" format "$work/data" "$work/theirs.img" "${theirs[@]}" >"$work/theirs.txt" ||
    { fail "$name: veritysetup exited $?"; return; }
  cmp -s "$work/ours.img" "$work/theirs.img" || fail "$name: the hash devices differ"
  diff <(tail -n +2 "$work/ours.txt") <(tail -n +2 "$work/theirs.txt") ||
    fail "$name: the printed lines differ"
  grep -qx "VERITY header information for $work/ours.img" "$work/ours.txt" ||
    fail "$name: the first line names the device"
}

compare "defaults, salt given" "--salt=00ff --uuid=$uuid" "--salt=00ff --uuid=$uuid"
compare "no superblock" "--salt=00ff --no-superblock" "--salt=00ff --no-superblock"
compare "no salt" "--salt=- --uuid=$uuid" "--salt=- --uuid=$uuid"
compare "sha512, 1024/512, format 0" \
  "--hash-alg=sha512 --data-block-size=1024 --hash-block-size=512 --format-version=0 --salt=abcdef --uuid=$uuid" \
  "--hash=sha512 --data-block-size=1024 --hash-block-size=512 --format=0 --salt=abcdef --uuid=$uuid"
compare "sha256, 512/4096, 256-byte salt" \
  "--data-block-size=512 --hash-block-size=4096 --salt=$(printf 'a5%.0s' $(seq 256)) --uuid=$uuid" \
  "--data-block-size=512 --hash-block-size=4096 --salt=$(printf 'a5%.0s' $(seq 256)) --uuid=$uuid"

# The FEC device, byte for byte, and the lines about it.
fec_compare() {  # NAME OPTIONS...: compare with --fec-device on both sides, then the FEC devices
  local name=$1 options=$2
  rm -f "$work/ours.fec" "$work/theirs.fec"
  compare "$name" "$options --fec-device=$work/ours.fec" "$options --fec-device=$work/theirs.fec"
  cmp -s "$work/ours.fec" "$work/theirs.fec" || fail "$name: the FEC devices differ"
}
fec_compare "FEC, 2 roots (the default)" "--salt=- --uuid=$uuid"
root=$(sed -n 's/^Root hash:[[:space:]]*//p' "$work/ours.txt")
"$veritysetup" verify "$work/data" "$work/ours.img" "$root" --fec-device="$work/ours.fec" \
  >/dev/null 2>&1 || fail "veritysetup verify --fec-device refuses our FEC device"
fec_compare "FEC, 24 roots, 1024-byte blocks, no superblock" \
  "--fec-roots=24 --data-block-size=1024 --hash-block-size=1024 --no-superblock --salt=00ff"

# Without --salt and --uuid both pick random ones; veritysetup given ours agrees.
"$verity" digest --format=dm-verity "$work/data" --out-hash-tree="$work/ours.img" >"$work/ours.txt"
salt=$(sed -n 's/^Salt:[[:space:]]*//p' "$work/ours.txt")
got_uuid=$(sed -n 's/^UUID:[[:space:]]*//p' "$work/ours.txt")
[[ ${#salt} == 64 ]] || fail "the default salt is 32 random bytes, not '$salt'"
[[ $got_uuid =~ ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]] ||
  fail "the default UUID is a random (version 4) one, not '$got_uuid'"
compare "a random salt and UUID, given back" "--salt=$salt --uuid=$got_uuid" "--salt=$salt --uuid=$got_uuid"
# veritysetup verify accepts the device we wrote, and refuses it with one bit flipped.
root=$(sed -n 's/^Root hash:[[:space:]]*//p' "$work/ours.txt")
"$veritysetup" verify "$work/data" "$work/ours.img" "$root" >/dev/null 2>&1 ||
  fail "veritysetup verify refuses our hash device"
# (Flipped, not overwritten: a byte that was already the one written damaged nothing, 1 in 256.)
byte=$(od -An -tu1 -j $((4096 + 100)) -N1 "$work/ours.img" | tr -d ' ')
printf "$(printf '\\%03o' $((byte ^ 1)))" |
  dd of="$work/ours.img" bs=1 seek=$((4096 + 100)) conv=notrunc status=none
if "$veritysetup" verify "$work/data" "$work/ours.img" "$root" >/dev/null 2>&1; then
  fail "veritysetup verify accepts a damaged hash device"
fi
second=$("$verity" digest --format=dm-verity "$work/data" | sed -n 's/^Salt:[[:space:]]*//p')
[[ $second != "$salt" ]] || fail "two runs made the same random salt"

# Refused: options of the other format, bad values, less than a block. Exit 1 is a usage error.
refused() {
  local name=$1 want=$2
  shift 2
  if "$verity" digest "$@" >"$work/out.txt" 2>"$work/err.txt"; then
    fail "$name: accepted"
  elif ! grep -q -- "$want" "$work/err.txt"; then
    fail "$name: the error does not say '$want': $(cat "$work/err.txt")"
  fi
}
refused "--block-size with dm-verity" "--block-size" --format=dm-verity --block-size=4096 "$work/data"
refused "--data-block-size with fs-verity" "--data-block-size" --data-block-size=4096 "$work/data"
refused "an unknown format" "fs-verity or dm-verity" --format=dm "$work/data"
refused "format version 2" "0 or 1" --format=dm-verity --format-version=2 "$work/data"
refused "a 256-byte data block" "data block size" --format=dm-verity --data-block-size=256 "$work/data"
refused "a bad UUID" "UUID" --format=dm-verity --uuid=xyz "$work/data"
refused "--fec-device with fs-verity" "--fec-device" --fec-device="$work/f" "$work/data"
refused "1 FEC root" "2 to 24" --format=dm-verity --fec-device="$work/f" --fec-roots=1 "$work/data"
refused "FEC with two block sizes" "equal" --format=dm-verity --fec-device="$work/f" \
  --hash-block-size=1024 "$work/data"
head -c 4095 /dev/urandom >"$work/small"
refused "less than a block" "at least one whole data block" --format=dm-verity "$work/small"

if ((failed > 0)); then
  echo "$failed check(s) failed"
  exit 1
fi
echo "PASS"
