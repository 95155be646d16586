#!/usr/bin/env bash
# Builds verityd's distroless image, localhost/verityd:dev (and :VERSION), from the Bazel-built
# binaries with buildah in private container storage; or, with --rootfs-only DIR, only assembles
# the image's root filesystem, for deploy/image/Containerfile (Docker elsewhere).
#
# Usage: build.sh [--verityd PATH --verity PATH --health PATH] [--storage DIR] [--tag TAG]
#                 [--rootfs-only DIR]
#   --rootfs-only DIR   only write DIR/rootfs.tar, the context for Containerfile
#   --verityd/--verity/--health
#                       the binaries (default: `bazel build` them and take bazel-bin's)
#   --storage DIR       podman/buildah storage and config (default: .deps/containers in the
#                       repository); DIR/env.sh sets CONTAINERS_CONF, CONTAINERS_STORAGE_CONF
#                       and TMPDIR for running the image with podman afterwards
#
# The image holds only the three binaries (verityd, verity and verityd-health, the exec probe),
# every library `ldd` lists for them (with the dynamic loader), /etc/passwd and /etc/group
# naming uid/gid 65532 "nonroot", and /data (the store, owned by 65532). No shell, no package
# manager, and nothing secret: tokens and keys are mounted at run time.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=${BUILD_WORKSPACE_DIRECTORY:-$(cd "$here/../.." && pwd)}
verityd_bin="" verity_bin="" health_bin="" storage="" rootfs_only="" tags=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --verityd) verityd_bin=$2; shift 2 ;;
    --verity) verity_bin=$2; shift 2 ;;
    --health) health_bin=$2; shift 2 ;;
    --storage) storage=$2; shift 2 ;;
    --tag) tags+=("$2"); shift 2 ;;
    --rootfs-only) rootfs_only=$2; shift 2 ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 1 ;;
  esac
done

# The image's configuration, shared with the Containerfile (keep the two equal).
# Locked down: verityd refuses to start until a tokens file (ROLE TOKEN lines) is mounted at
# VERITYD_AUTH_TOKENS, e.g. from a Kubernetes Secret; `-e VERITYD_AUTH_TOKENS=` turns auth off,
# for trying it out only. Listening on every address in plaintext: verityd is a sidecar whose
# app reaches it over the pod's loopback, where tokens may go in plaintext (verityd refuses a
# token in plaintext from anywhere else); deployments that cross hosts set
# VERITYD_TLS_CERT/VERITYD_TLS_KEY (and VERITYD_TLS_CLIENT_CA for mTLS) and drop
# VERITYD_ALLOW_INSECURE.
image_env=(
  VERITYD_LISTEN=0.0.0.0:50051
  VERITYD_ALLOW_INSECURE=true
  VERITYD_AUTH_TOKENS=/etc/verityd/auth/tokens
  VERITYD_STORE_DIR=/data
  VERITYD_METRICS_LISTEN=0.0.0.0:9464
)
nonroot=65532

if [[ -z $verityd_bin || -z $verity_bin || -z $health_bin ]]; then
  (cd "$repo" && bazel build //server:verityd //client/cli:verity //deploy/image:verityd-health)
  verityd_bin=$repo/bazel-bin/server/verityd
  verity_bin=$repo/bazel-bin/client/cli/verity
  health_bin=$repo/bazel-bin/deploy/image/verityd-health
fi

# assemble_rootfs DIR TAR: the image's whole file system in DIR, owned by root except /data,
# then as TAR (a tar keeps the owners; a copy of a folder into an image would not).
assemble_rootfs() {
  local root=$1 tar=$2 lib
  rm -rf "$root"
  mkdir -p "$root/usr/local/bin" "$root/etc" "$root/data" "$root/tmp"
  chmod 1777 "$root/tmp"
  # Debug sections only: the symbol table stays for absl's stack traces.
  strip --strip-debug -o "$root/usr/local/bin/verityd" "$verityd_bin"
  strip --strip-debug -o "$root/usr/local/bin/verity" "$verity_bin"
  strip --strip-debug -o "$root/usr/local/bin/verityd-health" "$health_bin"
  chmod 0755 "$root"/usr/local/bin/*
  # Each library at the path the loader resolved it to; -L copies the file, not the symlink.
  for lib in $(ldd "$verityd_bin" "$verity_bin" "$health_bin" | grep -oE '/[^ ]+\.so[^ ]*' | sort -u); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
  [[ -e $root/lib64/ld-linux-x86-64.so.2 ]] || { echo "build.sh: no dynamic loader" >&2; exit 1; }
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/data:/sbin/nologin\n' \
    "$nonroot" "$nonroot" >"$root/etc/passwd"
  printf 'root:x:0:\nnonroot:x:%d:\n' "$nonroot" >"$root/etc/group"
  chmod 0755 "$root/data"
  tar --sort=name --numeric-owner --owner=0 --group=0 --mtime=@0 -C "$root" \
    --exclude=./data -cf "$tar" .
  tar --numeric-owner --owner="$nonroot" --group="$nonroot" --mtime=@0 -C "$root" \
    -rf "$tar" ./data
}

if [[ -n $rootfs_only ]]; then
  mkdir -p "$rootfs_only"
  assemble_rootfs "$rootfs_only/rootfs" "$rootfs_only/rootfs.tar"
  rm -rf "$rootfs_only/rootfs"
  echo "build.sh: root filesystem in $rootfs_only/rootfs.tar"
  exit 0
fi

for tool in buildah podman; do
  command -v "$tool" >/dev/null || { echo "build.sh: $tool is missing (scripts/setup.sh installs it)" >&2; exit 1; }
done

# Private storage and configuration; the machine's /etc/containers is left alone.
storage=${storage:-$repo/.deps/containers}
mkdir -p "$storage/graph" "$storage/run" "$storage/tmp"
storage=$(cd "$storage" && pwd)
cat >"$storage/storage.conf" <<CONF
[storage]
driver = "overlay"
graphroot = "$storage/graph"
runroot = "$storage/run"
CONF
cat >"$storage/env.sh" <<ENV
export CONTAINERS_CONF=$here/containers.conf
export CONTAINERS_STORAGE_CONF=$storage/storage.conf
export TMPDIR=$storage/tmp
ENV
source "$storage/env.sh"

version=$(sed -nE 's/.*kVerityVersion\[\] = "([^"]+)".*/\1/p' "$repo/server/scrape_metrics.h" 2>/dev/null || true)
[[ ${#tags[@]} -gt 0 ]] || tags=(localhost/verityd:dev ${version:+localhost/verityd:$version})

rootfs=$storage/rootfs
assemble_rootfs "$rootfs" "$storage/rootfs.tar"
ctr=$(buildah from scratch)
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
buildah add --quiet "$ctr" "$storage/rootfs.tar" / >/dev/null
config=(--entrypoint '["/usr/local/bin/verityd"]' --cmd '' --user "$nonroot:$nonroot"
  --workingdir /data --port 50051/tcp --port 9464/tcp --stop-signal SIGTERM
  --label org.opencontainers.image.title=verityd
  --label org.opencontainers.image.version="${version:-dev}")
for e in "${image_env[@]}"; do config+=(--env "$e"); done
buildah config "${config[@]}" "$ctr"
buildah commit --quiet --rm "$ctr" "${tags[0]}" >/dev/null
trap - EXIT
for t in "${tags[@]:1}"; do buildah tag "${tags[0]}" "$t"; done
echo "build.sh: built ${tags[*]} ($(du -sh "$rootfs" | cut -f1) root filesystem); podman: source $storage/env.sh"
