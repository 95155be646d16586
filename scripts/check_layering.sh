#!/usr/bin/env bash
# Fails if an #include runs against the architecture in docs/architecture.md: each folder may
# include only the folders listed for it; lib/'s rooms only the rooms below them, while any
# other folder that may use lib/ may use all of them (tests, *_test.cc and *testing* files may
# also include the test support they need). Prints each offending line.
set -euo pipefail
cd "$(dirname "$0")/.."

# FOLDER: the folders its product code may include from (besides itself).
declare -A allowed=(
  [lib/base]=""
  [lib/hash]="lib/base"
  [lib/tree]="lib/base lib/hash"
  [lib/fec]="lib/base"
  [lib/cache]="lib/base lib/hash"
  [lib/trust]="lib/base lib/hash lib/tree"
  [lib/manifest]="lib/base lib/hash lib/tree"
  [lib/tlog]="lib/base lib/hash lib/tree lib/trust"
  [lib/testing]="lib/base lib/hash lib/tree"
  [proto]="lib"
  [server/store]="lib"
  [server/store/file]="lib server/store"
  [server/store/s3]="lib server/store"
  [server/store/cache]="lib server/store"
  [server/metrics]="lib"
  [server/auth]="lib"
  [server/dispatch]="lib server/store server/metrics"
  [server/upkeep]="lib server/store server/metrics server/dispatch"
  [server/log]="lib server/store"
  [server/rpc]="lib proto server/store server/dispatch server/metrics server/auth server/upkeep server/log"
  [server]="lib proto server/store server/store/file server/store/s3 server/store/cache server/dispatch server/metrics server/auth server/rpc server/upkeep server/log"
  [client/include]="proto"
  [client/sdk]="lib proto client/include"
  [client/names]="lib client/include client/sdk"
  [client/mount]="lib client/include client/sdk client/names"
  [client/sync]="lib client/include client/sdk client/names"
  [client/witness]="lib client/include client/sdk"
  [client/cli]="lib client/include client/sdk client/names client/mount client/sync client/witness"
)
# What tests (and test support) may include on top.
test_support="lib lib/base lib/cache lib/hash lib/tree lib/fec lib/trust lib/manifest lib/tlog lib/testing proto client/testing server/store server/store/file server/store/cache server/store/testing server/store/file/testing server/store/s3/testing server/upkeep/testing client/sdk client/names client/mount client/sync client/cli"

bad=0
while IFS= read -r file; do
  dir=$(dirname "$file")
  [[ -v allowed[$dir] ]] || continue
  is_test=0
  [[ $file == *_test.cc || $file == *testing* ]] && is_test=1
  while IFS= read -r line; do
    inc=${line#*\"}; inc=${inc%\"*}
    case $inc in verity/*) inc_dir=client/include ;; */*) inc_dir=$(dirname "$inc") ;; *) continue ;; esac
    [[ $inc_dir == "$dir" ]] && continue
    # The generated wire API is part of proto/.
    [[ $inc_dir == proto/* ]] && inc_dir=proto
    [[ $inc_dir == "$dir" ]] && continue
    # Outside lib/, its rooms are one: "lib" allows them all (lib/testing is test support).
    [[ $dir != lib/* && $inc_dir == lib/* && $inc_dir != lib/testing ]] && inc_dir=lib
    ok=0
    for a in ${allowed[$dir]}; do [[ $inc_dir == "$a" ]] && ok=1; done
    if ((is_test)); then for a in $test_support; do [[ $inc_dir == "$a" ]] && ok=1; done; fi
    # Project folders only: Abseil, gRPC, gtest and the rest are not ours to layer.
    case $inc_dir in lib* | proto* | server* | client*) ;; *) ok=1 ;; esac
    if ((!ok)); then
      echo "check_layering: $file includes $inc" >&2
      bad=1
    fi
  done < <(grep -E '^#include "' "$file" || true)
done < <(git ls-files '*.cc' '*.h')
((bad)) && exit 1
echo "check_layering: every #include follows docs/architecture.md"
