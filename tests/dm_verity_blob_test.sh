#!/usr/bin/env bash
# dm-verity blobs end to end against `veritysetup format` (cryptsetup-bin): an image and its hash
# device imported with `verity put --root-hash --hash-device` (stored only if the root hash
# matches), read back with `verity get --root-hash` and the superblock or spelled-out parameters
# (whole and a range), and by digest; the stored tree is veritysetup's hash device and the stored
# FEC its --fec-device, byte for byte; `verity put --format=dm-verity` prints veritysetup's root
# hash; a roothash.p7s checked against a pinned certificate; a superblock that claims one hash
# level as the image is refused; a corrupted stored block is DATA_LOSS with FEC off and repaired
# with it on; what dm-verity does not cover is refused.
# Usage: dm_verity_blob_test.sh VERITYD VERITY
set -euo pipefail
source "$(dirname "$0")/verityd_test_lib.sh"
init_test dm_verity_blob_test "$1" "$2"
for var in $(compgen -v VERITYD_) VERITY_SERVER; do unset "$var"; done
veritysetup=/usr/sbin/veritysetup
[[ -x $veritysetup ]] || { echo "FAIL: $veritysetup is missing: install cryptsetup-bin"; exit 1; }

flip_byte() {  # FILE OFFSET
  local byte
  byte=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  # shellcheck disable=SC2059
  printf "$(printf '\\%03o' $((byte ^ 0xff)))" |
    dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
# root_hash OUTPUT: the "Root hash:" veritysetup printed.
root_hash() { sed -nE 's/^Root hash:[[:space:]]+([0-9a-f]+)$/\1/p' "$1"; }

# ---- an image of 3000 blocks (three levels at 4 KiB), a salt, a superblock and FEC
blocks=3000
head -c $((blocks * 4096)) /dev/urandom >"$work/image"
salt=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
"$veritysetup" format "$work/image" "$work/hashdev" --salt="$salt" >"$work/format.out"
root=$(root_hash "$work/format.out")
"$veritysetup" format "$work/image" "$work/hashdev-bare" --salt="$salt" --no-superblock \
  --fec-device="$work/fecdev" --fec-roots=2 >"$work/format-bare.out"
check "veritysetup printed one root hash for both" [ "$root" = "$(root_hash "$work/format-bare.out")" ]

start_server fec --listen=127.0.0.1:0 --store_dir="$work/store"
srv=(--server="127.0.0.1:$server_port")
put_out=$(vc put "${srv[@]}" "$work/image" --root-hash="$root" --hash-device="$work/hashdev")
digest=${put_out%% *}
echo "put: $put_out"
check "the import prints the root hash" grep -q " roothash=$root\$" <<<"$put_out"
hex=${digest#sha256:}
blob_dir=$work/store/blobs/sha256/${hex:0:2}/$hex
check "the stored tree is veritysetup's hash device" cmp -s "$blob_dir/tree" "$work/hashdev-bare"
check "the stored FEC is veritysetup's --fec-device" cmp -s "$blob_dir/fec" "$work/fecdev"
check "veritysetup verify accepts the stored tree" \
  "$veritysetup" verify "$work/image" "$blob_dir/tree" "$root" --no-superblock --salt="$salt"

stat_out=$(vc stat "${srv[@]}" "$digest")
check "stat names the format and the root hash" \
  grep -q "^format: dm-verity" <<<"$stat_out"
check "stat shows veritysetup's root hash" grep -q "^root-hash: $root\$" <<<"$stat_out"
check "stat shows the size" grep -q "^size: $((blocks * 4096))\$" <<<"$stat_out"

params="hash=sha256,block-size=4096,data-blocks=$blocks,salt=$salt"
check "get by root hash and superblock" \
  vc get "${srv[@]}" --root-hash="$root" --hash-device="$work/hashdev" --data-blocks=$blocks \
  -o "$work/out1"
check "is the image" cmp -s "$work/image" "$work/out1"
check "get by root hash and --verity-params" \
  vc get "${srv[@]}" --root-hash="$root" --verity-params="$params" -o "$work/out2"
check "is the image" cmp -s "$work/image" "$work/out2"
check "get by digest" vc get "${srv[@]}" "$digest" -o "$work/out3"
check "is the image" cmp -s "$work/image" "$work/out3"
vc get "${srv[@]}" --root-hash="$root" --hash-device="$work/hashdev" --data-blocks=$blocks \
  --offset=5000000 --length=123457 >"$work/range"
check "a range by root hash" cmp -s "$work/range" <(tail -c +5000001 "$work/image" | head -c 123457)

# ---- roothash.p7s, as systemd's documentation makes it, against a pinned certificate
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj "/CN=image signer" -keyout "$work/sign.key" -out "$work/sign.pem" 2>"$work/openssl.err"
sign_root() {  # HEX OUT
  printf '%s' "$1" >"$work/roothash.txt"
  openssl smime -sign -nocerts -noattr -binary -in "$work/roothash.txt" -inkey "$work/sign.key" \
    -signer "$work/sign.pem" -outform der -out "$2"
}
sign_root "$root" "$work/roothash.p7s"
check "get with a root hash signature that verifies" vc get "${srv[@]}" --root-hash="$root" \
  --hash-device="$work/hashdev" --data-blocks=$blocks \
  --root-hash-signature="$work/roothash.p7s" --root-hash-cert="$work/sign.pem" -o "$work/signed"
check "is the image" cmp -s "$work/image" "$work/signed"
sign_root "$(printf '%064x' 9)" "$work/other.p7s"
expect_exit 3 "a signature of another root hash is refused" vc get "${srv[@]}" \
  --root-hash="$root" --hash-device="$work/hashdev" --data-blocks=$blocks \
  --root-hash-signature="$work/other.p7s" --root-hash-cert="$work/sign.pem" -o "$work/unsigned"
expect_exit 1 "a pinned certificate without a signature is refused" vc get "${srv[@]}" \
  --root-hash="$root" --hash-device="$work/hashdev" --data-blocks=$blocks \
  --root-hash-cert="$work/sign.pem" -o "$work/unsigned"
check "nothing written for either" [ ! -e "$work/unsigned" ]

# ---- level confusion: a superblock that says the image is one hash level (24 blocks) makes that
# level's hash blocks an image with the same root hash, which roothash.p7s also covers. The size
# comes from the caller, and a superblock that disagrees with it is refused.
dd if="$work/hashdev" of="$work/level0" bs=4096 skip=2 count=24 status=none
"$veritysetup" format "$work/level0" "$work/forged-hashdev" --salt="$salt" >"$work/forged.out"
check "the lower level's own tree has veritysetup's root hash" \
  [ "$(root_hash "$work/forged.out")" = "$root" ]
check "the attacker imports the level as an image" \
  vc put "${srv[@]}" "$work/level0" --root-hash="$root" --hash-device="$work/forged-hashdev"
expect_exit 1 "the forged superblock alone gives no size" vc get "${srv[@]}" --root-hash="$root" \
  --hash-device="$work/forged-hashdev" --root-hash-signature="$work/roothash.p7s" \
  --root-hash-cert="$work/sign.pem" -o "$work/level"
for size in --data-blocks=$blocks --data-size=$((blocks * 4096)); do
  vc get "${srv[@]}" --root-hash="$root" --hash-device="$work/forged-hashdev" "$size" \
    -o "$work/level" 2>"$work/level.err" && rc=0 || rc=$?
  check "the forged superblock against $size: exit 1 (got $rc)" [ "$rc" -eq 1 ]
  check "the forged superblock against $size: the message says so" \
    grep -qF "the superblock says 24 data blocks, but the image is $blocks" "$work/level.err"
done
check "nothing written" [ ! -e "$work/level" ]
head -c $((25 * 4096)) "$work/hashdev" >"$work/hashdev-short"
expect_exit 1 "the honest hash device cut short" vc get "${srv[@]}" --root-hash="$root" \
  --hash-device="$work/hashdev-short" --data-blocks=$blocks -o "$work/level"

# ---- the root hash is the anchor: a wrong one, other parameters or another size name no blob
other=$(printf '%064x' 7)
expect_exit 2 "get with another root hash" \
  vc get "${srv[@]}" --root-hash="$other" --hash-device="$work/hashdev" --data-blocks=$blocks \
  -o "$work/no"
expect_exit 2 "get with another salt" vc get "${srv[@]}" --root-hash="$root" \
  --verity-params="block-size=4096,data-blocks=$blocks,salt=-" -o "$work/no"
expect_exit 2 "get with another size" vc get "${srv[@]}" --root-hash="$root" \
  --verity-params="block-size=4096,data-blocks=$((blocks - 1)),salt=$salt" -o "$work/no"
check "no output for any of them" [ ! -e "$work/no" ]
expect_exit 3 "an import whose root hash does not match stores nothing" \
  vc put "${srv[@]}" "$work/image" --root-hash="$other" --hash-device="$work/hashdev"
expect_exit 1 "--root-hash without its parameters" vc get "${srv[@]}" --root-hash="$root"
expect_exit 1 "--root-hash with a DIGEST_OR_NAME" \
  vc get "${srv[@]}" "$digest" --root-hash="$root" --hash-device="$work/hashdev" --data-blocks=$blocks

# ---- verity put --format=dm-verity: the root hash veritysetup prints for the same salt
head -c $((5 * 1024)) /dev/urandom >"$work/small"
"$veritysetup" format "$work/small" "$work/small-hash" --salt=0a0b --data-block-size=1024 \
  --hash-block-size=1024 >"$work/small.out"
small_out=$(vc put "${srv[@]}" --format=dm-verity --block-size=1024 --salt=0a0b "$work/small")
check "put --format=dm-verity prints veritysetup's root hash" \
  grep -q " roothash=$(root_hash "$work/small.out")\$" <<<"$small_out"
head -c 5000 /dev/urandom >"$work/ragged"
expect_exit 1 "a file of partial blocks is refused" \
  vc put "${srv[@]}" --format=dm-verity "$work/ragged"
stopped=$server_pid
expect_stop fec "$stopped"

# ---- a flipped stored byte: DATA_LOSS in a store without FEC, repaired in one with it
start_server nofec --listen=127.0.0.1:0 --store_dir="$work/nofec-store" --fec_roots=0
srv=(--server="127.0.0.1:$server_port")
check "fec off: the import" \
  vc put "${srv[@]}" "$work/image" --root-hash="$root" --hash-device="$work/hashdev"
nofec_dir=$work/nofec-store/blobs/sha256/${hex:0:2}/$hex
check "fec off: no FEC area" [ ! -e "$nofec_dir/fec" ]
flip_byte "$nofec_dir/data" $((1234 * 4096 + 17))
expect_exit 3 "fec off: the corrupted block is DATA_LOSS" vc get "${srv[@]}" \
  --root-hash="$root" --hash-device="$work/hashdev" --data-blocks=$blocks \
  --offset=$((1234 * 4096)) --length=4096 -o "$work/bad"
check "and leaves no file" [ ! -e "$work/bad" ]
expect_stop nofec "$server_pid"
flip_byte "$blob_dir/data" $((1234 * 4096 + 17))
start_server fec2 --listen=127.0.0.1:0 --store_dir="$work/store"
srv=(--server="127.0.0.1:$server_port")
check "fec on: the corrupted image reads whole" \
  vc get "${srv[@]}" --root-hash="$root" --hash-device="$work/hashdev" --data-blocks=$blocks \
  -o "$work/out4"
check "is the image" cmp -s "$work/image" "$work/out4"
check "the server logged the repair" grep -q "FEC repaired" "$server_log"
check "the stored data is whole again" cmp -s "$work/image" "$blob_dir/data"
expect_stop fec2 "$server_pid"
