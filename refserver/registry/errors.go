package registry

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiconform/apiconform/refserver/rvplan"
	"github.com/apiconform/apiconform/refserver/storage"
)

// conflictMsg is kube-apiserver's message for a write that lost a race or
// named a stale resourceVersion (its OptimisticLockErrorMsg).
const conflictMsg = "the object has been modified; please apply your changes to the latest version and try again"

// conflict is the 409 for a stale write.
func conflict(k *Kind, name string) error {
	return apierrors.NewConflict(k.GroupResource(), name, errors.New(conflictMsg))
}

// storeErr turns a store error into the Status kube-apiserver answers.
func (r *Registry) storeErr(k *Kind, name string, err error) error {
	var se *apierrors.StatusError
	switch {
	case errors.As(err, &se):
		return err
	case errors.Is(err, storage.ErrNotFound):
		return apierrors.NewNotFound(k.GroupResource(), name)
	case errors.Is(err, storage.ErrKeyExists):
		return apierrors.NewAlreadyExists(k.GroupResource(), name)
	case errors.Is(err, storage.ErrConflict):
		return conflict(k, name)
	case errors.Is(err, storage.ErrCompacted):
		return rvplan.Expired()
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apierrors.NewTimeoutError("request did not complete within the allowed duration", 0)
	}
	return apierrors.NewInternalError(err)
}

// Preconditions pin the object a write may change (metav1.Preconditions).
type Preconditions struct {
	UID             string
	ResourceVersion string
}

// check compares the preconditions with the current object, in
// kube-apiserver's words. kube-apiserver names the resource by its kind in
// these messages (e.g. `ConfigMap "x"`), so the error does too.
func (p Preconditions) check(k *Kind, name string, cur Object) error {
	m := meta(cur)
	gr := schema.GroupResource{Group: k.Group, Resource: k.Kind}
	if p.UID != "" && p.UID != str(m["uid"]) {
		return apierrors.NewConflict(gr, name, fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", p.UID, str(m["uid"])))
	}
	if p.ResourceVersion != "" && p.ResourceVersion != str(m["resourceVersion"]) {
		return apierrors.NewConflict(gr, name, fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", p.ResourceVersion, str(m["resourceVersion"])))
	}
	return nil
}
