#!/usr/bin/env bash
# verityd --auth_tokens with the `verity` CLI: each role through $VERITY_TOKEN and --token-file,
# the exit code of a refused call, a SIGHUP that removes and adds tokens (and one that is
# refused, keeping the old grants), and no token anywhere in the log or the metrics.
# Usage: auth_e2e_test.sh PATH_TO_VERITYD PATH_TO_VERITY
set -euo pipefail
source "$(dirname "$0")/verityd_test_lib.sh"
init_test auth-e2e "$1" "$2"

read_token=read-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
write_token=write-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
admin_token=admin-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
new_token=new-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
tokens=$work/tokens
printf '# roles for this test\nread %s\nwrite %s\nadmin %s\n' \
  "$read_token" "$write_token" "$admin_token" >"$tokens"
printf '%s\n' "$admin_token" >"$work/admin.token"

head -c 100000 /dev/urandom >"$work/blob"
head -c 5000 /dev/urandom >"$work/other"

start_server auth --listen=127.0.0.1:0 --store_dir="$work/store" --auth_tokens="$tokens"
pid=$server_pid
srv=(--server="127.0.0.1:$server_port")
check "the log says auth is on, with counts only" grep -q "auth: on, 3 tokens, 0 identities" \
  "$server_log"

as() { local token=$1; shift; VERITY_TOKEN=$token vc "$@"; }

expect_exit 6 "put without a token" vc put "${srv[@]}" "$work/blob"
expect_exit 6 "put with an unknown token" as "unknown-0123456789abcdef" put "${srv[@]}" "$work/blob"
expect_exit 6 "put with the read token" as "$read_token" put "${srv[@]}" "$work/blob"
expect_exit 0 "put with the write token" as "$write_token" put "${srv[@]}" "$work/blob" \
  --name=kept
expect_exit 0 "put with the admin token from --token-file" \
  vc put "${srv[@]}" --token-file="$work/admin.token" "$work/other"
digest=$(as "$read_token" stat "${srv[@]}" kept | sed -n 's/^digest: //p')
check "stat by name with the read token" test -n "$digest"
expect_exit 0 "get with the read token" as "$read_token" get "${srv[@]}" "$digest" -o /dev/null
expect_exit 0 "ls with the read token" as "$read_token" ls "${srv[@]}"
expect_exit 6 "rm of a blob with the write token" as "$write_token" rm "${srv[@]}" "$digest"
expect_exit 0 "rm --force of a named blob with the admin token" \
  as "$admin_token" rm "${srv[@]}" --force "$digest"
other=$(as "$read_token" ls "${srv[@]}" | cut -d' ' -f1 | head -n 1)
as "$read_token" rm "${srv[@]}" "$other" 2>"$work/denied.err" || true
check "a denied rm says which role it needs" grep -q "needs the admin role; the caller has read" \
  "$work/denied.err"

# SIGHUP: the write token goes, a new one comes; the next call sees it.
printf 'read %s\nadmin %s\nwrite %s\n' "$read_token" "$admin_token" "$new_token" >"$tokens"
kill -HUP "$pid"
check "SIGHUP reloads" wait_for_log "$server_log" "SIGHUP: auth reloaded: 3 tokens" "$pid" 10
expect_exit 6 "the removed write token is refused" as "$write_token" put "${srv[@]}" "$work/blob"
expect_exit 0 "the new write token works" as "$new_token" put "${srv[@]}" "$work/blob"
printf 'superuser %s\n' "$admin_token" >"$tokens"
kill -HUP "$pid"
check "a malformed file is not loaded" wait_for_log "$server_log" "auth not reloaded" "$pid" 10
expect_exit 0 "and the old grants stay" as "$new_token" put "${srv[@]}" "$work/other"
check "verityd still runs" is_running "$pid"

# No token in the log, the metrics or the CLI's errors.
curl -sf "http://127.0.0.1:$metrics_port/metrics" >"$work/metrics.txt"
check "the metrics count the refused calls" grep -q 'code="PERMISSION_DENIED"' "$work/metrics.txt"
for token in "$read_token" "$write_token" "$admin_token" "$new_token"; do
  check "no token in the log" bash -c '! grep -qF "$1" "$2"' _ "$token" "$server_log"
  check "no token in the metrics" bash -c '! grep -qF "$1" "$2"' _ "$token" "$work/metrics.txt"
  check "no token in the CLI's errors" bash -c '! grep -qF "$1" "$2"' _ "$token" \
    "$work/denied.err"
done
expect_stop "verityd" "$pid"
