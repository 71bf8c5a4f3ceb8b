package registry

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/apiconform/apiconform/refserver/storage"
)

// SystemNamespaces exist from the start, as on a kube-apiserver cluster.
var SystemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// namespaceKind is the strategy of Namespace. Deleting a namespace always
// marks it Terminating first; its content is then removed in the
// background, and the namespace last.
func namespaceKind(r *Registry) *Kind {
	k := &Kind{
		Group: "", Versions: []string{"v1"}, Resource: "namespaces", Singular: "namespace", Kind: "Namespace", ListKind: "NamespaceList",
		ShortNames: []string{"ns"}, StatusSubresource: true, GracefulDelete: true,
		StrategicMerge: corev1.Namespace{}, Typed: func() any { return &corev1.Namespace{} },
		NameValidation: func(n string) []string { return utilvalidation.IsDNS1123Label(n) },
		Prepare: func(obj, old Object) {
			m := meta(obj)
			ls, _ := m["labels"].(map[string]any)
			if ls == nil {
				ls = map[string]any{}
				m["labels"] = ls
			}
			ls["kubernetes.io/metadata.name"] = m["name"]
			if old == nil {
				obj["spec"] = map[string]any{"finalizers": []any{"kubernetes"}}
				obj["status"] = map[string]any{"phase": "Active"}
			} else if sp, ok := old["spec"]; ok {
				obj["spec"] = sp
			}
		},
		MarkDeleted: func(obj Object) {
			st, _ := obj["status"].(map[string]any)
			if st == nil {
				st = map[string]any{}
				obj["status"] = st
			}
			st["phase"] = "Terminating"
			delete(meta(obj), "deletionGracePeriodSeconds")
		},
		Fields: map[string]func(Object) string{
			"status.phase": func(o Object) string { return str(mapOf(o["status"])["phase"]) },
		},
		Columns: []Column{
			{Name: "Status", Type: "string", Description: "The status of the namespace", Cell: func(o Object) any { return str(mapOf(o["status"])["phase"]) }},
			AgeColumn,
		},
	}
	k.OnStart = func(ctx context.Context) error { return r.createSystemNamespaces(ctx, k) }
	k.OnDeleteMarked = func(obj Object) { r.startNamespaceCleanup(k, str(meta(obj)["name"])) }
	return k
}

// createSystemNamespaces creates the SystemNamespaces that are missing.
func (r *Registry) createSystemNamespaces(ctx context.Context, nsKind *Kind) error {
	for _, ns := range SystemNamespaces {
		if _, err := r.store.Get(ctx, keyOf(nsKind, "", ns), 0); errors.Is(err, storage.ErrNotFound) {
			obj := Object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}
			if _, err := r.Create(ctx, nsKind, "v1", "", obj, WriteOptions{FieldManager: "kube-apiserver"}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create namespace %s: %w", ns, err)
			}
		}
	}
	return nil
}

// startNamespaceCleanup removes everything in a terminating namespace, then the namespace.
func (r *Registry) startNamespaceCleanup(nsKind *Kind, ns string) {
	r.background(func(ctx context.Context) {
		for ctx.Err() == nil {
			left := 0
			for _, k := range r.Kinds() {
				if !k.Namespaced {
					continue
				}
				res, err := r.DeleteCollection(ctx, k, k.StorageVersion(), ns, Selector{}, DeleteOptions{})
				if err == nil {
					for _, o := range res.Items {
						if str(meta(o)["deletionTimestamp"]) != "" {
							left++
						}
					}
				}
			}
			if left == 0 {
				kv, err := r.store.Get(ctx, keyOf(nsKind, "", ns), 0)
				if err != nil {
					return
				}
				if _, _, err := r.store.Delete(ctx, kv.Key, kv.ModRevision); err == nil || errors.Is(err, storage.ErrNotFound) {
					return
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
}
