package apiserver

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/apiconform/apiconform/refserver/apply"
	"github.com/apiconform/apiconform/refserver/fieldcheck"
	"github.com/apiconform/apiconform/refserver/registry"
)

// Patch media types.
const (
	JSONPatch      = "application/json-patch+json"
	MergePatch     = "application/merge-patch+json"
	StrategicPatch = "application/strategic-merge-patch+json"
	ApplyPatch     = "application/apply-patch+yaml"
)

// applyPatchBytes applies a patch of the given media type to a JSON document.
// strategic is the Go type whose tags drive a strategic merge (nil: unsupported).
func applyPatchBytes(patchType string, cur, patch []byte, strategic any) ([]byte, error) {
	switch patchType {
	case JSONPatch:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		out, err := p.Apply(cur)
		if err != nil {
			return nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid, Message: err.Error()}}
		}
		return out, nil
	case MergePatch:
		var v any
		if err := json.Unmarshal(patch, &v); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		out, err := jsonpatch.MergePatch(cur, patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return out, nil
	case StrategicPatch:
		if strategic == nil {
			return nil, errUnsupportedPatch()
		}
		var v map[string]any
		if err := json.Unmarshal(patch, &v); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		out, err := strategicpatch.StrategicMergePatch(cur, patch, strategic)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return out, nil
	}
	return nil, errUnsupportedPatch()
}

func errUnsupportedPatch() error {
	return plainStatus(415, metav1.StatusReasonUnsupportedMediaType, "415: Unsupported Media Type")
}

func (h *Handler) patch(w http.ResponseWriter, r *http.Request, ri *requestInfo) error {
	dry := dryRun(r)
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case JSONPatch, MergePatch, ApplyPatch:
	case StrategicPatch:
		if ri.kind.StrategicMerge == nil {
			return errUnsupportedPatch()
		}
	default:
		return errUnsupportedPatch()
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	// kube-apiserver checks the options after the media type and the body.
	if err := apply.ValidatePatchOptions(patchOptions(r), types.PatchType(mt)); err != nil {
		return err
	}
	lv, err := level(r, "PatchOptions")
	if err != nil {
		return err
	}
	opts := registry.WriteOptions{DryRun: dry, Subresource: ri.subresource, FieldManager: managerOf(r), Answer: answerInto(r, dry)}
	if mt == ApplyPatch {
		return h.apply(w, r, ri, body, opts, lv)
	}
	if ri.subresource == "scale" {
		return h.patchScale(w, r, ri, mt, body, dry)
	}
	var mergeDoc map[string]any // a merge patch that is an object, merged without a JSON round trip (mergepatch.go)
	if mt == MergePatch {
		mergeDoc, _ = decodeMergePatch(body)
	}
	patched := func(cur registry.Object) (registry.Object, []string, error) {
		if mergeDoc != nil {
			merged := mergeObject(cur, mergeDoc)
			if m, ok := registry.WriteCopy(ri.kind, ri.version, merged); ok {
				if obj, ok := decoder(ri).DecodePatchedObject(fieldcheck.PatchType(mt), body, m); ok {
					return obj, nil, nil
				}
			}
			if next, err := registry.MarshalJSON(merged); err == nil {
				if obj, w, err := decoder(ri).DecodePatched(fieldcheck.PatchType(mt), body, next, lv); err == nil && len(w) == 0 {
					return obj, nil, nil
				}
			}
		}
		curJSON, _ := registry.MarshalJSON(cur)
		next, err := applyPatchBytes(mt, curJSON, body, ri.kind.StrategicMerge)
		if err != nil {
			return nil, nil, err
		}
		return decoder(ri).DecodePatched(fieldcheck.PatchType(mt), body, next, lv)
	}
	var warnings []string
	// patched only reads cur: a merge builds a new object sharing cur's
	// untouched members, and registry.WriteCopy gives it a new object and
	// metadata (what the write sets); the other paths encode cur. A merge
	// patch's result does not depend on cur's managedFields, which the
	// write keeps as stored whatever the patch says of them; JSON and
	// strategic merge patches can read them (a test op, a copy from them).
	mutate := h.reg.MutateReading
	if mt == MergePatch {
		mutate = h.reg.MutateMerging
	}
	out, err := mutate(r.Context(), ri.kind, ri.version, ri.namespace, ri.name, opts, func(cur registry.Object) (registry.Object, error) {
		obj, w, err := patched(cur)
		if err != nil {
			return nil, err
		}
		warnings = w
		if err := checkTypeMeta(ri, obj); err != nil {
			return nil, err
		}
		// A patch may carry a resourceVersion precondition; otherwise none.
		if rv := registry.Meta(obj)["resourceVersion"]; rv == registry.Meta(cur)["resourceVersion"] {
			delete(registry.Meta(obj), "resourceVersion")
		}
		if err := checkIdentity(ri, obj); err != nil {
			return nil, err
		}
		if ri.kind.Namespaced {
			registry.Meta(obj)["namespace"] = ri.namespace
		}
		return obj, nil
	})
	h.addWarnings(w, warnings)
	if err != nil {
		return err
	}
	h.answerWrite(w, r, ri, 200, out, dry, registry.Answered(opts.Answer))
	return nil
}

// patchOptions reads a PATCH's query options.
func patchOptions(r *http.Request) metav1.PatchOptions {
	q := query(r)
	o := metav1.PatchOptions{DryRun: q["dryRun"], FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")}
	if v, ok := q["force"]; ok {
		force, _ := strconv.ParseBool(v[0])
		o.Force = &force
	}
	return o
}

// checkIdentity rejects a patched or applied object of another name or
// namespace (an absent namespace is the request's).
func checkIdentity(ri *requestInfo, obj registry.Object) error {
	m := registry.Meta(obj)
	if name, _ := m["name"].(string); name != ri.name {
		return apierrors.NewBadRequest("the name of the object (" + name + ") does not match the name on the URL (" + ri.name + ")")
	}
	if ns, _ := m["namespace"].(string); ri.kind.Namespaced && ns != "" && ns != ri.namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// apply is server-side apply: the applied configuration is created when
// absent, else merged over the live object with field ownership. Only
// duplicate keys are found while decoding; the field manager refuses
// unknown fields and wrong types (a 500, as kube-apiserver answers).
func (h *Handler) apply(w http.ResponseWriter, r *http.Request, ri *requestInfo, body []byte, opts registry.WriteOptions, lv fieldcheck.Level) error {
	applied, warnings, err := fieldcheck.DecodeApply(body, lv)
	if err != nil {
		return err
	}
	h.addWarnings(w, warnings)
	if err := checkIdentity(ri, applied); err != nil {
		return err
	}
	manager := query(r).Get("fieldManager")
	force := query(r).Get("force") == "true"
	fm := ri.kind.FieldManager(ri.version, ri.subresource)
	if fm == nil {
		return errUnsupportedPatch()
	}
	if ri.subresource == "" {
		// What the main resource's strategy resets (status, for a kind with
		// a status subresource) is neither written nor owned, and conflicts
		// with no one; a subresource's Manager filters its own.
		for _, f := range ri.kind.ResetFields("") {
			delete(applied, f)
		}
	}
	opts.Applied = true
	// The field manager only reads cur (its fast paths are tested for that,
	// its library path works on a copy), and what it returns goes through
	// decodeApplied, whose object and metadata are new maps (registry.WriteCopy),
	// so no copy of cur is made. Its common answer, an applier's first apply
	// onto an object one writer tracks, is made from the managedFields as
	// stored (ApplyStored); every other from the whole object.
	written := func(cur, merged registry.Object) (registry.Object, error) {
		obj, err := decodeApplied(ri, merged)
		if err != nil {
			return nil, err
		}
		if rv := registry.Meta(obj)["resourceVersion"]; rv == registry.Meta(cur)["resourceVersion"] {
			delete(registry.Meta(obj), "resourceVersion")
		}
		return obj, nil
	}
	stored := func(cur registry.Object, mf []byte) (registry.Object, []byte, bool, error) {
		merged, outMF, ok := fm.ApplyStored(cur, mf, applied, manager)
		if !ok {
			return nil, nil, false, nil
		}
		obj, err := written(cur, merged)
		return obj, outMF, err == nil, err
	}
	out, err := h.reg.MutateApplying(r.Context(), ri.kind, ri.version, ri.namespace, ri.name, opts, stored, func(cur registry.Object) (registry.Object, error) {
		merged, err := fm.Apply(cur, applied, manager, force)
		if err != nil {
			return nil, err
		}
		return written(cur, merged)
	})
	if err != nil && ri.subresource == "" && apierrors.IsNotFound(err) { // IsNotFound allocates, even for nil
		merged, aerr := fm.Apply(nil, applied, manager, force)
		if aerr != nil {
			return aerr
		}
		created, cerr := h.reg.Create(r.Context(), ri.kind, ri.version, ri.namespace, merged, opts)
		if cerr != nil {
			return cerr
		}
		h.answerWrite(w, r, ri, http.StatusCreated, created, opts.DryRun, registry.Answered(opts.Answer))
		return nil
	}
	if err != nil {
		return err
	}
	h.answerWrite(w, r, ri, 200, out, opts.DryRun, registry.Answered(opts.Answer))
	return nil
}

// decodeApplied puts an apply's result through the typed round trip the
// endpoint's decoder makes: straight from the object when the decoder proves
// that changes nothing, else through its JSON.
func decodeApplied(ri *requestInfo, merged registry.Object) (registry.Object, error) {
	if m, ok := registry.WriteCopy(ri.kind, ri.version, merged); ok {
		if obj, ok := decoder(ri).DecodeObject(m); ok {
			return obj, nil
		}
	}
	b, _ := registry.MarshalJSON(merged)
	obj, _, err := decoder(ri).Decode(b, fieldcheck.JSON, fieldcheck.Ignore)
	return obj, err
}

// ---- /scale ----

func pathParts(p string) []string { return strings.Split(strings.TrimPrefix(p, "."), ".") }

func getPath(obj registry.Object, p string) any {
	var cur any = obj
	for _, part := range pathParts(p) {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

func setPath(obj registry.Object, p string, v any) {
	parts := pathParts(p)
	m := obj
	for _, part := range parts[:len(parts)-1] {
		next, ok := m[part].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[part] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case float64:
		return int64(n)
	case int64:
		return n
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}

func scaleOf(ri *requestInfo, obj registry.Object) map[string]any {
	m := registry.Meta(obj)
	sm := map[string]any{"name": m["name"], "uid": m["uid"], "resourceVersion": m["resourceVersion"], "creationTimestamp": m["creationTimestamp"]}
	if ri.kind.Namespaced {
		sm["namespace"] = m["namespace"]
	}
	status := map[string]any{"replicas": toInt64(getPath(obj, ri.kind.Scale.StatusReplicasPath))}
	if p := ri.kind.Scale.LabelSelectorPath; p != "" {
		if s, ok := getPath(obj, p).(string); ok {
			status["selector"] = s
		}
	}
	return map[string]any{"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": sm,
		"spec": map[string]any{"replicas": toInt64(getPath(obj, ri.kind.Scale.SpecReplicasPath))}, "status": status}
}

func (h *Handler) writeScale(w http.ResponseWriter, r *http.Request, ri *requestInfo, obj registry.Object) error {
	writeObject(w, r, 200, scaleOf(ri, obj))
	return nil
}

// setReplicas writes a Scale's spec.replicas into the object.
func (h *Handler) setReplicas(r *http.Request, ri *requestInfo, dry bool, scaleFn func(cur map[string]any) (map[string]any, error)) (registry.Object, error) {
	opts := registry.WriteOptions{DryRun: dry, Subresource: ri.subresource, FieldManager: managerOf(r)}
	return h.reg.Mutate(r.Context(), ri.kind, ri.version, ri.namespace, ri.name, opts, func(cur registry.Object) (registry.Object, error) {
		sc, err := scaleFn(scaleOf(ri, cur))
		if err != nil {
			return nil, err
		}
		spec, _ := sc["spec"].(map[string]any)
		rep, ok := spec["replicas"].(float64)
		if !ok || rep < 0 || rep != float64(int64(rep)) {
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: "autoscaling", Kind: "Scale"}, ri.name, fieldErrs("spec.replicas", spec["replicas"], "must be greater than or equal to 0"))
		}
		setPath(cur, ri.kind.Scale.SpecReplicasPath, int64(rep))
		sm, _ := sc["metadata"].(map[string]any)
		rv, _ := sm["resourceVersion"].(string)
		if rv == registry.Meta(cur)["resourceVersion"] {
			rv = ""
		}
		registry.Meta(cur)["resourceVersion"] = rv
		if rv == "" {
			delete(registry.Meta(cur), "resourceVersion")
		}
		return cur, nil
	})
}

func (h *Handler) updateScale(w http.ResponseWriter, r *http.Request, ri *requestInfo, dry bool) error {
	body, f, err := h.readInput(r, "update")
	if err != nil {
		return err
	}
	raw, err := toJSON(body, f)
	if err != nil {
		return err
	}
	var in map[string]any
	if err := json.Unmarshal(raw, &in); err != nil || in == nil {
		return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type Scale): %v", err))
	}
	out, err := h.setReplicas(r, ri, dry, func(cur map[string]any) (map[string]any, error) {
		cm, _ := cur["metadata"].(map[string]any)
		im, _ := in["metadata"].(map[string]any)
		if rv, _ := im["resourceVersion"].(string); rv != "" {
			cm["resourceVersion"] = rv
		}
		cur["spec"] = in["spec"]
		return cur, nil
	})
	if err != nil {
		return err
	}
	return h.writeScale(w, r, ri, out)
}

func (h *Handler) patchScale(w http.ResponseWriter, r *http.Request, ri *requestInfo, mt string, body []byte, dry bool) error {
	out, err := h.setReplicas(r, ri, dry, func(cur map[string]any) (map[string]any, error) {
		b, _ := json.Marshal(cur)
		next, err := applyPatchBytes(mt, b, body, nil)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(next, &m); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return m, nil
	})
	if err != nil {
		return err
	}
	return h.writeScale(w, r, ri, out)
}

// managerOf names the field manager of a request: the fieldManager
// parameter, else the User-Agent's program name, as kube-apiserver does.
func managerOf(r *http.Request) string {
	if m := query(r).Get("fieldManager"); m != "" {
		return m
	}
	ua := r.Header.Get("User-Agent")
	if i := strings.Index(ua, "/"); i >= 0 {
		ua = ua[:i]
	}
	if ua == "" {
		return "unknown"
	}
	return ua
}
