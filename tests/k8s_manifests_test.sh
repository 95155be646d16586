#!/usr/bin/env bash
# deploy/k8s: each kustomization renders with `kubectl kustomize`, parses as YAML, and holds
# what running verityd on Kubernetes needs: gRPC probes on the gRPC port, a locked-down
# securityContext, resources, scrape annotations and a ServiceMonitor, VERITYD_* settings that
# are real verityd flags (from `verityd --help`), a pod grace period longer than verityd's, and
# for replicas a headless Service that the example client's dns:/// target names; for the
# object-store tier no store volume, S3 credentials from a Secret and the cache on an emptyDir.
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

for kustomization in "$@"; do
  dir=$(dirname "$kustomization")
  name=$(basename "$dir")
  # Bazel's runfiles are symlinks into the source tree, outside the kustomization's root, which
  # kustomize refuses to load: render a real copy.
  # The parent too: an overlay (podman/) builds on ../base.
  cp -rL "$(dirname "$dir")" "$work/$name-src"
  if kubectl kustomize "$work/$name-src/$name" >"$work/$name.yaml" 2>"$work/$name.err"; then
    pass
  else
    fail "kubectl kustomize $name: $(cat "$work/$name.err")"
    continue
  fi
  # One line per check: "ok WHAT" or "FAIL WHAT".
  python3 - "$work/$name.yaml" "$work/flags" "$name" >"$work/$name.checks" 2>&1 <<'PY' || true
import re, sys, yaml

rendered, flags_file, name = sys.argv[1:]
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
    ports = {p["containerPort"]: p.get("name") for p in c.get("ports", [])}
    check(GRPC_PORT in ports and METRICS_PORT in ports, f"{who}: declares ports {GRPC_PORT} and {METRICS_PORT}")
    for probe in ("readinessProbe", "livenessProbe"):
        p = c.get(probe) or {}
        check(p.get("grpc", {}).get("port") == GRPC_PORT, f"{who}: {probe} is gRPC on {GRPC_PORT}")
        check("httpGet" not in p and "tcpSocket" not in p and "exec" not in p,
              f"{who}: {probe} is only gRPC (the image has no shell)")
    live = c.get("livenessProbe") or {}
    startup = c.get("startupProbe") or {}
    # Health is NOT_SERVING during the import: liveness must not kill an importing verityd.
    patience = (live.get("initialDelaySeconds", 0)
                + live.get("periodSeconds", 10) * live.get("failureThreshold", 3))
    if startup:
        check(startup.get("grpc", {}).get("port") == GRPC_PORT, f"{who}: startupProbe is gRPC on {GRPC_PORT}")
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

for w in workloads:
    pod_template = w["spec"]["template"]
    pod, labels = pod_template["spec"], pod_template["metadata"].get("labels", {})
    wname = w["metadata"]["name"]
    psc = pod.get("securityContext", {})
    for c in pod["containers"]:
        who = f"{wname}/{c['name']}"
        sc = {**psc, **c.get("securityContext", {})}
        check(sc.get("runAsNonRoot") is True, f"{who}: runAsNonRoot")
        check(sc.get("runAsUser") == UID and sc.get("runAsGroup") == UID, f"{who}: runs as {UID}:{UID}")
        check(sc.get("readOnlyRootFilesystem") is True, f"{who}: readOnlyRootFilesystem")
        check(sc.get("allowPrivilegeEscalation") is False, f"{who}: allowPrivilegeEscalation false")
        caps = sc.get("capabilities", {})
        check("ALL" in caps.get("drop", []) and not caps.get("add"), f"{who}: drops ALL capabilities, adds none")
        res = c.get("resources", {})
        check({"cpu", "memory"} <= set(res.get("requests", {})) and "memory" in res.get("limits", {}),
              f"{who}: cpu and memory requests, a memory limit")
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

if name in ("base", "podman"):
    check(any(d["metadata"]["name"] == "app-with-verityd" and len(d["spec"]["template"]["spec"]["containers"]) == 2
              for d in of_kind("Deployment")), "Deployment app-with-verityd holds the app and verityd")
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
