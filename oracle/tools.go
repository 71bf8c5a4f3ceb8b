//go:build tools

// Package oracle pins the binaries the oracle run builds: kube-apiserver,
// kubectl and etcd. Nothing here is compiled into apiconform.
package oracle

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
