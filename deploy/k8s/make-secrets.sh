#!/usr/bin/env bash
# Generates the secrets the kustomizations' secretGenerators read, into git-ignored files: until
# they exist `kubectl kustomize`/`kubectl apply -k` fails, so nothing here runs without auth.
#
# Usage: make-secrets.sh [K8S_DIR]   (default: the directory this script is in)
#   K8S_DIR/base/secrets/      (base/ and podman/)
#     names.key     the Ed25519 key that signs names (`verity put --sign-key`, `verity sign`);
#                   it stays here: no Secret or ConfigMap holds it
#     names.pub     its public key: the ConfigMap verity-trusted-keys, verityd's --name_keys
#                   and your clients' --trusted-keys (README, "Who says which digest a name means")
#     tokens        verityd's --auth_tokens file: `read APP_TOKEN` and `admin ADMIN_TOKEN`
#     app-token     the application's token (read)
#     admin-token   yours (admin), for `kubectl port-forward` and `verity --token-file`
#     log.key       the Ed25519 key that signs the transparency log's checkpoints (verityd's
#                   --log_key, in the Secret verityd-auth), and log.vkey its note verifier key
#                   (the ConfigMap verity-trusted-keys: clients' --log-key)
#     witness.key   the witness's Ed25519 key (the Secret verity-witness), witness.vkey its
#                   cosignature verifier key (clients' --witness-keys), and witnesses, the
#                   list verityd asks (--witnesses): the witness beside it in the pod
#   K8S_DIR/replicas/secrets/  (replicas/ and object-store/)
#     names.key, names.pub, tokens, client-token (read, the example Job's), admin-token
#     ca.crt, ca.key   a CA for the tier (ca.key stays here: no Secret holds it)
#     tls.crt, tls.key verityd's certificate, signed by ca.crt, for the headless Service's names
#                      and localhost/127.0.0.1 (the exec probes)
#
# A file that exists is kept, so running it again changes nothing; to rotate a token, delete
# its file and run it again (deploy/k8s/README.md, "Tokens and rotation").
set -euo pipefail
umask 077

k8s=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
# The replicas' namespace and Service: client-job.yaml's target names both.
namespace=verityd
service=verityd-headless
for tool in openssl base64 head tr; do
  command -v "$tool" >/dev/null || { echo "make-secrets.sh: $tool is missing" >&2; exit 1; }
done
[[ -d $k8s/base && -d $k8s/replicas ]] ||
  { echo "make-secrets.sh: $k8s holds no base/ and replicas/" >&2; exit 1; }

# A bearer token: 24 random bytes as base64url without padding (32 characters of token68).
new_token() { head -c 24 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n'; }

# token FILE: creates FILE with a new token unless it exists.
token() {
  [[ -s $1 ]] && return 0
  new_token >"$1.new"
  mv "$1.new" "$1"
  echo "make-secrets.sh: new token in $1"
}

# tokens FILE ROLE=TOKEN_FILE...: verityd's tokens file, rewritten from the token files on
# every run, so that it always grants exactly them.
tokens() {
  local out=$1 grant
  shift
  {
    echo "# verityd --auth_tokens: ROLE TOKEN. Written by make-secrets.sh from the token files"
    echo "# beside it; edit those (or this script), not this file."
    for grant in "$@"; do echo "${grant%%=*} $(cat "${grant#*=}")"; done
  } >"$out.new"
  mv "$out.new" "$out"
}

# name_key DIR: an Ed25519 key that signs names, DIR/names.key, and its public key DIR/names.pub,
# unless DIR has them. To rotate: make a new key, list both public keys in names.pub, sign with
# the new one, then drop the old public key (README: rotation).
name_key() {
  local d=$1
  [[ -s $d/names.key && -s $d/names.pub ]] && return 0
  openssl genpkey -algorithm ed25519 -out "$d/names.key.new"
  openssl pkey -in "$d/names.key.new" -pubout -out "$d/names.pub"
  mv "$d/names.key.new" "$d/names.key"
  echo "make-secrets.sh: new name-signing key in $d/names.key (public key: $d/names.pub)"
}

# note_key DIR FILE NAME TYPE: an Ed25519 key DIR/FILE.key and its C2SP note verifier key
# DIR/FILE.vkey, "NAME+<hex key ID>+<base64(TYPE || public key)>", unless DIR has them: TYPE 01
# for a log's key (as `verity keygen --log-origin` writes it), 04 for a witness's
# (cosignature/v1, `verity keygen --witness-name`). The key ID is the first 4 bytes of
# SHA-256(NAME "\n" TYPE key).
note_key() {
  local d=$1 file=$2 name=$3 type=$4
  [[ -s $d/$file.key && -s $d/$file.vkey ]] && return 0
  openssl genpkey -algorithm ed25519 -out "$d/$file.key.new"
  openssl pkey -in "$d/$file.key.new" -pubout -outform DER | tail -c 32 >"$d/$file.raw"
  local id key
  id=$({ printf '%s\n' "$name"; printf "\\x$type"; cat "$d/$file.raw"; } |
    openssl dgst -sha256 -binary | head -c 4 | od -An -tx1 | tr -d ' \n')
  key=$({ printf "\\x$type"; cat "$d/$file.raw"; } | base64 -w0)
  echo "$name+$id+$key" >"$d/$file.vkey"
  rm "$d/$file.raw"
  mv "$d/$file.key.new" "$d/$file.key"
  echo "make-secrets.sh: new key in $d/$file.key (verifier key: $d/$file.vkey)"
}

# tls DIR: a CA and a server certificate it signed, unless DIR has them. 10 years for the CA,
# one for the server certificate (renew by deleting tls.crt).
tls() {
  local d=$1
  if [[ ! -s $d/ca.crt || ! -s $d/ca.key ]]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
      -subj "/CN=verityd CA ($namespace)" -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
    rm -f "$d/tls.crt"  # signed by the old CA, if any
    echo "make-secrets.sh: new CA in $d/ca.crt"
  fi
  [[ -s $d/tls.crt && -s $d/tls.key ]] && return 0
  local san="DNS:$service.$namespace.svc.cluster.local,DNS:$service.$namespace.svc"
  san+=",DNS:$service.$namespace,DNS:$service,DNS:localhost,IP:127.0.0.1"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$service" \
    -keyout "$d/tls.key" -out "$d/tls.csr" 2>/dev/null
  openssl x509 -req -in "$d/tls.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
    -days 365 -out "$d/tls.crt" -extfile <(printf '%s\n' "subjectAltName=$san" \
    "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" \
    "basicConstraints=critical,CA:false") 2>/dev/null
  rm -f "$d/tls.csr" "$d/ca.srl"
  echo "make-secrets.sh: new certificate in $d/tls.crt ($san)"
}

base=$k8s/base/secrets
mkdir -p "$base"
token "$base/app-token"
token "$base/admin-token"
tokens "$base/tokens" "read=$base/app-token" "admin=$base/admin-token"
name_key "$base"
# The log's name is VERITYD_LOG_ORIGIN (base/verityd.env); the witness's, the witness
# container's --witness-name (base/deployment.yaml).
note_key "$base" log verityd.example/log 01
note_key "$base" witness witness.example 04
echo "$(cat "$base/witness.vkey") http://127.0.0.1:7380" >"$base/witnesses"

replicas=$k8s/replicas/secrets
mkdir -p "$replicas"
token "$replicas/client-token"
token "$replicas/admin-token"
tokens "$replicas/tokens" "read=$replicas/client-token" "admin=$replicas/admin-token"
tls "$replicas"
name_key "$replicas"
