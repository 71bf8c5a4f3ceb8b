package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apiconform/apiconform/refserver/fieldcheck"
	"github.com/apiconform/apiconform/refserver/registry"
	"github.com/apiconform/apiconform/refserver/rvplan"
)

// delete and deletecollection.

func (h *Handler) deleteOptions(r *http.Request) (registry.DeleteOptions, error) {
	var o registry.DeleteOptions
	body, err := readBody(r)
	if err != nil {
		return o, err
	}
	var opts metav1.DeleteOptions
	if len(strings.TrimSpace(string(body))) > 0 {
		b, f, err := bodyOf(r.Header.Get("Content-Type"), body)
		if err != nil {
			return o, err
		}
		raw, err := toJSON(b, f)
		if err != nil {
			return o, err
		}
		if err := json.Unmarshal(raw, &opts); err != nil {
			return o, apierrors.NewBadRequest(fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml: %v", err))
		}
	}
	q := query(r)
	if p := q.Get("propagationPolicy"); p != "" {
		pp := metav1.DeletionPropagation(p)
		opts.PropagationPolicy = &pp
	}
	if p := q.Get("gracePeriodSeconds"); p != "" {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return o, apierrors.NewBadRequest(fmt.Sprintf("invalid gracePeriodSeconds %q", p))
		}
		opts.GracePeriodSeconds = &n
	}
	o.DryRun = dryRun(r)
	if err := fieldcheck.ValidateDeleteDryRun(opts.DryRun); err != nil {
		return o, err
	}
	o.DryRun = o.DryRun || len(opts.DryRun) > 0
	if opts.PropagationPolicy != nil {
		switch *opts.PropagationPolicy {
		case metav1.DeletePropagationForeground, metav1.DeletePropagationBackground, metav1.DeletePropagationOrphan:
			o.PropagationPolicy = string(*opts.PropagationPolicy)
		default:
			return o, invalidDeleteOptions(string(*opts.PropagationPolicy))
		}
	}
	if opts.Preconditions != nil {
		if opts.Preconditions.UID != nil {
			o.PreconditionUID = string(*opts.Preconditions.UID)
		}
		if opts.Preconditions.ResourceVersion != nil {
			o.PreconditionVersion = *opts.Preconditions.ResourceVersion
		}
	}
	return o, nil
}

func invalidDeleteOptions(policy string) error {
	msg := fmt.Sprintf("Unsupported value: %q: supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"", policy)
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid,
		Message: "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: " + msg,
		Details: &metav1.StatusDetails{Group: "meta.k8s.io", Kind: "DeleteOptions", Causes: []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueNotSupported, Message: msg, Field: "propagationPolicy"}}},
	}}
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request, ri *requestInfo) error {
	o, err := h.deleteOptions(r)
	if err != nil {
		return err
	}
	o.StatusOnly = true // answered below with a Status when it removes the object
	res, err := h.reg.Delete(r.Context(), ri.kind, ri.version, ri.namespace, ri.name, o)
	if err != nil {
		return err
	}
	if res.Finished && ri.kind.DeleteReturnsStatus {
		writeObject(w, r, 200, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess,
			Details: &metav1.StatusDetails{Name: ri.name, Group: ri.group, Kind: ri.resource, UID: types.UID(res.UID)}})
		return nil
	}
	writeObject(w, r, 200, res.Object)
	return nil
}

func (h *Handler) deleteCollection(w http.ResponseWriter, r *http.Request, ri *requestInfo) error {
	req, sel, err := h.listParams(r, ri, rvplan.List)
	if err != nil {
		return err
	}
	if _, serr := rvplan.Make(req); serr != nil {
		return serr
	}
	o, err := h.deleteOptions(r)
	if err != nil {
		return err
	}
	res, err := h.reg.DeleteCollection(r.Context(), ri.kind, ri.version, ri.namespace, sel, o)
	if err != nil {
		return err
	}
	writeObject(w, r, 200, h.listObject(ri, res))
	return nil
}
