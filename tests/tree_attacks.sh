# Trees end to end with the `verity` CLI, against a verityd with --name_keys, and the attacks
# on them of someone who can write the store (issue 31). Sourced by tree_file_test.sh (the file
# store, written between restarts) and tree_s3_test.sh (a radosgw bucket, written with a plain
# S3 client), after verityd_test_lib.sh and init_test. The driver defines:
#   store_read NAME FILE, store_write NAME FILE: the name's object, as a writer of the store;
#   store_blob_write DIGEST FILE: the blob's content replaced by FILE's bytes;
#   start_guarded KEYS_FILE: (re)starts the server with --name_keys=KEYS_FILE and sets
#     guarded=(--server=...).
# run_tree_tests runs them all.

# make_release DIR VERSION: a small release: an executable, two files with the same content,
# an empty file, an empty folder, a symlink to a file and one to a folder, and a readme that
# says VERSION.
make_release() {
  mkdir -p "$1/bin" "$1/data/empty-dir" "$1/docs"
  head -c 70000 /dev/urandom >"$1/bin/tool"
  chmod 0755 "$1/bin/tool"
  head -c 20000 /dev/urandom >"$1/data/a"
  cp "$1/data/a" "$1/data/b"
  : >"$1/data/empty"
  echo "release $2" >"$1/docs/readme"
  ln -s data/a "$1/current"
  ln -s data "$1/d"
}

# evil_manifest OUT KIND: a tree manifest (docs/protocol.md) that escapes: KIND "dotdot" has
# the file ../escaped, "symlink" a symlink up -> ../../outside.
evil_manifest() {
  python3 - "$1" "$2" <<'PY'
import struct, sys
out, kind = sys.argv[1], sys.argv[2]
def sized(b): return struct.pack('<H', len(b)) + b
m = b'verityd tree v1\n' + struct.pack('<I', 1)
if kind == 'dotdot':
    # A file: type 1, its path, flags, size, algorithm 1 (SHA-256), a digest.
    m += bytes([1]) + sized(b'../escaped') + bytes([0]) + struct.pack('<Q', 0) + bytes([1]) + bytes(32)
else:
    m += bytes([3]) + sized(b'up') + sized(b'../../outside')
open(out, 'wb').write(m)
PY
}

run_tree_tests() {
  local dir=$work/trees name=tree/latest
  local keys=$dir/keys
  mkdir -p "$keys"
  openssl genpkey -algorithm ed25519 -out "$keys/publisher.pem" 2>/dev/null
  openssl pkey -in "$keys/publisher.pem" -pubout -out "$keys/publisher.pub"
  start_guarded "$keys/publisher.pub"
  local publish=(--sign-key="$keys/publisher.pem" --state-dir="$dir/publisher")
  local trust=(--trusted-keys="$keys/publisher.pub" --state-dir="$dir/client")
  local v1=$dir/v1 v2=$dir/v2 out=$dir/out rc

  # ---- put DIR, get -o DIR, ls
  make_release "$v1" 1
  expect_exit 0 "put v1" vc put "${guarded[@]}" "$v1" --name="$name" "${publish[@]}" \
    >"$dir/put.out" 2>"$dir/put.err"
  local tree1
  tree1=$(cut -d' ' -f1 "$dir/put.out")
  check "put prints the tree's digest and the folder" \
    grep -qE "^sha256:[0-9a-f]{64} $v1\$" "$dir/put.out"
  check "put v1 sends the 4 distinct contents of 5 files ($(cat "$dir/put.err"))" \
    grep -q "a tree of 5 files .* sent 4 blobs" "$dir/put.err"
  store_read "$name" "$dir/name-v1"
  expect_exit 0 "put v1 again" vc put "${guarded[@]}" "$v1" --name="$name" "${publish[@]}" \
    >/dev/null 2>"$dir/put.err"
  check "a second put sends no file data ($(cat "$dir/put.err"))" \
    grep -q "sent 0 blobs (0 bytes)" "$dir/put.err"

  expect_exit 0 "get v1 -o DIR" vc get "${guarded[@]}" "${trust[@]}" "$name" -o "$out"
  check "get v1: the same tree (diff -r)" diff -r --no-dereference "$v1" "$out"
  check "get v1: the executable bit kept" test -x "$out/bin/tool"
  check "get v1: a plain file is not executable" test ! -x "$out/docs/readme"
  check "get v1: the symlinks kept" \
    test "$(readlink "$out/current")" == data/a -a "$(readlink "$out/d")" == data
  check "get v1: the empty folder" test -d "$out/data/empty-dir"
  vc ls "${guarded[@]}" "${trust[@]}" "$name" >"$dir/ls.out"
  check "ls lists the executable" \
    grep -qE "^f 0755 70000 sha256:[0-9a-f]{64} bin/tool\$" "$dir/ls.out"
  check "ls lists the symlink" grep -qx "l current -> data/a" "$dir/ls.out"
  check "ls lists the folders" grep -qx "d 0755 data/empty-dir" "$dir/ls.out"
  check "ls lists 11 entries" [ "$(wc -l <"$dir/ls.out")" -eq 11 ]
  expect_exit 0 "get --file writes the manifest's bytes" \
    vc get "${guarded[@]}" "$tree1" --file -o "$dir/manifest"
  check "the manifest begins with its magic" \
    grep -q "^verityd tree v1" "$dir/manifest"

  # ---- an update into the same folder: only what changed is fetched
  cp -a "$v1" "$v2"
  echo "release 2" >"$v2/docs/readme"
  head -c 3000 /dev/urandom >"$v2/docs/new"
  expect_exit 0 "put v2" vc put "${guarded[@]}" "$v2" --name="$name" "${publish[@]}" \
    >/dev/null 2>"$dir/put.err"
  check "put v2 sends the 2 new contents ($(cat "$dir/put.err"))" \
    grep -q "sent 2 blobs" "$dir/put.err"
  local inode
  inode=$(stat -c %i "$out/bin/tool")
  expect_exit 0 "get v2 over v1" vc get "${guarded[@]}" "${trust[@]}" "$name" -o "$out"
  check "get v2: the same tree" diff -r --no-dereference "$v2" "$out"
  check "get v2: an unchanged file is reused, not fetched" \
    [ "$(stat -c %i "$out/bin/tool")" == "$inode" ]
  check "get v2: nothing left beside the folder" \
    [ -z "$(find "$dir" -maxdepth 1 -name 'out.verity-*')" ]

  # ---- get -o adopts only inodes this user owns wholly: an executable DIR holds with the right
  # bytes but mode 4755 (setuid) and a second link is copied, and what the old link writes later
  # stays out
  chmod 4755 "$out/bin/tool"
  ln "$out/bin/tool" "$dir/second-link"
  expect_exit 0 "get over a setuid, twice-linked file" \
    vc get "${guarded[@]}" "${trust[@]}" "$name" -o "$out"
  check "the file got is 0755 with one link (stat: $(stat -c '%a %h' "$out/bin/tool"))" \
    [ "$(stat -c '%a %h' "$out/bin/tool")" == "755 1" ]
  echo tampered >"$dir/second-link"
  check "a write through the old link after the get changes nothing got" \
    cmp -s "$v2/bin/tool" "$out/bin/tool"
  rm -f "$dir/second-link"

  # ---- a manifest from another release under this name: rollback refused, nothing switched
  store_read "$name" "$dir/name-v2"
  store_write "$name" "$dir/name-v1"
  rc=0
  vc get "${guarded[@]}" "${trust[@]}" "$name" -o "$out" 2>"$dir/err" || rc=$?
  check "rollback to v1: exit 3 (got $rc: $(cat "$dir/err"))" [ "$rc" -eq 3 ]
  check "rollback to v1: the message says rollback" grep -q "rollback" "$dir/err"
  check "rollback to v1: the folder still holds v2" diff -r --no-dereference "$v2" "$out"
  store_write "$name" "$dir/name-v2"

  # ---- a file's blob swapped in the store: refused, nothing written
  local tool_digest
  tool_digest=$(grep " bin/tool\$" <(vc ls "${guarded[@]}" "${trust[@]}" "$name") | cut -d' ' -f4)
  head -c 70000 /dev/urandom >"$dir/swapped"
  store_blob_write "$tool_digest" "$dir/swapped"
  rc=0
  vc get "${guarded[@]}" "${trust[@]}" "$name" -o "$dir/fresh" 2>"$dir/err" || rc=$?
  check "a swapped blob: get exits 3 (got $rc: $(cat "$dir/err"))" [ "$rc" -eq 3 ]
  check "a swapped blob: no folder" [ ! -e "$dir/fresh" ]
  check "a swapped blob: nothing left beside it" \
    [ -z "$(find "$dir" -maxdepth 1 -name 'fresh.verity-*')" ]
  # The folder already holding v2 needs no byte of the swapped blob: it stays as it is.
  expect_exit 0 "a swapped blob: a get over a verified copy fetches nothing" \
    vc get "${guarded[@]}" "${trust[@]}" "$name" -o "$out"
  check "a swapped blob: the folder still holds v2" diff -r --no-dereference "$v2" "$out"

  # ---- a statement says whether its name means a tree or a file, and clients act on what it
  # signs. The server refuses a file's statement for a tree's digest; planted by a writer of the
  # store (signed by the publisher, for a file), the name is never read as a tree.
  local as_file=tree/as-file
  expect_exit 0 "sign a file's statement for the tree's digest" \
    vc sign "${guarded[@]}" "$as_file" "$tree1" --key="$keys/publisher.pem" \
    --state-dir="$dir/publisher" --out="$dir/as-file.statement"
  rc=0
  vc sign "${guarded[@]}" "$as_file" "$tree1" --key="$keys/publisher.pem" \
    --state-dir="$dir/publisher" --store 2>"$dir/err" || rc=$?
  check "the server refuses a file's statement for a tree (exit $rc)" [ "$rc" -eq 1 ]
  check "the server says why ($(cat "$dir/err"))" grep -q "says it means a file" "$dir/err"
  { printf '%s\n%s\0' "$tree1" "$as_file"; cat "$dir/as-file.statement"; } >"$dir/as-file.object"
  store_write "$as_file" "$dir/as-file.object"
  rm -rf "$dir/as-file.out"
  rc=0
  vc get "${guarded[@]}" "${trust[@]}" "$as_file" -o "$dir/as-file.out" 2>"$dir/err" || rc=$?
  check "a name signed as a file: get -o fetches the file (exit $rc: $(cat "$dir/err"))" \
    [ "$rc" -eq 0 -a -f "$dir/as-file.out" ]
  rm -rf "$dir/as-file.out"
  mkdir "$dir/as-file.out"
  rc=0
  vc get "${guarded[@]}" "${trust[@]}" "$as_file" --tree -o "$dir/as-file.out" 2>"$dir/err" ||
    rc=$?
  check "a name signed as a file: --tree refused (exit $rc)" [ "$rc" -ne 0 ]
  check "a name signed as a file: the message says so" \
    grep -q "is signed as a file, not a tree" "$dir/err"
  check "a name signed as a file: no tree written" [ -z "$(ls -A "$dir/as-file.out")" ]
  rc=0
  vc ls "${guarded[@]}" "${trust[@]}" "$as_file" >/dev/null 2>"$dir/err" || rc=$?
  check "a name signed as a file: ls refuses to list it (exit $rc)" [ "$rc" -ne 0 ]

  # ---- a file is what it was stored as, never what its first bytes look like: a manifest's
  # bytes put as a file are fetched as a file. Manifests that escape, marked as trees by a
  # writer of the store (the server refuses them as trees): refused, nothing written outside.
  local kind
  for kind in dotdot symlink; do
    evil_manifest "$dir/evil-$kind" "$kind"
    local evil
    evil=$(vc put "${guarded[@]}" "$dir/evil-$kind" | cut -d' ' -f1)
    rm -rf "$dir/x" && mkdir -p "$dir/x"
    expect_exit 0 "a file that begins as a manifest: get -o FILE" \
      vc get "${guarded[@]}" "$evil" -o "$dir/x/as-file"
    check "a file that begins as a manifest: fetched as its bytes" \
      cmp -s "$dir/evil-$kind" "$dir/x/as-file"
    rm -f "$dir/x/as-file"
    rc=0
    vc get "${guarded[@]}" "$evil" --tree -o "$dir/x/evil" 2>"$dir/err" || rc=$?
    check "a $kind manifest read with --tree: refused (exit $rc: $(cat "$dir/err"))" [ "$rc" -ne 0 ]
    check "a $kind manifest read with --tree: the message says so" \
      grep -q "not a valid tree manifest" "$dir/err"
    store_mark_tree "$evil"
    rc=0
    vc get "${guarded[@]}" "$evil" -o "$dir/x/evil" 2>"$dir/err" || rc=$?
    check "a $kind manifest marked as a tree: refused (exit $rc: $(cat "$dir/err"))" [ "$rc" -ne 0 ]
    check "a $kind manifest marked as a tree: the message says so" \
      grep -q "not a valid tree manifest" "$dir/err"
    check "a $kind manifest: nothing written" \
      [ -z "$(ls -A "$dir/x")" -a ! -e "$dir/escaped" -a ! -e "$work/outside" ]
  done

  # ---- names that a terminal would act on: `ls` prints them escaped, one entry a line
  mkdir -p "$dir/odd"
  echo odd >"$dir/odd/"$'red\e[31m\nline'
  ln -s $'\e]0;title\a' "$dir/odd/link"
  local odd
  odd=$(vc put "${guarded[@]}" "$dir/odd" 2>/dev/null | cut -d' ' -f1)
  vc ls "${guarded[@]}" "$odd" >"$dir/odd.ls"
  check "ls: one line per entry ($(wc -l <"$dir/odd.ls"))" [ "$(wc -l <"$dir/odd.ls")" -eq 2 ]
  check "ls: no escape byte printed" eval "! grep -q $'\e' '$dir/odd.ls'"
  check "ls: the name escaped" grep -qF 'red\x1b[31m\nline' "$dir/odd.ls"

  # ---- a folder a tree cannot hold: refused by put, by name
  mkdir -p "$dir/bad/sub"
  ln -s ../../outside "$dir/bad/sub/up"
  rc=0
  vc put "${guarded[@]}" "$dir/bad" 2>"$dir/err" || rc=$?
  check "an escaping symlink: put refuses (exit $rc)" [ "$rc" -eq 1 ]
  check "an escaping symlink: the message names it" grep -q "sub/up" "$dir/err"
  rm "$dir/bad/sub/up"
  mkfifo "$dir/bad/sub/pipe"
  rc=0
  vc put "${guarded[@]}" "$dir/bad" 2>"$dir/err" || rc=$?
  check "a FIFO: put refuses (exit $rc)" [ "$rc" -eq 1 ]
  check "a FIFO: the message names it" grep -q "sub/pipe" "$dir/err"
}
