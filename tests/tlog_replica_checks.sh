# The transparency log shared by replicas (sourced by signed_names_s3_test.sh, on a real Ceph):
# - two verityd replicas on one bucket, with the same log key, take signed names at once: one
#   log holds every statement, once, and a client that saw one replica's checkpoint accepts
#   the other's (consistent), as the publisher's audit through either does;
# - a replica SIGKILLed while names are being signed through it loses no statement it accepted:
#   every `verity sign --store` that exited 0 is proved in the log by the other replica.
# Needs verityd_test_lib.sh's helpers and $verity, $work.

# tlog_replica_checks STORE_FLAGS...: the checks, on the store the flags name.
tlog_replica_checks() {
  local keys=$work/tlog-keys
  mkdir -p "$keys"
  vc keygen --out="$keys/log.pem" --log-origin=replicas.test/log >/dev/null
  vc keygen --out="$keys/pub.pem" >/dev/null
  local logged=(--listen=127.0.0.1:0 "$@" --log_key="$keys/log.pem"
    --log_origin=replicas.test/log --checkpoint_interval=100ms)
  start_server tlog-a "${logged[@]}"
  local a_pid=$server_pid a=127.0.0.1:$server_port
  start_server tlog-b "${logged[@]}"
  local b_pid=$server_pid b=127.0.0.1:$server_port
  head -c 3000 /dev/urandom >"$work/tlog-blob"
  local digest
  digest=$(vc put --server="$a" "$work/tlog-blob" | cut -d' ' -f1)
  local publisher=(--key="$keys/pub.pem" --state-dir="$work/tlog-publisher" --store)
  # sign_names SERVER PREFIX COUNT: COUNT names signed and stored through SERVER, 4 at a time.
  sign_names() {
    seq 1 "$3" | xargs -P 4 -I{} timeout -k 5 60 "$verity" sign --server="$1" "$2-{}" \
      "$digest" "${publisher[@]}" >/dev/null
  }
  sign_names "$a" tlog-a 12 &
  local signer_a=$!
  sign_names "$b" tlog-b 12 &
  local signer_b=$!
  check "12 names signed through replica A while B takes 12" wait "$signer_a"
  check "12 names signed through replica B meanwhile" wait "$signer_b"
  local audit=(audit --log-key="$keys/log.pem.vkey" --key="$keys/pub.pem.pub")
  local out
  out=$(vc "${audit[@]}" --server="$a" --state-dir="$work/tlog-publisher" 2>&1) || true
  check "one log holds the 24 statements, each once, all known (audit through A)" \
    grep -qx "audited entries 0 to 24: 24 statements by the key, 0 unknown, 0 others" <<<"$out"
  cp -r "$work/tlog-publisher" "$work/tlog-publisher-b"
  rm -rf "$work/tlog-publisher-b/audit"
  out=$(vc "${audit[@]}" --server="$b" --state-dir="$work/tlog-publisher-b" 2>&1) || true
  check "B serves the same log (audit through B)" \
    grep -qx "audited entries 0 to 24: 24 statements by the key, 0 unknown, 0 others" <<<"$out"
  local client=(--log-key="$keys/log.pem.vkey" --trusted-keys="$keys/pub.pem.pub"
    --state-dir="$work/tlog-client")
  quiet() { "$@" >/dev/null; }
  check "a client accepts a name from A" quiet vc stat --server="$a" tlog-b-3 "${client[@]}"
  check "and from B, consistent with what A showed it" \
    quiet vc stat --server="$b" tlog-a-5 "${client[@]}"

  # SIGKILL A amid a stream of signed names through it.
  (
    for i in $(seq 1 20); do
      timeout -k 5 30 "$verity" sign --server="$a" "tlog-k-$i" "$digest" "${publisher[@]}" \
        >/dev/null 2>&1 || break
      echo "$i"
    done
  ) >"$work/tlog-accepted" &
  local stream=$!
  sleep 1.5
  kill -9 "$a_pid"
  wait "$stream" || true
  untrack "$a_pid"
  local accepted
  accepted=$(wc -l <"$work/tlog-accepted")
  check "some names were accepted before the kill ($accepted), not all" \
    test "$accepted" -gt 0 -a "$accepted" -lt 20
  local i lost=0
  for i in $(cat "$work/tlog-accepted"); do
    # B learns a checkpoint A committed within an interval: retry briefly.
    local tries=0
    until vc stat --server="$b" "tlog-k-$i" "${client[@]}" >/dev/null 2>&1; do
      tries=$((tries + 1))
      [[ $tries -lt 20 ]] || { lost=$((lost + 1)); echo "  tlog-k-$i is not proved"; break; }
      sleep 0.2
    done
  done
  check "every name accepted before the kill is proved in the log by B" test "$lost" -eq 0
  echo "tlog: $accepted names accepted through replica A before its SIGKILL, $lost not proved"
  expect_stop "stop replica B" "$b_pid"
}
