package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
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
		ShortNames: []string{"ns"}, StatusSubresource: true, StatusWritesMetadata: true, GracefulDelete: true,
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
		},
		// The main resource does not change the finalizers (/finalize does).
		PrepareUpdated: func(obj, old Object) {
			if sp, ok := old["spec"]; ok {
				obj["spec"] = sp
			} else {
				delete(obj, "spec")
			}
		},
		PrepareCreated: func(obj Object) {
			obj["spec"] = map[string]any{"finalizers": []any{"kubernetes"}}
			obj["status"] = map[string]any{"phase": "Active"}
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
				if !k.Namespaced || k.StoredAs != nil { // its objects go with the kind they are stored as
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

// namespaceStates is what a create in a namespace needs to know of it,
// whether it exists and whether it is terminating, kept from the namespace
// writes themselves, so that a create reads no stored namespace (a store
// read waits behind every writer holding the store's lock).
//
// It is exact, as reading the store is: the registry is its store's only
// writer and sees every namespace write (indexedStore); those writes are
// serialized (writeMu), and while one is in flight its namespace has no
// state here, so a create reads the store as before; once it has ended the
// state is the stored one. A namespace without a state (not seen since the
// start, or not existing) is read from the store; what is read is kept
// unless a namespace write began or ended meanwhile (gen). Only existing
// namespaces are held.
type namespaceStates struct {
	prefix  string     // the namespaces' key prefix
	writeMu sync.Mutex // held across one namespace write
	mu      sync.RWMutex
	states  map[string]bool // name → terminating
	gen     uint64          // counts namespace writes begun and ended
}

func newNamespaceStates() *namespaceStates {
	return &namespaceStates{prefix: "/registry/core/namespaces/", states: map[string]bool{}}
}

// lookup returns ns's state when held, and the generation to learn with.
func (n *namespaceStates) lookup(ns string) (terminating, known bool, gen uint64) {
	if n == nil {
		return false, false, 0
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	terminating, known = n.states[ns]
	return terminating, known, n.gen
}

// learn keeps a state read from the store after lookup returned gen,
// unless a namespace write has begun or ended since.
func (n *namespaceStates) learn(ns string, terminating bool, gen uint64) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.gen == gen {
		n.states[ns] = terminating
	}
}

// writing begins a write of key: for a namespace's key it waits for the
// namespace write in flight, forgets the namespace's state and returns its
// name; done must follow.
func (n *namespaceStates) writing(key string) (string, bool) {
	if n == nil {
		return "", false
	}
	name, ok := strings.CutPrefix(key, n.prefix)
	if !ok || name == "" || strings.Contains(name, "/") {
		return "", false
	}
	n.writeMu.Lock()
	n.mu.Lock()
	delete(n.states, name)
	n.gen++
	n.mu.Unlock()
	return name, true
}

// written records the outcome of the write of namespace name: its stored
// value (nil for a delete) when stored.
func (n *namespaceStates) written(name string, value []byte, stored bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.gen++
	if stored && value != nil {
		n.states[name] = terminatingNamespace(value)
	} else {
		delete(n.states, name)
	}
}

// done ends the namespace write begun by writing.
func (n *namespaceStates) done() { n.writeMu.Unlock() }
