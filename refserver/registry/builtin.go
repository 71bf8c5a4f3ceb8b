package registry

import (
	"encoding/base64"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiconform/apiconform/refserver/apply"
)

// BuiltinKinds are the kinds the reference server serves from the start
// (the server registers them); some need the registry they will serve in.
func BuiltinKinds(r *Registry) []*Kind {
	events := eventKind()
	events.TTL = r.eventTTL
	kinds := []*Kind{namespaceKind(r), configMapKind(), secretKind(), serviceAccountKind(), events, eventsV1Kind(events), leaseKind(),
		roleKind(), clusterRoleKind(), roleBindingKind(), clusterRoleBindingKind(), crdKind(r), frobberKind()}
	for _, k := range kinds {
		var fm *apply.Manager
		var err error
		if k.FieldManagers != nil {
			continue
		}
		if fm, err = apply.ForBuiltin(k.GroupKind().String()); err != nil { // no schema of its own: fields deduced
			fm, err = apply.ForSchema(schema.GroupVersionKind{Group: k.Group, Version: k.StorageVersion(), Kind: k.Kind}, nil)
		}
		if err == nil {
			k.FieldManagers = map[string]*apply.Manager{k.StorageVersion(): fm}
		}
	}
	return kinds
}

// AgeColumn is the Age column kube-apiserver shows for built-in kinds.
var AgeColumn = Column{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
	Cell: func(obj Object) any { return age(str(meta(obj)["creationTimestamp"])) }}

// CreatedAtColumn is the column kube-apiserver's default table shows for
// kinds without a printer of their own.
var CreatedAtColumn = Column{Name: "Created At", Type: "date", Description: AgeColumn.Description,
	Cell: func(obj Object) any { return str(meta(obj)["creationTimestamp"]) }}

// age renders the time since an RFC 3339 time as kube-apiserver's printers
// do; "<unknown>" for an unset or unreadable time.
func age(ts string) string {
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t))
}

// maxDataBytes bounds the values of a ConfigMap (data and binaryData
// together) and of a Secret, as kube-apiserver does (1 MiB; keys not counted).
const maxDataBytes = 1 << 20

// valueBytes adds up the sizes of a map's values; base64 values (binaryData,
// Secret data) count decoded. Undecodable values are reported elsewhere and
// count as they are.
func valueBytes(m any, base64Values bool) int {
	n := 0
	for _, v := range mapOf(m) {
		s := str(v)
		if base64Values {
			if b, err := base64.StdEncoding.DecodeString(s); err == nil {
				n += len(b)
				continue
			}
		}
		n += len(s)
	}
	return n
}

func configMapKind() *Kind {
	return &Kind{
		Group: "", Versions: []string{"v1"}, Resource: "configmaps", Singular: "configmap", Kind: "ConfigMap", ListKind: "ConfigMapList",
		ShortNames: []string{"cm"}, Namespaced: true, DeleteReturnsStatus: true,
		StrategicMerge: corev1.ConfigMap{}, Typed: func() any { return &corev1.ConfigMap{} },
		Validate: func(obj, old Object) field.ErrorList {
			var errs field.ErrorList
			seen := map[string]bool{}
			for _, f := range []string{"data", "binaryData"} {
				for key := range mapOf(obj[f]) {
					for _, msg := range configMapKeyErrors(key) {
						errs = append(errs, field.Invalid(field.NewPath(f).Key(key), key, msg))
					}
					if seen[key] {
						errs = append(errs, field.Invalid(field.NewPath("data").Key(key), key, "duplicate of key present in binaryData"))
					}
					seen[key] = true
				}
			}
			if size := valueBytes(obj["data"], false) + valueBytes(obj["binaryData"], true); size > maxDataBytes {
				errs = append(errs, field.TooLong(field.NewPath(""), "", maxDataBytes))
			}
			if old != nil && boolOf(old["immutable"]) {
				if !equalJSON(obj["data"], old["data"]) || !equalJSON(obj["binaryData"], old["binaryData"]) {
					errs = append(errs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
				}
			}
			return errs
		},
		Columns: []Column{
			{Name: "Data", Type: "string", Description: "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
				Cell: func(o Object) any { return int64(len(mapOf(o["data"])) + len(mapOf(o["binaryData"]))) }},
			AgeColumn,
		},
	}
}

func secretKind() *Kind {
	return &Kind{
		Group: "", Versions: []string{"v1"}, Resource: "secrets", Singular: "secret", Kind: "Secret", ListKind: "SecretList",
		Namespaced: true, DeleteReturnsStatus: true,
		StrategicMerge: corev1.Secret{}, Typed: func() any { return &corev1.Secret{} },
		Prepare: func(obj, old Object) {
			if str(obj["type"]) == "" {
				obj["type"] = "Opaque"
			}
			// stringData is write-only: merged into data.
			if sd := mapOf(obj["stringData"]); len(sd) > 0 {
				data := mapOf(obj["data"])
				if data == nil {
					data = map[string]any{}
				}
				for key, v := range sd {
					data[key] = base64.StdEncoding.EncodeToString([]byte(str(v)))
				}
				obj["data"] = data
			}
			delete(obj, "stringData")
		},
		Validate: func(obj, old Object) field.ErrorList {
			var errs field.ErrorList
			for key, v := range mapOf(obj["data"]) {
				for _, msg := range configMapKeyErrors(key) {
					errs = append(errs, field.Invalid(field.NewPath("data").Key(key), key, msg))
				}
				if _, err := base64.StdEncoding.DecodeString(str(v)); err != nil {
					errs = append(errs, field.Invalid(field.NewPath("data").Key(key), "<secret contents redacted>", "must be base64 encoded"))
				}
			}
			if valueBytes(obj["data"], true) > maxDataBytes {
				errs = append(errs, field.TooLong(field.NewPath("data"), "", maxDataBytes))
			}
			if old != nil && str(obj["type"]) != str(old["type"]) {
				errs = append(errs, field.Invalid(field.NewPath("type"), obj["type"], "field is immutable"))
			}
			if old != nil && boolOf(old["immutable"]) && !equalJSON(obj["data"], old["data"]) {
				errs = append(errs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
			}
			return errs
		},
		Fields: map[string]func(Object) string{"type": func(o Object) string { return str(o["type"]) }},
		Columns: []Column{
			{Name: "Type", Type: "string", Cell: func(o Object) any { return str(o["type"]) }},
			{Name: "Data", Type: "string", Cell: func(o Object) any { return int64(len(mapOf(o["data"]))) }},
			AgeColumn,
		},
	}
}
