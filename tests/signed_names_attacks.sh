# The attacks of a store writer and of a stolen key on signed names, driven by the `verity` CLI
# against a verityd with --name_keys (docs/protocol.md, "What each party can do"). Sourced by
# signed_names_file_test.sh (the file store, edited between restarts) and signed_names_s3_test.sh
# (a radosgw bucket, edited with a plain S3 client while the servers run), after
# verityd_test_lib.sh and init_test. The driver defines:
#   store_read NAME FILE, store_write NAME FILE, store_delete NAME: the name's object, as a
#     writer of the store with no key reads, writes and deletes it;
#   start_guarded KEYS_FILE: (re)starts the server the attacks go through with
#     --name_keys=KEYS_FILE and sets guarded=(--server=...).
# run_name_attacks runs them all on the name attack/latest; run_history_checks then reads a
# history.

# plant_statement FILE STATEMENT_FILE: FILE (a name object) with its statement replaced.
plant_statement() {
  name_record "$1" >"$1.record"
  python3 - "$1" "$2" <<'EOF'
import sys
obj, statement = sys.argv[1], sys.argv[2]
head = open(obj + '.record', 'rb').read().partition(b'\0')[0]
open(obj + '.planted', 'wb').write(head + b'\0' + open(statement, 'rb').read())
EOF
}

# statement_version FILE: the version of the statement in the name object FILE.
statement_version() {
  name_record "$1" >"$1.record"
  python3 - "$1.record" <<'EOF'
import struct, sys
s = open(sys.argv[1], 'rb').read().partition(b'\0')[2]
magics = (b'verityd name statement v2\n', b'verityd name statement v1\n')
print(struct.unpack_from('<Q', s, 26)[0] if s.startswith(magics) else 'none')
EOF
}

run_name_attacks() {
  local name=attack/latest dir=$work/attacks
  local keys=$dir/keys data=$dir/data
  mkdir -p "$keys" "$data"
  for f in a b c d e f; do head -c 5000 /dev/urandom >"$data/$f"; done
  : >"$data/empty"
  openssl genpkey -algorithm ed25519 -out "$keys/honest.pem" 2>/dev/null
  expect_exit 0 "keygen stolen" vc keygen --out="$keys/stolen.pem"
  expect_exit 0 "keygen thief" vc keygen --out="$keys/thief.pem"
  openssl pkey -in "$keys/honest.pem" -pubout -out "$keys/honest.pub"
  cat "$keys/honest.pub" "$keys/stolen.pem.pub" >"$keys/both.pub"
  start_guarded "$keys/both.pub"
  publish=(--sign-key="$keys/honest.pem" --state-dir="$dir/publisher")
  local both=(--trusted-keys="$keys/both.pub" --state-dir="$dir/client")
  local honest_only=(--trusted-keys="$keys/honest.pub" --state-dir="$dir/client")

  # attack_get WHAT WANT FILE|REASON TRUST...: a get of the name with TRUST exits WANT; 0 gives
  # FILE's bytes, 3 says REASON and leaves no file.
  attack_get() {
    local what=$1 want=$2 expect=$3 rc=0
    shift 3
    rm -f "$dir/out"
    vc get "${guarded[@]}" "$@" "$name" -o "$dir/out" 2>"$dir/err" || rc=$?
    check "$what: get exits $want (got $rc: $(head -c 300 "$dir/err"))" [ "$rc" -eq "$want" ]
    if [[ $want -eq 0 ]]; then
      check "$what: byte-identical" cmp -s "$expect" "$dir/out"
    else
      check "$what: no output file" [ ! -e "$dir/out" ]
      check "$what: the message says '$expect'" grep -qF "$expect" "$dir/err"
    fi
  }

  # ---- induced rollback: the writer saves the statement, deletes the name, and restores it once
  # the publisher has signed its next release. The publisher's version never comes from the store.
  expect_exit 0 "publish a" vc put "${guarded[@]}" "$data/a" --name="$name" "${publish[@]}"
  attack_get "release a" 0 "$data/a" "${both[@]}"
  store_read "$name" "$dir/a.object"
  check "the version is the time in milliseconds" \
    [ "$(statement_version "$dir/a.object")" -gt 1700000000000 ]
  store_delete "$name"
  expect_exit 0 "publish b after the name was deleted" \
    vc put "${guarded[@]}" "$data/b" --name="$name" "${publish[@]}"
  store_read "$name" "$dir/b.object"
  check "b's version is above a's (the publisher's record)" \
    [ "$(statement_version "$dir/b.object")" -gt "$(statement_version "$dir/a.object")" ]
  store_delete "$name"
  expect_exit 0 "publish c from a new machine after the name was deleted" \
    vc put "${guarded[@]}" "$data/c" --name="$name" --sign-key="$keys/honest.pem" \
    --state-dir="$dir/new-machine"
  store_read "$name" "$dir/c.object"
  check "c's version is above b's (the clock)" \
    [ "$(statement_version "$dir/c.object")" -gt "$(statement_version "$dir/b.object")" ]
  attack_get "release c" 0 "$data/c" "${both[@]}"
  store_write "$name" "$dir/a.object"
  attack_get "a restored after c" 3 "rollback" "${both[@]}"
  store_write "$name" "$dir/c.object"

  # ---- fast-forward lock-out: a statement that parses, with a version near the top, planted
  # (signed by a key nobody trusts). It neither sets the publisher's next version nor the
  # server's floor.
  expect_exit 0 "the thief signs version 2^64-2" vc sign "$name" \
    "$("$verity" digest "$data/a" | cut -d' ' -f1)" \
    --key="$keys/thief.pem" --version=18446744073709551614 --out="$dir/planted.statement" \
    --state-dir="$dir/thief"
  check "plant it" plant_statement "$dir/c.object" "$dir/planted.statement"
  store_write "$name" "$dir/c.object.planted"
  expect_exit 0 "publish d over the planted statement" \
    vc put "${guarded[@]}" "$data/d" --name="$name" "${publish[@]}"
  store_read "$name" "$dir/d.object"
  check "d's version did not follow the planted one" \
    [ "$(statement_version "$dir/d.object")" -lt 4611686018427387904 ]
  attack_get "release d" 0 "$data/d" "${both[@]}"

  # ---- a stolen key: the thief fast-forwards the name through the server (the key is trusted
  # there and by clients); the honest key is locked out until the stolen key is removed.
  expect_exit 0 "the stolen key signs e at version 2^64-2" vc put "${guarded[@]}" "$data/e" \
    --name="$name" --sign-key="$keys/stolen.pem" --version=18446744073709551614 \
    --state-dir="$dir/thief"
  attack_get "the stolen key's release, while trusted" 0 "$data/e" "${both[@]}"
  store_read "$name" "$dir/e.object"
  local rc=0
  vc put "${guarded[@]}" "$data/f" --name="$name" "${publish[@]}" 2>"$dir/err" || rc=$?
  check "the honest write is refused while the stolen key is trusted: exit 5 (got $rc)" \
    [ "$rc" -eq 5 ]
  check "the refusal names the stolen version" grep -qF "18446744073709551614" "$dir/err"
  start_guarded "$keys/honest.pub"
  expect_exit 0 "the stolen key removed from --name_keys: publish f" \
    vc put "${guarded[@]}" "$data/f" --name="$name" "${publish[@]}"
  store_read "$name" "$dir/f.object"
  attack_get "f, while the client still trusts the stolen key" 3 \
    "older than version 18446744073709551614" "${both[@]}"
  attack_get "f, the stolen key removed" 0 "$data/f" "${honest_only[@]}"
  store_write "$name" "$dir/e.object"
  attack_get "the stolen key's statement replayed" 3 "by keys not trusted" "${honest_only[@]}"
  store_write "$name" "$dir/d.object"
  attack_get "an older honest statement replayed" 3 "rollback" "${honest_only[@]}"
  store_write "$name" "$dir/f.object"
  attack_get "f again" 0 "$data/f" "${honest_only[@]}"

  # ---- checks that run although no byte is read: an unsigned empty blob under a signed name,
  # an empty range, a stat, with an fs-verity certificate pinned.
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=attacks" \
    -keyout "$keys/cert.key" -out "$keys/cert.pem" 2>/dev/null
  expect_exit 0 "publish the empty blob" \
    vc put "${guarded[@]}" "$data/empty" --name=attack/empty "${publish[@]}"
  local empty cert=(--fsverity-cert="$keys/cert.pem")
  empty=$("$verity" digest "$data/empty" | cut -d' ' -f1)
  for args in "attack/empty --parallel=4" "attack/empty" "$empty --length=0" \
    "$name --length=0 --parallel=4" "$name --offset=5000"; do
    rm -f "$dir/out"
    # shellcheck disable=SC2086 # the arguments are split on purpose
    expect_exit 3 "get $args with a certificate pinned, unsigned" \
      vc get "${guarded[@]}" "${honest_only[@]}" "${cert[@]}" $args -o "$dir/out"
    check "get $args: no output file" [ ! -e "$dir/out" ]
  done
  expect_exit 3 "stat of an unsigned blob with a certificate pinned" \
    vc stat "${guarded[@]}" "${cert[@]}" "$empty"

  # ---- no quiet fail-open: a trust option set to nothing is an error; by name, a certificate
  # without trusted keys says the name is not authenticated.
  expect_exit 1 "--trusted-keys= (empty)" vc get "${guarded[@]}" --trusted-keys= "$name"
  expect_exit 1 "VERITY_TRUSTED_KEYS= (empty)" env VERITY_TRUSTED_KEYS= "$verity" get \
    "${guarded[@]}" "$name"
  expect_exit 1 "--fsverity-cert= (empty)" vc get "${guarded[@]}" --fsverity-cert= "$name"
  rc=0
  vc get "${guarded[@]}" "${cert[@]}" attack/empty --length=0 2>"$dir/err" || rc=$?
  check "by name with only a certificate: the warning" \
    grep -qF "attack/empty is not authenticated" "$dir/err"
}

# run_history_checks: `verity history` of a name published three times through the guarded
# server (trusting the key honest.pem of run_name_attacks): newest first, each version's digest,
# kind, time and statement, verified only with the trusted key.
run_history_checks() {
  local name=attack/history dir=$work/attacks
  local keys=$dir/keys data=$dir/data
  local -a digests=()
  for f in a b c; do
    expect_exit 0 "history: publish $f" \
      vc put "${guarded[@]}" "$data/$f" --name="$name" "${publish[@]}"
    digests+=("$("$verity" digest "$data/$f" | cut -d' ' -f1)")
  done
  expect_exit 0 "history: list it" vc history "${guarded[@]}" \
    --trusted-keys="$keys/honest.pub" --state-dir="$dir/client" "$name" >"$dir/history"
  check "history: three versions" [ "$(wc -l <"$dir/history")" -eq 3 ]
  local i line
  for i in 0 1 2; do
    line=$(sed -n "$((i + 1))p" "$dir/history")
    check "history: line $i is c, b, a in turn: $line" \
      [ "${line#"$i ${digests[$((2 - i))]} file written=20"}" != "$line" ]
    check "history: line $i is signed and verified" grep -qE ' version=[0-9]+ .* verified=yes$' \
      <<<"$line"
  done
  local -a versions
  mapfile -t versions < <(sed 's/.* version=\([0-9]*\) .*/\1/' "$dir/history")
  check "history: newest first (${versions[*]})" \
    [ "${versions[0]}" -gt "${versions[1]}" -a "${versions[1]}" -gt "${versions[2]}" ]
  vc history "${guarded[@]}" --state-dir="$dir/client" "$name" >"$dir/history" 2>/dev/null
  check "history without trusted keys: not verified" \
    [ "$(grep -c ' verified=no$' "$dir/history")" -eq 3 ]
  expect_exit 2 "history of no such name" vc history "${guarded[@]}" attack/none

  # ---- rm: a blob a retained version reaches, itself or as a file of its tree, is refused
  # naming the name; --force deletes it; removing the name frees what only it reached.
  local rc=0
  vc rm "${guarded[@]}" "${digests[0]}" 2>"$dir/err" || rc=$?
  check "rm of the oldest version's blob: exit 5 (got $rc)" [ "$rc" -eq 5 ]
  check "the refusal names the name: $(cat "$dir/err")" \
    grep -qF "name \"$name\" (version 2 of its history)" "$dir/err"
  mkdir -p "$dir/tree/bin"
  cp "$data/d" "$dir/tree/bin/tool"
  expect_exit 0 "publish a tree" \
    vc put "${guarded[@]}" "$dir/tree" --name=attack/tree "${publish[@]}"
  local tool
  tool=$("$verity" digest "$data/d" | cut -d' ' -f1)
  rc=0
  vc rm "${guarded[@]}" "$tool" 2>"$dir/err" || rc=$?
  check "rm of a file of a named tree: exit 5 (got $rc)" [ "$rc" -eq 5 ]
  check "the refusal names the tree's file: $(cat "$dir/err")" \
    grep -qF "file bin/tool of its tree" "$dir/err"
  expect_exit 0 "the tree still fetches" vc get "${guarded[@]}" attack/tree -o "$dir/tree-out"
  expect_exit 0 "rm --force of the tree's file" vc rm "${guarded[@]}" --force "$tool"
  expect_exit 1 "rm --force of a name is a usage error" vc rm "${guarded[@]}" --force "$name"
  expect_exit 0 "rm of the name" vc rm "${guarded[@]}" "$name"
  expect_exit 0 "then its oldest blob goes without --force" vc rm "${guarded[@]}" "${digests[0]}"
}
