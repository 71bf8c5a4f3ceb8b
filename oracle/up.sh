#!/usr/bin/env bash
# Starts a real etcd and kube-apiserver on 127.0.0.1 for the oracle run and
# writes a kubeconfig for them. State lives in $ORACLE_DIR (default .oracle at
# the repository root); oracle/down.sh stops exactly the processes started here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
dir=${ORACLE_DIR:-$root/.oracle}
bin=$here/bin
etcd_port=${ORACLE_ETCD_PORT:-23790}
peer_port=$((etcd_port + 10))
api_port=${ORACLE_API_PORT:-6444}
# Short compaction so the suites can observe 410 Gone within their budget.
compaction=${ORACLE_COMPACTION_INTERVAL:-20s}

for b in kube-apiserver etcd; do
  [ -x "$bin/$b" ] || { echo "oracle: $bin/$b missing; run oracle/build.sh first" >&2; exit 1; }
done
if [ -f "$dir/kube-apiserver.pid" ] && kill -0 "$(cat "$dir/kube-apiserver.pid")" 2>/dev/null; then
  echo "oracle: already running (pid $(cat "$dir/kube-apiserver.pid")); run oracle/down.sh first" >&2
  exit 1
fi
rm -rf "$dir"
mkdir -p "$dir/pki" "$dir/etcd" "$dir/certs"
pki=$dir/pki

# A throwaway CA, a serving certificate for 127.0.0.1, and service-account keys.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=apiconform-oracle-ca" \
  -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
  -keyout "$pki/apiserver.key" -out "$pki/apiserver.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' > "$pki/ext.cnf"
openssl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
  -days 2 -extfile "$pki/ext.cnf" -out "$pki/apiserver.crt" 2>/dev/null
openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
token=$(openssl rand -hex 24)
printf '%s,apiconform-admin,apiconform-admin,"system:masters"\n' "$token" > "$pki/tokens.csv"
chmod 600 "$pki"/*

"$bin/etcd" --name oracle --data-dir "$dir/etcd" \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-cluster "oracle=http://127.0.0.1:$peer_port" --listen-metrics-urls "" \
  >"$dir/etcd.log" 2>&1 &
echo $! > "$dir/etcd.pid"

for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$etcd_port/health" >/dev/null 2>&1 && break
  kill -0 "$(cat "$dir/etcd.pid")" 2>/dev/null || { echo "oracle: etcd exited; see $dir/etcd.log" >&2; tail -20 "$dir/etcd.log" >&2; exit 1; }
  sleep 0.2
done

"$bin/kube-apiserver" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$api_port" \
  --etcd-servers="http://127.0.0.1:$etcd_port" --etcd-compaction-interval="$compaction" \
  --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" --cert-dir="$dir/certs" \
  --token-auth-file="$pki/tokens.csv" --authorization-mode=RBAC --anonymous-auth=false \
  --service-account-issuer=https://kubernetes.default.svc \
  --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
  --service-cluster-ip-range=10.96.0.0/24 --endpoint-reconciler-type=none \
  >"$dir/kube-apiserver.log" 2>&1 &
echo $! > "$dir/kube-apiserver.pid"

server="https://127.0.0.1:$api_port"
ready=""
for _ in $(seq 1 300); do
  if curl -fsS --cacert "$pki/ca.crt" -H "Authorization: Bearer $token" "$server/readyz" >/dev/null 2>&1; then ready=1; break; fi
  kill -0 "$(cat "$dir/kube-apiserver.pid")" 2>/dev/null || break
  sleep 0.2
done
if [ -z "$ready" ]; then
  echo "oracle: kube-apiserver did not become ready; see $dir/kube-apiserver.log" >&2
  tail -30 "$dir/kube-apiserver.log" >&2
  exit 1
fi

ca_data=$(base64 -w0 < "$pki/ca.crt")
umask 077
cat > "$dir/kubeconfig" <<KCFG
apiVersion: v1
kind: Config
clusters:
- name: oracle
  cluster:
    server: $server
    certificate-authority-data: $ca_data
users:
- name: apiconform-admin
  user:
    token: $token
contexts:
- name: oracle
  context: {cluster: oracle, user: apiconform-admin}
current-context: oracle
KCFG
echo "oracle: kube-apiserver ready at $server (kubeconfig $dir/kubeconfig)"
