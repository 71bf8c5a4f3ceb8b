#!/bin/sh
# capture.sh KUBECONFIG OUTDIR: saves the kube-apiserver documents the
# generator reads that ../../../../shared/testdata lacks (groups beyond core,
# and the paths kube-apiserver publishes for two sample CRDs, one namespaced
# and one cluster-scoped). Needs the oracle (make oracle) and its kubectl.
set -eu
kc=$1 out=$2
mkdir -p "$out"
kubectl=${KUBECTL:-kubectl}
server=$("$kubectl" --kubeconfig "$kc" config view --raw -o jsonpath='{.clusters[0].cluster.server}')
token=$("$kubectl" --kubeconfig "$kc" config view --raw -o jsonpath='{.users[0].user.token}')
ca="$out/ca.crt"
"$kubectl" --kubeconfig "$kc" config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$ca"
"$kubectl" --kubeconfig "$kc" apply -f "$(dirname "$0")/samples.yaml"
"$kubectl" --kubeconfig "$kc" wait --for=condition=Established crd/pplurals.zgroup.example.org crd/cplurals.ygroup.example.org
sleep 5 # the OpenAPI controller publishes new CRDs asynchronously
get() { curl -fsS --cacert "$ca" -A apiconform-openapigen -H "Authorization: Bearer $token" -o "$out/$2" "$server$1"; }
for gv in apiextensions.k8s.io authorization.k8s.io authentication.k8s.io coordination.k8s.io events.k8s.io rbac.authorization.k8s.io; do
	get "/openapi/v3/apis/$gv/v1" "apis__${gv}__v1_openapi.json"
done
get /openapi/v3/apis/zgroup.example.org/v9beta7 crd-namespaced-v3.json
get /openapi/v3/apis/ygroup.example.org/v9beta7 crd-cluster-v3.json
get /openapi/v2 swagger.json
"$kubectl" --kubeconfig "$kc" delete -f "$(dirname "$0")/samples.yaml"
