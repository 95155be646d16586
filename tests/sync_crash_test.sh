#!/usr/bin/env bash
# `verity sync` killed (SIGKILL, by strace's fault injection) at each step of a switch from v1
# to v2: every rename, symlink and unlink it makes (staged folder renamed into place, ..data
# renamed, half the top-level links, the status file, pruning). After each kill, ..data points
# at one whole version; a restart (`verity sync --once`) leaves the folder whole at v2: ..data,
# every top-level link and nothing else, the tree byte for byte, nothing of the attempt left.
# Usage: sync_crash_test.sh VERITYD VERITY
set -euo pipefail
here=$(dirname "$0")
source "$here/verityd_test_lib.sh"
init_test sync_crash_test "$1" "$2"
for var in $(compgen -v VERITYD_) $(compgen -v VERITY_); do unset "$var"; done
command -v strace >/dev/null || { fail "strace is missing (scripts/setup.sh installs it)"; exit 1; }

name=crash/app
start_server crash --listen=127.0.0.1:0 --store_dir="$work/store"
srv=(--server="127.0.0.1:$server_port")

# Two releases with top-level names in common, one only in v1, two only in v2 (one of them
# 250 bytes long), files changed and unchanged.
long=$(printf 'L%.0s' $(seq 250))
mkdir -p "$work/v1/conf" "$work/v1/bin" "$work/v1/old-only"
echo one >"$work/v1/conf/app.conf"
head -c 30000 /dev/urandom >"$work/v1/bin/tool"
chmod 0755 "$work/v1/bin/tool"
echo gone >"$work/v1/old-only/x"
ln -s conf/app.conf "$work/v1/link"
cp -a "$work/v1" "$work/v2"
echo two >"$work/v2/conf/app.conf"
rm -r "$work/v2/old-only"
mkdir -p "$work/v2/new-only"
echo new >"$work/v2/new-only/y"
echo long >"$work/v2/$long"
publish() { vc put "${srv[@]}" "$1" --name="$name" 2>/dev/null | cut -d' ' -f1; }
v1=$(publish "$work/v1")
dir=$work/dir
expect_exit 0 "v1 in place" vc sync "${srv[@]}" --once "$name" "$dir" 2>/dev/null
cp -a "$dir" "$work/pristine"
v2=$(publish "$work/v2")

# whole_at DIR RELEASE DIGEST: ..data points at DIGEST's folder, which holds RELEASE exactly.
whole_at() {
  [[ $(readlink "$1/..data") == "..${3/:/-}" ]] &&
    diff -r --no-dereference "$2" "$1/..data/" >/dev/null
}
# the_layout DIR RELEASE: the top-level links are exactly RELEASE's names, each to ..data.
the_layout() {
  local want got name
  want=$(ls -A "$2" | sort)
  got=$(ls -A "$1" | grep -v '^\.\.' | sort)
  [[ $got == "$want" ]] || return 1
  for name in $got; do [[ $(readlink "$1/$name") == "..data/$name" ]] || return 1; done
}

# killed_at CALL N FROM: DIR as FROM left it, then a sync killed at its Nth CALL; false if it
# made fewer such calls (it was not killed).
killed_at() {
  local rc=0
  rm -rf "$dir" && cp -a "$3" "$dir"
  timeout -k 5 120 strace -f -qq -o /dev/null -e trace="$1" -e inject="$1:signal=KILL:when=$2" \
    "$verity" sync "${srv[@]}" --once "$name" "$dir" 2>/dev/null || rc=$?
  [[ $rc -eq 137 ]]
}

# From v1 in place: the switch to v2. Then from a switch to v2 just made (v1 kept for its
# readers): a restart, which prunes v1.
expect_exit 0 "v2 switched to" vc sync "${srv[@]}" --once "$name" "$work/pristine2" 2>/dev/null
rm -rf "$work/pristine2" && cp -a "$work/pristine" "$work/pristine2"
expect_exit 0 "v2 switched to" vc sync "${srv[@]}" --once "$name" "$work/pristine2" 2>/dev/null
check "v1 kept for its readers" test -d "$work/pristine2/..${v1/:/-}"
rounds=0
for start in pristine pristine2; do
  for call in renameat2 renameat symlinkat unlinkat; do
    for ((n = 1; n < 200; n++)); do
      killed_at "$call" "$n" "$work/$start" || break
      rounds=$((rounds + 1))
      what="from $start, killed at $call #$n"
      check "$what: ..data points at one whole version ($(readlink "$dir/..data"))" \
        eval 'whole_at "$dir" "$work/v1" "$v1" || whole_at "$dir" "$work/v2" "$v2"'
      expect_exit 0 "$what: restarted" vc sync "${srv[@]}" --once "$name" "$dir" 2>/dev/null
      check "$what: whole at v2 after the restart" whole_at "$dir" "$work/v2" "$v2"
      check "$what: its top-level links and no other ($(ls -A "$dir" | tr '\n' ' '))" \
        the_layout "$dir" "$work/v2"
      check "$what: read through the links" cmp -s "$work/v2/$long" "$dir/$long"
      check "$what: nothing of the attempt left ($(ls -A "$dir" | grep '^\.\.' | tr '\n' ' '))" \
        eval '[ -z "$(ls -A "$dir" | grep -E "^\.\.(staging-|tmp-)")" ]'
      # A restart keeps no version but the current: v1 goes (from pristine, v1 is kept when
      # the restart is what switched, for readers inside it).
      if [[ $start == pristine2 ]]; then
        check "$what: v1 pruned" test ! -e "$dir/..${v1/:/-}"
      fi
    done
  done
done
check "killed at $rounds steps, at least 20" [ "$rounds" -ge 20 ]
