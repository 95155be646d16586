#!/usr/bin/env bash
# deploy/k8s: each kustomization renders with `kubectl kustomize`, parses as YAML, and holds
# what running verityd on Kubernetes needs: gRPC probes on the gRPC port, a locked-down
# securityContext, resources, scrape annotations and a ServiceMonitor, VERITYD_* settings that
# are real verityd flags (from `verityd --help`), a pod grace period longer than verityd's, and
# for replicas a headless Service that the example client's dns:/// target names; every verityd
# takes VERITYD_NAME_KEYS from the ConfigMap of public keys clients trust (no names.key is
# rendered); for the object-store tier no store volume, S3 credentials from a Secret and the
# cache on an emptyDir.
# And the locked-down default: no kustomization renders before deploy/k8s/make-secrets.sh has
# written its secrets, no token or key is among the files, every verityd reads VERITYD_AUTH_TOKENS
# from a Secret volume it can reload, every client's token is in that file with the least role
# it needs, and the replicas tier (object-store too) serves TLS only, probed over TLS, with a
# certificate for the name its client uses, signed by the CA that client trusts.
# Usage: k8s_manifests_test.sh VERITYD KUSTOMIZATION_YAML...
set -euo pipefail
verityd=$1
shift

passed=0
failed=0
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/k8s_manifests_test.XXXXXX")
trap 'rm -rf "$work"' EXIT
pass() { passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
finish() {
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
}

# Any kubectl from 1.20 (Debian 12's kubernetes-client, which scripts/setup.sh installs where
# no kubectl is on the PATH) to today's renders these kustomizations.
if ! command -v kubectl >/dev/null; then
  fail "kubectl is missing: scripts/setup.sh installs Debian's kubernetes-client"
  finish
  exit 1
fi
if ! python3 -c 'import yaml' 2>/dev/null; then
  fail "python3 cannot import yaml: install python3-yaml (scripts/setup.sh does)"
  finish
  exit 1
fi

# verityd's flags, as the binary itself lists them (--help exits 1, as absl's does).
{ "$verityd" --help 2>&1 || true; } | sed -nE 's/^ +--([a-z_0-9]+) .*/\1/p' | sort -u >"$work/flags"
if [[ $(wc -l <"$work/flags") -ge 10 ]]; then pass; else fail "verityd --help lists its flags"; fi

# No secret among the files: no private key, no `ROLE TOKEN` line, no Secret manifest with
# data, no secrets/ folder (the BUILD file leaves out what make-secrets.sh wrote in a checkout).
k8s_src=$(dirname "$(dirname "$1")")
if grep -RlE 'PRIVATE KEY|^[[:space:]]*(read|write|admin)[[:space:]]+[A-Za-z0-9._~+/-]{16,}' \
  "$k8s_src" >"$work/leaks" 2>/dev/null; [[ ! -s $work/leaks ]]; then
  pass
else
  fail "no key or token among the manifests: $(tr '\n' ' ' <"$work/leaks")"
fi
if [[ -z $(find -L "$k8s_src" -path '*/secrets/*') ]] &&
  ! grep -RlqE '^kind: Secret' --include='*.yaml' "$k8s_src" 2>/dev/null; then
  pass
else
  fail "no secrets/ folder and no Secret manifest among the manifests"
fi

for kustomization in "$@"; do
  dir=$(dirname "$kustomization")
  name=$(basename "$dir")
  # Bazel's runfiles are symlinks into the source tree, outside the kustomization's root, which
  # kustomize refuses to load: render a real copy.
  # The parent too: an overlay (podman/) builds on ../base.
  cp -rL "$(dirname "$dir")" "$work/$name-src"
  # Locked down: without the generated secrets, nothing renders (so nothing is applied).
  if kubectl kustomize "$work/$name-src/$name" >/dev/null 2>"$work/$name.err"; then
    fail "kubectl kustomize $name fails before make-secrets.sh"
  elif grep -q 'secrets/' "$work/$name.err"; then
    pass
  else
    fail "kubectl kustomize $name fails for want of secrets/: $(tail -n 2 "$work/$name.err")"
  fi
  if bash "$work/$name-src/make-secrets.sh" "$work/$name-src" >"$work/$name.secrets" 2>&1; then
    pass
  else
    fail "make-secrets.sh: $(cat "$work/$name.secrets")"
    continue
  fi
  # A second run keeps every file: a rotation is deleting one.
  find "$work/$name-src" -path '*/secrets/*' -type f -exec sha256sum {} + | sort >"$work/$name.sums"
  bash "$work/$name-src/make-secrets.sh" "$work/$name-src" >/dev/null 2>&1
  if find "$work/$name-src" -path '*/secrets/*' -type f -exec sha256sum {} + | sort |
    cmp -s - "$work/$name.sums"; then
    pass
  else
    fail "make-secrets.sh run again changes nothing"
  fi
  if kubectl kustomize "$work/$name-src/$name" >"$work/$name.yaml" 2>"$work/$name.err"; then
    pass
  else
    fail "kubectl kustomize $name: $(cat "$work/$name.err")"
    continue
  fi
  # The certificate, for the checks below: its SANs, and whether ca.crt signed it.
  secrets=$work/$name-src/replicas/secrets
  openssl x509 -in "$secrets/tls.crt" -noout -ext subjectAltName 2>/dev/null |
    tail -n 1 | tr -d ' ' >"$work/$name.sans"
  openssl verify -CAfile "$secrets/ca.crt" -purpose sslserver "$secrets/tls.crt" \
    >"$work/$name.verify" 2>&1 || true
  # One line per check: "ok WHAT" or "FAIL WHAT".
  python3 - "$work/$name.yaml" "$work/flags" "$name" "$work/$name.sans" "$work/$name.verify" \
    "$secrets/ca.key" >"$work/$name.checks" 2>&1 <<'PY' || true
import base64, re, sys, yaml

rendered, flags_file, name, sans_file, verify_file, ca_key_file = sys.argv[1:]
flags = set(open(flags_file).read().split())
GRPC_PORT, METRICS_PORT, UID = 50051, 9464, 65532

def check(ok, what):
    print(("ok " if ok else "FAIL ") + f"{name}: {what}")

try:
    docs = [d for d in yaml.safe_load_all(open(rendered)) if d]
except yaml.YAMLError as e:
    check(False, f"the output parses as YAML: {e}")
    sys.exit()
check(len(docs) > 0, "the output parses as YAML")

def of_kind(kind):
    return [d for d in docs if d.get("kind") == kind]

configmaps = {d["metadata"]["name"]: d.get("data") or {} for d in of_kind("ConfigMap")}
workloads = of_kind("Deployment") + of_kind("StatefulSet") + of_kind("Job")
services = of_kind("Service")
secrets = {d["metadata"]["name"]: {k: base64.b64decode(v).decode() for k, v in (d.get("data") or {}).items()}
           for d in of_kind("Secret")}
secret_types = {d["metadata"]["name"]: d.get("type", "Opaque") for d in of_kind("Secret")}
ROLES = ("read", "write", "admin")
TOKEN68 = re.compile(r"[A-Za-z0-9._~+/-]+=*")
TIER = name in ("replicas", "object-store")  # clients in other pods: TLS only
ca_dir = ca_key_file.rsplit("/", 1)[0]
ca_crt, ca_key = open(ca_dir + "/ca.crt").read(), open(ca_key_file).read().strip()
grants = {}  # token -> role, from every verityd's tokens file

def secret_file(pod, c, path):
    # (Secret, key, volume source) of the file `path` in container c when it comes from a Secret
    # volume mounted as a directory (never subPath, which the kubelet does not update).
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for m in c.get("volumeMounts", []):
        root = m["mountPath"].rstrip("/") + "/"
        source = volumes.get(m["name"], {}).get("secret")
        if not path.startswith(root) or "subPath" in m or source is None:
            continue
        rel, items = path[len(root):], source.get("items")
        key = rel if items is None else next((i["key"] for i in items if i["path"] == rel), None)
        if key is not None and key in secrets.get(source.get("secretName"), {}):
            return source["secretName"], key, source
    return None

# podman/ mounts make-secrets.sh's files from the host (podman 4.3's Secret volumes do not work):
# the folder /var/lib/verityd/secrets, which the test (or you) replaces with base/secrets/.
PODMAN_SECRETS = "/var/lib/verityd/secrets"
base_secrets = ca_dir.rsplit("/", 2)[0] + "/base/secrets"

def podman_file(pod, c, path):
    # The text of `path` in container c when it comes from podman/'s host folder, else None.
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for m in c.get("volumeMounts", []):
        host = (volumes.get(m["name"], {}).get("hostPath") or {}).get("path", "")
        if name != "podman" or not m.get("readOnly") or not host.startswith(PODMAN_SECRETS):
            continue
        if path == m["mountPath"] or path.startswith(m["mountPath"].rstrip("/") + "/"):
            try:
                return open(base_secrets + host[len(PODMAN_SECRETS):] + path[len(m["mountPath"]):]).read()
            except OSError:
                return None
    return None

def configmap_text(pod, c, path):
    # The text of `path` in container c when it is a key of a ConfigMap volume mounted as a
    # directory (never subPath, which the kubelet does not update), else None.
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for m in c.get("volumeMounts", []):
        root = m["mountPath"].rstrip("/") + "/"
        source = volumes.get(m["name"], {}).get("configMap")
        if path.startswith(root) and "subPath" not in m and source is not None:
            return configmaps.get(source.get("name"), {}).get(path[len(root):])
    return None

# The name-signing keys stay in make-secrets.sh's folders: no rendered object holds them.
names_keys = [open(d + "/names.key").read().strip() for d in (ca_dir, base_secrets)]
check(all(k not in v for k in names_keys
          for d in list(secrets.values()) + list(configmaps.values()) for v in d.values()),
      "no names.key is in a rendered Secret or ConfigMap")

def secret_text(pod, c, path):
    src = secret_file(pod, c, path)
    return secrets[src[0]][src[1]] if src else podman_file(pod, c, path)

def token_grants(text):
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            role, _, token = line.partition(" ")
            out[token.strip()] = role
    return out

def flag_value(args, flag):
    return next((a[len(flag) + 1:] for a in args if a.startswith(flag + "=")), None)

# The CA's key stays in make-secrets.sh's folder: no rendered object holds it.
check(all(ca_key not in v for d in list(secrets.values()) + list(configmaps.values()) for v in d.values()),
      "ca.key is in no rendered Secret or ConfigMap")

def seconds(duration):
    # absl durations as verityd takes them: "20s", "1m30s", "500ms".
    units = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
    parts = re.findall(r"([0-9.]+)(h|ms|us|ns|m|s)", duration)
    return sum(float(n) * units[u] for n, u in parts)

def env_of(container):
    # VERITYD_* as the container sees them: envFrom ConfigMaps, then env (which wins).
    env = {}
    for source in container.get("envFrom", []):
        ref = source.get("configMapRef")
        check(ref is not None and ref["name"] in configmaps,
              f"{container['name']}: envFrom names a rendered ConfigMap")
        if ref and ref["name"] in configmaps:
            env.update(configmaps[ref["name"]])
    for var in container.get("env", []):
        secret = (var.get("valueFrom") or {}).get("secretKeyRef")
        if var["name"].startswith("AWS_"):
            # Credentials only ever from a Secret.
            check(secret is not None and secret.get("key") == var["name"],
                  f"{container['name']}: {var['name']} comes from a Secret's key of that name")
            continue
        env[var["name"]] = var.get("value")
    return env

def matches(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())

def port_of(address):
    return int(address.rsplit(":", 1)[1])

def check_verityd(workload, pod, c):
    who = f"{workload['metadata']['name']}/{c['name']}"
    # podman/ runs the image built locally, never pulled.
    policy = "Never" if name == "podman" else "IfNotPresent"
    check(c.get("imagePullPolicy") == policy, f"{who}: imagePullPolicy {policy}")
    env = env_of(c)
    check(len(env) > 0, f"{who}: configured through VERITYD_* variables")
    for var in env:
        check(var.startswith("VERITYD_") and var[len("VERITYD_"):].lower() in flags,
              f"{who}: {var} is VERITYD_<a verityd flag>")
    listen = env.get("VERITYD_LISTEN", "127.0.0.1:50051")
    check(listen.startswith("0.0.0.0:") and port_of(listen) == GRPC_PORT,
          f"{who}: listens on every address on {GRPC_PORT} (the kubelet probes the pod IP)")
    metrics = env.get("VERITYD_METRICS_LISTEN", "127.0.0.1:9464")
    check(metrics.startswith("0.0.0.0:") and port_of(metrics) == METRICS_PORT,
          f"{who}: metrics on every address on {METRICS_PORT}")
    check(env.get("VERITYD_ALLOW_INSECURE") == "true" or "VERITYD_TLS_CERT" in env,
          f"{who}: plaintext on a pod address is allowed explicitly, or TLS is set")
    # Auth: a tokens file from a Secret, readable by the pod's group only, reloadable.
    path = env.get("VERITYD_AUTH_TOKENS", "")
    src = secret_file(pod, c, path) if path else None
    text = secrets[src[0]][src[1]] if src else (podman_file(pod, c, path) if path else None)
    if name == "podman":
        check(text is not None and (src or "subPath" not in str(c.get("volumeMounts"))),
              f"{who}: VERITYD_AUTH_TOKENS ({path or 'unset'}) is base/secrets/tokens from a read-only host folder")
        text = text or ""
    else:
        check(src is not None, f"{who}: VERITYD_AUTH_TOKENS ({path or 'unset'}) is a file of a Secret volume, not subPath")
    if src or name == "podman":
        own = token_grants(text)
        check(len(own) >= 2 and all(r in ROLES and len(t) >= 16 and TOKEN68.fullmatch(t) for t, r in own.items()),
              f"{who}: the tokens file holds ROLE TOKEN lines (token68, >= 16 characters), one token each for the client and an admin")
        grants.update(own)
        mode = src[2].get("defaultMode", 0o644) if src else 0
        check(mode & 0o007 == 0 and pod.get("securityContext", {}).get("fsGroup") == UID,
              f"{who}: the tokens are readable by group {UID}, not by others (defaultMode {mode:o})")
    # Names: writes need a statement signed by the public keys of the ConfigMap clients trust.
    keys_path = env.get("VERITYD_NAME_KEYS", "")
    keys_text = configmap_text(pod, c, keys_path) if keys_path else None
    check(keys_text is not None and "-----BEGIN PUBLIC KEY-----" in keys_text
          and "PRIVATE" not in keys_text,
          f"{who}: VERITYD_NAME_KEYS ({keys_path or 'unset'}) is public keys from a ConfigMap volume")
    tls = "VERITYD_TLS_CERT" in env
    if TIER:
        # The image defaults VERITYD_ALLOW_INSECURE to true (for the sidecar): false here.
        check(tls and "VERITYD_TLS_KEY" in env and env.get("VERITYD_ALLOW_INSECURE") == "false",
              f"{who}: TLS only, VERITYD_ALLOW_INSECURE false (its clients are in other pods)")
        for var in ("VERITYD_TLS_CERT", "VERITYD_TLS_KEY"):
            src = secret_file(pod, c, env.get(var, ""))
            check(src is not None and secret_types.get(src[0]) == "kubernetes.io/tls",
                  f"{who}: {var} is a file of a kubernetes.io/tls Secret volume")
        sans = open(sans_file).read().strip().split(",")
        check("IPAddress:127.0.0.1" in sans, f"{who}: the certificate names 127.0.0.1, which the probes dial")
        check(": OK" in open(verify_file).read(), f"{who}: ca.crt signed the certificate, for TLS servers")
        tier_sans[who] = sans
    ports = {p["containerPort"]: p.get("name") for p in c.get("ports", [])}
    check(GRPC_PORT in ports and METRICS_PORT in ports, f"{who}: declares ports {GRPC_PORT} and {METRICS_PORT}")
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        p = c.get(probe) or {}
        if not p and probe == "startupProbe":
            continue
        check("httpGet" not in p and "tcpSocket" not in p, f"{who}: {probe} asks grpc.health.v1")
        if tls:
            # The kubelet's gRPC probe speaks plaintext only: the image's checker, over TLS.
            cmd = (p.get("exec") or {}).get("command", [])
            ca = flag_value(cmd, "--tls-ca")
            check(cmd[:1] == ["/usr/local/bin/verityd-health"] and cmd[-1:] == [f"127.0.0.1:{GRPC_PORT}"]
                  and ca is not None and secret_text(pod, c, ca) == ca_crt and "grpc" not in p,
                  f"{who}: {probe} execs verityd-health (no shell) over TLS to 127.0.0.1:{GRPC_PORT}, trusting ca.crt")
            check(p.get("timeoutSeconds", 1) >= 3, f"{who}: {probe} gives verityd-health (3 s deadline) time")
        else:
            check(p.get("grpc", {}).get("port") == GRPC_PORT and "exec" not in p,
                  f"{who}: {probe} is only gRPC on {GRPC_PORT} (the image has no shell)")
    live = c.get("livenessProbe") or {}
    startup = c.get("startupProbe") or {}
    # Health is NOT_SERVING during the import: liveness must not kill an importing verityd.
    patience = (live.get("initialDelaySeconds", 0)
                + live.get("periodSeconds", 10) * live.get("failureThreshold", 3))
    if startup:
        patience += startup.get("periodSeconds", 10) * startup.get("failureThreshold", 3)
    check(patience >= 60, f"{who}: liveness waits >= 60 s before a restart (got {patience})")
    grace = seconds(env.get("VERITYD_GRACE_PERIOD", "10s"))
    tgps = pod.get("terminationGracePeriodSeconds", 30)
    check(tgps > grace, f"{who}: terminationGracePeriodSeconds {tgps} > VERITYD_GRACE_PERIOD {grace:g}s")
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    if env.get("VERITYD_STORE", "").startswith("s3://"):
        # The object-store tier: no store volume, credentials from a Secret, the cache on an
        # emptyDir within its size limit.
        check("VERITYD_STORE_DIR" not in env, f"{who}: no VERITYD_STORE_DIR next to an s3:// store")
        names = {v["name"] for v in c.get("env", [])}
        check({"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} <= names,
              f"{who}: S3 credentials in the environment")
        check(not any(m["mountPath"] == "/data" for m in c.get("volumeMounts", [])),
              f"{who}: no volume for the store")
        cache = mounts.get(env.get("VERITYD_CACHE_DIR", ""))
        empty = volumes.get(cache["name"], {}).get("emptyDir") if cache else None
        check(empty is not None and not cache.get("readOnly"), f"{who}: VERITYD_CACHE_DIR is a writable emptyDir")
        if empty is not None and "sizeLimit" in empty:
            limit = int(empty["sizeLimit"].rstrip("Gi")) << 30
            check(int(env.get("VERITYD_CACHE_BYTES", 10 << 30)) < limit,
                  f"{who}: VERITYD_CACHE_BYTES below the cache emptyDir's sizeLimit")
    else:
        store = mounts.get(env.get("VERITYD_STORE_DIR", "./verityd-data"))
        check(store is not None and not store.get("readOnly") and
              ("emptyDir" in volumes.get(store["name"], {}) or
               "persistentVolumeClaim" in volumes.get(store["name"], {}) or
               store["name"] in [t["metadata"]["name"] for t in workload["spec"].get("volumeClaimTemplates", [])]),
              f"{who}: VERITYD_STORE_DIR is a writable emptyDir or PVC")
    check("/tmp" in mounts and not mounts["/tmp"].get("readOnly"), f"{who}: a writable /tmp")
    if "VERITYD_IMPORT_DIR" in env:
        root = env["VERITYD_IMPORT_DIR"].rstrip("/")
        imports = [m for p, m in mounts.items() if p == root or p.startswith(root + "/")]
        check(imports and all(m.get("readOnly") for m in imports),
              f"{who}: VERITYD_IMPORT_DIR is mounted read-only")
        # A whole ConfigMap directory carries the kubelet's ..<timestamp>/ copies, which the
        # importer would import under those names too.
        check(all("subPath" in m or "configMap" not in volumes.get(m["name"], {}) for m in imports),
              f"{who}: ConfigMap files are imported by subPath, not as the kubelet's directory")
    return env

def check_state_outlives_pod(w, pod, c, who):
    """verity sync's and verity mount's --state-dir (their rollback state) is on a volume that
    outlives the pod: a claim the manifests make, or a host folder; never an emptyDir, whose
    fresh state would take any statement short of --max-statement-age."""
    state = flag_value(c["args"], "--state-dir")
    check(state is not None, f"{who}: a --state-dir")
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mount = [m for m in c.get("volumeMounts", []) if m["mountPath"] == state]
    volume = volumes.get(mount[0]["name"], {}) if mount else {}
    claims = {pvc["metadata"]["name"] for pvc in of_kind("PersistentVolumeClaim")}
    claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
    check(mount and not mount[0].get("readOnly") and
          ((claim is not None and claim in claims) or "hostPath" in volume),
          f"{who}: --state-dir {state} is a writable volume that outlives the pod (claim {claim})")

tier_sans = {}
for w in workloads:
    pod_template = w["spec"]["template"]
    pod, labels = pod_template["spec"], pod_template["metadata"].get("labels", {})
    wname = w["metadata"]["name"]
    psc = pod.get("securityContext", {})
    for c in pod["containers"]:
        who = f"{wname}/{c['name']}"
        sc = {**psc, **c.get("securityContext", {})}
        check(sc.get("readOnlyRootFilesystem") is True, f"{who}: readOnlyRootFilesystem")
        if c.get("command") == ["/usr/local/bin/verity"] and c.get("args", [""])[0] == "mount":
            # verity mount: FUSE needs a privileged container (the only one), which mounts
            # into a volume with Bidirectional propagation that the others read through
            # HostToContainer, read-only.
            args = c["args"]
            check_state_outlives_pod(w, pod, c, who)
            check(sc.get("privileged") is True, f"{who}: privileged (FUSE: /dev/fuse, mount(2))")
            check(any(a.startswith("--trusted-keys=") for a in args),
                  f"{who}: checks the tree's name with --trusted-keys")
            shared = [m for m in c.get("volumeMounts", []) if m.get("mountPropagation") == "Bidirectional"]
            check(len(shared) == 1 and args[2].startswith(shared[0]["mountPath"].rstrip("/") + "/"),
                  f"{who}: mounts {args[2]} inside its one Bidirectional volume")
            cache_dir = flag_value(args, "--cache-dir")
            if cache_dir is not None:
                check(any(m["mountPath"] == cache_dir and not m.get("readOnly")
                          and m["name"] != (shared[0]["name"] if shared else None)
                          for m in c.get("volumeMounts", [])),
                      f"{who}: --cache-dir {cache_dir} is a writable volume of its own")
            for o in pod["containers"]:
                if o is c:
                    continue
                check(o.get("securityContext", {}).get("privileged") is not True,
                      f"{wname}/{o['name']}: not privileged")
                for m in o.get("volumeMounts", []):
                    if shared and m["name"] == shared[0]["name"]:
                        check(m.get("mountPropagation") == "HostToContainer" and m.get("readOnly") is True,
                              f"{wname}/{o['name']}: sees the mount read-only, HostToContainer")
        else:
            check(sc.get("runAsNonRoot") is True, f"{who}: runAsNonRoot")
            check(sc.get("runAsUser") == UID and sc.get("runAsGroup") == UID, f"{who}: runs as {UID}:{UID}")
            check(sc.get("allowPrivilegeEscalation") is False, f"{who}: allowPrivilegeEscalation false")
            caps = sc.get("capabilities", {})
            check("ALL" in caps.get("drop", []) and not caps.get("add"), f"{who}: drops ALL capabilities, adds none")
        res = c.get("resources", {})
        check({"cpu", "memory"} <= set(res.get("requests", {})) and "memory" in res.get("limits", {}),
              f"{who}: cpu and memory requests, a memory limit")
        # verity sync: a signed tree kept in a folder the other containers read only.
        if c.get("command") == ["/usr/local/bin/verity"] and c.get("args", [""])[0] == "sync":
            args = c["args"]
            check_state_outlives_pod(w, pod, c, who)
            check(any(a.startswith("--trusted-keys=") for a in args),
                  f"{who}: checks the tree's name with --trusted-keys")
            probe = c.get("readinessProbe", {}).get("exec", {}).get("command", [])
            check(probe[:3] == ["/usr/local/bin/verity", "sync", "--probe"] and probe[-2:] == args[1:3],
                  f"{who}: ready by `verity sync --probe` of its NAME and DIR")
            folder = args[2]
            writers = [o for o in pod["containers"] for m in o.get("volumeMounts", [])
                       if m["mountPath"] == folder and not m.get("readOnly")]
            check([o["name"] for o in writers] == [c["name"]],
                  f"{who}: the only container that writes {folder}")
        # verityd: its image with the image's entrypoint (podman/'s app runs `verity` from it).
        if c["image"].startswith("localhost/verityd:") and not c.get("command") and w["kind"] != "Job":
            check(c["image"] == "localhost/verityd:dev", f"{who}: image localhost/verityd:dev")
            env = check_verityd(w, pod, c)
            ann = pod_template["metadata"].get("annotations", {})
            check(ann.get("prometheus.io/scrape") == "true" and ann.get("prometheus.io/port") == str(METRICS_PORT)
                  and ann.get("prometheus.io/path") == "/metrics", f"{who}: Prometheus scrape annotations")
            # The metrics Service behind a ServiceMonitor selects these pods.
            monitored = False
            for sm in of_kind("ServiceMonitor"):
                for svc in services:
                    if not matches(sm["spec"]["selector"].get("matchLabels"), svc["metadata"].get("labels", {})):
                        continue
                    if not matches(svc["spec"].get("selector"), labels):
                        continue
                    svc_ports = {p.get("name"): p for p in svc["spec"]["ports"]}
                    for ep in sm["spec"]["endpoints"]:
                        p = svc_ports.get(ep.get("port"))
                        if p and p.get("targetPort") in ("metrics", METRICS_PORT) and ep.get("path", "/metrics") == "/metrics":
                            monitored = sm["apiVersion"] == "monitoring.coreos.com/v1"
            check(monitored, f"{who}: a ServiceMonitor (monitoring.coreos.com/v1) scrapes /metrics through a Service")
            # Replicas: a headless Service in front, and a client that balances over it.
            if w["spec"].get("replicas", 1) > 1:
                check(w["spec"]["replicas"] == 3, f"{wname}: 3 replicas")
                headless = [s for s in services if s["spec"].get("clusterIP") == "None"
                            and matches(s["spec"].get("selector"), labels)]
                check(len(headless) == 1, f"{wname}: one headless Service (clusterIP: None) selects it")
                for s in headless:
                    check(any(p["port"] == GRPC_PORT and p.get("name") == "grpc" for p in s["spec"]["ports"]),
                          f"{s['metadata']['name']}: a port named grpc on {GRPC_PORT}")
                    ns = s["metadata"].get("namespace", "default")
                    target = f"dns:///{s['metadata']['name']}.{ns}.svc.cluster.local:{GRPC_PORT}"
                    jobs = [j for j in of_kind("Job")
                            if any(target in " ".join(c2.get("command", []) + c2.get("args", []))
                                   for c2 in j["spec"]["template"]["spec"]["containers"])]
                    check(len(jobs) >= 1, f"an example client Job targets {target}")
    if w["kind"] != "Job":
        check(w["kind"] in ("Deployment", "StatefulSet"), f"{wname}: a Deployment or StatefulSet")

# Every client's token: from a Secret file (never the environment or the command line), in
# verityd's tokens file with role read, all a get needs.
def check_client_token(who, pod, c, path):
    token = (secret_text(pod, c, path) or "").strip() if path else ""
    check(grants.get(token) == "read", f"{who}: its token file {path} is from a Secret and verityd grants it read")
    check(not any(t in str(c.get("env", [])) + " ".join(c.get("command", []) + c.get("args", []))
                  for t in grants), f"{who}: no token in its environment or command line")
    check(not any((secret_text(pod, c, m["mountPath"].rstrip("/") + "/tokens") or "") for m in c.get("volumeMounts", [])),
          f"{who}: does not see verityd's tokens file")

for w in workloads:
    pod = w["spec"]["template"]["spec"]
    for c in pod["containers"]:
        who = f"{w['metadata']['name']}/{c['name']}"
        args = c.get("command", []) + c.get("args", [])
        if w["kind"] == "Job":
            check(TIER, f"{who}: a client Job only in the TLS tier")
            ca = flag_value(args, "--tls-ca")
            check(ca is not None and secret_text(pod, c, ca) == ca_crt, f"{who}: --tls-ca is ca.crt, from a Secret")
            target = (flag_value(args, "--server") or "").removeprefix("dns:///").rsplit(":", 1)[0]
            check(any(f"DNS:{target}" in sans for sans in tier_sans.values()),
                  f"{who}: the certificate names the host it dials ({target})")
            check_client_token(who, pod, c, flag_value(args, "--token-file"))
        elif c["name"] == "app":
            # base's placeholder app has its token mounted; podman's reads it with --token-file.
            path = flag_value(args, "--token-file") if name == "podman" else next(
                (m["mountPath"].rstrip("/") + "/token" for m in c.get("volumeMounts", [])
                 if secret_file(pod, c, m["mountPath"].rstrip("/") + "/token")), None)
            check_client_token(who, pod, c, path)

if name == "mount":
    check(any(d["metadata"]["name"] == "app-with-verityd" and
              sorted(c["name"] for c in d["spec"]["template"]["spec"]["containers"]) == ["app", "verity-mount", "verity-sync", "verityd", "witness"]
              for d in of_kind("Deployment")), "Deployment app-with-verityd holds the app, verity-mount, verity-sync, verityd and a witness")
if name in ("base", "podman"):
    check(any(d["metadata"]["name"] == "app-with-verityd" and
              sorted(c["name"] for c in d["spec"]["template"]["spec"]["containers"]) == ["app", "verity-sync", "verityd", "witness"]
              for d in of_kind("Deployment")), "Deployment app-with-verityd holds the app, verity-sync, verityd and a witness")
if name in ("base", "podman", "mount"):
    # The transparency log: verityd logs and asks the witness beside it; verity-sync checks both.
    for d in of_kind("Deployment"):
        containers = {c["name"]: c for c in d["spec"]["template"]["spec"]["containers"]}
        if "witness" not in containers:
            continue
        env = env_of(containers["verityd"])
        check(all(k in env for k in ("VERITYD_LOG_KEY", "VERITYD_LOG_ORIGIN", "VERITYD_WITNESSES")),
              "verityd logs name statements and asks its witnesses")
        sync_args = containers["verity-sync"].get("args", [])
        check(any(a.startswith("--log-key=") for a in sync_args) and
              any(a.startswith("--witness-keys=") for a in sync_args),
              "verity-sync requires the log's proof and the witness's cosignature")
        witness_args = containers["witness"].get("args", [])
        check(witness_args[:1] == ["witness"] and "--listen=127.0.0.1:7380" in witness_args,
              "the witness listens on the pod's loopback, where VERITYD_WITNESSES points")
if name == "podman":
    for d in of_kind("Deployment"):
        for c in d["spec"]["template"]["spec"]["containers"]:
            ports = c.get("ports", [])
            check(all(p.get("hostIP") == "127.0.0.1" for p in ports if "hostPort" in p),
                  f"{c['name']}: hostPorts are published on 127.0.0.1 only")
            if c["name"] == "verityd":
                check({p.get("hostPort") for p in ports} >= {GRPC_PORT, METRICS_PORT},
                      f"{c['name']}: hostPorts {GRPC_PORT} and {METRICS_PORT} (the test rewrites them)")
            if c["name"] == "app":
                check(c["image"] == "localhost/verityd:dev" and c.get("imagePullPolicy") == "Never"
                      and "--server=127.0.0.1:50051" in c.get("args", []),
                      "app: the local image's verity reads from the sidecar over the pod's loopback")
if name == "replicas":
    check(any(s["spec"].get("clusterIP") == "None" for s in services), "a headless Service")
PY
  if [[ ! -s $work/$name.checks ]] || grep -qv '^ok \|^FAIL ' "$work/$name.checks"; then
    fail "the checks of $name ran: $(grep -v '^ok \|^FAIL ' "$work/$name.checks" | tail -n 5)"
  fi
  echo "$name: $(grep -c '^ok ' "$work/$name.checks") checks passed"
  while read -r verdict what; do
    if [[ $verdict == ok ]]; then pass; else fail "$what"; fi
  done < <(grep '^ok \|^FAIL ' "$work/$name.checks")
done
finish
