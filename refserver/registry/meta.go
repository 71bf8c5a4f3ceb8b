package registry

import (
	"fmt"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Paths of validateMeta's errors, built once (a field.Path never changes):
// every write validates its metadata.
var (
	metadataPath    = field.NewPath("metadata")
	labelsPath      = metadataPath.Child("labels")
	annotationsPath = metadataPath.Child("annotations")
)

// validateMeta checks the metadata every kind shares.
func validateMeta(k *Kind, obj, old Object) field.ErrorList {
	var errs field.ErrorList
	m := meta(obj)
	mp := metadataPath
	name := str(m["name"])
	if name == "" {
		if old == nil && str(m["generateName"]) == "" {
			errs = append(errs, field.Required(mp.Child("name"), "name or generateName is required"))
		}
	} else {
		check := k.NameValidation
		if check == nil {
			check = func(n string) []string {
				if dns1123Subdomain(n, false) {
					return nil
				}
				return utilvalidation.IsDNS1123Subdomain(n)
			}
		}
		for _, msg := range check(name) {
			errs = append(errs, field.Invalid(mp.Child("name"), name, msg))
		}
	}
	for _, f := range []string{"labels", "annotations"} {
		if v, ok := m[f]; ok && v != nil {
			if _, ok := v.(map[string]any); !ok {
				errs = append(errs, field.Invalid(mp.Child(f), v, "must be a map of strings"))
			}
		}
	}
	if lm, ok := m["labels"].(map[string]any); ok {
		errs = append(errs, validateLabels(lm, labelsPath)...)
	}
	if am, ok := m["annotations"].(map[string]any); ok {
		errs = append(errs, validateAnnotations(am, annotationsPath)...)
	}
	for i, f := range sliceOf(m["finalizers"]) {
		s, _ := f.(string)
		for _, msg := range utilvalidation.IsQualifiedName(s) {
			errs = append(errs, field.Invalid(mp.Child("finalizers").Index(i), f, msg))
		}
	}
	if old != nil {
		om := meta(old)
		if str(m["uid"]) != str(om["uid"]) {
			errs = append(errs, field.Invalid(mp.Child("uid"), m["uid"], "field is immutable"))
		}
		if str(om["deletionTimestamp"]) != "" {
			// Finalizers may be removed or reordered while an object is being
			// deleted, never added: an added one could hold it forever.
			if added := newFinalizers(m["finalizers"], om["finalizers"]); len(added) > 0 {
				errs = append(errs, field.Forbidden(mp.Child("finalizers"),
					fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers %#v", added)))
			}
		}
	}
	return errs
}

// newFinalizers lists the finalizers of cur that old does not have.
func newFinalizers(cur, old any) []string {
	had := map[string]bool{}
	for _, f := range sliceOf(old) {
		had[str(f)] = true
	}
	var added []string
	for _, f := range sliceOf(cur) {
		if !had[str(f)] {
			added = append(added, str(f))
		}
	}
	return added
}

// stringMap reads a map of strings (labels, annotations), reporting the
// values that are not strings.
func stringMap(in map[string]any, p *field.Path) (map[string]string, field.ErrorList) {
	var errs field.ErrorList
	out := make(map[string]string, len(in))
	for key, v := range in {
		s, ok := v.(string)
		if !ok {
			errs = append(errs, field.Invalid(p.Key(key), v, "must be a string"))
			continue
		}
		out[key] = s
	}
	return out, errs
}

// Selector is a label and field selector pair.
type Selector struct {
	Labels labels.Selector
	Fields fields.Selector
}

// Empty reports whether the selector matches everything.
func (s Selector) Empty() bool {
	return (s.Labels == nil || s.Labels.Empty()) && (s.Fields == nil || s.Fields.Empty())
}

// FieldSet computes the selectable fields of obj.
func FieldSet(k *Kind, obj Object) fields.Set {
	m := meta(obj)
	set := fields.Set{"metadata.name": str(m["name"])}
	if k.Namespaced {
		set["metadata.namespace"] = str(m["namespace"])
	}
	for f, fn := range k.Fields {
		set[f] = fn(obj)
	}
	return set
}

// Matches reports whether obj is selected.
func (s Selector) Matches(k *Kind, obj Object) bool {
	if obj == nil {
		return false
	}
	if s.Labels != nil && !s.Labels.Empty() {
		lm, _ := meta(obj)["labels"].(map[string]any)
		if !s.Labels.Matches(objectLabels(lm)) {
			return false
		}
	}
	if s.Fields != nil && !s.Fields.Empty() {
		if !s.Fields.Matches(objectFields{k: k, obj: obj}) {
			return false
		}
	}
	return true
}

// objectLabels reads an object's labels as the labels.Set of their string
// values would, without building it (a selector is matched per object and
// per watcher).
type objectLabels map[string]any

func (l objectLabels) Has(key string) bool   { _, ok := l[key]; return ok }
func (l objectLabels) Get(key string) string { return str(l[key]) }
func (l objectLabels) Lookup(key string) (string, bool) {
	v, ok := l[key]
	return str(v), ok
}

// objectFields reads an object's selectable fields as FieldSet would give
// them, computing only those a selector asks for.
type objectFields struct {
	k   *Kind
	obj Object
}

func (f objectFields) Has(field string) bool {
	if _, ok := f.k.Fields[field]; ok {
		return true
	}
	return field == "metadata.name" || (field == "metadata.namespace" && f.k.Namespaced)
}

func (f objectFields) Get(field string) string {
	if fn, ok := f.k.Fields[field]; ok {
		return fn(f.obj)
	}
	switch {
	case field == "metadata.name":
		return str(meta(f.obj)["name"])
	case field == "metadata.namespace" && f.k.Namespaced:
		return str(meta(f.obj)["namespace"])
	}
	return ""
}

// CheckFieldSelector rejects fields the kind does not support, in kube-apiserver's words.
func CheckFieldSelector(k *Kind, sel fields.Selector) error {
	if sel == nil {
		return nil
	}
	for _, req := range sel.Requirements() {
		switch req.Field {
		case "metadata.name":
			continue
		case "metadata.namespace":
			if k.Namespaced {
				continue
			}
		default:
			if _, ok := k.Fields[req.Field]; ok {
				continue
			}
		}
		if len(k.Fields) > 0 {
			// kube-apiserver's kinds with field labels of their own
			// (namespaces, secrets, events) convert them and say so.
			return fmt.Errorf("field label not supported: %s", req.Field)
		}
		return fmt.Errorf("%q is not a known field selector: only %q, %q", req.Field, "metadata.name", "metadata.namespace")
	}
	return nil
}
