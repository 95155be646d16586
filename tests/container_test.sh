#!/usr/bin/env bash
# verityd's distroless image under podman: the image's contents and configuration; the sidecar
# Deployment of deploy/k8s/base, rendered through its podman overlay (deploy/k8s/podman) with
# `kubectl kustomize`, with `podman play kube`, auth on, a transparency-log witness beside it (the Secret from make-secrets.sh): the
# app reads an imported blob over the pod's loopback with its read token; a call without a token,
# a write with the read token and a token in plaintext through the hostPort are refused (exit 6);
# put, verified get and ls with the admin token from inside the pod's network namespace;
# /metrics and grpc.health.v1 (open) from the host through hostPorts; the verity-sync sidecar
# switching the app's folder to each signed release the publisher puts, whole (a reader never
# sees two mixed), with its exec probe and metrics; SIGTERM amid a 200 MiB get
# (it completes or leaves no file; verityd exits 0); the image refuses to start without a tokens
# file; a read-only root as uid 65532 with a read-only import volume (NOT_SERVING until the
# import is done); and the replicas tier's TLS: make-secrets.sh's certificate, the exec probe
# (verityd-health over TLS), tokens over TLS from off the pod, plaintext refused.
# Needs root; installs podman, buildah, runc and catatonit from Debian if missing. Everything
# podman creates lives in a private storage folder and is removed on exit.
# Usage: container_test.sh VERITYD VERITY HEALTH_PROBE BUILD_SH PODMAN_KUSTOMIZATION_YAML
#                          VERITYD_HEALTH
set -euo pipefail
source "$(dirname "$0")/verityd_test_lib.sh"
init_test container_test "$1" "$2"
for var in $(compgen -v VERITYD_) VERITY_SERVER VERITY_TOKEN; do unset "$var"; done
probe=$(realpath "$3")
build_sh=$4
# deploy/k8s/podman/kustomization.yaml: its parent holds base/ too, which the overlay builds on.
k8s_dir=$(dirname "$(dirname "$5")")
verityd_health=$(realpath "$6")
image=localhost/verityd:dev
export PATH=$PATH:/usr/sbin:/sbin  # iptables, for the port mappings

[[ $(id -u) -eq 0 ]] || { echo "FAIL: container_test needs root (podman)"; exit 1; }
# Any kubectl from Debian 12's 1.20 (scripts/setup.sh installs it where none is on the PATH) on.
command -v kubectl >/dev/null ||
  { echo "FAIL: kubectl is missing: scripts/setup.sh installs Debian's kubernetes-client"; exit 1; }
missing=()
for p in podman buildah runc catatonit; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "installing ${missing[*]}"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
    >/dev/null
fi

# Container storage outside TEST_TMPDIR: conmon's socket paths must stay short.
storage=$(mktemp -d /tmp/verityd-containers.XXXXXX)
# play kube names a Deployment's pod <name>-pod-0 and its containers <pod>-<container>.
pod_name=app-with-verityd-pod-0
ro_name=verityd-ro-$$
tls_name=verityd-tls-$$
kube_net_existed=yes  # play kube's network is removed on exit only if this test created it
cleanup() {
  # Only ever the private storage: never the machine's (an empty $storage would match every mount).
  [[ $storage == /tmp/verityd-containers.?* ]] || return 0
  [[ -f $storage/env.sh ]] && source "$storage/env.sh" || { rm -rf "$storage"; return; }
  podman play kube --down "$work/pod.yaml" >/dev/null 2>&1 || true
  podman pod rm -f "$pod_name" >/dev/null 2>&1 || true
  podman rm -f "$ro_name" "$tls_name" >/dev/null 2>&1 || true
  podman secret ls -q 2>/dev/null | xargs -r podman secret rm >/dev/null 2>&1 || true
  [[ $kube_net_existed == yes ]] || podman network rm -f podman-default-kube-network >/dev/null 2>&1 || true
  podman rmi -af >/dev/null 2>&1 || true
  # The overlay driver keeps its home bind-mounted.
  findmnt -rn -o TARGET | grep "^$storage" | sort -r | xargs -r umount -l 2>/dev/null || true
  rm -rf "$storage"
}
trap 'rc=$?; cleanup; (exit $rc); on_exit' EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# health PORT: the probe's one-line answer (SERVING, NOT_SERVING, error ...).
health() { "$probe" "127.0.0.1:$1" 2>&1 || true; }
# wait_health PORT WANT SECONDS
wait_health() {
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    [[ $(health "$1") == "$2" ]] && return 0
    sleep 0.1
  done
  return 1
}
exit_code() { podman inspect "$1" --format '{{.State.ExitCode}}'; }
# vc_in PID TOKEN ARGS...: verity to 127.0.0.1:50051 from inside the network namespace of process
# PID (a pod's infra container, or a container), where verityd sees a loopback peer, which may
# send a token in plaintext; TOKEN "" sends none. A call through a hostPort comes from the pod
# network's gateway instead, as one from another pod would.
vc_in() {
  local pid=$1 token=$2
  shift 2
  nsenter -t "$pid" -n -- env ${token:+VERITY_TOKEN=$token} timeout -k 5 60 "$verity" "$@" \
    --server=127.0.0.1:50051
}
running() { [[ $(podman inspect "$1" --format '{{.State.Running}}' 2>/dev/null) == true ]]; }

# ---- the image
start=$SECONDS
check "build.sh builds the image" \
  "$build_sh" --verityd "$verityd" --verity "$verity" --health "$verityd_health" --storage "$storage"
source "$storage/env.sh"
echo "image built in $((SECONDS - start)) s"
config=$(podman image inspect "$image" --format \
  '{{.Config.User}}|{{json .Config.Entrypoint}}|{{json .Config.Env}}|{{json .Config.ExposedPorts}}')
check "image runs as 65532:65532" grep -q '^65532:65532|' <<<"$config"
check "image entrypoint is verityd" grep -qF '["/usr/local/bin/verityd"]' <<<"$config"
for e in VERITYD_LISTEN=0.0.0.0:50051 VERITYD_ALLOW_INSECURE=true VERITYD_STORE_DIR=/data \
  VERITYD_METRICS_LISTEN=0.0.0.0:9464 VERITYD_AUTH_TOKENS=/etc/verityd/auth/tokens \
  '"50051/tcp"' '"9464/tcp"'; do
  check "image config has $e" grep -qF "$e" <<<"$config"
done
root=$(podman image mount "$image")
check "/data belongs to 65532" [ "$(stat -c %u:%g "$root/data")" = 65532:65532 ]
check "the image has no shell" [ ! -e "$root/bin/sh" -a ! -e "$root/usr/bin/sh" ]
check "/etc/passwd names nonroot" grep -q '^nonroot:x:65532:65532:' "$root/etc/passwd"
check "both binaries run in the image" podman run --rm --entrypoint /usr/local/bin/verity \
  "$image" digest /etc/passwd
check "verityd-health runs in the image (usage: exit 2)" bash -c \
  'podman run --rm --entrypoint /usr/local/bin/verityd-health "$1" >/dev/null 2>&1; [ $? -eq 2 ]' _ "$image"
check "the image holds no key or token" bash -c '! grep -rqE "PRIVATE KEY" "$1"/etc "$1"/data' _ "$root"
podman image unmount "$image" >/dev/null
# The Containerfile (for Docker elsewhere) must give the same image.
containerfile=$(dirname "$(realpath "$build_sh")")/Containerfile
"$build_sh" --verityd "$verityd" --verity "$verity" --health "$verityd_health" \
  --rootfs-only "$work/context" >/dev/null
check "podman build of the Containerfile works" podman build -q -f "$containerfile" \
  -t localhost/verityd:containerfile "$work/context"
same='{{.Config.User}} {{json .Config.Entrypoint}} {{json .Config.Env}} {{json .Config.ExposedPorts}} {{.Config.WorkingDir}} {{.Config.StopSignal}}'
check "the Containerfile's image has build.sh's configuration" [ \
  "$(podman image inspect "$image" --format "$same")" = \
  "$(podman image inspect localhost/verityd:containerfile --format "$same" | sed 's/"PATH=[^"]*",\?//')" ]
root=$(podman image mount localhost/verityd:containerfile)
check "the Containerfile's /data belongs to 65532" [ "$(stat -c %u:%g "$root/data")" = 65532:65532 ]
podman image unmount localhost/verityd:containerfile >/dev/null
# Locked down: without a tokens file at VERITYD_AUTH_TOKENS verityd does not start.
rc=0
out=$(timeout 60 podman run --rm "$image" 2>&1) || rc=$?
check "the image refuses to start without a tokens file (exit $rc: $(tail -n 1 <<<"$out"))" \
  bash -c '[ "$1" -eq 1 ] && grep -q /etc/verityd/auth/tokens <<<"$2"' _ "$rc" "$out"

# ---- the sidecar Pod, rendered from the Kubernetes example
mkdir -p "$work/import/sub"
echo "hello from the import volume" >"$work/import/hello.txt"
head -c $((200 * 1024 * 1024)) /dev/urandom >"$work/import/sub/big"
big_digest=$("$verity" digest "$work/import/sub/big" | cut -d' ' -f1)
grpc_port=$(free_port)
metrics_port=$(free_port)
podman network exists podman-default-kube-network || kube_net_existed=no
# Bazel's runfiles are symlinks into the source tree, outside the kustomization's root, which
# kustomize refuses to load: render a real copy.
cp -rL "$k8s_dir" "$work/k8s"
check "the podman overlay does not render before make-secrets.sh" \
  bash -c '! kubectl kustomize "$1" >/dev/null 2>&1' _ "$work/k8s/podman"
check "make-secrets.sh writes the tokens, the CA and the certificate" \
  bash -c 'bash "$1/make-secrets.sh" "$1" >/dev/null' _ "$work/k8s"
app_token=$(cat "$work/k8s/base/secrets/app-token")
admin_token=$(cat "$work/k8s/base/secrets/admin-token")
# The overlay mounts base/secrets/ from the host (podman 4.3's Secret volumes do not work):
# readable by gid 65532 only, as fsGroup and defaultMode 0440 make them on Kubernetes.
install -d -m 0750 -g 65532 "$work/pod-secrets"
install -d -m 0755 -o 65532 -g 65532 "$work/release"
install -d -m 0700 -o 65532 -g 65532 "$work/sync-state"
install -m 0440 -g 65532 "$work/k8s/base/secrets/"* "$work/pod-secrets/"
check "kubectl kustomize renders the podman overlay" \
  bash -c 'kubectl kustomize "$1" >"$2"' _ "$work/k8s/podman" "$work/rendered.yaml"
check "the rendered pod is base's Deployment, app and verityd" grep -q '^  name: app-with-verityd$' \
  "$work/rendered.yaml"
sed -e "s|/var/lib/verityd/import|$work/import|; s|/var/lib/verityd/secrets|$work/pod-secrets|" \
  -e "s|/var/lib/verityd/release|$work/release|; s|/var/lib/verityd/sync-state|$work/sync-state|" \
  -e "s|hostPort: 50051|hostPort: $grpc_port|; s|hostPort: 9464|hostPort: $metrics_port|" \
  "$work/rendered.yaml" >"$work/pod.yaml"
start=$SECONDS
check "podman play kube starts the Pod" podman play kube "$work/pod.yaml"
check "the Pod becomes SERVING on its hostPort" wait_health "$grpc_port" SERVING 60
echo "Pod serving in $((SECONDS - start)) s (import of 200 MiB included)"
# restartPolicy OnFailure: the app may fail (verityd not listening yet, or hello.txt not yet
# imported) and is restarted; between two attempts it is not running either, so wait for its end.
wait_app_done() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    [[ $(podman inspect "$1" --format '{{.State.Status}} {{.State.ExitCode}}') == "exited 0" ]] &&
      return 0
    sleep 0.1
  done
  return 1
}
check "the app container exits 0" wait_app_done "$pod_name-app" 30
check "the app read the imported blob over the pod's loopback with its token" \
  [ "$(podman logs "$pod_name-app" 2>/dev/null)" = "hello from the import volume" ]
check "the app exited 0" [ "$(exit_code "$pod_name-app")" = 0 ]
check "the witness beside verityd listens on the pod's loopback" \
  grep -q "listening on 127.0.0.1:7380" <(podman logs "$pod_name-witness" 2>&1)
sec=$(podman inspect "$pod_name-verityd" --format \
  '{{.Config.User}} {{.HostConfig.ReadonlyRootfs}} {{json .HostConfig.SecurityOpt}} {{len .HostConfig.CapAdd}}')
check "verityd runs as 65532, read-only, no-new-privileges, no capabilities added ($sec)" \
  grep -qE '^65532(:65532)? true .*no-new-privileges.* 0$' <<<"$sec"
check "verityd's process has no effective capabilities" \
  grep -q '^CapEff:[[:space:]]*0*$' "/proc/$(podman inspect "$pod_name-verityd" --format '{{.State.Pid}}')/status"

infra_pid=$(podman inspect --format '{{.State.Pid}}' \
  "$(podman pod inspect "$pod_name" --format '{{.InfraContainerID}}')")
srv=(--server="127.0.0.1:$grpc_port")
expect_exit 6 "a token in plaintext through the hostPort (no loopback peer for verityd) is refused" \
  env VERITY_TOKEN="$admin_token" timeout -k 5 60 "$verity" ls "${srv[@]}"
expect_exit 6 "a call without a token is refused" vc_in "$infra_pid" "" ls
expect_exit 6 "a call with an unknown token is refused" vc_in "$infra_pid" "not-a-token-of-this-pod-0123456789" ls
head -c $((3 * 1024 * 1024 + 17)) /dev/urandom >"$work/blob"
expect_exit 6 "the app's read token cannot put" vc_in "$infra_pid" "$app_token" put "$work/blob"
put=$(vc_in "$infra_pid" "$admin_token" put "$work/blob" 2>&1) || true
digest=${put%% *}
check "verity put with the admin token ($put)" [ "$digest" = "$("$verity" digest "$work/blob" | cut -d' ' -f1)" ]
check "verity get with the app's read token, verified" \
  vc_in "$infra_pid" "$app_token" get "$digest" -o "$work/blob.out"
check "what came back is what went in" cmp -s "$work/blob" "$work/blob.out"
check "the imported 200 MiB blob is there by name" \
  grep -q "$big_digest .* sub/big" <<<"$(vc_in "$infra_pid" "$app_token" ls)"
metrics=$(curl -sf "http://127.0.0.1:$metrics_port/metrics" || true)
check "/metrics through its hostPort has verityd_build_info" \
  grep -q '^verityd_build_info{version="[^"]*"} 1' <<<"$metrics"
check "health through the hostPort is SERVING" [ "$(health "$grpc_port")" = SERVING ]

# ---- the verity-sync sidecar: the publisher signs a release (a tree), then a new one; the app's
# folder switches to each whole. This test reads /srv/release where the app would (a host folder).
release_status() { sed -n "s/^$1: //p" "$work/release/..verity-sync.status" 2>/dev/null; }
# publish_release DIR: app/release, signed with make-secrets.sh's key; prints the tree's digest.
publish_release() {
  vc_in "$infra_pid" "$admin_token" put "$1" --name=app/release \
    --sign-key="$work/k8s/base/secrets/names.key" --state-dir="$work/publisher" 2>/dev/null |
    cut -d' ' -f1
}
# wait_release DIGEST: SIGHUP (sync now), then until the status names DIGEST.
wait_release() {
  local i
  podman kill --signal HUP "$pod_name-verity-sync" >/dev/null
  for ((i = 0; i < 300; i++)); do
    [[ $(release_status digest) == "$1" ]] && return 0
    sleep 0.1
  done
  echo "  status: $(tr '\n' ' ' <"$work/release/..verity-sync.status" 2>/dev/null)"
  return 1
}
mkdir -p "$work/rel1/docs" "$work/rel1/bin"
echo "release 1" >"$work/rel1/docs/readme"
echo 1 >"$work/rel1/docs/check"
head -c 300000 /dev/urandom >"$work/rel1/bin/model"
rel1=$(publish_release "$work/rel1")
check "the publisher signs release 1 ($rel1)" grep -qE '^sha256:[0-9a-f]{64}$' <<<"$rel1"
check "verity-sync switches the app's folder to release 1" wait_release "$rel1"
check "release 1's statement is in the log, under a checkpoint the witness cosigned" \
  vc_in "$infra_pid" "$app_token" stat app/release --state-dir="$work/stat-state" \
  --log-key="$work/k8s/base/secrets/log.vkey" --witness-keys="$work/k8s/base/secrets/witness.vkey"
check "the app reads release 1 through /srv/release" \
  [ "$(cat "$work/release/docs/readme")" = "release 1" ]
check "the exec probe says ready" podman exec "$pod_name-verity-sync" \
  /usr/local/bin/verity sync --probe app/release /srv/release
start_version_reader "$work/release"
cp -a "$work/rel1" "$work/rel2"
echo "release 2" >"$work/rel2/docs/readme"
echo 2 >"$work/rel2/docs/check"
rel2=$(publish_release "$work/rel2")
check "verity-sync switches to release 2" wait_release "$rel2"
check "the app reads release 2" [ "$(cat "$work/release/docs/readme")" = "release 2" ]
check "verity-sync's rollback state is on the host folder that outlives the pod" \
  compgen -G "$work/sync-state/names-*.seen"
stop_version_reader
check "a reader during the switch never saw the two releases mixed ($reader_rounds rounds)" \
  [ "$reader_rounds" -gt 0 -a "$reader_mixed" -eq 0 ]
check "the unchanged model was hard-linked, not fetched again" \
  grep -q "switched to $rel2 .* 2 fetched" <<<"$(podman logs "$pod_name-verity-sync" 2>&1)"
check "verity-sync's metrics count 2 switches" grep -q '^verity_sync_switches_total 2' \
  <<<"$(nsenter -t "$infra_pid" -n -- curl -sf http://127.0.0.1:9465/metrics)"

# ---- SIGTERM (podman stop) amid a 200 MiB get
rm -f "$work/big.out"
# nsenter execs env, which execs verity: $! is the get.
nsenter -t "$infra_pid" -n -- env VERITY_TOKEN="$app_token" "$verity" get "$big_digest" \
  --server=127.0.0.1:50051 -o "$work/big.out" 2>"$work/get-big.log" &
get_pid=$!
tracked_pids+=("$get_pid")
for ((i = 0; i < 100; i++)); do  # until bytes are arriving
  tmp=$(ls "$work"/.big.out.verity-* 2>/dev/null | head -n 1 || true)
  [[ -n $tmp && $(stat -c %s "$tmp" 2>/dev/null || echo 0) -gt 0 ]] && break
  [[ -e $work/big.out ]] && break
  sleep 0.05
done
in_flight=no
[[ ! -e $work/big.out ]] && in_flight=yes
start=$SECONDS
podman stop -t 30 "$pod_name-verityd" >/dev/null
echo "podman stop took $((SECONDS - start)) s; the get was in flight at SIGTERM: $in_flight"
check "the get ends" wait_for_exit "$get_pid" 30
echo "the get exited $exit_rc; verityd: $(podman logs "$pod_name-verityd" 2>&1 | grep -E 'received|stopped|anyway' | tr '\n' ' ')"
if [[ $exit_rc -eq 0 ]]; then
  check "the get completed during the drain and is intact" cmp -s "$work/import/sub/big" "$work/big.out"
else
  echo "the get failed (exit $exit_rc): $(tail -n 1 "$work/get-big.log")"
  check "a failed get leaves no file" [ ! -e "$work/big.out" ]
fi
check "no temporary file is left beside -o" [ -z "$(ls "$work"/.big.out.verity-* 2>/dev/null)" ]
check "verityd exited 0 on SIGTERM" [ "$(exit_code "$pod_name-verityd")" = 0 ]
check "verityd logged a clean stop" grep -qE 'stopped|exiting anyway' \
  <<<"$(podman logs "$pod_name-verityd" 2>&1)"
check "play kube --down removes the Pod" podman play kube --down "$work/pod.yaml"
check "no Pod is left" [ -z "$(podman pod ps -q)" ]

# ---- read-only root as uid 65532, a volume store and a read-only import
mkdir -p "$work/ro-store" "$work/ro-auth"
chown 65532:65532 "$work/ro-store"
install -m 0440 -g 65532 "$work/k8s/base/secrets/tokens" "$work/ro-auth/tokens"
grpc_port=$(free_port)
start=$SECONDS
# --read-only-tmpfs=false: no tmpfs on /tmp or /run either, so any write outside the store fails.
check "podman run --read-only --user 65532:65532 starts" podman run -d --name "$ro_name" \
  --read-only --read-only-tmpfs=false --user 65532:65532 --cap-drop ALL \
  --security-opt no-new-privileges -v "$work/ro-store:/data" -v "$work/import:/import:ro" \
  -v "$work/ro-auth:/etc/verityd/auth:ro" \
  -p "127.0.0.1:$grpc_port:50051" "$image" --import_dir=/import >/dev/null
seen=""
for ((i = 0; i < 600; i++)); do
  h=$(health "$grpc_port")
  [[ $h == NOT_SERVING && $seen != *NOT_SERVING* ]] && seen+=" NOT_SERVING"
  [[ $h == SERVING ]] && { seen+=" SERVING"; break; }
  running "$ro_name" || break
  sleep 0.05
done
echo "read-only container: health went${seen:- nowhere} in $((SECONDS - start)) s"
check "the read-only container turns SERVING" grep -q ' SERVING$' <<<"$seen"
# Whether a probe lands inside the import is a race (it takes ~1 s); that health is NOT_SERVING
# until the import ends is server_setup_test's NotServingUntilTheImportEnds. Here: SERVING came
# only after the import was logged as done, and the log says so in that order.
check "it turned SERVING after importing both files" bash -c \
  'for ((i = 0; i < 50; i++)); do podman logs "$1" 2>&1 | grep -A1 "imported 2 files" | grep -q "serving" && exit 0; sleep 0.1; done; exit 1' _ "$ro_name"
ro_pid=$(podman inspect "$ro_name" --format '{{.State.Pid}}')
check "the imported blob is served, verified, by name" \
  vc_in "$ro_pid" "$app_token" get sub/big -o "$work/ro-big.out"
check "and is intact" cmp -s "$work/import/sub/big" "$work/ro-big.out"
check "a put works on the read-only root (the store is the only write)" \
  vc_in "$ro_pid" "$admin_token" put "$work/blob"
logs=$(podman logs "$ro_name" 2>&1)
check "the log shows no failed write" bash -c '! grep -qiE "read-only file system|permission denied" <<<"$1"' _ "$logs"
check "podman stop (SIGTERM): the read-only container exits 0" \
  bash -c 'podman stop -t 30 "$1" >/dev/null && [ "$(podman inspect "$1" --format "{{.State.ExitCode}}")" = 0 ]' _ "$ro_name"
check "the import volume is untouched" [ "$(ls -A "$work/import")" = "$(printf 'hello.txt\nsub')" ]
podman rm -f "$ro_name" >/dev/null 2>&1 || true

# ---- the replicas tier's TLS: make-secrets.sh's certificate, the exec probe, tokens over TLS
# Mounted as deploy/k8s/replicas mounts its Secrets, with its TLS settings; the probe command is
# the one in its deployment.yaml.
tls_src=$work/k8s/replicas/secrets
mkdir -p "$work/tls" "$work/tls-auth" "$work/tls-store"
chown 65532:65532 "$work/tls-store"
for f in tls.crt tls.key ca.crt; do install -m 0440 -g 65532 "$tls_src/$f" "$work/tls/$f"; done
install -m 0440 -g 65532 "$tls_src/tokens" "$work/tls-auth/tokens"
client_token=$(cat "$tls_src/client-token")
grpc_port=$(free_port)
check "the image starts with TLS and no ALLOW_INSECURE" podman run -d --name "$tls_name" \
  --read-only --user 65532:65532 --cap-drop ALL --security-opt no-new-privileges \
  -v "$work/tls-store:/data" -v "$work/tls:/etc/verityd/tls:ro" \
  -v "$work/tls-auth:/etc/verityd/auth:ro" \
  -e VERITYD_TLS_CERT=/etc/verityd/tls/tls.crt -e VERITYD_TLS_KEY=/etc/verityd/tls/tls.key \
  -e VERITYD_ALLOW_INSECURE=false -p "127.0.0.1:$grpc_port:50051" "$image" >/dev/null
probe_cmd=(/usr/local/bin/verityd-health --tls-ca=/etc/verityd/tls/ca.crt 127.0.0.1:50051)
check "the probe command is deployment.yaml's" grep -qF -- "- ${probe_cmd[1]}" \
  "$work/k8s/replicas/deployment.yaml"
start=$SECONDS
probe_out=""
for ((i = 0; i < 300; i++)); do
  probe_out=$(podman exec "$tls_name" "${probe_cmd[@]}" 2>&1) && break
  running "$tls_name" || break
  sleep 0.1
done
echo "TLS container: the exec probe said '$probe_out' after $((SECONDS - start)) s"
check "the exec probe (verityd-health over TLS, in the container) says SERVING" \
  podman exec "$tls_name" "${probe_cmd[@]}"
check "plaintext health is refused (the kubelet's gRPC probe could not work)" \
  bash -c '[ "$1" != SERVING ]' _ "$(health "$grpc_port")"
tls=(--server="localhost:$grpc_port" --tls-ca="$work/tls/ca.crt")
check "over TLS, the client's token is accepted from off the pod" \
  env VERITY_TOKEN="$client_token" timeout -k 5 60 "$verity" ls "${tls[@]}"
expect_exit 6 "over TLS, no token is refused" timeout -k 5 60 "$verity" ls "${tls[@]}"
expect_exit 6 "over TLS, the client's read token cannot put" \
  env VERITY_TOKEN="$client_token" timeout -k 5 60 "$verity" put "$work/blob" "${tls[@]}"
check "podman stop (SIGTERM): the TLS container exits 0" \
  bash -c 'podman stop -t 30 "$1" >/dev/null && [ "$(podman inspect "$1" --format "{{.State.ExitCode}}")" = 0 ]' _ "$tls_name"
logs=$(podman logs "$tls_name" 2>&1)
check "no token in its log" bash -c '! grep -qF -- "$1" <<<"$2"' _ "$client_token" "$logs"
podman rm -f "$tls_name" >/dev/null 2>&1 || true
