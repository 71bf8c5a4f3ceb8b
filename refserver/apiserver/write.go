package apiserver

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiconform/apiconform/refserver/fieldcheck"
	"github.com/apiconform/apiconform/refserver/registry"
)

// create and update (patch: patch.go).

// dryRun: the request asks for a dry run (its values were validated with the other options).
func dryRun(r *http.Request) bool {
	return len(query(r)["dryRun"]) > 0
}

// readObject reads and decodes the body of a create or update (verb).
func (h *Handler) readObject(w http.ResponseWriter, r *http.Request, ri *requestInfo, verb string) (registry.Object, error) {
	obj, _, err := h.readObjectAgain(w, r, ri, verb)
	return obj, err
}

// readObjectAgain is readObject, and a function that returns it the first
// time and the body decoded again later: the object a write retried after
// a conflict starts from, without a copy of it kept for the retry.
func (h *Handler) readObjectAgain(w http.ResponseWriter, r *http.Request, ri *requestInfo, verb string) (registry.Object, func() (registry.Object, error), error) {
	body, f, err := h.readInput(r, verb)
	if err != nil {
		return nil, nil, err
	}
	lv, err := level(r, map[string]string{"create": "CreateOptions", "update": "UpdateOptions"}[verb])
	if err != nil {
		return nil, nil, err
	}
	obj, warnings, err := decodeObject(ri, body, f, lv)
	if err != nil {
		return nil, nil, err
	}
	h.addWarnings(w, warnings)
	m := registry.Meta(obj)
	if ns, _ := m["namespace"].(string); ri.kind.Namespaced && ns != "" && ns != ri.namespace {
		return nil, nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	given := false
	again := func() (registry.Object, error) {
		if !given {
			given = true
			return obj, nil
		}
		o, _, err := decodeObject(ri, body, f, lv) // its warnings were given
		return o, err
	}
	return obj, again, nil
}

// readInput reads the body of a create or update in kube-apiserver's order:
// a create checks the media type (415) before the body and the query options
// (422); an update checks the media type last.
func (h *Handler) readInput(r *http.Request, verb string) ([]byte, fieldcheck.Format, error) {
	ct := r.Header.Get("Content-Type")
	if verb == "create" {
		if _, _, err := inputFormat(ct); err != nil {
			return nil, 0, err
		}
	}
	body, err := readBody(r)
	if err != nil {
		return nil, 0, err
	}
	if err := validateOptions(r, verb); err != nil {
		return nil, 0, err
	}
	return bodyOf(ct, body)
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request, ri *requestInfo) error {
	dry := dryRun(r)
	obj, err := h.readObject(w, r, ri, "create")
	if err != nil {
		return err
	}
	answer := answerInto(r, dry)
	out, err := h.reg.Create(r.Context(), ri.kind, ri.version, ri.namespace, obj, registry.WriteOptions{DryRun: dry, FieldManager: managerOf(r), Answer: answer})
	if err != nil {
		return err
	}
	h.answerWrite(w, r, ri, http.StatusCreated, out, dry, registry.Answered(answer))
	return nil
}

func (h *Handler) update(w http.ResponseWriter, r *http.Request, ri *requestInfo) error {
	dry := dryRun(r)
	if ri.subresource == "scale" {
		return h.updateScale(w, r, ri, dry)
	}
	obj, again, err := h.readObjectAgain(w, r, ri, "update")
	if err != nil {
		return err
	}
	m := registry.Meta(obj)
	if name, _ := m["name"].(string); name != ri.name {
		return apierrors.NewBadRequest("the name of the object (" + name + ") does not match the name on the URL (" + ri.name + ")")
	}
	answer := answerInto(r, dry)
	opts := registry.WriteOptions{DryRun: dry, Subresource: ri.subresource, FieldManager: managerOf(r), Answer: answer}
	out, created, err := h.reg.Put(r.Context(), ri.kind, ri.version, ri.namespace, ri.name, again, opts)
	if err != nil {
		return err
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	h.answerWrite(w, r, ri, code, out, dry, registry.Answered(answer))
	return nil
}
