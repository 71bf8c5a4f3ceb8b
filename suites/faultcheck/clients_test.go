package faultcheck_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiconform/apiconform/refserver/faults"
)

// clientsMustFail: the clients area's rows of mustFail.
var clientsMustFail = map[string][]string{
	// The informer's cache keeps the old version of an updated object;
	// kubectl get -w prints no line for the update.
	faults.WatchNoModified: {"CLIENT-INFORMER-LIST-WATCH", "CLIENT-KUBECTL-GET-WATCH"},
	// describe and events --for show another object's event.
	faults.EventSelectorsIgnored: {"CLIENT-KUBECTL-DESCRIBE"},
	// core/v1 does not list the event the new recorder wrote.
	faults.EventsAPIsApart: {"CLIENT-EVENTS-V1"},
	// A stale write takes the lease from its leader.
	faults.LeaseUpdatesUnconditional: {"CLIENT-LEADER-ELECTION"},
	// The reflector never learns that its resourceVersion expired, so it
	// never relists.
	faults.WatchExpiredNo410: {"CLIENT-REFLECTOR-RELIST-410"},
	// The pager's pages miss an item an unpaged list has.
	faults.ContinueSkipsItem: {"CLIENT-PAGER-CHUNKS"},
	// Typed clientsets write in protobuf (client-go falls back to JSON on
	// 415 for CBOR only).
	faults.ProtobufBodyRefused: {"CLIENT-TYPED-PROTOBUF"},
	// Gets of configmaps and secrets come back in JSON.
	faults.ProtobufAnswersJSON: {"CLIENT-TYPED-PROTOBUF"},
	// The RESTMapper maps a namespaced CRD's kind as cluster-scoped.
	faults.DiscoveryClusterScoped: {"CLIENT-DISCOVERY-RESTMAPPER"},
	// Neither the OpenAPI v3 client nor kubectl explain finds a kind's schema.
	faults.OpenAPIV3NoGVK: {"CLIENT-OPENAPI-V3", "CLIENT-KUBECTL-EXPLAIN"},
	// kubectl apply stops asking the server for strict validation.
	faults.OpenAPIV3NoFieldValidation: {"CLIENT-KUBECTL-APPLY-CRD"},
	// kubectl auth can-i says no to a verb the identity may use.
	faults.AccessReviewDenies: {"CLIENT-KUBECTL-AUTH-CAN-I"},
}

// kubectlMissing says why the kubectl specs cannot run here ("" when they
// can). Without $KUBECTL or kubectl on PATH, the oracle's kubectl
// (<repo>/oracle/bin/kubectl, built by make oracle) is used when present:
// the child runs inherit KUBECTL.
var kubectlMissing = func() string {
	if k := os.Getenv("KUBECTL"); k != "" {
		if _, err := os.Stat(k); err != nil {
			return "KUBECTL=" + k + ": " + err.Error()
		}
		return ""
	}
	if _, err := exec.LookPath("kubectl"); err == nil {
		return ""
	}
	if dir, err := os.Getwd(); err == nil {
		for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
				continue
			}
			k := filepath.Join(dir, "oracle", "bin", "kubectl")
			if _, err := os.Stat(k); err == nil {
				_ = os.Setenv("KUBECTL", k)
				return ""
			}
			break
		}
	}
	return "no kubectl ($KUBECTL, kubectl on PATH or oracle/bin/kubectl from make oracle): the kubectl specs would skip"
}()

// needsKubectl tells whether a requirement's specs run a real kubectl.
func needsKubectl(id string) bool { return strings.HasPrefix(id, "CLIENT-KUBECTL-") }

// runnable drops from ids the requirements whose specs cannot run on this
// machine, saying so in t's log.
func runnable(t *testing.T, ids []string) []string {
	if kubectlMissing == "" {
		return ids
	}
	var kept, dropped []string
	for _, id := range ids {
		if needsKubectl(id) {
			dropped = append(dropped, id)
		} else {
			kept = append(kept, id)
		}
	}
	if len(dropped) > 0 {
		t.Logf("not checked, %s: %v", kubectlMissing, dropped)
	}
	return kept
}
