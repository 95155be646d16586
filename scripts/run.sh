#!/usr/bin/env bash
# The product's main job from a fresh Debian 12 machine: set-up, build, then run verityd in the
# foreground on its default store (./verityd-data), listening on 127.0.0.1:50051.
# Extra arguments go to verityd (e.g. --listen=127.0.0.1:0 --import_dir=DIR); Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bazel build //server:verityd //client/cli:verity
cat >&2 <<'HINT'
verityd starts below. In another terminal, for example:
  bazel-bin/client/cli/verity put README.md --name=readme
  bazel-bin/client/cli/verity get readme -o /tmp/readme.copy && fsverity digest /tmp/readme.copy
HINT
exec bazel-bin/server/verityd "$@"
