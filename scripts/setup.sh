#!/usr/bin/env bash
# Idempotent set-up on Debian 12: installs the build's Debian packages and fetches BoringSSL's
# Debian source package into .deps/boringssl, and Abseil's (for --config=tsan) into .deps/abseil.
# Safe to run again; does nothing when all is there.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  bazel-bootstrap g++ xz-utils ca-certificates
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev prometheus-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev
  # libcurl (SigV4 signing, the multi interface) and pugixml: the S3 store's client
  libcurl4-openssl-dev libpugixml-dev
  # libmicrohttpd: `verity witness` serves C2SP tlog-witness over HTTP (client/witness)
  libmicrohttpd-dev
  # dpkg-dev: dpkg-source, which applies Debian's patches to the Abseil source (fetch_abseil)
  dpkg-dev
  # clang-format-14: scripts/check_format.sh
  clang-format-14
  # clang-14 with libFuzzer and its sanitizer runtimes: --config=asan (and tests/fuzz/run.sh)
  clang-14 libfuzzer-14-dev libclang-rt-14-dev
  # lld-14: LLVM's linker (.bazelrc: -fuse-ld=lld)
  lld-14
  fsverity curl python3
  # strace: tests/sync_crash_test.sh kills verity sync at each step of a switch (fault injection)
  strace
  # veritysetup: the reference for dm-verity trees and FEC (lib/dm_verity*_test.cc); ISA-L: FEC
  cryptsetup-bin libisal-dev
  # OpenSSL 3: libcrypto.so.3 verifies fs-verity signatures (lib/trust/openssl3_pkcs7.cc, dlopen), built
  # against libssl-dev's headers; the openssl tool makes keys and certificates for its oracle tests
  libssl3 libssl-dev openssl
  # fuse3 (fusermount3) and libfuse3-dev 3.14: `verity mount` (client/mount) and tests/mount_test
  fuse3 libfuse3-dev
  # python3-yaml: tests/k8s_manifests_test.sh parses the rendered manifests
  python3-yaml
  # python3-cryptography: tests/interop/tlog_check.py verifies the log's Ed25519 notes
  python3-cryptography
  # prometheus: promtool and a real server for tests/metrics_test.sh and prometheus_rules_test.sh;
  # its service is not used
  prometheus
  # podman, buildah, runc: deploy/image/build.sh and tests/container_test.sh (runc, not crun: see
  # deploy/image/containers.conf); catatonit: podman's pod infra (pause) image
  podman buildah runc catatonit
  # ceph-mon, ceph-osd, radosgw, ceph-common: a real single-node Ceph with S3 for tests
  # (tests/testing/ceph_cluster.sh); installing them starts no daemon
  ceph-mon ceph-osd radosgw ceph-common
)
BORINGSSL_PACKAGE=android-platform-external-boringssl
BORINGSSL_VERSION=13.0.0+r24

as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

install_packages() {
  local missing=()
  # tests/k8s_manifests_test.sh renders with kubectl: Debian's, unless one is installed already
  # (a newer one from the Kubernetes repository must not be replaced).
  command -v kubectl >/dev/null || missing+=(kubernetes-client)
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  echo "setup: installing ${missing[*]}"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}"
}

# A private apt configuration in .deps/apt with deb-src entries derived from the machine's own
# Debian sources, so the machine's apt configuration is left untouched. `private_apt_source ARGS`
# runs `apt-get source ARGS` with it in .deps/apt/src; the caller removes .deps/apt afterwards.
private_apt_source() {
  local work=$PWD/.deps/apt
  rm -rf "$work"
  mkdir -p "$work/sources.list.d" "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    sed 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
      >"$work/sources.list.d/debian-src.sources"
  else
    grep -h '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' \
      >"$work/sources.list.d/debian-src.list"
  fi
  cat >"$work/apt.conf" <<CONF
Dir::Etc::SourceList "/dev/null";
Dir::Etc::SourceParts "$work/sources.list.d";
Dir::State::Lists "$work/lists";
Dir::Cache "$work/cache";
CONF
  APT_CONFIG=$work/apt.conf apt-get update -q
  # apt-get source checks the .dsc signature and the tarballs' checksums.
  (cd "$work/src" && APT_CONFIG=$work/apt.conf apt-get source -q "$@")
}

fetch_boringssl() {
  local dest=.deps/boringssl work=.deps/apt
  [[ -f $dest/.fetched-$BORINGSSL_VERSION ]] && return 0
  rm -rf "$dest"
  echo "setup: fetching $BORINGSSL_PACKAGE $BORINGSSL_VERSION source"
  private_apt_source --download-only "$BORINGSSL_PACKAGE"
  local orig="$work/src/${BORINGSSL_PACKAGE}_$BORINGSSL_VERSION.orig.tar.xz"
  [[ -f $orig ]] || { echo "setup: expected $orig; Debian now ships another version" >&2; exit 1; }
  mkdir -p "$dest"
  tar -xJf "$orig" -C "$dest" --strip-components=1
  touch "$dest/.fetched-$BORINGSSL_VERSION"
  rm -rf "$work"
}

# Abseil's source package at exactly the installed libabsl-dev version, unpacked by dpkg-source
# with Debian's patches (options.h: inline namespace debian3, no std:: aliases), so that its
# headers are /usr/include/absl's. Only --config=tsan builds it (WORKSPACE: @com_google_absl).
fetch_abseil() {
  local dest=.deps/abseil work=.deps/apt version
  version=$(dpkg-query -W -f='${Version}' libabsl-dev)
  [[ -f $dest/.fetched-$version ]] && return 0
  rm -rf "$dest"
  echo "setup: fetching abseil $version source"
  # Only --config=tsan needs it: when Debian no longer serves this version (libabsl-dev is behind a
  # security update), warn rather than fail the set-up of the normal build.
  private_apt_source "abseil=$version" || {
    echo "setup: no abseil $version source; --config=tsan needs it (upgrade libabsl-dev)" >&2
    rm -rf "$work"
    return 0
  }
  local tree
  tree=$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -name 'abseil-*')
  [[ -n $tree ]] || { echo "setup: apt-get source abseil=$version unpacked nothing" >&2; exit 1; }
  cmp -s "$tree/absl/base/options.h" /usr/include/absl/base/options.h ||
    { echo "setup: $tree/absl/base/options.h differs from /usr/include/absl's" >&2; exit 1; }
  mv "$tree" "$dest"
  touch "$dest/.fetched-$version"
  rm -rf "$work"
}

install_packages
fetch_boringssl
fetch_abseil
