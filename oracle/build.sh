#!/usr/bin/env bash
# Builds the oracle binaries (kube-apiserver, kubectl, etcd) from the Go modules
# pinned in oracle/go.mod into oracle/bin. Go's build cache makes a second run cheap.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
mkdir -p bin
start=$(date +%s)
# Stamp the release into /version as the Kubernetes release build does, so
# clients and reports see v1.x.y rather than v0.0.0-master.
version=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=$(echo "$version" | cut -d. -f2)
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done
go build -ldflags "$ldflags" -o bin/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
go build -ldflags "$ldflags" -o bin/kubectl k8s.io/kubernetes/cmd/kubectl
go build -o bin/etcd go.etcd.io/etcd/server/v3
echo "oracle: binaries built in $(( $(date +%s) - start ))s: $(bin/kube-apiserver --version 2>&1 | head -1), etcd $(bin/etcd --version 2>&1 | head -1 | awk '{print $3}')"
