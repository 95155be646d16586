#!/usr/bin/env bash
# The `verity` CLI against real verityd servers, with `fsverity digest` as the oracle: put, get
# (whole, ranges, by name, to stdout), stat, ls, rm and exit codes; then a corrupted store, read
# with and without server-side verification and with quarantine; then TLS and mutual TLS.
# Usage: cli_e2e_test.sh PATH_TO_VERITYD PATH_TO_VERITY
set -euo pipefail
source "$(dirname "$0")/verityd_test_lib.sh"
init_test cli-e2e "$1" "$2"
fsverity=/usr/bin/fsverity
[[ -x $fsverity ]] || { echo "FAIL: $fsverity is missing (apt-get install fsverity)"; exit 1; }

# Random data, new each run. `page` is put with SHA-512 and a salt, `big` under a name.
d=$work/data
out=$work/out  # holds only what a check expects; temporary files left behind show up here
mkdir "$d" "$out"
head -c 0 /dev/urandom >"$d/empty"
head -c 1 /dev/urandom >"$d/one"
head -c 4097 /dev/urandom >"$d/page"
head -c $((5 * 1048576 + 123)) /dev/urandom >"$d/big"
big_size=$((5 * 1048576 + 123))
page_opts=(--hash-alg=sha512 --salt=0123abcd)

digest_of() { "$fsverity" digest "$@" | cut -d' ' -f1; }
dig_empty=$(digest_of "$d/empty")
dig_one=$(digest_of "$d/one")
dig_page=$(digest_of "$d/page" "${page_opts[@]}")
dig_big=$(digest_of "$d/big")
missing=sha256:$(printf '0%.0s' {1..64})

# FEC off: a corrupted block is DATA_LOSS (the FEC section at the end repairs one).
start_server main --listen=127.0.0.1:0 --store_dir="$work/store" --fec_roots=0
main_pid=$server_pid
main_port=$server_port
srv=(--server="127.0.0.1:$main_port")

# ---- put prints exactly what `fsverity digest` prints for the same options
put_matches() {  # NAME FILE... -- [TREE OPTIONS...]   (NAME may be empty)
  local name=$1 files=() want got
  shift
  while [[ $1 != -- ]]; do files+=("$1"); shift; done
  shift
  want=$("$fsverity" digest "${files[@]}" "$@")
  if ! got=$(vc put "${srv[@]}" "${files[@]}" "$@" ${name:+--name=$name}); then
    fail "put ${files[*]} $*: failed"
  elif [[ -z $want || $got != "$want" ]]; then
    fail "put ${files[*]} $*: printed '$got', want '$want'"
  else
    pass
  fi
}
put_matches "" "$d/empty" "$d/one" --
put_matches "" "$d/page" -- "${page_opts[@]}"
put_matches big.bin "$d/big" --
put_matches "" "$d/big" --  # already stored: same line
# ---- --help on every subcommand: its usage on standard output, exit 0, even among bad options
for sub in digest put get stat ls rm; do
  if ! help=$(vc "$sub" --bogus --help 2>"$work/help.err"); then
    fail "$sub --help: exit $?"
  elif [[ $help != "Usage: verity $sub"* || -s $work/help.err ]]; then
    fail "$sub --help: printed '${help:0:60}', stderr '$(head -c 60 "$work/help.err")'"
  else
    pass
  fi
done
expect_exit 2 "--help after -- is an operand (a name not found)" vc stat "${srv[@]}" -- --help
expect_exit 1 "put without a file" vc put "${srv[@]}"
expect_exit 2 "put of a missing file" vc put "${srv[@]}" "$d/no-such-file"

# ---- get by digest: fsverity agrees on what was written, and it is the file
get_matches() {  # WHAT FILE GET_ARGS...: `get -o` writes exactly FILE
  local what=$1 file=$2
  shift 2
  rm -f "$out/got"
  if ! vc get "${srv[@]}" "$@" -o "$out/got"; then
    fail "$what: get failed"
  elif ! cmp -s "$file" "$out/got"; then
    fail "$what: content differs"
  else
    pass
  fi
  rm -f "$out/got"
}
for f in empty one page big; do
  dig_var=dig_$f
  opts=()
  [[ $f == page ]] && opts=("${page_opts[@]}")
  rm -f "$out/got"
  if vc get "${srv[@]}" "${!dig_var}" -o "$out/got"; then
    check "fsverity digest of get -o $f" \
      [ "$(digest_of "$out/got" "${opts[@]}")" == "${!dig_var}" ]
    check "get -o $f equals the file" cmp -s "$d/$f" "$out/got"
  else
    fail "get ${!dig_var} ($f) failed"
  fi
  rm -f "$out/got"
  check "get $f to stdout" cmp -s "$d/$f" <(vc get "${srv[@]}" "${!dig_var}")
done
get_matches "get by name" "$d/big" big.bin
check "get by name to stdout" cmp -s "$d/big" <(vc get "${srv[@]}" big.bin)
check "get with --priority=idle" cmp -s "$d/page" <(vc get "${srv[@]}" "$dig_page" --priority=idle)
# -o naming a device or FIFO writes to it: /dev/null stays a device, a FIFO gets the content.
expect_exit 0 "get -o /dev/null" vc get "${srv[@]}" "$dig_page" -o /dev/null
check "/dev/null is still a character device" [ -c /dev/null ]
mkfifo "$out/fifo"
cat "$out/fifo" >"$out/from-fifo" &
expect_exit 0 "get -o FIFO" vc get "${srv[@]}" "$dig_page" -o "$out/fifo"
wait $!
check "the FIFO carried the blob" cmp -s "$d/page" "$out/from-fifo"
rm -f "$out/fifo" "$out/from-fifo"
expect_exit 1 "get with a bad --priority" vc get "${srv[@]}" "$dig_page" --priority=urgent

# ---- ranges at unaligned offsets, against dd / head / tail of the file
range_matches() {  # FILE DIGEST OFFSET [LENGTH]
  local file=$1 dig=$2 off=$3 len=${4:-} range=(--offset="$3")
  if [[ -z $len ]]; then
    tail -c +$((off + 1)) "$file" >"$work/want"
  elif [[ $off -eq 0 ]]; then
    head -c "$len" "$file" >"$work/want"
    range+=(--length="$len")
  else
    dd if="$file" iflag=skip_bytes,count_bytes skip="$off" count="$len" status=none >"$work/want"
    range+=(--length="$len")
  fi
  [[ -n $len && $(stat -c %s "$work/want") -ne $len ]] && { fail "bad range $off+$len"; return; }
  check "range ${range[*]} of $file to stdout" \
    cmp -s "$work/want" <(vc get "${srv[@]}" "$dig" "${range[@]}")
  get_matches "range ${range[*]} of $file with -o" "$work/want" "$dig" "${range[@]}"
}
for range in "0 1" "0 4096" "0 4097" "1 1" "4095 2" "4097 12345" "12287 1048577" \
  "$((big_size - 1)) 1" "1000000" "$((3 * 4096 + 5))" "$((big_size - 4097))" "$big_size"; do
  # shellcheck disable=SC2086
  range_matches "$d/big" "$dig_big" $range
done
range_matches "$d/page" "$dig_page" 4000 97
range_matches "$d/page" "$dig_page" 4096 1
range_matches "$d/page" "$dig_page" 1
rc=0
vc get "${srv[@]}" "$dig_big" --offset=$((big_size + 1)) -o "$out/got" 2>/dev/null || rc=$?
check "an offset past the end fails (exit $rc)" [ $rc -ne 0 ]
rc=0
vc get "${srv[@]}" "$dig_big" --offset=10 --length="$big_size" -o "$out/got" 2>/dev/null || rc=$?
check "a range past the end fails (exit $rc)" [ $rc -ne 0 ]
check "a failed range leaves no file" only_in_out

# ---- stat and ls
# ---- an interrupted get -o removes its temporary file and dies of the signal. The server is
# stopped, so the get waits for its first message with the temporary file open (--file: a
# file, so it asks nothing first).
interrupted_get() {  # SIGNAL WANT_EXIT
  local pid rc=0
  kill -STOP "$main_pid"
  env --default-signal="$1" "$verity" get "${srv[@]}" "$dig_big" --file -o "$out/big" \
    2>/dev/null &
  pid=$!
  for _ in $(seq 100); do
    compgen -G "$out/.big.verity-*" >/dev/null && break
    sleep 0.05
  done
  sleep 0.2  # the handler is armed right after the file is made
  check "get -o waits with a temporary file" compgen -G "$out/.big.verity-*"
  kill -"$1" "$pid"
  wait "$pid" || rc=$?
  kill -CONT "$main_pid"
  check "get -o interrupted by SIG$1 exits $2 (got $rc)" test "$rc" = "$2"
  check "and leaves no temporary file" only_in_out
}
interrupted_get INT 130
interrupted_get TERM 143

stat_big=$(vc stat "${srv[@]}" big.bin) || fail "stat big.bin failed"
check "stat shows the size" grep -qx "size: $big_size" <<<"$stat_big"
check "stat shows the name" grep -qx "name: big.bin" <<<"$stat_big"
check "stat by name shows the digest" grep -qx "digest: $dig_big" <<<"$stat_big"
stat_page=$(vc stat "${srv[@]}" "$dig_page") || fail "stat $dig_page failed"
check "stat shows the size (page)" grep -qx "size: 4097" <<<"$stat_page"
check "stat shows the algorithm" grep -qx "hash-algorithm: sha512" <<<"$stat_page"
check "stat shows the salt" grep -qx "salt: 0123abcd" <<<"$stat_page"
check "an unnamed blob has no name line" bash -c '! grep -q "^name:" <<<"$1"' _ "$stat_page"
ls_out=$(vc ls "${srv[@]}") || fail "ls failed"
check "ls lists the empty blob" grep -qx "$dig_empty 0" <<<"$ls_out"
check "ls lists the 1-byte blob" grep -qx "$dig_one 1" <<<"$ls_out"
check "ls lists the salted blob" grep -qx "$dig_page 4097" <<<"$ls_out"
check "ls lists the named blob with its name" grep -qx "$dig_big $big_size big.bin" <<<"$ls_out"
check "ls lists 4 blobs" [ "$(wc -l <<<"$ls_out")" -eq 4 ]
expect_exit 2 "stat of a missing digest" vc stat "${srv[@]}" "$missing"

# ---- VERITY_SERVER instead of --server; --server wins over it
check "VERITY_SERVER works" cmp -s <(VERITY_SERVER=127.0.0.1:$main_port vc ls) <(echo "$ls_out")
check "--server wins over VERITY_SERVER" \
  cmp -s "$d/one" <(VERITY_SERVER=127.0.0.1:1 vc get "${srv[@]}" "$dig_one")

# ---- rm: a name alone, a blob with its names, and what is missing
expect_exit 0 "rm big.bin" vc rm "${srv[@]}" big.bin
expect_exit 2 "get by a removed name" vc get "${srv[@]}" big.bin -o "$out/got"
get_matches "get by digest after rm of its name" "$d/big" "$dig_big"
check "stat shows no name after rm" \
  bash -c '! grep -q "^name:" <<<"$1"' _ "$(vc stat "${srv[@]}" "$dig_big")"
expect_exit 2 "rm of a removed name" vc rm "${srv[@]}" big.bin
put_matches uno "$d/one" --
rc=0
vc rm "${srv[@]}" "$dig_one" 2>"$work/rm.err" || rc=$?
check "rm by digest of a named blob: exit 5 (got $rc)" [ "$rc" -eq 5 ]
check "the refusal names the name" grep -qF 'name "uno" (version 0 of its history)' "$work/rm.err"
expect_exit 0 "rm --force by digest" vc rm "${srv[@]}" --force "$dig_one"
expect_exit 2 "get of a removed digest" vc get "${srv[@]}" "$dig_one" -o "$out/got"
expect_exit 2 "get by the name of a removed blob" vc get "${srv[@]}" uno
expect_exit 2 "rm of a removed digest" vc rm "${srv[@]}" "$dig_one"
check "ls no longer lists a removed blob" \
  bash -c '! grep -q "^$1 " <<<"$2"' _ "$dig_one" "$(vc ls "${srv[@]}")"
expect_exit 2 "get of a missing digest" vc get "${srv[@]}" "$missing" -o "$out/got"
expect_exit 2 "get of a missing name" vc get "${srv[@]}" no/such/name -o "$out/got"
check "a failed get leaves no file" only_in_out
expect_exit 1 "get without an operand" vc get "${srv[@]}"

# ---- corruption: flip one byte in block 3 of the stored data
flip_byte() {  # FILE OFFSET
  local byte
  byte=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  # shellcheck disable=SC2059
  printf "$(printf '\\%03o' $((byte ^ 0xff)))" |
    dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
hex=${dig_big#sha256:}
blob_dir=$work/store/blobs/sha256/${hex:0:2}/$hex
flip_byte "$blob_dir/data" $((3 * 4096 + 1234))
check "the stored data now differs" bash -c '! cmp -s "$1" "$2"' _ "$d/big" "$blob_dir/data"
expect_exit 3 "get of a corrupted blob" vc get "${srv[@]}" "$dig_big" -o "$out/got"
check "a failed verification leaves no file" only_in_out
echo "old content" >"$out/old"
expect_exit 3 "get over an existing file" vc get "${srv[@]}" "$dig_big" -o "$out/old"
check "a failed get keeps the old file" grep -qx "old content" "$out/old"
check "and leaves no temporary file" only_in_out old
rm -f "$out/old"
expect_exit 3 "a range with block 3" \
  vc get "${srv[@]}" "$dig_big" --offset=$((3 * 4096 + 10)) --length=5 -o "$out/got"
range_matches "$d/big" "$dig_big" 0 $((3 * 4096))  # the blocks before it still read
range_matches "$d/big" "$dig_big" $((4 * 4096 + 1)) 100000  # and after it
check "the server logged the corruption" grep -q "corruption detected" "$server_log"

expect_stop main "$main_pid"

# The server sends the damaged block unverified; the client must still refuse it.
start_server unverified --listen=127.0.0.1:0 --store_dir="$work/store" --verify_on_read=false
check "verityd warns about --verify_on_read=false" \
  grep -q "WARNING: --verify_on_read=false" "$server_log"
srv=(--server="127.0.0.1:$server_port")
expect_exit 3 "unverified server: get -o" vc get "${srv[@]}" "$dig_big" -o "$out/got"
check "unverified server: no file left" only_in_out
rc=0
vc get "${srv[@]}" "$dig_big" >"$work/prefix" || rc=$?
check "unverified server: get to stdout exits 3 (got $rc)" [ $rc -eq 3 ]
check "unverified server: stdout is a strict prefix of the content" \
  is_prefix "$work/prefix" "$d/big"
get_matches "unverified server: an intact blob" "$d/page" "$dig_page"
expect_stop unverified "$server_pid"

# With --on_corruption=quarantine the first failure takes the blob out of service until re-put.
start_server quarantine --listen=127.0.0.1:0 --store_dir="$work/store" --on_corruption=quarantine
srv=(--server="127.0.0.1:$server_port")
expect_exit 3 "quarantine: first get" vc get "${srv[@]}" "$dig_big" -o "$out/got"
check "quarantine: logged" grep -q "quarantined $dig_big" "$server_log"
check "quarantine: moved to quarantine/" [ -d "$work/store/quarantine/sha256-$hex" ]
check "quarantine: gone from blobs/" [ ! -e "$blob_dir" ]
expect_exit 3 "quarantine: a range without the damaged block" \
  vc get "${srv[@]}" "$dig_big" --length=10 -o "$out/got"
check "quarantine: not listed" \
  bash -c '! grep -q "^$1 " <<<"$2"' _ "$dig_big" "$(vc ls "${srv[@]}")"
put_matches "" "$d/big" --
get_matches "quarantine: served again after a re-put" "$d/big" "$dig_big"
check "quarantine: the damaged copy is gone" [ -z "$(ls -A "$work/store/quarantine")" ]
check "quarantine: no file left" only_in_out
stopped_port=$server_port
expect_stop quarantine "$server_pid"

# ---- FEC on (the default): the same flip, and one in the tree, are repaired and rewritten
start_server fec --listen=127.0.0.1:0 --store_dir="$work/fec-store"
srv=(--server="127.0.0.1:$server_port")
put_matches "" "$d/big" --
fec_dir=$work/fec-store/blobs/sha256/${hex:0:2}/$hex
check "fec: a Put writes the FEC area" [ -s "$fec_dir/fec" ]
cp "$fec_dir/tree" "$work/tree.orig"
flip_byte "$fec_dir/data" $((3 * 4096 + 1234))
flip_byte "$fec_dir/tree" $((4096 + 100))  # level-0 tree block 0
get_matches "fec: the corrupted blob reads whole" "$d/big" "$dig_big"
check "fec: the server logged the repairs" grep -q "FEC repaired" "$server_log"
check "fec: the data file is whole again" cmp -s "$d/big" "$fec_dir/data"
check "fec: the tree file is whole again" cmp -s "$work/tree.orig" "$fec_dir/tree"
check "fec: no corruption was reported" bash -c '! grep -q "corruption detected" "$1"' _ "$server_log"
stopped_port=$server_port
expect_stop fec "$server_pid"

# ---- a stopped server is unavailable
expect_exit 4 "ls on a stopped server" vc ls --server="127.0.0.1:$stopped_port"
expect_exit 4 "get on a stopped server" \
  vc get --server="127.0.0.1:$stopped_port" "$dig_page" -o "$out/got"
expect_exit 4 "put on a stopped server" vc put --server="127.0.0.1:$stopped_port" "$d/one"
check "an unavailable get leaves no file" only_in_out

# ---- TLS: a self-signed certificate for localhost and 127.0.0.1
new_cert() {  # NAME SUBJECT [OPENSSL ARGS...]: $work/NAME.pem and $work/NAME.key
  local name=$1 subject=$2
  shift 2
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj "$subject" -keyout "$work/$name.key" -out "$work/$name.pem" "$@" 2>"$work/openssl.err" ||
    { cat "$work/openssl.err"; return 1; }
}
new_cert server /CN=localhost -addext "subjectAltName=IP:127.0.0.1,DNS:localhost"
new_cert client /CN=verity-test-client
new_cert stranger /CN=verity-test-stranger

start_server tls --listen=127.0.0.1:0 --store_dir="$work/tls-store" \
  --tls_cert="$work/server.pem" --tls_key="$work/server.key"
tls_pid=$server_pid
tls_port=$server_port
srv=(--server="127.0.0.1:$tls_port" --tls-ca="$work/server.pem")
put_matches "" "$d/page" -- "${page_opts[@]}"
get_matches "TLS get" "$d/page" "$dig_page"
srv=(--server="localhost:$tls_port" --tls-ca="$work/server.pem")
get_matches "TLS get through the DNS name" "$d/page" "$dig_page"
expect_exit 4 "plaintext client on a TLS server" vc get --server="127.0.0.1:$tls_port" "$dig_page"
expect_exit 4 "TLS client trusting another CA" \
  vc get --server="127.0.0.1:$tls_port" --tls-ca="$work/client.pem" "$dig_page"

start_server mtls --listen=127.0.0.1:0 --store_dir="$work/mtls-store" \
  --tls_cert="$work/server.pem" --tls_key="$work/server.key" --tls_client_ca="$work/client.pem"
mtls_pid=$server_pid
mtls=(--server="127.0.0.1:$server_port" --tls-ca="$work/server.pem")
srv=("${mtls[@]}" --tls-cert="$work/client.pem" --tls-key="$work/client.key")
put_matches "" "$d/big" --
get_matches "mTLS get" "$d/big" "$dig_big"
expect_exit 4 "mTLS without a client certificate" vc get "${mtls[@]}" "$dig_big" -o "$out/got"
expect_exit 4 "mTLS with an untrusted client certificate" vc get "${mtls[@]}" \
  --tls-cert="$work/stranger.pem" --tls-key="$work/stranger.key" "$dig_big" -o "$out/got"
expect_exit 4 "mTLS put without a client certificate" vc put "${mtls[@]}" "$d/one"
check "refused TLS gets leave no file" only_in_out

expect_stop tls "$tls_pid"
expect_stop mtls "$mtls_pid"
